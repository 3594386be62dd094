"""docs/scripts/performance_table.py: a bench JSON becomes the table of docs/performance.md
(the figures written out by hand below), between the page's two marker lines."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "performance.md"


def _script():
    return importlib.import_module("performance_table")  # docs/scripts is on the path (conftest.py)


#: a bench JSON as `rths-ident bench --only engines components batch --json` writes it
#: (JSON object keys are text: the batch sizes come back as "32")
BENCH = {
    "machine": {"cpu": "AMD EPYC", "cores": 2, "python": "3.11.7", "jax": "0.10.2", "jaxlib": "0.10.2",
                "openseespy": "3.7.1.2", "small_loop_kernels": True, "xla_flags": "--xla_…"},
    "engines": {"duration_s": 31.2, "repeats": 5, "fused_wall_s": 0.04, "fused_wall_median_s": 0.05,
                "fused_realtime_factor": 780.0, "fused_realtime_factor_median": 624.0,
                "fused_us_per_fast_step": 0.32, "stepwise_duration_s": 10.0, "stepwise_wall_s": 0.645,
                "stepwise_realtime_factor": 15.5, "stepwise_realtime_factor_median": 13.3,
                "fused_over_stepwise": 50.3, "fast_steps_per_s_fused": 3.12e6},
    "batch": {"one_by_one_s_per_sim": {"min": 0.0066, "median": 0.007},
              "batches": {"32": {"s_per_sim_min": 0.00382, "s_per_sim_median": 0.00411,
                                 "speedup_min": 1.72, "speedup_median": 1.70}},
              "threaded": {}, "threads": 2, "duration_s": 5.0},
    "marths_study": {"runs": 32, "duration_s": 10.0, "batch": 32, "cores": 2, "threaded_batch": 8,
                     "one_by_one_runs_per_min": 1743.4, "batched_runs_per_min": 3083.0,
                     "batched_threads_runs_per_min": 3584.2},
    "components_per_fast_step": {"dAMB compensation": {"us_min": 0.047, "us_median": 0.053, "flops": 192.0}},
}

EXPECTED = """\
| figure | min | median | unit |
|---|---:|---:|---|
| lugre-frame, fused engine (31.2 s of El Centro, 5 runs) | 780 | 624 | × real time |
| lugre-frame, fused engine, per fast step | 0.32 | 0.4 | µs |
| lugre-frame, step-wise engine (10 s) | 15.5 | 13.3 | × real time |
| lugre-frame, one run at a time (5 s simulated) | 6.6 | 7 | ms per simulation |
| lugre-frame, vmap batch of 32 | 1.72 | 1.7 | × one at a time |
| maRTHS study of 32 runs × 10 s, one at a time | 1743 | — | runs per minute |
| maRTHS study of 32 runs × 10 s, batches of 32 | 3083 | — | runs per minute |
| maRTHS study of 32 runs × 10 s, batches of 8 on 2 threads | 3584 | — | runs per minute |
| fast step: dAMB compensation, 192 flops | 0.047 | 0.053 | µs per fast step |

Machine: AMD EPYC, 2 cores; Python 3.11.7, JAX 0.10.2, jaxlib 0.10.2, OpenSeesPy 3.7.1.2; XLA small-loop kernels on. idle
"""


def test_a_bench_json_renders_to_the_table_written_out_by_hand():
    assert _script().render(json.loads(json.dumps(BENCH)), "idle") == EXPECTED


def test_the_page_has_one_table_between_its_markers():
    module = _script()
    text = DOC.read_text(encoding="utf-8")
    assert text.count(module.START) == 1 and text.count(module.END) == 1
    between = text.split(module.START, 1)[1].split(module.END, 1)[0].strip().splitlines()
    assert between[:2] == ["| figure | min | median | unit |", "|---|---:|---:|---|"]
    assert between[-1].startswith("Machine: ")
    assert all(line.startswith("| ") and line.count(" | ") == 3 for line in between[2:-2]), between


def test_main_replaces_only_what_lies_between_the_markers(tmp_path):
    module = _script()
    doc = tmp_path / "page.md"
    doc.write_text(f"# Page\n\nbefore\n\n{module.START}\nold table\n{module.END}\n\nafter\n", encoding="utf-8")
    bench = tmp_path / "bench.json"
    bench.write_text(json.dumps(BENCH), encoding="utf-8")
    assert module.main([str(bench), "--doc", str(doc), "--note", "idle"]) == 0
    assert doc.read_text(encoding="utf-8") == (f"# Page\n\nbefore\n\n{module.START}\n{EXPECTED}{module.END}\n\n"
                                               "after\n")


@pytest.mark.parametrize("text", ["no markers\n", "<!-- bench table end -->\n<!-- bench table start -->\n",
                                  "<!-- bench table start -->\n<!-- bench table start -->\n<!-- bench table end -->\n"])
def test_a_page_without_its_two_markers_in_order_is_refused(text):
    with pytest.raises(ValueError, match="bench table start"):
        _script().replace_table(text, "| table |\n")


def test_the_fit_figures_give_the_first_call_and_the_compiled_repeats_per_case():
    """``bench --only fit``: two rows per case (the figures written out by hand)."""
    bench = {"machine": BENCH["machine"], "fit": {"method": "nls", "options": {}, "cases": [
        {"test": "gill", "model": "asymmetric-boucwen", "repeats": 2, "first_s": 41.26, "wall_min_s": 18.04,
         "wall_median_s": 19.96}]}}
    assert _script().rows(bench) == [
        ("fit --dataset gill --model asymmetric-boucwen (nls, defaults), first call (compiles)", 41.26, None, "s"),
        ("fit --dataset gill --model asymmetric-boucwen (nls, defaults), 2 compiled repeats", 18.04, 19.96, "s")]
    assert "| 41.3 | — | s |" in _script().render(bench)
