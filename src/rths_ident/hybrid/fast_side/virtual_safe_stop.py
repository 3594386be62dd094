"""The virtual site's safe stop: the actuator command itself held, then ramped to zero.

After a fault the rate transition and the compensator are no longer trusted (a
predicting transition extrapolates a frozen target into a jump; a compensator adapts to a
target that no longer moves). A lab controller drops them and drives the actuator's
command directly; so does :func:`make_command_chunk`: one slow step of commands at the
fast rate through the transfer system (actuator with control–structure interaction,
specimen) and the sensors, nothing else. :class:`~rths_ident.hybrid.loop.safe_stop.SafeStop`
gives the command profile: the last command u_c held for ``hold_s``, then a linear ramp to
zero over ``ramp_s``, then zero for ``settle_s``, sample by sample at the fast rate.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.hybrid.fast_side import actuator as act
from rths_ident.hybrid.fast_side import sensors
from rths_ident.hybrid.fast_side.fast_chunk import read_channel, transfer_system_params


def make_command_chunk(side) -> Callable:
    """``command_chunk(fast_params, fast_state, commands (ratio,)) -> (fast_state, log)``
    for a :class:`~rths_ident.hybrid.fast_side.fast_chunk.FastSide` (its state and parameter
    pytrees; module doc). The log has the virtual site's keys (target = command)."""
    ratio, dt_fast = side.ratio, 1.0 / side.fast_rate

    def command_chunk(fp, fs, commands):
        zeros = sensors.SensorInputs(jnp.zeros(ratio))
        sd, noise_x = sensors.sensor_step(fp["sensor_displacement"], fs["sensor_displacement"], zeros, dt_fast)
        sf, noise_f = sensors.sensor_step(fp["sensor_force"], fs["sensor_force"], zeros, dt_fast)
        transfer_params = transfer_system_params(side, fp["actuator"], fp["specimen"],
                                                 fp.get("actuator_discretisation"))

        def fast_step(actuator_state, inputs):
            x_command, nx, nf = inputs
            actuator_state, out = side.actuator_step(transfer_params, actuator_state, act.ActuatorInputs(x_command),
                                                     dt_fast)
            log = {"target": x_command, "command": x_command,
                   "measured": read_channel(fp["sensor_displacement"], out["x_measured"] + nx),
                   "force": read_channel(fp["sensor_force"], out["restoring_force"] + nf),
                   "true_force": out["restoring_force"], "limit": out["limit_code"]}
            return actuator_state, log

        actuator_state, log = jax.lax.scan(fast_step, fs["actuator"], (commands, noise_x, noise_f))
        return dict(fs, actuator=actuator_state, sensor_displacement=sd, sensor_force=sf), log

    return command_chunk


def command_profile(last_command: float, ratio: int, dt_slow: float, policy) -> np.ndarray:
    """The fast-rate commands (slow steps, ratio) of ``policy``: ``last_command`` [m]
    held ``hold_s``, then ramped linearly to exactly zero over ``ramp_s``, then zero for
    ``settle_s`` and up to the end of the last slow step."""
    dt_fast = dt_slow / ratio
    n_hold = int(np.ceil(policy.hold_s / dt_fast - 1e-9))
    n_ramp = max(1, int(np.ceil(policy.ramp_s / dt_fast - 1e-9)))
    n_settle = int(np.ceil(policy.settle_s / dt_fast - 1e-9))
    profile = np.concatenate([np.full(n_hold, 1.0), 1.0 - np.arange(1, n_ramp + 1) / n_ramp, np.zeros(n_settle)])
    n_steps = int(np.ceil(profile.size / ratio))
    profile = np.concatenate([profile, np.zeros(n_steps * ratio - profile.size)])
    return float(last_command) * profile.reshape(n_steps, ratio)
