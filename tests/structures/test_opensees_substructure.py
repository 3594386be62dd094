"""OpenSeesSubstructure (an OpenSeesPy model behind the NS protocol) against the native
substructure and integrators (second implementation), the native hysteresis models after
a live parameter update, closed forms for a gravity pre-load, and its errors.

Numbers measured when written (OpenSeesPy 3.7.1.2) are in the comments."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from _structures_helpers import K_COLUMN, Spring, SpringParams

from rths_ident.errors import ParameterError
from rths_ident.datasets import load_ground_motion
from rths_ident.models import BilinearKinematic, BilinearParams, BoucWen, BoucWenParams, ElementInputs
from rths_ident.structures import (
    AlphaOS,
    CentralDifference,
    ExplicitNewmark,
    NewmarkFixedIteration,
    three_storey_two_bay_frame,
)
from rths_ident.structures.numerical_substructure import NativeSubstructure

pytestmark = pytest.mark.opensees
pytest.importorskip("openseespy.opensees")

from rths_ident.structures.opensees_adapter import OpenSeesShearBuilding  # noqa: E402
from rths_ident.structures.opensees_substructure import (  # noqa: E402
    ElementParameter,
    OpenSeesSubstructure,
)

G = 9.80665  # standard gravity [m/s²]
RECORD_DT = 0.02  # El Centro sample interval [s]
INTERFACE_STIFFNESS = 1.34e6  # the specimen: a linear spring of one column's stiffness [N/m]


def elcentro(seconds: float | None = None) -> np.ndarray:
    """El Centro 1940 NS [m/s²] with a zero prepended at t = 0 (both sides start at rest
    in equilibrium: OpenSees does not compute an initial acceleration)."""
    _, ag = load_ground_motion("elcentro_1940")
    record = np.concatenate([[0.0], ag])
    return record if seconds is None else record[: int(round(seconds / RECORD_DT)) + 1]


def slow_ground(record, dt, n_steps):
    """ẍ_g at the end of every slow step: the linear interpolation OpenSees' Path does."""
    return np.interp(dt * np.arange(1, n_steps + 1), RECORD_DT * np.arange(record.size), record)


def building():
    b = three_storey_two_bay_frame(5000.0, Spring, SpringParams(stiffness=K_COLUMN))
    c, a0, a1 = b.rayleigh_damping(0.05)
    structure, params = b.to_structure(c)
    return b, structure, params, a0, a1


def shear_building_model(masses, storey_stiffness, a0, a1):
    """build(ops): floors 1..n over node 0 (fixed), one zeroLength Elastic per storey,
    Rayleigh a0 M + a1 K (``-doRayleigh 1``: zeroLength has no Rayleigh C otherwise)."""

    def build(ops):
        ops.model("basic", "-ndm", 1, "-ndf", 1)
        ops.node(0, 0.0)
        ops.fix(0, 1)
        for i, (m, k) in enumerate(zip(masses, storey_stiffness), start=1):
            ops.node(i, 0.0)
            ops.mass(i, float(m))
            ops.uniaxialMaterial("Elastic", i, float(k))
            ops.element("zeroLength", i, i - 1, i, "-mat", i, "-dir", 1, "-doRayleigh", 1)
        ops.rayleigh(float(a0), float(a1), 0.0, 0.0)

    return build


def opensees_building(integrator, dt, record, interface=(1, 1), **kwargs):
    b, _, _, a0, a1 = building()
    storey_k = [3 * K_COLUMN] * 3
    return OpenSeesSubstructure(
        shear_building_model(b.floor_masses, storey_k, a0, a1), interface, dt, record, record_dt=RECORD_DT,
        integrator=integrator, response=[(1, 1), (2, 1), (3, 1)], **kwargs,
    )


