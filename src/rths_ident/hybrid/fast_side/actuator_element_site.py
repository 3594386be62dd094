"""A specimen behind a virtual servo-hydraulic actuator, as an OpenFresco element site.

What :class:`~rths_ident.transport.openfresco.ElementServer` drives when ``rths-ident
serve site --transfer-system carrion-spencer`` runs: the client's trial displacement is
the actuator's *command*, the Carrion–Spencer actuator with control–structure
interaction (:mod:`rths_ident.hybrid.fast_side.actuator`) moves the specimen, and the client gets
back what a laboratory would measure at the end of the step.

Per trial (``set_trial(d, v, a, t)``), from the committed state (trials are pure, the
last one before ``commit()`` is kept, like OpenSees' Newton iterations expect):

* step length ``Δt = t − t_committed`` (the client's time; genericClient and the simapp
  dialect send it), split into ``N = max(1, round(Δt·f_fast))`` controller periods
  (``f_fast`` 4000 Hz by default);
* command ramped linearly from the committed command to the new one over the N periods
  (what a lab's rate transition does to a slow-rate target; a step would kick the
  servo-valve), each period held (ZOH) through :func:`~rths_ident.hybrid.fast_side.actuator.actuator_step`;
* measured: the actuator displacement ``x_a`` (LVDT) and the specimen's restoring force
  ``R(x_a)`` (the load cell, the virtual site's convention) at the end of the step.
  ``force()`` is R (in the basic DOFs: ``[−R, R]`` for two nodes),
  ``measured_displacement()`` is ``x_a`` (``[d0, d0 + x_a]`` for two nodes);
  getDisp and getDaqResponse return it. A trial at ``Δt ≤ 0`` leaves the actuator where
  it was committed.

The tangent the client may ask for is the specimen's initial stiffness (the loop's
dynamics are not a static tangent). An actuator limit (stroke, velocity, force) raises
:class:`~rths_ident.hybrid.fast_side.actuator.ActuatorLimitError` at the commit that crossed it;
:meth:`ActuatorElementSite.safe_stop` then brings the actuator to rest (the element
server calls it before it tells its client).

Interlocks (``interlocks``, :mod:`rths_ident.hybrid.fast_side.interlocks`): every commit
checks the step's controller periods — command stroke and velocity, measured (x_a)
stroke and velocity, force R, tracking |command − x_a| over the window; the first that
trips raises :class:`~rths_ident.hybrid.fast_side.interlocks.InterlockTripped` (which,
value, limit, the commit and the client's time), and the element server brings the
actuator to rest the same way (:meth:`ActuatorElementSite.safe_stop`).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.hybrid.fast_side import actuator as act
from rths_ident.hybrid.fast_side.interlocks import InterlockMonitor, Interlocks, InterlockTripped
from rths_ident.typed_leaves import canonical_state
from rths_ident.models import ElementInputs

#: Controller rate [Hz] of the virtual actuator (seed 000's fast rate).
DEFAULT_FAST_RATE = 4000.0


@functools.lru_cache(maxsize=16)
def _compiled_run(n_periods: int):
    """``run(params, state, x_from, x_to, dt_fast) -> (state, log)``: N controller periods
    with the command ramped from ``x_from`` to ``x_to`` (one compile per N); ``log`` has
    each period's ``command``, ``measured`` (x_a) and ``force`` (R)."""

    def run(params, state, x_from, x_to, dt_fast):
        params = act.with_discretisation(params, dt_fast)  # the exact integrator's matrices, once
        fractions = jnp.arange(1, n_periods + 1, dtype=jnp.float64) / n_periods
        commands = x_from + fractions * (x_to - x_from)

        def body(carry, command):
            carry, outputs = act.actuator_step(params, carry, act.ActuatorInputs(command), dt_fast)
            return carry, (carry.displacement, carry.restoring_force)

        state, (x_a, force) = jax.lax.scan(body, state, commands)
        return state, {"command": commands, "measured": x_a, "force": force}

    return jax.jit(run)


