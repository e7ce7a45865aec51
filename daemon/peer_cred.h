/*
 * peer_cred: who is at the other end of a local (ipc) connection.
 *
 * DESIGN: libzmq reads SO_PEERCRED when it accepts a Unix-domain
 * connection and appends ":UID:GID:PID" to the peer's address, which it
 * hands to the application as the "Peer-Address" message property (and to
 * a ZAP handler as the Address frame): "localhost:1000:1000:4242" with
 * libzmq 4.3. The part before the last three fields is not ours to
 * interpret; the three fields are read from the end. The kernel took the
 * credentials when the peer connected, so they cannot be forged by what
 * the peer sends.
 */
#ifndef FMUD_DAEMON_PEER_CRED_H
#define FMUD_DAEMON_PEER_CRED_H

#include <sys/types.h>

/*
 * The uid and gid of a peer address ending in ":UID:GID:PID" (each a
 * decimal number without sign, uid and gid below (uid_t)-1). Returns 0, or
 * -EINVAL (NULL, or anything else); *uid and *gid are written on success only.
 */
int peer_cred_parse(const char *addr, uid_t *uid, gid_t *gid);

#endif
