"""The line-aware numeric table parser."""

from __future__ import annotations

import numpy as np
import pytest

from rths_ident.errors import DataFileError
from rths_ident.datasets._textio import detect_delimiter, parse_numeric_table


@pytest.mark.parametrize("header,expected", [("a,b", ","), ("a;b", ";"), ("a\tb", "\t"), ("a  b", "whitespace")])
def test_delimiter_detection(header, expected):
    assert detect_delimiter(header) == expected


def test_values_and_line_numbers():
    table = parse_numeric_table("# c\nx, y\n\n1, 2.5\n# c\n-3e-2 ,4\n", source="f.csv")
    assert table.names == ("x", "y") and table.header_line == 2
    np.testing.assert_array_equal(table.values, [[1.0, 2.5], [-0.03, 4.0]])
    np.testing.assert_array_equal(table.line_numbers, [4, 6])
    assert table.line_of_row(1) == 6


def test_headerless_with_names():
    table = parse_numeric_table("1 2\n3 4", source="f", names=("a", "b"), header=False)
    np.testing.assert_array_equal(table.column("b"), [2.0, 4.0])


@pytest.mark.parametrize(
    "text,match,line",
    [
        ("a,a\n1,2\n", "repeats", 1),
        ("a,,b\n1,2,3\n", "empty column name", 1),
        ("a,b\n1,\n", "empty value", 2),
        ("a,b\n1,2\n1,2,3\n", "expected 2 values", 3),
    ],
)
def test_errors_name_the_line(text, match, line):
    with pytest.raises(DataFileError, match=match) as info:
        parse_numeric_table(text, source="f.csv")
    assert info.value.line == line


def test_no_data():
    with pytest.raises(DataFileError, match="no data lines"):
        parse_numeric_table("a,b\n\n", source="f.csv")
