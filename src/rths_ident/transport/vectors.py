"""The one check every decoded vector payload passes: finite values only.

A NaN or ±Inf arriving from a peer (a sensor fault, a diverged solver, garbled bytes) is
refused where the vector is decoded, with a :class:`~rths_ident.transport.errors.NonFiniteError`
(a :class:`~rths_ident.transport.errors.ProtocolError`)
that names the field and the first bad index — it never reaches an integrator or an
actuator command.
"""

from __future__ import annotations

import numpy as np

from rths_ident.transport.errors import NonFiniteError, ProtocolError


def require_finite(values: np.ndarray, field: str, error: type[ProtocolError] = NonFiniteError) -> np.ndarray:
    """``values`` unchanged if every element is finite; else ``error`` naming ``field``,
    the first bad index and its value, and how many are bad."""
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise error(
            f"{field}[{int(bad[0])}] is {float(values[bad[0]])!r}: vectors on the wire must be finite "
            f"({bad.size} non-finite value(s))"
        )
    return values
