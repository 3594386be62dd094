"""The fields test kinds share: the record, the rates, the fast side's strategies, the
updating mode, how the test is run and where its outputs go (units per field).

A kind's fields are these groups plus its own (:mod:`rths_ident.scenarios.kinds`); a
group is a function of what differs between kinds (the updating modes, the defaults).
"""

from __future__ import annotations

from pathlib import Path

from rths_ident.declaration import Field
from rths_ident.hybrid.fast_side.actuator import TRANSFER_SYSTEMS
from rths_ident.hybrid.fast_side.compensation.registry import COMPENSATORS, GAIN_FIELDS
from rths_ident.hybrid.fast_side.rate_transition.registry import DDMRT_MIN_RATIO, transition_names
from rths_ident.structures.integrators import INTEGRATORS
from rths_ident.structures.numerical_substructure import NS_BACKENDS

__all__ = ["interlock_fields",
           "test_fields", "compensation_gain_fields", "record_fields", "rate_fields", "fast_side_fields", "updating_fields", "run_fields",
           "substructure_fields", "looks_like_a_path", "RECORD_UNITS"]

RECORD_UNITS = ("g", "m/s2", "cm/s2")


def looks_like_a_path(value) -> bool:
    """A record value that is a file path rather than a shipped name (checked when the
    test is built: the file must then exist and read)."""
    return isinstance(value, str) and (("/" in value) or ("\\" in value) or Path(value).suffix != "")


def _shipped_ground_motions():
    from rths_ident.datasets.user_ground_motion import shipped_ground_motions  # noqa: PLC0415

    return shipped_ground_motions()


def test_fields(kind_names) -> list[Field]:
    """``[test]``: the kind (how the test is assembled), a name and a description."""
    return [
        Field("test.kind", "run:kind", "how the test is assembled (rths-ident run --list names every kind)",
              kind=str, choices=kind_names, choices_in_file=False),
        Field("test.name", "run:name", "the test's name (records and reports)", kind=str, optional=True),
        Field("test.description", "run:description", "one line about the test", kind=str, optional=True),
    ]


def record_fields() -> list[Field]:
    """``[record]``: the ground motion, shipped or your own file."""
    return [
        Field("record.ground_motion", "record", "ground motion: a shipped record or your own file (a PEER .AT2, or "
              "text/CSV of acceleration, one column with dt, or time [s] and acceleration)", kind=str,
              choices=_shipped_ground_motions, open_choices=looks_like_a_path, option="--record", is_path=True),
        Field("record.units", "record_units", "units of the acceleration in your own text file (an .AT2 file states "
              "its own)", kind=str, choices=RECORD_UNITS, optional=True, option="--record-units"),
        Field("record.dt", "record_dt", "time step of your own one-column file", unit="s", low=1e-6, optional=True,
              option="--record-dt"),
        Field("record.scale", "record_scale", "factor on the acceleration", low=0.0),
        Field("record.duration", "duration", "seconds of the record to run (leave out: all of it)", unit="s",
              low=1e-9, optional=True, option="--duration"),
        Field("record.padding", "pad_seconds", "zero ground acceleration before the record (the start-up of a paced "
              "test; --realtime defaults it to 5 s)", unit="s", low=0.0, option="--pad"),
    ]


def rate_fields() -> list[Field]:
    """``[rates]``: the fast (controller) and slow (numerical substructure) rates."""
    return [
        Field("rates.fast", "fast_rate", "fast rate: transition, compensation, actuator, sensors", unit="Hz",
              low=1e-6, option="--fast-rate"),
        Field("rates.slow", "slow_rate", "slow rate: the numerical substructure (fast/slow a whole number)",
              unit="Hz", low=1e-6, option="--slow-rate"),
        Field("rates.identifier", "identifier_rate", "identifier sample rate (leave out: the lowest ≥ 1 kHz that "
              "divides the fast rate)", unit="Hz", low=1e-6, optional=True, option="--identifier-rate"),
    ]


