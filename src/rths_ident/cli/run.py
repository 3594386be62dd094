"""``rths-ident run SCENARIO``: a virtual hybrid simulation with online model updating.

The scenarios are those registered in :mod:`rths_ident.scenarios` (the flagship
``lugre-frame``, ``bw-frame``, …); this module knows none of them by name. Writes the
metrics as JSON (``--json``), the figures (``--plots DIR``) and the test record (HDF5,
``--test-record``; :mod:`rths_ident.records`); prints a short report.
"""

from __future__ import annotations

import argparse
import datetime
import inspect
import json
import math
import sys
import time
from pathlib import Path

from rths_ident.hybrid.loop.realtime import DEFAULT_PADDING_S
from rths_ident.scenarios import SCENARIOS


#: exit status of a hybrid test that stopped on a fault (limit, peer, non-finite state)
EXIT_TEST_STOPPED = 3


class _ProgressBar:
    """A tqdm bar over the slow steps, opened at the first completed step, so that its
    rate and ETA count the loop, not the set-up and compilation before it."""

    def __init__(self, total_steps: int):
        self.total_steps, self.bar = total_steps, None

    def __call__(self, k, step_log) -> None:
        if self.bar is None:
            from tqdm import tqdm  # noqa: PLC0415

            self.bar = tqdm(total=self.total_steps, unit="slow step", file=sys.stderr, leave=False)
        self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _json_ready(value):
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items() if not k.startswith("_")}
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _report(result: dict) -> str:
    v = result["variants"]
    mass = f", floor mass {result['floor_mass_kg'] / 1e3:g} t" if "floor_mass_kg" in result else ""
    roof = list(next(iter(v.values()))["J4_percent"])[-1]
    lines = [
        f"{result['scenario']} — {result['record']}{mass}, "
        f"{result['sim_duration_s']:.2f} s simulated, engine {result['engine']}",
        f"  fast {result['fast_rate_hz']:g} Hz / slow {result['slow_rate_hz']:g} Hz, "
        f"{result['compensation']} compensation, {result['transition']} transition",
        f"  J2 (tracking) {result['J2_percent']:.3f} %   τ {result['tau_ms']:.3f} ms   "
        f"J4 force {result['J4_force_percent']:.3f} %",
        "  roof J4 [%]: "
        + "   ".join(f"{m} {v[m]['J4_percent'][roof]:.3f}" for m in v),
    ]
    lines += _parameter_lines(result)
    lines.append(f"  wall {result['wall_s']:.2f} s → {result['realtime_factor']:.1f}× real time "
                 f"(total with set-up, compile and comparison runs {result['total_wall_s']:.1f} s)")
    if "realtime" in result:
        rt = result["realtime"]
        lat, ns = rt["latency_ms"], rt["ns_step_ms"]
        lines.append(
            f"  paced at {rt['slow_step_ms']:g} ms per slow step: missed deadlines {rt['missed_deadlines']} "
            f"({rt['missed_after_startup']} after the {rt['startup_steps']}-step start-up, longest run "
            f"{rt['longest_missed_run']}), late targets (> 0.6 Δt) {rt['late_targets']}")
        lines.append(f"  latency per slow step p50 {lat['p50']:.3f} / p99 {lat['p99']:.3f} / max {lat['max']:.3f} ms"
                     f"; numerical substructure p50 {ns['p50']:.3f} / p99 {ns['p99']:.3f} / max {ns['max']:.3f} ms")
    return "\n".join(lines)


def _parameter_lines(result: dict) -> list[str]:
    """The parameters of the configured variant: with updating, what was identified
    (and pushed into the numerical substructure); with ``none``/``oracle``, what the
    numerical substructure used — the identifier only watched, and says so."""
    true_values = result["params_true"]
    if not true_values:
        return []
    width = max([7] + [len(name) for name in true_values])
    if "ns_params_final" in result and result["updating"] in ("none", "oracle"):
        lines = [f"  numerical substructure used / true ({result['updating']}: not updated):"]
        for name, true in true_values.items():
            used = result["ns_params_final"][name]
            lines.append(f"    {name:{width}s} {used:14.6g} / {true:<12.6g} error {100 * abs(used / true - 1):6.3f} %")
        watched = ", ".join(f"{n} {result['params_final'][n]:.6g}" for n in true_values)
        return lines + [f"  (the identifier, watching only, ended at {watched})"]
    lines = ["  identified / true:"]
    for name, true in true_values.items():
        est = result["params_final"][name]
        tc = result["convergence_time_s"][name]
        error = result["param_error_percent"][name]
        lines.append(f"    {name:{width}s} {est:14.6g} / {true:<12.6g} error {error:6.3f} %"
                     f"   converged (±2 %) at {'—' if tc is None else f'{tc:.2f} s'}")
    return lines


