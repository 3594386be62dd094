"""Packed compiled calls: the byte layout is bit-exact, and a packed program computes what
the same function jitted on its trees computes (the unpacked path), call after call."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rths_ident  # noqa: F401  (float64)
from rths_ident.packed_calls import COMPILER_OPTIONS, PackedLayout, PackedProgram, idle_twin


def _tree():
    return {
        "a": np.array([1.5, -0.0, np.inf]),
        "b": {"c": np.arange(4, dtype=np.int32).reshape(2, 2) - 2, "d": np.array([True, False, True, True, False])},
        "e": np.float64(np.nan),
        "f": np.array([0, 7, 255], dtype=np.uint8),
        "g": np.int64(-(2**40)),
    }


def _assert_bit_equal(x, y):
    x_leaves, x_def = jax.tree_util.tree_flatten(x)
    y_leaves, y_def = jax.tree_util.tree_flatten(y)
    assert x_def == y_def
    for a, b in zip(x_leaves, y_leaves):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes()


def test_the_layout_round_trips_every_leaf_bit_for_bit_on_the_host_and_traced():
    tree = _tree()
    layout = PackedLayout(tree)
    assert all(offset % 8 == 0 for offset in layout.offsets)
    host = layout.pack_numpy(tree)
    assert host.dtype == np.uint8 and host.shape == (layout.nbytes,)
    words = layout.pack_words(tree)
    assert words.dtype == np.uint64 and words.tobytes() == host.tobytes()
    np.testing.assert_array_equal(np.asarray(jax.jit(layout.pack)(tree)), words)  # traced == host bytes
    _assert_bit_equal(layout.unpack_numpy(host), tree)  # NaN, −0.0, inf, negative ints kept
    _assert_bit_equal(jax.device_get(jax.jit(layout.unpack)(words)), tree)
    # the structured view reads a leaf by name without a copy
    assert layout.view(host)["b"]["c"].tolist() == [[-2, -1], [0, 1]]


def test_host_views_show_what_the_buffer_holds_later():
    tree = _tree()
    layout = PackedLayout(tree)
    buffer = np.zeros(layout.nbytes, np.uint8)
    views = layout.host_views(buffer)
    buffer[:] = layout.pack_numpy(tree)
    _assert_bit_equal(views, tree)
    with pytest.raises(ValueError, match="uint8 buffer"):
        layout.host_views(np.zeros(layout.nbytes + 8, np.uint8))


def test_unpacking_and_packing_leaves_adds_no_reduction():
    """The packed vectors are uint64 words: a float64 or int64 leaf is a bitcast of its
    words and a narrower leaf a narrowing bitcast (a uint8 vector made every 8-byte leaf
    a widening bitcast, which XLA:CPU lowers to a reduce-or, one per leaf: each a small
    computation whose buffers XLA sets up on every call). A body that only moves its
    leaves compiles without any reduce, and computes them bit for bit."""
    tree = {**_tree(), "h": np.linspace(0.0, 1.0, 7), "i": np.array([3, 4], dtype=np.uint32)}

    def doubled(leaf):
        return ~leaf if leaf.dtype == jnp.bool_ else leaf * 2

    def move(constants, carry, inputs):
        return carry, {"constants": jax.tree_util.tree_map(doubled, constants), "carry": carry}

    program = PackedProgram(move, tree, tree, 1)
    assert " reduce(" not in program._compiled.as_text()
    out = program()
    expected = jax.tree_util.tree_map(lambda leaf: ~leaf if leaf.dtype == np.bool_ else (leaf * 2).astype(leaf.dtype),
                                      jax.tree_util.tree_map(np.asarray, tree))
    _assert_bit_equal(jax.tree_util.tree_map(np.array, out["constants"]), expected)
    _assert_bit_equal(jax.tree_util.tree_map(np.array, out["carry"]), tree)


def test_a_typed_prng_key_is_refused_by_name():
    with pytest.raises(TypeError, match="leaf key is a typed PRNG key"):
        PackedLayout({"key": jax.random.key(0)})


def duffing_step(constants, carry, inputs):
    """A Duffing oscillator advanced by one RK4 step of h under the force inputs[0];
    outputs a nested log (float, int and bool leaves)."""
    m, c, k, k3, h = constants["m"], constants["c"], constants["k"], constants["k3"], constants["h"]
    force = inputs[0]

    def f(y):
        u, v = y
        return jnp.stack([v, (force - c * v - k * u - k3 * u**3) / m])

    y = carry["y"]
    s1 = f(y)
    s2 = f(y + 0.5 * h * s1)
    s3 = f(y + 0.5 * h * s2)
    s4 = f(y + h * s3)
    y = y + h / 6 * (s1 + 2 * s2 + 2 * s3 + s4)
    n = carry["n"] + 1
    log = {"u": y[0], "state": {"y": y, "energy": 0.5 * m * y[1] ** 2 + 0.5 * k * y[0] ** 2}, "steps": n,
           "moving_right": y[1] > 0}
    return {"y": y, "n": n}, log


CONSTANTS = {"m": 2.0, "c": 0.3, "k": 400.0, "k3": 5e4, "h": 1e-3}
CARRY = {"y": np.array([0.01, 0.0]), "n": np.int64(0)}
FORCES = 3.0 * np.sin(2 * np.pi * 2.5 * 1e-3 * np.arange(300))


def _unpacked(constants=CONSTANTS, forces=FORCES):
    step = jax.jit(duffing_step)
    carry, logs = jax.tree_util.tree_map(jnp.asarray, CARRY), []
    for force in forces:
        carry, log = step(constants, carry, jnp.array([force]))
        logs.append(jax.device_get(log))
    return jax.device_get(carry), logs


@pytest.mark.parametrize("one_kernel", [True, False])
def test_a_packed_program_computes_what_the_unpacked_call_does(one_kernel):
    carry_ref, logs_ref = _unpacked()
    program = PackedProgram(duffing_step, CONSTANTS, CARRY, 1, one_kernel=one_kernel)
    kept = []
    for force, ref in zip(FORCES, logs_ref):
        program.inputs[0] = force
        out = program()
        kept.append(out)
        np.testing.assert_allclose(out["u"], ref["u"], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(out["state"]["energy"], ref["state"]["energy"], rtol=1e-12, atol=1e-15)
        assert out["steps"] == ref["steps"] and out["moving_right"] == ref["moving_right"]
    # every call returns a buffer of its own: an earlier result is not overwritten
    np.testing.assert_allclose(kept[0]["state"]["y"], logs_ref[0]["state"]["y"], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(program.carry["y"], carry_ref["y"], rtol=1e-12, atol=1e-15)
    assert program.carry["n"] == 300
    assert abs(carry_ref["y"][0] - CARRY["y"][0]) > 1e-4  # the oscillator moved


def test_new_constants_and_a_restarted_carry_give_the_unpacked_numbers():
    stiffer = {**CONSTANTS, "k": 900.0}
    _, logs_ref = _unpacked(stiffer, FORCES[:50])
    program = PackedProgram(duffing_step, CONSTANTS, CARRY, 1)
    for force in FORCES[:20]:
        program.inputs[0] = force
        program()

    def scale_k(constants, values):
        return {**constants, "k": constants["k"] * values[0]}

    program.constants_update(scale_k, 1)(np.array([2.25]))  # 400 × 2.25 = 900
    assert program.constants["k"] == 900.0
    restarted = program.with_carry(CARRY)  # shares the compilation and the new constants
    for force, ref in zip(FORCES[:50], logs_ref):
        restarted.inputs[0] = force
        np.testing.assert_allclose(restarted()["u"], ref["u"], rtol=1e-12, atol=1e-15)
    assert program.carry["n"] == 20  # the original program's carry is its own


def test_a_call_leaves_the_previous_carry_valid():
    """A Ctrl-C landing between the compiled call's return and the new carry's assignment
    leaves the program on its previous carry: that buffer must still be readable (a
    donated buffer would be deleted, and a safe stop reading the state would fail)."""
    program = PackedProgram(duffing_step, CONSTANTS, CARRY, 1)
    program.inputs[0] = 1.0
    previous = program._state
    program()
    assert not previous.is_deleted()
    program._state = previous  # as if the assignment never happened
    assert program.carry["n"] == 0


def test_entry_kernels_counts_what_xla_runs_as_kernels():
    """entry_kernels on a hand-written HLO entry: parameters, constants, tuples and
    get-tuple-elements are no kernels; fusions, copies and the loop are."""
    from rths_ident.packed_calls import entry_kernels  # noqa: PLC0415

    hlo = """HloModule m

