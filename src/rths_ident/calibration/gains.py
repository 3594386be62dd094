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
from rths_ident.hybrid.fast_side.compensation.registry import COMPENSATORS as REGISTERED

#: the compensators ``rths-ident calibrate`` can tune (those with calibration gains)
COMPENSATORS = tuple(name for name, entry in REGISTERED.items() if entry.calibration is not None)


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


#: ASCII spellings of the gains' symbols for the command line (``--bounds log10_P0=6:12``)
_ASCII = {"Γ": "Gamma", "ρ": "rho", "τ": "tau"}


def option_name(name: str) -> str:
    """The command line's spelling of gain ``name``: spaces as ``_``, Greek letters in
    ASCII (``log10 P0`` → ``log10_P0``, ``ρ`` → ``rho``, ``log10 Γ0`` → ``log10_Gamma0``)."""
    text = name.replace(" ", "_")
    for letter, ascii_name in _ASCII.items():
        text = text.replace(letter, ascii_name)
    return text


#: the limits a gain's box must stay within (the compensators' own ranges): ρ ∈ (0, 1]
#: (damb.py forgetting_factor), the time scale s > 0, the delay τ ≥ 0; log10 gains: any
_LIMITS = {"ρ": (0.0, 1.0, False), "s": (0.0, None, False), "τ": (0.0, None, True)}


def _within_limits(name: str, lo: float, hi: float) -> bool:
    if name not in _LIMITS:
        return True
    low, high, low_inclusive = _LIMITS[name]
    return (lo >= low if low_inclusive else lo > low) and (high is None or hi <= high)


def _limits_text(name: str) -> str:
    if name not in _LIMITS:
        return "both finite"
    low, high, low_inclusive = _LIMITS[name]
    return f"within {'[' if low_inclusive else '('}{low:g}, {'∞)' if high is None else f'{high:g}]'}"


def with_bounds(space: GainSpace, bounds: dict) -> GainSpace:
    """``space`` with some gains' boxes replaced: ``bounds`` = {name: (low, high)}, a name
    as :attr:`GainSpace.names` or :func:`option_name` spells it. A clear error names an
    unknown gain (and the known ones) or a box that is not low < high, both finite."""
    low, high = space.low.copy(), space.high.copy()
    spellings = {}
    for i, name in enumerate(space.names):
        spellings[name] = spellings[option_name(name)] = i
    for name, pair in bounds.items():
        if name not in spellings:
            raise ParameterError(f"{space.kind} has no gain {name!r}: expected one of "
                                 f"{', '.join(option_name(n) for n in space.names)}")
        i = spellings[name]
        lo, hi = (float(v) for v in pair)
        if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi and _within_limits(space.names[i], lo, hi)):
            raise ParameterError(f"{space.kind} gain {option_name(space.names[i])} bounds {lo:g}:{hi:g}: expected "
                                 f"LOW:HIGH with LOW < HIGH, {_limits_text(space.names[i])} ({space.units[i]}; "
                                 f"default {space.low[i]:g}:{space.high[i]:g})")
        low[i], high[i] = lo, hi
    return space._replace(low=low, high=high)


def gain_space(kind: str, loop_gain: float) -> GainSpace:
    """The :class:`GainSpace` of compensator ``kind`` (``loop_gain``: the actuator's g
    [1/s], for the polynomial's default delay 1/g), from its registry entry
    (:data:`~rths_ident.hybrid.fast_side.compensation.registry.COMPENSATORS`)."""
    entry = REGISTERED[kind]
    if entry.calibration is None:
        raise ParameterError(f"compensator {kind!r} has nothing to calibrate: expected one of {', '.join(COMPENSATORS)}")
    gains = entry.calibration(loop_gain)
    return GainSpace(kind, gains.names, gains.units, gains.low, gains.high, gains.source, entry.module, gains.build)
