"""Engine plumbing on a partitioned linear SDOF whose monolithic answer is known.

The NS is mass m, damper c and spring k1 integrated by explicit Newmark (β=0, γ=1/2);
the "specimen" is a spring k2 on the fast side, read by an ideal actuator. Partitioned
with an exact loop, this must equal the monolithic explicit Newmark of (m, c, k1+k2),
written here independently as a plain NumPy loop. The step-wise engine talks to the
same pieces through the site and numerical-substructure protocols.
"""

import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rths_ident  # noqa: F401
from rths_ident.hybrid.loop.engine import (
    LoopAborted,
    LoopState,
    ModelUpdater,
    SlowStepFunctions,
    make_fused_runner,
    run_stepwise,
)
from rths_ident.protocols import Site, SiteReading
from rths_ident.protocols import Estimate
from rths_ident.protocols import NumericalSubstructure

M, C, K1, K2, DT, RATIO = 2.0, 0.3, 50.0, 30.0, 0.01, 8


def _fast_chunk(fast_params, fast_state, target):
    def body(s, i):
        x = s + (target[0] - s) * (i + 1) / RATIO  # ideal ramp to the target
        return x, K2 * x

    x_end, forces = jax.lax.scan(body, fast_state, jnp.arange(RATIO))
    return x_end, {"force": forces}, forces[-1:]


def _ns_step(ns_params, ns_state, force, ag):
    u, v, a = ns_state
    # corrector of explicit Newmark for the step whose displacement u was imposed
    a_new = (-M * ag - force[0] - ns_params["k1"] * u - C * (v + 0.5 * DT * a)) / (M + 0.5 * DT * C)
    v_new = v + 0.5 * DT * (a + a_new)
    u_next = u + DT * v_new + 0.5 * DT**2 * a_new  # predictor for the next step
    return (u_next, v_new, a_new), jnp.stack([u_next]), {"u": u}


def _identify(fast_params, fast_state):
    """A stand-in identifier that 'identifies' k1 = 2·K1 from the start."""
    return Estimate(jnp.array([2.0 * K1]), jnp.array([0.0]), jnp.asarray(True))


def _hook(hook_state, estimate, k):
    """Updates once, at slow step UPDATE_AT."""
    return hook_state, k == UPDATE_AT


def _apply(ns_params, theta):
    return {"k1": theta[0]}


UPDATE_AT = 150
FUNCS = SlowStepFunctions(_fast_chunk, _identify, _hook, _apply, _ns_step)


def _monolithic(ag, k1_after=None):
    u, v, a = 0.0, 0.0, 0.0
    k1 = K1
    out = []
    for k in range(len(ag)):
        if k1_after is not None and k == UPDATE_AT:
            k1 = k1_after
        u_new = u + DT * v + 0.5 * DT**2 * a
        a_new = (-M * ag[k] - (k1 + K2) * u_new - C * (v + 0.5 * DT * a)) / (M + 0.5 * DT * C)
        v = v + 0.5 * DT * (a + a_new)
        u, a = u_new, a_new
        out.append(u)
    return np.array(out)


def _initial():
    return LoopState(ns_state=(0.0, 0.0, 0.0), fast_state=jnp.asarray(0.0), slow_input=jnp.zeros(1),
                     ns_params={"k1": jnp.asarray(K1)}, hook_state=())


class _SpringSite:
    """The fast chunk behind the Site protocol."""

    n_interface = 1

    def __init__(self):
        self.state = jnp.asarray(0.0)
        self._chunk = jax.jit(lambda s, t: _fast_chunk(None, s, t))

    def step(self, target):
        self.state, log, force = self._chunk(self.state, jnp.asarray(target))
        return SiteReading(np.asarray(log["force"][-1:]) / K2, np.asarray(force), {"force": np.asarray(log["force"])},
                           _identify(None, None))

    def close(self):
        pass


class _SdofNS:
    """The explicit-Newmark SDOF behind the NumericalSubstructure protocol."""

    dt = DT
    n_interface = 1

    def __init__(self):
        self.state, self.params = (0.0, 0.0, 0.0), {"k1": jnp.asarray(K1)}
        self.closed = False

    def initial_target(self):
        return np.zeros(1)

    def step(self, feedback, ground_accel):
        self.state, target, log = _ns_step(self.params, self.state, jnp.asarray(feedback), ground_accel)
        return np.asarray(target), {"u": np.asarray(log["u"])}

    def apply_parameters(self, estimate):
        self.params = _apply(self.params, jnp.asarray(estimate))

    def close(self):
        self.closed = True


def _ground(n=400):
    t = np.arange(n) * DT
    return np.sin(2 * np.pi * 1.3 * t) * np.exp(-0.2 * t)


