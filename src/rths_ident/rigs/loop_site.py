"""A rig as the hybrid loop's physical side, with the test's online identifier beside it.

The virtual fast side logs every fast sample and runs the identifier inside its compiled
chunk; a rig (:class:`~rths_ident.rigs.hardware_site.HardwareSite`) is read once per
slow step by its own controller. :class:`RigLoopSite` puts a rig behind the same
:class:`~rths_ident.protocols.Site` protocol *and* the same log as the virtual side —
``target``, ``command`` (in metres: the target the rig was sent; ``command_raw`` is the
rig's own unit), ``measured``, ``force``, ``limit`` per sample, one sample per step — and runs the test's :class:`~rths_ident.protocols.OnlineIdentifier` on what the
rig measured (velocity by backward difference of the measured displacement at Δt_n),
so a test runs on a rig by changing its site and nothing else: the same hook, guards,
model updating, metrics and record.

:class:`HystereticSpecimen` is any model of :mod:`rths_ident.models` as the emulated
board's specimen (:class:`~rths_ident.rigs.emulator.RigEmulator`), beside seed 002's
linear M–C–K one.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.models import ElementInputs
from rths_ident.protocols import Estimate, IdentifierInputs, OnlineIdentifier, SiteReading

__all__ = ["RigLoopSite", "HystereticSpecimen"]


class RigLoopSite:
    """``hardware`` (a site with ``step(target) -> SiteReading`` whose log has
    ``command``, a ``close()`` and optionally ``safe_stop()``) behind the virtual side's
    log shape, with ``identifier`` run on its readings (module doc).

    dt : the slow step Δt_n [s]; on_close : called after the rig is closed (e.g. to stop
    an emulator)."""

    def __init__(self, hardware, identifier: OnlineIdentifier | None, dt: float, on_close=None):
        if not (np.isfinite(dt) and dt > 0):
            raise ParameterError(f"dt must be a positive slow step [s]; got {dt!r}")
        self.hardware, self.dt, self._on_close = hardware, float(dt), on_close
        self.n_interface = int(getattr(hardware, "n_interface", 1))
        self.identifier = identifier
        self._previous_x: np.ndarray | None = None
        if identifier is not None:
            self._step = jax.jit(lambda state, x, v, f: identifier.step(
                identifier.params, state, IdentifierInputs(x, v, f), self.dt)[0])
            self._estimate = jax.jit(lambda state: identifier.estimate(identifier.params, state))
            self._state = identifier.init(identifier.params)
            self._estimate(self._state)  # compiled now, not in the first step of a test
        else:
            empty = jnp.zeros(0)
            self._fixed_estimate = Estimate(empty, empty, jnp.asarray(False), jnp.asarray(True))

    @property
    def where(self) -> str:
        return getattr(self.hardware, "where", "rig")

    def step(self, target) -> SiteReading:
        reading = self.hardware.step(target)
        x, force = np.asarray(reading.displacement, float), np.asarray(reading.force, float)
        target = np.asarray(target, float).reshape(-1)
        # the command in metres is the target itself (a rig takes its own units: "command_raw")
        raw = np.asarray(reading.log.get("command", target), float).reshape(-1)
        log = {"target": target, "command": target.copy(), "command_raw": raw, "measured": x.reshape(-1),
               "force": force.reshape(-1), "limit": np.zeros(1, dtype=np.int32)}
        if self.identifier is None:
            return SiteReading(x, force, log, self._fixed_estimate)
        previous = x if self._previous_x is None else self._previous_x
        velocity = (x - previous) / self.dt
        self._previous_x = x
        self._state = self._step(self._state, jnp.asarray(x[0]), jnp.asarray(velocity[0]), jnp.asarray(force[0]))
        return SiteReading(x, force, log, jax.device_get(self._estimate(self._state)))

    def safe_stop(self, last_target=None, dt=None, policy=None) -> str:
        stop = getattr(self.hardware, "safe_stop", None)
        return stop() if stop is not None else "the rig has no safe stop of its own"

    @property
    def at_rest(self) -> bool:
        """Whether the rig's safe stop could bring it to rest (False: secure it by hand)."""
        if getattr(self.hardware, "safe_stop", None) is None:
            return False
        return bool(getattr(self.hardware, "at_rest", True))

    def close(self) -> None:
        try:
            self.hardware.close()
        finally:
            if self._on_close is not None:
                self._on_close()


@dataclasses.dataclass
class HystereticSpecimen:
    """A model of :mod:`rths_ident.models` (``model`` the class, ``params`` its Params)
    as the emulated board's specimen: ``force(u, previous)`` [N] at the imposed
    displacement u [m] after the history ``previous = (u_{k−1}, u_{k−2})``, the model
    advanced by one step of ``test_dt`` [s] (velocity by backward difference), plus an
    inertia ``mass`` [kg] (acceleration by second difference)."""

    model: type
    params: object
    test_dt: float = 0.01
    mass: float = 0.0

    def __post_init__(self):
        if not self.test_dt > 0:
            raise ParameterError(f"HystereticSpecimen.test_dt must be > 0 [s]; got {self.test_dt!r}")
        if not (np.isfinite(self.mass) and self.mass >= 0):
            raise ParameterError(f"HystereticSpecimen.mass must be finite and ≥ 0 [kg]; got {self.mass!r}")
        model, params, dt = self.model, self.params, float(self.test_dt)
        self._step = jax.jit(lambda state, x, v: model.step(params, state, ElementInputs(x, v), dt))
        self._state = model.init(params)

    def force(self, u: float, previous: tuple) -> float:
        u1, u2 = previous
        velocity = (u - u1) / self.test_dt
        self._state, force = self._step(self._state, jnp.asarray(float(u)), jnp.asarray(float(velocity)))
        acceleration = (u - 2.0 * u1 + u2) / self.test_dt**2
        return float(force) + self.mass * acceleration
