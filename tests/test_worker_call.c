/*
 * worker_call: the call protocol's helpers (worker/call.c) refuse every
 * malformed header, range and string, the payload writer moves to the side
 * buffer when the record is full, and the worker's resource URI is a
 * proper file URI (FMI 2.0).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "worker/call.h"
#include "worker/worker.h"

static size_t record(unsigned char *buf, struct call_hdr h, size_t body, size_t payload)
{
        memset(buf, 0, 512);
        h.magic = h.magic ? h.magic : CALL_MAGIC;
        h.body_len = (uint32_t)body;
        memcpy(buf, &h, sizeof(h));
        return sizeof(h) + body + payload;
}

Test(worker_call, parse_accepts_a_well_formed_record)
{
        unsigned char buf[512];
        struct call_in in;
        bool side = true;
        size_t len = record(buf, (struct call_hdr){ .kind = CALL_REQUEST, .op = CALL_OP_GET,
                                                    .payload_len = 24 }, 64, 24);

        cr_assert(eq(int, call_parse(buf, len, &in, &side), 0));
        cr_assert(eq(int, side, false));
        cr_assert(eq(u64, in.payload_len, 24));
        cr_assert(eq(ptr, (void *)in.body, buf + sizeof(struct call_hdr)));
        cr_assert(eq(ptr, (void *)in.payload, buf + sizeof(struct call_hdr) + 64));
}

Test(worker_call, parse_refuses_every_malformed_header)
{
        static const struct {
                struct call_hdr h;
                size_t body, payload, len_delta;
        } bad[] = {
                { { .magic = 0x12345678, .kind = CALL_REQUEST, .op = CALL_OP_GET }, 0, 0, 0 },
                { { .kind = 0, .op = CALL_OP_GET }, 0, 0, 0 },
                { { .kind = 4, .op = CALL_OP_GET }, 0, 0, 0 },
                { { .kind = CALL_REQUEST, .op = CALL_OP_NONE }, 0, 0, 0 },
                { { .kind = CALL_REQUEST, .op = CALL_OP_COUNT }, 0, 0, 0 },
                { { .kind = CALL_REQUEST, .op = CALL_OP_GET, .flags = 2 }, 0, 0, 0 },
                { { .kind = CALL_REQUEST, .op = CALL_OP_GET }, 12, 0, 0 },          /* body not 8-aligned */
                { { .kind = CALL_REQUEST, .op = CALL_OP_GET }, 136, 0, 0 },         /* over CALL_BODY_MAX */
                { { .kind = CALL_REQUEST, .op = CALL_OP_GET, .payload_len = 8 }, 0, 16, 0 },
                { { .kind = CALL_REQUEST, .op = CALL_OP_GET, .payload_off = 8 }, 0, 0, 0 },
                { { .kind = CALL_REQUEST, .op = CALL_OP_GET, .flags = CALL_F_SIDE,
                    .payload_off = 4 }, 0, 0, 0 },                                  /* misaligned */
                { { .kind = CALL_REQUEST, .op = CALL_OP_GET, .flags = CALL_F_SIDE }, 0, 8, 0 },
        };
        unsigned char buf[512];
        struct call_in in;
        bool side;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                size_t len = record(buf, bad[i].h, bad[i].body, bad[i].payload);

                cr_assert(eq(int, call_parse(buf, len, &in, &side), -EBADMSG), "case %zu", i);
        }
        /* Shorter than a header, or than the body it announces. */
        cr_assert(eq(int, call_parse(buf, 10, &in, &side), -EBADMSG));
        record(buf, (struct call_hdr){ .kind = CALL_REQUEST, .op = CALL_OP_GET }, 64, 0);
        cr_assert(eq(int, call_parse(buf, sizeof(struct call_hdr) + 32, &in, &side), -EBADMSG));
}

Test(worker_call, ranges_must_lie_inside_and_hold_their_count)
{
        unsigned char payload[64];
        struct call_in in = { .payload = payload, .payload_len = sizeof(payload) };
        const void *p;

        cr_assert(eq(int, call_in_range(&in, &(struct call_range){ 8, 16 }, 8, 2, &p), 0));
        cr_assert(eq(ptr, (void *)p, payload + 8));
        /* No values: still a pointer an FMU may be handed (memcpy of 0 bytes needs one). */
        cr_assert(eq(int, call_in_range(&in, &(struct call_range){ 0, 0 }, 8, 0, &p), 0));
        cr_assert(p != NULL);
        cr_assert(eq(int, call_in_range(&in, &(struct call_range){ 8, 16 }, 8, 3, &p), -EBADMSG));
        cr_assert(eq(int, call_in_range(&in, &(struct call_range){ 4, 8 }, 8, 1, &p), -EBADMSG));
        cr_assert(eq(int, call_in_range(&in, &(struct call_range){ 56, 16 }, 8, 2, &p), -EBADMSG));
        cr_assert(eq(int, call_in_range(&in, &(struct call_range){ UINT64_MAX - 7, 16 }, 8, 2, &p),
                     -EBADMSG));
        cr_assert(eq(int, call_in_range(&in, &(struct call_range){ 0, 0 }, 8, UINT64_MAX / 4, &p),
                     -EBADMSG));
        cr_assert(eq(int, call_in_range(&in, &(struct call_range){ 2, 4 }, 2, 2, &p), 0));
        cr_assert(eq(int, call_in_bytes(&in, &(struct call_range){ 60, 4 }, 8, &p), 0));
        cr_assert(eq(int, call_in_bytes(&in, &(struct call_range){ 60, 5 }, 8, &p), -EBADMSG));
        cr_assert(eq(int, call_in_bytes(&in, &(struct call_range){ 0, 9 }, 8, &p), -EBADMSG));
}

