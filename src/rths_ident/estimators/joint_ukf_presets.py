"""Named presets of the joint UKF identifier (:mod:`rths_ident.estimators.joint_ukf_identifier`).

A preset is a model class, the identified fields and the options of
:func:`~rths_ident.estimators.joint_ukf_identifier.make_params` that suit one specimen;
the filter is always the one generic joint UKF (the model's own ``step``, nothing
written twice). :data:`PRESETS` is the registry (name → :class:`JointUKFPreset`);
:func:`joint_ukf_preset` builds the :class:`~rths_ident.estimators.online_identifier.OnlineIdentifier`
of a name. Every option of a preset can be overridden by keyword.

* ``lugre-column`` — the modified LuGre column of seed 001 (§2.2, §4): θ = [σ0 N/m,
  F_C N, σ3 N/m], σ1 and σ2 known. Ratio coordinates about the guess boxed at 0.4…1.6
  (``lower``/``upper``; sigma-point clipping, so no sigma point has F_C ≤ 0 or σ0 ≤ 0),
  z scaled by the guess's z_ss = F_C/σ0 and R by the guessed F_C (every filter entry
  O(1)); initial std 30 % of the guess (1e-3 of z_ss on z), diffusion 2e-3 (1e-3 on
  z/z_ss) per √s; ``force_noise_std`` default 0.5 % of the guessed F_C; sigma points
  α = 0.1, β = 2, κ = 0; the ``band`` convergence rule (tolerance 1 %, band ±0.5 % of
  the guess, hold 1 s) with the yield latch on F̂_C (fraction 0.9). Not in the thesis
  (seed 001 uses RLS only; digest 001 §2.2 notes that Bouc–Wen is "usually identified
  with an unscented Kalman filter"): an alternative to the constrained RLS of
  :mod:`rths_ident.estimators.lugre_identifier` on the same records.
* ``degrading-bouc-wen`` — the degrading Bouc–Wen specimen of seed 000 §4.7.2 (Eqs.
  4.2–4.7, :class:`rths_ident.models.DegradingBoucWen`): θ = [k_e N/m, f_y0 N, a 1/J,
  b 1/J] (``stiffness_degradation``, ``strength_degradation``), the shape constants
  known. Plain SI (ratio coordinates with θ_ref = 1), every parameter boxed at ≥ 0;
  initial std relative to the guess (``parameter_std``, default 0.3; a mapping gives
  absolute values, for a rate guessed as 0); r, H start at (0, 0) with std (1e-6 N,
  1e-9 J); process noise given *per sample* of ``sample_interval`` [s] (``process_std``,
  default 1e-3 × the state std and 1e-4 × the parameter std), i.e. a diffusion
  process_std/√sample_interval per √s; ``force_std`` [N]; sigma points α = 0.01; the
  ``std`` convergence rule (tolerance 2 %, hold 0.5 s), no yield latch.

Wrappers for scripts (:class:`~rths_ident.estimators.joint_ukf_identifier.JointUKFIdentifier`
with a preset's constructor): :class:`LuGreUKFIdentifier`,
:class:`DegradingBoucWenUKFIdentifier`; and the LuGre preset as a protocol constructor,
:func:`lugre_ukf_online_identifier`.
"""

from __future__ import annotations

from rths_ident.estimators.parameter_prior import parameter_prior
from rths_ident.registry import Registry

from typing import Callable, Mapping, NamedTuple, Sequence

import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.estimators.joint_ukf_identifier import JointUKFIdentifier, joint_ukf_online_identifier
from rths_ident.protocols import OnlineIdentifier
from rths_ident.models.degrading_bouc_wen import DegradingBoucWen, DegradingBoucWenParams
from rths_ident.models.lugre import LuGreParams, ModifiedLuGre

__all__ = [
    "JointUKFPreset",
    "PRESETS",
    "joint_ukf_preset",
    "lugre_column_options",
    "degrading_bouc_wen_options",
    "lugre_ukf_online_identifier",
    "LuGreUKFIdentifier",
    "DegradingBoucWenUKFIdentifier",
    "LUGRE_FIELDS",
    "DEGRADING_BOUC_WEN_FIELDS",
]

