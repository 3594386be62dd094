"""``rths-ident fit``: identify a model from a logged test (offline).

Registered by :func:`add_fit_command`; the work is done by
:mod:`rths_ident.estimators.offline`. See ``docs/fitting.md``.
"""

from __future__ import annotations

import argparse
import json
import sys

from rths_ident.cli.common_options import add_json_option, add_plots_option, add_quiet_option
from rths_ident.cli.option_values import fixed_values
from rths_ident.errors import ParameterError

__all__ = ["add_fit_command", "run_fit", "main"]

METHOD_CHOICES = ("ls", "nls", "bayes", "static", "logdec")
#: the figures ``--plots DIR`` draws (the posterior's two for bayes only)
LOOPS_FIGURE, TRACE_FIGURE, PAIR_FIGURE = "fit_loops.png", "posterior_trace.png", "posterior_pair.png"
QUANTITIES = ("time", "displacement", "force")

DESCRIPTION = """\
Fit a hysteresis or linear model to a logged test: a file with time, displacement and
force (CSV with a header, .npz, .mat or HDF5 with named variables), a test record of a
hybrid test (.h5 written by 'rths-ident run': the specimen's measured displacement and
force at the fast rate; --columns force=fast/true_force picks other fast-rate datasets)
or a shipped laboratory test (--dataset kunnath|gill|daniel, quasi-static, displacement
mm and force kN).

methods: ls     batch constrained least squares in the linear-in-parameters form
                (with a bounded search of the parameters that fix the hysteretic
                variable; see docs/fitting.md for what it means per model)
         nls    nonlinear least squares through the simulated force: a global stage
                (differential evolution on a decimated record), then local refinement
                (trust-region least squares); prints parameter identifiability
         bayes  posterior by NumPyro NUTS (summary and diagnostics by ArviZ)
         static (linear) K = slope of the force-displacement line of a static test
         logdec (linear) log decrement of a free-vibration test -> m, c, k (seed 002)
models:  {models}
         (docs/models/), or auto (fit every model with the method and rank them);
         boucwen fits A = 1 unless --free-A; pinching-boucwen frees its degradation and
         pinching terms when the data support them (see --form)

NRMSE = rms(F_fit - F_meas) / (max F_meas - min F_meas) * 100 %; the report also gives
rms(F_fit - F_meas) / rms(F_meas) * 100 %.
"""


def _pairs(text: str, option: str, allowed: dict[int, tuple[str, ...]]) -> dict[str, str]:
    """``a,b`` / ``a,b,c`` positional, or ``key=value,...`` → {quantity: value}."""
    items = [item.strip() for item in text.split(",") if item.strip()]
    if items and all("=" in item for item in items):
        out = {}
        for item in items:
            key, value = (part.strip() for part in item.split("=", 1))
            if key not in QUANTITIES:
                raise ParameterError(f"{option}: unknown quantity {key!r}; use {', '.join(QUANTITIES)}")
            out[key] = value
        return out
    if any("=" in item for item in items) or len(items) not in allowed:
        forms = " or ".join(",".join(names) for names in allowed.values())
        raise ParameterError(f"{option} {text!r}: give {forms} (comma separated), or key=value pairs")
    return dict(zip(allowed[len(items)], items))


def _model_forms() -> tuple[str, ...]:
    """The nested forms of the registered models that have them (``--form``)."""
    from rths_ident.models import MODELS  # noqa: PLC0415

    forms: list[str] = []
    for entry in MODELS.values():
        forms += [form for form in entry.fit.forms if form not in forms]
    return tuple(forms)


