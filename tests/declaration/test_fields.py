"""A Field checks one value: here the list of DOF pairs (``item=tuple``), from a file or the
command line."""

from __future__ import annotations

import pytest

from rths_ident.declaration import Field
from rths_ident.declaration.fields import DeclarationError, plain_value

PAIRS = Field("structure.updated_elements", "updated_elements", "pairs", kind=list, item=tuple)


def test_pairs_from_a_file_or_the_command_line_are_lists_of_two_whole_numbers():
    assert PAIRS.coerce([[1, 0], [2, 1.0]]) == [[1, 0], [2, 1]]
    assert PAIRS.coerce("[[1, 0], [2, 1]]") == [[1, 0], [2, 1]]  # --set structure.updated_elements=[[1, 0], [2, 1]]
    assert PAIRS.coerce([]) == []
    assert plain_value(PAIRS.coerce("[[3, 2]]")) == "[[3, 2]]"  # written back as it reads


@pytest.mark.parametrize("value", [[1, 0], [[1, 0, 2]], [[1.5, 0]], [[True, 0]], "[[1, 0]", [["a", 0]]])
def test_anything_else_is_named_with_what_is_expected(value):
    with pytest.raises(DeclarationError, match=r"structure.updated_elements = .*: expected a list of \[i, j\] pairs of "
                                               "whole numbers"):
        PAIRS.coerce(value)
