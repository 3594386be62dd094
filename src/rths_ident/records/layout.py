"""The layout of a test record (HDF5) in one place: group names, attribute names, the
event fields and how nested step dictionaries map to dataset paths.

See ``docs/records.md`` for the table of groups, datasets, units and attributes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

import numpy as np

#: root attribute ``format``: what marks an HDF5 file as a test record
FORMAT = "rths_ident test record"
#: root attribute ``format_version``: bumped when the layout changes incompatibly
FORMAT_VERSION = 1

STEPS = "steps"  # per-slow-step datasets (leading axis: slow step), time base as attributes
EVENTS = "events"  # start, stop, errors: one row each
CONFIG = "config"  # attributes: the configuration, flattened (the JSON is on the root)
SOFTWARE = "software"  # attributes: package versions
UNITS = "units"  # attributes: dataset path -> unit (JSON)
ATTACHED = "attached"  # datasets that are not per step (attach): whole histories, references
METRICS = "metrics"  # attributes: the metrics at the end, flattened (+ "json")

#: the per-step dataset every record has: the test time of each slow step [s]
TIME = "time"

#: event datasets: name -> HDF5 dtype (fixed-length byte strings: SWMR-safe)
EVENT_KIND_BYTES = 32
EVENT_MESSAGE_BYTES = 2048
EVENT_FIELDS = {
    "kind": f"S{EVENT_KIND_BYTES}",
    "message": f"S{EVENT_MESSAGE_BYTES}",
    "step": "i8",  # slow-step index, −1 when the event belongs to no step
    "time": "f8",  # test time [s], NaN when none
    "wall_time": "f8",  # UNIX time [s] when the event was written
}
EVENT_UNITS = {"step": "1 (slow-step index; -1: none)", "time": "s (test time; NaN: none)",
               "wall_time": "s (UNIX time, UTC)", "kind": "text", "message": "text (UTF-8)"}


def flatten(tree: Mapping, prefix: str = "") -> dict[str, object]:
    """``{"fast": {"target": x}}`` → ``{"fast/target": x}`` (dataset paths)."""
    out: dict[str, object] = {}
    for key, value in tree.items():
        if not isinstance(key, str) or not key or "/" in key:
            raise ValueError(f"record keys are non-empty strings without '/'; got {key!r} under {prefix or 'the root'!r}")
        path = f"{prefix}/{key}" if prefix else key
        if isinstance(value, Mapping):
            out.update(flatten(value, path))
        else:
            out[path] = value
    return out


def unflatten(flat: Mapping[str, object]) -> dict:
    """The inverse of :func:`flatten`."""
    tree: dict = {}
    for path, value in flat.items():
        *parents, leaf = path.split("/")
        node = tree
        for name in parents:
            node = node.setdefault(name, {})
        node[leaf] = value
    return tree


def json_value(value):
    """``value`` made JSON-serialisable: NumPy scalars and arrays as Python numbers and
    lists, non-finite floats as ``None``, tuples as lists, other objects as their text."""
    if isinstance(value, Mapping):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, np.ndarray):
        return json_value(value.tolist())
    if isinstance(value, np.generic):
        return json_value(value.item())
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return str(value)


def to_json(value) -> str:
    return json.dumps(json_value(value), ensure_ascii=False, sort_keys=False)


def scalar_attributes(tree: Mapping, prefix: str = "") -> dict[str, object]:
    """The scalar leaves of a nested dictionary as HDF5 attributes, names joined with
    ``.`` (``{"J4": {"floor1": 1.2}}`` → ``{"J4.floor1": 1.2}``). ``None`` and lists are
    left out (the JSON attribute beside them holds everything)."""
    out: dict[str, object] = {}
    for key, value in json_value(tree).items():
        name = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict):
            out.update(scalar_attributes(value, name))
        elif isinstance(value, (bool, int, float, str)):
            out[name] = value
    return out
