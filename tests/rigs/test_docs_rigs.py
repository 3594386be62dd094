"""docs/rigs.md runs and is true to the code: its Python blocks execute, its protocol table
has exactly the protocol module's lines, and every example line decodes (checksums)."""

import re
from pathlib import Path

from rths_ident.rigs import serial_protocol as proto

DOC = Path(__file__).resolve().parents[2] / "docs" / "rigs.md"


def test_python_blocks_run():
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) >= 2
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), {})


def test_protocol_table_matches_the_codec():
    rows = re.findall(r"^\| (host|device) \| `([^`]+)` \| `([^`]+)` \|", DOC.read_text(), flags=re.M)
    table = [(sender, line.split()[0], tuple(f.strip("<>") for f in line.split()[1:])) for sender, line, _ in rows]
    assert table == list(proto.LINES)
    for sender, line, example in rows:
        message = proto.decode(example.encode("ascii") + b"\n")
        assert message.kind == line.split()[0]
        assert len(message.fields) >= len(line.split()) - 1


def test_error_codes_listed():
    text = " ".join(DOC.read_text().split())
    for code, meaning in proto.ERROR_CODES.items():
        assert f"{code} {meaning}" in text