LUGRE_FIELDS = ("sigma0", "Fc", "sigma3")
DEGRADING_BOUC_WEN_FIELDS = ("k_e", "f_y0", "stiffness_degradation", "strength_degradation")


class JointUKFPreset(NamedTuple):
    """A named configuration of the joint UKF: ``options(guess_params, **overrides)`` →
    the keyword options of :func:`~rths_ident.estimators.joint_ukf_identifier.make_params`."""

    name: str
    model: type
    fields: tuple
    options: Callable
    description: str


# ------------------------------------------------------------------------------ lugre-column


def lugre_column_options(guess_params: LuGreParams, *, force_noise_std: float | None = None,
                         lower_ratio: float = 0.4, upper_ratio: float = 1.6, **overrides) -> dict:
    """Options of the ``lugre-column`` preset (module doc) for the guess ``guess_params``
    (σ1, σ2 known). ``lower_ratio``/``upper_ratio``: box of θ/θ_guess; ``overrides``:
    any other option of :func:`~rths_ident.estimators.joint_ukf_identifier.make_params`."""
    if not isinstance(guess_params, LuGreParams):
        raise ParameterError(f"the lugre-column preset needs a LuGreParams guess; got {type(guess_params).__name__}")
    reference = np.array([float(getattr(guess_params, f)) for f in LUGRE_FIELDS])
    if np.any(reference <= 0):
        raise ParameterError(
            "the lugre-column preset needs σ0 > 0, F_C > 0 and σ3 > 0 in the guess (it identifies them relative to "
            f"it); got σ0={reference[0]!r}, F_C={reference[1]!r}, σ3={reference[2]!r}"
        )
    for name, value in (("lower_ratio", lower_ratio), ("upper_ratio", upper_ratio)):
        if not (isinstance(value, (int, float, np.integer, np.floating)) and np.isfinite(value) and value > 0):
            raise ParameterError(f"{name} must be a positive ratio; got {value!r}")
    if not (lower_ratio <= 1.0 <= upper_ratio and lower_ratio < upper_ratio):
        raise ParameterError(
            "the bounds must contain the initial guess: need lower_ratio ≤ 1 ≤ upper_ratio and lower_ratio < "
            f"upper_ratio; got {lower_ratio!r}, {upper_ratio!r}"
        )
    options = dict(
        force_noise_std=0.005 * reference[1] if force_noise_std is None else force_noise_std,
        coordinates="ratio",
        lower=lower_ratio,
        upper=upper_ratio,
        parameter_std=0.3,
        parameter_diffusion=2e-3,
        state_scale=float(reference[1] / reference[0]),  # z_ss = F_C/σ0 of the guess [m]
        state_std=1e-3,
        state_diffusion=1e-3,
        force_scale_field="Fc",  # the filter measures R/F_C of the guess
        sigma_alpha=0.1,
        sigma_beta=2.0,
        sigma_kappa=0.0,
        convergence="band",
        convergence_tolerance=0.01,
        convergence_band=0.005,
        hold_time=1.0,
        yield_field="Fc",
        yield_fraction=0.9,
    )
    options.update(overrides)
    return options


def lugre_ukf_online_identifier(guess_params: LuGreParams, **overrides) -> OnlineIdentifier:
    """The ``lugre-column`` preset as an :class:`OnlineIdentifier` (θ̂ = [σ0 N/m, F_C N,
    σ3 N/m]); ``overrides``: options of :func:`lugre_column_options`. Same as
    ``joint_ukf_preset("lugre-column", guess_params, **overrides)``."""
    return joint_ukf_preset("lugre-column", guess_params, **overrides)


# ------------------------------------------------------------------------------ degrading-bouc-wen


