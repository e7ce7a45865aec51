/*
 * access: who may do what on the control plane. Three roles, each with
 * everything the one below may do:
 *
 *   observer   hello, list, status, get, subscribe, unsubscribe (and
 *              fmuctl's watch and inspect, built on those)
 *   operator   load, unload, start, pause, resume, stop, warp, step,
 *              run-until, set, snapshot, restore, rig (a rig may write the
 *              inputs set may)
 *   admin      shutdown (and, outside the protocol, reload by SIGHUP)
 *
 * DESIGN: every request kind has its role in one table (access.c), sized
 * by PROTO_OP_COUNT; a kind added to proto.h without a role fails to
 * compile there, and the test that walks every kind fails on a hole.
 *
 * A local (ipc) client's role comes from its uid and groups, which the
 * kernel reported when it connected (peer_cred.h): root and the daemon's
 * own uid are admin; else the [roles] user entry naming it; else the
 * highest role of the [roles] group entries naming one of its groups
 * (getgrouplist() of its uid: supplementary groups included); else
 * operator when it is in socket_group (the socket's group admits it to
 * use the daemon, as before roles existed); else default_role. A CURVE
 * client's role is the one written after its key in authorized_keys
 * (zap.h), operator when none is written.
 *
 * Threads: pure functions, except access_local(), which asks NSS
 * (getpwuid_r, getgrouplist, getgrnam_r) and is safe in any thread; the
 * control thread asks it through access_cache.h, once per user every few
 * seconds.
 */
#ifndef FMUD_DAEMON_ACCESS_H
#define FMUD_DAEMON_ACCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "proto/proto.h"

enum access_role {
        ACCESS_NONE,            /* unclassified: never a client's role */
        ACCESS_OBSERVER,
        ACCESS_OPERATOR,
        ACCESS_ADMIN,
};

/* "observer", "operator", "admin"; "none" for ACCESS_NONE, "?" out of range. */
const char *access_role_name(enum access_role r);
/* The role named s, or -EINVAL. */
int access_role_parse(const char *s);

/* The role op needs; ACCESS_NONE for an op out of range. */
enum access_role access_needed(enum proto_op op);
/* Whether op changes something (a session, the daemon): it is logged with who asked. */
bool access_changes(enum proto_op op);
/*
 * Whether only the session's owner (who loaded it) or an admin may send op
 * for a session: every op that changes it, and results (the rows are the
 * owner's, not the session's public state).
 */
bool access_owner_only(enum proto_op op);

/* A [roles] entry: a user or group, by name or number, and its role. */
struct access_grant {
        char *name;
        enum access_role role;
};

struct access_rules {
        const struct access_grant *users, *groups;
        size_t n_users, n_groups;
        enum access_role default_role;
        bool has_socket_gid;            /* socket_group's members are operators */
        gid_t socket_gid;
        uid_t self;                     /* the daemon's uid: admin */
};

/*
 * The role of local user uid (primary group gid), and in who (may be NULL)
 * how the log names it: "uid 1000 (alice)".
 */
enum access_role access_local(const struct access_rules *r, uid_t uid, gid_t gid, char *who,
                              size_t wholen);

/*
 * The role of a local peer whose credentials are unknown: default_role,
 * but at most observer. Such peers cannot be told apart (one owner for
 * all), so none may change what another loaded.
 */
enum access_role access_unidentified(enum access_role default_role);

/* "shutdown needs the admin role; you are operator" into buf. */
void access_denied_message(enum proto_op op, enum access_role have, char *buf, size_t size);

#endif
