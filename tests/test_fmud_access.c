/*
 * The role of every request kind, a local user's role from the rules
 * (daemon/access.h), and the uid/gid of an ipc peer address
 * (daemon/peer_cred.h).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon/access.h"
#include "daemon/access_cache.h"
#include "daemon/peer_cred.h"

/* A hang fails its test by name, well inside ctest's limit for the file. */
TestSuite(fmud_access, .timeout = 120);

Test(fmud_access, every_request_kind_has_a_role)
{
        for (int op = 0; op < PROTO_OP_COUNT; op++)
                cr_assert(access_needed((enum proto_op)op) != ACCESS_NONE, "'%s' has no role",
                          proto_op_name((enum proto_op)op));
        cr_assert(access_needed(PROTO_OP_COUNT) == ACCESS_NONE);
}

Test(fmud_access, the_roles_of_the_request_kinds)
{
        static const enum proto_op observer[] = { PROTO_OP_HELLO, PROTO_OP_LIST, PROTO_OP_STATUS,
                                                  PROTO_OP_GET, PROTO_OP_SUBSCRIBE,
                                                  PROTO_OP_UNSUBSCRIBE, PROTO_OP_VARS, PROTO_OP_LOGS,
                                                  PROTO_OP_SNAPSHOTS, PROTO_OP_SNAPSHOT_EXPORT };
        static const enum proto_op op[] = { PROTO_OP_LOAD, PROTO_OP_UNLOAD, PROTO_OP_START,
                                            PROTO_OP_PAUSE, PROTO_OP_RESUME, PROTO_OP_STOP,
                                            PROTO_OP_WARP, PROTO_OP_STEP, PROTO_OP_RUN_UNTIL,
                                            PROTO_OP_SET, PROTO_OP_SNAPSHOT, PROTO_OP_RESTORE,
                                            PROTO_OP_RIG, PROTO_OP_SNAPSHOT_DELETE,
                                            PROTO_OP_SNAPSHOT_IMPORT };

        for (size_t i = 0; i < sizeof(observer) / sizeof(observer[0]); i++) {
                cr_assert(access_needed(observer[i]) == ACCESS_OBSERVER);
                cr_assert(access_changes(observer[i]) == false);
        }
        for (size_t i = 0; i < sizeof(op) / sizeof(op[0]); i++) {
                cr_assert(access_needed(op[i]) == ACCESS_OPERATOR, "%s", proto_op_name(op[i]));
                cr_assert(access_changes(op[i]));
        }
        cr_assert(access_needed(PROTO_OP_SHUTDOWN) == ACCESS_ADMIN);
}

Test(fmud_access, role_names_parse_and_a_refusal_names_the_role)
{
        char msg[128];

        cr_assert(access_role_parse("observer") == ACCESS_OBSERVER);
        cr_assert(access_role_parse("operator") == ACCESS_OPERATOR);
        cr_assert(access_role_parse("admin") == ACCESS_ADMIN);
        cr_assert(access_role_parse("none") == -EINVAL);
        cr_assert(access_role_parse("Admin") == -EINVAL);
        cr_assert(access_role_parse("") == -EINVAL);
        cr_assert(access_role_parse(NULL) == -EINVAL);
        access_denied_message(PROTO_OP_SHUTDOWN, ACCESS_OPERATOR, msg, sizeof(msg));
        cr_assert_str_eq(msg, "shutdown needs the admin role; you are operator");
        access_denied_message(PROTO_OP_RUN_UNTIL, ACCESS_OBSERVER, msg, sizeof(msg));
        cr_assert_str_eq(msg, "run-until needs the operator role; you are observer");
}

Test(fmud_access, a_local_users_role_follows_the_rules_in_order)
{
        static const struct access_grant users[] = { { "nobody", ACCESS_OPERATOR },
                                                     { "4000", ACCESS_ADMIN } };
        static const struct access_grant groups[] = { { "4100", ACCESS_OBSERVER },
                                                      { "4101", ACCESS_ADMIN } };
        struct access_rules r = { .users = users, .n_users = 2, .groups = groups, .n_groups = 2,
                                  .default_role = ACCESS_OBSERVER, .has_socket_gid = true,
                                  .socket_gid = 4200, .self = 4300 };
        char who[80];

        /* root and the daemon's own uid, whatever the rules say. */
        cr_assert(access_local(&r, 0, 0, who, sizeof(who)) == ACCESS_ADMIN);
        cr_assert_str_eq(who, "uid 0 (root)");
        cr_assert(access_local(&r, 4300, 4300, NULL, 0) == ACCESS_ADMIN);
        /* A user entry by name, and by number (no such user: the log has the number only). */
        cr_assert(access_local(&r, 65534, 65534, who, sizeof(who)) == ACCESS_OPERATOR);
        cr_assert_str_eq(who, "uid 65534 (nobody)");
        cr_assert(access_local(&r, 4000, 4100, who, sizeof(who)) == ACCESS_ADMIN);
        cr_assert_str_eq(who, "uid 4000");
        /* Group entries: the highest that matches, before socket_group. */
        cr_assert(access_local(&r, 4001, 4100, NULL, 0) == ACCESS_OBSERVER);
        cr_assert(access_local(&r, 4001, 4101, NULL, 0) == ACCESS_ADMIN);
        /* socket_group's members are operators; anyone else gets default_role. */
        cr_assert(access_local(&r, 4001, 4200, NULL, 0) == ACCESS_OPERATOR);
        cr_assert(access_local(&r, 4001, 4201, NULL, 0) == ACCESS_OBSERVER);
        r.default_role = ACCESS_OPERATOR;
        cr_assert(access_local(&r, 4001, 4201, NULL, 0) == ACCESS_OPERATOR);
        r.has_socket_gid = false;
        r.default_role = ACCESS_OBSERVER;
        cr_assert(access_local(&r, 4001, 4200, NULL, 0) == ACCESS_OBSERVER);
}

