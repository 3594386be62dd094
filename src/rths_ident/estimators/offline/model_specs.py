"""What an offline fit estimates for each model: free parameters, bounds, starts, units.

All values here are in the *normalised* units of
:mod:`rths_ident.estimators.offline.fit_data` (x̃ = x/X_s, F̃ = F/F_s, t̃ = t/T_s), so the
bounds fit any specimen. Each parameter of a model has a physical dimension
F^a·X^b·T^c and converts back as ``value · F_s^a · X_s^b · T_s^c`` — except the
Bouc–Wen β and γ, whose unit is X^(−n) (they multiply |z|^n).

Free parameters are fitted in *log* coordinates when they are positive and span decades
(stiffnesses, forces, β) and in plain coordinates on a bounded interval otherwise
(ratios such as α, b, γ/β, the exponent n); the optimisers work on that coordinate
vector ``q`` inside box bounds, and :meth:`ModelSpec.fields` maps ``q`` to the model's
parameter fields (pure, JAX-traceable, used inside ``lax.scan``/``jacfwd``/NUTS).

Held parameters (and why):

* Bouc–Wen A = 1: A, β, γ and k(1−α) are not separately identifiable from a force
  history (z can be rescaled), so A is fixed unless ``free_A`` — then expect large
  correlations in the result.
* LuGre σ1 = 0 always, and σ2 = 0 when the time axis is not physical (quasi-static
  test): they multiply velocities, which a pseudo-time makes meaningless; with σ1 = σ2 = 0
  the model is rate-independent (Dahl model with linear hardening, seed 001 Eq. 2.10).
  With a physical time σ2 (viscous damping) is fitted; σ1 only damps the z equation
  numerically (seed 001 §2.4) and is not identifiable from a smooth test.
* linear: m = c = 0 when the time is not physical (then k is the static stiffness).
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Callable

import jax.numpy as jnp
import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.estimators.offline.fit_data import FitData, Scales

__all__ = ["FreeParameter", "ModelSpec", "MODEL_NAMES", "PINCHING_FORMS", "model_spec", "model_class",
           "initial_stiffness", "hysteretic_energy"]

#: model names accepted by the fitters and by ``rths-ident fit --model``
MODEL_NAMES = ("lugre", "boucwen", "degrading-boucwen", "pinching-boucwen", "bilinear", "linear")

# model name -> (module, class names to try, in order)
_MODEL_CLASSES = {
    "lugre": ("lugre", ("ModifiedLuGre",)),
    "boucwen": ("bouc_wen", ("BoucWen",)),
    "degrading-boucwen": ("degrading_bouc_wen", ("DegradingBoucWen",)),
    "pinching-boucwen": ("pinching_bouc_wen", ("PinchingBoucWen",)),
    "bilinear": ("bilinear", ("Bilinear", "BilinearKinematic")),
    "linear": ("linear", ("LinearElement",)),
}


def model_class(name: str):
    """The :mod:`rths_ident.models` class fitted under ``name``."""
    if name not in _MODEL_CLASSES:
        raise ParameterError(f"unknown model {name!r}; valid models: {', '.join(MODEL_NAMES)}")
    module_name, class_names = _MODEL_CLASSES[name]
    module = importlib.import_module(f"rths_ident.models.{module_name}")
    for class_name in class_names:
        if hasattr(module, class_name):
            return getattr(module, class_name)
    raise ParameterError(f"rths_ident.models.{module_name} has no class {' or '.join(class_names)}")


@dataclasses.dataclass(frozen=True)
class FreeParameter:
    """One fitted coordinate: bounds and start in normalised units; ``log`` coordinates."""

    name: str
    low: float
    high: float
    start: float
    log: bool = True

    def to_coordinate(self, value):
        return np.log(value) if self.log else value

    def coordinate_bounds(self) -> tuple[float, float]:
        return (float(np.log(self.low)), float(np.log(self.high))) if self.log else (self.low, self.high)


# physical dimension of every field: (force power, displacement power, time power);
# the string "-n" marks the Bouc–Wen β/γ, whose unit is X^(−n)
_DIMENSIONS: dict[str, dict[str, tuple]] = {
    "lugre": {"sigma0": (1, -1, 0), "sigma1": (1, -1, 1), "sigma2": (1, -1, 1), "sigma3": (1, -1, 0), "Fc": (1, 0, 0)},
    "boucwen": {"k": (1, -1, 0), "alpha": (0, 0, 0), "A": (0, 0, 0), "beta": (0, "-n", 0),
                "gamma": (0, "-n", 0), "n": (0, 0, 0)},
    "bilinear": {"k": (1, -1, 0), "fy": (1, 0, 0), "b": (0, 0, 0)},
    "linear": {"m": (1, -1, 2), "c": (1, -1, 1), "k": (1, -1, 0)},
    # degradation rates are per unit of dissipated energy H [J = N·m]
    "degrading-boucwen": {"k_e": (1, -1, 0), "alpha_sv": (0, 0, 0), "f_y0": (1, 0, 0), "N": (0, 0, 0),
                          "eta1": (0, 0, 0), "eta2": (0, 0, 0), "stiffness_degradation": (-1, -1, 0),
                          "strength_degradation": (-1, -1, 0), "k_h": (1, -3, 0), "c_e": (1, -1, 1),
                          "m_e": (1, -1, 2), "min_strength_ratio": (0, 0, 0), "min_stiffness_ratio": (0, 0, 0)},
    # Bouc–Wen–Baber–Noori: rates per unit of hysteretic energy ε [J]; ψ has the unit of z
    "pinching-boucwen": {"k": (1, -1, 0), "alpha": (0, 0, 0), "A": (0, 0, 0), "beta": (0, "-n", 0),
                         "gamma": (0, "-n", 0), "n": (0, 0, 0), "delta_A": (-1, -1, 0), "delta_nu": (-1, -1, 0),
                         "delta_eta": (-1, -1, 0), "zeta_s": (0, 0, 0), "p": (-1, -1, 0), "q": (0, 0, 0),
                         "psi": (0, 1, 0), "delta_psi": (-1, 0, 0), "lam": (0, 0, 0), "min_A_ratio": (0, 0, 0)},
}


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    """The fit of one model to one data set (normalised units)."""

    name: str
    free: tuple[FreeParameter, ...]
    held: dict  # field -> normalised value
    dimensions: dict  # field -> (a, b, c)
    derived: Callable[[dict], dict] | None = None  # extra field rules, e.g. γ = (γ/β)·β
    includes_inertia: bool = False  # linear element: add m·a to the restoring force
    config: dict = dataclasses.field(default_factory=dict)  # static Params fields, e.g. substeps
    # nested forms (pinching model): form name -> free coordinate names, smallest first; the
    # coordinates a form leaves out are held at ``off`` (coordinate values that switch the
    # mechanism off, e.g. ζ_s = 0). Empty: one form, every coordinate of ``free`` fitted.
    forms: dict = dataclasses.field(default_factory=dict)
    off: dict = dataclasses.field(default_factory=dict)

    @property
    def model(self):
        return model_class(self.name)

    @property
    def free_names(self) -> list[str]:
        return [p.name for p in self.free]

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        pairs = [p.coordinate_bounds() for p in self.free]
        return np.array([a for a, _ in pairs]), np.array([b for _, b in pairs])

    def start(self) -> np.ndarray:
        return np.array([p.to_coordinate(p.start) for p in self.free], dtype=float)

    def form_indices(self, form: str) -> np.ndarray:
        """Indices into ``free`` of the coordinates that ``form`` fits."""
        if form not in self.forms:
            raise ParameterError(f"model {self.name!r} has no form {form!r}; forms: {', '.join(self.forms) or 'none'}")
        active = set(self.forms[form])
        return np.array([i for i, p in enumerate(self.free) if p.name in active], dtype=int)

    def off_coordinates(self) -> np.ndarray:
        """Full coordinate vector with every form-optional coordinate at its ``off`` value
        and the others at their start."""
        q = self.start()
        for i, p in enumerate(self.free):
            if p.name in self.off:
                q[i] = self.off[p.name]
        return q

    def restricted(self, form: str) -> "ModelSpec":
        """The spec of one form alone: its coordinates free, the others held at ``off``."""
        indices = set(self.form_indices(form).tolist())
        held = dict(self.held)
        q_off = self.off_coordinates()
        for i, p in enumerate(self.free):
            if i not in indices:
                held[p.name] = float(np.exp(q_off[i]) if p.log else q_off[i])
        free = tuple(p for i, p in enumerate(self.free) if i in indices)
        return dataclasses.replace(self, free=free, held=held, forms={}, off={})

    def coordinate_values(self, q) -> dict:
        """Normalised values of the free coordinates (traceable)."""
        return {p.name: (jnp.exp(q[i]) if p.log else q[i]) for i, p in enumerate(self.free)}

    def fields(self, q) -> dict:
        """All parameter fields of the model, normalised (traceable)."""
        values = dict(self.held)
        values.update(self.coordinate_values(q))
        if self.derived is not None:
            values = self.derived(values)
        return values

    def params(self, q):
        """The model's Params container for coordinate vector ``q`` (normalised units)."""
        return self.model.Params(**self.fields(q), **self.config)

    def to_physical(self, normalised_fields: dict, scales: Scales) -> dict[str, float]:
        """Physical (SI) values of normalised fields."""
        out = {}
        for name, value in normalised_fields.items():
            a, b, c = self.dimensions[name]
            if b == "-n":
                b = -float(normalised_fields["n"])
            out[name] = float(value) * scales.force**a * scales.displacement**b * scales.time**c
        return out

    def to_normalised(self, physical_fields: dict, scales: Scales) -> dict[str, float]:
        """Inverse of :meth:`to_physical`."""
        out = {}
        for name, value in physical_fields.items():
            a, b, c = self.dimensions[name]
            if b == "-n":
                b = -float(physical_fields["n"])
            out[name] = float(value) / (scales.force**a * scales.displacement**b * scales.time**c)
        return out


