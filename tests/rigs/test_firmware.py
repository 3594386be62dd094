"""The reference firmware (firmware/rths_rig/rths_rig.ino) built for the host with g++ and
a stand-in Arduino core (tests/rigs/firmware_host), driven over a pseudo-terminal by the
same SerialRigDriver a real board meets; its constants against the protocol module."""

import os
import re
import shutil
import subprocess
import tty
from pathlib import Path

import pytest

from rths_ident.rigs import serial_protocol as proto
from rths_ident.rigs.emulator import RigEmulator
from rths_ident.rigs.errors import RigDeviceError
from rths_ident.rigs.serial_site import SerialRigDriver

ROOT = Path(__file__).resolve().parents[2]
SKETCH = ROOT / "firmware" / "rths_rig" / "rths_rig.ino"
HOST = Path(__file__).resolve().parent / "firmware_host"


def _constants() -> dict:
    text = SKETCH.read_text()
    return {m.group(1): m.group(2) for m in re.finditer(r"const \w+(?: \w+)? (\w+)(?:\[\])? = ([^;]+);", text)}


def test_sketch_constants_match_the_protocol_module():
    c = _constants()
    assert int(c["PROTOCOL_VERSION"]) == proto.PROTOCOL_VERSION
    assert int(c["BAUD_RATE"]) == proto.BAUD_RATE
    assert int(c["MAX_LINE"]) == proto.MAX_LINE
    assert int(c["ANGLE_MDEG_MAX"]) == proto.ANGLE_MDEG_MAX
    codes = {int(c[name]) for name in ("ERR_CHECKSUM", "ERR_COMMAND", "ERR_RANGE", "ERR_VERSION", "ERR_TOO_LONG")}
    assert codes == set(proto.ERROR_CODES)
    assert int(c["SETTLE_MS"]) == round(RigEmulator.__init__.__kwdefaults__["settle_time"] * 1000)


@pytest.fixture(scope="module")
def firmware_binary(tmp_path_factory):
    compiler = shutil.which("g++")
    if compiler is None:
        pytest.skip("g++ is not installed: the host build of the firmware needs it")
    binary = tmp_path_factory.mktemp("firmware") / "rths_rig_host"
    subprocess.run([compiler, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-I", str(HOST), "-o", str(binary),
                    str(HOST / "host_main.cpp")], check=True, capture_output=True, timeout=120)
    return binary


@pytest.fixture
def board(firmware_binary):
    master, slave = os.openpty()
    tty.setraw(slave)
    process = subprocess.Popen([str(firmware_binary)], stdin=master, stdout=master)
    os.close(master)
    try:
        yield os.ttyname(slave)
    finally:
        os.close(slave)
        try:
            process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _expected_counts(angle_deg: float) -> int:
    pulse = 1000 + (int(round(angle_deg * 1000)) * 1000 + 90000) // 180000
    return 512 + abs(pulse - 1500) // 5


def test_firmware_speaks_the_protocol(board):
    driver = SerialRigDriver(board, timeout=1.0)
    assert driver.info == {"version": 1, "device": "UNO-SG90-ACS712", "adc_bits": 10, "settle_ms": 40}
    reading = driver.command([95.0])
    assert reading.force_raw[0] == _expected_counts(95.0)
    assert reading.device_time == pytest.approx((5000 * 100 // 60000 + 40) / 1000)  # travel 5° + settle
    reading = driver.command([60.5])
    assert reading.force_raw[0] == _expected_counts(60.5)
    assert reading.device_time == pytest.approx((34500 * 100 // 60000 + 40) / 1000)
    driver.hold()
    # errors as the emulator gives them
    driver.serial.write(b"M 9 90000*00\n")
    assert proto.decode(driver.serial.readline()) == proto.Message("E", ("0", "1", "bad", "line"))
    driver.serial.write(b"X" * 80 + b"\n")
    assert proto.decode(driver.serial.readline()).fields[:2] == ("0", "5")
    with pytest.raises(RigDeviceError, match="device error 3 \\(angle out of range\\)"):
        driver._exchange(proto.encode("M", 10, 190000), "move #10", "R", 10)
    driver.close()


def test_emulator_answers_errors_like_the_firmware(firmware_binary):
    with RigEmulator() as emu:
        driver = SerialRigDriver(emu.port, timeout=1.0)
        driver.serial.write(b"M 9 90000*00\n")
        assert proto.decode(driver.serial.readline()) == proto.Message("E", ("0", "1", "bad", "line"))
        driver.serial.write(b"X" * 80 + b"\n")
        assert proto.decode(driver.serial.readline()).fields[:2] == ("0", "5")
        with pytest.raises(RigDeviceError, match="device error 3"):
            driver._exchange(proto.encode("M", 10, 190000), "move #10", "R", 10)
        driver.close()
