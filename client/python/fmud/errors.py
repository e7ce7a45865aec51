"""errors: what a request to fmud can end in, one class per error code.

DESIGN: the daemon's refusals carry a code (proto/PROTOCOL.md section 6)
and a message for people. Each code has its own subclass of Error, so
that a caller catches exactly what it can handle (``except
fmud.NoSession``); ``code`` is the code as it goes on the wire and
``message`` the daemon's text. A code this client does not know is a
plain Error carrying that code (PROTOCOL.md section 3: an unknown code is
a failure of that request). What fails on this side (no daemon, no reply
in time, a reply that breaks the protocol) has code None.
"""


class Error(Exception):
    """A request that failed: ``code`` (str, or None on this side), ``message``, ``op``."""

    code = None

    def __init__(self, message, code=None, op=None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.op = op

    def __repr__(self):
        return "%s(code=%r, message=%r)" % (type(self).__name__, self.code, self.message)


class BadRequest(Error):
    """Not a request, or malformed arguments (the message names the key)."""
    code = "bad-request"


class VersionError(Error):
    """The daemon does not serve this client's protocol version."""
    code = "version"


class UnknownOp(Error):
    """The operation is not one of this protocol version's."""
    code = "unknown-op"


class NoSession(Error):
    """No session with that id."""
    code = "no-session"


class Stale(Error):
    """The request names a generation that is not the session's current one."""
    code = "stale"


class StateError(Error):
    """The operation is not allowed in the session's state."""
    code = "state"


class NoVariable(Error):
    """Unknown instance or variable."""
    code = "no-variable"


class TypeMismatch(Error):
    """A value of the wrong type or shape."""
    code = "type"


class Denied(Error):
    """A path outside the allowed directories, or a request above the client's role."""
    code = "denied"


class Invalid(Error):
    """The scenario, an FMU or a value was refused."""
    code = "invalid"


class Fault(Error):
    """An FMU or a worker failed."""
    code = "fault"


class LimitReached(Error):
    """A configured limit was reached (sessions, workers, subscriptions, snapshots)."""
    code = "limit"


class Unsupported(Error):
    """The operation needs something an FMU (or the transport) does not offer."""
    code = "unsupported"


class InternalError(Error):
    """The daemon failed (out of memory, I/O error)."""
    code = "internal"


class TooLarge(Error):
    """The reply would exceed the daemon's message limit."""
    code = "too-large"


class ConnectionFailed(Error):
    """No daemon could be reached, it refused this client, or it went away."""


class Timeout(Error):
    """No reply (or no message) came within the time allowed."""


class ProtocolError(Error):
    """The daemon sent something the protocol does not allow."""


_BY_CODE = {cls.code: cls for cls in (
    BadRequest, VersionError, UnknownOp, NoSession, Stale, StateError, NoVariable,
    TypeMismatch, Denied, Invalid, Fault, LimitReached, Unsupported, InternalError,
    TooLarge)}


def refusal(code, message, op=None):
    """The Error for a refusal with code (an unknown code gives a plain Error)."""
    return _BY_CODE.get(code, Error)(message, code=code, op=op)
