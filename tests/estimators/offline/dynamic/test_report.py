"""The dynamic fit's text report says what the JSON flags: a coordinate on a bound of its
search box gets a warning line naming it (and none when no coordinate is on a bound)."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
from dynamic_synthetic import Multisine, linear_oscillator

from rths_ident.estimators.offline.dynamic import DynamicRecord, fit_dynamic
from rths_ident.estimators.offline.dynamic.report import format_dynamic_report

DT, PERIOD = 1.0 / 400.0, 256


def test_a_coordinate_on_a_bound_is_a_warning_line():
    u = Multisine(PERIOD, DT, 3.0, 90.0, 40.0, seed=5)
    y, _, _ = linear_oscillator(u, 2 * PERIOD, DT, m=1.5, c=6.0, k=9.0e4)
    record = DynamicRecord.from_arrays(u(np.arange(2 * PERIOD) * DT), y, dt=DT, period=PERIOD, source="linear")
    result = fit_dynamic(record, "linear", global_generations=0, n_starts=1, seed=0)
    flags = {name: item["at_bound"] for name, item in result.identifiability["parameters"].items()}
    assert not any(flags.values())  # a linear oscillator well inside its box
    assert "on a bound of the search box" not in format_dynamic_report(result)
    pinned = copy.deepcopy(result.identifiability)
    name = next(iter(pinned["parameters"]))
    pinned["parameters"][name]["at_bound"] = True
    report = format_dynamic_report(dataclasses.replace(result, identifiability=pinned))
    warning = [line for line in report.splitlines() if "warning: on a bound of the search box" in line]
    assert len(warning) == 1 and f": {name};" in warning[0]


def test_the_figure_names_the_file_not_its_path_and_reads_in_the_users_unit(tmp_path):
    import matplotlib

    from rths_ident.estimators.offline.dynamic.report import plot_dynamic_fit

    u = Multisine(PERIOD, DT, 3.0, 90.0, 40.0, seed=5)
    y, _, _ = linear_oscillator(u, 2 * PERIOD, DT, m=1.5, c=6.0, k=9.0e4)
    record = DynamicRecord.from_arrays(u(np.arange(2 * PERIOD) * DT), y, dt=DT, period=PERIOD,
                                       source="/work/shared/data/lab/shake_07.csv")
    result = fit_dynamic(record, "linear", global_generations=0, n_starts=1, seed=0)
    figure = tmp_path / "fit_dynamic.svg"
    with matplotlib.rc_context({"svg.fonttype": "none"}):  # the texts as text, to be read back
        plot_dynamic_fit(result, figure, output_display=("mm", 1e3))
    svg = figure.read_text()
    assert "shake_07.csv: force → displacement" in svg and "/work/shared" not in svg
    # the error as its own trace on its own axis, every axis with its unit
    for label in ("displacement [mm]", "measured − simulated [mm]", "time [s]", "frequency [Hz]", "amplitude [mm]"):
        assert label in svg
    assert "error × 10" not in svg
