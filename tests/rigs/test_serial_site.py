"""The serial backend against the emulated board on a pseudo-terminal: the handshake, a
hybrid free-vibration run, and each protocol fault giving a clear error (naming the port
and the command) while the completed steps stay available."""

import os
import re

import numpy as np
import pytest

from rths_ident.hybrid.loop.engine import LoopAborted, run_stepwise
from rths_ident.rigs.emulator import RigEmulator
from rths_ident.rigs.errors import RigDisconnected, RigProtocolError, RigResetError, RigTimeout
from rths_ident.rigs.serial_site import SerialRigDriver, open_serial_site
from rths_ident.structures.partitioned_newmark import PartitionedNewmark

DT = 0.01


def _case1_ns():
    return PartitionedNewmark([[34.0]], [[8.5]], [[30.0]], [0], DT, displacement0=[0.01], specimen_stiffness=1540.0)


def test_handshake_reports_the_device():
    with RigEmulator() as emu:
        driver = SerialRigDriver(emu.port, timeout=2.0)
        assert driver.info == {"version": 1, "device": "EMU-SG90-ACS712", "adc_bits": 10, "settle_ms": 40}
        driver.close()


def test_static_reading_is_eq_4_1_of_the_spring_force():
    """Held still (no velocity, no acceleration) and without noise, the count is eq. 4-1's
    inverse of K_e·u rounded, so the host's force is within half a count (0.331 N) of K_e·u."""
    with RigEmulator(noise_counts=0.0) as emu:
        site = open_serial_site(emu.port, DT, timeout=2.0)
        for u in (0.002, 0.004, 0.006, 0.008):
            for x in np.linspace(u - 0.002, u, 21)[1:]:  # 0.1 mm increments: quasi-static
                site.step([x])
            for _ in range(3):  # held: no velocity, no acceleration
                reading = site.step([u])
            assert reading.force[0] == pytest.approx(1540.0 * u, abs=0.662 / 2 + 1e-9)
            assert reading.log["force_raw"][0] == round((1540.0 * u + 339.05) / 0.662)
        site.close()
    assert "ramped to zero" in site.events[-1]


def test_hybrid_free_vibration_first_peaks():
    """Case 1 against the emulated rig: first peaks within 0.43 mm of digest 002's
    reference 8.283 mm @ 0.93 s and 6.861 mm @ 1.86 s — 0.43 mm is one ADC count
    (0.662 N) of specimen force at K_e = 1540 N/m, the rig's force resolution; the
    dead band and noise add a little apparent damping, hence the lower peaks."""
    with RigEmulator() as emu:
        site = open_serial_site(emu.port, DT, timeout=2.0)
        logs = run_stepwise(site, _case1_ns(), np.zeros(201))
        site.close()
    t, u = logs["ns"]["time"], logs["ns"]["displacement"][:, 0]
    i = np.flatnonzero((u[1:-1] > u[:-2]) & (u[1:-1] >= u[2:])) + 1
    assert t[i][:2] == pytest.approx([0.93, 1.86], abs=0.015)
    assert u[i][:2] * 1e3 == pytest.approx([8.283, 6.861], abs=0.43)
    # the first reading is the static force at u0 (K_e·u0 = 15.4 N) to one count
    assert logs["fast"]["force"][0, 0] == pytest.approx(15.4, abs=0.662)


def _faulty_run(fault, at_move=5, steps=20, timeout=0.5):
    with RigEmulator() as emu:
        emu.inject(fault, at_move)
        site = open_serial_site(emu.port, DT, timeout=timeout)
        with pytest.raises(LoopAborted) as caught:
            run_stepwise(site, _case1_ns(), np.zeros(steps))
        site.close()
        return caught.value, site, emu.port


@pytest.mark.parametrize("fault, error, text", [
    ("silence", RigTimeout, r"no reply to move #5 to .* within 0.5 s"),
    ("garbage", RigProtocolError, r"bad reply to move #5"),
    ("reset", RigResetError, r"the device reset during the test .* in reply to move #5"),
    # the emulator drops the port as move #5 is sent: the write itself may already fail
    ("disconnect", RigDisconnected, r"port failed while (waiting for the reply to|sending) move #5"),
])
def test_fault_gives_clear_error_and_keeps_completed_steps(fault, error, text):
    aborted, site, port = _faulty_run(fault)
    cause = aborted.__cause__
    assert isinstance(cause, error)
    assert port in str(cause) and "step 4" in str(cause)
    assert re.search(text, str(cause)), str(cause)
    assert aborted.slow_index == 4
    # the four completed steps are in the loop's logs and in the site's record, the same values
    assert aborted.logs["fast"]["force"].shape == (4, 1)
    assert site.record()["force"].shape == (4, 1)
    assert np.array_equal(aborted.logs["fast"]["force"], site.record()["force"])
    assert aborted.logs["ns"]["displacement"].shape == (4, 1)
    # the outcome of the safe stop is in the message: done when the board still answers
    if fault in ("reset", "garbage"):
        assert "ramped to zero" in str(cause)
    else:
        assert "secure the rig by hand" in str(cause)


def test_port_that_does_not_exist():
    with pytest.raises(RigDisconnected, match="cannot open serial port /dev/nonexistent-rig"):
        SerialRigDriver("/dev/nonexistent-rig")


def test_silent_port_times_out_at_hello():
    master, slave = os.openpty()
    try:
        with pytest.raises(RigTimeout, match=r"no hello reply within 0.3 s.*firmware"):
            SerialRigDriver(os.ttyname(slave), timeout=0.05, boot_timeout=0.3)
    finally:
        os.close(master)
        os.close(slave)


def test_timed_emulator_waits_the_travel_and_the_settle():
    """time_scale = 1: the SG90's 0.1 s / 60° plus the 40 ms settle, reported and waited."""
    import time

    with RigEmulator(time_scale=1.0) as emu:
        driver = SerialRigDriver(emu.port, timeout=1.0)
        start = time.perf_counter()
        first = driver.command([90.0 + 6.12])  # 6.12° → 34 pulse steps of 0.18° = 6.12°
        elapsed = time.perf_counter() - start
        driver.close()
    assert first.device_time == pytest.approx(0.040 + 6.12 * 0.1 / 60, abs=0.0011)
    assert elapsed >= first.device_time - 1e-3
