"""FMI-level instances through fmud.Client: instantiate, fmi batches, free, detach."""

import math

import pytest

import fmud
from conftest import FEEDTHROUGH, LINEAR_ODE

U = list(range(10, 20))
Y = list(range(20, 30))


def _step(inst, t, h, u):
    return [{"instance": inst, "fn": "set", "type": "Float64", "vrs": U, "values": u},
            {"instance": inst, "fn": "doStep", "t": t, "h": h},
            {"instance": inst, "fn": "get", "type": "Float64", "vrs": Y}]


def test_a_batch_sets_steps_and_gets_what_the_fmu_computes(client):
    a = client.instantiate(LINEAR_ODE, instance_name="a")
    assert [s["kind"] for s in client.list() if s["session"] == a] == ["instance"]
    client.fmi([{"instance": a, "fn": "enterInitializationMode"},
                {"instance": a, "fn": "exitInitializationMode"}])
    x = 1.0
    for k in range(3):
        u = [float(k + i) for i in range(10)]
        res = client.fmi(_step(a, k * 0.1, 0.1, u))
        x *= math.exp(-0.1)
        assert res[0] is None
        assert res[1]["lastSuccessfulTime"] == pytest.approx((k + 1) * 0.1)
        assert res[2] == [x + ui for ui in u]
    assert client.free(a) is None
    assert client.list() == []


def test_a_refused_call_names_its_index_and_function_and_keeps_earlier_results(client):
    a = client.instantiate(LINEAR_ODE)
    with pytest.raises(fmud.StateError) as e:
        client.fmi(_step(a, 0, 0.1, [0.0] * 10))
    assert e.value.index == 1
    assert e.value.function == "fmi3DoStep"
    assert e.value.results == [None]
    assert "calls[1] (instance %d): fmi3DoStep" % a in e.value.message
    with pytest.raises(fmud.NoSession):
        client.fmi([{"instance": a + 100, "fn": "terminate"}])


def test_detach_keeps_a_transient_instance_and_refuses_what_is_not_transient(client):
    a = client.instantiate(LINEAR_ODE, transient=True)
    assert [s.get("transient") for s in client.list() if s["session"] == a] == [True]
    assert client.detach(instance=a) is None
    assert [s.get("transient") for s in client.list() if s["session"] == a] == [None]
    with pytest.raises(fmud.StateError) as e:
        client.detach(instance=a)
    assert "is not transient: nothing to detach" in e.value.message


def test_arrays_take_one_value_per_element_and_configuration_mode_sizes_them(client):
    a = client.instantiate(FEEDTHROUGH)
    six = [0.5, 1.5, 2.5, 3.5, 4.5, 5.5]
    res = client.fmi([
        {"instance": a, "fn": "enterConfigurationMode"},
        {"instance": a, "fn": "set", "type": "UInt64", "vrs": [31], "values": [6]},
        {"instance": a, "fn": "exitConfigurationMode"},
        {"instance": a, "fn": "enterInitializationMode"},
        {"instance": a, "fn": "exitInitializationMode"},
        {"instance": a, "fn": "set", "type": "Float64", "vrs": [32], "values": six},
        {"instance": a, "fn": "doStep", "t": 0.0, "h": 0.1},
        {"instance": a, "fn": "get", "type": "Float64", "vrs": [33], "nValues": 6}])
    assert res[7] == six
    with pytest.raises(fmud.Invalid) as e:
        client.fmi([{"instance": a, "fn": "get", "type": "Float64", "vrs": [33]}])
    assert "nValues = 1, but the variable has 6 values" in str(e.value)