def closed_loop(ns, ground, stiffness=INTERFACE_STIFFNESS, feedback_map=None):
    """Run the protocol with the specimen a linear spring at the interface:
    feedback = k_s · target. Returns (targets sent, displacements logged)."""
    target = np.asarray(ns.initial_target())
    targets, displacements, forces = [target], [], []
    for ag in ground:
        force = stiffness * target
        forces.append(force)
        sent = force if feedback_map is None else feedback_map(force)
        target, log = ns.step(sent, ag)
        target = np.asarray(target)
        targets.append(target)
        displacements.append(np.asarray(log["displacement"]))
    return np.array(targets), np.array(displacements), np.array(forces)


def relative(a, b):
    return float(np.abs(np.asarray(a) - b).max() / np.abs(b).max())


# -- 1. against the native substructure, El Centro, closed loop ---------------------------


@pytest.mark.parametrize("integrator, native, dt", [
    ("newmark-explicit", ExplicitNewmark, 0.01),
    ("central-difference", CentralDifference, 0.01),
])
def test_explicit_schemes_match_native(integrator, native, dt):
    """Explicit Newmark and central difference evaluate the interface force where the
    elements are evaluated, on both sides: the closed loops must agree to round-off.
    Measured: 9e-12 for both (whole record, 31.2 s)."""
    record = elcentro()
    n_steps = int(round((record.size - 1) * RECORD_DT / dt))
    ground = slow_ground(record, dt, n_steps)
    ns = opensees_building(integrator, dt, record)
    os_targets, os_disp, _ = closed_loop(ns, ground)
    ns.close()
    _, structure, params, _, _ = building()
    nat = NativeSubstructure(native(structure), params, (0,), dt)
    nat_targets, nat_disp, _ = closed_loop(nat, ground)
    assert np.abs(os_disp).max() > 0.02  # a real response (floor 3 ~6 cm)
    assert relative(os_disp, nat_disp) <= 1e-9
    if integrator == "newmark-explicit":
        assert relative(os_targets, nat_targets) <= 1e-9
    else:
        # OpenSees solves u_{k+1} in step k+1 (equilibrium at t_k), the native scheme in
        # step k: the same targets, sent one slow step later (u_0 first).
        assert os_targets[0] == pytest.approx(0.0, abs=1e-15)
        assert relative(os_targets[1:], nat_targets[:-1]) <= 1e-9


def test_alpha_os_weighted_feedback_matches_native():
    """With the interface force weighted like a restoring force (α_OS f_{n+1} +
    (1 − α_OS) f_n) and zero interface splitting stiffness on the native side, OpenSees
    AlphaOS and the native α-OS are the same scheme. Measured: 1.2e-12."""
    record = elcentro(20.0)
    dt = RECORD_DT
    ground = slow_ground(record, dt, record.size - 1)
    ns = opensees_building("alpha-os", dt, record, alpha_os=0.9, alpha_os_feedback="weighted")
    os_targets, os_disp, _ = closed_loop(ns, ground)
    ns.close()
    _, structure, params, _, _ = building()
    assert np.all(np.asarray(params.interface_stiffness) == 0.0)
    nat = NativeSubstructure(AlphaOS(structure, alpha=-0.1), params, (0,), dt)
    nat_targets, nat_disp, _ = closed_loop(nat, ground)
    assert relative(os_disp, nat_disp) <= 1e-9
    assert relative(os_targets, nat_targets) <= 1e-9


def _alpha_os_load_vs_native(alpha_os, seconds=20.0):
    record = elcentro(seconds)
    dt = RECORD_DT
    ground = slow_ground(record, dt, record.size - 1)
    ns = opensees_building("alpha-os", dt, record, alpha_os=alpha_os)  # default: feedback as a load
    os_targets, os_disp, os_forces = closed_loop(ns, ground)
    ns.close()
    _, structure, params, _, _ = building()
    nat = NativeSubstructure(AlphaOS.from_opensees_alpha(structure, alpha_os), params, (0,), dt)
    _, nat_disp, _ = closed_loop(nat, ground)

    # the native scheme fed g with α_OS g_{n+1} + (1 − α_OS) g_n = f_{n+1} sees the load
    # OpenSees applies: it must then reproduce the OpenSees run exactly
    previous = [np.zeros(1)]

    def unweight(force):
        g = (force - (1.0 - alpha_os) * previous[0]) / alpha_os
        previous[0] = g
        return g

    nat2 = NativeSubstructure(AlphaOS.from_opensees_alpha(structure, alpha_os), params, (0,), dt)
    _, nat2_disp, _ = closed_loop(nat2, ground, feedback_map=unweight)
    return os_disp, nat_disp, nat2_disp


