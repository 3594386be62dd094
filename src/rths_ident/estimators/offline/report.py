"""Readable text report and loop plots of offline fits."""

from __future__ import annotations

import contextlib
import pathlib
import warnings
from typing import Sequence

import numpy as np


from rths_ident.estimators.offline.bound_check import bound_warning
from rths_ident.estimators.offline.result import FitResult

__all__ = ["format_report", "format_ranking", "plot_fit", "plot_posterior", "params_in_units", "in_display_units"]

#: display units: name -> factor from SI
DISPLACEMENT_UNITS = {"m": 1.0, "cm": 1e2, "mm": 1e3, "in": 1.0 / 0.0254}
FORCE_UNITS = {"N": 1.0, "kN": 1e-3, "MN": 1e-6, "lbf": 1.0 / 4.4482216152605, "kip": 1.0 / 4448.2216152605}


def _fmt(value: float) -> str:
    return f"{value:.5g}"


def _unit_label(dimension: tuple, displacement_unit: str, force_unit: str) -> str:
    """The label of N^a·m^b·s^c in the given units, e.g. (1, −1, 0) → ``kN/mm``."""
    a, b, c = dimension
    if b == "-n":
        return f"1/{displacement_unit}^n"
    numerator, denominator = [], []
    for symbol, power in ((force_unit, a), (displacement_unit, b), ("s", c)):
        if power:
            text = symbol if abs(power) == 1 else f"{symbol}^{abs(power)}"
            (numerator if power > 0 else denominator).append(text)
    top = "·".join(numerator) or ("1" if denominator else "-")
    if not denominator:
        return top
    bottom = denominator[0] if len(denominator) == 1 else f"({'·'.join(denominator)})"
    return f"{top}/{bottom}"


def params_in_units(result: FitResult, displacement_unit: str, force_unit: str) -> tuple[dict, dict] | None:
    """Every parameter of ``result`` converted from SI to the user's displacement and force
    units (time stays in s), and their unit labels; None when a unit is not one of
    :data:`DISPLACEMENT_UNITS` / :data:`FORCE_UNITS` or a field's unit cannot be read.
    A 1/m^n field (Bouc–Wen β, γ) converts with the fitted exponent n."""
    from rths_ident.errors import ParameterError
    from rths_ident.estimators.offline.model_specs import dimension_of_unit

    if displacement_unit not in DISPLACEMENT_UNITS or force_unit not in FORCE_UNITS:
        return None
    per_m, per_n = DISPLACEMENT_UNITS[displacement_unit], FORCE_UNITS[force_unit]
    values, labels = {}, {}
    for name, value in result.params.items():
        try:
            a, b, _ = dimension_of_unit(result.units.get(name, "-"))
        except ParameterError:
            return None
        exponent = -float(result.params["n"]) if b == "-n" else b
        values[name] = float(value) * per_n**a * per_m**exponent
        labels[name] = _unit_label(dimension_of_unit(result.units.get(name, "-")), displacement_unit, force_unit)
    return values, labels


def in_display_units(result: FitResult, displacement_unit: str, force_unit: str) -> dict:
    """The record's ranges and the fit's rms force error in the user's units (the
    report's and the JSON's ``in_file_units``)."""
    dx, df = DISPLACEMENT_UNITS[displacement_unit], FORCE_UNITS[force_unit]
    data = result.data
    return {"displacement_range": [float(data.displacement.min() * dx), float(data.displacement.max() * dx)],
            "force_range": [float(data.force.min() * df), float(data.force.max() * df)],
            "rms_error": float(np.sqrt(np.mean((result.fitted_force - data.force) ** 2)) * df)}


