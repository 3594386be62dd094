"""PEER NGA .AT2 reader on small files written by the test, in both header variants."""

from __future__ import annotations

import numpy as np
import pytest
from _datasets_helpers import STANDARD_GRAVITY

from rths_ident.errors import DataFileError
from rths_ident.datasets import read_peer_at2

VALUES_G = np.array([0.0, 1.25e-3, -2.5e-3, 0.1, -0.3487, 0.02, 7.5e-4, -1.0e-5, 0.0, 0.0625, -0.125])


def _values_block(values, per_line=5, fmt="{:15.7E}"):
    lines = []
    for start in range(0, len(values), per_line):
        lines.append("".join(fmt.format(v) for v in values[start : start + per_line]))
    return "\n".join(lines)


def _write_at2(path, line4, values=VALUES_G, units_line="ACCELERATION TIME SERIES IN UNITS OF G", fmt="{:15.7E}"):
    header = [
        "PEER NGA STRONG MOTION DATABASE RECORD",
        "Test event 1/1/2000, Test station, 090",
        units_line,
        line4,
    ]
    path.write_text("\n".join(header) + "\n" + _values_block(values, fmt=fmt) + "\n")
    return path


@pytest.mark.parametrize(
    "line4",
    [
        "NPTS=   11, DT=   .0050 SEC",                   # NGA-West2
        "NPTS=     11, DT=   0.0050 SEC,",
        "   11    0.0050    NPTS, DT",                    # older NGA files
        "11 .005 NPTS, DT",
    ],
)
def test_both_header_variants_give_time_and_si_acceleration(tmp_path, line4):
    path = _write_at2(tmp_path / "RSN1_TEST.AT2", line4)
    t, ag, meta = read_peer_at2(path)
    np.testing.assert_allclose(t, 0.005 * np.arange(11), rtol=0, atol=1e-15)
    np.testing.assert_allclose(ag, VALUES_G * STANDARD_GRAVITY, rtol=1e-7, atol=1e-12)  # file keeps 8 digits
    assert meta["npts"] == 11 and meta["dt"] == 0.005 and meta["units"] == "g"
    assert meta["event"] == "Test event 1/1/2000, Test station, 090"
    assert meta["source"] == str(path)


def test_fortran_style_values_without_leading_zero(tmp_path):
    path = tmp_path / "OLD.AT2"
    path.write_text(
        "PEER STRONG MOTION DATABASE RECORD. PROCESSING BY PACIFIC ENGINEERING.\n"
        "IMPERIAL VALLEY 05/19/40 0439, EL CENTRO ARRAY #9, 180\n"
        "ACCELERATION TIME HISTORY IN UNITS OF G\n"
        "    4    .01000    NPTS, DT\n"
        "  .6300E-02  .3640E-02 -.9900E-03\n"
        "  .4280D-02\n"
    )
    t, ag, meta = read_peer_at2(path)
    np.testing.assert_allclose(ag / STANDARD_GRAVITY, [0.0063, 0.00364, -0.00099, 0.00428], rtol=1e-12)
    np.testing.assert_allclose(t, [0.0, 0.01, 0.02, 0.03], atol=1e-15)


def test_cm_per_s2_units_are_converted(tmp_path):
    path = _write_at2(tmp_path / "CM.AT2", "NPTS= 11, DT= .01 SEC", values=VALUES_G * 100,
                      units_line="ACCELERATION TIME HISTORY IN UNITS OF CM/S/S")
    _, ag, meta = read_peer_at2(path)
    assert meta["units"] == "cm/s^2"
    np.testing.assert_allclose(ag, VALUES_G, rtol=1e-7, atol=1e-12)


def test_fewer_values_than_npts_is_an_error(tmp_path):
    path = _write_at2(tmp_path / "SHORT.AT2", "NPTS=   12, DT=   .0050 SEC")
    with pytest.raises(DataFileError, match="NPTS = 12 on line 4 but the file has 11 values") as info:
        read_peer_at2(path)
    assert str(path) in str(info.value)


def test_more_values_than_npts_names_the_line(tmp_path):
    path = _write_at2(tmp_path / "LONG.AT2", "NPTS=   10, DT=   .0050 SEC")
    with pytest.raises(DataFileError, match="more values than NPTS = 10") as info:
        read_peer_at2(path)
    assert info.value.line == 7  # values 6-10 on line 6, value 11 on line 7


def test_bad_npts_line_names_line_4(tmp_path):
    path = _write_at2(tmp_path / "BAD.AT2", "NUMBER OF POINTS 11")
    with pytest.raises(DataFileError, match="NPTS and DT") as info:
        read_peer_at2(path)
    assert info.value.line == 4


def test_unknown_units_name_line_3(tmp_path):
    path = _write_at2(tmp_path / "VEL.AT2", "NPTS= 11, DT= .01 SEC", units_line="VELOCITY TIME SERIES IN UNITS OF FURLONGS")
    with pytest.raises(DataFileError, match="units") as info:
        read_peer_at2(path)
    assert info.value.line == 3


def test_non_number_names_its_line(tmp_path):
    path = _write_at2(tmp_path / "TXT.AT2", "NPTS= 11, DT= .01 SEC")
    lines = path.read_text().splitlines()
    lines[5] = lines[5] + "  oops"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataFileError, match="'oops' is not a number") as info:
        read_peer_at2(path)
    assert info.value.line == 6


def test_missing_file_and_short_header(tmp_path):
    with pytest.raises(DataFileError, match="cannot read"):
        read_peer_at2(tmp_path / "absent.AT2")
    short = tmp_path / "short.AT2"
    short.write_text("PEER\nonly two lines\n")
    with pytest.raises(DataFileError, match="4-line header"):
        read_peer_at2(short)