Test(worker_call, strings_must_be_exactly_n_and_within_the_limit)
{
        static const char two[] = "ab\0cde";      /* sizeof: 7, two strings */
        uint64_t bad = 99;

        cr_assert(eq(int, call_check_strings(two, sizeof(two), 2, 3, &bad), 0));
        cr_assert(eq(int, call_check_strings(two, sizeof(two), 1, 3, &bad), -EBADMSG));
        cr_assert(eq(int, call_check_strings(two, sizeof(two), 3, 3, &bad), -EBADMSG));
        cr_assert(eq(int, call_check_strings(two, sizeof(two) - 1, 2, 3, &bad), -EBADMSG));
        cr_assert(eq(int, call_check_strings(two, sizeof(two), 2, 2, &bad), -EFBIG));
        cr_assert(eq(u64, bad, 1));
        cr_assert(eq(int, call_check_strings(NULL, 0, 0, 3, &bad), 0));
        cr_assert(eq(int, call_check_strings("", 1, 1, 0, &bad), 0));
}

Test(worker_call, sizes_that_overflow_are_refused)
{
        uint64_t sizes[] = { UINT64_MAX, 2 }, sum;

        cr_assert(eq(int, call_sum_sizes(sizes, 2, &sum), -EOVERFLOW));
        sizes[0] = 5;
        cr_assert(eq(int, call_sum_sizes(sizes, 2, &sum), 0));
        cr_assert(eq(u64, sum, 7));
}

Test(worker_call, the_writer_moves_to_the_side_buffer_when_the_record_is_full)
{
        unsigned char inl[64], side[256];
        struct call_out o;
        struct call_range r1, r2;
        uint64_t off;

        call_out_init(&o, inl, sizeof(inl), side, sizeof(side));
        cr_assert(eq(int, call_out_put(&o, "abc", 3, &r1), 0));
        cr_assert(eq(int, o.in_side, false));
        cr_assert(eq(int, call_out_alloc(&o, 100, &off), 0));
        cr_assert(eq(int, o.in_side, true));
        cr_assert(eq(u64, off, 8), "8-aligned after the first piece");
        cr_assert(eq(int, memcmp(side + r1.off, "abc", 3), 0), "moved along");
        cr_assert(eq(int, call_out_put(&o, "xyz", 3, &r2), 0));
        cr_assert(eq(u64, r2.off % 8, 0));
        cr_assert(eq(int, call_out_alloc(&o, 200, &off), -EMSGSIZE));
        /* Without a side buffer nothing moves. */
        call_out_init(&o, inl, sizeof(inl), NULL, 0);
        cr_assert(eq(int, call_out_alloc(&o, 65, &off), -EMSGSIZE));
        /* Expecting a large payload starts in the side buffer. */
        call_out_init(&o, inl, sizeof(inl), side, sizeof(side));
        call_out_expect(&o, 100);
        cr_assert(eq(int, o.in_side, true));
        cr_assert(eq(u64, call_out_need(UINT64_MAX, 1), UINT64_MAX));
}

Test(worker_call, refusal_codes_map_to_distinct_errnos)
{
        int seen[CALL_E_COUNT];

        for (int e = 1; e < CALL_E_COUNT; e++) {
                seen[e] = call_error_errno(e);
                cr_assert(lt(int, seen[e], 0));
                for (int f = 1; f < e; f++)
                        cr_assert(ne(int, seen[e], seen[f]), "codes %d and %d", e, f);
        }
        cr_assert(eq(int, call_error_errno(0), -EPROTO));
        cr_assert(eq(int, call_error_errno(CALL_E_COUNT), -EPROTO));
        cr_assert(eq(int, call_error_errno(-1), -EPROTO));
        cr_assert(eq(int, call_error_errno(CALL_E_TYPE), -EPROTOTYPE));
}

Test(worker_call, every_op_and_state_has_a_name_and_sizes)
{
        for (int op = 1; op < CALL_OP_COUNT; op++) {
                cr_assert(strcmp(call_op_name(op), "?") != 0);
                cr_assert(le(sz, call_request_body(op), CALL_BODY_MAX));
                cr_assert(le(sz, call_result_body(op) + sizeof(struct call_reply), CALL_BODY_MAX));
                cr_assert(eq(sz, call_request_body(op) % 8, 0));
        }
        for (int s = 0; s < CALL_ST_COUNT; s++)
                cr_assert(strcmp(call_state_name(s), "?") != 0);
        cr_assert(eq(sz, call_elem_size(MD_BOOLEAN), 1));
        cr_assert(eq(sz, call_elem_size(MD_STRING), 0));
        cr_assert(eq(sz, call_elem_size(MD_TYPE_COUNT), 0));
}

Test(worker_call, resource_uri_is_a_percent_encoded_file_uri)
{
        char *uri = resource_uri("/tmp/my fmu/Ω#");

        cr_assert(eq(str, uri, "file:///tmp/my%20fmu/%CE%A9%23/resources/"));
        free(uri);
}
