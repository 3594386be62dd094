"""HardwareSite's limits, safe stop, modes and record, with an in-process driver (a
linear spring read through seed 002's calibration); the serial path is in test_serial_site."""

import math
import time

import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.protocols import Site
from rths_ident.rigs.errors import DeadlineMissed, RigError, RigLimitError
from rths_ident.rigs.hardware_site import HardwareSite, RawReading, RigLimits, ServoRigCalibration
from rths_ident.rigs.calibration import ForceCalibration, ServoKinematics


class SpringDriver:
    """Servo angle in, ADC count of K·u out (eq. 4-1 inverse); records every command."""

    where = "in-process spring"

    def __init__(self, stiffness=1540.0, delay=0.0):
        self.stiffness, self.delay, self.commands, self.holds = stiffness, delay, [], 0
        self.kinematics = ServoKinematics()

    def command(self, command):
        self.commands.append(float(command[0]))
        if self.delay:
            time.sleep(self.delay)
        u = self.kinematics.displacement(command[0])
        counts = round(ForceCalibration().counts(self.stiffness * u)) if abs(self.stiffness * u) > 1.45 else 513
        return RawReading(np.array([float(counts)]), None, self.delay)

    def hold(self):
        self.holds += 1

    def close(self):
        pass


def test_is_a_site_and_reads_calibrated_force():
    site = HardwareSite(SpringDriver(), ServoRigCalibration(), 0.01)
    assert isinstance(site, Site)
    reading = site.step([0.005])
    assert reading.displacement[0] == pytest.approx(0.005, abs=1e-15)
    assert reading.force[0] == pytest.approx(7.7, abs=0.662)
    assert site.step([-0.005]).force[0] == pytest.approx(-7.7, abs=0.662)  # sign policy: of the displacement


def test_arc_kinematics_reaches_the_projection():
    site = HardwareSite(SpringDriver(), ServoRigCalibration(ServoKinematics(model="arc")), 0.01)
    assert site.step([0.01]).displacement[0] * 1e3 == pytest.approx(9.276, abs=5e-4)


def test_stroke_limit_stops_before_moving_and_ramps_to_zero():
    driver = SpringDriver()
    site = HardwareSite(driver, ServoRigCalibration(), 0.01)
    site.step([0.0042])
    with pytest.raises(RigLimitError, match=r"stroke limit: target 10.500 mm .* exceeds ±10 mm \(in-process spring, "
                       r"step 1\); safe stop: held at \[4.2\] mm, ramped to zero in 9 move"):
        site.step([0.0105])
    assert driver.holds == 1
    assert len(driver.commands) == 1 + math.ceil(4.2 / 0.5)  # no move towards 10.5 mm
    assert driver.commands[-1] == pytest.approx(90.0)
    with pytest.raises(RigError, match="stopped"):
        site.step([0.0])


def test_force_limit_keeps_the_reading_that_tripped_it():
    site = HardwareSite(SpringDriver(stiffness=2000.0), ServoRigCalibration(), 0.01)
    site.step([0.008])
    with pytest.raises(RigLimitError, match=r"force limit: measured 18.\d+ N"):
        site.step([0.0092])
    record = site.record()
    assert record["force"].shape == (2, 1) and record["force"][1, 0] > 16.67


def test_real_time_velocity_limit_and_deadlines():
    site = HardwareSite(SpringDriver(), ServoRigCalibration(), 0.01, mode="real-time",
                        limits=RigLimits(velocity=0.2), max_missed_deadlines=10)  # a loaded CI may overrun
    site.step([0.001])
    with pytest.raises(RigLimitError, match=r"velocity limit: 0.3 m/s"):
        site.step([0.004])
    slow = HardwareSite(SpringDriver(delay=0.02), ServoRigCalibration(), 0.01, mode="real-time",
                        max_missed_deadlines=1)
    slow.step([0.001])
    assert slow.missed_deadlines == 1 and slow.record()["missed_deadline"][0]
    with pytest.raises(DeadlineMissed, match="overran Δt = 0.01 s"):
        slow.step([0.001])


def test_real_time_paces_to_dt():
    site = HardwareSite(SpringDriver(), ServoRigCalibration(), 0.02, mode="real-time",
                        max_missed_deadlines=5)  # on a loaded machine a step may overrun: pacing still holds
    start = time.perf_counter()
    for _ in range(5):
        site.step([0.001])
    assert time.perf_counter() - start >= 5 * 0.02 - 1e-3


def test_bad_configuration_named():
    with pytest.raises(ParameterError, match="mode"):
        HardwareSite(SpringDriver(), ServoRigCalibration(), 0.01, mode="fast")
    with pytest.raises(ParameterError, match="RigLimits.stroke"):
        RigLimits(stroke=0.0)
    with pytest.raises(ParameterError, match="target must have 1"):
        HardwareSite(SpringDriver(), ServoRigCalibration(), 0.01).step([0.0, 0.0])
