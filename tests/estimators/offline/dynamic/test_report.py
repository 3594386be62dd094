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
