"""Seed 002's partitioned Newmark and its monolithic reference against digest 002's numbers
(§1.3–1.4, §5 Case 1, §8 acceptance checks) and closed forms."""

import math

import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.structures.partitioned_newmark import (
    PartitionedNewmark,
    check_partitioned_time_step,
    coupled_with_specimen,
    monolithic_newmark,
    spectral_radius,
)
from rths_ident.structures.stability import TimeStepError

# seed 002 Tables 5-2 and 5-4
M1, C1, K1 = 34.0, 8.5, 30.0
ME, CE, KE = 0.356, 5.43, 1540.0
DT = 0.01
# topology A of the 2-DOF bridge (digest 002 §2): ground–(K1,C1)–M1–(K2,C2)–M2≡e
BRIDGE_M = np.diag([0.356, 0.356])
BRIDGE_K = np.array([[60.0, -30.0], [-30.0, 30.0]])
BRIDGE_C = np.array([[5.0, -2.5], [-2.5, 2.5]])


def _sampled_peaks(t, u):
    i = np.flatnonzero((u[1:-1] > u[:-2]) & (u[1:-1] >= u[2:])) + 1
    return t[i], u[i]


def _case1_reference(steps=300):
    m, c, k, b = coupled_with_specimen([[M1]], [[C1]], [[K1]], [0], ME, CE, KE)
    return monolithic_newmark(m, c, k, b, np.zeros((steps + 1, 2)), DT, displacement0=[0.01, 0.01])


def test_monolithic_case1_lambda0_and_first_peaks_of_digest_002():
    ref = _case1_reference()
    # digest 002 §1.3 [D]: λ0 = 15.237 N, ü0 = −0.45698 m/s² (closed form below too)
    assert ref["multiplier"][0, 0] == pytest.approx(15.237, abs=5e-4)
    assert ref["acceleration"][0, 0] == pytest.approx(-0.45698, abs=1e-5)
    a0 = -(K1 + KE) * 0.01 / (M1 + ME)
    assert ref["multiplier"][0, 0] == pytest.approx(ME * a0 + KE * 0.01, rel=1e-12)
    # digest 002 §8: first peaks 8.283 mm @ 0.93 s and 6.861 mm @ 1.86 s (±0.005 mm); sampled at Δt
    t, u = _sampled_peaks(ref["time"], ref["displacement"][:, 0])
    assert t[:2] == pytest.approx([0.93, 1.86], abs=1e-9)
    assert u[:2] * 1e3 == pytest.approx([8.283, 6.861], abs=0.005)


def test_monolithic_equals_summed_sdof_newmark():
    """The rigid link makes Case 1 an SDOF with summed properties (eq. 5-1): an
    independent scalar Newmark on (M_T, C_T, K_T) gives the same response to machine precision."""
    ref = _case1_reference(200)
    mt, ct, kt = M1 + ME, C1 + CE, K1 + KE
    u, v = 0.01, 0.0
    a = -(ct * v + kt * u) / mt
    k_eff = kt + 2.0 * ct / DT + 4.0 * mt / DT**2
    for i in range(1, 201):
        rhs = mt * (4 * u / DT**2 + 4 * v / DT + a) + ct * (2 * u / DT + v)
        u_new = rhs / k_eff
        v_new = 2 * (u_new - u) / DT - v
        a = 4 * (u_new - u) / DT**2 - 4 * v / DT - a
        u, v = u_new, v_new
        assert ref["displacement"][i, 0] == pytest.approx(u, abs=1e-15)


def test_spectral_radius_digest_002_values():
    # undamped SDOF with only K_e explicit: ρ = 1 up to Ω_e = 2, then 1.88 at 2.1 and 4.0 at 2.5
    for omega, expected in ((0.5, 1.0), (1.9, 1.0), (2.0, 1.0), (2.1, 1.88), (2.5, 4.0)):
        assert spectral_radius([[1.0]], [[0.0]], [[0.0]], [0], omega**2, 1.0) == pytest.approx(expected, abs=0.005)
    # thesis SDOF case: ρ = 0.9988; 2-DOF: 0.965 (Δt 0.01), < 1 (0.03), 7.3 (0.05), 53 (0.143)
    assert spectral_radius([[M1]], [[C1]], [[K1]], [0], KE, DT) == pytest.approx(0.9988, abs=1e-4)
    rho = {dt: spectral_radius(BRIDGE_M, BRIDGE_C, BRIDGE_K, [1], KE, dt) for dt in (0.01, 0.03, 0.05, 0.143)}
    assert rho[0.01] == pytest.approx(0.965, abs=0.001)
    assert rho[0.03] < 1.0
    assert rho[0.05] == pytest.approx(7.3, abs=0.05)
    assert rho[0.143] == pytest.approx(53.0, abs=0.5)


