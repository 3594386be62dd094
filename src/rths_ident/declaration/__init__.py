"""Declaring a test once: the fields of a test file and reading, checking and writing
test files (TOML). The kinds of test and their fields are registered in
:mod:`rths_ident.scenarios`; this package knows none of them."""

from rths_ident.declaration.fields import MISSING, DeclarationError, Field, Where, plain_value
from rths_ident.declaration.toml_files import (
    Override,
    TestFile,
    parse_override,
    parse_test_text,
    read_test_file,
    render_test_file,
    resolve_values,
)

__all__ = ["MISSING", "DeclarationError", "Field", "Where", "plain_value", "Override", "TestFile", "parse_override",
           "parse_test_text", "read_test_file", "render_test_file", "resolve_values"]
