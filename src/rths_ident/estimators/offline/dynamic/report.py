"""Text report, predictions file and plot of a dynamic (output-error) fit."""

from __future__ import annotations

import numpy as np

from rths_ident.estimators.offline.dynamic.result import DynamicFitResult

__all__ = ["format_dynamic_report", "write_predictions", "plot_dynamic_fit"]


def _fmt(value) -> str:
    return "–" if value is None else f"{value:.5g}"


def _metrics_line(label: str, metrics: dict, unit: str, display: tuple[str, float] | None) -> str:
    line = (f"{label}: RMSE {metrics['rmse']:.4g} {unit}, NRMSE {metrics['nrmse_rms_percent']:.3f} % of rms "
            f"({metrics['nrmse_range_percent']:.3f} % of range), {metrics['samples']} samples")
    if display is not None and display[0] != unit:
        line += f"  [RMSE {metrics['rmse'] * display[1]:.4g} {display[0]}]"
    error = metrics.get("model_error")
    if error is not None:
        line += (f"\n    model error behind it (noise removed): {error['estimate']:.3g} {unit}, "
                 f"95 % upper bound {error['upper_95']:.3g} {unit}")
    return line


def format_dynamic_report(result: DynamicFitResult, output_display: tuple[str, float] | None = None) -> str:
    """Multi-line text: record, simulation, parameters with standard errors, the fit,
    held-out and validation errors (``output_display``: the user's output unit and its
    factor from SI, shown beside the SI figures)."""
    record = result.record
    unit = record.output_unit
    lines = [f"rths-ident fit --dynamic: model {result.model}, output error "
             f"({record.input_kind} → {record.output_kind})"]
    periodic = (f"periodic, {record.n_periods} periods of {record.period} samples (the first runs in)"
                if record.period is not None else "not periodic")
    lines.append(f"data: {record.source} ({record.n_samples} samples at {1.0 / record.dt:.6g} Hz; {periodic})")
    sim = result.simulation
    lines.append(f"simulation: {sim['substeps']} sub-steps per sample ({sim['sub_step_s']:.4g} s), input "
                 f"{sim['interpolation']}, output {sim['output_sampling']}; {sim['integrator']}")
    config = result.details.get("element_config")
    if config:
        lines.append("  model update: " + ", ".join(f"{k} = {v}" for k, v in config.items()))
    lines.append("")
    lines.append(f"  {'parameter':<18} {'value':>13}  {'std. error':>11}  {'unit':<8}")
    for name in result.fitted:
        se = result.standard_errors.get(name)
        lines.append(f"  {name:<18} {_fmt(result.params[name]):>13}  {_fmt(se):>11}  {result.units.get(name, '-'):<8}")
    held = [n for n in result.params if n not in result.fitted]
    if held:
        lines.append("  held: " + ", ".join(f"{n} = {_fmt(result.params[n])}" for n in held))
    if result.sign_region is not None:
        lines.append(f"  sign region: {result.sign_region}")
    pairs = result.identifiability.get("correlated_pairs", [])
    for pair in pairs[:4]:
        lines.append(f"  correlation {pair['a']}–{pair['b']}: {pair['correlation']:+.3f} (coordinates)")
    if result.identifiability.get("not_identifiable"):
        lines.append("  not identifiable from this test: " + ", ".join(result.identifiability["not_identifiable"]))
    at_bound = [name for name, item in result.identifiability.get("parameters", {}).items() if item["at_bound"]]
    if at_bound:
        lines.append("  warning: on a bound of the search box (identifiability.parameters.*.at_bound): "
                     + ", ".join(at_bound) + "; a physical bound (n = 1, α = 0) is a result, any other one "
                     "means the optimum may lie outside: fix the parameter or look at the data")
    lines.append("")
    if result.noise is not None:
        lines.append(f"output noise (between periods {result.noise['periods'][0]}–{result.noise['periods'][1]}): "
                     f"std {result.noise['std']:.4g} {unit}")
    for prediction in result.predictions:
        label = {"fit": "fit", "held-out": "held out", "validation": "validation"}[prediction.role]
        where = f" ({prediction.record.source})" if prediction.role == "validation" else \
            f" (samples {prediction.start}–{prediction.stop - 1})"
        lines.append(_metrics_line(label + where, prediction.metrics, unit, output_display))
    lines.append(f"time: {result.details['seconds']:.1f} s")
    return "\n".join(lines)


