"""An argument parser whose errors lead with the one line that matters: what was wrong,
the option it probably meant, and where the options are listed — not the whole usage."""

from __future__ import annotations

import argparse
import difflib
import re
import sys

from rths_ident.tcp_ports import PORT_MAX, is_port

__all__ = ["ArgumentParser", "port_number"]


class ArgumentParser(argparse.ArgumentParser):
    """:class:`argparse.ArgumentParser` with one-line errors (module doc)."""

    def error(self, message: str):  # noqa: D401 - argparse's hook
        hint = ""
        unknown = re.match(r"unrecognized arguments: (\S+)", message)
        if unknown:
            options = [s for action in self._actions for s in action.option_strings]
            close = difflib.get_close_matches(unknown.group(1).split("=")[0], options, n=1, cutoff=0.6)
            if close:
                hint = f" (did you mean {close[0]}?)"
        print(f"{self.prog}: error: {message}{hint}\n  (the options: {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)


def port_number(text: str) -> int:
    """``--port``'s type: a TCP port, 0 (the system picks a free one) … 65535."""
    port = int(text) if text.isascii() and text.isdigit() else -1
    if not is_port(port, free_port_allowed=True):
        raise argparse.ArgumentTypeError(f"expected 0…{PORT_MAX} (0: a free port), got {text!r}")
    return port
