"""Values of command-line options that several commands read the same way."""

from __future__ import annotations

from rths_ident.errors import ParameterError

__all__ = ["fixed_values"]


def fixed_values(text: str, option: str = "--fix") -> dict[str, float]:
    """``name=value,...`` → {name: float} (e.g. ``--fix n=1,m=2``)."""
    out = {}
    for item in (part.strip() for part in text.split(",") if part.strip()):
        name, sep, value = item.partition("=")
        try:
            if not sep:
                raise ValueError
            out[name.strip()] = float(value)
        except ValueError:
            raise ParameterError(f"{option} {text!r}: give name=value pairs separated by commas, e.g. 'n=1'") from None
    return out
