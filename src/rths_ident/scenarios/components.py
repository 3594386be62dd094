"""From a scenario's configuration to the objects of its loop: the record at the slow
rate, the compensation and rate-transition strategies, the sensors and the fast side.

This is the one place where the strategy names of the command line (``"damb"``,
``"ddmrt"``, …) become objects; the loop itself receives objects only.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.datasets import resample_ground_motion
from rths_ident.datasets.user_ground_motion import load_record
from rths_ident.hybrid.fast_side import actuator as act
from rths_ident.hybrid.fast_side import sensors
from rths_ident.hybrid.fast_side.compensation.registry import COMPENSATORS
from rths_ident.hybrid.fast_side.rate_transition.registry import TRANSITIONS, TransitionSettings
from rths_ident.scenarios.config import HybridTestConfig
from rths_ident.protocols import OnlineIdentifier
from rths_ident.hybrid.fast_side.fast_chunk import FastSide, Strategy, no_identifier_log
from rths_ident.hybrid.fast_side.interlocks import Interlocks
from rths_ident.structures.integrators import INTEGRATORS, native_integrator_names


#: the native integrators a test's NS may use, by name (from
#: :data:`rths_ident.structures.integrators.INTEGRATORS`)
NATIVE_INTEGRATORS = {name: INTEGRATORS[name].native for name in native_integrator_names()}


def slow_record(cfg: HybridTestConfig):
    """The ground motion at the slow rate: (t_1 … t_N [s], ẍ_g [m/s²]), after
    ``cfg.pad_seconds`` of zeros (the padding is part of the test: t starts at its
    beginning). ``cfg.record``: a shipped name or your own file (``record_dt``,
    ``record_units``; :mod:`rths_ident.datasets.user_ground_motion`)."""
    t, ag = load_record(cfg.record, cfg.record_dt, cfg.record_units)
    ag = ag * cfg.record_scale
    dt_slow = 1.0 / cfg.slow_rate
    if abs((t[1] - t[0]) - dt_slow) > 1e-12:
        t, ag = resample_ground_motion(t, ag, dt_slow)
    if cfg.duration is not None:
        n = int(round(cfg.duration / dt_slow)) + 1
        if n > len(t):
            raise ParameterError(
                f"{cfg.SCENARIO} duration = {cfg.duration:g} s is longer than the record {cfg.record!r} "
                f"({t[-1] - t[0]:g} s)"
            )
        t, ag = t[:n], ag[:n]
    t, ag = t[1:] - t[0], ag[1:]
    n_pad = int(round(cfg.pad_seconds / dt_slow))
    if n_pad:
        t = np.concatenate([dt_slow * np.arange(1, n_pad + 1), t + n_pad * dt_slow])
        ag = np.concatenate([np.zeros(n_pad), ag])
    return t, ag


def compensation(cfg: HybridTestConfig, actuator_params) -> Strategy | None:
    """The configured compensator (None for ``"none"``) with its declared gains
    (``[compensation]`` of the test file), from
    :data:`~rths_ident.hybrid.fast_side.compensation.registry.COMPENSATORS`."""
    parts = COMPENSATORS[cfg.compensation].strategy_parts(cfg.fast_rate, actuator_params.loop_gain(),
                                                          cfg.compensation_gains())
    return None if parts is None else Strategy(*parts)


def transition(cfg: HybridTestConfig, realisation: Callable[[], np.ndarray]) -> Strategy:
    """The configured rate transition, from
    :data:`~rths_ident.hybrid.fast_side.rate_transition.registry.TRANSITIONS`;
    ``realisation()`` gives DDMRT's training signal (only called for DDMRT)."""
    settings = TransitionSettings(cfg.ratio, cfg.arrival_fraction, cfg.ddmrt_adaptive, realisation,
                                  cfg.continuity_order, cfg.transition_blend_steps)
    return Strategy(*TRANSITIONS[cfg.transition_kind].build(settings))


def sensor_channels(cfg: HybridTestConfig):
    """(displacement, force, velocity) channels: the thesis noise powers, or ideal."""
    if not cfg.sensor_noise:
        ideal = sensors.SensorParams()
        return ideal, ideal, ideal
    displacement = sensors.SensorParams.thesis_displacement()
    force = sensors.SensorParams.thesis_force()
    # velocity transducer: the displacement channel's relative noise level at 1 Hz
    velocity = sensors.SensorParams(noise_power=float(displacement.noise_power) * (2 * np.pi) ** 2)
    return displacement, force, velocity


