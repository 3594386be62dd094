"""Sigma points for the unscented Kalman filter (van der Merwe, Julier, simplex).

The same points and weights as filterpy's ``MerweScaledSigmaPoints`` (R. van der
Merwe, *Sigma-Point Kalman Filters for Probabilistic Inference in Dynamic State-Space
Models*, PhD thesis, 2004, Eqs. 3.164–3.166), ``JulierSigmaPoints`` (Julier & Uhlmann
1997) and ``SimplexSigmaPoints`` (Moireau & Chapelle 2011; n+1 points), written with
``jax.numpy`` so that they run inside ``jax.jit`` / ``jax.lax.scan``.

:func:`sigma_point_spec` reads either these classes or filterpy's own objects into one
description (:class:`SigmaPointSpec`) that the UKF core compiles.

Van der Merwe scaled points:

For a state of dimension ``n`` with mean ``x`` and covariance ``P``::

    λ      = α² (n + κ) − n
    U      = sqrt((n + λ) P)          # upper factor, Uᵀ U = (n + λ) P
    χ_0    = x
    χ_i    = x + U[i−1]               # rows of U, i = 1 … n
    χ_n+i  = x − U[i−1]
    Wm_0   = λ / (n + λ)
    Wc_0   = λ / (n + λ) + 1 − α² + β
    Wm_i   = Wc_i = 1 / (2 (n + λ))   # i = 1 … 2n

Julier points are the same with ``n + λ`` replaced by ``n + κ`` and
``Wm = Wc``, ``Wm_0 = κ / (n + κ)``. Simplex points are ``χ_j = x + Lᵀ d_j``
(j = 0 … n) with ``Lᵀ L = P`` and the fixed directions ``d_j`` of
:func:`simplex_directions`; ``Wm = Wc = 1 / (n + 1)``.

All quantities are dimensionless weights; ``x`` and ``P`` carry the units of the state.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import jax.numpy as jnp
import numpy as np

from rths_ident import small_linalg

__all__ = [
    "MerweScaledSigmaPoints",
    "JulierSigmaPoints",
    "SimplexSigmaPoints",
    "SigmaPointSpec",
    "merwe_scaled_weights",
    "julier_weights",
    "simplex_weights",
    "simplex_directions",
    "merwe_sigma_points",
    "simplex_sigma_points",
    "sigma_point_spec",
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
    # small_linalg.cholesky: unrolled for small n (no LAPACK call inside a loop), else
    # jnp.linalg.cholesky; same conventions (NaN if not positive definite)
    return small_linalg.cholesky(scaled_covariance).T


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

    kind = "symmetric"

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
        x, P = _checked_point(self, x, P)
        return merwe_sigma_points(x, P, self.spread, self.sqrt, self.subtract)

    def __repr__(self):
        return (
            f"MerweScaledSigmaPoints(n={self.n}, alpha={self.alpha}, beta={self.beta}, "
            f"kappa={self.kappa})"
        )


# --------------------------------------------------------------------------------------
# Julier and simplex points
# --------------------------------------------------------------------------------------


def _state_size(n) -> int:
    if isinstance(n, bool) or int(n) != n or n < 1:
        raise ValueError(f"n (state dimension) must be a positive integer; got {n!r}")
    return int(n)


def julier_weights(n: int, kappa: float):
    """Julier & Uhlmann weights ``(Wm, Wc)`` (equal) and the spread ``n + κ``."""
    n = _state_size(n)
    if not np.isfinite(kappa):
        raise ValueError(f"kappa must be finite; got {kappa!r}")
    spread = n + kappa
    if spread <= 0:
        raise ValueError(f"n + kappa = {spread!r} must be > 0 (kappa={kappa!r})")
    weights = np.full(2 * n + 1, 0.5 / spread)
    weights[0] = kappa / spread
    return weights, weights.copy(), float(spread)


def simplex_weights(n: int):
    """Simplex weights ``(Wm, Wc)``: ``1 / (n + 1)`` for each of the ``n + 1`` points."""
    n = _state_size(n)
    weights = np.full(n + 1, 1.0 / (n + 1))
    return weights, weights.copy()


def simplex_directions(n: int) -> np.ndarray:
    """The ``(n, n+1)`` matrix ``D`` whose columns are the simplex directions.

    Row ``d`` (1-based) holds ``d`` equal entries ``c_d = 1/√(λ d (d+1))`` followed by
    ``−d·c_d`` and zeros, with ``λ = n/(n+1)``; the first row is ``(−c_1, c_1)`` (the
    orientation filterpy uses); ``D`` is scaled by ``√n``. Its columns sum to zero and
    ``D Dᵀ / (n + 1) = I``, so weights ``1/(n+1)`` reproduce mean and covariance.
    """
    n = _state_size(n)
    lam = n / (n + 1)
    directions = np.zeros((n, n + 1))
    first = 1.0 / np.sqrt(2 * lam)
    directions[0, :2] = (-first, first)
    for d in range(2, n + 1):
        scale = np.sqrt(lam * d * (d + 1))
        directions[d - 1, :d] = 1.0 / scale
        directions[d - 1, d] = -d / scale
    return np.sqrt(n) * directions


def simplex_sigma_points(x, P, sqrt_method: Callable | None = None, subtract: Callable | None = None):
    """The ``n+1`` simplex sigma points (one per row) for mean ``x`` and covariance ``P``.

    ``sqrt_method(P)`` follows filterpy's convention (rows added; default: upper
    Cholesky factor ``U``, ``Uᵀ U = P``). ``subtract(a, b)`` is called once, as in
    filterpy, with ``a = x`` as an ``(n, 1)`` column and ``b`` the ``(n, n+1)`` matrix of
    negated offsets. Pure and JAX-traceable.
    """
    x = jnp.asarray(x)
    P = jnp.asarray(P)
    sqrt_fn = _default_sqrt if sqrt_method is None else sqrt_method
    directions = jnp.asarray(simplex_directions(x.shape[0]))
    root = sqrt_fn(P).T
    offsets = small_linalg.matmul(root, directions) if x.shape[0] <= small_linalg.MAX_UNROLLED_SIZE \
        else root @ directions
    if subtract is None:
        return (x[:, None] + offsets).T
    return subtract(x[:, None], -offsets).T


def _checked_point(points, x, P):
    n = points.n
    x = jnp.atleast_1d(jnp.asarray(x, dtype=float))
    if x.shape != (n,):
        raise ValueError(f"x must have shape ({n},); got {x.shape}")
    P = jnp.asarray(P, dtype=float)
    if P.ndim == 0:
        P = jnp.eye(n) * P
    if P.shape != (n, n):
        raise ValueError(f"P must have shape ({n}, {n}); got {P.shape}")
    return x, P


class JulierSigmaPoints:
    """Drop-in for ``filterpy.kalman.JulierSigmaPoints`` (2n+1 points, spread n + κ).

    ``sqrt_method`` and ``subtract`` as for :class:`MerweScaledSigmaPoints`
    (``jax.numpy``). Attributes ``Wm``, ``Wc``, ``n``, ``kappa`` match filterpy's.
    """

    kind = "symmetric"

    def __init__(self, n, kappa=0.0, sqrt_method=None, subtract=None):
        self.Wm, self.Wc, self.spread = julier_weights(n, kappa)
        self.n = int(n)
        self.kappa = kappa
        self.sqrt = sqrt_method
        self.subtract = subtract

    def num_sigmas(self) -> int:
        """Number of sigma points, ``2n + 1``."""
        return 2 * self.n + 1

    def sigma_points(self, x, P):
        """``(2n+1, n)`` sigma points for mean ``x`` and covariance ``P`` (scalar: ``P·I``)."""
        x, P = _checked_point(self, x, P)
        return merwe_sigma_points(x, P, self.spread, self.sqrt, self.subtract)

    def __repr__(self):
        return f"JulierSigmaPoints(n={self.n}, kappa={self.kappa})"


class SimplexSigmaPoints:
    """Drop-in for ``filterpy.kalman.SimplexSigmaPoints`` (n+1 points).

    ``alpha`` is stored and, as in filterpy, unused. ``sqrt_method`` and ``subtract``
    as in :func:`simplex_sigma_points` (``jax.numpy``).
    """

    kind = "simplex"

    def __init__(self, n, alpha=1, sqrt_method=None, subtract=None):
        self.Wm, self.Wc = simplex_weights(n)
        self.spread = 1.0
        self.n = int(n)
        self.alpha = alpha
        self.sqrt = sqrt_method
        self.subtract = subtract

    def num_sigmas(self) -> int:
        """Number of sigma points, ``n + 1``."""
        return self.n + 1

    def sigma_points(self, x, P):
        """``(n+1, n)`` sigma points for mean ``x`` and covariance ``P`` (scalar: ``P·I``)."""
        x, P = _checked_point(self, x, P)
        return simplex_sigma_points(x, P, self.sqrt, self.subtract)

    def __repr__(self):
        return f"SimplexSigmaPoints(n={self.n})"


# --------------------------------------------------------------------------------------
# one description for the core, from ours or filterpy's objects
# --------------------------------------------------------------------------------------


class SigmaPointSpec(NamedTuple):
    """What the UKF core needs from a sigma-point object.

    ``kind``: ``"symmetric"`` (van der Merwe / Julier: ``2n+1`` points from
    ``merwe_sigma_points`` with ``spread``), ``"simplex"`` (``n+1`` points from
    :func:`simplex_sigma_points`) or ``"custom"`` (``generator(x, P)`` makes them: a
    sigma-point class of the user's own, or a subclass overriding ``sigma_points``).
    ``sqrt_method``/``subtract`` are ``None`` for the defaults (Cholesky, ``a − b``).
    """

    kind: str
    n: int
    num_sigmas: int
    mean_weights: np.ndarray
    covariance_weights: np.ndarray
    spread: float
    sqrt_method: Callable | None
    subtract: Callable | None
    generator: Callable | None
    source: str  # e.g. "filterpy.kalman.MerweScaledSigmaPoints", for messages


def _filterpy_classes() -> dict[str, Any]:
    from filterpy.kalman import sigma_points as fp  # noqa: PLC0415  (imported only to read a foreign object)

    return {
        name: getattr(fp, name)
        for name in ("MerweScaledSigmaPoints", "JulierSigmaPoints", "SimplexSigmaPoints")
        if hasattr(fp, name)
    }


def _filterpy_default_sqrt(fn) -> bool:
    import scipy.linalg  # noqa: PLC0415

    return fn is scipy.linalg.cholesky


def _weights(points, name, count, source):
    try:
        arr = np.array(getattr(points, name), dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise TypeError(f"points.{name} of {source} must be an array of {count} weights") from None
    if arr.shape != (count,) or not np.all(np.isfinite(arr)):
        raise ValueError(f"points.{name} of {source} must hold {count} finite weights; got {getattr(points, name)!r}")
    return arr


def sigma_point_spec(points) -> SigmaPointSpec:
    """Read a sigma-point object into a :class:`SigmaPointSpec`.

    Accepted: this module's three classes; filterpy's ``MerweScaledSigmaPoints``
    (n, alpha, beta, kappa), ``JulierSigmaPoints`` (n, kappa) and ``SimplexSigmaPoints``
    (n) — their ``Wm``, ``Wc``, ``sqrt`` and ``subtract`` are used, filterpy's defaults
    (``scipy.linalg.cholesky``, ``numpy.subtract``) mapping to the compiled defaults;
    and any object with filterpy's interface (``n``, ``Wm``, ``Wc``, ``num_sigmas()``,
    ``sigma_points(x, P)``), including a subclass overriding ``sigma_points``, whose own
    ``sigma_points`` then generates the points (``kind="custom"``).
    """
    ours = (MerweScaledSigmaPoints, JulierSigmaPoints, SimplexSigmaPoints)
    if isinstance(points, ours) and type(points).sigma_points in [cls.sigma_points for cls in ours]:
        return SigmaPointSpec(
            points.kind, points.n, points.num_sigmas(), np.asarray(points.Wm, dtype=float),
            np.asarray(points.Wc, dtype=float), float(points.spread), points.sqrt, points.subtract, None,
            f"rths_ident {type(points).__name__}",
        )  # fmt: skip
    missing = [a for a in ("n", "Wm", "Wc", "num_sigmas", "sigma_points") if not hasattr(points, a)]
    if missing:
        raise TypeError(
            "points must be a sigma-point object: rths_ident's or filterpy's MerweScaledSigmaPoints, "
            "JulierSigmaPoints or SimplexSigmaPoints, or one with their interface (n, Wm, Wc, num_sigmas(), "
            f"sigma_points(x, P)); got {type(points).__name__}, which lacks {', '.join(missing)}"
        )
    n = _state_size(points.n)
    count = int(points.num_sigmas())
    source = f"{type(points).__module__}.{type(points).__name__}"
    Wm, Wc = _weights(points, "Wm", count, source), _weights(points, "Wc", count, source)
    base = next((cls for cls in _filterpy_classes().values() if isinstance(points, cls)), None)
    if base is None or type(points).sigma_points is not base.sigma_points:
        return SigmaPointSpec("custom", n, count, Wm, Wc, 1.0, None, None, points.sigma_points, source)
    sqrt = None if _filterpy_default_sqrt(points.sqrt) else points.sqrt
    subtract = None if points.subtract is np.subtract else points.subtract
    if base.__name__ == "SimplexSigmaPoints":
        return SigmaPointSpec("simplex", n, count, Wm, Wc, 1.0, sqrt, subtract, None, source)
    if base.__name__ == "JulierSigmaPoints":
        spread = n + points.kappa
    else:  # van der Merwe: filterpy scales P by (λ + n) with λ = α²(n + κ) − n
        spread = (points.alpha**2 * (n + points.kappa) - n) + n
    if not (np.isfinite(spread) and spread > 0):
        raise ValueError(f"{source}: the spread of its sigma points must be > 0; got {spread!r}")
    return SigmaPointSpec("symmetric", n, count, Wm, Wc, float(spread), sqrt, subtract, None, source)
