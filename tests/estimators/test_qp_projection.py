"""Exact P⁻¹-metric projection checked against two real QP solvers (quadprog, daqp), and
constrained RLS checked step by step against RLS + quadprog."""

import daqp
import jax
import numpy as np
import pytest
import quadprog
from hypothesis import given, settings
from hypothesis import strategies as st

import rths_ident  # noqa: F401  (float64)
from rths_ident.errors import ParameterError
from rths_ident.estimators import qp_projection as qp

project = jax.jit(qp.project)


def _random_problem(rng, n, p, cond_exp=4.0):
    """Random SPD P (condition up to 10^cond_exp), random box containing a point c,
    inequalities A θ ≤ b satisfied strictly at c, and a point θ̂ mostly outside."""
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    eig = 10.0 ** rng.uniform(-cond_exp / 2, cond_exp / 2, n) * 10.0 ** rng.uniform(-3, 3)
    P = (Q * eig) @ Q.T
    P = 0.5 * (P + P.T)
    scale = 10.0 ** rng.uniform(-2, 3)
    c = scale * rng.normal(size=n)
    lower = c - scale * rng.uniform(0.05, 2.0, n)
    upper = c + scale * rng.uniform(0.05, 2.0, n)
    A = rng.normal(size=(p, n))
    b = A @ c + scale * rng.uniform(0.01, 1.0, p)
    theta_hat = c + 3.0 * scale * rng.normal(size=n)
    return theta_hat, P, lower, upper, A, b, scale


def _quadprog(theta_hat, P, lower, upper, A, b):
    H = np.linalg.inv(P)
    H = 0.5 * (H + H.T)
    n = len(theta_hat)
    C = np.vstack([np.eye(n), -np.eye(n), -A]).T  # quadprog: Cᵀ x ≥ b
    rhs = np.concatenate([lower, -upper, -b])
    return quadprog.solve_qp(H, H @ theta_hat, C, rhs, 0)[0]


def _daqp(theta_hat, P, lower, upper, A, b):
    H = np.linalg.inv(P)
    H = np.ascontiguousarray(0.5 * (H + H.T))
    f = -H @ theta_hat
    # first n bounds are simple bounds, then general rows
    A_gen = np.ascontiguousarray(A, dtype=float).reshape(-1, len(theta_hat))
    bu = np.concatenate([upper, b])
    bl = np.concatenate([lower, np.full(len(b), -1e30)])
    x, _, exitflag, _ = daqp.solve(H, f, A_gen, bu, bl, np.zeros(len(bu), dtype=np.int32),
                                   primal_tol=1e-12, dual_tol=1e-14)
    assert exitflag == 1
    return np.asarray(x)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), p=st.integers(1, 2))
def test_projection_matches_quadprog_and_daqp(seed, p):
    """n = 3 (the LuGre case): random SPD P (condition ≤ 1e4), boxes, inequalities."""
    rng = np.random.default_rng(seed)
    theta_hat, P, lower, upper, A, b, scale = _random_problem(rng, 3, p)
    ours = np.asarray(project(theta_hat, P, lower, upper, A, b))
    reference = _quadprog(theta_hat, P, lower, upper, A, b)
    size = max(scale, np.abs(reference).max())
    np.testing.assert_allclose(ours, reference, rtol=0, atol=1e-8 * size)
    np.testing.assert_allclose(ours, _daqp(theta_hat, P, lower, upper, A, b), rtol=0, atol=1e-7 * size)
    assert np.all(ours >= lower) and np.all(ours <= upper)  # the box holds exactly


@pytest.mark.parametrize("n", [1, 2])
def test_other_sizes_match_quadprog(n):
    rng = np.random.default_rng(100 + n)
    for _ in range(100):
        theta_hat, P, lower, upper, A, b, scale = _random_problem(rng, n, 1)
        ours = np.asarray(project(theta_hat, P, lower, upper, A, b))
        reference = _quadprog(theta_hat, P, lower, upper, A, b)
        np.testing.assert_allclose(ours, reference, rtol=0, atol=1e-8 * max(scale, np.abs(reference).max()))


