"""``rths-ident serve site``: a virtual specimen served to an OpenFresco client.

    rths-ident serve site --port P --specimen MODEL:field=value,... \\
        [--transfer-system ideal|carrion-spencer] [--host 127.0.0.1] [--data-size 256]

listens on ``host:port`` (127.0.0.1 unless ``--host`` says otherwise), prints the
address, and serves one client speaking the OpenFresco element protocol — OpenSees'
``genericClient`` element, OpenFresco's ``expElement … -server``, rths_ident's
:class:`~rths_ident.transport.openfresco_client.OpenFrescoClient` in the simapp dialect —
until it sends DIE (99) or Ctrl-C. The specimen is a 1-D model of
:mod:`rths_ident.models`: a client controlling 1 displacement drives one node against
a fixed end, one controlling 2 (``-dof 1 -dof 1``) drives the deformation ``d2 − d1``.

``--transfer-system ideal`` (default): the specimen is at the client's trial
displacement; the reply to getForce is its restoring force
(:class:`~rths_ident.transport.openfresco.ModelElementSite`).
``--transfer-system carrion-spencer``: the trial displacement is the command of the
Carrion–Spencer actuator with control–structure interaction
(:class:`~rths_ident.hybrid.fast_side.actuator_element_site.ActuatorElementSite`); the client gets
the specimen's restoring force at the actuator's displacement at the end of the step
(getForce), and that measured displacement (getDisp, getDaqResponse).

:func:`serve_site` runs the same from Python with an ``on_command(code, frame, reply)``
callback (the hook for a test record). The library does the work: the specimen text is
read by :func:`rths_ident.models.parse_specimen` (a model of
:data:`rths_ident.models.MODELS`), the site built by
:func:`rths_ident.hybrid.fast_side.served_specimen.make_site_factory`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rths_ident.cli.parsing import port_number
from rths_ident.errors import ParameterError

def _parse_scaled_for(text: str | None):
    if text is None:
        return None
    parts = text.split(",")
    try:
        numbers = [float(p) for p in parts]
    except ValueError:
        numbers = []
    if len(numbers) != 3:
        raise ParameterError(f"--actuator-scaled-for: expected PEAK_FORCE,PEAK_DISPLACEMENT,PEAK_VELOCITY "
                             f"(N, m, m/s), got {text!r}")
    return numbers


def serve_site(args: argparse.Namespace, on_command=None) -> int:
    """Run ``serve site`` with parsed ``args``; ``on_command(code, frame, reply)`` is
    called after every command served."""
    from rths_ident.hybrid.fast_side.actuator import CarrionSpencerParams  # noqa: PLC0415
    from rths_ident.hybrid.fast_side.served_specimen import make_site_factory  # noqa: PLC0415
    from rths_ident.models import parse_specimen  # noqa: PLC0415

    model, params = parse_specimen(args.specimen, source="--specimen")
    if args.data_size < 0:
        raise ParameterError(f"--data-size must be >= 0 (0 accepts the client's); got {args.data_size}")
    scaled = _parse_scaled_for(args.actuator_scaled_for) if args.transfer_system == "carrion-spencer" else None
    actuator = None if scaled is None else CarrionSpencerParams.scaled_for(*scaled)
    interlocks = None
    if getattr(args, "interlocks", None):
        if args.transfer_system != "carrion-spencer":
            raise ParameterError("--interlocks needs --transfer-system carrion-spencer (with ideal, the client's "
                                 "displacement is the specimen's: nothing between them to stop)")
        from rths_ident.scenarios.components import interlocks_from_file  # noqa: PLC0415

        interlocks = interlocks_from_file(args.interlocks,
                                          actuator if actuator is not None else CarrionSpencerParams.table_2_1())
    site_for = make_site_factory(model, params, args.transfer_system, actuator=actuator, fast_rate=args.fast_rate,
                                 interlocks=interlocks)

    records, recorded = _records(args), []
    page = None
    if getattr(args, "live", False):
        from rths_ident.cli.run import live_page  # noqa: PLC0415

        page = live_page(args.live_host, args.live_port)
        print(f"live page → {page.url}", file=sys.stderr, flush=True)
    try:
        return _serve(args, site_for, records, recorded, page, on_command)
    finally:
        if page is not None:
            page.close()


def _serve(args, site_for, records, recorded, page, on_command) -> int:
    from rths_ident.cli.endings import EXIT_INTERRUPTED, EXIT_TEST_STOPPED  # noqa: PLC0415
    from rths_ident.records.served import ELEMENT_SITE_UNITS, RecordingElementSite  # noqa: PLC0415
    from rths_ident.transport.openfresco import (  # noqa: PLC0415
        COMMAND_NAMES,
        ElementServer,
        OpenFrescoProtocolError,
        SiteStopped,
    )

    def checked_site(setup):
        if args.data_size and setup.data_size != args.data_size:
            raise OpenFrescoProtocolError(
                f"client's data_size {setup.data_size} != --data-size {args.data_size} (set the client's "
                f"-dataSize, or --data-size 0 to accept the client's)")
        site = RecordingElementSite(site_for(setup), records.open(ELEMENT_SITE_UNITS, {"setup_ints": list(setup)}))
        recorded.append(site)
        if page is not None:
            from rths_ident.live.served import LiveElementSite  # noqa: PLC0415

            return LiveElementSite(site, page.feed, f"serve site — session {len(recorded)} ({args.specimen})")
        return site

    server = ElementServer(checked_site, port=args.port, host=args.host, accept_timeout=args.wait,
                           timeout=args.timeout, on_command=on_command)
    host, port = server.address
    try:  # Ctrl-C may come as soon as the address is out
        print(f"rths-ident serve site: listening on {host}:{port} (OpenFresco element protocol; specimen "
              f"{args.specimen}, transfer system {args.transfer_system}); stop with DIE (99) or Ctrl-C",
              flush=True)
        server.serve()
    except SiteStopped as stopped:  # an actuator limit: brought to rest, the client told (NaN replies), gone
        text = f"{stopped}; {stopped.rest or 'the site has no safe stop'}; {stopped.how}"
        for site in recorded:
            site.writer.event("error", text, step=site.commits)
            site.writer.close()
        where = "; ".join(f"test record → {site.writer.path}" for site in recorded)
        print(f"rths-ident serve site: the test stopped: {text}" + (f"; {where}" if where else ""),
              file=sys.stderr, flush=True)
        return EXIT_TEST_STOPPED
    except BaseException as exc:
        for site in recorded:  # what was served stays on disk, with why it ended
            if isinstance(exc, KeyboardInterrupt):
                site.writer.event("stop", "stopped by the operator (Ctrl-C)", step=site.commits)
            else:
                site.writer.event("error", f"{type(exc).__name__}: {exc}", step=site.commits)
            site.writer.close()
        if not isinstance(exc, KeyboardInterrupt):
            raise
        server.close()
        print("rths-ident serve site: interrupted (Ctrl-C)", file=sys.stderr, flush=True)
        return EXIT_INTERRUPTED
    for site in recorded:
        site.finish()
        print(f"rths-ident serve site: test record → {site.writer.path}", flush=True)
    counts = ", ".join(f"{name} {server.counts[name]}" for name in COMMAND_NAMES.values() if name in server.counts)
    print(f"rths-ident serve site: client sent DIE; served {counts}", flush=True)
    return 0


def _records(args: argparse.Namespace):
    """The session records of ``serve site`` (:mod:`rths_ident.records.served`), the
    folder checked before listening."""
    from rths_ident.output_paths import check_output_folder  # noqa: PLC0415
    from rths_ident.records.served import SessionRecords, default_records_folder  # noqa: PLC0415

    if args.records is None:
        args.records = str(default_records_folder("serve site"))
        Path(args.records).parent.mkdir(exist_ok=True)
    folder = check_output_folder("--records", args.records)
    return SessionRecords(folder, "serve site", {"command": "serve site", "specimen": args.specimen,
                                                 "transfer_system": args.transfer_system})


def add_serve_site_parser(serve_subparsers: argparse._SubParsersAction) -> None:
    """Register ``site`` under the ``serve`` command group."""
    parser = serve_subparsers.add_parser(
        "site", help="serve a virtual specimen to an OpenFresco client (genericClient, expElement -server)",
        description=__doc__.split("\n\n")[2], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=port_number, required=True, help="TCP port (0: the system picks one, printed)")
    from rths_ident.hybrid.fast_side.served_specimen import SERVED_TRANSFER_SYSTEMS  # noqa: PLC0415
    from rths_ident.models import MODELS  # noqa: PLC0415

    parser.add_argument("--specimen", required=True, metavar="MODEL:field=value,...",
                        help=f"specimen model and its Params in SI, e.g. boucwen:k=2e6,alpha=0.1,A=1,beta=60,"
                             f"gamma=40,n=1; models: {', '.join(MODELS)}")
    parser.add_argument("--transfer-system", choices=SERVED_TRANSFER_SYSTEMS.names(), default="ideal",
                        help="ideal (the specimen is at the trial displacement) or carrion-spencer (a virtual "
                             "servo-hydraulic actuator with control-structure interaction)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--data-size", type=int, default=256,
                        help="frame size in float64 the client must announce (default 256, OpenFresco's; "
                             "0 accepts the client's)")
    parser.add_argument("--actuator-scaled-for", metavar="F,D,V", default=None,
                        help="carrion-spencer: Table 2.1's actuator scaled for a peak force [N], displacement [m] "
                             "and velocity [m/s] (CarrionSpencerParams.scaled_for); default Table 2.1 as is")
    parser.add_argument("--fast-rate", type=float, default=None,
                        help="carrion-spencer: controller rate [Hz] (default 4000)")
    parser.add_argument("--interlocks", metavar="TEST.toml", default=None,
                        help="carrion-spencer: the [interlocks] of this test file, checked at every commit (limits "
                             "left out: the actuator's); one trips → the actuator brought to rest, the client told")
    parser.add_argument("--wait", type=float, default=None,
                        help="seconds to wait for the client to connect (default: until Ctrl-C)")
    parser.add_argument("--records", metavar="DIR", default=None,
                        help="folder of the session record (session-001.h5; default rths-runs/serve-site-<UTC>/)")
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds allowed between two messages of the client (default 60)")
    from rths_ident.cli.run import add_live_options  # noqa: PLC0415

    add_live_options(parser, "each session")
    parser.set_defaults(func=serve_site)
