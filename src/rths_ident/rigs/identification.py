"""Seed 002's identification between tests, as one path from a test record (§5.2;
digest 002 §4, §6 E):

1. **static K_e** — :func:`static_stiffness_test` drives a site quasi-statically to each
   displacement (increments ≤ ``increment``, then ``holds`` readings at rest) and fits
   F = K_e u + F_0 (:func:`~rths_ident.estimators.offline.static_stiffness`);
2. **log decrement** — from the hybrid free-vibration record of specimen + known numerical
   part (M_1, C_1, K_1): δ, ζ, ω_n, then M_T = K_T/ω_n², C_T = 2ζ√(K_T M_T) and M_e, C_e by
   subtraction (:func:`~rths_ident.estimators.offline.identify_free_vibration`), with the
   sensitivity ∂M_e/∂T_d = 2 M_T/T_d reported — one step of timing resolution Δt moves
   M_e by ≈ 2 M_T Δt/T_d (0.74 kg on the thesis' rig, twice M_e itself);
3. **least squares** — r = M_e ü + C_e u̇ + K_e u over the logged imposed displacement and
   measured force (:func:`~rths_ident.estimators.offline.fit`, model ``linear``, method
   ``ls``: u̇ and ü by second-order differences), twice: with K_e held at the static
   value (M_e and C_e fitted: the thesis' order, K_e first) and with all three free. A
   free vibration is one frequency, so ü ≈ −ω_d² u and M_e and K_e are collinear: the
   free fit returns K_e − M_e ω_d² with M_e at its bound 0 (on the thesis' specimen
   M_e ω_d² = 16 N/m, 1 % of K_e) — the reason the static K_e comes first.

:func:`identify_between_tests` runs 2 and 3 on one record and returns both side by side.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.estimators.offline import (
    FitData,
    FreeVibrationIdentification,
    StaticStiffness,
    bounded_linear_least_squares,
    fit,
    nrmse_range_percent,
    identify_free_vibration,
    static_stiffness,
)

__all__ = ["static_stiffness_test", "StaticTest", "BetweenTests", "identify_between_tests", "identify_from_logs",
           "identify_on_site", "STATIC_LEVELS"]

#: the static test's displacements [m] (±2 … ±8 mm, inside the rig's 10 mm stroke)
STATIC_LEVELS = (-0.008, -0.006, -0.004, -0.002, 0.002, 0.004, 0.006, 0.008)


@dataclasses.dataclass(frozen=True)
class StaticTest:
    """The static test's readings (displacement [m], force [N]) and its line."""

    displacement: np.ndarray
    force: np.ndarray
    line: StaticStiffness


def static_stiffness_test(site, displacements, *, increment: float = 1e-4, holds: int = 3) -> StaticTest:
    """Static K_e (module doc, step 1) on ``site`` (any :class:`~rths_ident.protocols.Site`
    with one interface DOF); returns to zero at the end."""
    levels = np.asarray(displacements, dtype=float).reshape(-1)
    if levels.size < 2 or not np.all(np.isfinite(levels)):
        raise ParameterError(f"displacements must be ≥ 2 finite values [m]; got {displacements!r}")
    if not increment > 0 or int(holds) != holds or holds < 1:
        raise ParameterError(f"increment must be > 0 [m] and holds an integer ≥ 1; got {increment!r}, {holds!r}")
    position, forces = 0.0, []

    def travel(to):
        n = int(np.ceil(abs(to - position) / increment))
        for x in np.linspace(position, to, n + 1)[1:]:
            site.step([x])
        return to

    for level in levels:
        position = travel(level)
        for _ in range(holds):
            reading = site.step([level])
        forces.append(float(reading.force[0]))
    travel(0.0)
    force = np.array(forces)
    return StaticTest(levels, force, static_stiffness(levels, force))


@dataclasses.dataclass(frozen=True)
class BetweenTests:
    """Both identifications of one free-vibration record, SI units."""

    log_decrement: FreeVibrationIdentification
    mass_change_per_time_step: float  # ∂M_e/∂T_d · Δt [kg]: M_e's change for one Δt of T_d
    least_squares: dict  # {"m", "c", "k", "nrmse_percent"} of r = m ü + c u̇ + k u, k held at the static K_e
    least_squares_free: dict  # the same with k free (module doc: returns K_e − M_e ω_d², m at 0)


