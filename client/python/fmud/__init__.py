"""fmud: a Python client of the fmud co-simulation server.

    import fmud

    with fmud.Client() as c:                  # the local daemon, as fmuctl finds it
        s = c.load("/srv/fmud/msd.ssp")["session"]
        sub = c.subscribe(s, ["mass1.x1", "mass2.x2"])
        c.start(s)
        rows = sub.rows()                      # every sample until the run ends
        print(rows.time[-1], rows["mass1.x1"][-1])
        c.unload(s)

Every operation of the control protocol (proto/PROTOCOL.md) is a method
of Client; a refusal is raised as the fmud.Error subclass of its code.
docs/python.md tells the whole of it.
"""

from .client import PROTO_VERSION, Client
from .endpoint import client_endpoint, default_endpoint, read_key, runtime_dir
from .errors import (BadRequest, ConnectionFailed, Denied, Error, Fault, InternalError,
                     Invalid, LimitReached, NoSession, NoVariable, ProtocolError, Stale,
                     StateError, Timeout, TooLarge, TypeMismatch, UnknownOp, Unsupported,
                     VersionError)
from .pubsub import Events, Logs, Sample, Subscription, Telemetry
from .tables import Reading, Rows

__all__ = [
    "PROTO_VERSION", "Client", "client_endpoint", "default_endpoint", "read_key",
    "runtime_dir", "BadRequest", "ConnectionFailed", "Denied", "Error", "Fault",
    "InternalError", "Invalid", "LimitReached", "NoSession", "NoVariable", "ProtocolError",
    "Stale", "StateError", "Timeout", "TooLarge", "TypeMismatch", "UnknownOp", "Unsupported",
    "VersionError", "Events", "Logs", "Sample", "Subscription", "Telemetry", "Reading", "Rows",
]
