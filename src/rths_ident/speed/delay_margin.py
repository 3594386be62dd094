"""Speed of the pre-test check's delay margin (``rths-ident bench --only margin``).

* the whole ``check TEST --predict`` prediction in this process
  (:func:`rths_ident.runner.predict.predict_test`: the twin over the whole record, then
  the margin's sweep): the first call (tracing and compiling, or loading what an earlier
  process stored) and the min/median of the repeats (compiled);
* what decided the batch size: the margin's twin (the sweep's window) one per compiled
  call against a ``jax.vmap`` batch of 8, per twin.
"""

from __future__ import annotations

import time

import numpy as np

from rths_ident.runner import delay_margin as dm
from rths_ident.runner.predict import predict_test

TESTS = ("rc-frame", "lugre-frame")


def _walls(fn, repeats: int) -> np.ndarray:
    walls = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        walls.append(time.perf_counter() - start)
    return np.asarray(walls)


def run(tests=TESTS, repeats: int = 3, duration: float | None = None) -> dict:
    """Figures per shipped test (module doc); ``duration``: seconds of the record (None: all)."""
    import rths_ident  # noqa: PLC0415

    out = {}
    for name in tests:
        test_file = rths_ident.load_test(name)
        if duration is not None:
            test_file = test_file.with_changes(record={"duration": duration})
        cfg, module = test_file.config, test_file.kind.module
        first = _walls(lambda: predict_test(module, cfg), 1)
        walls = _walls(lambda: predict_test(module, cfg), repeats)
        hybrid = module.build(cfg)
        sweep = dm.MarginSweep()
        twin = dm.margin_test(hybrid, sweep)
        per_twin = {}
        for points in (1, 8):
            twins = dm._Twins(twin, cfg.variant, points)
            delays = np.linspace(0.0, 0.01, points)
            twins.logs(delays, np.ones(points))  # compiled
            per_twin[points] = _walls(lambda: twins.logs(delays, np.ones(points)), repeats) / points
        out[name] = {"check_first_s": float(first[0]), "check_min_s": float(walls.min()),
                     "check_median_s": float(np.median(walls)), "window_s": len(twin.time_slow) / hybrid.slow_rate,
                     "twin_one_s_min": float(per_twin[1].min()), "twin_one_s_median": float(np.median(per_twin[1])),
                     "twin_in_batch_of_8_s_min": float(per_twin[8].min()),
                     "twin_in_batch_of_8_s_median": float(np.median(per_twin[8]))}
    return out


def report(r: dict) -> list[str]:
    lines = []
    for name, f in r.items():
        lines.append(f"{name} check --predict (twin + delay margin): first call {f['check_first_s']:.1f} s, then "
                     f"min {f['check_min_s']:.1f} s (median {f['check_median_s']:.1f})")
        lines.append(f"  margin twin ({f['window_s']:g} s): one per call {1e3 * f['twin_one_s_min']:.0f} ms "
                     f"(median {1e3 * f['twin_one_s_median']:.0f}), in a vmap batch of 8 "
                     f"{1e3 * f['twin_in_batch_of_8_s_min']:.0f} ms per twin "
                     f"(median {1e3 * f['twin_in_batch_of_8_s_median']:.0f}) → "
                     f"{f['twin_one_s_min'] / f['twin_in_batch_of_8_s_min']:.2f}× one by one")
    return lines
