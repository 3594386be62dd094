"""The live page in a real browser, as an operator uses it: Debian's chromium, headless,
driven by Playwright (never a downloaded browser). A test of ``rths-ident run … --live``
runs in its own process, paced in real time; the page's values are checked against the
test record the run wrote.

Skipped, with the reason, only where no Chromium or no Playwright is installed
(``scripts/_setup_env.sh`` installs both); in CI (``RTHS_REQUIRE_BROWSER=1``, set by
``.ci/run``) a missing one fails them instead.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

import numpy as np
import pytest

from rths_ident.records import read_test_record

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = os.environ.get("RTHS_IDENT_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]


#: CI sets it (.ci/run): there, a missing browser fails these tests instead of skipping them
REQUIRED = os.environ.get("RTHS_REQUIRE_BROWSER") == "1"


def _skip_or_fail(reason: str):
    if REQUIRED:
        pytest.fail(f"RTHS_REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    try:
        import playwright.sync_api as playwright_api  # noqa: PLC0415
    except ImportError:
        _skip_or_fail("Playwright is not installed (pip install playwright; the test extra and "
                      "scripts/_setup_env.sh install it)")
    if not Path(CHROMIUM).is_file():
        _skip_or_fail(f"no Chromium at {CHROMIUM} (apt-get install chromium; scripts/_setup_env.sh does)")
    with playwright_api.sync_playwright() as driver:
        # a fresh profile per run; bypass_csp lets the test read the page's state (the page's
        # own policy forbids evaluated strings)
        context = driver.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=CHROMIUM, headless=True, args=ARGS,
            viewport={"width": 1440, "height": 900}, bypass_csp=True)
        yield context
        context.close()


def _finish(process: subprocess.Popen, timeout: float = 240) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=timeout)
    return process.returncode, out, err


def _state(page) -> dict:
    return page.evaluate("""() => { const L = window.rthsLive; return {series: L.series, status: L.status,
        info: L.info, draws: L.draws, latencies: L.latencies, connected: L.connected}; }""")


def _wait(page, condition: str, timeout_s: float = 180):
    page.wait_for_function(f"() => {{ const L = window.rthsLive; return !!(L && L.status && ({condition})); }}",
                           timeout=timeout_s * 1e3, polling=100)


def _run_args(record: Path, duration: float) -> list[str]:
    return ["run", "lugre-frame", "--engine", "stepwise", "--realtime", "--duration", str(duration), "--pad", "1",
            "--no-compare", "--quiet", "--live", "--live-port", "0", "--test-record", str(record)]


def _assert_page_matches_record(state: dict, record) -> None:
    """Every slow step the page shows equals the record's (its last fast sample; the
    largest tracking error of the step; the estimate; the NS response)."""
    series, info = state["series"], state["info"]
    t = np.array(series["t"])
    steps = np.rint((t - info["time_first_s"]) * info["slow_rate_hz"]).astype(int)
    assert steps.size > 20 and np.all(np.diff(steps) > 0)
    np.testing.assert_allclose(t, record.time[steps], rtol=1e-12)
    target, measured = record.steps["fast/target"][steps], record.steps["fast/measured"][steps]
    np.testing.assert_array_equal(series["target"], target[:, -1])
    np.testing.assert_array_equal(series["measured"], measured[:, -1])
    error = measured - target
    np.testing.assert_array_equal(series["error"], error[np.arange(steps.size), np.argmax(np.abs(error), axis=1)])
    np.testing.assert_array_equal(series["est:sigma0"], record.steps["update/estimate"][steps, 0])
    np.testing.assert_array_equal(series["ns:2"], record.steps["ns/displacement"][steps, 2])


@pytest.fixture(scope="module")
def stopped_run(browser, tmp_path_factory, start_live) -> dict:
    """One paced run of lugre-frame (1 s padding + 20 s) watched as an operator would: a
    first tab from the start, a third opened and closed mid-test, a second opened late
    that presses STOP. What the tabs and the command showed, for the tests below."""
    folder = tmp_path_factory.mktemp("stopped-run")
    record_path = folder / "record.h5"
    process, url = start_live(_run_args(record_path, 20.0), folder)
    try:
        first, second, third = browser.new_page(), browser.new_page(), browser.new_page()
        first.goto(url)
        third.goto(url)
        _wait(first, "L.series.t && L.series.t.length >= 60")
        _wait(third, "L.series.t && L.series.t.length >= 60")
        third.close()  # mid-test
        closed_at = len(_state(first)["series"]["t"])
        _wait(first, "L.series.t && L.series.t.length >= 100")  # 2 s of the paced run on the screen
        second.goto(url)  # opened late: it gets the history
        _wait(second, "L.series.t && L.series.t.length >= 150")
        early = _state(second)
        shown_before_stop = len(_state(first)["series"]["t"])
        second.click("#stop")
        clicked_at = _state(second)["status"]["step"]
        _wait(first, "L.status.state === 'ended'", 60)
        final = _state(first)
        texts = {"state": first.inner_text("#state"), "log": first.inner_text("#log")}
        watched = _state(second)
        code, out, err = _finish(process)
        first.close()
        second.close()
    finally:
        if process.poll() is None:
            process.kill()
    return {"record_path": record_path, "code": code, "err": err, "early": early, "closed_at": closed_at,
            "shown_before_stop": shown_before_stop, "clicked_at": clicked_at, "final": final, "texts": texts,
            "watched": watched}


def test_watch_a_paced_test_in_two_tabs_and_stop_it_from_the_second(stopped_run):
    run = stopped_run
    record_path, code, err, early, final = (run[k] for k in ("record_path", "code", "err", "early", "final"))
    assert early["series"]["t"][0] == pytest.approx(early["info"]["time_first_s"])  # the late tab has the history
    assert early["status"]["state"] == "running" and early["status"]["stop_available"]
    assert run["shown_before_stop"] >= 150  # the traces grow in the first tab too
    assert code == 130, err  # the operator's stop, as Ctrl-C's (docs/endings.md)
    assert "rths-ident: stopped by the operator (STOP on the live page) at slow step " in err
    assert f"; the specimen was brought to rest; test record → {record_path}" in err
    record = read_test_record(record_path)
    stops = [e for e in record.events if e.kind == "stop"]
    assert len(stops) == 1 and not record.errors() and not record.complete
    stopped_at = stops[0].step
    assert stops[0].message.startswith(f"stopped by the operator (STOP on the live page) at slow step {stopped_at}, t = ")
    assert "The specimen was brought to rest: command held 0.5 s, then ramped to zero over 2 s" in stops[0].message
    assert record.status().startswith("not complete: stopped by the operator")
    assert record.n_steps == stopped_at + 1  # every step up to the one it stopped at
    # within a slow step of the request: the page showed step `clicked_at` when STOP went;
    # the loop ran at most as far as the page lags behind it (≤ 0.5 s = 25 steps)
    clicked_at = run["clicked_at"]
    assert clicked_at <= stopped_at <= clicked_at + 25
    # the page shows the final state, from both tabs' point of view, and matches the record
    assert final["status"]["how"] == "stopped" and "stopped by the operator" in final["status"]["reason"]
    assert final["status"]["stop_requested"]["accepted"]
    assert run["texts"]["state"].startswith("stopped")
    assert "STOP: by the operator (STOP on the live page)" in run["texts"]["log"]
    _assert_page_matches_record(final, record)
    assert final["status"]["step"] <= stopped_at
    # J2 over every fast sample the page saw equals the metric on the record's samples
    from rths_ident.metrics import j2_tracking_error  # noqa: PLC0415

    shown = final["status"]["step"] + 1
    j2 = j2_tracking_error(record.steps["fast/target"][:shown].ravel(), record.steps["fast/measured"][:shown].ravel())
    assert final["status"]["J2_percent"] == pytest.approx(j2, rel=1e-9)
    # the tab in front was drawn as the test went (a tab in the background is drawn when shown);
    # the update rate and loop-to-screen latency are measured by docs/scripts/live_page.py
    watched = run["watched"]
    assert watched["draws"] > 10 and len(watched["latencies"]) > 10


def test_a_tab_closed_mid_test_changes_nothing(stopped_run):
    """The third tab closed at step ~60: the first tab kept growing to the stop, every
    step it shows equals the record's, and the record has every step up to the stop."""
    final, record = stopped_run["final"], read_test_record(stopped_run["record_path"])
    assert len(final["series"]["t"]) > stopped_run["closed_at"] + 90
    _assert_page_matches_record(final, record)
    stop = [e for e in record.events if e.kind == "stop"][0]
    assert record.n_steps == stop.step + 1 and not record.errors()


