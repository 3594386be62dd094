"""Servo-hydraulic transfer system of Carrion & Spencer (2007) with control–structure
interaction (CSI), coupled to a specimen given by a hysteretic element model.

Source: seed 000 (Mera Muñoz 2022) §2.3.1.1, Eqs. 2.17–2.26, Table 2.1; digest 000 §3.1
and §12.3; digest 003 §3 (the same model and its linear transfer function).

Model (SI units throughout; state ``[x, v, f_p, x_v, ∫e]``)::

    e    = u − x                                       command error            (2.17)
    i_c  = K_p e + K_i ∫e dt − K_d ẋ                   P (default) or PID       (2.17–2.18)
    τ_v ẋ_v + x_v = k_v i_c                            servo-valve              (2.19, ⚠ sign fixed)
    ḟ_p  = (4β/V)(A K_q x_v − (K'_c + C_l) f_p − A² ẋ) piston force             (2.24)
    m ẍ  + c ẋ + R(x, ẋ, history) = f_p                payload + specimen       (2.25)

``R`` is the restoring force of the specimen, from any element model with the
``rths_ident.models`` interface (static ``init(params)`` and
``step(params, state, ElementInputs(x, v), dt) -> (state, force)``). ``m`` is the moving
mass (piston, rod, load cell and the specimen's participating mass) and ``c`` the extra
viscous damping of the payload; the element model supplies only ``R`` — a mass it
carries is not used here, so put it in ``moving_mass``.

PID (Eq. 2.18): the derivative acts on the measurement (``−K_d ẋ``), not on the error,
so a step in the held command gives no derivative kick. The thesis uses P only.

Units. Table 2.1 is in in–lb–s–mA; this module is in SI internally (m, N, Pa, s, A)
and converts the table once, with the named constants below (``INCH``, ``PSI``, ...).
``CarrionSpencerParams.table_2_1()`` (also the field defaults) is the table in SI.

Shape (the project's component shape, docs/hybrid/components.md)::

    params = TransferSystemParams(actuator=CarrionSpencerParams(...), specimen=Model.Params(...),
                                  specimen_model=Model)
    state = actuator_init(params)
    state, outputs = actuator_step(params, state, ActuatorInputs(x_command), dt)

(:func:`ideal_actuator_step` has the same shape). Where the specimen's model class
lives, and why: the step needs the class (its static ``init``/``step``) *and* the
specimen's numbers, and the class must stay static (Python, never traced). It is a
*static field* of :class:`TransferSystemParams`, whose leaves are ``{actuator,
specimen}``: the class goes into the pytree's metadata, so ``jax.jit`` of the plain
module-level :func:`actuator_step` needs no ``static_argnums`` (a different class is a
different tree structure, hence a recompile), ``vmap`` axis specs built by ``tree_map``
keep it, and a batch of specimens is a batch of ``params.specimen`` leaves. The
alternative — a factory binding the class into a closure — would give every model its
own ``step`` function object, so that no module-level ``actuator_step`` of the common
shape would exist and each caller would have to cache the closures to avoid recompiling.

Time integration (choice documented in ``docs/hybrid/actuator.md``). Each call of
:func:`actuator_step` advances one controller period ``dt`` (e.g. 1/4000 s) with the
command ``u`` held (zero-order hold, as a digital controller outputs it). The period is
split into ``substeps`` classical RK4 steps. Inside one RK4 step the element force at
each stage is obtained by calling the element's ``step`` from the state committed at the
start of the sub-step with the stage's trial ``(x, v)`` and the stage's time offset
(``h/2`` or ``h``) — the trial-call semantics of the element interface — and the
element state is committed once, at the end of the sub-step, with the final ``(x, v)``.
The first stage reuses the force committed at the end of the previous sub-step (no
``dt = 0`` element call). For a memoryless element (linear or nonlinear elastic
spring, viscous damper) this is exactly RK4; for a hysteretic element the element's own
update sets the accuracy of ``R`` within a sub-step. RK4 is stable for
``h·|λ_max| < 2.78`` on the real axis; with the scaled flagship actuator the fastest
eigenvalue is ≈ 350 rad/s (h|λ| = 0.09), so one sub-step at 4000 Hz already satisfies it (the
default of 2 leaves a wide margin and agrees with a tolerance-1e-12 ``solve_ivp``
reference to ≈ 7e-10 relative; 1 sub-step gives ≈ 1e-8 at half the cost, see the
tests). The sub-steps are unrolled (static count), not a nested scan.

Limits. Stroke, velocity and piston force are monitored at the end of every step. The
pure step cannot raise (it runs inside ``jax.lax.scan``); it returns a bit code
(``LIMIT_STROKE | LIMIT_VELOCITY | LIMIT_FORCE``) and ``limit_exceeded``, and latches the
first violation (code, time, value) in the state. The integration itself goes on
unchanged — what happens after a trip is the caller's decision. Contract: a loop that
runs the step (fused or step-wise) stores its log first and then calls
:func:`raise_if_limit_exceeded`, which raises :class:`ActuatorLimitError` naming the
limit, the value, the limit value and the time; the thin wrapper
:class:`ServoHydraulicActuator` does exactly this and attaches the log to the error.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import jax.scipy.linalg
import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.registry import Registry
from rths_ident._params import field_range, params_dataclass
from rths_ident.models import ElementInputs

__all__ = [
    "INCH",
    "SQUARE_INCH",
    "CUBIC_INCH",
    "POUND_FORCE",
    "KIP",
    "PSI",
    "MILLIAMPERE",
    "ASSUMED_SUPPLY_PRESSURE",
    "DEFAULT_HYDRAULIC_DAMPING_RATIO",
    "oil_column_damping",
    "REFERENCE_PISTON_MASS",
    "LIMIT_STROKE",
    "LIMIT_VELOCITY",
    "LIMIT_FORCE",
    "CarrionSpencerParams",
    "TransferSystemParams",
    "ActuatorInputs",
    "ActuatorState",
    "ActuatorLimitError",
    "actuator_init",
    "actuator_step",
    "ideal_actuator_step",
    "actuator_run",
    "with_discretisation",
    "discretise",
    "discretise_concrete",
    "linear_part",
    "ActuatorDiscretisation",
    "INTEGRATORS",
    "raise_if_limit_exceeded",
    "limit_violation_message",
    "linear_state_matrices",
    "closed_loop_transfer_function",
    "phase_delay",
    "ServoHydraulicActuator",
]

# --------------------------------------------------------------------------------------
# Unit conversion constants (exact definitions)
# --------------------------------------------------------------------------------------
INCH = 0.0254  # m
SQUARE_INCH = INCH**2  # m²
CUBIC_INCH = INCH**3  # m³
POUND_FORCE = 4.4482216152605  # N
KIP = 1000.0 * POUND_FORCE  # N
PSI = POUND_FORCE / SQUARE_INCH  # Pa (6894.757…)
MILLIAMPERE = 1.0e-3  # A

#: Supply pressure assumed for the force capacity A·p_s [Pa]: 3000 psi, the usual
#: laboratory hydraulic supply. Not given in Table 2.1 (an assumption of this module).
ASSUMED_SUPPLY_PRESSURE = 3000.0 * PSI

#: Piston + rod mass of the reference actuator [kg]: the "Sub. Experimental benchmark"
#: payload ``me = 0.023/1000`` kip·s²/in of the AMBC repository (digest 003 §3),
#: i.e. 0.023 lb·s²/in = 4.03 kg. Not in Table 2.1.
REFERENCE_PISTON_MASS = 0.023 * POUND_FORCE / INCH

#: Damping ratio given to the oil-column mode by the payload damping c (Eq. 2.25) in the
#: defaults and in ``scaled_for``. Eq. 2.24–2.25 with Table 2.1's leakage have almost no
#: damping of the oil column (ζ ≈ 1e-4), and the P loop (g = 92 1/s, τ_v = 3.3 ms) is then
#: unstable for any moving mass above ≈ 0.03 kg (docs/hybrid/actuator.md). c stands for
#: seal friction and the specimen's own damping; 0.2 leaves a wide margin.
DEFAULT_HYDRAULIC_DAMPING_RATIO = 0.2


def oil_column_damping(piston_area, fluid_volume, bulk_modulus, moving_mass,
                       damping_ratio=DEFAULT_HYDRAULIC_DAMPING_RATIO) -> float:
    """Payload damping c = 2 ζ_h √(k_h m) [N·s/m] that gives the oil column (stiffness
    k_h = 4 β A² / V on the moving mass m, no specimen) the damping ratio ζ_h."""
    hydraulic_stiffness = 4.0 * bulk_modulus * piston_area**2 / fluid_volume
    return float(2.0 * damping_ratio * math.sqrt(hydraulic_stiffness * moving_mass))


#: Bits of the limit code (an integer bit mask).
LIMIT_STROKE = 1
LIMIT_VELOCITY = 2
LIMIT_FORCE = 4
_LIMIT_NAMES = ((LIMIT_STROKE, "stroke"), (LIMIT_VELOCITY, "velocity"), (LIMIT_FORCE, "force"))

#: Time integrators of :func:`actuator_step` (module doc, "Time integration").
INTEGRATORS = ("exact", "rk4")


@params_dataclass(static=("substeps", "integrator"))
class CarrionSpencerParams:
    """Carrion & Spencer (2007) servo-hydraulic actuator, SI units.

    Defaults are Table 2.1 of seed 000 converted to SI (the original value and unit is
    given per field). ``fluid_volume`` follows the thesis table (44.66 in³); the
    companion repository (digest 000 §12.3) and the AMBC paper (digest 003 Table 1)
    use 48.66 in³ — pass ``fluid_volume=48.66 * CUBIC_INCH`` to reproduce them.
    Not in Table 2.1 (assumptions, documented in ``docs/hybrid/actuator.md``):
    ``moving_mass`` = 4.03 kg, the repository payload (``REFERENCE_PISTON_MASS``);
    ``payload_damping`` gives the oil column ζ_h = 0.2 (``oil_column_damping``) — without
    it the loop is unstable; ``force_limit`` is A·p_s at the assumed 3000 psi supply;
    ``stroke_limit`` (±2 in) and ``velocity_limit`` (1 m/s) — set them from your
    actuator's data sheet. ``substeps``: RK4 sub-steps per call of ``actuator_step``.
    """

    proportional_gain: float = field_range(
        3.0 * MILLIAMPERE / INCH, low=0.0, low_inclusive=False, unit="A/m",
        doc="K_p, Table 2.1: 3 mA/in (Eq. 2.17)")
    integral_gain: float = field_range(
        0.0, low=0.0, unit="A/(m·s)", doc="K_i of the PID inner loop (Eq. 2.18); 0 = P control")
    derivative_gain: float = field_range(
        0.0, low=0.0, unit="A·s/m", doc="K_d of the PID inner loop (Eq. 2.18), on the measurement")
    servo_valve_time_constant: float = field_range(
        0.00332, low=0.0, low_inclusive=False, unit="s", doc="τ_v, Table 2.1 (Eq. 2.19)")
    servo_valve_gain: float = field_range(
        1.0, low=0.0, low_inclusive=False, unit="-",
        doc="k_v (Eq. 2.19); not in Table 2.1, the repository uses 1 (x_v then has units of current)")
    valve_flow_gain: float = field_range(
        23.01 * CUBIC_INCH / MILLIAMPERE, low=0.0, low_inclusive=False, unit="m³/(s·A)",
        doc="K_q, Table 2.1: 23.01 in³/s/mA (Eq. 2.20)")
    valve_flow_pressure_gain: float = field_range(
        1.36e-5 * CUBIC_INCH / PSI, low=0.0, unit="m³/(s·Pa)",
        doc="K'_c, Table 2.1: 1.36e-5 in³/s/psi (Eq. 2.20)")
    piston_area: float = field_range(
        0.751 * SQUARE_INCH, low=0.0, low_inclusive=False, unit="m²", doc="A, Table 2.1: 0.751 in²")
    leakage_coefficient: float = field_range(
        5.89e-6 * CUBIC_INCH / PSI, low=0.0, unit="m³/(s·Pa)",
        doc="C_l, Table 2.1: 5.89e-6 in³/s/psi (Eq. 2.21)")
    fluid_volume: float = field_range(
        44.66 * CUBIC_INCH, low=0.0, low_inclusive=False, unit="m³",
        doc="V_t, Table 2.1: 44.66 in³ (repository: 48.66 in³)")
    bulk_modulus: float = field_range(
        95958.0 * PSI, low=0.0, low_inclusive=False, unit="Pa", doc="β_e, Table 2.1: 95958 psi")
    moving_mass: float = field_range(
        REFERENCE_PISTON_MASS, low=0.0, low_inclusive=False, unit="kg",
        doc="m in Eq. 2.25: piston + rod + specimen participating mass")
    payload_damping: float = field_range(
        oil_column_damping(0.751 * SQUARE_INCH, 44.66 * CUBIC_INCH, 95958.0 * PSI, REFERENCE_PISTON_MASS),
        low=0.0, unit="N·s/m",
        doc="c in Eq. 2.25: viscous damping besides the element's R (default: ζ_h = 0.2)")
    stroke_limit: float = field_range(
        2.0 * INCH, low=0.0, low_inclusive=False, unit="m", doc="|x| allowed (assumed)")
    velocity_limit: float = field_range(
        1.0, low=0.0, low_inclusive=False, unit="m/s", doc="|ẋ| allowed (assumed)")
    force_limit: float = field_range(
        0.751 * SQUARE_INCH * ASSUMED_SUPPLY_PRESSURE, low=0.0, low_inclusive=False, unit="N",
        doc="|f_p| allowed; default A·p_s at 3000 psi")
    substeps: int = 2
    integrator: str = "exact"

    def __post_init__(self):
        if not isinstance(self.substeps, (int, np.integer)) or int(self.substeps) < 1:
            raise ParameterError(
                f"CarrionSpencerParams.substeps = {self.substeps!r} must be an integer ≥ 1 "
                "(sub-steps per controller period)")
        if self.integrator not in INTEGRATORS:
            raise ParameterError(
                f"CarrionSpencerParams.integrator = {self.integrator!r}: expected one of {', '.join(INTEGRATORS)}")

    # -- named constructors ------------------------------------------------------------
    @classmethod
    def table_2_1(cls, **changes) -> "CarrionSpencerParams":
        """Table 2.1 of seed 000 in SI (the defaults), with optional field changes."""
        return cls(**changes)

    @classmethod
    def scaled_for(
        cls,
        peak_force: float,
        peak_displacement: float,
        peak_velocity: float,
        *,
        specimen_mass: float = 0.0,
        supply_pressure: float = ASSUMED_SUPPLY_PRESSURE,
        force_utilisation: float = 2.0 / 3.0,
        limit_margin: float = 1.5,
        hydraulic_damping_ratio: float = DEFAULT_HYDRAULIC_DAMPING_RATIO,
        reference: "CarrionSpencerParams | None" = None,
        **changes,
    ) -> "CarrionSpencerParams":
        """Table 2.1's actuator resized for a specimen's force demand by hydraulic
        similitude at unchanged time scale.

        Rules (pressures, oil, valve dynamics and controller electronics unchanged):

        1. Area: ``A = peak_force / (force_utilisation · supply_pressure)``; the default
           2/3 is the servo-valve maximum-power point p_L = 2/3 p_s. Area scale
           ``s = A / A_ref``.
        2. Flow gain ``K_q ← s·K_q,ref``: keeps the loop gain ``g = K_p k_v K_q / A``,
           hence the bare-actuator bandwidth and low-frequency delay ≈ 1/g (10.9 ms).
        3. Leakage ``K'_c, C_l ← s·ref``: same leakage flow per unit piston area.
        4. Fluid volume ``V_t = A · max(V_ref/A_ref, 2·stroke_limit)``: the same
           oil-column length V/A as the reference (1.51 m, which includes lines), or the
           swept length if the stroke is longer; the hydraulic stiffness 4βA²/V then
           grows with A, like the specimen's demand.
        5. Moving mass ``= specimen_mass + s·m_piston,ref`` (piston mass ∝ area).
        6. Payload damping ``c = 2 ζ_h √(k_h m)`` with ``ζ_h = hydraulic_damping_ratio``
           (default 0.2; see :data:`DEFAULT_HYDRAULIC_DAMPING_RATIO`: the undamped oil
           column makes the P loop unstable).
        7. Limits: ``force_limit = A·supply_pressure``, ``stroke_limit =
           limit_margin·peak_displacement``, ``velocity_limit = limit_margin·peak_velocity``.

        K_p, K_i, K_d, τ_v, k_v and β are the reference values (same controller
        electronics and oil). ``changes`` override
        any field afterwards.
        """
        ref = cls() if reference is None else reference
        for name, value in (("peak_force", peak_force), ("peak_displacement", peak_displacement),
                            ("peak_velocity", peak_velocity), ("supply_pressure", supply_pressure),
                            ("limit_margin", limit_margin),
                            ("hydraulic_damping_ratio", hydraulic_damping_ratio)):
            if not (np.isfinite(value) and value > 0):
                raise ParameterError(
                    f"CarrionSpencerParams.scaled_for: {name} = {value!r} must be finite and > 0")
        if not (0.0 < force_utilisation <= 1.0):
            raise ParameterError(
                f"CarrionSpencerParams.scaled_for: force_utilisation = {force_utilisation!r} "
                "must be in (0, 1]")
        if not (np.isfinite(specimen_mass) and specimen_mass >= 0):
            raise ParameterError(
                f"CarrionSpencerParams.scaled_for: specimen_mass = {specimen_mass!r} must be ≥ 0 kg")
        area = peak_force / (force_utilisation * supply_pressure)
        scale = area / ref.piston_area
        stroke_limit = limit_margin * peak_displacement
        oil_column_length = max(ref.fluid_volume / ref.piston_area, 2.0 * stroke_limit)
        fluid_volume = area * oil_column_length
        moving_mass = specimen_mass + scale * REFERENCE_PISTON_MASS
        fields = dict(
            proportional_gain=ref.proportional_gain,
            integral_gain=ref.integral_gain,
            derivative_gain=ref.derivative_gain,
            servo_valve_time_constant=ref.servo_valve_time_constant,
            servo_valve_gain=ref.servo_valve_gain,
            valve_flow_gain=scale * ref.valve_flow_gain,
            valve_flow_pressure_gain=scale * ref.valve_flow_pressure_gain,
            piston_area=area,
            leakage_coefficient=scale * ref.leakage_coefficient,
            fluid_volume=fluid_volume,
            bulk_modulus=ref.bulk_modulus,
            moving_mass=moving_mass,
            payload_damping=oil_column_damping(area, fluid_volume, ref.bulk_modulus, moving_mass,
                                               hydraulic_damping_ratio),
            stroke_limit=stroke_limit,
            velocity_limit=limit_margin * peak_velocity,
            force_limit=area * supply_pressure,
            substeps=ref.substeps,
            integrator=ref.integrator,
        )
        fields.update(changes)
        return cls(**fields)

    # -- derived quantities (plain floats; for reports and docs) -----------------------
    def loop_gain(self) -> float:
        """g = K_p k_v K_q / A [1/s]; the bare actuator's low-frequency delay is ≈ 1/g."""
        return float(self.proportional_gain * self.servo_valve_gain * self.valve_flow_gain / self.piston_area)

    def hydraulic_stiffness(self) -> float:
        """Oil-column stiffness 4 β A² / V [N/m]."""
        return float(4.0 * self.bulk_modulus * self.piston_area**2 / self.fluid_volume)