#: the settings every scenario takes (HybridTestConfig fields) and their argparse names
COMMON = ("record", "record_dt", "record_units", "duration", "compensation", "transition", "fast_rate", "slow_rate", "seed", "identifier_rate",
          "transfer_system", "updating")
#: every scenario-specific option the parser knows (each scenario lists those it takes)
SCENARIO_OPTIONS = ("floor_mass", "initial_error", "parameter_error", "case", "ns", "ns_address", "ns_model",
                    "integrator", "damping", "column_model", "controller", "scale", "uncertain", "convention", "batch",
                    "threads", "dask", "site",
                    "kinematics", "envelope", "rig_mode", "topology", "specimen_inertia")


def _scenario_config(args: argparse.Namespace):
    """(scenario module, its config) for ``args.scenario``; an option the scenario does
    not take is a clear error naming the options it does take."""
    from rths_ident.errors import ParameterError  # noqa: PLC0415
    from rths_ident import scenarios  # noqa: PLC0415

    scenario = scenarios.load(args.scenario)
    for option in SCENARIO_OPTIONS:
        if getattr(args, option) is not None and option not in scenario.OPTIONS:
            takes = ", ".join("--" + o.replace("_", "-") for o in scenario.OPTIONS) or "none"
            raise ParameterError(f"--{option.replace('_', '-')} is not an option of {args.scenario} "
                                 f"(its own options: {takes})")
    common = {name: getattr(args, name) for name in COMMON}
    common["sensor_noise"] = not args.no_noise
    common["ddmrt_adaptive"] = True if args.ddmrt_adaptive else None
    common["pad_seconds"] = args.pad if args.pad is not None else (DEFAULT_PADDING_S if args.realtime else None)
    options = {name: getattr(args, name) for name in scenario.OPTIONS}
    return scenario, scenario.config_from_options(common, options)


def _checked_outputs(args: argparse.Namespace) -> tuple[Path | None, Path | None]:
    """(``--json`` file, ``--plots`` folder), checked before any work
    (:mod:`rths_ident.output_paths`), and an explicit ``--test-record`` file; the files
    may go into the figures' new folder."""
    from rths_ident.output_paths import check_output_file, check_output_folder  # noqa: PLC0415

    plots = check_output_folder("--plots", args.plots) if args.plots else None
    json_path = check_output_file("--json", args.json, will_exist=plots) if args.json else None
    if getattr(args, "test_record", None):
        check_output_file("--test-record", args.test_record, will_exist=plots)
    return json_path, plots