def test_many_random_cases_to_1e_8():
    """1000 seeded cases, n = 3, one or two inequalities, condition number up to 1e6."""
    rng = np.random.default_rng(2024)
    worst = 0.0
    for _ in range(1000):
        theta_hat, P, lower, upper, A, b, scale = _random_problem(rng, 3, int(rng.integers(1, 3)), cond_exp=6.0)
        ours = np.asarray(project(theta_hat, P, lower, upper, A, b))
        reference = _quadprog(theta_hat, P, lower, upper, A, b)
        worst = max(worst, np.abs(ours - reference).max() / max(scale, np.abs(reference).max()))
    assert worst < 1e-8


def test_degenerate_constraints_redundant_rows_through_a_vertex():
    """Extra inequalities that duplicate box faces and pass through the same vertex."""
    P = np.array([[2.0, 0.9, 0.1], [0.9, 1.0, 0.3], [0.1, 0.3, 0.5]])
    lower, upper = np.zeros(3), np.ones(3)
    A = np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [2.0, 1.0, 1.0]])
    b = np.array([1.0, 2.0, 4.0])  # all active at (1, 1, 1)
    for theta_hat in ([3.0, 2.0, 5.0], [1.5, 1.2, 0.5], [-1.0, 3.0, 3.0]):
        ours = np.asarray(project(np.array(theta_hat), P, lower, upper, A, b))
        np.testing.assert_allclose(ours, _quadprog(np.array(theta_hat), P, lower, upper, A, b), atol=1e-10)


def test_interior_point_is_unchanged_and_infinite_bounds_work():
    P = np.diag([1.0, 4.0])
    inside = np.array([0.3, -0.2])
    np.testing.assert_array_equal(project(inside, P, [-1.0, -1.0], [1.0, 1.0]), inside)
    # one-sided box: θ1 ≥ 0 only
    out = np.asarray(project(np.array([-2.0, 5.0]), P, [0.0, -np.inf], [np.inf, np.inf]))
    np.testing.assert_allclose(out, [0.0, 5.0], atol=1e-14)
    # correlated metric moves the free coordinate: θ2 = θ̂2 − P21/P11 (θ̂1 − 0)
    Pc = np.array([[1.0, 0.5], [0.5, 2.0]])
    out = np.asarray(project(np.array([-2.0, 5.0]), Pc, [0.0, -np.inf], [np.inf, np.inf]))
    np.testing.assert_allclose(out, [0.0, 5.0 + 0.5 * 2.0], atol=1e-12)


def test_euclidean_clip_is_the_seed_projection():
    theta = np.array([-1.0, 0.5, 3.0])
    np.testing.assert_array_equal(qp.clip_to_box(theta, 0.0, 1.0), np.clip(theta, 0.0, 1.0))


N_RUN = 600
_run = jax.jit(qp.run)


def test_constrained_rls_step_equals_rls_then_quadprog_and_never_violates_bounds():
    """Reference: the RLS recursion written out in numpy, each step followed by quadprog."""
    rng = np.random.default_rng(9)
    theta_true = np.array([1.5, -0.5, 0.8])  # outside the constraints in two coordinates
    Phi = rng.normal(size=(N_RUN, 3))
    Y = Phi @ theta_true + 0.3 * rng.normal(size=N_RUN)
    lower, upper = np.zeros(3), np.ones(3)
    A, b = np.array([[1.0, 1.0, 1.0]]), np.array([1.6])
    lam = 0.99
    params = qp.ConstrainedRLSParams.box(lower, upper, A, b, forgetting=lam)
    _, hist = _run(params, qp.init(params, np.full(3, 0.2), 10.0), Phi, Y)
    thetas = np.asarray(hist.theta)
    theta, P = np.full(3, 0.2), 10.0 * np.eye(3)
    for k in range(N_RUN):
        gain = P @ Phi[k] / (lam + Phi[k] @ P @ Phi[k])
        unconstrained = theta + gain * (Y[k] - Phi[k] @ theta)
        P = (P - np.outer(gain, Phi[k] @ P)) / lam  # the projection does not touch P
        theta = _quadprog(unconstrained, P, lower, upper, A, b)
        np.testing.assert_allclose(thetas[k], theta, atol=1e-9)
    assert np.all(thetas >= lower) and np.all(thetas <= upper)
    assert np.all(thetas @ A[0] <= b[0] + 1e-12)


@settings(max_examples=12, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), lam=st.sampled_from([1.0, 0.99, 0.9]),
       projection=st.sampled_from(["weighted", "euclidean"]))
