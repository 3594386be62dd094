"""The one runner: a test's configuration and how to run it → a :class:`RunResult`.

Every kind of test (frame tests, rig tests, studies) is run by :func:`run_test`: the
kind's own ``run_scenario(config, options)`` does the loop (compiling in the background,
pacing, recording as it goes, the safe stop), the runner picks the engine, emits the
events every watcher sees (:mod:`rths_ident.runner.events`), and returns one typed
result, complete or stopped, with the record's path. A test that stops on a fault (a
limit, a lost peer, a non-finite state) is a result too (``stopped``), not an exception:
what it logged is in its record.

Ctrl-C is different: the operator wants the program to stop, not to go on with what
follows the run (a study's next run, a script's next line). The kind's loop brings the
specimen to rest and its record says so; the runner emits ``RunEnded("stopped", …)`` and
raises :class:`~rths_ident.operator_stop.OperatorStopped` (a
``KeyboardInterrupt``) with ``test_records`` set.
"""

from __future__ import annotations

import dataclasses
import math
import time as _time
from pathlib import Path
from typing import Any

from rths_ident.errors import ParameterError
from rths_ident.hybrid.loop.engine import LoopAborted
from rths_ident.operator_stop import OperatorStopped
from rths_ident.runner.events import Note, RunEnded
from rths_ident.runner.options import RunOptions

__all__ = ["RunResult", "run_test", "default_engine", "check_engine", "json_ready", "result_dict"]


@dataclasses.dataclass
class RunResult:
    """What a run gives back.

    name, kind : the test's name and kind; engine : the engine it ran on.
    metrics : the run's numbers (the JSON of ``rths-ident run --json``; SI units, names
        say otherwise), empty when it stopped before any;
    arrays : the histories the figures draw (not in the JSON);
    test_records : the record file(s) written;
    stopped : why the test stopped before its end (None: it completed);
    wall_s : seconds of the whole run, set-up and comparison runs included.
    """

    name: str
    kind: str
    engine: str
    metrics: dict
    arrays: dict
    test_records: tuple
    stopped: str | None = None
    wall_s: float = 0.0
    interlock: dict | None = None  # the interlock that stopped it (hybrid.fast_side.interlocks.Trip.as_dict)

    @property
    def complete(self) -> bool:
        return self.stopped is None

    def json(self) -> dict:
        """The metrics as JSON-ready data (non-finite numbers → null)."""
        return json_ready(self.metrics)


def json_ready(value):
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items() if not str(k).startswith("_")}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def default_engine(kind_module, cfg, realtime: bool) -> str:
    """The engine a run takes when none is asked for: fused when every part is native and
    the run is not paced, else step-wise (an OpenSeesPy or remote substructure, a rig)."""
    engines = getattr(kind_module, "ENGINES", ("fused", "stepwise"))
    if len(engines) == 1:
        return engines[0]
    native = getattr(cfg, "ns", "native") == "native" and not getattr(cfg, "on_a_rig", False)
    return "fused" if native and not realtime else "stepwise"


def check_engine(kind_name: str, kind_module, engine: str, realtime: bool) -> None:
    """A clear error before any work for an engine the test cannot run on, or a paced run
    of a test that has no step-wise run to pace."""
    if realtime:
        if not _paced_kind(kind_module):
            raise ParameterError(f"--realtime: {kind_name} has no step-wise run to pace")
        if engine != "stepwise":
            raise ParameterError("--realtime paces the step-wise engine: drop --engine fused")
    engines = getattr(kind_module, "ENGINES", ("fused", "stepwise"))
    if engine not in engines:
        raise ParameterError(f"--engine {engine}: {kind_name} runs on the {' or '.join(engines)} engine only")


def _paced_kind(kind_module) -> bool:
    """Kinds whose test file has a ``run.realtime`` field are the ones a pacer drives."""
    return any(f.path == "run.realtime" for f in getattr(kind_module, "FIELDS", ()))


def run_test(kind_name: str, kind_module, cfg, options: RunOptions, name: str | None = None) -> RunResult:
    """Run ``cfg`` (a configuration of ``kind_module``) as ``options`` say (module doc)."""
    started = _time.perf_counter()
    stream = options.stream
    try:
        result = kind_module.run_scenario(cfg, options)
    except LoopAborted as stopped:
        reason = str(stopped)
        stream.emit(RunEnded("stopped", reason))
        records = (options.test_record,) if options.test_record is not None else ()
        trip = getattr(stopped, "trip", None)
        return RunResult(name or kind_name, kind_name, options.engine, {}, {}, records, stopped=reason,
                         wall_s=_time.perf_counter() - started, interlock=None if trip is None else trip.as_dict())
    except KeyboardInterrupt as interrupt:
        stopped = interrupt if isinstance(interrupt, OperatorStopped) else OperatorStopped(str(interrupt))
        stopped.test_records = tuple(Path(p) for p in _existing(options.test_record))
        stream.emit(RunEnded("stopped", str(stopped) or "stopped by the operator (Ctrl-C)"))
        raise stopped from None
    records = tuple(Path(p) for p in result.get("test_records", ()))
    if not records and options.test_record is not None and Path(options.test_record).is_file():
        records = (Path(options.test_record),)
    stopped = None
    if result.get("aborted"):
        stopped = str(result.get("abort_reason") or result.get("aborted"))
    interlock = result.get("interlock")
    arrays = {k: v for k, v in result.items() if str(k).startswith("_")}
    metrics = {k: v for k, v in result.items() if not str(k).startswith("_")}
    for path in records:
        stream.emit(Note(f"test record → {path}"))
    stream.emit(RunEnded("stopped" if stopped else "complete", stopped or ""))
    return RunResult(name or kind_name, kind_name, options.engine, metrics, arrays, records, stopped,
                     _time.perf_counter() - started, interlock=interlock)


def _existing(path) -> tuple:
    """The record at ``path`` if it was written, else the records a kind writes beside
    it under its name (a study of several records: ``test_record-elcentro.h5`` …)."""
    if path is None:
        return ()
    path = Path(path)
    if path.is_file():
        return (path,)
    return tuple(sorted(path.parent.glob(f"{path.stem}-*{path.suffix}"))) if path.parent.is_dir() else ()


def result_dict(result: RunResult) -> dict[str, Any]:
    """The kind's own result dictionary (metrics and arrays), as its report and figures
    read it."""
    return {"test": result.name, **result.metrics, **result.arrays}