def degrading_bouc_wen_options(
    guess_params: DegradingBoucWenParams,
    *,
    sample_interval: float,
    force_std: float,
    parameter_std: Mapping[str, float] | float = 0.3,
    state_std: Sequence[float] = (1e-6, 1e-9),
    process_std: Sequence[float] | None = None,
    initial_state: Sequence[float] = (0.0, 0.0),
    bounds: Mapping[str, tuple[float, float]] | None = None,
    **overrides,
) -> dict:
    """Options of the ``degrading-bouc-wen`` preset (module doc). ``sample_interval`` [s]:
    the identifier's sample interval, at which ``process_std`` (6 values for [r N, H J,
    k_e N/m, f_y0 N, a 1/J, b 1/J]) is given per sample; ``force_std`` [N]: the force
    measurement's std; ``parameter_std``: relative to the guess (float) or absolute
    (mapping by field); ``state_std``: initial std of r [N] and H [J]; ``initial_state``:
    r [N], H [J] at the start; ``bounds``: overrides of the default boxes (every
    parameter ≥ 0) by field; ``overrides``: any other option of ``make_params``."""
    if not isinstance(guess_params, DegradingBoucWenParams):
        raise ParameterError("the degrading-bouc-wen preset needs a DegradingBoucWenParams guess; got "
                             f"{type(guess_params).__name__}")
    names = DEGRADING_BOUC_WEN_FIELDS
    dt = float(sample_interval)
    if not (np.isfinite(dt) and dt > 0):
        raise ParameterError(f"sample_interval must be a positive time [s]; got {sample_interval!r}")
    force_std = float(force_std)
    if not (np.isfinite(force_std) and force_std > 0):
        raise ParameterError(f"force_std must be finite and > 0; got {force_std!r}")
    theta0, theta_std = parameter_prior(names, [getattr(guess_params, n) for n in names], parameter_std)
    state_std = np.asarray(state_std, dtype=float)
    if state_std.shape != (2,) or np.any(~(state_std > 0)):
        raise ParameterError(f"state_std must be 2 positive values ('r', 'H'); got {state_std.tolist()}")
    if process_std is None:
        process_std = np.concatenate([1e-3 * state_std, 1e-4 * theta_std])
    process_std = np.asarray(process_std, dtype=float)
    if process_std.shape != (6,) or np.any(~(process_std >= 0)):
        raise ParameterError(f"process_std must be 6 non-negative values ('r', 'H', *{names}); "
                             f"got {process_std.tolist()}")
    lower, upper = np.zeros(4), np.full(4, np.inf)
    for name, (low, high) in (bounds or {}).items():
        if name not in names:
            raise ParameterError(f"bounds: unknown parameter {name!r} (one of {names})")
        lower[names.index(name)], upper[names.index(name)] = low, high
    if np.any(theta0 < lower) or np.any(theta0 > upper):
        raise ParameterError(
            f"initial_guess {dict(zip(names, theta0.tolist()))} is outside the bounds "
            f"{dict(zip(names, zip(lower.tolist(), upper.tolist())))}"
        )
    per_second = 1.0 / np.sqrt(dt)  # Q = q² Δt per sample = process_std²
    r0, H0 = (float(v) for v in initial_state)
    options = dict(
        force_noise_std=force_std,
        coordinates="ratio",
        parameter_reference=np.ones(4),
        lower=lower,
        upper=upper,
        parameter_std=theta_std,
        parameter_diffusion=process_std[2:] * per_second,
        state_std=state_std,
        state_diffusion=process_std[:2] * per_second,
        initial_state={"hysteretic_force": r0, "dissipated_energy": H0},
        sigma_alpha=1e-2,
        sigma_beta=2.0,
        sigma_kappa=0.0,
        convergence="std",
        convergence_tolerance=0.02,
        hold_time=0.5,
    )
    options.update(overrides)
    return options


# ------------------------------------------------------------------------------ registry


PRESETS: Registry[JointUKFPreset] = Registry("joint UKF preset", {
    preset.name: preset
    for preset in (
        JointUKFPreset("lugre-column", ModifiedLuGre, LUGRE_FIELDS, lugre_column_options,
                       "seed 001's modified LuGre column: σ0, F_C, σ3; ratio coordinates, band rule, yield latch"),
        JointUKFPreset("degrading-bouc-wen", DegradingBoucWen, DEGRADING_BOUC_WEN_FIELDS, degrading_bouc_wen_options,
                       "seed 000's degrading Bouc–Wen specimen: k_e, f_y0, a, b in SI; std rule"),
    )
})


