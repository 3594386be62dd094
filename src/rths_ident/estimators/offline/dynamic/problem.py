"""One dynamic record, one model, one simulation setting: the compiled output-error
residual, its Jacobian and a vectorised cost.

    r_k(q) = (ŷ_k(q) − y_k) / rms(y),   k in the scored samples

ŷ(q) is the oscillator of :mod:`.oscillator` with the model's parameters of coordinates
q (:mod:`.spec`), driven by the input interpolated between samples
(:mod:`.input_interpolation`), integrated on ``substeps`` sub-steps per sample and
sampled as the record was (:mod:`.output_sampling`), all in normalised units. The
Jacobian is ``jax.jacfwd`` of the whole simulation; the cost for the global stage is
``jax.vmap``-ed over a population.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.estimators.offline.dynamic.input_interpolation import interpolate_input
from rths_ident.estimators.offline.dynamic.oscillator import simulate_substeps
from rths_ident.estimators.offline.dynamic.output_sampling import sample_output
from rths_ident.estimators.offline.dynamic.record import DynamicRecord
from rths_ident.estimators.offline.dynamic.spec import DynamicSpec

__all__ = ["SimulationSettings", "Simulator", "OutputErrorProblem", "NON_FINITE_RESIDUAL"]

#: residual used in place of a non-finite simulated output (keeps the optimiser away)
NON_FINITE_RESIDUAL = 10.0


@dataclasses.dataclass(frozen=True)
class SimulationSettings:
    """How the record is simulated: ``substeps`` per sample, the input between samples
    (:data:`~.input_interpolation.INTERPOLATIONS`) and how the output is sampled
    (:data:`~.output_sampling.OUTPUT_SAMPLINGS`)."""

    substeps: int
    interpolation: str = "bandlimited"
    output_sampling: str = "point"

    def describe(self, dt: float) -> dict:
        return {"integrator": "central difference (velocity Verlet), the model's own step as restoring force",
                "substeps": self.substeps, "sub_step_s": dt / self.substeps,
                "interpolation": self.interpolation, "output_sampling": self.output_sampling}


def output_scale(kind: str, scales) -> float:
    """The normalising unit of an output kind: X_s, X_s/T_s or X_s/T_s²."""
    return scales.displacement / scales.time ** {"displacement": 0, "velocity": 1, "acceleration": 2}[kind]


class Simulator:
    """ŷ(q) at every sample of ``record`` (normalised), pure and traceable."""

    def __init__(self, spec: DynamicSpec, record: DynamicRecord, settings: SimulationSettings):
        self.spec, self.record, self.settings = spec, record, settings
        s = spec.scales
        fine = interpolate_input(record.input, settings.substeps, record.period is not None, settings.interpolation)
        if record.input_kind == "force":
            self.excitation = jnp.asarray(fine / s.force)
        else:  # ground acceleration, normalised: p̃ = −m̃ ã_g
            self.excitation = jnp.asarray(fine * s.time**2 / s.displacement)
        self.h = record.dt / settings.substeps / s.time
        self.output_unit = output_scale(record.output_kind, s)
        self.measured = jnp.asarray(record.output / self.output_unit)

    def __call__(self, q):
        spec = self.spec
        mass, damping = spec.oscillator_values(q)
        params = spec.element_params(q)
        ground = self.record.input_kind == "ground-acceleration"
        excitation = -mass * self.excitation if ground else self.excitation
        absolute = self.excitation if ground and self.record.output_kind == "acceleration" else None
        fine = simulate_substeps(spec.element.model, params, mass, damping, excitation, self.h,
                                 self.record.output_kind, ground_acceleration=absolute)
        return sample_output(fine, self.settings.substeps, self.settings.output_sampling)

    def si_output(self, q) -> np.ndarray:
        """ŷ in the output's SI unit."""
        return np.asarray(jax.jit(self.__call__)(jnp.asarray(q))) * self.output_unit


class OutputErrorProblem:
    """Compiled residual ``r(q)``, Jacobian ``J(q)`` and vectorised cost ``costs(Q)`` of
    ``record``'s samples ``scored`` (an index array)."""

    def __init__(self, spec: DynamicSpec, record: DynamicRecord, settings: SimulationSettings, scored: np.ndarray):
        self.simulator = Simulator(spec, record, settings)
        self.scored = np.asarray(scored, dtype=int)
        measured = self.simulator.measured[self.scored]
        self.output_rms = float(jnp.sqrt(jnp.mean(measured**2)))
        scored_j = jnp.asarray(self.scored)
        simulate, rms = self.simulator, self.output_rms

        def residual(q):
            r = (simulate(q)[scored_j] - measured) / rms
            return jnp.where(jnp.isfinite(r), r, NON_FINITE_RESIDUAL)

        def cost(q):
            r = residual(q)
            return 0.5 * jnp.sum(r * r)

        def jacobian(q):
            jac = jax.jacfwd(residual)(q)
            return jnp.where(jnp.isfinite(jac), jac, 0.0)

        self.residual = jax.jit(residual)
        self.jacobian = jax.jit(jacobian)
        self.costs = jax.jit(jax.vmap(cost))

    def rmse_si(self, q) -> float:
        """rms(ŷ − y) over the scored samples, in the output's SI unit."""
        r = np.asarray(self.residual(jnp.asarray(q)))
        return float(np.sqrt(np.mean(r**2)) * self.output_rms * self.simulator.output_unit)