def initial_stiffness(x_normalised: np.ndarray, f_normalised: np.ndarray, fraction: float = 0.15) -> float:
    """Slope of F̃ against x̃ over the first samples, until |x̃| first exceeds ``fraction``.

    A starting value for elastic stiffnesses (normalised units); at least 5 samples.
    """
    beyond = np.flatnonzero(np.abs(x_normalised) > fraction)
    end = max(5, int(beyond[0]) if beyond.size else x_normalised.size)
    x = x_normalised[:end] - x_normalised[0]
    f = f_normalised[:end] - f_normalised[0]
    denominator = float(x @ x)
    slope = float(x @ f) / denominator if denominator > 0 else 1.0
    secant = 1.0  # max|F̃| / max|x̃|
    return float(np.clip(slope if slope > 0 else secant, 0.2, 500.0))


def hysteretic_energy(x_normalised: np.ndarray, f_normalised: np.ndarray) -> float:
    """Net work ∮F̃ dx̃ of the record (trapezoidal), in normalised units: the energy the
    specimen dissipated, which sets the scale of the energy-driven degradation rates
    (rate × energy is dimensionless). Floored at 0.05 (an almost elastic record)."""
    work = float(np.sum(0.5 * (f_normalised[1:] + f_normalised[:-1]) * np.diff(x_normalised)))
    return max(work, 0.05)


