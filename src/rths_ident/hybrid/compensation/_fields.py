"""Array-valued fields for params dataclasses (shared by the compensators).

``field_range`` takes a scalar default; an array default needs ``default_factory``
because a frozen dataclass refuses unhashable defaults. The range metadata is the same,
so ``rths_ident._params.validate`` checks every element of a concrete array.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rths_ident._params import ParameterError


def array_field(default, *, low=None, high=None, low_inclusive=True, high_inclusive=True, unit="-", doc=""):
    """A dataclass field holding a float64 array with an element-wise allowed interval."""
    values = tuple(float(v) for v in np.ravel(default))
    shape = np.shape(default)
    metadata = {
        "low": low,
        "high": high,
        "low_inclusive": low_inclusive,
        "high_inclusive": high_inclusive,
        "unit": unit,
        "doc": doc,
    }
    return dataclasses.field(
        default_factory=lambda: np.asarray(values, dtype=float).reshape(shape), metadata=metadata
    )


def check_shape(owner: str, name: str, value, shape: tuple[int, ...]) -> None:
    """Raise :class:`ParameterError` if a concrete ``value`` does not have ``shape``."""
    if np.shape(value) != shape:
        raise ParameterError(f"{owner}.{name} must have shape {shape}; got shape {np.shape(value)}")
