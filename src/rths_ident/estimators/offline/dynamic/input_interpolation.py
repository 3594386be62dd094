"""The input between samples: the oscillator is integrated on ``substeps`` sub-steps per
sample, so the input is needed at t_k + j·Δt/S. By name (:data:`INTERPOLATIONS`):

* ``bandlimited`` (default): the input is taken to be band-limited below the Nyquist
  frequency, as a sampled signal should be. A periodic record (whole periods of a
  periodic input) is interpolated by zero-padding its discrete Fourier transform
  (``scipy.signal.resample``), which is exact for a periodic band-limited signal such as
  a multisine; any other record by a polyphase windowed-sinc FIR
  (``scipy.signal.resample_poly``, Kaiser window β = 5), whose ends see the zeros
  beyond the record over a few samples;
* ``linear``: straight lines between samples (first-order hold);
* ``hold``: each sample held until the next one (zero-order hold, as a DAC drives an
  actuator).

Each function returns the input at the (N − 1)·S + 1 sub-step instants from the first
sample to the last.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import scipy.signal

from rths_ident.registry import Registry

__all__ = ["INTERPOLATIONS", "interpolate_input"]


def _bandlimited(u: np.ndarray, substeps: int, periodic: bool) -> np.ndarray:
    n = u.size
    if periodic:
        fine = scipy.signal.resample(u, n * substeps)
    else:
        fine = scipy.signal.resample_poly(u, substeps, 1, window=("kaiser", 5.0))
    return fine[: (n - 1) * substeps + 1]


def _linear(u: np.ndarray, substeps: int, periodic: bool) -> np.ndarray:
    n = u.size
    return np.interp(np.arange((n - 1) * substeps + 1) / substeps, np.arange(n), u)


def _hold(u: np.ndarray, substeps: int, periodic: bool) -> np.ndarray:
    return np.repeat(u, substeps)[: (u.size - 1) * substeps + 1]


#: name -> ``(u, substeps, periodic) -> input at every sub-step instant``
INTERPOLATIONS: Registry[Callable[[np.ndarray, int, bool], np.ndarray]] = Registry("input interpolation", {
    "bandlimited": _bandlimited,
    "linear": _linear,
    "hold": _hold,
})


def interpolate_input(u, substeps: int, periodic: bool, method: str = "bandlimited") -> np.ndarray:
    """The input ``u`` (N samples) at the (N − 1)·``substeps`` + 1 sub-step instants,
    by the registered ``method``."""
    return np.asarray(INTERPOLATIONS[method](np.asarray(u, dtype=float), int(substeps), bool(periodic)))
