"""Bouc–Wen–Baber–Noori ∥ a gap spring: the closed form of monotonic loading without
degradation and pinch (n = 1), the gap spring against OpenSeesPy's ElasticMultiLinear,
the hysteretic part equal to ``PinchingBoucWen`` on a cyclic history, and the range checks."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from _models_helpers import opensees_uniaxial, random_cyclic_history

from rths_ident.errors import ParameterError
from rths_ident.models import GapBoucWen, GapBoucWenParams, PinchingBoucWen, PinchingBoucWenParams
from rths_ident.models.gap_bouc_wen import gap_force, gap_spring_points
from rths_ident.models.registry import MODELS

EXAMPLE = MODELS["gap-boucwen"].example


def pinching_part(params: GapBoucWenParams) -> PinchingBoucWenParams:
    return PinchingBoucWenParams(**{f.name: getattr(params, f.name) for f in dataclasses.fields(PinchingBoucWenParams)})


def test_monotonic_loading_equals_the_closed_form():
    """n = 1, no degradation or pinch, from rest to 3 cm past a 2 cm gap:
    F = α k x + (1 − α) k (A/(β+γ))(1 − e^{−(β+γ)x}) + k_g max(x − g, 0)."""
    p = dataclasses.replace(EXAMPLE, n=1.0, delta_nu=0.0, delta_eta=0.0, delta_A=0.0, zeta_s=0.0, substeps=64)
    x = np.linspace(0.0, 0.03, 901)[1:]
    total = p.beta + p.gamma
    expected = (p.alpha * p.k * x + (1 - p.alpha) * p.k * p.A / total * (1 - np.exp(-total * x))
                + p.k_gap * np.maximum(x - p.gap, 0.0))
    force = GapBoucWen(p).force_history(x)
    assert np.max(np.abs(force - expected)) < 1e-4 * np.max(np.abs(expected))
    # the spring is what stiffens the tip: past the gap the tangent jumps by k_g
    slope = np.gradient(force, x)
    assert slope[-5] - slope[np.searchsorted(x, 0.019)] == pytest.approx(p.k_gap, rel=0.05)


def test_gap_spring_equals_opensees_elastic_multilinear():
    """F_gap on a cyclic history through ±3 cm against OpenSees ``ElasticMultiLinear``
    with the points of ``gap_spring_points`` (OpenSeesPy drives it by strain)."""
    x = random_cyclic_history(11, 500, 0.03)
    strains, stresses = gap_spring_points(EXAMPLE.k_gap, EXAMPLE.gap, reach=0.05)
    reference = opensees_uniaxial(["ElasticMultiLinear", 1, 0.0, "-strain", *strains, "-stress", *stresses], x)
    np.testing.assert_allclose(np.asarray(gap_force(EXAMPLE, x)), reference, rtol=1e-12, atol=1e-6)
    assert np.max(np.abs(reference)) > 0.2 * EXAMPLE.k_gap * 0.01  # the gap closes on this history


def test_the_model_is_the_pinching_model_plus_the_gap_spring():
    """Cyclic history with every mechanism on: F − F_BWBN = k_g sgn(x) max(|x| − g, 0)
    (closed form) at every sample, and k_g = 0 is the pinching model exactly."""
    x = random_cyclic_history(4, 800, 0.03)
    hysteretic = PinchingBoucWen(pinching_part(EXAMPLE)).force_history(x)
    spring = EXAMPLE.k_gap * np.sign(x) * np.maximum(np.abs(x) - EXAMPLE.gap, 0.0)
    np.testing.assert_allclose(GapBoucWen(EXAMPLE).force_history(x) - hysteretic, spring, rtol=1e-10, atol=1e-6)
    assert np.max(np.abs(spring)) > 0.3 * np.max(np.abs(hysteretic))  # the gap matters here
    np.testing.assert_array_equal(GapBoucWen(dataclasses.replace(EXAMPLE, k_gap=0.0)).force_history(x), hysteretic)


@pytest.mark.parametrize("changes, match", [({"k_gap": -1.0}, "k_gap"), ({"gap": -0.01}, r"\.gap\b"),
                                             ({"gamma": -700.0}, "beta \\+ gamma > 0")])
def test_invalid_parameters_raise(changes, match):
    with pytest.raises(ParameterError, match=match):
        dataclasses.replace(EXAMPLE, **changes)