def _run(args: argparse.Namespace) -> int:
    json_path, plots_dir = _checked_outputs(args)
    scenario, cfg = _scenario_config(args)
    accepts = inspect.signature(scenario.run_scenario).parameters
    if args.test_record and "test_record" not in accepts:
        from rths_ident.errors import ParameterError  # noqa: PLC0415

        raise ParameterError(f"--test-record: {args.scenario} does not write test records")
    record = _test_record_path(args) if "test_record" in accepts else None
    # a substructure outside JAX (OpenSeesPy, a peer) can only run step by step
    engine = args.engine or ("fused" if getattr(cfg, "ns", "native") == "native" and not args.realtime
                             else "stepwise")
    if args.realtime:
        from rths_ident.errors import ParameterError  # noqa: PLC0415

        if "realtime" not in accepts:
            raise ParameterError(f"--realtime: {args.scenario} has no step-wise run to pace")
        if engine != "stepwise":
            raise ParameterError("--realtime paces the step-wise engine: drop --engine fused")
    engines = getattr(scenario, "ENGINES", ("fused", "stepwise"))
    if engine not in engines:
        from rths_ident.errors import ParameterError  # noqa: PLC0415

        raise ParameterError(f"--engine {engine}: {args.scenario} runs on the {' or '.join(engines)} engine only")
    progress, bar = (None, None)
    if engine == "stepwise" and not args.quiet:
        n_slow = getattr(cfg, "slow_steps", None) or int(round(
            ((cfg.duration or _record_duration(cfg)) + getattr(cfg, "pad_seconds", 0.0)) * cfg.slow_rate))
        progress = bar = _ProgressBar(n_slow)
    if not args.quiet:
        updating = getattr(cfg, "updating", None)
        print(f"running {args.scenario} ({cfg.record}{f', updating {updating}' if updating else ''}, engine {engine}) …",
              file=sys.stderr)
    from rths_ident.hybrid.loop.engine import LoopAborted  # noqa: PLC0415

    extra = {"realtime": True} if args.realtime else {}
    if record is not None:
        extra["test_record"] = record
    if "show_progress" in accepts:  # a study of many runs: a line per finished batch
        extra["show_progress"] = not args.quiet
    phases = None if args.quiet else _print_phase
    if phases is not None and "phases" in accepts:
        extra["phases"] = phases
    started = time.time()
    try:
        result = scenario.run_scenario(cfg, engine=engine, compare=not args.no_compare, progress=progress, **extra)
    except LoopAborted as stopped:
        print(f"rths-ident: the test stopped: {stopped}", file=sys.stderr)
        return EXIT_TEST_STOPPED
    finally:
        if bar is not None:
            bar.close()
        if record is not None and record.is_file() and record.stat().st_mtime >= started - 1.0:
            print(f"test record → {record}", file=sys.stderr)
    for path in result.get("test_records", ()):  # a study over several records writes one each
        print(f"test record → {path}", file=sys.stderr)
    print(getattr(scenario, "report", _report)(result))
    if plots_dir is not None:
        plots_dir.mkdir(exist_ok=True)  # its parent was checked to exist
    if json_path is not None:
        json_path.write_text(json.dumps(_json_ready(result), indent=2))
        print(f"metrics → {json_path}")
    if plots_dir is not None:
        start = time.perf_counter()
        for p in scenario.plot(result, plots_dir):
            print(f"plot → {p}")
        if phases is not None:
            phases("plotting", time.perf_counter() - start)
    return EXIT_TEST_STOPPED if result.get("aborted") else 0  # the test stopped; its data are kept


def _test_record_path(args: argparse.Namespace) -> Path:
    """``--test-record``, else test_record.h5 in the output folder: ``--plots DIR``, else
    the folder of ``--json``, else ``rths-runs/<scenario>-<UTC time>/``."""
    from rths_ident.errors import ParameterError  # noqa: PLC0415

    if args.test_record:
        path = Path(args.test_record)
    elif args.plots:
        path = Path(args.plots) / "test_record.h5"
    elif args.json:
        path = Path(args.json).parent / "test_record.h5"
    else:
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        path = Path("rths-runs") / f"{args.scenario}-{stamp}" / "test_record.h5"
    if path.is_dir():
        raise ParameterError(f"--test-record {path} is a folder: give a file, e.g. {path / 'test_record.h5'}")
    path.parent.mkdir(parents=True, exist_ok=True)  # an unwritable place fails here, before the run
    return path


def _print_phase(phase: str, seconds: float) -> None:
    """One line per finished phase of a run, on stderr (the report stays on stdout)."""
    print(f"  {phase} … {seconds:.2f} s", file=sys.stderr)


def _record_duration(cfg) -> float:
    from rths_ident.datasets.user_ground_motion import load_record  # noqa: PLC0415

    t, _ = load_record(cfg.record, getattr(cfg, "record_dt", None), getattr(cfg, "record_units", None))
    return float(t[-1] - t[0])


