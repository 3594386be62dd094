"""Actuator and specimen parameter errors on the fast side's parameters
(hybrid.fast_side.parameter_errors).

* the stiffness-like fields of each model are the ones the model's own docs call
  stiffnesses (the fields' units, read independently from the model modules' docs);
* the actuator's discretisation rebuilt inside ``jax.vmap`` (JAX's ``expm``) equals the
  one SciPy's ``expm`` gives for the changed actuator, factor by factor;
* the loop gain g = K_p k_v K_q / A scales with the K_q factor (closed form);
* factors of 1 leave every leaf as it is.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.hybrid.fast_side import actuator as act
from rths_ident.hybrid.fast_side import parameter_errors as pe
from rths_ident.hybrid.fast_side.fast_chunk import fast_params
from rths_ident.models.lugre import LuGreParams
from rths_ident.models.registry import MODELS
from rths_ident.scenarios import lugre_frame as lugre


@pytest.mark.parametrize("model, fields", [("lugre", ("sigma0", "sigma3")), ("boucwen", ("k",)),
                                           ("degrading-boucwen", ("k_e", "k_h")), ("gap-boucwen", ("k", "k_gap")),
                                           ("spring-boucwen", ("k", "k3")), ("linear", ("k",))])
def test_stiffness_fields_are_the_models_stiffnesses(model, fields):
    assert pe.stiffness_fields(MODELS[model].example) == fields


def test_parameters_that_are_no_dataclass_have_no_stiffness_fields():
    assert pe.stiffness_fields(object()) == ()


def test_scaled_specimen_scales_stiffnesses_only():
    specimen = LuGreParams(sigma0=100.0, sigma1=2.0, sigma2=3.0, sigma3=5.0, Fc=7.0)
    scaled = pe.scaled_specimen(specimen, 1.5)
    assert (scaled.sigma0, scaled.sigma3) == (150.0, 7.5)
    assert (scaled.sigma1, scaled.sigma2, scaled.Fc) == (2.0, 3.0, 7.0)


def test_the_discretisation_rebuilt_inside_vmap_equals_scipys():
    side = lugre.build(lugre.LugreFrameConfig(duration=0.5)).fast_side
    fp = fast_params(side)
    factors = jnp.asarray([0.5, 1.0, 2.5])

    def rebuilt(factor):
        return pe.with_parameter_errors(side, fp, "valve_flow_gain", factor, 1.0)["actuator_discretisation"]

    batch = jax.vmap(rebuilt)(factors)
    h = 1.0 / (side.fast_rate * side.actuator.substeps)
    for i, factor in enumerate(np.asarray(factors)):
        actuator = pe.scaled_actuator(side.actuator, "valve_flow_gain", float(factor))
        assert actuator.loop_gain() == pytest.approx(float(factor) * side.actuator.loop_gain(), rel=1e-12)
        reference = act.discretise_concrete(actuator, h)
        for got, expected in zip(batch, reference):
            np.testing.assert_allclose(np.asarray(got)[i], np.asarray(expected), rtol=1e-9, atol=1e-12)


def test_factors_of_one_leave_the_parameters_as_they_are():
    side = lugre.build(lugre.LugreFrameConfig(duration=0.5)).fast_side
    fp = fast_params(side)
    same = pe.with_parameter_errors(side, fp, "bulk_modulus", 1.0, 1.0, traced=False)
    for got, expected in zip(jax.tree_util.tree_leaves(same), jax.tree_util.tree_leaves(fp)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(expected))


def test_an_unknown_actuator_field_is_one_clear_error():
    with pytest.raises(ParameterError, match=r"^actuator_field = 'stroke_limit': expected one of valve_flow_gain"):
        pe.check_actuator_field("stroke_limit")
