"""Output paths of the command line, checked before the work starts.

A run or a fit can take minutes; a ``--json`` into a folder that does not exist, or a
``--plots`` that names an existing file, must fail at once — not after the work, losing
it. The rules (one message naming the option and the path):

* an output **file** (``--json``, ``--plot``): its folder must exist and be writable;
  the path must not be an existing folder;
* an output **folder** (``--plots``): an existing folder (writable), or a new one whose
  parent exists — only the last level is created, never a tree of missing folders
  (a typing error would otherwise scatter results where nobody looks); a new one is not
  named like a file (``--plots fit.png`` is a file name given where a folder goes).
"""

from __future__ import annotations

import os
from pathlib import Path

from rths_ident.errors import ParameterError


class OutputPathError(ParameterError):
    """An output path given on the command line cannot be written."""


def _existing_writable_folder(option: str, path: Path, folder: Path, what: str) -> None:
    if not folder.exists():
        raise OutputPathError(f"{option} {path}: the folder {folder} does not exist (create it first; "
                              f"{what} are not created for you)")
    if not folder.is_dir():
        raise OutputPathError(f"{option} {path}: {folder} is a file, not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputPathError(f"{option} {path}: the folder {folder} is not writable")


#: suffixes of the files the commands write: a new output folder is not named so
FILE_SUFFIXES = (".png", ".pdf", ".svg", ".json", ".csv", ".h5", ".mat", ".txt", ".toml")

#: the file name suggested when an option is given a folder
EXAMPLE_FILE_NAMES = {"--test-record": "test_record.h5", "--plot": "plot.png"}


def check_output_file(option: str, path: str | os.PathLike, will_exist: Path | None = None) -> Path:
    """``path`` as a :class:`Path` if a file can be written there (module doc), else
    :class:`OutputPathError` naming ``option``. ``will_exist``: a folder the same
    command creates first (a checked ``--plots``), so the file may go into it."""
    target = Path(path)
    if target.is_dir() or str(path).endswith(("/", os.sep)):
        example = EXAMPLE_FILE_NAMES.get(option, "out.json")
        raise OutputPathError(f"{option} {path}: is a folder; give a file name (e.g. {target / example})")
    if will_exist is not None and target.parent.absolute() == will_exist.absolute():
        return target
    _existing_writable_folder(option, target, target.parent, "folders")
    if target.exists() and not os.access(target, os.W_OK):
        raise OutputPathError(f"{option} {path}: the file exists and is not writable")
    return target


def check_output_folder(option: str, path: str | os.PathLike) -> Path:
    """``path`` as a :class:`Path` if figures can be written into it (module doc),
    else :class:`OutputPathError` naming ``option``. Does not create it."""
    target = Path(path)
    if target.exists():
        if not target.is_dir():
            raise OutputPathError(f"{option} {path}: is an existing file, not a folder")
        if not os.access(target, os.W_OK | os.X_OK):
            raise OutputPathError(f"{option} {path}: the folder is not writable")
        return target
    if target.suffix.lower() in FILE_SUFFIXES:
        raise OutputPathError(f"{option} {path}: names a file; give a folder (the figures go into it), "
                              f"e.g. {target.with_suffix('')}")
    _existing_writable_folder(option, target, target.parent, "missing parent folders")
    return target
