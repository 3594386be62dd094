"""The kinds of test a test file can declare, by name: the one registry that
``rths-ident run|new|check``, ``show`` and the Python API read.

A kind is a module of :mod:`rths_ident.scenarios` with:

``DESCRIPTION``
    one line about it (``rths-ident run --list``);
``FIELDS``
    its test-file fields (:class:`~rths_ident.declaration.Field`: table, key, unit, allowed
    values, command-line option);
``config_from_values(values) -> config``
    its configuration from the checked values (by field target; targets ``run:…`` are
    how it is run, not what it is);
``run_scenario(config, options: RunOptions) -> dict``
    the run (:mod:`rths_ident.runner`);
``plot(result, out_dir) -> list[Path]``, ``report(result) -> str`` (optional)
    its figures and its printed report;
``ENGINES`` (optional)
    the engines it runs on (default both);
``fields_for(values) -> list[Field]`` (optional)
    its fields for the raw values (by ``"table.key"``) a file declares, when they depend
    on them (a model's parameters, a structure source);
``check_before_run(config)`` (optional)
    checks the configuration alone cannot make (building a user's OpenSees model):
    ``rths-ident check`` runs them.

Every shipped test is a test file of one of these kinds (``scenarios/shipped/NAME.toml``);
modules are imported when a kind is asked for, so ``rths-ident --help`` stays fast.
"""

from __future__ import annotations

import dataclasses
import importlib
from importlib import resources
from typing import Any

from rths_ident.declaration import Field, TestFile, parse_test_text, read_test_file
from rths_ident.errors import ParameterError
from rths_ident.registry import Registry

__all__ = ["TestKind", "TEST_KINDS", "SHIPPED_TESTS", "shipped_test_file", "kind_of", "config_values"]


@dataclasses.dataclass(frozen=True)
class TestKind:
    """One registered kind of test (module doc)."""

    #: not a pytest test class (the name starts with "Test")
    __test__ = False

    description: str
    module_name: str

    @property
    def module(self):
        return importlib.import_module(self.module_name)

    @property
    def fields(self) -> list[Field]:
        """The kind's fields (with its default model, for a kind whose fields depend on one)."""
        return self.module.FIELDS

    def fields_for(self, values: dict) -> list[Field]:
        """The kind's fields for a test whose raw values (by ``"table.key"``) are ``values``:
        a kind whose fields depend on what the file declares (its model, ``specimen.model``;
        its structure source) has ``fields_for(values)``."""
        depends = getattr(self.module, "fields_for", None)
        return self.module.FIELDS if depends is None else depends(values)

    @property
    def engines(self) -> tuple:
        return getattr(self.module, "ENGINES", ("fused", "stepwise"))

    def config(self, values: dict):
        """The kind's configuration from checked values (``run:…`` targets left out), and
        what it runs in this process installed (OpenSeesPy and its system libraries for
        an OpenSees substructure here: :func:`~rths_ident.scenarios.remote_ns.check_opensees_here`)."""
        from rths_ident.scenarios import remote_ns  # noqa: PLC0415

        cfg = self.module.config_from_values(config_values(values))
        remote_ns.check_opensees_here(cfg)
        return cfg


def config_values(values: dict) -> dict:
    """The values that configure the test (not how it is run)."""
    return {k: v for k, v in values.items() if not k.startswith("run:")}


#: test kind name -> :class:`TestKind`
TEST_KINDS: Registry[TestKind] = Registry("test kind", {
    "lugre-frame": TestKind("seed 001's steel frame, one modified-LuGre column tested, RLS (or UKF) updating of "
                            "the other eight", "rths_ident.scenarios.lugre_frame"),
    "bw-frame": TestKind("seed 001's frame with degrading Bouc-Wen columns (seed 000 Case 4, scaled), joint-UKF "
                         "updating", "rths_ident.scenarios.bw_frame"),
    "rc-frame": TestKind("seed 000 Case 4: 3-storey 2-bay RC frame (native linear or OpenSeesPy), degrading "
                         "Bouc-Wen column tested", "rths_ident.scenarios.rc_frame"),
    "marths": TestKind("the multi-axial RTHS benchmark (seed 004): 2×2 actuator plant, coupler, LQG or dAMB, "
                       "J1–J10", "rths_ident.scenarios.marths"),
    "rig-sdof": TestKind("seed 002's SDOF hybrid tests on its servo rig (emulated by default; site serial:PORT for "
                         "a real one)", "rths_ident.scenarios.rig_sdof"),
    "rig-bridge": TestKind("seed 002's two-mass bridge on the servo rig (cases 4–5)",
                           "rths_ident.scenarios.rig_bridge"),
    "sdof": TestKind("seed 003's SDOF test (stiffness split, a spring behind the actuator): one specimen of "
                     "calibrate amb|damb|polynomial's population",
                     "rths_ident.scenarios.sdof"),
    "shear-frame": TestKind("your own frame (storeys of columns, M/K/C from CSV files or an OpenSeesPy model file), "
                            "one column of any registered model tested on the virtual side or a rig, joint-UKF "
                            "updating of its numerical copies",
                            "rths_ident.scenarios.shear_frame"),
})

