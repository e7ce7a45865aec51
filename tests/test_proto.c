/*
 * proto: the bounded decoder (pv_decode) and the values it returns: every
 * msgpack format, every limit, truncation, lying counts, duplicate keys,
 * and the conversions that never lose information.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "proto_fixture.h"

#define B(...) ((const uint8_t[]){ __VA_ARGS__ }), sizeof((const uint8_t[]){ __VA_ARGS__ })

static struct msg m;

static void teardown(void)
{
        msg_fini(&m);
}

TestSuite(proto, .fini = teardown);

static const struct pv *ok(const uint8_t *bytes, size_t len)
{
        int r = msg_decode(&m, bytes, len, NULL);

        cr_assert(r == 0, "pv_decode: %d %s", r, m.err);
        cr_assert(m.doc.root != NULL);
        return m.doc.root;
}

static void refused(const uint8_t *bytes, size_t len, int want)
{
        int r = msg_decode(&m, bytes, len, NULL);

        cr_assert(r == want, "pv_decode: %d, expected %d (%s)", r, want, m.err);
        cr_assert(m.doc.root == NULL && m.doc.mem == NULL);
        cr_assert(strstr(m.err, "at byte ") != NULL, "error text without an offset: '%s'", m.err);
}

Test(proto, decodes_positive_ints_as_uint)
{
        const struct pv *v;

        v = ok(B(0x05));
        cr_assert(v->type == PV_UINT && v->u == 5);
        msg_fini(&m);
        v = ok(B(0xcc, 0xff));
        cr_assert(v->type == PV_UINT && v->u == 255);
        msg_fini(&m);
        v = ok(B(0xcd, 0x01, 0x00));
        cr_assert(v->type == PV_UINT && v->u == 256);
        msg_fini(&m);
        v = ok(B(0xce, 0xff, 0xff, 0xff, 0xff));
        cr_assert(v->type == PV_UINT && v->u == UINT32_MAX);
        msg_fini(&m);
        v = ok(B(0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff));
        cr_assert(v->type == PV_UINT && v->u == UINT64_MAX);
        msg_fini(&m);
        /* A signed format holding a non-negative value is still PV_UINT. */
        v = ok(B(0xd3, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07));
        cr_assert(v->type == PV_UINT && v->u == 7);
}

Test(proto, decodes_negative_ints_as_int)
{
        const struct pv *v;

        v = ok(B(0xff));
        cr_assert(v->type == PV_INT && v->i == -1);
        msg_fini(&m);
        v = ok(B(0xe0));
        cr_assert(v->type == PV_INT && v->i == -32);
        msg_fini(&m);
        v = ok(B(0xd0, 0x80));
        cr_assert(v->type == PV_INT && v->i == -128);
        msg_fini(&m);
        v = ok(B(0xd1, 0x80, 0x00));
        cr_assert(v->type == PV_INT && v->i == INT16_MIN);
        msg_fini(&m);
        v = ok(B(0xd2, 0x80, 0x00, 0x00, 0x00));
        cr_assert(v->type == PV_INT && v->i == INT32_MIN);
        msg_fini(&m);
        v = ok(B(0xd3, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00));
        cr_assert(v->type == PV_INT && v->i == INT64_MIN);
}

Test(proto, widens_float32_and_reads_float64)
{
        const struct pv *v;

        /* 0.1f: widening keeps the float's exact value, not 0.1. */
        v = ok(B(0xca, 0x3d, 0xcc, 0xcc, 0xcd));
        cr_assert(v->type == PV_FLOAT && v->f == (double)0.1f);
        msg_fini(&m);
        v = ok(B(0xcb, 0x3f, 0xf8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00));
        cr_assert(v->type == PV_FLOAT && v->f == 1.5);
        msg_fini(&m);
        v = ok(B(0xca, 0x7f, 0x80, 0x00, 0x00));
        cr_assert(v->type == PV_FLOAT && isinf(v->f) && v->f > 0);
}

