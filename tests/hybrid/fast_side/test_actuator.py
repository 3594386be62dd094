"""Tests of the Carrion & Spencer transfer system (rths_ident.hybrid.fast_side.actuator).

Independent references: the Table 2.1 numbers and unit definitions (NIST), the
bare-actuator closed form of digest 003 §3, scipy.signal.lsim and
control.forced_response on the closed-form transfer function, and scipy's solve_ivp
(DOP853, tolerance 1e-12) on the coupled ODE.
"""

from __future__ import annotations

from typing import NamedTuple

import control
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.integrate
import scipy.linalg
import scipy.signal

import rths_ident  # noqa: F401  (float64)
from rths_ident.errors import ParameterError
from rths_ident._params import field_range, params_dataclass, replace
from rths_ident.hybrid.fast_side.actuator import (
    LIMIT_FORCE,
    LIMIT_STROKE,
    INTEGRATORS,
    ActuatorLimitError,
    CarrionSpencerParams,
    ServoHydraulicActuator,
    TransferSystemParams,
    actuator_init,
    actuator_run,
    closed_loop_transfer_function,
    discretise,
    linear_state_matrices,
    phase_delay,
)

FS = 4000.0
DT = 1.0 / FS
COLUMN_STIFFNESS = 1.34e6  # N/m, digest 001 §2.5
COLUMN_MASS = 19.3  # kg


# ---- small element models with the rths_ident.models interface (test doubles) -------
@params_dataclass
class SpringParams:
    stiffness: float = field_range(COLUMN_STIFFNESS, low=0.0, unit="N/m")
    damping: float = field_range(0.0, low=0.0, unit="N·s/m")
    cubic: float = field_range(0.0, low=0.0, unit="N/m³")


class SpringState(NamedTuple):
    displacement: jax.Array


class Spring:
    """R = k x + c v + k3 x³ (memoryless)."""

    @staticmethod
    def init(params):
        return SpringState(jnp.zeros(()))

    @staticmethod
    def step(params, state, inputs, dt):
        x, v = inputs.displacement, inputs.velocity
        return SpringState(x), params.stiffness * x + params.damping * v + params.cubic * x**3


class BilinearState(NamedTuple):
    displacement: jax.Array
    plastic: jax.Array


class Bilinear:
    """Elastic–perfectly-plastic spring (return mapping), a hysteretic test double."""

    @staticmethod
    def init(params):
        return BilinearState(jnp.zeros(()), jnp.zeros(()))

    @staticmethod
    def step(params, state, inputs, dt):
        x = inputs.displacement
        yield_force = 2.0e4
        trial = params.stiffness * (x - state.plastic)
        excess = jnp.maximum(jnp.abs(trial) - yield_force, 0.0)
        plastic = state.plastic + jnp.sign(trial) * excess / params.stiffness
        return BilinearState(x, plastic), params.stiffness * (x - plastic)


def flagship_params(**changes):
    return CarrionSpencerParams.scaled_for(30e3, 0.10, 1.0, specimen_mass=COLUMN_MASS, **changes)


def command_record(n, amplitude=0.01, seed=0):
    """A smooth multi-sine displacement command [m], zero at t = 0."""
    t = np.arange(1, n + 1) * DT
    rng = np.random.default_rng(seed)
    freqs = np.array([0.7, 2.3, 5.1, 11.0])
    phases = rng.uniform(0, 2 * np.pi, freqs.size)
    u = sum(np.sin(2 * np.pi * f * t + p) - np.sin(p) for f, p in zip(freqs, phases))
    return amplitude * u / 4.0


_run = jax.jit(actuator_run)


def simulate(params, model, model_params, commands):
    system = TransferSystemParams(actuator=params, specimen=model_params, specimen_model=model)
    state = actuator_init(system)
    _, out = _run(system, state, jnp.asarray(commands), DT)
    return {k: np.asarray(v) for k, v in out.items()}


