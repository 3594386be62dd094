"""Constrained RLS: RLS followed by an exact projection onto linear constraints.

After each RLS update (:mod:`rths_ident.estimators.rls`) the estimate θ̂ is replaced by

    θ̃ = argmin_θ (θ − θ̂)ᵀ P⁻¹ (θ − θ̂)   s.t.   lower ≤ θ ≤ upper,  A θ ≤ b

i.e. the projection in the metric of the inverse covariance — the constrained
least-squares estimate given the data summarised by (θ̂, P). Seed 001 (Eqs. 4.11–4.14)
projects with identity weighting onto θ > 0, which is the element-wise clip; that is
available as ``projection="euclidean"`` (clips to the box only, ignores A θ ≤ b).

Exact solver (:func:`project`), jittable, for small n and few constraints.
Write the constraints as G θ ≤ h (G = [I; −I; A], h = [upper; −lower; b], m rows).
For a set S of constraints held as equalities the minimiser is

    μ_S = (G_S P G_Sᵀ)⁻¹ (G_S θ̂ − h_S),     θ_S = θ̂ − P G_Sᵀ μ_S,

with multipliers μ_S. θ_S is the optimum iff it is primal feasible (G θ_S ≤ h) and dual
feasible (μ_S ≥ 0): then it satisfies the KKT conditions of the strictly convex
problem. The optimum θ* has multipliers that can be chosen supported on a linearly
independent subset of its active constraints (a basic solution of the multiplier cone,
Carathéodory), so θ* = θ_S for some S with |S| ≤ n; every other candidate violates primal
or dual feasibility. The solver evaluates all candidates at once (fixed shapes, no
data-dependent control flow, jittable/vmappable) and returns the one with the smallest
KKT violation, measured as a distance in the P⁻¹ metric: max over rows of
(G_j θ − h_j)₊/‖G_j‖_P and over the active set of (−μ_i)₊‖G_i‖_P, ‖g‖_P = √(gᵀPg).
No tolerance is involved: the true KKT point scores at round-off level. The cost is the
number of subsets, Σ_{k≤n} C(m, k) minus those holding both upper_i and lower_i (never
both needed) — 27 solves of at most 3×3 for a 3-parameter box. The result is finally
clipped to the box (a change at round-off level) so the box holds exactly.
If the constraints are infeasible the candidate with the smallest violation is returned.

Functional core: :func:`project`, :func:`clip_to_box`, :func:`init`, :func:`update`,
:func:`run`; thin wrapper :class:`ConstrainedRLS`.
"""

from __future__ import annotations

import functools
import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident import small_linalg as sl
from rths_ident.errors import ParameterError
from rths_ident._params import params_dataclass
from rths_ident.estimators import rls as _rls

__all__ = [
    "MAX_CANDIDATE_SETS",
    "count_candidate_sets",
    "ConstrainedRLSParams",
    "project",
    "clip_to_box",
    "apply_projection",
    "init",
    "correct",
    "update",
    "run",
    "ConstrainedRLS",
]

#: the enumeration refuses problems with more candidate active sets than this
MAX_CANDIDATE_SETS = 20000


def count_candidate_sets(n: int, p: int) -> int:
    """Number of active sets :func:`project` evaluates for n parameters, a box and p
    inequalities: Σ_{k≤n} Σ_j C(n, j) 2^j C(p, k − j) (at most one bound per parameter)."""
    return sum(
        math.comb(n, j) * 2**j * math.comb(p, k - j)
        for k in range(0, min(n, 2 * n + p) + 1)
        for j in range(0, min(k, n) + 1)
        if k - j <= p
    )


