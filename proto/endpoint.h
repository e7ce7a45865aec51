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
 * environment are taken; a relative one is ignored.
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

#endif
