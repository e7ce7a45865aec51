"""wire: msgpack in and out, with the protocol's checks (proto/PROTOCOL.md section 3).

DESIGN: everything the daemon sends is read with the same strictness as
it reads requests, except that unknown keys are ignored: no map with two
equal keys, no extension types. A message over the 16 MiB limit (section
8) never gets here: every socket has it as ZMQ_MAXMSGSIZE, and ZeroMQ
closes the connection instead. What goes out is packed with str as str
and bytes as bin (bytearray, memoryview and tuple as msgpack does);
NumPy scalars and arrays are packed as the Python numbers and lists they
hold, so a value read with get() can be set again as it is.
"""

import os

import msgpack

from .errors import ProtocolError

MAX_MSG = 16 * 1024 * 1024


def _default(obj):
    if hasattr(obj, "dtype") and hasattr(obj, "tolist"):
        return obj.tolist()        # a NumPy scalar or array
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    if isinstance(obj, (set, frozenset)):
        return list(obj)
    raise TypeError("cannot send a %s to fmud" % type(obj).__name__)


def pack(obj):
    """obj as one msgpack message."""
    return msgpack.packb(obj, use_bin_type=True, default=_default)


def _pairs(pairs):
    d = dict(pairs)
    if len(d) != len(pairs):
        raise ValueError("a map with two equal keys")
    return d


def _ext(code, data):
    raise ValueError("a msgpack extension type (%d)" % code)


def unpack(data, what):
    """One msgpack message from the daemon; ProtocolError naming what when it breaks the rules."""
    try:
        return msgpack.unpackb(data, raw=False, strict_map_key=False, use_list=True,
                               object_pairs_hook=_pairs, ext_hook=_ext,
                               unicode_errors="surrogateescape")
    except (ValueError, TypeError, msgpack.UnpackException) as e:
        raise ProtocolError("%s: malformed message: %s" % (what, e)) from None


def is_kind(v, kind):
    """Whether v is of kind (a type or tuple of types); bool is never an int here."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return isinstance(v, kinds) and (bool in kinds or not isinstance(v, bool))


def field(m, key, kind, what, optional=False):
    """m[key] checked to be of kind (a type or tuple); bool is never an int here."""
    if key not in m:
        if optional:
            return None
        raise ProtocolError("%s: no '%s'" % (what, key))
    v = m[key]
    if not is_kind(v, kind):
        raise ProtocolError("%s: '%s' is not %s" % (what, key, _KIND_NAMES.get(kind, kind)))
    return v


NUMBER = (int, float)
_KIND_NAMES = {int: "an integer", str: "a string", bool: "a boolean", dict: "a map",
               list: "an array", NUMBER: "a number"}
