"""A small numerical substructure in pure NumPy, for the session-protocol tests.

A linear SDOF (mass m [kg], stiffness k [N/m]) under ground acceleration, explicit
Newmark (γ = 1/2, β = 0): the target is the predictor u + Δt v + Δt²/2 a. Its step log
has a vector, a 0-d float and an integer, so the log codec is exercised; θ̂ = [k] updates
the stiffness. It fails on purpose when the feedback exceeds ``fail_above`` [N] (a
"diverged" analysis) and refuses k ≤ 0.
"""

from __future__ import annotations

import numpy as np


class ToySDOF:
    def __init__(self, dt=0.01, m=100.0, k=4.0e4, fail_above=1e9):
        self.dt, self.m, self.k, self.fail_above = float(dt), float(m), float(k), float(fail_above)
        self.n_interface = 1
        self.parameter_names = ("k",)
        self.parameter_units = ("N/m",)
        self.u = self.v = self.a = 0.0
        self.steps = 0
        self.closed = False

    def _target(self):
        return np.array([self.u + self.dt * self.v + 0.5 * self.dt**2 * self.a])

    def initial_target(self):
        return self._target() + 1e-3  # not zero, so the handshake's TARGET is checked

    def step(self, feedback, ground_accel):
        f = float(np.asarray(feedback).reshape(-1)[0])
        if abs(f) > self.fail_above:
            raise RuntimeError(f"analysis diverged: feedback {f:g} N")
        u_new = float(self._target()[0])
        a_new = (-self.k * u_new - f - self.m * float(ground_accel)) / self.m
        self.v = self.v + 0.5 * self.dt * (self.a + a_new)
        self.u, self.a = u_new, a_new
        self.steps += 1
        log = {"displacement": np.array([self.u, 2.0 * self.u]), "time": np.asarray(self.steps * self.dt),
               "count": np.array([self.steps], dtype=np.int64)}
        return self._target(), log

    def apply_parameters(self, estimate):
        k = float(np.asarray(estimate).reshape(-1)[0])
        if not k > 0:
            raise ValueError(f"k must be > 0 N/m, got {k!r}")
        self.k = k

    def close(self):
        self.closed = True
