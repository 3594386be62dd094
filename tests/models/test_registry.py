"""Conformance of every registered model (``rths_ident.models.MODELS``), each with its
entry's example specimen on a random cyclic history that takes it well past yield:

* the functional core: ``step`` inside ``jax.lax.scan`` equals a step-by-step loop;
  ``jax.grad`` of a weighted force sum w.r.t. every nonzero field equals a central
  finite difference; ``jax.vmap`` over a batch of params equals the loop; a value
  outside a field's range raises ParameterError naming the field;
* a closed form or a second implementation where one exists (skipped otherwise);
* the offline fit specification: its bounds contain the example, its units convert back
  (normalised simulation × F_s = the SI force), and a model with a linear-in-parameters
  form recovers the example from its own noise-free force by ``ls``;
* the OpenSees twin, where declared: OpenSeesPy's uniaxial material gives the same force
  history, and OpenSees recognises every updatable parameter name;
* the docs page exists and is listed in docs/models/index.md;

and a model registered for one test (a new class, an elastic–perfectly-plastic spring)
is reachable from ``fit --model``, ``serve site --specimen`` and the frame scenarios'
OpenSees-twin check, because they all read the registry.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import types
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _models_helpers import check_gradients, check_vmap, random_cyclic_history, relative_rms, scan_forces

from rths_ident._params import field_range, params_dataclass
from rths_ident.errors import ParameterError
from rths_ident.estimators.offline import FitData, fit_ls, fittable_models, model_spec
from rths_ident.estimators.offline.simulation import normalised_record, simulate_fields
from rths_ident.models import (
    MODELS,
    BoucWen,
    BoucWenParams,
    ElementInputs,
    HystereticModel,
    ModelEntry,
    opensees_twin_of,
)
from rths_ident.models.fit_specification import FitParameters, FreeParameter, ModelFit
from rths_ident.models.opensees_twin import OpenSeesTwin

REPOSITORY = pathlib.Path(__file__).resolve().parents[2]
NAMES = MODELS.names()
N_SAMPLES = 600
DT = 2.0 / N_SAMPLES  # s: a 2 s record, so rate terms count


def history(entry: ModelEntry, seed: int = 0):
    """Displacement [m] and its velocity [m/s] (finite differences)."""
    x = random_cyclic_history(seed, N_SAMPLES, entry.example_peak_displacement)
    return x, np.gradient(x, DT, edge_order=2)


def float_fields(params) -> dict[str, float]:
    """The example's float fields (the static int ones, such as substeps, left out)."""
    return {f.name: getattr(params, f.name) for f in dataclasses.fields(params)
            if isinstance(getattr(params, f.name), float)}


def si_force(entry: ModelEntry, params, x, v):
    """Restoring force, plus m·a for a model that carries a mass (what a load cell reads)."""
    force = np.asarray(scan_forces(entry.model, params, x, v, DT))
    if hasattr(entry.model, "inertia_force"):
        force = force + np.asarray(entry.model.inertia_force(params, np.gradient(v, DT, edge_order=2)))
    return force


# -- the functional core ---------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_scan_equals_the_step_loop_and_is_finite(name):
    entry = MODELS[name]
    x, v = history(entry)
    scanned = np.asarray(scan_forces(entry.model, entry.example, x, v, DT))
    step = jax.jit(entry.model.step)
    state, looped = entry.model.init(entry.example), []
    for xk, vk in zip(x, v):
        state, force = step(entry.example, state, ElementInputs(xk, vk), DT)
        looped.append(float(force))
    assert np.all(np.isfinite(scanned))
    np.testing.assert_allclose(scanned, looped, rtol=0, atol=1e-12 * np.abs(looped).max())


@pytest.mark.parametrize("name", NAMES)
def test_gradients_match_central_finite_differences(name):
    entry = MODELS[name]
    x, v = history(entry, seed=1)
    fields = [n for n, value in float_fields(entry.example).items() if value != 0.0]
    results = check_gradients(entry.model, entry.example, x, v, DT, fields, rtol=1e-5)
    assert all(np.isfinite(ad) for ad, _ in results.values())


@pytest.mark.parametrize("name", NAMES)
def test_vmap_over_params_equals_the_loop(name):
    entry = MODELS[name]
    x, v = history(entry, seed=2)
    batch = [dataclasses.replace(entry.example, **{n: factor * value for n, value in float_fields(entry.example).items()})
             for factor in (0.95, 1.0, 1.05)]
    check_vmap(entry.model, batch, x, v, DT)


