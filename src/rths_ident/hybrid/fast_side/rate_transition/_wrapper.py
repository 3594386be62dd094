"""Thin stateful wrapper shared by the rate transitions (no maths of its own)."""

from __future__ import annotations

import numpy as np

from rths_ident.hybrid.fast_side.rate_transition.inputs import TransitionInputs


class RateTransitionWrapper:
    """Holds ``params`` and ``state``: ``on_slow_sample(u_n, dt)`` then ``fast_samples()``
    → array[ratio]. Subclasses set ``Params``, ``_init`` and ``_step_jit`` (the module's
    pure ``init`` and jitted ``step``)."""

    Params: type
    _init = None
    _step_jit = None

    def __init__(self, params=None, **fields):
        if params is not None and fields:
            raise TypeError("give either a params container or keyword fields, not both")
        self.params = params if params is not None else self.Params(**fields)
        self.reset()

    def reset(self) -> None:
        """Back to the initial state (at rest)."""
        self.state = type(self)._init(self.params)
        self._last = None

    def on_slow_sample(self, u_new: float, dt: float) -> None:
        """Receive the slow-rate target u_n [m]; ``dt`` is the slow step Δt_n [s]."""
        self.state, self._last = type(self)._step_jit(self.params, self.state, TransitionInputs(u_new), dt)

    def fast_samples(self) -> np.ndarray:
        """The ``ratio`` fast targets of the coming slow step [m]."""
        if self._last is None:
            raise RuntimeError("no slow sample received yet: call on_slow_sample first")
        return np.asarray(self._last.samples)