@params_dataclass(static=("specimen_model",))
class TransferSystemParams:
    """The parameters :func:`actuator_step` sees: the actuator, the specimen it drives
    and the specimen's model class (static: pytree metadata, never traced; module doc).

    ``actuator``: :class:`CarrionSpencerParams`; ``specimen``: the model's Params
    (leaves, e.g. batched for ``vmap``); ``specimen_model``: a class of
    :mod:`rths_ident.models` (static ``init(params)`` and
    ``step(params, state, ElementInputs(x, v), dt) -> (state, force)``);
    ``discretisation``: :func:`discretise` ``(actuator, dt)`` computed once by a caller
    that runs many steps of one ``dt`` (the exact integrator then skips the matrix
    exponential inside the step); None: the step computes it itself.
    """

    actuator: Any
    specimen: Any
    specimen_model: Any
    discretisation: Any = None  # ActuatorDiscretisation of actuator for the step's dt, or None

    def __post_init__(self):
        if not isinstance(self.actuator, CarrionSpencerParams):
            raise TypeError(f"TransferSystemParams.actuator must be CarrionSpencerParams; "
                            f"got {type(self.actuator).__name__}")
        if not (callable(getattr(self.specimen_model, "init", None))
                and callable(getattr(self.specimen_model, "step", None))):
            raise TypeError(f"TransferSystemParams.specimen_model must be a model class with static init and "
                            f"step; got {self.specimen_model!r}")