# ---- parameters -----------------------------------------------------------------------
def test_table_2_1_in_si_matches_unit_definitions():
    p = CarrionSpencerParams()
    in3, psi = 1.6387064e-5, 6894.757293168  # NIST: 1 in³ [m³], 1 psi [Pa]
    assert p.proportional_gain == pytest.approx(3e-3 / 0.0254, rel=1e-12)
    assert p.servo_valve_time_constant == 0.00332
    assert p.valve_flow_gain == pytest.approx(23.01 * in3 / 1e-3, rel=1e-12)
    assert p.valve_flow_pressure_gain == pytest.approx(1.36e-5 * in3 / psi, rel=1e-9)
    assert p.piston_area == pytest.approx(0.751 * 6.4516e-4, rel=1e-12)
    assert p.leakage_coefficient == pytest.approx(5.89e-6 * in3 / psi, rel=1e-9)
    assert p.fluid_volume == pytest.approx(44.66 * in3, rel=1e-12)  # thesis table, not repo 48.66
    assert p.bulk_modulus == pytest.approx(95958 * psi, rel=1e-9)


def test_bare_actuator_matches_digest_003_closed_form():
    """Massless payload, no specimen: x/u = g/(τ_v s² + s + g), g = 91.92 1/s,
    ω_n = 166.4 rad/s, ζ = 0.905, delay ≈ 1/g = 10.9 ms (digest 003 §3)."""
    p = CarrionSpencerParams(moving_mass=1e-9, payload_damping=0.0)
    assert p.loop_gain() == pytest.approx(91.92, abs=0.01)
    num, den = closed_loop_transfer_function(p, 0.0)
    poles = np.roots(den)
    slow = poles[np.argsort(np.abs(poles))[:2]]  # the two valve/loop poles
    wn = np.sqrt(np.prod(slow).real)
    zeta = -np.sum(slow).real / (2 * wn)
    assert wn == pytest.approx(166.4, rel=2e-3)
    assert zeta == pytest.approx(0.905, rel=2e-3)
    assert phase_delay(p, 0.0, 0.1) == pytest.approx(1 / 91.92, rel=1e-3)


def test_transfer_function_poles_equal_state_matrix_eigenvalues():
    p = flagship_params(integral_gain=2.0, derivative_gain=1e-3)
    a, _, _, _ = linear_state_matrices(p, COLUMN_STIFFNESS)
    _, den = closed_loop_transfer_function(p, COLUMN_STIFFNESS)
    np.testing.assert_allclose(np.sort_complex(np.linalg.eigvals(a)), np.sort_complex(np.roots(den)),
                               rtol=1e-7)


def test_scaled_for_keeps_loop_gain_and_is_stable_across_specimen_stiffness():
    ref = CarrionSpencerParams()
    p = flagship_params()
    assert p.piston_area == pytest.approx(30e3 / (2 / 3 * 3000 * 6894.757293168), rel=1e-9)
    assert p.loop_gain() == pytest.approx(ref.loop_gain(), rel=1e-12)
    assert p.force_limit == pytest.approx(45e3, rel=1e-9)
    assert p.stroke_limit == pytest.approx(0.15) and p.velocity_limit == pytest.approx(1.5)
    for k in (0.0, 0.04 * COLUMN_STIFFNESS, COLUMN_STIFFNESS, 3 * COLUMN_STIFFNESS):
        _, den = closed_loop_transfer_function(p, k)
        assert np.all(np.roots(den).real < 0), k
    # no specimen: the delay of the original bare actuator, 1/g = 10.9 ms
    assert phase_delay(p, 0.0, 0.5) == pytest.approx(1 / ref.loop_gain(), rel=2e-3)


def test_undamped_table_actuator_with_realistic_mass_is_unstable():
    """Why the payload damping default exists: Table 2.1 with c = 0 and a 4 kg payload."""
    p = CarrionSpencerParams(payload_damping=0.0)
    _, den = closed_loop_transfer_function(p, 0.0)
    assert np.max(np.roots(den).real) > 0


@pytest.mark.parametrize("bad", [dict(piston_area=-1.0), dict(bulk_modulus=0.0), dict(substeps=0),
                                 dict(fluid_volume=float("nan")), dict(integrator="euler")])
def test_bad_parameters_raise_parameter_error(bad):
    name = next(iter(bad))
    with pytest.raises(ParameterError, match=name):
        CarrionSpencerParams(**bad)