def format_report(result: FitResult, display_units: tuple[str, str] | None = None) -> str:
    """Multi-line text: data, parameters (SI, with posterior columns for Bayesian fits;
    with ``display_units`` = (displacement unit, force unit) other than (m, N) also in
    those units), held parameters, and the force NRMSE in both normalisations."""
    data = result.data
    converted = None
    if display_units is not None and tuple(display_units) != ("m", "N"):
        converted = params_in_units(result, *display_units)
    lines = [f"rths-ident fit: model {result.model}, method {result.method}"]
    timing = ("physical time" if data.time_is_physical
              else "quasi-static: pseudo-time (1 s per sample), rate-dependent terms held at 0")
    lines.append(f"data: {data.source} ({data.n_samples} samples; {timing})")
    lines.append(f"range: displacement {_fmt(data.displacement.min())} … {_fmt(data.displacement.max())} m, "
                 f"force {_fmt(data.force.min())} … {_fmt(data.force.max())} N")
    if converted is not None:
        shown = in_display_units(result, *display_units)
        lines.append(f"       in {','.join(display_units)}: displacement {_fmt(shown['displacement_range'][0])} … "
                     f"{_fmt(shown['displacement_range'][1])} {display_units[0]}, force "
                     f"{_fmt(shown['force_range'][0])} … {_fmt(shown['force_range'][1])} {display_units[1]}")
    lines.append("")
    header = f"  {'parameter':<22} {'value':>12}  {'unit':<8}"
    if converted is not None:
        header += f" {'in ' + ','.join(display_units):>13}  {'unit':<11}"
    if result.posterior:
        header += f" {'sd':>10} {'hdi_3%':>11} {'hdi_97%':>11} {'r_hat':>6} {'ess_bulk':>8}"
    lines.append(header)
    for name in result.fitted:
        row = f"  {name:<22} {_fmt(result.params[name]):>12}  {result.units.get(name, '-'):<8}"
        if converted is not None:
            row += f" {_fmt(converted[0][name]):>13}  {converted[1][name]:<11}"
        if result.posterior and name in result.posterior:
            p = result.posterior[name]
            row += (f" {_fmt(p['sd']):>10} {_fmt(p['hdi_3%']):>11} {_fmt(p['hdi_97%']):>11}"
                    f" {p['r_hat']:>6.3f} {p['ess_bulk']:>8.0f}")
        lines.append(row)
    if result.posterior and "noise_std" in result.posterior:
        p = result.posterior["noise_std"]
        lines.append(f"  {'noise_std':<22} {_fmt(p['mean']):>12}  {'N':<8} {_fmt(p['sd']):>10}"
                     f" {_fmt(p['hdi_3%']):>11} {_fmt(p['hdi_97%']):>11} {p['r_hat']:>6.3f} {p['ess_bulk']:>8.0f}")
    held = [n for n in result.params if n not in result.fitted]
    if held:
        lines.append("  held: " + ", ".join(f"{n} = {_fmt(result.params[n])}" for n in held))
    if "sign_region" in result.details:
        lines.append(f"  sign region: {result.details['sign_region']} (docs/models/bouc_wen.md)")
    lines.extend(_form_lines(result.details))
    lines.extend(_identifiability_lines(result.details.get("identifiability")))
    at_bound = [w for w in result.warnings if w["code"] == "parameter_at_bound"]
    if at_bound:
        lines += ["", bound_warning(at_bound)]
    lines.append("")
    g = result.goodness
    lines.append(f"force NRMSE {g['nrmse_percent']:.2f} % of the force range "
                 f"(rms/rms {g['nrmse_rms_percent']:.2f} %, R² {g['r_squared']:.4f})")
    rms_error = float(np.sqrt(np.mean((result.fitted_force - data.force) ** 2)))
    line = f"rms(F_fit − F_meas) {_fmt(rms_error)} N"
    if converted is not None:
        line += f" = {_fmt(in_display_units(result, *display_units)['rms_error'])} {display_units[1]}"
    lines.append(line)
    if result.posterior is not None:
        bad = [n for n, p in result.posterior.items() if p["r_hat"] > 1.05]
        divergences = result.details.get("divergences", 0)
        lines.append(f"MCMC: {result.details.get('chains')} chains × {result.details.get('draws')} draws, "
                     f"{divergences} divergences" + (f"; r_hat > 1.05 for {', '.join(bad)}" if bad else "; all r_hat ≤ 1.05"))
    return "\n".join(lines)


