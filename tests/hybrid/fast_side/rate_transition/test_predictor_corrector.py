import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rths_ident  # noqa: F401
from rths_ident.errors import ParameterError
from rths_ident.hybrid.fast_side.rate_transition import TransitionInputs
from rths_ident.hybrid.fast_side.rate_transition import predictor_corrector as pc
from rths_ident.hybrid.fast_side.rate_transition.predictor_corrector import (
    PredictorCorrector,
    PredictorCorrectorParams,
    correct_d2,
    predict_p2,
)

SLOW_DT = 0.02  # Δt_n [s]; the step takes it for the common shape and does not use it


def _expected_times(ratio, arrival, threshold=0.6, factor=0.5):
    """Normalised time of each tick, written out tick by tick (independent of the module)."""
    x, increment, times = 0.0, 1.0 / ratio, []
    for tick in range(1, max(arrival, 1)):
        if tick > round(threshold * ratio):
            increment *= factor
        x += increment
        times.append(x)
    xi = times[-1] if times else 0.0
    n = ratio - len(times)
    times += [xi + (1 - xi) * k / n for k in range(1, n + 1)]
    return np.array(times)


@pytest.mark.parametrize("continuity", [0, 2])
@pytest.mark.parametrize("arrival", [0, 30, 49, 50, 70])
def test_quadratic_targets_followed_exactly(arrival, continuity):
    """A quadratic target is followed exactly, also with the continuity corrections (the
    predictor and the corrector agree with it to every derivative: nothing to correct)."""
    ratio = 80
    quadratic = lambda s: 0.01 + 0.02 * s - 0.003 * s**2  # noqa: E731  (s in slow steps)
    transition = PredictorCorrector(ratio=ratio, arrival_tick=arrival, continuity=continuity)
    for n in range(6):
        transition.on_slow_sample(quadratic(n), SLOW_DT)
    # the last call delivered u_5: the commands move from u_4 to u_5
    expected = quadratic(4 + _expected_times(ratio, arrival))
    np.testing.assert_allclose(transition.fast_samples(), expected, rtol=0, atol=1e-14)
    assert transition.slowed_down == (arrival >= 50)  # ticks after 0.6·80 = 48 were predicted


def test_continuity_at_the_switch_and_end_on_target():
    rng = np.random.default_rng(5)
    sig1, sig2, sig3, new = rng.standard_normal(4)
    params = PredictorCorrectorParams(ratio=40, arrival_tick=15)
    state = pc.PredictorCorrectorState(targets=jnp.array([sig1, sig2, sig3]), segment_end=jnp.zeros(4))
    state, out = jax.jit(pc.step)(params, state, TransitionInputs(new), SLOW_DT)
    xi = float(out.switch_point)
    assert abs(xi - 14 / 40) < 1e-15
    assert float(predict_p2(sig1, sig2, sig3, 0.0)) == pytest.approx(sig1, abs=1e-15)
    assert float(out.switch_value) == pytest.approx(float(predict_p2(sig1, sig2, sig3, xi)), abs=1e-14)
    # correction through (−1, old sig2), (xi, sigXi), (1, new)
    assert float(correct_d2(new, out.switch_value, sig2, xi, xi)) == pytest.approx(float(out.switch_value), abs=1e-14)
    assert float(correct_d2(new, out.switch_value, sig2, xi, -1.0)) == pytest.approx(sig2, abs=1e-14)
    assert float(out.samples[-1]) == pytest.approx(new, abs=1e-14)
    np.testing.assert_allclose(state.targets, [new, sig1, sig2])


def test_runs_in_scan_like_the_wrapper():
    params = PredictorCorrectorParams(ratio=20, arrival_tick=5)
    slow = jnp.sin(0.4 * jnp.arange(25))
    _, out = jax.lax.scan(lambda s, inputs: pc.step(params, s, inputs, SLOW_DT), pc.init(params),
                          TransitionInputs(slow))
    wrapper = PredictorCorrector(params)
    for k, u in enumerate(np.asarray(slow)):
        wrapper.on_slow_sample(u, SLOW_DT)
        np.testing.assert_allclose(wrapper.fast_samples(), out.samples[k], rtol=0, atol=1e-15)


