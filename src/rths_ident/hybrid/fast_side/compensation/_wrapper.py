"""Thin stateful wrapper shared by the compensators (no maths of its own)."""

from __future__ import annotations

import jax

from rths_ident.hybrid.fast_side.compensation.inputs import CompensatorInputs


class CompensatorWrapper:
    """Holds ``params`` and ``state``; ``command`` calls the module's jitted ``step``.

    Subclasses set ``Params`` (the params dataclass), ``_init`` and ``_step`` (the pure
    functions; ``_step`` is jitted once per subclass, at class creation).
    """

    Params: type
    _init = None
    _step = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._step_jit = staticmethod(jax.jit(cls._step))

    def __init__(self, params=None, **fields):
        if params is not None and fields:
            raise TypeError("give either a params container or keyword fields, not both")
        self.params = params if params is not None else self.Params(**fields)
        self.reset()

    def reset(self) -> None:
        """Back to the initial state (at rest)."""
        self.state = type(self)._init(self.params)

    def command(self, x_target: float, x_measured: float, dt: float) -> float:
        """One fast sample: target x_t [m], latest measurement x_m [m], Δt [s] → x_c [m]."""
        inputs = CompensatorInputs(x_target, x_measured)
        self.state, x_command = type(self)._step_jit(self.params, self.state, inputs, dt)
        return float(x_command)
