"""A joint state–parameter UKF identifier over any hysteretic model of :mod:`rths_ident.models`.

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
  the bilinear model. ``state_scale`` (default 1, SI) only conditions the filter.
* parameter coordinates: ``"log"`` (default) θ_i = θ_ref,i · exp(u_i) — positive by
  construction, no bounds needed; ``"ratio"`` θ_i = θ_ref,i · u_i (box ``[lower, upper]``
  on u enforced by the UKF core's sigma-point clipping). θ_ref is the initial guess
  (``"ratio"`` with θ_ref = 1 is plain SI).

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
``force_noise_std²`` [N²].

So the equations are the model's own — nothing is written twice. The UKF is the core of
:mod:`rths_ident.estimators.ukf` (``ukf_predict`` with Q = 0, then P⁻ += Q(Δt), then
``ukf_update``; the posterior P is symmetrised, a rounding-level change that keeps long
records positive definite).

Confidence: ``relative_std`` of θ̂_i from the parameter block of P — for ``"log"``
coordinates √(exp(P_uu) − 1) (the log-normal relative std), for ``"ratio"``
√P_uu/|u|. ``converged`` (documented rule): every relative std ≤
``convergence_tolerance`` without interruption for the last ``hold_time`` seconds
(``time_confident`` in the state).

Functional core (pure, JAX-traceable): :func:`make_params`, :func:`init`, :func:`step`,
:func:`estimate`, :func:`transition`, :func:`measurement`; online protocol:
:func:`joint_ukf_online_identifier`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping, NamedTuple, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.errors import ParameterError
from rths_ident._params import field_range, params_dataclass, units_of
from rths_ident.protocols import Estimate, IdentifierInputs, OnlineIdentifier
from rths_ident.estimators.sigma_points import MerweScaledSigmaPoints
from rths_ident.estimators.ukf import UKFParams, UKFState, ukf_init, ukf_predict, ukf_update
from rths_ident.models import ElementInputs

__all__ = [
    "JointUKFParams",
    "JointUKFState",
    "JointUKFOutput",
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
]

COORDINATES = ("log", "ratio")


@params_dataclass(static=("model", "fields", "state_layout", "coordinates"))
class JointUKFParams:
    """Configuration of the generic joint UKF (build it with :func:`make_params`)."""

    model_params: Any = None  # the model's Params: known fields, and the guess of the identified ones
    parameter_reference: Any = None  # (p,) θ_ref [SI units of the fields]
    state_scale: Any = None  # (n_s,) scale of each model state entry [its SI unit]
    diffusion: Any = None  # (n_s + p,) q, process-noise std per √s of each filter entry
    initial_std: Any = None  # (n_s + p,) √P(0) of the filter entries
    initial_model_state: Any = None  # (n_s,) model state entries at the start / state_scale
    ukf: UKFParams = None  # weights, R [N²], optional bounds; Q = 0 (added per step)
    convergence_tolerance: float = field_range(
        0.02, low=0.0, low_inclusive=False, doc="'converged' needs every relative std of θ̂ ≤ this"
    )
    hold_time: float = field_range(
        0.5, low=0.0, unit="s", doc="'converged' needs the relative stds below the tolerance for this long"
    )
    model: Any = None  # the model class (static)
    fields: tuple = ()  # identified field names, in θ̂ order (static)
    state_layout: tuple = ()  # ((State field, shape), ...) without ``displacement`` (static)
    coordinates: str = "log"  # "log" | "ratio" (static)


class JointUKFState(NamedTuple):
    filter: UKFState  # mean (n,) and covariance (n, n) of s (module doc)
    previous_displacement: jax.Array  # x_{k−1} [m]
    time_confident: jax.Array  # s every relative std has been ≤ convergence_tolerance
    time: jax.Array  # s since init


class JointUKFOutput(NamedTuple):
    theta: jax.Array  # (p,) θ̂ [SI units of the fields]
    relative_std: jax.Array  # (p,)
    force_prediction: jax.Array  # a-priori predicted R [N]
    innovation: jax.Array  # R measured − predicted [N]
    log_likelihood: jax.Array
    model_state: Any  # the model state (posterior mean, previous displacement = x_k)
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
    n_s = _state_size(params.state_layout)
    scaled = s[:n_s] * params.state_scale
    entries, offset = {}, 0
    for name, shape in params.state_layout:
        size = math.prod(shape)
        entries[name] = jnp.reshape(scaled[offset:offset + size], shape)
        offset += size
    state = params.model.State(displacement=jnp.asarray(previous_displacement, jnp.float64), **entries)
    return state, _theta_of(params, s[n_s:])


def model_state(params: JointUKFParams, state: JointUKFState):
    """The model's State at the filter's mean (e.g. the identified dissipated energy H of
    a degrading Bouc–Wen specimen); pure."""
    return _split(params, state.filter.x, state.previous_displacement)[0]


def _flat_state(params: JointUKFParams, model_state):
    parts = [jnp.reshape(getattr(model_state, name), (-1,)) for name, _ in params.state_layout]
    flat = jnp.concatenate(parts) if parts else jnp.zeros((0,))
    return flat / params.state_scale


def transition(s, dt, params: JointUKFParams, previous_displacement, displacement, velocity):
    """fx: the filter vector after x_{k−1} → x_k (``Model.step`` with the sigma point's
    θ; parameters unchanged)."""
    state, theta = _split(params, s, previous_displacement)
    new_state, _ = params.model.step(model_params_at(params, theta), state, ElementInputs(displacement, velocity),
                                     dt)
    n_s = _state_size(params.state_layout)
    return jnp.concatenate([_flat_state(params, new_state), s[n_s:]])


def _fx(s, _ukf_dt, params, previous_displacement, displacement, velocity, step_dt):
    """:func:`transition` as the UKF core calls it (the step's Δt passed explicitly)."""
    return transition(s, step_dt, params, previous_displacement, displacement, velocity)


def measurement(s, params: JointUKFParams, displacement, velocity, dt):
    """hx: the model's restoring force [N] at the end state ``s`` (a zero-increment step)."""
    state, theta = _split(params, s, displacement)
    _, force = params.model.step(model_params_at(params, theta), state, ElementInputs(displacement, velocity), dt)
    return jnp.reshape(force, (1,))


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
        arr = np.asarray(value, dtype=float)
        arr = np.full(len(names), float(arr)) if arr.ndim == 0 else arr.reshape(-1)
    if arr.shape != (len(names),) or np.any(np.isnan(arr)) or (not bound and not np.all(np.isfinite(arr))):
        raise ParameterError(f"{name} must be a finite scalar, {len(names)} values or a mapping for {tuple(names)}; "
                             f"got {value!r}")
    if not bound and (np.any(arr < 0) or (positive and np.any(arr == 0))):
        raise ParameterError(f"{name} must be {'> 0' if positive else '>= 0'} for every entry of {tuple(names)}; "
                             f"got {dict(zip(names, arr.tolist()))}")
    return arr


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
    sigma_alpha: float = 0.1,
    sigma_beta: float = 2.0,
    sigma_kappa: float = 0.0,
    initial_state=None,
    convergence_tolerance: float = 0.02,
    hold_time: float = 0.5,
) -> JointUKFParams:
    """Configuration of the joint UKF of ``model`` identifying ``fields`` of ``guess_params``.

    ``force_noise_std`` [N]: std of the load-cell noise (R). ``parameter_std``: initial std
    of each parameter coordinate u (scalar, sequence or mapping by field; for ``"log"`` and
    ``"ratio"`` with the default θ_ref it is a relative std of the guess, default 0.3).
    ``state_std``: initial std of each model state entry [its SI unit] (default 1e-6 ×
    ``state_scale``); ``state_scale``: per entry (default 1). ``parameter_diffusion``
    (default 2e-3) and ``state_diffusion`` (default = ``state_std``): process-noise std per
    √s of u and of the model state entries [their SI unit]. ``coordinates``: ``"log"`` or
    ``"ratio"`` (module doc); ``parameter_reference``: θ_ref (default the guess; must be
    > 0 for ``"log"``); ``lower``/``upper``: box on u for ``"ratio"`` (default none).
    ``sigma_alpha/beta/kappa``: scaled sigma points. ``initial_state``: mapping of model
    state entries at the start (default ``model.init``). ``convergence_tolerance``,
    ``hold_time`` [s]: the ``converged`` rule (module doc).
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
    s_std = _per_entry("state_std", state_std, entry_names, 1e-6 * scale)
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
    if not (np.isfinite(force_noise_std) and force_noise_std > 0):
        raise ParameterError(f"force_noise_std must be a positive force [N]; got {force_noise_std!r}")
    try:
        points = MerweScaledSigmaPoints(n, sigma_alpha, sigma_beta, sigma_kappa)
    except ValueError as err:
        raise ParameterError(f"joint UKF sigma points: {err}") from None
    x0 = np.concatenate([flat0 / scale, u0])
    initial_std = np.concatenate([s_std / scale, p_std])
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
    ukf_params, _ = ukf_init(points, x0, np.diag(initial_std**2), np.zeros((n, n)), float(force_noise_std) ** 2, 1.0,
                             lower_bound=lower_bound, upper_bound=upper_bound)
    return JointUKFParams(
        model_params=guess_params,
        # jax.device_put: the arrays jnp.asarray gives, without a small program per shape
        parameter_reference=jax.device_put(np.asarray(reference)),
        state_scale=jax.device_put(np.asarray(scale)),
        diffusion=jax.device_put(np.concatenate([s_diff / scale, p_diff])),
        initial_std=jax.device_put(np.asarray(initial_std)),
        initial_model_state=jax.device_put(np.asarray(flat0 / scale)),
        ukf=ukf_params,
        convergence_tolerance=convergence_tolerance,
        hold_time=hold_time,
        model=model,
        fields=fields,
        state_layout=layout,
        coordinates=coordinates,
    )


# ------------------------------------------------------------------------------ functional core


def init(params: JointUKFParams, displacement=0.0) -> JointUKFState:
    """Filter at the initial guess: s(0) = [model state at the start (``model.init``, or
    :func:`make_params`'s ``initial_state``) / scale, u(θ_guess)], P(0) =
    diag(initial_std²), at ``displacement`` [m]."""
    theta = jnp.stack([jnp.asarray(getattr(params.model_params, f), jnp.float64) for f in params.fields])
    u = jnp.log(theta / params.parameter_reference) if params.coordinates == "log" else theta / params.parameter_reference
    x0 = jnp.concatenate([jnp.asarray(params.initial_model_state, jnp.float64), u])
    zero = jnp.zeros((), jnp.float64)
    return JointUKFState(
        filter=UKFState(x0, jnp.diag(params.initial_std**2)),
        previous_displacement=jnp.asarray(displacement, jnp.float64),
        time_confident=zero,
        time=zero,
    )


def estimate(params: JointUKFParams, state: JointUKFState) -> Estimate:
    """θ̂ [SI], relative std of θ̂ (module doc) and ``converged``."""
    n_s = _state_size(params.state_layout)
    u = state.filter.x[n_s:]
    variance = jnp.maximum(jnp.diag(state.filter.P)[n_s:], 0.0)
    theta = _theta_of(params, u)
    if params.coordinates == "log":
        relative_std = jnp.sqrt(jnp.expm1(variance))
    else:
        relative_std = jnp.sqrt(variance) / jnp.abs(u)
    converged = (state.time_confident >= params.hold_time) & jnp.all(relative_std <= params.convergence_tolerance)
    return Estimate(theta, relative_std, converged)


def step(params: JointUKFParams, state: JointUKFState, x, v, measured_force, dt):
    """One filter step: x [m], v [m/s], measured_force R [N] at the end of ``dt`` [s].
    Returns ``(state, JointUKFOutput)``. Pure and traceable."""
    x = jnp.asarray(x, jnp.float64)
    v = jnp.asarray(v, jnp.float64)
    dt = jnp.asarray(dt, jnp.float64)
    fx_args = {"params": params, "previous_displacement": state.previous_displacement,
               "displacement": x, "velocity": v, "step_dt": dt}
    hx_args = {"params": params, "displacement": x, "velocity": v, "dt": dt}
    prior = ukf_predict(params.ukf, state.filter, _fx, fx_args)
    prior = prior._replace(P=prior.P + jnp.diag(params.diffusion**2) * dt)
    posterior, info = ukf_update(params.ukf, prior, jnp.reshape(jnp.asarray(measured_force, jnp.float64), (1,)),
                                 measurement, hx_args)
    posterior = posterior._replace(P=0.5 * (posterior.P + posterior.P.T))
    new_state = state._replace(filter=posterior, previous_displacement=x, time=state.time + dt)
    theta, relative_std, _ = estimate(params, new_state)
    confident = jnp.all(relative_std <= params.convergence_tolerance)
    new_state = new_state._replace(time_confident=jnp.where(confident, state.time_confident + dt, 0.0))
    converged = estimate(params, new_state).converged
    model_state, _ = _split(params, posterior.x, x)
    output = JointUKFOutput(theta, relative_std, info.z_pred[0], info.y[0], info.log_likelihood, model_state,
                            converged, prior, info.S[0, 0])
    return new_state, output


def run(params: JointUKFParams, state: JointUKFState, displacement, velocity, measured_force, dt):
    """Scan :func:`step` over N samples at t_1 … t_N (``state`` holds x at t_0)."""

    def body(state, sample):
        return step(params, state, *sample, dt)

    samples = tuple(jnp.asarray(a, jnp.float64) for a in (displacement, velocity, measured_force))
    return jax.lax.scan(body, state, samples)


# ------------------------------------------------------------------------------ online protocol


def protocol_step(params: JointUKFParams, state: JointUKFState, inputs: IdentifierInputs, dt):
    """:func:`step` with the online protocol's signature."""
    return step(params, state, inputs.displacement, inputs.velocity, inputs.force, dt)


def joint_ukf_online_identifier(model_class: type, guess_params, fields: Sequence[str], **options) -> OnlineIdentifier:
    """The generic joint UKF as an :class:`OnlineIdentifier`: θ̂ = the ``fields`` of
    ``model_class.Params`` (in that order, SI units of the fields). ``options`` are those
    of :func:`make_params` (``force_noise_std`` [N] is required)."""
    if "force_noise_std" not in options:
        raise ParameterError("joint_ukf_online_identifier needs force_noise_std [N] (the load cell's noise std)")
    params = make_params(model_class, guess_params, fields, **options)
    units = units_of(guess_params)
    name = f"joint-ukf-{model_class.__name__}"
    return OnlineIdentifier(name, params, init, protocol_step, estimate, tuple(params.fields),
                            tuple(units[f] for f in params.fields))
