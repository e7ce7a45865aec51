/*
 * proto_fetch: the results operation's request and result (ops_results.c):
 * a round trip each way, and every bad form refused with its message,
 * so that neither a client nor the daemon acts on a piece that does not
 * fit what was asked.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "proto_fixture.h"

static struct msg m;
static struct pw w;
static char err[256];

static void setup(void)
{
        cr_assert(pw_init(&w) == 0);
        err[0] = '\0';
}

static void teardown(void)
{
        msg_fini(&m);
        pw_fini(&w);
}

TestSuite(proto_fetch, .init = setup, .fini = teardown);

Test(proto_fetch, the_request_round_trips_and_max_is_bounded)
{
        struct proto_results a = { .t = { 3, 2 }, .offset = 70000, .has_max = true, .max = 4096 };
        struct proto_results b;
        const struct pv *args;

        proto_results_encode(&w, 7, &a);
        args = msg_req(&m, &w, PROTO_OP_RESULTS, 7);
        cr_assert(eq(int, proto_results_decode(args, &b, err, sizeof(err)), 0), "%s", err);
        cr_assert(eq(u64, b.t.session, 3));
        cr_assert(eq(u64, b.t.generation, 2));
        cr_assert(eq(u64, b.offset, 70000));
        cr_assert(b.has_max);
        cr_assert(eq(u64, b.max, 4096));
        for (int i = 0; i < 2; i++) {
                uint64_t bad = i ? PROTO_RESULTS_CHUNK + 1ull : 0;

                msg_fini(&m);
                pw_fini(&w);
                cr_assert(pw_init(&w) == 0);
                a.max = bad;
                proto_results_encode(&w, 8, &a);
                args = msg_req(&m, &w, PROTO_OP_RESULTS, 8);
                cr_assert(eq(int, proto_results_decode(args, &b, err, sizeof(err)), -EBADMSG));
                cr_assert(strstr(err, i ? "args.max: 1048577 is not 1 to 1048576 bytes" :
                                 "args.max: 0 is not 1 to 1048576 bytes") != NULL, "%s", err);
        }
        /* offset is required. */
        msg_fini(&m);
        pw_fini(&w);
        cr_assert(pw_init(&w) == 0);
        proto_target_encode(&w, 9, PROTO_OP_RESULTS, &(struct proto_target){ 3, 0 });
        args = msg_req(&m, &w, PROTO_OP_RESULTS, 9);
        cr_assert(eq(int, proto_results_decode(args, &b, err, sizeof(err)), -EBADMSG));
        cr_assert(strstr(err, "offset") != NULL, "%s", err);
}

/* A result encoded as the daemon does, decoded as a client asking for max bytes. */
static int decode(const struct proto_results_result *r, uint64_t max,
                  struct proto_results_result *ret)
{
        msg_fini(&m);
        pw_fini(&w);
        cr_assert(pw_init(&w) == 0);
        proto_reply_ok_begin(&w, 1);
        proto_results_result_encode(&w, r);
        return proto_results_result_decode(msg_result(&m, &w), max, ret, err, sizeof(err));
}

Test(proto_fetch, the_result_round_trips_and_a_piece_that_does_not_fit_is_refused)
{
        static const char data[] = "time,x\n0,1\n";
        struct proto_results_result a = { .data = data, .len = sizeof(data) - 1, .offset = 100,
                                          .size = 111, .done = true,
                                          .format = { "csv", 3 } }, b;

        cr_assert(eq(int, decode(&a, 64, &b), 0), "%s", err);
        cr_assert(eq(u32, b.len, a.len));
        cr_assert(eq(int, memcmp(b.data, data, a.len), 0));
        cr_assert(eq(u64, b.offset, 100));
        cr_assert(eq(u64, b.size, 111));
        cr_assert(b.done);
        cr_assert(str_eq(b.format, "csv"));
        /* More than asked. */
        cr_assert(eq(int, decode(&a, 4, &b), -EBADMSG));
        cr_assert(strstr(err, "result.data: 11 bytes, more than the 4 asked") != NULL, "%s", err);
        /* Past the size it claims. */
        a.size = 105;
        a.done = false;
        cr_assert(eq(int, decode(&a, 64, &b), -EBADMSG));
        cr_assert(strstr(err, "result: 11 bytes at offset 100 pass the size 105") != NULL, "%s",
                  err);
        /* Done, but short of the end. */
        a.size = 200;
        a.done = true;
        cr_assert(eq(int, decode(&a, 64, &b), -EBADMSG));
        cr_assert(strstr(err, "result: done, but 11 bytes at offset 100 do not reach the size "
                         "200") != NULL, "%s", err);
}
