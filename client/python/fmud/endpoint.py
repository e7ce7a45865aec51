"""endpoint: where the daemon is, and the CURVE key files, as fmuctl finds them.

DESIGN: the rules are fmuctl's own (proto/endpoint.c, client/cli_conn.c,
docs/fmuctl.md "Connection"), written again here so that a Python program
reaches the same daemon as fmuctl would from the same environment: an
explicit endpoint, else FMUD_ENDPOINT, else the user's own daemon's socket
when it and its directory are the user's and closed to others' writes,
else the system daemon's. A key file is one Z85 line, read with the same
bounds as libfmud's fmud_key_read().
"""

import errno
import grp
import os
import socket
import stat

import zmq
from zmq.utils import z85

from .errors import ConnectionFailed, Error

SYSTEM_RUNDIR = "/run/fmud"
KEY_LEN = 40
KEY_FILE_MAX = 256


def runtime_dir():
    """$RUNTIME_DIRECTORY (its first entry), /run/fmud for root, $XDG_RUNTIME_DIR/fmud, /tmp/fmud-UID."""
    rt = os.environ.get("RUNTIME_DIRECTORY", "")
    xdg = os.environ.get("XDG_RUNTIME_DIR", "")
    if rt.startswith("/"):
        return rt.split(":", 1)[0]
    if os.geteuid() == 0:
        return SYSTEM_RUNDIR
    if xdg.startswith("/"):
        return xdg + "/fmud"
    return "/tmp/fmud-%d" % os.geteuid()


def default_endpoint():
    """The local daemon's control endpoint, ipc://RUNDIR/control.sock."""
    return "ipc://%s/control.sock" % runtime_dir()


def _own_socket(path):
    """1: the user's own trusted socket; 0: neither it nor its directory is there; -1: someone else's."""
    uid = os.geteuid()
    try:
        st = os.lstat(os.path.dirname(path))
    except FileNotFoundError:
        return 0
    except OSError:
        return -1
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return -1
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return 0
    except OSError:
        return -1
    return 1 if st.st_uid == uid else -1


def _exists(path):
    """Whether path is there, or may be (a directory on the way this user may not search)."""
    try:
        os.stat(path)
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def client_endpoint(system_dir=SYSTEM_RUNDIR):
    """The endpoint of a client given none (proto/endpoint.h fmud_client_endpoint())."""
    ep = default_endpoint()
    if os.geteuid() == 0:
        return ep
    own = _own_socket(ep[len("ipc://"):])
    if own > 0:
        return ep
    sys_sock = system_dir + "/control.sock"
    # The user's own directory is somebody else's: never that one, even as the last resort.
    if _exists(sys_sock) or own < 0:
        return "ipc://" + sys_sock
    return ep


def resolve(endpoint=None):
    """endpoint, else $FMUD_ENDPOINT, else client_endpoint()."""
    if endpoint:
        return endpoint
    return os.environ.get("FMUD_ENDPOINT") or client_endpoint()


def _denying_group(path):
    """The group of the first directory on path this user may not search, else of path itself."""
    parts = path.split("/")
    for i in range(2, len(parts)):
        d = "/".join(parts[:i])
        if not os.access(d, os.X_OK):
            try:
                return os.stat(d).st_gid
            except OSError:
                return None
    try:
        return os.stat(path).st_gid
    except OSError:
        return None


def check_ipc(endpoint):
    """For ipc://PATH: raise ConnectionFailed at once when this user may not connect or nobody listens."""
    if not endpoint.startswith("ipc://") or endpoint[6:7] == "@":
        return
    path = endpoint[6:]
    # Connecting to a socket file takes write access to it and search on its directories.
    if not os.access(path, os.W_OK):
        if _exists(path):
            gid = _denying_group(path)
            try:
                name = grp.getgrgid(gid).gr_name if gid is not None else None
            except KeyError:
                name = str(gid)
            hint = " (ask to be added to group %s)" % name if name else ""
            raise ConnectionFailed("permission denied: %s%s" % (path, hint))
    # libzmq retries a refused ipc connection until the hello times out: ask the kernel now.
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
    except OSError as e:
        if e.errno in (errno.ENOENT, errno.ECONNREFUSED, errno.ENOTSOCK):
            raise ConnectionFailed("cannot connect to '%s': no daemon listens there (%s)"
                                   % (endpoint, os.strerror(e.errno))) from None
    finally:
        s.close()


def read_key(path):
    """The Z85 key (str, 40 characters) in file path: one line, surrounding blanks allowed."""
    try:
        with open(path, "rb") as f:
            data = f.read(KEY_FILE_MAX + 1)
    except OSError as e:
        raise Error("cannot open '%s': %s" % (path, e.strerror)) from None
    text = data.strip()
    ok = len(data) <= KEY_FILE_MAX and len(text) == KEY_LEN and b"\0" not in text
    if ok:
        try:
            z85.decode(text)
        except (ValueError, KeyError, IndexError):
            ok = False
    if not ok:
        raise Error("'%s' does not hold one Z85 key" % path)
    return text.decode("ascii")


def curve_keys(server_key=None, key=None):
    """(server public, client public, client secret) from the key files, or None without CURVE.

    server_key and key are paths, else $FMUD_SERVER_KEY and $FMUD_KEY; both or neither.
    """
    server_key = server_key or os.environ.get("FMUD_SERVER_KEY") or None
    key = key or os.environ.get("FMUD_KEY") or None
    if not server_key and not key:
        return None
    if not server_key or not key:
        raise Error("CURVE needs both the server's public key file and this client's key file")
    server = read_key(server_key)
    secret = read_key(key)
    public = zmq.curve_public(secret.encode("ascii")).decode("ascii")
    return server, public, secret
