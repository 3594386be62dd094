"""What is calibrated for each compensator: θ, its bounds and units, and θ → the
compensator's params and initial state (pure, traceable: ``vmap``/``grad`` over θ).

* ``amb`` — θ = [log10 Γ_0, log10 Γ_1, log10 Γ_2, log10 Γ_3, s]: the adaptation gains of
  seed 000 Eq. 2.34 on a log scale (Γ_k in s^(2k−1)/in²: the law works in inches,
  :class:`~rths_ident.hybrid.fast_side.compensation.amb.AMBParams` ``signal_scale``) and s [-], the
  time scale of the initial model: a(0)_k = a_src,k (s κ)^k with a_src seed 000 §4.2's
  [1, 1.9e-2 s, 1e-4 s², 0] and κ the specimen's sampled factor. Sources' θ:
  Γ = diag(10^6.03, 10^4.23, 10^1.48, 10^−1.10) (seed 003), s = 1.
* ``damb`` — θ = [log10 P_0, ρ, s]: the RLS initial covariance P_0 = 10^θ0 · I (Eq. 2.44),
  the forgetting factor ρ (Eq. 2.43) and the initial model's time scale s as above, from
  the [REPO] a = [1, 0.02 s, 8e-5 s², 2e-7 s³]. Defaults ([REPO]): P_0 = 1e10, ρ = 1, s = 1.
* ``polynomial`` — θ = [τ]: the delay compensated by extrapolation [s]; default
  1/g (the actuator's loop gain, as the scenarios use).

Every θ lives in a box (``low``, ``high``); the searches work in the unit cube
u = (θ − low)/(high − low).
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import jax.numpy as jnp
import numpy as np

from rths_ident.errors import ParameterError
from rths_ident._params import replace
from rths_ident.hybrid.fast_side.compensation import amb, damb, polynomial
from rths_ident.hybrid.fast_side.compensation.finite_difference import fir_from_plant_coefficients

COMPENSATORS = ("amb", "damb", "polynomial")
_POWERS = jnp.arange(4.0)


class GainSpace(NamedTuple):
    """The calibrated parameters of one compensator (module doc)."""

    kind: str
    names: tuple
    units: tuple
    low: np.ndarray
    high: np.ndarray
    source: np.ndarray  # the sources' / the module's default θ
    module: object  # the compensation module (pure init/step)
    # (θ, κ, template params, template state) -> (params, initial state)
    build: Callable

    def to_unit(self, theta) -> np.ndarray:
        return (np.asarray(theta, dtype=float) - self.low) / (self.high - self.low)

    def from_unit(self, u):
        return self.low + jnp.asarray(u) * (self.high - self.low)

    def check(self, theta) -> np.ndarray:
        """θ as an array, or a clear error naming the component and its bounds."""
        theta = np.asarray(theta, dtype=float)
        if theta.shape != self.low.shape:
            raise ParameterError(f"{self.kind} gains: expected {len(self.names)} values "
                                 f"({', '.join(self.names)}); got shape {theta.shape}")
        for name, unit, v, lo, hi in zip(self.names, self.units, theta, self.low, self.high):
            if not (lo <= v <= hi):
                raise ParameterError(f"{self.kind} gain {name} = {v:g}: expected [{lo:g}, {hi:g}] {unit}")
        return theta


def _amb_build(theta, kappa, params, state):
    scale = (theta[4] * kappa) ** _POWERS
    a0 = jnp.asarray(amb.SEED_000_INITIAL_COEFFICIENTS) * scale
    params = replace(params, adaptation_gains=10.0 ** theta[:4])
    return params, state._replace(coefficients=a0)


def _damb_build(theta, kappa, params, state):
    scale = (theta[2] * kappa) ** _POWERS
    a = jnp.asarray(damb.REPOSITORY_INITIAL_PLANT) * scale
    params = replace(params, initial_covariance=10.0 ** theta[0], forgetting_factor=theta[1])
    fir = fir_from_plant_coefficients(a, params.initial_fir_time_step)
    return params, state._replace(fir=fir, covariance=jnp.eye(4) * 10.0 ** theta[0])


def _polynomial_build(theta, kappa, params, state):
    del kappa  # no initial condition
    return replace(params, delay=theta[0]), state


def gain_space(kind: str, loop_gain: float) -> GainSpace:
    """The :class:`GainSpace` of ``kind`` (``loop_gain``: the actuator's g [1/s], for the
    polynomial's default delay 1/g)."""
    if kind == "amb":
        source = np.r_[np.log10(amb.SEED_000_GAINS), 1.0]
        return GainSpace("amb", ("log10 Γ0", "log10 Γ1", "log10 Γ2", "log10 Γ3", "s"),
                         ("log10(s^-1/in²)", "log10(s/in²)", "log10(s^3/in²)", "log10(s^5/in²)", "-"),
                         np.r_[source[:4] - 3.0, 0.25], np.r_[source[:4] + 3.0, 2.0], source, amb, _amb_build)
    if kind == "damb":
        return GainSpace("damb", ("log10 P0", "ρ", "s"), ("log10(-)", "-", "-"),
                         np.array([0.0, 0.99, 0.25]), np.array([12.0, 1.0, 2.0]), np.array([10.0, 1.0, 1.0]),
                         damb, _damb_build)
    if kind == "polynomial":
        return GainSpace("polynomial", ("τ",), ("s",), np.array([0.0]), np.array([0.05]),
                         np.array([1.0 / loop_gain]), polynomial, _polynomial_build)
    raise ParameterError(f"compensator = {kind!r}: expected one of {', '.join(COMPENSATORS)}")