@pytest.mark.parametrize("name", NAMES)
def test_a_value_outside_a_fields_range_names_the_field(name):
    entry = MODELS[name]
    checked = 0
    for field in dataclasses.fields(entry.example):
        meta = field.metadata
        bad_values = [float("nan")] if "unit" in meta else []
        if meta.get("low") is not None:
            bad_values.append(meta["low"] - 1.0)
        if meta.get("high") is not None:
            bad_values.append(meta["high"] + 1.0)
        for bad in bad_values:
            with pytest.raises(ParameterError, match=rf"\.{field.name}\b"):
                dataclasses.replace(entry.example, **{field.name: bad})
            checked += 1
    assert checked >= len(float_fields(entry.example))


# -- closed forms and second implementations -----------------------------------------------


def _linear(entry, p, x, v):
    """f = c ẋ + k x exactly (m ẍ is the separate inertia_force)."""
    return p.c * v + p.k * x


def _bilinear(entry, p, x, v):
    """Monotonic loading: F = k x up to f_y, then on the hardening line b k x + (1 − b) f_y."""
    return np.where(x <= p.fy / p.k, p.k * x, p.b * p.k * x + (1.0 - p.b) * p.fy)


def _lugre(entry, p, x, v):
    """Monotonic loading at constant ẋ > 0: z = (F_C/σ0)(1 − e^{−σ0 x/F_C}),
    ż = ẋ − (σ0/F_C) ẋ z, R = σ0 z + σ1 ż + σ2 ẋ + σ3 x (seed 001 Eq. 2.10)."""
    z = p.Fc / p.sigma0 * (1.0 - np.exp(-p.sigma0 * x / p.Fc))
    zdot = v - p.sigma0 / p.Fc * np.abs(v) * z
    return p.sigma0 * z + p.sigma1 * zdot + p.sigma2 * v + p.sigma3 * x


def _bouc_wen_reference(k, alpha, A, beta, gamma, n):
    """Monotonic loading, z > 0: dz/dx = A − (β + γ) z^n, integrated by scipy's RK45 to
    1e-12 (an independent integrator of the same ODE)."""
    from scipy.integrate import solve_ivp

    def force(x):
        solution = solve_ivp(lambda _, z: A - (beta + gamma) * np.abs(z) ** n, (0.0, x[-1]), [0.0], t_eval=x,
                             rtol=1e-12, atol=1e-15)
        return alpha * k * x + (1.0 - alpha) * k * solution.y[0]

    return force


def _boucwen(entry, p, x, v):
    return _bouc_wen_reference(p.k, p.alpha, p.A, p.beta, p.gamma, p.n)(x)


def _pinching(entry, p, x, v):
    """Without degradation and pinching it is the plain Bouc–Wen model."""
    return _bouc_wen_reference(p.k, p.alpha, p.A, p.beta, p.gamma, p.n)(x)


def _gap(entry, p, x, v):
    """Without degradation and pinching: Bouc–Wen plus the gap spring k_g max(x − g, 0) (x > 0)."""
    return _bouc_wen_reference(p.k, p.alpha, p.A, p.beta, p.gamma, p.n)(x) + p.k_gap * np.maximum(x - p.gap, 0.0)


def _spring(entry, p, x, v):
    """Without degradation and pinching: Bouc–Wen plus the cubic spring k₃ x³."""
    return _bouc_wen_reference(p.k, p.alpha, p.A, p.beta, p.gamma, p.n)(x) + p.k3 * x**3


def _degrading(entry, p, x, v):
    """Without degradation, cubic spring and damping: Bouc–Wen with A = 1, z = r/((1−α_sv)k_e),
    β = η₁/z_y^N, γ = η₂/z_y^N, z_y = f_y0/((1 − α_sv) k_e) (seed 000 Eq. 4.3)."""
    z_y = p.f_y0 / ((1.0 - p.alpha_sv) * p.k_e)
    return _bouc_wen_reference(p.k_e, p.alpha_sv, 1.0, p.eta1 / z_y**p.N, p.eta2 / z_y**p.N, p.N)(x)


