/*
 * control_int: the control thread's state, shared by control*.c only.
 *
 * Ownership: every socket, the peer table and the queue's consumer side
 * belong to the control thread; the queue's producer side is shared
 * (control_queue.h).
 */
#ifndef FMUD_DAEMON_CONTROL_INT_H
#define FMUD_DAEMON_CONTROL_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "daemon/access_cache.h"
#include "daemon/control.h"
#include "daemon/control_peers.h"
#include "daemon/control_queue.h"
#include "daemon/control_subs.h"
#include "daemon/zap.h"
#include "proto/proto.h"
#include "proto/rig_wire.h"

#include <zmq.h>

#define CTL_SOCK_IPC    0
#define CTL_SOCK_TCP    1
#define CTL_MAX_SOCKS   2
#define CTL_MAX_PUBS    4096    /* publications queued for the PUB sockets */
#define CTL_PUB_HWM     10000   /* messages queued per subscriber before a send is refused */
#define CTL_LINGER_MS   1000    /* to deliver the last replies on close */
#define CTL_MAX_PATHS   8

#define RIG_TOKEN_MS    5000    /* a token's life */
#define RIG_PEER_MS     2000    /* a rig connection sends its token within this */
#define RIG_MAX_TOKENS  64
#define RIG_MAX_CONNS   16
/* Of those, one user holds at most: no user can keep the others' rigs out. */
#define RIG_USER_TOKENS 8
#define RIG_USER_CONNS  4
#define RIG_MAX_BRIDGES 64      /* remote rigs (rig_bridge.h) */
#define RIG_REAP_MS     250     /* while a bridge lives, the loop looks for ended ones this often */

struct rig_bridge;

/* A rig channel waiting for its rig (control_rig.c). */
struct ctl_rig_token {
        bool live;
        char hex[RIGW_TOKEN_LEN];
        uid_t uid;                      /* of the asker: the only one it is handed to */
        int fd;
        uint64_t session;
        int64_t expires;                /* CLOCK_MONOTONIC ms */
};

/* A connection to the rig socket, its token being read. */
struct ctl_rig_conn {
        int fd;                         /* -1: free */
        uid_t uid;                      /* the peer's (SO_PEERCRED) */
        size_t got;
        char buf[RIGW_TOKEN_LEN];
        int64_t deadline;
};

struct ctl_rig {
        int lfd;                        /* -1: no rig socket (no ipc endpoint) */
        bool bound;
        char path[108];
        struct ctl_rig_token tok[RIG_MAX_TOKENS];
        struct ctl_rig_conn conn[RIG_MAX_CONNS];
        uint64_t refused;               /* connections refused for their user's cap */
        struct rig_bridge *bridge[RIG_MAX_BRIDGES];     /* remote rigs; NULL: free */
};

struct control {
        const struct fmud_config *cfg;
        void *zctx;
        struct zap *zap;
        void *router[CTL_MAX_SOCKS];    /* NULL when not configured */
        void *pub[CTL_MAX_SOCKS];
        struct ctl_queue q;
        struct ctl_peers peers;
        struct proto_limits lim;
        struct host *host;
        control_reload_fn *reload;
        void *reload_ctx;
        struct timespec started;
        bool has_socket_gid;            /* socket_group, as bound: its members are operators */
        gid_t socket_gid;
        struct ctl_rig rig;             /* rig channels being handed out */
        struct ctl_subs subs;           /* sample topics with a subscriber */
        struct access_cache roles;      /* local users' roles, cleared by a reload */
        bool stop;
        uint64_t dropped_logged;
        uint64_t pub_lost, pub_lost_logged;     /* sends a full subscriber refused */
        /* Files and directories to remove on the way out. */
        char *sock_files[CTL_MAX_PATHS];
        char *made_dirs[CTL_MAX_PATHS];
        int n_sock_files, n_made_dirs;
};

/* CLOCK_MONOTONIC now, in ms (control_rig.c). */
int64_t ctl_now_ms(void);

/* control_sock.c */
int ctl_bind_all(struct control *c, char *err, size_t errlen);
void ctl_remove_files(struct control *c);

/* control_rig.c; init before anything can fail (control_free() calls fini). */
void ctl_rig_init(struct control *c);
int ctl_rig_bind(struct control *c, char *err, size_t errlen);
void ctl_rig_fini(struct control *c);
/* Answer the rig request of p whose channel it queued (it->fd is taken on success). */
void ctl_rig_grant(struct control *c, const struct ctl_peer *p, struct cq_item *it);
/* Answer p's request id with an error (logged as its outcome). */
void ctl_rig_refuse(struct control *c, const struct ctl_peer *p, uint64_t id, enum proto_err code,
                    const char *msg);
/* A new token: RIGW_TOKEN_LEN hex characters of random bits into hex (no NUL). 0 or -EIO. */
int ctl_rig_new_token(char *hex);
/* The rig sockets to poll into items (at most max); lowers *timeout (ms, -1: none) to the next deadline. */
int ctl_rig_poll_items(struct control *c, zmq_pollitem_t *items, int max, long *timeout);
void ctl_rig_serve(struct control *c, const zmq_pollitem_t *items, int n);

/* control_rig_remote.c: the rig request of a tcp peer p, answered with a bridge (it->fd taken). */
void ctl_rig_remote_grant(struct control *c, const struct ctl_peer *p, struct cq_item *it);
/* Session is gone (host's opts.gone): its bridge, if any, is stopped. */
void ctl_rig_remote_gone(struct control *c, uint64_t session);
/*
 * Free the bridges that ended by themselves, and lower *timeout (ms, -1:
 * none; NULL: left alone) to RIG_REAP_MS while one lives, so an idle loop
 * frees them too; _fini stops them all.
 */
void ctl_rig_remote_reap(struct control *c, long *timeout);
void ctl_rig_remote_fini(struct control *c);

/* control_req.c: one message received on router[sock]. */
void ctl_serve(struct control *c, int sock);
/* The log line of a changing request's outcome, from its reply (control_req.c). */
void ctl_log_outcome(const struct ctl_peer *p, const void *body, size_t len);
/* Send one encoded body to a peer; takes nothing. */
void ctl_send(struct control *c, const struct ctl_peer *p, const void *body, size_t len);

#endif