def compensation_gain_fields() -> list[Field]:
    """``[compensation]``'s gains, one field per
    :data:`~rths_ident.hybrid.fast_side.compensation.registry.GAIN_FIELDS` entry (the names
    ``rths-ident calibrate --bounds`` uses); left out: the compensator's default, which
    ``rths-ident new`` writes commented out."""
    fields = []
    for name, gain in GAIN_FIELDS.items():
        default = f"{gain.default:g}" if gain.default is not None else None
        doc = gain.doc + (f" (leave out: {default})" if default is not None and "leave out" not in gain.doc else "")
        fields.append(Field(f"compensation.{name}", f"compensation_{name}", doc, unit=gain.unit, low=gain.low,
                            high=gain.high, optional=True, example=gain.default))
    return fields


def fast_side_fields() -> list[Field]:
    """``[transition]``, ``[compensation]``, ``[actuator]``, ``[sensors]``: the fast side."""
    return [
        Field("transition.kind", "transition", "rate transition (auto: ddmrt at a rate ratio of "
              f"{DDMRT_MIN_RATIO} or more, predictor-corrector below)", kind=str, choices=transition_names,
              option="--transition"),
        Field("transition.arrival_fraction", "arrival_fraction", "predictor–corrector: the target arrives after "
              "this share of the slow step", low=0.0, high=0.999999),
        Field("transition.ddmrt_adaptive", "ddmrt_adaptive", "DDMRT: leaky-LMS adaptive Wiener filter (seed 000 "
              "Eq. 3.7) instead of fixed weights", kind=bool, option="--ddmrt-adaptive", flag=True),
        Field("transition.continuity", "transition_continuity", "derivatives of the fast targets kept continuous "
              "across slow steps (and at the predictor–corrector's switch): 0 = the source's scheme (DDMRT jumps by "
              "its prediction error), 1 = value and slope, 2 = … and curvature, 3 = … and jerk (leave out: the test "
              "kind's default; the frame tests': the compensator's own, 3 with amb and polynomial, 2 with damb and "
              "none)", kind=int, low=0, high=3,
              optional=True),
        Field("transition.blend_steps", "transition_blend_steps", "DDMRT: slow steps over which the continuity "
              "correction absorbs a prediction error (1: each segment ends on the prediction; more: a smoother "
              "command, the target further from the prediction)", unit="slow steps", low=1.0, high=8.0),
        Field("compensation.kind", "compensation", "delay compensation", kind=str, choices=COMPENSATORS,
              option="--compensation"),
        *compensation_gain_fields(),
        Field("actuator.transfer_system", "transfer_system", "transfer system", kind=str, choices=TRANSFER_SYSTEMS,
              option="--transfer-system"),
        Field("actuator.substeps", "actuator_substeps", "RK4/exact sub-steps of the actuator per fast step",
              kind=int, low=1),
        Field("sensors.noise", "sensor_noise", "sensor noise at the thesis' powers (false: ideal sensors)",
              kind=bool, option="--no-noise", flag=False),
        Field("sensors.seed", "seed", "sensor-noise seed", kind=int, option="--seed"),
    ]