#: registered name -> (closed form or reference, the example's changes it needs, relative tolerance)
REFERENCES = {
    "linear": (_linear, {}, 1e-14),
    "bilinear": (_bilinear, {}, 1e-14),
    "lugre": (_lugre, {}, 1e-12),
    # backward-Euler sub-steps: O(Δx) error; 64 sub-steps of 1e-5 m increments
    "boucwen": (_boucwen, {"substeps": 64}, 1e-4),
    "pinching-boucwen": (_pinching, {"delta_A": 0.0, "delta_nu": 0.0, "delta_eta": 0.0, "zeta_s": 0.0,
                                     "substeps": 64}, 1e-4),
    # positive-side loading: the asymmetric model's positive side is the pinching model's
    "asymmetric-boucwen": (_pinching, {"delta_A": 0.0, "delta_nu": 0.0, "delta_eta": 0.0, "zeta_s": 0.0,
                                       "substeps": 64}, 1e-4),
    "gap-boucwen": (_gap, {"delta_A": 0.0, "delta_nu": 0.0, "delta_eta": 0.0, "zeta_s": 0.0, "substeps": 64}, 1e-4),
    "spring-boucwen": (_spring, {"delta_A": 0.0, "delta_nu": 0.0, "delta_eta": 0.0, "zeta_s": 0.0,
                                 "substeps": 64}, 1e-4),
    "degrading-boucwen": (_degrading, {"stiffness_degradation": 0.0, "strength_degradation": 0.0, "k_h": 0.0,
                                       "c_e": 0.0, "substeps": 64}, 1e-4),
}


def test_every_reference_is_of_a_registered_model():
    assert set(REFERENCES) <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_monotonic_loading_equals_a_closed_form_or_a_second_implementation(name):
    if name not in REFERENCES:
        pytest.skip(f"{name}: no closed form or second implementation declared in REFERENCES")
    entry = MODELS[name]
    reference, changes, tolerance = REFERENCES[name]
    p = dataclasses.replace(entry.example, **changes)
    x = np.linspace(0.0, 3.0 * entry.example_peak_displacement, 3001)[1:]
    v = np.full_like(x, 0.05)  # m/s, constant
    force = np.asarray(scan_forces(entry.model, p, x, v, float(x[1] - x[0]) / 0.05))
    expected = reference(entry, p, x, v)
    assert np.max(np.abs(force - expected)) <= tolerance * np.max(np.abs(expected))


# -- the offline fit specification ------------------------------------------------------------


def example_record(entry: ModelEntry, params=None):
    params = entry.example if params is None else params
    x, v = history(entry, seed=3)
    force = si_force(entry, params, x, v)
    return x, force, FitData.from_arrays(x, force, DT * np.arange(x.size), source="example")


@pytest.mark.parametrize("name", NAMES)
def test_fit_bounds_contain_the_example_and_its_starts(name):
    entry = MODELS[name]
    _, _, data = example_record(entry)
    spec = model_spec(name, data)
    normalised = spec.to_normalised(float_fields(entry.example), data.scales())
    coordinates = spec.coordinates_of(normalised)
    for p in spec.free:
        assert p.low <= coordinates[p.name] <= p.high, f"{name}.{p.name}: {coordinates[p.name]} not in [{p.low}, {p.high}]"
        assert p.low <= p.start <= p.high, f"{name}.{p.name}: start {p.start} not in [{p.low}, {p.high}]"
    assert set(spec.fields(jnp.asarray(spec.start()))) <= {f.name for f in dataclasses.fields(entry.model.Params)}
    spec.params(jnp.asarray(spec.start()))  # a valid Params at the start


@pytest.mark.parametrize("name", NAMES)
def test_fit_units_convert_back_to_the_si_force(name):
    """Simulating in normalised units and scaling back equals the SI history: every
    field's dimension (read from its unit) is right."""
    entry = MODELS[name]
    _, force, data = example_record(entry)
    spec = model_spec(name, data)
    normalised = spec.to_normalised(float_fields(entry.example), data.scales())
    statics = {n: getattr(entry.example, n) for n in ("substeps",) if hasattr(entry.example, n)}
    spec = dataclasses.replace(spec, config=statics)
    simulated = np.asarray(simulate_fields(spec, normalised, normalised_record(data))) * data.scales().force
    np.testing.assert_allclose(simulated, force, rtol=1e-8, atol=1e-9 * np.ptp(force))


@pytest.mark.parametrize("name", [n for n in NAMES if MODELS[n].linear_in_parameters is not None])
def test_linear_in_parameters_form_recovers_the_example(name):
    """``ls`` on the noise-free force of the example (with the fit's held values) returns
    the example's fields."""
    entry = MODELS[name]
    _, _, data = example_record(entry)
    held = model_spec(name, data).to_physical(model_spec(name, data).held, data.scales())
    truth = dataclasses.replace(entry.example, **held)
    _, _, data = example_record(entry, truth)
    result = fit_ls(data, name, n_starts=2)
    for field, value in result.params.items():
        assert value == pytest.approx(getattr(truth, field), rel=1e-5, abs=1e-9 * abs(getattr(truth, field)) + 1e-12), field
    assert result.nrmse_percent < 1e-4


