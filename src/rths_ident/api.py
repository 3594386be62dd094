"""Hybrid tests from Python: the same declaration as a test file, the same runner.

::

    import rths_ident

    test = rths_ident.load_test("lugre-frame")                  # a shipped test, FILE.toml or RECORD.h5
    test = test.with_changes(record={"duration": 10.0}, compensation={"kind": "amb"})
    result = test.run()                                         # a rths_ident.runner.run.RunResult
    result.metrics["J2_percent"], result.stopped

    own = rths_ident.HybridTest("shear-frame", structure={"storeys": 2, "columns_per_storey": 3},
                                specimen={"model": "bilinear", "k": 1540.0, "fy": 8.0, "b": 0.05})
    own.save("my_frame.toml")                                   # the commented test file of the same test

Tables and keys are those of the test file (``rths-ident run KIND --help`` lists them,
with units); values are checked by the same fields, and an error names the table, the
key and what is expected.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from rths_ident.declaration import Override, TestFile, resolve_values
from rths_ident.errors import ParameterError

__all__ = ["HybridTest", "load_test"]


class HybridTest:
    """A hybrid test: its kind and its test-file values (module doc).

    kind : a test kind (``rths_ident.scenarios.kinds.TEST_KINDS``: ``shear-frame``,
        ``lugre-frame``, …).
    tables : ``table={"key": value, …}`` as in a test file (SI units unless the field
        says otherwise); what is left out takes the kind's default.
    """

    #: not collected by pytest when a test module imports it
    __test__ = False

    def __init__(self, kind: str, _test_file: TestFile | None = None, **tables: Mapping[str, Any]):
        from rths_ident.scenarios.kinds import TEST_KINDS  # noqa: PLC0415

        self.kind_name = kind
        self.kind = TEST_KINDS[kind]
        self._test_file = _test_file
        self._tables = {name: dict(table) for name, table in tables.items()}
        for name, table in self._tables.items():
            if not isinstance(table, Mapping):
                raise ParameterError(f"{name}= must be a table of key: value (a dict); got {table!r}")
        self.values, self.origin = self._resolve()
        self.config = self.kind.config(self.values)  # the kind's own checks, now

    def _overrides(self) -> list[Override]:
        return [Override(f"{table}.{key}", value, f"{table}={{{key!r}: …}}")
                for table, entries in self._tables.items() for key, value in entries.items()]

    def _resolve(self):
        overrides = self._overrides()
        raw = dict(self._test_file.values) if self._test_file is not None else {}
        raw.update({o.path: o.value for o in overrides})
        fields = self.kind.fields_for(raw)
        return resolve_values(fields, self._test_file, overrides)

    @property
    def name(self) -> str:
        return self.values.get("run:name") or self.kind_name

    def with_changes(self, **tables: Mapping[str, Any]) -> "HybridTest":
        """The same test with some values changed (``table={"key": value}``)."""
        merged = {name: dict(table) for name, table in self._tables.items()}
        for name, table in tables.items():
            merged.setdefault(name, {}).update(table)
        return HybridTest(self.kind_name, self._test_file, **merged)

    def to_toml(self) -> str:
        """The commented test file of this test (``rths-ident run`` runs it as it is)."""
        from rths_ident.scenarios.kinds import render_kind  # noqa: PLC0415

        return render_kind(self.kind_name, self.values, self.name)

    def save(self, path) -> Path:
        """Write :meth:`to_toml` to ``path`` (a ``.toml`` file)."""
        path = Path(path)
        if path.suffix.lower() != ".toml":
            raise ParameterError(f"{path}: a test file ends in .toml")
        path.write_text(self.to_toml(), encoding="utf-8")
        return path

    def run(self, engine: str | None = None, compare: bool | None = None, realtime: bool | None = None,
            test_record=None, events=None):
        """Run the test; returns a :class:`~rths_ident.runner.run.RunResult`.

        engine : ``"fused"`` or ``"stepwise"`` (None: the file's, else fused when every
            part is native). compare / realtime : None: the file's. test_record : a path
            for the record (None: the file's ``outputs.record``, else no record). events :
            an :class:`~rths_ident.runner.events.EventStream` to watch the run."""
        from rths_ident.runner.options import RunOptions  # noqa: PLC0415
        from rths_ident.runner.run import check_engine, default_engine, run_test  # noqa: PLC0415
        from rths_ident.scenarios.kinds import kept_values, render_kind  # noqa: PLC0415

        run = {k[len("run:"):]: v for k, v in self.values.items() if k.startswith("run:")}
        realtime = bool(run.get("realtime")) if realtime is None else realtime
        engine = engine or run.get("engine") or default_engine(self.kind.module, self.config, realtime)
        check_engine(self.kind_name, self.kind.module, engine, realtime)
        record = test_record if test_record is not None else run.get("test_record")
        options = RunOptions(engine=engine, compare=run.get("compare", True) if compare is None else compare,
                             realtime=realtime, test_record=None if record is None else Path(record),
                             test_file=render_kind(self.kind_name, kept_values(self.values), self.name),
                             events=events)
        return run_test(self.kind_name, self.kind.module, self.config, options, self.name)

    def report(self, result) -> str:
        """The lines ``rths-ident run`` prints for ``result``."""
        from rths_ident.runner.report import hybrid_test_report  # noqa: PLC0415
        from rths_ident.runner.run import result_dict  # noqa: PLC0415

        return getattr(self.kind.module, "report", hybrid_test_report)(result_dict(result))

    def plot(self, result, out_dir) -> list[Path]:
        """The figures of ``result`` in ``out_dir`` (created, one level)."""
        from rths_ident.runner.run import result_dict  # noqa: PLC0415

        return self.kind.module.plot(result_dict(result), Path(out_dir))

    def __repr__(self) -> str:
        return f"HybridTest({self.kind_name!r}, name={self.name!r})"


def load_test(target: str | Path, **tables: Mapping[str, Any]) -> HybridTest:
    """A shipped test's name, a test file (``.toml``) or a test record (``.h5``, the test
    it ran) as a :class:`HybridTest`, with ``tables`` changed."""
    from rths_ident.scenarios.kinds import kind_of, load_any  # noqa: PLC0415

    test_file = load_any(str(target))
    kind_name, _ = kind_of(test_file)
    return HybridTest(kind_name, test_file, **tables)
