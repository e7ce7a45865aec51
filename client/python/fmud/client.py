"""client: a connection to fmud and one method per operation of proto/PROTOCOL.md section 5.

DESIGN: requests go out on a DEALER socket, one msgpack map each, and
replies are matched by id (section 1: replies are not in request order;
a reply to a request that timed out is dropped when it comes). A socket
monitor notices the daemon going away, so a request in flight fails at
once rather than waiting out its time; a CURVE key the daemon refuses is
said at once too. Every operation is one small method over _call(): a new
operation of the protocol is one more such method. Arguments are checked
for their Python types before anything is sent (a misspelt keyword is a
TypeError, as for any Python function); everything else is the daemon's
to judge, and its refusal is raised as the fmud.Error subclass of its code.

A Client is not thread-safe: use one per thread.
"""

import io
import itertools
import os
import time

import zmq
from zmq.utils.monitor import recv_monitor_message

from . import endpoint as _endpoint
from . import pubsub
from . import transfer
from .errors import ConnectionFailed, ProtocolError, Timeout, VersionError, refusal
from .tables import Reading
from .wire import MAX_MSG, NUMBER, field, is_kind, pack, unpack

PROTO_VERSION = 1
WAIT = None                 # a timeout of None: as long as the operation takes

# load's keyword arguments and their names on the wire (section 5, load).
_LOAD_ARGS = {
    "out": ("out", str), "force": ("force", bool), "input": ("input", str),
    "start": ("start", NUMBER), "stop": ("stop", NUMBER), "step": ("step", NUMBER),
    "budget": ("budget", NUMBER), "warp": ("warp", NUMBER), "overrun": ("overrun", str),
    "overrun_margin_us": ("overrunMarginUs", NUMBER), "spin_us": ("spinUs", NUMBER),
    "decimation": ("decimation", int), "tolerance": ("tolerance", NUMBER),
    "rollback_on_fault": ("rollbackOnFault", bool), "algorithm": ("algorithm", str),
    "interface": ("interface", str), "integrator": ("integrator", str),
    "sandbox": ("sandbox", str), "strict": ("strict", bool), "transient": ("transient", bool),
    "rt_priority": ("rtPriority", int), "rt_worker_priority": ("rtWorkerPriority", int),
    "rt_cpus": ("rtCpus", str), "rt_worker_cpus": ("rtWorkerCpus", str),
    "rt_mlock": ("rtMlock", bool), "rt_best_effort": ("rtBestEffort", bool),
    "rig_in": ("rigIn", list), "rig_out": ("rigOut", list), "rig_policy": ("rigPolicy", str),
    "rig_timeout_ms": ("rigTimeoutMs", int), "multirate": ("multirate", dict),
    "starts": ("starts", dict), "record": ("record", list),
    "content": ("content", str), "files": ("files", dict), "input_content": ("inputContent", str),
}

# instantiate's flags and their names on the wire (section 5, instantiate).
_INSTANTIATE_ARGS = {
    "visible": ("visible", bool), "logging_on": ("loggingOn", bool),
    "event_mode_used": ("eventModeUsed", bool),
    "early_return_allowed": ("earlyReturnAllowed", bool), "sandbox": ("sandbox", str),
}


def _check(name, value, kind):
    """value as sent for argument name, which must be of kind; TypeError otherwise."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if hasattr(value, "dtype") and hasattr(value, "item"):
        value = value.item()        # a NumPy scalar
    if isinstance(value, (tuple, set)) and list in kinds:
        value = list(value)
    if not is_kind(value, kinds):
        raise TypeError("%s must be %s, not %s" % (name, " or ".join(k.__name__ for k in kinds),
                                                   type(value).__name__))
    return value


def _text(v):
    """A start value or multirate factor as the text the protocol takes.

    An array's values (a list, tuple or NumPy array) are one text of
    blank-separated values, as --start takes them ("1 2 3").
    """
    if hasattr(v, "tolist") and not isinstance(v, (str, bytes)):
        v = v.tolist()              # a NumPy array or scalar
    if isinstance(v, (list, tuple)):
        return " ".join(_text(e) for e in v)
    if isinstance(v, bool):
        return "true" if v else "false"
    return v if isinstance(v, str) else repr(v) if isinstance(v, float) else str(v)


def _map(res, op):
    """An operation's result, which must be a map; ProtocolError otherwise."""
    if not isinstance(res, dict):
        raise ProtocolError("%s: the result is not a map" % op, op=op)
    return res