def test_alpha_os_feedback_as_load_differs_from_native_by_the_weighting():
    """OpenSees AlphaOS evaluates loads at t_n + α_OS Δt, so the interface force in a
    Constant series enters in full, f_{n+1}, where the native α-OS weights it
    α_OS f_{n+1} + (1 − α_OS) f_n: the force is advanced by (1 − α_OS) Δt, which acts
    like an added damper k_s (1 − α_OS) Δt. The difference therefore (a) vanishes
    when the native side is fed the de-weighted force (exact, measured 1.2e-12), and
    (b) is proportional to 1 − α_OS (measured: 2.1 % at α_OS = 0.9, 1.06 % at 0.95;
    ratio 1.97)."""
    os_disp, nat_disp, nat2_disp = _alpha_os_load_vs_native(0.9)
    assert relative(os_disp, nat2_disp) <= 1e-9
    difference_09 = relative(os_disp, nat_disp)
    os_disp, nat_disp, nat2_disp = _alpha_os_load_vs_native(0.95)
    assert relative(os_disp, nat2_disp) <= 1e-9
    difference_095 = relative(os_disp, nat_disp)
    assert 1e-3 < difference_09 < 0.1
    assert difference_09 / difference_095 == pytest.approx(2.0, rel=0.15)


def test_implicit_newmark_fixed_iterations_lags_the_force_one_step():
    """Implicit Newmark (FixedNumIter 3, Newton): the target is the converged
    displacement, so the force measured there enters the next step; the native
    NewmarkFixedIteration stepped with that lagged force gives the same response.
    Measured: 8e-13."""
    record = elcentro(20.0)
    dt = RECORD_DT
    ground = slow_ground(record, dt, record.size - 1)
    ns = opensees_building("newmark-fixed-iter", dt, record, iterations=3)
    os_targets, os_disp, _ = closed_loop(ns, ground)
    ns.close()
    _, structure, params, _, _ = building()
    integ = NewmarkFixedIteration(structure, iterations=3)
    state = integ.init(params, dt)
    step = jax.jit(lambda s, ag, f: integ.step(params, s, ag, f, dt))
    native = []
    previous_u = np.zeros(3)
    for ag in ground:
        force = np.array([INTERFACE_STIFFNESS * previous_u[0], 0.0, 0.0])
        state, out = step(state, ag, force)
        previous_u = np.asarray(out.displacement)
        native.append(previous_u)
    native = np.array(native)
    assert relative(os_disp, native) <= 1e-9
    assert relative(os_targets[1:, 0], native[:, 0]) <= 1e-9


def test_two_interface_dofs():
    """n = 2: springs at floors 1 and 3, explicit Newmark, against the native
    substructure with interface DOFs (0, 2). Measured: 1.9e-12."""
    record = elcentro(15.0)
    dt = 0.01
    ground = slow_ground(record, dt, int(round((record.size - 1) * RECORD_DT / dt)))
    ns = opensees_building("newmark-explicit", dt, record, interface=[(1, 1), (3, 1)])
    assert ns.n_interface == 2
    os_targets, os_disp, _ = closed_loop(ns, ground)
    ns.close()
    _, structure, params, _, _ = building()
    nat = NativeSubstructure(ExplicitNewmark(structure), params, (0, 2), dt)
    nat_targets, nat_disp, _ = closed_loop(nat, ground)
    assert os_targets.shape == (ground.size + 1, 2)
    assert np.abs(os_targets[:, 1]).max() > 0.01
    assert relative(os_targets, nat_targets) <= 1e-9
    assert relative(os_disp, nat_disp) <= 1e-9


# -- 2. live parameter updates against the native hysteresis models ------------------------


