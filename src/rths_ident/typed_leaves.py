"""JAX pytrees with explicit leaf types, as a jitted function returns them."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def canonical_state(state):
    """Every leaf as a JAX array with an explicit dtype (no weak types, no Python
    scalars), i.e. exactly the types a jitted step returns — so a jitted step is traced
    once, not again after its first output."""

    def leaf(x):
        arr = jnp.asarray(x)
        return jnp.asarray(arr, dtype=arr.dtype)

    return jax.tree_util.tree_map(leaf, state)
