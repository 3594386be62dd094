"""Speed of the compensator calibration (``rths-ident bench --only calibrate``).

* the whole study as ``rths-ident calibrate amb`` runs it (64 specimens × 30 PSO
  iterations of 8 candidates by default): wall time split into compilation, the search
  and the before/after scoring on both samples;
* one population batch (candidates × specimens in one compiled ``vmap`` call) for each
  compensator, side by side: what the loop's time goes to.
"""

from __future__ import annotations

import time

import jax
import numpy as np

from rths_ident.calibration.sample import sample_specimens
from rths_ident.calibration.sdof_rths import StudySettings, make_batch_j2, specimen_arrays
from rths_ident.scenarios.sdof_calibration import build_study, calibrate


def _times(fn, repeats: int) -> np.ndarray:
    walls = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        walls.append(time.perf_counter() - start)
    return np.asarray(walls)


def population_batch(kind: str, n_specimens: int, population: int, settings: StudySettings, repeats: int = 2) -> dict:
    """Wall seconds (min and median of ``repeats``) of one population batch of ``kind``
    (compiled beforehand)."""
    study = build_study(kind, settings)
    specimens = specimen_arrays(study, sample_specimens(n_specimens, 0))
    thetas = np.tile(study.space.source, (population, 1))
    compiled = make_batch_j2(study).lower(thetas, specimens).compile()
    walls = _times(lambda: compiled(thetas, specimens), repeats)
    fast_steps = population * n_specimens * settings.duration * settings.fast_rate
    return {"wall_s": float(walls.min()), "wall_median_s": float(np.median(walls)),
            "fast_steps_per_s": fast_steps / float(walls.min())}


def run(n_specimens: int = 64, iterations: int = 30, population: int = 8,
        settings: StudySettings = StudySettings(), repeats: int = 3) -> dict:
    """The whole AMB study (once) and the per-compensator batch costs (``repeats`` runs
    each; module doc)."""
    start = time.perf_counter()
    study = calibrate("amb", n_specimens=n_specimens, method="pso", iterations=iterations, population=population,
                      settings=settings)
    total = time.perf_counter() - start
    batches = {kind: population_batch(kind, n_specimens, population, settings, repeats)
               for kind in ("polynomial", "damb", "amb")}
    runs = study["evaluations"] * n_specimens
    return {
        "specimens": n_specimens, "iterations": iterations, "population": population,
        "duration_s": settings.duration, "fast_rate_hz": settings.fast_rate,
        "study_wall_s": total, "compile_s": study["compile_s"], "search_s": study["search_s"],
        "scoring_and_setup_s": total - study["compile_s"] - study["search_s"],
        "hybrid_tests": runs, "simulated_s": runs * settings.duration,
        "population_batch": batches,
    }


def report(r: dict) -> list[str]:
    lines = [f"calibrate amb (PSO): {r['specimens']} specimens × {r['iterations']} iterations × {r['population']} "
             f"candidates = {r['hybrid_tests']} hybrid tests of {r['duration_s']:g} s at {r['fast_rate_hz']:g} Hz "
             f"in {r['study_wall_s']:.1f} s (compile {r['compile_s']:.1f} s, search {r['search_s']:.1f} s, "
             f"set-up and before/after scoring {r['scoring_and_setup_s']:.1f} s)",
             "  one population batch (candidates × specimens, one compiled call):  min s  median s"]
    for kind, b in r["population_batch"].items():
        lines.append(f"    {kind:10s} {b['wall_s']:7.3f} {b['wall_median_s']:8.3f}  "
                     f"({b['fast_steps_per_s']:.3g} fast steps/s at the min)")
    return lines
