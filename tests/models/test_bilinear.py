"""Bilinear kinematic hardening: OpenSeesPy ``Steel01`` (a1..a4 = 0) as second
implementation (force and tangent), the monotonic closed form, gradients, vmap and
parameter errors."""

from __future__ import annotations

import numpy as np
import pytest
from _models_helpers import check_gradients, check_vmap, opensees_uniaxial, random_cyclic_history

from rths_ident.models import BilinearKinematic, BilinearParams
from rths_ident.errors import ParameterError

K, FY, B = 1.34e6, 2.24e4, 0.04


@pytest.mark.opensees
@pytest.mark.parametrize("seed, b", [(50, 0.04), (51, 0.0), (52, 0.3)])
def test_equals_opensees_steel01(seed, b):
    """Random cyclic history plus a random walk with increments up to several x_y."""
    rng = np.random.default_rng(seed)
    x_y = FY / K
    x = np.concatenate([
        random_cyclic_history(seed, 1500, 6 * x_y),
        np.cumsum(rng.normal(scale=1.5 * x_y, size=500)),
    ])
    force, stiffness = opensees_uniaxial(["Steel01", 1, FY, K, b], x, tangent=True)
    model = BilinearKinematic(k=K, fy=FY, b=b)
    assert np.max(np.abs(model.force_history(x) - force)) <= 1e-8 * np.max(np.abs(force))
    np.testing.assert_allclose(model.tangent_history(x), stiffness, rtol=1e-12)


def test_monotonic_push_closed_form():
    x_y = FY / K
    x = np.linspace(0.0, 10 * x_y, 137)[1:]
    expected = np.where(x <= x_y, K * x, FY + B * K * (x - x_y))
    np.testing.assert_allclose(BilinearKinematic(k=K, fy=FY, b=B).force_history(x), expected, rtol=1e-12)


def test_elastic_range_width_is_two_fy():
    """Kinematic hardening (Bauschinger): after yielding at +F, reverse yield starts at
    F − 2 f_y, whatever the hardening reached."""
    x_y = FY / K
    peak = 8 * x_y
    up = np.linspace(0.0, peak, 300)[1:]
    down = np.linspace(peak, -peak, 2000)[1:]
    model = BilinearKinematic(k=K, fy=FY, b=B)
    force = model.force_history(np.concatenate([up, down]))
    f_peak = force[up.size - 1]
    tangent = model.tangent_history(np.concatenate([up, down]))[up.size:]
    first_reverse_yield = np.argmax(tangent < K)
    assert force[up.size + first_reverse_yield] == pytest.approx(f_peak - 2 * FY, abs=K * (down[0] - down[1]))


def test_gradients_match_finite_differences():
    x = random_cyclic_history(53, 300, 5 * FY / K)
    check_gradients(BilinearKinematic, BilinearParams(k=K, fy=FY, b=B), x, np.zeros_like(x), 0.0, ["k", "fy", "b"])


def test_vmap_over_parameters_equals_loop():
    x = random_cyclic_history(54, 200, 5 * FY / K)
    batch = [BilinearParams(k=k, fy=fy, b=b) for k, fy, b in ((K, FY, B), (1e6, 1e4, 0.0), (2e6, 5e4, 0.2))]
    check_vmap(BilinearKinematic, batch, x, np.zeros_like(x), 0.0)


def test_invalid_parameters_name_the_field():
    for name, value in (("k", -1.0), ("fy", 0.0), ("b", 1.0), ("b", -0.1)):
        with pytest.raises(ParameterError, match=name):
            BilinearParams(**{**dict(k=K, fy=FY, b=B), name: value})