def _candidate_sets(n: int, p: int) -> list[np.ndarray]:
    """Index arrays (C_k, k) of candidate active sets, k = 0..n (static, trace time).

    Rows 0..n−1 are upper bounds, n..2n−1 lower bounds, 2n.. the inequalities A θ ≤ b.
    """
    total = count_candidate_sets(n, p)
    if total > MAX_CANDIDATE_SETS:
        raise ParameterError(
            f"project: {total} candidate active sets for n={n} parameters and p={p} inequalities exceeds "
            f"MAX_CANDIDATE_SETS={MAX_CANDIDATE_SETS}; the exact enumeration is meant for small problems"
        )
    m = 2 * n + p
    sets = []
    for k in range(0, min(n, m) + 1):
        combos = [c for c in itertools.combinations(range(m), k) if not any(i < n and i + n in c for i in c)]
        sets.append(np.asarray(combos, dtype=np.int32).reshape(len(combos), k))
    return sets


def clip_to_box(theta_hat, lower, upper) -> jax.Array:
    """Euclidean projection onto the box ``lower ≤ θ ≤ upper`` (seed 001 Eqs. 4.11–4.14)."""
    return jnp.clip(jnp.asarray(theta_hat, jnp.float64), lower, upper)


def project(theta_hat, covariance, lower, upper, A=None, b=None) -> jax.Array:
    """Exact projection of ``theta_hat`` in the metric of ``covariance⁻¹`` (see module doc).

    ``lower``/``upper`` (n,) may contain ∓inf; ``A`` (p, n) and ``b`` (p,) are optional.
    Returns θ̃ (n,). Infeasible constraints: the candidate closest to satisfying KKT.
    """
    theta_hat = jnp.asarray(theta_hat, jnp.float64)
    n = theta_hat.shape[0]
    P = jnp.asarray(covariance, jnp.float64)
    lower = jnp.broadcast_to(jnp.asarray(lower, jnp.float64), (n,))
    upper = jnp.broadcast_to(jnp.asarray(upper, jnp.float64), (n,))
    if A is None:
        A = jnp.zeros((0, n))
        b = jnp.zeros((0,))
    A = jnp.asarray(A, jnp.float64).reshape(-1, n)
    b = jnp.asarray(b, jnp.float64).reshape(-1)
    if b.shape[0] != A.shape[0]:
        raise ParameterError(f"project: A has {A.shape[0]} rows but b has {b.shape[0]} entries")
    G = jnp.concatenate([jnp.eye(n), -jnp.eye(n), A], axis=0)
    h = jnp.concatenate([upper, -lower, b])
    return _make_projection(A.shape[0])(theta_hat, P, G, h, lower, upper)


@functools.lru_cache(maxsize=None)
def _make_projection(n_general: int):
    """θ̃ = project(θ̂, P, G, h, lower, upper), skipping the enumeration when θ̂ is feasible
    (built once per number of general inequalities, not per call).

    θ̂ already feasible is the minimiser (the empty active set); in an online estimator
    that is almost every step. Unbatched, ``lax.cond`` runs one branch. Under ``jax.vmap``
    a ``lax.cond`` on a batched predicate becomes a select that evaluates BOTH branches
    for every member (the enumeration every step); the batching rule below instead
    enumerates, for the whole batch, only when some member is infeasible (one unbatched
    ``lax.cond`` on "any infeasible") and keeps θ̂ for the feasible members (a masked
    update) — the same numbers, member by member.

    An infeasible θ̂ is first projected on each single constraint (2n + p candidates,
    :func:`_one_constraint_projection`); only when none of them is a KKT point are all
    the active sets enumerated (:func:`_enumerate_active_sets`). In a batch both stages
    are decided for the whole batch, so a rare corner case does not make every member
    enumerate every step."""

    def single(theta_hat, P, G, h, lower, upper):
        feasible = sl.all_of(sl.matvec(G, theta_hat) <= h)

        def two_stages():
            theta_one, found = _one_constraint_projection(theta_hat, P, G, h, lower, upper)
            return jax.lax.cond(found, lambda: theta_one,
                                lambda: _enumerate_active_sets(theta_hat, P, G, h, lower, upper, n_general))

        return jax.lax.cond(feasible, lambda: theta_hat, two_stages)

    batched_projection = jax.custom_batching.custom_vmap(single)

    @batched_projection.def_vmap
    def _batched(axis_size, in_batched, theta_hat, P, G, h, lower, upper):
        if not any(in_batched):
            return single(theta_hat, P, G, h, lower, upper), False
        args = [x if batched else jnp.broadcast_to(x, (axis_size,) + jnp.shape(x))
                for x, batched in zip((theta_hat, P, G, h, lower, upper), in_batched)]
        feasible = jax.vmap(lambda t, g, hh: jnp.all(sl.matvec(g, t) <= hh))(args[0], args[2], args[3])

        def two_stages():
            theta_one, found = jax.vmap(_one_constraint_projection)(*args)
            done = feasible | found

            def enumerate_masked():
                projected = jax.vmap(lambda *a: _enumerate_active_sets(*a, n_general))(*args)
                return jnp.where(done[:, None], jnp.where(feasible[:, None], args[0], theta_one), projected)

            return jax.lax.cond(jnp.all(done), lambda: jnp.where(feasible[:, None], args[0], theta_one),
                                enumerate_masked)

        return jax.lax.cond(jnp.all(feasible), lambda: args[0], two_stages), True

    # derivatives (forward and reverse) are those of the plain ``lax.cond`` form; the
    # batching rule above only changes how the values are computed
    @jax.custom_jvp
    def projection(*args):
        return batched_projection(*args)

    @projection.defjvp
    def _projection_jvp(primals, tangents):
        return jax.jvp(single, primals, tangents)

    return projection


