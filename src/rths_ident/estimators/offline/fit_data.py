"""A logged test prepared for offline fitting: SI arrays, pseudo-time, scales.

Offline fits run in *normalised* units so that one set of bounds and starting points
serves specimens of any size (a 1 kN masonry wall and a 700 kN RC column alike):

    x̃ = x / X_s,   F̃ = F / F_s,   t̃ = t / T_s

with X_s = max|x| [m], F_s = max|F| [N] and T_s = X_s / max|ẋ| [s] (so that max|ẋ̃| = 1).
Every model equation used here is covariant under this change of units (see
:mod:`rths_ident.estimators.offline.model_specs` for how each parameter converts back).

Quasi-static tests have no meaningful time. Their samples are placed on a *pseudo-time*
axis t = sample index × 1 s (``time_is_physical = False``); rate-independent models
(Bouc–Wen, bilinear, and LuGre with σ1 = σ2 = 0) do not depend on it, and the fitters
hold every rate-dependent parameter at 0 when the time is not physical.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rths_ident.errors import ParameterError

__all__ = ["FitData", "Scales", "PSEUDO_TIME_STEP_S"]

#: sample interval of the pseudo-time axis of a quasi-static test [s]
PSEUDO_TIME_STEP_S = 1.0


@dataclasses.dataclass(frozen=True)
class Scales:
    """Unit scales of the normalised problem: displacement [m], force [N], time [s]."""

    displacement: float
    force: float
    time: float


@dataclasses.dataclass(frozen=True)
class FitData:
    """Displacement [m] and force [N] samples of one test, with their time [s].

    ``time_is_physical`` is False for quasi-static tests (pseudo-time, see the module
    docstring). Build it with :meth:`from_arrays`, which checks the arrays.
    """

    displacement: np.ndarray
    force: np.ndarray
    time: np.ndarray
    time_is_physical: bool
    source: str = "arrays"

    @classmethod
    def from_arrays(cls, displacement, force, time=None, source: str = "arrays") -> "FitData":
        """Check and wrap SI arrays. ``time`` None → pseudo-time (quasi-static test)."""
        x = np.asarray(displacement, dtype=float)
        f = np.asarray(force, dtype=float)
        if x.ndim != 1 or f.ndim != 1 or x.shape != f.shape:
            raise ParameterError(
                f"displacement and force must be 1-D arrays of equal length; got shapes {x.shape} and {f.shape}"
            )
        if x.size < 3:
            raise ParameterError(f"a fit needs at least 3 samples; got {x.size}")
        for name, arr in (("displacement", x), ("force", f)):
            if not np.all(np.isfinite(arr)):
                raise ParameterError(f"{name} must be finite (found NaN or inf at sample {int(np.argmin(np.isfinite(arr)))})")
        if np.ptp(x) == 0.0:
            raise ParameterError("displacement is constant: nothing to identify")
        if np.ptp(f) == 0.0:
            raise ParameterError("force is constant: nothing to identify")
        if time is None:
            t = np.arange(x.size, dtype=float) * PSEUDO_TIME_STEP_S
            physical = False
        else:
            t = np.asarray(time, dtype=float)
            if t.shape != x.shape:
                raise ParameterError(f"time must have the shape of displacement {x.shape}; got {t.shape}")
            if not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0.0):
                raise ParameterError("time must be finite and strictly increasing [s]")
            physical = True
        return cls(displacement=x, force=f, time=t, time_is_physical=physical, source=source)

    @property
    def n_samples(self) -> int:
        return int(self.displacement.size)

    @property
    def dt(self) -> float:
        """Mean sample interval [s] (pseudo-time: 1 s)."""
        return float((self.time[-1] - self.time[0]) / (self.n_samples - 1))

    @property
    def uniformly_sampled(self) -> bool:
        steps = np.diff(self.time)
        return bool(np.max(np.abs(steps - self.dt)) <= 1e-6 * self.dt)

    def scales(self) -> Scales:
        x_scale = float(np.max(np.abs(self.displacement)))
        f_scale = float(np.max(np.abs(self.force)))
        velocity = np.gradient(self.displacement, self.time)
        t_scale = x_scale / float(np.max(np.abs(velocity)))
        return Scales(displacement=x_scale, force=f_scale, time=t_scale)

    def normalised(self) -> tuple[np.ndarray, np.ndarray, float]:
        """(x̃, F̃, Δt̃): normalised displacement and force and the normalised mean step."""
        s = self.scales()
        return self.displacement / s.displacement, self.force / s.force, self.dt / s.time