class ActuatorInputs(NamedTuple):
    """One controller period of the transfer system. A record (for ``lax.scan``) is the
    same NamedTuple with a leading time axis.

    command: x_c, the displacement command held over the period [m].
    """

    command: jax.Array


class ActuatorState(NamedTuple):
    """What evolves in the transfer system (SI units)."""

    displacement: jax.Array  # x [m]
    velocity: jax.Array  # ẋ [m/s]
    piston_force: jax.Array  # f_p [N]
    valve_opening: jax.Array  # x_v [A] (k_v = 1: spool position in current units)
    error_integral: jax.Array  # ∫(u − x) dt [m·s] (PID only)
    restoring_force: jax.Array  # R committed at the end of the last step [N]
    specimen_state: Any  # the element model's committed state
    time: jax.Array  # elapsed time [s]
    limit_code: jax.Array  # int32 bit mask of the FIRST violation (latched), 0 = none
    limit_time: jax.Array  # time of the first violation [s] (nan if none)
    limit_value: jax.Array  # value of the violated quantity then (nan if none)


class ActuatorLimitError(RuntimeError):
    """A stroke, velocity or force limit was exceeded; the test was stopped.

    Attributes: ``limit`` ("stroke" | "velocity" | "force"), ``value`` (the offending
    value, SI), ``limit_value`` (the allowed magnitude), ``time`` [s], ``log`` (whatever
    the raiser had logged up to and including the failing step, or None).
    """

    def __init__(self, limit: str, value: float, limit_value: float, time: float, log: Any = None):
        units = {"stroke": "m", "velocity": "m/s", "force": "N"}[limit]
        super().__init__(
            f"actuator {limit} limit exceeded at t = {time:.6g} s: |{value:.6g}| {units} > "
            f"{limit_value:.6g} {units}; the test was stopped (log attached)")
        self.limit = limit
        self.value = value
        self.limit_value = limit_value
        self.time = time
        self.log = log


