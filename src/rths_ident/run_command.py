"""``rths-ident run SCENARIO``: a virtual hybrid simulation with online model updating.

Scenarios: ``lugre-frame`` (the flagship, see
:mod:`rths_ident.hybrid.scenarios.lugre_frame`). Writes the metrics as JSON
(``--json``) and the figures (``--plots DIR``); prints a short report.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

SCENARIOS = ("lugre-frame",)


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
        f"lugre-frame — {result['record']}, floor mass {result['floor_mass_kg'] / 1e3:g} t, "
        f"{result['sim_duration_s']:.2f} s simulated, engine {result['engine']}",
        f"  fast {result['fast_rate_hz']:g} Hz / slow {result['slow_rate_hz']:g} Hz, "
        f"{result['compensation']} compensation, {result['transition']} transition",
        f"  J2 (tracking) {result['J2_percent']:.3f} %   τ {result['tau_ms']:.3f} ms   "
        f"J4 force {result['J4_force_percent']:.3f} %",
        "  roof J4 [%]: " + "   ".join(f"{m} {v[m]['J4_percent']['floor3']:.3f}" for m in v),
        "  identified / true:",
    ]
    for name, true in result["params_true"].items():
        est = result["params_final"][name]
        tc = result["convergence_time_s"][name]
        lines.append(f"    {name:7s} {est:14.6g} / {true:<12.6g} error {result['param_error_percent'][name]:6.3f} %"
                     f"   converged (±2 %) at {'—' if tc is None else f'{tc:.2f} s'}")
    lines.append(f"  wall {result['wall_s']:.2f} s → {result['realtime_factor']:.1f}× real time "
                 f"(total with set-up, compile and comparison runs {result['total_wall_s']:.1f} s)")
    return "\n".join(lines)


def _run(args: argparse.Namespace) -> int:
    from rths_ident.hybrid.plots import plot_lugre_frame  # noqa: PLC0415
    from rths_ident.hybrid.scenarios import lugre_frame  # noqa: PLC0415

    cfg = lugre_frame.LugreFrameConfig(
        record=args.record, floor_mass=args.floor_mass, duration=args.duration, updating=args.updating,
        compensation=args.compensation, transition=args.transition, initial_error=args.initial_error,
        fast_rate=args.fast_rate, slow_rate=args.slow_rate, sensor_noise=not args.no_noise, seed=args.seed,
        identifier_rate=args.identifier_rate, transfer_system=args.transfer_system,
    )
    progress, bar = (None, None)
    if args.engine == "stepwise" and not args.quiet:
        n_slow = len(lugre_frame.build(cfg).time_slow)
        progress, bar = _progress_bar(n_slow)
    if not args.quiet:
        print(f"running lugre-frame ({cfg.record}, updating {cfg.updating}, engine {args.engine}) …",
              file=sys.stderr)
    result = lugre_frame.run_scenario(cfg, engine=args.engine, compare=not args.no_compare, progress=progress)
    if bar is not None:
        bar.close()
    print(_report(result))
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(_json_ready(result), indent=2))
        print(f"metrics → {path}")
    if args.plots:
        for p in plot_lugre_frame(result, args.plots):
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
                        help="floor mass [kg] (default: seed 001 Table 4.1 for the record)")
    parser.add_argument("--duration", type=float, default=None, help="seconds of the record to run (default all)")
    parser.add_argument("--updating", choices=("rls", "none", "oracle"), default="rls")
    parser.add_argument("--engine", choices=("fused", "stepwise"), default="fused")
    parser.add_argument("--compensation", choices=("damb", "amb", "polynomial", "none"), default="damb")
    parser.add_argument("--transition", choices=("predictor-corrector", "ddmrt"), default="predictor-corrector")
    parser.add_argument("--initial-error", choices=("scenario1", "scenario2"), default="scenario2",
                        help="wrong initial NS parameters (seed 001: S1 = −10/−30/−30 %%, S2 = −30 %% all)")
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
