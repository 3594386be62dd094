"""Test files: a hybrid test declared in TOML, read with the line of every value, checked
field by field, and written back as a commented file.

A test file has tables (``[record]``, ``[rates]``, ``[compensation]`` …) of ``key = value``
lines; ``[test] kind`` names how the test is assembled (a registered test kind, e.g.
``lugre-frame``), and the kind's fields (:class:`~rths_ident.declaration.fields.Field`)
say what every other key means, its unit and its allowed values. Reading a file checks
everything that can be checked without building anything: unknown tables and keys (named
with the file, the line and the valid keys), types, ranges and choices.

Overrides from the command line (``--set compensation.kind=amb`` or a kind's own options
such as ``--compensation amb``) are checked by the same fields and win over the file.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import tomllib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from rths_ident.declaration.fields import MISSING, DeclarationError, Field, Where, plain_value

__all__ = ["TestFile", "read_test_file", "parse_test_text", "resolve_values", "render_test_file",
           "Override", "parse_override"]

_HEADER = re.compile(r"^\s*\[\s*([A-Za-z0-9_.\-]+)\s*\]\s*(#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_\-]+)\s*=")


@dataclasses.dataclass(frozen=True)
class TestFile:
    """A read test file: its text, its values by ``"section.key"`` and their lines."""

    source: str  # the file's path, or a name for text that has none (a shipped test, a record)
    text: str
    values: dict  # "section.key" -> value (TOML types)
    lines: dict  # "section.key" -> 1-based line; "[section]" -> the table header's line

    #: not a pytest test class (the name starts with "Test")
    __test__ = False

    @property
    def folder(self) -> Path | None:
        """The folder relative paths in the file are read from (None: no file on disk)."""
        path = Path(self.source)
        return path.resolve().parent if path.is_file() else None

    @property
    def kind(self) -> str | None:
        return self.values.get("test.kind")

    def where(self, path: str) -> Where:
        return Where(self.source, self.lines.get(path, self.lines.get(f"[{path.split('.')[0]}]")))


def parse_test_text(text: str, source: str = "<test file>") -> TestFile:
    """Read test-file text (module doc); a TOML error names the source and its line."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise DeclarationError(f"{source}: not a valid test file (TOML): {error}") from None
    values: dict = {}
    for section, table in data.items():
        if not isinstance(table, dict):
            raise DeclarationError(f"{source}:{_line_of_key(text, None, section)}: {section} = … must be inside a "
                                   "table such as [test] or [record]")
        for key, value in table.items():
            if isinstance(value, dict):
                raise DeclarationError(f"{source}: [{section}.{key}] — a test file has one level of tables: "
                                       f"write its keys into [{section}]")
            values[f"{section}.{key}"] = value
    return TestFile(source, text, values, _lines(text))


def read_test_file(path: str | Path) -> TestFile:
    """Read the test file at ``path`` (a clear error when it is missing or unreadable)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DeclarationError(f"{path}: no such test file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise DeclarationError(f"{path}: cannot read the test file ({error})") from None
    return parse_test_text(text, str(path))


def _lines(text: str) -> dict:
    lines, section = {}, None
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            section = header.group(1)
            lines.setdefault(f"[{section}]", number)
            continue
        key = _KEY.match(line)
        if key and section is not None:
            lines.setdefault(f"{section}.{key.group(1)}", number)
    return lines


def _line_of_key(text: str, section: str | None, key: str) -> int | None:
    for number, line in enumerate(text.splitlines(), start=1):
        match = _KEY.match(line)
        if match and match.group(1) == key:
            return number
    return None


@dataclasses.dataclass(frozen=True)
class Override:
    """A value given on the command line for the field at ``path``."""

    path: str
    value: Any  # a string from the command line (checked and converted by the field)
    option: str  # how it was given, for messages: "--set rates.fast" or "--fast-rate"


def parse_override(text: str) -> Override:
    """``section.key=value`` (``--set``) → :class:`Override`."""
    path, sep, value = text.partition("=")
    path = path.strip()
    if not sep or "." not in path:
        raise DeclarationError(f"--set {text!r}: expected SECTION.KEY=VALUE, e.g. --set compensation.kind=amb")
    return Override(path, value.strip(), f"--set {path}")


def _relative_path(field: Field, value: str) -> bool:
    """A relative path (not a shipped name) in a field that holds paths."""
    if Path(value).is_absolute():
        return False
    names = field.choice_names()
    return names is None or value not in names


def _suggest(name: str, candidates: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def resolve_values(fields: Sequence[Field], test_file: TestFile | None,
                   overrides: Sequence[Override] = ()) -> tuple[dict, dict]:
    """The checked value of every field that the file or an override gives, by target,
    and where each came from (``{target: Where}``). Unknown tables or keys, in the file
    or in an override, are errors naming the valid ones."""
    by_path = {f.path: f for f in fields}
    sections = list(dict.fromkeys(f.section for f in fields))
    values, origin = {}, {}

    def field_of(path: str, where: Where) -> Field:
        if path in by_path:
            return by_path[path]
        section, _, key = path.partition(".")
        if section not in sections:
            raise DeclarationError(f"{where}: unknown table [{section}]{_suggest(section, sections)}; "
                                   f"a test of this kind has {', '.join(f'[{s}]' for s in sections)}")
        keys = [f.key for f in fields if f.section == section]
        raise DeclarationError(f"{where}: unknown field {path}{_suggest(key, keys)}; [{section}] has "
                               f"{', '.join(keys)}")

    if test_file is not None:
        folder = test_file.folder
        for path, value in test_file.values.items():
            where = test_file.where(path)
            field = field_of(path, where)
            value = field.coerce(value, where)
            if field.is_path and folder is not None and isinstance(value, str) and _relative_path(field, value):
                value = str(folder / value)
            values[field.target] = value
            origin[field.target] = where
    for override in overrides:
        where = Where("the command line", option=override.option)
        field = field_of(override.path, where)
        value = override.value
        if isinstance(value, str) and value.lower() in ("none", "") and field.optional:
            value = None
        values[field.target] = field.coerce(value, where)
        origin[field.target] = where
    return values, origin


def render_test_file(fields: Sequence[Field], values: dict, header: str = "") -> str:
    """A commented test file of ``fields`` with ``values`` (by target): every field with
    its doc, unit and allowed values; an unset optional field is written commented out."""
    out = [f"# {line}" if line else "#" for line in header.strip().splitlines()] if header else []
    sections = list(dict.fromkeys(field.section for field in fields))  # a table once, fields grouped
    ordered = [field for section in sections for field in fields if field.section == section]
    section = None
    for field in ordered:
        if field.section != section:
            section = field.section
            out += ["", f"[{section}]"]
        value = values.get(field.target, field.default)
        note = field.doc + (f" [{field.unit}]" if field.unit else "")
        if field.choices_in_file and field.choice_names() is not None:
            note += f" — {field.expected()}"
        out.append(f"# {note}")
        if value is None or value is MISSING:
            out.append(f"# {field.key} = " + (plain_value(field.example) if field.example is not None else ""))
        else:
            out.append(f"{field.key} = {plain_value(value)}")
    return "\n".join(out).lstrip("\n") + "\n"
