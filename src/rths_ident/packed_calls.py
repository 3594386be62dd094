"""Compiled calls with the least crossing cost: a pytree's leaves packed into one byte vector.

Crossing from Python into a compiled XLA program costs per argument and per result, not
per byte: every leaf of a pytree is a buffer that the call checks on the way in and a
Python array object that it creates on the way out (on the 2-core machine class, about
0.3 µs per argument leaf and 1 µs per result leaf idle, several times that loaded). A
fast chunk of a hybrid test carries tens of leaves (the fast side's state and
parameters) for a few microseconds of arithmetic, so its call cost was mostly leaves.

:class:`PackedLayout` lays a pytree's leaves end to end in one byte vector (each leaf at
an 8-byte aligned offset, bit for bit, booleans as 0/1 bytes) and reads them back, inside
a traced function (:meth:`~PackedLayout.pack`, :meth:`~PackedLayout.unpack`) and on the
host (:meth:`~PackedLayout.pack_numpy`, and :attr:`~PackedLayout.numpy_dtype`: a NumPy
structured dtype over the same bytes, so the host reads every leaf by name without a
copy). A compiled call takes and returns the bytes as ``uint64`` words
(:meth:`~PackedLayout.pack_words`): a float64 leaf is then a bitcast of its words, and a
narrower leaf a narrowing bitcast. Over a ``uint8`` vector every float64 leaf was a
*widening* ``bitcast_convert_type``, which XLA lowers to a reduce-or over its 8 bytes.

**What a call costs.** XLA:CPU sets up, on every call, one buffer record (a small heap
allocation) per buffer of the compiled program: its arguments, results and constants,
and every value of every small computation the program holds — a ``reduce``'s reducer
is such a computation, two or three values each, cloned per ``reduce``. For a fast chunk
of a few µs of arithmetic the buffer count, not the arithmetic, sets the call's cost:
hence the words, and the short sums of :mod:`rths_ident.small_linalg` written out as
additions (:func:`rths_ident.small_linalg.summed`).

:class:`PackedProgram` compiles ``fn(constants, carry, inputs) -> (carry, outputs)`` ahead
of time with each of the four packed: the constants stay on the device between calls,
``inputs`` is one float64 vector the caller fills, and the carry and the outputs are ONE
word vector, the *state* — the carry's words, then the outputs' — that stays on the
device and is the next call's argument (the body reads only its carry words; the host
reads the outputs' words through NumPy views, one per leaf; the state is split before
the one-kernel loop below and joined after it, so that the loop's kernel is the body's
alone — joined inside it, XLA fused a substructure's arithmetic otherwise and rounded
differently). One call then crosses three
arguments and one result whatever the trees hold: a second result (the outputs apart
from the carry) cost a result array more per call, about 1.5 µs of a site's call. The
state's buffer is not donated to the call: a Ctrl-C that lands between the call's return
and the new state's assignment leaves the previous carry valid (a donated one would be
deleted, and a safe stop that starts from the site's state could not run).

**The input vector.** Handed a NumPy vector, a compiled call makes a device buffer of
it on every call (JAX's argument conversion: about 3 µs of a site's call on the 2-core
machine class, idle). The program's input vector is instead allocated aligned
(:data:`DEVICE_ALIGN`) and put on the device once: XLA:CPU then takes the NumPy memory
itself as the device buffer (a zero-copy ``jax.device_put``), the caller fills
:attr:`~PackedProgram.inputs` in place, and each call reads them where they lie. This
is a property of JAX's CPU client, not a documented promise (checked on jax and jaxlib
0.10.2), so it is checked when a program is made — the device array's
``unsafe_buffer_pointer()`` must be the NumPy vector's address
(:func:`aliased_device_vector`) — and where it does not hold (another backend, another
JAX) the call takes the NumPy vector as before (:attr:`PackedProgram.inputs_aliased`
says which; ``alias_inputs=False`` asks for the copy). The call is synchronous for the
caller either way: both call paths read the result on the host before returning, so the
next step's inputs are never written while a call still reads them.

**The outputs' copy.** :meth:`PackedProgram.call_into_host` copies the outputs' words
from the result's memory into its host buffer with one ``memmove`` at the result's
address (``jax.Array.unsafe_buffer_pointer``), where a NumPy view of the result
(``np.asarray``) and a copy cost about 1.4 µs more per call. Reading an address is only
right once the call has written it: this path is taken when the program is made with
JAX's CPU calls synchronous (``jax_cpu_enable_async_dispatch`` off, which
:func:`rths_ident.configure` sets before any computation) on a CPU array
(:func:`outputs_by_address`; checked on jax 0.10.2), otherwise the NumPy copy.

**Where the rest of a call goes** (measured on the site's call, CHANGELOG: issue 23):
past the input's conversion, the compiled executable's run through PjRt (its buffers'
bookkeeping and allocations: ``malloc``/``free`` are about 40 % of it), JAX's C++
dispatch with the result arrays, and the copy of the outputs to the host; the number of
kernels of the entry (copies into the loop's state) and the literals inside the
one-kernel loop (not buffers of their own: a site's program has 37–49 buffers in all)
change none of it measurably.

The call runs as a single XLA kernel: the body is wrapped in a ``while`` loop of one trip
that XLA cannot count, so its small-loop pass (:mod:`rths_ident.small_loop_kernels`)
emits it whole, instead of one kernel per fused operation (on rc-frame's fast chunk at
4096/1024 Hz: 160 kernels, about three quarters of the call's time).

The program is compiled without XLA's loop-invariant code motion
(:data:`COMPILER_OPTIONS`): that pass lifts whatever the body computes from literals
alone (iotas, constant index vectors, the random generator's counters) out of the loop,
each as a kernel of its own before it — 13 on lugre-frame's site call — and XLA:CPU runs
a program of more than 8 kernels (with buffers over 512 bytes) *concurrently*, handing
kernels to its worker threads (``tf_XLAEigen``) and waiting for them, at tens of µs per
call on a loaded 2-core machine. Without the pass the call is its copies, a few small
fusions, the loop and the state's join (:func:`entry_kernels`: 8 on the sites'
calls), which XLA runs on the calling thread.
"""

