"""The joint state–parameter UKF identifier over any hysteretic model of :mod:`rths_ident.models`.

The specimen is displacement-driven (the RTHS case: the actuator imposes x, the load
cell measures the restoring force R). For a model class ``Model`` (``ModifiedLuGre``,
``BoucWen``, ``DegradingBoucWen``, ``BilinearKinematic``, ``PinchingBoucWen``, …; each
with static ``init(params)`` and ``step(params, state, ElementInputs(x, v), dt) ->
(state, force)``) and a tuple of identified fields θ of its ``Params``, the filter state
is::

    s = [ model state entries / state_scale,  parameter coordinates u ]

* model state entries: every leaf of ``Model.State`` except ``displacement`` (which is
  the previous *measured* x, an input, not an unknown), flattened in field order;
  e.g. z for LuGre/Bouc–Wen, (r, H) for the degrading Bouc–Wen, the previous force for
  the bilinear model. ``state_scale`` (default 1, SI) conditions the filter (the LuGre
  preset uses the guess's z_ss = F_C/σ0, so that the entry is O(1)); ``state_std`` and
  ``state_diffusion`` are in these filter units.
* parameter coordinates (option ``coordinates``): ``"log"`` (default) θ_i = θ_ref,i ·
  exp(u_i) — positive by construction, no bounds needed; ``"ratio"`` θ_i = θ_ref,i · u_i
  (box ``[lower, upper]`` on u enforced by the UKF core's sigma-point clipping). θ_ref is
  the initial guess by default (``"ratio"`` with θ_ref = 1 is plain SI).

Process model (sample k−1 → k; measured x_{k−1}, x_k, ẋ_k)::

    model state_k = Model.step(params(θ), State(x_{k−1}, model state_{k−1}), ElementInputs(x_k, ẋ_k), Δt)[0]
    u_k           = u_{k−1}            (random walk through the process noise)
    params(θ)     = the guess Params with the identified fields replaced (a pytree
                    rebuild, not validated: sigma points may be anywhere)
    Q             = diag(q²) · Δt      q: diffusion per √s of each filter entry

Measurement model: R_k = the model's force at the sigma point's end state, i.e.
``Model.step`` with a zero displacement increment from it (every model of
:mod:`rths_ident.models` returns its current force then; the velocity enters as in the
model, e.g. σ1 ż + σ2 ẋ of LuGre, c_e ẋ of the degrading Bouc–Wen); noise variance
``force_noise_std²`` [N²]. With option ``force_scale_field`` (a force-valued identified
field, e.g. ``"Fc"``) the filter measures R / θ_ref[force_scale_field] instead (noise
variance scaled alike), so that the measurement is O(1) too; outputs stay in N.

So the equations are the model's own — nothing is written twice. The UKF is the core of
:mod:`rths_ident.estimators.ukf` (``ukf_predict`` with Q = 0, then P⁻ += Q(Δt), then
``ukf_update``; the posterior P is symmetrised, a rounding-level change that keeps long
records positive definite).

Confidence: ``relative_std`` of θ̂_i from the parameter block of P — for ``"log"``
coordinates √(exp(P_uu) − 1) (the log-normal relative std), for ``"ratio"``
√P_uu/|u|.

Yield latch (option ``yield_field``, default none): ``yielded`` latches once |R| ≥
``yield_fraction`` · θ̂[yield_field] (e.g. F̂_C of LuGre: the nonlinear parameters are
excited only past yield, digest 001 §4.7); without it ``yielded`` is true from the start.

``converged`` (one documented rule, two ways of timing it; option ``convergence``)::

    converged = yielded ∧ every relative std ≤ convergence_tolerance ∧ time_held ≥ hold_time

* ``"std"`` (default): ``time_held`` counts while every relative std ≤ the tolerance
  (and yielded), reset to 0 otherwise;
* ``"band"``: ``time_held`` counts while the parameter coordinates u stay within
  ±``convergence_band`` of an anchor (re-set to u whenever they leave) and yielded.

``converged_at`` [s] (state) latches the first time ``converged`` holds (NaN before).

Functional core (pure, JAX-traceable; the online protocol's shape): :func:`make_params`,
:func:`init`, :func:`step` ``(params, state, IdentifierInputs(x, ẋ, R), dt)``,
:func:`estimate`, :func:`transition`, :func:`measurement`; protocol constructor
:func:`joint_ukf_online_identifier`; wrapper for scripts :class:`JointUKFIdentifier`.
Named presets (the LuGre column, the degrading Bouc–Wen column):
:mod:`rths_ident.estimators.joint_ukf_presets`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping, NamedTuple, Sequence

import jax
import jax.numpy as jnp

from rths_ident import small_linalg as sl
import numpy as np

from rths_ident.errors import ParameterError
from rths_ident._params import field_range, params_dataclass, units_of
from rths_ident.estimators.identifier_wrapper import IdentifierWrapper
from rths_ident.protocols import Estimate, IdentifierInputs, OnlineIdentifier
from rths_ident.estimators.sigma_points import MerweScaledSigmaPoints
from rths_ident.estimators.ukf import UKFParams, UKFState, ukf_init, ukf_predict, ukf_update
from rths_ident.models import ElementInputs

__all__ = [
    "JointUKFParams",
    "JointUKFState",
    "JointUKFOutput",
    "JointUKFIdentifier",
    "make_params",
    "init",
    "step",
    "estimate",
    "transition",
    "measurement",
    "model_params_at",
    "model_state",
    "joint_ukf_online_identifier",
    "COORDINATES",
    "CONVERGENCE_RULES",
]

COORDINATES = ("log", "ratio")
CONVERGENCE_RULES = ("std", "band")


@params_dataclass(static=("model", "fields", "state_layout", "coordinates", "convergence", "yield_index",
                          "force_scale_index"))
class JointUKFParams:
    """Configuration of the joint UKF (build it with :func:`make_params`). Numbers are
    pytree leaves (configurations of different guesses stack for ``jax.vmap``); the
    model class and the options are static."""

    model_params: Any = None  # the model's Params: known fields, and the guess of the identified ones
    parameter_reference: Any = None  # (p,) θ_ref [SI units of the fields]
    state_scale: tuple = ()  # scale of each model state entry [its SI unit], one scalar leaf each
    diffusion: Any = None  # (n_s + p,) q, process-noise std per √s of each filter entry (filter units)
    initial_std: Any = None  # (n_s + p,) √P(0) of the filter entries (filter units)
    initial_model_state: Any = None  # (n_s,) model state entries at the start / state_scale
    ukf: UKFParams = None  # weights, R (of the filter's measurement), optional bounds; Q = 0 (added per step)
    convergence_tolerance: float = field_range(
        0.02, low=0.0, low_inclusive=False, doc="'converged' needs every relative std of θ̂ ≤ this"
    )
    convergence_band: float = field_range(
        0.005, low=0.0, low_inclusive=False, doc="'band' rule: half-width of the band of u (coordinates)"
    )
    hold_time: float = field_range(
        0.5, low=0.0, unit="s", doc="'converged' needs the rule's condition to have held this long"
    )
    yield_fraction: float = field_range(
        0.9, low=0.0, doc="'yielded' latches once |R| ≥ yield_fraction · θ̂[yield_index] (with a yield field)"
    )
    model: Any = None  # the model class (static)
    fields: tuple = ()  # identified field names, in θ̂ order (static)
    state_layout: tuple = ()  # ((State field, shape), ...) without ``displacement`` (static)
    coordinates: str = "log"  # "log" | "ratio" (static)
    convergence: str = "std"  # "std" | "band" (static)
    yield_index: int = -1  # index in θ̂ of the yield-force field, or -1: no latch (static)
    force_scale_index: int = -1  # the filter measures R/θ_ref[this], or R itself with -1 (static)


class JointUKFState(NamedTuple):
    filter: UKFState  # mean (n,) and covariance (n, n) of s (module doc)
    previous_displacement: jax.Array  # x_{k−1} [m]
    yielded: jax.Array  # bool, latched (True from the start without a yield field)
    band_anchor: jax.Array  # (p,) u the 'band' rule is centred on
    time_held: jax.Array  # s the convergence rule's condition has held (module doc)
    time: jax.Array  # s since init
    converged_at: jax.Array  # s; NaN until first converged


class JointUKFOutput(NamedTuple):
    theta: jax.Array  # (p,) θ̂ [SI units of the fields]
    relative_std: jax.Array  # (p,)
    force_prediction: jax.Array  # a-priori predicted R [N]
    innovation: jax.Array  # R measured − predicted [N]
    log_likelihood: jax.Array  # of the innovation in the filter's units (R/θ_ref[force_scale_field] or N)
    model_state: Any  # the model state (posterior mean, previous displacement = x_k)
    yielded: jax.Array  # bool
    converged: jax.Array  # bool
    prior: UKFState  # (x⁻, P⁻) of this step (filter coordinates)
    innovation_variance: jax.Array  # S [N²]


# ------------------------------------------------------------------------------ model plumbing


def _state_size(layout) -> int:
    return int(sum(math.prod(shape) for _, shape in layout))


def model_params_at(params: JointUKFParams, theta):
    """The model's Params with the identified fields set to ``theta`` (p,) — a pytree
    rebuild (no validation), so it is traceable at any sigma point."""
    values = dict(zip(params.fields, [theta[i] for i in range(len(params.fields))]))
    leaves, treedef = jax.tree_util.tree_flatten_with_path(params.model_params)
    new = [values.get(path[0].name, leaf) if len(path) == 1 else leaf for path, leaf in leaves]
    return jax.tree_util.tree_unflatten(treedef, new)


def _theta_of(params: JointUKFParams, u):
    if params.coordinates == "log":
        return params.parameter_reference * jnp.exp(u)
    return params.parameter_reference * u


def _split(params: JointUKFParams, s, previous_displacement):
    """(model State, θ) of a filter vector ``s``."""
    # entry by entry, each scale a scalar leaf of its own (XLA may compile x / s as
    # x · (1/s) depending on how s reaches the division; scalar leaves keep it a division)
    n_s = _state_size(params.state_layout)
    scaled = [s[i] * params.state_scale[i] for i in range(n_s)]
    entries, offset = {}, 0
    for name, shape in params.state_layout:
        size = math.prod(shape)
        entries[name] = jnp.reshape(jnp.stack(scaled[offset:offset + size]), shape)
        offset += size
    state = params.model.State(displacement=jnp.asarray(previous_displacement, jnp.float64), **entries)
    return state, _theta_of(params, s[n_s:])


def model_state(params: JointUKFParams, state: JointUKFState):
    """The model's State at the filter's mean (e.g. the identified dissipated energy H of
    a degrading Bouc–Wen specimen); pure."""
    return _split(params, state.filter.x, state.previous_displacement)[0]


def _flat_state(params: JointUKFParams, model_state):
    parts = [jnp.reshape(getattr(model_state, name), (-1,)) for name, _ in params.state_layout]
    if not parts:
        return jnp.zeros((0,))
    flat = jnp.concatenate(parts)
    return jnp.stack([flat[i] / params.state_scale[i] for i in range(flat.shape[0])])


def transition(s, dt, params: JointUKFParams, previous_displacement, displacement, velocity):
    """fx: the filter vector after x_{k−1} → x_k (``Model.step`` with the sigma point's
    θ; parameters unchanged)."""
    state, theta = _split(params, s, previous_displacement)
    new_state, _ = params.model.step(model_params_at(params, theta), state, ElementInputs(displacement, velocity),
                                     dt)
    n_s = _state_size(params.state_layout)
    # the parameters pass through untouched (an update of the first n_s entries: XLA
    # fuses it with the model's step as it fused the LuGre-specific filter's)
    return s.at[:n_s].set(_flat_state(params, new_state))


def _fx(s, _ukf_dt, params, previous_displacement, displacement, velocity, step_dt):
    """:func:`transition` as the UKF core calls it (the step's Δt passed explicitly)."""
    return transition(s, step_dt, params, previous_displacement, displacement, velocity)


def _force_scale(params: JointUKFParams):
    """The filter measures R / this [N] (module doc), or None: R itself."""
    return None if params.force_scale_index < 0 else params.parameter_reference[params.force_scale_index]


def measurement(s, params: JointUKFParams, displacement, velocity, dt):
    """hx: the model's restoring force at the end state ``s`` (a zero-increment step), in
    the filter's units (divided by θ_ref[force_scale_field] when there is one)."""
    state, theta = _split(params, s, displacement)
    _, force = params.model.step(model_params_at(params, theta), state, ElementInputs(displacement, velocity), dt)
    scale = _force_scale(params)
    return jnp.reshape(force if scale is None else force / scale, (1,))


# ------------------------------------------------------------------------------ configuration


def _per_entry(name, value, names, default, positive=True, bound=False):
    """A scalar, a sequence in ``names`` order or a mapping by name → float array."""
    if value is None:
        value = default
    if isinstance(value, Mapping):
        missing = [n for n in names if n not in value]
        if missing:
            raise ParameterError(f"{name} lacks {missing} (needs one value for each of {tuple(names)})")
        arr = np.array([float(value[n]) for n in names])
    else:
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise ParameterError(f"{name} must be a number, {len(names)} numbers or a mapping for {tuple(names)}; "
                                 f"got {value!r}") from None
        arr = np.full(len(names), float(arr)) if arr.ndim == 0 else arr.reshape(-1)
    if arr.shape != (len(names),) or np.any(np.isnan(arr)) or (not bound and not np.all(np.isfinite(arr))):
        raise ParameterError(f"{name} must be a finite scalar, {len(names)} values or a mapping for {tuple(names)}; "
                             f"got {value!r}")
    if not bound and (np.any(arr < 0) or (positive and np.any(arr == 0))):
        raise ParameterError(f"{name} must be {'> 0' if positive else '>= 0'} for every entry of {tuple(names)}; "
                             f"got {dict(zip(names, arr.tolist()))}")
    return arr


def _positive_number(name, value, meaning):
    if not (isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
            and np.isfinite(value) and value > 0):
        raise ParameterError(f"{name} must be {meaning}; got {value!r}")
    return float(value)


def make_params(
    model: type,
    guess_params,
    fields: Sequence[str],
    *,
    force_noise_std: float,
    parameter_std=0.3,
    state_std=None,
    state_scale=None,
    parameter_diffusion=2e-3,
    state_diffusion=None,
    coordinates: str = "log",
    parameter_reference=None,
    lower=None,
    upper=None,
    force_scale_field: str | None = None,
    sigma_alpha: float = 0.1,
    sigma_beta: float = 2.0,
    sigma_kappa: float = 0.0,
    initial_state=None,
    convergence: str = "std",
    convergence_tolerance: float = 0.02,
    convergence_band: float = 0.005,
    hold_time: float = 0.5,
    yield_field: str | None = None,
    yield_fraction: float = 0.9,
) -> JointUKFParams:
    """Configuration of the joint UKF of ``model`` identifying ``fields`` of ``guess_params``.

    ``force_noise_std`` [N]: std of the load-cell noise (R). ``parameter_std``: initial std
    of each parameter coordinate u (scalar, sequence or mapping by field; for ``"log"`` and
    ``"ratio"`` with the default θ_ref it is a relative std of the guess, default 0.3).
    ``state_scale``: per model state entry [its SI unit] (default 1); ``state_std``:
    initial std of each model state entry in units of its scale (default 1e-6).
    ``parameter_diffusion`` (default 2e-3) and ``state_diffusion`` (default =
    ``state_std``): process-noise std per √s of u and of the scaled model state entries.
    ``coordinates``: ``"log"`` or ``"ratio"`` (module doc); ``parameter_reference``: θ_ref
    (default the guess; must be > 0 for ``"log"``); ``lower``/``upper``: box on u for
    ``"ratio"`` (default none). ``force_scale_field``: one of ``fields`` whose θ_ref is a
    force [N]; the filter then measures R/θ_ref[field] (default none: R in N).
    ``sigma_alpha/beta/kappa``: scaled sigma points. ``initial_state``:
    mapping of model state entries [SI] at the start (default ``model.init``).
    ``convergence`` (``"std"`` | ``"band"``), ``convergence_tolerance``,
    ``convergence_band``, ``hold_time`` [s]: the ``converged`` rule; ``yield_field`` (one
    of ``fields``, default none) and ``yield_fraction``: the yield latch (module doc).
    """
    if not (isinstance(model, type) and hasattr(model, "step") and hasattr(model, "init")
            and hasattr(model, "State") and hasattr(model, "Params")):
        raise ParameterError(f"model must be a model class of rths_ident.models; got {model!r}")
    if not isinstance(guess_params, model.Params):
        raise ParameterError(f"guess_params must be a {model.Params.__name__}; got {type(guess_params).__name__}")
    fields = tuple(fields)
    leaf_names = [path[0].name for path, _ in jax.tree_util.tree_flatten_with_path(guess_params)[0]]
    all_names = [f.name for f in dataclasses.fields(guess_params)]
    bad = [f for f in fields if f not in leaf_names or np.ndim(getattr(guess_params, f)) != 0]
    if not fields or bad or len(set(fields)) != len(fields):
        raise ParameterError(
            f"fields must be distinct scalar numeric fields of {model.Params.__name__} "
            f"({[n for n in all_names if n in leaf_names]}); got {list(fields)}"
        )
    if coordinates not in COORDINATES:
        raise ParameterError(f"coordinates must be one of {COORDINATES}; got {coordinates!r}")
    if convergence not in CONVERGENCE_RULES:
        raise ParameterError(f"convergence must be one of {CONVERGENCE_RULES}; got {convergence!r}")
    for option, value in (("yield_field", yield_field), ("force_scale_field", force_scale_field)):
        if value is not None and value not in fields:
            raise ParameterError(f"{option} must be one of the identified fields {fields} (or None); got {value!r}")
    guess = np.array([float(getattr(guess_params, f)) for f in fields])
    reference = guess if parameter_reference is None else _per_entry("parameter_reference", parameter_reference,
                                                                     fields, None)
    if np.any(reference <= 0):
        raise ParameterError(
            f"parameter_reference (default: the guess) must be > 0 for every identified field; got "
            f"{dict(zip(fields, reference.tolist()))} (use coordinates='ratio' with parameter_reference=1 for "
            "fields that may be 0)"
        )
    u0 = np.log(guess / reference) if coordinates == "log" else guess / reference
    if coordinates == "log" and not np.all(np.isfinite(u0)):
        raise ParameterError(f"coordinates='log' needs a positive guess of every field; got "
                             f"{dict(zip(fields, guess.tolist()))}")

    model_state = model.init(guess_params)
    layout = tuple((name, tuple(np.shape(getattr(model_state, name))))
                   for name in model_state._fields if name != "displacement")
    entry_names = [name if shape == () else f"{name}[{i}]" for name, shape in layout
                   for i in range(max(1, math.prod(shape)))]
    scale = _per_entry("state_scale", state_scale, entry_names, 1.0)
    s_std = _per_entry("state_std", state_std, entry_names, 1e-6)
    s_diff = _per_entry("state_diffusion", state_diffusion, entry_names, s_std, positive=False)
    p_std = _per_entry("parameter_std", parameter_std, fields, None)
    p_diff = _per_entry("parameter_diffusion", parameter_diffusion, fields, None, positive=False)
    if initial_state is not None:
        unknown = set(initial_state) - {name for name, _ in layout}
        if unknown:
            raise ParameterError(f"initial_state: unknown entries {sorted(unknown)} of {model.State.__name__} "
                                 f"(one of {[name for name, _ in layout]})")
        model_state = model_state._replace(**{k: jnp.asarray(v, jnp.float64) for k, v in initial_state.items()})
    flat0 = np.concatenate([np.reshape(np.asarray(getattr(model_state, name), float), (-1,)) for name, _ in layout]
                           ) if layout else np.zeros(0)
    n = len(entry_names) + len(fields)
    force_noise_std = _positive_number("force_noise_std", force_noise_std, "a positive force [N]")
    noise_variance = (force_noise_std / reference[fields.index(force_scale_field)]) ** 2 if force_scale_field \
        else force_noise_std**2
    try:
        points = MerweScaledSigmaPoints(n, sigma_alpha, sigma_beta, sigma_kappa)
    except ValueError as err:
        raise ParameterError(f"joint UKF sigma points: {err}") from None
    x0 = np.concatenate([flat0 / scale, u0])
    initial_std = np.concatenate([s_std, p_std])
    lower_bound = upper_bound = None
    if lower is not None or upper is not None:
        if coordinates != "ratio":
            raise ParameterError("lower/upper bounds apply to coordinates='ratio' only (log is positive already)")
        lo = _per_entry("lower", -np.inf if lower is None else lower, fields, None, bound=True)
        hi = _per_entry("upper", np.inf if upper is None else upper, fields, None, bound=True)
        if np.any(u0 < lo) or np.any(u0 > hi):
            raise ParameterError(f"the initial guess {dict(zip(fields, u0.tolist()))} (coordinates) is outside the "
                                 f"bounds {dict(zip(fields, zip(lo.tolist(), hi.tolist())))}")
        lower_bound = np.concatenate([np.full(len(entry_names), -np.inf), lo])
        upper_bound = np.concatenate([np.full(len(entry_names), np.inf), hi])
    ukf_params, _ = ukf_init(points, x0, np.diag(initial_std**2), np.zeros((n, n)), noise_variance, 1.0,
                             lower_bound=lower_bound, upper_bound=upper_bound)
    return JointUKFParams(
        model_params=guess_params,
        # jax.device_put: the arrays jnp.asarray gives, without a small program per shape
        parameter_reference=jax.device_put(np.asarray(reference)),
        state_scale=tuple(float(value) for value in scale),
        diffusion=jax.device_put(np.concatenate([s_diff, p_diff])),
        initial_std=jax.device_put(np.asarray(initial_std)),
        initial_model_state=jax.device_put(np.asarray(flat0 / scale)),
        ukf=ukf_params,
        convergence_tolerance=convergence_tolerance,
        convergence_band=convergence_band,
        hold_time=hold_time,
        yield_fraction=yield_fraction,
        model=model,
        fields=fields,
        state_layout=layout,
        coordinates=coordinates,
        convergence=convergence,
        yield_index=-1 if yield_field is None else fields.index(yield_field),
        force_scale_index=-1 if force_scale_field is None else fields.index(force_scale_field),
    )


# ------------------------------------------------------------------------------ functional core


def _coordinates_of(params: JointUKFParams, theta):
    if params.coordinates == "log":
        return jnp.log(theta / params.parameter_reference)
    return theta / params.parameter_reference


def init(params: JointUKFParams, displacement=0.0) -> JointUKFState:
    """Filter at the initial guess: s(0) = [model state at the start (``model.init``, or
    :func:`make_params`'s ``initial_state``) / scale, u(θ_guess)], P(0) =
    diag(initial_std²), at ``displacement`` [m]; not yielded (unless there is no yield
    field), nothing held, not converged."""
    theta = jnp.stack([jnp.asarray(getattr(params.model_params, f), jnp.float64) for f in params.fields])
    u = _coordinates_of(params, theta)
    x0 = jnp.concatenate([jnp.asarray(params.initial_model_state, jnp.float64), u])
    zero = jnp.zeros((), jnp.float64)
    return JointUKFState(
        filter=UKFState(x0, jnp.diag(params.initial_std**2)),
        previous_displacement=jnp.asarray(displacement, jnp.float64),
        yielded=jnp.asarray(params.yield_index < 0),
        band_anchor=u,
        time_held=zero,
        time=zero,
        converged_at=jnp.asarray(jnp.nan),
    )


def _confidence(params: JointUKFParams, filter_state: UKFState):
    """θ̂ [SI] and its relative std (module doc) from the filter's mean and covariance."""
    n_s = _state_size(params.state_layout)
    u = filter_state.x[n_s:]
    variance = jnp.maximum(jnp.diag(filter_state.P)[n_s:], 0.0)
    theta = _theta_of(params, u)
    if params.coordinates == "log":
        relative_std = jnp.sqrt(jnp.expm1(variance))
    else:
        relative_std = jnp.sqrt(variance) / jnp.abs(u)
    return theta, relative_std


def _converged(params: JointUKFParams, state: JointUKFState, relative_std):
    return state.yielded & jnp.all(relative_std <= params.convergence_tolerance) & (state.time_held >= params.hold_time)


def estimate(params: JointUKFParams, state: JointUKFState) -> Estimate:
    """θ̂ [SI], relative std of θ̂ and ``converged`` (module doc), from the state."""
    theta, relative_std = _confidence(params, state.filter)
    return Estimate(theta, relative_std, _converged(params, state, relative_std),
                    sl.is_positive_definite(state.filter.P))


def step(params: JointUKFParams, state: JointUKFState, inputs: IdentifierInputs, dt):
    """One filter step at a sample: ``inputs`` = x [m], ẋ [m/s], R [N] at the end of
    ``dt`` [s]. Returns ``(state, JointUKFOutput)``. Pure and traceable."""
    x = jnp.asarray(inputs.displacement, jnp.float64)
    v = jnp.asarray(inputs.velocity, jnp.float64)
    measured_force = jnp.asarray(inputs.force, jnp.float64)
    dt = jnp.asarray(dt, jnp.float64)
    fx_args = {"params": params, "previous_displacement": state.previous_displacement,
               "displacement": x, "velocity": v, "step_dt": dt}
    hx_args = {"params": params, "displacement": x, "velocity": v, "dt": dt}
    prior = ukf_predict(params.ukf, state.filter, _fx, fx_args)
    prior = prior._replace(P=prior.P + jnp.diag(params.diffusion**2) * dt)
    scale = _force_scale(params)
    posterior, info = ukf_update(params.ukf, prior, measured_force if scale is None else measured_force / scale,
                                 measurement, hx_args)
    posterior = posterior._replace(P=0.5 * (posterior.P + posterior.P.T))
    theta, relative_std = _confidence(params, posterior)
    if params.yield_index >= 0:  # static
        yielded = state.yielded | (jnp.abs(measured_force) >= params.yield_fraction * theta[params.yield_index])
    else:
        yielded = state.yielded
    n_s = _state_size(params.state_layout)
    u = posterior.x[n_s:]
    if params.convergence == "band":  # static
        left_band = jnp.any(jnp.abs(u - state.band_anchor) > params.convergence_band)
        band_anchor = jnp.where(left_band, u, state.band_anchor)
        time_held = jnp.where(left_band | ~yielded, 0.0, state.time_held + dt)
    else:
        confident = jnp.all(relative_std <= params.convergence_tolerance)
        band_anchor = state.band_anchor
        time_held = jnp.where(confident & yielded, state.time_held + dt, 0.0)
    time = state.time + dt
    new_state = JointUKFState(filter=posterior, previous_displacement=x, yielded=yielded, band_anchor=band_anchor,
                              time_held=time_held, time=time, converged_at=state.converged_at)
    converged = _converged(params, new_state, relative_std)
    new_state = new_state._replace(converged_at=jnp.where(converged & jnp.isnan(state.converged_at), time,
                                                          state.converged_at))
    model_state, _ = _split(params, posterior.x, x)
    force_prediction, innovation, innovation_variance = info.z_pred[0], info.y[0], info.S[0, 0]
    if scale is not None:
        force_prediction, innovation, innovation_variance = (force_prediction * scale, innovation * scale,
                                                             innovation_variance * scale**2)
    output = JointUKFOutput(theta, relative_std, force_prediction, innovation, info.log_likelihood, model_state,
                            yielded, converged, prior, innovation_variance)
    return new_state, output


# ------------------------------------------------------------------------------ online protocol


def joint_ukf_online_identifier(model_class: type, guess_params, fields: Sequence[str], *,
                                name: str | None = None, **options) -> OnlineIdentifier:
    """The joint UKF as an :class:`OnlineIdentifier`: θ̂ = the ``fields`` of
    ``model_class.Params`` (in that order, SI units of the fields). ``options`` are those
    of :func:`make_params` (``force_noise_std`` [N] is required); ``name`` defaults to
    ``joint-ukf-<model class>``."""
    if "force_noise_std" not in options:
        raise ParameterError("joint_ukf_online_identifier needs force_noise_std [N] (the load cell's noise std)")
    params = make_params(model_class, guess_params, fields, **options)
    units = units_of(guess_params)
    return OnlineIdentifier(name or f"joint-ukf-{model_class.__name__}", params, init, step, estimate,
                            tuple(params.fields), tuple(units[f] for f in params.fields))


# ------------------------------------------------------------------------------ wrapper


class JointUKFIdentifier(IdentifierWrapper):
    """The joint UKF for scripts (:class:`~rths_ident.estimators.identifier_wrapper.IdentifierWrapper`):
    ``update(x, v, force, dt)``, ``run(x, v, force, dt)``, ``theta``, ``relative_std``,
    ``converged``, ``x``/``P`` (the filter's mean and covariance, filter coordinates),
    ``model_state`` and ``params_estimate``. All maths lives in :func:`step`.

    >>> ident = JointUKFIdentifier(joint_ukf_online_identifier(BoucWen, guess, ("k", "alpha"), force_noise_std=50.0))

    ``displacement`` [m]: where the specimen starts (default 0).
    """

    def __init__(self, identifier: OnlineIdentifier, displacement: float = 0.0, dt: float | None = None):
        super().__init__(identifier, init(identifier.params, displacement), dt=dt)

    @staticmethod
    def covariance_of(state: JointUKFState):
        return state.filter.P

    @property
    def x(self) -> np.ndarray:
        """The filter's mean s (module doc: scaled model state entries, then u)."""
        return np.asarray(self.state.filter.x)

    @property
    def model_state(self):
        """The model's State at the filter's mean."""
        return model_state(self.params, self.state)

    @property
    def params_estimate(self):
        """The guess's model Params with θ̂ in the identified fields (validated)."""
        values = dict(zip(self.param_names, self.theta.tolist()))
        return dataclasses.replace(self.params.model_params, **values)
