/*
 * peer_cred: the uid and gid at the end of libzmq's Peer-Address of an ipc
 * peer (":UID:GID:PID"), and nothing from anything else.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stddef.h>

#include "daemon/peer_cred.h"

/* A hang fails its test by name, well inside ctest's limit for the file. */
TestSuite(peer_cred, .timeout = 120);

Test(peer_cred, the_uid_and_gid_of_an_ipc_peer_address)
{
        uid_t uid = 7;
        gid_t gid = 7;

        cr_assert(eq(int, peer_cred_parse("localhost:1000:100:4242", &uid, &gid), 0));
        cr_assert(eq(u32, (uint32_t)uid, 1000));
        cr_assert(eq(u32, (uint32_t)gid, 100));
        cr_assert(eq(int, peer_cred_parse(":0:0:1", &uid, &gid), 0));
        cr_assert(eq(u32, (uint32_t)uid, 0));
        cr_assert(eq(u32, (uint32_t)gid, 0));
}

Test(peer_cred, anything_else_is_refused_and_leaves_the_results_alone)
{
        static const char *const bad[] = {
                "", "localhost", "127.0.0.1", "localhost:1000:100", "localhost::100:1",
                "localhost:1000::1", "localhost:1000:100:", "localhost:-1:100:1",
                "localhost:1000:1x0:1", "localhost:4294967295:100:1",
                "localhost:99999999999:100:1", "1000:100:1",
        };
        uid_t uid = 7;
        gid_t gid = 8;

        cr_assert(eq(int, peer_cred_parse(NULL, &uid, &gid), -EINVAL));
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                cr_assert(eq(int, peer_cred_parse(bad[i], &uid, &gid), -EINVAL), "'%s'", bad[i]);
        cr_assert(eq(u32, (uint32_t)uid, 7));
        cr_assert(eq(u32, (uint32_t)gid, 8));
}
