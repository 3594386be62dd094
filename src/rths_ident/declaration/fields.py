"""The fields of a test file: where each value lives (``section.key``), what it sets,
its unit, its type and its allowed values, and its command-line option.

A :class:`Field` checks one value before anything is built or run: a wrong type, an
unknown choice or a value outside its range is a :class:`DeclarationError` that names
the file, the line, the field, what it got and what it expects.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any, Callable

from rths_ident.errors import ParameterError

__all__ = ["Field", "DeclarationError", "Where", "MISSING", "plain_value"]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


#: a field without a default (the file or the command line must give it)
MISSING: Any = _Missing()


class DeclarationError(ParameterError):
    """A test-file value (or a command-line override of one) that cannot be accepted."""


@dataclasses.dataclass(frozen=True)
class Where:
    """Where a value came from: a file and its line, or a command-line option."""

    source: str  # a file path, or "the command line"
    line: int | None = None
    option: str | None = None  # the option that set it (e.g. "--compensation" or "--set compensation.kind")

    def __str__(self) -> str:
        if self.option is not None:
            return f"{self.option}"
        return f"{self.source}:{self.line}" if self.line is not None else self.source


def plain_value(value: Any) -> str:
    """A value as a test file writes it (TOML literal)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        text = repr(value)
        return text if ("." in text or "e" in text or "inf" in text or "nan" in text) else text + ".0"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(plain_value(v) for v in value) + "]"
    return str(value)