# --------------------------------------------------------------------------------------
# Functional core
# --------------------------------------------------------------------------------------
def actuator_init(params: TransferSystemParams) -> ActuatorState:
    """At rest, unloaded: x = ẋ = f_p = x_v = 0; the specimen in its initial state with
    zero restoring force (a virgin element)."""
    zero = jnp.zeros((), dtype=jnp.float64)
    return ActuatorState(
        displacement=zero,
        velocity=zero,
        piston_force=zero,
        valve_opening=zero,
        error_integral=zero,
        restoring_force=zero,
        specimen_state=params.specimen_model.init(params.specimen),
        time=zero,
        limit_code=jnp.zeros((), dtype=jnp.int32),
        limit_time=jnp.full((), jnp.nan),
        limit_value=jnp.full((), jnp.nan),
    )


def _valve_current(params, command, displacement, velocity, error_integral):
    """i_c = K_p (u − x) + K_i ∫e − K_d ẋ  [A]  (Eqs. 2.17–2.18)."""
    return (params.proportional_gain * (command - displacement)
            + params.integral_gain * error_integral
            - params.derivative_gain * velocity)


def _derivatives(params, command, y, restoring_force):
    """Time derivative of y = [x, ẋ, f_p, x_v, ∫e] for a given element force R."""
    x, v, fp, xv, ie = y[0], y[1], y[2], y[3], y[4]
    current = _valve_current(params, command, x, v, ie)
    dxv = (params.servo_valve_gain * current - xv) / params.servo_valve_time_constant
    leakage = params.valve_flow_pressure_gain + params.leakage_coefficient
    dfp = (4.0 * params.bulk_modulus / params.fluid_volume) * (
        params.piston_area * params.valve_flow_gain * xv - leakage * fp - params.piston_area**2 * v)
    dv = (fp - params.payload_damping * v - restoring_force) / params.moving_mass
    return jnp.stack([v, dv, dfp, dxv, command - x])


