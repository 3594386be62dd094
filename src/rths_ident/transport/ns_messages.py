"""The numerical-substructure session over the framed protocol: what each message carries.

A *session* is one connection between a :class:`~rths_ident.transport.remote_substructure.RemoteSubstructure`
(the client, the loop's side) and an :class:`~rths_ident.transport.ns_server.NSServer`
(the process that holds the numerical substructure, NS). The framed protocol
(:mod:`~rths_ident.transport.framed`) carries it; this module says what the payloads mean
(byte table and sequence in ``docs/transport.md``, "Processes"):

client → server
    HELLO ``{"protocol": "rths-ns", "version": 1, "role": "ns-client", "setup": {...},
    "run": "<id>"}`` — the setup the server builds its NS from (``dt`` [s],
    ``ground_accel`` [m/s²] from t = 0, ``record_dt`` [s], and what the model needs, e.g.
    a scenario's configuration); ``run`` (optional): the client's run, when one run opens
    several sessions (the test and its comparison runs);
    HELLO ``{"protocol", "version", "role": "ns-client", "run_ended": "<id>"}`` as a
    connection's first message: that run opened its last session (answered with
    SHUTDOWN; a server serving one run, ``serve ns --once``, then stops);
    FEEDBACK ``[f_1 … f_n, ẍ_g]`` — the interface force(s) [N] and the ground
    acceleration at the end of the step [m/s²]; PARAMETERS θ̂; SHUTDOWN (end of session;
    as the FIRST message of a connection: stop the server).
server → client
    HELLO ``{"protocol", "version", "role": "ns-server", "n_interface", "dt",
    "parameter_names", "parameter_units", "model"}`` then TARGET (the initial target);
    per FEEDBACK a TARGET ``[target (n), log values …]``, preceded by a HELLO
    ``{"log": [[name, shape, dtype], …]}`` whenever the log's layout differs from the
    last one announced (so, before the first); per PARAMETERS the same θ̂ back (the
    acknowledgement); SHUTDOWN in answer to SHUTDOWN; ERROR with the exception's text
    when the NS fails (the session ends there).

float64 values travel as big-endian IEEE-754 (exact). The setup is JSON: Python writes a
float as its shortest repr, which reads back to the same float64, so a record sent in the
setup is bit-identical on the server.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rths_ident.transport.errors import ProtocolError

#: the ``protocol`` field of both HELLOs
PROTOCOL = "rths-ns"
#: the session protocol's version (independent of the framing's version byte)
PROTOCOL_VERSION = 1
CLIENT_ROLE = "ns-client"
SERVER_ROLE = "ns-server"
#: log dtypes that travel as float64 and come back exactly (integers up to 2**53)
_LOG_KINDS = "biuf"


def json_ready(value: Any, where: str = "setup") -> Any:
    """``value`` with NumPy arrays and scalars turned into JSON lists and numbers
    (finite floats only: JSON has no NaN/Inf)."""
    if isinstance(value, dict):
        return {str(k): json_ready(v, f"{where}[{k!r}]") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v, where) for v in value]
    if isinstance(value, np.ndarray):
        return json_ready(value.tolist(), where)
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{where}: {value!r} cannot travel in JSON (finite numbers only)")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"{where}: {type(value).__name__} cannot travel in the setup (JSON: numbers, strings, "
                    "lists, dicts, arrays)")


def client_hello(setup: dict, run: str | None = None) -> dict:
    hello = {"protocol": PROTOCOL, "version": PROTOCOL_VERSION, "role": CLIENT_ROLE, "setup": json_ready(setup)}
    if run is not None:
        hello["run"] = str(run)
    return hello


def run_ended_hello(run: str) -> dict:
    """The HELLO that says run ``run`` is over (module doc)."""
    return {"protocol": PROTOCOL, "version": PROTOCOL_VERSION, "role": CLIENT_ROLE, "run_ended": str(run)}


def check_hello(hello: dict, role: str) -> None:
    """Raise :class:`ProtocolError` unless ``hello`` is a HELLO of ``role`` in this protocol."""
    if hello.get("protocol") != PROTOCOL:
        raise ProtocolError(f"HELLO protocol: expected {PROTOCOL!r}, got {hello.get('protocol')!r} — the peer is not "
                            "an rths_ident numerical-substructure peer")
    if hello.get("version") != PROTOCOL_VERSION:
        raise ProtocolError(f"HELLO version: expected {PROTOCOL_VERSION}, got {hello.get('version')!r} "
                            "(unsupported session protocol version)")
    if hello.get("role") != role:
        raise ProtocolError(f"HELLO role: expected {role!r}, got {hello.get('role')!r}")


def setup_from_json(setup: dict) -> dict:
    """The client's setup as the server's model factory receives it: ``ground_accel`` as
    a float64 array, the rest as JSON gave it."""
    if not isinstance(setup, dict):
        raise ProtocolError(f"HELLO setup: expected a JSON object, got {type(setup).__name__}")
    out = dict(setup)
    if out.get("ground_accel") is not None:
        out["ground_accel"] = np.asarray(out["ground_accel"], dtype=np.float64)
    return out


def log_layout(log: dict) -> list:
    """``[[name, shape, dtype], …]`` of a step log (a flat dict of numeric arrays)."""
    if not isinstance(log, dict):
        raise TypeError(f"the NS step log must be a dict of arrays, got {type(log).__name__}")
    layout = []
    for name, value in log.items():
        array = np.asarray(value)
        if array.dtype.kind not in _LOG_KINDS:
            raise TypeError(f"NS step log entry {name!r}: dtype {array.dtype} cannot travel (numeric arrays only; "
                            "a flat dict, no nesting)")
        layout.append([str(name), list(array.shape), array.dtype.str])
    return layout


def flatten_log(log: dict) -> np.ndarray:
    """The log's values, in its own order, as one float64 vector."""
    parts = [np.asarray(v, dtype=np.float64).ravel() for v in log.values()]
    return np.concatenate(parts) if parts else np.zeros(0)


