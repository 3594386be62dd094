"""Shared helpers for the structures tests: a tiny linear-spring element model with the
``rths_ident.models`` interface, the El Centro record, and seed 001 constants."""

from __future__ import annotations
import importlib.resources

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

import rths_ident  # noqa: F401  (float64)
from rths_ident._params import field_range, params_dataclass

G = 9.80665  # standard gravity [m/s²]
K_COLUMN = 1.34e6  # seed 001 Table 2.1 lateral stiffness of one W4x13 column [N/m]
ELCENTRO = str(importlib.resources.files("rths_ident.datasets") / "data/ground_motions/elcentro_1940/elcentro_1940_NS_g_dt0.02.txt")  # the shipped, byte-identical copy of shared/data
ELCENTRO_DT = 0.02


@params_dataclass
class SpringParams:
    """Linear spring (k)."""

    stiffness: float = field_range(low=0.0, unit="N/m", doc="k")


class SpringState(NamedTuple):
    displacement: jax.Array


class Spring:
    """F = k x: the element interface of CONTRIBUTING.md with the simplest maths."""

    Params = SpringParams
    State = SpringState

    @staticmethod
    def init(params):
        return SpringState(jnp.zeros(()))

    @staticmethod
    def step(params, state, inputs, dt):
        x = inputs.displacement
        return SpringState(jnp.asarray(x, dtype=jnp.float64)), params.stiffness * x

    @staticmethod
    def tangent(params, state, inputs, dt):
        return params.stiffness + 0.0 * inputs.displacement


@params_dataclass
class KelvinParams:
    """Spring + dashpot column (k, c)."""

    stiffness: float = field_range(low=0.0, unit="N/m", doc="k")
    damping: float = field_range(low=0.0, unit="N*s/m", doc="c")


class Kelvin:
    """F = k x + c v: a rate-dependent linear element."""

    Params = KelvinParams

    @staticmethod
    def init(params):
        return SpringState(jnp.zeros(()))

    @staticmethod
    def step(params, state, inputs, dt):
        x, v = inputs.displacement, inputs.velocity
        return SpringState(jnp.asarray(x, dtype=jnp.float64)), params.stiffness * x + params.damping * v

    @staticmethod
    def tangent(params, state, inputs, dt):
        return params.stiffness + 0.0 * inputs.displacement


def elcentro_m_s2(n_samples: int | None = None) -> np.ndarray:
    """El Centro 1940 NS [m/s²] at dt = 0.02 s, with a zero prepended at t = 0 so that
    a structure at rest is in equilibrium at the start (as OpenSees assumes)."""
    record = np.loadtxt(ELCENTRO) * G
    record = np.concatenate([[0.0], record])
    return record if n_samples is None else record[:n_samples]


def chain_eigenvalue_factors(n: int) -> np.ndarray:
    """Eigenvalues of the fixed-free spring chain [[2,-1],[-1,2,...],[..., -1, 1]]:
    λ_j = 4 sin²((2j − 1)π / (2(2n + 1)))."""
    j = np.arange(1, n + 1)
    return 4.0 * np.sin((2 * j - 1) * np.pi / (2 * (2 * n + 1))) ** 2