def _form_lines(details: dict) -> list[str]:
    """The nested-form decisions of the pinching model (nls)."""
    tests = details.get("form_tests") or []
    if not tests:
        return []
    lines = ["", f"form: {details['form']} (chosen by nested BIC comparisons; docs/fitting.md)"]
    for t in tests:
        verdict = "accepted" if t["accept_larger"] else "rejected"
        lines.append(f"  {t['larger']:<10} vs {t['smaller']:<10} ΔBIC {t['delta_bic']:>10.1f}  "
                     f"RSS −{100 * t['rss_reduction']:5.1f} %  {verdict}")
    return lines


def _identifiability_lines(report: dict | None) -> list[str]:
    """Relative standard errors and flags from the Jacobian at the optimum (nls)."""
    if not report:
        return []
    lines = ["", f"identifiability (Jacobian at the optimum; condition number {report['condition_number']:.3g}, "
                 f"n_eff {report['n_effective']:.0f}):"]
    lines.append(f"  {'coordinate':<18} {'rel. SE':>9} {'SE/range':>9}  flag")
    for name, item in report["parameters"].items():
        flag = "" if item["identifiable"] else "NOT IDENTIFIABLE"
        if item["at_bound"]:
            flag = (flag + " at bound").strip()
        lines.append(f"  {name:<18} {_pct(item['relative_se']):>9} {_pct(item['se_over_range']):>9}  {flag}")
    for pair in report["correlated_pairs"][:5]:
        lines.append(f"  correlation {pair['a']}–{pair['b']}: {pair['correlation']:+.3f}")
    if report["not_identifiable"]:
        lines.append("  not identifiable from this test: " + ", ".join(report["not_identifiable"]))
    return lines


def _pct(value: float) -> str:
    if value is None or value != value or value == float("inf"):
        return "inf"
    return f"{100 * value:.3g} %" if value < 100 else f"{value:.2g}×"


def format_ranking(results: Sequence[FitResult]) -> str:
    """Table of several fits of one test, best (lowest NRMSE) first."""
    ordered = sorted(results, key=lambda r: r.nrmse_percent)
    lines = [f"  {'rank':<5}{'model':<20}{'method':<8}{'NRMSE % (range)':>16}{'NRMSE % (rms)':>15}{'R²':>9}"]
    for i, r in enumerate(ordered, start=1):
        lines.append(f"  {i:<5}{r.model:<20}{r.method:<8}{r.nrmse_percent:>16.2f}{r.nrmse_rms_percent:>15.2f}"
                     f"{r.goodness['r_squared']:>9.4f}")
    return "\n".join(lines)


