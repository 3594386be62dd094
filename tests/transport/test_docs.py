"""docs/transport.md must not drift from the code: its tables and example bytes are parsed."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import numpy as np

from rths_ident.transport import seed000
from rths_ident.transport.framed import HEADER_LAYOUT, HEADER_SIZE, MAGIC, VERSION, MessageType, encode_message

DOC = Path(__file__).resolve().parents[2] / "docs" / "transport.md"


def section(title: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"\n{title}\n")
    rest = text[start + len(title) + 2:]
    level = title.split(" ")[0]
    end = re.search(rf"^#{{1,{len(level)}}} ", rest, flags=re.MULTILINE)
    return rest[: end.start()] if end else rest


def table_rows(text: str) -> list[list[str]]:
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in text.splitlines()
        if line.strip().startswith("|")
    ]
    return [row for row in rows[1:] if not set("".join(row)) <= set("-: ")]


def hex_block(text: str) -> bytes:
    block = re.search(r"```text\n(.*?)```", text, flags=re.DOTALL).group(1)
    return bytes.fromhex(block.replace("\n", " "))


def test_header_table_matches_code():
    rows = table_rows(section("### Header"))
    assert [(row[2], int(row[0]), int(row[1])) for row in rows] == [
        (name, offset, size) for name, offset, size, _ in HEADER_LAYOUT
    ]
    assert sum(int(row[1]) for row in rows) == HEADER_SIZE
    assert MAGIC.decode("ascii") in rows[0][3] and MAGIC.hex(" ") in rows[0][3]
    assert f"currently {VERSION}" in rows[1][3]


def test_message_type_table_matches_code():
    rows = table_rows(section("### Message types"))
    assert {int(row[0]): row[1] for row in rows} == {t.value: t.name for t in MessageType}


def test_framed_example_bytes():
    documented = hex_block(section("### Example"))
    # independent: the header as the table reads, with struct
    expected = b"RTHS" + struct.pack(">BBII", 1, 2, 7, 16) + struct.pack(">2d", 0.0125, -3.5)
    assert documented == expected
    assert encode_message(MessageType.TARGET, 7, np.array([0.0125, -3.5])) == documented


def test_seed000_example_bytes():
    documented = hex_block(section("## Seed 000 mode"))
    assert documented == struct.pack(">d", 0.0125) + struct.pack(">d", -3.5)
    assert seed000.encode([0.0125, -3.5]) == documented


def test_client_role_server_script_is_the_tested_one():
    import importlib.util
    import sys

    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here))
    spec = importlib.util.spec_from_file_location("_client_test", here / "test_openfresco_client.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = section("## OpenFresco protocol (client role)")
    scripts = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert scripts[0].strip() == module.SERVER_SCRIPT.strip()


def test_serve_site_command_lines_parse():
    from rths_ident.cli import build_parser

    text = section("## `rths-ident serve site`")
    block = re.search(r"```console\n(.*?)```", text, flags=re.DOTALL).group(1)
    lines = [line.split() for line in block.splitlines() if line.startswith("rths-ident ")]
    assert len(lines) == 3
    from rths_ident.models import parse_specimen

    for words in lines:
        args = build_parser().parse_args(words[1:])
        assert args.command == "serve" and args.serve_action == "site"
        parse_specimen(args.specimen)  # every documented specimen is valid
