"""Modal damping of the rc-frame (seed 000 Case 4) in the native model and in OpenSees.

Why the native frame and the OpenSees frame (both α-OS, α_OS = 0.9, Δt = 0.02 s) agree
to ~1e-5 with Rayleigh damping but differ by ~13 % of the peak with ``modalDamping``:

* the native C = M Φ diag(2ζω) Φᵀ M is right: native α-OS converges at second order to
  the closed-form modal superposition (each mode an exact damped SDOF, scipy ``lsim``);
* OpenSees' ``AlphaOS`` applies ``modalDamping`` differently from its element (Rayleigh)
  damping. ``TransientIntegrator::formUnbalance`` adds −C_modal·``getVel()`` to the
  right-hand side, and ``AlphaOS::getVel`` returns ``*Udot``, the PREDICTOR velocity
  ũ̇_{n+1} = u̇_n + (1 − γ)Δt ü_n (not the α-weighted velocity the elements see,
  ``Ualphadot``); ``AlphaOS`` does not override ``getCFactor`` (base
  ``IncrementalIntegrator::getCFactor`` returns 0), so ``addModalDampingMatrix`` returns
  at once and the tangent has no damping term. With one linear solve per step the
  modal damping force is therefore explicit and lagged: −C ũ̇_{n+1} with weight 1,
  instead of −C(α_OS u̇_{n+1} + (1 − α_OS) u̇_n) with α_OS γ Δt C in the tangent.
  A NumPy α-OS with exactly that damping treatment reproduces OpenSees to ~1e-13; the
  scheme is first-order accurate in Δt (the α-method is second order).

Measured (OpenSeesPy 3.7.1.2): mode 1 at Δt = 0.02 s (ω₁Δt = 0.55) decays with
ζ = 0.0495 at ω_d/ω₁ = 0.9817 in OpenSees (α-OS proper: 0.0483 and 0.9688); modes
4–9 (ωΔt = 23–39) get ζ ≈ 0.026–0.036 instead of ≈ 0.07. At Δt = T/200 both give 5 %.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import scipy.signal
from _structures_helpers import elcentro_m_s2

from rths_ident.structures import AlphaOS, structure_from_matrices
from rths_ident.structures.damping import modal_damping, rayleigh_damping
from rths_ident.structures.rc_frame import build_rc_frame, rc_frame_linear_matrices, rc_frame_structure

DT = 0.02
ALPHA_OS = 0.9
RECORD = 1.5 * elcentro_m_s2(151)  # 3 s, zero at t = 0


@pytest.fixture(scope="module")
def frame():
    matrices = rc_frame_linear_matrices()
    m, k = matrices.condensed.mass, matrices.condensed.stiffness
    w2, phi = scipy.linalg.eigh(k, m)  # mass-normalised, independent of structures.modal
    return matrices, m, k, np.sqrt(w2), phi


def closed_form_modal_response(m, phi, omega, zeta, record, dt):
    """Modal superposition, each mode an exact damped SDOF under the piecewise-linear
    record (scipy ``lsim`` with linear interpolation is exact for it); (steps, n) [m]."""
    gamma = phi.T @ m @ np.ones(m.shape[0])
    t = dt * np.arange(record.size)
    u = np.zeros((record.size, m.shape[0]))
    for i, w in enumerate(omega):
        sdof = scipy.signal.lti([1.0], [1.0, 2.0 * zeta * w, w * w])
        _, q, _ = scipy.signal.lsim(sdof, -gamma[i] * record, t, interp=True)
        u += np.outer(q, phi[:, i])
    return u


def alpha_os_with_predictor_damping(m, k, c, record, dt, alpha_os=ALPHA_OS):
    """OpenSees ``AlphaOS`` (AlphaOS.cpp newStep/update/formElementResidual) on a linear
    model whose damping force is −C ũ̇_{n+1} (predictor velocity) on the right-hand side
    only, as ``modalDamping`` enters it; (steps, n) [m]."""
    a = alpha_os
    beta, gamma = (2.0 - a) ** 2 / 4.0, 1.5 - a
    c2, c3 = gamma / (beta * dt), 1.0 / (beta * dt * dt)
    n = m.shape[0]
    lhs = c3 * m + a * k  # no damping term: getCFactor() = 0
    times = dt * np.arange(record.size)
    u, v, acc, upt = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
    out = [u.copy()]
    for step in range(record.size - 1):
        u_pred = u + dt * v + (0.5 - beta) * dt * dt * acc
        v_pred = v + dt * (1.0 - gamma) * acc
        u_alpha = (1.0 - a) * upt + a * u_pred
        ag = np.interp(times[step] + a * dt, times, record)
        rhs = -m @ np.ones(n) * ag - k @ u_alpha + (a - 1.0) * k @ (u - upt) - c @ v_pred
        du = np.linalg.solve(lhs, rhs)
        upt = u_pred
        u, v, acc = u_pred + du, v_pred + c2 * du, c3 * du
        out.append(u.copy())
    return np.array(out)


def native_response(structure, params, record, dt):
    _, out = AlphaOS.from_opensees_alpha(structure, ALPHA_OS).simulate(params, record[1:], dt)
    return np.vstack([np.zeros(structure.n_dof), np.asarray(out.displacement)])


def test_native_modal_damping_converges_to_the_closed_form_modal_response(frame):
    """The native C (5 % in all 9 modes) under α-OS tends to the closed-form modal
    superposition at second order (measured 4.4e-3 → 1.1e-3 of the peak)."""
    _, m, _, omega, phi = frame
    fr = rc_frame_structure(damping_ratio=0.05, damping="modal")
    exact = closed_form_modal_response(m, phi, omega, 0.05, RECORD, DT)
    peak = np.abs(exact).max()
    errors = []
    for refine in (8, 16):
        dt = DT / refine
        fine = np.interp(dt * np.arange((RECORD.size - 1) * refine + 1), DT * np.arange(RECORD.size), RECORD)
        u = native_response(fr.structure, fr.params, fine, dt)[::refine]
        errors.append(np.abs(u - exact).max() / peak)
    print("native α-OS vs closed-form modal response (Δt = 2.5 ms, 1.25 ms):", errors)
    assert errors[1] < 2e-3
    assert errors[0] / errors[1] > 3.5  # second order


@pytest.fixture
def ops():
    return pytest.importorskip("openseespy.opensees")


def _opensees_record_response(ops, matrices, record, dt, damping="modal", modal_q=False, rayleigh=None):
    build_rc_frame(ops, nonlinear=False, damping=damping, damping_ratio=0.05)
    if modal_q:
        ops.modalDampingQ(0.05)  # the force-only variant: replaces modalDamping's factors
    if rayleigh is not None:
        ops.rayleigh(rayleigh[0], 0.0, 0.0, rayleigh[1])
    nodes = [node for node, _ in matrices.dofs]
    rest = np.array([ops.nodeDisp(node, 1) for node in nodes])
    ops.timeSeries("Path", 77, "-dt", dt, "-values", *record.tolist(), 0.0)
    ops.pattern("UniformExcitation", 77, 1, "-accel", 77)
    ops.constraints("Plain")
    ops.numberer("Plain")
    ops.system("BandGeneral")
    ops.algorithm("Linear", "-initial")  # as OpenSeesSubstructure
    ops.integrator("AlphaOS", ALPHA_OS)
    ops.analysis("Transient")
    out = [np.zeros(len(nodes))]
    for _ in range(record.size - 1):
        assert ops.analyze(1, dt) == 0
        out.append(np.array([ops.nodeDisp(node, 1) for node in nodes]) - rest)
    ops.wipe()
    return np.array(out)


@pytest.mark.opensees
def test_opensees_alpha_os_applies_modal_damping_explicitly_at_the_predictor_velocity(ops, frame):
    matrices, m, k, _, _ = frame
    c = modal_damping(m, k, 0.05)
    opensees = _opensees_record_response(ops, matrices, RECORD, DT)
    peak = np.abs(opensees).max()
    replica = alpha_os_with_predictor_damping(m, k, c, RECORD, DT)
    fr = rc_frame_structure(damping_ratio=0.05, damping="modal")
    native = native_response(fr.structure, fr.params, RECORD, DT)
    print("OpenSees AlphaOS+modalDamping vs predictor-damping replica, vs native α-OS:",
          np.abs(opensees - replica).max() / peak, np.abs(opensees - native).max() / peak)
    assert np.abs(opensees - replica).max() < 1e-9 * peak
    assert np.abs(opensees - native).max() > 0.05 * peak
    # no modal damping matrix in AlphaOS' tangent: modalDamping ≡ modalDampingQ
    assert np.array_equal(_opensees_record_response(ops, matrices, RECORD, DT, modal_q=True), opensees)


@pytest.mark.opensees
def test_opensees_alpha_os_with_rayleigh_damping_equals_native(ops, frame):
    """The remedy for a like-for-like comparison: Rayleigh damping (5 % in modes 1 and 3)
    is element damping, which AlphaOS weights and puts in the tangent like α-OS does."""
    matrices, m, k, _, _ = frame
    c, a0, a1 = rayleigh_damping(m, k, 0.05, modes=(1, 3))
    opensees = _opensees_record_response(ops, matrices, RECORD, DT, damping="rayleigh", rayleigh=(a0, a1))
    structure, params = structure_from_matrices(m, k, damping=c)
    native = native_response(structure, params, RECORD, DT)
    assert np.abs(opensees - native).max() < 1e-9 * np.abs(native).max()


def _alpha_os_mode_map(omega, zeta, dt, predictor_damping, a=ALPHA_OS):
    """One-step map of (u, u̇, ü, ũ) for one mode (unit mass) under OpenSees' AlphaOS."""
    beta, gamma = (2.0 - a) ** 2 / 4.0, 1.5 - a
    c2, c3 = gamma / (beta * dt), 1.0 / (beta * dt * dt)
    kk, cc = omega**2, 2.0 * zeta * omega
    columns = []
    for u, v, acc, upt in np.eye(4):
        u_pred, v_pred = u + dt * v + (0.5 - beta) * dt * dt * acc, v + dt * (1.0 - gamma) * acc
        rhs = -kk * ((1.0 - a) * upt + a * u_pred) + (a - 1.0) * kk * (u - upt)
        if predictor_damping:
            du = (rhs - cc * v_pred) / (c3 + a * kk)
        else:
            du = (rhs - cc * ((1.0 - a) * v + a * v_pred)) / (c3 + a * kk + a * c2 * cc)
        columns.append([u_pred + du, v_pred + c2 * du, c3 * du, u_pred])
    return np.array(columns).T


