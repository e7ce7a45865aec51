"""What the client makes of replies the protocol does not allow, from a scripted stand-in daemon.

The stand-in is a ROUTER on a private ipc socket that answers hello
properly (unless a test scripts hello) and every other request with the
bytes the test gives; each bad reply must be a ProtocolError (or the
Error the protocol says) naming what was wrong, and the connection must
go on serving the next request.
"""

import threading

import msgpack
import pytest
import zmq

import fmud


class StandIn:
    def __init__(self, path):
        self.endpoint = "ipc://%s/control.sock" % path
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.ROUTER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.bind(self.endpoint)
        self.script = {}            # op -> function(request id) -> list of reply bodies (bytes)
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def hello_result(self, **over):
        res = {"version": 1, "server": "stand-in", "pubEndpoint": "", "maxMsg": 1 << 24}
        res.update(over)
        return res

    def _serve(self):
        while not self.done.is_set():
            if not self.sock.poll(50):
                continue
            ident, body = self.sock.recv_multipart()
            req = msgpack.unpackb(body, raw=False)
            rid, op = req["id"], req["op"]
            if op in self.script:
                replies = self.script[op](rid)
            elif op == "hello":
                replies = [ok(rid, self.hello_result())]
            else:
                replies = [ok(rid, None)]
            for r in replies:
                self.sock.send_multipart([ident, r])

    def close(self):
        self.done.set()
        self.thread.join()
        self.sock.close(0)
        self.ctx.term()


def ok(rid, result):
    return msgpack.packb({"id": rid, "ok": True, "result": result}, use_bin_type=True)


def raw_map(*pairs):
    """A msgpack map of the given (key, value) pairs as they are, equal keys too."""
    out = bytes([0x80 | len(pairs)])
    for k, v in pairs:
        out += msgpack.packb(k) + msgpack.packb(v, use_bin_type=True)
    return out


@pytest.fixture
def standin(tmp_path):
    s = StandIn(tmp_path)
    yield s
    s.close()


def refused_with(standin, replies, call, what):
    standin.script["status"] = replies
    c = fmud.Client(standin.endpoint, timeout=10)
    try:
        with pytest.raises(fmud.ProtocolError) as e:
            call(c)
        assert what in e.value.message
        assert e.value.code is None
        standin.script.pop("status")
        assert c.status() is None           # the connection goes on
    finally:
        c.close()


def test_a_reply_that_is_not_a_map(standin):
    refused_with(standin, lambda rid: [msgpack.packb([rid, True])], lambda c: c.status(),
                 "the reply is not a map")


def test_a_reply_with_two_equal_keys(standin):
    refused_with(standin, lambda rid: [raw_map(("id", rid), ("ok", True), ("ok", False))],
                 lambda c: c.status(), "two equal keys")


def test_a_reply_with_an_extension_type(standin):
    refused_with(standin, lambda rid: [raw_map(("id", rid), ("ok", True),
                                               ("result", msgpack.ExtType(5, b"x")))],
                 lambda c: c.status(), "extension type")


def test_a_reply_without_ok(standin):
    refused_with(standin, lambda rid: [raw_map(("id", rid), ("result", None))],
                 lambda c: c.status(), "no 'ok'")


def test_a_refusal_without_a_code(standin):
    refused_with(standin, lambda rid: [raw_map(("id", rid), ("ok", False),
                                               ("error", {"message": "no"}))],
                 lambda c: c.status(), "no 'code'")


def test_get_with_fewer_values_than_names(standin):
    standin.script["get"] = lambda rid: [ok(rid, {"time": 0.0, "values": [1.0]})]
    with fmud.Client(standin.endpoint) as c:
        with pytest.raises(fmud.ProtocolError) as e:
            c.get(1, ["a", "b"])
    assert "1 values for 2 names" in e.value.message


def test_an_unknown_error_code_is_a_plain_error_with_that_code(standin):
    standin.script["status"] = lambda rid: [msgpack.packb(
        {"id": rid, "ok": False, "error": {"code": "teapot", "message": "short and stout"}})]
    with fmud.Client(standin.endpoint) as c:
        with pytest.raises(fmud.Error) as e:
            c.status()
    assert type(e.value) is fmud.Error
    assert (e.value.code, e.value.message, e.value.op) == ("teapot", "short and stout", "status")


def test_a_reply_to_another_request_is_passed_over(standin):
    standin.script["status"] = lambda rid: [ok(rid + 1000, {"stale": True}), ok(rid, {"n": rid})]
    with fmud.Client(standin.endpoint) as c:
        first = c.status()
        assert c.status() == {"n": first["n"] + 1}


def test_no_reply_in_time_is_a_timeout(standin):
    standin.script["status"] = lambda rid: []
    with fmud.Client(standin.endpoint, timeout=0.2) as c:
        with pytest.raises(fmud.Timeout) as e:
            c.status()
    assert "no reply" in e.value.message


def test_hello_with_another_version_or_a_bad_pub_endpoint_is_refused(standin):
    standin.script["hello"] = lambda rid: [ok(rid, standin.hello_result(version=2))]
    with pytest.raises(fmud.VersionError) as e:
        fmud.Client(standin.endpoint)
    assert "speaks protocol version 2" in e.value.message
    standin.script["hello"] = lambda rid: [ok(rid, standin.hello_result(
        pubEndpoint="tcp://evil host:1"))]
    with pytest.raises(fmud.ProtocolError) as e:
        fmud.Client(standin.endpoint)
    assert "invalid PUB endpoint" in e.value.message
    standin.script["hello"] = lambda rid: [ok(rid, standin.hello_result(maxMsg="big"))]
    with pytest.raises(fmud.ProtocolError) as e:
        fmud.Client(standin.endpoint)
    assert "'maxMsg' is not an integer" in e.value.message


def test_a_bind_address_as_pub_endpoint_takes_the_control_endpoints_host():
    c = fmud.Client.__new__(fmud.Client)
    c.endpoint = "tcp://sim.example:5555"
    assert c._pub_address("tcp://*:5556") == "tcp://sim.example:5556"
    assert c._pub_address("tcp://0.0.0.0:5556") == "tcp://sim.example:5556"
    assert c._pub_address("tcp://10.0.0.1:5556") == "tcp://10.0.0.1:5556"


@pytest.mark.parametrize("op, call, result, what", [
    ("list", lambda c: c.list(), None, "list: the result is not a map"),
    ("list", lambda c: c.list(), {}, "list: no 'sessions'"),
    ("list", lambda c: c.list(), {"sessions": 1}, "list: 'sessions' is not an array"),
    ("logs", lambda c: c.logs(1), [], "logs: the result is not a map"),
    ("logs", lambda c: c.logs(1), {}, "logs: no 'messages'"),
    ("logs", lambda c: c.logs(1), {"messages": "x"}, "logs: 'messages' is not an array"),
])
def test_a_list_or_logs_result_without_its_array(standin, op, call, result, what):
    standin.script[op] = lambda rid: [ok(rid, result)]
    with fmud.Client(standin.endpoint) as c:
        with pytest.raises(fmud.ProtocolError) as e:
            call(c)
        assert e.value.message == what
        for o in ("list", "logs"):
            standin.script[o] = lambda rid: [ok(rid, {"sessions": [], "messages": []})]
        assert (c.list(), c.logs(1)) == ([], [])     # the connection goes on
