"""``MODEL:field=value,...`` → (model class, Params): registered names, SI values, one
clear error line for each mistake."""

import pytest

from rths_ident.errors import ParameterError
from rths_ident.models import MODELS, BoucWen, BoucWenParams, LinearElement, parse_specimen


def test_every_registered_model_parses_from_its_example():
    for name, entry in MODELS.items():
        fields = ",".join(f"{f}={value!r}" for f, value in vars(entry.example).items()
                          if isinstance(value, (int, float)))
        model, params = parse_specimen(f"{name}:{fields}")
        assert model is entry.model and params == entry.example


def test_values_are_si_numbers_and_int_fields_stay_ints():
    model, params = parse_specimen(" BoucWen : k=2e6, alpha=0.1, A=1, beta=60, gamma=40, n=1, substeps=2")
    assert model is BoucWen
    assert params == BoucWenParams(k=2.0e6, alpha=0.1, A=1.0, beta=60.0, gamma=40.0, n=1.0, substeps=2)
    assert parse_specimen("linear:k=1e6") == (LinearElement, LinearElement.Params(k=1.0e6))


@pytest.mark.parametrize("text, message", [
    ("steel02:k=1", "specimen: unknown model 'steel02': expected one of lugre | boucwen"),
    ("linear:k", "specimen linear: 'k' is not field=value; fields of linear: m, c, k"),
    ("linear:K=1", "specimen linear: unknown field 'K'"),
    ("boucwen:k=2e6,alpha=0.1,A=1,beta=60,gamma=40,n=1,substeps=2.5", "substeps='2.5' is not an integer"),
    ("bilinear:k=1e6", "specimen bilinear: missing fy, b"),
    ("bilinear:k=1e6,fy=1e4,b=1.5", "BilinearParams.b = 1.5 is outside the allowed range"),
])
def test_each_mistake_is_one_clear_error(text, message):
    with pytest.raises(ParameterError, match=None) as error:
        parse_specimen(text)
    assert message in str(error.value) and "\n" not in str(error.value)
