"""rths_ident — parameter identification and online model updating for real-time
hybrid simulation (RTHS) of structures.

What importing it does: it switches JAX to 64-bit floats (``jax_enable_x64``).
Structural stiffnesses (~1e6 N/m) and estimator covariances (~1e10) need float64, and
every function here assumes it; a component built after someone switched it off again
refuses to build (:class:`~rths_ident.errors.ParameterError`) rather than compute in
float32. Nothing else in the process is changed by the import.

What :func:`configure` does, once, before the process's first JAX computation: asks
XLA:CPU to compile small loops as single kernels (an ``XLA_FLAGS`` option that every
JAX program of the process then gets; :mod:`rths_ident.small_loop_kernels`), and to run
each compiled call on the thread that calls it (``jax_cpu_enable_async_dispatch`` off).
The hybrid loop's fast steps run several times faster with the first, with the same
numbers up to rounding. The second matters to the step-wise loop, which waits for
every call's result at once: with asynchronous dispatch each call is handed to a worker
thread and its result handed back, two thread switches per call, and on a loaded machine
the worker waits for a CPU while the loop waits for the worker (and a paced loop raised
to real-time priority cannot lend that priority to JAX's workers). The command line
calls it; call it at the top of a script that runs tests::

    import rths_ident
    rths_ident.configure()            # before any JAX computation

The top-level API: :func:`load_test` and :class:`HybridTest` (:mod:`rths_ident.api`).
"""

from __future__ import annotations

import jax as _jax

_jax.config.update("jax_enable_x64", True)

from rths_ident._version import __version__  # noqa: E402

__all__ = ["__version__", "configure", "load_test", "HybridTest"]


def configure(small_loop_kernels: bool = True, synchronous_cpu_calls: bool = True) -> dict:
    """Set the process-wide options rths_ident runs best with (module doc); returns what
    was done: ``{"small_loop_kernels": "on" | "off" | "too late: …",
    "synchronous_cpu_calls": …}``.

    ``small_loop_kernels``: XLA:CPU compiles small loops as single kernels
    (``RTHS_IDENT_SMALL_LOOP_BYTES=off`` in the environment keeps XLA's default even
    when asked). ``synchronous_cpu_calls``: compiled calls run on the calling thread
    (``RTHS_IDENT_CPU_ASYNC_DISPATCH=on`` keeps JAX's asynchronous dispatch even when
    asked). Both take effect only before the first JAX computation of the process:
    afterwards JAX has made its CPU client, and this says so instead."""
    from jax._src import xla_bridge  # noqa: PLC0415

    from rths_ident import small_loop_kernels as kernels  # noqa: PLC0415

    too_late = xla_bridge.backends_are_initialized()
    late = ("too late: JAX has computed already in this process (call configure() first, before any JAX "
            "computation)")
    done = {}
    if not small_loop_kernels:
        done["small_loop_kernels"] = "off"
    elif too_late and not kernels.requested_in(_environ()):
        done["small_loop_kernels"] = late
    else:
        kernels.enable()
        done["small_loop_kernels"] = "on" if kernels.requested_threshold() is not None else "off"
    if not synchronous_cpu_calls or _environ().get("RTHS_IDENT_CPU_ASYNC_DISPATCH", "").strip().lower() == "on":
        done["synchronous_cpu_calls"] = "off"
    elif too_late and xla_bridge._CPU_ENABLE_ASYNC_DISPATCH.value:
        done["synchronous_cpu_calls"] = late
    else:
        _jax.config.update("jax_cpu_enable_async_dispatch", False)
        done["synchronous_cpu_calls"] = "on"
    return done


def _environ():
    import os  # noqa: PLC0415

    return os.environ


def __getattr__(name: str):
    """The top-level API, imported when first used (``import rths_ident`` stays light)."""
    if name in ("load_test", "HybridTest"):
        from rths_ident import api  # noqa: PLC0415

        return getattr(api, name)
    raise AttributeError(f"module 'rths_ident' has no attribute {name!r}")