def _gamma_from_ratio(values: dict) -> dict:
    values = dict(values)
    values["gamma"] = values.pop("gamma_over_beta") * values["beta"]
    return values


def _boucwen_free(k0: float, free_A: bool) -> list[FreeParameter]:
    # start: post-yield ratio 5 %, ultimate hysteretic force ≈ 0.7 F_s → z_u = 0.7/k0
    z_u = 0.7 / k0
    free = [
        FreeParameter("k", 0.05, 2000.0, k0),
        FreeParameter("alpha", 0.0, 0.95, 0.05, log=False),
        FreeParameter("beta", 1e-3, 1e5, 0.5 / z_u),
        FreeParameter("gamma_over_beta", -0.9, 1.0, 0.5, log=False),
        FreeParameter("n", 1.0, 6.0, 1.5, log=False),
    ]
    if free_A:
        free.append(FreeParameter("A", 0.1, 10.0, 1.0))
    return free


#: models whose Params have a static ``substeps`` field (sub-increments of the z update)
SUBSTEP_MODELS = ("boucwen", "degrading-boucwen", "pinching-boucwen")


def model_spec(name: str, data: FitData, *, free_A: bool = False, substeps: int | None = None,
               fixed: dict[str, float] | None = None, form: str | None = None) -> ModelSpec:
    """Free/held parameters, bounds and starts of model ``name`` for ``data``.

    ``fixed``: parameters to hold at known values, in SI (e.g. ``{"n": 1.0}`` for
    Bouc–Wen, as seed 001 does "to avoid numerical problems"; ``{"k_h": 0.0}``). Only
    model fields that are estimated by default and whose unit does not depend on another
    parameter can be fixed.

    ``substeps`` (Bouc–Wen models): backward-Euler sub-increments per sample of the
    hysteretic variable (None: the model's default). The update's O(Δx) error biases β, γ
    when samples are coarse; more sub-steps reduce it proportionally at a proportional cost.

    ``form`` (pinching model, one of :data:`PINCHING_FORMS`): the spec of that form alone;
    None keeps every coordinate with the nested ``forms`` for the form selection.
    """
    spec = _model_spec(name, data, free_A)
    if fixed:
        spec = _hold(spec, dict(fixed), data)
    if form is not None:
        if not spec.forms:
            raise ParameterError(f"form applies to pinching-boucwen ({', '.join(PINCHING_FORMS)}), not to {name!r}")
        spec = spec.restricted(form)
    if substeps is not None:
        if name not in SUBSTEP_MODELS:
            raise ParameterError(f"substeps applies to {', '.join(SUBSTEP_MODELS)}, not to {name!r}")
        if int(substeps) != substeps or substeps < 1:
            raise ParameterError(f"substeps must be a positive integer; got {substeps!r}")
        spec = dataclasses.replace(spec, config={"substeps": int(substeps)})
    return spec


