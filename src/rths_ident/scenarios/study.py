"""A study of any test: the same test file run many times with some of its fields varied
— a sweep over given values, a grid, or a random sample (uncertainty) — on this machine
or on a Dask cluster, with the same numbers either way.

Each run is the test file with the varied fields set (checked by the same fields as the
file: a bad value is an error before any run), run by the one runner
(:func:`rths_ident.runner.run.run_test`) without its comparison runs; the study keeps
each run's varied values, its metrics (the JSON of ``rths-ident run``) and, when it
stopped, why. A run is a pure function of the plan and its index (the random sample
comes from the plan's seed), so a cluster gives the same numbers as this machine, in
any order — and a study stopped halfway (Ctrl-C, a lost machine) resumes from the runs
it finished: the plan is in the study's JSON, and only the missing runs run again
(``rths-ident study --resume STUDY.json``).

Varying a field::

    TABLE.KEY=a,b,c        these values (a sweep; several --vary make a grid of all combinations)
    TABLE.KEY=low:high:n   n values from low to high (a grid axis)
    TABLE.KEY=low:high     uniform between low and high, one draw per sample (--samples N)
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import time as _time
from typing import Any, Callable

import numpy as np

from rths_ident.declaration import DeclarationError, Override, resolve_values
from rths_ident.errors import ParameterError

__all__ = ["Variation", "StudyPlan", "parse_variation", "plan_study", "run_variant", "run_variants", "run_study",
           "batching", "run_batched_variants",
           "study_result", "plan_as_json", "plan_from_json"]


@dataclasses.dataclass(frozen=True)
class Variation:
    """How one field is varied: given ``values`` (a sweep or a grid axis), or a
    ``uniform`` range (low, high) drawn once per sample."""

    path: str
    values: tuple = ()
    uniform: tuple | None = None


def _number_or_text(text: str):
    text = text.strip()
    try:
        return int(text) if text.lstrip("+-").isdigit() else float(text)
    except ValueError:
        return text


def parse_variation(text: str) -> Variation:
    """``TABLE.KEY=SPEC`` (module doc) → :class:`Variation`."""
    path, sep, spec = text.partition("=")
    path = path.strip()
    if not sep or "." not in path or not spec.strip():
        raise DeclarationError(f"--vary {text!r}: expected TABLE.KEY=a,b,c | low:high:n | low:high")
    if ":" in spec and "," not in spec:
        parts = spec.split(":")
        try:
            numbers = [float(p) for p in parts]
        except ValueError:
            raise DeclarationError(f"--vary {path}: {spec!r} is not low:high or low:high:n (numbers)") from None
        if len(parts) == 2:
            return Variation(path, uniform=(numbers[0], numbers[1]))
        if len(parts) == 3 and numbers[2] >= 1 and numbers[2].is_integer():
            return Variation(path, values=tuple(float(v) for v in np.linspace(numbers[0], numbers[1], int(numbers[2]))))
        raise DeclarationError(f"--vary {path}: {spec!r} is not low:high or low:high:n with a whole n ≥ 1")
    return Variation(path, values=tuple(_number_or_text(v) for v in spec.split(",") if v.strip()))


@dataclasses.dataclass(frozen=True)
class StudyPlan:
    """Every run of a study: the test file's text (what all runs share), its kind, and
    per run the overrides (path → value). Picklable: a cluster's workers get it whole."""

    kind_name: str
    test_text: str
    source: str
    runs: tuple  # of tuples ((path, value), …)
    varied: tuple  # the varied paths, in order
    seed: int | None = None

    def overrides(self, index: int) -> list[Override]:
        return [Override(path, value, f"--vary {path}") for path, value in self.runs[index]]


def plan_study(kind_name: str, test_file, variations: list[Variation], samples: int | None = None,
               seed: int = 0) -> StudyPlan:
    """The runs of a study (module doc): the grid of all given values, times ``samples``
    draws of the uniform ranges (one run per draw when no values are given)."""
    if not variations:
        raise ParameterError("a study varies at least one field: --vary TABLE.KEY=…")
    paths = [v.path for v in variations]
    if len(set(paths)) != len(paths):
        raise ParameterError(f"--vary names a field twice: {', '.join(paths)}")
    grid_axes = [v for v in variations if v.uniform is None]
    random_axes = [v for v in variations if v.uniform is not None]
    if random_axes and not samples:
        raise ParameterError(f"--vary {random_axes[0].path}=low:high draws values: give --samples N")
    if samples is not None and samples < 1:
        raise ParameterError(f"--samples {samples}: expected a whole number ≥ 1")
    grid = list(itertools.product(*[[(v.path, x) for x in v.values] for v in grid_axes])) or [()]
    draws = samples if random_axes else 1
    rng = np.random.default_rng(seed)
    runs = []
    for point in grid:
        for _ in range(draws):
            drawn = tuple((v.path, float(rng.uniform(*v.uniform))) for v in random_axes)
            runs.append(tuple(point) + drawn)
    return StudyPlan(kind_name, test_file.text, test_file.source, tuple(runs), tuple(paths), seed)