#: systems up to this size are solved by the unrolled LDLᵀ of :func:`solve_small`
MAX_UNROLLED_SOLVE = 6


def solve_small(M, r) -> jax.Array:
    """x with M x = r for a stack of small symmetric positive definite systems,
    M (C, k, k), r (C, k) (here M = G_S P G_Sᵀ).

    k ≤ :data:`MAX_UNROLLED_SOLVE`: an LDLᵀ factorisation written out entry by entry
    (stable for SPD matrices, like Cholesky; elementwise operations only, so the
    compiled loop around an online identifier stays one kernel: no LAPACK call —
    :mod:`rths_ident.small_loop_kernels`). Larger k: LU (``jnp.linalg.solve``). A
    singular M (dependent active rows) gives non-finite entries either way, and the
    enumeration discards that candidate.
    """
    M, r = jnp.asarray(M, jnp.float64), jnp.asarray(r, jnp.float64)
    k = M.shape[-1]
    if k > MAX_UNROLLED_SOLVE:
        return jnp.linalg.solve(M, r[..., None])[..., 0]
    # M = L D Lᵀ, L unit lower triangular (lower triangle of M used)
    L = [[None] * k for _ in range(k)]
    d = [None] * k
    for j in range(k):
        d[j] = M[..., j, j] - sum(L[j][m] * L[j][m] * d[m] for m in range(j))
        for i in range(j + 1, k):
            L[i][j] = (M[..., i, j] - sum(L[i][m] * L[j][m] * d[m] for m in range(j))) / d[j]
    y = [None] * k  # L y = r
    for i in range(k):
        y[i] = r[..., i] - sum(L[i][m] * y[m] for m in range(i))
    x = [None] * k  # D Lᵀ x = y
    for i in reversed(range(k)):
        x[i] = y[i] / d[i] - sum(L[m][i] * x[m] for m in range(i + 1, k))
    return jnp.stack(x, axis=-1)


#: a candidate whose KKT violation is below this fraction of the problem's scale is
#: accepted by the single-constraint stage (the true KKT point scores ~1e-15 of it)
KKT_TOLERANCE = 1e-10


def _row_norms(P, G):
    """‖G_j‖ in the metric P (so G_j θ − h_j over it is a P⁻¹-distance to the hyperplane);
    products as multiply-sum, not dot (small_linalg)."""
    return jnp.sqrt(sl.vdot(sl.matmul(G, P), G))


