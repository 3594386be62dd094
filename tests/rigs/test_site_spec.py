"""--site strings and the sites they open."""

import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.rigs.errors import RigLimitError
from rths_ident.rigs.hardware_site import HardwareSite
from rths_ident.declaration import DeclarationError
from rths_ident.rigs.site_spec import SITES, open_site, parse_site, site_field


def test_parse_site():
    assert parse_site("emulator") == ("emulator", None)
    assert parse_site("serial:/dev/ttyACM0") == ("serial", "/dev/ttyACM0")
    for bad in ("serial:", "usb", "", "virtual", "adapter:127.0.0.1:8090"):  # a rig scenario: the rig's sites only
        with pytest.raises(ParameterError, match=r"expected one of emulator \| emulator:timed \| direct \| serial:PORT$"):
            parse_site(bad)


def _every_site(kind):
    return True


@pytest.mark.parametrize(("spec", "parsed"), [
    ("virtual", ("virtual", None)), ("emulator:timed", ("emulator:timed", None)), ("direct", ("direct", None)),
    ("serial:COM3", ("serial", "COM3")), ("openfresco:127.0.0.1:8090", ("openfresco", "127.0.0.1:8090")),
    ("adapter:lab-pc:44000", ("adapter", "lab-pc:44000")),
])
def test_every_registered_site_parses(spec, parsed):
    assert parse_site(spec, _every_site) == parsed


@pytest.mark.parametrize("bad", ["adapter:127.0.0.1", "openfresco:127.0.0.1:0", "openfresco:127.0.0.1:65536",
                                 "openfresco::8090", "virtual:1", "emulator:fast", "SERIAL:COM3"])
def test_a_malformed_site_names_every_form(bad):
    forms = " | ".join(kind.form for kind in SITES.values())
    with pytest.raises(ParameterError, match="expected one of " + forms.replace("|", r"\|")):
        parse_site(bad, _every_site, where="specimen.site =")


def test_the_site_field_accepts_what_the_test_can_run_on():
    """The test-file field's choices come from the registry: a rig scenario's field refuses
    an element server, a frame's accepts it (DeclarationError names the field and the forms)."""
    rig_field, any_field = site_field(lambda kind: kind.rig), site_field()
    assert rig_field.choices == ("emulator", "emulator:timed", "direct") and rig_field.open_doc == "serial:PORT"
    assert any_field.open_doc == "serial:PORT | openfresco:HOST:PORT | adapter:HOST:PORT"
    assert any_field.coerce("adapter:127.0.0.1:8090") == "adapter:127.0.0.1:8090"
    with pytest.raises(DeclarationError, match="specimen.site.*serial:PORT"):
        rig_field.coerce("adapter:127.0.0.1:8090")


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


class _SineNS:
    """A numerical substructure that asks for a 2 mm sine whatever the force (the loop's
    plumbing, not its dynamics)."""

    dt, n_interface = 0.01, 1

    def __init__(self):
        self.k = 0

    def initial_target(self):
        return np.zeros(1)

    def step(self, force, ground_accel):
        self.k += 1
        return np.array([0.002 * np.sin(2 * np.pi * self.k / 10)]), {"displacement": np.zeros(1)}

    def apply_parameters(self, theta):
        pass

    def close(self):
        pass


def test_a_stuck_force_sensor_trips_the_force_interlock_on_the_emulated_board():
    """The board's current sensor sticks at its rail (1023 counts) from move 5: the force
    interlock (10 N) trips at that step with eq. 4-1's force of 1023 counts,
    0.662 N/count · 1023 − 339.05 N = 338.176 N (signed by the displacement); the rig
    brings itself to rest (hold, ramp to zero) once, the loop's stop says so and carries
    the trip. Without the fault the same test runs to its end."""
    from rths_ident.hybrid.fast_side.interlocks import Interlocks
    from rths_ident.hybrid.loop.engine import LoopAborted, run_stepwise

    limits = Interlocks(force=10.0)
    with open_site("emulator", 0.01, interlocks=limits) as site:
        logs = run_stepwise(site, _SineNS(), np.zeros(20))
    assert logs["fast"]["force"].shape[0] == 20 and np.max(np.abs(logs["fast"]["force"])) < 10.0

    with open_site("emulator", 0.01, interlocks=limits, emulator_faults={5: "stuck"}) as site:
        with pytest.raises(LoopAborted) as info:
            run_stepwise(site, _SineNS(), np.zeros(20))
        record = site.record()
    trip = info.value.trip
    first = int(np.flatnonzero(np.abs(record["force"][:, 0]) > 10.0)[0])  # the board's own readings, kept
    assert (trip.name, trip.step, info.value.slow_index) == ("force", first, first)
    assert abs(trip.value) == pytest.approx(0.662 * 1023 - 339.05, abs=1e-9) and trip.limit == 10.0
    message = str(info.value)
    assert message.startswith(f"interlock force tripped: {trip.value:.6g} N beyond the limit 10 N at slow step {first}")
    assert "safe stop: held at" in message and "ramped to zero" in message
    assert "The rig brought itself to rest as said" in message
    assert sum("safe stop:" in event for event in site.events) == 2  # the stop's own event, and the trip's
