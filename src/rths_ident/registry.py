"""Names → objects, one registry per family, living with its family.

A name a user writes (in a test file, on the command line, in a script) becomes an object
in exactly one place: the registry of its family (models in :mod:`rths_ident.models`,
compensators in :mod:`rths_ident.hybrid.fast_side.compensation`, rate transitions,
integrators, sites, identifiers, …). Everything else asks the registry, so a new member
of a family is its own file plus one line in the family's registry, and every command,
test file and check sees it.

An unknown name is a :class:`~rths_ident.errors.ParameterError` naming the family and
the valid choices::

    >>> COLOURS = Registry("colour", {"red": 1, "blue": 2})
    >>> COLOURS["red"]
    1
    >>> COLOURS["green"]
    Traceback (most recent call last):
    ...
    rths_ident.errors.ParameterError: unknown colour 'green': expected one of red | blue
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Generic, TypeVar

from rths_ident.errors import ParameterError

__all__ = ["Registry"]

T = TypeVar("T")


class Registry(Mapping[str, T], Generic[T]):
    """An ordered, read-mostly mapping of names to the members of one ``family``.

    ``registry[name]`` raises :class:`ParameterError` for an unknown name (not
    ``KeyError``), listing the names in registration order; :meth:`register` adds a
    member and refuses a name that is taken.
    """

    def __init__(self, family: str, entries: Mapping[str, T] | None = None):
        self.family = family
        self._entries: dict[str, T] = {}
        for name, entry in (entries or {}).items():
            self.register(name, entry)

    def register(self, name: str, entry: T) -> T:
        """Add ``entry`` under ``name`` (returns it, so it can decorate a definition)."""
        if not isinstance(name, str) or not name:
            raise ParameterError(f"a {self.family} name must be a non-empty string; got {name!r}")
        if name in self._entries:
            raise ParameterError(f"{self.family} {name!r} is registered already")
        self._entries[name] = entry
        return entry

    def __getitem__(self, name: str) -> T:
        try:
            return self._entries[name]
        except (KeyError, TypeError):
            raise ParameterError(f"unknown {self.family} {name!r}: expected one of {self.choices()}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def names(self) -> tuple[str, ...]:
        """The registered names, in registration order."""
        return tuple(self._entries)

    def choices(self, separator: str = " | ") -> str:
        """The names as an error message or a help text lists them."""
        return separator.join(self._entries)

    def name_of(self, entry: T) -> str:
        """The name ``entry`` is registered under (identity, then equality)."""
        for name, candidate in self._entries.items():
            if candidate is entry:
                return name
        for name, candidate in self._entries.items():
            if candidate == entry:
                return name
        raise ParameterError(f"{entry!r} is not a registered {self.family}")

    def __repr__(self) -> str:
        return f"Registry({self.family!r}: {self.choices(', ')})"