def test_the_stopped_record_replays(browser, stopped_run, tmp_path, start_live):
    record_path = stopped_run["record_path"]
    record = read_test_record(record_path)
    replay, url = start_live(["show", str(record_path), "--live", "--speed", "max", "--live-port", "0"], tmp_path)
    try:
        tab = browser.new_page()
        tab.goto(url)
        _wait(tab, f"L.status.state === 'ended' && L.series.t.length === {record.n_steps}", 120)
        state = _state(tab)
        assert state["status"]["how"] == "stopped" and state["status"]["replay"]
        assert "stopped by the operator (STOP on the live page)" in state["status"]["reason"]
        assert tab.is_disabled("#stop")  # a replay has nothing to stop
        _assert_page_matches_record(state, record)
        tab.close()
    finally:
        replay.send_signal(signal.SIGINT)  # ends serving
        code, _, err = _finish(replay, 30)
    assert code == 0, err


def test_a_rig_page_shows_what_the_rig_has_on_the_records_clock(browser, tmp_path, start_live):
    """rig-sdof on the emulated board at the servo's pace: the page has no command trace
    (the board's command is in its own units) and no legend entry for one, and its clock
    is the record's (the rig's step k is t = k·Δt, as its stop sentence says)."""
    record_path = tmp_path / "rig.h5"
    process, url = start_live(["run", "rig-sdof", "--site", "emulator:timed", "--duration", "3", "--quiet", "--live",
                           "--live-port", "0", "--test-record", str(record_path)], tmp_path)
    try:
        tab = browser.new_page()
        tab.goto(url)
        _wait(tab, "L.status.state === 'ended'", 120)
        state = _state(tab)
        legend = tab.eval_on_selector_all("#c-tracking .u-legend .u-series .u-label", "els => els.map(e => e.textContent)")
        tab.close()
        code, _, err = _finish(process, 120)
    finally:
        if process.poll() is None:
            process.kill()
    assert code == 0, err
    assert "measured x_m" in legend and "target x_t" in legend and "command x_c" not in legend, legend
    assert "command" not in state["series"]
    record = read_test_record(record_path)
    last = state["status"]["step"]
    assert last == record.n_steps - 1
    assert state["status"]["t"] == pytest.approx(record.time[last], rel=1e-12)
    t = np.array(state["series"]["t"])
    np.testing.assert_allclose(t, record.time[:t.size], rtol=1e-12)
    np.testing.assert_array_equal(state["series"]["measured"], record.steps["fast/measured"][:t.size, -1])
