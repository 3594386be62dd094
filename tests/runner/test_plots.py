"""The run figures as an engineer reads them: units on every axis, the tracking error as
the main trace with the zoom window marked, J4 defined on the figure, the identified
model's loop over the measured one, shared y-limits for updating vs none."""

import numpy as np
import pytest

from rths_ident.runner import plots

N_SLOW, RATIO, SLOW = 400, 20, 50.0
NAMES = ("sigma0", "Fc", "sigma3")


def _logs(rng, offset):
    t_fast = np.arange(N_SLOW * RATIO) / (SLOW * RATIO)
    target = 0.05 * np.sin(2 * np.pi * t_fast)
    measured = target + 1e-4 * rng.standard_normal(t_fast.size)
    floors = np.stack([(i + 1) * 0.03 * np.sin(2 * np.pi * t_fast[::RATIO]) + offset for i in range(3)], axis=1)
    estimate = np.outer(1 - 0.3 * np.exp(-np.arange(N_SLOW) / 10), [1.0, 2.0, 3.0])
    return {"fast": {"target": target.reshape(N_SLOW, RATIO), "measured": measured.reshape(N_SLOW, RATIO),
                     "command": (1.01 * target).reshape(N_SLOW, RATIO),
                     "force": 1e6 * measured.reshape(N_SLOW, RATIO)},
            "ns": {"displacement": floors},
            "update": {"estimate": estimate, "applied": np.arange(N_SLOW) > 10}}


@pytest.fixture
def result():
    rng = np.random.default_rng(0)
    logs = {"rls": _logs(rng, 1e-4), "none": _logs(rng, 5e-3), "oracle": _logs(rng, 5e-5)}
    j4 = {m: {"J4_percent": {f"floor{i + 1}": v for i, v in enumerate((1.0, 2.0, 3.0))}} for m in logs}
    time_slow = np.arange(1, N_SLOW + 1) / SLOW
    return {
        "scenario": "lugre-frame", "record": "synthetic", "updating": "rls", "floor_mass_kg": 64e3,
        "J2_percent": 0.4, "tau_ms": -0.7, "compensation": "damb", "transition": "predictor-corrector",
        "params_true": dict(zip(NAMES, (1.0, 2.0, 3.0))), "params_initial": dict(zip(NAMES, (0.7, 1.4, 2.1))),
        "params_final": dict(zip(NAMES, (1.0, 2.0, 3.0))), "convergence_time_s": dict(zip(NAMES, (0.5, 1.0, None))),
        "variants": j4,
        "_arrays": {"time_slow": time_slow, "time_fast": np.arange(1, N_SLOW * RATIO + 1) / (SLOW * RATIO),
                    "reference_floors": _logs(rng, 0.0)["ns"]["displacement"], "logs": logs,
                    # a linear spring: the "identified model" is F = θ0 · 1e6 · x
                    "column_force": lambda values, x: values[0] * 1e6 * np.asarray(x)},
    }


@pytest.fixture
def figures(monkeypatch):
    saved = {}

    def keep(fig, path):
        fig.canvas = None
        saved[path.name] = fig
        return path

    monkeypatch.setattr(plots, "_save", keep)
    return saved


def test_every_axis_has_a_unit(result, figures, tmp_path):
    plots.plot_lugre_frame(result, tmp_path)
    assert sorted(figures) == ["parameters.png", "reference_vs_hybrid.png", "specimen_hysteresis.png",
                               "tracking.png", "updating_vs_none.png"]
    for name, fig in figures.items():
        for ax in fig.axes:
            for label in (ax.get_xlabel(), ax.get_ylabel()):
                if label:  # shared axes label the outer ones only
                    assert "[" in label and "]" in label, (name, label)
        assert all(ax.get_xlabel() or ax.get_ylabel() for ax in fig.axes), name