def _test_file(plan: StudyPlan):
    from rths_ident.declaration import parse_test_text  # noqa: PLC0415

    return parse_test_text(plan.test_text, plan.source)


def check_plan(plan: StudyPlan) -> list:
    """Every run's configuration, built now: a bad value of any run is an error before
    the first run starts."""
    from rths_ident.scenarios.kinds import TEST_KINDS  # noqa: PLC0415

    kind, test_file = TEST_KINDS[plan.kind_name], _test_file(plan)
    configs = []
    for index in range(len(plan.runs)):
        overrides = plan.overrides(index)
        raw = {**test_file.values, **{o.path: o.value for o in overrides}}
        values, _ = resolve_values(kind.fields_for(raw), test_file, overrides)
        configs.append(kind.config(values))
    return configs


def _configured(plan: StudyPlan, varied: dict) -> tuple:
    """(configuration, engine) of the test file with the fields ``varied`` ({path: value}) set."""
    from rths_ident.runner.run import default_engine  # noqa: PLC0415
    from rths_ident.scenarios.kinds import TEST_KINDS  # noqa: PLC0415

    kind, test_file = TEST_KINDS[plan.kind_name], _test_file(plan)
    overrides = [Override(path, value, f"--vary {path}") for path, value in varied.items()]
    raw = {**test_file.values, **varied}
    values, _ = resolve_values(kind.fields_for(raw), test_file, overrides)
    cfg = kind.config(values)
    return cfg, values.get("run:engine") or default_engine(kind.module, cfg, False)


def run_variant(plan: StudyPlan, index: int, fused_loop: Callable | None = None) -> dict:
    """Run ``index`` of the plan (pure in the plan and the index): its varied values,
    metrics, and why it stopped (None: complete). ``fused_loop``: its loop is a batch's
    (:mod:`rths_ident.scenarios.study_batches`)."""
    from rths_ident.runner.options import RunOptions  # noqa: PLC0415
    from rths_ident.runner.run import run_test  # noqa: PLC0415
    from rths_ident.scenarios.kinds import TEST_KINDS  # noqa: PLC0415

    cfg, engine = _configured(plan, dict(plan.runs[index]))
    started = _time.perf_counter()
    result = run_test(plan.kind_name, TEST_KINDS[plan.kind_name].module, cfg,
                      RunOptions(engine=engine, compare=False, fused_loop=fused_loop), f"run {index}")
    return {"run": index, "varied": dict(plan.runs[index]), "metrics": result.json(), "stopped": result.stopped,
            "wall_s": _time.perf_counter() - started}


def run_variants(plan: StudyPlan, first: int, count: int) -> list[dict]:
    """Runs ``first`` … ``first + count − 1`` (a cluster task)."""
    return [run_variant(plan, index) for index in range(first, first + count)]


def batching(plan: StudyPlan, batch: int):
    """How ``plan``'s runs go (:func:`rths_ident.scenarios.study_batches.decide`):
    batches of ``batch`` runs sharing one compiled loop, or run by run (with the note
    saying why)."""
    from rths_ident.scenarios.study_batches import decide  # noqa: PLC0415

    return decide(plan, batch, lambda varied: _configured(plan, varied)[0],
                  lambda varied: _configured(plan, varied)[1])


def run_batched_variants(job: tuple, first: int, count: int) -> list[dict]:
    """A cluster task of a batched study: ``job = (plan, run indices, batch size,
    program fingerprint)``; runs ``indices[first:first + count]`` in batches."""
    from rths_ident.scenarios.study_batches import run_batches  # noqa: PLC0415

    plan, indices, size, fingerprint = job
    rows: list[dict] = []
    run_batches(indices[first:first + count], size, fingerprint,
                lambda index, fused_loop: run_variant(plan, index, fused_loop), rows.append)
    return rows