def sdof_model(material, element="zeroLength", mass=2000.0):
    def build(ops):
        ops.model("basic", "-ndm", 1, "-ndf", 1)
        ops.node(0, 0.0)
        ops.fix(0, 1)
        ops.node(1, 0.0)
        ops.mass(1, mass)
        ops.uniaxialMaterial(*material)
        ops.element(element, 1, 0, 1, "-mat", material[1], "-dir", 1)

    return build


def run_with_update(ns, ground, theta_new, update_at):
    """Drive the SDOF with the ground record (feedback 0), update θ at ``update_at``;
    returns the displacement history and the element force read from OpenSees."""
    ns.initial_target()
    x, force = [], []
    for k, ag in enumerate(ground):
        if k == update_at:
            ns.apply_parameters(theta_new)
        _, log = ns.step(np.zeros(1), ag)
        x.append(float(log["displacement"][0]))
        force.append(float(ns.ops.eleResponse(1, "basicForce")[0]))
    return np.array(x), np.array(force)


def native_with_update(model_cls, p_before, p_after, x, update_at):
    state = model_cls.init(p_before)
    step = jax.jit(model_cls.step)
    out = []
    for k, xk in enumerate(x):
        p = p_before if k < update_at else p_after
        state, f = step(p, state, ElementInputs(xk, 0.0), RECORD_DT)
        out.append(float(f))
    return np.array(out)


@pytest.mark.parametrize("element", ["zeroLength", "twoNodeLink"])
def test_bouc_wen_update_matches_native(element):
    """θ̂ = (k, α, A, β, γ, n) of rths_ident.models.BoucWen mapped onto OpenSees BoucWen
    (ko, alpha, Ao, beta, gamma, n) and changed mid-record: the element force equals
    the native model (1 sub-step = OpenSees' update) continued with the new parameters.
    Measured: 2e-16 (zeroLength and twoNodeLink); without the update 41 % off."""
    before = BoucWenParams.from_yield(k=2.0e6, alpha=0.05, yield_displacement=0.01, n=1.5, substeps=1)
    after = BoucWenParams.from_yield(k=1.5e6, alpha=0.12, yield_displacement=0.006, n=2.0,
                                     beta_fraction=0.7, A=0.9, substeps=1)
    names = ("k", "alpha", "A", "beta", "gamma", "n")
    opensees_names = ("ko", "alpha", "Ao", "beta", "gamma", "n")
    material = ["BoucWen", 7, before.alpha, before.k, before.n, before.gamma, before.beta, before.A, 0.0, 0.0, 0.0,
                1e-12, 50]
    record = elcentro(12.0) * 3.0
    ground = slow_ground(record, RECORD_DT, record.size - 1)
    ns = OpenSeesSubstructure(
        sdof_model(material, element), (1, 1), RECORD_DT, record, integrator="newmark-explicit",
        parameter_map=[ElementParameter(1, name) for name in opensees_names],
    )
    theta = np.array([float(getattr(after, n)) for n in names])
    x, force = run_with_update(ns, ground, theta, update_at=250)
    ns.close()
    assert np.abs(x).max() > 1.5 * before.yield_displacement  # into the hysteretic range
    native = native_with_update(BoucWen, before, after, x, 250)
    assert relative(force, native) <= 1e-9
    # and the update is not a no-op: without it the forces differ by far more
    unchanged = native_with_update(BoucWen, before, before, x, 250)
    assert relative(unchanged, native) > 0.05


