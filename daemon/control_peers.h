/*
 * control_peers: which client a request token belongs to, so that a reply
 * completed later (by a session's thread) goes back to the right ROUTER
 * socket and peer.
 *
 * DESIGN: tokens grow monotonically, so entries are appended in order and
 * found by binary search; a finished entry is marked and the array is
 * compacted when half of it is dead. The number of requests in flight is
 * bounded by CTL_MAX_PENDING (a request beyond it is refused "limit").
 *
 * Threads: the control thread only.
 */
#ifndef FMUD_DAEMON_CONTROL_PEERS_H
#define FMUD_DAEMON_CONTROL_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CTL_MAX_PENDING         65536
#define CTL_MAX_IDENTITY        255     /* ZeroMQ routing ids are at most 255 bytes */
#define CTL_WHO_MAX             112     /* "uid 1000 (alice) as operator", "key <Z85> as admin" */
#define CTL_KEY_MAX             41      /* a CURVE key in Z85, NUL included */

struct ctl_peer {
        uint64_t token;                 /* 0: finished */
        uint8_t sock;                   /* index of the ROUTER socket */
        bool delim;                     /* the request had an empty delimiter frame (REQ) */
        uint8_t id_len;
        uint8_t id[CTL_MAX_IDENTITY];
        /* A request that changes something: its outcome is logged with who asked. */
        bool log;
        uint8_t op;                     /* enum proto_op */
        uint64_t session;               /* the session it names; 0: none yet (load) */
        char who[CTL_WHO_MAX];
        char key[CTL_KEY_MAX];          /* a tcp peer's CURVE key (Z85); "": none */
        bool has_cred;                  /* an ipc peer whose uid and gid the kernel told */
        uid_t uid;
        gid_t gid;
};

struct ctl_peers {
        struct ctl_peer *v;
        size_t n, cap, live;
        uint64_t next_token;
};

void peers_init(struct ctl_peers *p);
void peers_fini(struct ctl_peers *p);
/* Record a copy of peer (its token ignored); returns its token (> 0), or 0 when full or out of memory. */
uint64_t peers_add(struct ctl_peers *p, const struct ctl_peer *peer);
/* Find and remove token into ret. Returns 0 or -ENOENT. */
int peers_take(struct ctl_peers *p, uint64_t token, struct ctl_peer *ret);
size_t peers_live(const struct ctl_peers *p);

#endif
