"""A specimen written as text, ``MODEL:field=value,...`` (SI values), as
``rths-ident serve site --specimen`` takes it: ``boucwen:k=2e6,alpha=0.1,A=1,beta=60,gamma=40,n=1``.

``MODEL`` is a name of :data:`~rths_ident.models.registry.MODELS`; the fields are those of
its ``Params`` (their units are in its docs page). Every mistake is one
:class:`~rths_ident.errors.ParameterError` line that names the model and lists the valid
names: an unknown model or field, a value that is not a number, a missing required
field; the Params' own range checks name the field and its range.
"""

from __future__ import annotations

import dataclasses

from rths_ident.errors import ParameterError
from rths_ident.models.registry import MODELS

__all__ = ["parse_specimen"]


def parse_specimen(text: str, source: str = "specimen"):
    """``MODEL:field=value,...`` → ``(model class, model.Params)``; ``source`` (e.g. the
    command-line option) leads every error message."""
    name, _, assignments = text.partition(":")
    name = name.strip().lower()
    try:
        model = MODELS[name].model
    except ParameterError as error:
        raise ParameterError(f"{source}: {error}") from None
    fields = {f.name: f for f in dataclasses.fields(model.Params) if f.init}
    valid = ", ".join(fields)
    values = {}
    for item in filter(None, (part.strip() for part in assignments.split(","))):
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep:
            raise ParameterError(f"{source} {name}: {item!r} is not field=value; fields of {name}: {valid}")
        if key not in fields:
            raise ParameterError(f"{source} {name}: unknown field {key!r}; fields of {name}: {valid}")
        default = fields[key].default
        if isinstance(default, str):  # a static choice, e.g. Bouc–Wen rule=trapezoidal
            values[key] = raw.strip()
            continue
        try:
            values[key] = int(raw) if isinstance(default, int) and not isinstance(default, bool) else float(raw)
        except ValueError:
            kind = "an integer" if isinstance(default, int) else "a number"
            raise ParameterError(f"{source} {name}: {key}={raw.strip()!r} is not {kind} (SI units)") from None
    missing = [f.name for f in fields.values()
               if f.name not in values and f.default is dataclasses.MISSING
               and f.default_factory is dataclasses.MISSING]
    if missing:
        raise ParameterError(f"{source} {name}: missing {', '.join(missing)}; fields of {name}: {valid}")
    return model, model.Params(**values)
