"""pubsub: iterators over the daemon's PUB socket (proto/PROTOCOL.md sections 1 and 7).

DESIGN: each feed (a subscription's samples, the events, a session's log
messages or telemetry) has a SUB socket of its own, so that a reader sees
only its topics and keeps up for itself (the daemon counts what a slow
reader loses and flags it on the next sample). ZeroMQ filters by prefix,
so every topic is compared exactly here. A PUB socket loses what it sends
before a subscription is in force, which is after the handshake: a feed
subscribes, then joins (PROTOCOL.md section 1: it subscribes to a join
topic of its own and waits for the daemon's answer on it, which comes only
once every earlier subscription is in force) before it asks for anything,
so a subscription's samples are there from the point after the subscribe
reply and an event from the moment the feed exists. A feed of one
session also listens to "events" and ends (its iterator stops) at the
session's final state: finished, faulted or stopped. Everything read is
checked before use and a message that breaks the protocol is a
ProtocolError.
"""

import collections
import os
import time

import zmq
from zmq.utils.monitor import recv_monitor_message

from .errors import ConnectionFailed, Error, ProtocolError, Timeout
from .tables import Rows
from .wire import NUMBER, field, unpack

FINAL_STATES = ("finished", "faulted", "stopped")
TOPIC_MAX = 64
JOIN_PREFIX = "j"
JOIN_RETRY = 0.25           # seconds: the daemon's answer is lossy, a join asks again
KEEP_MAX = 65536            # messages kept while joining or subscribing (beyond: dropped)
KEEP_BYTES = 256 << 20      # bytes of them (topics and bodies) kept, likewise