def interlock_fields(limits_from: str = "the actuator's", velocity_limits: bool = True,
                     measured_stroke: str = "") -> list[Field]:
    """``[interlocks]``: the limits that stop the test through the safe stop
    (:mod:`rths_ident.hybrid.fast_side.interlocks`); ``limits_from`` says whose limits a
    stroke, velocity or force left out takes (``velocity_limits`` False: a velocity left
    out is not checked, e.g. a rig that declares no velocity limit; ``measured_stroke``: what a
    measured stroke left out is, when it is not the stroke limit itself)."""
    command_velocity = f"twice {limits_from} velocity limit" if velocity_limits else "not checked"
    measured_velocity = f"{limits_from} velocity limit" if velocity_limits else "not checked"
    return [
        Field("interlocks.command_stroke", "interlock_command_stroke", f"|command| above this stops the test "
              f"(leave out: {limits_from} stroke limit)", unit="m", low=1e-12, optional=True),
        Field("interlocks.command_velocity", "interlock_command_velocity", f"|command rate| above this stops the "
              f"test (leave out: {command_velocity})", unit="m/s", low=1e-12, optional=True),
        Field("interlocks.measured_stroke", "interlock_measured_stroke", f"|measured displacement| above this "
              f"stops the test (leave out: {measured_stroke or limits_from + ' stroke limit'})", unit="m", low=1e-12,
              optional=True),
        Field("interlocks.measured_velocity", "interlock_measured_velocity", f"|measured velocity| (over "
              f"2 ms) above this stops the test (leave out: {measured_velocity})", unit="m/s", low=1e-12,
              optional=True),
        Field("interlocks.force", "interlock_force", f"|measured force| above this stops the test (leave out: "
              f"{limits_from} force capacity)", unit="N", low=1e-12, optional=True),
        Field("interlocks.tracking_error", "interlock_tracking_error", "mean |target − measured| over the window "
              "above this stops the test (leave out: not checked)", unit="m", low=1e-12, optional=True),
        Field("interlocks.tracking_window", "interlock_tracking_window", "the tracking error's window", unit="s",
              low=1e-6),
        Field("interlocks.ns_displacement", "interlock_ns_displacement", "a numerical-substructure target or "
              "response beyond this (or not finite) stops the test (leave out: not finite only)", unit="m",
              low=1e-12, optional=True),
        Field("interlocks.identifier", "interlock_identifier", "stop when the identifier diverges: a non-finite "
              "estimate, one outside its physical range, or a covariance not positive definite", kind=bool),
        Field("interlocks.identifier_range", "interlock_identifier_range", "the identified parameters' physical "
              "range: within this factor of the initial guess (and the model's own range)", unit="×", low=1.000001),
        Field("interlocks.deadline", "interlock_deadline", "watchdog: a slow step taking longer than this "
              "(wall clock) stops the test (leave out: not checked)", unit="s", low=1e-9, optional=True),
    ]


def updating_fields(modes: tuple, start_doc: str = "the hook holds the initial model this long") -> list[Field]:
    """``[updating]``: the updating mode (identify and update, none: the wrong model
    stays, oracle: the true model from the start) and the hook's start."""
    return [
        Field("updating.mode", "updating", "identify and update, or none (keep the wrong model), or oracle (the "
              "true model from the start)", kind=str, choices=modes, option="--updating"),
        Field("updating.start", "update_after", start_doc, unit="s", low=0.0),
    ]


def substructure_fields(integrators=None, with_address: bool = True) -> list[Field]:
    """``[substructure]``: where the numerical substructure is computed and how."""
    fields = [
        Field("substructure.backend", "ns", "where the numerical substructure runs", kind=str, choices=NS_BACKENDS,
              option="--ns"),
        Field("substructure.integrator", "integrator", "time integrator of the numerical substructure", kind=str,
              choices=integrators if integrators is not None else INTEGRATORS, option="--integrator"),
    ]
    if with_address:
        fields.append(Field("substructure.address", "ns_address", "opensees-tcp: HOST:PORT of a running 'rths-ident "
                            "serve ns' (leave out: one is started for the run)", kind=str, optional=True,
                            option="--ns-address"))
    return fields


def run_fields(engines: tuple = ("fused", "stepwise"), compare: bool = True, realtime: bool = True) -> list[Field]:
    """``[run]`` and ``[outputs]``: how the test is run and where its outputs go (not
    part of the test's configuration: the same test runs either way)."""
    fields = [
        Field("run.engine", "run:engine", "fused (one compiled loop; native parts) or stepwise (any substructure "
              "or site; leave out: fused when everything is native)", kind=str, choices=engines, optional=True,
              option="--engine"),
    ]
    if compare:
        fields.append(Field("run.compare", "run:compare", "also run the comparison variants (no updating, oracle)",
                            kind=bool, option="--no-compare", flag=False, default=True))
    if realtime:
        fields.append(Field("run.realtime", "run:realtime", "pace the step-wise loop against the wall clock",
                            kind=bool, option="--realtime", flag=True, default=False))
    fields += [
        Field("outputs.json", "run:json", "write the metrics here (JSON)", kind=str, optional=True, option="--json", is_path=True),
        Field("outputs.plots", "run:plots", "write the figures into this folder", kind=str, optional=True,
              option="--plots", is_path=True),
        Field("outputs.record", "run:test_record", "the test record (HDF5, written as the test goes; leave out: "
              "test_record.h5 beside the figures or the JSON, else in rths-runs/<test>-<UTC time>/)", kind=str,
              optional=True, option="--test-record", is_path=True),
    ]
    return fields
