"""Van der Merwe scaled sigma points for the unscented Kalman filter.

The same points and weights as ``filterpy.kalman.MerweScaledSigmaPoints`` (R. van der
Merwe, *Sigma-Point Kalman Filters for Probabilistic Inference in Dynamic State-Space
Models*, PhD thesis, 2004, Eqs. 3.164–3.166), written with ``jax.numpy`` so that they
run inside ``jax.jit`` / ``jax.lax.scan``.

For a state of dimension ``n`` with mean ``x`` and covariance ``P``::

    λ      = α² (n + κ) − n
    U      = sqrt((n + λ) P)          # upper factor, Uᵀ U = (n + λ) P
    χ_0    = x
    χ_i    = x + U[i−1]               # rows of U, i = 1 … n
    χ_n+i  = x − U[i−1]
    Wm_0   = λ / (n + λ)
    Wc_0   = λ / (n + λ) + 1 − α² + β
    Wm_i   = Wc_i = 1 / (2 (n + λ))   # i = 1 … 2n

All quantities are dimensionless weights; ``x`` and ``P`` carry the units of the state.
"""

from __future__ import annotations

from typing import Callable

import jax.numpy as jnp
import numpy as np

__all__ = [
    "MerweScaledSigmaPoints",
    "merwe_scaled_weights",
    "merwe_sigma_points",
]


def merwe_scaled_weights(n: int, alpha: float, beta: float, kappa: float):
    """Mean and covariance weights ``(Wm, Wc)`` and the spread ``n + λ``.

    Returns numpy arrays of length ``2n+1`` and the float ``n + λ`` with
    ``λ = α²(n+κ) − n`` (van der Merwe 2004, Eq. 3.165).
    """
    if int(n) != n or n < 1:
        raise ValueError(f"n (state dimension) must be a positive integer; got {n!r}")
    n = int(n)
    for name, value in (("alpha", alpha), ("beta", beta), ("kappa", kappa)):
        if not np.isfinite(value):
            raise ValueError(f"{name} must be finite; got {value!r}")
    if alpha <= 0:
        raise ValueError(f"alpha (sigma-point spread α) must be > 0; got {alpha!r}")
    lambda_ = alpha**2 * (n + kappa) - n
    spread = n + lambda_
    if spread <= 0:
        raise ValueError(
            f"n + λ = α²(n+κ) = {spread!r} must be > 0 (check alpha={alpha!r}, kappa={kappa!r})"
        )
    c = 0.5 / spread
    mean_weights = np.full(2 * n + 1, c)
    covariance_weights = np.full(2 * n + 1, c)
    mean_weights[0] = lambda_ / spread
    covariance_weights[0] = lambda_ / spread + (1.0 - alpha**2 + beta)
    return mean_weights, covariance_weights, float(spread)


def _default_sqrt(scaled_covariance):
    # filterpy uses scipy.linalg.cholesky (upper factor U, Uᵀ U = A) and adds the
    # ROWS of U; the rows of U are the columns of the lower factor L = Uᵀ.
    return jnp.linalg.cholesky(scaled_covariance).T


def merwe_sigma_points(
    x,
    P,
    spread: float,
    sqrt_method: Callable | None = None,
    subtract: Callable | None = None,
):
    """The ``2n+1`` sigma points (one per row) for mean ``x`` and covariance ``P``.

    ``spread`` is ``n + λ``. ``sqrt_method(A)`` must return a matrix whose *rows* are
    added to ``x`` (filterpy's convention: an upper-triangular ``U`` with ``Uᵀ U = A``)
    and be JAX-traceable; the default is a Cholesky factor. ``subtract(a, b)`` is the
    state difference; points are ``subtract(x, -U[k])`` and ``subtract(x, U[k])`` as in
    filterpy. Pure and JAX-traceable.
    """
    x = jnp.asarray(x)
    P = jnp.asarray(P)
    sqrt_fn = _default_sqrt if sqrt_method is None else sqrt_method
    U = sqrt_fn(spread * P)
    if subtract is None:
        plus = x[None, :] + U
        minus = x[None, :] - U
    else:
        n = x.shape[0]
        plus = jnp.stack([subtract(x, -U[k]) for k in range(n)])
        minus = jnp.stack([subtract(x, U[k]) for k in range(n)])
    return jnp.concatenate([x[None, :], plus, minus], axis=0)


class MerweScaledSigmaPoints:
    """Drop-in for ``filterpy.kalman.MerweScaledSigmaPoints``.

    Parameters
    ----------
    n : int
        State dimension; ``2n+1`` sigma points.
    alpha : float
        Spread of the points around the mean (α, usually 1e-3 … 1).
    beta : float
        Prior knowledge of the distribution (β = 2 is optimal for a Gaussian).
    kappa : float
        Secondary scaling (κ, usually 0 or 3 − n).
    sqrt_method : callable, optional
        Matrix square root, filterpy's convention (the *rows* of the result are added
        to the mean). It must be written with ``jax.numpy`` (it runs inside ``jit``).
        Default: Cholesky.
    subtract : callable(x, y), optional
        State difference (e.g. for angles); JAX-traceable. Default: ``x − y``.

    Attributes ``Wm``, ``Wc`` (numpy arrays), ``n``, ``alpha``, ``beta``, ``kappa``
    match filterpy's.
    """

    def __init__(self, n, alpha, beta, kappa, sqrt_method=None, subtract=None):
        self.Wm, self.Wc, self.spread = merwe_scaled_weights(n, alpha, beta, kappa)
        self.n = int(n)
        self.alpha = alpha
        self.beta = beta
        self.kappa = kappa
        self.sqrt = sqrt_method
        self.subtract = subtract

    def num_sigmas(self) -> int:
        """Number of sigma points, ``2n + 1``."""
        return 2 * self.n + 1

    def sigma_points(self, x, P):
        """Sigma points for mean ``x`` (length n, or a scalar if n = 1) and covariance
        ``P`` (n×n, or a scalar meaning ``P·I``). Returns a ``(2n+1, n)`` array."""
        x = jnp.atleast_1d(jnp.asarray(x, dtype=float))
        if x.shape != (self.n,):
            raise ValueError(f"x must have shape ({self.n},); got {x.shape}")
        P = jnp.asarray(P, dtype=float)
        if P.ndim == 0:
            P = jnp.eye(self.n) * P
        if P.shape != (self.n, self.n):
            raise ValueError(f"P must have shape ({self.n}, {self.n}); got {P.shape}")
        return merwe_sigma_points(x, P, self.spread, self.sqrt, self.subtract)

    def __repr__(self):
        return (
            f"MerweScaledSigmaPoints(n={self.n}, alpha={self.alpha}, beta={self.beta}, "
            f"kappa={self.kappa})"
        )
