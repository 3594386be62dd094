"""The calibration figure's title names the compensator and the method as the sources do
(digest 003: AMB, dAMB; the gradient search is SciPy's L-BFGS-B)."""

from rths_ident.calibration.plots import title


def test_the_title_spells_the_compensator_and_the_method_as_the_sources():
    assert title({"compensator": "amb", "method": "pso"}) == "AMB calibrated by PSO"
    assert title({"compensator": "damb", "method": "gradient"}) == "dAMB calibrated by L-BFGS-B"
    assert title({"compensator": "polynomial", "method": "de"}) == "polynomial calibrated by DE"


def test_the_start_is_called_the_sources_gains_only_when_it_is_them():
    from rths_ident.calibration.plots import start_label

    sources = {"log10_P0": 10.0, "rho": 1.0, "s": 1.0}
    assert start_label({"start_gains": dict(sources), "source_gains": sources}) == "start (sources' gains)"
    # --start-gains, or the sources' start clipped into a narrowed --bounds box
    assert start_label({"start_gains": {**sources, "log10_P0": 8.0}, "source_gains": sources}) == "start"
