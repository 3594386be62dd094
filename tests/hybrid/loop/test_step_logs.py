"""The step-wise engine's preallocated logs: what they hand back equals the per-step logs
stacked by NumPy, and a step's row reads its own values after later steps."""

import numpy as np
import pytest

from rths_ident.hybrid.loop.step_logs import StepLogs, StepRow


def _log(k):
    return {"force": np.arange(4.0) * k, "identifier": {"energy": np.float64(k ** 2), "ok": np.bool_(k % 2)},
            "limit": np.int32(k)}


def test_the_columns_hold_the_per_step_logs_stacked():
    n = 7
    logs = StepLogs(n)
    for k in range(n):
        logs.store("fast", k, _log(k))
        logs.store("ns", k, {"u": np.array([0.5 * k])})
        logs.count = k + 1
    stacked = logs.stacked()
    expected = [_log(k) for k in range(n)]
    np.testing.assert_array_equal(stacked["fast"]["force"], np.stack([e["force"] for e in expected]))
    np.testing.assert_array_equal(stacked["fast"]["identifier"]["energy"], [k ** 2 for k in range(n)])
    assert stacked["fast"]["identifier"]["ok"].dtype == np.bool_ and stacked["fast"]["limit"].dtype == np.int32
    np.testing.assert_array_equal(stacked["ns"]["u"], 0.5 * np.arange(n)[:, None])
    # a copy: later writes do not change what was handed back
    logs.store("ns", 0, {"u": np.array([99.0])})
    assert stacked["ns"]["u"][0, 0] == 0.0


def test_a_row_reads_its_own_step_and_only_the_completed_rows_are_stacked():
    logs = StepLogs(5)
    for k in range(3):
        logs.store("fast", k, _log(k))
        logs.count = k + 1
    row = logs.row(1)
    assert isinstance(row, StepRow) and row.step == 1
    logs.store("fast", 2, _log(20))
    np.testing.assert_array_equal(row["fast"]["force"], np.arange(4.0))
    assert row["fast"]["identifier"]["energy"] == 1.0 and set(row["fast"]) == {"force", "identifier", "limit"}
    assert row.get("update") is None  # a section never stored
    assert logs.stacked()["fast"]["force"].shape == (3, 4)
    assert StepLogs(4).stacked() == {}


def test_a_ragged_log_is_refused():
    logs = StepLogs(3)
    logs.store("fast", 0, _log(0))
    with pytest.raises(ValueError):
        logs.store("fast", 1, {**_log(1), "force": np.zeros(5)})
    with pytest.raises(KeyError):
        logs.store("fast", 1, {"force": np.zeros(4)})