def add_run_command(subparsers: argparse._SubParsersAction) -> None:
    """Register ``rths-ident run``."""
    parser = subparsers.add_parser(
        "run", help="run a virtual hybrid simulation with online model updating",
        description="Virtual real-time hybrid simulation with online model updating. "
        "Units: SI (m, N, s, kg).",
    )
    parser.add_argument("scenario", choices=tuple(SCENARIOS),
                        help="; ".join(f"{name}" for name in SCENARIOS))
    parser.add_argument("--record", default=None, metavar="NAME|PATH",
                        help="ground motion: a shipped one (default elcentro_1940; marths: elcentro | kobe | morgan; "
                        "'rths-ident datasets list') or your own file: a PEER .AT2, or a text/CSV file of "
                        "acceleration (one column, with --record-dt) or time [s] and acceleration (two columns), "
                        "with --record-units")
    parser.add_argument("--record-dt", type=float, default=None, metavar="S",
                        help="time step [s] of your one-column --record file")
    parser.add_argument("--record-units", choices=("g", "m/s2", "cm/s2"), default=None,
                        help="units of the acceleration in your text --record file (an .AT2 file states its own)")
    parser.add_argument("--floor-mass", type=float, default=None,
                        help="floor mass [kg] (default: lugre-frame seed 001 Table 4.1 for the record; "
                        "bw-frame 5000 kg)")
    parser.add_argument("--duration", type=float, default=None, help="seconds of the record to run (default all)")
    parser.add_argument("--updating", choices=("rls", "ukf", "none", "oracle"), default=None,
                        help="identify and update (lugre-frame: rls, the default, or ukf; bw-frame: ukf), "
                        "none (keep the wrong model) or oracle (true model)")
    parser.add_argument("--engine", choices=("fused", "stepwise"), default=None,
                        help="fused (one compiled loop; native substructures) or stepwise (any substructure); "
                        "default: fused when the substructure is native")
    parser.add_argument("--compensation", choices=("damb", "amb", "polynomial", "none"), default=None,
                        help="default damb")
    parser.add_argument("--transition", choices=("predictor-corrector", "ddmrt"), default=None,
                        help="default: predictor-corrector (lugre-frame, bw-frame), ddmrt (rc-frame)")
    parser.add_argument("--initial-error", choices=("scenario1", "scenario2"), default=None,
                        help="lugre-frame: wrong initial NS parameters (seed 001: S1 = −10/−30/−30 %%, "
                        "S2 = −30 %% all; default scenario2)")
    parser.add_argument("--parameter-error", type=float, default=None,
                        help="bw-frame: relative error of the NS's initial k_e, f_y0 and degradation rates "
                        "(default −0.30)")
    parser.add_argument("--case", default=None,
                        help="rc-frame: the tested column's degrading Bouc-Wen preset (linear | case1 … case4; "
                        "default case4); rig-sdof: free | parameter-change | forced (seed 002 Cases 1-3, default "
                        "free); rig-bridge: harmonic | decaying (Cases 4-5, default harmonic)")
    parser.add_argument("--site", default=None,
                        help="rig-sdof, rig-bridge: emulator (default: the emulated seed 002 board on a "
                        "pseudo-terminal) | emulator:timed | serial:PORT (a real board, e.g. serial:/dev/ttyACM0) | "
                        "direct (the virtual specimen, exact)")
    parser.add_argument("--kinematics", choices=("asin", "arc"), default=None,
                        help="rig scenarios: servo angle from displacement, exact asin (default) or the thesis' "
                        "arc u/r (7.2 %% short at 10 mm)")
    parser.add_argument("--envelope", choices=("enforce", "warn"), default=None,
                        help="rig scenarios: a case whose reference exceeds the rig's stroke/force/frequency "
                        "limits is refused (enforce, default) or run (warn; the site stops it safely)")
    parser.add_argument("--rig-mode", choices=("pseudo-dynamic", "real-time"), default=None,
                        help="rig scenarios: pseudo-dynamic (default; as slow as the rig needs) or real-time "
                        "(paced to Δt; an overrun aborts)")
    parser.add_argument("--specimen-inertia", choices=("rig", "numerical"), default=None,
                        help="rig scenarios: the specimen's mass M_e measured on the rig (rig-sdof default) or "
                        "carried by the numerical model, as in a pseudo-dynamic test (rig-bridge default)")
    parser.add_argument("--topology", choices=("A", "C"), default=None,
                        help="rig-bridge: spring topology of the two deck masses (seed 002 Fig. 6-7 is missing; "
                        "A, the default, grounds mass 1)")
    parser.add_argument("--ns", default=None,
                        help="numerical substructure: native (JAX, default), opensees (OpenSeesPy in this process) or "
                        "opensees-tcp (OpenSeesPy in a 'rths-ident serve ns' process: the same numbers)")
    parser.add_argument("--ns-address", metavar="HOST:PORT", default=None,
                        help="with --ns opensees-tcp: a running 'rths-ident serve ns' (default: start one for the run "
                        "on 127.0.0.1 and stop it after)")
    parser.add_argument("--ns-model", default=None,
                        help="rc-frame with --ns opensees: linear (the thesis' elastic frame, default) or nonlinear "
                        "(fiber columns)")
    parser.add_argument("--integrator", default=None,
                        help="numerical-substructure integrator: alpha-os (default) | newmark-explicit | "
                        "central-difference | newmark-fixed-iter (rc-frame with OpenSees only)")
    parser.add_argument("--column-model", default=None,
                        help="bw-frame: degrading-boucwen (seed 000 Case 4 scaled, default) or boucwen (standard "
                        "Bouc-Wen, the twin of OpenSees BoucWen: what --ns opensees needs)")
    parser.add_argument("--damping", default=None,
                        help="rc-frame: modal (5 %%, the thesis, default) or rayleigh (stiffness-proportional)")
    parser.add_argument("--controller", choices=("lqg", "damb", "ideal"), default=None,
                        help="marths: the sample LQG (default), our dAMB per actuator, or a perfect transfer system")
    parser.add_argument("--scale", type=float, default=None,
                        help="marths: scale factor of the record (default 0.4)")
    parser.add_argument("--uncertain", type=int, default=None,
                        help="marths: number of random plants besides the nominal one (default 20)")
    parser.add_argument("--batch", type=int, default=None,
                        help="marths: runs per vmap-ed compiled call (default 0: one by one; same numbers)")
    parser.add_argument("--threads", type=int, default=None,
                        help="marths: batches computed side by side on this machine (default 0: one per CPU core; "
                        "same numbers)")
    parser.add_argument("--dask", default=None, metavar="local|tcp://HOST:PORT",
                        help="marths: run the study's batches on a Dask cluster: 'local' starts 2 worker processes "
                        "on 127.0.0.1, an address connects to a running scheduler (same numbers)")
    parser.add_argument("--convention", choices=("paper", "official"), default=None,
                        help="marths: J1–J10 as the paper defines them (default) or as the package's scorer "
                        "computes them (std, J4 on η_m, averages over the uncertain runs)")
    parser.add_argument("--fast-rate", type=float, default=None, help="fast (controller) rate [Hz] (default 4000)")
    parser.add_argument("--slow-rate", type=float, default=None,
                        help="slow (numerical substructure) rate [Hz] (default 50)")
    parser.add_argument("--transfer-system", choices=("carrion-spencer", "ideal"), default=None,
                        help="servo-hydraulic actuator with CSI, or an ideal one (seed 001's virtual test)")
    parser.add_argument("--identifier-rate", type=float, default=None,
                        help="identifier sample rate [Hz] (default: the lowest rate ≥ 1 kHz dividing the fast rate)")
    parser.add_argument("--no-noise", action="store_true", help="ideal sensors")
    parser.add_argument("--ddmrt-adaptive", action="store_true",
                        help="DDMRT with the leaky-LMS adaptive Wiener filter (seed 000 Eq. 3.7) instead of fixed W")
    parser.add_argument("--realtime", action="store_true",
                        help="pace the loop against the wall clock (step-wise engine, one compiled fast chunk per "
                        "slow step): reports missed deadlines and per-step latency")
    parser.add_argument("--pad", type=float, default=None, metavar="SECONDS",
                        help=f"zero ground acceleration before the record [s] (default {DEFAULT_PADDING_S:g} with "
                        "--realtime, else 0): the start-up that seed 003 pads")
    parser.add_argument("--no-compare", action="store_true",
                        help="skip the comparison runs (no updating, oracle)")
    parser.add_argument("--seed", type=int, default=None, help="sensor-noise seed (default 123)")
    parser.add_argument("--json", metavar="OUT.json", default=None, help="write the metrics here")
    parser.add_argument("--plots", metavar="DIR", default=None, help="write the figures into this folder")
    parser.add_argument("--test-record", metavar="PATH.h5", default=None,
                        help="the test record (HDF5, written as the test goes; 'rths-ident show PATH.h5'); default "
                        "test_record.h5 in --plots DIR, else beside --json, else in rths-runs/<scenario>-<UTC time>/")
    parser.add_argument("--quiet", action="store_true")
    parser.set_defaults(func=_run)
