"""``rths-ident bench``: speed measured side by side in one run, printed as ratios.

Never asserted in tests (CONTRIBUTING.md): these are measurements for people.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
from pathlib import Path

from rths_ident.cli.common_options import add_json_option

#: the figures ``--only`` picks from (all by default)
FIGURES = ("engines", "batch", "components", "ukf", "opensees", "realtime", "calibrate", "margin", "fit")


def machine() -> dict:
    """What the figures were measured on: CPU model, cores, Python, JAX, jaxlib, OpenSeesPy,
    and whether XLA emits small loops as single kernels (:mod:`rths_ident.small_loop_kernels`)."""
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

    from rths_ident import small_loop_kernels  # noqa: PLC0415

    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(), "jax": version("jax"),
            "jaxlib": version("jaxlib"), "openseespy": version("openseespy"),
            "small_loop_kernels": small_loop_kernels.active(), "xla_flags": os.environ.get("XLA_FLAGS", "")}


def _check_before_work(args: argparse.Namespace, which: set[str]) -> Path | None:
    """The options, the output file and what the chosen figures need from the install
    (the 'cluster' extra, OpenSeesPy's system libraries), before any figure; the JSON
    file to write, if any."""
    from rths_ident import extras  # noqa: PLC0415
    from rths_ident.errors import ParameterError  # noqa: PLC0415
    from rths_ident.output_paths import check_output_file  # noqa: PLC0415

    if args.repeats is not None and args.repeats < 1:
        raise ParameterError(f"--repeats = {args.repeats}: expected an integer ≥ 1")
    if args.slow_rates and not all(0 < rate <= 10_000 for rate in args.slow_rates):
        raise ParameterError(f"--slow-rates = {' '.join(f'{r:g}' for r in args.slow_rates)}: expected rates in "
                             "(0, 10000] Hz")
    json_path = check_output_file("--json", args.json) if args.json else None
    if "batch" in which and not args.no_cluster:
        extras.require("cluster", "bench: the local Dask cluster figure (--no-cluster skips it)")
    if "opensees" in which:
        extras.require_opensees("bench --only opensees")
    return json_path


def _bench(args: argparse.Namespace) -> int:
    from rths_ident.speed import hybrid_loop  # noqa: PLC0415

    quick = args.quick
    which = set(args.only or FIGURES)
    json_path = _check_before_work(args, which)
    fit_repeats = 2 if args.repeats is None else args.repeats  # a fit takes tens of seconds: fewer by default
    args.repeats = 3 if args.repeats is None else args.repeats
    results: dict = {"machine": machine()}
    m = results["machine"]
    print(f"machine: {m['cpu']}, {m['cores']} cores; Python {m['python']}, JAX {m['jax']}, jaxlib {m['jaxlib']}, "
          f"OpenSeesPy {m['openseespy']}; XLA small-loop kernels {'on' if m['small_loop_kernels'] else 'OFF'}")
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
        r = hybrid_loop.bw_frame_engine(duration=4.0 if quick else None, repeats=2 if quick else args.repeats)
        results["bw_frame_engine"] = r
        print(f"bw-frame fused engine ({r['duration_s']:.1f} s simulated, {r['repeats']} runs): "
              f"min {r['fused_wall_s']:.3f} s → {r['fused_realtime_factor']:.1f}× real time, "
              f"median {r['fused_wall_median_s']:.3f} s → {r['fused_realtime_factor_median']:.1f}×; "
              f"{r['fused_us_per_fast_step']:.2f} µs per fast step")
    if "batch" in which:
        from rths_ident.speed import marths_batch  # noqa: PLC0415

        sizes = (1, 4) if quick else (1, 8, 32)
        repeats = 2 if quick else args.repeats
        results["batch"] = hybrid_loop.batch(sizes=sizes, duration=1.0 if quick else 5.0, repeats=repeats)
        results["marths_batch"] = marths_batch.loop(sizes=sizes, duration=1.0 if quick else 5.0, repeats=repeats)
        for label, r in (("lugre-frame (uncertain specimens)", results["batch"]),
                         ("maRTHS LQG (random plants)", results["marths_batch"])):
            one = r["one_by_one_s_per_sim"]
            print(f"{label}, {r['duration_s']:.1f} s simulated: one by one {1e3 * one['min']:.1f} ms per simulation "
                  f"(median {1e3 * one['median']:.1f})")
            for n, b in r["batches"].items():
                print(f"  vmap batch of {n:3d}: {1e3 * b['s_per_sim_min']:7.2f} ms per simulation "
                      f"(median {1e3 * b['s_per_sim_median']:.2f}) → {b['speedup_min']:.2f}× one by one "
                      f"(median {b['speedup_median']:.2f}×)")
            for n, b in r["threaded"].items():
                print(f"  {r['threads']} threads × batch of {n:3d}: {1e3 * b['s_per_sim_min']:7.2f} ms per simulation "
                      f"(median {1e3 * b['s_per_sim_median']:.2f}) → {b['speedup_min']:.2f}× one by one "
                      f"(median {b['speedup_median']:.2f}×)")
        s = marths_batch.studies(runs=4 if quick else 32, batch=4 if quick else 32, duration=6.0 if quick else 10.0,
                                 cluster=not args.no_cluster)
        results["marths_study"] = s
        cluster = (f", local Dask cluster (2 workers, start-up and compilation included) "
                   f"{s['local_cluster_runs_per_min']:.0f}" if "local_cluster_runs_per_min" in s else "")
        print(f"maRTHS study of {s['runs']} runs × {s['duration_s']:.0f} s, runs per minute: one by one "
              f"{s['one_by_one_runs_per_min']:.0f}, batches of {s['batch']} {s['batched_runs_per_min']:.0f}, "
              f"batches of {s['threaded_batch']} on {s['cores']} threads "
              f"{s['batched_threads_runs_per_min']:.0f}{cluster}")
    if "components" in which:
        r = hybrid_loop.components(n_steps=2000 if quick else 8000, repeats=2 if quick else max(args.repeats, 5))
        results["components_per_fast_step"] = r
        print("cost per fast step (as the fused loop runs each):      min µs  median µs   flops")
        for name, figures in r.items():
            print(f"  {name:50s} {figures['us_min']:7.3f} {figures['us_median']:9.3f} {figures['flops']:7.0f}")
    if "ukf" in which:
        from rths_ident.speed import ukf_vs_filterpy  # noqa: PLC0415

        results["ukf_vs_filterpy"] = ukf_vs_filterpy.main(n_steps=100 if quick else 300, repeats=1 if quick else 3)
    if "opensees" in which:
        from rths_ident.speed import opensees_ns  # noqa: PLC0415

        r = opensees_ns.run(repeats=1 if quick else 3, duration=4.0 if quick else None)
        results["opensees_ns"] = r
        print("\n".join(opensees_ns.report(r)))
    if "realtime" in which:
        from rths_ident.speed import realtime_loop  # noqa: PLC0415

        cases = tuple(args.cases or realtime_loop.CASES)
        r = realtime_loop.run(repeats=1 if quick else args.repeats, duration=1.0 if quick else 4.0,
                              padding=0.25 if quick else 1.0, cases=cases)
        results["realtime_loop"] = r
        print("\n".join(realtime_loop.report(r)))
        if args.slow_rates:
            table = realtime_loop.rate_table(args.slow_rates, repeats=1 if quick else args.repeats,
                                             duration=1.0 if quick else 4.0, padding=0.25 if quick else 1.0,
                                             cases=cases)
            results["realtime_loop"]["by_slow_rate"] = table
            results["realtime_loop"]["load_average"]["after"] = list(os.getloadavg())  # after the table too
            print("\n".join(realtime_loop.rate_table_lines(table)))
    if "calibrate" in which:
        from rths_ident.speed import calibration  # noqa: PLC0415
        from rths_ident.calibration.sdof_rths import StudySettings  # noqa: PLC0415

        r = calibration.run(n_specimens=8 if quick else 64, iterations=3 if quick else 30,
                            settings=StudySettings(duration=1.0) if quick else StudySettings(),
                            repeats=2 if quick else args.repeats)
        results["calibrate"] = r
        print("\n".join(calibration.report(r)))
    if "margin" in which:
        from rths_ident.speed import delay_margin  # noqa: PLC0415

        r = delay_margin.run(repeats=1 if quick else args.repeats, duration=2.0 if quick else None)
        results["delay_margin"] = r
        print("\n".join(delay_margin.report(r)))
    if "fit" in which:
        from rths_ident.speed import fit  # noqa: PLC0415

        print(fit.report({"options": fit.COMMAND_DEFAULTS, "cases": []})[0], flush=True)
        each = functools.partial(print, flush=True)  # a case takes minutes: its line as soon as it is measured
        results["fit"] = (fit.run(tests=("kunnath",), auto_test=None, repeats=1, each=each) if quick
                          else fit.run(repeats=fit_repeats, each=each))
    if json_path is not None:
        json_path.write_text(json.dumps(results, indent=2))
        print(f"results → {json_path}")
    return 0


def _realtime_case(text: str) -> str:
    """A realtime case named on the command line (``rc-frame-opensees-tcp``) → its name
    in the figures (``rc-frame opensees-tcp``)."""
    import re  # noqa: PLC0415

    from rths_ident.speed.realtime_loop import CASES  # noqa: PLC0415

    names = {re.sub(r"[^a-z0-9]+", "-", case).strip("-"): case for case in CASES}
    if text not in names and text not in CASES:
        raise argparse.ArgumentTypeError(f"expected one of {', '.join(names)}, got {text!r}")
    return names.get(text, text)


def add_bench_command(subparsers: argparse._SubParsersAction) -> None:
    """Register ``rths-ident bench``."""
    parser = subparsers.add_parser("bench", help="measure speed side by side (ratios)",
                                   description="Speed of rths_ident measured side by side in one run.")
    parser.add_argument("--only", nargs="+", choices=FIGURES, default=None, help="these figures only (default: all)")
    parser.add_argument("--quick", action="store_true", help="short records and few repeats (smoke test)")
    parser.add_argument("--repeats", type=int, default=None,
                        help="timed runs of each figure (min and median are printed; default 3, "
                        "fit: 2 after its first call)")
    parser.add_argument("--slow-rates", nargs="+", type=float, metavar="HZ", default=None,
                        help="realtime: also pace each case at these slow rates (e.g. 50 256 512 1024; the fast "
                             "rate is the smallest whole multiple ≥ 4 kHz) — the largest rate this machine holds")
    parser.add_argument("--cases", nargs="+", metavar="CASE", default=None, type=_realtime_case,
                        help="realtime: these cases only (host-alone-empty-step, rc-frame-native, rc-frame-opensees, "
                        "rc-frame-opensees-tcp, lugre-frame-rls; default: all)")
    parser.add_argument("--no-cluster", action="store_true",
                        help="batch: skip the local Dask cluster (2 worker processes) of the study figures")
    add_json_option(parser, "every figure")
    parser.set_defaults(func=_bench)
