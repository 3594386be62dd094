"""The fast side of a hybrid test as pure functions: one slow step of it, compiled by both engines.

One slow step of the fast side, ``ratio = Δt_n/Δt_e`` fast steps in one ``lax.scan``:

  rate transition → compensation → transfer system + specimen → sensors → identifier

* the **rate transition** turns the interface target the NS sent into ``ratio`` fast
  targets (a predictor–corrector that receives it during the step, or DDMRT, which
  predicts it from the targets received so far because the NS answer arrives one slow
  step late: ``transition_predicts_ahead``);
* the **compensation** (dAMB, AMB, polynomial, or none) turns a target into a command;
* the **transfer system** (Carrion–Spencer servo-hydraulic actuator with CSI, or an
  ideal one) drives the **specimen** (any hysteretic model of :mod:`rths_ident.models`);
* **sensors** add band-limited noise (and ADC quantization) to displacement, force and
  velocity;
* the **identifier** samples every ``identifier_every``-th fast step.

Modelling choices (stated so they can be argued with): the load cell reads the
specimen's restoring force (the actuator's oil-column damping is on the actuator side);
the identifier's velocity comes from a velocity transducer (actuator velocity +
band-limited noise), and with noisy sensors its displacement is that velocity integrated
at the fast rate (the LVDT reading, with its white noise, drives the compensator: its
spurious |Δx| travel biases hysteretic observers).

Every component here has the project's one shape (docs/hybrid/components.md):
``step(params, state, inputs, dt) -> (state, outputs)``, ``inputs`` a small NamedTuple
per family — :class:`~rths_ident.hybrid.fast_side.rate_transition.TransitionInputs` (``dt`` = the
slow step Δt_n), :class:`~rths_ident.hybrid.fast_side.compensation.CompensatorInputs`,
:class:`~rths_ident.hybrid.fast_side.actuator.ActuatorInputs` (params: a
:class:`~rths_ident.hybrid.fast_side.actuator.TransferSystemParams` with the specimen's model class
as a static field), :class:`~rths_ident.hybrid.fast_side.sensors.SensorInputs`.

Strategies are passed as objects (:class:`Strategy`: a module of pure ``init``/``step``
functions and its parameters); strings stay at the command line.

:func:`make_fast_chunk` builds the pure chunk both engines use;
:class:`~rths_ident.hybrid.fast_side.virtual_site.VirtualSite` wraps it (compiled once)
behind the :class:`~rths_ident.protocols.Site` protocol for the step-wise engine.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp

from rths_ident.protocols import IdentifierInputs, OnlineIdentifier
from rths_ident.hybrid.fast_side import actuator as act
from rths_ident.hybrid.fast_side import sensors
from rths_ident.hybrid.fast_side.compensation.inputs import CompensatorInputs
from rths_ident.hybrid.fast_side.rate_transition.inputs import TransitionInputs


class Strategy(NamedTuple):
    """A pluggable component: ``functions`` has the pure ``init(params)`` and
    ``step(params, state, inputs, dt)`` (e.g. a compensation or rate-transition module);
    ``params`` is its parameter container."""

    functions: Any
    params: Any


def no_identifier_log(params, state) -> dict:
    """The default of :attr:`FastSide.identifier_log`: nothing extra to log."""
    return {}


class FastSide(NamedTuple):
    """Everything the fast side is made of (SI units)."""

    fast_rate: float  # Hz, 1/Δt_e
    ratio: int  # fast steps per slow step, Δt_n/Δt_e
    transition: Strategy
    transition_predicts_ahead: bool  # True: the transition gets the previous target (DDMRT)
    compensation: Strategy | None
    actuator_step: Callable  # act.actuator_step or act.ideal_actuator_step (same shape)
    actuator: Any  # CarrionSpencerParams
    specimen_model: type  # hysteretic model class
    specimen: Any  # its Params
    sensor_displacement: Any  # SensorParams
    sensor_force: Any
    sensor_velocity: Any
    identifier: OnlineIdentifier  # estimators.online_identifier protocol
    identifier_every: int  # fast samples per identifier update
    sensor_noise: bool  # False: ideal sensors (the identifier then reads the LVDT itself)
    # (identifier params, state) -> dict logged once per slow step (e.g. an identified state)
    identifier_log: Callable = no_identifier_log


def read_channel(sensor_params, noisy_value):
    """ADC of a channel whose noise was already added (quantization if configured)."""
    if sensor_params.adc_bits > 0:
        return sensors.quantize(noisy_value, sensor_params.adc_full_scale, sensor_params.adc_bits)
    return noisy_value


def transfer_system_params(side: FastSide, actuator, specimen, discretisation=None) -> act.TransferSystemParams:
    """The actuator step's params: ``actuator`` and ``specimen`` (leaves, possibly traced
    or batched) with the side's specimen model class (static) and the actuator's exact
    discretisation for the fast step (None: the step computes it)."""
    return act.TransferSystemParams(actuator=actuator, specimen=specimen, specimen_model=side.specimen_model,
                                    discretisation=discretisation)


def actuator_discretisation(side: FastSide, actuator=None):
    """The exact discretisation of the side's actuator over one sub-step of the fast
    step (:func:`rths_ident.hybrid.fast_side.actuator.discretise_concrete`, NumPy/SciPy: nothing to
    compile), computed once per run rather than in every fast step; None when the
    actuator does not use it."""
    actuator = side.actuator if actuator is None else actuator
    if side.actuator_step is not act.actuator_step or actuator.integrator != "exact":
        return None
    return act.discretise_concrete(actuator, 1.0 / (side.fast_rate * actuator.substeps))


def fast_params(side: FastSide) -> dict:
    """The fast side's parameter pytree (leaves a batch may ``vmap`` over).
    ``actuator_discretisation`` is derived from ``actuator``: replace both together."""
    return {
        "actuator": side.actuator,
        "actuator_discretisation": actuator_discretisation(side),
        "specimen": side.specimen,
        "compensation": side.compensation.params if side.compensation is not None else None,
        "transition": side.transition.params,
        "sensor_displacement": side.sensor_displacement,
        "sensor_force": side.sensor_force,
        "sensor_velocity": side.sensor_velocity,
        "identifier": side.identifier.params,
    }


def initial_fast_state(side: FastSide, seed: int) -> dict:
    """The fast side's state before the test (sensor noise streams seeded by ``seed``)."""
    keys = jax.random.split(jax.random.PRNGKey(seed), 3)
    compensation = side.compensation
    return {
        "actuator": act.actuator_init(transfer_system_params(side, side.actuator, side.specimen)),
        "compensation": compensation.functions.init(compensation.params) if compensation is not None else (),
        "transition": side.transition.functions.init(side.transition.params),
        "sensor_displacement": sensors.sensor_init(side.sensor_displacement, keys[0]),
        "sensor_force": sensors.sensor_init(side.sensor_force, keys[1]),
        "sensor_velocity": sensors.sensor_init(side.sensor_velocity, keys[2]),
        "identifier": side.identifier.init(side.identifier.params),
        "measured_displacement": jnp.zeros(()),
        "identifier_displacement": jnp.zeros(()),
        "identifier_velocity": jnp.zeros(()),
        "previous_target": jnp.zeros(()),
        "target_received": jnp.asarray(False),  # before the first target the previous one is taken as it
    }


