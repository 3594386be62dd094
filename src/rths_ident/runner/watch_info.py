"""What a watcher of a run (the live page) is told before the first slow step: the
``info`` of :class:`~rths_ident.runner.events.TestStarted`, JSON-ready, SI units."""

from __future__ import annotations

import numpy as np

from rths_ident.figure_views import STYLES
from rths_ident.hybrid.loop.assembled import HybridTest, variant_guards

__all__ = ["describe_run"]


def _finite(value):
    value = float(value)
    return value if np.isfinite(value) else None


def _guards(test: HybridTest, variant: str) -> dict:
    guards = variant_guards(test, variant)
    return {
        "lower_bounds": [_finite(v) for v in np.atleast_1d(np.asarray(guards.lower_bounds, dtype=float))],
        "upper_bounds": [_finite(v) for v in np.atleast_1d(np.asarray(guards.upper_bounds, dtype=float))],
        "max_relative_std": _finite(guards.max_relative_std),
        "freeze_until_s": _finite(guards.freeze_until_s),  # None: never (inf)
        "update_every_slow_steps": int(guards.update_every_slow_steps),
        "require_converged": bool(guards.require_converged),
    }


def _limits(test: HybridTest) -> dict:
    """The actuator's stroke [m], velocity [m/s] and force [N] limits, where it has them."""
    actuator = getattr(test.fast_side, "actuator", None)
    names = {"stroke_m": "stroke_limit", "velocity_m_s": "velocity_limit", "force_N": "force_limit"}
    return {key: _finite(getattr(actuator, field)) for key, field in names.items()
            if actuator is not None and hasattr(actuator, field)}


def describe_run(test: HybridTest, cfg, engine: str, variant: str, paced: bool, reference_response=None) -> dict:
    """The run as a watcher draws it (module doc): ``reference_response`` (N, n) [m] is
    the reference per response DOF at the slow steps, when the test has one."""
    time_slow = np.asarray(test.time_slow, dtype=float)
    names = list(test.param_names)
    units = dict(test.param_units)
    params = [{"name": n, "unit": units.get(n, ""), "true": _finite(t), "initial": _finite(i)}
              for n, t, i in zip(names, np.asarray(test.true_values, dtype=float),
                                 np.asarray(test.initial_values, dtype=float))]
    reference = None
    if reference_response is not None:
        reference = np.round(np.asarray(reference_response, dtype=float).reshape(len(time_slow), -1), 9).tolist()
    return {
        "test": test.name,
        "scenario": getattr(cfg, "SCENARIO", test.name),
        "record": getattr(cfg, "record", None),
        "updating": getattr(cfg, "updating", None),
        "compensation": getattr(cfg, "compensation", None),
        "transition": getattr(cfg, "transition", None),
        "engine": engine,
        "paced": bool(paced),
        "slow_rate_hz": float(test.slow_rate),
        "fast_rate_hz": float(test.slow_rate) * test.samples_per_step,
        "samples_per_step": int(test.samples_per_step),
        "steps": int(time_slow.size),
        "time_first_s": float(time_slow[0]),
        "params": params,
        "guards": _guards(test, variant) if names else None,
        "response_names": list(test.response_names),
        "reference": reference,
        "limits": _limits(test),
        "views": STYLES,  # the figures' drawing of each role (rths_ident.figure_views)
    }
