"""The NS session's payload conventions: a setup's floats survive JSON exactly (so a
record sent in the HELLO is bit-identical on the server), step logs round-trip with
their names, shapes and dtypes, and malformed pieces are ProtocolErrors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rths_ident.transport import ProtocolError
from rths_ident.transport import ns_messages as nsm
from rths_ident.transport.framed import MessageType, decode_message, encode_message


def test_setup_floats_cross_json_exactly():
    rng = np.random.default_rng(3)
    record = np.concatenate([rng.normal(0, 3, 2000), rng.normal(0, 1e-300, 10), [5e-324, 1.7976931348623157e308, -0.0]])
    encoded = encode_message(MessageType.HELLO, 0, nsm.client_hello({"dt": 0.02, "ground_accel": record}))
    setup = nsm.setup_from_json(decode_message(encoded).value["setup"])
    assert setup["ground_accel"].tobytes() == record.tobytes()  # bit for bit, −0.0 included
    assert setup["dt"] == 0.02


def test_setup_refuses_what_json_cannot_carry():
    with pytest.raises(ValueError, match=r"setup\['ground_accel'\]: nan cannot travel"):
        nsm.client_hello({"ground_accel": np.array([0.0, np.nan])})
    with pytest.raises(TypeError, match="object cannot travel"):
        nsm.client_hello({"model": object()})


def test_log_round_trip_keeps_names_shapes_and_dtypes():
    log = {"displacement": np.array([1.5, -2.25, 3e-17]), "time": np.asarray(0.04), "flags": np.array([[1, 0]]),
           "converged": np.array(True), "count": np.array([2**53], dtype=np.int64)}
    layout = nsm.log_layout(log)
    layout = nsm.check_layout(json.loads(json.dumps(layout)))  # as a HELLO carries it
    back = nsm.unflatten_log(layout, nsm.flatten_log(log))
    assert list(back) == list(log)
    for name, value in log.items():
        assert back[name].dtype == value.dtype and back[name].shape == value.shape
        np.testing.assert_array_equal(back[name], value)


def test_log_packer_and_plan_give_what_flatten_and_unflatten_give():
    """The server's packer (layout worked out again only when the log changes) and the
    client's plan against flatten_log / unflatten_log, step by step through a layout
    change, a log of plain floats, and back."""
    target = np.array([0.125])
    steps = [{"u": np.array([1.5, -2.0]), "time": np.asarray(0.01), "count": np.array([3], dtype=np.int64)},
             {"u": np.array([2.5, -3.0]), "time": np.asarray(0.02), "count": np.array([4], dtype=np.int64)},
             {"u": np.array([2.5, -3.0, 7.0]), "time": np.asarray(0.03), "count": np.array([5], dtype=np.int64)},
             {"u": 1.25, "time": 0.04},
             {"u": 2.25, "time": 0.05}]
    packer, announced, changes = nsm.LogPacker(), None, []
    for log in steps:
        values, changed = packer.pack(target, log)
        layout = nsm.log_layout(log)
        changes.append(changed)
        assert changed == (layout != announced) and packer.layout == layout
        announced = layout
        expected = np.concatenate([target, nsm.flatten_log(log)])
        assert all(isinstance(v, float) or isinstance(v, int) for v in values)
        np.testing.assert_array_equal(np.asarray(values, dtype=np.float64), expected)
        back = nsm.unflatten_planned(nsm.log_plan(layout), expected[1:])
        reference = nsm.unflatten_log(layout, expected[1:])
        assert list(back) == list(reference)
        for name in reference:
            assert back[name].dtype == reference[name].dtype and back[name].shape == reference[name].shape
            np.testing.assert_array_equal(back[name], reference[name])
    assert changes == [True, False, True, True, False]
    with pytest.raises(ProtocolError, match="the layout announced 3 values, 2 arrived"):
        nsm.unflatten_planned(nsm.log_plan([["u", [3], "<f8"]]), np.zeros(2))


def test_bad_logs_and_layouts_are_named():
    with pytest.raises(TypeError, match="entry 'name': dtype <U3 cannot travel"):
        nsm.log_layout({"name": np.array("abc")})
    with pytest.raises(ProtocolError, match="the layout announced 3 values, 2 arrived"):
        nsm.unflatten_log([["u", [3], "<f8"]], np.zeros(2))
    with pytest.raises(ProtocolError, match="HELLO log layout"):
        nsm.check_layout([["u", "three", "<f8"]])


def test_hello_checks_protocol_version_and_role():
    hello = nsm.client_hello({})
    nsm.check_hello(hello, nsm.CLIENT_ROLE)
    with pytest.raises(ProtocolError, match="expected 'ns-server', got 'ns-client'"):
        nsm.check_hello(hello, nsm.SERVER_ROLE)
    with pytest.raises(ProtocolError, match="unsupported session protocol version"):
        nsm.check_hello({**hello, "version": 2}, nsm.CLIENT_ROLE)
    with pytest.raises(ProtocolError, match="not an rths_ident numerical-substructure peer"):
        nsm.check_hello({"role": "ns"}, nsm.CLIENT_ROLE)
