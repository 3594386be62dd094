"""Shipped datasets and loaders for logged test data.

Shipped (inside the package, found with :mod:`importlib.resources`):

* ground motions — :func:`load_ground_motion` → ``(t [s], ag [m/s²])``;
* laboratory hysteresis tests — :func:`load_hysteresis_test` → ``(displacement, force)``
  in mm and kN (``units="SI"``: m, N);
* the multi-axial RTHS benchmark's FE matrices — :func:`load_marths_matrices`.

:func:`list_datasets` lists them with units, size and origin. Helpers:
:func:`scale_ground_motion`, :func:`resample_ground_motion`, :func:`read_peer_at2`
(PEER NGA ``.AT2`` files), :func:`load_logged_test` (CSV, ``.npz``, ``.mat``, HDF5) and
:func:`load_dynamic_test` (an input and an output of a dynamic test).
Bad files raise :class:`DataFileError` naming the file, the column and the line/row.
"""

from rths_ident.errors import DataFileError, UnknownDatasetError
from rths_ident.datasets.ground_motions import STANDARD_GRAVITY, load_ground_motion
from rths_ident.datasets.hysteresis import load_hysteresis_test
from rths_ident.datasets.logged import LoggedTest, load_logged_test
from rths_ident.datasets.dynamic_logged import DynamicTest, load_dynamic_test
from rths_ident.datasets.marths import JointDofTable, MarthsMatrices, load_marths_matrices
from rths_ident.datasets.peer_at2 import read_peer_at2
from rths_ident.datasets.processing import (
    peak_ground_acceleration,
    resample_ground_motion,
    scale_ground_motion,
)
from rths_ident.datasets.registry import DatasetRecord, get_dataset, list_datasets
from rths_ident.datasets.summary import summarize_dataset

__all__ = [
    "STANDARD_GRAVITY",
    "DataFileError",
    "DatasetRecord",
    "JointDofTable",
    "LoggedTest",
    "MarthsMatrices",
    "UnknownDatasetError",
    "get_dataset",
    "list_datasets",
    "load_ground_motion",
    "load_hysteresis_test",
    "load_logged_test",
    "DynamicTest",
    "load_dynamic_test",
    "load_marths_matrices",
    "peak_ground_acceleration",
    "read_peer_at2",
    "resample_ground_motion",
    "scale_ground_motion",
    "summarize_dataset",
]