def write_predictions(result: DynamicFitResult, path) -> str:
    """Time, measured and simulated output of the validation record (else the held-out
    periods, else the fitted part) as CSV [SI]; returns the role written."""
    prediction = result.validation or result.prediction("fit")
    unit = prediction.record.output_unit
    header = (f"# rths-ident fit --dynamic: model {result.model}, {prediction.role} record "
              f"{prediction.record.source}, samples {prediction.start}-{prediction.stop - 1}; "
              f"units: time s, output {unit}\n")
    table = np.column_stack([prediction.time, prediction.measured_part, prediction.simulated_part])
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(header)
        handle.write("time,measured,simulated\n")
        np.savetxt(handle, table, delimiter=",", fmt="%.10g")
    return prediction.role


def plot_dynamic_fit(result: DynamicFitResult, path, window_s: float = 1.0,
                     output_display: tuple[str, float] | None = None) -> None:
    """Measured and simulated output over ``window_s`` of the validation (or held-out, or
    fitted) part, their difference as its own trace on its own axis, and the amplitude
    spectra of output and error (the project's figure style,
    :mod:`rths_ident.figure_views`: measured wide and light underneath, the model thin and
    dashed on top, labels where there is no data). ``output_display``: the user's output
    unit and its factor from SI (the axes then read in that unit); the title names the
    record's file, not its path."""
    import pathlib

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rths_ident.figure_views import line_kwargs, overlay

    prediction = result.validation or result.prediction("fit")
    record = prediction.record
    unit, factor = output_display if output_display is not None else (record.output_unit, 1.0)
    t = prediction.time
    measured, simulated = factor * prediction.measured_part, factor * prediction.simulated_part
    fig = plt.figure(figsize=(11, 8.2))
    grid = fig.add_gridspec(3, 1, height_ratios=(1.5, 0.8, 1.3))
    history = fig.add_subplot(grid[0])
    difference = fig.add_subplot(grid[1], sharex=history)
    spectrum = fig.add_subplot(grid[2])
    shown = t < t[0] + window_s
    error = overlay(history, difference, t[shown], measured[shown], simulated[shown], under_label="measured",
                    over_label=f"simulated ({result.model})", difference_label="measured − simulated")
    del error
    history.set_ylabel(f"{record.output_kind} [{unit}]")
    history.grid(alpha=0.3)
    history.tick_params(labelbottom=False)
    metrics = prediction.metrics
    role = {"fit": "fitted part", "held-out": "held-out periods", "validation": "validation record"}[prediction.role]
    low, high = history.get_ylim()  # headroom above the record: the box goes where there is no data
    history.set_ylim(low, high + 0.35 * (high - low))
    # one box where there is no data: the legend, titled with the metrics (two "best"
    # boxes would be placed without regard to each other)
    history.legend(fontsize=8, loc="best", title_fontsize=8, framealpha=0.85,
                   title=f"{role}: RMSE {metrics['rmse'] * factor:.3g} {unit} "
                         f"({metrics['nrmse_rms_percent']:.2f} % of rms), first {window_s:g} s shown")
    difference.set_xlabel("time [s]")
    difference.set_ylabel(f"measured − simulated [{unit}]")
    difference.grid(alpha=0.3)
    full_error = measured - simulated
    frequency = np.fft.rfftfreq(measured.size, record.dt)
    scale = np.sqrt(2.0) / measured.size
    spectrum.semilogy(frequency, scale * np.abs(np.fft.rfft(measured)), label="measured output",
                      **line_kwargs("measured", lw=1.0))
    spectrum.semilogy(frequency, scale * np.abs(np.fft.rfft(full_error)), label="measured − simulated",
                      **line_kwargs("error"))
    if result.noise is not None:
        level = factor * result.noise["std"] * np.sqrt(2.0 / measured.size)
        spectrum.axhline(level, color="#1f3b73", ls=":", lw=1.0,
                         label="noise level (between periods, white equivalent)")
    spectrum.set_xlabel("frequency [Hz]")
    spectrum.set_ylabel(f"amplitude [{unit}]")
    spectrum.grid(alpha=0.3, which="both")
    spectrum.legend(fontsize=8, loc="best")
    fig.suptitle(f"{pathlib.Path(record.source).name}: {record.input_kind} → {record.output_kind}, "
                 f"output-error fit of {result.model}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