def identify_between_tests(time, displacement, imposed, force, *, specimen_stiffness: float,
                           numerical_mass: float, numerical_damping: float, numerical_stiffness: float,
                           min_peak: float = 0.002) -> BetweenTests:
    """Log decrement of ``displacement`` (the numerical DOF's free vibration) and least
    squares of ``force`` on ``imposed`` (the displacement the specimen was given), one
    record at uniform steps ``time`` [s]. ``min_peak`` [m]: peaks below it are not used
    (the rig's force resolution floor, ≈ 2 mm in seed 002 §5.3)."""
    t = np.asarray(time, dtype=float)
    ident = identify_free_vibration(t, displacement, specimen_stiffness + numerical_stiffness,
                                    numerical_mass=numerical_mass, numerical_damping=numerical_damping,
                                    numerical_stiffness=numerical_stiffness, min_peak=min_peak)
    data = FitData.from_arrays(np.asarray(imposed, dtype=float), np.asarray(force, dtype=float), t,
                               source="hybrid record")

    def summary(result):
        out = {name: float(result.params[name]) for name in ("m", "c", "k")}
        out["nrmse_percent"] = float(result.nrmse_percent)
        return out

    free = summary(fit(data, "linear", "ls"))
    # K_e held: r − K_e u = m ü + c u̇, the same constrained LS solver (m, c ≥ 0), the same differences
    u, r = data.displacement, data.force
    velocity = np.gradient(u, t, edge_order=2)
    acceleration = np.gradient(velocity, t, edge_order=2)
    m, c = bounded_linear_least_squares(np.column_stack([acceleration, velocity]), r - specimen_stiffness * u,
                                        lower=np.zeros(2))
    fitted = m * acceleration + c * velocity + specimen_stiffness * u
    held = {"m": float(m), "c": float(c), "k": float(specimen_stiffness),
            "nrmse_percent": float(nrmse_range_percent(fitted, r))}
    dt = float(np.mean(np.diff(t)))
    return BetweenTests(ident, ident.mass_sensitivity_to_period * dt, held, free)


def identify_from_logs(logs: dict, *, specimen_stiffness: float, numerical_mass: float, numerical_damping: float,
                       numerical_stiffness: float, dof: int = 0, min_peak: float = 0.002) -> BetweenTests:
    """:func:`identify_between_tests` on the logs of a step-wise run (``run_stepwise``'s
    return or ``LoopAborted.logs``) of :class:`~rths_ident.structures.partitioned_newmark.PartitionedNewmark`
    against a site: ``ns.time``, ``ns.displacement[:, dof]`` (the free vibration) and the
    site's ``fast.displacement`` and ``fast.force`` (what the specimen got and gave)."""
    try:
        time = logs["ns"]["time"]
        displacement = logs["ns"]["displacement"][:, dof]
        imposed, force = logs["fast"]["displacement"][:, 0], logs["fast"]["force"][:, 0]
    except (KeyError, TypeError, IndexError) as exc:
        raise ParameterError("logs must hold ns.time, ns.displacement, fast.displacement and fast.force of a "
                             f"partitioned run; missing {exc}") from exc
    return identify_between_tests(time, displacement, imposed, force, specimen_stiffness=specimen_stiffness,
                                  numerical_mass=numerical_mass, numerical_damping=numerical_damping,
                                  numerical_stiffness=numerical_stiffness, min_peak=min_peak)


def identify_on_site(site_spec: str, dt: float = 0.01, *, specimen=None, seed: int = 0,
                     numerical=(34.0, 8.5, 30.0), initial_displacement: float = 0.01, steps: int = 1200,
                     static_levels=STATIC_LEVELS) -> tuple[float, BetweenTests]:
    """The whole identification between tests on a site (``open_site``'s ``site_spec``;
    ``specimen``: the virtual specimen behind ``emulator``/``direct``, default seed 002's):
    the static K_e test (:func:`static_stiffness_test`), then a free vibration of the
    numerical part (M₁ kg, C₁ N·s/m, K₁ N/m; default seed 002 Case 1) from
    ``initial_displacement`` [m] coupled to the site by the partitioned Newmark scheme, and
    :func:`identify_from_logs` with K̂_e held. Returns (K̂_e [N/m], the identification)."""
    from rths_ident.hybrid.loop.engine import run_stepwise  # noqa: PLC0415
    from rths_ident.rigs.site_spec import open_site  # noqa: PLC0415
    from rths_ident.structures.partitioned_newmark import PartitionedNewmark  # noqa: PLC0415

    mass, damping, stiffness = (float(v) for v in numerical)
    with open_site(site_spec, dt, specimen=specimen, seed=seed) as site:
        k_hat = static_stiffness_test(site, static_levels).line.stiffness
    with open_site(site_spec, dt, specimen=specimen, seed=seed) as site:
        ns = PartitionedNewmark([[mass]], [[damping]], [[stiffness]], [0], dt, displacement0=[initial_displacement])
        logs = run_stepwise(site, ns, np.zeros(steps + 1))
    return k_hat, identify_from_logs(logs, specimen_stiffness=k_hat, numerical_mass=mass, numerical_damping=damping,
                                     numerical_stiffness=stiffness)
