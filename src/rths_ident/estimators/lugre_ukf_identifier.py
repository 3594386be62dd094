"""Joint state–parameter UKF identification of the modified LuGre column (seed 001 §2.2, §4).

Alternative to the constrained-RLS identifier of :mod:`rths_ident.estimators.lugre_identifier`
for the same problem (per sample: x, ẋ and the restoring force R measured; σ1, σ2 known;
σ0, F_C, σ3 unknown). Instead of the linear-in-parameters form (Eqs. 4.1–4.5) with an
open-loop z observer, the unknowns and the internal deflection z are one augmented state
of an unscented Kalman filter, so the correlation of ẑ with the parameters is carried by
the filter's covariance.

Augmented, *normalised* filter state (all entries O(1))::

    s = [z / z_ref,  σ0 / σ0_ref,  F_C / F_C_ref,  σ3 / σ3_ref]

with ``*_ref`` the initial guess and z_ref = F_C_ref/σ0_ref the guess's saturation
deflection z_ss [m]. Units of the physical quantities: z [m], σ0 and σ3 [N/m], F_C [N].

Process model (sample k−1 → k, measured x_{k−1}, x_k, ẋ_k)::

    z_k   = exact solution of dz/dx = 1 − (σ0/F_C) sgn(Δx) z over Δx = x_k − x_{k−1}
            (:meth:`rths_ident.models.lugre.ModifiedLuGre.step`, Eq. 2.10 with ẋ constant
            over the step), with the sigma point's σ0, F_C
    θ_k   = θ_{k−1}                         (random walk through the process noise)
    Q     = diag(q²) · Δt                   q: diffusion per √s of each normalised entry

Measurement model (Eq. 2.10 / 4.1, x_k and ẋ_k measured)::

    R_k = σ0 z_k + σ1 ż_k + σ2 ẋ_k + σ3 x_k,   ż_k = ẋ_k − (σ0/F_C)|ẋ_k| z_k
    measurement noise variance (force_noise_std / F_C_ref)² (the filter works in R/F_C_ref)

The filter is :mod:`rths_ident.estimators.ukf` (van der Merwe scaled sigma points, filterpy's
order): ``ukf_predict`` with Q = 0, then ``P⁻ += Q(Δt)`` (Δt is the step's argument, so the
same settings serve any sample rate), then ``ukf_update``; the posterior covariance is
symmetrised (P ← (P + Pᵀ)/2, a rounding-level change that keeps long records positive
definite). Parameter bounds ``[lower_ratio, upper_ratio]`` × guess (default 0.4…1.6, ±60 %)
are enforced by the UKF core's sigma-point clipping (Kandepu et al. 2008): no sigma point
ever has F_C ≤ 0 or σ0 ≤ 0.

Not in the thesis (seed 001 uses RLS only; digest 001 §2.2 notes that Bouc–Wen is
"usually identified with an unscented Kalman filter"): this module applies that UKF to the
LuGre column so the two identifiers can be compared on the same records.

``yielded`` latches once |R| ≥ yield_fraction · F̂_C (the nonlinear parameters are excited
only past yield, digest 001 §4.7); ``converged`` holds while the specimen has yielded,
every parameter's relative std √P_ii/θ_i ≤ ``convergence_tolerance``, and the normalised
estimates have stayed within ±``convergence_band`` of an anchor for ``hold_time`` seconds.
``converged_at`` [s] latches its first time.

Exported functional core (pure, JAX-traceable: ``jit``, ``lax.scan``, ``vmap``):

* :class:`LuGreUKFParams` — ``LuGreUKFParams.from_initial_guess(guess: LuGreParams, **options)``;
* :func:`init` ``(params, displacement=0.0) -> LuGreUKFState`` (at rest: z = 0);
* :func:`step` ``(params, state, x, v, measured_force, dt) -> (state, LuGreUKFOutput)``;
* :func:`estimate` ``(params, state) -> (estimate (3,) [σ̂0, F̂_C, σ̂3], relative_std (3,))``
  — what the model-updating hook needs (``relative_std`` for its ``max_relative_std`` guard);
* :func:`run` — :func:`step` scanned over a record;
* :func:`lugre_transition`, :func:`lugre_measurement` — the filter's fx and hx (normalised).

Online protocol (:mod:`rths_ident.estimators.online_identifier`):
:func:`lugre_ukf_online_identifier` ``(guess_params, **options) -> OnlineIdentifier``;
its ``Estimate`` is θ̂ = [σ̂0, F̂_C, σ̂3], the relative std from the parameter block of P
(√P_ii/θ̂_i of the normalised entries) and ``converged`` by the rule above, evaluated
on the current state.

Wrapper: :class:`LuGreUKFIdentifier` (same interface as
:class:`rths_ident.estimators.lugre_identifier.LuGreIdentifier`).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.errors import ParameterError
from rths_ident._params import field_range, params_dataclass
from rths_ident.estimators.lugre_identifier import RecordIdentifierWrapper
from rths_ident.protocols import Estimate, IdentifierInputs, OnlineIdentifier
from rths_ident.estimators.sigma_points import MerweScaledSigmaPoints
from rths_ident.estimators.ukf import UKFParams, UKFState, ukf_init, ukf_predict, ukf_update
from rths_ident.models import ElementInputs
from rths_ident.models.lugre import LuGreParams, LuGreState, ModifiedLuGre

__all__ = [
    "LuGreUKFParams",
    "LuGreUKFState",
    "LuGreUKFOutput",
    "init",
    "step",
    "estimate",
    "run",
    "lugre_transition",
    "lugre_measurement",
    "LuGreUKFIdentifier",
    "STATE_NAMES",
    "PARAMETER_NAMES",
    "PARAMETER_UNITS",
    "lugre_ukf_online_identifier",
]

STATE_NAMES = ("z", "sigma0", "Fc", "sigma3")
PARAMETER_NAMES = ("sigma0", "Fc", "sigma3")
PARAMETER_UNITS = ("N/m", "N", "N/m")
_N_STATE = 4


def _vector(name, value, size, low=0.0, low_inclusive=True):
    """Broadcast a scalar or (size,) option to a float array, checking its range."""
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 0:
        arr = np.full(size, float(arr))
    if arr.shape != (size,) or not np.all(np.isfinite(arr)):
        raise ParameterError(f"LuGreUKFParams.{name} must be a finite scalar or ({size},) array; got {value!r}")
    if np.any(arr < low) or (not low_inclusive and np.any(arr == low)):
        relation = ">" if not low_inclusive else ">="
        raise ParameterError(f"LuGreUKFParams.{name} must be {relation} {low:g}; got {value!r}")
    return arr


@params_dataclass
class LuGreUKFParams:
    """Configuration of the LuGre UKF identifier. SI units.

    Build it with :meth:`from_initial_guess`; the defaults are the single setting used for
    every record and scenario in the tests. Everything is a pytree leaf (no static
    fields), so configurations of different guesses stack for ``jax.vmap``.
    """

    sigma1: float = field_range(low=0.0, unit="N*s/m", doc="σ1, known micro-damping (Eq. 2.16)")
    sigma2: float = field_range(low=0.0, unit="N*s/m", doc="σ2, known macro-damping (Eq. 2.15)")
    parameter_reference: jax.Array = None  # (3,) initial guess [σ0 N/m, F_C N, σ3 N/m]
    z_reference: float = field_range(
        1.0, low=0.0, low_inclusive=False, unit="m", doc="z_ref = F_C/σ0 of the guess (z normalisation)"
    )
    initial_std: jax.Array = None  # (4,) √P(0) of the normalised state [z/z_ref, σ0, F_C, σ3 ratios]
    diffusion: jax.Array = None  # (4,) q: process-noise std per √s of the normalised state
    ukf: UKFParams = None  # weights, R (normalised), bounds; its Q is zero (added per step)
    yield_fraction: float = field_range(
        0.9, low=0.0, doc="'yielded' latches once |R| ≥ yield_fraction · F̂_C"
    )
    convergence_tolerance: float = field_range(
        0.01, low=0.0, low_inclusive=False, doc="'converged' needs every √P_ii/θ_i ≤ this"
    )
    convergence_band: float = field_range(
        0.005, low=0.0, low_inclusive=False, doc="half-width of the band of θ̂/θ_ref for 'converged'"
    )
    hold_time: float = field_range(1.0, low=0.0, unit="s", doc="time inside the band before 'converged'")

    def __post_init__(self):
        leaves = (self.parameter_reference, self.initial_std, self.diffusion)
        if any(isinstance(leaf, jax.core.Tracer) for leaf in leaves):
            return
        ref = np.asarray(self.parameter_reference, dtype=float) if self.parameter_reference is not None else None
        if ref is None or ref.shape != (3,) or not np.all(np.isfinite(ref)) or np.any(ref <= 0):
            raise ParameterError(
                "LuGreUKFParams.parameter_reference must be 3 positive finite values [σ0 N/m, F_C N, σ3 N/m] "
                f"(the initial guess); got {self.parameter_reference!r}"
            )
        for name in ("initial_std", "diffusion"):
            value = getattr(self, name)
            arr = np.asarray(value, dtype=float) if value is not None else None
            if arr is None or arr.shape != (_N_STATE,) or not np.all(np.isfinite(arr)) or np.any(arr < 0):
                raise ParameterError(
                    f"LuGreUKFParams.{name} must be 4 finite non-negative values for {STATE_NAMES} "
                    f"(normalised); got {value!r}"
                )
        if np.any(np.asarray(self.initial_std) <= 0):
            raise ParameterError(f"LuGreUKFParams.initial_std must be > 0 for every entry; got {self.initial_std!r}")
        if not isinstance(self.ukf, UKFParams):
            raise ParameterError("LuGreUKFParams.ukf must be a UKFParams (use LuGreUKFParams.from_initial_guess)")

    @classmethod
    def from_initial_guess(
        cls,
        initial_guess: LuGreParams,
        *,
        force_noise_std: float | None = None,
        parameter_std=0.3,
        z_std: float = 1e-3,
        parameter_diffusion=2e-3,
        z_diffusion: float = 1e-3,
        lower_ratio: float = 0.4,
        upper_ratio: float = 1.6,
        sigma_alpha: float = 0.1,
        sigma_beta: float = 2.0,
        sigma_kappa: float = 0.0,
        **options,
    ) -> "LuGreUKFParams":
        """Configuration from an initial guess of the LuGre parameters (σ1, σ2 taken as known).

        ``force_noise_std`` [N]: std of the force measurement noise, R of the filter
        (default 0.5 % of the guessed F_C). ``parameter_std`` (scalar or (3,)): initial std
        of σ0, F_C, σ3 relative to the guess (default 0.3). ``z_std``: initial std of
        z/z_ref (default 1e-3; the specimen starts at rest). ``parameter_diffusion``
        (scalar or (3,)) and ``z_diffusion``: process-noise std per √s of the normalised
        entries (Q = q² Δt per step; defaults 2e-3 and 1e-3). ``lower_ratio``/``upper_ratio``:
        parameter box relative to the guess (defaults 0.4, 1.6). ``sigma_alpha``,
        ``sigma_beta``, ``sigma_kappa``: scaled sigma points (defaults 0.1, 2, 0).
        Other keywords: ``yield_fraction``, ``convergence_tolerance``,
        ``convergence_band``, ``hold_time`` (fields of this class).
        """
        if not isinstance(initial_guess, LuGreParams):
            raise ParameterError(f"initial_guess must be a LuGreParams; got {type(initial_guess).__name__}")
        reference = np.array(
            [float(initial_guess.sigma0), float(initial_guess.Fc), float(initial_guess.sigma3)], dtype=float
        )
        if np.any(reference <= 0):
            raise ParameterError(
                "initial_guess must have σ0 > 0, F_C > 0 and σ3 > 0 (the filter identifies them relative to the "
                f"guess); got σ0={reference[0]!r}, F_C={reference[1]!r}, σ3={reference[2]!r}"
            )
        if force_noise_std is None:
            force_noise_std = 0.005 * reference[1]
        for name, value, meaning in (
            ("force_noise_std", force_noise_std, "a positive force [N]"),
            ("lower_ratio", lower_ratio, "a positive ratio"),
            ("upper_ratio", upper_ratio, "a positive ratio"),
        ):
            if not (isinstance(value, (int, float, np.integer, np.floating)) and np.isfinite(value) and value > 0):
                raise ParameterError(f"LuGreUKFParams.{name} must be {meaning}; got {value!r}")
        if not (lower_ratio <= 1.0 <= upper_ratio and lower_ratio < upper_ratio):
            raise ParameterError(
                f"LuGreUKFParams bounds must contain the initial guess: need lower_ratio ≤ 1 ≤ upper_ratio "
                f"and lower_ratio < upper_ratio; got {lower_ratio!r}, {upper_ratio!r}"
            )
        theta_std = _vector("parameter_std", parameter_std, 3, low_inclusive=False)
        z_std = _vector("z_std", z_std, 1, low_inclusive=False)
        theta_diffusion = _vector("parameter_diffusion", parameter_diffusion, 3)
        z_diffusion = _vector("z_diffusion", z_diffusion, 1)
        try:
            points = MerweScaledSigmaPoints(_N_STATE, sigma_alpha, sigma_beta, sigma_kappa)
        except ValueError as err:
            raise ParameterError(f"LuGreUKFParams sigma points: {err}") from None
        initial_std = np.concatenate([z_std, theta_std])
        ukf_params, _ = ukf_init(
            points,
            np.array([0.0, 1.0, 1.0, 1.0]),
            np.diag(initial_std**2),
            np.zeros((_N_STATE, _N_STATE)),
            (float(force_noise_std) / reference[1]) ** 2,
            1.0,  # unused: the transition is exact in the displacement increment
            lower_bound=[-np.inf] + [lower_ratio] * 3,
            upper_bound=[np.inf] + [upper_ratio] * 3,
        )
        return cls(
            sigma1=float(initial_guess.sigma1),
            sigma2=float(initial_guess.sigma2),
            parameter_reference=jnp.asarray(reference),
            z_reference=float(reference[1] / reference[0]),
            initial_std=jnp.asarray(initial_std),
            diffusion=jnp.asarray(np.concatenate([z_diffusion, theta_diffusion])),
            ukf=ukf_params,
            **options,
        )


class LuGreUKFState(NamedTuple):
    filter: UKFState  # mean (4,) and covariance (4, 4) of the normalised state
    previous_displacement: jax.Array  # x_{k−1} [m]
    yielded: jax.Array  # bool, latched
    band_anchor: jax.Array  # (3,) normalised estimate the convergence band is centred on
    time_in_band: jax.Array  # s
    time: jax.Array  # s since init
    converged_at: jax.Array  # s; NaN until first converged


class LuGreUKFOutput(NamedTuple):
    params: LuGreParams  # the estimate as model parameters (σ1, σ2 the known ones)
    sigma0: jax.Array  # σ̂0 [N/m]
    Fc: jax.Array  # F̂_C [N]
    sigma3: jax.Array  # σ̂3 [N/m]
    std: jax.Array  # (3,) √P_ii of σ̂0 [N/m], F̂_C [N], σ̂3 [N/m]
    relative_std: jax.Array  # (3,) std / estimate
    z_hat: jax.Array  # ẑ posterior [m]
    force_prediction: jax.Array  # a-priori predicted R (sigma-point mean) [N]
    innovation: jax.Array  # R_measured − predicted [N]
    log_likelihood: jax.Array  # of the innovation (normalised units)
    yielded: jax.Array  # bool
    converged: jax.Array  # bool


# ------------------------------------------------------------------------------ filter model


_LUGRE_TREEDEF = jax.tree_util.tree_structure(LuGreParams(sigma0=1.0, sigma1=1.0, sigma2=1.0, sigma3=1.0, Fc=1.0))


def _physical(params: LuGreUKFParams, s):
    """z [m] and LuGreParams of a normalised state ``s`` (unvalidated, traceable)."""
    theta = s[1:] * params.parameter_reference
    values = {"sigma0": theta[0], "sigma1": params.sigma1, "sigma2": params.sigma2, "sigma3": theta[2], "Fc": theta[1]}
    leaves = [values[name] for name in ("sigma0", "sigma1", "sigma2", "sigma3", "Fc")]  # LuGreParams field order
    return s[0] * params.z_reference, jax.tree_util.tree_unflatten(_LUGRE_TREEDEF, leaves)


def lugre_transition(s, dt, params: LuGreUKFParams, previous_displacement, displacement, velocity):
    """fx: normalised state after the displacement increment x_{k−1} → x_k (exact z update
    of :meth:`ModifiedLuGre.step` with the state's σ0, F_C; parameters unchanged). ``dt``
    is unused (the update is exact in Δx)."""
    z, lugre = _physical(params, s)
    state = LuGreState(displacement=jnp.asarray(previous_displacement, jnp.float64), z=z)
    new_state, _ = ModifiedLuGre.step(lugre, state, ElementInputs(displacement, velocity), dt)
    return s.at[0].set(new_state.z / params.z_reference)


def lugre_measurement(s, params: LuGreUKFParams, displacement, velocity):
    """hx: restoring force R/F_C_ref = (σ0 z + σ1 ż + σ2 ẋ + σ3 x)/F_C_ref (Eq. 2.10)."""
    z, lugre = _physical(params, s)
    zdot = ModifiedLuGre.zdot(lugre, z, velocity)
    force = lugre.sigma0 * z + lugre.sigma1 * zdot + lugre.sigma2 * velocity + lugre.sigma3 * displacement
    return jnp.reshape(force / params.parameter_reference[1], (1,))


# ------------------------------------------------------------------------------ functional core


def init(params: LuGreUKFParams, displacement=0.0) -> LuGreUKFState:
    """Identifier at rest at ``displacement`` [m]: θ̂ = guess, ẑ = 0, P = diag(initial_std²)."""
    zero = jnp.zeros((), jnp.float64)
    x0 = jnp.array([0.0, 1.0, 1.0, 1.0])
    P0 = jnp.diag(jnp.asarray(params.initial_std) ** 2)
    return LuGreUKFState(
        filter=UKFState(x0, P0),
        previous_displacement=jnp.asarray(displacement, jnp.float64),
        yielded=jnp.zeros((), bool),
        band_anchor=jnp.ones(3),
        time_in_band=zero,
        time=zero,
        converged_at=jnp.asarray(jnp.nan),
    )


def estimate(params: LuGreUKFParams, state: LuGreUKFState):
    """Current ``(estimate, relative_std)``: [σ̂0 N/m, F̂_C N, σ̂3 N/m] and √P_ii/θ̂_i (3,)."""
    ratios = state.filter.x[1:]
    ratio_std = jnp.sqrt(jnp.maximum(jnp.diag(state.filter.P)[1:], 0.0))
    return ratios * params.parameter_reference, ratio_std / ratios


def step(params: LuGreUKFParams, state: LuGreUKFState, x, v, measured_force, dt):
    """One filter step at a sample.

    x: displacement [m], v: velocity [m/s], measured_force: restoring force R [N],
    dt: time since the previous sample [s] (scales the process noise). Returns
    ``(state, LuGreUKFOutput)``. Pure and traceable (scan / vmap / jit).
    """
    x = jnp.asarray(x, jnp.float64)
    v = jnp.asarray(v, jnp.float64)
    measured_force = jnp.asarray(measured_force, jnp.float64)
    dt = jnp.asarray(dt, jnp.float64)
    fx_args = {"params": params, "previous_displacement": state.previous_displacement,
               "displacement": x, "velocity": v}  # fmt: skip
    hx_args = {"params": params, "displacement": x, "velocity": v}
    prior = ukf_predict(params.ukf, state.filter, lugre_transition, fx_args)
    prior = prior._replace(P=prior.P + jnp.diag(params.diffusion**2) * dt)
    force_scale = params.parameter_reference[1]
    posterior, info = ukf_update(params.ukf, prior, measured_force / force_scale, lugre_measurement, hx_args)
    posterior = posterior._replace(P=0.5 * (posterior.P + posterior.P.T))

    new_state = state._replace(filter=posterior, previous_displacement=x)
    theta, relative_std = estimate(params, new_state)
    yielded = state.yielded | (jnp.abs(measured_force) >= params.yield_fraction * theta[1])

    ratios = posterior.x[1:]
    left_band = jnp.any(jnp.abs(ratios - state.band_anchor) > params.convergence_band)
    band_anchor = jnp.where(left_band, ratios, state.band_anchor)
    time_in_band = jnp.where(left_band | ~yielded, 0.0, state.time_in_band + dt)
    time = state.time + dt
    confident = jnp.all(relative_std <= params.convergence_tolerance)
    converged = yielded & confident & (time_in_band >= params.hold_time)
    converged_at = jnp.where(converged & jnp.isnan(state.converged_at), time, state.converged_at)

    new_state = new_state._replace(yielded=yielded, band_anchor=band_anchor, time_in_band=time_in_band,
                                   time=time, converged_at=converged_at)  # fmt: skip
    z_hat, lugre = _physical(params, posterior.x)
    output = LuGreUKFOutput(
        params=lugre,
        sigma0=theta[0],
        Fc=theta[1],
        sigma3=theta[2],
        std=relative_std * theta,
        relative_std=relative_std,
        z_hat=z_hat,
        force_prediction=info.z_pred[0] * force_scale,
        innovation=info.y[0] * force_scale,
        log_likelihood=info.log_likelihood,
        yielded=yielded,
        converged=converged,
    )
    return new_state, output


def run(params: LuGreUKFParams, state: LuGreUKFState, displacement, velocity, measured_force, dt):
    """Scan :func:`step` over a record (arrays of N samples at t_1 … t_N; ``state`` holds
    x at t_0); returns ``(state, outputs (N, ...))``."""

    def body(state, sample):
        x, v, force = sample
        return step(params, state, x, v, force, dt)

    samples = tuple(jnp.asarray(a, jnp.float64) for a in (displacement, velocity, measured_force))
    return jax.lax.scan(body, state, samples)


_step_jit = jax.jit(step)
_run_jit = jax.jit(run)


# ------------------------------------------------------------------------------ online protocol


def protocol_step(params: LuGreUKFParams, state: LuGreUKFState, inputs: IdentifierInputs, dt):
    """:func:`step` with the online protocol's signature (``inputs``: x [m], ẋ [m/s], R [N])."""
    return step(params, state, inputs.displacement, inputs.velocity, inputs.force, dt)


def protocol_estimate(params: LuGreUKFParams, state: LuGreUKFState) -> Estimate:
    """θ̂ = [σ̂0 N/m, F̂_C N, σ̂3 N/m], √P_ii/θ̂_i, and ``converged`` (module doc: yielded,
    every relative std ≤ ``convergence_tolerance`` and ``hold_time`` inside the band) —
    the same flag :func:`step` outputs, recomputed from the state."""
    theta, relative_std = estimate(params, state)
    converged = (state.yielded & jnp.all(relative_std <= params.convergence_tolerance)
                 & (state.time_in_band >= params.hold_time))
    return Estimate(theta, relative_std, converged)


def lugre_ukf_online_identifier(guess_params: LuGreParams, **options) -> OnlineIdentifier:
    """The joint-UKF LuGre identifier as an :class:`OnlineIdentifier`; ``options`` are
    those of :meth:`LuGreUKFParams.from_initial_guess`. θ̂ = [σ0, F_C, σ3]."""
    params = LuGreUKFParams.from_initial_guess(guess_params, **options)
    return OnlineIdentifier("lugre-ukf", params, init, protocol_step, protocol_estimate,
                            PARAMETER_NAMES, PARAMETER_UNITS)


# ------------------------------------------------------------------------------ wrapper


class LuGreUKFIdentifier(RecordIdentifierWrapper):
    """Stateful LuGre UKF identifier for scripts; all maths lives in :func:`step`.

    >>> guess = ModifiedLuGre.params_from_physical(k=0.9 * 1.34e6, Fy=0.7 * 2.24e4)
    >>> ident = LuGreUKFIdentifier(guess, force_noise_std=50.0)
    >>> out = ident.update(x, v, force, dt)          # one sample
    >>> history = ident.run(x_record, v_record, force_record, dt)
    >>> ident.params_estimate, ident.relative_std, ident.converged
    """

    _step = staticmethod(_step_jit)
    _run = staticmethod(_run_jit)

    def __init__(self, initial_guess: LuGreParams, displacement: float = 0.0, **options):
        self.params = LuGreUKFParams.from_initial_guess(initial_guess, **options)
        self.state = init(self.params, displacement)
        self.last_output: LuGreUKFOutput | None = None

    @property
    def estimate(self) -> np.ndarray:
        """[σ̂0 N/m, F̂_C N, σ̂3 N/m]."""
        return np.asarray(estimate(self.params, self.state)[0])

    @property
    def relative_std(self) -> np.ndarray:
        """√P_ii / θ̂_i of σ̂0, F̂_C, σ̂3."""
        return np.asarray(estimate(self.params, self.state)[1])

    @property
    def P(self) -> np.ndarray:
        """Covariance of the normalised state [z/z_ref, σ0, F_C, σ3 ratios]."""
        return np.asarray(self.state.filter.P)

    @property
    def params_estimate(self) -> LuGreParams:
        sigma0, fc, sigma3 = self.estimate.tolist()
        return LuGreParams(sigma0=sigma0, sigma1=float(self.params.sigma1), sigma2=float(self.params.sigma2),
                           sigma3=sigma3, Fc=fc)  # fmt: skip