Test(proto, decodes_nil_bool_str_bin)
{
        const struct pv *v;

        v = ok(B(0xc0));
        cr_assert(v->type == PV_NIL);
        msg_fini(&m);
        v = ok(B(0xc3));
        cr_assert(v->type == PV_BOOL && v->b);
        msg_fini(&m);
        v = ok(B(0xc2));
        cr_assert(v->type == PV_BOOL && !v->b);
        msg_fini(&m);
        v = ok(B(0xa3, 'a', 0, 'b'));
        cr_assert(v->type == PV_STR && v->s.len == 3 && !memcmp(v->s.ptr, "a\0b", 3));
        /* Strings point into the caller's buffer. */
        cr_assert(v->s.ptr == (const char *)m.buf + 1);
        msg_fini(&m);
        v = ok(B(0xd9, 0x02, 'h', 'i'));
        cr_assert(v->type == PV_STR && v->s.len == 2);
        msg_fini(&m);
        v = ok(B(0xda, 0x00, 0x01, 'x'));
        cr_assert(v->type == PV_STR && v->s.len == 1);
        msg_fini(&m);
        v = ok(B(0xdb, 0x00, 0x00, 0x00, 0x00));
        cr_assert(v->type == PV_STR && v->s.len == 0);
        msg_fini(&m);
        v = ok(B(0xc4, 0x02, 0x00, 0xff));
        cr_assert(v->type == PV_BIN && v->s.len == 2);
        msg_fini(&m);
        v = ok(B(0xc5, 0x00, 0x00));
        cr_assert(v->type == PV_BIN && v->s.len == 0);
        msg_fini(&m);
        v = ok(B(0xc6, 0x00, 0x00, 0x00, 0x01, 0x42));
        cr_assert(v->type == PV_BIN && v->s.len == 1 && v->s.ptr[0] == 0x42);
}

Test(proto, decodes_nested_containers)
{
        /* {"a": [1, -1, {"b": nil}], "c": {}} with array16 and map16 forms */
        const struct pv *v = ok(B(0x82, 0xa1, 'a', 0xdc, 0x00, 0x03, 0x01, 0xff, 0xde, 0x00, 0x01,
                                  0xa1, 'b', 0xc0, 0xa1, 'c', 0xdf, 0x00, 0x00, 0x00, 0x00));
        const struct pv *a, *c;

        cr_assert(v->type == PV_MAP && v->m.n == 2);
        a = pv_get(v, "a");
        cr_assert(a && a->type == PV_ARRAY && a->a.n == 3);
        cr_assert(a->a.items[0].type == PV_UINT && a->a.items[1].type == PV_INT);
        cr_assert(pv_get(&a->a.items[2], "b") && pv_get(&a->a.items[2], "b")->type == PV_NIL);
        c = pv_get(v, "c");
        cr_assert(c && c->type == PV_MAP && c->m.n == 0);
        cr_assert(pv_get(v, "z") == NULL);
        cr_assert(pv_get(a, "a") == NULL, "pv_get on an array");
        cr_assert(pv_get(NULL, "a") == NULL);
}

Test(proto, pv_get_matches_only_string_keys)
{
        /* {bin "k": 1, 7: 2, "k2": 3} */
        const struct pv *v = ok(B(0x83, 0xc4, 0x01, 'k', 0x01, 0x07, 0x02, 0xa2, 'k', '2', 0x03));

        cr_assert(pv_get(v, "k") == NULL);
        cr_assert(pv_get(v, "k2") && pv_get(v, "k2")->u == 3);
}

Test(proto, refuses_ext_types_and_0xc1)
{
        static const uint8_t exts[] = { 0xc7, 0xc8, 0xc9, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8 };
        uint8_t buf[32];

        for (size_t i = 0; i < sizeof(exts); i++) {
                memset(buf, 0, sizeof(buf));
                buf[0] = exts[i];
                refused(buf, sizeof(buf), -EBADMSG);
                cr_assert(strstr(m.err, "extension") != NULL, "%s", m.err);
                msg_fini(&m);
        }
        refused(B(0xc1), -EBADMSG);
        msg_fini(&m);
        /* An ext nested in a map is found too, at its own offset. */
        refused(B(0x81, 0xa1, 'a', 0xd4, 0x01, 0x00), -EBADMSG);
        cr_assert(strstr(m.err, "at byte 3") != NULL, "%s", m.err);
}

