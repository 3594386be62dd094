"""A maRTHS study's runs on a Dask cluster (``rths-ident run marths --dask local|tcp://HOST:PORT``).

The study is cut into chunks of ``cfg.batch`` runs (one run per chunk when ``batch`` is
0); every chunk is one task, :func:`~rths_ident.benchmarks.marths.study.run_chunk` on a
worker, a pure function of (config, first run, count): the plant draws and the noise
seeds come from the config, so a chunk gives the same numbers wherever and however
often it runs. The client receives the per-run summaries (J1–J10, realisability), never
the time histories, chunk by chunk as the tasks complete (``as_completed``, in any
order), and releases each result once handed over: the study streams it to its test
record. A worker that dies takes its running tasks with it; the scheduler gives them to
the others (``retries`` more times per task), and the chunks already finished are kept.
A task that fails for good raises from :meth:`DaskExecutor.iter_chunks` (the study's
record keeps the chunks finished before it).

``"local"`` starts a :class:`distributed.LocalCluster` of 2 worker processes on
127.0.0.1 (one thread each: the compiled loop is single-threaded), which ignore Ctrl-C
(this process stops them), and stops it after the study; an address connects to a
running scheduler (the workers must have rths_ident): one that refuses the connection
is an error at once, not after the client's whole ``timeout_s`` of retries.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading

from rths_ident import extras
from rths_ident.errors import ParameterError
from rths_ident.tcp_ports import ADDRESS_FORM, parse_address

__all__ = ["DaskExecutor", "check_address"]


@contextlib.contextmanager
def _workers_ignore_ctrl_c():
    """While the local cluster starts its worker processes: SIGINT ignored, which the
    workers inherit (an ignored signal stays ignored across ``exec``). A Ctrl-C at the
    terminal then reaches this process alone, which stops the study and the cluster
    itself, instead of every worker printing its own traceback. (A Ctrl-C during these
    seconds of start-up is lost.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    # the workers' own log: errors only (a study stopped by Ctrl-C cancels their tasks,
    # which distributed reports as warnings, one per task)
    level = os.environ.get(_WORKER_LOG_LEVEL)
    os.environ[_WORKER_LOG_LEVEL] = "error"
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if level is None:
            os.environ.pop(_WORKER_LOG_LEVEL, None)
        else:
            os.environ[_WORKER_LOG_LEVEL] = level


#: dask's configuration of distributed's log level, as an environment variable (the workers read it)
_WORKER_LOG_LEVEL = "DASK_LOGGING__DISTRIBUTED"


def check_address(address: str) -> str:
    """``"local"`` or ``tcp://HOST:PORT`` with the 'cluster' extra installed; anything
    else is refused before work starts (a :class:`ParameterError`, or
    :class:`~rths_ident.errors.MissingExtra` naming the extra)."""
    if address != "local":
        try:
            if not address.startswith("tcp://"):
                raise ValueError
            parse_address(address[len("tcp://"):])
        except ValueError:
            raise ParameterError(f"--dask must be 'local' or a scheduler address tcp://{ADDRESS_FORM}; got "
                                 f"{address!r}") from None
    extras.require("cluster", f"--dask {address}")
    return address


#: seconds to wait for a scheduler's TCP port to accept a connection before the client's own retries
PROBE_TIMEOUT_S = 5.0


def _reachable(address: str) -> None:
    """A TCP connection to the scheduler's port, once: refused, unknown host or silent
    for :data:`PROBE_TIMEOUT_S` is a ``ConnectionError`` at once (dask's client would
    retry for its whole timeout, saying nothing)."""
    import socket  # noqa: PLC0415

    host, port = parse_address(address[len("tcp://"):])  # checked by check_address
    try:
        socket.create_connection((host.strip("[]"), port), timeout=PROBE_TIMEOUT_S).close()
    except OSError as exc:
        reason = "connection refused" if isinstance(exc, ConnectionRefusedError) else str(exc) or type(exc).__name__
        raise ConnectionError(f"--dask {address}: {reason} — is a Dask scheduler running there? (start one with "
                              f"'dask scheduler --port {port}' and workers with 'dask worker {address}')") from None


class DaskExecutor:
    """Runs a study's chunks on a Dask cluster; a context manager (closes what it opened).

    address: ``"local"`` or ``tcp://HOST:PORT``; n_workers: of the local cluster;
    retries: extra attempts of a task whose worker failed; timeout_s: to connect. The
    progress line is the study's."""

    def __init__(self, address: str = "local", n_workers: int = 2, retries: int = 2, timeout_s: float = 60.0):
        self.address = check_address(address)
        if int(n_workers) != n_workers or n_workers < 1:
            raise ParameterError(f"n_workers must be a whole number >= 1; got {n_workers!r}")
        self.n_workers, self.retries, self.timeout_s = int(n_workers), int(retries), timeout_s
        self._cluster = None
        self.client = None

    def __enter__(self) -> "DaskExecutor":
        from distributed import Client, LocalCluster  # noqa: PLC0415  (the 'cluster' extra: check_address)
        if self.address == "local":
            with _workers_ignore_ctrl_c():
                self._cluster = LocalCluster(n_workers=self.n_workers, threads_per_worker=1, processes=True,
                                             host="127.0.0.1", dashboard_address=None)
            self.client = Client(self._cluster, timeout=self.timeout_s)
        else:
            _reachable(self.address)
            self.client = Client(self.address, timeout=self.timeout_s)
        return self

    def __exit__(self, *exc) -> None:
        if isinstance(exc[1], KeyboardInterrupt):  # stopping on purpose: the nannies' warnings say nothing new
            logging.getLogger("distributed").setLevel(logging.ERROR)
        if self.client is not None:
            self.client.close()
        if self._cluster is not None:
            self._cluster.close()
        self.client = self._cluster = None

    def iter_chunks(self, run_chunk, cfg, chunks: list[tuple[int, int]]):
        """Yields ``(first, run_chunk(cfg, first, count))`` for each ``(first, count)``
        chunk as its task completes (``run_chunk`` and ``cfg`` must pickle: a
        module-level function and a plain configuration) (any order; a retried task still completes once); each result is
        released on the cluster once handed over. Stopped early (the study failed),
        the tasks not yet finished are cancelled."""
        from distributed import as_completed  # noqa: PLC0415

        if self.client is None:
            raise RuntimeError("DaskExecutor.iter_chunks outside its `with` block")
        futures = [self.client.submit(run_chunk, cfg, first, count, retries=self.retries, pure=True)
                   for first, count in chunks]
        first_of = {future.key: first for future, (first, _) in zip(futures, chunks)}
        unfinished = dict(zip(first_of, futures))
        try:
            for future in as_completed(futures):
                summaries = future.result()  # a task that failed for good raises here
                del unfinished[future.key]
                future.release()
                yield first_of[future.key], summaries
        finally:
            if unfinished:
                self.client.cancel(list(unfinished.values()))
