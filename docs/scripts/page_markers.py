"""The one way the docs scripts write a generated table into its page: between
``<!-- NAME:begin -->`` and ``<!-- NAME:end -->``."""

from __future__ import annotations


def replace_between_markers(text: str, name: str, table: str) -> str:
    """``text`` with what lies between ``<!-- NAME:begin -->`` and ``<!-- NAME:end -->``
    replaced by ``table`` (one line break either side); a page without exactly one pair,
    in order, is a ValueError naming the markers."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        raise ValueError(f"the page needs exactly one {begin} before one {end}")
    head, rest = text.split(begin)
    _, tail = rest.split(end)
    return f"{head}{begin}\n{table}\n{end}{tail}"