def _candidates(theta_hat, P, G, h, row_norm, idx, held):
    """The minimisers with the constraints ``idx`` (C, K) held as equalities where
    ``held`` (C, K) is True (a set of k < K constraints is padded with rows that are not
    held: zero rows with an identity block in M, so their multipliers are exactly 0 and
    every set goes through one K×K solve), and their KKT violations (module doc; ∞ for a
    singular or non-finite candidate)."""
    n, K = theta_hat.shape[0], idx.shape[1]
    G_S = G[idx] * held[..., None]  # (C, K, n), rows not held are zero
    h_S = jnp.where(held, h[idx], 0.0)  # (C, K)
    residual = sl.matvec(G_S, theta_hat) - h_S  # (C, K)
    PGt = sl.matmul(P, jnp.swapaxes(G_S, -1, -2))  # (C, n, K)
    M = sl.matmul(G_S, PGt) + np.eye(K)[None] * (~held)[:, None, :]  # (C, K, K)
    mu = solve_small(M, residual)  # (C, K) multipliers (0 for the rows not held)
    cand = theta_hat - sl.matvec(PGt, mu)
    # a bound held as an equality holds exactly (not to round-off): θ_i = upper_i (row i)
    # or lower_i (row n + i)
    on_upper = np.any((idx[:, :, None] == np.arange(n)[None, None, :]) & held[:, :, None], axis=1)  # (C, n)
    on_lower = np.any((idx[:, :, None] == n + np.arange(n)[None, None, :]) & held[:, :, None], axis=1)
    cand = jnp.where(on_upper, h[:n], jnp.where(on_lower, -h[n:2 * n], cand))
    # a negative multiplier μ_i would let the objective drop by releasing constraint i;
    # |μ_i|·‖G_i‖_P is that move as a P⁻¹-distance
    dual_violation = sl.largest(jnp.where(held, jnp.maximum(-mu, 0.0) * row_norm[idx], 0.0), axis=1)
    gap = sl.matvec(G, cand) - h  # (C, m); rows with infinite h give -inf
    primal_violation = sl.largest(jnp.where(gap > 0.0, gap / row_norm, 0.0), axis=1)
    score = jnp.maximum(primal_violation, dual_violation)
    finite = sl.all_of(jnp.isfinite(cand), axis=1) & jnp.isfinite(score)
    return cand, jnp.where(finite, score, jnp.inf)


@functools.lru_cache(maxsize=None)
def _padded_candidate_sets(n: int, p: int) -> tuple[np.ndarray, np.ndarray]:
    """Every candidate active set of :func:`_candidate_sets` as one padded array
    (C, K) with K = the largest set, and which entries are held (static, trace time)."""
    sets = _candidate_sets(n, p)
    K = max(s.shape[1] for s in sets)
    total = sum(s.shape[0] for s in sets)
    idx, held = np.zeros((total, max(K, 1)), dtype=np.int32), np.zeros((total, max(K, 1)), dtype=bool)
    row = 0
    for s in sets:
        idx[row:row + s.shape[0], :s.shape[1]] = s
        held[row:row + s.shape[0], :s.shape[1]] = True
        row += s.shape[0]
    return idx, held


def _one_constraint_projection(theta_hat, P, G, h, lower, upper):
    """The best projection of θ̂ onto one constraint held as an equality, and whether it
    is a KKT point to :data:`KKT_TOLERANCE` of the problem's scale (max over the rows of
    (|G_j|·|θ̂| + |h_j|)/‖G_j‖_P, the size of a P⁻¹-distance's round-off)."""
    row_norm = _row_norms(P, G)
    m = G.shape[0]
    cand, score = _candidates(theta_hat, P, G, h, row_norm, np.arange(m, dtype=np.int32)[:, None],
                              np.ones((m, 1), dtype=bool))
    finite_h = jnp.isfinite(h)
    scale = jnp.where(finite_h, (sl.matvec(jnp.abs(G), jnp.abs(theta_hat)) + jnp.where(finite_h, jnp.abs(h), 0.0))
                      / row_norm, 0.0)
    best, best_score = sl.first_argmin(score)
    found = best_score <= KKT_TOLERANCE * (1.0 + sl.largest(scale))
    return jnp.clip(cand[best], lower, upper), found