%body (p: (s32[])) -> (s32[]) {
  %p = (s32[]) parameter(0)
  ROOT %t = (s32[]) tuple(%x)
}

ENTRY %main.1 (a.1: u8[8], x.1: f64[3]) -> (u8[8], u8[4]) {
  %a.1 = u8[8]{0} parameter(0)
  %x.1 = f64[3]{0} parameter(1)
  %constant.1 = u8[] constant(0)
  %iota_fusion = u32[4]{0} fusion(), kind=kLoop, calls=%f
  %copy.1 = u8[8]{0} copy(%a.1)
  %tuple.2 = (u8[8]{0}, u32[4]{0}) tuple(%copy.1, %iota_fusion)
  %while.3 = (u8[8]{0}, u32[4]{0}) while(%tuple.2), condition=%c, body=%body
  %gte.4 = u8[8]{0} get-tuple-element(%while.3), index=0
  ROOT %tuple.5 = (u8[8]{0}, u8[4]{0}) tuple(%gte.4, %gte.4)
}
"""
    assert entry_kernels(hlo) == ["fusion", "copy", "while"]


def test_a_packed_program_with_constant_masks_stays_a_few_kernels():
    """A body that builds masks from index vectors (a lower triangle per size) would have
    them lifted out of its loop by XLA's loop-invariant code motion, one kernel each (19
    kernels in the entry with the pass); the packed program is compiled without it
    (COMPILER_OPTIONS), and computes the same sum: Σ_{n=2}^{13} (n+1)·n(n+1)/2 · x₀."""
    from rths_ident.packed_calls import SEQUENTIAL_KERNELS, entry_kernels  # noqa: PLC0415

    def fn(constants, carry, inputs):
        total = 0.0
        for n in range(2, 14):
            lower = jnp.where(jnp.arange(n)[:, None] >= jnp.arange(n)[None, :], 1.0, 0.0) * (n + 1)
            total = total + jnp.sum(lower * carry["x"][0])
        return {"x": carry["x"] + inputs[0]}, {"total": total}

    program = PackedProgram(fn, (), {"x": np.array([2.0, 0.0, 0.0])}, 1)
    kernels = entry_kernels(program._compiled.as_text())
    assert len(kernels) <= SEQUENTIAL_KERNELS, kernels
    program.inputs[0] = 1.0
    assert float(program()["total"]) == 2.0 * sum((n + 1) * n * (n + 1) // 2 for n in range(2, 14))
    np.testing.assert_array_equal(program.carry["x"], [3.0, 1.0, 1.0])


def test_a_constants_update_is_one_kernel_and_computes_the_numpy_numbers():
    """An update that changes many leaves (here twelve, each its own fused operation, as
    lugre-frame's update of its columns is thirteen) runs as the few kernels of a packed
    call (one_trip), not one kernel per operation — XLA:CPU hands a program of more than
    SEQUENTIAL_KERNELS kernels to its worker threads; the constants it leaves are those
    NumPy computes, bit for bit."""
    from rths_ident.packed_calls import SEQUENTIAL_KERNELS, entry_kernels  # noqa: PLC0415

    constants = {f"k{i}": np.linspace(1.0, 2.0, 3 + i) for i in range(12)}

    def update(tree, values):
        return {name: leaf * values[0] + values[1] * (int(name[1:]) + 1) for name, leaf in tree.items()}

    program = PackedProgram(lambda c, s, x: (s, {"x": x[0]}), constants, {"n": np.int64(0)}, 1)
    apply = program.constants_update(update, 2)
    copying = PackedProgram(lambda c, s, x: (s, {"x": x[0]}), constants, {"n": np.int64(0)}, 1,
                            alias_inputs=False).constants_update(update, 2)
    assert apply.values_aliased and not copying.values_aliased  # the values read in place, or JAX's copy
    assert len(entry_kernels(apply.compiled.as_text())) <= SEQUENTIAL_KERNELS
    apply(np.array([1.5, -0.25]))
    apply(np.array([0.5, 2.0]))  # a second update sees its own values, not the first's
    for i, (name, leaf) in enumerate(constants.items()):
        expected = (leaf * 1.5 + -0.25 * (i + 1)) * 0.5 + 2.0 * (i + 1)
        np.testing.assert_array_equal(program.constants[name], expected)


def test_call_into_host_returns_the_same_views_with_what_a_call_returns():
    """call_into_host: the outputs copied into the program's own host buffer — the same
    tree of views every call, holding bit for bit what a fresh call of an identical
    program returns (the unpacked Duffing oscillator's numbers to 1e-12); a program made
    by with_carry has a buffer of its own."""
    carry_ref, logs_ref = _unpacked(forces=FORCES[:40])
    fresh = PackedProgram(duffing_step, CONSTANTS, CARRY, 1)
    host = PackedProgram(duffing_step, CONSTANTS, CARRY, 1)
    other = host.with_carry(CARRY)
    first = None
    for force, ref in zip(FORCES[:40], logs_ref):
        fresh.inputs[0] = host.inputs[0] = force
        expected, out = fresh(), host.call_into_host()
        first = out if first is None else first
        assert out is first and out["state"]["y"] is first["state"]["y"]  # built once
        _assert_bit_equal(jax.tree_util.tree_map(np.array, out), jax.tree_util.tree_map(np.array, expected))
        np.testing.assert_allclose(out["u"], ref["u"], rtol=1e-12, atol=1e-15)
    assert other.host_outputs["steps"] == 0 and host.host_outputs["steps"] == 40  # the other's buffer: untouched
    other.inputs[0] = 1.0
    other.call_into_host()
    assert other.host_outputs["steps"] == 1 and host.host_outputs["steps"] == 40


def test_the_aliased_input_vector_gives_bit_for_bit_the_numpy_inputs_numbers():
    """A program's input vector is a device array over the NumPy memory the caller fills
    (XLA:CPU takes an aligned vector without a copy; checked by its address): every
    call reads what was written before it. Against a program passing the NumPy vector
    (``alias_inputs=False``, JAX's copy per call): the same bytes every step, and the
    unpacked oscillator's numbers to 1e-12; a restarted program has inputs of its own."""
    _, logs_ref = _unpacked(forces=FORCES[:100])
    aliased = PackedProgram(duffing_step, CONSTANTS, CARRY, 1)
    copied = PackedProgram(duffing_step, CONSTANTS, CARRY, 1, alias_inputs=False)
    assert aliased.inputs_aliased and not copied.inputs_aliased
    assert aliased._device_inputs.unsafe_buffer_pointer() == aliased.inputs.ctypes.data
    restarted = aliased.with_carry(CARRY)
    assert restarted.inputs_aliased and restarted.inputs.ctypes.data != aliased.inputs.ctypes.data
    for force, ref in zip(FORCES[:100], logs_ref):
        aliased.inputs[0] = copied.inputs[0] = force
        restarted.inputs[0] = 0.0  # its own vector: the aliased program does not see it
        out, expected = aliased.call_into_host(), copied()
        _assert_bit_equal(jax.tree_util.tree_map(np.array, out), jax.tree_util.tree_map(np.array, expected))
        np.testing.assert_allclose(out["u"], ref["u"], rtol=1e-12, atol=1e-15)
    _assert_bit_equal(aliased.carry, copied.carry)


def test_without_an_aliasing_device_the_program_passes_its_numpy_inputs(monkeypatch):
    """The fallback: where ``jax.device_put`` copies the vector (another backend or JAX),
    :func:`aliased_device_vector` says so and the program passes the NumPy vector — the
    unpacked oscillator's numbers to 1e-12. A vector off XLA:CPU's alignment is copied,
    and so refused, on this backend too."""
    from rths_ident import packed_calls  # noqa: PLC0415

    misaligned = np.zeros(8 * 4 + packed_calls.DEVICE_ALIGN, np.uint8)
    start = (-misaligned.ctypes.data % packed_calls.DEVICE_ALIGN) + 8
    assert packed_calls.aliased_device_vector(misaligned[start:start + 24].view(np.float64)) is None
    monkeypatch.setattr(packed_calls.jax, "device_put", lambda x, *a, **k: jnp.array(x, copy=True))
    assert packed_calls.aliased_device_vector(np.zeros(4)) is None
    _, logs_ref = _unpacked(forces=FORCES[:30])
    program = PackedProgram(duffing_step, CONSTANTS, CARRY, 1)
    assert not program.inputs_aliased
    for force, ref in zip(FORCES[:30], logs_ref):
        program.inputs[0] = force
        np.testing.assert_allclose(program.call_into_host()["u"], ref["u"], rtol=1e-12, atol=1e-15)


def test_a_call_returns_one_vector_the_carry_then_the_outputs():
    """The compiled call has one result: the carry's words then the outputs' words (the
    next call's state), each what the host packs of the trees it unpacks — the carry
    after one RK4 step, the unpacked oscillator's numbers to 1e-12."""
    _, logs_ref = _unpacked(forces=FORCES[:1])
    program = PackedProgram(duffing_step, CONSTANTS, CARRY, 1)
    assert len(jax.tree_util.tree_leaves(program._compiled.out_info)) == 1
    program.inputs[0] = FORCES[0]
    out = jax.tree_util.tree_map(np.array, program.call_into_host())
    state, n_carry = np.asarray(program._state), program.carry_layout.nwords
    assert state.shape == (n_carry + program.outputs_layout.nwords,)
    assert state[:n_carry].tobytes() == program.carry_layout.pack_words(program.carry).tobytes()
    assert state[n_carry:].tobytes() == program.outputs_layout.pack_words(out).tobytes()
    assert program.carry["n"] == 1
    np.testing.assert_allclose(program.carry["y"], logs_ref[0]["state"]["y"], rtol=1e-12, atol=1e-15)


def test_outputs_copied_from_the_results_address_are_the_numpy_copys_bytes():
    """call_into_host copies the outputs from the result's address where JAX's CPU calls
    are synchronous (tests/conftest.py configures them so); where not (the check fails:
    async dispatch on), it copies through NumPy. Both programs give the same bytes every
    step, and the unpacked oscillator's numbers to 1e-12."""
    from rths_ident import packed_calls  # noqa: PLC0415

    _, logs_ref = _unpacked(forces=FORCES[:60])
    by_address = PackedProgram(duffing_step, CONSTANTS, CARRY, 1)
    assert by_address._outputs_by_address and by_address.with_carry(CARRY)._outputs_by_address
    jax.config.update("jax_cpu_enable_async_dispatch", True)  # read by the check only (the client exists)
    try:
        assert not packed_calls.outputs_by_address(by_address._state)
    finally:
        jax.config.update("jax_cpu_enable_async_dispatch", False)
    by_numpy = PackedProgram(duffing_step, CONSTANTS, CARRY, 1)
    by_numpy._outputs_by_address = False  # as a program made with asynchronous calls
    for force, ref in zip(FORCES[:60], logs_ref):
        by_address.inputs[0] = by_numpy.inputs[0] = force
        out = by_address.call_into_host()
        by_numpy.call_into_host()
        assert by_address._host_words.tobytes() == by_numpy._host_words.tobytes()
        np.testing.assert_allclose(out["u"], ref["u"], rtol=1e-12, atol=1e-15)
        assert out["steps"] == ref["steps"] and out["moving_right"] == ref["moving_right"]


def test_the_one_kernel_loop_is_the_bodys_alone_bit_for_bit():
    """The state (carry then outputs) is split before the one-kernel loop and joined after
    it, so the loop computes what the body run alone in it computes, rounding included:
    against a second compilation of lugre-frame's substructure step as :func:`one_trip`
    with the carry and the outputs as two results, the same bytes for 60 steps. (Joined
    inside the loop, XLA fused this step otherwise: it differed from the third step on.)"""
    from rths_ident.packed_calls import one_trip  # noqa: PLC0415
    from rths_ident.scenarios import lugre_frame  # noqa: PLC0415
    from rths_ident.structures.numerical_substructure import _packed_step, native_ns_step  # noqa: PLC0415

    test = lugre_frame.build(lugre_frame.LugreFrameConfig(duration=0.1))
    ns = test.make_ns("updating")  # the NativeSubstructure a step-wise run uses
    step = test.native_ns.ns_step if test.native_ns.ns_step is not None else native_ns_step(
        ns.integrator, ns.interface_dofs)
    fn = _packed_step(step, ns.n_interface, ns.dt)
    params, state, n_user = ns.params, ns.state, ns.n_interface + 1
    program = PackedProgram(fn, params, state, n_user)
    c_layout, s_layout, o_layout = program.constants_layout, program.carry_layout, program.outputs_layout

    def body(c, s, x):
        new_state, out = fn(c_layout.unpack(c), s_layout.unpack(s), x)
        return s_layout.pack(new_state), o_layout.pack(out)

    two_results = jax.jit(lambda c, s, x: one_trip(body, (c,), s, x, n_user, o_layout.nwords)).lower(
        c_layout.pack_words(params), s_layout.pack_words(state), np.zeros(n_user + 1)).compile(
        compiler_options=dict(COMPILER_OPTIONS))
    c_words, s_words = c_layout.pack_words(params), s_layout.pack_words(state)
    rng = np.random.default_rng(7)
    for _ in range(60):
        x = np.append(rng.normal(0.0, [2e4] * ns.n_interface + [3.0]), 1.0)  # feedback [N], ẍ_g [m/s²], one trip
        program.inputs[:] = x[:n_user]
        out = program.call_into_host()
        s_words, o_words = two_results(c_words, s_words, x)
        assert np.asarray(o_words).tobytes() == program._host_words.tobytes()
        assert np.asarray(s_words).tobytes() == s_layout.pack_words(program.carry).tobytes()
    assert np.all(np.isfinite(out["target"])) and np.any(out["target"] != 0)


def test_the_idle_twin_crosses_the_same_words_and_computes_nothing():
    """idle_twin: the Duffing program's constants, carry, inputs and outputs (the same
    layouts, so the same buffers per call), a body with no arithmetic in its compiled
    text (the program's own has the RK4's multiplies), the carry returned as it came and
    zero outputs, call after call."""
    program = PackedProgram(duffing_step, CONSTANTS, CARRY, 1)
    program.inputs[0] = FORCES[7]
    for _ in range(3):
        program.call_into_host()  # a carry that is not the initial one
    twin = idle_twin(program)
    for layout in ("constants_layout", "carry_layout", "outputs_layout"):
        assert getattr(twin, layout).signature == getattr(program, layout).signature
    assert len(twin.inputs) == len(program.inputs)
    assert "multiply" in program._compiled.as_text() and "multiply" not in twin._compiled.as_text()
    before = program.carry
    twin.inputs[0] = FORCES[11]
    for _ in range(5):
        out = twin.call_into_host()
    _assert_bit_equal(twin.carry, before)
    _assert_bit_equal(twin.constants, program.constants)
    for leaf in jax.tree_util.tree_leaves(out):
        assert not np.any(leaf)
