"""Joint state–parameter UKF identification of a Bouc–Wen SDOF specimen.

Filter model (continuous time; seed 001 §2.1.2, Eq. 2.3 with the standard Wen signs,
see :mod:`rths_ident.models.bouc_wen` for why)::

    m ẍ + c ẋ + F = p(t)                    equation of motion of the SDOF
    F  = α k x + (1 − α) k z                 restoring force [N]
    ż  = A ẋ − β |ẋ| |z|^{n−1} z − γ ẋ |z|^n hysteretic displacement [m/s]
    θ̇  = 0                                   θ = (k, α, β, γ), random walk through Q

Augmented state ``s = [x, v, z, k, α, β, γ]`` (units m, m/s, m, N/m, -, 1/m^n,
1/m^n). Known: mass m [kg], viscous damping c [N·s/m], the external force p [N]
sampled at the filter rate (for a base excitation, p = −m·a_g), A (fixed, usually 1)
and the exponent n (fixed). The transition over one sample is ``substeps`` classical
Runge–Kutta (RK4) steps with p interpolated linearly between the two samples.

Measured channels (any subset, in this order of the measurement vector as given):
``"displacement"`` x [m], ``"velocity"`` v [m/s], ``"acceleration"`` ẍ = (p − c v −
F)/m [m/s²], ``"restoring_force"`` F [N].

Physical bounds (defaults; enforced by sigma-point clipping, see
:mod:`rths_ident.estimators.ukf`): k ≥ 0, 0 ≤ α ≤ 1, β ≥ 0; γ is free (β + γ > 0 is
not a box constraint and is not enforced).

The hysteresis equations are :class:`rths_ident.models.BoucWen`'s own (``zdot``,
``force``); what this module adds is the force-driven SDOF around them (states x, v; RK4
in time). That is a different problem from the displacement-driven specimen of the RTHS
loop (x imposed, R measured), which the generic joint UKF identifies
(:mod:`rths_ident.estimators.joint_ukf_identifier`): here the inputs are the external
force and a measurement vector, so this identifier has its own inputs
(:class:`BoucWenSDOFInputs`) and is not an online identifier of the loop; its functions
have the same shape.

Process noise Q = diag(``process_std``²) per sample (filterpy's convention), whatever
the step's Δt. ``converged``: every parameter's std ≤ ``convergence_tolerance`` ×
|estimate| and the estimate finite.

Functional core (pure, JAX-traceable): :func:`make_params`, :func:`init`, :func:`step`
``(params, state, BoucWenSDOFInputs(measurement, external_force), dt)``, :func:`estimate`;
a record is one scan (:func:`~rths_ident.estimators.online_identifier.scan_steps`).
Wrapper for scripts: :class:`BoucWenUKFIdentifier`.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Mapping, NamedTuple, Sequence

import jax
import jax.numpy as jnp

from rths_ident import small_linalg as sl
import numpy as np

from rths_ident.errors import ParameterError
from rths_ident._params import field_range, params_dataclass
from rths_ident.estimators.identifier_wrapper import IdentifierWrapper
from rths_ident.estimators.parameter_prior import parameter_prior
from rths_ident.protocols import Estimate
from rths_ident.estimators.sigma_points import MerweScaledSigmaPoints
from rths_ident.estimators.ukf import UKFParams, UKFState, ukf_init, ukf_step

__all__ = [
    "BoucWenUKFIdentifier",
    "BoucWenSDOFConstants",
    "BoucWenSDOFParams",
    "BoucWenSDOFState",
    "BoucWenSDOFInputs",
    "BoucWenSDOFOutput",
    "make_params",
    "init",
    "step",
    "estimate",
    "boucwen_sdof_rate",
    "boucwen_sdof_transition",
    "boucwen_sdof_measurement",
    "STATE_NAMES",
    "PARAMETER_NAMES",
    "PARAMETER_UNITS",
    "MEASURABLE_CHANNELS",
]

STATE_NAMES = ("displacement", "velocity", "z", "k", "alpha", "beta", "gamma")
PARAMETER_NAMES = ("k", "alpha", "beta", "gamma")
PARAMETER_UNITS = ("N/m", "-", "1/m^n", "1/m^n")
MEASURABLE_CHANNELS = ("displacement", "velocity", "acceleration", "restoring_force")
_N_STATES = 3  # x, v, z before the parameters


def _guess_and_std(names, initial_guess, parameter_std):
    """θ(0) and its std from the ``initial_guess`` mapping (:func:`parameter_prior`)."""
    missing = [p for p in names if p not in initial_guess]
    if missing:
        raise ParameterError(f"initial_guess lacks {missing} (needs {names})")
    return parameter_prior(names, [float(initial_guess[p]) for p in names], parameter_std)


class BoucWenSDOFConstants(NamedTuple):
    """Known quantities of the filter model (traced, so changing them never recompiles)."""

    mass: Any  # m [kg]
    damping: Any  # c [N·s/m]
    A: Any  # A [-]
    n: Any  # n [-], >= 1


def _boucwen_params(s, constants: BoucWenSDOFConstants):
    """:class:`rths_ident.models.BoucWenParams` of the augmented state ``s`` (a pytree
    rebuild, not validated: sigma points may be anywhere)."""
    from rths_ident.models.bouc_wen import BoucWenParams

    values = {"k": s[3], "alpha": s[4], "A": constants.A, "beta": s[5], "gamma": s[6], "n": constants.n}
    template = BoucWenParams(k=1.0, alpha=0.5, A=1.0, beta=1.0, gamma=1.0, n=1.0)
    leaves, treedef = jax.tree_util.tree_flatten_with_path(template)
    return jax.tree_util.tree_unflatten(treedef, [values[path[0].name] for path, _ in leaves])


def _restoring_force(s, constants: BoucWenSDOFConstants):
    """F = α k x + (1 − α) k z: :meth:`rths_ident.models.BoucWen.force`."""
    from rths_ident.models.bouc_wen import BoucWen

    return BoucWen.force(_boucwen_params(s, constants), s[0], s[2])


def boucwen_sdof_rate(s, external_force, constants: BoucWenSDOFConstants):
    """ds/dt of the augmented state ``s`` (7,) under external force p [N]; ż and F are
    :meth:`rths_ident.models.BoucWen.zdot` and :meth:`~rths_ident.models.BoucWen.force`
    (the model's own equations)."""
    from rths_ident.models.bouc_wen import BoucWen

    v, z = s[1], s[2]
    params = _boucwen_params(s, constants)
    force = BoucWen.force(params, s[0], z)
    acceleration = (external_force - constants.damping * v - force) / constants.mass
    z_rate = BoucWen.zdot(params, z, v)
    zeros = jnp.zeros(4, dtype=s.dtype)
    return jnp.concatenate([jnp.stack([v, acceleration, z_rate]), zeros])


def boucwen_sdof_transition(s, dt, force_start, force_end, constants: BoucWenSDOFConstants, substeps: int):
    """State after ``dt`` [s]: ``substeps`` RK4 steps, p linear from ``force_start`` to
    ``force_end`` [N]. Pure and JAX-traceable."""
    h = dt / substeps

    def force_at(fraction):
        return force_start + (force_end - force_start) * fraction

    def rk4(i, state):
        t0 = i / substeps
        t_mid = (i + 0.5) / substeps
        t1 = (i + 1.0) / substeps
        k1 = boucwen_sdof_rate(state, force_at(t0), constants)
        k2 = boucwen_sdof_rate(state + 0.5 * h * k1, force_at(t_mid), constants)
        k3 = boucwen_sdof_rate(state + 0.5 * h * k2, force_at(t_mid), constants)
        k4 = boucwen_sdof_rate(state + h * k3, force_at(t1), constants)
        return state + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)

    return jax.lax.fori_loop(0, substeps, rk4, s)