def _enumerate_active_sets(theta_hat, P, G, h, lower, upper, n_general):
    """The exact projection for an infeasible θ̂ (see the module docstring): every
    candidate set in one padded solve (:func:`_padded_candidate_sets`; compact code,
    so the identifier's loop compiles fast)."""
    idx, held = _padded_candidate_sets(theta_hat.shape[0], n_general)
    thetas, scores = _candidates(theta_hat, P, G, h, _row_norms(P, G), idx, held)
    best, _ = sl.first_argmin(scores)  # the KKT point (violation ~ round-off)
    return jnp.clip(thetas[best], lower, upper)


# --------------------------------------------------------------------------- constrained RLS


def _check_constraints(n, lower, upper, A, b):
    lower = np.asarray(lower, dtype=float)
    upper = np.asarray(upper, dtype=float)
    if lower.shape != (n,) or upper.shape != (n,):
        raise ParameterError(f"ConstrainedRLSParams.lower/upper must have shape ({n},); got {lower.shape} and {upper.shape}")
    if np.any(np.isnan(lower)) or np.any(np.isnan(upper)) or np.any(lower > upper):
        raise ParameterError(f"ConstrainedRLSParams needs lower ≤ upper (no NaN); got lower={lower}, upper={upper}")
    if A is not None:
        A = np.asarray(A, dtype=float)
        b = np.asarray(b, dtype=float)
        if A.ndim != 2 or A.shape[1] != n or b.shape != (A.shape[0],):
            raise ParameterError(f"ConstrainedRLSParams.A must be (p, {n}) and b (p,); got {A.shape} and {b.shape}")
        if not (np.all(np.isfinite(A)) and np.all(np.isfinite(b))):
            raise ParameterError("ConstrainedRLSParams.A and b must be finite")


@params_dataclass(static=("projection",))
class ConstrainedRLSParams:
    """RLS configuration plus the constraint set and the projection kind.

    ``projection``: ``"weighted"`` (exact, metric P⁻¹; default) or ``"euclidean"``
    (element-wise clip to the box, seed 001 Eqs. 4.11–4.14; ignores A θ ≤ b).
    ``A``/``b`` may have zero rows (box only).
    """

    rls: _rls.RLSParams
    lower: jax.Array
    upper: jax.Array
    A: jax.Array
    b: jax.Array
    projection: str = "weighted"

    def __post_init__(self):
        if self.projection not in ("weighted", "euclidean"):
            raise ParameterError(
                f"ConstrainedRLSParams.projection must be 'weighted' or 'euclidean'; got {self.projection!r}"
            )
        if not isinstance(self.rls, _rls.RLSParams):
            raise ParameterError(f"ConstrainedRLSParams.rls must be an RLSParams; got {type(self.rls).__name__}")
        if not isinstance(self.lower, jax.core.Tracer):
            n = int(np.asarray(self.lower).shape[0]) if np.ndim(self.lower) == 1 else -1
            _check_constraints(n, self.lower, self.upper, self.A, self.b)

    @classmethod
    def box(cls, lower, upper, A=None, b=None, projection: str = "weighted", **rls_fields) -> "ConstrainedRLSParams":
        """Convenience constructor: ``ConstrainedRLSParams.box(lower, upper, forgetting=0.99)``."""
        lower = np.asarray(lower, dtype=float)
        n = lower.shape[0] if lower.ndim == 1 else 0
        if A is None:
            A, b = np.zeros((0, n)), np.zeros((0,))
        return cls(rls=_rls.RLSParams(**rls_fields), lower=jnp.asarray(lower), upper=jnp.asarray(upper, jnp.float64),
                   A=jnp.asarray(A, jnp.float64), b=jnp.asarray(b, jnp.float64), projection=projection)