Test(proto, refuses_trailing_bytes_naming_the_offset)
{
        refused(B(0x01, 0x02), -EBADMSG);
        cr_assert(strstr(m.err, "at byte 1") != NULL, "%s", m.err);
        msg_fini(&m);
        refused(B(0x91, 0x01, 0xc0, 0xc0), -EBADMSG);
        cr_assert(strstr(m.err, "at byte 2") != NULL, "%s", m.err);
        msg_fini(&m);
        refused(NULL, 0, -EBADMSG);
}

Test(proto, refuses_a_lying_array32_count_without_allocating)
{
        int r;

        /* array32 of 4,294,967,295 items in a 9-byte message */
        static const uint8_t lie[] = { 0xdd, 0xff, 0xff, 0xff, 0xff, 0x01, 0x02, 0x03, 0x04 };

        alloc_reset();
        r = msg_decode(&m, lie, sizeof(lie), NULL);
        cr_assert(r == -EBADMSG, "%d %s", r, m.err);
        cr_assert(alloc_count == 0, "%zu allocations, largest %zu", alloc_count, alloc_largest);
        cr_assert(strstr(m.err, "at byte 0") != NULL, "%s", m.err);
        msg_fini(&m);

        /* map32 claims 3 pairs with 5 bytes left: a pair takes at least 2. */
        alloc_reset();
        r = msg_decode(&m, B(0xdf, 0x00, 0x00, 0x00, 0x03, 0x01, 0x01, 0x02, 0x02, 0x03), NULL);
        cr_assert(r == -EBADMSG, "%d %s", r, m.err);
        cr_assert(alloc_count == 0);
        msg_fini(&m);

        /* A lying count deeper down, under a truthful outer array. */
        alloc_reset();
        r = msg_decode(&m, B(0x92, 0x01, 0xdd, 0x00, 0x10, 0x00, 0x00, 0x01), NULL);
        cr_assert(r == -EBADMSG, "%d %s", r, m.err);
        cr_assert(alloc_count == 0);
        cr_assert(strstr(m.err, "at byte 2") != NULL, "%s", m.err);
}

Test(proto, refuses_a_4gib_str32_in_a_10_byte_message)
{
        static const uint8_t lie[] = { 0xdb, 0xff, 0xff, 0xff, 0xff, 'a', 'b', 'c', 'd', 'e' };
        int r;

        alloc_reset();
        r = msg_decode(&m, lie, sizeof(lie), NULL);
        cr_assert(r == -EBADMSG, "%d %s", r, m.err);
        cr_assert(alloc_count == 0, "%zu allocations, largest %zu", alloc_count, alloc_largest);
        msg_fini(&m);
        /* bin32 likewise */
        alloc_reset();
        r = msg_decode(&m, B(0xc6, 0xff, 0xff, 0xff, 0xff, 'a', 'b', 'c', 'd', 'e'), NULL);
        cr_assert(r == -EBADMSG, "%d %s", r, m.err);
        cr_assert(alloc_count == 0);
}

static uint8_t *nested(unsigned depth, size_t *ret_len)
{
        uint8_t *b = malloc(depth + 1);

        memset(b, 0x91, depth);
        b[depth] = 0x01;
        *ret_len = depth + 1;
        return b;
}

Test(proto, refuses_nesting_past_max_depth)
{
        size_t len;
        uint8_t *b;
        int r;

        b = nested(PROTO_MAX_DEPTH, &len);
        r = msg_decode(&m, b, len, NULL);
        cr_assert(r == 0, "%d %s", r, m.err);
        msg_fini(&m);
        free(b);

        b = nested(PROTO_MAX_DEPTH + 1, &len);
        r = msg_decode(&m, b, len, NULL);
        cr_assert(r == -EMSGSIZE, "%d %s", r, m.err);
        cr_assert(strstr(m.err, "at byte 16") != NULL, "%s", m.err);
        msg_fini(&m);
        free(b);

        /* A huge depth limit is still clamped: 100,000 levels never reach the stack's end. */
        {
                struct proto_limits lim;

                proto_limits_default(&lim);
                lim.max_depth = UINT32_MAX;
                b = nested(100000, &len);
                r = msg_decode(&m, b, len, &lim);
                cr_assert(r == -EMSGSIZE, "%d %s", r, m.err);
                free(b);
        }
}

