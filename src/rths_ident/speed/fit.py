"""Speed of a quasi-static fit (``rths-ident bench --only fit``).

The goal it answers to (docs/fitting.md, "Fits that generalise"): a fit in under 60 s on
a 2-core machine. Each case is what ``rths-ident fit --dataset NAME --model MODEL`` runs
(:func:`rths_ident.estimators.offline.fit` or, for ``auto``,
:func:`~rths_ident.estimators.offline.fit_all`: ``nls`` with the command's defaults: seed
0, A = 1, 40 generations of the global stage, ``--form auto``), on the shipped real
cyclic tests (:func:`rths_ident.datasets.load_hysteresis_test`):

* ``asymmetric-boucwen`` on kunnath, gill and daniel (the model ``--model auto`` picks on
  all three, docs/fitting.md's real-members table);
* ``--model auto`` (every model, ranked) on one of them (daniel, the shortest record:
  the per-fit goal is the cases above; this one is the cost of the ranking).

Per case: the first call in this process (tracing and compiling; a command-line run pays
it every time unless JAX's compilation cache already holds the programs), then the min
and median of ``repeats`` further calls (compiled), wall and CPU seconds of this process,
and the fit's rms/rms NRMSE (the same fit each time: seeded).
"""

from __future__ import annotations

import time

import numpy as np

TESTS = ("kunnath", "gill", "daniel")
MODEL = "asymmetric-boucwen"
AUTO_TEST = "daniel"  # the shortest record: auto fits every model, 9 fits
#: the options ``rths-ident fit`` passes for ``--method nls`` with its defaults
COMMAND_DEFAULTS = {"seed": 0, "free_A": False, "global_generations": 40}


def _fit_once(data, model: str) -> tuple[float, float, float, str]:
    """Wall and CPU seconds of one fit as the command runs it, its rms/rms NRMSE [%] and
    the model fitted (for ``auto``: the one it chose)."""
    from rths_ident.estimators import offline  # noqa: PLC0415
    from rths_ident.models import MODELS  # noqa: PLC0415

    wall, cpu = time.perf_counter(), time.process_time()
    if model == "auto":
        result = offline.fit_all(data, "nls", **COMMAND_DEFAULTS)[0]
    else:
        form = {"form": "auto"} if MODELS[model].fit.forms else {}
        result = offline.fit(data, model, "nls", **COMMAND_DEFAULTS, **form)
    return time.perf_counter() - wall, time.process_time() - cpu, float(result.nrmse_rms_percent), result.model


def case(test: str, model: str, repeats: int) -> dict:
    """One case's figures (module doc): ``first_s`` (wall of the first call), ``wall_min_s``,
    ``wall_median_s``, ``cpu_min_s``, ``cpu_median_s`` of ``repeats`` further calls,
    ``nrmse_rms_percent``, ``n_samples`` and ``fitted_model`` (for ``auto``: its choice)."""
    from rths_ident.datasets import load_hysteresis_test  # noqa: PLC0415
    from rths_ident.estimators.offline import FitData  # noqa: PLC0415

    x, f = load_hysteresis_test(test, units="SI")
    data = FitData.from_arrays(x, f, None, source=test)
    first_wall, first_cpu, nrmse, chosen = _fit_once(data, model)
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu, _, _ = _fit_once(data, model)
        walls.append(wall)
        cpus.append(cpu)
    return {"test": test, "model": model, "n_samples": int(data.n_samples), "repeats": repeats,
            "first_s": first_wall, "first_cpu_s": first_cpu,
            "wall_min_s": float(np.min(walls)), "wall_median_s": float(np.median(walls)),
            "cpu_min_s": float(np.min(cpus)), "cpu_median_s": float(np.median(cpus)),
            "nrmse_rms_percent": nrmse, "fitted_model": chosen}


def run(tests=TESTS, auto_test: str | None = AUTO_TEST, repeats: int = 2, each=None) -> dict:
    """``asymmetric-boucwen`` on each of ``tests`` and ``--model auto`` on ``auto_test``
    (None: skipped); ``repeats`` compiled calls per case after the first. ``each(line)``,
    if given, is called with a case's report line as soon as it is measured (a case takes
    minutes)."""
    figures = {"method": "nls", "options": dict(COMMAND_DEFAULTS), "cases": []}
    for test, model in [(test, MODEL) for test in tests] + ([(auto_test, "auto")] if auto_test else []):
        figures["cases"].append(case(test, model, repeats))
        if each is not None:
            each(_case_line(figures["cases"][-1]))
    return figures


def report(r: dict) -> list[str]:
    lines = [f"fit --dataset NAME (nls, seed {r['options']['seed']}, {r['options']['global_generations']} global "
             "generations):  first call s   min s  median s   cpu min s   rms/rms %"]
    return lines + [_case_line(c) for c in r["cases"]]


def _case_line(c: dict) -> str:
    return (f"  {c['test'] + ' --model ' + c['model']:36s} {c['first_s']:10.1f} {c['wall_min_s']:7.1f} "
            f"{c['wall_median_s']:9.1f} {c['cpu_min_s']:11.1f} {c['nrmse_rms_percent']:11.1f}  "
            f"({c['n_samples']} samples, {c['repeats']} repeats"
            + (f"; chose {c['fitted_model']})" if c["model"] == "auto" else ")"))