Test(fmud_access, peer_cred_parse_reads_uid_and_gid_from_the_end)
{
        uid_t uid = 7;
        gid_t gid = 7;

        cr_assert(peer_cred_parse("localhost:1000:1001:4242", &uid, &gid) == 0);
        cr_assert(uid == 1000 && gid == 1001);
        cr_assert(peer_cred_parse(":0:0:1", &uid, &gid) == 0);
        cr_assert(uid == 0 && gid == 0);
        cr_assert(peer_cred_parse("a:b:c:65534:65534:99", &uid, &gid) == 0);
        cr_assert(uid == 65534 && gid == 65534);
}

Test(fmud_access, peer_cred_parse_refuses_anything_else_and_writes_nothing)
{
        static const char *const bad[] = {
                "", "localhost", "1000:1000:1", "localhost:1000:1000", "h:1000:1000:",
                "h::1000:1", "h:-1:0:1", "h:1000:x:1", "h:4294967295:0:1", "h:0:4294967295:1",
                "h:99999999999999999999999:0:1", "h:0:0:2147483648", "h:+1:0:1", "h:1 :0:1",
        };
        uid_t uid = 7;
        gid_t gid = 7;

        cr_assert(peer_cred_parse(NULL, &uid, &gid) == -EINVAL);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                cr_assert(peer_cred_parse(bad[i], &uid, &gid) == -EINVAL, "'%s' accepted", bad[i]);
        cr_assert(uid == 7 && gid == 7);
}

static int lookups;

static enum access_role count_lookup(const struct access_rules *r, uid_t uid, gid_t gid,
                                     char *who, size_t wholen)
{
        (void)r;
        lookups++;
        snprintf(who, wholen, "uid %lu (looked up)", (unsigned long)uid);
        return gid == 7 ? ACCESS_OPERATOR : ACCESS_OBSERVER;
}

Test(fmud_access, a_users_role_is_looked_up_once_until_the_cache_is_cleared)
{
        static struct access_cache c;
        struct access_rules rules = { .default_role = ACCESS_OBSERVER };
        char who[80];

        lookups = 0;
        access_cache_init(&c, count_lookup);
        cr_assert(eq(int, access_cached(&c, &rules, 1000, 7, who, sizeof(who)), ACCESS_OPERATOR));
        cr_assert(eq(int, access_cached(&c, &rules, 1000, 7, who, sizeof(who)), ACCESS_OPERATOR));
        cr_assert(eq(int, lookups, 1));
        cr_assert(eq(str, who, "uid 1000 (looked up)"));
        /* Another primary group is another entry. */
        cr_assert(eq(int, access_cached(&c, &rules, 1000, 8, who, sizeof(who)), ACCESS_OBSERVER));
        cr_assert(eq(int, lookups, 2));
        access_cache_clear(&c);
        cr_assert(eq(int, access_cached(&c, &rules, 1000, 7, NULL, 0), ACCESS_OPERATOR));
        cr_assert(eq(int, lookups, 3));
}

Test(fmud_access, the_cache_holds_a_bounded_number_of_users)
{
        static struct access_cache c;
        struct access_rules rules = { .default_role = ACCESS_OBSERVER };

        lookups = 0;
        access_cache_init(&c, count_lookup);
        for (uid_t u = 1; u <= ACCESS_CACHE_MAX + 10; u++)
                (void)access_cached(&c, &rules, u, 1, NULL, 0);
        cr_assert(eq(sz, c.n, ACCESS_CACHE_MAX));
        cr_assert(eq(int, lookups, ACCESS_CACHE_MAX + 10));
        /* The newest are kept. */
        (void)access_cached(&c, &rules, ACCESS_CACHE_MAX + 10, 1, NULL, 0);
        cr_assert(eq(int, lookups, ACCESS_CACHE_MAX + 10));
}

Test(fmud_access, a_peer_without_credentials_reads_but_changes_nothing)
{
        cr_assert(eq(int, access_unidentified(ACCESS_ADMIN), ACCESS_OBSERVER));
        cr_assert(eq(int, access_unidentified(ACCESS_OPERATOR), ACCESS_OBSERVER));
        cr_assert(eq(int, access_unidentified(ACCESS_OBSERVER), ACCESS_OBSERVER));
}
