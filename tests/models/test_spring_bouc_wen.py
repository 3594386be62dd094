"""Bouc–Wen–Baber–Noori ∥ a cubic elastic spring: the closed form of monotonic loading
without degradation and pinch (n = 1), the spring part on a cyclic history, a softening
spring (k₃ < 0) turning the envelope down, and the range checks."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from _models_helpers import random_cyclic_history

from rths_ident.errors import ParameterError
from rths_ident.models import PinchingBoucWen, PinchingBoucWenParams, SpringBoucWen
from rths_ident.models.registry import MODELS

EXAMPLE = MODELS["spring-boucwen"].example


def pinching_part(params) -> PinchingBoucWenParams:
    return PinchingBoucWenParams(**{f.name: getattr(params, f.name) for f in dataclasses.fields(PinchingBoucWenParams)})


@pytest.mark.parametrize("k3", [1.8e8, -1.0e8])
def test_monotonic_loading_equals_the_closed_form(k3):
    """n = 1, no degradation or pinch, from rest to 3 cm:
    F = α k x + (1 − α) k (A/(β+γ))(1 − e^{−(β+γ)x}) + k₃ x³."""
    p = dataclasses.replace(EXAMPLE, n=1.0, delta_nu=0.0, delta_eta=0.0, delta_A=0.0, zeta_s=0.0, substeps=64, k3=k3)
    x = np.linspace(0.0, 0.03, 901)[1:]
    total = p.beta + p.gamma
    expected = p.alpha * p.k * x + (1 - p.alpha) * p.k * p.A / total * (1 - np.exp(-total * x)) + k3 * x**3
    force = SpringBoucWen(p).force_history(x)
    assert np.max(np.abs(force - expected)) < 1e-4 * np.max(np.abs(expected))
    if k3 < 0:  # a softening spring: the envelope peaks and turns down
        assert np.argmax(force) < x.size - 10


def test_the_model_is_the_pinching_model_plus_the_spring():
    """Cyclic history with every mechanism on: F − F_BWBN = k₃ x³ at every sample, and
    k₃ = 0 is the pinching model exactly."""
    x = random_cyclic_history(6, 800, 0.03)
    hysteretic = PinchingBoucWen(pinching_part(EXAMPLE)).force_history(x)
    np.testing.assert_allclose(SpringBoucWen(EXAMPLE).force_history(x) - hysteretic, EXAMPLE.k3 * x**3,
                               rtol=1e-10, atol=1e-6)
    np.testing.assert_array_equal(SpringBoucWen(dataclasses.replace(EXAMPLE, k3=0.0)).force_history(x), hysteretic)


@pytest.mark.parametrize("changes, match", [({"k": -1.0}, r"\.k\b"), ({"gamma": -700.0}, "beta \\+ gamma > 0")])
def test_invalid_parameters_raise(changes, match):
    with pytest.raises(ParameterError, match=match):
        dataclasses.replace(EXAMPLE, **changes)
