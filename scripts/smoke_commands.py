"""Smoke of an install: every ``rths-ident`` command and every README example, run with
the Python of the install under test; each either works (exit 0) or prints its one line
(exit 1, one line on stderr naming the missing extra, no traceback), as :data:`CASES`
expects for that install.

    python scripts/smoke_commands.py --install core|cluster|core-without-blas --repo REPO [--only-differing]
                                     [--full] [--outcomes OUT.json]

Run it from an empty folder (the outputs go there) with the ``python`` of a venv that
has rths_ident installed (``scripts/smoke_install.sh`` builds one from the wheel). The
system libraries can be hidden from one command, as root, in its own mount namespace:
``unshare -m sh -c 'mount --bind "$(mktemp -d)" /usr/lib/x86_64-linux-gnu/blas && python
scripts/smoke_commands.py --install core-without-blas …'``. The
README's concrete command lines are cases here, with the same words and options
(``tests/test_smoke_commands.py`` checks that none is missing) and smaller numbers:
each run cut to a second or two of its record (``--duration 1``), without its
comparison variants (``--no-compare``), a study of two runs; and a case marked
``full_only`` for an install (its command, and what it needs from that install, are
another case's) is run there only with ``--full``, so that CI's smoke stays within a few
minutes on 2 cores. Standard library
only: it must not import the package from the source tree.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

#: what is installed: the core, the core with the 'cluster' extra, the core on a Linux
#: without OpenSeesPy's system BLAS/LAPACK (libblas3, liblapack3)
INSTALLS = ("core", "cluster", "core-without-blas")
WORKS = "works"
ERROR_PREFIX = "rths-ident: error: "
CLUSTER_LINE = "needs the 'cluster' extra: pip install 'rths_ident[cluster]'"
#: … stands for the loader's own words (which library, which error)
BLAS_LINE = "OpenSeesPy cannot load its system libraries (…): on Debian/Ubuntu apt-get install libblas3 liblapack3"


@dataclasses.dataclass(frozen=True)
class Case:
    """One command line (``rths-ident`` words after the program; ``python FILE`` for a
    README example) and what each install gives: :data:`WORKS` or the one error line
    (after ``rths-ident: error: ``)."""

    name: str
    argv: tuple[str, ...]
    expect: dict = dataclasses.field(default_factory=dict)  # install -> WORKS | the one line
    server: tuple[str, ...] | None = None  # started first, its address replaces {address}; stopped by Ctrl-C
    timeout: float = 240.0
    #: the installs in which only the full smoke (--full) runs it: there the command and
    #: what it needs from the install are another case's, and CI's smoke leaves it out for time
    full_only: tuple[str, ...] = ()

    def expected(self, install: str) -> str:
        if install == "core-without-blas" and install not in self.expect:
            return self.expect.get("core", WORKS)
        return self.expect.get(install, WORKS)


def _needs_cluster(asked_by: str) -> dict:
    return {"core": f"{asked_by}: {CLUSTER_LINE}", "cluster": WORKS}


def _needs_blas(asked_by: str) -> dict:
    return {"core-without-blas": f"{asked_by}: {BLAS_LINE}"}


def matches(expected: str, got: str) -> bool:
    """``got`` is ``expected``, where a … in ``expected`` stands for any text."""
    return re.fullmatch(".*".join(re.escape(part) for part in expected.split("…")), got) is not None


SHORT = ("--duration", "1")
ALONE = ("--no-compare",)
MARTHS_SHORT = ("--duration", "6")  # the benchmark's records open with 5 s of zeros
# lugre-frame's runs all 2 s long: the study's runs are then the flagship's and FILE.toml's
# programs, found compiled in the compilation cache
LUGRE_SHORT = ("--duration", "2")  # the variant asked for only (no comparison runs): one compilation

#: every command, the README's command lines (their words first, cut short after), and
#: what each install gives
CASES: tuple[Case, ...] = (
    Case("version", ("--version",)),
    Case("help", ("--help",)),
    Case("run --list", ("run", "--list")),
    Case("run lugre-frame (flagship)", ("run", "lugre-frame", "--duration", "2", "--quiet",
                                        "--json", "flagship.json", "--plots", "flagship",
                                        "--test-record", "flagship.h5")),
    Case("run bw-frame", ("run", "bw-frame", *SHORT, *ALONE, "--quiet"), full_only=INSTALLS),
    Case("run rc-frame (native NS)", ("run", "rc-frame", *SHORT, *ALONE, "--quiet"), full_only=INSTALLS),
    Case("run rc-frame --ns opensees", ("run", "rc-frame", "--ns", "opensees", *SHORT, *ALONE, "--quiet"),
         expect=_needs_blas("--ns opensees")),
    Case("run rc-frame --ns opensees-tcp (its serve ns started for the run)",
         ("run", "rc-frame", "--ns", "opensees-tcp", *SHORT, *ALONE, "--quiet"), expect=_needs_blas("--ns opensees-tcp")),
    Case("serve ns + run rc-frame --ns opensees-tcp --ns-address",
         ("run", "rc-frame", "--ns", "opensees-tcp", "--ns-address", "{address}", *SHORT, *ALONE, "--quiet"),
         server=("serve", "ns", "--port", "0", "--records", "serve-ns-records"), expect=_needs_blas("serve ns")),
    Case("run marths (python-control LQG)", ("run", "marths", "--record", "elcentro", "--uncertain", "0",
                                             *MARTHS_SHORT, "--quiet")),
    Case("run marths --dask local", ("run", "marths", "--dask", "local", "--uncertain", "3", *MARTHS_SHORT,
                                     "--quiet"),  # 4 runs: the 2 whose histories are kept here, 2 on the cluster
         expect=_needs_cluster("--dask local")),
    Case("run rig-sdof (emulated board)", ("run", "rig-sdof", *SHORT, "--quiet")),
    Case("run rig-bridge", ("run", "rig-bridge", *SHORT, "--quiet")),
    Case("new", ("new", "my_frame.toml", "--from", "lugre-frame")),
    Case("check", ("check", "my_frame.toml")),
    Case("run FILE.toml --set", ("run", "my_frame.toml", "--set", "compensation.kind=amb", *LUGRE_SHORT, *ALONE,
                                 "--quiet")),
    Case("run two_bay_frame --site openfresco + serve site",
         ("run", "examples/two_bay_frame.toml", "--site", "openfresco:{address}", *SHORT, *ALONE, "--quiet"),
         server=("serve", "site", "--port", "0", "--wait", "120", "--records", "serve-site-records",
                 "--specimen", "bilinear:k=1540,fy=8,b=0.05")),
    Case("study", ("study", "lugre-frame", "--vary", "compensation.kind=damb,amb",
                   "--vary", "record.duration=2", "--quiet")),
    Case("study examples/two_bay_frame.toml", ("study", "examples/two_bay_frame.toml", "--vary", "specimen.fy=6:10",
                                               "--samples", "2", "--csv", "fy.csv", "--vary", "record.duration=1",
                                               "--quiet")),
    Case("study --dask local", ("study", "lugre-frame", "--vary", "compensation.kind=damb",
                                "--vary", "record.duration=2", "--dask", "local", "--quiet"),
         expect=_needs_cluster("--dask local"), full_only=("cluster",)),  # run marths --dask local runs the cluster
    Case("show", ("show", "flagship.h5", "--plots", "shown", "--csv", "csv", "--mat", "mat")),
    Case("fit a logged CSV", ("fit", "examples/data/my_test.csv", "--units", "mm,kN", "--model", "bilinear",
                              "--method", "ls")),
    Case("fit a test record", ("fit", "flagship.h5", "--model", "lugre", "--method", "ls", "--quiet"),
         full_only=INSTALLS),
    Case("fit --method nls", ("fit", "--dataset", "daniel", "--model", "bilinear", "--method", "nls",
                              "--starts", "1", "--global-generations", "0", "--quiet")),
    Case("fit --method bayes (numpyro, arviz)", ("fit", "--dataset", "daniel", "--model", "bilinear",
                                                 "--method", "bayes", "--starts", "1", "--draws", "20", "--warmup",
                                                 "20", "--chains", "1", "--quiet",
                                                 "--json", "bayes.json", "--plots", "bayes")),
    Case("calibrate", ("calibrate", "damb", "--specimens", "4", "--holdout", "4", "--iterations", "1",
                       "--population", "2", *SHORT, "--quiet", "--json", "gains.json")),
    Case("bench (all figures)", ("bench", "--quick"), expect={"core": "bench: the local Dask cluster figure "
                                                              f"(--no-cluster skips it): {CLUSTER_LINE}",
                                                              "cluster": "not run (minutes)"}),
    Case("bench --only ukf (filterpy's UKF beside ours)", ("bench", "--quick", "--only", "ukf")),
    Case("datasets list", ("datasets", "list")),
    Case("datasets show", ("datasets", "show", "elcentro_1940", "--plot", "elcentro.png")),
)


@dataclasses.dataclass
class Outcome:
    case: str
    expected: str
    got: str
    ok: bool
    seconds: float  # wall clock
    cpu_seconds: float = 0.0  # user + system of the processes it ran (less sensitive to the machine's load)
    detail: str = ""


def _program() -> list[str]:
    """``rths-ident`` of this Python's install (the entry point beside it)."""
    script = Path(sys.executable).with_name("rths-ident")
    return [str(script)] if script.exists() else [sys.executable, "-m", "rths_ident.cli"]


