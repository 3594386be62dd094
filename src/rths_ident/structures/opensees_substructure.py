"""An OpenSeesPy model of the user's as the numerical substructure of a hybrid test.

:class:`OpenSeesSubstructure` implements the
:class:`~rths_ident.structures.numerical_substructure.NumericalSubstructure` protocol
(``initial_target``, ``step(feedback, ground_accel)``, ``apply_parameters``, ``close``)
over ANY model built with OpenSeesPy in this process (seed 000 §3.3.1 and §12.1–12.2).

Set-up (constructor)
    1. ``build_model(ops)`` — a function, or the path of a Python file defining
       ``build(ops)`` — builds the model: nodes, elements, masses, damping, and, if it
       has gravity, its own static gravity analysis (seed 000 §5 and §12.2).
    2. The adapter keeps the gravity loads (``loadConst('-time', 0.0)``), wipes the
       static analysis, adds the ground motion as ``UniformExcitation`` in
       ``ground_direction`` with a ``Path`` series of ``ground_accel`` [m/s²] (first
       sample at t = 0), one ``Plain`` pattern for the interface force, and the
       transient analysis of the chosen integrator.

Per slow step Δt (``step``)
    The specimen's measured restoring force f at the interface DOFs (``feedback``, the
    sign of an internal force, as in the protocol) enters as the nodal load −f: the
    interface pattern (one tag, with one ``Constant`` series created once) is removed and
    re-created with the new loads, so the domain holds the same number of load patterns
    and time series whatever the number of steps (the thesis created a new series and
    pattern every step and removed them, §12.1). Removing and adding a ``Plain``
    pattern does not reset the integrators' history in OpenSees (checked: identical
    responses to changing the load in place through a ``loadAtNode`` parameter, for
    all four integrators). Then ``analyze(1, Δt)``.

Integrators and the target sent to the fast side
    ``"alpha-os"``: ``integrator AlphaOS α_OS`` (α_OS = 1 + α of seed 000 Eq. 2.51;
    0.9 as in its code), ``algorithm Linear -initial`` (K^l = initial stiffness, the
    operator-splitting choice of Eq. 2.52). The target is the predictor of the next
    step, ũ_{n+1} = u_n + Δt u̇_n + Δt²(½ − β) ü_n with β = (1 − α)²/4 = (2 − α_OS)²/4
    (Eq. 2.48; the constants of OpenSees' ``AlphaOS`` constructor), from
    ``nodeDisp/nodeVel/nodeAccel``. OpenSees evaluates the loads at t_n + α_OS Δt;
    with a ``Constant`` series the interface load is therefore applied in full,
    −f_{n+1}, as an EXTERNAL load (``alpha_os_feedback="load"``, the thesis' code). The
    α-method proper weights a restoring force like the elements' forces,
    α_OS f_{n+1} + (1 − α_OS) f_n (Eq. 2.50, and the native
    :class:`~rths_ident.structures.alpha_os.AlphaOS` with zero interface splitting
    stiffness): ``alpha_os_feedback="weighted"`` applies that load instead. The
    elements are evaluated at the blended predictor (1 − α_OS) ũ_n + α_OS ũ_{n+1}
    and not updated to the corrected u_{n+1} (no ``-updateElemDisp``): element forces
    read after a step belong to that displacement.
    ``"newmark-explicit"``: ``integrator NewmarkExplicit γ`` (β = 0); target
    u_n + Δt u̇_n + Δt²/2 ü_n, the displacement where the next step evaluates its
    elements and the interface force, so the coupling is exact.
    ``"central-difference"``: ``integrator CentralDifference``; OpenSees solves
    u_{n+1} from equilibrium at t_n (ground load at t_n), so the displacement the next
    ``analyze`` evaluates the forces at is the current ``nodeDisp``: that is the
    target. The first step starts from u_{−1} = u_0 (OpenSees' assumption).
    ``"newmark-fixed-iter"``: implicit ``integrator Newmark γ β`` with ``test
    FixedNumIter iterations`` and ``algorithm Newton`` (a constant number of
    iterations per step, seed 000 §2.5). Its end-of-step displacement is only known
    after the step, so the target is the converged displacement of the current step:
    the force measured there enters the NEXT step, i.e. the interface force LAGS ONE
    STEP (an explicit treatment of the specimen; stable only while the specimen is
    stiff enough relative to Δt).

Live model updating (``parameter_map``)
    Entry i of θ̂ sets one or several OpenSees parameters, each described by an
    :class:`ElementParameter` (element tags, the argument path after the element tag,
    the OpenSees parameter name, an optional transform from θ̂ units to OpenSees'
    value). The constructor attaches every one with ``parameter(tag, 'element', ele,
    *path, name)``; ``apply_parameters`` calls ``updateParameter``. OpenSees does not
    fail when no object recognises a parameter: it prints "no objects were able to
    identify parameter" and creates an empty parameter, whose updates are silent
    no-ops. The constructor reads that message and raises :class:`ParameterError`
    naming the element, path and parameter.

    Verified in OpenSeesPy 3.7.1 (element force read after an update mid-history, in
    ``zeroLength`` and ``twoNodeLink``, path ``()`` or ``("material", "1")``):
    uniaxial ``BoucWen`` ko, alpha, n, gamma, beta, Ao, deltaA, deltaNu, deltaEta;
    ``Steel01`` and ``Steel02`` Fy, E, b; ``Elastic`` E. The forces after the update
    equal :class:`~rths_ident.models.BoucWen` and
    :class:`~rths_ident.models.BilinearKinematic` continued with the new parameters
    (tests). Refused (→ ParameterError): e.g. ``BoucWen`` Fy/E/k0, ``Hysteretic`` E,
    ``ElasticPP`` epsyP, misspelt names.

OpenSees keeps ONE model per process: constructing an :class:`OpenSeesSubstructure`
(or an :class:`~rths_ident.structures.opensees_adapter.OpenSeesShearBuilding`) wipes the
previous one, whose methods then raise ``RuntimeError``; ``close()`` wipes. Units: SI
(N, m, s, kg) — OpenSees has no units, the model must be built in SI.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import math
import os
import runpy
from typing import Callable, Sequence

import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.structures.integrators import INTEGRATORS as _REGISTERED
from rths_ident.structures import opensees_adapter
from rths_ident.structures.opensees_adapter import import_opensees

__all__ = ["OpenSeesSubstructure", "ElementParameter", "INTEGRATORS"]

#: the integrators :class:`OpenSeesSubstructure` sets up
#: the integrators OpenSees runs here (names of :data:`rths_ident.structures.integrators.INTEGRATORS`)
INTEGRATORS = tuple(name for name, entry in _REGISTERED.items() if entry.opensees)

_FEEDBACK_WEIGHTINGS = ("load", "weighted")
_REFUSED_MESSAGE = "no objects were able to identify parameter"
_FIRST_SERIES_TAG = 900_001  # OpenSees cannot list time-series tags: start high, skip used ones


@dataclasses.dataclass(frozen=True)
class ElementParameter:
    """One OpenSees element parameter that an entry of θ̂ sets.

    elements : element tag(s) (one OpenSees ``parameter`` each).
    name : OpenSees parameter name, e.g. ``"Fy"``, ``"ko"`` (case-sensitive).
    path : arguments between the element tag and the name, e.g. ``("material", "1")``
        for the first material of a ``zeroLength``; ``()`` lets the element pass the
        name to all its materials.
    transform : θ̂_i (in the estimator's units) → the OpenSees value; None = identity.
    """

    elements: int | Sequence[int]
    name: str
    path: tuple = ()
    transform: Callable[[float], float] | None = None

    def element_tags(self) -> tuple[int, ...]:
        return tuple(int(e) for e in np.atleast_1d(self.elements))


def _load_build_function(build_model):
    if callable(build_model):
        return build_model
    if isinstance(build_model, (str, os.PathLike)):
        path = os.fspath(build_model)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"build_model file {path!r} does not exist")
        namespace = runpy.run_path(path)
        build = namespace.get("build")
        if not callable(build):
            raise ValueError(f"build_model file {path!r} must define a function build(ops)")
        return build
    raise TypeError(f"build_model must be a function build(ops) or a path to a .py file; got {build_model!r}")


def _dof_pairs(name: str, pairs) -> tuple[tuple[int, int], ...]:
    arr = np.asarray(pairs)
    if arr.ndim == 1 and arr.size == 2:
        arr = arr.reshape(1, 2)
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] < 1:
        raise ValueError(f"{name} must be one (node, dof) pair or a sequence of them (dof 1-based); got {pairs!r}")
    return tuple((int(node), int(dof)) for node, dof in arr)


class OpenSeesSubstructure:
    """An OpenSeesPy model behind the numerical-substructure protocol (module doc).

    build_model : ``build(ops)`` or the path of a ``.py`` file defining it; builds the
        model in SI and runs its own gravity analysis if it has one.
    interface : (node, dof) or a sequence of them (dof 1-based): the n ≥ 1 DOFs where
        the specimen acts (targets are their displacements [m], ``feedback`` their
        forces [N]).
    dt : slow step Δt_n [s].
    ground_accel : ground acceleration ẍ_g [m/s²] at t = 0, record_dt, 2·record_dt, …
        (None: no ground motion); after its last sample it ramps to 0 over one
        record_dt. ``step``'s ``ground_accel`` argument is checked
        against it at the end of each step.
    record_dt : sample interval of ``ground_accel`` [s] (default ``dt``).
    ground_direction : DOF direction of the ``UniformExcitation`` (1 = x).
    integrator : one of :data:`INTEGRATORS`.
    alpha_os : α_OS ∈ [2/3, 1] of OpenSees AlphaOS (0.9 ↔ α = −0.1).
    newmark : (γ, β) of "newmark-fixed-iter" (OpenSees argument order); γ of
        "newmark-explicit" is ``newmark[0]``.
    iterations : Newton iterations per step of "newmark-fixed-iter" (≥ 1).
    response : (node, dof) pairs logged each step (default: the interface DOFs).
    parameter_map : one entry per θ̂ component: an :class:`ElementParameter` or a
        sequence of them (None: ``apply_parameters`` raises).
    alpha_os_feedback : "load" (the interface force as an external load, default) or
        "weighted" (α_OS f_{n+1} + (1 − α_OS) f_n); AlphaOS only.
    system : OpenSees ``system`` (default ``"BandGeneral"``, as the thesis).
    parameter_names, parameter_units : names and units of the θ̂ entries (what a remote
        client is told; default: the OpenSees parameter names, units unknown).
    """

    def __init__(
        self,
        build_model,
        interface,
        dt: float,
        ground_accel=None,
        record_dt: float | None = None,
        ground_direction: int = 1,
        integrator: str = "alpha-os",
        alpha_os: float = 0.9,
        newmark: tuple[float, float] = (0.5, 0.25),
        iterations: int = 3,
        response=None,
        parameter_map: Sequence | None = None,
        alpha_os_feedback: str = "load",
        system: str = "BandGeneral",
        parameter_names: Sequence[str] | None = None,
        parameter_units: Sequence[str] | None = None,
    ):
        dt = float(dt)
        if not (math.isfinite(dt) and dt > 0.0):
            raise ParameterError(f"dt must be a positive finite time step [s]; got {dt!r}")
        if integrator not in INTEGRATORS:
            raise ParameterError(f"integrator must be one of {INTEGRATORS}; got {integrator!r}")
        alpha_os = float(alpha_os)
        if integrator == "alpha-os" and not (2.0 / 3.0 - 1e-12 <= alpha_os <= 1.0):
            raise ParameterError(f"alpha_os must be in [2/3, 1] (OpenSees AlphaOS α_OS = 1 + α); got {alpha_os!r}")
        gamma, beta = (float(v) for v in newmark)
        if integrator == "newmark-fixed-iter" and not (gamma >= 0.5 and beta > 0.0):
            raise ParameterError(f"newmark = (gamma, beta) needs gamma >= 1/2 and beta > 0; got {newmark!r}")
        if integrator == "newmark-explicit" and not gamma >= 0.5:
            raise ParameterError(f"newmark[0] = gamma must be >= 1/2 for newmark-explicit; got {gamma!r}")
        if int(iterations) != iterations or int(iterations) < 1:
            raise ParameterError(f"iterations must be an integer >= 1; got {iterations!r}")
        if alpha_os_feedback not in _FEEDBACK_WEIGHTINGS:
            raise ParameterError(f"alpha_os_feedback must be one of {_FEEDBACK_WEIGHTINGS}; got {alpha_os_feedback!r}")
        if int(ground_direction) < 1:
            raise ParameterError(f"ground_direction must be a DOF direction >= 1; got {ground_direction!r}")
        record = None
        if ground_accel is not None:
            record = np.asarray(ground_accel, dtype=float).ravel()
            if record.size < 2 or not np.all(np.isfinite(record)):
                raise ValueError(f"ground_accel must be at least 2 finite samples [m/s²]; got {record.size} samples")
        rec_dt = dt if record_dt is None else float(record_dt)
        if not (math.isfinite(rec_dt) and rec_dt > 0.0):
            raise ParameterError(f"record_dt must be a positive finite sample interval [s]; got {record_dt!r}")

        build = _load_build_function(build_model)
        self.interface = _dof_pairs("interface", interface)
        self.response = self.interface if response is None else _dof_pairs("response", response)
        self.dt = dt
        self.n_interface = len(self.interface)
        self.integrator = integrator
        self.alpha_os = alpha_os
        self.newmark = (gamma, beta)
        self.iterations = int(iterations)
        self.alpha_os_feedback = alpha_os_feedback
        self.ground_record = record
        self.record_dt = rec_dt
        self._previous_feedback = np.zeros(self.n_interface)
        if record is not None:  # the Path series' samples, with its trailing zero
            self._ground_values = np.append(record, 0.0)
            self._ground_times = rec_dt * np.arange(self._ground_values.size)
            self._ground_scale = float(np.abs(record).max())
        else:
            self._ground_scale = 0.0

        ops = import_opensees()
        self._ops = ops
        ops.wipe()
        opensees_adapter._active_model = self  # one owner of the process-wide domain
        build(ops)

        self._check_dofs("interface", self.interface)
        self._check_dofs("response", self.response)

        # keep gravity constant from t = 0, drop the static analysis
        ops.loadConst("-time", 0.0)
        ops.wipeAnalysis()

        used_patterns = [int(p) for p in ops.getPatterns()]
        next_pattern = max(used_patterns, default=0) + 1
        self._series_tags = []
        if record is not None:
            # OpenSees' Path returns 0 AT its last sample time (it interpolates towards a
            # sample that does not exist): one trailing zero makes the record's last
            # sample count; after the end the excitation ramps to 0 over one record_dt.
            series = self._new_series_tag("Path", "-dt", rec_dt, "-values", *record.tolist(), 0.0)
            self._ground_pattern_tag = next_pattern
            ops.pattern("UniformExcitation", next_pattern, int(ground_direction), "-accel", series)
            next_pattern += 1
        self._interface_series_tag = self._new_series_tag("Constant")
        self._interface_pattern_tag = next_pattern
        self._interface_pattern_built = False
        self._nodal_load_width = {node: len(ops.nodeDisp(node)) for node, _ in self.interface}
        self._set_interface_load(np.zeros(self.n_interface))

        self._parameter_groups = self._attach_parameters(parameter_map)
        self.parameter_names, self.parameter_units = self._parameter_labels(parameter_map, parameter_names,
                                                                            parameter_units)

        ops.constraints("Transformation")
        ops.numberer("RCM")
        ops.system(system)
        if integrator == "alpha-os":
            ops.algorithm("Linear", "-initial")
            ops.integrator("AlphaOS", alpha_os)
            self._beta = (2.0 - alpha_os) ** 2 / 4.0  # = (1 − α)²/4, Eq. 2.51
        elif integrator == "newmark-explicit":
            ops.algorithm("Linear")
            ops.integrator("NewmarkExplicit", gamma)
            self._beta = 0.0
        elif integrator == "central-difference":
            ops.algorithm("Linear")
            ops.integrator("CentralDifference")
            self._beta = None
        else:
            ops.test("FixedNumIter", self.iterations)
            ops.algorithm("Newton")
            ops.integrator("Newmark", gamma, beta)
            self._beta = None
        ops.analysis("Transient")

    # -- helpers ----------------------------------------------------------------------
    @property
    def ops(self):
        """The ``openseespy.opensees`` module (for reading the model; do not rebuild it)."""
        self._check_active()
        return self._ops

    def _check_active(self):
        if opensees_adapter._active_model is not self:
            raise RuntimeError(
                "this OpenSees model was wiped: OpenSees holds one model per process and a "
                "newer OpenSeesSubstructure / OpenSeesShearBuilding (or close()) replaced it"
            )

    def _check_dofs(self, name, pairs):
        ops = self._ops
        nodes = set(int(n) for n in ops.getNodeTags())
        for node, dof in pairs:
            if node not in nodes:
                raise ValueError(f"{name} node {node} is not in the OpenSees model (nodes {sorted(nodes)[:10]}…)")
            ndf = len(ops.nodeDisp(node))
            if not (1 <= dof <= ndf):
                raise ValueError(f"{name} dof {dof} of node {node} must be in 1..{ndf} (1-based)")
            if name == "interface" and node in set(int(n) for n in ops.getFixedNodes()):
                if dof in [int(d) for d in ops.getFixedDOFs(node)]:
                    raise ValueError(f"interface DOF (node {node}, dof {dof}) is fixed: a load there does nothing")

    def _new_series_tag(self, kind, *args):
        ops = self._ops
        tag = _FIRST_SERIES_TAG + len(self._series_tags)
        for _ in range(1000):
            with contextlib.redirect_stderr(io.StringIO()):
                try:
                    ops.timeSeries(kind, tag, *args)
                except ops.OpenSeesError:
                    tag += 1
                    continue
            self._series_tags.append(tag)
            return tag
        raise RuntimeError("could not find a free OpenSees time-series tag")

    def _set_interface_load(self, load):
        """Replace the interface pattern's nodal loads by ``load`` [N] (one per
        interface DOF), re-using the pattern and series tags."""
        ops = self._ops
        if self._interface_pattern_built:
            ops.remove("loadPattern", self._interface_pattern_tag)
        ops.pattern("Plain", self._interface_pattern_tag, self._interface_series_tag)
        self._interface_pattern_built = True
        per_node: dict[int, np.ndarray] = {}
        for (node, dof), value in zip(self.interface, load):
            vec = per_node.setdefault(node, np.zeros(self._nodal_load_width[node]))
            vec[dof - 1] += float(value)
        for node, vec in per_node.items():
            ops.load(node, *vec.tolist())

    def _attach_parameters(self, parameter_map):
        if parameter_map is None:
            return None
        ops = self._ops
        groups = []
        next_tag = max([int(t) for t in ops.getParamTags()], default=0) + 1
        for i, entry in enumerate(parameter_map):
            targets = [entry] if isinstance(entry, ElementParameter) else list(entry)
            if not targets or not all(isinstance(t, ElementParameter) for t in targets):
                raise ParameterError(
                    f"parameter_map[{i}] must be an ElementParameter or a non-empty sequence of them; got {entry!r}"
                )
            group = []
            for target in targets:
                for ele in target.element_tags():
                    args = ("element", ele, *target.path, target.name)
                    label = f"parameter_map[{i}]: {target.name!r} of element {ele} (path {tuple(target.path)!r})"
                    if ele not in set(int(e) for e in ops.getEleTags()):
                        raise ParameterError(f"{label}: element {ele} is not in the OpenSees model")
                    messages = io.StringIO()
                    with contextlib.redirect_stderr(messages):
                        try:
                            ops.parameter(next_tag, *args)
                        except ops.OpenSeesError as exc:
                            raise ParameterError(
                                f"{label}: OpenSees refused the parameter ({messages.getvalue().strip() or exc})"
                            ) from exc
                    if _REFUSED_MESSAGE in messages.getvalue():
                        ops.remove("parameter", next_tag)
                        raise ParameterError(
                            f"{label}: no OpenSees object recognises this parameter, so updateParameter would be a "
                            f"silent no-op (OpenSees: {messages.getvalue().strip()!r}); see the materials that update "
                            "in rths_ident.structures.opensees_substructure"
                        )
                    group.append((next_tag, target.transform))
                    next_tag += 1
            groups.append(group)
        return groups

    @staticmethod
    def _parameter_labels(parameter_map, names, units):
        if parameter_map is None:
            return (), None
        count = len(parameter_map)
        if names is None:
            names = [(entry if isinstance(entry, ElementParameter) else list(entry)[0]).name for entry in parameter_map]
        names = tuple(str(n) for n in names)
        if len(names) != count:
            raise ParameterError(f"parameter_names must name the {count} parameter_map entries; got {names!r}")
        if units is not None:
            units = tuple(str(u) for u in units)
            if len(units) != count:
                raise ParameterError(f"parameter_units must give the {count} parameter_map entries' units; "
                                     f"got {units!r}")
        return names, units

    def _kinematics(self, pairs):
        ops = self._ops
        u = np.array([ops.nodeDisp(n, d) for n, d in pairs])
        v = np.array([ops.nodeVel(n, d) for n, d in pairs])
        a = np.array([ops.nodeAccel(n, d) for n, d in pairs])
        return u, v, a

    def _target(self) -> np.ndarray:
        u, v, a = self._kinematics(self.interface)
        if self._beta is None:  # central difference: the displacement the next step imposes; implicit: converged
            return u
        return u + self.dt * v + self.dt**2 * (0.5 - self._beta) * a

    # -- protocol -----------------------------------------------------------------------
    @property
    def time(self) -> float:
        """Current analysis time [s] (0 at the start of the transient analysis)."""
        self._check_active()
        return float(self._ops.getTime())

    def initial_target(self) -> np.ndarray:
        """The first interface target [m] (module doc, per integrator)."""
        self._check_active()
        return self._target()

    def ground_accel_at(self, time: float) -> float:
        """ẍ_g [m/s²] of the model's ``Path`` series at ``time`` [s]: linear interpolation
        of the record, ramping to 0 over one ``record_dt`` after its last sample."""
        if self.ground_record is None:
            return 0.0
        return float(np.interp(time, self._ground_times, self._ground_values, right=0.0))

    def step(self, feedback, ground_accel) -> tuple[np.ndarray, dict]:
        """Apply −``feedback`` [N] at the interface DOFs, ``analyze(1, dt)``, return the
        next target [m] and the log (``displacement``/``velocity``/``acceleration`` of
        the response DOFs [m, m/s, m/s²], ``interface_displacement`` [m],
        ``interface_load`` [N] applied, ``time`` [s]).

        ``ground_accel`` [m/s²] must equal the ground record at the end of the step
        (the model's own ``Path`` series drives the excitation; a mismatch beyond
        1e-6·max|record| raises ``ValueError``, it means the loop and the model use
        different records or are out of step)."""
        self._check_active()
        f = np.asarray(feedback, dtype=float).reshape(-1)
        if f.shape != (self.n_interface,) or not np.all(np.isfinite(f)):
            raise ValueError(
                f"feedback must be {self.n_interface} finite interface force(s) [N]; got {feedback!r}"
            )
        if self.integrator == "alpha-os" and self.alpha_os_feedback == "weighted":
            applied = self.alpha_os * f + (1.0 - self.alpha_os) * self._previous_feedback
        else:
            applied = f
        self._set_interface_load(-applied)
        status = self._ops.analyze(1, self.dt)
        if status != 0:
            raise RuntimeError(f"OpenSees analyze failed with status {status} at t = {self.time:.6g} s")
        self._previous_feedback = f
        t = self.time
        expected = self.ground_accel_at(t)
        if abs(float(ground_accel) - expected) > 1e-6 * self._ground_scale + 1e-12:
            raise ValueError(
                f"ground_accel = {float(ground_accel)!r} m/s² at t = {t:.6g} s differs from the model's record "
                f"({expected!r} m/s²): the loop and the OpenSees model use different records or are out of step"
            )
        u, v, a = self._kinematics(self.response)
        log = {
            "displacement": u,
            "velocity": v,
            "acceleration": a,
            "interface_displacement": np.array([self._ops.nodeDisp(n, d) for n, d in self.interface]),
            "interface_load": -applied,
            "time": np.asarray(t),
        }
        return self._target(), log

    def apply_parameters(self, estimate) -> None:
        """Set every OpenSees parameter of ``parameter_map`` from θ̂ (``updateParameter``)."""
        self._check_active()
        if self._parameter_groups is None:
            raise TypeError("this OpenSees substructure was built without parameter_map: it cannot be updated")
        theta = np.asarray(estimate, dtype=float).reshape(-1)
        if theta.shape != (len(self._parameter_groups),) or not np.all(np.isfinite(theta)):
            raise ValueError(
                f"estimate must be {len(self._parameter_groups)} finite values (one per parameter_map entry); "
                f"got {estimate!r}"
            )
        for value, group in zip(theta, self._parameter_groups):
            for tag, transform in group:
                self._ops.updateParameter(tag, float(value if transform is None else transform(float(value))))

    def parameter_values(self) -> list[list[float]]:
        """The OpenSees values of the mapped parameters, per θ̂ entry (``getParamValue``)."""
        self._check_active()
        if self._parameter_groups is None:
            return []
        return [[float(self._ops.getParamValue(tag)) for tag, _ in group] for group in self._parameter_groups]

    def close(self) -> None:
        """Wipe the OpenSees model (idempotent)."""
        if opensees_adapter._active_model is self:
            self._ops.wipe()
            opensees_adapter._active_model = None
