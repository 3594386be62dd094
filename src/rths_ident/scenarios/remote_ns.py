"""A scenario's OpenSeesPy numerical substructure in another process (``--ns opensees-tcp``).

Both sides build the NS with the SAME function, the scenario's
``opensees_substructure(cfg, variant, ground_accel)`` — in process for ``--ns opensees``,
on the server for ``--ns opensees-tcp`` — so the two give the same numbers (float64
crosses the wire unchanged):

* the client (:func:`remote_substructure`) sends the setup: the scenario's name, its
  configuration (every field, as JSON: floats travel as their shortest repr, exact), the
  variant, the slow step and the record;
* the server (:func:`make_substructure`, what ``rths-ident serve ns`` serves when no
  ``--model`` is given) rebuilds the configuration with ``ns="opensees"`` and calls the
  scenario's function.

:func:`ns_server_for` gives a configuration whose ``ns_address`` points at a server:
the one given, or a child process started for the run and stopped after it
(:class:`~rths_ident.transport.ns_server_process.NSServerProcess`). Every session the run
opens (the test and its comparison runs) carries the run's id, and when the run is over
the server is told (:func:`~rths_ident.transport.remote_substructure.end_run`): a server
serving one run (``rths-ident serve ns --once``) then stops.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import uuid

import numpy as np

from rths_ident import extras
from rths_ident.tcp_ports import ADDRESS_FORM, parse_address
from rths_ident.transport.errors import ProtocolError, TransportError
from rths_ident.transport.ns_messages import json_ready
from rths_ident.transport.remote_substructure import RemoteSubstructure, end_run

#: the model name the server announces (and the client checks)
MODEL_NAME = "rths-ident-scenarios"
#: the ``--ns`` value of a remote OpenSees NS, and the in-process one it reproduces
REMOTE = "opensees-tcp"
IN_PROCESS = "opensees"


def check_ns_address(cfg) -> None:
    """A scenario configuration's ``ns_address``: None, or ``HOST:PORT`` with ``ns =
    'opensees-tcp'`` (else ``cfg.bad`` names the field)."""
    if cfg.ns_address is None:
        return
    if cfg.ns != REMOTE:
        cfg.bad("ns_address", "None unless ns = 'opensees-tcp' (the address of its server)")
    try:
        parse_address(cfg.ns_address)
    except ValueError:
        cfg.bad("ns_address", ADDRESS_FORM)


def check_opensees_here(cfg) -> None:
    """OpenSeesPy loads in this process if a test's configuration runs it here (``ns =
    'opensees'``, or ``'opensees-tcp'`` without an address: its server is started here),
    else :class:`~rths_ident.errors.MissingExtra` naming the system libraries
    (:func:`rths_ident.extras.opensees`) — before anything is built. A configuration
    without ``ns`` (no numerical-substructure choice) needs nothing."""
    ns, address = getattr(cfg, "ns", None), getattr(cfg, "ns_address", None)
    if ns == IN_PROCESS or (ns == REMOTE and address is None):
        extras.require_opensees(f"--ns {ns}")


def config_fields(cfg) -> dict:
    """The configuration as the server rebuilds it: every field, ``ns`` in process, no
    address."""
    fields = {f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg) if f.init}
    fields.update(ns=IN_PROCESS, ns_address=None)
    return fields


def setup_for(cfg, variant: str, ground_accel) -> dict:
    """The session setup of ``cfg``'s remote NS for ``variant``."""
    return {"scenario": cfg.SCENARIO, "config": config_fields(cfg), "variant": variant,
            "dt": 1.0 / cfg.slow_rate, "ground_accel": np.asarray(ground_accel, dtype=float)}


#: the id of the run in progress (set by :func:`ns_server_for`; None outside a run)
_RUN = contextvars.ContextVar("rths_ident_ns_run", default=None)


def remote_substructure(cfg, variant: str, ground_accel) -> RemoteSubstructure:
    """A session with the NS server at ``cfg.ns_address`` for ``variant`` (of the run in
    progress, if any)."""
    host, port = parse_address(cfg.ns_address)
    return RemoteSubstructure(host, port, setup_for(cfg, variant, ground_accel), dt=1.0 / cfg.slow_rate,
                              model=MODEL_NAME, run=_RUN.get())


def make_substructure(setup: dict):
    """Server side: the scenario's OpenSees NS from a client's setup (module doc)."""
    from rths_ident import scenarios  # noqa: PLC0415 (the server imports the scenarios on first use)

    scenario = scenarios.load(setup["scenario"])
    build = getattr(scenario, "opensees_substructure", None)
    if build is None:
        raise ProtocolError(f"scenario {setup['scenario']!r} has no OpenSees numerical substructure")
    cfg = scenario.CONFIG(**setup["config"])
    if json_ready(config_fields(cfg)) != setup["config"]:
        raise ProtocolError(f"the configuration did not survive the wire: sent {setup['config']!r}, "
                            f"rebuilt {config_fields(cfg)!r}")
    return build(cfg, setup["variant"], setup["ground_accel"])


@contextlib.contextmanager
def ns_server_for(cfg):
    """``cfg`` itself unless it asks for a remote NS without an address; else ``cfg``
    with the address of a server child process that lives as long as the ``with``.
    Inside, the sessions are one run's (module doc); a server at a given address is told
    when the run is over."""
    if getattr(cfg, "ns", None) != REMOTE:
        yield cfg
        return
    run = _RUN.set(uuid.uuid4().hex)
    try:
        if cfg.ns_address is not None:
            try:
                yield cfg
            finally:
                _tell_run_ended(cfg.ns_address, _RUN.get())
            return
        from rths_ident.transport.ns_server_process import NSServerProcess  # noqa: PLC0415

        with NSServerProcess() as server:
            host, port = server.address
            yield dataclasses.replace(cfg, ns_address=f"{host}:{port}")
    finally:
        _RUN.reset(run)


def _tell_run_ended(address: str, run: str) -> None:
    """The server at ``address`` learns the run is over; a server already gone is no error."""
    host, port = parse_address(address)
    try:
        end_run(host, port, run)
    except TransportError:
        pass


__all__ = ["IN_PROCESS", "MODEL_NAME", "REMOTE", "config_fields", "make_substructure", "ns_server_for",
           "remote_substructure", "setup_for"]
