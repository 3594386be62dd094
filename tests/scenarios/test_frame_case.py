"""The frame scenarios' shared pieces (rths_ident.scenarios.frame_case): the
reference's program is compiled at XLA's backend optimisation level 0, and its numbers
are those of the default compilation to rounding (the second implementation here: the
same reference compiled with XLA's defaults)."""

import numpy as np

from rths_ident import exported_programs, metrics
from rths_ident.scenarios import bw_frame as bf
from rths_ident.scenarios import frame_case


def _reference(monkeypatch, options):
    """The 3 s reference of bw-frame compiled with ``options``; the options used."""
    used = []
    compile_program = exported_programs.compile_program

    def recording(*args, **kwargs):
        used.append(kwargs.get("compiler_options"))
        return compile_program(*args, **kwargs)

    monkeypatch.setattr(frame_case, "REFERENCE_COMPILER_OPTIONS", options)
    monkeypatch.setattr(exported_programs, "compile_program", recording)
    monkeypatch.setattr(frame_case, "_REFERENCE_RUNNERS", {})
    test = bf.build(bf.BWFrameConfig(duration=3.0, seed=5))
    return test.reference(), used


def test_the_reference_compiles_at_level_0_and_equals_the_default_compilation(monkeypatch, store_off):
    assert frame_case.REFERENCE_COMPILER_OPTIONS == {"xla_backend_optimization_level": 0}
    (floors, force), used = _reference(monkeypatch, frame_case.REFERENCE_COMPILER_OPTIONS)
    assert used == [{"xla_backend_optimization_level": 0}]
    (floors_default, force_default), used_default = _reference(monkeypatch, None)
    assert used_default == [None]
    # measured: ≤ 5e-16 of the amplitude over the whole record
    np.testing.assert_allclose(floors, floors_default, rtol=0, atol=1e-13 * np.max(np.abs(floors_default)))
    np.testing.assert_allclose(force, force_default, rtol=0, atol=1e-13 * np.max(np.abs(force_default)))
    # a J4 of ~0.5 % against either reference: equal to 1e-9 relative (the run's metrics)
    response = floors_default[:, 2] * 1.004 + 1e-4 * np.max(np.abs(floors_default)) * np.sin(np.arange(len(floors)))
    j4 = metrics.j4_global_error(floors[:, 2], response)
    j4_default = metrics.j4_global_error(floors_default[:, 2], response)
    assert 0.1 < j4_default < 5.0
    assert abs(j4 - j4_default) <= 1e-9 * j4_default
