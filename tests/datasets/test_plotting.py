"""Quick-look plots are written as PNG files."""

from __future__ import annotations

import pytest

from rths_ident.datasets.plotting import plot_dataset

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("name", ["elcentro_1940", "gill", "marths_numerical"])
def test_plot_writes_a_png(tmp_path, name):
    output = tmp_path / f"{name}.png"
    plot_dataset(name, output)
    data = output.read_bytes()
    assert data.startswith(PNG_SIGNATURE)
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (800, 450)  # figsize 8 x 4.5 in at 100 dpi
