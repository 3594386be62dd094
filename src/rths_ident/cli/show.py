"""``rths-ident show RECORD``: what a test record holds, its figures, and the record as
CSV or MAT files.

The summary and the figures come from the record's kind
(:data:`rths_ident.scenarios.record_views.RECORD_VIEWS`); ``--csv DIR`` and ``--mat DIR``
write its data for spreadsheets and MATLAB (:mod:`rths_ident.records.export`). Reads
records whose writer was killed (up to the last flush). See ``docs/records.md``.
"""

from __future__ import annotations

import argparse

from rths_ident.cli.common_options import add_plots_option


def run_show(args: argparse.Namespace) -> int:
    from rths_ident.output_paths import check_output_folder  # noqa: PLC0415
    from rths_ident.records import read_test_record  # noqa: PLC0415
    from rths_ident.scenarios.record_views import view_of  # noqa: PLC0415

    for option in ("plots", "csv", "mat"):  # before reading: a bad folder is told at once
        if getattr(args, option):
            check_output_folder(f"--{option}", getattr(args, option))
    if args.live:
        return _replay_live(args)
    record = read_test_record(args.record)
    view = view_of(record)
    print(view.summary(record))
    if args.plots:
        if view.plots is None:
            print(f"(no figures for a {record.kind!r} record)")
        else:
            for path in view.plots(record, args.plots):
                print(f"plot → {path}")
    if args.csv or args.mat:
        from rths_ident.records.export import export_csv, export_mat  # noqa: PLC0415

        written = (export_csv(record, args.csv) if args.csv else []) + (export_mat(record, args.mat) if args.mat
                                                                        else [])
        for path in written:
            print(f"data → {path}")
    return 0


def _replay_live(args: argparse.Namespace) -> int:
    """``--live``: the record replayed on the live page, which then shows the final state
    until Ctrl-C."""
    import signal  # noqa: PLC0415
    import sys  # noqa: PLC0415
    import threading  # noqa: PLC0415

    from rths_ident.live.replay import parse_speed, record_info, replay  # noqa: PLC0415
    from rths_ident.cli.run import live_page  # noqa: PLC0415
    from rths_ident.records import read_test_record  # noqa: PLC0415

    speed = parse_speed(args.speed)
    record = read_test_record(args.record)
    record_info(record)  # a record with nothing to replay is told before serving
    page = live_page(args.live_host, args.live_port, stop=None, replay=True)
    pace = "as fast as possible" if speed is None else f"at {speed:g}× the test's pace"
    print(f"live page → {page.url} (replaying {args.record} {pace}; Ctrl-C ends serving)", file=sys.stderr,
          flush=True)
    ended = threading.Event()
    previous = signal.signal(signal.SIGINT, lambda signum, frame: ended.set())
    try:
        feed = page.feed
        # as fast as possible, but never faster than the page's process takes the frames (none dropped)
        replay(record, feed, speed, backlog=feed.backlog, max_backlog=16, sleep=lambda s: ended.wait(s))
        feed.drain(30.0)  # the last frames, written now: the page shows the final state while it waits
        if not ended.is_set():
            print("replay done: the page shows the final state (Ctrl-C ends serving)", file=sys.stderr, flush=True)
        ended.wait()
    finally:
        signal.signal(signal.SIGINT, previous)
        page.close()
    return 0


def add_show_command(subparsers: argparse._SubParsersAction) -> None:
    """Register ``rths-ident show``."""
    parser = subparsers.add_parser(
        "show", help="summarise a test record (HDF5), draw its plots, export it as CSV or MAT",
        description="Print what a test record written by 'rths-ident run' (or a server) holds: the test, its "
        "configuration, software versions, duration, events, complete or not and why, datasets with their "
        "units, metrics. Records whose writer was killed are read up to the last flush.",
    )
    parser.add_argument("record", help="the test record (.h5)")
    add_plots_option(parser, "the record's figures")
    parser.add_argument("--csv", metavar="DIR", default=None,
                        help="write slow_steps.csv, fast_samples.csv and record.json into this folder")
    parser.add_argument("--mat", metavar="DIR", default=None,
                        help="write test_record.mat (MATLAB: structs steps, fast, units) and record.json here")
    from rths_ident.cli.run import add_live_options  # noqa: PLC0415

    add_live_options(parser, "the record replayed")
    parser.add_argument("--speed", default="1", metavar="1|10|max",
                        help="with --live: 1 (the test's own pace, default), 10 (ten times faster) or max")
    parser.set_defaults(func=run_show)
