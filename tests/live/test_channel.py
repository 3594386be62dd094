"""The loop's hand-off to the page's server process: it never waits for the reader, drops
step frames only, and carries a paced run's figures of every step."""

import socket
import threading

import numpy as np

from rths_ident.live.channel import MAX_PENDING_BYTES, FrameSender, PacedFigures, PacedSoFar, read_frames
from rths_ident.runner.events import Note, RunEnded, StepDone, TestStarted


def _step(k: int, total: int) -> StepDone:
    fast = {"target": np.full(64, 1e-3 * k), "measured": np.full(64, 1e-3 * k), "force": np.full(64, float(k))}
    return StepDone(k, total, {"fast": fast})


def _read_all(sock: socket.socket) -> list:
    return list(read_frames(sock))


def test_a_reader_that_never_drains_never_holds_the_loop_and_only_steps_are_dropped():
    here, there = socket.socketpair()
    sender = FrameSender(here, max_pending_bytes=64 * 1024)
    total = 3000  # ≈ 1.7 kB a frame: far more than the socket's buffer and the sender's bound

    def emit():
        sender(TestStarted("t", {"steps": total}))
        for k in range(total):
            sender(_step(k, total))
            if k % 1000 == 0:
                sender(Note(f"note at {k}"))
        sender(RunEnded("complete"))

    loop = threading.Thread(target=emit, daemon=True)
    loop.start()
    loop.join(60.0)
    assert not loop.is_alive(), "the sender waited for a reader that never reads"
    assert sender.dropped > 0 and not sender.closed
    waiting = sender.backlog()
    here_left = sender.drain(0.0)
    assert waiting > 0 and not here_left  # nobody read: frames are still waiting, none was lost unsaid
    reader = threading.Thread(target=lambda: received.extend(_read_all(there)), daemon=True)
    received: list = []
    reader.start()
    assert sender.drain(30.0)
    here.close()
    reader.join(30.0)
    events = [event for _, event, _ in received]
    steps = [e.step for e in events if type(e) is StepDone]
    # every step is either shown or counted as dropped, in order; every other event arrives
    assert len(steps) + sender.dropped == total
    assert steps == sorted(steps) and steps[0] == 0
    assert [e.text for e in events if type(e) is Note] == ["note at 0", "note at 1000", "note at 2000"]
    assert type(events[0]) is TestStarted and type(events[-1]) is RunEnded
    assert MAX_PENDING_BYTES >= 64 * 1024


def test_a_reader_that_has_gone_leaves_the_run_going_without_its_page():
    here, there = socket.socketpair()
    sender = FrameSender(here)
    there.close()
    for k in range(50):
        sender(_step(k, 50))
    assert sender.closed and sender.backlog() == 0


class _Pacer:
    """The pacer's so_far(): views of the first n steps of preallocated arrays."""

    def __init__(self, n):
        rng = np.random.default_rng(3)
        self.latency, self.ns = rng.uniform(1e-4, 2e-2, n), rng.uniform(1e-5, 1e-3, n)
        self.missed = rng.integers(0, 3, n)
        self.n = 0

    def so_far(self):
        return self.latency[:self.n], self.ns[:self.n], self.missed[:self.n]


def test_a_paced_runs_figures_of_every_step_arrive_also_past_a_dropped_frame():
    here, there = socket.socketpair()
    pacer = _Pacer(400)
    sender = FrameSender(here, max_pending_bytes=16 * 1024)
    sender(TestStarted("t", {"steps": 400}, {"pacer": pacer, "model_force": len}))
    for k in range(400):
        pacer.n = k + 1
        sender(_step(k, 400))
    received: list = []
    reader = threading.Thread(target=lambda: received.extend(_read_all(there)), daemon=True)
    reader.start()
    sender.drain(30.0)
    pacer.n = 400
    sender(RunEnded("complete"))
    sender(_step(399, 400))  # one more frame after the drops: it carries every step not sent yet
    assert sender.drain(30.0)
    here.close()
    reader.join(30.0)
    started = received[0][1]
    assert started.watch == {"paced": True, "model": True}  # the objects stay in the run's process
    assert sender.dropped > 0
    kept = PacedSoFar()
    for _, _, extra in received:
        if isinstance(extra, PacedFigures):
            kept.add(extra)
    latency, ns, missed = kept.so_far()
    np.testing.assert_array_equal(latency, pacer.latency)
    np.testing.assert_array_equal(ns, pacer.ns)
    np.testing.assert_array_equal(missed, pacer.missed)
