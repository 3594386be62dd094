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
from rths_ident.hybrid.fast_side.compensation import amb, damb, polynomial
from rths_ident.hybrid.fast_side.rate_transition import ddmrt, predictor_corrector, wiener
from rths_ident.scenarios.config import HybridTestConfig
from rths_ident.protocols import OnlineIdentifier
from rths_ident.hybrid.fast_side.fast_chunk import FastSide, Strategy, no_identifier_log
from rths_ident.structures import AlphaOS, CentralDifference, ExplicitNewmark


#: the native explicit integrators a scenario's NS may use (α-OS with α = −0.1, the
#: thesis' α_OS = 0.9), by their command-line names
NATIVE_INTEGRATORS = {"alpha-os": lambda structure: AlphaOS(structure, alpha=-0.1),
                      "newmark-explicit": ExplicitNewmark, "central-difference": CentralDifference}


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


#: seed 000's leaky-LMS constants were set for displacements in inches ([REPO]: μ = 0.01,
#: λ = 1e-10 with u in in): the same adaptation in SI is μ = 0.01 in⁻² and λ = 1e-10 in².
INCH = 0.0254  # m
DDMRT_LEARNING_RATE = 0.01 / INCH**2  # 1/m² (15.5)
DDMRT_LEAKAGE = 1e-10 * INCH**2  # m²


def ddmrt_weights(realisation: np.ndarray) -> np.ndarray:
    """DDMRT's Wiener predictor (seed 000 Eq. 3.5; L = 8, λ = 1e-10, N ≤ 2000, digest
    §12.5) from an approximate realisation of the interface displacement at the slow rate."""
    realisation = np.asarray(realisation, dtype=float)
    n_window = int(min(2000, len(realisation) - 9))
    return wiener.wiener_coefficients(realisation, 8, 1e-10, n_window)


def compensation(cfg: HybridTestConfig, actuator_params) -> Strategy | None:
    """The configured compensator (None for ``"none"``)."""
    if cfg.compensation == "damb":
        return Strategy(damb, damb.DAMBParams(filter_sample_rate=cfg.fast_rate))
    if cfg.compensation == "amb":
        return Strategy(amb, amb.AMBParams(filter_sample_rate=cfg.fast_rate))
    if cfg.compensation == "polynomial":
        return Strategy(polynomial, polynomial.PolynomialExtrapolationParams(delay=1.0 / actuator_params.loop_gain()))
    return None


def transition(cfg: HybridTestConfig, realisation: Callable[[], np.ndarray]) -> Strategy:
    """The configured rate transition; ``realisation()`` gives DDMRT's training signal
    (only called for DDMRT)."""
    ratio = cfg.ratio
    if cfg.transition == "ddmrt":
        return Strategy(ddmrt, ddmrt.DDMRTParams(weights=ddmrt_weights(realisation()), ratio=ratio,
                                                 adaptive=cfg.ddmrt_adaptive, learning_rate=DDMRT_LEARNING_RATE,
                                                 leakage=DDMRT_LEAKAGE))
    arrival = int(round(cfg.arrival_fraction * ratio)) if ratio > 1 else 0
    return Strategy(predictor_corrector, predictor_corrector.PredictorCorrectorParams(
        ratio=ratio, arrival_tick=min(arrival, ratio - 1)))


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
        transition_predicts_ahead=cfg.transition == "ddmrt", compensation=compensation(cfg, actuator),
        actuator_step=act.ideal_actuator_step if cfg.transfer_system == "ideal" else act.actuator_step,
        actuator=actuator, specimen_model=specimen_model, specimen=specimen, sensor_displacement=displacement,
        sensor_force=force, sensor_velocity=velocity, identifier=identifier, identifier_every=cfg.identifier_every,
        sensor_noise=cfg.sensor_noise, identifier_log=identifier_log,
    )