def add_fit_command(subparsers) -> argparse.ArgumentParser:
    """Register ``fit`` on an ``argparse`` sub-parsers object (``set_defaults(func=run_fit)``);
    the model choices are the registered models (:data:`rths_ident.models.MODELS`)."""
    from rths_ident.models import MODELS  # noqa: PLC0415

    parser = subparsers.add_parser(
        "fit",
        help="identify model parameters from a logged test (ls, nls, bayes)",
        description=DESCRIPTION.format(models=", ".join(MODELS)),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    source = parser.add_argument_group("data")
    source.add_argument("file", nargs="?", help="logged test: .csv/.txt (header time,displacement,force), .npz, .mat, .h5 "
                        "(a test record of 'rths-ident run' included)")
    source.add_argument("--dataset", help="a shipped laboratory test instead of a file: kunnath, gill or daniel")
    source.add_argument("--columns", help="names of the time,displacement,force columns in the file "
                        "(e.g. 't,LVDT,Load' or 'displacement=LVDT,force=Load')")
    source.add_argument("--units", help="units in the file: displacement,force (e.g. 'mm,kN') or "
                        "time,displacement,force (e.g. 'ms,mm,kN') or key=value pairs; default s,m,N")
    source.add_argument("--quasi-static", action="store_true",
                        help="a quasi-static record: displacement and force only (no time column needed; "
                        "--columns/--units name those two); a pseudo-time is used and rate terms held at 0")
    fitting = parser.add_argument_group("fit")
    fitting.add_argument("--model", default="boucwen", choices=(*MODELS, "auto"),
                         help="model to fit (default boucwen)")
    fitting.add_argument("--method", default="nls", choices=METHOD_CHOICES, help="fitting method (default nls)")
    fitting.add_argument("--free-A", dest="free_A", action="store_true",
                         help="Bouc–Wen: estimate A too (default A = 1 for identifiability)")
    fitting.add_argument("--fix", help="hold parameters at known SI values, e.g. 'n=1' (Bouc–Wen) or 'k_h=0,alpha_sv=0.1'")
    fitting.add_argument("--substeps", type=int, help="Bouc–Wen models: sub-increments of the z update per "
                         "sample (default: the model's); more reduce the discretisation bias on coarse records. "
                         "--dynamic: time sub-steps per sample of the oscillator (default: ω_n·Δt/S ≤ 0.02)")
    fitting.add_argument("--starts", type=int, help="ls/nls: local refinements (multi-start; default 4 for ls, "
                         "2 per form for nls: the global optimum and the best other start)")
    fitting.add_argument("--form", default="auto", choices=("auto", *_model_forms()),
                         help="pinching-, asymmetric-, gap- and spring-boucwen: which of their mechanisms are free; "
                         "auto (default) frees them when the data support it (nested BIC comparisons, docs/fitting.md)")
    fitting.add_argument("--global-generations", type=int,
                         help="nls and --dynamic: generations of the differential-evolution stage before the local "
                         "refinement (default 40, --dynamic 30; 0 skips it)")
    fitting.add_argument("--seed", type=int, default=0, help="random seed (Latin hypercube, NUTS)")
    fitting.add_argument("--draws", type=int, default=300, help="bayes: draws per chain (default 300)")
    fitting.add_argument("--warmup", type=int, default=300, help="bayes: warm-up steps per chain (default 300)")
    fitting.add_argument("--chains", type=int, default=2, help="bayes: chains (default 2)")
    linear = parser.add_argument_group("linear specimen (logdec, seed 002)")
    linear.add_argument("--specimen-stiffness", type=float, help="logdec: K_e [N/m] from a static test")
    linear.add_argument("--numerical-mass", type=float, default=0.0, help="logdec: M_1 of the numerical part [kg]")
    linear.add_argument("--numerical-damping", type=float, default=0.0, help="logdec: C_1 [N·s/m]")
    linear.add_argument("--numerical-stiffness", type=float, default=0.0, help="logdec: K_1 [N/m]")
    from rths_ident.cli.fit_dynamic import add_dynamic_arguments  # noqa: PLC0415

    add_dynamic_arguments(parser)
    out = parser.add_argument_group("output")
    add_json_option(out, "the fitted parameters and their diagnostics")
    add_plots_option(out, f"the measured vs fitted loops ({LOOPS_FIGURE}; bayes: also {TRACE_FIGURE}, "
                     f"{PAIR_FIGURE})")
    add_quiet_option(out)
    parser.set_defaults(func=run_fit)
    return parser


def _load(args):
    """FitData (SI) and the display units of the input."""
    from rths_ident.estimators.offline import FitData

    if (args.file is None) == (args.dataset is None):
        raise ParameterError("give either a data file or --dataset NAME (kunnath, gill, daniel), not both or neither")
    if args.dataset is not None:
        if args.columns or args.units:
            raise ParameterError("--columns and --units apply to data files, not to --dataset (stored in mm and kN)")
        from rths_ident.datasets import load_hysteresis_test

        x, f = load_hysteresis_test(args.dataset, units="SI")
        return FitData.from_arrays(x, f, None, source=args.dataset), ("mm", "kN")
    from rths_ident.datasets import load_logged_test

    # a quasi-static record is displacement and force only: no time column needed
    if args.quasi_static:
        columns = _pairs(args.columns, "--columns", {2: QUANTITIES[1:]}) if args.columns else None
        units = _pairs(args.units, "--units", {2: QUANTITIES[1:]}) if args.units else None
        for option, given in (("--columns", columns), ("--units", units)):
            if given and "time" in given:
                raise ParameterError(f"{option}: --quasi-static reads displacement and force only; drop time")
    else:
        columns = _pairs(args.columns, "--columns", {3: QUANTITIES}) if args.columns else None
        units = _pairs(args.units, "--units", {2: QUANTITIES[1:], 3: QUANTITIES}) if args.units else None
    test = load_logged_test(args.file, columns=columns, units=units, time_column=not args.quasi_static)
    data = FitData.from_arrays(test.displacement, test.force, test.time, source=str(args.file))
    return data, (test.units["displacement"], test.units["force"])


def _linear_specimen(args, data):
    """``static`` / ``logdec``: :mod:`rths_ident.estimators.offline.linear_specimen`."""
    from rths_ident.estimators.offline import fit_free_vibration, fit_static_stiffness  # noqa: PLC0415

    if args.method == "static":
        return fit_static_stiffness(data)
    if not data.time_is_physical:
        raise ParameterError("method logdec needs a physical time column (not --dataset or --quasi-static)")
    if args.specimen_stiffness is None or not args.specimen_stiffness > 0:
        raise ParameterError("method logdec needs --specimen-stiffness K_e > 0 [N/m] (from a static test)")
    return fit_free_vibration(data, args.specimen_stiffness, numerical_mass=args.numerical_mass,
                              numerical_damping=args.numerical_damping, numerical_stiffness=args.numerical_stiffness)


def run_fit(args: argparse.Namespace) -> int:
    """Execute ``rths-ident fit`` (see :data:`DESCRIPTION`)."""
    from rths_ident.estimators import offline
    from rths_ident.estimators.offline.report import (
        format_ranking,
        format_report,
        in_display_units,
        params_in_units,
        plot_fit,
        plot_posterior,
    )
    from rths_ident.models import MODELS, LinearElement, name_of_model

    from rths_ident.output_paths import check_output_file, check_output_folder

    for name in ("starts", "draws", "warmup", "chains"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            raise ParameterError(f"--{name} must be a positive integer; got {getattr(args, name)}")
    if args.dynamic:
        from rths_ident.cli.fit_dynamic import run_dynamic_fit  # noqa: PLC0415

        return run_dynamic_fit(args)
    from rths_ident.cli.fit_dynamic import DYNAMIC_ONLY  # noqa: PLC0415

    dynamic_only = ["--" + name.replace("_kind", "").replace("_", "-") for name in DYNAMIC_ONLY
                    if getattr(args, name) is not None]
    if dynamic_only:
        raise ParameterError(f"{', '.join(dynamic_only)} apply to a dynamic test: add --dynamic")
    if args.global_generations is None:
        args.global_generations = 40
    # before the fit: a path that cannot be written must not cost the fit
    plots = check_output_folder("--plots", args.plots) if args.plots else None
    json_path = check_output_file("--json", args.json, will_exist=plots) if args.json else None
    if args.global_generations < 0:
        raise ParameterError(f"--global-generations must be ≥ 0 (0 skips the global stage); got {args.global_generations}")
    with_forms = [name for name, entry in MODELS.items() if args.form in entry.fit.forms]
    if args.form != "auto" and args.model not in with_forms:
        raise ParameterError(f"--form {args.form} applies to --model {' or '.join(with_forms)} only, "
                             f"not to {args.model}")
    if args.form != "auto" and args.method not in ("nls", "bayes"):
        raise ParameterError(f"--form applies to the nls and bayes methods, not to {args.method}")
    data, (displacement_unit, force_unit) = _load(args)

    def progress(message: str) -> None:
        if not args.quiet:
            print(message, file=sys.stderr, flush=True)

    ranking = None
    if args.method in ("static", "logdec"):
        linear = name_of_model(LinearElement)
        if args.model != linear:
            raise ParameterError(f"method {args.method} identifies a linear specimen: use --model {linear}")
        result = _linear_specimen(args, data)
    else:
        options = {"seed": args.seed, "free_A": args.free_A, "progress": progress}
        if args.substeps is not None:
            options["substeps"] = args.substeps
        if args.fix:
            if args.model == "auto":
                raise ParameterError("--fix names parameters of one model; it cannot be used with --model auto")
            options["fixed"] = fixed_values(args.fix)
        if args.method == "bayes":
            options.update(draws=args.draws, warmup=args.warmup, chains=args.chains)
        if args.starts is not None:
            options.update(n_starts=args.starts)
        if args.method == "nls":
            options.update(global_generations=args.global_generations)
        if args.model in MODELS and MODELS[args.model].fit.forms and args.method in ("nls", "bayes"):
            options.update(form=args.form)
        if args.model == "auto":
            ranking = offline.fit_all(data, args.method, **options)
            result = ranking[0]
        else:
            result = offline.fit(data, args.model, args.method, **options)
    print(format_report(result, (displacement_unit, force_unit)))
    if ranking is not None:
        print("\nranking (auto):")
        print(format_ranking(ranking))
        print(f"best model: {result.model}")
    if plots is not None:
        plots.mkdir(exist_ok=True)  # its parent was checked to exist
    if json_path is not None:
        payload = result.to_json_dict()
        converted = params_in_units(result, displacement_unit, force_unit)
        if converted is not None and (displacement_unit, force_unit) != ("m", "N"):
            payload["in_file_units"] = {"displacement_unit": displacement_unit, "force_unit": force_unit,
                                        "params": converted[0], "units": converted[1],
                                        **in_display_units(result, displacement_unit, force_unit)}
        if ranking is not None:
            payload["ranking"] = [
                {"model": r.model, "nrmse_percent": r.nrmse_percent, "nrmse_rms_percent": r.nrmse_rms_percent,
                 "params": r.params, "warnings": r.to_json_dict()["warnings"]} for r in ranking
            ]
        json_path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        print(f"fit → {json_path}")
    if plots is not None:
        # auto: the best two models, so the loops stay readable
        loops = plots / LOOPS_FIGURE
        plot_fit(ranking[:2] if ranking is not None else result, loops,
                 displacement_unit=displacement_unit, force_unit=force_unit)
        print(f"plot → {loops}")
        if result.inference_data is not None:
            trace, pair = plots / TRACE_FIGURE, plots / PAIR_FIGURE
            plot_posterior(result, trace, pair)
            print(f"plot → {trace}\nplot → {pair}")
    return 0


def main(argv=None) -> int:
    """Run ``fit`` alone (as ``rths-ident fit ARGS``), with the CLI's error handling:
    user errors print one line ``rths-ident fit: error: ...`` on stderr and return 1."""
    from rths_ident.cli import USER_ERRORS  # noqa: PLC0415

    parser = argparse.ArgumentParser(prog="rths-ident")
    subparsers = parser.add_subparsers(dest="command", required=True)
    add_fit_command(subparsers)
    args = parser.parse_args(["fit", *(argv or [])])
    try:
        return int(args.func(args))
    except USER_ERRORS as error:
        print(f"rths-ident fit: error: {error}", file=sys.stderr)
        return 1