def _names(names):
    if isinstance(names, str):
        return [names]
    return [_check("a name", n, str) for n in names]


class Client:
    """A connection to fmud.

    endpoint: the control endpoint (``ipc:///run/fmud/control.sock``,
    ``tcp://host:port``); None: $FMUD_ENDPOINT, else the local daemon as
    fmuctl finds it. server_key and key: the daemon's public key file and
    this client's secret key file for tcp with CURVE (else $FMUD_SERVER_KEY
    and $FMUD_KEY; both or neither). timeout: seconds a request may take
    (operations that wait for the simulation, such as step, wait as long
    as it takes); connect_timeout: for the hello.
    """

    def __init__(self, endpoint=None, server_key=None, key=None, *, timeout=30.0,
                 connect_timeout=10.0, name="fmud-python"):
        self.endpoint = _endpoint.resolve(endpoint)
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.curve = _endpoint.curve_keys(server_key, key)
        self._ids = itertools.count(1)
        self._ctx = None
        self._dealer = self._mon = self._poller = None
        _endpoint.check_ipc(self.endpoint)
        self._ctx = zmq.Context()
        try:
            self._open()
            self.info = self.hello(client=name, timeout=connect_timeout)
        except BaseException:
            self.close()
            raise
        self.server = self.info["server"]
        self.max_msg = self.info["maxMsg"]
        self.pub_endpoint = self._pub_address(self.info["pubEndpoint"])

    # ---- the connection -------------------------------------------------------------

    def socket(self, kind):
        """A new socket of kind with this connection's options (limits, CURVE)."""
        s = self._ctx.socket(kind)
        s.setsockopt(zmq.LINGER, 0)
        s.setsockopt(zmq.MAXMSGSIZE, MAX_MSG)
        if self.curve:
            server, public, secret = self.curve
            s.curve_serverkey = server.encode("ascii")
            s.curve_publickey = public.encode("ascii")
            s.curve_secretkey = secret.encode("ascii")
        return s

    def _open(self):
        self._dealer = self.socket(zmq.DEALER)
        # A peer that vanishes without closing (tcp) is caught by ZMTP heartbeats.
        self._dealer.setsockopt(zmq.HEARTBEAT_IVL, 2000)
        self._dealer.setsockopt(zmq.HEARTBEAT_TIMEOUT, 10000)
        self._mon = self._dealer.get_monitor_socket(
            zmq.EVENT_DISCONNECTED | zmq.EVENT_HANDSHAKE_FAILED_AUTH |
            zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL)
        self._poller = zmq.Poller()
        self._poller.register(self._dealer, zmq.POLLIN)
        self._poller.register(self._mon, zmq.POLLIN)
        try:
            self._dealer.connect(self.endpoint)
        except zmq.ZMQError as e:
            raise ConnectionFailed("cannot connect to '%s': %s" % (self.endpoint, e)) from None

    def _pub_address(self, pub):
        """A bind address (tcp, host * or 0.0.0.0) names no host: use the control endpoint's."""
        if not pub:
            return ""
        if (not pub.startswith(("ipc://", "tcp://")) or len(pub) >= 4096 or
                any(ord(c) <= 0x20 or ord(c) >= 0x7f for c in pub)):
            raise ProtocolError("hello: the daemon names an invalid PUB endpoint")
        for bound in ("tcp://*:", "tcp://0.0.0.0:"):
            if pub.startswith(bound) and self.endpoint.startswith("tcp://"):
                host = self.endpoint[6:].rsplit(":", 1)[0]
                return "tcp://%s:%s" % (host, pub[len(bound):])
        return pub

    def close(self):
        """Close the connection (and every socket made from it). Idempotent."""
        self._mon = self._dealer = self._poller = None
        if self._ctx is not None:
            self._ctx.destroy(linger=0)         # closes every socket of the context
            self._ctx = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _lost(self, op):
        """A monitor event: the daemon went away, or refused this client's CURVE key."""
        ev = recv_monitor_message(self._mon)
        if ev["event"] == zmq.EVENT_DISCONNECTED:
            return ConnectionFailed("%s: the daemon at '%s' went away" % (op, self.endpoint), op=op)
        if ev["event"] == zmq.EVENT_HANDSHAKE_FAILED_AUTH:
            return ConnectionFailed("%s: the daemon at '%s' refused this client's key"
                                    % (op, self.endpoint), op=op)
        return ConnectionFailed("%s: the handshake with '%s' failed (CURVE keys?)"
                                % (op, self.endpoint), op=op)

    def _call(self, op, args=None, timeout=0, keep=None):
        """Send op with args and return its result; raise the refusal as an Error.

        timeout: seconds, None to wait as long as it takes, 0 for self.timeout.
        keep: a feed (pubsub) whose socket is read while the reply is awaited, its
        messages kept for it.
        """
        if keep is None:
            return self._call_wait(op, args, timeout, None)
        self._poller.register(keep._sock, zmq.POLLIN)
        try:
            return self._call_wait(op, args, timeout, keep)
        finally:
            self._poller.unregister(keep._sock)

    def _call_wait(self, op, args, timeout, keep):
        if self._dealer is None:
            raise ConnectionFailed("%s: the connection is closed" % op, op=op)
        if timeout == 0:
            timeout = self.timeout
        rid = next(self._ids)
        req = {"id": rid, "op": op}
        if args:
            req["args"] = args
        self._dealer.send(pack(req))
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0, int((deadline - time.monotonic()) * 1000))
            ready = dict(self._poller.poll(left))
            if self._dealer in ready:
                frames = self._dealer.recv_multipart()
                rep = self._reply(op, frames)
                if rep is None or rep["id"] != rid:
                    continue            # an earlier request's, given up on
                if rep["ok"]:
                    return rep.get("result")
                err = field(rep, "error", dict, op)
                raise refusal(field(err, "code", str, op), field(err, "message", str, op), op)
            if keep is not None and keep._sock in ready:
                while keep._sock.poll(0):
                    keep.keep(keep._sock.recv_multipart())
            if self._mon in ready:
                raise self._lost(op)
            if deadline is not None and time.monotonic() >= deadline:
                raise Timeout("%s: no reply from '%s' within %g s" % (op, self.endpoint, timeout),
                              op=op)

    def _reply(self, op, frames):
        """A reply's map (checked), or None for a frame layout that is not a reply's."""
        if len(frames) != 1:
            return None
        rep = unpack(frames[0], op)
        if not isinstance(rep, dict):
            raise ProtocolError("%s: the reply is not a map" % op, op=op)
        field(rep, "id", int, op)
        field(rep, "ok", bool, op)
        return rep

    @staticmethod
    def _target(session, generation):
        return {"session": _check("session", session, int),
                "generation": _check("generation", generation, int)}

    # ---- operations (PROTOCOL.md section 5) -----------------------------------------

    def hello(self, version=PROTO_VERSION, client=None, timeout=0):
        """Negotiate: {version, server, pubEndpoint, maxMsg}; VersionError if not served."""
        args = {"version": _check("version", version, int)}
        if client is not None:
            args["client"] = _check("client", client, str)
        try:
            res = self._call("hello", args, timeout)
        except VersionError as e:
            raise VersionError("the daemon at '%s' does not serve protocol version %d: %s"
                               % (self.endpoint, version, e.message), code="version",
                               op="hello") from None
        _map(res, "hello")
        if field(res, "version", int, "hello") != version:
            raise VersionError("the daemon at '%s' speaks protocol version %d, this client %d"
                               % (self.endpoint, res["version"], version), op="hello")
        field(res, "server", str, "hello")
        field(res, "pubEndpoint", str, "hello")
        field(res, "maxMsg", int, "hello")
        return res

    def load(self, path=None, **options):
        """Load a .ssp, .ssd, folder or .fmu; {session, generation, out?, warnings?}.

        Paths are sent absolute and canonical (the daemon takes no other).
        Instead of path, content: the SHA-256 of an upload (put), with
        files ({name: SHA-256}, an .ssd's files) and input_content (an
        uploaded input CSV, instead of input).
        options: out, force, input, start, stop, step, budget, warp, overrun,
        overrun_margin_us, spin_us, decimation, tolerance, rollback_on_fault,
        algorithm, interface ("cs", "me"), integrator ("bdf", "adams"), sandbox, strict, transient, rt_priority, rt_worker_priority,
        rt_cpus, rt_worker_cpus, rt_mlock, rt_best_effort, rig_in, rig_out,
        rig_policy, rig_timeout_ms, multirate ({component: factor}), starts
        ({"comp.var": value}, sent as text; an array as a list of its values)
        and record (names).
        """
        args = {}
        if path is not None:
            args["path"] = os.path.realpath(_check("path", os.fspath(path), str))
        for key, value in options.items():
            if key not in _LOAD_ARGS:
                raise TypeError("load() got an unexpected keyword argument '%s'" % key)
            if value is None:
                continue
            wire, kind = _LOAD_ARGS[key]
            if key in ("out", "input"):
                value = os.path.realpath(os.fspath(value))
            value = _check(key, value, kind)
            if kind is dict:
                value = {_check(key + " key", k, str): _text(v) for k, v in value.items()}
            elif kind is list:
                value = [_check(key + " entry", v, str) for v in value]
            args[wire] = value
        return self._call("load", args, WAIT)

    def put(self, data, kind=None):
        """Put a file (a path, or bytes) into the daemon's upload store; its SHA-256.

        kind: "fmu", "ssp", "ssd" or "csv", how a load by content takes it
        (None: by the file's name, bytes: the daemon's default, "fmu").
        Content the daemon has is not sent again; an upload that broke off
        resumes where the daemon's partial file ends.
        """
        if kind is None and not isinstance(data, (bytes, bytearray, memoryview)):
            kind = transfer.kind_of(data)
        if kind is not None:
            _check("kind", kind, str)
        return transfer.put(self._call, data, kind)

    def upload_and_load(self, path, **options):
        """Put a .fmu, .ssp, .ssd (with the files it names) or folder and load it by content.

        input (a local CSV) is put too and sent as input_content; out is
        the daemon's path as for load. The result is load's.
        """
        path = os.fspath(path)
        if os.path.isdir(path):
            path = os.path.join(path, "SystemStructure.ssd")
        kind = transfer.kind_of(path)
        sha = self.put(path, kind)
        if kind == "ssd":
            files = {name: self.put(p, transfer.kind_of(p))
                     for name, p in transfer.ssd_sources(path).items()}
            if files:
                options["files"] = files
        csv = options.pop("input", None)
        if csv is not None:
            options["input_content"] = self.put(csv, "csv")
        return self.load(content=sha, **options)

    def unload(self, session, generation=0):
        """Stop the session if it runs, end its workers, forget it."""
        return self._call("unload", self._target(session, generation))

    def list(self):
        """Every session: [{session, generation, name, state, time, ...}]."""
        return field(_map(self._call("list"), "list"), "sessions", list, "list")

    def status(self, session=0, generation=0):
        """A session's status (a dict, PROTOCOL.md "status"); session 0: the daemon's."""
        return self._call("status", self._target(session, generation))

    def start(self, session, generation=0):
        """loaded -> running; the progress {state, time, points}."""
        return self._call("start", self._target(session, generation))

    def pause(self, session, generation=0):
        """running -> paused; the progress."""
        return self._call("pause", self._target(session, generation))

    def resume(self, session, generation=0):
        """paused -> running; the progress."""
        return self._call("resume", self._target(session, generation))

    def stop(self, session, generation=0):
        """Stop before the stop time (final); the progress."""
        return self._call("stop", self._target(session, generation))

    def warp(self, session, factor, generation=0):
        """Pace at factor times real time from the next point (0: as fast as possible)."""
        args = self._target(session, generation)
        args["factor"] = _check("factor", factor, NUMBER)
        return self._call("warp", args)

    def step(self, session, n=1, generation=0):
        """Take n coupled steps and pause; the progress once they are done."""
        args = self._target(session, generation)
        args["n"] = _check("n", n, int)
        return self._call("step", args, WAIT)

    def run_until(self, session, time, generation=0):
        """Step to the last point at or before time and pause; the progress."""
        args = self._target(session, generation)
        args["time"] = _check("time", time, NUMBER)
        return self._call("run-until", args, WAIT)

    def get(self, session, names, generation=0):
        """Values by name ("inst.var", "inst.var[i]"): a Reading (time, names, values)."""
        names = _names(names)
        args = self._target(session, generation)
        args["names"] = names
        res = self._call("get", args)
        values = field(res, "values", list, "get")
        if len(values) != len(names):
            raise ProtocolError("get: %d values for %d names" % (len(values), len(names)))
        return Reading(field(res, "time", NUMBER, "get"), names, values)

    def vars(self, session, generation=0):
        """Every variable: {time, vars: [{name, type, causality, variability, unit, value}]}."""
        return self._call("vars", self._target(session, generation))

    def set(self, session, values, generation=0):
        """Set {"inst.var": value} all or nothing; {time} of the point they apply at."""
        args = self._target(session, generation)
        args["values"] = {_check("a name", k, str): v for k, v in dict(values).items()}
        return self._call("set", args)

    def subscribe(self, session, names=None, decimation=None, every_point=False, generation=0):
        """A Subscription (an iterator of Samples) to names (None: every recorded column)."""
        return pubsub.Subscription(self, session, generation, None if names is None
                                   else _names(names), decimation, every_point)

    def _subscribe(self, session, generation, names, decimation, every_point, keep=None):
        """The subscribe request itself; its topic. keep: a feed whose messages are kept meanwhile."""
        args = self._target(session, generation)
        if names:
            args["names"] = names
        if decimation is not None:
            args["decimation"] = _check("decimation", decimation, int)
        if every_point:
            args["everyPoint"] = True
        return field(self._call("subscribe", args, keep=keep), "topic", str, "subscribe")

    def unsubscribe(self, session, topic, generation=0):
        """Remove subscription topic (Subscription.close() does this)."""
        args = self._target(session, generation)
        args["topic"] = _check("topic", topic, str)
        return self._call("unsubscribe", args)

    def snapshot(self, session, generation=0):
        """Save every instance's and the master's state: {snapshot, time}."""
        return self._call("snapshot", self._target(session, generation), WAIT)

    def restore(self, session, snapshot, generation=0):
        """Back to a snapshot: the progress with the new {session, generation}."""
        args = self._target(session, generation)
        args["snapshot"] = _check("snapshot", snapshot, int)
        return self._call("restore", args, WAIT)

    def snapshots(self, session, generation=0):
        """The session's snapshots, oldest first: [{snapshot, time, generation, taken}]."""
        return field(self._call("snapshots", self._target(session, generation)), "snapshots",
                     list, "snapshots")

    def snapshot_delete(self, session, snapshot, generation=0):
        """Free a snapshot and the FMU states the workers hold for it."""
        args = self._target(session, generation)
        args["snapshot"] = _check("snapshot", snapshot, int)
        return self._call("snapshot-delete", args, WAIT)

    def snapshot_export(self, session, snapshot, file=None, generation=0):
        """A snapshot as a file: every instance's serialized FMU state and the master's state.

        Read through the daemon a piece at a time, as fetch_results reads
        results. file: None to return the bytes; a path or binary file
        object to write them to, returning the number of bytes written.
        """
        args = self._target(session, generation)
        args["snapshot"] = _check("snapshot", snapshot, int)

        def read(offset):
            args["offset"] = offset
            return transfer.piece(self._call("snapshot-export", args, WAIT))
        if file is None:
            buf = io.BytesIO()
            transfer.fetch(read, buf, True)
            return buf.getvalue()
        if hasattr(file, "write"):
            return transfer.fetch(read, file, True)
        with open(file, "wb") as f:
            return transfer.fetch(read, f, True)

    def snapshot_import(self, session, data, generation=0):
        """Put a snapshot file (a path, or bytes) and make it a new snapshot: {snapshot, time}.

        The session must be of the scenario the snapshot was exported from
        (the same FMUs); restore then continues as that run did.
        """
        sha = transfer.put(self._call, data, None)
        args = self._target(session, generation)
        args["content"] = sha
        return self._call("snapshot-import", args, WAIT)

    def logs(self, session, generation=0):
        """The FMUs' messages the daemon keeps (the last 256), oldest first."""
        res = _map(self._call("logs", self._target(session, generation)), "logs")
        return field(res, "messages", list, "logs")

    def results(self, session, offset=0, max=None, generation=0):
        """One piece of the session's results file: {data, offset, size, done, format}."""
        return self._results(session, offset, max, generation)[0]

    def _results(self, session, offset, max, generation):
        """The results request itself: its result and that checked, (data, offset, size, done)."""
        args = self._target(session, generation)
        args["offset"] = _check("offset", offset, int)
        if max is not None:
            args["max"] = _check("max", max, int)
        res = self._call("results", args)
        return res, transfer.piece(res)

    def fetch_results(self, session, file=None, follow=True, generation=0):
        """The session's results file, read through the daemon from its start.

        follow: until recording has ended (waiting for rows while the
        session runs or is paused); False: what is written so far. file:
        None to return the bytes; a path or binary file object to write
        them to, returning the number of bytes written.
        """
        def read(offset):
            return self._results(session, offset, None, generation)[1]
        if file is None:
            buf = io.BytesIO()
            transfer.fetch(read, buf, follow)
            return buf.getvalue()
        if hasattr(file, "write"):
            return transfer.fetch(read, file, follow)
        with open(file, "wb") as f:
            return transfer.fetch(read, f, follow)

    # ---- FMI-level instances: remote masters (PROTOCOL.md "instantiate", "fmi") -------

    def instantiate(self, fmu=None, content=None, instance_name=None, transient=False,
                    **flags):
        """A new instance of a Co-Simulation FMU in its own worker; its number.

        fmu: the .fmu's path (sent absolute and canonical), or content: the
        SHA-256 of an upload (put). flags: visible, logging_on,
        event_mode_used, early_return_allowed (bool), sandbox (str).
        """
        args = {}
        if fmu is not None:
            args["fmu"] = os.path.realpath(_check("fmu", os.fspath(fmu), str))
        if content is not None:
            args["content"] = _check("content", content, str)
        if instance_name is not None:
            args["instanceName"] = _check("instance_name", instance_name, str)
        if _check("transient", transient, bool):
            args["transient"] = True
        for key, value in flags.items():
            if key not in _INSTANTIATE_ARGS:
                raise TypeError("instantiate() got an unexpected keyword argument '%s'" % key)
            wire, kind = _INSTANTIATE_ARGS[key]
            args[wire] = _check(key, value, kind)
        res = _map(self._call("instantiate", args, WAIT), "instantiate")
        return field(res, "instance", int, "instantiate")

    def fmi(self, calls):
        """Make a batch of FMI calls in order; one result per call.

        calls: dicts {"instance": N, "fn": "set"|"get"|"doStep"|..., ...}
        with the arguments PROTOCOL.md "fmi" lists ({"instance": 1, "fn":
        "set", "type": "Float64", "vrs": [10], "values": [1.5]}). A call
        refused (or answered Discard, Error, Fatal) ends the batch: raised
        as the Error of its code, with .index, .function and .results (the
        results of the calls before it).
        """
        calls = _check("calls", calls, list)
        res = _map(self._call("fmi", {"calls": calls}), "fmi")
        results = field(res, "results", list, "fmi")
        ref = res.get("refused")
        if ref is None:
            return results
        ref = _check("refused", ref, dict)
        e = refusal(field(ref, "code", str, "fmi"),
                    "calls[%d] (instance %d): %s" % (field(ref, "index", int, "fmi"),
                                                     field(ref, "instance", int, "fmi"),
                                                     field(ref, "message", str, "fmi")), "fmi")
        e.index = ref["index"]
        e.function = ref.get("function")
        e.results = results
        raise e

    def free(self, instance):
        """Free an FMI-level instance, its worker and its FMU states."""
        return self._call("free", {"instance": _check("instance", instance, int)})

    def detach(self, session=None, instance=None):
        """Make this connection's transient session (or instance) permanent."""
        if (session is None) == (instance is None):
            raise TypeError("detach() takes session or instance, one of them")
        key = "session" if session is not None else "instance"
        return self._call("detach", {key: _check(key, session if instance is None else instance,
                                                 int)})

    def shutdown(self):
        """Stop and unload every session; the daemon then exits (admin role)."""
        return self._call("shutdown")

    def rig(self, session, generation=0):
        """A one-time token for the session's rig channel: {token, path, expiresMs}.

        Local (ipc) clients only. The channel itself (shared memory handed
        over on the rig socket) is libfmud's fmud_rig_open() (fmud.h).
        """
        return self._call("rig", self._target(session, generation))

    # ---- publications (PROTOCOL.md section 7) ---------------------------------------

    def events(self, session=None):
        """An iterator of state events (dicts), of one session or of all (None)."""
        return pubsub.Events(self, session)

    def follow_logs(self, session):
        """An iterator of the session's log messages as they are published."""
        return pubsub.Logs(self, session)

    def telemetry(self, session):
        """An iterator of the session's telemetry (about once a second while paced)."""
        return pubsub.Telemetry(self, session)


__all__ = ["Client", "PROTO_VERSION"]