def test_scaled_for_rejects_nonpositive_demand():
    with pytest.raises(ParameterError, match="peak_force"):
        CarrionSpencerParams.scaled_for(-1.0, 0.1, 1.0)


# ---- time-domain cross-checks ---------------------------------------------------------
#: relative agreement with an exact solution: RK4 (4th order) and the exact linear part
#: with the specimen force linear over the sub-step (2nd order in the force coupling)
TOLERANCE = {"rk4": 1e-6, "exact": 1e-5}


@pytest.mark.parametrize("integrator", INTEGRATORS)
@pytest.mark.parametrize("gains", [dict(), dict(integral_gain=3.0, derivative_gain=2e-4)],
                         ids=["P", "PID"])
def test_linear_simulation_matches_lsim_and_forced_response(gains, integrator):
    p = flagship_params(integrator=integrator, **gains)
    tol = TOLERANCE[integrator]
    n = 1200
    u = command_record(n)
    out = simulate(p, Spring, SpringParams(), u)
    t = np.arange(n + 1) * DT
    # step j holds u[j] over (t_j, t_j+1] and outputs at t_j+1; lsim(interp=False) holds
    # its input sample i over [t_i, t_i+1)
    u_lsim = np.concatenate([u, u[-1:]])
    for output, key in (("displacement", "x_measured"), ("force", "force_measured")):
        num, den = closed_loop_transfer_function(p, COLUMN_STIFFNESS, output=output)
        _, y, _ = scipy.signal.lsim((num, den), u_lsim, t, interp=False)
        ref = y[1:]
        err = np.max(np.abs(out[key] - ref)) / np.max(np.abs(ref))
        assert err < tol, (output, err)
    # python-control: same transfer function, its own discretisation of the ZOH input
    sys = control.tf(*closed_loop_transfer_function(p, COLUMN_STIFFNESS))
    sysd = control.c2d(sys, DT, method="zoh")
    resp = control.forced_response(sysd, T=t, U=u_lsim)
    ref = np.asarray(resp.outputs)[1:]
    assert np.max(np.abs(out["x_measured"] - ref)) / np.max(np.abs(ref)) < tol


def _solve_ivp_reference(p, commands, cubic):
    """Coupled ODE of Eqs. 2.17–2.25 written out again, integrated interval by interval
    (the command is held over each controller period)."""
    kp, ki, kd = p.proportional_gain, p.integral_gain, p.derivative_gain
    kce = p.valve_flow_pressure_gain + p.leakage_coefficient
    hyd = 4 * p.bulk_modulus / p.fluid_volume

    def rhs(_t, y, u):
        x, v, fp, xv, ie = y
        i_c = kp * (u - x) + ki * ie - kd * v
        r = COLUMN_STIFFNESS * x + cubic * x**3
        return [v, (fp - p.payload_damping * v - r) / p.moving_mass,
                hyd * (p.piston_area * p.valve_flow_gain * xv - kce * fp - p.piston_area**2 * v),
                (p.servo_valve_gain * i_c - xv) / p.servo_valve_time_constant, u - x]

    y = np.zeros(5)
    xs = []
    for u in commands:
        sol = scipy.integrate.solve_ivp(rhs, (0.0, DT), y, method="DOP853", rtol=1e-12, atol=1e-16,
                                        args=(u,))
        y = sol.y[:, -1]
        xs.append(y.copy())
    return np.array(xs)


@pytest.mark.parametrize("integrator, order, finest_error", [("rk4", 4.0, 1e-8), ("exact", 2.0, 1e-6)])
def test_nonlinear_spring_converges_to_solve_ivp_with_its_order(integrator, order, finest_error):
    """RK4 converges with order 4; the exact linear part with the specimen force linear
    over each sub-step (predictor–corrector) with order 2."""
    cubic = 5e8  # N/m³: +37 % stiffness at 1 cm
    n = 200
    u = command_record(n, amplitude=0.02, seed=3)
    ref = _solve_ivp_reference(flagship_params(), u, cubic)
    errors = []
    for substeps in (1, 2, 4):
        params = flagship_params(substeps=substeps, integrator=integrator)
        out = simulate(params, Spring, SpringParams(cubic=cubic), u)
        errors.append(np.max(np.abs(out["x_measured"] - ref[:, 0])) / np.max(np.abs(ref[:, 0])))
    assert errors[-1] < finest_error
    measured = np.log2(errors[1] / errors[2])
    assert order - 0.5 < measured < order + 0.5, errors


