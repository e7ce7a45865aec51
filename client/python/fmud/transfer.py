"""transfer: files into the daemon's upload store (put) and results out of it (results).

DESIGN: proto/PROTOCOL.md "put" and "results" move bytes in pieces of at
most 1 MiB (one msgpack bin, section 8), offsets in bytes. An upload is
named by its SHA-256, computed here first; a probe (a put without data)
asks what the daemon has, so content it keeps is not sent again and an
upload that broke off resumes where the daemon's partial file ends, as
libfmud's fmud_put_file() does. A file is read through one open file
object only: a file that changes meanwhile ends in the daemon's SHA-256
refusal, never in a wrong upload. Results are read from an offset until
the daemon says done; a short piece before that means the session is
still recording, and the reader waits a little before asking again.
"""

import hashlib
import os
import re
import stat
import time

from .errors import ProtocolError
from .wire import field

CHUNK = 1 << 20             # the most bytes of one put or results piece
POLL = 0.2                  # seconds between results pieces while a session records
_KINDS = {".ssp": "ssp", ".ssd": "ssd", ".csv": "csv", ".fmu": "fmu"}
_SOURCE = re.compile(rb'source="([^"]*)"')
SSD_MAX_BYTES = 16 << 20    # an .ssd read for its sources


def kind_of(path):
    """The put kind of a file by its name: "ssp", "ssd", "csv", else "fmu"."""
    return _KINDS.get(os.path.splitext(os.fspath(path))[1].lower(), "fmu")


class _Source:
    """Bytes to put, from memory or from one open file: size, sha256, read(offset, n)."""

    def __init__(self, data):
        self.file = None
        if isinstance(data, (bytes, bytearray, memoryview)):
            self.mem = memoryview(data).cast("B")
            self.size = len(self.mem)
            self.sha256 = hashlib.sha256(self.mem).hexdigest()
            return
        self.mem = None
        self.file = open(os.fspath(data), "rb")
        try:
            st = os.fstat(self.file.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise ValueError("put '%s': not a regular file" % os.fspath(data))
            self.size = st.st_size
            self.sha256 = hashlib.file_digest(self.file, "sha256").hexdigest()
        except BaseException:
            self.file.close()
            raise

    def read(self, offset, n):
        if self.mem is not None:
            return bytes(self.mem[offset:offset + n])
        return os.pread(self.file.fileno(), n, offset)

    def close(self):
        if self.file is not None:
            self.file.close()


def _answer(res, size):
    """A put result checked: (offset, have)."""
    if not isinstance(res, dict):
        raise ProtocolError("put: the result is not a map", op="put")
    offset = field(res, "offset", int, "put")
    have = field(res, "have", bool, "put")
    if offset < 0 or offset > size:
        raise ProtocolError("put: result.offset %d is past the file's %d bytes" % (offset, size),
                            op="put")
    return offset, have


def put(call, data, kind):
    """Put data (a path or bytes) with call(op, args); its SHA-256 once the daemon has it."""
    src = _Source(data)
    try:
        args = {"sha256": src.sha256, "size": src.size, "offset": 0}
        if kind is not None:
            args["kind"] = kind
        offset, have = _answer(call("put", args), src.size)
        while not have:
            chunk = src.read(offset, min(CHUNK, src.size - offset))
            if not chunk and offset < src.size:
                raise OSError("put: the file got shorter")
            args["offset"], args["data"] = offset, chunk
            nxt, have = _answer(call("put", args), src.size)
            if not have and nxt <= offset:      # the daemon answers the same offset for ever
                raise ProtocolError("put: the daemon took nothing at %d" % offset, op="put")
            offset = nxt
        return src.sha256
    finally:
        src.close()


def ssd_sources(ssd):
    """The files an .ssd names in source attributes: {relative name: path} of those here.

    Only plain relative names (no URI, no absolute path, no '.' or '..'
    part) of regular files beside the .ssd, as fmuctl's upload takes them.
    """
    with open(ssd, "rb") as f:
        text = f.read(SSD_MAX_BYTES)
    here = os.path.dirname(os.path.abspath(ssd))
    found = {}
    for m in _SOURCE.finditer(text):
        name = m.group(1).decode("utf-8", "replace")
        parts = name.split("/")
        if (not name or name.startswith("/") or any(c in name for c in ":&\\") or
                any(p in ("", ".", "..") for p in parts) or name in found):
            continue
        path = os.path.join(here, *parts)
        if os.path.isfile(path):
            found[name] = path
    return found


def piece(res):
    """A results result checked: (data, offset, size, done)."""
    if not isinstance(res, dict):
        raise ProtocolError("results: the result is not a map", op="results")
    data = field(res, "data", bytes, "results")
    offset = field(res, "offset", int, "results")
    size = field(res, "size", int, "results")
    done = field(res, "done", bool, "results")
    if len(data) > CHUNK or offset + len(data) > size:
        raise ProtocolError("results: a piece past the file's size", op="results")
    return data, offset, size, done


def fetch(read, out, follow, poll=POLL):
    """Pieces read(offset) (checked by piece()) to out.write until done (follow) or the size now.

    Returns the number of bytes written.
    """
    offset = 0
    while True:
        data, at, size, done = read(offset)
        if at != offset:
            raise ProtocolError("results: a piece at %d, asked %d" % (at, offset), op="results")
        out.write(data)
        offset += len(data)
        if done or (not follow and offset >= size):
            return offset
        if not data or offset >= size:
            time.sleep(poll)        # the session still records: the next rows come later
