"""rig-bridge (seed 002 Cases 4-5) beside digest 002's numbers; envelope and stability refusals."""

import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.scenarios import rig_bridge
from rths_ident.scenarios.rig_case import reference
from rths_ident.structures.stability import max_natural_frequency


@pytest.mark.parametrize("topology, frequencies", [("A", (2.055, 7.477)), ("C", (1.447, 7.547))])
def test_topologies_have_digest_frequencies(topology, frequencies):
    m, _, k = rig_bridge.bridge_matrices(topology)
    m[1, 1] += 0.356
    k[1, 1] += 1540.0
    import scipy.linalg
    f = np.sqrt(scipy.linalg.eigh(k, m, eigvals_only=True)) / (2 * np.pi)
    assert f == pytest.approx(frequencies, abs=0.001)
    assert max_natural_frequency(m, k) / (2 * np.pi) == pytest.approx(frequencies[1], abs=0.001)


@pytest.mark.parametrize("case, topology, u2, lam", [
    ("harmonic", "A", 5.75, 8.67), ("harmonic", "C", 6.93, 10.45),
    ("decaying", "A", 10.38, 15.9), ("decaying", "C", 12.1, 18.3)])
def test_reference_maxima_of_digest_002(case, topology, u2, lam):
    """Digest 002 §5 [D] (Newmark, Δt = 0.01, 500 steps): max|u2| and max|λ| to the digits
    given (± half a unit of the last digit printed)."""
    cfg = rig_bridge.RigBridgeConfig(case=case, topology=topology)
    ref = reference(rig_bridge.make_case(cfg), cfg, 500)

    def half_digit(value):
        decimals = len(str(value).split(".")[1])
        return 0.5 * 10.0**-decimals + 1e-12

    assert np.max(np.abs(ref["displacement"][:, 1])) * 1e3 == pytest.approx(u2, abs=half_digit(u2))
    assert np.max(np.abs(ref["specimen_force"])) == pytest.approx(lam, abs=half_digit(lam))


def test_case5_is_flagged_and_refused():
    with pytest.raises(ParameterError, match=r"outside the rig's envelope \(stroke: max interface \|u\| = 10.38 mm"):
        rig_bridge.run_scenario(rig_bridge.RigBridgeConfig(case="decaying"))


def test_measured_inertia_and_large_dt_are_refused():
    with pytest.raises(ParameterError, match=r"unstable: ρ = 1.29\d* > 1. Use --specimen-inertia numerical"):
        rig_bridge.run_scenario(rig_bridge.RigBridgeConfig(specimen_inertia="rig", site="direct"))
    with pytest.raises(ParameterError, match=r"Ω_e = .* > 2"):
        rig_bridge.run_scenario(rig_bridge.RigBridgeConfig(dt=0.05, site="direct"))


def test_harmonic_on_the_exact_specimen_matches_the_reference():
    """site direct, M_e carried by the NS: the hybrid differs from the monolithic reference
    only by the split (explicit K_e, C_e on backward differences): within 2 % of the peaks."""
    result = rig_bridge.run_scenario(rig_bridge.RigBridgeConfig(site="direct"))
    rows = {row[0]: row for row in result["seed002_side_by_side"]}
    assert rows["max |u2| [mm]"][5] == pytest.approx(5.75, rel=0.02)
    assert rows["max |λ| [N]"][5] == pytest.approx(8.67, rel=0.03)
    assert result["comparison"]["u2"]["rms_error_percent_of_peak"] < 1.0


@pytest.mark.slow
def test_decaying_with_envelope_warn_stops_at_the_stroke_on_the_emulator():
    result = rig_bridge.run_scenario(rig_bridge.RigBridgeConfig(case="decaying", envelope="warn"))
    assert "stroke limit" in result["aborted"] and "ramped to zero" in result["aborted"]
    logs = result["_series"]["logs"]
    assert result["completed_steps"] == logs["ns"]["displacement"].shape[0] > 5
    assert np.all(np.abs(result["_series"]["site_record"]["target"]) <= 0.010)
