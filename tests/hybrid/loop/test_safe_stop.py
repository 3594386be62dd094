"""The safe stop after a fault: the command profile in closed form, and the virtual
site (rc-frame, seed 000 Case 4 fast side) brought to rest through its own actuator."""

import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.hybrid.loop.engine import LoopAborted
from rths_ident.hybrid.loop.assembled import run_loop
from rths_ident.hybrid.loop.safe_stop import SafeStop
from rths_ident.scenarios import rc_frame as rc
from rths_ident.hybrid.fast_side.virtual_safe_stop import command_profile
from rths_ident.transport.errors import PeerClosedError


def test_slow_step_targets_hold_then_ramp_to_zero():
    targets = SafeStop(hold_s=0.05, ramp_s=0.1, settle_s=0.03).targets([2.0, -1.0], dt=0.02)
    # 0.05 s → 3 held steps (rounded up), 0.1 s → 5 ramp steps ending at exactly zero,
    # 0.03 s → 2 steps at zero
    np.testing.assert_allclose(targets[:, 0], [2, 2, 2, 1.6, 1.2, 0.8, 0.4, 0.0, 0.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(targets[:, 1], -0.5 * targets[:, 0], atol=1e-15)


def test_fast_command_profile_is_piecewise_linear_at_the_fast_rate():
    policy = SafeStop(hold_s=0.01, ramp_s=0.02, settle_s=0.005)
    profile = command_profile(0.01, ratio=4, dt_slow=0.02, policy=policy).ravel()
    # Δt_e = 5 ms: 2 held samples, 4 ramp samples, 1 settling sample, then zeros to fill
    # the last slow step
    np.testing.assert_allclose(profile, [0.01, 0.01, 0.0075, 0.005, 0.0025, 0.0, 0.0, 0.0], atol=1e-15)


def test_bad_policy_names_the_field():
    with pytest.raises(ParameterError, match="hold_s"):
        SafeStop(hold_s=-1.0)
    with pytest.raises(ParameterError, match="ramp_s"):
        SafeStop(ramp_s=float("nan"))


class _FailingNS:
    """Wraps a numerical substructure; its step ``at`` raises ``error``."""

    def __init__(self, ns, at, error):
        self.ns, self.at, self.error, self.k = ns, at, error, 0
        self.dt, self.n_interface = ns.dt, ns.n_interface

    def initial_target(self):
        return self.ns.initial_target()

    def apply_parameters(self, theta):
        self.ns.apply_parameters(theta)

    def close(self):
        self.ns.close()

    def step(self, feedback, ground_accel):
        if self.k == self.at:
            raise self.error
        self.k += 1
        return self.ns.step(feedback, ground_accel)


@pytest.mark.slow
def test_virtual_site_is_brought_to_rest_by_its_actuator_command():
    test = rc.build(rc.RCFrameConfig(duration=1.6, sensor_noise=False))
    error = PeerClosedError("127.0.0.1:8090 closed the connection")
    with pytest.raises(LoopAborted) as info:
        run_loop(test, "stepwise", variant="none", ns=_FailingNS(test.make_ns("none"), 60, error))
    message = str(info.value)
    assert "slow step 60 (t = 1.220 s) failed: 127.0.0.1:8090 closed the connection" in message
    assert "the 60 completed slow steps are kept" in message
    assert "What to do: the peer went away" in message
    assert info.value.logs["ns"]["displacement"].shape[0] == 60
    stop = info.value.safe_stop_logs
    command = stop["command"].ravel()
    # default policy at 4000 Hz: 0.5 s = 2000 samples held, 2 s = 8000 samples of ramp,
    # 0.25 s = 1000 samples at zero
    held = command[0]
    assert abs(held) > 1e-4  # the frame was moving: something to hold
    np.testing.assert_array_equal(command[:2000], held)
    np.testing.assert_allclose(command[2000:10000], held * (1 - np.arange(1, 8001) / 8000), rtol=1e-12,
                               atol=1e-18)
    assert command.size == 138 * 80 and not np.any(command[10000:])  # 11000 samples, whole slow steps
    # the servo-hydraulic actuator has no steady-state error: once settled the specimen is
    # back at zero displacement (to 0.1 % of the held command) and no limit fired
    measured = stop["measured"].ravel()
    assert abs(measured[-1]) < 1e-3 * abs(held)
    assert np.max(stop["limit"]) == 0


class _SiteWithOwnStop:
    """A site whose own safe stop returns the given measured displacement [m]."""

    def __init__(self, measured):
        self.measured = np.asarray(measured, dtype=float)

    def safe_stop(self, last_target, dt, policy):
        return {"measured": self.measured, "force": np.zeros_like(self.measured)}


def test_a_stop_whose_actuator_runs_away_is_not_called_at_rest():
    """Held at 5 mm then ramped to zero: at rest. The same ramp with the actuator
    diverging (an unstable servo loop: 2e-6 m × 1e110 = 2e104 m at the end) or not finite: FAILED, check by
    hand (the message says where the actuator ended)."""
    from rths_ident.hybrid.loop.safe_stop import bring_to_rest

    ramp = np.concatenate([np.full(10, 5e-3), np.linspace(5e-3, 0.0, 40), np.full(10, 2e-6)])
    settled = bring_to_rest(_SiteWithOwnStop(ramp), [5e-3], 0.02, SafeStop())
    assert settled.at_rest and settled.describe().startswith("The specimen was brought to rest")
    runaway = bring_to_rest(_SiteWithOwnStop(ramp * np.geomspace(1.0, 1e110, ramp.size)), [5e-3], 0.02, SafeStop())
    assert not runaway.at_rest
    assert "the actuator did not settle: measured displacement 2e+104 m at the end" in runaway.describe()
    assert "check the rig by hand" in runaway.describe()
    nan = bring_to_rest(_SiteWithOwnStop(np.append(ramp, np.nan)), [5e-3], 0.02, SafeStop())
    assert not nan.at_rest and "not finite" in nan.describe()