#: the shipped tests: name -> its test file in this package (scenarios/shipped/NAME.toml)
SHIPPED_TESTS = ("lugre-frame", "bw-frame", "rc-frame", "marths", "rig-sdof", "rig-bridge", "sdof")


#: how a shipped test file names itself as the source of its values (``Where.source``)
SHIPPED_SOURCE = "{name} (shipped test)"


def is_shipped_source(source: str) -> bool:
    """Whether a value's source (``Where.source``) is a shipped test file."""
    return any(source == SHIPPED_SOURCE.format(name=name) for name in SHIPPED_TESTS)


def shipped_test_file(name: str) -> TestFile:
    """The shipped test file ``name`` (a clear error listing the shipped tests)."""
    if name not in SHIPPED_TESTS:
        raise ParameterError(f"unknown test {name!r}: expected one of {' | '.join(SHIPPED_TESTS)} or a test file "
                             "(FILE.toml) or a test record (FILE.h5)")
    text = resources.files("rths_ident.scenarios").joinpath("shipped", f"{name}.toml").read_text(encoding="utf-8")
    return parse_test_text(text, SHIPPED_SOURCE.format(name=name))


def kind_of(test_file: TestFile) -> tuple[str, TestKind]:
    """(name, :class:`TestKind`) of a test file's ``[test] kind``."""
    name = test_file.kind
    if name is None:
        raise ParameterError(f"{test_file.source}: no [test] kind: expected kind = one of {TEST_KINDS.choices()}")
    if name not in TEST_KINDS:
        where = test_file.where("test.kind")
        raise ParameterError(f"{where}: test.kind = {name!r}: expected one of {TEST_KINDS.choices()}")
    return name, TEST_KINDS[name]


def load_any(target: str) -> TestFile:
    """A shipped test's name, a test file (``.toml``) or a test record (``.h5``: the test
    file it keeps, so the same test runs again) → its :class:`TestFile`."""
    from pathlib import Path  # noqa: PLC0415

    target = str(target)
    if target in SHIPPED_TESTS:
        return shipped_test_file(target)
    path = Path(target)
    if path.suffix.lower() in (".h5", ".hdf5"):
        from rths_ident.records import read_test_record  # noqa: PLC0415

        text = read_test_record(path).config.get("test_file")
        if not text:
            raise ParameterError(f"{target}: this test record keeps no test file (written before records kept "
                                 "them, or by a server): nothing to run again")
        return parse_test_text(text, f"{target} (its test file)")
    if not path.exists() and path.suffix == "":
        shipped_test_file(target)  # not a file: the error names the shipped tests
    return read_test_file(target)


def kind_names() -> tuple:
    return TEST_KINDS.names()


def default_values(kind: TestKind, fields: list | None = None) -> dict[str, Any]:
    """Every field's default for ``kind`` (by target): the field's own, else the
    configuration's (None for a field the configuration does not have)."""
    from rths_ident.declaration import MISSING  # noqa: PLC0415

    config_class = getattr(kind.module, "CONFIG", None)
    defaults = {}
    config_fields = {f.name: f for f in dataclasses.fields(config_class)} if config_class is not None else {}
    for field in (kind.fields if fields is None else fields):
        if field.default is not MISSING:
            defaults[field.target] = field.default
        elif field.target in config_fields:
            f = config_fields[field.target]
            defaults[field.target] = f.default if f.default is not dataclasses.MISSING else None
        else:
            defaults[field.target] = None
    return defaults


def render_kind(name: str, values: dict | None = None, test_name: str | None = None) -> str:
    """A commented test file of kind ``name``: every field with its doc, unit and allowed
    values, set to ``values`` (by target) over the kind's defaults."""
    from rths_ident.declaration import render_test_file  # noqa: PLC0415

    kind = TEST_KINDS[name]
    by_target = values or {}
    fields = kind.fields_for({"specimen.model": by_target.get("column_model"),
                              "structure.matrices": by_target.get("matrices"),
                              "structure.opensees_model": by_target.get("opensees_model")})
    merged = default_values(kind, fields)
    merged.update({"run:kind": name, "run:name": test_name or name, "run:description": kind.description})
    merged.update({k: v for k, v in (values or {}).items() if v is not None or k not in ("run:name", "run:description")})
    header = (f"rths-ident test file: {merged['run:name']}\n{merged['run:description']}\n\n"
              "Run it: rths-ident run THIS_FILE.toml   (check it: rths-ident check THIS_FILE.toml)\n"
              "Units: SI unless a field says otherwise. Leave a field out (or comment it) for its default.")
    return render_test_file(fields, merged, header)


#: where a run writes its outputs: not part of the test a record keeps (a record run
#: again writes its own outputs, never over the first run's)
OUTPUT_TARGETS = ("run:json", "run:plots", "run:test_record")


def kept_values(values: dict) -> dict:
    """The values a test record keeps of its test: everything but the outputs."""
    return {k: v for k, v in values.items() if k not in OUTPUT_TARGETS}
