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


def test_ground_motion_plot_is_in_the_unit_the_loader_returns(tmp_path, monkeypatch):
    """`datasets show --plot` draws a_g in m/s², the unit load_ground_motion returns and
    `datasets show` states ("units returned"), not in g as stored."""
    import numpy as np
    from matplotlib.figure import Figure

    from rths_ident.datasets import get_dataset, load_ground_motion

    saved = []
    original = Figure.savefig
    monkeypatch.setattr(Figure, "savefig", lambda self, *a, **k: (saved.append(self), original(self, *a, **k)))
    plot_dataset("elcentro_1940", tmp_path / "ec.png")
    axes = saved[0].axes[0]
    t, ag = load_ground_motion("elcentro_1940")
    np.testing.assert_array_equal(axes.lines[0].get_ydata(), ag)
    assert axes.get_ylabel() == "ground acceleration [m/s²]"
    assert "ag [m/s²]" in get_dataset("elcentro_1940").units
