"""Does the live page slow the loop? rc-frame ``--realtime`` (the whole El Centro record)
three times without a page and three times with two headless chromium tabs open on its
page, alternately; the table goes into docs/live.md.

    python docs/scripts/live_page_overhead.py            # 6 runs, ≈ 6–8 min; writes docs/live.md
    python docs/scripts/live_page_overhead.py --repeats 1 --duration 5 --write /tmp/page.md   # a smoke

Each run is ``rths-ident run rc-frame --realtime --no-compare --json …`` (the whole El
Centro record unless ``--duration``; ``--realtime`` adds its 5 s start-up); "with pages"
adds ``--live --live-port 0`` and two tabs of Debian's headless chromium (Playwright) on
the page from before the first step to the end, the second in front. Printed per run:
missed deadlines after start-up (and in all), latency per slow step p50 / p99 / max [ms]
from the run's JSON, the machine's load (``uptime``) before it; for the runs with pages,
the front tab's redraws per second while the test ran and its loop-to-screen latency
(p50 / p95 / max). The table (one row per pair of runs, the machine and its load, the
date) is written between the ``live-overhead`` markers of ``--write`` (docs/live.md;
``--write -``: printed only). The figures depend on the machine and its load: run it on
a quiet machine. ``--clients socket`` replaces the tabs by plain WebSocket clients (the
server's work alone, no browser).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).parent))
from live_page import ARGS, CHROMIUM  # noqa: E402
from page_markers import replace_between_markers  # noqa: E402

#: the page the table goes into, and its markers' name
PAGE, MARKERS = ROOT / "docs" / "live.md", "live-overhead"
#: El Centro in rc-frame: 1810 slow steps at 50 Hz, plus --realtime's 5 s start-up [s]
RECORD_S, STARTUP_S = 36.2, 5.0


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip().split("load average:")[-1].strip()


def _command(work: Path, duration: float | None, live: bool) -> list[str]:
    args = [sys.executable, "-m", "rths_ident.cli", "run", "rc-frame", "--realtime", "--no-compare", "--quiet",
            "--json", str(work / "metrics.json"), "--test-record", str(work / "record.h5")]
    if duration is not None:
        args += ["--duration", str(duration)]
    return args + (["--live", "--live-port", "0"] if live else [])


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _read_with_sockets(url: str, count: int) -> None:
    """``count`` WebSocket clients that read every update until the run ends (the
    server's whole work, no browser)."""
    import asyncio  # noqa: PLC0415

    from tornado.httpclient import HTTPRequest  # noqa: PLC0415
    from tornado.websocket import websocket_connect  # noqa: PLC0415

    token = re.search(r'data-token="([^"]+)"', _get(url)).group(1)
    origin = url.rstrip("/")

    async def one():
        socket = await websocket_connect(HTTPRequest(url.replace("http", "ws") + f"ws?token={token}",
                                                     headers={"Origin": origin}))
        while True:
            text = await socket.read_message()
            if text is None or '"state":"ended"' in text:
                return

    async def all_of_them():
        await asyncio.gather(*(one() for _ in range(count)))

    asyncio.run(all_of_them())


def _get(url: str) -> str:
    import urllib.request  # noqa: PLC0415

    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode()


def _row(load, metrics, browser, code, err) -> dict:
    if code != 0:
        raise SystemExit(f"rc-frame run failed ({code}):\n{err[-3000:]}")
    report = metrics["realtime"]
    return {"load": load, "missed": report["missed_deadlines"], "missed_after": report["missed_after_startup"],
            "latency": report["latency_ms"], "browser": browser}


def run_once(duration: float | None, tabs: int, clients: str = "browser") -> dict:
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        load = _uptime()
        browser = {}
        if tabs == 0:
            done = subprocess.run(_command(work, duration, False), cwd=work, env=_env(), capture_output=True,
                                  text=True, timeout=900)
            code, err = done.returncode, done.stderr
        else:
            process = subprocess.Popen(_command(work, duration, True), cwd=work, env=_env(), stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True)
            url = None
            for line in process.stderr:
                match = re.search(r"live page → (http://\S+/)", line)
                if match:
                    url = match.group(1)
                    break
            if clients == "socket":
                _read_with_sockets(url, tabs)
                _, err = process.communicate(timeout=120)
                code = process.returncode
                metrics = json.loads((work / "metrics.json").read_text()) if code == 0 else None
                return _row(load, metrics, {}, code, err)
            from playwright.sync_api import sync_playwright  # noqa: PLC0415

            with sync_playwright() as driver:
                context = driver.chromium.launch_persistent_context(
                    str(work / "profile"), executable_path=CHROMIUM, headless=True, args=ARGS,
                    viewport={"width": 1440, "height": 900}, bypass_csp=True)
                pages = [context.new_page() for _ in range(tabs)]
                for page in pages:
                    page.goto(url)
                front = pages[-1]
                front.bring_to_front()
                front.wait_for_function("() => window.rthsLive && rthsLive.status && rthsLive.status.state === 'ended'",
                                        timeout=900e3, polling=250)
                browser = front.evaluate("""() => { const L = window.rthsLive;
                    return {latencies: L.latencies, stepDraws: L.stepDrawTimes}; }""")
                context.close()
            _, err = process.communicate(timeout=120)
            code = process.returncode
        metrics = json.loads((work / "metrics.json").read_text()) if code == 0 else None
    return _row(load, metrics, browser, code, err)


def _browser_text(browser: dict) -> str:
    if not browser:
        return ""
    draws = np.asarray(browser["stepDraws"], dtype=float) / 1e3
    rate = (draws.size - 1) / (draws[-1] - draws[0]) if draws.size > 1 else float("nan")
    lat = 1e3 * np.asarray(browser["latencies"], dtype=float)
    if lat.size == 0:
        return "; page: no redraw measured"
    return (f"; page: {rate:.1f} redraws/s with new steps, loop → screen p50 {np.percentile(lat, 50):.0f} / "
            f"p95 {np.percentile(lat, 95):.0f} / max {lat.max():.0f} ms")


def _run_line(row: dict) -> str:
    lat = row["latency"]
    return (f"{row['missed_after']} missed after start-up ({row['missed']} in all), "
            f"p99 {lat['p99']:.2f} ms (p50 {lat['p50']:.2f}, max {lat['max']:.1f})")


def _cell(row: dict) -> str:
    return f"{row['missed_after']} ({row['missed']}) · {row['latency']['p99']:.2f} ms"


def table(pairs: list, args, started: str, machine: str) -> str:
    """The page's table: one row per pair of runs (without, with pages)."""
    what = "whole El Centro record" if args.duration is None else f"{args.duration:g} s of the record"
    pages = f"{args.tabs} chromium tabs" if args.clients == "browser" else f"{args.tabs} WebSocket clients"
    lines = [f"*rc-frame `--realtime`, {what}; {machine}; measured {started} by "
             f"`docs/scripts/live_page_overhead.py`. Cells: missed deadlines after start-up (in all) · "
             f"latency per slow step p99.*", "",
             f"| pair | load before (no page / with pages) | no page | {pages} open | the front tab |",
             "|---|---|---|---|---|"]
    for i, (without, with_pages) in enumerate(pairs, 1):
        front = _browser_text(with_pages["browser"]).removeprefix("; page: ") or "–"
        load = f"{without['load'].split(',')[0]} / {with_pages['load'].split(',')[0]}"
        lines.append(f"| {i} | {load} | {_cell(without)} | {_cell(with_pages)} | {front} |")
    return "\n".join(lines)


def _machine() -> str:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = " ".join(line.split(":", 1)[1].split())
                break
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs" + (f" ({model})" if model else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="pairs of runs (without, with pages)")
    parser.add_argument("--duration", type=float, default=None, help="seconds of the record (default: all)")
    parser.add_argument("--tabs", type=int, default=2)
    parser.add_argument("--clients", choices=("browser", "socket"), default="browser",
                        help="browser tabs (chromium), or plain WebSocket clients (the server's work alone)")
    parser.add_argument("--write", default=str(PAGE),
                        help=f"the page whose {MARKERS} markers get the table ('-': print it only)")
    args = parser.parse_args()
    if args.repeats < 1 or args.tabs < 1:
        raise SystemExit("--repeats and --tabs: at least 1")
    if args.clients == "browser" and not Path(CHROMIUM).is_file():
        raise SystemExit(f"no Chromium at {CHROMIUM}: apt-get install chromium")
    page = None if args.write == "-" else Path(args.write)
    if page is not None:  # the markers are there before an hour of runs
        replace_between_markers(page.read_text(), MARKERS, "")
    record_s = (RECORD_S if args.duration is None else min(args.duration, RECORD_S)) + STARTUP_S
    print(f"{2 * args.repeats} runs of rc-frame --realtime ({record_s:.0f} s paced each, plus ≈ 15–25 s of "
          f"start-up): expect ≈ {2 * args.repeats * (record_s + 20) / 60:.0f} min", flush=True)
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    pairs = []
    for i in range(args.repeats):
        pair = []
        for tabs in (0, args.tabs):
            row = run_once(args.duration, tabs, args.clients)
            pair.append(row)
            what = "no page" if tabs == 0 else f"{tabs} {'tabs' if args.clients == 'browser' else 'socket clients'} open"
            print(f"run {i + 1}, {what}: {_run_line(row)} (load before: {row['load']})"
                  + _browser_text(row["browser"]), flush=True)
        pairs.append(tuple(pair))
    text = table(pairs, args, started, _machine())
    print(text)
    if page is not None:
        page.write_text(replace_between_markers(page.read_text(), MARKERS, text))
        print(f"table → {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
