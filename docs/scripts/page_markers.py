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


def print_or_write_tables(tables: dict[str, str], page) -> None:
    """Each ``NAME: table`` of ``tables`` printed (``page`` None) or written between its
    markers in ``page`` (a ``pathlib.Path``), the page read and written once."""
    if page is None:
        for table in tables.values():
            print(table + "\n")
        return
    text = page.read_text()
    for name, table in tables.items():
        text = replace_between_markers(text, name, table)
    page.write_text(text)
    print(f"tables → {page}")


def measure_or_write_page(description: str, measure, page, name: str, table) -> None:
    """The command line of a script whose measurement is slow: ``--out FILE.json`` runs
    ``measure(FILE.json)``; ``--page FILE.json`` writes ``table(rows)`` of that JSON between
    ``page``'s ``NAME`` markers, so the page can be rewritten without measuring again."""
    import argparse
    import json

    parser = argparse.ArgumentParser(description=description)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--out", help="measure and write the rows as JSON")
    group.add_argument("--page", help=f"write {page.name}'s table from a JSON of --out")
    args = parser.parse_args()
    if args.out:
        measure(args.out)
        return
    with open(args.page, encoding="utf-8") as handle:
        rows = json.load(handle)
    page.write_text(replace_between_markers(page.read_text(encoding="utf-8"), name, table(rows)), encoding="utf-8")
    print(f"wrote {page}")