def layout_size(layout: list) -> int:
    return int(sum(math.prod(shape) for _, shape, _ in layout))


def unflatten_log(layout: list, values: np.ndarray) -> dict:
    """Inverse of :func:`flatten_log` for ``layout``."""
    if values.size != layout_size(layout):
        raise ProtocolError(f"TARGET log part: the layout announced {layout_size(layout)} values, "
                            f"{values.size} arrived")
    log, start = {}, 0
    for name, shape, dtype in layout:
        size = math.prod(shape)
        log[name] = values[start:start + size].reshape(shape).astype(np.dtype(dtype))
        start += size
    return log


class LogPacker:
    """The server's side of a step's reply: ``[target (n), log values …]`` as Python
    floats (the payload of :func:`flatten_log` after the target), and the log's layout
    (:func:`log_layout`), worked out again only when the log's names, shapes or dtypes
    change (a log of NumPy arrays; anything else gets the full check every step)."""

    def __init__(self):
        self.layout: list | None = None
        self._signature: tuple | None = None

    def pack(self, target: np.ndarray, log: dict) -> tuple[list, bool]:
        """``(values, changed)``: the reply's numbers and whether the layout differs from
        the last one packed (then :attr:`layout` is the new one, to be announced first)."""
        try:
            signature = tuple((name, value.shape, value.dtype) for name, value in log.items())
        except AttributeError:  # not every value is an array
            signature = None
        changed = signature is None or signature != self._signature
        if changed:
            layout = log_layout(log)
            changed = layout != self.layout
            self.layout, self._signature = layout, signature
        values = target.tolist()
        for value in log.values():
            values += np.ravel(value).tolist()
        return values, changed


def log_plan(layout: list) -> tuple:
    """What :func:`unflatten_log` does for ``layout``, worked out once: per entry its
    name, slice, shape and dtype (None: float64, a view of the values)."""
    plan, start = [], 0
    for name, shape, dtype in layout:
        size = math.prod(shape)
        kind = np.dtype(dtype)
        plan.append((name, start, start + size, tuple(shape), None if kind == np.float64 else kind))
        start += size
    return tuple(plan), start


def unflatten_planned(plan: tuple, values: np.ndarray) -> dict:
    """:func:`unflatten_log` by a :func:`log_plan` (float64 entries are views of ``values``)."""
    entries, size = plan
    if values.size != size:
        raise ProtocolError(f"TARGET log part: the layout announced {size} values, {values.size} arrived")
    log = {}
    for name, start, stop, shape, kind in entries:
        entry = values[start:stop].reshape(shape)
        log[name] = entry if kind is None else entry.astype(kind)
    return log


def check_layout(value: Any) -> list:
    """A log layout received in a HELLO, checked."""
    try:
        layout = [[str(n), [int(s) for s in shape], str(np.dtype(d).str)] for n, shape, d in value]
    except (TypeError, ValueError) as exc:
        raise ProtocolError(f"HELLO log layout: expected [[name, shape, dtype], …], got {value!r} ({exc})") from None
    if any(s < 0 for _, shape, _ in layout for s in shape):
        raise ProtocolError(f"HELLO log layout: negative size in {value!r}")
    return layout


__all__ = [
    "CLIENT_ROLE", "PROTOCOL", "PROTOCOL_VERSION", "SERVER_ROLE", "check_hello", "check_layout", "client_hello",
    "flatten_log", "json_ready", "layout_size", "log_layout", "log_plan", "LogPacker", "run_ended_hello",
    "setup_from_json", "unflatten_log", "unflatten_planned",
]
