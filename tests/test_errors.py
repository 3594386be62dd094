"""DataFileError and UnknownDatasetError messages."""

from __future__ import annotations

from rths_ident.errors import DataFileError, UnknownDatasetError


def test_data_file_error_names_file_column_and_line():
    error = DataFileError("/tmp/log.csv", "value is NaN", column="force", line=12)
    assert str(error) == "/tmp/log.csv, column 'force', line 12: value is NaN"
    assert isinstance(error, ValueError)
    assert (error.source, error.column, error.line, error.row, error.reason) == (
        "/tmp/log.csv", "force", 12, None, "value is NaN")


def test_data_file_error_with_row_and_without_place():
    assert str(DataFileError("a.npz", "bad", column="t", row=3)) == "a.npz, column 't', row 3: bad"
    assert str(DataFileError("a.npz", "cannot read")) == "a.npz: cannot read"


def test_unknown_dataset_error_lists_names():
    error = UnknownDatasetError("x", ["a", "b"], "ground motion")
    assert str(error) == "unknown ground motion dataset 'x'; valid names: a, b"
    assert error.valid_names == ["a", "b"] and isinstance(error, ValueError)
