"""docs/scripts/realtime_table.py: a bench JSON's table of rates becomes the table of
docs/hybrid/realtime.md (cells written out by hand below), between the page's markers."""

from __future__ import annotations

import importlib
import json
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "hybrid" / "realtime.md"


def _script():
    return importlib.import_module("realtime_table")  # docs/scripts is on the path (conftest.py)


def _figures(median, p99, missed, **extra):
    runs = [{"missed_after_startup": m} for m in missed]
    return {"latency_us": {"median": median, "p99": p99}, "runs": runs, "steps_per_run": 5120,
            "startup_steps": 1024, "runs_without_a_miss_after_startup": sum(m == 0 for m in missed), **extra}


BENCH = {
    "machine": {"cpu": "AMD EPYC", "cores": 2, "python": "3.11.7", "jax": "0.10.2", "openseespy": "3.7.1.2"},
    "realtime_loop": {
        "duration_s": 4.0, "padding_s": 1.0, "load_average": {"before": [1.25, 1, 1], "after": [2.5, 2, 2]},
        "by_slow_rate": {
            "rc-frame native": {"50": _figures(1034.4, 1806.2, [0, 0, 0], fast_rate_hz=4000.0),
                                "1024": _figures(296.0, 514.0, [4, 2, 0], fast_rate_hz=4096.0)},
            "rc-frame opensees-tcp": {"50": {"skipped": "no OpenSeesPy"},
                                      "1024": _figures(700.2, 1500.7, [9, 1, 3], fast_rate_hz=4096.0,
                                                       wire_us={"p99": 212.6})},
            "host alone (empty step)": {"50": _figures(3.1, 120.4, [0, 0, 0], fast_rate_hz=4000.0),
                                        "1024": _figures(6.2, 303.7, [17, 0, 7], fast_rate_hz=4096.0)},
        },
    },
}


def test_each_case_and_rate_is_one_cell():
    table = _script().render(BENCH, note="a note")
    lines = table.splitlines()
    assert lines[0] == "| substructure | 50/4000 Hz | 1024/4096 Hz |"
    # the host alone first, wherever the bench put it
    assert lines[2] == ("| host alone (empty step) | 3 / 120; missed 0, 0, 0 (3 of 3 clean) | "
                        "6 / 304; missed 17, 0, 7 (1 of 3 clean) |")
    assert lines[3] == ("| rc-frame native | 1034 / 1806; missed 0, 0, 0 (3 of 3 clean) | "
                        "296 / 514; missed 4, 2, 0 (1 of 3 clean) |")
    assert lines[4] == ("| rc-frame opensees-tcp | skipped (no OpenSeesPy) | 700 / 1501; missed 9, 1, 3 (0 of 3 clean); "
                        "wire p99 213 |")
    assert "Load average (1 min) 1.2 before the bench's runs, 2.5 after." in lines[-1]
    assert "Each run: 1 s of start-up (zero ground motion) and 4 s of El Centro." in lines[-1]
    assert lines[-1].endswith("a note")


def test_the_table_goes_between_the_pages_markers(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("head\n<!-- realtime-rates:begin -->\nold\n<!-- realtime-rates:end -->\ntail\n")
    bench = tmp_path / "bench.json"
    bench.write_text(json.dumps(BENCH))
    assert _script().main([str(bench), "--doc", str(page)]) == 0
    text = page.read_text()
    assert "old" not in text and text.startswith("head\n<!-- realtime-rates:begin -->\n| substructure |")
    assert text.endswith("<!-- realtime-rates:end -->\ntail\n")


def test_a_bench_without_the_table_of_rates_is_refused(tmp_path, capsys):
    bench = tmp_path / "bench.json"
    bench.write_text(json.dumps({"realtime_loop": {}}))
    assert _script().main([str(bench), "--print"]) == 2
    assert "--slow-rates" in capsys.readouterr().err


def test_the_scripts_host_alone_is_the_benchs():
    from rths_ident.speed.realtime_loop import HOST_ALONE

    assert _script().HOST_ALONE == HOST_ALONE


def test_the_realtime_page_has_its_markers():
    text = DOC.read_text(encoding="utf-8")
    assert text.count("<!-- realtime-rates:begin -->") == 1 and text.count("<!-- realtime-rates:end -->") == 1
