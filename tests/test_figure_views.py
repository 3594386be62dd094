"""One drawing of each view: where two curves coincide both stay visible, their
difference is its own trace, and labels sit where there is no data."""

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from rths_ident.figure_views import STYLES, label_where_no_data, line_kwargs, overlay


def test_the_measured_curve_is_wider_and_underneath_the_model_and_their_difference_is_its_own_trace():
    fig = Figure()
    ax, ax_difference = fig.subplots(2, 1)
    x = np.linspace(0, 1, 200)
    measured, model = np.sin(6 * x), np.sin(6 * x) * 1.01
    difference = overlay(ax, ax_difference, x, measured, model)
    under, over = ax.lines
    assert under.get_linewidth() > 2 * over.get_linewidth() and under.get_zorder() < over.get_zorder()
    assert over.get_linestyle() == "--"  # dashed: the wide curve shows between the dashes
    np.testing.assert_array_equal(difference, measured - model)
    np.testing.assert_array_equal(ax_difference.lines[0].get_ydata(), measured - model)
    assert line_kwargs("model")["color"] == STYLES["model"]["color"]


def test_a_label_is_placed_where_there_is_no_data():
    # rc-frame's response error: the largest peak early, where a label in the corner used to sit
    fig = Figure(figsize=(6, 3))
    ax = fig.add_subplot(1, 1, 1)
    t = np.linspace(0, 30, 3000)
    error = np.sin(2 * np.pi * 1.5 * t) * np.exp(-((t - 4) / 2) ** 2) + 0.2 * np.sin(2 * np.pi * 1.5 * t)
    ax.plot(t, error)
    box = label_where_no_data(ax, "J4 = 0.025 %")
    FigureCanvasAgg(fig).draw()
    extent = box.get_window_extent()
    points = ax.transData.transform(np.column_stack([t, error]))
    inside = ((points[:, 0] >= extent.x0) & (points[:, 0] <= extent.x1)
              & (points[:, 1] >= extent.y0) & (points[:, 1] <= extent.y1))
    assert not inside.any()
    ax.legend(["error"], loc="lower left")  # the axis' own legend does not remove the label
    assert box in ax.artists
