"""The hybrid loop, split by concern.

* :mod:`.fast_side` — what a lab controller runs, one fast step at a time: the
  Carrion–Spencer servo-hydraulic actuator with control–structure interaction
  (:mod:`.fast_side.actuator`), sensors (band-limited noise, ADC quantization),
  compensation (polynomial extrapolation, AMB, dAMB), rate transition
  (predictor–corrector, DDMRT, ZOH), and the sites built from them: the virtual fast
  side (:mod:`.fast_side.virtual_site`), the specimen imposed directly (the ideal
  partitioned test, :mod:`.fast_side.direct_site`), a specimen behind the virtual
  actuator served as an OpenFresco element (:mod:`.fast_side.actuator_element_site`);
* :mod:`.loop` — the two engines (fused: one ``lax.scan``; step-wise: the site and
  numerical-substructure protocols of :mod:`rths_ident.protocols` called from Python),
  the guarded model-updating hook, the safe stop, real-time pacing, and the assembled
  test the engines run (:mod:`.loop.assembled`).

Running a test (results, records, figures) is :mod:`rths_ident.runner`; ready-made
tests are :mod:`rths_ident.scenarios`.
"""

from rths_ident.hybrid.fast_side import compensation
from rths_ident.hybrid.loop import engine
from rths_ident.hybrid.loop import model_updating
from rths_ident.hybrid.fast_side import rate_transition
from rths_ident.hybrid.fast_side.actuator import (
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
from rths_ident.hybrid.fast_side.direct_site import DirectSite
from rths_ident.hybrid.loop.engine import LoopAborted, LoopState, ModelUpdater, SlowStepFunctions, run_fused, run_stepwise
from rths_ident.hybrid.loop.model_updating import UpdateGuards, hook_decide, hook_init, hook_step
from rths_ident.protocols import Site, SiteReading
from rths_ident.hybrid.fast_side.virtual_site import VirtualSite
from rths_ident.hybrid.fast_side.sensors import Sensor, SensorInputs, SensorParams, sensor_init, sensor_step

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