def test_bounds_never_violated_in_long_runs(seed, lam, projection):
    rng = np.random.default_rng(seed)
    Phi = rng.normal(size=(N_RUN, 3)) * 10.0 ** rng.uniform(-2, 2, 3)
    Y = Phi @ (5.0 * rng.normal(size=3)) + rng.normal(size=N_RUN) * 10.0 ** rng.uniform(-3, 1)
    lower = -rng.uniform(0.1, 1.0, 3)
    upper = rng.uniform(0.1, 1.0, 3)
    A = rng.normal(size=(1, 3))
    b = np.abs(A).sum(axis=1) * 0.05  # the origin (inside the box) satisfies A θ ≤ b
    params = qp.ConstrainedRLSParams.box(lower, upper, A, b, projection=projection, forgetting=lam, trace_cap=1e6)
    _, hist = _run(params, qp.init(params, np.zeros(3), 100.0), Phi, Y)
    thetas = np.asarray(hist.theta)
    assert np.all(np.isfinite(thetas))
    assert np.all(thetas >= lower) and np.all(thetas <= upper)
    if projection == "weighted":
        assert np.all(thetas @ A[0] <= b[0] + 1e-9)


def test_wrapper_and_validation():
    crls = qp.ConstrainedRLS(2, theta0=[5.0, 5.0], P0=1.0, lower=[0.0, 0.0], upper=[1.0, 2.0])
    np.testing.assert_array_equal(crls.theta, [1.0, 2.0])  # θ̂(0) projected
    crls.update([1.0, 0.0], 10.0)
    assert 0.0 <= crls.theta[0] <= 1.0 and 0.0 <= crls.theta[1] <= 2.0
    with pytest.raises(ParameterError, match="lower ≤ upper"):
        qp.ConstrainedRLSParams.box([1.0, 0.0], [0.0, 1.0])
    with pytest.raises(ParameterError, match="projection"):
        qp.ConstrainedRLSParams.box([0.0], [1.0], projection="l1")
    with pytest.raises(ParameterError, match="A must be"):
        qp.ConstrainedRLSParams.box([0.0, 0.0], [1.0, 1.0], A=[[1.0, 1.0, 1.0]], b=[1.0])
    with pytest.raises(ParameterError, match="MAX_CANDIDATE_SETS"):
        qp.project(np.zeros(12), np.eye(12), -np.ones(12), np.ones(12), np.ones((10, 12)), np.ones(10))


def test_vmap_batch_mixes_feasible_and_infeasible_members_like_quadprog():
    """Under vmap the projection enumerates only when some member is infeasible (one
    unbatched cond, not a select of both branches): every member still equals quadprog
    and the unbatched projection."""
    rng = np.random.default_rng(7)
    problems = [_random_problem(rng, 3, 1) for _ in range(6)]
    # members 0, 2, 4 on (round-off near) their feasible set: quadprog's projection
    for i in (0, 2, 4):
        theta_hat, P, lower, upper, A, b, scale = problems[i]
        problems[i] = (_quadprog(theta_hat, P, lower, upper, A, b), P, lower, upper, A, b, scale)
    stacked = [np.stack([p[j] for p in problems]) for j in range(6)]
    batched = np.asarray(jax.jit(jax.vmap(qp.project))(*stacked))
    for i, (theta_hat, P, lower, upper, A, b, scale) in enumerate(problems):
        reference = _quadprog(theta_hat, P, lower, upper, A, b)
        np.testing.assert_allclose(batched[i], reference, rtol=0, atol=1e-8 * max(scale, np.abs(reference).max()))
        single = np.asarray(project(theta_hat, P, lower, upper, A, b))
        np.testing.assert_allclose(batched[i], single, rtol=0, atol=1e-12 * max(scale, np.abs(single).max()))
    # the batched program keeps a cond (not only a select): the enumeration is skippable
    jaxpr = str(jax.make_jaxpr(jax.vmap(qp.project))(*stacked))
    assert " cond[" in jaxpr


