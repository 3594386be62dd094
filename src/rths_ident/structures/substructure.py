"""Thin stateful wrapper around an integrator (no maths of its own).

Step-wise use from Python, e.g. in a lab loop with an explicit scheme::

    num = NumericalSubstructure(ExplicitNewmark(structure), params, dt=1/1024)
    for ag in ground_accel:
        target = num.predicted_displacement()      # send to the actuator (interface DOF)
        force = measure(target)                    # f_e vector [N] at the numerical DOFs
        out = num.step(ag, force)                  # response at the end of the step

The jitted ``step`` and ``predicted_displacement`` are cached on the integrator, so they
are compiled once per integrator, never per step. Replacing ``params`` (model updating)
re-uses the compiled functions as long as the pytree structure is unchanged.
"""

from __future__ import annotations

import jax
import numpy as np

from rths_ident.structures.integrator_base import Integrator, StepOutputs
from rths_ident.structures.structure import StructureParams

__all__ = ["NumericalSubstructure"]


def _jitted(integrator: Integrator, name: str):
    cache = integrator.__dict__.setdefault("_wrapper_jit_cache", {})
    if name not in cache:
        cache[name] = jax.jit(getattr(integrator, name))
    return cache[name]


class NumericalSubstructure:
    """Holds ``params`` and the integrator ``state``; ``dt`` [s] fixed."""

    def __init__(self, integrator: Integrator, params: StructureParams, dt: float, **init_kwargs):
        self.integrator = integrator
        self.params = params
        self.dt = float(dt)
        self._init_kwargs = init_kwargs
        self.state = integrator.init(params, self.dt, **init_kwargs)
        self.last_outputs: StepOutputs | None = None
        #: stability limit [s] of the scheme for the linearised structure (inf if none)
        self.critical_time_step = integrator.critical_time_step(params, self.dt)

    def reset(self) -> None:
        """Back to the initial state (same params)."""
        self.state = self.integrator.init(self.params, self.dt, **self._init_kwargs)
        self.last_outputs = None

    def update_params(self, params: StructureParams) -> None:
        """Replace the parameters (e.g. identified column params); the state is kept."""
        self.params = params

    def predicted_displacement(self) -> np.ndarray:
        """Displacements [m] at the end of the next step, known before it (explicit
        schemes only)."""
        return np.asarray(_jitted(self.integrator, "predicted_displacement")(self.params, self.state, self.dt))

    def step(self, ground_accel: float, interface_force=None) -> StepOutputs:
        """Advance one step with ẍ_g(t_{n+1}) [m/s²] and f_e [N] (vector or None)."""
        if interface_force is None:
            interface_force = np.zeros(self.integrator.structure.n_dof)
        self.state, out = _jitted(self.integrator, "step")(
            self.params, self.state, float(ground_accel), np.asarray(interface_force, dtype=float), self.dt
        )
        self.last_outputs = out
        return out

    @property
    def displacement(self) -> np.ndarray:
        """Committed displacements [m]."""
        return np.asarray(self.state.displacement)

    @property
    def velocity(self) -> np.ndarray:
        """Committed velocities [m/s]."""
        return np.asarray(self.state.velocity)

    @property
    def acceleration(self) -> np.ndarray:
        """Committed accelerations [m/s²]."""
        return np.asarray(self.state.acceleration)
