"""The floor under a served substructure's wire: a ping-pong of fixed-size messages
between two plain Python processes on 127.0.0.1, nothing of rths_ident in it.

    python docs/scripts/loopback_floor.py                       # both modes, 20000 round trips each
    python docs/scripts/loopback_floor.py --fifo --json floor.json

The client (this process) sends ``--request-bytes`` (default 30: the framed FEEDBACK of
rc-frame, a 14-byte header and two float64), the peer (a child process running this
script with ``--peer PORT``) reads exactly that many and answers ``--reply-bytes``
(default 118: the TARGET with rc-frame's 12 log values), which the client reads exactly.
Both sockets have ``TCP_NODELAY``. Two modes, each measured over ``--round-trips``
exchanges after ``--warm-up`` ones:

``blocking``
    both ends wait in a blocking ``recv`` (the kernel wakes the thread when bytes arrive);
``busy-poll``
    both ends spin on a non-blocking ``recv`` until the bytes are there (no sleep, no
    wake-up: what a dedicated real-time core allows).

With ``--fifo`` each process runs at ``SCHED_FIFO`` 50 pinned to its own CPU (the client
on the last CPU it may use, the peer on the first), as ``rths-ident bench --only
realtime`` places its loop and its served substructure; refusals are said. Prints the
round trip's min / median / p99 / p99.9 / max in µs per mode (``--json FILE`` keeps them
with the load average).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time

MODES = ("blocking", "busy-poll")


def read_exactly(sock: socket.socket, view: memoryview) -> bool:
    """Fill ``view`` from ``sock`` (on a non-blocking socket: by polling); False when the
    peer closed first."""
    got, size = 0, len(view)
    while got < size:
        try:
            count = sock.recv_into(view[got:], size - got)
        except BlockingIOError:  # only on a non-blocking socket: nothing there yet
            continue
        if count == 0:
            return False
        got += count
    return True


def send_exactly(sock: socket.socket, data: bytes) -> None:
    """Send all of ``data`` (on a non-blocking socket: retrying while the buffer is full)."""
    sent = 0
    while sent < len(data):
        try:
            sent += sock.send(data[sent:])
        except BlockingIOError:
            continue


def real_time(cpu_index: int) -> str:
    """This process at SCHED_FIFO 50 on its CPU (``cpu_index`` into the allowed CPUs)."""
    notes = []
    allowed = sorted(os.sched_getaffinity(0))
    cpu = allowed[cpu_index]
    try:
        os.sched_setaffinity(0, {cpu})
    except OSError as error:
        notes.append(f"affinity refused ({error.strerror})")
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(50))
    except OSError as error:
        notes.append(f"SCHED_FIFO refused ({error.strerror})")
    return f"CPU {cpu}, SCHED_FIFO 50" + (f" ({'; '.join(notes)})" if notes else "")


def peer(port: int, request_bytes: int, reply_bytes: int, fifo: bool) -> None:
    """Answer every request with a reply until the client closes; the mode of each
    connection is its first byte (0 blocking, 1 busy-poll)."""
    if fifo:
        real_time(0)
    reply = bytes(reply_bytes)
    request = memoryview(bytearray(request_bytes))
    mode = memoryview(bytearray(1))
    while True:
        sock = socket.create_connection(("127.0.0.1", port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if not read_exactly(sock, mode):
            sock.close()
            return  # the client is done: a connection that closes at once
        spin = mode[0] == 1
        sock.setblocking(not spin)
        while read_exactly(sock, request):
            send_exactly(sock, reply)
        sock.close()


def ping_pong(listener: socket.socket, mode: str, request_bytes: int, reply_bytes: int, round_trips: int,
              warm_up: int) -> list[float]:
    """Round-trip times [s] of one connection in ``mode``."""
    sock, _ = listener.accept()
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    spin = mode == "busy-poll"
    sock.sendall(bytes([1 if spin else 0]))
    sock.setblocking(not spin)
    request = bytes(request_bytes)
    reply = memoryview(bytearray(reply_bytes))
    clock = time.perf_counter
    times = []
    for i in range(warm_up + round_trips):
        start = clock()
        send_exactly(sock, request)
        if not read_exactly(sock, reply):
            raise SystemExit("the peer closed the connection")
        if i >= warm_up:
            times.append(clock() - start)
    sock.close()
    return times


def figures(times: list[float]) -> dict:
    ordered = sorted(1e6 * t for t in times)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]

    return {"min": ordered[0], "median": at(0.5), "p99": at(0.99), "p99.9": at(0.999), "max": ordered[-1],
            "round_trips": len(ordered)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--request-bytes", type=int, default=30)
    parser.add_argument("--reply-bytes", type=int, default=118)
    parser.add_argument("--round-trips", type=int, default=20000)
    parser.add_argument("--warm-up", type=int, default=500)
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--fifo", action="store_true", help="SCHED_FIFO 50, each process on its own CPU")
    parser.add_argument("--json", metavar="FILE")
    parser.add_argument("--peer", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    for name in ("request_bytes", "reply_bytes", "round_trips"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')}: expected a positive integer")
    if args.peer is not None:
        peer(args.peer, args.request_bytes, args.reply_bytes, args.fifo)
        return 0
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(30.0)
    port = listener.getsockname()[1]
    command = [sys.executable, __file__, "--peer", str(port), "--request-bytes", str(args.request_bytes),
               "--reply-bytes", str(args.reply_bytes)] + (["--fifo"] if args.fifo else [])
    out = {"request_bytes": args.request_bytes, "reply_bytes": args.reply_bytes, "load_average_before":
           list(os.getloadavg()), "modes": {}}
    child = subprocess.Popen(command)
    try:
        out["client"] = real_time(-1) if args.fifo else "ordinary scheduling"
        for mode in args.modes:
            out["modes"][mode] = figures(ping_pong(listener, mode, args.request_bytes, args.reply_bytes,
                                                   args.round_trips, args.warm_up))
        listener.accept()[0].close()  # tells the peer to stop
        child.wait(10.0)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        listener.close()
    out["load_average_after"] = list(os.getloadavg())
    print(f"loopback ping-pong, {args.request_bytes} B out / {args.reply_bytes} B back, TCP_NODELAY; client "
          f"{out['client']}; load average {out['load_average_before'][0]:.2f} before, "
          f"{out['load_average_after'][0]:.2f} after")
    for mode, f in out["modes"].items():
        print(f"  {mode:9s}: round trip min {f['min']:.1f} / median {f['median']:.1f} / p99 {f['p99']:.1f} / "
              f"p99.9 {f['p99.9']:.1f} / max {f['max']:.1f} µs ({f['round_trips']} round trips)")
    if args.json:
        with open(args.json, "w") as file:
            json.dump(out, file, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
