"""``rths-ident run SCENARIO``: a virtual hybrid simulation with online model updating.

Scenarios: ``lugre-frame`` (the flagship, see
:mod:`rths_ident.hybrid.scenarios.lugre_frame`) and ``bw-frame`` (degrading Bouc–Wen
columns with UKF updating, :mod:`rths_ident.hybrid.scenarios.bw_frame`). Writes the metrics as JSON
(``--json``) and the figures (``--plots DIR``); prints a short report.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

SCENARIOS = ("lugre-frame", "bw-frame")


def _progress_bar(total_steps: int):
    try:
        from tqdm import tqdm  # noqa: PLC0415
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return None, None
    bar = tqdm(total=total_steps, unit="slow step", file=sys.stderr, leave=False)
    return (lambda k, state, log: bar.update(1)), bar


def _json_ready(value):
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items() if not k.startswith("_")}
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _report(result: dict) -> str:
    v = result["variants"]
    lines = [
        f"{result['scenario']} — {result['record']}, floor mass {result['floor_mass_kg'] / 1e3:g} t, "
        f"{result['sim_duration_s']:.2f} s simulated, engine {result['engine']}",
        f"  fast {result['fast_rate_hz']:g} Hz / slow {result['slow_rate_hz']:g} Hz, "
        f"{result['compensation']} compensation, {result['transition']} transition",
        f"  J2 (tracking) {result['J2_percent']:.3f} %   τ {result['tau_ms']:.3f} ms   "
        f"J4 force {result['J4_force_percent']:.3f} %",
        "  roof J4 [%]: " + "   ".join(f"{m} {v[m]['J4_percent']['floor3']:.3f}" for m in v),
        "  identified / true:",
    ]
    width = max([7] + [len(name) for name in result["params_true"]])
    for name, true in result["params_true"].items():
        est = result["params_final"][name]
        tc = result["convergence_time_s"][name]
        error = result["param_error_percent"][name]
        lines.append(f"    {name:{width}s} {est:14.6g} / {true:<12.6g} error {error:6.3f} %"
                     f"   converged (±2 %) at {'—' if tc is None else f'{tc:.2f} s'}")
    lines.append(f"  wall {result['wall_s']:.2f} s → {result['realtime_factor']:.1f}× real time "
                 f"(total with set-up, compile and comparison runs {result['total_wall_s']:.1f} s)")
    return "\n".join(lines)


def _scenario_config(args: argparse.Namespace):
    """(scenario module, its config, its plot function) for ``args.scenario``."""
    from rths_ident._params import ParameterError  # noqa: PLC0415

    common = dict(
        record=args.record, duration=args.duration, compensation=args.compensation, transition=args.transition,
        fast_rate=args.fast_rate, slow_rate=args.slow_rate, sensor_noise=not args.no_noise, seed=args.seed,
        identifier_rate=args.identifier_rate, transfer_system=args.transfer_system,
    )
    if args.scenario == "bw-frame":
        from rths_ident.hybrid.scenarios import bw_frame  # noqa: PLC0415

        if args.initial_error is not None:
            raise ParameterError("--initial-error (scenario1 | scenario2) is for lugre-frame; bw-frame takes "
                                 "--parameter-error (relative error of the NS's k_e, f_y0 and degradation rates)")
        extra = {} if args.floor_mass is None else {"floor_mass": args.floor_mass}
        if args.parameter_error is not None:
            extra["initial_error"] = args.parameter_error
        cfg = bw_frame.BWFrameConfig(updating=args.updating or "ukf", **extra, **common)
        return bw_frame, cfg, bw_frame.plot_bw_frame
    from rths_ident.hybrid.plots import plot_lugre_frame  # noqa: PLC0415
    from rths_ident.hybrid.scenarios import lugre_frame  # noqa: PLC0415

    if args.parameter_error is not None:
        raise ParameterError("--parameter-error is for bw-frame; lugre-frame takes --initial-error "
                             "scenario1 | scenario2")
    cfg = lugre_frame.LugreFrameConfig(
        floor_mass=args.floor_mass, updating=args.updating or "rls", initial_error=args.initial_error or "scenario2",
        **common,
    )
    return lugre_frame, cfg, plot_lugre_frame


def _run(args: argparse.Namespace) -> int:
    scenario, cfg, plot = _scenario_config(args)
    progress, bar = (None, None)
    if args.engine == "stepwise" and not args.quiet:
        n_slow = len(scenario.build(cfg).time_slow)
        progress, bar = _progress_bar(n_slow)
    if not args.quiet:
        print(f"running {args.scenario} ({cfg.record}, updating {cfg.updating}, engine {args.engine}) …",
              file=sys.stderr)
    result = scenario.run_scenario(cfg, engine=args.engine, compare=not args.no_compare, progress=progress)
    if bar is not None:
        bar.close()
    print(_report(result))
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(_json_ready(result), indent=2))
        print(f"metrics → {path}")
    if args.plots:
        for p in plot(result, args.plots):
            print(f"plot → {p}")
    return 0


def add_run_command(subparsers: argparse._SubParsersAction) -> None:
    """Register ``rths-ident run``."""
    parser = subparsers.add_parser(
        "run", help="run a virtual hybrid simulation with online model updating",
        description="Virtual real-time hybrid simulation with online model updating. "
        "Units: SI (m, N, s, kg).",
    )
    parser.add_argument("scenario", choices=SCENARIOS)
    parser.add_argument("--record", default="elcentro_1940", help="ground motion (see 'rths-ident datasets list')")
    parser.add_argument("--floor-mass", type=float, default=None,
                        help="floor mass [kg] (default: lugre-frame seed 001 Table 4.1 for the record; "
                        "bw-frame 5000 kg)")
    parser.add_argument("--duration", type=float, default=None, help="seconds of the record to run (default all)")
    parser.add_argument("--updating", choices=("rls", "ukf", "none", "oracle"), default=None,
                        help="identify and update (lugre-frame: rls, the default, or ukf; bw-frame: ukf), "
                        "none (keep the wrong model) or oracle (true model)")
    parser.add_argument("--engine", choices=("fused", "stepwise"), default="fused")
    parser.add_argument("--compensation", choices=("damb", "amb", "polynomial", "none"), default="damb")
    parser.add_argument("--transition", choices=("predictor-corrector", "ddmrt"), default="predictor-corrector")
    parser.add_argument("--initial-error", choices=("scenario1", "scenario2"), default=None,
                        help="lugre-frame: wrong initial NS parameters (seed 001: S1 = −10/−30/−30 %%, "
                        "S2 = −30 %% all; default scenario2)")
    parser.add_argument("--parameter-error", type=float, default=None,
                        help="bw-frame: relative error of the NS's initial k_e, f_y0 and degradation rates "
                        "(default −0.30)")
    parser.add_argument("--fast-rate", type=float, default=4000.0, help="fast (controller) rate [Hz]")
    parser.add_argument("--slow-rate", type=float, default=50.0, help="slow (numerical substructure) rate [Hz]")
    parser.add_argument("--transfer-system", choices=("carrion-spencer", "ideal"), default="carrion-spencer",
                        help="servo-hydraulic actuator with CSI, or an ideal one (seed 001's virtual test)")
    parser.add_argument("--identifier-rate", type=float, default=None,
                        help="identifier sample rate [Hz] (default: the lowest rate ≥ 1 kHz dividing the fast rate)")
    parser.add_argument("--no-noise", action="store_true", help="ideal sensors")
    parser.add_argument("--no-compare", action="store_true",
                        help="skip the comparison runs (no updating, oracle)")
    parser.add_argument("--seed", type=int, default=123, help="sensor-noise seed")
    parser.add_argument("--json", metavar="OUT.json", default=None, help="write the metrics here")
    parser.add_argument("--plots", metavar="DIR", default=None, help="write the figures into this folder")
    parser.add_argument("--quiet", action="store_true")
    parser.set_defaults(func=_run)
