"""Finding and reaching the daemon: the endpoint as fmuctl finds it, no daemon, keys, CURVE."""

import os
import socket

import pytest
import zmq

import fmud
from conftest import MSD, Daemon


def test_the_endpoint_is_the_argument_then_the_environment_then_the_runtime_dir(env, monkeypatch):
    run = os.environ["RUNTIME_DIRECTORY"]
    assert fmud.runtime_dir() == run
    monkeypatch.setenv("RUNTIME_DIRECTORY", run + ":/elsewhere")
    assert fmud.default_endpoint() == "ipc://%s/control.sock" % run
    monkeypatch.setenv("FMUD_ENDPOINT", "ipc:///nowhere/control.sock")
    from fmud.endpoint import resolve
    assert resolve("tcp://h:1") == "tcp://h:1"
    assert resolve() == "ipc:///nowhere/control.sock"


def test_the_users_own_socket_counts_only_when_nobody_else_may_write_its_folder(env, monkeypatch,
                                                                               tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root always takes the default endpoint")
    own = tmp_path / "own"
    own.mkdir(mode=0o700)
    monkeypatch.setenv("RUNTIME_DIRECTORY", str(own))
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(own / "control.sock"))
    system = tmp_path / "system"
    system.mkdir()
    assert fmud.client_endpoint(str(system)) == "ipc://%s/control.sock" % own
    os.chmod(own, 0o777)
    assert fmud.client_endpoint(str(system)) == "ipc://%s/control.sock" % system
    sock.close()


def test_the_daemon_is_found_through_the_runtime_dir(env, monkeypatch):
    d = Daemon()
    try:
        monkeypatch.setenv("RUNTIME_DIRECTORY", d.dir)
        with fmud.Client() as c:
            assert c.endpoint == d.endpoint
            assert c.status()["sessions"] == 0
    finally:
        d.stop()


def test_no_daemon_is_said_at_once(env, tmp_path):
    with pytest.raises(fmud.ConnectionFailed) as e:
        fmud.Client("ipc://%s/control.sock" % tmp_path)
    assert "no daemon listens there" in e.value.message
    assert e.value.code is None


def test_a_daemon_that_goes_away_fails_the_request_in_flight(env):
    d = Daemon()
    try:
        with fmud.Client(d.endpoint) as c:
            s = c.load(MSD, stop=1e6)["session"]
            c.start(s)
            d.proc.kill()
            with pytest.raises(fmud.ConnectionFailed) as e:
                c.step(s, 1)            # waits as long as a step takes: the loss ends it
            assert "went away" in e.value.message
    finally:
        d.kill()


def test_a_key_file_that_holds_no_key_is_refused(env, tmp_path):
    bad = tmp_path / "bad.key"
    bad.write_text("not a key\n")
    with pytest.raises(fmud.Error) as e:
        fmud.Client("tcp://127.0.0.1:1", server_key=str(bad), key=str(bad))
    assert "does not hold one Z85 key" in e.value.message
    with pytest.raises(fmud.Error) as e:
        fmud.Client("tcp://127.0.0.1:1", server_key=str(bad))
    assert "needs both" in e.value.message


def free_ports(n):
    """n distinct free ports: all held at once, so the kernel cannot give one twice."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def write_key(path, key, mode=0o600):
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode), "w") as f:
        f.write(key.decode("ascii") + "\n")


def test_tcp_with_curve_serves_a_listed_key_and_refuses_another(env, tmp_path):
    if not zmq.has("curve"):
        pytest.skip("libzmq without CURVE")
    keys = tmp_path / "keys"
    keys.mkdir()
    server_pub, server_sec = zmq.curve_keypair()
    ok_pub, ok_sec = zmq.curve_keypair()
    _, bad_sec = zmq.curve_keypair()
    write_key(keys / "server.key", server_sec)
    write_key(keys / "server.pub", server_pub, 0o644)
    write_key(keys / "me.key", ok_sec)
    write_key(keys / "other.key", bad_sec)
    (keys / "authorized_keys").write_text("%s  # this test\n" % ok_pub.decode())
    ep, pub = ("tcp://127.0.0.1:%d" % p for p in free_ports(2))
    d = Daemon(conf="[control]\ntcp_endpoint = %s\ntcp_pub_endpoint = %s\n"
               "server_secret_key = %s\nauthorized_keys = %s\n"
               % (ep, pub, keys / "server.key", keys / "authorized_keys"))
    try:
        with fmud.Client(ep, server_key=str(keys / "server.pub"), key=str(keys / "me.key")) as c:
            assert c.pub_endpoint == pub
            s = c.load(MSD, stop=0.3)["session"]
            with c.subscribe(s, ["mass1.x1"]) as sub:     # samples over CURVE too
                c.start(s)
                rows = sub.rows()
            assert rows.time[-1] == pytest.approx(0.3)
            assert c.status(s)["user"] == "key " + ok_pub.decode()
            with pytest.raises(fmud.Unsupported) as e:
                c.rig(s)
            assert "remote_endpoint is not set" in e.value.message
        with pytest.raises(fmud.ConnectionFailed) as e:
            fmud.Client(ep, server_key=str(keys / "server.pub"), key=str(keys / "other.key"))
        assert "refused this client's key" in e.value.message
    finally:
        d.stop()
