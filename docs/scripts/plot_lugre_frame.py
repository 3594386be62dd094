"""Regenerates docs/figures/lugre_frame_*.png: the flagship run (``rths-ident run
lugre-frame``, defaults: El Centro 1940 full record, RLS updating, fused engine) and its
figures, as the command writes them.

Run from the repository root: ``python docs/scripts/plot_lugre_frame.py`` (about a
minute on 2 cores).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import rths_ident

from rths_ident.scenarios import lugre_frame
from rths_ident.runner.options import RunOptions

rths_ident.configure()  # before any JAX computation: XLA's small-loop kernels, as the command line

FIGURES = Path(__file__).resolve().parents[1] / "figures"
SHOWN = ("tracking", "reference_vs_hybrid", "specimen_hysteresis", "parameters", "updating_vs_none")


def main() -> list[Path]:
    cfg = lugre_frame.CONFIG()  # the defaults, as `rths-ident run lugre-frame`
    result = lugre_frame.run_scenario(cfg, RunOptions(engine="fused", compare=True))
    written = []
    with tempfile.TemporaryDirectory() as folder:
        for path in lugre_frame.plot(result, folder):
            if path.stem in SHOWN:
                target = FIGURES / f"lugre_frame_{path.stem}.png"
                shutil.copyfile(path, target)
                written.append(target)
    return written


if __name__ == "__main__":
    for path in main():
        print(f"wrote {path}")
