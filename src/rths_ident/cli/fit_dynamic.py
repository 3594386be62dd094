"""``rths-ident fit FILE --dynamic``: output-error identification of a dynamic test (an
input and a measured output, no measured restoring force). The options are registered by
:func:`add_dynamic_arguments` on the ``fit`` parser; :func:`run_dynamic_fit` does the
work through :mod:`rths_ident.estimators.offline.dynamic`. See docs/fitting.md,
"Dynamic tests".
"""

from __future__ import annotations

import argparse
import json
import sys

from rths_ident.errors import ParameterError

__all__ = ["add_dynamic_arguments", "run_dynamic_fit", "DYNAMIC_DEFAULTS", "DYNAMIC_ONLY", "DYNAMIC_FIGURE"]

#: defaults of the options (those shared with the quasi-static fit differ here)
DYNAMIC_DEFAULTS = {"global_generations": 30, "starts": 3, "input_kind": "force", "output_kind": "displacement",
                    "interpolation": "bandlimited", "output_sampling": "point", "hold_out_periods": 0}

#: the figure ``--plots DIR`` draws for a dynamic fit
DYNAMIC_FIGURE = "fit_dynamic.png"

#: the options that only a dynamic fit reads (an error without --dynamic)
DYNAMIC_ONLY = ("input_kind", "output_kind", "sample_rate", "periodic", "hold_out_periods", "run_in", "validate",
                "predictions", "interpolation", "output_sampling")