def _whole(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and float(value).is_integer()


def _pairs_text(text: str):
    """``"[[1, 0], [2, 1]]"`` (a command-line value) as a list of lists; the text itself
    when it does not read (the field's error then names it)."""
    import tomllib  # noqa: PLC0415

    try:
        return tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        return text


@dataclasses.dataclass(frozen=True)
class Field:
    """One value of a test file.

    path : ``"section.key"`` in the file (``"compensation.kind"``).
    target : what it sets: a configuration field name, or ``"run:NAME"`` for how the test
        is run (engine, outputs), which is not part of the test's configuration.
    doc : one line for the commented file and ``--help``.
    unit : the SI unit (``"Hz"``, ``"kg"``, ``"m"``…) or ``""``.
    kind : ``float``, ``int``, ``str``, ``bool`` or ``list`` (of ``item``: floats, or
        names from ``choices``).
    item : the type of a list's items (``float``, ``str``, or ``tuple``: pairs of whole
        numbers, ``[[1, 0], [2, 1]]``).
    choices : the allowed names: a tuple, a mapping (e.g. a family's
        :class:`~rths_ident.registry.Registry`), or a callable returning either; None: any.
    open_choices : with ``choices``: other values are allowed too when this predicate
        accepts them (e.g. a shipped record name *or* a file path); ``open_doc`` says
        what they are, for messages.
    low, high : the allowed range (inclusive) of a number.
    optional : ``None`` (TOML: the key left out) is allowed and means "not set".
    option : the command-line option (``"--compensation"``); None: only ``--set``.
    flag : with ``option``: the option takes no value and sets this one (``--no-noise``
        sets ``sensors.noise = false``).
    is_path : a file or folder path; in a test file it is relative to the file's folder
        (on the command line, to the working folder).
    default : used when neither the file nor the command line gives the value; MISSING:
        take the configuration's own default.
    example : an optional field's value that a written test file shows commented out
        (e.g. a compensator gain's default); None: the line is left empty.
    choices_in_file : a written test file's comment lists the allowed names (False for
        ``test.kind``: a file's fields are its kind's, and ``rths-ident run --list`` names
        every kind).
    """

    path: str
    target: str
    doc: str
    unit: str = ""
    kind: type = float
    item: type = float
    choices: Any = None
    open_choices: Callable[[Any], bool] | None = None
    open_doc: str = "a file path"
    low: float | None = None
    high: float | None = None
    optional: bool = False
    option: str | None = None
    flag: Any = None
    is_path: bool = False
    default: Any = MISSING
    example: Any = None
    choices_in_file: bool = True

    @property
    def section(self) -> str:
        return self.path.split(".", 1)[0]

    @property
    def key(self) -> str:
        return self.path.split(".", 1)[1]

    def choice_names(self) -> tuple[str, ...] | None:
        choices = self.choices() if callable(self.choices) else self.choices
        if choices is None:
            return None
        if isinstance(choices, Mapping):
            return tuple(choices)
        return tuple(choices)

    def expected(self) -> str:
        """What the field accepts, as an error message or ``--help`` says it."""
        names = self.choice_names()
        if names is not None:
            text = " | ".join(str(n) for n in names)
            return text + (f" or {self.open_doc}" if self.open_choices is not None else "")
        kind = {float: "a number", int: "a whole number", bool: "true | false", str: "a text",
                list: {float: "a list of numbers", str: "a list of names",
                       tuple: "a list of [i, j] pairs of whole numbers"}[self.item]}[self.kind]
        if self.low is not None and self.high is not None:
            kind += f" in [{self.low:g}, {self.high:g}]"
        elif self.low is not None:
            kind += f" ≥ {self.low:g}"
        elif self.high is not None:
            kind += f" ≤ {self.high:g}"
        return kind + (f" {self.unit}" if self.unit else "")

    def fail(self, value: Any, where: Where | None, reason: str | None = None) -> DeclarationError:
        place = f"{where}: " if where is not None else ""
        got = plain_value(value) if value is not None else "nothing"
        return DeclarationError(f"{place}{self.path} = {got}: expected {reason or self.expected()}")

    def coerce(self, value: Any, where: Where | None = None) -> Any:
        """``value`` checked and converted to the field's type (module doc)."""
        if value is None:
            if self.optional:
                return None
            raise self.fail(value, where)
        if self.kind is bool:
            if isinstance(value, str) and value.lower() in ("true", "false"):
                value = value.lower() == "true"
            if not isinstance(value, bool):
                raise self.fail(value, where)
        elif self.kind is int:
            if isinstance(value, str):
                try:
                    value = int(value)
                except ValueError:
                    raise self.fail(value, where) from None
            if isinstance(value, bool) or not isinstance(value, int):
                if isinstance(value, float) and value.is_integer():
                    value = int(value)
                else:
                    raise self.fail(value, where)
        elif self.kind is float:
            if isinstance(value, str):
                try:
                    value = float(value)
                except ValueError:
                    raise self.fail(value, where) from None
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise self.fail(value, where)
            value = float(value)
            if math.isnan(value):
                raise self.fail(value, where)
        elif self.kind is str:
            if not isinstance(value, str):
                raise self.fail(value, where)
        elif self.kind is list:
            if isinstance(value, str) and self.item is tuple:
                value = _pairs_text(value)
            elif isinstance(value, str):
                value = [v for v in value.replace("[", "").replace("]", "").split(",") if v.strip()]
            if not isinstance(value, (list, tuple)):
                raise self.fail(value, where)
            if self.item is tuple:
                if not all(isinstance(v, (list, tuple)) and len(v) == 2 and all(_whole(x) for x in v) for v in value):
                    raise self.fail(value, where)
                value = [[int(x) for x in v] for v in value]
            elif self.item is str:
                value = [str(v).strip() for v in value]
            else:
                try:
                    value = [float(v) for v in value]
                except (TypeError, ValueError):
                    raise self.fail(value, where) from None
        if self.kind in (int, float):
            if (self.low is not None and value < self.low) or (self.high is not None and value > self.high):
                raise self.fail(value, where)
        names = self.choice_names()
        if names is not None and self.kind is list:
            if any(v not in names for v in value):
                raise self.fail(value, where)
        elif names is not None and value not in names:
            if self.open_choices is None or not self.open_choices(value):
                raise self.fail(value, where)
        return value