class _Feed:
    """A SUB socket on some topics; receive() one item, iteration until the end."""

    timeout = None              # seconds an iteration step may wait (None: forever)

    def __init__(self, client, prefixes, session=None):
        if not client.pub_endpoint:
            raise ConnectionFailed("the daemon publishes no events")
        self.session = session
        self.ended = False
        self._whats = {p: "'%s'" % p for p in prefixes}     # error text of the feed's topics
        self._client = client
        self._sock = client.socket(zmq.SUB)
        try:
            for p in prefixes:
                self._sock.subscribe(p)
            self._join(client)
        except BaseException:
            self._sock.close(0)
            raise

    def _join(self, client):
        """Connect, then wait until the daemon answers a join: its subscriptions are in force."""
        self._early = collections.deque()
        self._early_bytes = 0
        self._gaps = set()          # topics of which one was dropped: their next sample is flagged
        deadline = time.monotonic() + client.connect_timeout
        mon = self._sock.get_monitor_socket(
            zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_HANDSHAKE_FAILED_AUTH |
            zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL)
        try:
            self._sock.connect(client.pub_endpoint)
            if not mon.poll(int(client.connect_timeout * 1000)):
                self._no_join(client)
            ev = recv_monitor_message(mon)
            if ev["event"] != zmq.EVENT_HANDSHAKE_SUCCEEDED:
                raise ConnectionFailed("the daemon's PUB socket '%s' refused this client"
                                       % client.pub_endpoint)
        finally:
            self._sock.disable_monitor()
            mon.close(0)
        join = None
        retry = 0
        while True:
            now = time.monotonic()
            if now >= retry:
                if join is not None:
                    self._sock.unsubscribe(join)
                join = (JOIN_PREFIX + os.urandom(8).hex()).encode("ascii")
                self._sock.subscribe(join)
                retry = now + JOIN_RETRY
            if now >= deadline:
                self._no_join(client)
            if self._sock.poll(max(1, int((min(retry, deadline) - now) * 1000))):
                frames = self._sock.recv_multipart()
                if frames[0] == join:
                    break
                self.keep(frames)           # published after the subscriptions: kept
        self._sock.unsubscribe(join)

    def keep(self, frames):
        """Keep a message read before its time (a join, a subscribe request), in order.

        Past KEEP_MAX messages or KEEP_BYTES bytes it is dropped, as the daemon drops for a
        slow reader, and the next sample of its topic, kept or read, says so (Sample.DROPPED).
        """
        size = sum(len(f) for f in frames)
        topic = frames[0] if frames else b""
        if len(self._early) < KEEP_MAX and self._early_bytes + size <= KEEP_BYTES:
            self._early.append((frames, topic in self._gaps))
            self._gaps.discard(topic)
            self._early_bytes += size
        elif len(topic) <= TOPIC_MAX and len(self._gaps) < KEEP_MAX:
            self._gaps.add(topic)           # a longer topic is no topic: nothing to flag

    @staticmethod
    def _no_join(client):
        raise Timeout("cannot join '%s' within %g s" % (client.pub_endpoint,
                                                        client.connect_timeout))

    def close(self):
        """Stop reading (idempotent)."""
        if self._sock is not None:
            self._sock.close(0)
            self._sock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __iter__(self):
        return self

    def __next__(self):
        return self._next(self.timeout, "nothing published")

    def _next(self, timeout, silence):
        """The next item; StopIteration at the end, Timeout ("silence within ... s") if none."""
        item = self.receive(timeout)
        if item is not None:
            return item
        if self.ended:
            raise StopIteration
        raise Timeout("%s within %g s" % (silence, timeout))

    def receive(self, timeout=None):
        """The next item, or None when nothing came within timeout seconds or the feed ended."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.ended and self._sock is not None:
            left = None if deadline is None else max(0, int((deadline - time.monotonic()) * 1000))
            if self._early:
                frames, after_gap = self._early.popleft()
                self._early_bytes -= sum(len(f) for f in frames)
            elif not self._sock.poll(left):
                return None
            else:
                frames = self._sock.recv_multipart()
                after_gap = bool(self._gaps) and frames[0] in self._gaps
                self._gaps.discard(frames[0])
            if len(frames) != 2 or len(frames[0]) > TOPIC_MAX or b"\0" in frames[0]:
                raise ProtocolError("malformed PUB message framing")
            try:
                topic = frames[0].decode("ascii")
            except UnicodeDecodeError:
                raise ProtocolError("a PUB topic that is not ASCII") from None
            what = self._whats.get(topic) or "'%s'" % topic
            body = unpack(frames[1], what)
            if not isinstance(body, dict):
                raise ProtocolError("%s: the body is not a map" % what)
            if topic == "events" and self.session is not None:
                if field(body, "session", int, "event") == self.session and \
                        field(body, "state", str, "event") in FINAL_STATES:
                    self.ended = True
            item = self._take(topic, body)
            if item is not None:
                if after_gap and isinstance(item, Sample):
                    item.flags |= Sample.DROPPED
                return item
        return None

    def _take(self, topic, body):
        """The item for a message, or None to skip it."""
        raise NotImplementedError


class Sample:
    """One sample: session, generation, time, point, flags, mono_ns, real_ns, names, values."""

    FIRST, DROPPED, RESTORED, EXTRA, EVENT_LEFT, UNRECORDED = 1, 2, 4, 8, 16, 32
    __slots__ = ("session", "generation", "time", "point", "flags", "mono_ns", "real_ns",
                 "names", "values")

    def __init__(self, body, names, what):
        self.session = field(body, "session", int, what)
        self.generation = field(body, "generation", int, what)
        self.time = field(body, "time", NUMBER, what)
        self.point = field(body, "point", int, what)
        self.flags = field(body, "flags", int, what)
        self.mono_ns = field(body, "monoNs", int, what, optional=True) or 0
        self.real_ns = field(body, "realNs", int, what, optional=True) or 0
        self.values = field(body, "values", list, what)
        own = field(body, "names", list, what, optional=True)
        if own is not None:
            if len(own) != len(self.values) or not all(isinstance(n, str) for n in own):
                raise ProtocolError("%s: names do not match the values" % what)
            names = own
        self.names = names if names is not None and len(names) == len(self.values) else None

    first = property(lambda self: bool(self.flags & Sample.FIRST))
    dropped = property(lambda self: bool(self.flags & Sample.DROPPED))
    restored = property(lambda self: bool(self.flags & Sample.RESTORED))
    extra = property(lambda self: bool(self.flags & Sample.EXTRA))
    unrecorded = property(lambda self: bool(self.flags & Sample.UNRECORDED))

    def __getitem__(self, name):
        if isinstance(name, str):
            if self.names is None:
                raise KeyError(name)
            return self.values[self.names.index(name)]
        return self.values[name]

    def __repr__(self):
        return "Sample(time=%r, point=%r, flags=%r, values=%r)" % (
            self.time, self.point, self.flags, self.values)


class Subscription(_Feed):
    """A subscription's samples: iterate for Samples until the session ends; rows() gathers them."""

    def __init__(self, client, session, generation, names, decimation, every_point):
        prefix = "s%d." % session
        super().__init__(client, [prefix, "events"], session)
        try:
            # The session's samples caught by the prefix meanwhile are kept, not left to fill
            # the socket's queue (which would make the daemon refuse them to every subscriber).
            self.topic = client._subscribe(session, generation, names, decimation, every_point,
                                           keep=self)
            if not self.topic.startswith(prefix) or len(self.topic) > TOPIC_MAX:
                raise ProtocolError("subscribe: topic '%s' is not one of session %d"
                                    % (self.topic, session))
            self._sock.subscribe(self.topic)
            self._sock.unsubscribe(prefix)
            self._whats[self.topic] = "'%s'" % self.topic
            self._sample = "sample on '%s'" % self.topic
        except BaseException:
            _Feed.close(self)
            raise
        self.generation = generation
        self.names = list(names) if names else None

    def _take(self, topic, body):
        if topic != self.topic:
            return None
        s = Sample(body, self.names, self._sample)
        if s.names is not None:
            self.names = s.names
        return s

    def rows(self, timeout=None):
        """Every sample until the session's end, as Rows (NumPy columns where installed).

        timeout: seconds to wait for each sample (None: as long as the run takes).
        """
        silence = "no sample on '%s'" % self.topic
        samples = []
        while True:
            try:
                samples.append(self._next(timeout, silence))
            except StopIteration:
                break
        names = self.names or []
        for s in samples:
            if len(s.values) != len(names):
                raise ProtocolError("sample at t = %r: %d values for %d names"
                                    % (s.time, len(s.values), len(names)))
        return Rows(names, samples)

    def close(self):
        """Unsubscribe (when the session is still there) and stop reading."""
        if self._sock is None:
            return
        try:
            self._client.unsubscribe(self.session, self.topic)
        except Error:
            pass            # the session is gone, or the connection: nothing left to undo
        finally:
            _Feed.close(self)


