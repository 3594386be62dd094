"""What a test record holds, as text: the summary ``rths-ident show`` prints for a
hybrid test's record (status, software, time base and duration, events, configuration,
datasets with their units, metrics), and the helpers other record kinds' summaries use."""

from __future__ import annotations

import textwrap

from rths_ident.records import layout

__all__ = ["format_summary", "fields", "inline", "ranges"]

WIDTH = 100


def _number(value) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def inline(value) -> str:
    """A nested value on one line: ``a 1, b.c 2``."""
    if isinstance(value, dict):
        return ", ".join(f"{k} {_number(v)}" for k, v in layout.scalar_attributes(value).items()) or "—"
    if isinstance(value, list):
        return "[" + ", ".join(_number(v) for v in value) + "]"
    return "—" if value is None else _number(value)


def fields(rows) -> list[str]:
    rows = list(rows)
    if not rows:
        return ["  (none)"]
    width = min(28, max(len(label) for label, _ in rows))
    lines = []
    for label, text in rows:
        wrapped = textwrap.wrap(str(text), width=max(40, WIDTH - width - 4)) or [""]
        lines.append(f"  {label.ljust(width)}  {wrapped[0]}")
        lines.extend(" " * (width + 4) + more for more in wrapped[1:])
    return lines


def _duration(record) -> str:
    n = record.n_steps
    if n == 0:
        return "no slow step recorded"
    base = record.time_base
    slow = base.get("slow_rate_hz")
    start = float(record.time[0]) - (1.0 / slow if slow else 0.0)
    text = f"{n} slow steps, test time {start:.3f} … {float(record.time[-1]):.3f} s ({float(record.time[-1]) - start:.3f} s)"
    if slow:
        text += f" at {slow:g} Hz"
    if "samples_per_step" in base and "fast_rate_hz" in base:
        text += f"; {base['samples_per_step']} fast samples per step ({base['fast_rate_hz']:g} Hz)"
    return text


def format_summary(record) -> str:
    """The text ``rths-ident show`` prints for ``record`` (a :class:`~rths_ident.records.TestRecord`)."""
    scenario = record.config.get("scenario")
    lines = [f"test record {record.path}"]
    lines += fields([
        ("kind", record.kind + (f" {scenario}" if scenario else "")),
        ("created (UTC)", record.created_utc),
        ("status", record.status()),
        ("steps", _duration(record)),
        ("software", ", ".join(f"{k} {v}" for k, v in record.software.items() if k != "platform")),
        ("platform", record.software.get("platform", "?")),
    ])
    lines.append("events")
    lines += fields((f"{e.kind} @ " + ("—" if e.step is None else f"step {e.step}")
                      + ("" if e.time is None else f", t {e.time:.3f} s"), e.message) for e in record.events)
    lines.append("configuration")
    lines += fields((key, inline(value)) for key, value in record.config.items())
    lines.append("datasets (per slow step; SI units)")
    lines += fields((path, f"{tuple(array.shape)} {array.dtype}  [{_unit(record.units.get(path, '?'))}]")
                     for path, array in sorted(record.steps.items()))
    lines.append("metrics" + ("" if record.metrics is not None else " (none: the test did not finish)"))
    if record.metrics is not None:
        main = record.metrics.get("updating")
        rows = []
        for key, value in record.metrics.items():
            if key == "variants" and isinstance(value, dict):  # the comparison runs, one line each
                rows += [(f"variant {name}", inline(v)) for name, v in value.items() if name != main]
            else:
                rows.append((key, inline(value)))
        lines += fields(rows)
    return "\n".join(lines)


def ranges(values: list[int]) -> str:
    """``[1, 2, 3, 7]`` → ``"1…3, 7"``."""
    out, start = [], None
    for k, v in enumerate(values):
        if start is None:
            start = v
        if k + 1 == len(values) or values[k + 1] != v + 1:
            out.append(str(v) if v == start else f"{start}…{v}")
            start = None
    return ", ".join(out)


def _unit(unit) -> str:
    return ", ".join(f"{c} {u}" for c, u in unit.items()) if isinstance(unit, dict) else str(unit)
