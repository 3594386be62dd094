"""Screenshots of the live page during a run, and the page's own measurements.

    python docs/scripts/live_page.py                 # both screenshots into docs/figures/
    python docs/scripts/live_page.py --only rc-frame --tabs 2 --no-screenshot

For each test it starts ``rths-ident run TEST … --live --live-port 0`` in its own
process, opens the page in Debian's headless chromium (Playwright, ``executable_path``;
no browser is downloaded), waits until ``--at`` of the run's slow steps are on the screen,
writes the screenshot (1440 × 900 viewport, the whole page), and prints what the page
measured in the browser: redraws per second while the test ran, and the loop-to-screen
latency (the loop's step event → the frame painted: ``window.rthsLive.latencies``), p50,
p95 and max, also for the oldest step each redraw brought; the latency's parts
(``window.rthsLive.latencyParts``: the feed's queue, the server, the socket, parsing,
waiting for the redraw, the redraw's scripts, uPlot's canvases, the paint); the browser's
processor time; and what the run printed about its pace (``--realtime``). ``--tabs N``
opens N tabs on the page (the measurement with pages open); ``--src DIR`` runs another
checkout's ``rths_ident`` (to compare two versions of the page under the same load).
Timing figures depend on the machine's load: the script prints ``uptime`` beside them.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("RTHS_IDENT_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]
#: the runs shown: a step-wise lugre-frame (identification, updating) and rc-frame paced in real time
RUNS = {
    "lugre-frame": ["run", "lugre-frame", "--engine", "stepwise", "--realtime", "--duration", "12", "--pad", "1",
                    "--no-compare"],
    "rc-frame": ["run", "rc-frame", "--realtime", "--duration", "12", "--no-compare"],
}


#: the rths_ident the runs import (--src: another checkout's, to compare two versions of the page)
SRC = ROOT / "src"


def _cpu_seconds(root: int, without: int | None = None) -> float:
    """Processor time [s] (user + system) of the processes below ``root`` — the browser
    and its driver —, not counting ``without`` and the processes below it (the run)."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])))
    total, tick = 0, os.sysconf("SC_CLK_TCK")
    for pid, (_, ticks) in parents.items():
        up = pid
        while up in parents and up not in (root, without, 1):
            up = parents[up][0]
        if up == root and pid != root:
            total += ticks
    return total / tick


