"""Bringing the specimen to rest when a hybrid test stops on a fault.

When the numerical substructure, a peer or the site fails mid-test, a lab does not let
the actuator jump: it **holds** the last command, then **ramps** it to zero — the
issue's rule; the sources give none (seed 003 only says the predictor holds zero before
the NS connects). :class:`SafeStop` is that policy. :func:`bring_to_rest` applies it to any
site: a site with its own ``safe_stop(last_target, dt, policy)`` (a rig's controller)
does it itself; otherwise the policy's targets are fed through ``site.step`` slow step by
slow step. The virtual site has its own: the actuator's command held and ramped with the
rate transition and the compensator bypassed
(:mod:`rths_ident.hybrid.fast_side.virtual_safe_stop`), so the virtual actuator and specimen are
unloaded through their own dynamics (the command returns to zero displacement; a yielded
specimen keeps its residual force, which is reported). A rig's own safe stop
(:class:`~rths_ident.rigs.hardware_site.HardwareSite`: hold, then ramp in small moves)
returns one sentence saying what it did, which the result keeps.

A Ctrl-C while the specimen is brought to rest does not cut the stop short: it prints
that the test is stopping (:func:`~rths_ident.operator_stop.ctrl_c_deferred`).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import jax
import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.operator_stop import ctrl_c_deferred


@dataclasses.dataclass(frozen=True)
class SafeStop:
    """Hold the last command for ``hold_s`` [s], ramp it linearly to zero over ``ramp_s``
    [s], then keep it at zero for ``settle_s`` [s] while the actuator settles (all ≥ 0;
    rounded up to whole steps)."""

    hold_s: float = 0.5
    ramp_s: float = 2.0
    settle_s: float = 0.25

    def __post_init__(self):
        for name in ("hold_s", "ramp_s", "settle_s"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise ParameterError(f"SafeStop.{name} must be a finite number of seconds ≥ 0, got {value!r}")

    def targets(self, last_target, dt: float) -> np.ndarray:
        """The slow-step targets (steps, n) of the hold, the ramp and the settling."""
        last = np.atleast_1d(np.asarray(last_target, dtype=float))
        n_hold = math.ceil(self.hold_s / dt - 1e-9)
        n_ramp = max(1, math.ceil(self.ramp_s / dt - 1e-9))
        n_settle = math.ceil(self.settle_s / dt - 1e-9)
        scale = np.concatenate([np.ones(n_hold), 1.0 - np.arange(1, n_ramp + 1) / n_ramp, np.zeros(n_settle)])
        return scale[:, None] * last[None, :]


@dataclasses.dataclass(frozen=True)
class RestResult:
    """How the specimen was left: ``logs`` (the site's logs while stopping, stacked per
    slow step; None if nothing ran), ``error`` (why stopping failed, if it did),
    ``summary`` (what a rig's own safe stop says it did)."""

    policy: SafeStop | None
    logs: dict | None = None
    error: str | None = None
    residual_force: Any = None  # N, at the end of the ramp
    summary: str | None = None

    @property
    def at_rest(self) -> bool:
        """Whether the specimen was brought to rest (False: check the rig by hand)."""
        return self.policy is not None and self.error is None

    def describe(self) -> str:
        if self.policy is None:
            return "The site was left as it was (no safe stop asked for)"
        if self.error is not None:
            return (f"Bringing the specimen to rest FAILED ({self.error}): check the rig by hand before "
                    f"touching the specimen")
        if self.summary is not None:
            return f"The rig's own {self.summary}"
        text = (f"The specimen was brought to rest: command held {self.policy.hold_s:g} s, then ramped to "
                f"zero over {self.policy.ramp_s:g} s and held at zero {self.policy.settle_s:g} s")
        if self.residual_force is not None:
            force = np.atleast_1d(np.asarray(self.residual_force, dtype=float))
            text += " (residual force " + ", ".join(f"{f:.4g}" for f in force) + " N)"
        return text


def bring_to_rest(site, last_target, dt: float, policy: SafeStop | None) -> RestResult:
    """Apply ``policy`` to ``site`` after a fault or the operator's stop (module doc);
    never raises, and a Ctrl-C meanwhile does not interrupt it."""
    if policy is None:
        return RestResult(None)
    with ctrl_c_deferred():
        return _bring_to_rest(site, last_target, dt, policy)


#: the measured displacement at the end of the stop, relative to the largest during it,
#: above which the specimen is not at rest (the command is back at zero; a servo-hydraulic
#: actuator under position control follows it to well within this)
SETTLED_FRACTION = 0.1
#: … and an absolute floor [m] for stops that started at rest (sensor noise)
SETTLED_FLOOR_M = 1e-4


def _not_settled(measured) -> str | None:
    """Why the measured displacement of a safe stop (samples in time order, any shape
    whose first axis is time) says the specimen is not at rest, or None: not finite, or
    at the end more than ``SETTLED_FRACTION`` of its largest value during the stop (plus
    ``SETTLED_FLOOR_M``) — an actuator that runs away while its command ramps to zero."""
    if measured is None:
        return None
    x = np.abs(np.asarray(measured, dtype=float).reshape(-1))
    if x.size == 0:
        return None
    if not np.all(np.isfinite(x)):
        return "the measured displacement is not finite at the end of the stop"
    end, largest = float(x[-1]), float(np.max(x))
    if end > SETTLED_FRACTION * largest + SETTLED_FLOOR_M:
        return (f"the actuator did not settle: measured displacement {end:.4g} m at the end of the stop "
                f"(largest during it {largest:.4g} m) with the command at zero")
    return None


def _bring_to_rest(site, last_target, dt: float, policy: SafeStop) -> RestResult:
    try:
        own = getattr(site, "safe_stop", None)
        if own is not None:
            logs = own(np.asarray(last_target, dtype=float), dt, policy)
            if isinstance(logs, str):  # a rig's own safe stop: what it did, in words (``at_rest``: whether it could)
                if getattr(site, "at_rest", True):
                    return RestResult(policy, summary=logs)
                return RestResult(policy, error=logs)
            force = np.asarray(logs["force"])[-1].reshape(-1)[-1:] if logs and "force" in logs else None
            unsettled = _not_settled(logs.get("measured") if logs else None)
            return RestResult(policy, logs, residual_force=force, error=unsettled)
        if not (math.isfinite(dt) and dt > 0):
            raise ValueError("the slow step Δt is unknown")
        per_step, force = [], None
        for target in policy.targets(last_target, dt):
            reading = site.step(target)  # copied: a site may return views it overwrites next step
            per_step.append(jax.tree_util.tree_map(np.array, reading.log))
            force = np.array(reading.force)
        logs = jax.tree_util.tree_map(lambda *xs: np.stack(xs), *per_step)
        if force is not None and not np.all(np.isfinite(np.asarray(force, dtype=float))):
            raise FloatingPointError("the site's state is not finite")
        return RestResult(policy, logs, residual_force=force)
    except Exception as exc:  # noqa: BLE001 - a failing stop is reported, never masks the fault
        return RestResult(policy, error=f"{type(exc).__name__}: {exc}")
