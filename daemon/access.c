/* access: the role each request needs, and a local user's role (access.h). */
#include "access.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ACCESS_MAX_GROUPS       1024    /* of one user, read by getgrouplist() */
#define ACCESS_NSS_BUF          16384

/* Every op's role. A new op in proto.h must be added here: the assert below says so. */
static const enum access_role needed[] = {
        [PROTO_OP_HELLO] = ACCESS_OBSERVER,
        [PROTO_OP_LIST] = ACCESS_OBSERVER,
        [PROTO_OP_STATUS] = ACCESS_OBSERVER,
        [PROTO_OP_GET] = ACCESS_OBSERVER,
        [PROTO_OP_SUBSCRIBE] = ACCESS_OBSERVER,
        [PROTO_OP_UNSUBSCRIBE] = ACCESS_OBSERVER,
        [PROTO_OP_LOGS] = ACCESS_OBSERVER,
        [PROTO_OP_LOAD] = ACCESS_OPERATOR,
        [PROTO_OP_UNLOAD] = ACCESS_OPERATOR,
        [PROTO_OP_START] = ACCESS_OPERATOR,
        [PROTO_OP_PAUSE] = ACCESS_OPERATOR,
        [PROTO_OP_RESUME] = ACCESS_OPERATOR,
        [PROTO_OP_STOP] = ACCESS_OPERATOR,
        [PROTO_OP_WARP] = ACCESS_OPERATOR,
        [PROTO_OP_STEP] = ACCESS_OPERATOR,
        [PROTO_OP_RUN_UNTIL] = ACCESS_OPERATOR,
        [PROTO_OP_SET] = ACCESS_OPERATOR,
        [PROTO_OP_SNAPSHOT] = ACCESS_OPERATOR,
        [PROTO_OP_RESTORE] = ACCESS_OPERATOR,
        [PROTO_OP_SHUTDOWN] = ACCESS_ADMIN,
        [PROTO_OP_VARS] = ACCESS_OBSERVER,
        [PROTO_OP_RIG] = ACCESS_OPERATOR,
        /* What is put is for a load: the role load needs. */
        [PROTO_OP_PUT] = ACCESS_OPERATOR,
        [PROTO_OP_RESULTS] = ACCESS_OBSERVER,
        [PROTO_OP_SNAPSHOTS] = ACCESS_OBSERVER,
        [PROTO_OP_SNAPSHOT_DELETE] = ACCESS_OPERATOR,
        /* An FMI-level instance is made, called and freed as a session is loaded and run. */
        [PROTO_OP_INSTANTIATE] = ACCESS_OPERATOR,
        [PROTO_OP_FMI] = ACCESS_OPERATOR,
        [PROTO_OP_FREE] = ACCESS_OPERATOR,
        [PROTO_OP_DETACH] = ACCESS_OPERATOR,
        [PROTO_OP_SNAPSHOT_EXPORT] = ACCESS_OBSERVER,     /* as snapshots */
        [PROTO_OP_SNAPSHOT_IMPORT] = ACCESS_OPERATOR,     /* as snapshot */
};
_Static_assert(sizeof(needed) / sizeof(needed[0]) == PROTO_OP_COUNT &&
               PROTO_OP_SNAPSHOT_IMPORT == PROTO_OP_COUNT - 1,
               "every request kind needs a role in access.c");

static const char *const names[] = { "none", "observer", "operator", "admin" };

const char *access_role_name(enum access_role r)
{
        return (unsigned)r < sizeof(names) / sizeof(names[0]) ? names[r] : "?";
}

int access_role_parse(const char *s)
{
        for (int i = ACCESS_OBSERVER; i <= ACCESS_ADMIN; i++)
                if (s && !strcmp(s, names[i]))
                        return i;
        return -EINVAL;
}

enum access_role access_needed(enum proto_op op)
{
        return (unsigned)op < PROTO_OP_COUNT ? needed[op] : ACCESS_NONE;
}