def fast_side(cfg: HybridTestConfig, *, specimen_model: type, specimen, actuator, identifier: OnlineIdentifier,
              realisation: Callable[[], np.ndarray], identifier_log: Callable = no_identifier_log) -> FastSide:
    """The virtual fast side of ``cfg`` around ``specimen`` (its model class and Params)."""
    displacement, force, velocity = sensor_channels(cfg)
    return FastSide(
        fast_rate=cfg.fast_rate, ratio=cfg.ratio, transition=transition(cfg, realisation),
        transition_predicts_ahead=TRANSITIONS[cfg.transition_kind].predicts_ahead, compensation=compensation(cfg, actuator),
        actuator_step=act.TRANSFER_SYSTEMS[cfg.transfer_system].step,
        actuator=actuator, specimen_model=specimen_model, specimen=specimen, sensor_displacement=displacement,
        sensor_force=force, sensor_velocity=velocity, identifier=identifier, identifier_every=cfg.identifier_every,
        sensor_noise=cfg.sensor_noise, identifier_log=identifier_log,
    )



def interlocks(cfg: HybridTestConfig, actuator=None) -> Interlocks:
    """The test's interlocks from its ``interlock_*`` settings; a limit left out is the
    actuator's own (stroke, velocity, force capacity of ``actuator``, a
    :class:`~rths_ident.hybrid.fast_side.actuator.CarrionSpencerParams`; the command's
    velocity twice the piston's limit: a compensated command ripples faster than the
    piston can follow, and the piston's own limit is checked on the measurement), or off."""
    inf = float("inf")

    def given(value, default):
        return float(value) if value is not None else float(default)

    stroke = float(getattr(actuator, "stroke_limit", inf))
    velocity = float(getattr(actuator, "velocity_limit", inf))
    force = float(getattr(actuator, "force_limit", inf))
    return Interlocks(
        command_stroke=given(cfg.interlock_command_stroke, stroke),
        command_velocity=given(cfg.interlock_command_velocity, 2.0 * velocity),
        measured_stroke=given(cfg.interlock_measured_stroke, stroke),
        measured_velocity=given(cfg.interlock_measured_velocity, velocity),
        force=given(cfg.interlock_force, force),
        tracking_error=given(cfg.interlock_tracking_error, inf),
        tracking_window=float(cfg.interlock_tracking_window),
        ns_displacement=given(cfg.interlock_ns_displacement, inf),
        identifier=bool(cfg.interlock_identifier),
        identifier_range=float(cfg.interlock_identifier_range),
        deadline=given(cfg.interlock_deadline, inf),
    )


#: a rig's measured-stroke interlock left out: this factor × its stroke limit
RIG_MEASURED_STROKE_FACTOR = 1.05


def rig_interlocks(cfg) -> Interlocks:
    """A rig test's interlocks (its ``interlock_*`` settings); a command stroke or force
    left out is the rig's own (``stroke_limit``, ``force_limit``), a measured stroke left
    out 1.05 × the stroke (the site holds the command to the stroke; a reading at the
    stroke, e.g. rig-sdof's 10 mm release, is not a fault); the rest off unless given."""
    inf = float("inf")

    def given(value, default):
        return float(value) if value is not None else float(default)

    stroke = cfg.stroke_limit if cfg.stroke_limit > 0 else inf
    force = cfg.force_limit if cfg.force_limit > 0 else inf
    return Interlocks(
        command_stroke=given(cfg.interlock_command_stroke, stroke),
        command_velocity=given(cfg.interlock_command_velocity, inf),
        measured_stroke=given(cfg.interlock_measured_stroke, RIG_MEASURED_STROKE_FACTOR * stroke),
        measured_velocity=given(cfg.interlock_measured_velocity, inf),
        force=given(cfg.interlock_force, force),
        tracking_error=given(cfg.interlock_tracking_error, inf),
        tracking_window=float(cfg.interlock_tracking_window),
        ns_displacement=given(cfg.interlock_ns_displacement, inf),
        identifier=bool(cfg.interlock_identifier),
        identifier_range=float(cfg.interlock_identifier_range),
        deadline=given(cfg.interlock_deadline, inf),
    )


def interlocks_from_file(path, actuator=None) -> Interlocks:
    """The ``[interlocks]`` table of a test file (``path``), checked field by field
    (:func:`rths_ident.scenarios.fields.interlock_fields`); limits left out are the
    actuator's (``serve site --interlocks FILE.toml``)."""
    import tomllib  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    from rths_ident.declaration.fields import Where  # noqa: PLC0415
    from rths_ident.scenarios.config import InterlockSettings  # noqa: PLC0415
    from rths_ident.scenarios.fields import interlock_fields  # noqa: PLC0415

    try:
        table = tomllib.loads(Path(path).read_text(encoding="utf-8")).get("interlocks", {})
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ParameterError(f"--interlocks {path}: cannot read it ({error})") from None
    by_key = {field.key: field for field in interlock_fields()}
    unknown = sorted(set(table) - set(by_key))
    if unknown:
        raise ParameterError(f"{path}: [interlocks] {', '.join(unknown)}: expected keys among {', '.join(by_key)}")
    values = {by_key[key].target: by_key[key].coerce(value, Where(str(path))) for key, value in table.items()}
    return interlocks(InterlockSettings(**values), actuator)  # each value was range-checked by its field
