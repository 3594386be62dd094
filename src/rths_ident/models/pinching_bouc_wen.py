"""Bouc–Wen–Baber–Noori (BWBN) hysteresis with energy-driven degradation and pinching
(Baber & Noori 1985, 1986; pinching function in the form of Foliente 1995).

Sources (equation forms as used in the literature that identifies this model):

* T. T. Baber, M. N. Noori, "Random vibration of degrading, pinching systems",
  J. Eng. Mech. 111(8), 1010–1026, 1985, and "Modeling general hysteresis behavior and
  random vibration application", J. Vib. Acoust. Stress Reliab. Des. 108, 411–420,
  1986: degradation of A, ν, η with the hysteretic energy; slip-lock pinching function.
* G. C. Foliente, "Hysteresis modeling of wood joints and structural systems",
  J. Struct. Eng. 121(6), 1013–1022, 1995: the pinching function h(z) below, centred at
  q·z_u in the direction of motion.

Equations (SI; z has the unit of displacement [m])::

    F   = α k x + (1 − α) k z
    ż   = h(z) [A(ε) ẋ − ν(ε) (β |ẋ| |z|^{n−1} z + γ ẋ |z|^n)] / η(ε)
    A(ε) = A − δ_A ε,   ν(ε) = 1 + δ_ν ε,   η(ε) = 1 + δ_η ε
    h(z) = 1 − ζ₁(ε) exp(−(z sgn(ẋ) − q z_u(ε))² / ζ₂(ε)²)
    ζ₁(ε) = ζ_s (1 − e^{−p ε}),   ζ₂(ε) = (ψ + δ_ψ ε)(λ + ζ₁(ε))
    z_u(ε) = (A(ε) / (ν(ε)(β + γ)))^{1/n}
    ε   = (1 − α) k ∫ z dx        [J], the hysteretic energy

Foliente writes ε = (1 − α) ω² ∫ z ẋ dt per unit mass; multiplying by the mass gives the
energy in joules used here, so δ_A, δ_ν, δ_η and p are per joule and δ_ψ is in m/J.
Without degradation (δ_A = δ_ν = δ_η = 0) and pinching (ζ_s = 0) this is :class:`BoucWen`
with the same parameters and the same update.

Rate-independent: z and ε are integrated in the displacement, dz/dx = h (A − ν|z|^n
(γ + β sgn(Δx z)))/η, over each increment by ``substeps`` sub-steps. In a sub-step the
energy-dependent factors (A, ν, η) and the pinching factor h are taken at the start of the
sub-step; z then follows the backward-Euler Bouc–Wen update of :mod:`._bouc_wen_increment`
with A' = hA/η, β' = hνβ/η, γ' = hνγ/η (h ∈ [1 − ζ_s, 1] > 0, so the bracketed solver
applies and |z| ≤ z_u for any increment), and ε advances by the trapezoidal rule
Δε = (1 − α) k (z₀ + z₁)/2 Δx. The error is O(Δx/substeps).

Departures from the sources, both inactive unless the degradation drives them:

* A(ε) is floored at ``min_A_ratio``·A (default 1 %): A − δ_A ε turns negative for large
  energies, which the sources leave undefined.
* ε enters the degradation laws as max(ε, 0): ∫ z dx can dip below 0 transiently on
  unloading of a pinched loop.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.errors import ParameterError
from rths_ident._params import field_range, params_dataclass
from rths_ident.models._bouc_wen_increment import (
    backward_euler_increment,
    integrate_increment,
    ultimate_value,
)
from rths_ident.models.base import (
    ElementInputs,
    HystereticModel,
    direction_of_motion,
    is_concrete,
    tangent_from_step,
)

from rths_ident.models.bouc_wen import gamma_from_ratio, ratio_from_gamma
from rths_ident.models.entry import ModelEntry
from rths_ident.models.fit_specification import FitContext, FitParameters, FreeParameter, ModelFit

__all__ = ["PinchingBoucWenParams", "PinchingBoucWenState", "PinchingBoucWen", "ENTRY", "FIT_FORMS"]


@params_dataclass(static=("substeps",))
class PinchingBoucWenParams:
    """Parameters of the Bouc–Wen–Baber–Noori model (SI; z in m, energy ε in J)."""

    k: float = field_range(low=0.0, low_inclusive=False, unit="N/m", doc="k, initial stiffness")
    alpha: float = field_range(
        low=0.0, high=1.0, unit="-", doc="α, post-yield to initial stiffness ratio"
    )
    beta: float = field_range(
        low=0.0, unit="1/m^n", doc="β, weight of the sign-dependent term |ẋ||z|^{n-1}z"
    )
    gamma: float = field_range(unit="1/m^n", doc="γ, weight of the term ẋ|z|^n (β + γ > 0)")
    n: float = field_range(
        low=1.0, high=100.0, unit="-", doc="n, sharpness of the elastic-plastic transition"
    )
    A: float = field_range(
        1.0, low=0.0, low_inclusive=False, unit="-", doc="A, initial slope of z(x) (A₀)"
    )
    delta_A: float = field_range(
        0.0, low=0.0, unit="1/J", doc="δ_A, degradation of A: A(ε) = A − δ_A ε"
    )
    delta_nu: float = field_range(
        0.0, low=0.0, unit="1/J", doc="δ_ν, strength degradation: ν(ε) = 1 + δ_ν ε"
    )
    delta_eta: float = field_range(
        0.0, low=0.0, unit="1/J", doc="δ_η, stiffness degradation: η(ε) = 1 + δ_η ε"
    )
    zeta_s: float = field_range(
        0.0, low=0.0, high=1.0, high_inclusive=False, unit="-",
        doc="ζ_s, pinching severity (ultimate depth of the pinch, h ≥ 1 − ζ_s)",
    )
    p: float = field_range(
        0.0, low=0.0, unit="1/J", doc="p, rate of pinching growth: ζ₁ = ζ_s(1 − e^{−pε})"
    )
    q: float = field_range(
        0.0, low=0.0, high=1.0, unit="-", doc="q, centre of the pinch as a fraction of z_u"
    )
    psi: float = field_range(
        1.0e-3, low=0.0, low_inclusive=False, unit="m",
        doc="ψ (ψ₀), width of the pinch: ζ₂ = (ψ + δ_ψ ε)(λ + ζ₁)",
    )
    delta_psi: float = field_range(
        0.0, low=0.0, unit="m/J", doc="δ_ψ, growth of the pinch width with ε"
    )
    lam: float = field_range(
        0.5, low=0.0, low_inclusive=False, unit="-",
        doc="λ, offset of the pinch width: ζ₂ = (ψ + δ_ψ ε)(λ + ζ₁)",
    )
    min_A_ratio: float = field_range(
        0.01, low=0.0, high=1.0, low_inclusive=False, unit="-",
        doc="floor of A(ε)/A (guard, not in the sources)",
    )
    substeps: int = 4

    def __post_init__(self):
        if not isinstance(self.substeps, int) or self.substeps < 1:
            raise ParameterError(
                f"PinchingBoucWenParams.substeps = {self.substeps!r} must be an integer >= 1"
            )
        if is_concrete(self.beta, self.gamma):
            total = np.min(np.asarray(self.beta, dtype=float) + np.asarray(self.gamma, dtype=float))
            if not total > 0.0:
                raise ParameterError(
                    f"PinchingBoucWenParams.gamma = {self.gamma!r} must satisfy beta + gamma > 0 "
                    f"(beta = {self.beta!r}); otherwise z has no ultimate value"
                )

    @property
    def yield_displacement(self):
        """Virgin z_u = (A/(β+γ))^{1/n} [m]."""
        return ultimate_value(self.A, self.beta, self.gamma, self.n)


class PinchingBoucWenState(NamedTuple):
    """Committed state at the start of a step."""

    displacement: jax.Array  # x of the previous step [m]
    z: jax.Array  # hysteretic displacement z [m]
    energy: jax.Array  # ε = (1 − α) k ∫ z dx [J]


class PinchingBoucWen(HystereticModel):
    """Bouc–Wen–Baber–Noori model with pinching; see the module docstring.

    Example::

        model = PinchingBoucWen(k=1e6, alpha=0.05, beta=50.0, gamma=50.0, n=1.0,
                                delta_nu=1e-4, delta_eta=1e-4, zeta_s=0.8, p=1e-3,
                                q=0.1, psi=5e-3)
        force = model.force_history(x)
    """

    Params = PinchingBoucWenParams
    State = PinchingBoucWenState
    rate_dependent = False

    @staticmethod
    def init(params: PinchingBoucWenParams) -> PinchingBoucWenState:
        zero = jnp.zeros((), dtype=jnp.float64)
        return PinchingBoucWenState(displacement=zero, z=zero, energy=zero)

    @staticmethod
    def degradation(params: PinchingBoucWenParams, energy):
        """(A(ε), ν(ε), η(ε)) with A floored at ``min_A_ratio``·A (module docstring)."""
        energy = jnp.maximum(energy, 0.0)
        A = jnp.maximum(params.A - params.delta_A * energy, params.min_A_ratio * params.A)
        return A, 1.0 + params.delta_nu * energy, 1.0 + params.delta_eta * energy

    @staticmethod
    def pinching(params: PinchingBoucWenParams, z, direction, energy):
        """h(z) = 1 − ζ₁ exp(−(z sgn(ẋ) − q z_u)²/ζ₂²) (Foliente 1995), ``direction`` =
        sgn(ẋ) = ±1, at hysteretic energy ε [J]."""
        A, nu, _ = PinchingBoucWen.degradation(params, energy)
        energy = jnp.maximum(energy, 0.0)
        zeta1 = params.zeta_s * (1.0 - jnp.exp(-params.p * energy))
        zeta2 = (params.psi + params.delta_psi * energy) * (params.lam + zeta1)
        z_u = ultimate_value(A, nu * params.beta, nu * params.gamma, params.n)
        return 1.0 - zeta1 * jnp.exp(-(((z * direction - params.q * z_u) / zeta2) ** 2))

    @staticmethod
    def zdot(params: PinchingBoucWenParams, z, v, energy):
        """ż [m/s] at velocity ``v``, hysteretic variable ``z`` and energy ε."""
        A, nu, eta = PinchingBoucWen.degradation(params, energy)
        direction = jnp.where(v < 0.0, -1.0, 1.0)
        h = PinchingBoucWen.pinching(params, z, direction, energy)
        bouc_wen = A * v - nu * jnp.abs(z) ** params.n * v * (
            params.gamma + params.beta * jnp.sign(v * z)
        )
        return h * bouc_wen / eta

    @staticmethod
    def force(params: PinchingBoucWenParams, x, z):
        """F = α k x + (1 − α) k z  [N]."""
        return params.alpha * params.k * x + (1.0 - params.alpha) * params.k * z

    @staticmethod
    def step(params: PinchingBoucWenParams, state: PinchingBoucWenState, inputs: ElementInputs, dt):
        x = jnp.asarray(inputs.displacement, dtype=jnp.float64)
        dx = x - state.displacement
        s = direction_of_motion(dx, inputs.velocity)
        sub_dx = dx / params.substeps
        hysteretic_stiffness = (1.0 - params.alpha) * params.k

        def substep(carry):
            z, energy = carry
            A, nu, eta = PinchingBoucWen.degradation(params, energy)
            scale = PinchingBoucWen.pinching(params, z, s, energy) / eta
            z_new = backward_euler_increment(
                z, sub_dx, s, scale * A, scale * nu * params.beta, scale * nu * params.gamma,
                params.n,
            )
            energy_new = energy + hysteretic_stiffness * 0.5 * (z + z_new) * sub_dx
            return z_new, energy_new

        z, energy = integrate_increment(substep, (state.z, state.energy), params.substeps)
        new_state = PinchingBoucWenState(displacement=x, z=z, energy=energy)
        return new_state, PinchingBoucWen.force(params, x, z)

    @staticmethod
    def tangent(params: PinchingBoucWenParams, state: PinchingBoucWenState, inputs: ElementInputs, dt):
        """∂F/∂x at the end of the step [N/m] (consistent with the discrete update)."""
        return tangent_from_step(PinchingBoucWen.step, params, state, inputs, dt)


# -- offline fit (data for rths_ident.estimators.offline) -----------------------------

_HYSTERETIC = ("k", "alpha", "beta", "gamma_over_beta", "n")
_DEGRADING = _HYSTERETIC + ("delta_nu", "delta_eta")
_PINCHED = _DEGRADING + ("zeta_s", "p", "q", "psi")
#: nested forms, smallest first (``fit --form``): each adds coordinates to the previous one
FIT_FORMS = {
    "hysteretic": _HYSTERETIC,  # the plain Bouc–Wen model (δ's = 0, ζ_s = 0)
    "degrading": _DEGRADING,  # + strength and stiffness degradation
    "pinched": _PINCHED,  # + pinching (δ_ψ = 0, λ = 0.1)
    "full": _PINCHED + ("delta_A", "delta_psi", "lam"),
}
#: the coordinate values that switch the mechanisms a form leaves out off
_FORMS_OFF = {"delta_nu": 0.0, "delta_eta": 0.0, "zeta_s": 0.0, "delta_A": 0.0, "delta_psi": 0.0, "lam": 0.1}


def _fit_parameters(context: FitContext) -> FitParameters:
    """A = 1 is held in every form: A, β, γ and k(1−α) are not separately identifiable
    (z can be rescaled exactly). The fitter chooses the form (:data:`FIT_FORMS`) by nested
    BIC comparisons unless told one.

    Bounds are scaled by the data: the degradation rates by the record's dissipated
    energy E = ∮F̃ dx̃ (normalised), so that η(ε), ν(ε) may grow up to 1 + 20 over the test
    and A(ε) may fall to its floor; p up to 50/E (the pinch fully developed within the
    first 2 % of the test's energy); ψ from 0.005 to 3 times max|x|. Rate-independent, so
    a pseudo-time changes nothing."""
    k0, energy = context.initial_stiffness, context.dissipated_energy
    z_u = 0.7 / k0
    rate = 20.0 / energy
    free = (
        FreeParameter("k", 0.02, 5000.0, k0),
        FreeParameter("alpha", 0.0, 0.9, 0.05, log=False),
        FreeParameter("beta", 1e-4, 1e6, 0.5 / z_u),
        FreeParameter("gamma_over_beta", -0.95, 1.0, 0.5, log=False),
        FreeParameter("n", 1.0, 8.0, 1.5, log=False),
        FreeParameter("delta_nu", 0.0, rate, 0.05 * rate, log=False),
        FreeParameter("delta_eta", 0.0, rate, 0.05 * rate, log=False),
        FreeParameter("zeta_s", 0.0, 0.99, 0.5, log=False),
        FreeParameter("p", 0.0, 2.5 * rate, 0.25 * rate, log=False),
        FreeParameter("q", 0.0, 0.5, 0.1, log=False),
        FreeParameter("psi", 0.005, 3.0, 0.3),
        FreeParameter("delta_A", 0.0, 1.0 / energy, 0.0, log=False),
        FreeParameter("delta_psi", 0.0, 3.0 / energy, 0.0, log=False),
        FreeParameter("lam", 0.01, 1.0, 0.1, log=False),
    )
    return FitParameters(free, {"A": 1.0})


#: the registry entry (:data:`rths_ident.models.registry.MODELS` ``["pinching-boucwen"]``)
ENTRY = ModelEntry(
    model=PinchingBoucWen,
    doc="docs/models/pinching_bouc_wen.md",
    fit=ModelFit(_fit_parameters, gamma_from_ratio, ratio_from_gamma, forms=FIT_FORMS, off=_FORMS_OFF),
    # z_u = 1 cm; energies per k·z_u² = 100 J (a yield cycle)
    example=PinchingBoucWenParams(
        k=1.0e6, alpha=0.05, beta=600.0, gamma=400.0, n=1.5, delta_nu=2.0e-4, delta_eta=3.0e-4, delta_A=5.0e-5,
        zeta_s=0.8, p=5.0e-3, q=0.1, psi=4.0e-3, delta_psi=1.0e-6, lam=0.5),
    example_peak_displacement=0.03,
)
