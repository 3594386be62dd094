"""The live page's state on the server's thread: what it shows equals what the loop
logged, computed a second way (rths_ident.metrics, the hook's own guards)."""

import numpy as np
import pytest

from rths_ident import metrics
from rths_ident.hybrid.loop.model_updating import UpdateGuards, hook_decide, hook_init
from rths_ident.live import state as live_state
from rths_ident.live.state import LiveState, guard_reasons
from rths_ident.runner.events import RunEnded, StepDone, TestStarted

RATIO, STEPS, SLOW = 40, 300, 50.0


def _info(**extra):
    info = {"test": "synthetic", "engine": "stepwise", "paced": False, "slow_rate_hz": SLOW,
            "fast_rate_hz": SLOW * RATIO, "samples_per_step": RATIO, "steps": STEPS, "time_first_s": 1 / SLOW,
            "params": [{"name": "k", "unit": "N/m", "true": 2.0, "initial": 1.0}],
            "guards": {"lower_bounds": [0.0], "upper_bounds": [10.0], "max_relative_std": 0.05,
                       "freeze_until_s": 0.5, "update_every_slow_steps": 1, "require_converged": False},
            "response_names": ["floor1"], "reference": [[0.01 * k] for k in range(STEPS)], "limits": {"stroke_m": 0.1}}
    info.update(extra)
    return info


