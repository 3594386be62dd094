"""A test record's steps as a run's events again: the live page of a finished test
(``rths-ident show RECORD --live``), at 1×, 10× or as fast as possible.

:func:`record_info` describes the record as :func:`rths_ident.runner.watch_info.describe_run`
describes a run (what the record keeps: the identified parameters with units, true and
initial values, the response's names, the rates; no reference, no limits);
:func:`replay` emits :class:`~rths_ident.runner.events.TestStarted`, a
:class:`~rths_ident.runner.events.StepDone` per slow step with the step's log as the loop
produced it (rebuilt from the record's datasets), the record's events as notes, and
:class:`~rths_ident.runner.events.RunEnded` with the record's status.
"""

from __future__ import annotations

import time as _time
from typing import Callable

from rths_ident.errors import ParameterError
from rths_ident.figure_views import STYLES
from rths_ident.runner.events import Note, RunEnded, StepDone, TestStarted

__all__ = ["record_info", "step_log", "replay", "parse_speed"]

SPEEDS = {"1": 1.0, "1x": 1.0, "10": 10.0, "10x": 10.0, "max": None}


def parse_speed(text: str) -> float | None:
    """``--speed``: ``1`` (test time = wall time), ``10`` or ``max`` (as fast as possible)."""
    key = str(text).strip().lower().replace("×", "x")
    if key not in SPEEDS:
        raise ParameterError(f"--speed {text!r}: expected 1, 10 or max (as fast as possible)")
    return SPEEDS[key]


def record_info(record) -> dict:
    """The record described for the page (module doc)."""
    config, base = record.config, record.time_base
    if "slow_rate_hz" not in base:
        raise ParameterError(f"{record.path}: a {record.kind!r} record has no slow-step time base: nothing to replay")
    names = list(config.get("param_names") or [])
    units = config.get("param_units") or {}
    true, initial = config.get("params_true") or {}, config.get("params_initial") or {}
    settings = config.get("settings") or {}
    time = record.time
    slow_rate = float(base["slow_rate_hz"])
    return {
        "test": config.get("scenario", record.kind), "scenario": config.get("scenario", record.kind),
        "record": settings.get("record"), "updating": config.get("updating"),
        "compensation": settings.get("compensation"), "transition": settings.get("transition"),
        "engine": config.get("engine", "record"), "paced": False,
        "slow_rate_hz": slow_rate, "fast_rate_hz": float(base.get("fast_rate_hz", slow_rate)),
        "samples_per_step": int(base.get("samples_per_step", 1)), "steps": int(record.n_steps),
        "time_first_s": float(time[0]) if time.size else 1.0 / slow_rate,
        "params": [{"name": n, "unit": units.get(n, ""), "true": true.get(n), "initial": initial.get(n)}
                   for n in names],
        "guards": None, "response_names": list(config.get("response_names") or []), "reference": None,
        "limits": {}, "views": STYLES,
    }


def step_log(record, k: int) -> dict:
    """Slow step ``k``'s log as the loop produced it (``{"fast": …, "ns": …, "update": …}``)."""
    log: dict = {}
    for path, values in record.steps.items():
        if "/" not in path:
            continue
        group, name = path.split("/", 1)
        log.setdefault(group, {})[name] = values[k]
    return log


def replay(record, emit: Callable, speed: float | None = 1.0, clock=_time.perf_counter, sleep=_time.sleep,
           backlog: Callable[[], int] | None = None, max_backlog: int = 2048) -> None:
    """Emit the record's run (module doc) at ``speed`` × the test's own pace (None: as
    fast as possible; ``backlog()``, when given, holds the replay back while the page
    has more than ``max_backlog`` events to take)."""
    info = record_info(record)
    emit(TestStarted(info["test"], info))
    steps = int(record.n_steps)
    dt = 1.0 / info["slow_rate_hz"]
    start = clock()
    for k in range(steps):
        if speed is not None:
            wait = start + (k + 1) * dt / speed - clock()
            if wait > 0:
                sleep(wait)
        elif backlog is not None:
            while backlog() > max_backlog:
                sleep(0.01)
        emit(StepDone(k, steps, step_log(record, k)))
    for event in record.events:
        if event.kind not in ("start",):
            emit(Note(f"record: {event.kind} — {event.message}"))
    emit(RunEnded("complete" if record.complete else "stopped", "" if record.complete else record.status()))
