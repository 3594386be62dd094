"""The virtual RTHS loop: transfer system, compensation, rate transition, sensors,
model-updating hook, loop engines and scenarios.

* :mod:`.actuator` — Carrion & Spencer servo-hydraulic actuator with control–structure
  interaction, similitude scaling, stroke/velocity/force limits;
* :mod:`.sensors` — band-limited noise and ADC quantization;
* :mod:`.compensation` — polynomial extrapolation, AMB, dAMB;
* :mod:`.rate_transition` — predictor–corrector, DDMRT, ZOH;
* :mod:`.model_updating` — the guarded hook that pushes identified parameters into the
  numerical substructure;
* :mod:`.site` — the site protocol (the physical side as the slow side sees it);
  :mod:`.virtual_site` (the virtual fast side) and :mod:`.direct_site` (the specimen
  model imposed directly: the ideal partitioned test) implement it;
* :mod:`.engine` — fused (one ``lax.scan``) and step-wise (site + numerical
  substructure protocols, from Python) engines;
* :mod:`.hybrid_test` — a hybrid test as data, run with either engine; :mod:`.results`
  — its metrics and report;
* :mod:`.scenarios` — ready-made tests, registered for ``rths-ident run``.
"""

from rths_ident.hybrid import compensation, engine, model_updating, rate_transition
from rths_ident.hybrid.actuator import (
    ActuatorInputs,
    ActuatorLimitError,
    ActuatorState,
    CarrionSpencerParams,
    ServoHydraulicActuator,
    TransferSystemParams,
    actuator_init,
    actuator_run,
    actuator_step,
    closed_loop_transfer_function,
    ideal_actuator_step,
    phase_delay,
)
from rths_ident.hybrid.direct_site import DirectSite
from rths_ident.hybrid.engine import LoopAborted, LoopState, ModelUpdater, SlowStepFunctions, run_fused, run_stepwise
from rths_ident.hybrid.model_updating import UpdateGuards, hook_decide, hook_init, hook_step
from rths_ident.hybrid.site import Site, SiteReading
from rths_ident.hybrid.virtual_site import VirtualSite
from rths_ident.hybrid.sensors import Sensor, SensorInputs, SensorParams, sensor_init, sensor_step

__all__ = [
    "ActuatorInputs",
    "ActuatorLimitError",
    "TransferSystemParams",
    "ideal_actuator_step",
    "SensorInputs",
    "ActuatorState",
    "CarrionSpencerParams",
    "ServoHydraulicActuator",
    "actuator_init",
    "actuator_run",
    "actuator_step",
    "closed_loop_transfer_function",
    "phase_delay",
    "Sensor",
    "SensorParams",
    "sensor_init",
    "sensor_step",
    "UpdateGuards",
    "hook_init",
    "hook_step",
    "hook_decide",
    "ModelUpdater",
    "Site",
    "SiteReading",
    "VirtualSite",
    "DirectSite",
    "LoopAborted",
    "LoopState",
    "SlowStepFunctions",
    "run_fused",
    "run_stepwise",
    "compensation",
    "rate_transition",
    "engine",
    "model_updating",
]
