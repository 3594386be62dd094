"""The registry of datasets shipped inside the package.

Each dataset lives in ``rths_ident/datasets/data/<kind folder>/<folder>/`` with its data
file(s) and a ``metadata.toml`` that states the origin, the citation, the units as stored
and the expected size. The files are found through :mod:`importlib.resources`, so they
work from an installed wheel without the source repository.
"""

from __future__ import annotations

import dataclasses
import importlib.resources
import os
import pathlib
import tomllib
from importlib.resources.abc import Traversable
from typing import Any

from rths_ident.errors import ParameterError
from rths_ident.errors import DataFileError, UnknownDatasetError

#: Kind of dataset -> folder under ``data/``.
KIND_FOLDERS = {
    "ground_motion": "ground_motions",
    "hysteresis_test": "hysteresis_tests",
    "fe_matrices": "marths",
}

#: Units of what the loader of each kind returns (by default).
RETURNED_UNITS = {
    "ground_motion": "t [s], ag [m/s²]",
    "hysteresis_test": "x [mm], F [kN] (or SI: m, N)",
    "fe_matrices": "K [N/m], M [kg]",
}

METADATA_FILE = "metadata.toml"


def data_root(root: str | os.PathLike | Traversable | None = None) -> Traversable:
    """The folder holding the shipped data: the package's ``data/`` folder, or ``root``
    (a copy of that folder, e.g. to check a modified dataset)."""
    if root is None:
        return importlib.resources.files("rths_ident.datasets").joinpath("data")
    if isinstance(root, (str, os.PathLike)):
        return pathlib.Path(root)
    return root


def read_text(resource: Traversable) -> str:
    """The text of a shipped file; a missing or undecodable file is a DataFileError."""
    try:
        return resource.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise DataFileError(resource, f"cannot read the file ({error})") from error


@dataclasses.dataclass(frozen=True)
class DatasetRecord:
    """One shipped dataset, as listed by :func:`list_datasets`.

    Attributes
    ----------
    name: the name the loaders accept.
    kind: ``"ground_motion"``, ``"hysteresis_test"`` or ``"fe_matrices"``.
    title: one-line title.
    units: units of the arrays the loader returns.
    units_as_stored: units of the values in the file(s).
    shape: ``(n_samples,)`` for records and tests, ``(n, n)`` for matrices.
    source: where the data come from, in a few words (the ``origin`` column of
        ``rths-ident datasets list``).
    origin: where the file(s) come from, in full.
    citation: the source to cite.
    description: what the data are.
    metadata: the whole ``metadata.toml`` as a dict.
    folder: the folder with the files (an importlib Traversable).
    """

    name: str
    kind: str
    title: str
    units: str
    units_as_stored: dict[str, str]
    shape: tuple[int, ...]
    source: str
    origin: str
    citation: str
    description: str
    metadata: dict[str, Any]
    folder: Traversable

    @property
    def n_samples(self) -> int | None:
        """Number of samples of a record or test; ``None`` for matrices."""
        return self.shape[0] if len(self.shape) == 1 else None

    @property
    def size(self) -> str:
        """The shape as text: ``"1560 samples"`` or ``"29×29"``."""
        if len(self.shape) == 1:
            return f"{self.shape[0]} samples"
        return "×".join(str(n) for n in self.shape)

    def file(self, file_name: str) -> Traversable:
        """A data file of this dataset."""
        return self.folder.joinpath(file_name)

    @property
    def metadata_file(self) -> Traversable:
        return self.folder.joinpath(METADATA_FILE)


def _require(metadata: dict, key: str, source: Traversable, expected_type: type | tuple) -> Any:
    if key not in metadata:
        raise DataFileError(source, f"missing key {key!r}")
    value = metadata[key]
    if not isinstance(value, expected_type):
        raise DataFileError(source, f"key {key!r} has the wrong type {type(value).__name__}")
    return value


def _record_from_folder(folder: Traversable, kind: str) -> DatasetRecord:
    metadata_file = folder.joinpath(METADATA_FILE)
    text = read_text(metadata_file)
    try:
        metadata = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise DataFileError(metadata_file, f"invalid TOML ({error})") from error
    name = _require(metadata, "name", metadata_file, str)
    declared_kind = _require(metadata, "kind", metadata_file, str)
    if declared_kind != kind:
        raise DataFileError(
            metadata_file, f"kind {declared_kind!r} does not match its folder (expected {kind!r})"
        )
    if kind == "fe_matrices":
        n = _require(metadata, "n_equations", metadata_file, int)
        shape: tuple[int, ...] = (n, n)
    else:
        shape = (_require(metadata, "n_samples", metadata_file, int),)
    return DatasetRecord(
        name=name,
        kind=kind,
        title=_require(metadata, "title", metadata_file, str),
        units=RETURNED_UNITS[kind],
        units_as_stored=dict(_require(metadata, "units", metadata_file, dict)),
        shape=shape,
        source=_require(metadata, "source", metadata_file, str),
        origin=" ".join(_require(metadata, "origin", metadata_file, str).split()),
        citation=_require(metadata, "citation", metadata_file, str),
        description=" ".join(_require(metadata, "description", metadata_file, str).split()),
        metadata=metadata,
        folder=folder,
    )


def list_datasets(
    kind: str | None = None, *, root: str | os.PathLike | Traversable | None = None
) -> list[DatasetRecord]:
    """All shipped datasets (or those of one ``kind``), sorted by kind then name.

    >>> [d.name for d in list_datasets("hysteresis_test")]
    ['daniel', 'gill', 'kunnath']
    """
    if kind is not None and kind not in KIND_FOLDERS:
        raise ParameterError(f"kind must be one of {sorted(KIND_FOLDERS)}; got {kind!r}")
    base = data_root(root)
    records = []
    for each_kind, folder_name in KIND_FOLDERS.items():
        if kind is not None and each_kind != kind:
            continue
        kind_folder = base.joinpath(folder_name)
        if not kind_folder.is_dir():
            raise DataFileError(kind_folder, "the dataset folder is missing from the package")
        for folder in sorted(kind_folder.iterdir(), key=lambda f: f.name):
            if folder.is_dir() and folder.joinpath(METADATA_FILE).is_file():
                records.append(_record_from_folder(folder, each_kind))
    return sorted(records, key=lambda r: (list(KIND_FOLDERS).index(r.kind), r.name))


def get_dataset(
    name: str, kind: str | None = None, *, root: str | os.PathLike | Traversable | None = None
) -> DatasetRecord:
    """The shipped dataset called ``name``.

    Raises :class:`UnknownDatasetError` (a ValueError listing the valid names) if there
    is none (of that ``kind``).
    """
    records = list_datasets(kind, root=root)
    for record in records:
        if record.name == name:
            return record
    raise UnknownDatasetError(
        name, [r.name for r in records], kind.replace("_", " ") if kind else None
    )
