"""The software a record was written with (package versions, Python, platform)."""

from __future__ import annotations

import importlib.metadata
import platform

import h5py
import numpy as np

from rths_ident._version import __version__

#: distributions whose versions a record keeps (read from their metadata: nothing is
#: imported, so a record does not load OpenSeesPy to say which version is installed)
DISTRIBUTIONS = ("jax", "jaxlib", "scipy", "openseespy")


def software_versions() -> dict[str, str]:
    """``{"rths_ident": …, "numpy": …, "jax": …, "openseespy": … or "not installed", …}``."""
    versions = {
        "rths_ident": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "numpy": np.__version__,
        "h5py": h5py.version.version,
        "hdf5": h5py.version.hdf5_version,
    }
    for name in DISTRIBUTIONS:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions
