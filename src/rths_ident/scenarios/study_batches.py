"""A study's runs in compiled batches: the fused loops of several runs as one
``jax.vmap``-ed call.

Which runs share a program is read from the programs themselves: the fused loop of the
study's first run is traced (not compiled), and, for every varied field, the loop of that
run with the field set to the smallest and the largest of its other values (for text, to
the other values); a field whose loop traces to another program
(:func:`~rths_ident.hybrid.loop.assembled.program_fingerprint`: its jaxpr, its constants,
its arguments' shapes) changes what is compiled — a structure, a strategy, a rate, a
record length — and the study runs run by run, with a one-line note naming that field.
Fields that only change the loop's argument values (actuator, specimen and sensor
parameters, compensator gains, the record's scale, noise seeds, initial guesses, …)
batch. So do tests of a kind that builds its test as data (``build(config) ->
HybridTest``: the frame tests) on the fused engine; the others run run by run.

A batch is ``size`` runs (the last one padded with copies of its last run, so that one
compiled program serves every batch). Each run of a batch goes through the one runner
on a thread of its own (:func:`rths_ident.runner.run.run_test`: its test, its
reference, its metrics and its JSON are a run's as always) up to its loop, where it
joins the batch (:class:`LoopBatch`); when every run of the batch has joined (or ended
before its loop), the batch's loops run as one call and each run goes on with its own
logs. The numbers are those of the runs one by one, to rounding (a ``vmap``-ed program
may order a sum differently).
"""

from __future__ import annotations

import concurrent.futures
import threading
from typing import Callable

import jax
import numpy as np

from rths_ident.hybrid.loop.assembled import batched_fused_runner, program_fingerprint

__all__ = ["DEFAULT_BATCH", "BatchDecision", "decide", "LoopBatch", "run_batches"]

#: runs per compiled call by default: on two cores the vmap-ed call of 8 small frames
#: keeps one core busy while the next batch's runs build on the other
DEFAULT_BATCH = 8


class BatchDecision:
    """How a study runs: ``fingerprint`` of the program its runs share (None: run by
    run) and ``note``, the one line that says why it runs run by run (None: nothing to
    say)."""

    def __init__(self, fingerprint: str | None, note: str | None = None, first_test=None):
        self.fingerprint, self.note, self.first_test = fingerprint, note, first_test


def _probe_values(plan, path: str) -> list:
    """The values of ``path`` a probe tries beside the first run's: the smallest and the
    largest of its other values (numbers), else every other value."""
    first = dict(plan.runs[0])[path]
    others = sorted({dict(run)[path] for run in plan.runs} - {first}, key=lambda v: (str(type(v)), v))
    if others and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in others):
        return sorted({min(others), max(others)})
    return others


def decide(plan, batch: int, build_config: Callable, engine_of: Callable) -> BatchDecision:
    """Whether (and how) ``plan``'s runs batch (module doc). ``build_config(overrides) ->
    config`` and ``engine_of(overrides) -> engine`` read a run's configuration from its
    overrides ``{path: value}``."""
    from rths_ident.scenarios.kinds import TEST_KINDS  # noqa: PLC0415

    if batch < 2 or len(plan.runs) < 2:
        return BatchDecision(None)
    build = getattr(TEST_KINDS[plan.kind_name].module, "build", None)
    if build is None:
        return BatchDecision(None, f"study: run by run — a {plan.kind_name} test has no fused loop to batch")
    first = dict(plan.runs[0])
    engine = engine_of(first)
    if engine != "fused":
        return BatchDecision(None, f"study: run by run — the {engine} engine runs one test at a time")
    first_test = build(build_config(first))
    fingerprint = program_fingerprint(first_test)
    for path in plan.varied:
        for value in _probe_values(plan, path):
            probe = {**first, path: value}
            if engine_of(probe) != "fused":
                return BatchDecision(None, f"study: run by run — {path} = {value} runs on another engine")
            if program_fingerprint(build(build_config(probe))) != fingerprint:
                return BatchDecision(None, f"study: run by run — {path} changes the compiled loop (its structure or "
                                           "shapes), not only its values")
    return BatchDecision(fingerprint, first_test=first_test)


class LoopBatch:
    """The fused loops of the runs ``members`` as one call of ``size`` runs (module doc).

    ``runner_for(index)(test)`` is what run ``index`` gives its runner as
    :attr:`~rths_ident.runner.options.RunOptions.fused_loop`; its call blocks until
    every member has joined or :meth:`withdraw`-n (a run that ended before its loop),
    and returns ``(None, that run's logs)``."""

    def __init__(self, members, size: int, fingerprint: str):
        self.members, self.size, self.fingerprint = tuple(members), int(size), fingerprint
        self._joined: dict[int, tuple] = {}
        self._withdrawn: set[int] = set()
        self._logs: dict[int, dict] = {}
        self._error: BaseException | None = None
        self._started = self._done = False
        self._condition = threading.Condition()

    def runner_for(self, index: int) -> Callable:
        def fused_loop(test):
            return lambda parameters, initial, ag: self._join(index, test, (parameters, initial, ag))
        return fused_loop

    def withdraw(self, index: int) -> None:
        """Run ``index`` will not join (it ended, or failed, before its loop)."""
        with self._condition:
            if index in self._joined:
                return
            self._withdrawn.add(index)
            start = self._ready()
        if start:
            self._run()

    def _ready(self) -> bool:
        """(Under the lock) whether every member is accounted for and nobody has started
        the call yet; if so, the caller starts it."""
        if self._started or not self._joined or len(self._joined) + len(self._withdrawn) < len(self.members):
            return False
        self._started = True
        return True

    def _join(self, index: int, test, arguments: tuple):
        with self._condition:
            self._joined[index] = (test, arguments)
            start = self._ready()
        if start:
            self._run()
        with self._condition:
            self._condition.wait_for(lambda: self._done)
            if self._error is not None:
                raise self._error
            return None, self._logs[index]

    def _run(self) -> None:
        try:
            order = sorted(self._joined)
            rows = [self._joined[i][1] for i in order]
            rows += [rows[-1]] * (self.size - len(rows))
            try:
                stacked = jax.tree_util.tree_map(lambda *leaves: np.stack([np.asarray(x) for x in leaves]), *rows)
            except ValueError as error:  # a probe missed a field that changes shapes
                raise RuntimeError(f"the runs {order} of a study's batch do not share one loop ({error})") from None
            runner = batched_fused_runner(self._joined[order[0]][0], self.fingerprint, self.size)
            _, logs = runner(*stacked)
            logs = jax.tree_util.tree_map(np.asarray, jax.device_get(logs))
            self._logs = {i: jax.tree_util.tree_map(lambda x, k=k: x[k], logs) for k, i in enumerate(order)}
        except BaseException as error:  # noqa: BLE001 (every member raises it)
            self._error = error
        with self._condition:
            self._done = True
            self._condition.notify_all()


def run_batches(indices, size: int, fingerprint: str, run_one: Callable, finished: Callable[[dict], None],
                first_test=None) -> None:
    """Runs ``indices`` in batches of ``size`` (:class:`LoopBatch`), each run of a batch
    ``run_one(index, fused_loop) -> row`` on a thread of its own; ``finished(row)`` as
    each run ends, in run order within a batch. ``first_test`` (a test of the program):
    the batched loop compiles on a thread of its own from the start, while the first
    batch's runs build (XLA's compilation leaves the interpreter to them)."""
    indices = list(indices)
    if first_test is not None:
        threading.Thread(target=_compile_quietly, args=(first_test, fingerprint, size), daemon=True).start()
    for start in range(0, len(indices), size):
        members = indices[start:start + size]
        batch = LoopBatch(members, size, fingerprint)

        def member(index, batch=batch):
            try:
                return run_one(index, batch.runner_for(index))
            finally:
                batch.withdraw(index)

        with concurrent.futures.ThreadPoolExecutor(max_workers=len(members)) as pool:
            futures = [pool.submit(member, index) for index in members]
            for future in futures:
                finished(future.result())


def _compile_quietly(test, fingerprint: str, size: int) -> None:
    """Compile the batched loop ahead of the first batch; a failure is the batch's to
    report (it compiles again there and raises)."""
    try:
        batched_fused_runner(test, fingerprint, size)
    except Exception:  # noqa: BLE001
        pass
