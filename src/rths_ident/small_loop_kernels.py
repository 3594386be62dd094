"""XLA:CPU's small-loop kernels: compile each small ``while`` loop into one kernel.

Since JAX 0.4.32, XLA:CPU runs a compiled program as a sequence of *thunks*, one per
fused kernel, and a ``lax.scan`` body is dispatched thunk by thunk on every iteration.
A fast step of a hybrid test is a few hundred floating-point operations spread over
tens of tiny kernels, so the dispatch — not the arithmetic — set its cost (2.45 µs per
fast step of the flagship, docs/performance.md). XLA has a pass that instead emits a
whole small loop as ONE kernel (``SmallWhileLoopHoistingPass``); it takes loops whose
bytes accessed are below ``xla_cpu_small_while_loop_byte_threshold`` (1 kB by default,
which no loop of ours is below). Raising the threshold is the documented way to use it.

The pass skips a loop that contains a ``dot``, a custom call (LAPACK: ``solve``,
``cholesky``, ``eigh``), a scatter or a convolution; the fast-side components therefore
write their small matrix products as broadcast-multiply-sum
(:mod:`rths_ident.small_linalg`) and their small solves in closed form.

:func:`rths_ident.configure` calls :func:`enable` before any JAX computation (the
command line does at its start; scripts call it), i.e. it adds
``--xla_backend_extra_options=xla_cpu_small_while_loop_byte_threshold=N`` to
``XLA_FLAGS`` (a process-wide XLA setting; XLA reads it when its CPU client starts, and
child processes — a Dask worker, a ``serve ns`` server — inherit it).
Switch it off, or change N [bytes], with ``RTHS_IDENT_SMALL_LOOP_BYTES`` (``off`` or
``0``: XLA's default). A threshold already present in ``XLA_FLAGS`` is left alone.
Numbers are unchanged up to floating-point rounding (the kernel is emitted by XLA's
other code generator).

**Batches.** Under ``jax.vmap`` a broadcast-multiply-sum grows a batch axis, and XLA:CPU
(jaxlib 0.10) hands such a reduction, once large enough (the identifier's QP enumeration
in a lugre-frame batch of 8: f64[8, 27, 3, 3, 3] summed over one axis), to its YNNPACK
library as a *custom fusion* — which the pass also skips, so the whole fast loop of a
batch fell back to dispatch kernel by kernel (a batch of 32 was then slower per
simulation than one run at a time). :func:`enable` therefore also removes the ``reduce``
type from XLA's YNN fusions (``--xla_cpu_experimental_ynn_fusion_type=-reduce``; left
alone if ``XLA_FLAGS`` sets that option). :func:`loop_kernels` tells, for a compiled
program, which of its loops are single kernels.
"""

from __future__ import annotations

import os
import re
from typing import NamedTuple

#: bytes accessed by a loop below which XLA emits it as one kernel (our default). A
#: slow step's fast loops access ~50 kB, ~1.5 MB in a vmap-ed batch of 32; the loop over
#: a whole record's slow steps holds a LAPACK solve (the NS) and stays thunk by thunk.
DEFAULT_THRESHOLD_BYTES = 10_000_000

_OPTION = "xla_cpu_small_while_loop_byte_threshold"
_EXTRA = "--xla_backend_extra_options="
#: XLA:CPU's library fusions through YNNPACK: a custom fusion the small-loop pass skips
_YNN_OPTION = "--xla_cpu_experimental_ynn_fusion_type"
_NO_YNN_REDUCE = f"{_YNN_OPTION}=-reduce"


def requested_threshold(environ=os.environ) -> int | None:
    """The threshold [bytes] asked for by ``RTHS_IDENT_SMALL_LOOP_BYTES`` (default
    :data:`DEFAULT_THRESHOLD_BYTES`; None when switched off)."""
    text = environ.get("RTHS_IDENT_SMALL_LOOP_BYTES", "").strip().lower()
    if text in ("", "on", "default"):
        return DEFAULT_THRESHOLD_BYTES
    if text in ("off", "0", "no", "false"):
        return None
    try:
        value = int(float(text))
    except ValueError:
        raise ValueError(f"RTHS_IDENT_SMALL_LOOP_BYTES must be a number of bytes or 'off'; got {text!r}") from None
    if value < 0:
        raise ValueError(f"RTHS_IDENT_SMALL_LOOP_BYTES must be ≥ 0 bytes; got {value}")
    return value or None