Test(proto, refuses_more_nodes_than_max_nodes)
{
        struct proto_limits lim;
        uint8_t b[16];
        int r;

        proto_limits_default(&lim);
        lim.max_nodes = 10;
        /* [1 x 9]: 10 values */
        b[0] = 0x99;
        memset(b + 1, 0x01, 9);
        r = msg_decode(&m, b, 10, &lim);
        cr_assert(r == 0, "%d %s", r, m.err);
        msg_fini(&m);
        /* [1 x 10]: 11 values */
        b[0] = 0x9a;
        memset(b + 1, 0x01, 10);
        r = msg_decode(&m, b, 11, &lim);
        cr_assert(r == -EMSGSIZE, "%d %s", r, m.err);
        cr_assert(strstr(m.err, "values") != NULL, "%s", m.err);
        msg_fini(&m);
        /* Keys count as values: {1:1, 2:2, 3:3, 4:4, 5:5} is 11. */
        r = msg_decode(&m, B(0x85, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5), &lim);
        cr_assert(r == -EMSGSIZE, "%d %s", r, m.err);
}

Test(proto, refuses_a_message_over_max_msg)
{
        struct proto_limits lim;
        uint8_t b[9] = { 0x98, 1, 1, 1, 1, 1, 1, 1, 1 };
        int r;

        proto_limits_default(&lim);
        lim.max_msg = 8;
        alloc_reset();
        r = msg_decode(&m, b, sizeof(b), &lim);
        cr_assert(r == -EMSGSIZE, "%d %s", r, m.err);
        cr_assert(alloc_count == 0);
        msg_fini(&m);
        lim.max_msg = 9;
        r = msg_decode(&m, b, sizeof(b), &lim);
        cr_assert(r == 0, "%d %s", r, m.err);
}

Test(proto, refuses_strings_and_containers_over_their_limits)
{
        struct proto_limits lim;
        int r;

        proto_limits_default(&lim);
        lim.max_str = 3;
        lim.max_items = 2;
        r = msg_decode(&m, B(0xa3, 'a', 'b', 'c'), &lim);
        cr_assert(r == 0, "%d %s", r, m.err);
        msg_fini(&m);
        r = msg_decode(&m, B(0xa4, 'a', 'b', 'c', 'd'), &lim);
        cr_assert(r == -EMSGSIZE, "%d %s", r, m.err);
        msg_fini(&m);
        r = msg_decode(&m, B(0xc4, 0x04, 'a', 'b', 'c', 'd'), &lim);
        cr_assert(r == -EMSGSIZE, "%d %s", r, m.err);
        msg_fini(&m);
        r = msg_decode(&m, B(0x92, 1, 2), &lim);
        cr_assert(r == 0, "%d %s", r, m.err);
        msg_fini(&m);
        r = msg_decode(&m, B(0x93, 1, 2, 3), &lim);
        cr_assert(r == -EMSGSIZE, "%d %s", r, m.err);
        msg_fini(&m);
        r = msg_decode(&m, B(0x83, 1, 1, 2, 2, 3, 3), &lim);
        cr_assert(r == -EMSGSIZE, "%d %s", r, m.err);
}

/* A request exercising most formats: a full load. */
static void *sample_message(size_t *ret_len)
{
        static const struct proto_assign mr[] = { { { "Plant", 5 }, { "4", 1 } } };
        static const struct proto_str rec[] = { { "Plant.x", 7 }, { "Ctrl.u", 6 } };
        struct proto_load a = {
                .path = { "/srv/fmud/loop.ssp", 18 },
                .out = { "/tmp/out.csv", 12 },
                .has_stop = true, .stop = 10.0,
                .has_step = true, .step = 1e-3,
                .has_decimation = true, .decimation = 100000,
                .n_multirate = 1, .multirate = mr,
                .n_record = 2, .record = rec,
        };
        struct pw w;
        void *buf;

        cr_assert(pw_init(&w) == 0);
        proto_load_encode(&w, UINT64_MAX, &a);
        buf = pw_take(&w, ret_len);
        pw_fini(&w);
        cr_assert(buf != NULL);
        return buf;
}

