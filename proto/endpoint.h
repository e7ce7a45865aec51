/*
 * endpoint: where a local fmud listens when nobody says otherwise.
 *
 * DESIGN: the daemon and fmuctl must agree on the default sockets without
 * talking to each other, so the rule lives in this one file, part of the
 * protocol's conventions (proto/) and linked by both. The run directory is $RUNTIME_DIRECTORY (set by systemd's
 * RuntimeDirectory=; the first entry when it lists several), else
 * /run/fmud for root, else $XDG_RUNTIME_DIR/fmud, else /tmp/fmud-UID.
 * The control socket is ipc://RUNDIR/control.sock, the PUB socket
 * ipc://RUNDIR/events.sock. Only absolute directories from the
 * environment are taken; a relative one is ignored. A daemon given only
 * its control endpoint ipc://DIR/NAME publishes on ipc://DIR/events.sock
 * (fmud_pub_endpoint_for()), so that two daemons on two directories never
 * meet on one PUB socket.
 *
 * Nothing here creates a file or logs; every function is thread-safe.
 */
#ifndef FMUD_PROTO_ENDPOINT_H
#define FMUD_PROTO_ENDPOINT_H

#include <stddef.h>

/* The run directory into buf. Returns 0, or -ENAMETOOLONG when it does not fit. */
int fmud_runtime_dir(char *buf, size_t len);
/* "ipc://RUNDIR/control.sock" into buf. Returns 0 or -ENAMETOOLONG. */
int fmud_default_endpoint(char *buf, size_t len);
/* "ipc://RUNDIR/events.sock" into buf. Returns 0 or -ENAMETOOLONG. */
int fmud_default_pub_endpoint(char *buf, size_t len);
/*
 * The PUB endpoint of a daemon whose control endpoint is ep and that was
 * given none: "ipc://DIR/events.sock" for ep "ipc:///DIR/NAME". Returns
 * 0, -EINVAL when ep is not ipc:// with an absolute path below a
 * directory, -EEXIST when ep is DIR/events.sock itself (the PUB socket
 * must then be named), or -ENAMETOOLONG.
 */
int fmud_pub_endpoint_for(const char *ep, char *buf, size_t len);

/* Where the system's daemon (run by root, under systemd) has its sockets. */
#define FMUD_SYSTEM_RUNDIR      "/run/fmud"

/*
 * The control endpoint of a client given none: for root, the default
 * (fmud_default_endpoint()). For anybody else, the user's own daemon's
 * when its socket file exists, the socket and its directory owned by this
 * user and the directory writable by nobody else; else the system
 * daemon's, ipc://SYSTEM_DIR/control.sock (system_dir: FMUD_SYSTEM_RUNDIR),
 * when its socket exists or cannot be looked at (a directory closed to
 * this user: the connection then says so); else the user's own, unless
 * its directory or socket is somebody else's (then the system daemon's
 * still: a user's requests never go to another user's socket). Returns 0
 * or -ENAMETOOLONG.
 */
int fmud_client_endpoint(const char *system_dir, char *buf, size_t len);

#endif