def run_study(plan: StudyPlan, dask: str | None = None, progress: Callable[[int, int], None] | None = None,
              done: list[dict] | tuple = (), on_run: Callable[[dict], None] | None = None,
              batch: int | None = None, note: Callable[[str], None] | None = None) -> dict:
    """Every run of ``plan``, here or on a Dask cluster (``"local"`` or
    ``tcp://HOST:PORT``); the result has the runs in index order and a summary of every
    numeric metric over them (min, median, max).

    ``batch``: runs per compiled call where the runs share one fused loop
    (:mod:`rths_ident.scenarios.study_batches`; None: its ``DEFAULT_BATCH``, 0 or 1: run
    by run); a cluster's task is then one batch. ``note(line)`` is told why a study that
    could not batch runs run by run.

    ``done``: rows of runs already finished (a study resumed from its JSON: only the
    others run); ``on_run(result so far)`` after every finished run (what keeps the
    study's JSON up to date). Ctrl-C stops the study: the run in progress stops safely
    and :class:`~rths_ident.operator_stop.OperatorStopped` is raised with ``partial``,
    the result of the runs finished (``complete`` false, ``missing_runs``)."""
    from rths_ident.scenarios.study_batches import DEFAULT_BATCH, run_batches  # noqa: PLC0415

    check_plan(plan)
    started = _time.perf_counter()
    total = len(plan.runs)
    rows: dict[int, dict] = {int(r["run"]): r for r in done}
    todo = [i for i in range(total) if i not in rows]
    size = DEFAULT_BATCH if batch is None else int(batch)
    if size < 0:
        raise ParameterError(f"--batch {size}: expected a whole number of runs per compiled call ≥ 0 (0: run by run)")
    decision = batching(plan, min(size, len(todo)))
    if decision.note is not None and note is not None:
        note(decision.note)

    def finished(row: dict) -> None:
        rows[row["run"]] = row
        if on_run is not None:
            on_run(study_result(plan, rows, started))
        if progress is not None:
            progress(len(rows), total)

    try:
        size = min(size, len(todo))
        if dask is None and decision.fingerprint is not None:
            run_batches(todo, size, decision.fingerprint,
                        lambda index, fused_loop: run_variant(plan, index, fused_loop), finished,
                        first_test=decision.first_test)
        elif dask is None:
            for index in todo:
                finished(run_variant(plan, index))
        elif todo:
            from rths_ident.dask_cluster import DaskExecutor  # noqa: PLC0415

            if decision.fingerprint is not None:
                task = run_batched_variants, (plan, tuple(todo), size, decision.fingerprint)
                chunks = [(first, min(size, len(todo) - first)) for first in range(0, len(todo), size)]
            else:
                task, chunks = (run_variants, plan), [(i, 1) for i in todo]
            with DaskExecutor(dask) as cluster:
                for first, chunk in cluster.iter_chunks(*task, chunks):
                    for row in chunk:
                        finished(row)
    except KeyboardInterrupt as interrupt:
        from rths_ident.operator_stop import OperatorStopped  # noqa: PLC0415

        stopped = interrupt if isinstance(interrupt, OperatorStopped) else OperatorStopped(str(interrupt))
        stopped.partial = study_result(plan, rows, started)
        raise stopped from None
    return study_result(plan, rows, started)


def study_result(plan: StudyPlan, rows: dict, started: float) -> dict:
    """The study's result from the rows finished so far (by run index): the runs in
    order, which stopped, which are missing, the summary, and the plan itself (a study
    resumes from it)."""
    ordered = [rows[i] for i in sorted(rows)]
    missing = [i for i in range(len(plan.runs)) if i not in rows]
    return {"kind": plan.kind_name, "varied": list(plan.varied), "runs": ordered, "n_runs": len(plan.runs),
            "complete": not missing, "missing_runs": missing,
            "stopped_runs": [r["run"] for r in ordered if r["stopped"]], "summary": summarise(ordered),
            "wall_s": _time.perf_counter() - started, "seed": plan.seed, "plan": plan_as_json(plan)}


def plan_as_json(plan: StudyPlan) -> dict:
    """The plan as JSON (what ``rths-ident study --resume`` reads back)."""
    return {"kind": plan.kind_name, "test_text": plan.test_text, "source": plan.source,
            "runs": [[[path, value] for path, value in run] for run in plan.runs], "varied": list(plan.varied),
            "seed": plan.seed}


def plan_from_json(data: dict, where: str = "the study") -> StudyPlan:
    """The plan a study's JSON keeps (:func:`plan_as_json`); a clear error if it has none."""
    try:
        return StudyPlan(str(data["kind"]), str(data["test_text"]), str(data["source"]),
                         tuple(tuple((str(p), v) for p, v in run) for run in data["runs"]), tuple(data["varied"]),
                         data.get("seed"))
    except (KeyError, TypeError, ValueError) as exc:
        raise ParameterError(f"{where}: no study plan in it (written by rths-ident study? missing {exc})") from None


def _flat_numbers(metrics: Any, prefix: str = "") -> dict:
    out = {}
    if isinstance(metrics, dict):
        for key, value in metrics.items():
            if key in ("variants", "phase_s") or str(key).startswith("_"):
                continue
            out.update(_flat_numbers(value, f"{prefix}{key}." if prefix or True else ""))
    elif isinstance(metrics, (int, float)) and not isinstance(metrics, bool) and math.isfinite(metrics):
        out[prefix.rstrip(".")] = float(metrics)
    return out


def summarise(rows: list[dict]) -> dict:
    """min, median and max over the runs of every numeric metric (flattened names)."""
    columns: dict[str, list] = {}
    for row in rows:
        for name, value in _flat_numbers(row["metrics"]).items():
            columns.setdefault(name, []).append(value)
    return {name: {"min": float(np.min(v)), "median": float(np.median(v)), "max": float(np.max(v)), "runs": len(v)}
            for name, v in columns.items() if len(v) == len(rows)}