Test(proto, refuses_every_truncation_of_a_valid_message)
{
        size_t len;
        uint8_t *full = sample_message(&len);
        int r;

        r = msg_decode(&m, full, len, NULL);
        cr_assert(r == 0, "%d %s", r, m.err);
        msg_fini(&m);
        for (size_t cut = 0; cut < len; cut++) {
                /* An exact-size copy: ASan sees any read past the cut. */
                r = msg_decode(&m, full, cut, NULL);
                cr_assert(r == -EBADMSG, "prefix of %zu bytes: %d %s", cut, r, m.err);
                cr_assert(m.doc.root == NULL && m.doc.mem == NULL);
                cr_assert(strstr(m.err, "at byte") != NULL, "%s", m.err);
                msg_fini(&m);
        }
        free(full);
}

Test(proto, refuses_duplicate_keys)
{
        int r;

        r = msg_decode(&m, B(0x82, 0xa1, 'a', 0x01, 0xa1, 'a', 0x02), NULL);
        cr_assert(r == -EBADMSG, "%d %s", r, m.err);
        cr_assert(strstr(m.err, "duplicate") != NULL, "%s", m.err);
        msg_fini(&m);
        /* Same value in another encoding is the same key. */
        r = msg_decode(&m, B(0x82, 0x07, 0xc0, 0xcc, 0x07, 0xc0), NULL);
        cr_assert(r == -EBADMSG, "%d %s", r, m.err);
        msg_fini(&m);
        r = msg_decode(&m, B(0x82, 0xa1, 'a', 0xc0, 0xd9, 0x01, 'a', 0xc0), NULL);
        cr_assert(r == -EBADMSG, "%d %s", r, m.err);
        msg_fini(&m);
        /* Distinct types are distinct keys: 1, 1.0, "1", bin "1". */
        r = msg_decode(&m, B(0x84, 0x01, 0xc0, 0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0xc0, 0xa1, '1',
                             0xc0, 0xc4, 0x01, '1', 0xc0), NULL);
        cr_assert(r == 0, "%d %s", r, m.err);
        msg_fini(&m);
        /* Duplicates in a nested map are found. */
        r = msg_decode(&m, B(0x91, 0x82, 0xa1, 'x', 0x01, 0xa1, 'x', 0x01), NULL);
        cr_assert(r == -EBADMSG, "%d %s", r, m.err);
        cr_assert(strstr(m.err, "at byte 1") != NULL, "%s", m.err);
}

/* {"k0": 0, ..., "k<n-1>": n-1}, the last key spelt as dup_of's when dup_of >= 0 */
static void *big_map(unsigned n, int dup_of, size_t *ret_len)
{
        char key[16];
        struct pw w;
        void *buf;

        cr_assert(pw_init(&w) == 0);
        pw_map(&w, n);
        for (unsigned i = 0; i < n; i++) {
                snprintf(key, sizeof(key), "k%u", i + 1 == n && dup_of >= 0 ? (unsigned)dup_of : i);
                pw_str(&w, key);
                pw_u64(&w, i);
        }
        buf = pw_take(&w, ret_len);
        pw_fini(&w);
        return buf;
}

Test(proto, refuses_duplicate_keys_in_large_maps)
{
        size_t len;
        void *b;
        int r;

        b = big_map(5000, -1, &len);
        r = msg_decode(&m, b, len, NULL);
        cr_assert(r == 0, "%d %s", r, m.err);
        cr_assert(pv_get(m.doc.root, "k4321")->u == 4321);
        msg_fini(&m);
        free(b);
        b = big_map(5000, 17, &len);
        r = msg_decode(&m, b, len, NULL);
        cr_assert(r == -EBADMSG, "%d %s", r, m.err);
        free(b);
}

Test(proto, decode_survives_allocation_failure)
{
        size_t len;
        uint8_t *full = sample_message(&len);
        int r;

        alloc_reset();
        alloc_fail_after = 0;
        r = msg_decode(&m, full, len, NULL);
        alloc_reset();
        cr_assert(r == -ENOMEM, "%d %s", r, m.err);
        cr_assert(m.doc.root == NULL && m.doc.mem == NULL);
        free(full);
}

