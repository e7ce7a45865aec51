"""The control operations through fmud.Client against a real daemon: load, run, get, set, ..."""

import os

import pytest

import fmud
from conftest import FEEDTHROUGH, FMUS, LINEAR_ODE, MSD, read_csv


def test_hello_names_the_server_and_its_pub_socket(client, daemon):
    assert client.server.startswith("fmud ")
    assert client.pub_endpoint == daemon.pub_endpoint
    assert client.max_msg == 16 * 1024 * 1024
    assert client.hello()["version"] == fmud.PROTO_VERSION


def test_a_version_the_daemon_does_not_serve_is_a_version_error(client):
    with pytest.raises(fmud.VersionError) as e:
        client.hello(version=99)
    assert "does not serve protocol version 99" in e.value.message
    assert client.status()["sessions"] == 0          # the connection goes on


def test_load_run_to_the_end_and_read_the_results(client, daemon):
    out = daemon.path("msd.csv")
    res = client.load(MSD, out=out, stop=1.0)
    s = res["session"]
    assert res["generation"] == 1
    assert res["out"] == out
    assert client.status(s)["state"] == "loaded"
    assert [x["session"] for x in client.list()] == [s]
    with client.events(s) as ev:
        assert client.start(s)["state"] in ("running", "finished")
        states = [e["state"] for e in ev]
    assert states[-1] == "finished"
    st = client.status(s)
    assert st["state"] == "finished"
    assert st["time"] == pytest.approx(1.0)
    r = client.get(s, ["mass1.x1", "mass2.x2"])
    assert r.time == pytest.approx(1.0)
    last = read_csv(out)[-1]
    assert r["mass1.x1"] == float(last["mass1.x1"])
    assert r["mass2.x2"] == float(last["mass2.x2"])
    assert client.unload(s) is None
    assert client.list() == []


def test_step_and_run_until_move_time_and_pause(client):
    s = client.load(MSD, stop=1.0)["session"]
    p = client.step(s, 3)
    assert (p["state"], p["points"]) == ("paused", 3)
    assert p["time"] == pytest.approx(0.03)
    p = client.run_until(s, 0.5)
    assert p["state"] == "paused"
    assert p["time"] == pytest.approx(0.5)
    with pytest.raises(fmud.Invalid):
        client.run_until(s, 0.25)
    assert client.status(s)["time"] == pytest.approx(0.5)     # nothing changed
    assert client.warp(s, 2.0)["state"] == "paused"
    assert client.status(s)["warp"] == 2.0
    assert client.stop(s)["state"] == "stopped"


def test_set_while_paused_is_what_get_answers_and_what_the_next_step_uses(client):
    s = client.load(LINEAR_ODE, stop=10.0)["session"]
    client.step(s, 1)
    x0 = client.get(s, "x")["x"]
    assert client.set(s, {"k": 0.0})["time"] == pytest.approx(client.status(s)["time"])
    assert client.get(s, ["k"])["k"] == 0.0
    client.step(s, 5)
    assert client.get(s, "x")["x"] == x0            # k = 0: x no longer moves


def test_values_of_every_type_go_and_come_back(client):
    np = pytest.importorskip("numpy")
    s = client.load(FEEDTHROUGH)["session"]
    values = {"Int32_input": -7, "Boolean_input": True, "String_input": "h\u00e9llo",
              "Binary_input": b"\x00\xff", "Float64_input": 2.5, "UInt64_input": 2 ** 64 - 1,
              "Int64_input": -(2 ** 63)}
    client.set(s, values)
    r = client.get(s, list(values))
    assert r.as_dict() == values
    assert r.values.dtype == object                 # mixed kinds: each as it is
    assert client.get(s, ["Int32_input", "Int64_input"]).values.dtype == np.int64
    assert client.get(s, ["UInt64_input"]).values.dtype == np.uint64
    assert client.get(s, ["Boolean_input"]).values.dtype == np.bool_


def test_get_answers_numpy_arrays_of_the_values_dtype(client):
    np = pytest.importorskip("numpy")
    s = client.load(MSD, stop=1.0)["session"]
    client.step(s, 2)
    r = client.get(s, ["mass1.x1", "mass1.v1", "mass2.x2"])
    assert isinstance(r.values, np.ndarray)
    assert r.values.dtype == np.float64
    assert r.values.shape == (3,)
    # A value read can be sent back as it is (NumPy scalars pack as numbers).
    s2 = client.load(LINEAR_ODE)["session"]
    k = client.get(s2, ["k"]).values[0]
    assert isinstance(k, np.float64)
    client.set(s2, {"k": k * 2})
    assert client.get(s2, ["k"])["k"] == 2.0