def test_tracking_error_is_the_main_trace_with_the_zoom_marked(result, figures, tmp_path):
    plots.plot_lugre_frame(result, tmp_path)
    main = figures["tracking.png"].axes[0]
    error = main.lines[0].get_ydata()
    rls = result["_arrays"]["logs"]["rls"]["fast"]
    np.testing.assert_allclose(error, (rls["measured"] - rls["target"]).ravel() * 1e3)
    assert len(main.patches) == 1  # the zoom window
    t0, t1 = main.patches[0].get_x(), main.patches[0].get_x() + main.patches[0].get_width()
    zoom = figures["tracking.png"].axes[1].lines[0].get_xdata()
    assert zoom[0] >= t0 - 1e-12 and zoom[-1] <= t1 + 1e-12
    assert "τ < 0" in " ".join(t.get_text() for t in figures["tracking.png"].texts)


def test_floor_errors_and_j4_definition(result, figures, tmp_path):
    plots.plot_lugre_frame(result, tmp_path)
    fig = figures["reference_vs_hybrid.png"]
    assert "J4 =" in fig._suptitle.get_text() and "x_{ref}" in fig._suptitle.get_text()
    assert len(fig.legends) == 1
    arrays = result["_arrays"]
    roof_none = fig.axes[0].lines[0].get_ydata()  # top-left: roof, no updating
    np.testing.assert_allclose(roof_none, (arrays["logs"]["none"]["ns"]["displacement"][:, 2]
                                           - arrays["reference_floors"][:, 2]) * 1e3)


def test_identified_loop_over_the_measured_one(result, figures, tmp_path):
    plots.plot_lugre_frame(result, tmp_path)
    ax = figures["specimen_hysteresis.png"].axes[0]
    by_label = {line.get_label(): line for line in ax.lines}
    identified = next(line for label, line in by_label.items() if label.startswith("identified model"))
    measured_x = result["_arrays"]["logs"]["rls"]["fast"]["measured"].ravel()
    np.testing.assert_allclose(identified.get_xdata(), measured_x * 1e3)
    np.testing.assert_allclose(identified.get_ydata(), 1.0 * 1e6 * measured_x / 1e3)
    # drawn over the measured loop, thinner; their difference is its own trace below, its
    # rms where there is no data
    measured = by_label["measured"]
    assert measured.get_linewidth() > 2 * identified.get_linewidth() and measured.get_zorder() < identified.get_zorder()
    error_axis = figures["specimen_hysteresis.png"].axes[1]
    measured_f = result["_arrays"]["logs"]["rls"]["fast"]["force"].ravel()
    np.testing.assert_allclose(error_axis.lines[0].get_ydata(), (measured_f - 1e6 * measured_x) / 1e3, atol=1e-12)
    assert any("rms 0.00 % of rms measured force" in box.get_title().get_text() for box in error_axis.artists)


def test_parameters_show_the_first_seconds(result, figures, tmp_path):
    plots.plot_lugre_frame(result, tmp_path)
    early, whole = figures["parameters.png"].axes
    assert early.get_xlim()[1] < whole.get_xlim()[1]
    assert "numerical substructure" in figures["parameters.png"]._suptitle.get_text()


def test_updating_vs_none_share_y_limits(result, figures, tmp_path):
    plots.plot_lugre_frame(result, tmp_path)
    top_left, top_right, bottom_left, bottom_right = figures["updating_vs_none.png"].axes
    assert top_left.get_ylim() == top_right.get_ylim()
    assert bottom_left.get_ylim() == bottom_right.get_ylim()
    # the hybrid is drawn under the reference, wider, so that it stays visible
    hybrid, reference = top_right.lines[:2]
    assert hybrid.get_linewidth() > 2 * reference.get_linewidth()


def test_none_run_says_what_it_shows(result, figures, tmp_path):
    result["updating"] = "none"
    plots.plot_lugre_frame(result, tmp_path)
    assert "with and without" not in figures["updating_vs_none.png"]._suptitle.get_text()
    assert "watched only" in figures["parameters.png"]._suptitle.get_text()
    labels = [line.get_label() for line in figures["specimen_hysteresis.png"].axes[0].lines]
    assert any("watching only" in label for label in labels)