def test_steel01_update_matches_bilinear_with_transform():
    """θ̂ = (k [N/m], f_y [kN], b) of BilinearKinematic onto Steel01 (E, Fy [N], b) with a
    kN → N transform, changed mid-record. Measured: 3e-16; without the update 46 % off."""
    before = BilinearParams(k=2.0e6, fy=1.5e4, b=0.05)
    after = BilinearParams(k=2.6e6, fy=1.1e4, b=0.12)
    record = elcentro(12.0) * 3.0
    ground = slow_ground(record, RECORD_DT, record.size - 1)
    ns = OpenSeesSubstructure(
        sdof_model(["Steel01", 3, before.fy, before.k, before.b]), (1, 1), RECORD_DT, record,
        integrator="newmark-explicit",
        parameter_map=[
            ElementParameter(1, "E"),
            ElementParameter(1, "Fy", path=("material", "1"), transform=lambda kn: 1e3 * kn),
            ElementParameter([1], "b"),
        ],
    )
    theta = np.array([after.k, after.fy / 1e3, after.b])
    x, force = run_with_update(ns, ground, theta, update_at=250)
    assert ns.parameter_values() == [[after.k], [after.fy], [after.b]]
    ns.close()
    assert np.abs(x).max() > 2 * before.fy / before.k  # yields
    native = native_with_update(BilinearKinematic, before, after, x, 250)
    assert relative(force, native) <= 1e-9
    assert relative(native_with_update(BilinearKinematic, before, before, x, 250), native) > 0.05


BOUC_WEN = ["BoucWen", 1, 0.05, 2.0e6, 1.5, 400.0, 600.0, 1.0, 0.0, 0.0, 0.0]  # z_u = 1 cm
STEEL02 = ["Steel02", 1, 1.5e4, 2.0e6, 0.05, 18.0, 0.925, 0.15]


@pytest.mark.parametrize("element", ["zeroLength", "twoNodeLink"])
@pytest.mark.parametrize("material, name, value", [
    *[(BOUC_WEN, name, value) for name, value in
      [("ko", 3.0e6), ("alpha", 0.2), ("n", 2.5), ("gamma", 100.0), ("beta", 900.0), ("Ao", 0.7),
       ("deltaA", 1e-5), ("deltaNu", 1e-5), ("deltaEta", 1e-5)]],  # per J of hysteretic energy
    *[(STEEL02, name, value) for name, value in [("Fy", 2.0e4), ("E", 3.0e6), ("b", 0.2)]],
    (["Elastic", 1, 2.0e6], "E", 3.0e6),
])
def test_documented_parameters_really_update(material, name, value, element):
    """The parameters the module documents as updatable change the element force read
    from OpenSees after the update (no silent no-op): identical up to the update, then
    different from the same run without it."""
    record = elcentro(8.0) * 3.0
    ground = slow_ground(record, RECORD_DT, record.size - 1)
    runs = []
    for update in (False, True):
        ns = OpenSeesSubstructure(sdof_model(material, element), (1, 1), RECORD_DT, record,
                                  integrator="newmark-explicit", parameter_map=[ElementParameter(1, name)])
        _, force = run_with_update(ns, ground, [value], update_at=200 if update else -1)
        ns.close()
        runs.append(force)
    assert np.array_equal(runs[0][:200], runs[1][:200])
    assert relative(runs[1][200:], runs[0][200:]) > 1e-2  # measured 0.037 (deltaNu) … 2.9 (n)


# -- 3. parameters that cannot be updated ---------------------------------------------------


@pytest.mark.parametrize("material, name, path", [
    (["BoucWen", 1, 0.05, 1e6, 1.0, 0.5, 0.5, 1.0, 0.0, 0.0, 0.0], "Fy", ()),
    (["Steel01", 1, 1e4, 1e6, 0.05], "ko", ("material", "1")),
    (["Hysteretic", 1, 1e4, 0.01, 2e4, 0.1, -1e4, -0.01, -2e4, -0.1, 1.0, 1.0, 0.0, 0.0], "E", ()),
])
def test_unknown_parameter_is_a_parameter_error(material, name, path):
    with pytest.raises(ParameterError, match=rf"parameter_map\[1\]: '{name}' of element 1.*silent no-op"):
        OpenSeesSubstructure(
            sdof_model(material), (1, 1), RECORD_DT,
            parameter_map=[ElementParameter(1, "alpha" if material[0] == "BoucWen" else "Fy"),
                           ElementParameter(1, name, path=path)],
        )


