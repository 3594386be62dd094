"""Your own ground-motion file (rths_ident.datasets.user_ground_motion): the shipped
El Centro written as a PEER .AT2, a one-column text in g and a two-column CSV in cm/s²
reads back as the shipped record; bad files and arguments are clear errors."""

import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.errors import DataFileError
from rths_ident.datasets import STANDARD_GRAVITY, load_ground_motion
from rths_ident.datasets.user_ground_motion import check_record_argument, load_record, load_user_ground_motion


@pytest.fixture(scope="module")
def elcentro():
    return load_ground_motion("elcentro_1940")


def write_at2(path, ag_g, dt=0.02):
    lines = ["PEER NGA STRONG MOTION DATABASE RECORD", "IMPERIAL VALLEY 5/19/40, EL CENTRO, 180",
             "ACCELERATION TIME HISTORY IN UNITS OF G", f"NPTS=  {ag_g.size}, DT= {dt:.4f} SEC"]
    lines += ["  ".join(f"{v:.7E}" for v in ag_g[i:i + 5]) for i in range(0, ag_g.size, 5)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_three_formats_read_back_as_the_shipped_record(tmp_path, elcentro):
    t, ag = elcentro
    one_column = tmp_path / "ec.txt"
    np.savetxt(one_column, ag / STANDARD_GRAVITY, fmt="%.10f")
    two_columns = tmp_path / "ec.csv"
    np.savetxt(two_columns, np.c_[t + 5.0, ag * 100], fmt="%.10f", delimiter=",", header="t,acc", comments="")
    at2 = write_at2(tmp_path / "ec.AT2", ag / STANDARD_GRAVITY)
    for path, kwargs in ((one_column, {"dt": 0.02, "units": "g"}), (two_columns, {"units": "cm/s2"}),
                         (at2, {})):
        t_user, ag_user = load_user_ground_motion(path, **kwargs)
        np.testing.assert_allclose(t_user, t, atol=1e-9)  # from 0 (the CSV started at 5 s)
        np.testing.assert_allclose(ag_user, ag, atol=1e-6 * np.max(np.abs(ag)))
    np.testing.assert_array_equal(load_record("elcentro_1940")[1], ag)


def test_misspelt_name_lists_the_shipped_records():
    with pytest.raises(ParameterError, match=r"unknown record 'elcentro': not a shipped ground motion "
                                             r"\(elcentro_1940 \| .*\) nor a file"):
        check_record_argument("elcentro")


@pytest.mark.parametrize("content, kwargs, error, message", [
    ("0.1\n0.2\n", {"units": "g"}, ParameterError, "give its time step"),
    ("0.1\n0.2\n", {"dt": 0.02}, ParameterError, "give the acceleration's units"),
    ("0.1\n0.2\n", {"dt": -1.0, "units": "g"}, ParameterError, "record_dt = -1.0"),
    ("0.1\n0.2\n", {"dt": 0.02, "units": "gal"}, ParameterError, "record_units = 'gal'"),
    ("0,0.1,3\n0.02,0.2,4\n", {"units": "g"}, DataFileError, "one column .* or two"),
    ("0,0.1\n0.02,0.2\n0.05,0.1\n", {"units": "g"}, DataFileError, "line 3"),
    ("0,0.1\n0.02,0.2\n", {"units": "g", "dt": 0.01}, DataFileError, "steps by 0.02 s but record_dt = 0.01 s"),
    ("t,a\n0,0.1\n0.02,abc\n", {"units": "g"}, DataFileError, "line 3: 'abc' is not a number"),
    ("0.1\n", {"dt": 0.02, "units": "g"}, DataFileError, "at least 2 samples"),
])
def test_bad_text_records(tmp_path, content, kwargs, error, message):
    path = tmp_path / "rec.txt"
    path.write_text(content)
    with pytest.raises(error, match=message):
        load_user_ground_motion(path, **kwargs)


def test_at2_takes_no_dt_or_units(tmp_path):
    path = write_at2(tmp_path / "r.at2", np.array([0.0, 0.1, -0.1]))
    with pytest.raises(ParameterError, match="states its time step and units"):
        load_user_ground_motion(path, units="g")
    with pytest.raises(ParameterError, match="apply to your own files only"):
        check_record_argument("elcentro_1940", dt=0.02)
