"""Tests of rths_ident.stored_arrays: a set-up array (or pytree) is computed once, read
back bit for bit with its types, computed again for another key or a damaged file,
never stored when it would not come back exactly, and the low-pass design read back is
scipy's."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.signal

from rths_ident import stored_arrays
from rths_ident.hybrid.fast_side.compensation import lowpass



def _counted(value):
    calls = []

    def compute():
        calls.append(1)
        return value

    return compute, calls


def test_off_computes_every_time(tmp_path, store_off):
    compute, calls = _counted(np.arange(3.0))
    stored_arrays.stored_array("x", 1, compute)
    stored_arrays.stored_array("x", 1, compute)
    assert len(calls) == 2 and not list(tmp_path.iterdir())


def test_computed_once_then_read_back_bit_for_bit(store):
    value = np.array([[1.0 / 3.0, np.pi, -0.0], [np.nextafter(1.0, 2.0), 1e-300, np.inf]])
    compute, calls = _counted(value)
    first = stored_arrays.stored_array("x", (4, 20.0), compute)
    second = stored_arrays.stored_array("x", (4, 20.0), compute)
    assert len(calls) == 1
    assert second.dtype == value.dtype and second.tobytes() == value.tobytes() == first.tobytes()
    stored_arrays.stored_array("x", (4, 21.0), compute)
    stored_arrays.stored_array("x", (4, 20.0), compute, versions=("another",))
    assert len(calls) == 3


def test_a_damaged_file_is_computed_again(store):
    compute, calls = _counted(np.arange(4.0))
    stored_arrays.stored_array("x", 1, compute)
    (path,) = store.glob("x-*.npy")
    path.write_bytes(b"not numpy")
    np.testing.assert_array_equal(stored_arrays.stored_array("x", 1, compute), np.arange(4.0))
    assert len(calls) == 2
    stored_arrays.stored_array("x", 1, compute)
    assert len(calls) == 2  # rewritten


@pytest.mark.parametrize("order, cutoff, rate", [(4, 20.0, 4000.0), (4, 20.0, 50.0), (3, 5.0, 1000.0)])
def test_the_stored_butterworth_design_is_scipys(store, order, cutoff, rate):
    expected = scipy.signal.butter(order, cutoff, btype="low", fs=rate, output="sos")
    for _ in range(2):  # computed, then read back
        sos = lowpass.design_butterworth(order, cutoff, rate)
        assert sos.tobytes() == expected.tobytes()
    assert len(list(store.glob("butterworth-sos-*.npy"))) == 1


class _Pair(NamedTuple):
    weak: object
    strong: object


def _tree():
    return {"pair": _Pair(jnp.asarray(0.1) * 3.0, jnp.arange(4.0) / 3.0), "number": 2.5, "count": 7,
            "key": jax.random.PRNGKey(11), "flags": jnp.asarray([True, False]), "plain": np.linspace(0.0, 1.0, 3)}


def _same_leaves(a, b) -> bool:
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    if jax.tree_util.tree_structure(a) != jax.tree_util.tree_structure(b) or len(la) != len(lb):
        return False
    for x, y in zip(la, lb):
        if isinstance(x, jax.Array):
            if not isinstance(y, jax.Array) or jax.typeof(x) != jax.typeof(y):
                return False
        elif type(x) is not type(y):
            return False
        if np.asarray(x).tobytes() != np.asarray(y).tobytes():
            return False
    return True


def test_a_tree_comes_back_with_its_types_weak_types_and_bits(store):
    compute, calls = _counted(_tree())
    assert jax.typeof(_tree()["pair"].weak).weak_type
    first = stored_arrays.stored_tree("tree", ("case", 1), compute)
    second = stored_arrays.stored_tree("tree", ("case", 1), compute)
    assert len(calls) == 1
    assert _same_leaves(first, _tree()) and _same_leaves(second, _tree())
    stored_arrays.stored_tree("tree", ("case", 1), compute, digest_arrays=(np.arange(3.0),))
    stored_arrays.stored_tree("tree", None, compute)  # no key: never stored
    stored_arrays.stored_tree("tree", None, compute)
    assert len(calls) == 4


def test_a_tree_that_would_not_come_back_exactly_is_not_stored(store):
    for value in ({"typed key": jax.random.key(0)}, {"weak vector": jnp.asarray(2.0) * jnp.ones(3, dtype=int)},
                  {"text": "a string leaf"}):
        compute, calls = _counted(value)
        stored_arrays.stored_tree("odd", repr(sorted(value)), compute)
        stored_arrays.stored_tree("odd", repr(sorted(value)), compute)
        assert len(calls) == 2, value
    traced = jax.jit(lambda x: stored_arrays.stored_tree("traced", 1, lambda: {"x": x * 2.0}))(jnp.asarray(1.0))
    assert float(traced["x"]) == 2.0 and not list(store.glob("traced-*"))


def test_a_damaged_tree_file_is_computed_again(store):
    compute, calls = _counted(_tree())
    stored_arrays.stored_tree("tree", 1, compute)
    (path,) = store.glob("tree-*.pkl")
    path.write_bytes(path.read_bytes()[:40])
    assert _same_leaves(stored_arrays.stored_tree("tree", 1, compute), _tree())
    assert len(calls) == 2
