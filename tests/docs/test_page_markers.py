"""docs/scripts/page_markers.py: the one way a docs script writes its tables into a page."""

import pytest
from page_markers import print_or_write_tables, replace_between_markers


def test_replace_between_markers():
    page = "intro\n<!-- t:begin -->\nold\nrows\n<!-- t:end -->\nafter\n"
    assert replace_between_markers(page, "t", "| new |") == "intro\n<!-- t:begin -->\n| new |\n<!-- t:end -->\nafter\n"
    with pytest.raises(ValueError, match="t:begin"):
        replace_between_markers("no markers", "t", "x")
    with pytest.raises(ValueError):
        replace_between_markers("<!-- t:end --> <!-- t:begin -->", "t", "x")


def test_print_or_write_tables_writes_each_table_between_its_own_markers(tmp_path, capsys):
    page = tmp_path / "page.md"
    page.write_text("a\n<!-- one:begin -->\nx\n<!-- one:end -->\nb\n<!-- two:begin -->\n<!-- two:end -->\n")
    print_or_write_tables({"two": "| 2 |", "one": "| 1 |"}, page)
    assert page.read_text() == "a\n<!-- one:begin -->\n| 1 |\n<!-- one:end -->\nb\n<!-- two:begin -->\n| 2 |\n<!-- two:end -->\n"
    print_or_write_tables({"one": "| 1 |"}, None)
    assert capsys.readouterr().out.endswith("| 1 |\n\n")