def boucwen_sdof_measurement(s, external_force, constants: BoucWenSDOFConstants, channels: Sequence[str]):
    """Measurement vector for ``channels`` (see module doc) at external force p [N]."""
    force = _restoring_force(s, constants)
    values = {
        "displacement": s[0],
        "velocity": s[1],
        "acceleration": (external_force - constants.damping * s[1] - force) / constants.mass,
        "restoring_force": force,
    }
    return jnp.stack([values[name] for name in channels])


@functools.lru_cache(maxsize=None)
def _process_model(substeps: int):
    """fx(s, dt, **fx_args) for the UKF; one function object per ``substeps`` so the
    compiled filter is shared by all identifiers with the same configuration."""

    def fx(s, dt, force_start, force_end, mass, damping, A, n):
        constants = BoucWenSDOFConstants(mass, damping, A, n)
        return boucwen_sdof_transition(s, dt, force_start, force_end, constants, substeps)

    return fx


@functools.lru_cache(maxsize=None)
def _measurement_model(channels: tuple[str, ...]):
    def hx(s, external_force, mass, damping, A, n):
        return boucwen_sdof_measurement(s, external_force, BoucWenSDOFConstants(mass, damping, A, n), channels)

    return hx


# --------------------------------------------------------------------------------------
# functional core
# --------------------------------------------------------------------------------------


