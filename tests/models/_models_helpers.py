"""Shared helpers for the model tests: seeded random cyclic histories, an OpenSeesPy
driver (testUniaxialMaterial / setStrain / getStress), and gradient / vmap checks."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rths_ident  # noqa: F401  (float64)
from rths_ident.models.base import _history_function


def random_cyclic_history(seed, n_points, amplitude, n_harmonics=3, max_cycles=4.0):
    """Smooth random cyclic displacement: a few sines with random amplitudes, frequencies
    and phases under a sin-shaped envelope (starts and ends at 0). Peak ≈ amplitude."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 1.0, n_points)
    amps = rng.uniform(0.3, 1.0, n_harmonics)
    cycles = rng.uniform(1.0, max_cycles, n_harmonics)
    phases = rng.uniform(0.0, 2 * np.pi, n_harmonics)
    x = (amps * np.sin(2 * np.pi * cycles * t[:, None] + phases)).sum(axis=1)
    x *= np.sin(np.pi * t)
    return amplitude * x / np.max(np.abs(x))


def opensees_uniaxial(material, displacement, tangent=False):
    """Drive an OpenSees uniaxial material by displacement; returns stress (and tangent)."""
    ops = pytest.importorskip("openseespy.opensees")
    ops.wipe()
    ops.uniaxialMaterial(*material)
    ops.testUniaxialMaterial(material[1])
    stress, stiffness = [], []
    for x in displacement:
        ops.setStrain(float(x))
        stress.append(ops.getStress())
        if tangent:
            stiffness.append(ops.getTangent())
    ops.wipe()
    if tangent:
        return np.array(stress), np.array(stiffness)
    return np.array(stress)


def relative_rms(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return float(np.sqrt(np.mean((a - b) ** 2)) / np.sqrt(np.mean(b**2)))


def scan_forces(model_cls, params, x, v, dt):
    """Force history through the library's jitted lax.scan."""
    return _history_function(model_cls, False)(params, jnp.asarray(x), jnp.asarray(v), dt)


def check_gradients(model_cls, params, x, v, dt, fields, rtol=1e-5, rel_step=1e-6, seed=0):
    """jax.grad of a weighted sum of the force history w.r.t. every field in ``fields``
    against central finite differences. Returns {field: (ad, fd)}."""
    weights = jnp.asarray(np.random.default_rng(seed).normal(size=len(x)))
    x, v = jnp.asarray(x), jnp.asarray(v)

    def loss(p):
        return jnp.sum(weights * scan_forces(model_cls, p, x, v, dt))

    grads = jax.grad(loss)(params)
    results = {}
    for name in fields:
        value = float(getattr(params, name))
        h = rel_step * max(abs(value), 1e-12)
        up = dataclasses.replace(params, **{name: value + h})
        down = dataclasses.replace(params, **{name: value - h})
        fd = (float(loss(up)) - float(loss(down))) / (2 * h)
        ad = float(getattr(grads, name))
        results[name] = (ad, fd)
        scale = max(abs(fd), 1e-8 * float(jnp.sum(jnp.abs(weights * scan_forces(model_cls, params, x, v, dt)))) / max(abs(value), 1e-12))
        assert abs(ad - fd) <= rtol * scale, f"d/d{name}: autodiff {ad!r} vs finite difference {fd!r}"
    return results


def check_vmap(model_cls, param_list, x, v, dt):
    """vmap over a batch of params equals a Python loop over them."""
    names = [f.name for f in dataclasses.fields(param_list[0])]
    static = {}
    batched = {}
    for name in names:
        values = [getattr(p, name) for p in param_list]
        if isinstance(values[0], str) or (isinstance(values[0], int) and not isinstance(values[0], bool) and name == "substeps"):
            static[name] = values[0]
        else:
            batched[name] = jnp.asarray(np.array(values, dtype=float))
    batch = type(param_list[0])(**batched, **static)
    run = _history_function(model_cls, False)
    vmapped = jax.vmap(run, in_axes=(0, None, None, None))(batch, jnp.asarray(x), jnp.asarray(v), dt)
    looped = np.stack([np.asarray(run(p, jnp.asarray(x), jnp.asarray(v), dt)) for p in param_list])
    np.testing.assert_allclose(np.asarray(vmapped), looped, rtol=1e-12, atol=1e-12 * np.abs(looped).max())