def test_discretisation_matches_scipy_and_quadrature():
    """Φ, γ_u, γ_R0 against scipy.signal.cont2discrete (ZOH) of linear_state_matrices —
    the actuator's NumPy state-space form with no specimen — and γ_R1 (force ramp)
    against a quadrature of e^{A(h−s)} b_R s/h with scipy's expm."""
    p = flagship_params()
    a, b, _, _ = linear_state_matrices(p, 0.0)
    b_force = np.zeros(5)
    b_force[1] = -1.0 / p.moving_mass  # R pulls on the moving mass (Eq. 2.25)
    exact = discretise(p, DT)
    phi, gamma, *_ = scipy.signal.cont2discrete((a, np.column_stack([b[:, 0], b_force]), np.eye(5),
                                                 np.zeros((5, 2))), DT, method="zoh")
    for mine, ref in ((exact.transition, phi), (exact.command, gamma[:, 0]), (exact.force_held, gamma[:, 1])):
        assert np.max(np.abs(np.asarray(mine) - ref)) <= 1e-12 * np.max(np.abs(ref))
    ramp, _ = scipy.integrate.quad_vec(lambda s: scipy.linalg.expm(a * (DT - s)) @ b_force * s / DT, 0.0, DT,
                                       epsabs=0.0, epsrel=1e-13)
    assert np.max(np.abs(np.asarray(exact.force_ramp) - ramp)) <= 1e-10 * np.max(np.abs(ramp))


def test_exact_and_rk4_agree_on_the_flagship_lugre_column():
    """The two integrators on the flagship's specimen past yield: the same response to
    well below the displacement sensor's noise (1.27 µm ≈ 3e-5 of 5 cm)."""
    from rths_ident.models import ModifiedLuGre

    lp = ModifiedLuGre.from_physical(k=COLUMN_STIFFNESS, Fy=2.24e4).params
    t = np.arange(1, 2001) * DT
    u = 0.05 * np.sin(2 * np.pi * 1.5 * t)
    rk4 = simulate(flagship_params(integrator="rk4", substeps=4), ModifiedLuGre, lp, u)
    exact = simulate(flagship_params(integrator="exact", substeps=1), ModifiedLuGre, lp, u)
    for key in ("x_measured", "force_measured", "restoring_force"):
        err = np.max(np.abs(exact[key] - rk4[key])) / np.max(np.abs(rk4[key]))
        assert err < 2e-5, (key, err)


# ---- JAX behaviour ---------------------------------------------------------------------
def test_hysteretic_element_runs_under_scan_grad_and_vmap():
    p = flagship_params(substeps=1)  # small graph: quick to compile
    sp = SpringParams()
    u = jnp.asarray(command_record(120, amplitude=0.03))

    def final_x(kp):
        params = replace(p, proportional_gain=kp)  # tracers skip validation
        system = TransferSystemParams(actuator=params, specimen=sp, specimen_model=Bilinear)
        state = actuator_init(system)
        _, out = actuator_run(system, state, u, DT)
        return out["x_measured"][-1]

    final_x = jax.jit(final_x)
    kp0 = float(p.proportional_gain)
    grad = jax.grad(final_x)(kp0)
    fd = (final_x(kp0 * (1 + 1e-6)) - final_x(kp0 * (1 - 1e-6))) / (2e-6 * kp0)
    assert np.isfinite(grad) and grad == pytest.approx(float(fd), rel=1e-4)

    system = TransferSystemParams(actuator=p, specimen=sp, specimen_model=Bilinear)
    batched = jax.vmap(lambda c: actuator_run(system, actuator_init(system), c, DT)[1]
                       ["x_measured"])(jnp.stack([u, 2 * u]))
    single = simulate(p, Bilinear, sp, np.asarray(2 * u))["x_measured"]
    np.testing.assert_allclose(np.asarray(batched[1]), single, rtol=1e-12, atol=1e-15)