class ActuatorDiscretisation(NamedTuple):
    """The actuator's linear part integrated exactly over one sub-step h (module doc,
    "Time integration"): ``y(h) = Φ y(0) + γ_u u + γ_R0 R(0) + γ_R1 (R(h) − R(0))`` for a
    command u held and a specimen force R varying linearly over the sub-step."""

    transition: jax.Array  # Φ = e^{A h} (5, 5)
    command: jax.Array  # γ_u = ∫₀ʰ e^{Aτ} dτ b_u (5,) [per m of command]
    force_held: jax.Array  # γ_R0 = ∫₀ʰ e^{Aτ} dτ b_R (5,) [per N held]
    force_ramp: jax.Array  # γ_R1 = ∫₀ʰ e^{A(h−s)} b_R s/h ds (5,) [per N of rise over h]


def linear_part(params: CarrionSpencerParams):
    """``(A (5, 5), b_u (5,), b_R (5,))`` of ẏ = A y + b_u u + b_R R, the equations of
    :func:`_derivatives` (Eqs. 2.17–2.25) with the specimen force R as an input. JAX,
    traceable (``params`` leaves may be tracers)."""
    kce = params.valve_flow_pressure_gain + params.leakage_coefficient
    hyd = 4.0 * params.bulk_modulus / params.fluid_volume
    m, tv, kv = params.moving_mass, params.servo_valve_time_constant, params.servo_valve_gain
    kp, ki, kd = params.proportional_gain, params.integral_gain, params.derivative_gain
    zero = jnp.zeros((), jnp.float64)

    def row(*entries):
        return jnp.stack([zero + e for e in entries])

    a = jnp.stack([
        row(0.0, 1.0, 0.0, 0.0, 0.0),
        row(0.0, -params.payload_damping / m, 1.0 / m, 0.0, 0.0),
        row(0.0, -hyd * params.piston_area**2, -hyd * kce, hyd * params.piston_area * params.valve_flow_gain, 0.0),
        row(-kv * kp / tv, -kv * kd / tv, 0.0, -1.0 / tv, kv * ki / tv),
        row(-1.0, 0.0, 0.0, 0.0, 0.0),
    ])
    b_command = row(0.0, 0.0, 0.0, kv * kp / tv, 1.0)
    b_force = row(0.0, -1.0 / m, 0.0, 0.0, 0.0)
    return a, b_command, b_force


def discretise(params: CarrionSpencerParams, h) -> ActuatorDiscretisation:
    """The exact discretisation of :func:`linear_part` over a sub-step ``h`` [s]: one
    matrix exponential of the augmented matrix (Van Loan)::

        expm([[A, B, 0], [0, 0, I/h], [0, 0, 0]] h) = [[Φ, Γ0, Γ1], [0, I, I], [0, 0, I]]

    with B = [b_u, b_R]: Γ0 = ∫₀ʰ e^{Aτ} dτ B (inputs held), Γ1 = ∫₀ʰ e^{A(h−s)} B s/h ds
    (inputs rising linearly from 0 to 1). The states are scaled to similar magnitudes
    first (x in cm, f_p in kN, …) so the exponential's scaling and squaring works on a
    balanced matrix; the result is scaled back. JAX, traceable; for concrete parameters
    at set-up :func:`discretise_concrete` gives the same without compiling a program."""
    a, b_command, b_force = linear_part(params)
    # state scales: 1 cm, 1 m/s, the force capacity, the valve opening of a 1 cm error, 1 cm·s
    scale = jnp.stack([jnp.asarray(1e-2, jnp.float64), jnp.ones((), jnp.float64),
                       jnp.asarray(params.force_limit, jnp.float64),
                       1e-2 * params.servo_valve_gain * params.proportional_gain,
                       jnp.asarray(1e-2, jnp.float64)])
    return ActuatorDiscretisation(*_van_loan(jnp, jax.scipy.linalg.expm, a, b_command, b_force, scale,
                                             jnp.asarray(h, jnp.float64)))


def discretise_concrete(params: CarrionSpencerParams, h: float) -> ActuatorDiscretisation:
    """:func:`discretise` for concrete parameters, evaluated with NumPy and SciPy's
    ``expm`` (the same augmented matrix and scaling; the two agree to rounding, tested).
    A run calls this once at set-up: JAX's ``expm`` would first compile a program of
    its own (≈ 1 s of CPU on every first run). The parts come back as JAX arrays."""
    import scipy.linalg  # noqa: PLC0415  (light; only the set-up needs it)

    a, b, _, _ = linear_state_matrices(params, 0.0)
    b_force = np.zeros(5)
    b_force[1] = -1.0 / float(params.moving_mass)  # R pulls on the moving mass (Eq. 2.25)
    scale = np.array([1e-2, 1.0, float(params.force_limit),
                      1e-2 * float(params.servo_valve_gain) * float(params.proportional_gain), 1e-2])
    parts = _van_loan(np, scipy.linalg.expm, a, b[:, 0], b_force, scale, float(h))
    return ActuatorDiscretisation(*(jax.device_put(np.asarray(part, np.float64)) for part in parts))


def _van_loan(xp, expm, a, b_command, b_force, scale, h) -> tuple:
    """(Φ, γ_u, γ_R0, γ_R1) of :func:`discretise` with array module ``xp`` (NumPy or
    jax.numpy) and its ``expm``; ``scale`` (5,): the states' scales."""
    a_scaled = a * scale[None, :] / scale[:, None]
    b_scaled = xp.stack([b_command / scale, b_force / scale], axis=1)
    zeros = xp.zeros((9, 9), a_scaled.dtype)
    augmented = xp.block([
        [a_scaled, b_scaled, zeros[:5, :2]],
        [zeros[:2, :5], zeros[:2, :2], xp.eye(2, dtype=a_scaled.dtype) / h],
        [zeros[:2, :5], zeros[:2, :2], zeros[:2, :2]],
    ])
    exponential = expm(augmented * h)
    transition = exponential[:5, :5] * scale[:, None] / scale[None, :]
    held = exponential[:5, 5:7] * scale[:, None]
    ramp = exponential[:5, 7:9] * scale[:, None]
    return transition, held[:, 0], held[:, 1], ramp[:, 1]


