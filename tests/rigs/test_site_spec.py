"""--site strings and the sites they open."""

import pytest

from rths_ident.errors import ParameterError
from rths_ident.rigs.errors import RigLimitError
from rths_ident.rigs.hardware_site import HardwareSite
from rths_ident.rigs.site_spec import open_site, parse_site


def test_parse_site():
    assert parse_site("emulator") == ("emulator", None)
    assert parse_site("serial:/dev/ttyACM0") == ("serial", "/dev/ttyACM0")
    for bad in ("serial:", "usb", ""):
        with pytest.raises(ParameterError, match="expected one of emulator, emulator:timed, serial:PORT, direct"):
            parse_site(bad)


def test_direct_site_is_exact_and_keeps_the_rig_limits():
    with open_site("direct", 0.01) as site:
        assert isinstance(site, HardwareSite)
        site.step([0.004])
        assert site.step([0.004]).force[0] == pytest.approx(1540.0 * 0.004, abs=1e-12)  # at rest: K_e·u
        with pytest.raises(RigLimitError, match="stroke limit"):
            site.step([0.0101])


def test_emulator_site_ends_with_a_safe_stop():
    with open_site("emulator", 0.01) as site:
        assert site.driver.info["device"] == "EMU-SG90-ACS712"
        site.step([0.002])
    assert site.events[-1] == "safe stop: held at [2.] mm, ramped to zero in 4 move(s)"
