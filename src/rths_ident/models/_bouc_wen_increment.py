"""Backward-Euler update of a Bouc–Wen type hysteretic variable over a displacement
increment, shared by :mod:`bouc_wen` and :mod:`degrading_bouc_wen`.

The rate-independent law (standard Wen signs)::

    dz/dx = A − |z|^n (γ + β sgn(Δx · z))

is integrated over an increment h = Δx by the implicit (backward-Euler) equation

    g(z) = z − z0 − Δx · (A − |z|^n (γ + β sgn(Δx z))) = 0,

the same equation OpenSees ``BoucWenMaterial::setTrialStrain`` solves (with its
deltaA = deltaNu = deltaEta = 0). Writing w = s z with s = sgn(Δx) turns it into
w − w0 − h F(w) = 0 with h = |Δx| ≥ 0 and F(w) = A − |w|^n (γ + β sgn w).

Robust solution (needed for n up to ~40 and large increments, where plain Newton from a
poor start overshoots into |z|^n ≫ 1):

* softening loading branch (β + γ > 0): a bracket [lo, hi] that provably contains the
  root, from F being bounded between min(F(w0), 0) and max(F(w0), A) along the path and
  from the ultimate value w_u = (A/(β+γ))^{1/n} that the loading branch never crosses;
  Newton iterations kept inside the bracket, falling back to bisection;
* hardening loading branch (β + γ ≤ 0, with β ≥ 0; e.g. the benchmark of Noël &
  Schoukens, whose loops stiffen): F(w) ≥ A everywhere and F is convex, so g is concave
  and increasing up to its root; Newton iterations from a point below the root (the
  larger of w0 + hA and the linearly implicit predictor) rise monotonically to it. When
  g stops increasing before a root (hF' ≥ 1: the increment is too large for a
  hysteretic variable that grows without bound, n > 1 blows up at a finite
  displacement) the update returns NaN, which a caller sees rather than a wrong number;
* either way the iterations run with ``lax.while_loop`` on gradient-stopped inputs to a
  tight tolerance, and one final Newton step on the *differentiable* residual gives
  exact first derivatives by the implicit-function theorem (dw/dθ = −g_θ/g_w), so
  ``jax.grad``, ``jax.jacfwd`` and ``jax.vmap`` work through the update.

Requirements on the parameters (checked by the params containers): A > 0, β ≥ 0, n ≥ 1.
Then the root is unique whenever g is monotone, and the bracket always holds one.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

_MAX_ITERATIONS = 60
# Iterations stop when the Newton correction is below this fraction of max(|z0|, z_u);
# the final differentiable Newton step then squares the remaining error.
_RELATIVE_TOLERANCE = 1e-10


def _rate(w, A, c_plus, c_minus, n):
    """F(w) = A − |w|^n ψ(w) and dF/dw (for h ≥ 0, w = s z), ψ = c₊ on the branch
    moving away from z = 0 (w ≥ 0) and c₋ on the branch moving towards it (w < 0):
    c₊ = β + γ, c₋ = γ − β for Bouc–Wen.

    |w|^{n−1} is computed once as exp((n−1) log|w|) and is 0 at w = 0 (n ≥ 1), with
    finite derivatives there.
    """
    psi = jnp.where(w >= 0.0, c_plus, c_minus)
    abs_w = jnp.abs(w)
    positive = abs_w > 0.0
    log_abs_w = jnp.log(jnp.where(positive, abs_w, 1.0))
    power_n_minus_1 = jnp.where(positive, jnp.exp((n - 1.0) * log_abs_w), 0.0)
    power_n = power_n_minus_1 * abs_w
    rate = A - power_n * psi
    d_rate = -n * power_n_minus_1 * jnp.sign(w) * psi
    return rate, d_rate


def _residual(w, w0, h, A, c_plus, c_minus, n):
    rate, d_rate = _rate(w, A, c_plus, c_minus, n)
    return w - w0 - h * rate, 1.0 - h * d_rate


def ultimate_value(A, beta, gamma, n):
    """z_u = (A/(β+γ))^{1/n}: the bound of |z| on the loading branch; ∞ when β + γ ≤ 0
    (a hardening loading branch: z grows without bound)."""
    return _loading_limit(A, beta + gamma, n)


def _loading_limit(A, c_plus, n):
    """(A/c₊)^{1/n}, ∞ when c₊ ≤ 0."""
    softening = c_plus > 0.0
    return jnp.where(softening, (A / jnp.where(softening, c_plus, 1.0)) ** (1.0 / n), jnp.inf)


def _bracket_and_start(w0, h, A, c_plus, c_minus, n, w_u):
    """A bracket [lo, hi] holding the root, and a predictor inside it."""
    rate0, d_rate0 = _rate(w0, A, c_plus, c_minus, n)
    # linearly implicit (Rosenbrock–Euler) predictor: one Newton step from w0
    denominator = 1.0 - h * d_rate0
    predictor = w0 + h * rate0 / jnp.where(denominator > 0.0, denominator, 1.0)
    softening = jnp.isfinite(w_u)
    # softening: the root lies between the extremes of F along the path and below w_u
    lo = w0 + h * jnp.minimum(rate0, 0.0)
    hi = w0 + h * jnp.maximum(rate0, A)
    below = w0 <= w_u
    hi = jnp.where(below, jnp.minimum(hi, w_u), hi)
    lo = jnp.where(below, lo, jnp.maximum(lo, w_u))
    # hardening: F ≥ A, so the root is above w0 + hA; no finite upper bound (g concave:
    # Newton from below the root rises to it)
    lo = jnp.where(softening, lo, w0 + h * A)
    hi = jnp.where(softening, hi, jnp.inf)
    return lo, hi, jnp.where(softening, jnp.clip(predictor, lo, hi), jnp.maximum(predictor, lo))


def _solve(w0, h, A, c_plus, c_minus, n, w_u):
    """Root of w − w0 − h F(w) by bracketed Newton (bisection fallback) in a
    ``lax.while_loop``. From the linearly implicit predictor, one Newton iteration
    usually suffices for the small increments of a fast loop."""
    lo, hi, start = _bracket_and_start(w0, h, A, c_plus, c_minus, n, w_u)
    scale = jnp.where(jnp.isfinite(w_u), w_u, jnp.abs(start))
    tolerance = _RELATIVE_TOLERANCE * jnp.maximum(jnp.abs(w0), scale)

    def body(carry):
        it, w, lo, hi, _ = carry
        g, dg = _residual(w, w0, h, A, c_plus, c_minus, n)
        lo = jnp.where(g < 0.0, w, lo)
        hi = jnp.where(g > 0.0, w, hi)
        newton = w - g / jnp.where(dg > 0.0, dg, 1.0)
        inside = (dg > 0.0) & (newton >= lo) & (newton <= hi)
        # no finite bracket (hardening) and g no longer increasing: no root, NaN
        fallback = jnp.where(jnp.isfinite(hi), 0.5 * (lo + hi), jnp.nan)
        w_next = jnp.where(g == 0.0, w, jnp.where(inside, newton, fallback))
        return it + 1, w_next, lo, hi, jnp.abs(w_next - w)

    def unconverged(carry):
        it, _, lo, hi, change = carry
        return (it < _MAX_ITERATIONS) & (change > tolerance) & (hi - lo > tolerance)

    carry = (jnp.zeros((), jnp.int32), start, lo, hi, jnp.full_like(start, jnp.inf))
    return lax.while_loop(unconverged, body, carry)[1]


def backward_euler_increment(z0, dx, s, A, beta, gamma, n):
    """z at the end of a displacement increment ``dx`` from ``z0`` (backward Euler).

    ``s`` = ±1 is the direction of motion (sgn dx, or of the velocity when dx = 0; see
    :func:`rths_ident.models.base.direction_of_motion`). All arguments may be traced;
    the result is differentiable in every floating argument.
    """
    return _implicit_increment(z0, dx, s, A, beta + gamma, gamma - beta, n, trapezoidal=False)


def trapezoidal_increment(z0, dx, s, A, beta, gamma, n):
    """z at the end of a displacement increment ``dx`` from ``z0`` by the trapezoidal
    rule, z − z0 − Δx (F(z0) + F(z))/2 = 0: second order in Δx where backward Euler is
    first order (the rule of the dynamic fits, where the error must stay far below the
    measurement noise at a modest number of sub-steps). It is the backward-Euler
    equation from w0 + (h/2)F(w0) with the step h/2, and the bracket of the module
    docstring holds for that start too (it uses only where F is positive, bounded and
    monotone, not that the start lies on the path). Arguments as
    :func:`backward_euler_increment`."""
    return _implicit_increment(z0, dx, s, A, beta + gamma, gamma - beta, n, trapezoidal=True)


def branch_increment(z0, dx, s, A, c_plus, c_minus, n, rule: str = "backward-euler"):
    """The increment of dz/dx = A − |z|^n ψ with ψ = c₊ where z has the sign of the
    motion (moving away from 0) and c₋ where it has the other sign (moving towards 0):
    Bouc–Wen has c₊ = β + γ, c₋ = γ − β; a model whose two sides differ (asymmetric
    strength) passes the coefficients of the side each branch lies on. ``rule``:
    ``backward-euler`` or ``trapezoidal``. Requires c₊ > 0 or c₋ ≤ c₊ ≤ 0 (the
    hardening case of the module docstring)."""
    return _implicit_increment(z0, dx, s, A, c_plus, c_minus, n, trapezoidal=rule == "trapezoidal")


def _implicit_increment(z0, dx, s, A, c_plus, c_minus, n, trapezoidal):
    w0 = s * z0
    h = s * dx  # ≥ 0 (0 when dx == 0)
    w_u = _loading_limit(A, c_plus, n)
    # On the branch opposite to the motion (w < 0) with c₋ > 0 (Bouc–Wen: γ > β), F
    # vanishes at −w_lim = −(A/c₋)^{1/n}; the model never gets there (|z| ≤ z_u < w_lim)
    # unless its parameters are changed mid-run. Keep w0 above it so the bracket holds.
    w_lim = jnp.where(
        c_minus > 0.0, (A / jnp.where(c_minus > 0.0, c_minus, 1.0)) ** (1.0 / n), jnp.inf
    )
    w0 = jnp.where(w0 < -w_lim, -w_lim * (1.0 - 1e-9), w0)
    if trapezoidal:  # the explicit half of the step; then backward Euler over h/2
        w0 = w0 + 0.5 * h * _rate(w0, A, c_plus, c_minus, n)[0]
        h = 0.5 * h

    frozen = [lax.stop_gradient(a) for a in (w0, h, A, c_plus, c_minus, n, w_u)]
    w_solved = lax.stop_gradient(_solve(*frozen))
    # One Newton step on the differentiable residual: exact value (already converged)
    # and exact derivatives by the implicit-function theorem.
    g, dg = _residual(w_solved, w0, h, A, c_plus, c_minus, n)
    w = w_solved - g / dg
    return s * w


def integrate_increment(substep, carry0, substeps):
    """``carry = substep(carry)`` applied ``substeps`` times (static count): a direct
    call for one sub-step, ``lax.fori_loop`` otherwise."""
    if substeps == 1:
        return substep(carry0)
    return lax.fori_loop(0, substeps, lambda _, carry: substep(carry), carry0)


__all__ = ["backward_euler_increment", "trapezoidal_increment", "branch_increment", "integrate_increment",
           "ultimate_value"]
