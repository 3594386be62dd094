"""Linear m–c–k element: closed forms for harmonic motion, the LIP regressor, the inertia
force, gradients, vmap and parameter errors."""

from __future__ import annotations

import numpy as np
import pytest
from _models_helpers import check_gradients, check_vmap

from rths_ident.models import ElementInputs, LinearElement, LinearParams
from rths_ident.errors import ParameterError

M, C, K = 100.0, 2e4, 1e6


def harmonic(n=801, amplitude=0.01, frequency=1.0):
    t = np.linspace(0.0, 2.0, n)
    w = 2 * np.pi * frequency
    return t, amplitude * np.sin(w * t), amplitude * w * np.cos(w * t), -amplitude * w**2 * np.sin(w * t)


def test_restoring_force_and_loop_area():
    t, x, v, _ = harmonic()
    element = LinearElement(m=M, c=C, k=K)
    force = element.force_history(x, velocity=v)
    np.testing.assert_allclose(force, C * v + K * x, rtol=1e-12, atol=1e-12 * np.abs(force).max())
    # finite-difference velocity (second order): close to the exact one
    approx = element.force_history(x, dt=t[1] - t[0])
    assert np.max(np.abs(approx - force)) < 1e-3 * np.max(np.abs(force))
    # energy dissipated per cycle: π c ω A²
    area = np.trapezoid(force, x) / 2  # two cycles
    assert area == pytest.approx(np.pi * C * 2 * np.pi * 0.01**2, rel=1e-4)


def test_inertia_and_total_force():
    t, x, v, a = harmonic()
    element = LinearElement(m=M, c=C, k=K)
    assert float(LinearElement.inertia_force(element.params, 3.0)) == 3.0 * M
    total = element.total_force_history(x, dt=t[1] - t[0])
    exact = M * a + C * v + K * x
    assert np.max(np.abs(total - exact)[2:-2]) < 1e-3 * np.max(np.abs(exact))


def test_regressor_is_linear_in_parameters():
    rng = np.random.default_rng(60)
    p = LinearParams(m=M, c=C, k=K)
    theta = LinearElement.theta_from_params(p)
    for x, v, a in rng.normal(size=(10, 3)):
        phi = LinearElement.regressor(x, v, a)
        _, restoring = LinearElement.step(p, LinearElement.init(p), ElementInputs(x, v), 0.01)
        assert float(theta @ phi) == pytest.approx(float(restoring + LinearElement.inertia_force(p, a)), rel=1e-13)
    assert float(LinearElement.tangent(p, LinearElement.init(p), ElementInputs(0.3, 1.0), 0.01)) == K


def test_gradients_and_vmap():
    _, x, v, _ = harmonic(n=200)
    check_gradients(LinearElement, LinearParams(m=M, c=C, k=K), x, v, 0.01, ["c", "k"])
    batch = [LinearParams(m=M, c=c, k=k) for c, k in ((C, K), (0.0, 2e6), (5e4, 1e5))]
    check_vmap(LinearElement, batch, x, v, 0.01)


def test_invalid_parameters_and_missing_dt():
    for name in ("m", "c", "k"):
        with pytest.raises(ParameterError, match=name):
            LinearParams(**{**dict(m=M, c=C, k=K), name: -1.0})
    with pytest.raises(ValueError, match="dt"):
        LinearElement(m=M, c=C, k=K).force_history(np.zeros(3))
    np.testing.assert_allclose(LinearElement(k=K).force_history(np.array([0.1, 0.2])), [0.1 * K, 0.2 * K])