def _session_body(body, what):
    field(body, "session", int, what)
    return body


class Events(_Feed):
    """State events (dicts, PROTOCOL.md section 7); of one session ends at its final state."""

    def __init__(self, client, session=None):
        super().__init__(client, ["events"], session)

    def _take(self, topic, body):
        if topic != "events":
            return None
        ev = _session_body(body, "event")
        field(ev, "generation", int, "event")
        field(ev, "state", str, "event")
        field(ev, "time", NUMBER, "event")
        if self.session is not None and ev["session"] != self.session:
            return None
        return ev


class _SessionFeed(_Feed):
    """A session's own topic (letter and session number), its items dicts with fields checked."""

    letter = what = None
    fields = ()                 # (key, kind) every item has

    def __init__(self, client, session):
        self.topic = "%s%d" % (self.letter, session)
        super().__init__(client, [self.topic, "events"], session)

    def _take(self, topic, body):
        if topic != self.topic:
            return None
        _session_body(body, self.what)
        for key, kind in self.fields:
            field(body, key, kind, self.what)
        return body


class Logs(_SessionFeed):
    """A session's log messages as published (dicts); ends at the session's final state."""

    letter, what = "l", "log message"
    fields = (("seq", int), ("message", str))


class Telemetry(_SessionFeed):
    """A paced session's telemetry (dicts); ends at the session's final state."""

    letter, what = "t", "telemetry"
    fields = (("time", NUMBER),)
