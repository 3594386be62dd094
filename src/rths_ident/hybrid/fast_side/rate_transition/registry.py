"""The rate transitions by name: the one place ``"predictor-corrector"`` and ``"ddmrt"``
become objects (test files, ``run --transition``).

An entry builds the transition's (module, params) for a loop of ``ratio`` fast steps per
slow step from :class:`TransitionSettings`; ``predicts_ahead`` says whether the
transition is fed the previous target and predicts the next one (DDMRT: the NS answer
arrives one slow step late) rather than receiving the target during the step.

Add a rate transition: its module (pure ``init``/``step`` with
:class:`~rths_ident.hybrid.fast_side.rate_transition.inputs.TransitionInputs`), one
:data:`TRANSITIONS` line, its section in docs/hybrid/rate_transition.md.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from rths_ident.hybrid.fast_side.rate_transition import ddmrt, predictor_corrector, wiener
from rths_ident.registry import Registry

__all__ = ["TransitionSettings", "Transition", "TRANSITIONS", "AUTO", "DDMRT_MIN_RATIO", "resolve_transition",
           "transition_names", "ddmrt_weights", "DDMRT_LEARNING_RATE", "DDMRT_LEAKAGE"]

#: seed 000's leaky-LMS constants were set for displacements in inches ([REPO]: μ = 0.01,
#: λ = 1e-10 with u in in): the same adaptation in SI is μ = 0.01 in⁻² and λ = 1e-10 in².
INCH = 0.0254  # m
DDMRT_LEARNING_RATE = 0.01 / INCH**2  # 1/m² (15.5)
DDMRT_LEAKAGE = 1e-10 * INCH**2  # m²


class TransitionSettings(NamedTuple):
    """What a transition may need of the test (SI)."""

    ratio: int  # fast steps per slow step, Δt_n/Δt_e
    arrival_fraction: float = 0.5  # predictor–corrector: the NS answer arrives after this share of Δt_n
    ddmrt_adaptive: bool = False  # DDMRT: fixed Wiener W (LTI) or leaky-LMS W (LTV; seed 000 Eq. 3.7)
    # DDMRT's training signal: an approximate realisation of the interface displacement at
    # the slow rate [m] (seed 000 Eq. 3.5); only called by DDMRT
    realisation: Callable[[], np.ndarray] | None = None
    # derivatives of the fast targets continuous across slow steps (and, for the
    # predictor–corrector, at its switch): 0 = the source's scheme, 1 = value and slope,
    # 2 = value, slope and curvature (rate_transition.continuity)
    continuity: int = 2
    blend_steps: float = 1.0  # DDMRT: slow steps over which its prediction error is absorbed


class Transition(NamedTuple):
    """One registered rate transition (module doc)."""

    description: str
    predicts_ahead: bool
    build: Callable[[TransitionSettings], tuple[Any, Any]]  # settings -> (module, params)


#: DDMRT's training window starts where the realisation first exceeds this fraction of
#: its peak (the zero padding of a paced test is no motion to learn from)
DDMRT_QUIET_FRACTION = 1e-9


def ddmrt_weights(realisation: np.ndarray) -> np.ndarray:
    """DDMRT's Wiener predictor (seed 000 Eq. 3.5; L = 8, λ = 1e-10, N ≤ 2000, digest
    §12.5) from an approximate realisation of the interface displacement at the slow rate.

    The N samples start where the realisation starts moving (L samples before it first
    exceeds :data:`DDMRT_QUIET_FRACTION` of its peak): a record padded with zeros (a paced
    test's start-up, 5 s) would otherwise fill the window with zeros when N samples are
    shorter than the padding — at 1024 Hz, 2000 samples are 1.95 s — and the "predictor"
    learnt from them extrapolates nothing (J2 56 % at 1024/4096 Hz with 2 s of padding)."""
    realisation = np.asarray(realisation, dtype=float)
    peak = float(np.max(np.abs(realisation))) if realisation.size else 0.0
    if peak > 0:
        moving = np.flatnonzero(np.abs(realisation) > DDMRT_QUIET_FRACTION * peak)
        realisation = realisation[max(0, int(moving[0]) - 8):]
    n_window = int(min(2000, len(realisation) - 9))
    return wiener.wiener_coefficients(realisation, 8, 1e-10, n_window)


def _predictor_corrector(settings: TransitionSettings):
    ratio = settings.ratio
    arrival = int(round(settings.arrival_fraction * ratio)) if ratio > 1 else 0
    return predictor_corrector, predictor_corrector.PredictorCorrectorParams(
        ratio=ratio, arrival_tick=min(arrival, ratio - 1), continuity=settings.continuity)


def _ddmrt(settings: TransitionSettings):
    return ddmrt, ddmrt.DDMRTParams(weights=ddmrt_weights(settings.realisation()), ratio=settings.ratio,
                                    adaptive=settings.ddmrt_adaptive, learning_rate=DDMRT_LEARNING_RATE,
                                    leakage=DDMRT_LEAKAGE, continuity=settings.continuity,
                                    blend_steps=float(settings.blend_steps))


#: name -> :class:`Transition`
TRANSITIONS: Registry[Transition] = Registry("rate transition", {
    "predictor-corrector": Transition(
        "2nd-order Lagrange predictor–corrector, the target arriving during the step (OpenFresco-style)",
        False, _predictor_corrector),
    "ddmrt": Transition(
        "data-driven multi-rate transition: Wiener one-step predictor + monomial interpolation (seed 000 §3.2)",
        True, _ddmrt),
})


#: the name a test gives for "the transition that suits my rates" (:func:`resolve_transition`)
AUTO = "auto"
#: ``auto`` is DDMRT at this rate ratio Δt_n/Δt_e or more, the predictor–corrector below it.
#: DDMRT's segment is a monomial through its one-step prediction, drawn over the slow step's
#: fast steps; seed 000 designed it for a ratio of 80 (50/4000 Hz). At 1024/4096 Hz (ratio 4)
#: rc-frame's DDMRT + dAMB command reaches 4.56 m/s at t = 3.37 s of El Centro, past the
#: 4.5 m/s command-velocity interlock, where the predictor–corrector tracks with J2 1.22 %
#: (docs/hybrid/realtime.md); at ratio 8 (512/4096 Hz) DDMRT runs clean.
DDMRT_MIN_RATIO = 8


def resolve_transition(name: str, ratio: int) -> str:
    """The registered transition a test runs: ``name`` itself, or for :data:`AUTO` DDMRT at
    a rate ratio of :data:`DDMRT_MIN_RATIO` or more and the predictor–corrector below."""
    if name != AUTO:
        return name
    return "ddmrt" if ratio >= DDMRT_MIN_RATIO else "predictor-corrector"


def transition_names() -> tuple[str, ...]:
    """What a test file's ``transition.kind`` accepts: every registered transition and
    :data:`AUTO`."""
    return (*TRANSITIONS.names(), AUTO)