def add_dynamic_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``--dynamic`` option group of ``rths-ident fit``."""
    from rths_ident.estimators.offline.dynamic import INPUT_KINDS, INTERPOLATIONS, OUTPUT_KINDS, OUTPUT_SAMPLINGS

    group = parser.add_argument_group(
        "dynamic test (--dynamic: m ÿ + c ẏ + F_model = input, identified by output-error simulation)")
    group.add_argument("--dynamic", action="store_true",
                       help="the file is a dynamic test: an input and a measured output (no restoring force)")
    group.add_argument("--input", dest="input_kind", choices=tuple(INPUT_KINDS),
                       help="what drives the mass: a force on it (default) or a ground acceleration")
    group.add_argument("--output", dest="output_kind", choices=tuple(OUTPUT_KINDS),
                       help="what is measured on the mass (default displacement; with a ground acceleration "
                       "displacement and velocity are relative, acceleration absolute)")
    group.add_argument("--sample-rate", type=float, help="sample rate [Hz] when the file has no time column")
    group.add_argument("--periodic", help="samples per period of a periodic record (its first period runs in and is "
                       "not scored), 'auto' (default: recognised when the input repeats exactly) or 'no'")
    group.add_argument("--hold-out-periods", type=int,
                       help="periodic record: the last K periods are not fitted but predicted (held out)")
    group.add_argument("--run-in", type=int, help="samples not scored at the start (default: one period of a "
                       "periodic record, else 0; the simulation starts at rest)")
    group.add_argument("--validate", metavar="FILE2", help="a second record (same columns and units): the "
                       "identified model is simulated on its input and scored on its output")
    group.add_argument("--predictions", metavar="OUT.csv", help="write time, measured and simulated output of the "
                       "validation record (else the held-out periods, else the fitted part)")
    group.add_argument("--interpolation", choices=tuple(INTERPOLATIONS),
                       help="the input between samples (default bandlimited: exact for a periodic multisine)")
    group.add_argument("--output-sampling", choices=tuple(OUTPUT_SAMPLINGS),
                       help="how the output was sampled: point (default) or fir-decimation (the anti-alias "
                       "FIR stages of a decimating acquisition chain, one per prime factor of --substeps)")


def _pairs(text: str, option: str, sample_rate: bool) -> dict[str, str]:
    keys = ("input", "output") if sample_rate else ("time", "input", "output")
    items = [item.strip() for item in text.split(",") if item.strip()]
    if items and all("=" in item for item in items):
        out = {}
        for item in items:
            key, value = (part.strip() for part in item.split("=", 1))
            if key not in ("time", "input", "output"):
                raise ParameterError(f"{option}: unknown quantity {key!r}; use time, input, output")
            out[key] = value
        return out
    if len(items) == 2 and not sample_rate:
        keys = ("input", "output")
    if any("=" in item for item in items) or len(items) != len(keys):
        raise ParameterError(f"{option} {text!r}: give {','.join(keys)} (comma separated), or key=value pairs")
    return dict(zip(keys, items))


def _periodic(text: str | None):
    if text is None or text == "auto":
        return "detect"
    if text == "no":
        return None
    try:
        return int(text)
    except ValueError:
        raise ParameterError(f"--periodic {text!r}: give the samples per period (an integer), auto or no") from None


def _load(path: str, args, role: str):
    from rths_ident.datasets import load_dynamic_test
    from rths_ident.estimators.offline.dynamic import DynamicRecord

    columns = _pairs(args.columns, "--columns", args.sample_rate is not None) if args.columns else None
    units = _pairs(args.units, "--units", args.sample_rate is not None) if args.units else None
    test = load_dynamic_test(path, input_kind=args.input_kind, output_kind=args.output_kind, columns=columns,
                             units=units, sample_rate=args.sample_rate)
    if test.time is None and test.dt is None:
        raise ParameterError(f"{path}: no time column; give --sample-rate HZ")
    try:
        record = DynamicRecord.from_arrays(test.input, test.output, dt=test.dt, time=test.time,
                                           input_kind=args.input_kind, output_kind=args.output_kind,
                                           period=_periodic(args.periodic), source=str(path))
    except ParameterError as error:
        raise ParameterError(f"{role} {path}: {error}") from None
    return record, test.units


def run_dynamic_fit(args: argparse.Namespace) -> int:
    """Execute ``rths-ident fit FILE --dynamic``."""
    from rths_ident.cli.option_values import fixed_values
    from rths_ident.datasets.dynamic_logged import KIND_UNITS
    from rths_ident.estimators.offline.dynamic import fit_dynamic
    from rths_ident.estimators.offline.dynamic.report import (
        format_dynamic_report,
        plot_dynamic_fit,
        write_predictions,
    )
    from rths_ident.models import MODELS
    from rths_ident.output_paths import check_output_file, check_output_folder

    for name, value in DYNAMIC_DEFAULTS.items():
        if getattr(args, name, None) is None and name not in ("global_generations", "starts"):
            setattr(args, name, value)
    if args.file is None or args.dataset is not None:
        raise ParameterError("--dynamic reads a data file (FILE), not --dataset")
    if args.method != "nls":
        raise ParameterError(f"--dynamic fits by output error (simulating the oscillator); --method {args.method} "
                             f"does not apply")
    if args.quasi_static or args.free_A:
        raise ParameterError("--quasi-static and --free-A do not apply to --dynamic")
    plots = check_output_folder("--plots", args.plots) if args.plots else None
    json_path = check_output_file("--json", args.json, will_exist=plots) if args.json else None
    predictions_path = check_output_file("--predictions", args.predictions, will_exist=plots) \
        if args.predictions else None
    if args.hold_out_periods < 0:
        raise ParameterError(f"--hold-out-periods must be ≥ 0; got {args.hold_out_periods}")
    generations = DYNAMIC_DEFAULTS["global_generations"] if args.global_generations is None else args.global_generations
    if generations < 0:
        raise ParameterError(f"--global-generations must be ≥ 0 (0 skips the global stage); got {generations}")
    record, units = _load(args.file, args, "record")
    validation = _load(args.validate, args, "--validate")[0] if args.validate else None

    def progress(message: str) -> None:
        if not args.quiet:
            print(message, file=sys.stderr, flush=True)

    options = dict(fixed=fixed_values(args.fix) if args.fix else None, substeps=args.substeps,
                   interpolation=args.interpolation, output_sampling=args.output_sampling,
                   hold_out_periods=args.hold_out_periods, run_in=args.run_in, validation=validation,
                   form=None if args.form == "auto" else args.form, seed=args.seed, global_generations=generations,
                   n_starts=DYNAMIC_DEFAULTS["starts"] if args.starts is None else args.starts, progress=progress)
    if args.model == "auto":
        if args.fix and any(name not in ("m", "c") for name in options["fixed"]):
            raise ParameterError("--model auto: --fix may name only the oscillator's m and c")
        results = []
        for name in MODELS:
            progress(f"fitting {name} (output error) ...")
            results.append(fit_dynamic(record, name, **options))
        score = (lambda r: r.validation.metrics["rmse"]) if results[0].validation is not None else \
            (lambda r: r.fit_rmse)
        results.sort(key=score)
        result = results[0]
    else:
        results = None
        result = fit_dynamic(record, args.model, **options)
    output_unit = units.get("output")
    display = (output_unit, 1.0 / KIND_UNITS[args.output_kind][output_unit]) if output_unit else None
    print(format_dynamic_report(result, display))
    if results is not None:
        which = "validation" if result.validation is not None else "fit"
        print(f"\nranking (auto, by the {which} RMSE):")
        for i, r in enumerate(results, start=1):
            value = r.validation.metrics["rmse"] if which == "validation" else r.fit_rmse
            print(f"  {i:<3} {r.model:<20} RMSE {value:.4g} {record.output_unit}")
        print(f"best model: {result.model}")
    if plots is not None:
        plots.mkdir(exist_ok=True)  # its parent was checked to exist
    if json_path is not None:
        payload = result.to_json_dict()
        # as the quasi-static fit's JSON: a coordinate on a bound of its search box
        payload["warnings"] = [{"code": "parameter_at_bound", "parameter": name}
                               for name, item in result.identifiability.get("parameters", {}).items()
                               if item["at_bound"]]
        if output_unit and output_unit != record.output_unit:
            factor = display[1]
            payload["in_file_units"] = {"output_unit": output_unit, "fit_rmse": result.fit_rmse * factor,
                                        **({"validation_rmse": result.validation.metrics["rmse"] * factor}
                                           if result.validation is not None else {})}
        if results is not None:
            payload["ranking"] = [{"model": r.model, "fit_rmse": r.fit_rmse,
                                   "validation_rmse": None if r.validation is None else r.validation.metrics["rmse"]}
                                  for r in results]
        json_path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        print(f"fit → {json_path}")
    if predictions_path is not None:
        role = write_predictions(result, predictions_path)
        print(f"predictions ({role} record) → {predictions_path}")
    if plots is not None:
        figure = plots / DYNAMIC_FIGURE
        plot_dynamic_fit(result, figure, output_display=display)
        print(f"plot → {figure}")
    return 0