def _damping_and_frequency(eigenvalue, dt, omega):
    s = np.log(complex(eigenvalue)) / dt
    return -s.real / abs(s), abs(s.imag) / omega


@pytest.mark.opensees
def test_opensees_first_mode_free_vibration_at_the_scenario_time_step(ops, frame):
    """Free vibration in mode 1 at Δt = 0.02 s: the decay (ζ) and frequency of OpenSees'
    modal coordinate equal the principal eigenvalue of the predictor-damping map
    (ζ = 0.0495, ω_d/ω = 0.9817), not that of α-OS proper (0.0483, 0.9688)."""
    matrices, m, _, omega, phi = frame
    build_rc_frame(ops, nonlinear=False, damping="modal", damping_ratio=0.05)
    nodes = [node for node, _ in matrices.dofs]
    rest = np.array([ops.nodeDisp(node, 1) for node in nodes])
    shape = matrices.condensed.recovery @ (phi[:, 0] / np.abs(phi[:, 0]).max() * 0.01)
    for (node, dof), value in zip(matrices.full.dofs, shape):
        ops.setNodeDisp(node, dof, ops.nodeDisp(node, dof) + value, "-commit")
    ops.constraints("Plain")
    ops.numberer("Plain")
    ops.system("BandGeneral")
    ops.algorithm("Linear", "-initial")
    ops.integrator("AlphaOS", ALPHA_OS)
    ops.analysis("Transient")
    q = []
    for _ in range(150):
        q.append(phi[:, 0] @ m @ (np.array([ops.nodeDisp(node, 1) for node in nodes]) - rest))
        assert ops.analyze(1, DT) == 0
    ops.wipe()
    q = np.array(q[5:])  # the spurious roots have died out
    coeffs = np.linalg.lstsq(np.column_stack([q[1:-1], q[:-2]]), q[2:], rcond=None)[0]
    measured = _damping_and_frequency(np.roots([1.0, -coeffs[0], -coeffs[1]])[0], DT, omega[0])

    def principal(predictor_damping):
        lam = np.linalg.eigvals(_alpha_os_mode_map(omega[0], 0.05, DT, predictor_damping))
        return _damping_and_frequency(lam[np.argmax(np.abs(lam.imag))], DT, omega[0])

    predictor, consistent = principal(True), principal(False)
    print("mode 1 at Δt = 0.02 s (ζ, ω_d/ω): OpenSees", measured, "predictor map", predictor, "α-OS", consistent)
    assert measured == pytest.approx(predictor, rel=1e-3)
    assert abs(measured[0] - consistent[0]) > 1e-3 and abs(measured[1] - consistent[1]) > 1e-2