def joint_ukf_preset(name: str, guess_params, **overrides) -> OnlineIdentifier:
    """The joint UKF of preset ``name`` (:data:`PRESETS`) for the guess ``guess_params``
    (the preset model's Params: known fields, and the guess of the identified ones);
    ``overrides``: the preset's keyword options."""
    preset = PRESETS[name]  # an unknown name: the registry's error, naming the presets
    return joint_ukf_online_identifier(preset.model, guess_params, preset.fields, name=name,
                                       **preset.options(guess_params, **overrides))


# ------------------------------------------------------------------------------ wrappers


class LuGreUKFIdentifier(JointUKFIdentifier):
    """The ``lugre-column`` preset of the joint UKF for scripts (thin: a
    :class:`~rths_ident.estimators.joint_ukf_identifier.JointUKFIdentifier` built by
    :func:`lugre_ukf_online_identifier`). ``options``: those of :func:`lugre_column_options`.

    >>> ident = LuGreUKFIdentifier(guess, force_noise_std=50.0)      # guess: LuGreParams
    >>> out = ident.update(x, v, force, dt)                          # one sample
    >>> history = ident.run(x_record, v_record, force_record, dt)    # one compiled scan
    >>> ident.theta, ident.relative_std, ident.converged, ident.params_estimate
    """

    def __init__(self, initial_guess: LuGreParams, displacement: float = 0.0, **options):
        super().__init__(lugre_ukf_online_identifier(initial_guess, **options), displacement)


class DegradingBoucWenUKFIdentifier(JointUKFIdentifier):
    """The ``degrading-bouc-wen`` preset of the joint UKF for scripts (thin: a
    :class:`~rths_ident.estimators.joint_ukf_identifier.JointUKFIdentifier`), from a
    guess of the four identified values and the known shape constants.

    ``dt`` [s]: the sample interval (``update``/``run`` default; ``process_std`` is per
    sample of it). ``initial_guess``: ``{"k_e": N/m, "f_y0": N, "stiffness_degradation":
    1/J, "strength_degradation": 1/J}``. ``alpha_sv``, ``N``, ``eta1``, ``eta2``, ``k_h``
    [N/m³], ``c_e`` [N·s/m], ``min_stiffness_ratio``, ``min_strength_ratio``,
    ``substeps`` (default 2): the known fields of
    :class:`~rths_ident.models.DegradingBoucWenParams`. ``displacement0`` [m]: where the
    specimen starts. Everything else: :func:`degrading_bouc_wen_options`.
    """

    def __init__(self, dt: float, initial_guess: Mapping[str, float], parameter_std=0.3, *, alpha_sv: float,
                 N: float, eta1: float, eta2: float, force_std: float, k_h: float = 0.0, c_e: float = 0.0,
                 min_stiffness_ratio: float = 0.01, min_strength_ratio: float = 0.01, substeps: int = 2,
                 displacement0: float = 0.0, **options):
        missing = [p for p in DEGRADING_BOUC_WEN_FIELDS if p not in initial_guess]
        if missing:
            raise ParameterError(f"initial_guess lacks {missing} (needs {DEGRADING_BOUC_WEN_FIELDS})")
        guess = DegradingBoucWenParams(
            alpha_sv=alpha_sv, N=N, eta1=eta1, eta2=eta2, k_h=k_h, c_e=c_e, min_stiffness_ratio=min_stiffness_ratio,
            min_strength_ratio=min_strength_ratio, substeps=substeps,
            **{p: float(initial_guess[p]) for p in DEGRADING_BOUC_WEN_FIELDS},
        )
        identifier = joint_ukf_preset("degrading-bouc-wen", guess, sample_interval=dt, force_std=force_std,
                                      parameter_std=parameter_std, **options)
        super().__init__(identifier, displacement0, dt=dt)