def _hold(spec: ModelSpec, fixed: dict, data: FitData) -> ModelSpec:
    """Move ``fixed`` (SI values) from the free coordinates to the held fields."""
    fixable = [p.name for p in spec.free if p.name in spec.dimensions and spec.dimensions[p.name][1] != "-n"]
    unknown = [n for n in fixed if n not in fixable]
    if unknown:
        raise ParameterError(
            f"cannot fix {', '.join(map(repr, unknown))} of model {spec.name!r}; fixable parameters: {', '.join(fixable)}"
        )
    normalised = spec.to_normalised({k: float(v) for k, v in fixed.items()}, data.scales())
    held = dict(spec.held)
    held.update(normalised)
    free = tuple(p for p in spec.free if p.name not in fixed)
    if not free:
        raise ParameterError(f"every parameter of {spec.name!r} is fixed: nothing to estimate")
    forms = {form: tuple(n for n in names if n not in fixed) for form, names in spec.forms.items()}
    off = {n: v for n, v in spec.off.items() if n not in fixed}
    # validate the fixed values against the model's own ranges (SI)
    for name, value in fixed.items():
        meta = next(f.metadata for f in dataclasses.fields(spec.model.Params) if f.name == name)
        from rths_ident._params import check_value

        check_value(spec.model.Params.__name__, name, float(value), meta)
    return dataclasses.replace(spec, free=free, held=held, forms=forms, off=off)


def _model_spec(name: str, data: FitData, free_A: bool) -> ModelSpec:
    x, f, _ = data.normalised()
    k0 = initial_stiffness(x, f)
    physical_time = data.time_is_physical
    if name == "bilinear":
        free = (
            FreeParameter("k", 0.05, 2000.0, k0),
            FreeParameter("fy", 0.01, 5.0, 0.6),
            FreeParameter("b", 0.0, 0.95, 0.05, log=False),
        )
        return ModelSpec(name, free, {}, _DIMENSIONS["bilinear"])
    if name == "lugre":
        free = [
            FreeParameter("sigma0", 0.05, 2000.0, k0),
            FreeParameter("Fc", 0.01, 5.0, 0.7),
            FreeParameter("sigma3", 0.0, 50.0, 0.05 * k0, log=False),
        ]
        held = {"sigma1": 0.0}
        if physical_time:
            free.append(FreeParameter("sigma2", 0.0, 5.0, 0.01, log=False))
        else:
            held["sigma2"] = 0.0
        return ModelSpec(name, tuple(free), held, _DIMENSIONS["lugre"])
    if name == "boucwen":
        held = {} if free_A else {"A": 1.0}
        return ModelSpec(name, tuple(_boucwen_free(k0, free_A)), held, _DIMENSIONS["boucwen"], _gamma_from_ratio)
    if name == "degrading-boucwen":
        return _degrading_spec(k0, physical_time)
    if name == "pinching-boucwen":
        return _pinching_spec(k0, hysteretic_energy(x, f))
    if name == "linear":
        free = [FreeParameter("k", 1e-3, 1e4, max(k0, 1e-3))]
        held = {}
        if physical_time:
            free += [FreeParameter("c", 0.0, 50.0, 0.01, log=False), FreeParameter("m", 0.0, 50.0, 0.01, log=False)]
        else:
            held = {"c": 0.0, "m": 0.0}
        return ModelSpec(name, tuple(free), held, _DIMENSIONS["linear"], includes_inertia=True)
    raise ParameterError(f"unknown model {name!r}; valid models: {', '.join(MODEL_NAMES)}")


def _eta2_from_eta1(values: dict) -> dict:
    values = dict(values)
    values["eta2"] = 1.0 - values["eta1"]
    return values