def test_bilinear_specimen_yields_and_loop_tracks():
    """Driven 4 cm (2.7× yield) the element force is capped at 20 kN and the
    measured force f_p = R + m a + c v stays consistent with the logged R."""
    p = flagship_params()
    t = np.arange(1, 4001) * DT
    u = 0.04 * np.sin(2 * np.pi * 1.0 * t)
    out = simulate(p, Bilinear, SpringParams(), u)
    assert np.max(np.abs(out["restoring_force"])) == pytest.approx(2.0e4, rel=1e-9)
    balance = out["force_measured"] - p.moving_mass * out["a"] - p.payload_damping * out["v"]
    np.testing.assert_allclose(balance, out["restoring_force"], rtol=0, atol=1e-8 * 2e4)
    assert np.max(np.abs(out["x_measured"] - u)) < 0.2 * 0.04


# ---- limits --------------------------------------------------------------------------
def test_stroke_limit_raises_after_logging():
    p = flagship_params()
    act = ServoHydraulicActuator(p, Spring, SpringParams(stiffness=1e5))
    u = np.linspace(0.0, 0.2, 4000)  # ramp to 20 cm, beyond the 15 cm stroke limit
    with pytest.raises(ActuatorLimitError) as info:
        act.run(u, DT)
    err = info.value
    log = err.log[-1]
    x = log["x_measured"]
    first = int(np.flatnonzero(np.abs(x) > p.stroke_limit)[0])
    assert err.limit == "stroke"
    assert err.time == pytest.approx((first + 1) * DT, rel=1e-12)
    assert err.value == pytest.approx(x[first]) and abs(err.value) > p.stroke_limit
    assert log["limit_code"][first] & LIMIT_STROKE
    assert int(act.state.limit_code) & LIMIT_STROKE
    assert float(act.state.limit_time) == pytest.approx(err.time)
    assert "stroke" in str(err) and "t = " in str(err)


def test_force_limit_raises_in_step_mode():
    p = flagship_params(force_limit=1000.0)
    act = ServoHydraulicActuator(p, Spring, SpringParams())
    with pytest.raises(ActuatorLimitError) as info:
        for _ in range(400):
            act.step(0.005, DT)  # 5 mm on 1.34e6 N/m needs 6.7 kN
    assert info.value.limit == "force"
    assert abs(info.value.value) > 1000.0
    assert info.value.log[-1]["limit_code"] & LIMIT_FORCE
    assert len(info.value.log) == round(info.value.time / DT)


def test_no_limit_no_error():
    act = ServoHydraulicActuator(flagship_params(), Spring, SpringParams())
    out = act.run(command_record(400), DT)
    assert not np.any(out["limit_exceeded"]) and int(act.state.limit_code) == 0


def test_fei_delay_of_simulated_plant_matches_transfer_function_phase():
    """τ (Guo et al. FEI, rths_ident.metrics) of the simulated x vs a 1 Hz command equals
    the phase delay of the closed-form transfer function, minus half a sample (the
    command sample u[j] = u(t_{j+1}) is held over the period before t_{j+1})."""
    from rths_ident.metrics import fei_delay

    p = flagship_params()
    t = np.arange(1, 12001) * DT
    u = 0.02 * np.sin(2 * np.pi * 1.0 * t)
    for k in (COLUMN_STIFFNESS, 0.04 * COLUMN_STIFFNESS):
        x = simulate(p, Spring, SpringParams(stiffness=k), u)["x_measured"]
        expected = phase_delay(p, k, 1.0) - DT / 2
        assert fei_delay(u[4000:], x[4000:], 1 / DT) == pytest.approx(expected, rel=1e-3)


def test_limit_violation_message_for_loop_check_callbacks():
    from rths_ident.hybrid.fast_side.actuator import limit_violation_message

    p = flagship_params(velocity_limit=0.01)
    out = simulate(p, Spring, SpringParams(), np.linspace(0.0, 0.02, 400))
    first = int(np.flatnonzero(np.abs(out["v"]) > 0.01)[0])
    message = limit_violation_message(p, out)
    assert message is not None and "velocity" in message
    assert f"t = {(first + 1) * DT:.6g} s" in message
    ok = simulate(flagship_params(), Spring, SpringParams(), np.zeros(10))
    assert limit_violation_message(flagship_params(), ok) is None


