"""The prior of identified parameters: θ(0) and its standard deviation, relative to the
guess or absolute per name — what a joint UKF starts from."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from rths_ident.errors import ParameterError

__all__ = ["parameter_prior"]


def parameter_prior(names, guess_values, parameter_std) -> tuple[np.ndarray, np.ndarray]:
    """θ(0) [SI] and its std: ``parameter_std`` relative to the guess (a number), or
    absolute per name (a mapping, for a parameter guessed as 0); clear errors for missing
    or non-positive entries."""
    theta0 = np.asarray(guess_values, dtype=float)
    if isinstance(parameter_std, Mapping):
        missing = [p for p in names if p not in parameter_std]
        if missing:
            raise ParameterError(f"parameter_std lacks {missing} (needs {names})")
        theta_std = np.array([float(parameter_std[p]) for p in names])
    else:
        theta_std = float(parameter_std) * np.abs(theta0)
    if np.any(~(theta_std > 0)):
        raise ParameterError(
            f"parameter_std must be positive for every parameter; got {dict(zip(names, theta_std.tolist()))} "
            "(give absolute values as a mapping for parameters guessed as 0)"
        )
    return theta0, theta_std