discretise_jit = jax.jit(discretise)


def _exact_substeps(params, specimen_model, specimen_params, discretisation, command, h, carry, substeps):
    """``substeps`` sub-steps of the exact linear part with the specimen force inside
    (predictor–corrector on a linear R over the sub-step; module doc)."""
    transition, gamma_u, gamma_held, gamma_ramp = discretisation
    for _ in range(substeps):  # static count: unrolled
        y, specimen_state, force_start = carry
        # Φ y written out as scalar sums (elementwise work XLA fuses; no dot call)
        y_held = [sum(transition[i, j] * y[j] for j in range(5)) + gamma_u[i] * command
                  + gamma_held[i] * force_start for i in range(5)]
        _, force_trial = specimen_model.step(specimen_params, specimen_state, ElementInputs(y_held[0], y_held[1]), h)
        rise = force_trial - force_start
        y_new = jnp.stack([y_held[i] + gamma_ramp[i] * rise for i in range(5)])
        specimen_new, force_new = specimen_model.step(specimen_params, specimen_state,
                                                      ElementInputs(y_new[0], y_new[1]), h)
        carry = (y_new, specimen_new, jnp.asarray(force_new, dtype=jnp.float64))
    return carry


def _rk4_substeps(params, specimen_model, specimen_params, command, h, carry, substeps):
    """``substeps`` classical RK4 sub-steps of the whole ODE (module doc)."""

    def substep(carry):
        y, specimen_state, force_start = carry
        k1 = _derivatives(params, command, y, force_start)
        y2 = y + 0.5 * h * k1
        _, force2 = specimen_model.step(specimen_params, specimen_state, ElementInputs(y2[0], y2[1]), 0.5 * h)
        k2 = _derivatives(params, command, y2, force2)
        y3 = y + 0.5 * h * k2
        _, force3 = specimen_model.step(specimen_params, specimen_state, ElementInputs(y3[0], y3[1]), 0.5 * h)
        k3 = _derivatives(params, command, y3, force3)
        y4 = y + h * k3
        _, force4 = specimen_model.step(specimen_params, specimen_state, ElementInputs(y4[0], y4[1]), h)
        k4 = _derivatives(params, command, y4, force4)
        y_new = y + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        specimen_new, force_new = specimen_model.step(specimen_params, specimen_state,
                                                      ElementInputs(y_new[0], y_new[1]), h)
        return y_new, specimen_new, jnp.asarray(force_new, dtype=jnp.float64)

    for _ in range(substeps):  # static count: unrolled (cheaper than a nested scan)
        carry = substep(carry)
    return carry


def actuator_step(params: TransferSystemParams, state: ActuatorState, inputs: ActuatorInputs, dt):
    """Advance one controller period ``dt`` [s] with the command ``inputs.command`` [m] held.

    Returns ``(state, outputs)``; ``outputs`` (values at the end of the step):

    * ``x_measured`` [m] — actuator displacement (LVDT, before sensor noise),
    * ``v`` [m/s], ``a`` [m/s²] — velocity and acceleration,
    * ``force_measured`` [N] — load cell = piston force f_p (before sensor noise),
    * ``restoring_force`` [N] — the element's R,
    * ``valve_current`` [A] — i_c,
    * ``time`` [s] — time at the end of the step,
    * ``limit_code`` (int32 bit mask, this step) and ``limit_exceeded`` (bool).

    Pure and JAX-traceable; ``params.specimen_model`` is a static Python class.
    """
    system = params
    specimen_model, specimen_params = params.specimen_model, params.specimen
    params = params.actuator  # the actuator's numbers from here on
    command = jnp.asarray(inputs.command, dtype=jnp.float64)
    dt = jnp.asarray(dt, dtype=jnp.float64)
    h = dt / params.substeps
    y0 = jnp.stack([state.displacement, state.velocity, state.piston_force, state.valve_opening,
                    state.error_integral])
    carry = (y0, state.specimen_state, state.restoring_force)
    if params.integrator == "exact":  # static
        discretisation = system.discretisation if system.discretisation is not None else discretise(params, h)
        carry = _exact_substeps(params, specimen_model, specimen_params, discretisation, command, h, carry,
                                params.substeps)
    else:
        carry = _rk4_substeps(params, specimen_model, specimen_params, command, h, carry, params.substeps)
    y, specimen_state, restoring_force = carry

    x, v, fp, xv, ie = y[0], y[1], y[2], y[3], y[4]
    accel = (fp - params.payload_damping * v - restoring_force) / params.moving_mass
    current = _valve_current(params, command, x, v, ie)
    time = state.time + dt

    stroke_bad = jnp.abs(x) > params.stroke_limit
    velocity_bad = jnp.abs(v) > params.velocity_limit
    force_bad = jnp.abs(fp) > params.force_limit
    code = (LIMIT_STROKE * stroke_bad.astype(jnp.int32) + LIMIT_VELOCITY * velocity_bad.astype(jnp.int32)
            + LIMIT_FORCE * force_bad.astype(jnp.int32))
    offending = jnp.where(stroke_bad, x, jnp.where(velocity_bad, v, fp))
    first = (state.limit_code == 0) & (code != 0)
    new_state = ActuatorState(
        displacement=x,
        velocity=v,
        piston_force=fp,
        valve_opening=xv,
        error_integral=ie,
        restoring_force=restoring_force,
        specimen_state=specimen_state,
        time=time,
        limit_code=jnp.where(first, code, state.limit_code).astype(jnp.int32),
        limit_time=jnp.where(first, time, state.limit_time),
        limit_value=jnp.where(first, offending, state.limit_value),
    )
    outputs = {
        "x_measured": x,
        "v": v,
        "a": accel,
        "force_measured": fp,
        "restoring_force": restoring_force,
        "valve_current": current,
        "time": time,
        "limit_code": code,
        "limit_exceeded": code != 0,
    }
    return new_state, outputs