def plot_fit(results: FitResult | Sequence[FitResult], path, *, displacement_unit: str = "m",
             force_unit: str = "N", title: str | None = None) -> None:
    """Save measured vs fitted hysteresis loops (force vs displacement) and the force
    history to ``path`` (PNG). Several results (one test, several models) overlay."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rths_ident.figure_views import line_kwargs

    results = [results] if isinstance(results, FitResult) else list(results)
    data = results[0].data
    dx = DISPLACEMENT_UNITS[displacement_unit]
    df = FORCE_UNITS[force_unit]
    fig = plt.figure(figsize=(12, 6.2))
    grid = fig.add_gridspec(2, 2, width_ratios=(1.1, 1.4), height_ratios=(1.6, 1))
    loops, history = fig.add_subplot(grid[:, 0]), fig.add_subplot(grid[0, 1])
    residual = fig.add_subplot(grid[1, 1], sharex=history)
    # measured wide and light underneath, each fit thin and dashed on top, the residuals as
    # their own traces (rths_ident.figure_views): a good fit hides nothing
    loops.plot(data.displacement * dx, data.force * df, label="measured", **line_kwargs("measured"))
    history.plot(data.time, data.force * df, label="measured", **line_kwargs("measured"))
    colours = ("#0d47a1", "#c62828", "#2e7d32", "#6a1b9a", "#ef6c00")
    for k, r in enumerate(results):
        label = f"{r.model} ({r.method}): NRMSE {r.nrmse_percent:.1f} % range, {r.nrmse_rms_percent:.1f} % rms"
        style = line_kwargs("model", color=colours[k % len(colours)])
        loops.plot(data.displacement * dx, r.fitted_force * df, label=label, **style)
        history.plot(data.time, r.fitted_force * df, label=label, **style)
        residual.plot(data.time, (data.force - r.fitted_force) * df, **line_kwargs("error", color=style["color"]))
    residual.axhline(0.0, color="k", lw=0.5)
    loops.set_xlabel(f"displacement [{displacement_unit}]")
    loops.set_ylabel(f"force [{force_unit}]")
    loops.grid(alpha=0.3)
    loops.legend(fontsize=7, loc="best")
    history.set_ylabel(f"force [{force_unit}]")
    history.grid(alpha=0.3)
    history.tick_params(labelbottom=False)
    residual.set_xlabel("time [s]" if data.time_is_physical else "pseudo-time [sample]")
    residual.set_ylabel(f"measured − fitted [{force_unit}]")
    residual.grid(alpha=0.3)
    fig.suptitle(title or f"{pathlib.Path(data.source).name}: measured vs fitted force")  # the file, not its path
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _plotting_posterior(result: FitResult) -> dict:
    """Draws per fitted coordinate, as NUTS sampled them: log10 of the log-scaled
    parameters (SI), γ/β for Bouc–Wen, plain values otherwise, and the noise std [N]."""
    import numpy as np

    from rths_ident.estimators.offline.model_specs import model_spec
    from rths_ident.models import MODELS

    posterior = result.inference_data.posterior
    spec = model_spec(result.model, result.data, free_A="A" in result.fitted)
    sampled = {name: np.asarray(posterior[name]) for name in posterior.data_vars}
    coordinates = MODELS[result.model].fit.coordinates_of(sampled)  # e.g. γ/β from γ and β
    draws = {}
    for p in spec.free:
        if p.name not in coordinates:
            continue  # held at a fixed value in this fit
        label = p.name.replace("_over_", "/")
        if p.log:
            draws[f"log10 {label}"] = np.log10(coordinates[p.name])
        else:
            draws[label] = coordinates[p.name]
    draws["noise_std"] = np.asarray(posterior["noise_std"])
    return draws


def plot_posterior(result: FitResult, trace_path, pair_path) -> None:
    """ArviZ trace plot and pair plot of a Bayesian fit, saved as PNG files.

    Plotted in the coordinates NUTS sampled (log10 of scale parameters in SI units,
    γ/β for Bouc–Wen): SI values of e.g. Bouc–Wen β span decades when n varies.
    """
    import matplotlib

    matplotlib.use("Agg")
    from rths_ident.estimators.offline._arviz import import_arviz

    az = import_arviz()
    import matplotlib.pyplot as plt

    if result.inference_data is None:
        raise ValueError("plot_posterior needs a Bayesian fit (method 'bayes')")
    draws = _plotting_posterior(result)
    idata = az.from_dict(posterior=draws)
    with _arviz_matplotlib_deprecation_silenced():
        az.plot_trace(idata)
    plt.gcf().tight_layout()
    plt.gcf().savefig(trace_path, dpi=80)
    plt.close("all")
    names = [n for n in draws if n != "noise_std"]
    with _arviz_matplotlib_deprecation_silenced():
        az.plot_pair(idata, var_names=names, kind="kde" if len(names) <= 4 else "scatter", marginals=True)
    plt.gcf().savefig(pair_path, dpi=60)
    plt.close("all")


@contextlib.contextmanager
def _arviz_matplotlib_deprecation_silenced():
    """ArviZ's matplotlib backend (arviz/plots/backends/matplotlib/__init__.py) calls
    ``matplotlib.cbook.normalize_kwargs`` with a dict alias map, deprecated in Matplotlib
    3.11: one MatplotlibDeprecationWarning per artist, dozens per plot, nothing the user
    can act on. Only that message is silenced, only around ArviZ's plotting calls."""
    from matplotlib import MatplotlibDeprecationWarning

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Passing a dict or None as alias_mapping to normalize_kwargs",
                                category=MatplotlibDeprecationWarning)
        yield
