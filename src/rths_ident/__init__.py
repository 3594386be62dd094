"""rths_ident — parameter identification and online model updating for real-time
hybrid simulation (RTHS) of structures.

Importing this package enables JAX 64-bit floats (``jax_enable_x64``): structural
stiffnesses (~1e6 N/m) and estimator covariances (~1e10) need float64. If you use JAX
in the same process in 32-bit mode on purpose, import rths_ident after setting up your
own config and re-disable it yourself — every function here assumes float64.

It also asks XLA:CPU to compile small loops into single kernels (an ``XLA_FLAGS``
option; :mod:`rths_ident.small_loop_kernels`, ``RTHS_IDENT_SMALL_LOOP_BYTES=off`` to
keep XLA's default): the hybrid loop's fast steps run several times faster with it.
"""

from rths_ident import small_loop_kernels as _small_loop_kernels

_small_loop_kernels.enable()  # before any JAX computation: XLA reads XLA_FLAGS once

import jax as _jax  # noqa: E402

_jax.config.update("jax_enable_x64", True)

__version__ = "0.1.0"

__all__ = ["__version__"]