def ideal_actuator_step(params: TransferSystemParams, state: ActuatorState, inputs: ActuatorInputs, dt):
    """A perfect transfer system: the specimen is at ``inputs.command`` at the end of the
    step (velocity by backward difference, acceleration likewise). Same shape, state and
    outputs as :func:`actuator_step` (``params.actuator`` only supplies the limits), so a
    loop can swap the two — e.g. to reproduce seed 001's virtual hybrid simulation, which
    has no actuator.
    """
    specimen_model, specimen_params = params.specimen_model, params.specimen
    params = params.actuator  # the actuator's numbers from here on
    x = jnp.asarray(inputs.command, dtype=jnp.float64)
    dt = jnp.asarray(dt, dtype=jnp.float64)
    v = (x - state.displacement) / dt
    accel = (v - state.velocity) / dt
    specimen_state, restoring_force = specimen_model.step(specimen_params, state.specimen_state,
                                                          ElementInputs(x, v), dt)
    restoring_force = jnp.asarray(restoring_force, dtype=jnp.float64)
    time = state.time + dt
    stroke_bad = jnp.abs(x) > params.stroke_limit
    velocity_bad = jnp.abs(v) > params.velocity_limit
    code = LIMIT_STROKE * stroke_bad.astype(jnp.int32) + LIMIT_VELOCITY * velocity_bad.astype(jnp.int32)
    first = (state.limit_code == 0) & (code != 0)
    new_state = state._replace(
        displacement=x, velocity=v, piston_force=restoring_force, restoring_force=restoring_force,
        specimen_state=specimen_state, time=time,
        limit_code=jnp.where(first, code, state.limit_code).astype(jnp.int32),
        limit_time=jnp.where(first, time, state.limit_time),
        limit_value=jnp.where(first, jnp.where(stroke_bad, x, v), state.limit_value),
    )
    outputs = {"x_measured": x, "v": v, "a": accel, "force_measured": restoring_force,
               "restoring_force": restoring_force, "valve_current": jnp.zeros(()), "time": time,
               "limit_code": code, "limit_exceeded": code != 0}
    return new_state, outputs


def with_discretisation(params: TransferSystemParams, dt) -> TransferSystemParams:
    """``params`` with the exact integrator's discretisation for controller period ``dt``
    filled in (unchanged for RK4 or when already given): call it once before a loop of
    :func:`actuator_step` calls, so the matrix exponential is not taken in every step."""
    if params.actuator.integrator != "exact" or params.discretisation is not None:
        return params
    return dataclasses.replace(params, discretisation=discretise(params.actuator, dt / params.actuator.substeps))


def actuator_run(params: TransferSystemParams, state: ActuatorState, x_commands, dt):
    """``lax.scan`` of :func:`actuator_step` over a command record (one per period).
    Returns the final state and the outputs stacked along the first axis."""

    params = with_discretisation(params, dt)  # once, not in every step

    def body(s, inputs):
        return actuator_step(params, s, inputs, dt)

    return jax.lax.scan(body, state, ActuatorInputs(jnp.asarray(x_commands, dtype=jnp.float64)))


def raise_if_limit_exceeded(params: CarrionSpencerParams, outputs: dict, log: Any = None) -> None:
    """Raise :class:`ActuatorLimitError` for the first step whose ``limit_code`` is set.

    ``outputs``: the dict returned by :func:`actuator_step` (one step) or stacked by
    :func:`actuator_run` (any leading shape). Call it *after* storing your log; ``log``
    is attached to the error. Does nothing when no limit was exceeded.
    """
    codes = np.asarray(outputs["limit_code"]).ravel()
    hits = np.flatnonzero(codes)
    if hits.size == 0:
        return
    i = int(hits[0])
    code = int(codes[i])
    name = next(n for bit, n in _LIMIT_NAMES if code & bit)
    key, limit_value = {"stroke": ("x_measured", params.stroke_limit),
                        "velocity": ("v", params.velocity_limit),
                        "force": ("force_measured", params.force_limit)}[name]
    value = float(np.asarray(outputs[key]).ravel()[i])
    time = float(np.asarray(outputs["time"]).ravel()[i])
    raise ActuatorLimitError(name, value, float(limit_value), time, log)


def limit_violation_message(params: CarrionSpencerParams, outputs: dict) -> str | None:
    """The :class:`ActuatorLimitError` message for ``outputs``, or None if no limit was
    exceeded — for loop ``check`` callbacks that abort with a message (the step-wise
    engine's ``LoopAborted`` then carries the logs)."""
    try:
        raise_if_limit_exceeded(params, outputs)
    except ActuatorLimitError as err:
        return str(err)
    return None


# --------------------------------------------------------------------------------------
# Linear analysis (linear specimen R = k x + c_s ẋ)
# --------------------------------------------------------------------------------------
def linear_state_matrices(params: CarrionSpencerParams, specimen_stiffness: float,
                          specimen_damping: float = 0.0):
    """State-space ``(A, B, C, D)`` of actuator + linear specimen (NumPy, floats).

    State ``[x, ẋ, f_p, x_v, ∫e]``, input the command u [m], outputs ``[x, f_p]``.
    Used for eigenvalues (step-size choice) and as a second form of the model; the
    independent check is :func:`closed_loop_transfer_function`.
    """
    p = {k: float(getattr(params, k)) for k in (
        "proportional_gain", "integral_gain", "derivative_gain", "servo_valve_time_constant",
        "servo_valve_gain", "valve_flow_gain", "valve_flow_pressure_gain", "piston_area",
        "leakage_coefficient", "fluid_volume", "bulk_modulus", "moving_mass", "payload_damping")}
    kp, ki, kd = p["proportional_gain"], p["integral_gain"], p["derivative_gain"]
    tv, kv = p["servo_valve_time_constant"], p["servo_valve_gain"]
    area, kq = p["piston_area"], p["valve_flow_gain"]
    kce = p["valve_flow_pressure_gain"] + p["leakage_coefficient"]
    hyd = 4.0 * p["bulk_modulus"] / p["fluid_volume"]
    m, c = p["moving_mass"], p["payload_damping"] + specimen_damping
    k = specimen_stiffness
    a = np.array([
        [0.0, 1.0, 0.0, 0.0, 0.0],
        [-k / m, -c / m, 1.0 / m, 0.0, 0.0],
        [0.0, -hyd * area**2, -hyd * kce, hyd * area * kq, 0.0],
        [-kv * kp / tv, -kv * kd / tv, 0.0, -1.0 / tv, kv * ki / tv],
        [-1.0, 0.0, 0.0, 0.0, 0.0],
    ])
    b = np.array([[0.0], [0.0], [0.0], [kv * kp / tv], [1.0]])
    cmat = np.array([[1.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0, 0.0]])
    d = np.zeros((2, 1))
    return a, b, cmat, d