def test_missing_element_and_no_map_are_errors():
    material = ["Steel01", 1, 1e4, 1e6, 0.05]
    with pytest.raises(ParameterError, match="element 9 is not in the OpenSees model"):
        OpenSeesSubstructure(sdof_model(material), (1, 1), RECORD_DT, parameter_map=[ElementParameter(9, "Fy")])
    ns = OpenSeesSubstructure(sdof_model(material), (1, 1), RECORD_DT)
    with pytest.raises(TypeError, match="without parameter_map"):
        ns.apply_parameters([1.0])
    ns.close()


# -- 4. no leaking patterns / series; gravity kept ------------------------------------------


def gravity_column(mass=1000.0, length=3.0, axial_rigidity=1.0e8, lateral_stiffness=4.0e5):
    """2-D node 2 on a vertical truss (EA) over node 1, held laterally by a zeroLength
    spring to node 3; gravity −m g at node 2 applied by a static analysis in build."""

    def build(ops):
        ops.model("basic", "-ndm", 2, "-ndf", 2)
        ops.node(1, 0.0, 0.0)
        ops.node(2, 0.0, length)
        ops.node(3, 0.0, length)
        ops.fix(1, 1, 1)
        ops.fix(3, 1, 1)
        ops.mass(2, mass, mass)
        ops.uniaxialMaterial("Elastic", 1, axial_rigidity)  # truss with A = 1: E = EA
        ops.element("truss", 1, 1, 2, 1.0, 1)
        ops.uniaxialMaterial("Elastic", 2, lateral_stiffness)
        ops.element("zeroLength", 2, 3, 2, "-mat", 2, "-dir", 1)
        ops.timeSeries("Linear", 1)
        ops.pattern("Plain", 1, 1)
        ops.load(2, 0.0, -mass * G)
        ops.constraints("Plain")
        ops.numberer("Plain")
        ops.system("BandGeneral")
        ops.test("NormDispIncr", 1e-12, 10)
        ops.algorithm("Newton")
        ops.integrator("LoadControl", 0.1)
        ops.analysis("Static")
        assert ops.analyze(10) == 0

    return build


@pytest.mark.parametrize("integrator", ["alpha-os", "newmark-explicit", "central-difference", "newmark-fixed-iter"])
def test_gravity_kept_and_nothing_leaks(integrator):
    """Under zero excitation and zero feedback the truss force stays at m g and the
    vertical displacement at −m g L / EA (closed forms; a gravity series still ramping
    would double them), while the number of load patterns and nodal loads stays
    constant over 400 steps and no further time series were created."""
    mass, length, ea = 1000.0, 3.0, 1.0e8
    dt = 0.005
    ns = OpenSeesSubstructure(gravity_column(mass, length, ea), (2, 1), dt, np.zeros(1000), record_dt=dt,
                              integrator=integrator, response=[(2, 1), (2, 2)])
    ops = ns.ops
    patterns = list(ops.getPatterns())
    loads = len(ops.getNodeLoadData())
    assert len(patterns) == 3  # gravity, ground motion, interface
    for _ in range(400):
        target, log = ns.step(np.zeros(1), 0.0)
        assert list(ops.getPatterns()) == patterns
        assert len(ops.getNodeLoadData()) == loads
    assert ns.time == pytest.approx(400 * dt)
    ops.reactions()
    assert ops.nodeReaction(1, 2) == pytest.approx(mass * G, rel=1e-9)
    assert ops.eleResponse(1, "axialForce")[0] == pytest.approx(-mass * G, rel=1e-9)  # compression
    assert log["displacement"][1] == pytest.approx(-mass * G * length / ea, rel=1e-9)
    assert abs(log["displacement"][0]) < 1e-12 and abs(target[0]) < 1e-12
    # every series tag after the adapter's own is still free: none was created per step
    free_tag = max(ns._series_tags) + 1
    ops.timeSeries("Constant", free_tag)
    ns.close()