@params_dataclass(static=("substeps", "channels"))
class BoucWenSDOFParams:
    """Configuration of the SDOF identifier (build it with :func:`make_params`)."""

    ukf: UKFParams = None  # weights, Q per sample, R, bounds of [x, v, z, k, α, β, γ]
    constants: BoucWenSDOFConstants = None  # m [kg], c [N·s/m], A, n (known)
    initial_mean: Any = None  # (7,) x(0) of the filter (SI)
    initial_std: Any = None  # (7,) √P(0) (SI)
    initial_external_force: float = field_range(0.0, unit="N", doc="p(t_0)")
    convergence_tolerance: float = field_range(
        0.02, low=0.0, low_inclusive=False, doc="'converged': every std ≤ this × |estimate|"
    )
    substeps: int = 4  # RK4 sub-steps per sample (static)
    channels: tuple = ("restoring_force",)  # measured channels, in measurement order (static)


class BoucWenSDOFState(NamedTuple):
    filter: UKFState  # mean (7,) and covariance (7, 7) of [x, v, z, k, α, β, γ] (SI)
    previous_external_force: jax.Array  # p(t_{k−1}) [N]


class BoucWenSDOFInputs(NamedTuple):
    """One sample: the measurement vector (channels in the order of ``channels``, SI)
    and the external force p(t_k) [N]."""

    measurement: Any
    external_force: Any


class BoucWenSDOFOutput(NamedTuple):
    prior: UKFState  # (x⁻, P⁻) of this step
    innovation: jax.Array  # (m,) measured − predicted (SI of the channels)
    innovation_variance: jax.Array  # (m, m) S
    log_likelihood: jax.Array