# -- the OpenSees twin ------------------------------------------------------------------------

TWINS = [n for n in NAMES if MODELS[n].opensees_twin is not None]


def opensees_forces(command, x, v):
    """Drive a uniaxial material by (strain, strain rate) = (x, ẋ); returns its stress."""
    ops = pytest.importorskip("openseespy.opensees")
    ops.wipe()
    ops.uniaxialMaterial(*command)
    ops.testUniaxialMaterial(command[1])
    forces = []
    for xk, vk in zip(x, v):
        ops.setStrain(float(xk), float(vk))
        forces.append(ops.getStress())
    ops.wipe()
    return np.array(forces)


@pytest.mark.opensees
@pytest.mark.parametrize("name", TWINS)
def test_opensees_twin_gives_the_same_force_history(name):
    entry = MODELS[name]
    twin = entry.opensees_twin
    p = dataclasses.replace(entry.example, **twin.exact_with)
    x, v = history(entry, seed=4)
    native = np.asarray(scan_forces(entry.model, p, x, v, DT))
    assert relative_rms(native, opensees_forces(twin.command(1, p), x, v)) < 1e-9


@pytest.mark.opensees
@pytest.mark.parametrize("name", TWINS)
def test_opensees_recognises_every_updatable_parameter(name):
    """OpenSeesSubstructure refuses a parameter that no object recognises (OpenSees makes
    it a silent no-op); the twin's updatable names all pass."""
    pytest.importorskip("openseespy.opensees")
    from rths_ident.structures.opensees_substructure import ElementParameter, OpenSeesSubstructure

    entry = MODELS[name]
    command = entry.opensees_twin.command(1, entry.example)

    def build(ops):
        ops.model("basic", "-ndm", 1, "-ndf", 1)
        ops.node(0, 0.0)
        ops.fix(0, 1)
        ops.node(1, 0.0)
        ops.mass(1, 1000.0)
        ops.uniaxialMaterial(*command)
        ops.element("zeroLength", 1, 0, 1, "-mat", 1, "-dir", 1)

    names = list(entry.opensees_twin.updatable.values())
    ns = OpenSeesSubstructure(build, (1, 1), 0.01, parameter_map=[ElementParameter(1, n) for n in names])
    assert ns.parameter_values() == [[pytest.approx(float(getattr(entry.example, field)))]
                                     for field in entry.opensees_twin.updatable]
    ns.close()


# -- docs --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_docs_page_exists_names_the_class_and_is_listed(name):
    entry = MODELS[name]
    page = REPOSITORY / entry.doc
    assert page.is_file(), entry.doc
    assert entry.model.__name__ in page.read_text(encoding="utf-8")
    index = (REPOSITORY / "docs/models/index.md").read_text(encoding="utf-8")
    assert f"({page.name})" in index


# -- a model registered for one test is reachable everywhere --------------------------------


@params_dataclass
class PerfectlyPlasticParams:
    """Elastic–perfectly-plastic spring (SI)."""

    k: float = field_range(low=0.0, low_inclusive=False, unit="N/m", doc="k, elastic stiffness")
    fy: float = field_range(low=0.0, low_inclusive=False, unit="N", doc="f_y, yield force")


class PerfectlyPlasticState(NamedTuple):
    displacement: jax.Array
    force: jax.Array


class ElasticPerfectlyPlastic(HystereticModel):
    """F = clip(F0 + k Δx, −f_y, f_y): the return map of OpenSees ``ElasticPP``."""

    Params = PerfectlyPlasticParams
    State = PerfectlyPlasticState

    @staticmethod
    def init(params):
        zero = jnp.zeros((), dtype=jnp.float64)
        return PerfectlyPlasticState(zero, zero)

    @staticmethod
    def step(params, state, inputs, dt):
        x = jnp.asarray(inputs.displacement, dtype=jnp.float64)
        force = jnp.clip(state.force + params.k * (x - state.displacement), -params.fy, params.fy)
        return PerfectlyPlasticState(x, force), force

    @staticmethod
    def tangent(params, state, inputs, dt):
        x = jnp.asarray(inputs.displacement, dtype=jnp.float64)
        trial = state.force + params.k * (x - state.displacement)
        return jnp.where(jnp.abs(trial) > params.fy, 0.0, params.k)


def _perfectly_plastic_fit(context):
    return FitParameters((FreeParameter("k", 0.05, 2000.0, context.initial_stiffness),
                          FreeParameter("fy", 0.01, 5.0, 0.6)), {})