def test_stability_limit_checked():
    assert check_partitioned_time_step(0.01, KE, M1) == pytest.approx(0.01 * math.sqrt(KE / M1))
    assert check_partitioned_time_step(0.01, KE, 0.356) == pytest.approx(0.658, abs=0.001)  # ω_e = 65.8 rad/s
    with pytest.raises(TimeStepError, match=r"Ω_e = .* > 2 .*Δt ≤ 0.03041 s"):
        check_partitioned_time_step(0.05, KE, 0.356)
    with pytest.raises(TimeStepError):
        PartitionedNewmark(BRIDGE_M, BRIDGE_C, BRIDGE_K, [1], 0.05, specimen_stiffness=KE)
    ns = PartitionedNewmark(BRIDGE_M, BRIDGE_C, BRIDGE_K, [1], 0.01, specimen_stiffness=KE)
    assert ns.spectral_radius == pytest.approx(0.965, abs=0.001)


def _hybrid_with_spring(sign, steps, stiffness=KE):
    ns = PartitionedNewmark([[M1]], [[C1]], [[K1]], [0], DT, displacement0=[0.01])
    target = ns.initial_target()
    logs = []
    for _ in range(steps + 1):
        target, log = ns.step(sign * stiffness * target, 0.0)
        logs.append(log)
    return np.array([g["time"] for g in logs]), np.array([g["displacement"][0] for g in logs])


def test_hybrid_with_ideal_spring_matches_digest():
    """r = K_e·uᴾ with the Case 1 numerical part: stable, period 0.925 s (±0.01), peak ratio ≈ 1.12."""
    t, u = _hybrid_with_spring(+1.0, 1200)
    tp, up = _sampled_peaks(t, u)
    assert np.diff(tp[:6]).mean() == pytest.approx(0.925, abs=0.01)
    assert (up[:5] / up[1:6]).mean() == pytest.approx(1.12, abs=0.01)
    assert np.all(np.abs(u) <= 0.0100001)


def test_printed_sign_of_2_38_diverges():
    """Eq. (2-38) as printed (+λᴾ): |u| grows to about 5.7e31 m within 12 s (digest 002 §1.4)."""
    t, u = _hybrid_with_spring(-1.0, 1200)
    assert math.log10(np.max(np.abs(u))) == pytest.approx(math.log10(5.7e31), abs=1.0)


def test_bad_input_named():
    with pytest.raises(ParameterError, match="interface_dofs"):
        PartitionedNewmark([[1.0]], [[0.0]], [[1.0]], [3], 0.01)
    with pytest.raises(ParameterError, match="damping"):
        PartitionedNewmark([[1.0]], np.zeros((2, 2)), [[1.0]], [0], 0.01)
    with pytest.raises(ParameterError, match="loads"):
        monolithic_newmark(np.eye(2), np.eye(2), np.eye(2), [1, -1], np.zeros((5, 3)), 0.01)


def test_spectral_radius_with_measured_specimen_rates_matches_simulated_growth():
    """The augmented amplification matrix (specimen M_e, C_e on backward differences of the
    imposed predictors, the emulator's virtual specimen) against the scheme run step by
    step with that specimen: the growth per step of an unstable run is ρ."""
    from rths_ident.rigs.emulator import VirtualSpecimen

    rho = spectral_radius(BRIDGE_M, BRIDGE_C, BRIDGE_K, [1], KE, DT, specimen_mass=ME, specimen_damping=CE)
    assert rho == pytest.approx(1.294, abs=0.001)
    assert spectral_radius(BRIDGE_M, BRIDGE_C, BRIDGE_K, [1], KE, DT, specimen_mass=0.2, specimen_damping=CE) < 1
    specimen = VirtualSpecimen(ME, CE, KE, DT)
    ns = PartitionedNewmark(BRIDGE_M, BRIDGE_C, BRIDGE_K, [1], DT, displacement0=[0.0, 1e-6])
    target, history, peaks = ns.initial_target(), None, []
    for _ in range(400):
        u = float(target[0])
        history = (u, u) if history is None else history
        force = specimen.force(u, history)
        history = (u, history[0])
        target, log = ns.step([force], 0.0)
        peaks.append(np.max(np.abs(log["displacement"])))
    growth = (peaks[-1] / peaks[-101]) ** (1 / 100)
    assert growth == pytest.approx(rho, rel=0.01)
