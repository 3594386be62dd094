"""Immutable, validated parameter containers that are JAX pytrees.

Every component of rths_ident keeps what configures or identifies it in a frozen
dataclass decorated with :func:`params_dataclass`. Such a container

* is a JAX pytree (its fields are leaves), so it can be passed through ``jax.jit``,
  ``jax.lax.scan``, ``jax.grad`` and ``jax.vmap``;
* validates concrete values when *you* construct it: a bad value raises
  :class:`ParameterError` naming the field and its allowed range. Traced values (inside
  ``jit``/``grad``/``vmap``) are not checked — they cannot be — and containers rebuilt
  by JAX itself (gradients, ``tree_map`` results, ``vmap`` axis specs) skip the check,
  because their leaves are not parameter values;
* states the allowed range of each field in one place, via ``field_range``.

Example::

    @params_dataclass
    class SpringParams:
        k: float = field_range(1.0e6, low=0.0, low_inclusive=False, unit="N/m",
                               doc="stiffness")

"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import jax
import numpy as np


class ParameterError(ValueError):
    """A parameter value is outside its allowed range or has the wrong shape."""


def field_range(
    default: Any = dataclasses.MISSING,
    *,
    low: float | None = None,
    high: float | None = None,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
    unit: str = "-",
    doc: str = "",
    allow_inf: bool = False,
):
    """A dataclass field with an allowed interval ``[low, high]`` and a unit.

    ``None`` for ``low``/``high`` means unbounded on that side. Values must also be
    finite unless ``allow_inf`` (e.g. an "unlimited" threshold).
    """
    metadata = _range_metadata(low, high, low_inclusive, high_inclusive, unit, doc, allow_inf)
    return dataclasses.field(default=default, metadata=metadata)


def _range_metadata(low, high, low_inclusive, high_inclusive, unit, doc, allow_inf=False) -> dict:
    return {
        "low": low,
        "high": high,
        "low_inclusive": low_inclusive,
        "high_inclusive": high_inclusive,
        "unit": unit,
        "doc": doc,
        "allow_inf": allow_inf,
    }


def array_field(default, *, low=None, high=None, low_inclusive=True, high_inclusive=True, unit="-", doc=""):
    """A field holding a float64 array (a frozen dataclass refuses unhashable defaults,
    so the default is built by a factory); the interval applies element-wise."""
    values = tuple(float(v) for v in np.ravel(default))
    shape = np.shape(default)
    metadata = _range_metadata(low, high, low_inclusive, high_inclusive, unit, doc)
    return dataclasses.field(default_factory=lambda: np.asarray(values, dtype=float).reshape(shape),
                             metadata=metadata)


def check_shape(owner: str, name: str, value, shape: tuple[int, ...]) -> None:
    """Raise :class:`ParameterError` if a concrete ``value`` does not have ``shape``."""
    if np.shape(value) != shape:
        raise ParameterError(f"{owner}.{name} must have shape {shape}; got shape {np.shape(value)}")


def describe_range(meta: dict) -> str:
    """Human-readable interval, e.g. ``(0, inf) N/m``."""
    low = meta.get("low")
    high = meta.get("high")
    left = "[" if (low is not None and meta.get("low_inclusive", True)) else "("
    right = "]" if (high is not None and meta.get("high_inclusive", True)) else ")"
    low_s = "-inf" if low is None else f"{low:g}"
    high_s = "inf" if high is None else f"{high:g}"
    unit = meta.get("unit", "-")
    return f"{left}{low_s}, {high_s}{right}" + ("" if unit in ("-", "") else f" {unit}")


def _is_concrete_number(value: Any) -> bool:
    if isinstance(value, jax.core.Tracer):
        return False
    if isinstance(value, (bool, int, float, np.integer, np.floating)):
        return True
    if isinstance(value, (np.ndarray, jax.Array)):
        try:
            np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            return False
        return True
    return False


def check_value(owner: str, name: str, value: Any, meta: dict) -> None:
    """Raise :class:`ParameterError` if a concrete ``value`` violates ``meta``."""
    if not _is_concrete_number(value):
        return
    arr = np.asarray(value, dtype=float)
    where = f"{owner}.{name}"
    finite_ok = ~np.isnan(arr) if meta.get("allow_inf") else np.isfinite(arr)
    if not np.all(finite_ok):
        raise ParameterError(f"{where} must be finite; got {value!r} (allowed {describe_range(meta)})")
    low, high = meta.get("low"), meta.get("high")
    bad = np.zeros(arr.shape, dtype=bool)
    if low is not None:
        bad |= (arr < low) if meta.get("low_inclusive", True) else (arr <= low)
    if high is not None:
        bad |= (arr > high) if meta.get("high_inclusive", True) else (arr >= high)
    if np.any(bad):
        shown = value if arr.ndim == 0 else arr[bad].ravel()[:3]
        raise ParameterError(
            f"{where} = {shown!r} is outside the allowed range {describe_range(meta)}"
            + (f" ({meta['doc']})" if meta.get("doc") else "")
        )


def validate(obj: Any) -> None:
    """Check every field of a params dataclass that carries range metadata."""
    owner = type(obj).__name__
    for f in dataclasses.fields(obj):
        if f.metadata and ("low" in f.metadata or "high" in f.metadata):
            check_value(owner, f.name, getattr(obj, f.name), f.metadata)


def params_dataclass(cls=None, *, static: tuple[str, ...] = ()):
    """Make ``cls`` a frozen dataclass, registered as a JAX pytree, validated on init.

    ``static`` names fields that are configuration, not numbers (e.g. an integer
    count of sub-steps or a string option): they are pytree metadata, not leaves,
    so changing them triggers a recompile and they are never traced.
    """

    def wrap(klass):
        user_post_init = klass.__dict__.get("__post_init__")

        def __post_init__(self):
            validate(self)
            if user_post_init is not None:
                user_post_init(self)

        # must exist before dataclass() builds __init__, or it is never called
        klass.__post_init__ = __post_init__
        klass = dataclasses.dataclass(frozen=True)(klass)
        names = [f.name for f in dataclasses.fields(klass)]
        data_fields = [n for n in names if n not in static]
        meta_fields = [n for n in names if n in static]

        def flatten_with_keys(obj):
            children = [(jax.tree_util.GetAttrKey(n), getattr(obj, n)) for n in data_fields]
            return children, tuple(getattr(obj, n) for n in meta_fields)

        def flatten(obj):
            return [getattr(obj, n) for n in data_fields], tuple(getattr(obj, n) for n in meta_fields)

        def unflatten(aux, children):
            # Bypasses __init__ on purpose: JAX rebuilds containers with gradients,
            # tangents, axis specs or tracers, which are not parameter values.
            obj = object.__new__(klass)
            for n, v in zip(data_fields, children):
                object.__setattr__(obj, n, v)
            for n, v in zip(meta_fields, aux):
                object.__setattr__(obj, n, v)
            return obj

        jax.tree_util.register_pytree_with_keys(klass, flatten_with_keys, unflatten, flatten)
        return klass

    if cls is None:
        return wrap
    return wrap(cls)


def as_dict(obj: Any) -> dict[str, Any]:
    """Fields of a params dataclass as a plain dict of Python floats where scalar."""
    out = {}
    for f in dataclasses.fields(obj):
        v = getattr(obj, f.name)
        if _is_concrete_number(v) and np.ndim(v) == 0:
            v = float(v)
        out[f.name] = v
    return out


def units_of(cls_or_obj: Any) -> dict[str, str]:
    """Unit string per field (from ``field_range(unit=...)``)."""
    return {f.name: f.metadata.get("unit", "-") for f in dataclasses.fields(cls_or_obj)}


def replace(obj: Any, **changes: Any) -> Any:
    """``dataclasses.replace`` (re-validates the new values)."""
    return dataclasses.replace(obj, **changes)