def make_fast_chunk(side: FastSide) -> Callable:
    """``fast_chunk(fast_params, fast_state, target (1,)) -> (fast_state, log, force (1,))``:
    one slow step of the fast side (a single actuator at one interface DOF). The force
    returned is the one measured at the end of the chunk (ZOH). The log has one entry
    per fast sample, and ``log["identifier"]`` the identifier's extra log of the step."""
    ratio, dt_fast = side.ratio, 1.0 / side.fast_rate
    dt_slow = ratio / side.fast_rate  # Δt_n, the rate transition's step
    transition, compensation, identifier = side.transition.functions, side.compensation, side.identifier
    comp_functions = compensation.functions if compensation is not None else None
    id_every, actuator_step = side.identifier_every, side.actuator_step

    def fast_chunk(fp, fs, target, arrival_tick=None):
        target = jnp.reshape(target, (-1,))[0]
        # a transition one step late (DDMRT) gets the previous target; at the first step,
        # the first target itself (a substructure that starts displaced — under gravity — is
        # not a jump from zero to it)
        newest = (jnp.where(fs["target_received"], fs["previous_target"], target)
                  if side.transition_predicts_ahead else target)
        tr_state, tr_out = transition.step(fp["transition"], fs["transition"], TransitionInputs(newest, arrival_tick),
                                           dt_slow)
        # sensor noise for the whole chunk in one draw per channel (same statistics as
        # one draw per sample; much cheaper inside the compiled loop)
        zeros = sensors.SensorInputs(jnp.zeros(ratio))
        sd, noise_x = sensors.sensor_step(fp["sensor_displacement"], fs["sensor_displacement"], zeros, dt_fast)
        sf, noise_f = sensors.sensor_step(fp["sensor_force"], fs["sensor_force"], zeros, dt_fast)
        sv, noise_v = sensors.sensor_step(fp["sensor_velocity"], fs["sensor_velocity"], zeros, dt_fast)
        transfer_params = transfer_system_params(side, fp["actuator"], fp["specimen"],
                                                 fp.get("actuator_discretisation"))

        def fast_step(carry, inputs):
            x_target, nx, nf, nv = inputs
            if comp_functions is not None:
                comp_state, x_command = comp_functions.step(
                    fp["compensation"], carry["compensation"],
                    CompensatorInputs(x_target, carry["measured_displacement"]), dt_fast)
            else:
                comp_state, x_command = (), x_target
            act_state, out = actuator_step(transfer_params, carry["actuator"], act.ActuatorInputs(x_command), dt_fast)
            x_m = read_channel(fp["sensor_displacement"], out["x_measured"] + nx)
            f_m = read_channel(fp["sensor_force"], out["restoring_force"] + nf)
            v_m = read_channel(fp["sensor_velocity"], out["v"] + nv)
            # the identifier's displacement: the velocity channel integrated (trapezoid)
            # with noisy sensors (module doc), the LVDT itself with ideal ones
            if side.sensor_noise:
                x_id = carry["identifier_displacement"] + 0.5 * (carry["identifier_velocity"] + v_m) * dt_fast
            else:
                x_id = x_m
            new = dict(carry, compensation=comp_state, actuator=act_state, measured_displacement=x_m,
                       identifier_displacement=x_id, identifier_velocity=v_m, identifier_force=f_m)
            log = {"target": x_target, "command": x_command, "measured": x_m, "force": f_m,
                   "true_force": out["restoring_force"], "limit": out["limit_code"]}
            return new, log

        def identifier_period(carry, inputs):
            """``id_every`` fast steps, then one identifier update on the last sample
            (no branch: the identifier runs once per period, not under a condition)."""
            identifier_state = carry.pop("identifier")
            if id_every == 1:
                carry, log = fast_step(carry, inputs)
            else:
                carry, log = jax.lax.scan(fast_step, carry, inputs)
            sample = IdentifierInputs(carry["identifier_displacement"], carry["identifier_velocity"],
                                      carry["identifier_force"])
            identifier_state = identifier.step(fp["identifier"], identifier_state, sample, dt_fast * id_every)[0]
            return dict(carry, identifier=identifier_state), log

        carry = dict(fs, transition=tr_state, previous_target=jnp.asarray(target, jnp.float64),
                     target_received=jnp.asarray(True),
                     sensor_displacement=sd, sensor_force=sf, sensor_velocity=sv, identifier_force=jnp.zeros(()))
        per_period = (tr_out.samples, noise_x, noise_f, noise_v)
        if id_every > 1:
            per_period = tuple(jnp.reshape(a, (ratio // id_every, id_every)) for a in per_period)
        carry, log = jax.lax.scan(identifier_period, carry, per_period)
        carry.pop("identifier_force")
        log = {name: jnp.reshape(value, (ratio,)) for name, value in log.items()}
        log["slow_target"] = jnp.asarray(target, jnp.float64)  # the NS's interface target of this step [m]
        log["identifier"] = side.identifier_log(fp["identifier"], carry["identifier"])  # one entry per slow step
        return carry, log, log["force"][-1:]  # ZOH: the force measured at the end of the slow step

    return fast_chunk


def make_identify(side: FastSide) -> Callable:
    """``identify(fast_params, fast_state) -> Estimate`` (θ̂, relative std, converged)."""
    identifier = side.identifier

    def identify(fp, fs):
        return identifier.estimate(fp["identifier"], fs["identifier"])

    return identify