def test_interface_load_has_the_sign_of_an_internal_force():
    """A constant feedback f on a static-ish SDOF (heavy damping, long run) settles at
    u = −f / k: the force is subtracted like the element's."""
    k, f = 1.0e6, 2.0e3

    def build(ops):
        ops.model("basic", "-ndm", 1, "-ndf", 1)
        ops.node(0, 0.0)
        ops.fix(0, 1)
        ops.node(1, 0.0)
        ops.mass(1, 1000.0)
        ops.uniaxialMaterial("Elastic", 1, k)
        ops.element("zeroLength", 1, 0, 1, "-mat", 1, "-dir", 1, "-doRayleigh", 1)
        ops.rayleigh(40.0, 0.0, 0.0, 0.0)

    ns = OpenSeesSubstructure(build, (1, 1), 0.01, integrator="newmark-fixed-iter")
    for _ in range(2000):
        target, log = ns.step([f], 0.0)
    assert target[0] == pytest.approx(-f / k, rel=1e-6)
    assert log["interface_load"][0] == -f
    ns.close()


# -- protocol details ------------------------------------------------------------------------


def test_build_from_file_one_model_per_process_and_record_check(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(
        "def build(ops):\n"
        "    ops.model('basic', '-ndm', 1, '-ndf', 1)\n"
        "    ops.node(0, 0.0); ops.fix(0, 1); ops.node(1, 0.0); ops.mass(1, 1000.0)\n"
        "    ops.uniaxialMaterial('Elastic', 1, 1.0e6)\n"
        "    ops.element('zeroLength', 1, 0, 1, '-mat', 1, '-dir', 1)\n"
    )
    record = np.array([0.0, 1.0, 2.0, 3.0])
    first = OpenSeesSubstructure(str(path), (1, 1), 0.01, record, record_dt=0.02, integrator="newmark-explicit")
    _, log = first.step([0.0], 0.5)  # Path series at t = 0.01 s
    assert float(log["time"]) == pytest.approx(0.01)
    with pytest.raises(ValueError, match="differs from the model's record"):
        first.step([0.0], 2.0)  # the record has 1.0 at t = 0.02 s
    second = OpenSeesSubstructure(str(path), (1, 1), 0.01, record, record_dt=0.02)
    with pytest.raises(RuntimeError, match="one model per process"):
        first.step([0.0], 0.5)
    with pytest.raises(RuntimeError, match="one model per process"):
        first.initial_target()
    second.close()
    with pytest.raises(RuntimeError, match="one model per process"):
        second.step([0.0], 0.5)
    second.close()  # idempotent
    # the process-wide domain is shared with OpenSeesShearBuilding, both ways
    third = OpenSeesSubstructure(str(path), (1, 1), 0.01)
    shear = OpenSeesShearBuilding([1000.0], [[1.0e6]], 0.01)
    with pytest.raises(RuntimeError, match="one model per process"):
        third.initial_target()
    fourth = OpenSeesSubstructure(str(path), (1, 1), 0.01)
    with pytest.raises(RuntimeError, match="one model per process"):
        shear.step()
    fourth.close()


def test_constructor_errors_name_the_field():
    build = sdof_model(["Elastic", 1, 1.0e6])
    with pytest.raises(ParameterError, match="integrator must be one of"):
        OpenSeesSubstructure(build, (1, 1), 0.01, integrator="Newmark")
    with pytest.raises(ParameterError, match=r"alpha_os must be in \[2/3, 1\]"):
        OpenSeesSubstructure(build, (1, 1), 0.01, alpha_os=0.5)
    with pytest.raises(ParameterError, match="dt must be a positive"):
        OpenSeesSubstructure(build, (1, 1), 0.0)
    with pytest.raises(ValueError, match="interface DOF \\(node 0, dof 1\\) is fixed"):
        OpenSeesSubstructure(build, (0, 1), 0.01)
    with pytest.raises(ValueError, match="interface dof 2 of node 1 must be in 1..1"):
        OpenSeesSubstructure(build, (1, 2), 0.01)
    ns = OpenSeesSubstructure(build, (1, 1), 0.01)
    with pytest.raises(ValueError, match="feedback must be 1 finite"):
        ns.step([np.nan], 0.0)
    ns.close()