def closed_loop_transfer_function(params: CarrionSpencerParams, specimen_stiffness: float,
                                  specimen_damping: float = 0.0, output: str = "displacement"):
    """``(num, den)`` polynomial coefficients (highest power first) of x/u or f_p/u.

    Built from the closed form of digest 003 §3 (Carrion–Spencer / Phillips–Spencer),
    independently of the ODE right-hand side used by :func:`actuator_step`::

        G(s) = k_v K_q A / ((τ_v s + 1)[A² s + (K_ce + V s/(4β))(m s² + c s + k)])
        x/u  = G (K_p + K_i/s) / (1 + G (K_p + K_i/s + K_d s))
        f_p/u = (m s² + c s + k) · x/u

    with ``K_ce = K'_c + C_l`` and ``c = payload_damping + specimen_damping``. When
    K_i = 0 the common factor s is cancelled analytically.
    """
    if output not in ("displacement", "force"):
        raise ValueError(f"output must be 'displacement' or 'force'; got {output!r}")
    kp, ki, kd = float(params.proportional_gain), float(params.integral_gain), float(params.derivative_gain)
    tv, kv = float(params.servo_valve_time_constant), float(params.servo_valve_gain)
    area, kq = float(params.piston_area), float(params.valve_flow_gain)
    kce = float(params.valve_flow_pressure_gain) + float(params.leakage_coefficient)
    compliance = float(params.fluid_volume) / (4.0 * float(params.bulk_modulus))
    payload = np.array([float(params.moving_mass), float(params.payload_damping) + specimen_damping,
                        specimen_stiffness])
    hydraulics = np.polyadd(np.array([area**2, 0.0]), np.polymul([compliance, kce], payload))
    plant_den = np.polymul([tv, 1.0], hydraulics)  # (τ_v s + 1)[A² s + (K_ce + V s/4β)(m s² + c s + k)]
    plant_num = kv * kq * area
    if ki == 0.0:
        num = np.array([plant_num * kp])
        den = np.polyadd(plant_den, plant_num * np.array([kd, kp]))
    else:
        num = plant_num * np.array([kp, ki])
        den = np.polyadd(np.polymul(plant_den, [1.0, 0.0]), plant_num * np.array([kd, kp, ki]))
    if output == "force":
        num = np.polymul(num, payload)
    return num, den


def phase_delay(params: CarrionSpencerParams, specimen_stiffness: float, frequency_hz: float,
                specimen_damping: float = 0.0) -> float:
    """Phase delay −∠H(jω)/ω [s] of x/u at ``frequency_hz`` (H from
    :func:`closed_loop_transfer_function`). At low frequency this is the delay an RTHS
    compensator has to remove."""
    num, den = closed_loop_transfer_function(params, specimen_stiffness, specimen_damping)
    w = 2.0 * math.pi * frequency_hz
    h = np.polyval(num, 1j * w) / np.polyval(den, 1j * w)
    return float(-np.angle(h) / w)


# --------------------------------------------------------------------------------------
# Thin stateful wrapper
# --------------------------------------------------------------------------------------
_step_jit = jax.jit(actuator_step)
_run_jit = jax.jit(actuator_run)


class ServoHydraulicActuator:
    """Stateful wrapper: holds params, specimen and state; no maths of its own.

    ``params`` is the actuator's :class:`CarrionSpencerParams`; ``system_params`` the
    :class:`TransferSystemParams` the pure functions take. ``step(x_command, dt)`` and
    ``run(x_commands, dt)`` keep every output in ``self.log`` (a list of dicts of NumPy
    arrays) *before* checking the limits; if a limit was exceeded they raise
    :class:`ActuatorLimitError` with the log attached.
    """

    def __init__(self, params: CarrionSpencerParams, specimen_model, specimen_params):
        if not isinstance(params, CarrionSpencerParams):
            raise TypeError(f"params must be CarrionSpencerParams; got {type(params).__name__}")
        self.params = params
        self.specimen_model = specimen_model
        self.specimen_params = specimen_params
        self.system_params = TransferSystemParams(actuator=params, specimen=specimen_params,
                                                  specimen_model=specimen_model)
        self.reset()

    def reset(self) -> None:
        self.state = actuator_init(self.system_params)
        self.log: list[dict] = []

    def _record_and_check(self, outputs) -> dict:
        out = {k: np.asarray(v) for k, v in outputs.items()}
        self.log.append(out)
        raise_if_limit_exceeded(self.params, out, log=self.log)
        return out

    def step(self, x_command: float, dt: float) -> dict:
        """One controller period; returns the outputs as NumPy scalars."""
        self.state, outputs = _step_jit(self.system_params, self.state, ActuatorInputs(x_command), dt)
        return self._record_and_check(outputs)

    def run(self, x_commands, dt: float) -> dict:
        """A whole command record (one jitted scan); returns stacked outputs."""
        self.state, outputs = _run_jit(self.system_params, self.state, np.asarray(x_commands, dtype=float), dt)
        return self._record_and_check(outputs)


class TransferSystem(NamedTuple):
    """One registered transfer system: its step (:func:`actuator_step`'s shape)."""

    description: str
    step: Callable


#: transfer systems by name (test files, ``run --transfer-system``)
TRANSFER_SYSTEMS: Registry[TransferSystem] = Registry("transfer system", {
    "carrion-spencer": TransferSystem(
        "servo-hydraulic actuator with control–structure interaction (Carrion & Spencer; seed 000 Table 2.1)",
        actuator_step),
    "ideal": TransferSystem("a perfect transfer system: the specimen is at the command (seed 001's virtual test)",
                            ideal_actuator_step),
})