def test_derivatives_through_the_projection_forward_reverse_and_batched():
    """Identity metric, unit box: dθ̃/dθ̂ is 1 on free coordinates and 0 on clipped ones
    (the derivative of the clip), by jacfwd, grad and a vmap of grad."""
    def f(t):
        return qp.project(t, np.eye(2), np.zeros(2), np.ones(2))

    np.testing.assert_array_equal(np.asarray(jax.jacfwd(f)(np.array([0.5, 2.0]))), [[1.0, 0.0], [0.0, 0.0]])
    np.testing.assert_array_equal(np.asarray(jax.grad(lambda t: f(t).sum())(np.array([0.5, 2.0]))), [1.0, 0.0])
    grads = jax.vmap(jax.grad(lambda t: f(t).sum()))(np.array([[0.5, 2.0], [0.2, 0.3], [-1.0, 0.7]]))
    np.testing.assert_array_equal(np.asarray(grads), [[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])


@pytest.mark.parametrize("k", [1, 2, 3, 4, 6, 7])
def test_solve_small_equals_lapack_on_spd_systems(k):
    """The unrolled LDLᵀ (k ≤ 6) and the LU fallback (k = 7) against NumPy's LAPACK
    solve, on stacks of SPD systems with condition numbers up to 1e8."""
    rng = np.random.default_rng(k)
    Q = np.linalg.qr(rng.normal(size=(20, k, k)))[0]
    eigenvalues = 10.0 ** rng.uniform(-4, 4, size=(20, k))
    M = np.einsum("cij,cj,ckj->cik", Q, eigenvalues, Q)
    r = rng.normal(size=(20, k))
    expected = np.linalg.solve(M, r[..., None])[..., 0]
    got = np.asarray(qp.solve_small(M, r))
    # backward-stable solves agree to cond·ε relative to the solution's size
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e8 * 1e-15 * np.abs(expected).max())


def test_solve_small_singular_system_gives_non_finite():
    M = np.array([[[1.0, 1.0], [1.0, 1.0]]])  # two identical active rows
    assert not np.all(np.isfinite(np.asarray(qp.solve_small(M, np.array([[1.0, 2.0]])))))


def test_single_constraint_stage_accepts_only_kkt_points():
    """The first stage (one constraint held) answers an edge case and hands a corner
    case to the full enumeration; both, batched or not, equal quadprog."""
    lower, upper, P = np.zeros(3), np.ones(3), np.diag([1.0, 4.0, 0.25])
    edge = np.array([0.5, 0.5, 1.5])  # only θ3 ≤ 1 active
    corner = np.array([2.0, 2.0, 0.5])  # θ1 ≤ 1 and θ2 ≤ 1 active
    G = np.vstack([np.eye(3), -np.eye(3)])
    h = np.concatenate([upper, -lower])
    _, found_edge = qp._one_constraint_projection(edge, P, G, h, lower, upper)
    _, found_corner = qp._one_constraint_projection(corner, P, G, h, lower, upper)
    assert bool(found_edge) and not bool(found_corner)
    points = np.stack([edge, corner, np.array([0.2, 0.3, 0.4])])
    batched = np.asarray(jax.vmap(lambda t: project(t, P, lower, upper))(points))
    for theta_hat, got in zip(points, batched):
        reference = _quadprog(theta_hat, P, lower, upper, np.zeros((0, 3)), np.zeros(0))
        np.testing.assert_allclose(got, reference, rtol=0, atol=1e-12)
        np.testing.assert_allclose(np.asarray(project(theta_hat, P, lower, upper)), reference, rtol=0, atol=1e-12)


def test_an_active_bound_holds_exactly():
    """A bound held as an equality puts its parameter exactly on the bound (the
    least-squares fits report m = 0, not round-off)."""
    P = np.array([[2.0, 0.7, 0.1], [0.7, 1.3, 0.2], [0.1, 0.2, 0.9]]) * 1e-3
    lower, upper = np.array([0.0, 0.1, -1.0]), np.array([1.0, 0.7, 1.0])
    out = np.asarray(project(np.array([-0.3137, 0.4, 0.2]), P, lower, upper))
    assert out[0] == 0.0  # was 1.6e-17 when the bound was only met to round-off
    rng = np.random.default_rng(0)
    for _ in range(200):  # every component within 1e-12 of a bound is on it
        out = np.asarray(project(rng.uniform(-1.0, 2.0, 3), P, lower, upper))
        near = (np.abs(out - lower) < 1e-12) | (np.abs(out - upper) < 1e-12)
        assert np.all((out == lower) | (out == upper) | ~near)