def _signals(seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(1, STEPS * RATIO + 1) / (SLOW * RATIO)
    target = 0.02 * np.sin(2 * np.pi * 1.1 * t)
    measured = 0.02 * np.sin(2 * np.pi * 1.1 * (t - 0.003)) + 1e-5 * rng.standard_normal(t.size)
    return target.reshape(STEPS, RATIO), measured.reshape(STEPS, RATIO)


def _log(target, measured, k):
    return {"fast": {"target": target[k], "measured": measured[k], "command": 1.01 * target[k],
                     "force": 1e3 * measured[k]},
            "update": {"estimate": np.array([2.0 - np.exp(-k / 30)]), "relative_std": np.array([0.2 * np.exp(-k / 40)]),
                       "applied": np.asarray(k / SLOW >= 0.5 and 0.2 * np.exp(-k / 40) <= 0.05),
                       "converged": np.asarray(False)},
            "ns": {"displacement": np.array([0.01 * k + 1e-4])}}


def _run(state, target, measured, upto=STEPS):
    state.apply(0.0, TestStarted("synthetic", _info()))
    for k in range(upto):
        state.apply(1.0 + k, StepDone(k, STEPS, _log(target, measured, k)))
    state.after_batch()


def test_j2_and_tau_so_far_equal_the_metrics_of_every_fast_sample_so_far():
    target, measured = _signals()
    state = LiveState()
    _run(state, target, measured, upto=120)
    j2 = metrics.j2_tracking_error(target[:120].ravel(), measured[:120].ravel())
    assert state.status["J2_percent"] == pytest.approx(j2, rel=1e-12)
    state.apply(2.0, RunEnded("complete"))
    tau = metrics.fei_delay(target[:120].ravel(), measured[:120].ravel(), SLOW * RATIO)
    assert state.status["tau_ms"] == pytest.approx(1e3 * tau, rel=1e-12)


def test_each_slow_step_is_one_point_with_the_largest_tracking_error_of_the_step():
    target, measured = _signals()
    state = LiveState()
    _run(state, target, measured)
    series = state.series
    error = measured - target
    largest = error[np.arange(STEPS), np.argmax(np.abs(error), axis=1)]
    np.testing.assert_array_equal(series["error"], largest)
    np.testing.assert_array_equal(series["target"], target[:, -1])
    np.testing.assert_allclose(series["t"], np.arange(1, STEPS + 1) / SLOW, rtol=1e-14)
    # ±2σ band of the estimate, and the NS response against its reference
    est, std = 2.0 - np.exp(-np.arange(STEPS) / 30), 0.2 * np.exp(-np.arange(STEPS) / 40)
    np.testing.assert_allclose(series["hi:k"], est + 2 * est * std, rtol=1e-14)
    np.testing.assert_allclose(np.array(series["ns:0"]) - np.array(series["ref:0"]), 1e-4, rtol=1e-9)


@pytest.mark.parametrize("every", [1, 7, 40])
def test_deltas_add_up_to_the_snapshot_also_when_the_history_is_halved(monkeypatch, every):
    """A page that applies the deltas as live.js does (halve what it has, then append)
    holds the server's series and loop, and only the first frame is a whole snapshot —
    also when several halvings fall between two deltas (every 40 steps)."""
    monkeypatch.setattr(live_state, "MAX_POINTS", 64)
    monkeypatch.setattr(live_state, "MAX_LOOP_POINTS", 100)
    target, measured = _signals()
    state = LiveState()
    state.apply(0.0, TestStarted("synthetic", _info()))
    received, loop, snapshots = None, None, 0

    def take(frame):
        nonlocal received, loop, snapshots
        if frame is None:
            return
        if frame["type"] == "snapshot":
            snapshots += 1
            received = {n: list(v) for n, v in frame["series"].items()}
            loop = {key: list(v) for key, v in frame["loop"].items()}
            return
        for _ in range(frame.get("halve", 0)):
            received = {n: v[::2] for n, v in received.items()}
        for _ in range(frame.get("loop_halve", 0)):
            loop = {key: v[::2] for key, v in loop.items()}
        for n, v in frame["series"].items():
            received[n] += v
        for key, v in frame["loop"].items():
            loop[key] += v

    for k in range(STEPS):
        state.apply(1.0 + k, StepDone(k, STEPS, _log(target, measured, k)))
        if k % every == 0:
            take(state.delta())
    take(state.delta())
    snapshot = state.snapshot()
    assert received == snapshot["series"] and loop == snapshot["loop"]
    assert snapshots == 1  # halving resends nothing
    assert len(received["t"]) <= 64 and state.stride > 1 and state.loop_stride > 1
    assert received["t"][-1] == pytest.approx(STEPS / SLOW)  # the last step is always shown


def test_the_guards_named_hold_the_update_back_exactly_when_the_hook_does():
    guards = UpdateGuards(lower_bounds=[0.5, 1.0], upper_bounds=[4.0, 9.0], max_relative_std=0.1,
                          freeze_until_s=0.4, require_converged=True)
    info = _info()["guards"] | {"lower_bounds": [0.5, 1.0], "upper_bounds": [4.0, 9.0], "max_relative_std": 0.1,
                                "freeze_until_s": 0.4, "require_converged": True}
    rng = np.random.default_rng(3)
    seen = set()
    for _ in range(200):
        estimate = rng.uniform(0.0, 10.0, 2)
        std = rng.uniform(0.0, 0.2, 2)
        if rng.uniform() < 0.05:
            estimate[0] = np.nan
        converged, k = bool(rng.uniform() < 0.8), int(rng.integers(0, 60))
        t = (k + 1) / SLOW
        _, applied = hook_decide(guards, hook_init(np.ones(2)), estimate, std, converged, t, k)
        reasons = guard_reasons(info, estimate, std, converged, t, k, ["a", "b"])
        assert bool(applied) == (reasons == []), (estimate, std, converged, t, reasons)
        seen.update(r.split(" ")[0] for r in reasons)
    assert {"frozen", "a", "b", "σ/θ", "identifier", "estimate"} <= seen  # every guard was exercised


def test_a_command_not_in_metres_is_not_drawn_as_one():
    """A rig's site logs its board command in the board's units: the page has no x_c series
    (no trace, no legend entry) and counts no command stroke for it (it drew 1e5 mm and
    1.3e6 % of the stroke limit)."""
    target, measured = _signals()
    state = LiveState()
    state.apply(0.0, TestStarted("rig", _info(command_is_displacement=False)))
    for k in range(10):
        state.apply(1.0 + k, StepDone(k, STEPS, _log(target, measured, k)))
    state.after_batch()
    series = state.snapshot()["series"]
    assert "command" not in series and series["target"][-1] == target[9, -1]
    limits = state.status["limits"]
    assert limits["command_m"]["peak"] is None
    assert limits["stroke_m"]["peak"] == pytest.approx(np.max(np.abs(measured[:10])))


def test_the_step_wise_engines_rows_show_as_the_dicts_do():
    """The step-wise engine hands each step's row of its preallocated columns (a
    ``StepRow`` mapping, not a dict): the page shows the same as from the dicts."""
    from rths_ident.hybrid.loop.step_logs import StepRow

    target, measured = _signals()
    columns = {group: {key: np.stack([np.asarray(_log(target, measured, k)[group][key]) for k in range(STEPS)])
                       for key in _log(target, measured, 0)[group]} for group in ("fast", "update", "ns")}
    from_dicts, from_rows = LiveState(), LiveState()
    _run(from_dicts, target, measured)
    from_rows.apply(0.0, TestStarted("synthetic", _info()))
    for k in range(STEPS):
        from_rows.apply(1.0 + k, StepDone(k, STEPS, StepRow(columns, k)))
    from_rows.after_batch()
    for name in ("target", "measured", "error", "est:k", "ns:0"):
        np.testing.assert_array_equal(from_rows.series[name], from_dicts.series[name])
