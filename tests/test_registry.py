"""The one registry shape every family uses (rths_ident.registry)."""

from __future__ import annotations

import doctest

import pytest

import rths_ident.registry
from rths_ident.errors import ParameterError
from rths_ident.registry import Registry


def test_the_module_examples_hold():
    assert doctest.testmod(rths_ident.registry).failed == 0


def test_an_unknown_name_lists_the_choices_in_registration_order():
    registry = Registry("compensator", {"damb": 1, "amb": 2, "none": None})
    with pytest.raises(ParameterError, match=r"unknown compensator 'dAMB': expected one of damb \| amb \| none"):
        registry["dAMB"]
    assert registry.names() == ("damb", "amb", "none")
    assert registry["none"] is None and "amb" in registry and len(registry) == 3


def test_a_name_is_registered_once_and_entries_name_themselves():
    registry = Registry("model")
    marker = object()
    assert registry.register("lugre", marker) is marker
    with pytest.raises(ParameterError, match="registered already"):
        registry.register("lugre", object())
    assert registry.name_of(marker) == "lugre"
    with pytest.raises(ParameterError, match="not a registered model"):
        registry.name_of(object())
    with pytest.raises(ParameterError, match="non-empty string"):
        registry.register("", object())