def test_vars_lists_every_variable_with_its_value(client):
    s = client.load(LINEAR_ODE)["session"]
    v = client.vars(s)
    byname = {x["name"]: x for x in v["vars"]}
    assert byname["k"]["type"] == "Float64"
    assert byname["k"]["causality"] == "parameter"
    assert byname["k"]["value"] == 1.0


def test_snapshot_and_restore_rewind_and_fence_the_old_generation(client):
    s = client.load(MSD, stop=1.0)["session"]
    client.step(s, 10)
    snap = client.snapshot(s)
    before = client.get(s, ["mass1.x1"])["mass1.x1"]
    client.step(s, 10)
    r = client.restore(s, snap["snapshot"], generation=1)
    assert (r["generation"], r["session"]) == (2, s)
    assert r["time"] == pytest.approx(snap["time"])
    assert client.get(s, ["mass1.x1"], generation=2)["mass1.x1"] == before
    with pytest.raises(fmud.Stale):
        client.step(s, 1, generation=1)
    assert client.status(s)["time"] == pytest.approx(snap["time"])   # nothing was stepped


def test_an_exported_snapshot_imports_into_another_session_and_restores(client, tmp_path):
    s = client.load(MSD, stop=1.0)["session"]
    client.step(s, 10)
    snap = client.snapshot(s)
    data = client.snapshot_export(s, snap["snapshot"])
    assert data[:8] == b"FMUDSNAP"
    path = tmp_path / "s.fmudsnap"
    assert client.snapshot_export(s, snap["snapshot"], path) == len(data)
    before = client.get(s, ["mass1.x1"])["mass1.x1"]
    t = client.load(MSD, stop=1.0)["session"]
    imp = client.snapshot_import(t, path)
    assert imp["time"] == snap["time"]
    assert [e["snapshot"] for e in client.snapshots(t)] == [imp["snapshot"]]
    client.restore(t, imp["snapshot"])
    assert client.get(t, ["mass1.x1"])["mass1.x1"] == before
    with pytest.raises(fmud.Invalid):
        client.snapshot_import(t, data[:len(data) // 2])
    assert len(client.snapshots(t)) == 1


def test_snapshots_are_listed_and_deleted(client):
    s = client.load(MSD, stop=1.0)["session"]
    a = client.snapshot(s)["snapshot"]
    client.step(s, 10)
    b = client.snapshot(s)["snapshot"]
    listed = client.snapshots(s)
    assert [e["snapshot"] for e in listed] == [a, b]
    assert listed[0]["time"] == 0 and listed[1]["time"] > 0
    assert all(e["generation"] == 1 and e["taken"] > 0 for e in listed)
    assert client.snapshot_delete(s, a) is None
    assert [e["snapshot"] for e in client.snapshots(s)] == [b]
    with pytest.raises(fmud.Invalid):
        client.restore(s, a)
    client.restore(s, b)


def test_logs_answers_the_fmus_messages(client):
    s = client.load(os.path.join(FMUS, "Misbehave.fmu"),
                    starts={"fault": 18, "at": 0, "count": 0})["session"]
    client.step(s, 1)
    msgs = client.logs(s)
    assert msgs and all(m["session"] == s for m in msgs)
    assert [m["seq"] for m in msgs] == list(range(1, len(msgs) + 1))


def test_an_array_start_is_given_as_a_list(client):
    # n sizes the vectors (FMI 3.0 section 2.4.7.2); the list goes as "1 2 ... 6".
    s = client.load(FEEDTHROUGH, starts={"n": 6, "Float64_vector_input": [1, 2, 3, 4, 5, 6.5]},
                    record=["Float64_output"])["session"]
    assert list(client.get(s, ["Float64_vector_input"]).values[0]) == [1, 2, 3, 4, 5, 6.5]
    s = client.load(FEEDTHROUGH, starts={"n": 2, "Float64_vector_input": (7, 8)},
                    record=["Float64_output"])["session"]
    assert list(client.get(s, ["Float64_vector_input"]).values[0]) == [7, 8]


def test_rig_answers_a_token_for_a_session_with_rig_ports(client):
    s = client.load(LINEAR_ODE, rig_in=["u0"])["session"]
    tok = client.rig(s)
    assert len(tok["token"]) == 32 and int(tok["token"], 16) >= 0
    assert tok["path"].endswith("/rig.sock")
    assert tok["expiresMs"] == 5000
    s2 = client.load(LINEAR_ODE)["session"]
    with pytest.raises(fmud.Invalid) as e:
        client.rig(s2)
    assert "has no rig ports" in e.value.message


def test_shutdown_stops_the_daemon(client, daemon):
    client.load(MSD)
    assert client.shutdown() is None
    daemon.join()


# ---- errors: each with its code and message, and nothing else harmed --------------------

def test_an_unknown_session_is_no_session(client):
    s = client.load(MSD)["session"]
    for call in (lambda: client.status(999), lambda: client.start(999),
                 lambda: client.get(999, ["x"]), lambda: client.unload(999)):
        with pytest.raises(fmud.NoSession) as e:
            call()
        assert "999" in e.value.message
    assert client.status(s)["state"] == "loaded"


def test_an_unknown_variable_is_no_variable_naming_it(client):
    s = client.load(MSD)["session"]
    with pytest.raises(fmud.NoVariable) as e:
        client.get(s, ["mass1.x1", "mass1.nosuch"])
    assert "mass1.nosuch" in e.value.message
    with pytest.raises(fmud.NoVariable):
        client.set(s, {"nosuch": 1.0})


def test_a_value_of_the_wrong_type_is_a_type_error_and_sets_nothing(client):
    s = client.load(FEEDTHROUGH)["session"]
    with pytest.raises(fmud.TypeMismatch) as e:
        client.set(s, {"Float64_input": 7.0, "Int32_input": "seven"})
    assert "Int32_input" in e.value.message
    assert client.get(s, ["Float64_input"])["Float64_input"] != 7.0


def test_an_operation_in_the_wrong_state_is_a_state_error(client):
    s = client.load(MSD)["session"]
    with pytest.raises(fmud.StateError):
        client.pause(s)
    assert client.status(s)["state"] == "loaded"


def test_bad_arguments_are_refused_before_or_by_the_daemon(client, daemon):
    with pytest.raises(TypeError):
        client.load(MSD, stepsize=0.1)                       # misspelt: never sent
    with pytest.raises(TypeError):
        client.step(1, n="2")
    with pytest.raises(fmud.BadRequest) as e:
        client.load(MSD, rig_policy="sometimes", rig_in=["u"])
    assert "rigPolicy" in e.value.message
    with pytest.raises(fmud.BadRequest) as e:
        client.load(MSD, step=-1.0)
    assert "step" in e.value.message
    with pytest.raises(fmud.Invalid):
        client.load(MSD, overrun="sometimes")
    with pytest.raises(fmud.Denied) as e:
        client.load("/etc/passwd")
    assert "allowed" in e.value.message
    assert client.list() == []                               # no session remains


def test_an_unknown_op_is_unknown_op(client):
    with pytest.raises(fmud.UnknownOp):
        client._call("teleport", {})


def test_a_structural_parameter_set_at_a_point_resizes_its_arrays(client):
    # Feedthrough's n sizes its vectors; recording only Float64_output leaves them unheld.
    s = client.load(FEEDTHROUGH, stop=10.0, step=0.01, record=["Float64_output"])["session"]
    client.step(s, 2)
    six = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    client.set(s, {"Float64_vector_input": six, "n": 6})
    assert list(client.get(s, ["Float64_vector_input"])["Float64_vector_input"]) == six
    client.step(s, 1)
    assert list(client.get(s, ["Float64_vector_output"])["Float64_vector_output"]) == six
    # Recorded at its load size: a resize is refused, and nothing changes.
    r = client.load(FEEDTHROUGH, stop=10.0, step=0.01)["session"]
    with pytest.raises(fmud.Invalid) as e:
        client.set(r, {"Float64_input": 9.0, "n": 6})
    assert "'Float64_vector_output' from [4] to [6]" in str(e.value)
    assert client.get(r, ["n"])["n"] == 4
    assert client.get(r, ["Float64_input"])["Float64_input"] != 9.0