def _positive(name, value, allow_zero=False):
    value = float(value)
    if not np.isfinite(value) or value < 0.0 or (value == 0.0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ParameterError(f"{name} must be finite and {bound}; got {value!r}")
    return value


def make_params(
    mass: float,
    damping: float,
    initial_guess: Mapping[str, float],
    parameter_std: Mapping[str, float] | float = 0.3,
    measured: Sequence[str] = ("restoring_force",),
    measurement_std: Sequence[float] = (1.0,),
    *,
    A: float = 1.0,
    n: float = 1.0,
    state_std: Sequence[float] = (1e-6, 1e-6, 1e-6),
    process_std: Sequence[float] | None = None,
    initial_state: Sequence[float] = (0.0, 0.0, 0.0),
    external_force0: float = 0.0,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    substeps: int = 4,
    sigma_alpha: float = 1e-2,
    sigma_beta: float = 2.0,
    sigma_kappa: float = 0.0,
    convergence_tolerance: float = 0.02,
) -> BoucWenSDOFParams:
    """Configuration (arguments as :class:`BoucWenUKFIdentifier`'s, without ``dt``)."""
    constants = BoucWenSDOFConstants(
        mass=_positive("mass", mass),
        damping=_positive("damping", damping, allow_zero=True),
        A=_positive("A", A),
        n=float(n),
    )
    if not (1.0 <= constants.n <= 100.0):
        raise ParameterError(f"n must be in [1, 100]; got {n!r}")
    if not isinstance(substeps, int) or substeps < 1:
        raise ParameterError(f"substeps must be an integer >= 1; got {substeps!r}")
    channels = tuple(measured)
    unknown = [c for c in channels if c not in MEASURABLE_CHANNELS]
    if not channels or unknown:
        raise ValueError(f"measured must be a non-empty subset of {MEASURABLE_CHANNELS}; got {measured!r}")
    measurement_std = np.atleast_1d(np.asarray(measurement_std, dtype=float))
    if measurement_std.shape != (len(channels),) or np.any(~(measurement_std > 0)):
        raise ParameterError(
            f"measurement_std must hold one positive std per measured channel "
            f"({len(channels)}: {channels}); got {measurement_std.tolist()}"
        )
    names = PARAMETER_NAMES
    theta0, theta_std = _guess_and_std(names, initial_guess, parameter_std)
    state_std = np.asarray(state_std, dtype=float)
    if state_std.shape != (_N_STATES,) or np.any(~(state_std > 0)):
        raise ParameterError(
            f"state_std must be {_N_STATES} positive values {STATE_NAMES[:_N_STATES]}; got {state_std.tolist()}"
        )
    if process_std is None:
        process_std = np.concatenate([1e-3 * state_std, 1e-4 * theta_std])
    process_std = np.asarray(process_std, dtype=float)
    if process_std.shape != (len(STATE_NAMES),) or np.any(~(process_std >= 0)):
        raise ParameterError(
            f"process_std must be {len(STATE_NAMES)} non-negative values {STATE_NAMES}; got {process_std.tolist()}"
        )
    lower = np.array([-np.inf, -np.inf, -np.inf, 0.0, 0.0, 0.0, -np.inf])
    upper = np.array([np.inf, np.inf, np.inf, np.inf, 1.0, np.inf, np.inf])
    for name, (low, high) in (bounds or {}).items():
        if name not in names:
            raise ParameterError(f"bounds: unknown parameter {name!r} (one of {names})")
        i = _N_STATES + names.index(name)
        lower[i], upper[i] = low, high
    if np.any(theta0 < lower[_N_STATES:]) or np.any(theta0 > upper[_N_STATES:]):
        raise ParameterError(
            f"initial_guess {dict(zip(names, theta0.tolist()))} is outside the bounds "
            f"{dict(zip(names, zip(lower[_N_STATES:].tolist(), upper[_N_STATES:].tolist())))}"
        )
    x0 = np.concatenate([np.asarray(initial_state, dtype=float), theta0])
    initial_std = np.concatenate([state_std, theta_std])
    points = MerweScaledSigmaPoints(len(STATE_NAMES), sigma_alpha, sigma_beta, sigma_kappa)
    ukf_params, _ = ukf_init(points, x0, np.diag(initial_std**2), np.diag(process_std**2),
                             np.diag(measurement_std**2), 1.0, lower_bound=lower, upper_bound=upper)
    return BoucWenSDOFParams(
        ukf=ukf_params, constants=constants, initial_mean=jax.device_put(x0),
        initial_std=jax.device_put(initial_std), initial_external_force=float(external_force0),
        convergence_tolerance=float(convergence_tolerance), substeps=substeps, channels=channels,
    )  # fmt: skip


def init(params: BoucWenSDOFParams) -> BoucWenSDOFState:
    """Filter at the initial guess and state, P(0) = diag(initial_std²), p(t_0)."""
    return BoucWenSDOFState(UKFState(jnp.asarray(params.initial_mean, jnp.float64),
                                     jnp.diag(jnp.asarray(params.initial_std, jnp.float64) ** 2)),
                            jnp.asarray(params.initial_external_force, jnp.float64))


def step(params: BoucWenSDOFParams, state: BoucWenSDOFState, inputs: BoucWenSDOFInputs, dt):
    """One predict + update over ``dt`` [s] (RK4 with p linear from the state's
    p(t_{k−1}) to ``inputs.external_force``), then the measurement. Pure."""
    force = jnp.asarray(inputs.external_force, jnp.float64)
    constants = params.constants._asdict()
    fx_args = {"force_start": state.previous_external_force, "force_end": force, **constants}
    hx_args = {"external_force": force, **constants}
    ukf = dataclasses.replace(params.ukf, dt=dt)
    posterior, (prior, info) = ukf_step(ukf, state.filter, inputs.measurement, _process_model(params.substeps),
                                        _measurement_model(params.channels), fx_args, hx_args)
    return (BoucWenSDOFState(posterior, force),
            BoucWenSDOFOutput(prior, info.y, info.S, info.log_likelihood))


def estimate(params: BoucWenSDOFParams, state: BoucWenSDOFState) -> Estimate:
    """θ̂ = [k N/m, α, β 1/m^n, γ 1/m^n], √P_ii/|θ̂_i|, converged (module doc)."""
    theta = state.filter.x[_N_STATES:]
    std = jnp.sqrt(jnp.maximum(jnp.diag(state.filter.P)[_N_STATES:], 0.0))
    finite = jnp.all(jnp.isfinite(theta)) & jnp.all(jnp.isfinite(std))
    converged = finite & jnp.all(std <= params.convergence_tolerance * jnp.abs(theta))
    return Estimate(theta, std / jnp.abs(theta), converged, sl.is_positive_definite(state.filter.P))


class _Functions(NamedTuple):
    params: Any
    init: Any
    step: Any
    estimate: Any
    param_names: tuple


# --------------------------------------------------------------------------------------
# wrapper
# --------------------------------------------------------------------------------------


class BoucWenUKFIdentifier(IdentifierWrapper):
    """Online identification of k, α, β, γ of a Bouc–Wen SDOF specimen by a joint
    state–parameter UKF (module doc for the model); the wrapper of
    :class:`~rths_ident.estimators.identifier_wrapper.IdentifierWrapper` over
    :func:`step` (no maths here).

    * ``update(measurement, external_force)`` — one sample: the measurement vector at
      t_k (channels in the order of ``measured``) and p(t_k) [N];
    * ``run(measurements (N, m), external_force (N,))`` — a record at t_1 … t_N in one
      compiled scan, from the current state (which holds p(t_0): ``external_force0``
      or the last sample's);
    * ``theta``, ``relative_std``, ``converged``, ``x`` and ``P`` (the filter's mean and
      covariance of [x, v, z, k, α, β, γ], SI).

    Parameters
    ----------
    mass : float
        m [kg] (known).
    damping : float
        c [N·s/m] (known, ≥ 0).
    dt : float
        Sampling interval of the measurements and of p [s].
    initial_guess : mapping
        Initial estimates ``{"k": …, "alpha": …, "beta": …, "gamma": …}`` (SI).
    parameter_std : mapping or float
        Initial standard deviation of each parameter, absolute (a mapping by name) or
        relative to the initial guess (a float, e.g. 0.3 for 30 %).
    measured : sequence of str
        Measured channels, from ``MEASURABLE_CHANNELS``.
    measurement_std : sequence of float
        Standard deviation of the noise of each channel (its SI unit); R = diag(std²).
    A, n : float
        Fixed Bouc–Wen constants (A > 0, 1 ≤ n ≤ 100). Defaults 1 and 1.
    state_std : (3,) floats
        Initial std of x [m], v [m/s], z [m]; default (1e-6, 1e-6, 1e-6).
    process_std : (7,) floats, optional
        Std of the process noise per sample for [x, v, z, k, α, β, γ] (SI); Q =
        diag(std²). Default: 1e-3 × ``state_std`` on the states (model error) and
        1e-4 × ``parameter_std`` on the parameters (a slow random walk, which lets the
        estimate follow slowly varying parameters).
    initial_state : (3,) floats
        x, v, z at t_0 (default at rest, 0).
    external_force0 : float
        p(t_0) [N] (default 0).
    bounds : mapping name -> (low, high), optional
        Overrides of the physical bounds of the parameters.
    substeps : int
        RK4 sub-steps per sample (default 4).
    sigma_alpha, sigma_beta, sigma_kappa : float
        Scaled sigma-point constants α, β, κ (defaults 1e-2, 2, 0).
    convergence_tolerance : float
        ``converged`` is true when every parameter's std is below this fraction of
        its estimate (default 0.02).
    """

    inputs_type = BoucWenSDOFInputs
    state_names = STATE_NAMES
    parameter_names = PARAMETER_NAMES

    def __init__(self, mass: float, damping: float, dt: float, initial_guess: Mapping[str, float],
                 parameter_std: Mapping[str, float] | float = 0.3, measured: Sequence[str] = ("restoring_force",),
                 measurement_std: Sequence[float] = (1.0,), **options):
        params = make_params(mass, damping, initial_guess, parameter_std, measured, measurement_std, **options)
        super().__init__(_Functions(params, init, step, estimate, PARAMETER_NAMES), dt=_positive("dt", dt))
        self.measured = params.channels

    @staticmethod
    def covariance_of(state: BoucWenSDOFState):
        return state.filter.P

    @property
    def x(self) -> np.ndarray:
        """The filter's mean [x m, v m/s, z m, k N/m, α, β, γ]."""
        return np.asarray(self.state.filter.x)