def _judge(expected: str, code: int, out: str, err: str) -> tuple[str, bool, str]:
    lines = [line for line in err.strip().splitlines() if line.strip()]
    if code == 0 and "Traceback" not in err:
        got = WORKS
    elif code == 1 and len(lines) == 1 and lines[0].startswith(ERROR_PREFIX):
        got = lines[0][len(ERROR_PREFIX):]
    else:
        got = f"exit {code}"
    ok = matches(expected, got)
    return got, ok, "" if ok else (err.strip()[-1500:] or out.strip()[-800:])


class ServerDidNotStart(RuntimeError):
    """The server exited before listening: ``code``, ``out``, ``err`` are its own."""

    def __init__(self, code: int, out: str, err: str):
        super().__init__(f"exit {code}: {err.strip()[-1500:]}")
        self.code, self.out, self.err = code, out, err


#: exit statuses of a server that ended well: by itself (a client's DIE), or by Ctrl-C
SERVER_ENDS = (0, 130)


def _start_server(argv: tuple[str, ...], timeout: float) -> tuple[subprocess.Popen, str]:
    # Ctrl-C must reach the server even when this script runs in a background job (whose
    # children start with SIGINT ignored): the default handler while it starts
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        server = subprocess.Popen([*_program(), *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    finally:
        signal.signal(signal.SIGINT, previous)
    deadline = time.monotonic() + timeout
    line = server.stdout.readline()
    while "listening on" not in line and line and time.monotonic() < deadline:
        line = server.stdout.readline()
    if "listening on" not in line:
        if server.poll() is None:
            server.kill()
        out, err = server.communicate()
        raise ServerDidNotStart(server.returncode, line + out, err)
    return server, line.split("listening on ")[1].split()[0]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_case(case: Case, install: str) -> Outcome:
    expected = case.expected(install)
    start, cpu_start = time.perf_counter(), _children_cpu()
    server = None
    argv = case.argv
    try:
        if case.server is not None:
            server, address = _start_server(case.server, case.timeout)
            argv = tuple(word.replace("{address}", address) for word in argv)
        command = [sys.executable, *argv[1:]] if argv[0] == "python" else [*_program(), *argv]
        result = subprocess.run(command, capture_output=True, text=True, timeout=case.timeout)
        got, ok, detail = _judge(expected, result.returncode, result.stdout, result.stderr)
        if server is not None and ok and expected == WORKS:
            try:
                server.communicate(timeout=5)  # a server whose client said DIE stops by itself
            except subprocess.TimeoutExpired:
                server.send_signal(signal.SIGINT)
            server_err = server.communicate(timeout=60)[1]
            if server.returncode not in SERVER_ENDS:
                ok, detail = False, f"the server exited {server.returncode}: {server_err.strip()[-1500:]}"
    except ServerDidNotStart as refused:  # judged as the command: it may be the one line expected
        got, ok, detail = _judge(expected, refused.code, refused.out, refused.err)
    except subprocess.TimeoutExpired as error:
        got, ok, detail = "timed out", False, str(error)
    finally:
        if server is not None and server.poll() is None:
            server.kill()
            server.communicate()
    return Outcome(case.name, expected, got, ok, time.perf_counter() - start, _children_cpu() - cpu_start, detail)


def readme_python_cases(readme: Path) -> list[Case]:
    """Every ```python block of the README, as a script run with this Python."""
    blocks = re.findall(r"```python\n(.*?)```", readme.read_text(encoding="utf-8"), flags=re.S)
    cases = []
    for number, block in enumerate(blocks, start=1):
        path = Path(f"readme_example_{number}.py")
        path.write_text(block, encoding="utf-8")
        cases.append(Case(f"README python example {number}", ("python", str(path))))
    return cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--install", choices=INSTALLS, required=True, help="what is installed: the core, or + cluster")
    parser.add_argument("--repo", type=Path, required=True, help="the repository (its README.md and examples/)")
    parser.add_argument("--only-differing", action="store_true",
                        help="only the cases whose outcome differs from the core's (an extra's own cases)")
    parser.add_argument("--full", action="store_true",
                        help="also the cases CI leaves out for time (Case.full_only)")
    parser.add_argument("--outcomes", type=Path, default=None,
                        help="also write every case's outcome here (JSON; docs/scripts/install_table.py reads it)")
    args = parser.parse_args(argv)
    if Path.cwd().resolve() == args.repo.resolve() or args.repo.resolve() in Path.cwd().resolve().parents:
        parser.error("run it outside the repository (the package must come from the install, not the tree)")
    shutil.copytree(args.repo / "examples", "examples", dirs_exist_ok=True)
    os.environ.setdefault("MPLBACKEND", "Agg")
    cases = [c for c in CASES if (args.full or args.install not in c.full_only)
             and (not args.only_differing or c.expected(args.install) != c.expected("core"))]
    if not args.only_differing:
        cases += readme_python_cases(args.repo / "README.md")
    outcomes = []
    for case in cases:
        if case.expected(args.install).startswith("not run"):
            outcomes.append(Outcome(case.name, case.expected(args.install), case.expected(args.install), True, 0.0))
            continue
        outcome = run_case(case, args.install)
        outcomes.append(outcome)
        mark = "ok  " if outcome.ok else "FAIL"
        print(f"[{args.install}] {mark} {outcome.seconds:6.1f} s (cpu {outcome.cpu_seconds:6.1f} s)  {case.name}: "
              f"{outcome.got}", flush=True)
        if not outcome.ok:
            print(f"        expected: {outcome.expected}\n        {outcome.detail}", flush=True)
    failed = [o for o in outcomes if not o.ok]
    total, cpu = sum(o.seconds for o in outcomes), sum(o.cpu_seconds for o in outcomes)
    print(f"smoke of the '{args.install}' install: {len(outcomes) - len(failed)} of {len(outcomes)} as expected "
          f"in {total:.0f} s (cpu {cpu:.0f} s; load average {os.getloadavg()[0]:.1f})"
          + (f"; not as expected: {', '.join(o.case for o in failed)}" if failed else ""))
    if args.outcomes is not None:
        kept = {"install": args.install, "only_differing": args.only_differing, "full": args.full,
                "outcomes": [dataclasses.asdict(o) for o in outcomes]}
        args.outcomes.write_text(json.dumps(kept, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