# ---- with the library's element models ----------------------------------------------
@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_linear_element_matches_lsim(integrator):
    from rths_ident.models import LinearElement

    element = LinearElement(m=0.0, c=300.0, k=COLUMN_STIFFNESS)
    p = flagship_params(integrator=integrator)
    u = command_record(800, seed=5)
    out = simulate(p, LinearElement, element.params, u)
    num, den = closed_loop_transfer_function(p, COLUMN_STIFFNESS, specimen_damping=300.0)
    _, y, _ = scipy.signal.lsim((num, den), np.concatenate([u, u[-1:]]), np.arange(801) * DT, interp=False)
    assert np.max(np.abs(out["x_measured"] - y[1:])) / np.max(np.abs(y)) < TOLERANCE[integrator]


@pytest.mark.parametrize("integrator", INTEGRATORS)
def test_lugre_column_matches_solve_ivp_of_the_continuous_model(integrator):
    """Flagship column (digest 001: k = 1.34e6 N/m, F_y = 22.4 kN, α = 0.96) driven to
    5 cm (3× yield) through the scaled actuator, against DOP853 on the continuous
    equations with ż = ẋ − (σ0/F_C)|ẋ| z written out here."""
    from rths_ident.models import ModifiedLuGre

    lp = ModifiedLuGre.from_physical(k=COLUMN_STIFFNESS, Fy=2.24e4).params
    p = flagship_params()
    t = np.arange(1, 1601) * DT
    u = 0.05 * np.sin(2 * np.pi * 1.5 * t)
    kce = p.valve_flow_pressure_gain + p.leakage_coefficient
    hyd = 4 * p.bulk_modulus / p.fluid_volume

    def lugre_force(y):
        x, v, z = y[0], y[1], y[5]
        zdot = v - lp.sigma0 / lp.Fc * abs(v) * z
        return lp.sigma0 * z + lp.sigma1 * zdot + lp.sigma2 * v + lp.sigma3 * x, zdot

    def rhs(_t, y, command):
        x, v, fp, xv, _ie, _z = y
        r, zdot = lugre_force(y)
        return [v, (fp - p.payload_damping * v - r) / p.moving_mass,
                hyd * (p.piston_area * p.valve_flow_gain * xv - kce * fp - p.piston_area**2 * v),
                (p.proportional_gain * (command - x) - xv) / p.servo_valve_time_constant, command - x, zdot]

    y = np.zeros(6)
    ref = []
    for command in u:
        y = scipy.integrate.solve_ivp(rhs, (0.0, DT), y, method="DOP853", rtol=1e-11, atol=1e-14,
                                      args=(command,)).y[:, -1]
        ref.append([y[0], y[2], lugre_force(y)[0]])
    ref = np.array(ref)
    out = simulate(flagship_params(integrator=integrator), ModifiedLuGre, lp, u)
    assert np.max(np.abs(ref[:, 2])) > 2.24e4  # it yielded (and hardens)
    for i, key in enumerate(("x_measured", "force_measured", "restoring_force")):
        err = np.max(np.abs(out[key] - ref[:, i])) / np.max(np.abs(ref[:, i]))
        assert err < 1e-5, (key, err)
    assert not np.any(out["limit_exceeded"])


def test_concrete_discretisation_equals_the_traced_one():
    """discretise_concrete (NumPy, SciPy's expm) against discretise (JAX's expm) on the
    flagship actuator, and on a stiffer, faster one: the same to rounding."""
    from rths_ident.hybrid.fast_side.actuator import discretise_concrete

    for p, h in ((flagship_params(), DT), (flagship_params(servo_valve_time_constant=2e-3), DT / 4)):
        traced, concrete = discretise(p, h), discretise_concrete(p, h)
        for name, mine, ref in zip(traced._fields, concrete, traced):
            assert np.asarray(mine).dtype == np.float64
            assert np.max(np.abs(np.asarray(mine) - np.asarray(ref))) <= 1e-13 * np.max(np.abs(np.asarray(ref))), name