def test_bad_parameters():
    with pytest.raises(ParameterError, match="arrival_tick"):
        PredictorCorrectorParams(ratio=20, arrival_tick=20)
    with pytest.raises(ParameterError, match="slowdown_threshold"):
        PredictorCorrectorParams(slowdown_threshold=1.2)


def test_arrival_tick_as_an_input_equals_the_static_setting_at_every_tick():
    """A paced loop passes the measured arrival tick as a traced input: one compiled step
    must give, for every tick, what the step built with that static ``arrival_tick``
    gives; from the slow-down threshold (0.6·ratio) on, the step is flagged slowed down."""
    import jax
    import jax.numpy as jnp

    from rths_ident.hybrid.fast_side.rate_transition import predictor_corrector as pc
    from rths_ident.hybrid.fast_side.rate_transition.inputs import TransitionInputs

    ratio = 16
    state = pc.PredictorCorrectorState(targets=jnp.array([0.9, 0.5, 0.2]), segment_end=jnp.zeros(4))
    dynamic = jax.jit(lambda a: pc.step(pc.PredictorCorrectorParams(ratio=ratio), state,
                                        TransitionInputs(jnp.asarray(1.2), a), 0.02)[1])
    for arrival in range(ratio):
        static = pc.step(pc.PredictorCorrectorParams(ratio=ratio, arrival_tick=arrival), state,
                         TransitionInputs(jnp.asarray(1.2)), 0.02)[1]
        got = dynamic(jnp.asarray(arrival))
        # equal to round-off (XLA folds the static tick into other constants)
        np.testing.assert_allclose(np.asarray(got.samples), np.asarray(static.samples), rtol=1e-14, atol=0)
        assert bool(got.slowed_down) == bool(static.slowed_down) == (arrival - 1 > int(0.6 * ratio))
        assert float(got.switch_point) == pytest.approx(float(static.switch_point), rel=1e-14, abs=1e-15)


def _piece(x, samples, degree):
    return np.polynomial.Polynomial.fit(x, samples, degree, domain=[0, 1], window=[0, 1])


@pytest.mark.parametrize("order", [1, 2, 3])
@pytest.mark.parametrize("arrival", [0, 30])
def test_continuity_at_the_boundary_and_the_switch(order, arrival):
    """With continuity m the commands and their first m derivatives (numpy fits of the
    samples on either side) agree at every slow-step boundary and at the switch; the
    source's scheme (m = 0) is continuous in value only, its slope jumps."""
    ratio = 80
    rng = np.random.default_rng(7)
    targets = np.cumsum(rng.standard_normal(12)) * 1e-3
    x = np.arange(1, ratio + 1) / ratio  # no slow-down before 0.6·ratio: x is uniform in ticks
    pieces = {}
    for m in (0, order):
        transition = PredictorCorrector(ratio=ratio, arrival_tick=arrival, continuity=m)
        steps = []
        for u in targets:
            transition.on_slow_sample(u, SLOW_DT)
            steps.append(transition.fast_samples())
        pieces[m] = np.array(steps)
    degree = max(2, 2 * order + 1)
    split = max(arrival - 1, 0)  # samples before the switch (tick a − 1 is at x = xi)
    for n in range(4, 10):
        previous, current = pieces[order][n - 1], pieces[order][n]
        end = _piece(x[split:], previous[split:], degree)
        start = _piece(x[:split], current[:split], degree) if split else _piece(x, current, degree)
        corrected = _piece(x[split - 1:], current[split - 1:], degree) if split else None
        for j in range(order + 1):
            scale = max(1e-3, abs(end.deriv(j)(1.0)))
            if split:
                # the switch: prediction up to x = xi, correction from there
                xi = split / ratio
                assert corrected.deriv(j)(xi) == pytest.approx(start.deriv(j)(xi), abs=1e-6 * scale), (n, j)
            # the boundary: the previous step's end (x = 1) and this step's start (x = 0)
            assert start.deriv(j)(0.0) == pytest.approx(end.deriv(j)(1.0), abs=1e-6 * scale), (n, j)
    # the source: the slope jumps at the boundary
    source = pieces[0]
    n = 6
    before = _piece(x, source[n - 1], 2) if not split else _piece(x[split:], source[n - 1][split:], 2)
    after = _piece(x, source[n], 2) if not split else _piece(x[:split], source[n][:split], 2)
    assert abs(after.deriv(1)(0.0) - before.deriv(1)(1.0)) > 1e-5
