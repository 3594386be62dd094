"""Online identification of the modified LuGre column (seed 001 §4, Eqs. 4.1–4.21).

Per sample (x, ẋ measured, R measured), with σ1, σ2 known:

    y  = R − (σ1 + σ2) ẋ                                         (4.2)
    ψ̂  = [ẑ, −|ẋ| ẑ, x]                                          (4.5)
    y ≈ Θᵀ ψ̂,    Θ = [σ0, σ0σ1/F_C, σ3]                          (4.4–4.5)
    constrained RLS on Θ (rls.correct + qp_projection)           (4.6–4.14)
    σ̂0 = θ̂1,  F̂_C = θ̂1 σ1/θ̂2,  σ̂3 = θ̂3                         (4.15–4.17)
    R̂  = Θ̂ᵀ ψ̂ + (σ1 + σ2) ẋ                                       (4.21)

The LIP maths (ψ, Θ ↔ params, known force) is :class:`rths_ident.models.lugre.ModifiedLuGre`'s;
the z observer *is* that model's exact step driven by the estimated parameters.

Robustness (not in the thesis; digest 001 §8 shows the thesis's certainty-equivalence
scheme diverging; docs/estimators/rls.md explains the choices):

0. **Sensitivity regressor** — ``regressor="sensitivity"`` (default): the θ2 entry of
   the gain regressor is the full derivative of the prediction Θ̂ᵀψ̂(θ̂2),
   −|ẋ|ẑ + (θ̂1 − θ̂2|ẋ|)·∂ẑ/∂θ2, with ∂ẑ/∂θ2 carried along by forward-mode
   differentiation (``jax.jvp``) of the observer step (recursive prediction error).
   The plain LIP regressor (``regressor="lip"``, the thesis) sees θ2 only through
   −θ2|ẋ|ẑ ≈ −σ1|ẋ| (~0.3 % of R at ξ = 2 %), leaving θ2 on a nearly neutral direction:
   that is why the thesis needed per-record P(0). Entries 1, 3 and the prediction are
   the thesis's.
1. **Observer** — ``observer="exact"`` (default): ẑ is advanced with the exact solution
   of dz/dx = 1 − (θ̂2/σ1) sgn(Δx) z over each displacement increment,
   ẑ_end = z* + (ẑ0 − z*) exp(−(θ̂2/σ1)|Δx|), z* = sgn(Δx) σ1/θ̂2 (unconditionally
   stable, |ẑ| ≤ max(|ẑ0|, σ1/θ̂2)). ``observer="euler"`` is the thesis's forward-Euler
   Eq. 4.10, for comparison.
2. **Observer correction** — ``observer_correction=True`` (default): after each update
   ẑ is moved to first order onto the observer run with the *new* θ̂2 over the whole
   past, ẑ ← ẑ + ∂ẑ/∂θ2 · (θ̂2 − θ̂2⁻) (the sensitivity of 0.; clipped to |ẑ| ≤ σ1/θ̂2).
   The thesis's open-loop ẑ is the integral of every past θ̂2: after a large update it
   belongs to none of them, the next regressors are inconsistent with the estimate, and
   an aggressive RLS then oscillates between its bounds (El Centro, Scenario 1, measured:
   F̂_C 0.54–1.95 × true in the first second). With the correction ẑ stays the observer
   of the current estimate, as the state of a joint filter would.
3. **Normalisation** — the RLS runs on ϑ = Θ/Θ_ref (Θ_ref = Θ̂(0) from the initial guess)
   with y/F_ref (F_ref = initial F_C guess); then ϑ(0) = 1 and one dimensionless
   P(0) = p0·I serves every record and scenario (no per-record Table 4.2 tuning). The
   RLS's unit weight stands for the variance of the equation error, so
   p0 = (initial_relative_std / equation_error_std)² = (0.3 / 0.005)² = 3600 by default:
   the initial guess may be 30 % off, the model explains R to 0.5 % of F_C (the joint
   UKF's P(0) and R, :mod:`rths_ident.estimators.lugre_ukf_identifier`). The former
   p0 = 1 stood for an equation error as large as F_C itself: the RLS then trusted each
   sample 3600 times less, and the estimates crept (Morgan Hill, Scenario 1: σ̂0 within
   2 % only at 17.5 s).
4. **Bounds** — after each update ϑ is projected (exactly, metric P⁻¹) onto
   [lower_ratio, upper_ratio]³ (default 0.4…1.6 = ±60 % of the initial guesses); so
   θ̂2 > 0, F̂_C finite, and the observer never degenerates to ẑ = x.
5. **Freeze θ2 until yield** — ``freeze_until_yield=True`` (default off): while
   |R| < yield_fraction · F̂_C the θ2 entry of the gain regressor is zeroed (the
   prediction error still uses the full ψ̂): θ̂2 and its covariance stay at their prior
   until the specimen yields. Off by default: before yield F_C already shows in the
   curvature of the force–displacement path (ẑ falls below x by x²/(2 z_ss) long before
   |R| reaches F_C), the sensitivity regressor reads it, and a θ2 frozen at a wrong
   guess makes σ̂0 absorb the observer's error with a collapsing covariance (Scenario 1,
   θ̂2(0) = 1.29 θ2: σ̂0 up to +14 % at first yield on El Centro, 17.5 s to converge on
   Morgan Hill; docs/hybrid/lugre_frame.md). ``yielded`` latches on
   |R| ≥ yield_fraction · F̂_C either way.
6. **Forgetting + trace cap** — λ < 1 (default 1 − 1e-4 per sample: ~2.4 s memory at
   4096 Hz) discards regressors formed with a wrong early θ̂2 (ẑ depends on θ̂2);
   tr P ≤ trace_cap·tr P(0)/3 stops wind-up in the elastic tail of a record.

Seed 001's own setting (plain LIP regressor, forward-Euler observer without correction,
λ = 1, positivity only, its Table 4.2 P(0) per record and scenario) is
:func:`thesis_identifier_params` / :func:`lugre_rls_thesis_identifier`.

Convergence flag: ``converged`` while the specimen has yielded, every normalised
estimate has stayed inside a band ±convergence_band (about an anchor re-set whenever it
leaves) for ``hold_time`` seconds, and tr P ≤ covariance_fraction · tr P(0) (the data
have actually informed every direction — a stalled but unidentified estimate keeps P
large). ``converged_at`` (state) latches the first time it holds.

Confidence (not in the thesis; what the model-updating hook's ``max_relative_std`` and
``require_converged`` guards read). Near the true Θ the a-priori error of the RLS is
linear in the estimation error ε = ϑ̂ − ϑ: e ≈ −φᵀε + n, with φ the full (normalised)
regressor and n the equation error. One update ε⁺ = ε + K e with the gain
K = P g/(λ + gᵀP g) (g = the gain regressor: φ, with its θ2 entry zeroed before yield under
``freeze_until_yield``) is
therefore ε⁺ = (I − K φᵀ) ε + K n, and the covariance C of ε propagates exactly as

    C⁺ = (I − K φᵀ) C (I − K φᵀ)ᵀ + σ̂_e² K Kᵀ,      C(0) = initial_relative_std² · I

with σ̂_e² the exponentially weighted mean square of the a-priori residuals, with the
RLS's own forgetting and normalised by its weight Σλ^k(1−λ) (so it is an unbiased mean
from the first sample). With λ = 1 and C(0) = σ_e² P(0) this is σ_e² P (the textbook
RLS covariance); with λ < 1 it is σ_e² P [λ^{2t}P(0)⁻¹ + Σ λ^{2(t−k)} φ_k φ_kᵀ] P, about
σ_e² P/(1+λ) once the memory is full — the spread of ϑ̂ over noise realisations, not the
(larger, Bayesian) P of the forgetting's implied parameter drift. With ``freeze_until_yield``
θ2 does not adapt before yield and its variance stays at the prior, so F̂_C is reported as
unidentified. The
covariance of [σ̂0, F̂_C, σ̂3] is J C Jᵀ with J the Jacobian of ϑ → (Eqs. 4.15–4.17)
(``jax.jacfwd``); ``relative_std`` = √diag/|estimate|. Not modelled: the QP projection
(inactive once ϑ̂ is inside the box) and the trace cap (it scales P, not this step's K).
Validated in tests/estimators/test_lugre_identifier.py: on a record with known white
force noise, the reported std matches the spread of the estimates over 20 noise seeds.
:func:`confidence` returns it; the online protocol (:func:`lugre_rls_online_identifier`)
reports ``converged`` = yielded and every relative std ≤ ``converged_relative_std``.
The estimate Θ̂ itself is unaffected by all of this.

Functional core (the online protocol's shape, :mod:`rths_ident.estimators.online_identifier`):
:func:`init`, :func:`step` ``(params, state, IdentifierInputs(x, ẋ, R), dt)`` (also
``identifier_step``), :func:`estimate`; a record is one scan
(:func:`~rths_ident.estimators.online_identifier.run_identifier`); protocol constructor
:func:`lugre_rls_online_identifier`; wrapper :class:`LuGreIdentifier`;
:func:`identification_errors` (Eqs. 4.18–4.20, via :mod:`rths_ident.metrics`;
convergence times: :func:`rths_ident.metrics.convergence_time`).
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident import small_linalg as sl
from rths_ident.errors import ParameterError
from rths_ident._params import field_range, params_dataclass
from rths_ident.estimators import qp_projection as _qp
from rths_ident.estimators import rls as _rls
from rths_ident.estimators.identifier_wrapper import IdentifierWrapper
from rths_ident.protocols import Estimate, IdentifierInputs, OnlineIdentifier
from rths_ident.metrics import parameter_error_percent
from rths_ident.models import ElementInputs
from rths_ident.models.lugre import LuGreParams, LuGreState, ModifiedLuGre

__all__ = [
    "LuGreIdentifierParams",
    "LuGreIdentifierState",
    "LuGreIdentifierOutput",
    "init",
    "step",
    "identifier_step",
    "estimate",
    "LuGreIdentifier",
    "identification_errors",
    "confidence",
    "residual_variance",
    "lugre_rls_online_identifier",
    "lugre_rls_thesis_identifier",
    "thesis_identifier_params",
    "PARAM_NAMES",
    "PARAM_UNITS",
]

#: θ̂ of the online protocol (:func:`lugre_rls_online_identifier`) and their SI units
PARAM_NAMES = ("sigma0", "Fc", "sigma3")
PARAM_UNITS = ("N/m", "N", "N/m")


@params_dataclass(static=("observer", "projection", "freeze_until_yield", "regressor", "observer_correction"))
class LuGreIdentifierParams:
    """Configuration of the modified-LuGre identifier. SI units.

    Build it with :meth:`from_initial_guess`; the defaults are the single setting used
    for every record and scenario in the tests.
    """

    sigma1: float = field_range(low=0.0, unit="N*s/m", doc="σ1, known micro-damping (Eq. 2.16)")
    sigma2: float = field_range(low=0.0, unit="N*s/m", doc="σ2, known macro-damping (Eq. 2.15)")
    theta_reference: jax.Array = None  # Θ̂(0) = [σ0, σ0σ1/F_C, σ3] of the initial guess
    force_scale: float = field_range(
        1.0, low=0.0, low_inclusive=False, unit="N", doc="F_ref, force normalisation (initial F_C guess)"
    )
    initial_covariance: float = field_range(
        3600.0, low=0.0, low_inclusive=False,
        doc="p0: P(0) = p0·I (or diag(p0) for 3 values) of the normalised parameters ϑ = Θ/Θ_ref, in units of the "
            "equation-error variance; from_initial_guess sets (initial_relative_std / equation_error_std)²",
    )
    equation_error_std: float = field_range(
        0.005, low=0.0, low_inclusive=False,
        doc="std of the LIP equation error relative to F_ref that the RLS's unit weight stands for",
    )
    lower_ratio: float = field_range(0.4, low=0.0, low_inclusive=False, doc="lower bound of Θ/Θ_ref")
    upper_ratio: float = field_range(1.6, low=0.0, low_inclusive=False, doc="upper bound of Θ/Θ_ref")
    forgetting: float = field_range(
        1.0 - 1e-4, low=0.0, high=1.0, low_inclusive=False, doc="RLS forgetting factor λ per sample"
    )
    trace_cap: float = field_range(
        3.0, low=0.0, doc="tr P ≤ trace_cap·tr P(0)/3 (0 = off) — stops wind-up when λ < 1"
    )
    yield_fraction: float = field_range(
        0.9, low=0.0, doc="'yielded' latches once |R| ≥ yield_fraction·F̂_C (θ2 adapts from then with freeze_until_yield)"
    )
    convergence_band: float = field_range(
        0.005, low=0.0, low_inclusive=False, doc="half-width of the band of Θ̂/Θ_ref for the converged flag"
    )
    hold_time: float = field_range(1.0, low=0.0, unit="s", doc="time inside the band before 'converged'")
    covariance_fraction: float = field_range(
        0.1, low=0.0, low_inclusive=False, doc="'converged' also needs tr P ≤ covariance_fraction · tr P(0)"
    )
    initial_relative_std: float = field_range(
        0.3, low=0.0, low_inclusive=False,
        doc="prior std of Θ/Θ_ref: how far the initial guess may be off (starts the error covariance C)",
    )
    converged_relative_std: float = field_range(
        0.02, low=0.0, low_inclusive=False,
        doc="online protocol's 'converged': yielded and every relative std of [σ̂0, F̂_C, σ̂3] ≤ this",
    )
    observer: str = "exact"
    projection: str = "weighted"
    freeze_until_yield: bool = False
    regressor: str = "sensitivity"
    observer_correction: bool = True

    def __post_init__(self):
        if self.observer not in ("exact", "euler"):
            raise ParameterError(f"LuGreIdentifierParams.observer must be 'exact' or 'euler'; got {self.observer!r}")
        if self.regressor not in ("sensitivity", "lip"):
            raise ParameterError(
                f"LuGreIdentifierParams.regressor must be 'sensitivity' or 'lip'; got {self.regressor!r}"
            )
        if self.projection not in ("weighted", "euclidean"):
            raise ParameterError(
                f"LuGreIdentifierParams.projection must be 'weighted' or 'euclidean'; got {self.projection!r}"
            )
        if isinstance(self.theta_reference, jax.core.Tracer) or isinstance(self.initial_covariance, jax.core.Tracer):
            return
        p0 = np.asarray(self.initial_covariance, dtype=float)
        if p0.shape not in ((), (3,)) or not np.all(np.isfinite(p0)) or np.any(p0 <= 0):
            raise ParameterError(
                "LuGreIdentifierParams.initial_covariance must be one positive value (P(0) = p0·I) or 3 positive "
                f"values (P(0) = diag) of the normalised parameters; got {self.initial_covariance!r}")
        ref = np.asarray(self.theta_reference, dtype=float) if self.theta_reference is not None else None
        if ref is None or ref.shape != (3,) or not np.all(np.isfinite(ref)) or np.any(ref <= 0):
            raise ParameterError(
                "LuGreIdentifierParams.theta_reference must be 3 positive finite values "
                f"[σ0, σ0σ1/F_C, σ3] (the initial guess); got {self.theta_reference!r}"
            )
        if not np.ndim(self.lower_ratio) and not np.ndim(self.upper_ratio):
            if float(self.lower_ratio) >= float(self.upper_ratio):
                raise ParameterError(
                    f"LuGreIdentifierParams.lower_ratio ({self.lower_ratio}) must be < upper_ratio ({self.upper_ratio})"
                )
            if not (float(self.lower_ratio) <= 1.0 <= float(self.upper_ratio)):
                raise ParameterError("LuGreIdentifierParams: the bounds must contain the initial guess (lower_ratio ≤ 1 ≤ upper_ratio)")

    @classmethod
    def from_initial_guess(cls, initial_guess: LuGreParams, **options) -> "LuGreIdentifierParams":
        """From an initial guess of the LuGre parameters (σ1, σ2 taken as known). Without
        ``initial_covariance``, P(0) = (initial_relative_std / equation_error_std)²·I:
        the prior of the normalised parameters in units of the equation-error variance
        (module doc, item 3)."""
        if not isinstance(initial_guess, LuGreParams):
            raise ParameterError(f"initial_guess must be a LuGreParams; got {type(initial_guess).__name__}")
        if "initial_covariance" not in options:
            prior = options.get("initial_relative_std", _field_default("initial_relative_std"))
            noise = options.get("equation_error_std", _field_default("equation_error_std"))
            if _is_positive_number(prior) and _is_positive_number(noise):  # else the field check names it
                options["initial_covariance"] = (float(prior) / float(noise)) ** 2
        theta_ref = ModifiedLuGre.theta_from_params(initial_guess)
        return cls(sigma1=initial_guess.sigma1, sigma2=initial_guess.sigma2, theta_reference=theta_ref,
                   force_scale=initial_guess.Fc, **options)


def _field_default(name: str):
    return next(f.default for f in dataclasses.fields(LuGreIdentifierParams) if f.name == name)


def _is_positive_number(value) -> bool:
    try:
        return bool(np.isfinite(float(value)) and float(value) > 0)
    except (TypeError, ValueError):
        return False


class LuGreIdentifierState(NamedTuple):
    rls: _rls.RLSState  # on the normalised parameters ϑ = Θ/Θ_ref
    observer: LuGreState  # previous displacement and ẑ
    z_sensitivity: jax.Array  # ∂ẑ/∂θ2 [m/(N·s/m²)]
    yielded: jax.Array  # bool, latched
    band_anchor: jax.Array  # (3,) normalised estimate the band is centred on
    time_in_band: jax.Array  # s
    time: jax.Array  # s since init
    converged_at: jax.Array  # s; NaN until first converged
    error_covariance: jax.Array  # (3, 3) C, covariance of ϑ̂ − ϑ (normalised units; module doc)
    residual_power: jax.Array  # exponentially weighted Σ λ^(t−k)(1−λ) e_k² (normalised)
    residual_weight: jax.Array  # Σ λ^(t−k)(1−λ): residual_power/residual_weight = σ̂_e²


class LuGreIdentifierOutput(NamedTuple):
    theta: jax.Array  # (3,) Θ̂ [N/m, N·s/m², N/m]
    params: LuGreParams  # recovered model parameters (σ1, σ2 the known ones) for model updating
    sigma0: jax.Array  # σ̂0 [N/m]
    Fc: jax.Array  # F̂_C [N]
    sigma3: jax.Array  # σ̂3 [N/m]
    force_prediction: jax.Array  # R̂ (Eq. 4.21) with the updated Θ̂ [N]
    prediction_error: jax.Array  # a-priori y − Θ̂(t−1)ᵀψ̂ [N]
    z_hat: jax.Array  # ẑ [m]
    covariance_trace: jax.Array  # tr P (normalised units)
    yielded: jax.Array  # θ2 adapting
    converged: jax.Array  # bool
    relative_std: jax.Array  # (3,) √Var/|estimate| of [σ̂0, F̂_C, σ̂3] (module doc, "Confidence")


def _initial_covariance_diagonal(params: LuGreIdentifierParams):
    """diag P(0) (3,) of the normalised parameters."""
    return jnp.broadcast_to(jnp.asarray(params.initial_covariance, jnp.float64), (3,))


def _constrained_params(params: LuGreIdentifierParams) -> _qp.ConstrainedRLSParams:
    """Constrained-RLS configuration on the normalised parameters (box only)."""
    rls_params = _rls.RLSParams(forgetting=params.forgetting,
                                trace_cap=params.trace_cap * sl.summed(_initial_covariance_diagonal(params)) / 3.0)
    return _qp.ConstrainedRLSParams(
        rls=rls_params,
        lower=jnp.full((3,), params.lower_ratio, dtype=jnp.float64),
        upper=jnp.full((3,), params.upper_ratio, dtype=jnp.float64),
        A=jnp.zeros((0, 3)),
        b=jnp.zeros((0,)),
        projection=params.projection,
    )


def _lugre_params(params: LuGreIdentifierParams, theta) -> LuGreParams:
    return ModifiedLuGre.params_from_theta(theta, params.sigma1, params.sigma2, validate=False)


def init(params: LuGreIdentifierParams) -> LuGreIdentifierState:
    """Identifier at rest: Θ̂ = Θ_ref, P = P(0), ẑ = 0, x = 0, not yielded."""
    zero = jnp.zeros((), jnp.float64)
    rls_state = _rls.init(_rls.RLSParams(), jnp.ones(3), jnp.diag(_initial_covariance_diagonal(params)))
    return LuGreIdentifierState(
        rls=rls_state,
        observer=LuGreState(displacement=zero, z=zero),
        z_sensitivity=zero,
        yielded=jnp.asarray(False),
        band_anchor=jnp.ones(3),
        time_in_band=zero,
        time=zero,
        converged_at=jnp.asarray(jnp.nan),
        error_covariance=jnp.eye(3) * params.initial_relative_std**2,
        residual_power=zero,
        residual_weight=zero,
    )


def _physical_from_normalised(params: LuGreIdentifierParams, normalised):
    """[σ0 N/m, F_C N, σ3 N/m] from ϑ = Θ/Θ_ref (Eqs. 4.15–4.17)."""
    theta = normalised * params.theta_reference
    return jnp.stack([theta[0], theta[0] * params.sigma1 / theta[1], theta[2]])


def confidence(params: LuGreIdentifierParams, state: LuGreIdentifierState):
    """``(estimate (3,), covariance (3, 3), relative_std (3,))`` of [σ̂0 N/m, F̂_C N, σ̂3 N/m]:
    the error covariance C of ϑ̂ mapped through the Jacobian J of ϑ → [σ0, F_C, σ3]
    (``jax.jacfwd``): Cov = J C Jᵀ (module doc, "Confidence"). Pure and traceable."""
    normalised = state.rls.theta
    estimate = _physical_from_normalised(params, normalised)
    jacobian = jax.jacfwd(lambda n: _physical_from_normalised(params, n))(normalised)
    covariance = sl.quadratic_form(jacobian, state.error_covariance)
    relative_std = jnp.sqrt(jnp.maximum(jnp.diag(covariance), 0.0)) / jnp.abs(estimate)
    return estimate, covariance, relative_std


def residual_variance(state: LuGreIdentifierState):
    """σ̂_e², the exponentially weighted mean square of the a-priori residuals
    (normalised by F_ref²; 0 before the first sample)."""
    return jnp.where(state.residual_weight > 0.0, state.residual_power / jnp.maximum(state.residual_weight, 1e-300),
                     0.0)


def _advance_observer(params: LuGreIdentifierParams, observer: LuGreState, theta, x, v, dt) -> LuGreState:
    lugre = _lugre_params(params, theta)
    if params.observer == "exact":  # static
        new_observer, _ = ModifiedLuGre.step(lugre, observer, ElementInputs(x, v), dt)
        return new_observer
    # seed 001 Eq. 4.10, forward Euler with the velocity of the step
    z = observer.z + dt * ModifiedLuGre.zdot(lugre, observer.z, v)
    return LuGreState(displacement=jnp.asarray(x, jnp.float64), z=z)


def step(params: LuGreIdentifierParams, state: LuGreIdentifierState, inputs: IdentifierInputs, dt):
    """One identifier step at a sample (also exported as ``identifier_step``).

    ``inputs``: displacement x [m], velocity ẋ [m/s], restoring force R [N] (inertia of
    the specimen removed); dt: sample interval [s]. Returns (state, LuGreIdentifierOutput).
    Pure and traceable (scan / vmap / jit).
    """
    x = jnp.asarray(inputs.displacement, jnp.float64)
    v = jnp.asarray(inputs.velocity, jnp.float64)
    measured_force = inputs.force
    theta_ref = params.theta_reference
    theta_prev = state.rls.theta * theta_ref

    def observer_z(z_previous, theta2):
        theta = theta_prev.at[1].set(theta2)
        return _advance_observer(params, state.observer._replace(z=z_previous), theta, x, v, dt).z

    # ẑ and its sensitivity ∂ẑ/∂θ2 (forward-mode derivative of the observer step)
    z_hat, z_sensitivity = jax.jvp(observer_z, (state.observer.z, theta_prev[1]),
                                   (state.z_sensitivity, jnp.ones(())))
    observer = LuGreState(displacement=x, z=z_hat)
    psi = ModifiedLuGre.lip_regressor(z_hat, v, x)
    known = ModifiedLuGre.lip_known_force(_lugre_params(params, theta_prev), v)
    y = measured_force - known  # Eq. 4.2
    error_normalised = (y - sl.vdot(psi, theta_prev)) / params.force_scale
    if params.regressor == "sensitivity":  # static
        # gradient of the prediction Θᵀψ̂(θ2) w.r.t. Θ: the LIP regressor plus the
        # observer's dependence on θ2 in the θ2 entry (recursive prediction error)
        d_prediction_d_z = theta_prev[0] - theta_prev[1] * jnp.abs(v)
        gradient = psi.at[1].add(d_prediction_d_z * z_sensitivity)
    else:
        gradient = psi  # seed 001: certainty equivalence
    phi = gradient * theta_ref / params.force_scale  # normalised regressor

    fc_prev = theta_prev[0] * params.sigma1 / theta_prev[1]
    yielded = state.yielded | (jnp.abs(measured_force) >= params.yield_fraction * fc_prev)
    if params.freeze_until_yield:  # static
        gain_phi = jnp.where(yielded, phi, phi * jnp.array([1.0, 0.0, 1.0]))
    else:
        gain_phi = phi
    rls_state = _qp.correct(_constrained_params(params), state.rls, gain_phi, error_normalised)

    # confidence (module doc): σ̂_e² with the RLS's forgetting, then C propagated through
    # this update with its gain K = P g/(λ + gᵀ P g) (g the gain regressor, φ the full one)
    lam = params.forgetting
    residual_power = lam * state.residual_power + (1.0 - lam) * error_normalised**2
    residual_weight = lam * state.residual_weight + (1.0 - lam)
    noise_variance = residual_power / residual_weight
    P_gain = sl.matvec(state.rls.covariance, gain_phi)
    gain = P_gain / (lam + sl.vdot(gain_phi, P_gain))
    transition = jnp.eye(3) - sl.outer(gain, phi)
    error_covariance = sl.quadratic_form(transition, state.error_covariance) + noise_variance * sl.outer(gain, gain)
    error_covariance = 0.5 * (error_covariance + error_covariance.T)

    theta = rls_state.theta * theta_ref
    if params.observer_correction:  # static
        # ẑ of the observer run with the new θ̂2, to first order (module doc, item 2)
        z_bound = params.sigma1 / theta[1]
        corrected = z_hat + z_sensitivity * (theta[1] - theta_prev[1])
        observer = observer._replace(z=jnp.clip(corrected, -z_bound, z_bound))
    lugre = _lugre_params(params, theta)
    force_prediction = sl.vdot(theta, psi) + known  # Eq. 4.21

    # convergence flag: stayed within ±band of an anchor for hold_time after yield
    left_band = sl.any_of(jnp.abs(rls_state.theta - state.band_anchor) > params.convergence_band)
    band_anchor = jnp.where(left_band, rls_state.theta, state.band_anchor)
    time_in_band = jnp.where(left_band | ~yielded, 0.0, state.time_in_band + dt)
    time = state.time + dt
    confident = jnp.trace(rls_state.covariance) <= params.covariance_fraction * sl.summed(
        _initial_covariance_diagonal(params))
    converged = yielded & (time_in_band >= params.hold_time) & confident
    converged_at = jnp.where(converged & jnp.isnan(state.converged_at), time, state.converged_at)

    new_state = LuGreIdentifierState(
        rls=rls_state,
        observer=observer,
        z_sensitivity=z_sensitivity,
        yielded=yielded,
        band_anchor=band_anchor,
        time_in_band=time_in_band,
        time=time,
        converged_at=converged_at,
        error_covariance=error_covariance,
        residual_power=residual_power,
        residual_weight=residual_weight,
    )
    _, _, relative_std = confidence(params, new_state)
    output = LuGreIdentifierOutput(
        theta=theta,
        params=lugre,
        sigma0=lugre.sigma0,
        Fc=lugre.Fc,
        sigma3=lugre.sigma3,
        force_prediction=force_prediction,
        prediction_error=error_normalised * params.force_scale,
        z_hat=observer.z,
        covariance_trace=jnp.trace(rls_state.covariance),
        yielded=yielded,
        converged=converged,
        relative_std=relative_std,
    )
    return new_state, output


identifier_step = step


# ------------------------------------------------------------------------------ online protocol


def estimate(params: LuGreIdentifierParams, state: LuGreIdentifierState) -> Estimate:
    """θ̂ = [σ̂0 N/m, F̂_C N, σ̂3 N/m] (Eqs. 4.15–4.17), its relative std (:func:`confidence`)
    and converged = yielded ∧ every relative std ≤ ``converged_relative_std``."""
    lugre = _lugre_params(params, state.rls.theta * params.theta_reference)
    _, _, relative_std = confidence(params, state)
    converged = state.yielded & sl.all_of(relative_std <= params.converged_relative_std)
    return Estimate(jnp.stack([lugre.sigma0, lugre.Fc, lugre.sigma3]), relative_std, converged,
                    sl.is_positive_definite(state.rls.covariance))


def thesis_identifier_params(guess_params: LuGreParams, thesis_initial_covariance) -> LuGreIdentifierParams:
    """Seed 001's own identifier setting (§4.2–4.3): the plain LIP regressor (Eq. 4.5),
    the forward-Euler certainty-equivalence observer (Eq. 4.10) without correction, no
    forgetting (λ = 1, Simulink's RLS block default), no trace cap, no freeze, and
    positivity only (Eqs. 4.11–4.14: the box [1e-6, 1e6] × Θ̂(0), an element-wise clip).

    ``thesis_initial_covariance``: diag P(0) (3,) as the thesis tabulates it (Table 4.2)
    for Θ = [σ0, σ0σ1/F_C, σ3] in [(N/m)², (N·s/m²)², (N/m)²], its RLS weighing each
    sample of y [N] with 1 N². In this module's normalised units (ϑ = Θ/Θ_ref,
    y/F_ref, unit weight) that is P(0)_ii = P_ii · F_ref² / Θ_ref,i²."""
    p_thesis = np.asarray(thesis_initial_covariance, dtype=float)
    if p_thesis.shape != (3,) or not np.all(np.isfinite(p_thesis)) or np.any(p_thesis <= 0):
        raise ParameterError("thesis_initial_covariance must be 3 positive values diag P(0) for [σ0, σ0σ1/F_C, σ3] "
                             f"in [(N/m)², (N·s/m²)², (N/m)²] (seed 001 Table 4.2); got {thesis_initial_covariance!r}")
    theta_reference = np.asarray(ModifiedLuGre.theta_from_params(guess_params), dtype=float)
    normalised = p_thesis * float(guess_params.Fc) ** 2 / theta_reference**2
    return LuGreIdentifierParams.from_initial_guess(
        guess_params, initial_covariance=normalised, regressor="lip", observer="euler", observer_correction=False,
        freeze_until_yield=False, forgetting=1.0, trace_cap=0.0, lower_ratio=1e-6, upper_ratio=1e6,
        projection="euclidean")


def lugre_rls_thesis_identifier(guess_params: LuGreParams, thesis_initial_covariance) -> OnlineIdentifier:
    """Seed 001's own RLS setting (:func:`thesis_identifier_params`) as an
    :class:`OnlineIdentifier` (θ̂ = [σ0, F_C, σ3])."""
    params = thesis_identifier_params(guess_params, thesis_initial_covariance)
    return OnlineIdentifier("lugre-rls-thesis", params, init, step, estimate, PARAM_NAMES, PARAM_UNITS)


def lugre_rls_online_identifier(guess_params: LuGreParams, forgetting: float = 1.0 - 1e-4,
                                **options) -> OnlineIdentifier:
    """The constrained-RLS LuGre identifier as an :class:`OnlineIdentifier`.

    ``guess_params``: initial guess (σ1, σ2 taken as known); ``forgetting``: λ per sample
    (e.g. 1 − 1/(memory [s] · identifier rate [Hz])); ``options``: other fields of
    :class:`LuGreIdentifierParams` (e.g. ``converged_relative_std``,
    ``initial_relative_std``). θ̂ = [σ0, F_C, σ3].
    """
    params = LuGreIdentifierParams.from_initial_guess(guess_params, forgetting=forgetting, **options)
    return OnlineIdentifier("lugre-rls", params, init, step, estimate, PARAM_NAMES, PARAM_UNITS)


# ------------------------------------------------------------------------------ metrics


def identification_errors(estimates, true_params: LuGreParams) -> dict[str, float]:
    """E_σ0, E_FC, E_σ3 in percent (seed 001 Eqs. 4.18–4.20) of an identifier history.

    ``estimates``: a :class:`LuGreIdentifierOutput` history (or anything with arrays
    ``sigma0``, ``Fc``, ``sigma3``). Computed by
    :func:`rths_ident.metrics.parameter_error_percent` (2-norm over the whole history).
    """
    return {
        key: float(parameter_error_percent(float(getattr(true_params, name)), np.asarray(getattr(estimates, name))))
        for key, name in (("E_sigma0", "sigma0"), ("E_Fc", "Fc"), ("E_sigma3", "sigma3"))
    }


# ------------------------------------------------------------------------------ wrapper


class LuGreIdentifier(IdentifierWrapper):
    """The constrained-RLS LuGre identifier for scripts
    (:class:`~rths_ident.estimators.identifier_wrapper.IdentifierWrapper`); all maths lives
    in :func:`step`. ``options``: fields of :class:`LuGreIdentifierParams`.

    >>> guess = ModifiedLuGre.params_from_physical(k=0.9 * 1.34e6, Fy=0.7 * 2.24e4)
    >>> ident = LuGreIdentifier(guess)
    >>> out = ident.update(x, v, force, dt)          # one sample
    >>> history = ident.run(x_record, v_record, force_record, dt)
    >>> ident.theta, ident.relative_std, ident.converged, ident.params_estimate

    ``theta`` is θ̂ = [σ̂0 N/m, F̂_C N, σ̂3 N/m] (:func:`estimate`); ``P`` the RLS's
    covariance of the normalised LIP parameters Θ/Θ_ref.
    """

    def __init__(self, initial_guess: LuGreParams, **options):
        params = LuGreIdentifierParams.from_initial_guess(initial_guess, **options)
        super().__init__(OnlineIdentifier("lugre-rls", params, init, step, estimate, PARAM_NAMES, PARAM_UNITS))

    @staticmethod
    def covariance_of(state: LuGreIdentifierState):
        return state.rls.covariance

    @property
    def params_estimate(self) -> LuGreParams:
        """θ̂ as model parameters (σ1, σ2 the known ones; validated)."""
        sigma0, fc, sigma3 = self.theta.tolist()
        return LuGreParams(sigma0=sigma0, sigma1=float(self.params.sigma1), sigma2=float(self.params.sigma2),
                           sigma3=sigma3, Fc=fc)
