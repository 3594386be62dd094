"""``rths-ident serve ns``: a numerical substructure served to a loop in another process.

A numerical substructure (NS): ``--model FILE.py`` (what the file must define:
:mod:`rths_ident.structures.ns_model_file`), or without ``--model`` the scenarios'
OpenSeesPy NS (what ``rths-ident run … --ns opensees-tcp --ns-address HOST:PORT`` asks
for). Wires: ``framed`` (ours, default) or ``seed000`` (the thesis' Simulink client:
force in, displacement out, big-endian float64). Prints the address it listens on,
serves until a stop request (framed SHUTDOWN as a connection's first message),
``--once`` (one run: all the sessions one ``rths-ident run`` opens — the test and its
comparison runs — which the run announces; a client that announces nothing is a run of
one session), or Ctrl-C. The ``serve`` group itself is in :mod:`rths_ident.cli`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rths_ident.cli.parsing import port_number
from rths_ident.errors import ParameterError


def _serve_ns(args: argparse.Namespace) -> int:
    from rths_ident import extras  # noqa: PLC0415

    extras.require_opensees("serve ns")  # every NS it serves is an OpenSeesPy model
    if not args.timeout > 0:
        raise ParameterError(f"--timeout {args.timeout!r}: expected a positive number of seconds")
    if args.spin_ms is not None and not 0 <= args.spin_ms <= 1000:
        raise ParameterError(f"--spin-ms {args.spin_ms!r}: expected a number of milliseconds from 0 to 1000")
    if args.step_marks is not None and not Path(args.step_marks).is_dir():
        raise ParameterError(f"--step-marks {args.step_marks}: expected an existing folder")
    if args.model is None:
        if args.wire == "seed000":
            raise ParameterError("--wire seed000 needs --model FILE.py defining DT and GROUND_ACCEL (nothing on that "
                                 "wire carries the slow step or the record)")
        from rths_ident.scenarios import remote_ns  # noqa: PLC0415

        make, name, seed000_setup = remote_ns.make_substructure, remote_ns.MODEL_NAME, None
    else:
        from rths_ident.structures.ns_model_file import load_ns_model  # noqa: PLC0415

        model = load_ns_model(args.model)
        make, name, seed000_setup = model.substructure, model.name, None
        if args.wire == "seed000":
            try:
                seed000_setup = model.setup()
            except ValueError as exc:
                raise ParameterError(f"--wire seed000: model file {args.model}: {exc}") from None
            try:  # build it once now: a bad model fails before listening
                model.substructure(seed000_setup).close()
            except Exception as exc:
                raise ParameterError(f"model file {args.model}: building the numerical substructure failed: "
                                     f"{type(exc).__name__}: {exc}") from exc
    make = _recorded(make, args, name)
    page = None
    if args.live:
        from rths_ident.cli.run import live_page  # noqa: PLC0415
        from rths_ident.live.served import LiveSubstructure  # noqa: PLC0415

        page = live_page(args.live_host, args.live_port)
        recorded, sessions_seen = make, []

        def make(setup):  # noqa: F811 - each session also on the live page
            sessions_seen.append(setup)
            return LiveSubstructure(recorded(setup), page.feed, f"serve ns — session {len(sessions_seen)} ({name})")

        print(f"live page → {page.url}", file=sys.stderr, flush=True)
    try:
        return _serve(make, args, name, seed000_setup)
    finally:
        if page is not None:
            page.close()


def _serve(make, args: argparse.Namespace, name: str, seed000_setup) -> int:
    from rths_ident.transport.ns_server import NSServer  # noqa: PLC0415

    server = NSServer(make, host=args.host, port=args.port, wire=args.wire, timeout_s=args.timeout,
                      seed000_setup=seed000_setup, seed000_reply=args.reply, model=name,
                      spin_s=None if args.spin_ms is None else 1e-3 * args.spin_ms, step_marks=args.step_marks)
    host, port = server.address
    print(f"rths-ident serve ns: listening on {host}:{port} ({args.wire} wire, model {name}); "
          f"Ctrl-C stops; session records in {args.records}", flush=True)
    from rths_ident.hybrid.loop.realtime_host import SWITCH_INTERVAL_S  # noqa: PLC0415

    # the serving thread takes the interpreter from the record's writer thread within this
    # (Python's default, 5 ms, is five slow steps at 1024 Hz; docs/transport.md)
    previous_switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    try:
        sessions = server.serve(max_runs=1 if args.once else None)
    except KeyboardInterrupt:
        server.close()
        print(f"rths-ident serve ns: stopped (Ctrl-C) after {server.sessions} session(s)", file=sys.stderr)
        return 130
    finally:
        sys.setswitchinterval(previous_switch_interval)
    runs = f" of {len(server.runs_ended)} run(s)" if args.once else ""
    print(f"rths-ident serve ns: stopped after {sessions} session(s){runs}, {len(server.failures)} failed", flush=True)
    return 1 if server.failures else 0


def _recorded(make, args: argparse.Namespace, name: str):
    """``make`` whose every session is recorded in ``args.records``
    (:mod:`rths_ident.records.served`); checks the folder before listening."""
    from rths_ident.hybrid.loop.realtime_host import lower_this_thread  # noqa: PLC0415
    from rths_ident.output_paths import check_output_folder  # noqa: PLC0415
    from rths_ident.records.served import (  # noqa: PLC0415
        SUBSTRUCTURE_UNITS,
        RecordingSubstructure,
        SessionRecords,
        default_records_folder,
    )

    if args.records is None:
        args.records = str(default_records_folder("serve ns"))
        Path(args.records).parent.mkdir(exist_ok=True)
    folder = check_output_folder("--records", args.records)
    records = SessionRecords(folder, "serve ns", {"command": "serve ns", "model": name, "wire": args.wire})

    def make_recorded(setup):
        ns = make(setup)
        small = {k: v for k, v in setup.items() if k != "ground_accel"}  # the record's own rows hold ẍ_g
        writer = records.open(SUBSTRUCTURE_UNITS, {"setup": small}, time_base={"slow_step_s": float(ns.dt)})
        # the record's writer thread below the serving thread when that runs at SCHED_FIFO
        return RecordingSubstructure(ns, writer, thread_setup=lower_this_thread)

    return make_recorded


def add_serve_ns_parser(actions: argparse._SubParsersAction) -> None:
    """Register ``ns`` under the ``serve`` command group."""
    from rths_ident.transport.ns_server import (  # noqa: PLC0415
        DEFAULT_PORT,
        DEFAULT_TIMEOUT_S,
        SEED000_REPLIES,
        SPIN_MAX_S,
        SPIN_SLOW_STEPS,
        WIRES,
    )

    parser = actions.add_parser(
        "ns", help="serve a numerical substructure (OpenSeesPy model) to a loop in another process",
        description="Serve a numerical substructure over TCP, one session per connection. Units: SI.",
    )
    parser.add_argument("--model", metavar="FILE.py", default=None,
                        help="model file: build(ops) and INTERFACE (+ optional settings, DT, GROUND_ACCEL), or "
                        "make_substructure(setup); default: the scenarios' OpenSees NS (rc-frame, bw-frame), built "
                        "from the client's setup")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; 0.0.0.0 "
                        "listens on every interface)")
    parser.add_argument("--port", type=port_number, default=DEFAULT_PORT,
                        help=f"TCP port (default {DEFAULT_PORT}, the thesis' server; 0: a free port)")
    parser.add_argument("--wire", choices=WIRES, default="framed",
                        help="framed (rths_ident's protocol, default) or seed000 (n big-endian float64: force in, "
                        "displacement out, as seed 000's Simulink client)")
    parser.add_argument("--reply", choices=SEED000_REPLIES, default="target",
                        help="seed000: send the NS's next target (default) or the interface displacement after "
                        "the step (nodeDisp, as the thesis' script)")
    parser.add_argument("--once", action="store_true",
                        help="stop after one run: every session of one 'rths-ident run' (the test and its "
                        "comparison runs, which the run announces as one); a client that does not say it is a run "
                        "(seed 000's, your own RemoteSubstructure) is a run of one session")
    parser.add_argument("--records", metavar="DIR", default=None,
                        help="folder of the session records (session-001.h5, …; default rths-runs/serve-ns-<UTC>/)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S,
                        help=f"seconds to wait for a client to connect and for each of its messages "
                        f"(default {DEFAULT_TIMEOUT_S:g})")
    parser.add_argument("--spin-ms", type=float, default=None, metavar="MS",
                        help="framed wire: how long the serving thread polls for the client's next message without "
                        f"sleeping (default {SPIN_SLOW_STEPS:g} of the session's slow steps, at most "
                        f"{1e3 * SPIN_MAX_S:g} ms; 0 sleeps at once: a wake-up per message, one CPU less busy)")
    parser.add_argument("--step-marks", metavar="DIR", default=None,
                        help="framed wire: save each session's clock marks per slow step (read, decoded, stepped, "
                        "encoded, sent) in DIR as marks-session-NNN.npy (what 'bench --only realtime' splits the "
                        "wire's round trip with)")
    from rths_ident.cli.run import add_live_options  # noqa: PLC0415

    add_live_options(parser, "each session")
    parser.set_defaults(func=_serve_ns)

