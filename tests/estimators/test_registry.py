"""The online identifiers by name (estimators.registry): each builds for its models and
runs the protocol; a wrong pairing is named before anything runs."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.estimators.registry import IDENTIFIERS
from rths_ident.models import BilinearKinematic, BilinearParams, ModifiedLuGre
from rths_ident.protocols import IdentifierInputs


@pytest.mark.parametrize("name, model, guess, fields, options", [
    ("ukf", BilinearKinematic, BilinearParams(k=1000.0, fy=10.0, b=0.05), ("k",),
     {"force_noise_std": 0.01, "parameter_std": 0.3}),
    ("rls", ModifiedLuGre, ModifiedLuGre.params_from_physical(k=1.34e6, Fy=2.24e4, alpha=0.96, m=19.3, zeta=0.01,
                                                               xi=0.02), ("sigma0", "Fc", "sigma3"), {}),
    ("none", BilinearKinematic, BilinearParams(k=1000.0, fy=10.0, b=0.05), (), {}),
])
def test_every_identifier_runs_the_protocol(name, model, guess, fields, options):
    identifier = IDENTIFIERS[name].build(model, guess, fields, **options)
    assert tuple(identifier.param_names) == tuple(fields)
    state = identifier.init(identifier.params)
    step = jax.jit(lambda s, x: identifier.step(identifier.params, s, IdentifierInputs(x, 0.0, 0.0), 1e-3)[0])
    for x in np.linspace(0.0, 1e-4, 5):
        state = step(state, x)
    estimate = identifier.estimate(identifier.params, state)
    assert np.shape(estimate.theta) == (len(fields),) and np.all(np.isfinite(estimate.theta))


def test_rls_identifies_the_lugre_columns_three_fields_only():
    guess = ModifiedLuGre.params_from_physical(k=1.34e6, Fy=2.24e4, alpha=0.96, m=19.3, zeta=0.01, xi=0.02)
    with pytest.raises(ParameterError, match="identifier rls identifies sigma0, Fc, sigma3"):
        IDENTIFIERS["rls"].build(ModifiedLuGre, guess, ("sigma0",))
    assert IDENTIFIERS["rls"].models == ("lugre",)
    with pytest.raises(ParameterError, match="unknown identifier 'kalman': expected one of ukf | rls | none"):
        IDENTIFIERS["kalman"]


def test_a_test_file_pairs_an_identifier_with_its_models():
    from rths_ident import HybridTest

    with pytest.raises(ParameterError, match="applies to lugre"):
        HybridTest("shear-frame", identifier={"kind": "rls", "fields": ["k", "fy"]})