def apply_projection(params: ConstrainedRLSParams, theta_hat, covariance) -> jax.Array:
    """θ̂ projected as configured in ``params.projection``."""
    if params.projection == "euclidean":  # static field: a Python branch is fine
        return clip_to_box(theta_hat, params.lower, params.upper)
    return project(theta_hat, covariance, params.lower, params.upper, params.A, params.b)


_apply_projection_jit = jax.jit(apply_projection)  # one compiled call instead of many eager ops


def init(params: ConstrainedRLSParams, theta0, initial_covariance) -> _rls.RLSState:
    """Initial state; θ̂(0) is projected onto the constraints first."""
    state = _rls.init(params.rls, theta0, initial_covariance)
    return state._replace(theta=_apply_projection_jit(params, state.theta, state.covariance))


def correct(params: ConstrainedRLSParams, state: _rls.RLSState, phi, prediction_error) -> _rls.RLSState:
    """:func:`rths_ident.estimators.rls.correct` followed by the projection."""
    state = _rls.correct(params.rls, state, phi, prediction_error)
    return state._replace(theta=apply_projection(params, state.theta, state.covariance))


def update(params: ConstrainedRLSParams, state: _rls.RLSState, phi, y) -> tuple[_rls.RLSState, jax.Array]:
    """RLS step then projection; returns the new state and the a-priori prediction error."""
    phi = jnp.asarray(phi, jnp.float64)
    error = y - sl.vdot(phi, state.theta)
    return correct(params, state, phi, error), error


def run(params: ConstrainedRLSParams, state: _rls.RLSState, regressors, measurements):
    """Scan :func:`update` over a record: ``regressors`` (N, n), ``measurements`` (N,)."""

    def body(state, sample):
        phi, y = sample
        state, error = update(params, state, phi, y)
        return state, _rls.RLSHistory(state.theta, error, jnp.trace(state.covariance))

    return jax.lax.scan(body, state, (jnp.asarray(regressors, jnp.float64), jnp.asarray(measurements, jnp.float64)))


_update_jit = jax.jit(update)
_run_jit = jax.jit(run)


class ConstrainedRLS(_rls.RLS):
    """Stateful constrained RLS for scripts; all maths lives in :func:`update`.

    >>> crls = ConstrainedRLS(3, theta0, P0, lower=[0, 0, 0], upper=[2, 2, 2], A=[[1, 1, 0]], b=[3])
    >>> crls.update(phi, y); crls.theta
    """

    def __init__(self, n: int, theta0=None, P0=1.0e3, *, lower, upper, A=None, b=None, projection: str = "weighted",
                 forgetting: float = 1.0, dead_zone: float = 0.0, trace_cap: float = 0.0, eigen_floor: float = 0.0,
                 reset_below: float = 0.0):
        super().__init__(n, theta0, P0, forgetting=forgetting, dead_zone=dead_zone, trace_cap=trace_cap,
                         eigen_floor=eigen_floor, reset_below=reset_below)
        self.params = ConstrainedRLSParams.box(lower, upper, A, b, projection=projection, forgetting=forgetting,
                                               dead_zone=dead_zone, trace_cap=trace_cap, eigen_floor=eigen_floor,
                                               reset_below=reset_below)
        if np.asarray(self.params.lower).shape != (self.n,):
            raise ParameterError(f"ConstrainedRLS lower/upper must have shape ({self.n},)")
        self.state = init(self.params, self.state.theta, self.state.covariance)

    def update(self, phi, y) -> float:
        self.state, error = _update_jit(self.params, self.state, self._check_phi(phi), jnp.float64(y))
        return float(error)

    def run(self, regressors, measurements):
        regressors = np.asarray(regressors, dtype=float)
        measurements = np.asarray(measurements, dtype=float)
        if regressors.ndim != 2 or regressors.shape[1] != self.n or measurements.shape != (regressors.shape[0],):
            raise ParameterError(
                f"ConstrainedRLS.run needs regressors (N, {self.n}) and measurements (N,); got {regressors.shape} and {measurements.shape}"
            )
        self.state, history = _run_jit(self.params, self.state, regressors, measurements)
        return history