def with_threshold(xla_flags: str, threshold: int) -> str:
    """``XLA_FLAGS`` with the small-loop threshold added (merged into an existing
    ``--xla_backend_extra_options=…`` if there is one; unchanged if the option is set)."""
    if _OPTION in xla_flags:
        return xla_flags
    words = xla_flags.split()
    for i, word in enumerate(words):
        if word.startswith(_EXTRA):
            current = word[len(_EXTRA):]
            words[i] = _EXTRA + (f"{current},{_OPTION}={threshold}" if current else f"{_OPTION}={threshold}")
            return " ".join(words)
    return " ".join(words + [f"{_EXTRA}{_OPTION}={threshold}"])


def without_library_reductions(xla_flags: str) -> str:
    """``XLA_FLAGS`` with XLA's YNNPACK ``reduce`` fusions switched off (a batched
    multiply-sum stays XLA's own code, so its loop can be one kernel); unchanged if the
    YNN fusion option is already set."""
    if _YNN_OPTION in xla_flags:
        return xla_flags
    return " ".join(xla_flags.split() + [_NO_YNN_REDUCE])


def enable(environ=os.environ) -> None:
    """Add the small-loop threshold to ``XLA_FLAGS``, and keep batched reductions out of
    XLA's library fusions (see the module doc). Takes effect only if no JAX computation
    has run yet in this process."""
    threshold = requested_threshold(environ)
    if threshold is not None:
        flags = with_threshold(environ.get("XLA_FLAGS", ""), threshold)
        environ["XLA_FLAGS"] = without_library_reductions(flags)


def requested_in(environ=os.environ) -> bool:
    """Whether ``XLA_FLAGS`` already carries the small-loop threshold."""
    return _OPTION in environ.get("XLA_FLAGS", "")


def active() -> bool:
    """Whether XLA emits small loops as single kernels in this process: compiles a
    ``lax.scan`` over a 4 kB carry (above XLA's 1 kB default, below our threshold) and
    looks for the kernel XLA marks (``xla_cpu_small_call``)."""
    import jax  # noqa: PLC0415
    import jax.numpy as jnp  # noqa: PLC0415

    if jax.default_backend() != "cpu":
        return False

    def body(carry, _):
        return carry * 0.5 + 1.0, None

    compiled = jax.jit(lambda x: jax.lax.scan(body, x, None, length=16)[0]).lower(jnp.zeros(512)).compile()
    return "xla_cpu_small_call" in compiled.as_text()



class LoopKernel(NamedTuple):
    """A ``while`` loop of a compiled program: ``name`` (HLO), ``op_name`` (JAX's
    trace path, e.g. ``jit(f)/vmap()/while/body/closed_call/while``) and
    ``single_kernel``: whether XLA emits it inside one small-loop kernel (the loop
    itself, or a loop around it, is a ``xla_cpu_small_call``)."""

    name: str
    op_name: str
    single_kernel: bool


_COMPUTATION = re.compile(r"^(?:ENTRY )?(%[\w.\-]+) .*\{$")
_CALLED = re.compile(r"(?:to_apply|body|condition|calls)=(%[\w.\-]+)")
_BRANCHES = re.compile(r"branch_computations=\{([^}]*)\}")
_WHILE = re.compile(r"^\s*(?:ROOT )?(%[\w.\-]+) = .* while\(")
_OP_NAME = re.compile(r'op_name="([^"]*)"')


def loop_kernels(hlo_text: str) -> list[LoopKernel]:
    """Every ``while`` loop of a compiled program's HLO (``compiled.as_text()``) and
    whether it runs as one kernel (see :class:`LoopKernel`)."""
    bodies: dict[str, list[str]] = {}
    current = None
    for line in hlo_text.splitlines():
        head = _COMPUTATION.match(line)
        if head and not line.startswith(" "):
            current = head.group(1)
            bodies[current] = []
        elif current is not None:
            bodies[current].append(line)

    def called(line: str) -> list[str]:
        names = _CALLED.findall(line)
        for group in _BRANCHES.findall(line):
            names += [name.strip() for name in group.split(",")]
        return names

    inside_kernel: set[str] = set()
    pending = [name for lines in bodies.values() for line in lines if "xla_cpu_small_call" in line
               for name in called(line)]
    while pending:
        name = pending.pop()
        if name in inside_kernel:
            continue
        inside_kernel.add(name)
        pending += [sub for line in bodies.get(name, ()) for sub in called(line)]
    loops = []
    for computation, lines in bodies.items():
        for line in lines:
            found = _WHILE.match(line)
            if found:
                op_name = _OP_NAME.search(line)
                loops.append(LoopKernel(found.group(1), op_name.group(1) if op_name else "",
                                        computation in inside_kernel))
    return loops
