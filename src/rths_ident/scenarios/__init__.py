"""The shipped tests and the kinds of test a test file can declare.

Every shipped test (``lugre-frame``, ``bw-frame``, ``rc-frame``, ``marths``, ``rig-sdof``,
``rig-bridge``) is a test file in ``scenarios/shipped/`` of a registered kind
(:data:`~rths_ident.scenarios.kinds.TEST_KINDS`): the same runner runs it and your own
files. This package sits above everything it composes (ARCHITECTURE.md, "Layers");
the seeds' case content it needs lives with its family (seed 000's RC frame in
:mod:`rths_ident.structures.rc_frame`, seed 002's rig in :mod:`rths_ident.rigs`, seed
004's benchmark in :mod:`rths_ident.benchmarks.marths`) or in the kind's module here.
"""

from __future__ import annotations

from rths_ident.scenarios.kinds import SHIPPED_TESTS, TEST_KINDS, TestKind, load_any, shipped_test_file

__all__ = ["TEST_KINDS", "SHIPPED_TESTS", "TestKind", "load", "load_any", "shipped_test_file"]


def load(name: str):
    """The module of test kind ``name`` (a clear error listing the kinds)."""
    return TEST_KINDS[name].module