def _degrading_spec(k0: float, physical_time: bool) -> ModelSpec:
    """Degrading Bouc–Wen (seed 000 Eqs. 4.2–4.7): η₁ + η₂ = 1 is held (as in the
    companion repository) because f_y0 and η₁ + η₂ only enter as f_y0·(η₁+η₂)^(−1/N)."""
    free = [
        FreeParameter("k_e", 0.05, 2000.0, k0),
        FreeParameter("alpha_sv", 0.0, 0.95, 0.1, log=False),
        FreeParameter("f_y0", 0.01, 5.0, 0.6),
        FreeParameter("N", 1.0, 20.0, 2.0, log=False),
        FreeParameter("eta1", 0.0, 5.0, 0.5, log=False),
        FreeParameter("stiffness_degradation", 0.0, 3.0, 0.01, log=False),
        FreeParameter("strength_degradation", 0.0, 3.0, 0.01, log=False),
        FreeParameter("k_h", 0.0, 5.0, 0.0, log=False),
    ]
    held = {}
    if physical_time:
        free += [FreeParameter("c_e", 0.0, 50.0, 0.01, log=False), FreeParameter("m_e", 0.0, 50.0, 0.01, log=False)]
    else:
        held = {"c_e": 0.0, "m_e": 0.0}
    return ModelSpec("degrading-boucwen", tuple(free), held, _DIMENSIONS["degrading-boucwen"], _eta2_from_eta1,
                     includes_inertia=True)


#: nested forms of the pinching model, smallest first (``model_spec(..., form=...)``, ``--form``)
PINCHING_FORMS = ("hysteretic", "degrading", "pinched", "full")


def _pinching_spec(k0: float, energy: float) -> ModelSpec:
    """Bouc–Wen–Baber–Noori with pinching (:mod:`rths_ident.models.pinching_bouc_wen`).

    Four nested forms (:data:`PINCHING_FORMS`); each adds coordinates to the previous one:

    * ``hysteretic``: k, α, β, γ/β, n (δ's = 0, ζ_s = 0: the plain Bouc–Wen model);
    * ``degrading``: + δ_ν (strength) and δ_η (stiffness degradation);
    * ``pinched``: + ζ_s, p, q, ψ (pinching, with δ_ψ = 0 and λ = 0.1);
    * ``full``: + δ_A, δ_ψ, λ.

    A = 1 is held in every form: A, β, γ and k(1−α) are not separately identifiable (z
    can be rescaled exactly; the identifiability report flags A when it is freed in
    ``boucwen --free-A``). The fitter chooses the form by nested BIC comparisons
    (:mod:`.form_selection`) unless told one.

    Bounds are scaled by the data: the degradation rates by the record's dissipated
    energy E = ∮F̃ dx̃ (normalised), so that η(ε), ν(ε) may grow up to 1 + 20 over the test
    and A(ε) may fall to its floor; p up to 50/E (the pinch fully developed within the
    first 2 % of the test's energy); ψ from 0.005 to 3 times max|x|. Rate-independent, so a
    pseudo-time changes nothing.
    """
    z_u = 0.7 / k0
    rate = 20.0 / energy
    free = (
        FreeParameter("k", 0.02, 5000.0, k0),
        FreeParameter("alpha", 0.0, 0.9, 0.05, log=False),
        FreeParameter("beta", 1e-4, 1e6, 0.5 / z_u),
        FreeParameter("gamma_over_beta", -0.95, 1.0, 0.5, log=False),
        FreeParameter("n", 1.0, 8.0, 1.5, log=False),
        FreeParameter("delta_nu", 0.0, rate, 0.05 * rate, log=False),
        FreeParameter("delta_eta", 0.0, rate, 0.05 * rate, log=False),
        FreeParameter("zeta_s", 0.0, 0.99, 0.5, log=False),
        FreeParameter("p", 0.0, 2.5 * rate, 0.25 * rate, log=False),
        FreeParameter("q", 0.0, 0.5, 0.1, log=False),
        FreeParameter("psi", 0.005, 3.0, 0.3),
        FreeParameter("delta_A", 0.0, 1.0 / energy, 0.0, log=False),
        FreeParameter("delta_psi", 0.0, 3.0 / energy, 0.0, log=False),
        FreeParameter("lam", 0.01, 1.0, 0.1, log=False),
    )
    hysteretic = ("k", "alpha", "beta", "gamma_over_beta", "n")
    degrading = hysteretic + ("delta_nu", "delta_eta")
    pinched = degrading + ("zeta_s", "p", "q", "psi")
    forms = {"hysteretic": hysteretic, "degrading": degrading, "pinched": pinched,
             "full": pinched + ("delta_A", "delta_psi", "lam")}
    off = {"delta_nu": 0.0, "delta_eta": 0.0, "zeta_s": 0.0, "delta_A": 0.0, "delta_psi": 0.0, "lam": 0.1}
    return ModelSpec("pinching-boucwen", free, {"A": 1.0}, _DIMENSIONS["pinching-boucwen"], _gamma_from_ratio,
                     forms=forms, off=off)