from __future__ import annotations

import ctypes
import re
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["PackedLayout", "PackedProgram", "idle_twin", "one_trip", "entry_kernels", "aliased_device_vector",
           "outputs_by_address", "COMPILER_OPTIONS",
           "SEQUENTIAL_KERNELS", "DEVICE_ALIGN"]

_ALIGN = 8  # bytes: every leaf starts at a multiple of this (aligned NumPy views)
#: XLA's options for a packed program (module doc): no loop-invariant code motion, so the
#: call stays a handful of kernels that XLA:CPU runs in sequence on the calling thread
COMPILER_OPTIONS = {"xla_disable_hlo_passes": "while-loop-invariant-code-motion"}
#: XLA:CPU runs a program of at most this many kernels (thunks) in sequence on the calling
#: thread (ThunkExecutor's ``execute_sequential_num_thunks_threshold``), more concurrently
SEQUENTIAL_KERNELS = 8
#: bytes: a host vector aligned to this is one XLA:CPU takes as a device buffer without a copy
DEVICE_ALIGN = 64
_COMPILED: dict = {}  # PackedProgram's compilations by (cache_key, layouts' signatures, inputs)


def _path_names(path) -> tuple[str, ...]:
    names = []
    for entry in path:
        if isinstance(entry, jax.tree_util.DictKey):
            names.append(str(entry.key))
        elif isinstance(entry, jax.tree_util.GetAttrKey):
            names.append(entry.name)
        elif isinstance(entry, jax.tree_util.SequenceKey):
            names.append(str(entry.idx))
        else:
            names.append(str(entry))
    return tuple(names)


