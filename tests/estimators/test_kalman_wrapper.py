"""Machinery shared by the Kalman-filter wrappers: flat storage and plain-Python user
functions called back from compiled code (HostFunction)."""

from functools import partial

import numpy as np
import pytest
from filterpy.kalman import unscented_transform as filterpy_ut

import jax
import jax.numpy as jnp

import rths_ident  # noqa: F401  (float64)
from rths_ident.estimators.kalman_wrapper import FlatLayout, HostFunction, host_view, typed_args


def numpy_only_step(x, dt, u=0.0):
    """Code that cannot be traced: in-place assignment and a Python branch on values."""
    assert isinstance(x, np.ndarray) and isinstance(dt, np.floating)
    out = np.array(x, dtype=float)
    out[0] += dt * x[1]
    out[1] += dt * (u - x[0]) if x[0] > 0 else dt * u
    return out


@pytest.fixture
def crossings(monkeypatch):
    """Counts how often compiled code calls back into Python."""
    count = []
    real = jax.pure_callback

    def counting(callback, *args, **kwargs):
        def counted(*a):
            count.append(1)
            return callback(*a)

        return real(counted, *args, **kwargs)

    monkeypatch.setattr(jax, "pure_callback", counting)
    return count


def test_vmapped_host_function_is_one_crossing_per_batch(crossings):
    fx = HostFunction(numpy_only_step, "fx", 1, (2,))
    sigmas = np.array([[1.0, 0.5], [-0.3, 0.2], [0.7, -1.0], [0.0, 0.0], [2.0, 3.0]])
    run = jax.jit(lambda s, dt, u: jax.vmap(lambda row: fx(row, dt, u=u))(s))
    out = run(sigmas, 0.1, 0.25)
    expected = np.stack([numpy_only_step(row, np.float64(0.1), u=np.float64(0.25)) for row in sigmas])
    np.testing.assert_array_equal(np.asarray(out), expected)
    assert len(crossings) == 1  # five points, one call back into Python


def test_nested_batches_and_broadcast_shapes():
    def residual(a, b):
        d = np.subtract(a, b)
        d[0] = (d[0] + np.pi) % (2 * np.pi) - np.pi
        return d

    res = HostFunction(residual, "residual_x", 1, "broadcast")
    a = np.random.default_rng(0).normal(size=(3, 4, 2)) * 4.0
    b = np.array([3.0, 1.0])
    out = jax.jit(jax.vmap(jax.vmap(lambda row: res(row, b))))(a)
    expected = np.stack([[residual(row, b) for row in block] for block in a])
    np.testing.assert_allclose(np.asarray(out), expected, rtol=0, atol=1e-15)


def test_transform_gets_the_users_own_python_functions():
    """A custom UT receives the plain residual function, not the compiled wrapper."""
    seen = []

    def residual(a, b):
        seen.append(type(a))
        return np.subtract(a, b)

    ut = HostFunction(filterpy_ut, "UT", 2, "transform")
    res = HostFunction(residual, "residual_x", 1, "broadcast")
    sigmas = np.random.default_rng(1).normal(size=(5, 2))
    Wm = np.array([0.2, 0.3, 0.1, 0.25, 0.15])
    Wc = Wm + np.array([0.5, 0, 0, 0, 0])
    noise = np.diag([0.1, 0.2])
    mean, cov = jax.jit(lambda s: ut(s, jnp.asarray(Wm), jnp.asarray(Wc), jnp.asarray(noise), None, res))(sigmas)
    ref_mean, ref_cov = filterpy_ut(sigmas, Wm, Wc, noise, None, residual)
    np.testing.assert_allclose(np.asarray(mean), ref_mean, rtol=1e-15)
    np.testing.assert_allclose(np.asarray(cov), ref_cov, rtol=1e-15)
    assert seen and all(t is np.ndarray for t in seen)
    assert host_view(res) is residual and host_view(jnp.subtract) is np.subtract and host_view(None) is None


def test_equal_wrappers_share_one_compiled_kernel():
    @partial(jax.jit, static_argnames="fn")
    def apply(x, fn):
        return fn(x) * 2.0

    apply(jnp.ones(2), fn=HostFunction(np.cumsum, "hx", 1, (2,)))
    out = apply(jnp.array([1.0, 2.0]), fn=HostFunction(np.cumsum, "hx", 1, (2,)))
    np.testing.assert_array_equal(np.asarray(out), [2.0, 6.0])
    assert apply._cache_size() == 1
    assert HostFunction(np.cumsum, "hx", 1, (2,)) != HostFunction(np.cumsum, "hx", 1, (3,))
    with pytest.raises(TypeError, match="fx must be callable"):
        HostFunction(3.0, "fx", 1, (2,))


def test_flat_layout_round_trip_and_typed_args():
    layout = FlatLayout((("x", (2,)), ("P", (2, 2)), ("ll", ())))
    assert layout.size == 7
    flat = np.zeros(layout.size)
    layout.write(flat, "P", [[1.0, 2.0], [3.0, 4.0]])
    layout.write(flat, "ll", -1.5)
    np.testing.assert_array_equal(flat, [0, 0, 1, 2, 3, 4, -1.5])
    parts = layout.unpack(jnp.asarray(flat))
    np.testing.assert_array_equal(np.asarray(layout.pack_jax(parts)), flat)
    assert parts["P"].shape == (2, 2) and float(layout.read(flat, "ll")) == -1.5
    args = typed_args({"u": 0.5, "k": 3, "v": np.float32(1.0)})
    assert type(args["u"]) is np.float64 and args["k"] == 3 and type(args["v"]) is np.float32