class ActuatorElementSite:
    """The :class:`~rths_ident.transport.openfresco.ElementSite` of a specimen model
    driven through the Carrion–Spencer actuator (module doc).

    model, params : the specimen's :mod:`rths_ident.models` class and its Params (SI).
    actuator : :class:`~rths_ident.hybrid.fast_side.actuator.CarrionSpencerParams`.
    n_basic : 1 (one node) or 2 (two nodes, deformation ``d[1] − d[0]``).
    fast_rate : controller rate [Hz].
    """

    def __init__(self, model, params, actuator: act.CarrionSpencerParams, n_basic: int = 2,
                 fast_rate: float = DEFAULT_FAST_RATE, interlocks: Interlocks | None = None):
        if n_basic not in (1, 2):
            raise ValueError(f"ActuatorElementSite.n_basic must be 1 or 2; got {n_basic}")
        if not (np.isfinite(fast_rate) and fast_rate > 0):
            raise ValueError(f"ActuatorElementSite.fast_rate must be a finite rate > 0 Hz; got {fast_rate!r}")
        self.model, self.params, self.n_basic = model, params, n_basic
        self.fast_rate = float(fast_rate)
        self.transfer = act.TransferSystemParams(actuator=actuator, specimen=params, specimen_model=model)
        self._pattern = np.array([1.0]) if n_basic == 1 else np.array([-1.0, 1.0])
        self._state = canonical_state(act.actuator_init(self.transfer))  # traced once, not twice
        self._trial_state = self._state
        self.committed_time = 0.0
        self.committed_command = 0.0
        self._trial_time = 0.0
        self._trial_command = 0.0
        self._base = 0.0  # d[0] of a two-node element (moves rigidly with the specimen's base)
        self.history: list = []  # (time, command, x_a, R) per commit
        self._trial_log: dict | None = None
        self.monitor = None if interlocks is None else InterlockMonitor(interlocks, 1.0 / self.fast_rate)

    def _deformation(self, values) -> float:
        v = np.asarray(values, dtype=np.float64)
        return float(v[0]) if self.n_basic == 1 else float(v[1] - v[0])

    def set_trial(self, displacement, velocity, acceleration, time) -> None:
        command = self._deformation(displacement)
        self._base = 0.0 if self.n_basic == 1 else float(np.asarray(displacement)[0])
        t = float(time) if time is not None else self.committed_time
        dt = t - self.committed_time
        self._trial_time, self._trial_command = t, command
        if dt <= 0.0:
            self._trial_state, self._trial_log = self._state, None
            return
        n_periods = max(1, int(round(dt * self.fast_rate)))
        run = _compiled_run(n_periods)
        self._trial_state, self._trial_log = run(self.transfer, self._state, jnp.float64(self.committed_command),
                                                 jnp.float64(command), jnp.float64(dt / n_periods))

    def _x_a(self) -> float:
        return float(self._trial_state.displacement)

    def _restoring_force(self) -> float:
        return float(self._trial_state.restoring_force)

    def force(self) -> np.ndarray:
        return self._pattern * self._restoring_force()

    def measured_displacement(self) -> np.ndarray:
        if self.n_basic == 1:
            return np.array([self._x_a()])
        return np.array([self._base, self._base + self._x_a()])

    def commit(self) -> None:
        self._state = self._trial_state
        self.committed_time, self.committed_command = self._trial_time, self._trial_command
        self.history.append((self.committed_time, self.committed_command, self._x_a(), self._restoring_force()))
        self._raise_if_limit_latched()
        if self.monitor is not None and self._trial_log is not None:
            log = jax.device_get(self._trial_log)
            log["target"] = log["command"]  # the client's displacement, ramped: what x_a must follow
            trip = self.monitor.check_site_log(log, len(self.history) - 1, time=self.committed_time)
            if trip is not None:  # the element server calls safe_stop() before it tells the client
                raise InterlockTripped(trip)

    def _raise_if_limit_latched(self) -> None:
        """:class:`~rths_ident.hybrid.fast_side.actuator.ActuatorLimitError` for the first limit the
        state has latched (stroke, velocity or force; value, limit and time)."""
        code = int(self._state.limit_code)
        if code == 0:
            return
        actuator = self.transfer.actuator
        for bit, name, limit in ((act.LIMIT_STROKE, "stroke", actuator.stroke_limit),
                                 (act.LIMIT_VELOCITY, "velocity", actuator.velocity_limit),
                                 (act.LIMIT_FORCE, "force", actuator.force_limit)):
            if code & bit:
                raise act.ActuatorLimitError(name, float(self._state.limit_value), float(limit),
                                             float(self._state.limit_time), self.history)

    def safe_stop(self, hold_s: float = 0.5, ramp_s: float = 2.0) -> str:
        """Bring the virtual actuator to rest from the committed state (after a limit):
        the committed command held ``hold_s`` [s], then ramped linearly to zero over
        ``ramp_s`` [s], at the controller rate; returns what happened (one sentence)."""
        dt_fast = 1.0 / self.fast_rate
        command = float(self.committed_command)
        state = self._state
        for n, start, end in ((max(1, round(hold_s * self.fast_rate)), command, command),
                              (max(1, round(ramp_s * self.fast_rate)), command, 0.0)):
            state, _ = _compiled_run(n)(self.transfer, state, jnp.float64(start), jnp.float64(end),
                                        jnp.float64(dt_fast))
        x_a, force = state.displacement, state.restoring_force
        self._state = self._trial_state = state
        self.committed_command = self._trial_command = 0.0
        return (f"the actuator was brought to rest: command held at {command * 1e3:.4g} mm for {hold_s:g} s, ramped "
                f"to zero over {ramp_s:g} s; displacement {float(x_a) * 1e3:.4g} mm, specimen force "
                f"{float(force):.4g} N")

    def _stiffness_matrix(self, k: float) -> np.ndarray:
        return k * np.outer(self._pattern, self._pattern)

    def initial_stiffness(self) -> np.ndarray:
        state0 = self.model.init(self.params)
        k0 = float(self.model.tangent(self.params, state0, ElementInputs(0.0, 0.0), 0.0))
        return self._stiffness_matrix(k0)

    def tangent_stiffness(self) -> np.ndarray:
        return self.initial_stiffness()

    def damping(self) -> np.ndarray:
        return np.zeros((self.n_basic, self.n_basic))

    def mass(self) -> np.ndarray:
        return np.zeros((self.n_basic, self.n_basic))