PERFECTLY_PLASTIC = ModelEntry(
    model=ElasticPerfectlyPlastic,
    doc="docs/models/elastic_perfectly_plastic.md",  # a new model's page (not shipped: this one is a test's)
    fit=ModelFit(_perfectly_plastic_fit),
    # uniaxialMaterial ElasticPP tag E epsyP (yield strain = f_y/k)
    opensees_twin=OpenSeesTwin("ElasticPP", lambda p: (p.k, p.fy / p.k), updatable={"k": "E"}),
    example=PerfectlyPlasticParams(k=1.0e6, fy=1.0e4),
    example_peak_displacement=0.03,
)


@pytest.fixture
def perfectly_plastic_registered(monkeypatch):
    """``epp`` in MODELS for one test (the registry's entries restored after it)."""
    monkeypatch.setattr(MODELS, "_entries", {**MODELS._entries, "epp": PERFECTLY_PLASTIC})
    yield PERFECTLY_PLASTIC


def test_a_new_model_is_fitted_by_the_fit_command(perfectly_plastic_registered, tmp_path, capsys):
    from rths_ident.cli.fit import main

    assert "epp" in fittable_models()
    out = tmp_path / "epp.json"
    assert main(["--dataset", "daniel", "--model", "epp", "--global-generations", "5", "--starts", "1",
                 "--json", str(out), "--quiet"]) == 0
    result = json.loads(out.read_text())
    assert result["model"] == "epp" and set(result["params"]) == {"k", "fy"}
    # the registry says it has no linear-in-parameters form: ls says so, naming the ones that do
    assert main(["--dataset", "daniel", "--model", "epp", "--method", "ls"]) == 1
    assert "method 'ls' is not available for model 'epp' (valid: lugre, boucwen, bilinear, linear)" in \
        capsys.readouterr().err


def test_a_new_model_is_served_by_serve_site(perfectly_plastic_registered, capsys):
    from rths_ident.cli import main
    from rths_ident.hybrid.fast_side.served_specimen import make_site_factory
    from rths_ident.models import parse_specimen
    from rths_ident.transport.openfresco import SetupMessage

    model, params = parse_specimen("epp:k=1e6,fy=1e4", source="--specimen")
    assert model is ElasticPerfectlyPlastic and params == PerfectlyPlasticParams(k=1.0e6, fy=1.0e4)
    assert make_site_factory(model, params)(SetupMessage.for_generic_client(1)).n_basic == 1
    # the command reads the same registry: its own range check, not "unknown model"
    assert main(["serve", "site", "--port", "0", "--specimen", "epp:k=1e6,fy=-1"]) == 1
    assert "PerfectlyPlasticParams.fy = -1.0 is outside the allowed range" in capsys.readouterr().err


@pytest.mark.opensees
def test_a_new_model_passes_the_opensees_twin_check_and_builds(perfectly_plastic_registered):
    from rths_ident.scenarios.frame_case import check_opensees_twin
    from rths_ident.structures.opensees_shear_building import build_shear_building

    ops = pytest.importorskip("openseespy.opensees")
    column = types.SimpleNamespace(model=ElasticPerfectlyPlastic, param_names=("k",))
    check_opensees_twin(types.SimpleNamespace(SCENARIO="frame-test"), column)  # no error: it has a twin
    with pytest.raises(ParameterError, match="OpenSees cannot update fy of ElasticPerfectlyPlastic"):
        check_opensees_twin(types.SimpleNamespace(SCENARIO="frame-test"), types.SimpleNamespace(
            model=ElasticPerfectlyPlastic, param_names=("k", "fy")))
    built = build_shear_building(ops, [1000.0], [[(ElasticPerfectlyPlastic, PERFECTLY_PLASTIC.example)]])
    assert built.column_tags == ((1,),)
    ops.wipe()
    # and its twin is the material: the same force history as OpenSeesPy's ElasticPP
    x, v = history(PERFECTLY_PLASTIC, seed=5)
    native = np.asarray(scan_forces(ElasticPerfectlyPlastic, PERFECTLY_PLASTIC.example, x, v, DT))
    twin = opensees_twin_of(ElasticPerfectlyPlastic)
    assert relative_rms(native, opensees_forces(twin.command(1, PERFECTLY_PLASTIC.example), x, v)) < 1e-12
    assert np.abs(native).max() == pytest.approx(1.0e4)  # it yields


def test_registered_names_are_the_command_line_names():
    assert NAMES == ("lugre", "boucwen", "degrading-boucwen", "pinching-boucwen", "asymmetric-boucwen", "gap-boucwen",
                     "spring-boucwen", "bilinear", "linear")
    assert MODELS["boucwen"].model is BoucWen and MODELS["boucwen"].params is BoucWenParams