def test_protocol_objects_satisfy_the_protocols():
    assert isinstance(_SpringSite(), Site)
    assert isinstance(_SdofNS(), NumericalSubstructure)


def test_partitioned_equals_monolithic_and_fused_equals_stepwise():
    ag = _ground()
    _, logs = make_fused_runner(FUNCS)(None, _initial(), jnp.asarray(ag))
    # the NS logs the displacement whose force closed each step; k1 doubles at step UPDATE_AT
    reference = _monolithic(ag, k1_after=2.0 * K1)
    np.testing.assert_allclose(np.asarray(logs["ns"]["u"]), reference, rtol=1e-10, atol=1e-14)
    assert np.asarray(logs["update"]["applied"]).sum() == 1
    # without the update the answer differs: the update really reached the NS
    assert np.max(np.abs(reference - _monolithic(ag))) > 1e-3 * np.max(np.abs(reference))
    logs_s = run_stepwise(_SpringSite(), _SdofNS(), ag, updater=ModelUpdater(_hook, ()))
    np.testing.assert_allclose(logs_s["ns"]["u"], np.asarray(logs["ns"]["u"]), rtol=1e-12, atol=1e-15)
    assert logs_s["fast"]["force"].shape == (400, RATIO)
    assert logs_s["update"]["applied"].sum() == 1


def test_stepwise_abort_keeps_logs():
    ag = np.ones(50)
    with pytest.raises(LoopAborted) as info:
        run_stepwise(_SpringSite(), _SdofNS(), ag, check=lambda log, k: "stop" if k == 9 else None)
    assert info.value.slow_index == 9
    assert info.value.logs["ns"]["u"].shape == (10,)
    np.testing.assert_allclose(info.value.logs["ns"]["u"], _monolithic(ag)[:10], rtol=1e-10, atol=1e-14)