def _to_words(flat, dtype: np.dtype) -> jax.Array:
    """A flat leaf as ``uint64`` words (traced), its bytes in memory order, the last word
    padded with zero bytes. An 8-byte type is a bitcast; a narrower one (booleans as 0/1
    bytes) is assembled from its bytes with shifts and ors — XLA:CPU lowers a widening
    ``bitcast_convert_type`` to a reduction, which costs every call (module doc)."""
    if dtype.itemsize == _ALIGN:
        return jax.lax.bitcast_convert_type(flat, jnp.uint64)
    raw = flat.astype(jnp.uint8) if dtype == np.bool_ else jax.lax.bitcast_convert_type(flat, jnp.uint8).reshape(-1)
    raw = jnp.pad(raw, (0, -raw.shape[0] % _ALIGN)).reshape(-1, _ALIGN).astype(jnp.uint64)
    words = raw[:, 0]
    for byte in range(1, _ALIGN):  # little-endian: byte j is bits 8j … 8j+7
        words = words | (raw[:, byte] << np.uint64(8 * byte))
    return words


class PackedLayout:
    """Where each leaf of a pytree lies in one byte vector (module doc).

    ``example``: the tree (arrays, or :class:`jax.ShapeDtypeStruct` leaves). Leaves of
    every numeric and boolean dtype are laid out; new-style typed PRNG keys are refused
    (pack their ``jax.random.key_data``).
    """

    def __init__(self, example):
        leaves_with_paths, self.treedef = jax.tree_util.tree_flatten_with_path(example)
        # field names per leaf (a tree that is a single leaf reads as "value")
        self.paths = tuple(_path_names(path) or ("value",) for path, _ in leaves_with_paths)
        self.shapes = tuple(tuple(np.shape(leaf)) for _, leaf in leaves_with_paths)
        for path, (_, leaf) in zip(self.paths, leaves_with_paths):
            if hasattr(leaf, "dtype") and jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key):
                raise TypeError(f"PackedLayout: leaf {'/'.join(path)} is a typed PRNG key: pack its "
                                "jax.random.key_data instead")
        # Python scalars as JAX takes them with 64-bit types on (float64, int64, bool)
        self.dtypes = tuple(np.dtype(leaf.dtype) if hasattr(leaf, "dtype") else np.asarray(leaf).dtype
                            for _, leaf in leaves_with_paths)
        for path, dtype in zip(self.paths, self.dtypes):
            if dtype.kind not in "biuf":
                raise TypeError(f"PackedLayout: leaf {'/'.join(path)} has dtype {dtype}: expected numbers or "
                                "booleans (a typed PRNG key packs as jax.random.key_data)")
        offsets, offset = [], 0
        for shape, dtype in zip(self.shapes, self.dtypes):
            offsets.append(offset)
            size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
            offset += -(-size // _ALIGN) * _ALIGN
        self.offsets = tuple(offsets)
        self.nbytes = max(offset, _ALIGN)  # never an empty vector
        self.nwords = self.nbytes // _ALIGN  # the traced vector's length (uint64 words)
        self.numpy_dtype = self._structured_dtype()
        #: what identifies the layout (tree structure, shapes, dtypes): equal signatures, equal bytes
        self.signature = (self.treedef, self.shapes, tuple(d.str for d in self.dtypes))

    def __len__(self) -> int:
        return len(self.shapes)

    # ------------------------------------------------------------------ traced
    def pack(self, tree) -> jax.Array:
        """The tree's leaves as one ``uint64`` word vector (traceable; bit-exact: the
        words' bytes are :meth:`pack_numpy`'s)."""
        leaves = self.treedef.flatten_up_to(tree)
        parts, used = [], 0
        for leaf, dtype, offset in zip(leaves, self.dtypes, self.offsets):
            words = _to_words(jnp.asarray(leaf, dtype=dtype).reshape(-1), dtype)
            if used < offset:
                parts.append(jnp.zeros((offset - used) // _ALIGN, jnp.uint64))
            parts.append(words)
            used = offset + words.shape[0] * _ALIGN
        if used < self.nbytes:
            parts.append(jnp.zeros((self.nbytes - used) // _ALIGN, jnp.uint64))
        return jnp.concatenate(parts)

    def unpack(self, words):
        """The tree from its ``uint64`` word vector (traceable; bit-exact)."""
        leaves = []
        for shape, dtype, offset in zip(self.shapes, self.dtypes, self.offsets):
            n = int(np.prod(shape, dtype=np.int64))
            first = offset // _ALIGN
            raw = jax.lax.slice(words, (first,), (first + -(-n * dtype.itemsize // _ALIGN),))
            if dtype == np.bool_:
                value = jax.lax.bitcast_convert_type(raw, jnp.uint8).reshape(-1)[:n] != 0
            else:  # same width or narrower: no arithmetic (a wider one would be a reduction)
                value = jax.lax.bitcast_convert_type(raw, dtype).reshape(-1)[:n]
            leaves.append(value.reshape(shape))
        return self.treedef.unflatten(leaves)

    # ------------------------------------------------------------------ host
    def pack_numpy(self, tree) -> np.ndarray:
        """The byte vector of ``tree`` on the host (NumPy; what :meth:`pack` computes)."""
        out = np.zeros(self.nbytes, np.uint8)
        view = out.view(self.numpy_dtype)[0] if len(self) else None
        for names, leaf, dtype in zip(self.paths, self.treedef.flatten_up_to(tree), self.dtypes):
            field = view
            for name in names[:-1]:
                field = field[name]
            field[names[-1]] = np.asarray(leaf, dtype=dtype)
        return out

    def pack_words(self, tree) -> np.ndarray:
        """:meth:`pack_numpy`'s bytes as the ``uint64`` words a compiled call takes."""
        return self.pack_numpy(tree).view(np.uint64)

    def host_views(self, buffer: np.ndarray):
        """The tree as NumPy arrays that are views of ``buffer`` (its byte vector; 0-d
        arrays for scalars): built once, they show whatever the buffer holds later."""
        if buffer.dtype != np.uint8 or buffer.shape != (self.nbytes,):
            raise ValueError(f"host_views: expected a uint8 buffer of {self.nbytes} bytes, got {buffer.dtype} "
                             f"{buffer.shape}")
        leaves = [np.ndarray(shape, dtype, buffer=buffer, offset=offset)
                  for shape, dtype, offset in zip(self.shapes, self.dtypes, self.offsets)]
        return self.treedef.unflatten(leaves)

    def view(self, data: np.ndarray):
        """The record over a byte vector (a NumPy structured scalar: ``rec["log"]["force"]``
        is a view of the bytes, no copy)."""
        return np.asarray(data).view(np.uint8).view(self.numpy_dtype)[0]

    def unpack_numpy(self, data: np.ndarray):
        """The tree from its byte vector on the host (NumPy arrays, copies)."""
        record = self.view(np.asarray(data))
        leaves = []
        for names in self.paths:
            field = record
            for name in names:
                field = field[name]
            leaves.append(np.array(field))
        return self.treedef.unflatten(leaves)

    def _structured_dtype(self) -> np.dtype:
        """Nested structured dtype with one field per leaf at its offset: the tree's
        nesting of names (a subtree's leaves are contiguous in the flattened order)."""

        def build(entries, base):
            # entries: (remaining names, shape, dtype, absolute offset)
            fields: dict[str, list] = {}
            order: list[str] = []
            for names, shape, dtype, offset in entries:
                if names[0] not in fields:
                    fields[names[0]] = []
                    order.append(names[0])
                fields[names[0]].append((names[1:], shape, dtype, offset))
            spec = {"names": [], "formats": [], "offsets": []}
            end = base
            for name in order:
                group = fields[name]
                start = group[0][3]
                if len(group) == 1 and not group[0][0]:
                    _, shape, dtype, offset = group[0]
                    fmt = np.dtype((dtype, shape)) if shape else dtype
                    size = fmt.itemsize
                else:
                    fmt, size = build(group, start)
                spec["names"].append(name)
                spec["formats"].append(fmt)
                spec["offsets"].append(start - base)
                end = max(end, start + size)
            spec["itemsize"] = end - base
            return np.dtype(spec), end - base

        if not self.paths:
            return np.dtype({"names": [], "formats": [], "offsets": [], "itemsize": self.nbytes})
        dtype, _ = build(list(zip(self.paths, self.shapes, self.dtypes, self.offsets)), 0)
        return np.dtype({"names": dtype.names, "formats": [dtype.fields[n][0] for n in dtype.names],
                         "offsets": [dtype.fields[n][1] for n in dtype.names], "itemsize": self.nbytes})


def one_trip(body: Callable, invariants: tuple, carry, x, n_user: int, n_output_words: int):
    """``body(*invariants, carry, x[:n_user]) -> (carry, output words)`` run once, as a
    ``while`` loop whose trip count (``x[n_user]``, 1 at every call) XLA cannot see: XLA
    then emits the whole call as ONE kernel (:mod:`rths_ident.small_loop_kernels`)
    instead of a kernel per fused operation. The invariant arguments and the inputs ride
    in the loop's state, re-selected each trip under a condition XLA cannot decide, so
    that nothing is hoisted out of the loop as "invariant" (which would bring back a
    kernel per hoisted operation). Returns the carry and the output words (traced)."""
    trips = x[n_user].astype(jnp.int32)

    def loop_body(state):
        i, invariants, inputs, carry, _ = state
        carry, outputs = body(*invariants, carry, inputs[:n_user])
        keep = i < trips + 1  # always true, unknown to XLA
        return (i + 1, tuple(jnp.where(keep, value, 0) for value in invariants), jnp.where(keep, inputs, 0.0), carry,
                outputs)

    state = (jnp.int32(0), tuple(invariants), x, carry, jnp.zeros(n_output_words, jnp.uint64))
    state = jax.lax.while_loop(lambda state: state[0] < trips, loop_body, state)
    return state[3], state[4]


def _aligned_zeros(n: int) -> np.ndarray:
    """A float64 zero vector of ``n`` whose data starts at a multiple of
    :data:`DEVICE_ALIGN` bytes (what XLA:CPU takes as a buffer without copying)."""
    raw = np.zeros(n * 8 + DEVICE_ALIGN, np.uint8)
    start = -raw.ctypes.data % DEVICE_ALIGN
    return raw[start:start + n * 8].view(np.float64)


def aliased_device_vector(host: np.ndarray):
    """A device array over ``host``'s own memory (CPU: ``jax.device_put`` of an aligned
    NumPy array takes it without a copy), or None where the device copied it — checked,
    not assumed (:meth:`jax.Array.unsafe_buffer_pointer`). A compiled call reads such an
    array's memory when it runs, so what was written into ``host`` before the call is
    what the call sees (module doc: *The input vector*)."""
    try:
        device = jax.device_put(host)
        if device.unsafe_buffer_pointer() == host.ctypes.data:
            return device
    except Exception:  # noqa: BLE001 — a backend without the pointer: the public path
        pass
    return None


def outputs_by_address(state: jax.Array) -> bool:
    """Whether a call's result can be read at its address (module doc: *The outputs'
    copy*): a CPU array whose ``unsafe_buffer_pointer()`` answers, with JAX's CPU calls
    synchronous (``jax_cpu_enable_async_dispatch`` off, as :func:`rths_ident.configure`
    sets it: the result is complete when the call returns). Checked when a program is made."""
    try:
        if jax.config.read("jax_cpu_enable_async_dispatch"):
            return False
        if any(device.platform != "cpu" for device in state.devices()):
            return False
        return isinstance(state.unsafe_buffer_pointer(), int)
    except Exception:  # noqa: BLE001 — an array without the pointer: the NumPy path
        return False


class PackedProgram:
    """``fn(constants, carry, inputs) -> (carry, outputs)`` compiled ahead of time with
    every argument and result packed (module doc).

    constants, carry : example trees (values: the program is compiled for their shapes
        and dtypes; ``constants`` and ``carry`` become the device buffers a call starts from).
    n_inputs : length of the float64 input vector (≥ 1).
    one_kernel : wrap the body in the one-trip loop that XLA emits as one kernel (module
        doc); False compiles the body as it is (the same arithmetic, one kernel per fused
        operation).
    alias_inputs : pass the calls a device array over :attr:`inputs`' own memory where
        the device takes it without a copy (module doc: *The input vector*); False, or
        where it cannot, the NumPy vector (JAX copies it each call; the same numbers).

    The caller fills :attr:`inputs` (NumPy float64, in place) and calls the program,
    which returns the outputs' tree as NumPy views of the call's result (the new state,
    one buffer per call, nothing copied). :attr:`carry` and :attr:`constants` unpack the device buffers
    on demand (copies).
    """

    def __init__(self, fn: Callable, constants, carry, n_inputs: int, cache_key: Any = None,
                 one_kernel: bool = True, alias_inputs: bool = True):
        constants_layout, carry_layout = PackedLayout(constants), PackedLayout(carry)
        n_user = max(int(n_inputs), 1)
        key = None if cache_key is None else (cache_key, constants_layout.signature, carry_layout.signature, n_user,
                                              one_kernel)
        if key is not None and key in _COMPILED:
            compiled, outputs_layout = _COMPILED[key]
        else:
            compiled, outputs_layout = self._compile(fn, constants, carry, constants_layout, carry_layout, n_user,
                                                     one_kernel)
            if key is not None:
                _COMPILED[key] = (compiled, outputs_layout)
        self.constants_layout, self.carry_layout, self.outputs_layout = constants_layout, carry_layout, outputs_layout
        self._compiled = compiled
        self._alias_inputs = bool(alias_inputs)
        self._set_call_inputs(_aligned_zeros(n_user + 1))
        self._call_inputs[n_user] = 1.0  # one trip (see _compile)
        self._constants = jax.device_put(constants_layout.pack_words(constants))
        self.carry = carry  # the device state: the carry's words, then the outputs' (module doc)
        self._outputs_offset = carry_layout.nbytes  # where the outputs' words start in the state [bytes]
        #: whether call_into_host copies the outputs from the state's address (module doc)
        self._outputs_by_address = outputs_by_address(self._state)
        self._leaf_specs = tuple(zip(outputs_layout.shapes, outputs_layout.dtypes, outputs_layout.offsets))
        self._unflatten = outputs_layout.treedef.unflatten
        # each output leaf as a slice of the result viewed as its dtype (a slice costs a
        # fraction of a new ndarray over the buffer): (view index, start, stop, shape or None)
        self._view_dtypes = tuple(dict.fromkeys(outputs_layout.dtypes))
        self._slices = tuple(
            (self._view_dtypes.index(dtype), offset // dtype.itemsize,
             offset // dtype.itemsize + int(np.prod(shape, dtype=np.int64)), None if len(shape) == 1 else shape)
            for shape, dtype, offset in self._leaf_specs)
        self._new_host_outputs()

    @staticmethod
    def _compile(fn, constants, carry, constants_layout, carry_layout, n_user, one_kernel):
        inputs = jax.ShapeDtypeStruct((n_user,), jnp.float64)
        out_tree = jax.eval_shape(lambda c, s, x: fn(c, s, x)[1], constants, carry, inputs)
        outputs_layout = PackedLayout(out_tree)

        def body(constants_bytes, carry_bytes, x):
            new_carry, outputs = fn(constants_layout.unpack(constants_bytes), carry_layout.unpack(carry_bytes), x)
            return carry_layout.pack(new_carry), outputs_layout.pack(outputs)

        def packed(constants_bytes, state_bytes, x):
            # the state: the carry's words, then the last call's output words (not read).
            # Split and joined outside the loop: the loop's kernel is the body's alone
            # (joined inside it, XLA fused the arithmetic otherwise: other roundings)
            carry_bytes = jax.lax.slice(state_bytes, (0,), (carry_layout.nwords,))
            if not one_kernel:
                new_carry, outputs = body(constants_bytes, carry_bytes, x[:n_user])
            else:
                new_carry, outputs = one_trip(body, (constants_bytes,), carry_bytes, x, n_user, outputs_layout.nwords)
            return jnp.concatenate([new_carry, outputs])

        call_inputs = jax.ShapeDtypeStruct((n_user + 1,), jnp.float64)
        compiled = jax.jit(packed).lower(
            jax.ShapeDtypeStruct((constants_layout.nwords,), jnp.uint64),
            jax.ShapeDtypeStruct((carry_layout.nwords + outputs_layout.nwords,), jnp.uint64), call_inputs).compile(
            compiler_options=dict(COMPILER_OPTIONS) if one_kernel else None)
        return compiled, outputs_layout

    def __call__(self):
        """One call with :attr:`inputs` as they are: the carry advances in place; returns
        the outputs' tree as NumPy views of the call's own result buffer (yours to keep:
        the next call returns a new one)."""
        self._state = state = self._compiled(self._constants, self._state, self._device_inputs)
        buffer = np.asarray(state)[self.carry_layout.nwords:]
        views = [buffer.view(dtype) for dtype in self._view_dtypes]
        return self._unflatten([views[i][start:stop] if shape is None else views[i][start:stop].reshape(shape)
                                for i, start, stop, shape in self._slices])

    def call_into_host(self):
        """One call as :meth:`__call__`, its outputs copied into this program's own host
        buffer (one copy of a few hundred bytes): returns the same tree of NumPy views
        every call (:attr:`host_outputs`), overwritten by the next call. Building a tree
        of views over a new result costs microseconds of Python per call (a view per leaf
        and the tree); a caller that reads a step's outputs before the next call (or
        copies them, as the step-wise engine's logs do) need not pay it."""
        self._state = state = self._compiled(self._constants, self._state, self._device_inputs)
        if self._outputs_by_address:  # module doc: *The outputs' copy*
            ctypes.memmove(self._host_address, state.unsafe_buffer_pointer() + self._outputs_offset,
                           self.outputs_layout.nbytes)
        else:
            np.copyto(self._host_words, np.asarray(state)[self.carry_layout.nwords:])
        return self.host_outputs

    def _set_call_inputs(self, host: np.ndarray) -> None:
        """Use ``host`` (float64, the user's inputs then the trip count) as the call's
        input vector: :attr:`inputs` views it, and the call takes the device array that
        aliases it where one can be made (:func:`aliased_device_vector`), else ``host``
        itself (JAX copies it into a new device buffer every call)."""
        self._call_inputs = host
        self.inputs = host[:host.shape[0] - 1]  # what the caller fills
        aliased = aliased_device_vector(host) if self._alias_inputs else None
        #: what a call passes: the device array over :attr:`inputs`' memory, or the NumPy vector
        self._device_inputs = host if aliased is None else aliased

    @property
    def inputs_aliased(self) -> bool:
        """Whether a call reads :attr:`inputs` in place (a device array over their memory,
        module doc) rather than from a copy JAX makes per call."""
        return self._device_inputs is not self._call_inputs

    def _new_host_outputs(self) -> None:
        """A host buffer of this program's own for :meth:`call_into_host`, and its views."""
        host = np.zeros(self.outputs_layout.nbytes, np.uint8)
        self._host_words, self._host_address = host.view(np.uint64), host.ctypes.data
        #: the outputs' tree as views of the host buffer (:meth:`call_into_host` fills it)
        self.host_outputs = self.outputs_layout.host_views(host)

    @property
    def carry(self):
        """The carry as a tree of NumPy arrays (a copy)."""
        return self.carry_layout.unpack_numpy(np.asarray(self._state)[:self.carry_layout.nwords])

    @carry.setter
    def carry(self, tree) -> None:
        words = np.zeros(self.carry_layout.nwords + self.outputs_layout.nwords, np.uint64)
        words[:self.carry_layout.nwords] = self.carry_layout.pack_words(tree)
        self._state = jax.device_put(words)

    @property
    def constants(self):
        return self.constants_layout.unpack_numpy(np.asarray(self._constants))

    @constants.setter
    def constants(self, tree) -> None:
        self._constants = jax.device_put(self.constants_layout.pack_words(tree))

    def constants_update(self, update: Callable, n_values: int, cache_key: Any = None) -> Callable:
        """``update(constants, values (n_values,)) -> constants`` compiled on the packed
        constants; returns ``apply(values)``, which replaces this program's constants by
        the updated ones in one call (e.g. identified parameters entering a substructure),
        compiled as one kernel like the program's own call (:func:`one_trip`; run as XLA's
        separate kernels, lugre-frame's update of its eight columns is 13 of them, which
        XLA:CPU hands to its worker threads)."""
        layout = self.constants_layout
        key = None if cache_key is None else ("update", cache_key, layout.signature, int(n_values))
        if key is not None and key in _COMPILED:
            compiled = _COMPILED[key]
        else:
            def body(constants_bytes, values):
                return layout.pack(update(layout.unpack(constants_bytes), values)), jnp.zeros(0, jnp.uint64)

            def packed(constants_bytes, values):  # one kernel, as a step's call (one_trip)
                return one_trip(body, (), constants_bytes, values, int(n_values), 0)[0]

            compiled = jax.jit(packed).lower(
                jax.ShapeDtypeStruct((layout.nwords,), jnp.uint64),
                jax.ShapeDtypeStruct((int(n_values) + 1,), jnp.float64)).compile(compiler_options=dict(COMPILER_OPTIONS))
            if key is not None:
                _COMPILED[key] = compiled
        values_in = _aligned_zeros(int(n_values) + 1)
        values_in[-1] = 1.0  # one trip
        n = int(n_values)
        # read in place by the call where the device aliases it, as the program's own inputs
        aliased = aliased_device_vector(values_in) if self._alias_inputs else None
        passed = values_in if aliased is None else aliased

        def apply(values) -> None:
            values_in[:n] = values
            self._constants = compiled(self._constants, passed)

        apply.compiled = compiled  # the compiled update (its kernels: entry_kernels)
        apply.values_aliased = aliased is not None
        return apply

    def with_carry(self, tree) -> "PackedProgram":
        """A program sharing this one's compilation and constants, starting from ``tree``."""
        other = object.__new__(PackedProgram)
        other.__dict__.update(self.__dict__)
        inputs = _aligned_zeros(self._call_inputs.shape[0])
        inputs[:] = self._call_inputs
        other._set_call_inputs(inputs)
        other._new_host_outputs()
        other.carry = tree
        return other


def idle_twin(program: PackedProgram) -> PackedProgram:
    """A program with ``program``'s constants, carry, inputs and outputs — the same trees,
    shapes and dtypes, so the same buffers and words crossing each call — whose body
    computes nothing: it returns the carry as it came and zero outputs. Called as
    ``program`` is, it costs what every call through this path costs on the machine
    before any arithmetic (``rths-ident bench --only realtime``: a site's call cannot come
    closer to its arithmetic than that)."""
    layout = program.outputs_layout

    def nothing(constants, carry, inputs):
        return carry, layout.treedef.unflatten([jnp.zeros(shape, dtype)
                                                for shape, dtype in zip(layout.shapes, layout.dtypes)])

    return PackedProgram(nothing, program.constants, program.carry, len(program.inputs))


_ENTRY_OP = re.compile(r"^\s*(?:ROOT )?%[\w.\-]+ = .*? ([a-z][\w\-]*)\(")
#: HLO instructions of a program's entry that are no kernel of their own (no thunk)
_NOT_KERNELS = frozenset({"parameter", "constant", "tuple", "get-tuple-element", "bitcast"})


def entry_kernels(hlo_text: str) -> list[str]:
    """The kernels (XLA:CPU thunks) a compiled program's entry runs, by HLO opcode, from
    its text (``compiled.as_text()``): what decides whether XLA runs the call on the
    calling thread (at most :data:`SEQUENTIAL_KERNELS`) or hands kernels to its workers."""
    entry = hlo_text[hlo_text.index("\nENTRY ") + 1:]
    entry = entry[:entry.index("\n}")]
    kernels = []
    for line in entry.splitlines()[1:]:
        found = _ENTRY_OP.match(line)
        if found and found.group(1) not in _NOT_KERNELS:
            kernels.append(found.group(1))
    return kernels
