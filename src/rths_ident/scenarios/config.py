"""The settings every hybrid-test scenario shares: record, rates, compensation,
transition, transfer system, sensors, identifier rate and the model-updating start.

Strings name the strategies here (they come from the command line);
:mod:`rths_ident.scenarios.components` turns them into objects.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np

from rths_ident.errors import ParameterError
from rths_ident._params import plain
from rths_ident.hybrid.fast_side.actuator import TRANSFER_SYSTEMS
from rths_ident.hybrid.fast_side.compensation.registry import COMPENSATORS, GAIN_FIELDS, gain_kinds
from rths_ident.hybrid.fast_side.rate_transition.registry import resolve_transition, transition_names



@dataclasses.dataclass(frozen=True)
class InterlockSettings:
    """The ``[interlocks]`` of a test (:mod:`rths_ident.hybrid.fast_side.interlocks`; SI).
    A limit left out (None) takes the default its field's doc states
    (:func:`rths_ident.scenarios.components.interlocks`)."""

    interlock_command_stroke: float | None = None  # m; None: the actuator's stroke limit
    interlock_command_velocity: float | None = None  # m/s; None: the actuator's velocity limit
    interlock_measured_stroke: float | None = None  # m; None: the actuator's stroke limit
    interlock_measured_velocity: float | None = None  # m/s; None: the actuator's velocity limit
    interlock_force: float | None = None  # N; None: the actuator's force capacity
    interlock_tracking_error: float | None = None  # m (mean over the window); None: off
    interlock_tracking_window: float = 0.1  # s
    interlock_ns_displacement: float | None = None  # m; None: finite only
    interlock_identifier: bool = True
    interlock_identifier_range: float = 10.0  # × the initial guess
    interlock_deadline: float | None = None  # s of wall-clock time per slow step; None: off


def check_interlock_settings(cfg) -> None:
    """A clear error for an interlock setting out of range (``cfg.bad``)."""
    for name in ("interlock_command_stroke", "interlock_command_velocity", "interlock_measured_stroke",
                 "interlock_measured_velocity", "interlock_force", "interlock_tracking_error",
                 "interlock_ns_displacement", "interlock_deadline"):
        value = getattr(cfg, name)
        if value is not None and not (isinstance(value, (int, float)) and value > 0):
            cfg.bad(name, "a limit > 0 (leave out: the default)")
    if not (cfg.interlock_tracking_window > 0 and np.isfinite(cfg.interlock_tracking_window)):
        cfg.bad("interlock_tracking_window", "a window > 0 s")
    if not cfg.interlock_identifier_range > 1:
        cfg.bad("interlock_identifier_range", "a factor > 1")


@dataclasses.dataclass(frozen=True)
class HybridTestConfig(InterlockSettings):
    """Settings every hybrid-test scenario shares (SI units). Scenarios subclass it, set
    ``SCENARIO``/``UPDATING_MODES``/``IDENTIFYING_MODES`` and add their own fields."""

    SCENARIO: ClassVar[str] = "hybrid-test"
    UPDATING_MODES: ClassVar[tuple] = ("none", "oracle")
    IDENTIFYING_MODES: ClassVar[tuple] = ()

    record: str = "elcentro_1940"  # a shipped ground motion, or the path of your own file
    record_dt: float | None = None  # s: time step of your own one-column text record
    record_units: str | None = None  # g | m/s2 | cm/s2: units of your own text record
    record_scale: float = 1.0
    duration: float | None = None  # s of the record to run; None = all of it
    pad_seconds: float = 0.0  # s of zero ground acceleration before the record (real-time start-up, seed 003 §4.2)
    fast_rate: float = 4000.0  # Hz
    slow_rate: float = 50.0  # Hz
    updating: str = "none"
    compensation: str = "damb"
    # the compensator's declared gains (registry.GAIN_FIELDS; None: the compensator's default)
    compensation_log10_P0: float | None = None  # damb: log10 of P0 [-]
    compensation_rho: float | None = None  # damb: forgetting factor ρ [-]
    compensation_log10_Gamma0: float | None = None  # amb: log10 Γ0 [log10(s^-1/in²)]
    compensation_log10_Gamma1: float | None = None  # amb: log10 Γ1 [log10(s/in²)]
    compensation_log10_Gamma2: float | None = None  # amb: log10 Γ2 [log10(s^3/in²)]
    compensation_log10_Gamma3: float | None = None  # amb: log10 Γ3 [log10(s^5/in²)]
    compensation_s: float | None = None  # amb, damb: time scale of the initial plant model [-]
    compensation_tau: float | None = None  # polynomial: delay τ [s]
    transition: str = "predictor-corrector"
    arrival_fraction: float = 0.5  # predictor–corrector: the NS answer arrives after this share of Δt_n
    ddmrt_adaptive: bool = False  # DDMRT: fixed Wiener W (LTI) or leaky-LMS W (LTV; seed 000 Eq. 3.7)
    # derivatives of the fast targets kept continuous by the transition: 0 (the sources'
    # schemes), 1 (value, slope), 2 (value, slope, curvature), 3 (… jerk;
    # rate_transition.continuity); None: the compensator's own (continuity_order)
    transition_continuity: int | None = None
    transition_blend_steps: float = 1.0  # DDMRT: slow steps over which a prediction error is absorbed
    sensor_noise: bool = True
    seed: int = 123
    update_after: float = 0.2  # s: the hook holds the initial model this long
    transfer_system: str = "carrion-spencer"  # or "ideal": the specimen follows the command exactly
    actuator_substeps: int = 1  # RK4 sub-steps per fast step (1 is within ~1e-8 of a fine solve at 4 kHz)
    # Hz; None = auto: the lowest rate ≥ 1 kHz that divides the fast rate into a whole
    # number of samples per slow step (1 kHz at 4000/50 Hz).
    identifier_rate: float | None = None
    minimum_identifier_rate: ClassVar[float] = 0.0

    def bad(self, field: str, expected: str):
        raise ParameterError(f"{self.SCENARIO} {field} = {plain(getattr(self, field))}: expected {expected}")

    def __post_init__(self):
        from rths_ident.datasets.user_ground_motion import check_record_argument  # noqa: PLC0415

        # first: a misspelt record is named as such, before any check that depends on it
        try:
            check_record_argument(self.record, self.record_dt, self.record_units)
        except ParameterError as error:
            raise ParameterError(f"{self.SCENARIO} {error}") from None
        if self.updating not in self.UPDATING_MODES:
            self.bad("updating", " | ".join(self.UPDATING_MODES))
        for field, registry in (("compensation", COMPENSATORS), ("transfer_system", TRANSFER_SYSTEMS)):
            if getattr(self, field) not in registry:
                self.bad(field, registry.choices())
        if self.transition not in transition_names():
            self.bad("transition", " | ".join(transition_names()))
        self.compensation_gains()  # a gain of another compensator, or out of range: named here
        if not (self.fast_rate > 0 and self.slow_rate > 0):
            self.bad("fast_rate", "positive rates in Hz (fast and slow)")
        ratio = self.fast_rate / self.slow_rate
        if abs(ratio - round(ratio)) > 1e-9 or round(ratio) < 1:
            raise ParameterError(
                f"{self.SCENARIO} fast_rate/slow_rate = {ratio:g} must be a whole number ≥ 1 "
                f"(got fast {self.fast_rate:g} Hz, slow {self.slow_rate:g} Hz)"
            )
        if self.duration is not None and not self.duration > 0:
            self.bad("duration", "a positive number of seconds")
        if not (isinstance(self.pad_seconds, (int, float)) and np.isfinite(self.pad_seconds)
                and self.pad_seconds >= 0):
            self.bad("pad_seconds", "a finite number of seconds ≥ 0")
        if not (np.isfinite(self.record_scale) and self.record_scale > 0):
            self.bad("record_scale", "a finite positive factor")
        if self.transition_continuity not in (None, 0, 1, 2, 3):
            self.bad("transition_continuity", "0 (the source's scheme), 1 (value and slope), 2 (… and curvature) "
                     "or 3 (… and jerk)")
        if not (isinstance(self.transition_blend_steps, (int, float)) and 1.0 <= self.transition_blend_steps <= 8.0):
            self.bad("transition_blend_steps", "a number of slow steps in [1, 8]")
        if not (0.0 <= self.arrival_fraction < 1.0):
            self.bad("arrival_fraction", "a fraction in [0, 1)")
        if not (self.update_after >= 0.0):
            self.bad("update_after", "a time ≥ 0 s")
        if not isinstance(self.actuator_substeps, int) or self.actuator_substeps < 1:
            self.bad("actuator_substeps", "an integer ≥ 1")
        check_interlock_settings(self)
        if self.identifier_rate is not None:
            every = self.fast_rate / self.identifier_rate if self.identifier_rate > 0 else np.inf
            if not (self.identifier_rate >= self.minimum_identifier_rate and abs(every - round(every)) < 1e-9
                    and ratio % round(every) == 0):
                raise ParameterError(
                    f"{self.SCENARIO} identifier_rate = {plain(self.identifier_rate)} Hz must "
                    + (f"be ≥ {self.minimum_identifier_rate:g} Hz and " if self.minimum_identifier_rate else "")
                    + f"divide the fast rate {self.fast_rate:g} Hz into a whole number of samples that "
                    f"divides the {round(ratio)} fast steps of a slow step"
                )

    def compensation_gains(self) -> dict:
        """The declared gains of the compensator ({name: value}, the names of
        :data:`~rths_ident.hybrid.fast_side.compensation.registry.GAIN_FIELDS`); a gain
        out of its range, or one the configured compensator does not take, is a clear
        error naming ``compensation.NAME``."""
        gains = {}
        for name, field in GAIN_FIELDS.items():
            value = getattr(self, f"compensation_{name}")
            if value is None:
                continue
            if not (isinstance(value, (int, float)) and field.low <= value <= field.high):
                raise ParameterError(f"{self.SCENARIO} compensation.{name} = {plain(value)}: expected a number in "
                                     f"[{field.low:g}, {field.high:g}] {field.unit}")
            if name not in COMPENSATORS[self.compensation].gains:
                takes = COMPENSATORS[self.compensation].gains
                raise ParameterError(
                    f"{self.SCENARIO} compensation.{name} = {plain(value)}: a gain of {' | '.join(gain_kinds(name))}, "
                    f"not of compensation.kind = {self.compensation} (its gains: {', '.join(takes) or 'none'})")
            gains[name] = float(value)
        return gains

    @property
    def ratio(self) -> int:
        """Fast steps per slow step, Δt_n/Δt_e."""
        return int(round(self.fast_rate / self.slow_rate))

    @property
    def transition_kind(self) -> str:
        """The registered rate transition this test runs: ``transition`` itself, or for
        ``"auto"`` the one its rate ratio suits (DDMRT at a ratio of 8 or more; rate_transition.registry)."""
        return resolve_transition(self.transition, self.ratio)

    @property
    def continuity_order(self) -> int:
        """The rate transition's continuity order this test runs: ``transition_continuity``,
        or when left out the compensator's own (:attr:`Compensator.continuity
        <rths_ident.hybrid.fast_side.compensation.registry.Compensator.continuity>`: 3 with
        AMB and the polynomial extrapolation, 2 with dAMB and without compensation)."""
        if self.transition_continuity is not None:
            return self.transition_continuity
        return COMPENSATORS[self.compensation].continuity

    @property
    def identifier_every(self) -> int:
        """Fast samples per identifier update."""
        for name in ("interlock_command_stroke", "interlock_command_velocity", "interlock_measured_stroke",
                     "interlock_measured_velocity", "interlock_force", "interlock_tracking_error",
                     "interlock_ns_displacement", "interlock_deadline"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, (int, float)) and value > 0):
                self.bad(name, "a limit > 0 (leave out: the default)")
        if not (self.interlock_tracking_window > 0 and np.isfinite(self.interlock_tracking_window)):
            self.bad("interlock_tracking_window", "a window > 0 s")
        if not self.interlock_identifier_range > 1:
            self.bad("interlock_identifier_range", "a factor > 1")
        if self.identifier_rate is not None:
            return int(round(self.fast_rate / self.identifier_rate))
        divisors = [d for d in range(1, self.ratio + 1) if self.ratio % d == 0 and self.fast_rate / d >= 1000.0]
        return max(divisors) if divisors else 1

    @property
    def variant(self) -> str:
        """The loop variant of ``updating``: ``"updating"`` for an identifying mode,
        else ``"none"`` or ``"oracle"`` (:mod:`rths_ident.hybrid.loop.assembled`)."""
        return "updating" if self.updating in self.IDENTIFYING_MODES else self.updating

    def program_key(self):
        """What identifies the compiled loop: this configuration with ``updating`` set to
        its identifier (the comparison variants share the loop) and the interlocks at
        their defaults (they are checked outside the compiled loop)."""
        key = dataclasses.replace(self, **{f.name: f.default for f in dataclasses.fields(InterlockSettings)})
        if not self.IDENTIFYING_MODES:
            return key
        identifying = self.updating if self.updating in self.IDENTIFYING_MODES else None
        return dataclasses.replace(key, updating=identifying or self.IDENTIFYING_MODES[0])