def test_a_failing_substructure_aborts_with_the_logs_so_far():
    class Failing(_SdofNS):
        def step(self, feedback, ground_accel):
            if self.calls == 5:
                raise ConnectionError("peer went away")
            self.calls += 1
            return super().step(feedback, ground_accel)

    ns = Failing()
    ns.calls = 0
    site = _SpringSite()
    with pytest.raises(LoopAborted, match=r"slow step 5 \(t = 0\.060 s\) failed: peer went away") as info:
        run_stepwise(site, ns, np.ones(20))
    assert info.value.logs["ns"]["u"].shape == (5,)
    # the default safe stop held the last target 0.5 s (50 steps), ramped it to zero in 2 s
    # (200 steps) and kept it there 0.25 s (25 steps): the spring's force follows the
    # command exactly (ideal ramp)
    stop = info.value.safe_stop_logs["force"][:, -1] / K2
    held = _monolithic(np.ones(20))[5]  # the target of the failed step 5
    assert stop.shape == (275,) and abs(held) > 1e-6
    np.testing.assert_allclose(stop[:50], held, rtol=1e-12)
    np.testing.assert_allclose(stop[50:250], held * (1 - np.arange(1, 201) / 200), rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(stop[250:], 0.0)
    assert "brought to rest" in str(info.value) and "5 completed slow steps are kept" in str(info.value)


def test_without_a_safe_stop_the_site_is_left_alone():
    site = _SpringSite()
    with pytest.raises(LoopAborted, match="left as it was") as info:
        run_stepwise(site, _SdofNS(), np.ones(20), check=lambda log, k: "limit" if k == 3 else None,
                     safe_stop=None)
    assert info.value.safe_stop_logs is None
    assert "slow step 3 (t = 0.040 s) stopped: limit" in str(info.value)


def test_a_stop_request_brings_the_site_to_rest_after_the_step_it_was_set_in():
    """STOP (or Ctrl-C) during slow step 7: step 7 completes and is kept, the specimen is
    brought to rest from the target it was at (the same safe stop as a fault and as
    Ctrl-C), and it ends as Ctrl-C does: OperatorStopped, a stop by the operator, not a
    failure."""
    from rths_ident.operator_stop import OperatorStopped  # noqa: PLC0415
    from rths_ident.hybrid.loop.stop_request import StopRequest  # noqa: PLC0415

    ag = np.ones(40)
    stop = StopRequest()
    seen = []

    def on_step(k, log):  # a watcher on the loop's thread that presses STOP in step 7
        seen.append(k)
        if k == 7:
            stop.set("test")

    with pytest.raises(OperatorStopped) as info:
        run_stepwise(_SpringSite(), _SdofNS(), ag, on_step=on_step, stop=stop)
    assert seen == list(range(8))  # the loop stopped at the end of step 7, reported like every step
    assert info.value.slow_index == 7
    assert str(info.value).startswith("stopped by the operator (test) at slow step 7, t = 0.080 s.")
    assert "brought to rest" in str(info.value) and "8 completed slow steps are kept" in str(info.value)
    np.testing.assert_allclose(info.value.logs["ns"]["u"], _monolithic(ag)[:8], rtol=1e-10, atol=1e-14)
    # held at the target of step 7 (what the site was last told), then ramped to zero
    force = info.value.safe_stop_logs["force"][:, -1] / K2
    held = _monolithic(ag)[7]
    np.testing.assert_allclose(force[:50], held, rtol=1e-12)
    np.testing.assert_array_equal(force[250:], 0.0)
    assert info.value.time == pytest.approx(0.080) and info.value.at_rest
    assert not stop.set("again")  # the first one stays
    assert stop.how == "test"


def test_a_stop_request_never_set_changes_nothing():
    from rths_ident.hybrid.loop.stop_request import StopRequest  # noqa: PLC0415

    ag = _ground(60)
    plain = run_stepwise(_SpringSite(), _SdofNS(), ag)
    watched = run_stepwise(_SpringSite(), _SdofNS(), ag, stop=StopRequest())
    np.testing.assert_array_equal(plain["ns"]["u"], watched["ns"]["u"])


# ------------------------------------------------------------------ interlocks in the loop


def _warm_site():
    site = _SpringSite()
    site._chunk(site.state, jnp.zeros(1))  # compiled before the clock of any step runs
    return site


def test_the_watchdog_trips_on_a_slow_step_and_not_on_the_clean_run():
    """A numerical substructure that stalls 1.5 s in slow step 5 trips the 1 s deadline
    there: the loop stops through the same safe stop, the trip names the step, the time
    and a wall-clock time of at least the stall; the same run without the stall does not."""
    from rths_ident.hybrid.fast_side.interlocks import InterlockMonitor, Interlocks

    class Stalling(_SdofNS):
        calls = 0

        def step(self, feedback, ground_accel):
            if self.calls == 5:
                time.sleep(1.5)
            self.calls += 1
            return super().step(feedback, ground_accel)

    limits = Interlocks(deadline=1.0)
    logs = run_stepwise(_warm_site(), _SdofNS(), np.ones(20), monitor=InterlockMonitor(limits, DT))
    assert logs["ns"]["u"].shape == (20,)
    with pytest.raises(LoopAborted) as info:
        run_stepwise(_warm_site(), Stalling(), np.ones(20), monitor=InterlockMonitor(limits, DT))
    trip = info.value.trip
    assert (trip.name, trip.step, trip.limit) == ("deadline", 5, 1.0) and trip.value >= 1.5
    assert trip.time == pytest.approx(6 * DT)
    assert str(info.value).startswith(f"interlock deadline tripped: wall-clock time of the step: {trip.value:.6g} s "
                                      "beyond the limit 1 s at slow step 5 (t = 0.060 s)")
    assert info.value.safe_stop_logs["force"].shape == (275, RATIO)  # held, ramped, held at zero
    assert "5 completed slow steps are kept" not in str(info.value)  # step 5 itself completed before the check
    assert "6 completed slow steps are kept" in str(info.value)


def test_ns_divergence_trips_on_a_non_finite_target_and_beyond_its_bound():
    """The NS's next target NaN at step 4 (a diverged solver) trips the NS-divergence
    interlock there; a bound below the clean run's largest response trips at the first step
    whose next target crosses it (the step before the response u_k that crosses it, found
    here from the monolithic answer)."""
    from rths_ident.hybrid.fast_side.interlocks import InterlockMonitor, Interlocks

    class Diverging(_SdofNS):
        calls = 0

        def step(self, feedback, ground_accel):
            target, log = super().step(feedback, ground_accel)
            self.calls += 1
            return (np.full_like(target, np.nan) if self.calls == 5 else target), log

    ag = np.ones(20)
    with pytest.raises(LoopAborted) as info:
        run_stepwise(_SpringSite(), Diverging(), ag, monitor=InterlockMonitor(Interlocks(), DT))
    assert (info.value.trip.name, info.value.trip.step) == ("ns_divergence", 4)
    assert "next target not finite" in str(info.value)

    u = _monolithic(np.ones(21))  # the clean run's responses and its last next target, independently
    bound = 0.5 * np.max(np.abs(u))
    first = int(np.flatnonzero(np.abs(u) > bound)[0])

    class LoggingU(_SdofNS):
        def step(self, feedback, ground_accel):
            target, log = super().step(feedback, ground_accel)
            return target, {"u": log["u"], "displacement": log["u"]}

    with pytest.raises(LoopAborted) as info:
        run_stepwise(_SpringSite(), LoggingU(), ag, monitor=InterlockMonitor(Interlocks(ns_displacement=bound), DT))
    trip = info.value.trip
    assert (trip.name, trip.step, trip.detail) == ("ns_divergence", first - 1, "next target entry 0")
    assert trip.value == pytest.approx(u[first], rel=1e-10) and trip.limit == bound
    logs = run_stepwise(_SpringSite(), LoggingU(), ag,
                        monitor=InterlockMonitor(Interlocks(ns_displacement=1.01 * np.max(np.abs(u))), DT))
    assert logs["ns"]["u"].shape == (20,)


def test_a_ctrl_c_that_surfaces_as_a_c_calls_error_is_the_operators_stop():
    """Ctrl-C landing inside a C call comes back as that call's SystemError with the
    KeyboardInterrupt as its context: the loop ends it as the operator's stop (the same
    safe stop, OperatorStopped), not as a fault."""
    from rths_ident.operator_stop import OperatorStopped  # noqa: PLC0415

    class Interrupted(_SdofNS):
        calls = 0

        def step(self, feedback, ground_accel):
            self.calls += 1
            if self.calls == 4:
                try:
                    raise KeyboardInterrupt
                except KeyboardInterrupt:
                    raise SystemError("<function> returned a result with an exception set")  # noqa: B904
            return super().step(feedback, ground_accel)

    with pytest.raises(OperatorStopped) as info:
        run_stepwise(_SpringSite(), Interrupted(), np.ones(20))
    assert info.value.slow_index == 3 and "brought to rest" in str(info.value)


def _random_estimates(n: int, p: int, seed: int = 7):
    """Estimates that exercise every guard: NaN, ±inf, out of bounds, too uncertain,
    NaN/inf relative std, converged or not."""
    from rths_ident.protocols import Estimate  # noqa: PLC0415

    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        theta = rng.uniform(0.0, 12.0, p)
        rel = rng.uniform(0.0, 0.2, p)
        kind = rng.integers(0, 8)
        if kind == 0:
            theta[rng.integers(p)] = rng.choice([np.nan, np.inf, -np.inf])
        elif kind == 1:
            rel[rng.integers(p)] = rng.choice([np.nan, np.inf, -np.inf])
        out.append(Estimate(theta, rel, np.asarray(bool(rng.integers(0, 2))), np.asarray(bool(rng.integers(0, 2)))))
    return out


@pytest.mark.parametrize("guards", [
    dict(lower_bounds=[1.0, 1.0, 2.0], upper_bounds=[10.0, 11.0, 9.0], max_relative_std=0.1, freeze_until_s=0.05),
    dict(lower_bounds=[1.0, 1.0, 2.0], upper_bounds=[10.0, 11.0, 9.0], update_every_slow_steps=3,
         require_converged=True),
    dict(lower_bounds=[0.0, 0.0, 0.0], upper_bounds=[20.0, 20.0, 20.0], freeze_until_s=np.inf),
])
def test_the_host_guards_decide_as_the_compiled_hook(guards):
    """GuardsUpdater (the guards on the host) against ModelUpdater (hook_decide compiled):
    the same applied flags, update logs and hook state, bit for bit, over 400 steps."""
    from rths_ident.hybrid.loop.engine import GuardsUpdater  # noqa: PLC0415
    from rths_ident.hybrid.loop.model_updating import UpdateGuards, hook_decide, hook_init  # noqa: PLC0415

    guards = UpdateGuards(**guards)
    dt = 1.0 / 1024.0

    def hook(hook, estimate, k):
        hook_state, g = hook
        hook_state, applied = hook_decide(g, hook_state, estimate.theta, estimate.relative_std, estimate.converged,
                                          (k + 1) * dt, k)
        return (hook_state, g), applied

    compiled = ModelUpdater(hook, (hook_init([2.0, 3.0, 4.0]), guards))
    host = GuardsUpdater(guards, hook_init([2.0, 3.0, 4.0]), dt)
    applied_any = rejected_any = False
    for k, estimate in enumerate(_random_estimates(400, 3)):
        a, b = compiled.step(estimate, k), host.step(estimate, k)
        assert a == b, k
        applied_any |= a
        rejected_any |= not a
        for key in compiled.log:
            np.testing.assert_array_equal(np.asarray(host.log[key]), np.asarray(compiled.log[key]), err_msg=key)
            assert np.asarray(host.log[key]).dtype == np.asarray(compiled.log[key]).dtype
    (state_c, _), (state_h, _) = compiled.state, host.state
    for field in state_c._fields:
        np.testing.assert_array_equal(np.asarray(getattr(state_h, field)), np.asarray(getattr(state_c, field)),
                                      err_msg=field)
    assert rejected_any
    assert applied_any == np.isfinite(guards.freeze_until_s)
