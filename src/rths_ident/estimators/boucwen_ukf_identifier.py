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
in time), a different problem from the displacement-driven element identified by the
generic :mod:`rths_ident.estimators.joint_ukf_identifier`, which is why
:class:`BoucWenUKFIdentifier` is not built on that core.

Degrading variant (:class:`DegradingBoucWenUKFIdentifier`): a displacement-driven
specimen (the RTHS case: the actuator imposes x, the load cell measures the force) with
the Wang et al./Mostaghel degrading model of seed 000 §4.7.2 (Eqs. 4.2–4.7, in the
form of :class:`rths_ident.models.DegradingBoucWen`, [REPO] linear branch and floors
included)::

    F    = α_sv k_e x + r + k_h x³ + c_e ẋ                                  (4.7)
    dr/dx = K(H) [1 − |r/f_y(H)|^N (η₁ sgn(r Δx) + η₂)]                    (4.3)
    dH/dx = r (1 − (dr/dx)/K(H))                                           (4.6)
    K(H)  = k_e max(e^{−a H} − α_sv, ρ_K (1 − α_sv)),  f_y(H) = max(f_y0/(1 + b H), ρ_f f_y0)

Augmented state ``[r, H, k_e, f_y0, a, b]`` (N, J, N/m, N, 1/J, 1/J), with a =
``stiffness_degradation`` and b = ``strength_degradation``; α_sv, N, η₁, η₂, k_h, c_e
and the floors ρ_K, ρ_f are known. :class:`DegradingBoucWenUKFIdentifier` is a thin user
of the generic joint UKF (:mod:`rths_ident.estimators.joint_ukf_identifier`): its
transition is :meth:`rths_ident.models.DegradingBoucWen.step` itself.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Mapping, NamedTuple, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.estimators.sigma_points import MerweScaledSigmaPoints
from rths_ident.estimators.ukf import UKFHistory, ukf_init, ukf_scan, ukf_step

__all__ = [
    "BoucWenUKFIdentifier",
    "DegradingBoucWenUKFIdentifier",
    "BoucWenSDOFConstants",
    "boucwen_sdof_rate",
    "boucwen_sdof_transition",
    "boucwen_sdof_measurement",
    "STATE_NAMES",
    "PARAMETER_NAMES",
    "MEASURABLE_CHANNELS",
]

STATE_NAMES = ("displacement", "velocity", "z", "k", "alpha", "beta", "gamma")
PARAMETER_NAMES = ("k", "alpha", "beta", "gamma")
MEASURABLE_CHANNELS = ("displacement", "velocity", "acceleration", "restoring_force")
_UNITS = {"k": "N/m", "alpha": "-", "beta": "1/m^n", "gamma": "1/m^n"}


def _guess_and_std(names, initial_guess, parameter_std):
    """θ(0) and its std from the wrappers' arguments (std relative to the guess, or
    absolute per name as a mapping); clear errors for missing or non-positive entries."""
    missing = [p for p in names if p not in initial_guess]
    if missing:
        raise ParameterError(f"initial_guess lacks {missing} (needs {names})")
    theta0 = np.array([float(initial_guess[p]) for p in names])
    if isinstance(parameter_std, Mapping):
        missing = [p for p in names if p not in parameter_std]
        if missing:
            raise ParameterError(f"parameter_std lacks {missing} (needs {names})")
        theta_std = np.array([float(parameter_std[p]) for p in names])
    else:
        theta_std = float(parameter_std) * np.abs(theta0)
    if np.any(~(theta_std > 0)):
        raise ParameterError(
            f"parameter_std must be positive for every parameter; got {dict(zip(names, theta_std.tolist()))} "
            "(give absolute values as a mapping for parameters guessed as 0)"
        )
    return theta0, theta_std


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
# degrading Bouc–Wen, displacement-driven (module doc)
# --------------------------------------------------------------------------------------

DEGRADING_STATE_NAMES = ("r", "H", "k_e", "f_y0", "stiffness_degradation", "strength_degradation")
DEGRADING_PARAMETER_NAMES = ("k_e", "f_y0", "stiffness_degradation", "strength_degradation")


# --------------------------------------------------------------------------------------
# identifiers (thin wrappers over the UKF core)
# --------------------------------------------------------------------------------------

_step_kernel = jax.jit(ukf_step, static_argnames=("fx", "hx"))


