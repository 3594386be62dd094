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
from typing import Any

import jax
import numpy as np

from rths_ident.errors import ParameterError




def plain(value: Any) -> str:
    """A number (or a small array of numbers) as a user reads it: ``0.5``, ``-1e+06``,
    ``[0.2, 2.0]`` — never ``np.float64(0.5)`` or ``Array(0.5, dtype=float64)``;
    anything else as its ``repr``."""
    if isinstance(value, (str, bytes)) or value is None:
        return repr(value)
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return repr(value)
    if arr.ndim == 0:
        number = float(arr)
        return repr(int(number)) if isinstance(value, (int, np.integer)) and not isinstance(value, bool) else repr(number)
    return "[" + ", ".join(repr(float(v)) for v in arr.ravel()[:6]) + (", …]" if arr.size > 6 else "]")


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


def _is_number_like(value: Any) -> bool:
    """A concrete value a numeric field may hold: a real number, or an array / nested
    sequence of real numbers (not a string, None, a complex number or another object)."""
    if isinstance(value, (str, bytes, complex)) or value is None:
        return False
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        return False
    return arr.dtype.kind in "biuf"


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
    """Raise :class:`ParameterError` if a concrete ``value`` violates ``meta`` or is not
    a number (a string such as ``'1e6'``, None, …: JAX would fail much later)."""
    where = f"{owner}.{name}"
    if isinstance(value, jax.core.Tracer):
        return
    if not _is_number_like(value):
        raise ParameterError(f"{where} must be a real number in {describe_range(meta)}"
                             + (f" ({meta['doc']})" if meta.get("doc") else "")
                             + f"; got {value!r} (a {type(value).__name__})")
    if not _is_concrete_number(value):
        return
    arr = np.asarray(value, dtype=float)
    finite_ok = ~np.isnan(arr) if meta.get("allow_inf") else np.isfinite(arr)
    if not np.all(finite_ok):
        raise ParameterError(f"{where} must be finite; got {plain(value)} (allowed {describe_range(meta)})")
    low, high = meta.get("low"), meta.get("high")
    bad = np.zeros(arr.shape, dtype=bool)
    if low is not None:
        bad |= (arr < low) if meta.get("low_inclusive", True) else (arr <= low)
    if high is not None:
        bad |= (arr > high) if meta.get("high_inclusive", True) else (arr >= high)
    if np.any(bad):
        shown = value if arr.ndim == 0 else arr[bad].ravel()[:3]
        raise ParameterError(
            f"{where} = {plain(shown)} is outside the allowed range {describe_range(meta)}"
            + (f" ({meta['doc']})" if meta.get("doc") else "")
        )


def validate(obj: Any) -> None:
    """Check every field of a params dataclass that carries range metadata."""
    owner = type(obj).__name__
    for f in dataclasses.fields(obj):
        if f.metadata and ("low" in f.metadata or "high" in f.metadata):
            check_value(owner, f.name, getattr(obj, f.name), f.metadata)


def require_float64(what: str) -> None:
    """Refuse to build ``what`` when JAX computes in float32 (rths_ident switches float64
    on when imported; someone switched it off again): its numbers would silently change."""
    if not jax.config.jax_enable_x64:
        raise ParameterError(f"{what}: JAX is computing in float32 (jax_enable_x64 was switched off after rths_ident "
                             "was imported); rths_ident needs float64: jax.config.update('jax_enable_x64', True)")


def params_dataclass(cls=None, *, static: tuple[str, ...] = ()):
    """Make ``cls`` a frozen dataclass, registered as a JAX pytree, validated on init.

    ``static`` names fields that are configuration, not numbers (e.g. an integer
    count of sub-steps or a string option): they are pytree metadata, not leaves,
    so changing them triggers a recompile and they are never traced.
    """

    def wrap(klass):
        user_post_init = klass.__dict__.get("__post_init__")

        def __post_init__(self):
            require_float64(klass.__name__)
            validate(self)
            if user_post_init is not None:
                user_post_init(self)

        # must exist before dataclass() builds __init__, or it is never called
        klass.__post_init__ = __post_init__
        own_repr, own_str = "__repr__" in klass.__dict__, "__str__" in klass.__dict__
        klass = dataclasses.dataclass(frozen=True)(klass)
        if not own_repr:
            klass.__repr__ = _plain_repr
        if not own_str:
            klass.__str__ = _str_with_units
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


def _plain_repr(obj: Any) -> str:
    """``SpringParams(stiffness=1000000.0, ratio=0.5, substeps=4)``: numbers as plain
    Python numbers (not ``Array(…, dtype=float64)`` or ``np.float64(…)``)."""
    fields = ", ".join(f"{f.name}={plain(getattr(obj, f.name))}" for f in dataclasses.fields(obj) if f.repr)
    return f"{type(obj).__name__}({fields})"


def _str_with_units(obj: Any) -> str:
    """``SpringParams(stiffness = 1e+06 N/m, ratio = 0.5, substeps = 4)``: what
    ``print`` shows — numbers to 6 significant digits with their units."""
    parts = []
    for f in dataclasses.fields(obj):
        if not f.repr:
            continue
        value, unit = getattr(obj, f.name), f.metadata.get("unit", "-")
        try:
            arr = np.asarray(value, dtype=float)
            text = f"{float(arr):.6g}" if arr.ndim == 0 else plain(value)
        except (TypeError, ValueError):
            text = repr(value)
        parts.append(f"{f.name} = {text}" + ("" if unit in ("-", "") else f" {unit}"))
    return f"{type(obj).__name__}({', '.join(parts)})"


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


