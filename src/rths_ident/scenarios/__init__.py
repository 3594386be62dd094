"""Ready-made hybrid tests, registered in one place that ``rths-ident run`` reads.

A scenario is a module with:

``SCENARIO``, ``DESCRIPTION``
    its name on the command line and one line about it;
``OPTIONS``
    the scenario-specific command-line options it accepts (names of ``argparse``
    destinations beyond the common ones of :mod:`rths_ident.cli.run`);
``config_from_options(common: dict, options: dict) -> config``
    its configuration from the common settings and its own options;
``run_scenario(config, engine, compare, progress, realtime=False, test_record=None, phases=None) -> dict``
    the run (:func:`rths_ident.runner.results.run_scenario`; ``realtime`` paces the
    step-wise engine against the wall clock), recorded at the path ``test_record`` when
    given; ``phases(phase, seconds)`` hears each phase end;
``plot(result, out_dir) -> list[Path]``
    its figures;
``report(result) -> str`` (optional)
    the lines ``rths-ident run`` prints (default: the hybrid-test report).

Modules are imported when a scenario is asked for, so ``rths-ident --help`` stays fast.
"""

from __future__ import annotations

import importlib

from rths_ident.errors import ParameterError

#: scenario name -> module (imported on demand)
SCENARIOS = {
    "lugre-frame": "rths_ident.scenarios.lugre_frame",
    "bw-frame": "rths_ident.scenarios.bw_frame",
    "rc-frame": "rths_ident.scenarios.rc_frame",
    "marths": "rths_ident.scenarios.marths",
    "rig-sdof": "rths_ident.scenarios.rig_sdof",
    "rig-bridge": "rths_ident.scenarios.rig_bridge",
}


def load(name: str):
    """The module of scenario ``name`` (a clear error listing the known ones)."""
    if name not in SCENARIOS:
        raise ParameterError(f"unknown scenario {name!r}: expected one of {', '.join(SCENARIOS)}")
    return importlib.import_module(SCENARIOS[name])
