"""``rths-ident bench``: speed measured side by side in one run, printed as ratios.

Never asserted in tests (CONTRIBUTING.md): these are measurements for people.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def machine() -> dict:
    """What the figures were measured on: CPU model, cores, Python, JAX, jaxlib, OpenSeesPy."""
    import os  # noqa: PLC0415
    import platform  # noqa: PLC0415
    from importlib import metadata  # noqa: PLC0415

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass

    def version(name):
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "not installed"

    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(), "jax": version("jax"),
            "jaxlib": version("jaxlib"), "openseespy": version("openseespy")}


def _bench(args: argparse.Namespace) -> int:
    from rths_ident.bench import hybrid_loop  # noqa: PLC0415

    quick = args.quick
    if args.repeats < 1:
        from rths_ident._params import ParameterError  # noqa: PLC0415

        raise ParameterError(f"--repeats = {args.repeats}: expected an integer ≥ 1")
    results: dict = {"machine": machine()}
    m = results["machine"]
    print(f"machine: {m['cpu']}, {m['cores']} cores; Python {m['python']}, JAX {m['jax']}, jaxlib {m['jaxlib']}, "
          f"OpenSeesPy {m['openseespy']}")
    which = set(args.only or ("engines", "batch", "components", "ukf", "opensees", "calibrate"))
    if "engines" in which:
        r = hybrid_loop.engines(duration=4.0 if quick else None, repeats=2 if quick else args.repeats,
                                stepwise_duration=2.0 if quick else 10.0)
        results["engines"] = r
        print(f"lugre-frame fused engine ({r['duration_s']:.1f} s simulated, {r['repeats']} runs): "
              f"min {r['fused_wall_s']:.3f} s → {r['fused_realtime_factor']:.1f}× real time, "
              f"median {r['fused_wall_median_s']:.3f} s → {r['fused_realtime_factor_median']:.1f}×; "
              f"{r['fused_us_per_fast_step']:.2f} µs per fast step")
        print(f"lugre-frame step-wise engine: min {r['stepwise_realtime_factor']:.1f}× real time, "
              f"median {r['stepwise_realtime_factor_median']:.1f}× → fused/step-wise = {r['fused_over_stepwise']:.1f}×")
    if "batch" in which:
        r = hybrid_loop.batch(n_specimens=4 if quick else 16, duration=2.0 if quick else 5.0,
                              repeats=2 if quick else args.repeats)
        results["batch"] = r
        print(f"vmap batch of {r['n_specimens']} uncertain specimens: {r['specimen_seconds_per_wall_second']:.1f} "
              f"specimen-seconds per wall second, {r['batch_speedup_over_sequential']:.2f}× one-by-one")
    if "components" in which:
        r = hybrid_loop.components(n_steps=2000 if quick else 8000, repeats=2 if quick else max(args.repeats, 5))
        results["components_per_fast_step"] = r
        print("cost per fast step (as the fused loop runs each):      min µs  median µs   flops")
        for name, figures in r.items():
            print(f"  {name:50s} {figures['us_min']:7.3f} {figures['us_median']:9.3f} {figures['flops']:7.0f}")
    if "ukf" in which:
        from rths_ident.bench import ukf_vs_filterpy  # noqa: PLC0415

        results["ukf_vs_filterpy"] = ukf_vs_filterpy.main(n_steps=100 if quick else 300, repeats=1 if quick else 3)
    if "opensees" in which:
        from rths_ident.bench import opensees_ns  # noqa: PLC0415

        r = opensees_ns.run(repeats=1 if quick else 3, duration=4.0 if quick else None)
        results["opensees_ns"] = r
        print("\n".join(opensees_ns.report(r)))
    if "calibrate" in which:
        from rths_ident.bench import calibration  # noqa: PLC0415
        from rths_ident.calibration.sdof_test import StudySettings  # noqa: PLC0415

        r = calibration.run(n_specimens=8 if quick else 64, iterations=3 if quick else 30,
                            settings=StudySettings(duration=1.0) if quick else StudySettings(),
                            repeats=2 if quick else args.repeats)
        results["calibrate"] = r
        print("\n".join(calibration.report(r)))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(results, indent=2))
        print(f"results → {args.json}")
    return 0


def add_bench_command(subparsers: argparse._SubParsersAction) -> None:
    """Register ``rths-ident bench``."""
    parser = subparsers.add_parser("bench", help="measure speed side by side (ratios)",
                                   description="Speed of rths_ident measured side by side in one run.")
    parser.add_argument("--only", nargs="+", choices=("engines", "batch", "components", "ukf", "opensees", "calibrate"),
                        default=None)
    parser.add_argument("--quick", action="store_true", help="short records and few repeats (smoke test)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="timed runs of each figure (min and median are printed; default 3)")
    parser.add_argument("--json", metavar="OUT.json", default=None)
    parser.set_defaults(func=_bench)