def _positive(name, value, allow_zero=False):
    value = float(value)
    if not np.isfinite(value) or value < 0.0 or (value == 0.0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ParameterError(f"{name} must be finite and {bound}; got {value!r}")
    return value


class _JointUKFIdentifier:
    """Shared plumbing: the augmented state is ``states + parameters``; subclasses set
    the names, the models and the inputs. No maths here."""

    state_names: tuple[str, ...]
    parameter_names: tuple[str, ...]

    def _setup(
        self, *, dt, initial_state, state_std, initial_guess, parameter_std, process_std, measurement_std,
        lower, upper, bounds, sigma, convergence_tolerance, fx, hx,
    ):  # fmt: skip
        names = self.parameter_names
        n_states = len(self.state_names) - len(names)
        self.dt = _positive("dt", dt)
        theta0, theta_std = _guess_and_std(names, initial_guess, parameter_std)
        state_std = np.asarray(state_std, dtype=float)
        if state_std.shape != (n_states,) or np.any(~(state_std > 0)):
            raise ParameterError(
                f"state_std must be {n_states} positive values {self.state_names[:n_states]}; got {state_std.tolist()}"
            )
        if process_std is None:
            process_std = np.concatenate([1e-3 * state_std, 1e-4 * theta_std])
        process_std = np.asarray(process_std, dtype=float)
        if process_std.shape != (len(self.state_names),) or np.any(~(process_std >= 0)):
            raise ParameterError(
                f"process_std must be {len(self.state_names)} non-negative values {self.state_names}; "
                f"got {process_std.tolist()}"
            )
        measurement_std = np.atleast_1d(np.asarray(measurement_std, dtype=float))
        if measurement_std.ndim != 1 or np.any(~(measurement_std > 0)):
            raise ParameterError(f"measurement_std must be positive; got {measurement_std.tolist()}")
        lower, upper = np.array(lower, dtype=float), np.array(upper, dtype=float)
        for name, (low, high) in (bounds or {}).items():
            if name not in names:
                raise ParameterError(f"bounds: unknown parameter {name!r} (one of {names})")
            i = n_states + names.index(name)
            lower[i], upper[i] = low, high
        if np.any(theta0 < lower[n_states:]) or np.any(theta0 > upper[n_states:]):
            raise ParameterError(
                f"initial_guess {dict(zip(names, theta0.tolist()))} is outside the bounds "
                f"{dict(zip(names, zip(lower[n_states:].tolist(), upper[n_states:].tolist())))}"
            )
        self.convergence_tolerance = float(convergence_tolerance)
        x0 = np.concatenate([np.asarray(initial_state, dtype=float), theta0])
        P0 = np.diag(np.concatenate([state_std, theta_std]) ** 2)
        points = MerweScaledSigmaPoints(len(self.state_names), *sigma)
        self.params, self.state = ukf_init(
            points, x0, P0, np.diag(process_std**2), np.diag(measurement_std**2), self.dt,
            lower_bound=lower, upper_bound=upper,
        )  # fmt: skip
        self._n_states = n_states
        self._fx, self._hx = fx, hx
        self.history: UKFHistory | None = None

    def _advance(self, z, fx_args, hx_args):
        self.state, _ = _step_kernel(self.params, self.state, z, self._fx, self._hx, fx_args, hx_args)

    def _scan(self, zs, fx_args, hx_args):
        self.state, self.history = ukf_scan(self._fx, self._hx, self.params, self.state, zs, fx_args, hx_args)
        return self.history

    # --- estimates -----------------------------------------------------------------
    @property
    def estimate(self) -> dict[str, float]:
        """Current estimate of every entry of the augmented state (SI)."""
        return dict(zip(self.state_names, np.asarray(self.state.x).tolist()))

    @property
    def parameters(self) -> dict[str, float]:
        """Current parameter estimates (SI)."""
        return dict(zip(self.parameter_names, np.asarray(self.state.x)[self._n_states :].tolist()))

    @property
    def parameter_std(self) -> dict[str, float]:
        """Standard deviations of the parameter estimates, √diag(P) (SI)."""
        variances = np.diag(np.asarray(self.state.P))[self._n_states :]
        return dict(zip(self.parameter_names, np.sqrt(np.maximum(variances, 0.0)).tolist()))

    @property
    def converged(self) -> bool:
        """True when every parameter's std is below ``convergence_tolerance`` × |estimate|
        and the estimate is finite."""
        theta = np.asarray(self.state.x)[self._n_states :]
        std = np.array(list(self.parameter_std.values()))
        if not np.all(np.isfinite(theta)) or not np.all(np.isfinite(std)):
            return False
        return bool(np.all(std <= self.convergence_tolerance * np.abs(theta)))

    def parameter_history(self) -> dict[str, np.ndarray]:
        """Per-step parameter estimates from the last ``run``."""
        if self.history is None:
            raise RuntimeError("no history: call run() first")
        xs = np.asarray(self.history.x)
        return {name: xs[:, self._n_states + i] for i, name in enumerate(self.parameter_names)}

    def __repr__(self):
        est = ", ".join(f"{k}={v:.4g}" for k, v in self.parameters.items())
        return f"{type(self).__name__}({est}, converged={self.converged})"


class BoucWenUKFIdentifier(_JointUKFIdentifier):
    """Online identification of k, α, β, γ of a Bouc–Wen SDOF specimen by a joint
    state–parameter UKF (module doc for the model).

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
        Std of the process noise per step for [x, v, z, k, α, β, γ] (SI); Q =
        diag(std²). Default: 1e-3 × ``state_std`` on the states (model error) and
        1e-4 × ``parameter_std`` on the parameters (a slow random walk, which lets the
        estimate follow slowly varying parameters).
    initial_state : (3,) floats
        x, v, z at t_0 (default at rest, 0).
    external_force0 : float
        p(t_0) [N] for :meth:`step` (default 0).
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

    state_names = STATE_NAMES
    parameter_names = PARAMETER_NAMES

    def __init__(
        self,
        mass: float,
        damping: float,
        dt: float,
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
    ):
        self.constants = BoucWenSDOFConstants(
            mass=_positive("mass", mass),
            damping=_positive("damping", damping, allow_zero=True),
            A=_positive("A", A),
            n=float(n),
        )
        if not (1.0 <= self.constants.n <= 100.0):
            raise ParameterError(f"n must be in [1, 100]; got {n!r}")
        if not isinstance(substeps, int) or substeps < 1:
            raise ParameterError(f"substeps must be an integer >= 1; got {substeps!r}")
        self.measured = tuple(measured)
        unknown = [c for c in self.measured if c not in MEASURABLE_CHANNELS]
        if not self.measured or unknown:
            raise ValueError(f"measured must be a non-empty subset of {MEASURABLE_CHANNELS}; got {measured!r}")
        if np.size(measurement_std) != len(self.measured):
            raise ParameterError(
                f"measurement_std must hold one positive std per measured channel "
                f"({len(self.measured)}: {self.measured}); got {list(np.atleast_1d(measurement_std))}"
            )
        self._setup(
            dt=dt, initial_state=initial_state, state_std=state_std, initial_guess=initial_guess,
            parameter_std=parameter_std, process_std=process_std, measurement_std=measurement_std,
            lower=[-np.inf, -np.inf, -np.inf, 0.0, 0.0, 0.0, -np.inf],
            upper=[np.inf, np.inf, np.inf, np.inf, 1.0, np.inf, np.inf],
            bounds=bounds, sigma=(sigma_alpha, sigma_beta, sigma_kappa),
            convergence_tolerance=convergence_tolerance,
            fx=_process_model(substeps), hx=_measurement_model(self.measured),
        )  # fmt: skip
        self._previous_force = float(external_force0)

    def _constant_args(self):
        return self.constants._asdict()

    def step(self, measurement, external_force: float = 0.0) -> None:
        """Advance one sample: p(t_k) = ``external_force`` [N] and the measurement
        vector at t_k (channels in the order of ``measured``)."""
        z = np.atleast_1d(np.asarray(measurement, dtype=float))
        if z.shape != (len(self.measured),):
            raise ValueError(f"measurement must have shape ({len(self.measured)},) {self.measured}; got {z.shape}")
        constants = self._constant_args()
        fx_args = {"force_start": np.float64(self._previous_force), "force_end": np.float64(external_force), **constants}
        hx_args = {"external_force": np.float64(external_force), **constants}
        self._advance(z, fx_args, hx_args)
        self._previous_force = float(external_force)

    def run(self, measurements, external_force) -> UKFHistory:
        """Filter a record in one compiled scan.

        ``external_force`` (N+1,) [N] at t_0 … t_N; ``measurements`` (N, m) at
        t_1 … t_N. Continues from the current estimate; returns (and stores in
        ``history``) the per-step :class:`~rths_ident.estimators.ukf.UKFHistory`."""
        p = np.asarray(external_force, dtype=float).reshape(-1)
        zs = np.asarray(measurements, dtype=float)
        if zs.ndim == 1:
            zs = zs[:, None]
        if zs.ndim != 2 or zs.shape[1] != len(self.measured):
            raise ValueError(f"measurements must have shape (N, {len(self.measured)}); got {zs.shape}")
        if p.shape != (zs.shape[0] + 1,):
            raise ValueError(
                f"external_force must have N+1 = {zs.shape[0] + 1} samples (t_0 … t_N); got {p.shape}"
            )
        constants = {k: np.full(zs.shape[0], v) for k, v in self._constant_args().items()}
        history = self._scan(
            zs, {"force_start": p[:-1], "force_end": p[1:], **constants}, {"external_force": p[1:], **constants}
        )
        self._previous_force = float(p[-1])
        return history


class DegradingBoucWenUKFIdentifier(_JointUKFIdentifier):
    """Identification of k_e, f_y0 and the stiffness/strength degradation rates of a
    displacement-driven degrading Bouc–Wen specimen (seed 000 Eqs. 4.2–4.7) from its
    measured displacement, velocity and force.

    A thin user of the generic joint UKF
    (:mod:`rths_ident.estimators.joint_ukf_identifier`) over
    :class:`rths_ident.models.DegradingBoucWen`, in plain SI coordinates (filter state
    [r N, H J, k_e N/m, f_y0 N, a 1/J, b 1/J], the parameters boxed at ≥ 0 by sigma-point
    clipping). The transition is the model's own ``step`` (backward Euler in the
    displacement, ``substeps`` sub-steps, H by the trapezoidal Eq. 4.6).

    Difference from the first version of this class: that one integrated (r, H) with its
    own RK4-in-displacement copy of the equations (:func:`degrading_boucwen_transition`,
    kept in this module only until ``bw-frame`` switches to
    :func:`~rths_ident.estimators.joint_ukf_identifier.joint_ukf_online_identifier`), so
    the numbers differ at the level of the two discretisations (0.07 % of the force over
    a record at 1e-4 s increments; tests/estimators/test_boucwen_ukf_identifier.py); the
    identification results it asserts are unchanged. ``run`` returns the same
    :class:`~rths_ident.estimators.ukf.UKFHistory`; ``params`` is the UKF configuration
    with Q = diag(process_std²) per step (as before).

    Parameters
    ----------
    dt : float
        Sampling interval [s] (the model is rate-independent except for c_e ẋ).
    initial_guess : mapping
        ``{"k_e": N/m, "f_y0": N, "stiffness_degradation": 1/J,
        "strength_degradation": 1/J}``.
    parameter_std : mapping or float
        Initial std, absolute (mapping) or relative to the guess (float). Give a
        mapping when a degradation rate is guessed as 0.
    alpha_sv, N, eta1, eta2 : float
        Known shape constants (0 ≤ α_sv < 1, 1 ≤ N ≤ 100, η₁ ≥ 0, η₁ + η₂ > 0).
    k_h, c_e : float
        Known cubic spring [N/m³] and damping [N·s/m] (default 0).
    force_std : float
        Std of the force measurement noise [N].
    min_stiffness_ratio, min_strength_ratio : float
        Floors ρ_K, ρ_f (as in :class:`rths_ident.models.DegradingBoucWen`; 0.01).
    state_std : (2,) floats
        Initial std of r [N] and H [J]; default (1e-6, 1e-9).
    process_std : (6,) floats, optional
        Process-noise std per step for [r, H, k_e, f_y0, a, b]; default 1e-3 ×
        ``state_std`` and 1e-4 × the initial parameter std.
    initial_state : (2,) floats
        r, H at the start (default virgin: 0, 0), at displacement ``displacement0``.
    bounds : mapping, optional
        Overrides of the default bounds k_e ≥ 0, f_y0 ≥ 0, a ≥ 0, b ≥ 0.
    substeps : int
        Backward-Euler sub-steps of the model per sample (default 2).
    sigma_alpha, sigma_beta, sigma_kappa, convergence_tolerance :
        as :class:`BoucWenUKFIdentifier`.
    """

    state_names = DEGRADING_STATE_NAMES
    parameter_names = DEGRADING_PARAMETER_NAMES

    def __init__(
        self,
        dt: float,
        initial_guess: Mapping[str, float],
        parameter_std: Mapping[str, float] | float = 0.3,
        *,
        alpha_sv: float,
        N: float,
        eta1: float,
        eta2: float,
        force_std: float,
        k_h: float = 0.0,
        c_e: float = 0.0,
        min_stiffness_ratio: float = 0.01,
        min_strength_ratio: float = 0.01,
        state_std: Sequence[float] = (1e-6, 1e-9),
        process_std: Sequence[float] | None = None,
        initial_state: Sequence[float] = (0.0, 0.0),
        displacement0: float = 0.0,
        bounds: Mapping[str, tuple[float, float]] | None = None,
        substeps: int = 2,
        sigma_alpha: float = 1e-2,
        sigma_beta: float = 2.0,
        sigma_kappa: float = 0.0,
        convergence_tolerance: float = 0.02,
    ):
        from rths_ident.estimators import joint_ukf_identifier as _joint
        from rths_ident.models.degrading_bouc_wen import DegradingBoucWen, DegradingBoucWenParams

        if not (0.0 <= alpha_sv < 1.0):
            raise ParameterError(f"alpha_sv must be in [0, 1); got {alpha_sv!r}")
        if not (1.0 <= N <= 100.0):
            raise ParameterError(f"N must be in [1, 100]; got {N!r}")
        if not (eta1 >= 0.0 and eta1 + eta2 > 0.0):
            raise ParameterError(f"need eta1 >= 0 and eta1 + eta2 > 0; got eta1={eta1!r}, eta2={eta2!r}")
        for name, value in (("min_stiffness_ratio", min_stiffness_ratio), ("min_strength_ratio", min_strength_ratio)):
            if not (0.0 < value <= 1.0):
                raise ParameterError(f"{name} must be in (0, 1]; got {value!r}")
        if not isinstance(substeps, int) or substeps < 1:
            raise ParameterError(f"substeps must be an integer >= 1; got {substeps!r}")
        k_h, c_e = _positive("k_h", k_h, allow_zero=True), _positive("c_e", c_e, allow_zero=True)
        names = self.parameter_names
        self.dt = _positive("dt", dt)
        theta0, theta_std = _guess_and_std(names, initial_guess, parameter_std)
        state_std = np.asarray(state_std, dtype=float)
        if state_std.shape != (2,) or np.any(~(state_std > 0)):
            raise ParameterError(f"state_std must be 2 positive values ('r', 'H'); got {state_std.tolist()}")
        if process_std is None:
            process_std = np.concatenate([1e-3 * state_std, 1e-4 * theta_std])
        process_std = np.asarray(process_std, dtype=float)
        if process_std.shape != (6,) or np.any(~(process_std >= 0)):
            raise ParameterError(f"process_std must be 6 non-negative values {self.state_names}; "
                                 f"got {process_std.tolist()}")
        lower, upper = np.zeros(4), np.full(4, np.inf)
        for name, (low, high) in (bounds or {}).items():
            if name not in names:
                raise ParameterError(f"bounds: unknown parameter {name!r} (one of {names})")
            lower[names.index(name)], upper[names.index(name)] = low, high
        if np.any(theta0 < lower) or np.any(theta0 > upper):
            raise ParameterError(
                f"initial_guess {dict(zip(names, theta0.tolist()))} is outside the bounds "
                f"{dict(zip(names, zip(lower.tolist(), upper.tolist())))}"
            )
        self.convergence_tolerance = float(convergence_tolerance)
        model_params = DegradingBoucWenParams(
            k_e=theta0[0], alpha_sv=alpha_sv, f_y0=theta0[1], N=N, eta1=eta1, eta2=eta2,
            stiffness_degradation=theta0[2], strength_degradation=theta0[3], k_h=k_h, c_e=c_e,
            min_stiffness_ratio=min_stiffness_ratio, min_strength_ratio=min_strength_ratio, substeps=substeps,
        )  # fmt: skip
        per_second = 1.0 / np.sqrt(self.dt)  # Q = q² Δt per step = process_std²
        r0, H0 = (float(v) for v in initial_state)
        self.joint_params = _joint.make_params(
            DegradingBoucWen, model_params, names, force_noise_std=_positive("force_std", force_std),
            parameter_std=theta_std, state_std=state_std, parameter_diffusion=process_std[2:] * per_second,
            state_diffusion=process_std[:2] * per_second, coordinates="ratio", parameter_reference=np.ones(4),
            lower=lower, upper=upper, sigma_alpha=sigma_alpha, sigma_beta=sigma_beta, sigma_kappa=sigma_kappa,
            initial_state={"hysteretic_force": r0, "dissipated_energy": H0},
            convergence_tolerance=self.convergence_tolerance,
        )  # fmt: skip
        # the filter's state is computed when first used (a handful of small compiled
        # programs): an online identifier built from this configuration never uses it
        self._joint_state, self._displacement0 = None, float(displacement0)
        self._n_states = 2
        self.history: UKFHistory | None = None
        self._process_cov = np.diag(process_std**2)

    @property
    def joint_state(self):
        """The joint filter's state (:class:`~rths_ident.estimators.joint_ukf_identifier.JointUKFState`),
        at the initial guess until the first :meth:`step` or :meth:`run`."""
        if self._joint_state is None:
            from rths_ident.estimators import joint_ukf_identifier as _joint  # noqa: PLC0415

            self._joint_state = _joint.init(self.joint_params, self._displacement0)
        return self._joint_state

    @joint_state.setter
    def joint_state(self, value):
        self._joint_state = value

    @property
    def state(self):
        """The filter's :class:`~rths_ident.estimators.ukf.UKFState` (x = [r, H, k_e, f_y0, a, b], SI)."""
        return self.joint_state.filter

    @property
    def params(self):
        """The UKF configuration with Q = diag(process_std²) per step and ``dt`` (the
        generic core adds the same Q itself as diag(q²)·Δt)."""
        return dataclasses.replace(self.joint_params.ukf, process_noise_cov=jnp.asarray(self._process_cov),
                                   dt=self.dt)

    def online_identifier(self):
        """This identifier's settings (P(0), Q, R, sigma points, bounds) as an
        :class:`~rths_ident.estimators.online_identifier.OnlineIdentifier` over the
        generic core (θ̂ = [k_e N/m, f_y0 N, a 1/J, b 1/J]; its ``init`` starts from this
        configuration's initial state, not from the wrapper's current one)."""
        from rths_ident.estimators import joint_ukf_identifier as _joint
        from rths_ident.protocols import OnlineIdentifier

        units = ("N/m", "N", "1/J", "1/J")
        return OnlineIdentifier("joint-ukf-DegradingBoucWen", self.joint_params, _joint.init,
                                _joint.protocol_step, _joint.estimate, self.parameter_names, units)

    def step(self, displacement: float, velocity: float, force: float) -> None:
        """Advance one sample: measured displacement [m], velocity [m/s] and force [N]."""
        self.joint_state, _ = _joint_step_jit(self.joint_params, self.joint_state, np.float64(displacement),
                                              np.float64(velocity), np.float64(force), np.float64(self.dt))

    def run(self, displacement, velocity, force) -> UKFHistory:
        """Filter a record in one compiled scan: ``displacement`` (N+1,) [m] at
        t_0 … t_N (t_0 = the current state), ``velocity`` (N,) [m/s] and ``force`` (N,)
        [N] at t_1 … t_N."""
        x = np.asarray(displacement, dtype=float).reshape(-1)
        v = np.asarray(velocity, dtype=float).reshape(-1)
        f = np.asarray(force, dtype=float).reshape(-1)
        if v.shape != f.shape or x.shape != (f.shape[0] + 1,):
            raise ValueError(
                f"need displacement (N+1,) and velocity, force (N,); got {x.shape}, {v.shape}, {f.shape}"
            )
        # t_0 is the displacement the filter state already holds
        joint_state = self.joint_state._replace(previous_displacement=jnp.float64(x[0]))
        self.joint_state, self.history = _joint_history_jit(self.joint_params, joint_state, x[1:], v, f,
                                                            np.float64(self.dt))
        return self.history


def _joint_history(params, state, displacement, velocity, force, dt):
    """The generic core's scan, recorded as a :class:`UKFHistory` (plumbing only)."""
    from rths_ident.estimators import joint_ukf_identifier as _joint

    def body(state, sample):
        state, out = _joint.step(params, state, *sample, dt)
        return state, UKFHistory(out.prior.x, out.prior.P, state.filter.x, state.filter.P,
                                 jnp.reshape(out.innovation, (1,)), jnp.reshape(out.innovation_variance, (1, 1)),
                                 out.log_likelihood)

    return jax.lax.scan(body, state, (displacement, velocity, force))


def _joint_step(params, state, x, v, force, dt):
    from rths_ident.estimators import joint_ukf_identifier as _joint

    return _joint.step(params, state, x, v, force, dt)


_joint_history_jit = jax.jit(_joint_history)
_joint_step_jit = jax.jit(_joint_step)