bool access_changes(enum proto_op op)
{
        return access_needed(op) >= ACCESS_OPERATOR;
}

bool access_owner_only(enum proto_op op)
{
        /* The rows are the owner's data, not the session's public state. */
        return access_changes(op) || op == PROTO_OP_RESULTS;
}

/* A decimal id, or -1. */
static long long id_of(const char *s)
{
        char *end;
        long long v;

        if (*s < '0' || *s > '9')
                return -1;
        errno = 0;
        v = strtoll(s, &end, 10);
        return errno || *end || v >= (long long)UINT32_MAX ? -1 : v;
}

static bool user_is(const char *name, uid_t uid, const char *pw_name)
{
        long long id = id_of(name);

        return id >= 0 ? (uid_t)id == uid : pw_name && !strcmp(name, pw_name);
}

/* Whether group name (or number) is one of gids. */
static bool in_group(const char *name, const gid_t *gids, int n, char *buf, size_t size)
{
        long long id = id_of(name);
        struct group gr, *res = NULL;
        gid_t g;

        if (id >= 0)
                g = (gid_t)id;
        else if (getgrnam_r(name, &gr, buf, size, &res) == 0 && res)
                g = res->gr_gid;
        else
                return false;
        for (int i = 0; i < n; i++)
                if (gids[i] == g)
                        return true;
        return false;
}

enum access_role access_local(const struct access_rules *r, uid_t uid, gid_t gid, char *who,
                              size_t wholen)
{
        struct passwd pw, *pwr = NULL;
        enum access_role role = ACCESS_NONE;
        gid_t *gids = NULL;
        char *buf;
        int n = 0;

        /* Two halves: the passwd entry's strings, then each group lookup's. */
        buf = malloc(2 * ACCESS_NSS_BUF);
        if (buf && getpwuid_r(uid, &pw, buf, ACCESS_NSS_BUF, &pwr) != 0)
                pwr = NULL;
        if (who)
                snprintf(who, wholen, "uid %lu%s%s%s", (unsigned long)uid, pwr ? " (" : "",
                         pwr ? pwr->pw_name : "", pwr ? ")" : "");
        if (uid == 0 || uid == r->self) {
                role = ACCESS_ADMIN;
                goto out;
        }
        for (size_t i = 0; i < r->n_users; i++)
                if (user_is(r->users[i].name, uid, pwr ? pwr->pw_name : NULL)) {
                        role = r->users[i].role;
                        goto out;
                }
        /* The peer's groups: its primary group as it connected, and those of its user. */
        gids = malloc(ACCESS_MAX_GROUPS * sizeof(*gids));
        if (gids) {
                gids[n++] = gid;
                if (pwr) {
                        int m = ACCESS_MAX_GROUPS - 1;

                        if (getgrouplist(pwr->pw_name, pwr->pw_gid, gids + 1, &m) >= 0)
                                n += m;
                }
        }
        for (size_t i = 0; gids && buf && i < r->n_groups; i++)
                if (r->groups[i].role > role &&
                    in_group(r->groups[i].name, gids, n, buf + ACCESS_NSS_BUF, ACCESS_NSS_BUF))
                        role = r->groups[i].role;
        if (role == ACCESS_NONE && r->has_socket_gid && gids)
                for (int i = 0; i < n && role == ACCESS_NONE; i++)
                        if (gids[i] == r->socket_gid)
                                role = ACCESS_OPERATOR;
        if (role == ACCESS_NONE)
                role = r->default_role;
out:
        free(gids);
        free(buf);
        return role;
}

enum access_role access_unidentified(enum access_role default_role)
{
        return default_role > ACCESS_OBSERVER ? ACCESS_OBSERVER : default_role;
}

void access_denied_message(enum proto_op op, enum access_role have, char *buf, size_t size)
{
        const char *name = proto_op_name(op);

        snprintf(buf, size, "%s needs the %s role; you are %s", name ? name : "?",
                 access_role_name(access_needed(op)), access_role_name(have));
}