def _start(args, cwd):
    env = {**os.environ, "PYTHONPATH": str(SRC) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    process = subprocess.Popen([sys.executable, "-m", "rths_ident.cli", *args], cwd=cwd, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in process.stderr:
        match = re.search(r"live page → (http://\S+/)", line)
        if match:
            return process, match.group(1)
    raise SystemExit(f"no live page address from rths-ident {' '.join(args)}")


def _stats(values):
    import numpy as np  # noqa: PLC0415

    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return "none"
    return (f"p50 {1e3 * np.percentile(values, 50):.0f} ms, p95 {1e3 * np.percentile(values, 95):.0f} ms, "
            f"max {1e3 * values.max():.0f} ms ({values.size} frames)")


#: the loop-to-screen latency's parts, from the times the page keeps per redraw
#: (``window.rthsLive.latencyParts``: the step's event, the server's drain, its send, the
#: tab's receipt, parse, redraw start and end, uPlot's canvases drawn, the
#: next animation frame: the redraw painted)
PARTS = [("queue (event → server takes it)", 0, 1), ("server (takes → sends)", 1, 2),
         ("socket (sends → tab receives)", 2, 3), ("parse", 3, 4), ("wait for the redraw", 4, 5),
         ("redraw (scripts)", 5, 6), ("redraw (uPlot's canvases)", 6, 7), ("paint (→ next frame)", 7, 8)]


def breakdown(parts) -> list[str]:
    """One line per part of the latency: p50 / p95 / max [ms]."""
    import numpy as np  # noqa: PLC0415

    rows = np.asarray([p for p in parts if None not in p], dtype=float)
    if rows.size == 0:
        return []
    lines = []
    for name, a, b in PARTS:
        d = 1e3 * (rows[:, b] - rows[:, a])
        lines.append(f"    {name:34s} p50 {np.percentile(d, 50):6.1f}  p95 {np.percentile(d, 95):6.1f}  "
                     f"max {d.max():6.1f} ms")
    return lines


def capture(name: str, out: Path | None, at: float, tabs: int) -> dict:
    from playwright.sync_api import sync_playwright  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as work, sync_playwright() as driver:
        context = driver.chromium.launch_persistent_context(
            str(Path(work) / "profile"), executable_path=CHROMIUM, headless=True, args=ARGS,
            viewport={"width": 1440, "height": 900}, bypass_csp=True)
        process, url = _start(RUNS[name] + ["--live", "--live-port", "0", "--test-record",
                                            str(Path(work) / "record.h5")], work)
        pages = []
        for _ in range(max(1, tabs)):
            page = context.new_page()
            page.goto(url)
            pages.append(page)
        front = pages[-1]
        front.bring_to_front()
        front.wait_for_function(
            f"() => {{ const L = window.rthsLive; return !!(L && L.status && L.status.total && "
            f"(L.status.step + 1 >= {at} * L.status.total || L.status.state === 'ended')); }}",
            timeout=600e3, polling=100)
        if out is not None:  # the page redraws only the panels on the screen: draw them all, then the shot
            front.set_viewport_size({"width": 1440, "height": 1400})
            time.sleep(0.5)
            front.set_viewport_size({"width": 1440, "height": 900})
            front.screenshot(path=str(out), full_page=True)
        front.wait_for_function("() => window.rthsLive.status.state === 'ended'", timeout=600e3, polling=200)
        browser_cpu = _cpu_seconds(os.getpid(), without=process.pid)
        measured = front.evaluate("""() => { const L = window.rthsLive; const d = L.stepDrawTimes;
            return {frames: L.frames, snapshots: L.snapshots, bytes: L.bytes, latencies: L.latencies, oldest: L.oldestLatencies, parts: L.latencyParts, draws: d.length, span_s: d.length > 1 ? (d[d.length-1] - d[0]) / 1e3 : 0,
                    realtime: L.status.realtime || null}; }""")
        output, errors = process.communicate(timeout=600)
        context.close()
    pace = [line.strip() for line in output.splitlines() if "paced at" in line or "latency" in line]
    measured["browser_cpu_s"] = browser_cpu
    return {"measured": measured, "pace": pace, "code": process.returncode, "stderr": errors}


def main() -> int:
    global SRC
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=sorted(RUNS), action="append", help="this run only (repeatable)")
    parser.add_argument("--at", type=float, default=0.6, help="the screenshot once this share of the steps is shown")
    parser.add_argument("--tabs", type=int, default=1, help="tabs open on the page (the measurement with pages open)")
    parser.add_argument("--no-screenshot", action="store_true", help="measure only")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "figures", help="the screenshots' folder")
    parser.add_argument("--src", type=Path, default=SRC, help="the rths_ident source to run (compare two versions)")
    args = parser.parse_args()
    SRC = args.src.resolve()
    if not Path(CHROMIUM).is_file():
        raise SystemExit(f"no Chromium at {CHROMIUM}: apt-get install chromium")
    print("machine load:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    for name in args.only or list(RUNS):
        out = None if args.no_screenshot else args.out / f"live_{name}.png"
        result = capture(name, out, args.at, args.tabs)
        m = result["measured"]
        rate = (m["draws"] - 1) / m["span_s"] if m["span_s"] > 0 else float("nan")
        print(f"{name}: {args.tabs} tab(s); page redraws with new steps {rate:.1f} per second; "
              f"loop → screen {_stats(m['latencies'])}; the oldest step of each redraw: {_stats(m.get('oldest') or [])}")
        cores = m["browser_cpu_s"] / m["span_s"] if m["span_s"] > 0 else float("nan")
        print(f"  the browser (all tabs) used {m['browser_cpu_s']:.1f} s of processor time while the test ran "
              f"{m['span_s']:.1f} s on the screen ({cores:.2f} cores, from its start)")
        if m.get("snapshots") is not None:  # a page that counts them
            print(f"  received {m['frames']} updates ({m['snapshots']} whole snapshots), {m['bytes'] / 1e3:.0f} kB")
        for line in breakdown(m.get("parts") or []):
            print(line)
        for line in result["pace"]:
            print(f"  {line}")
        if result["code"] not in (0, 3):
            print(result["stderr"][-2000:], file=sys.stderr)
        if out is not None:
            print(f"  screenshot → {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
