/*
 * proto_env: the writer (every type through msgpack-c and back, sticky
 * errors) and the envelopes (requests strict, replies forward-compatible).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "proto_fixture.h"

static struct msg m;
static struct pw w;

static void setup(void)
{
        cr_assert(pw_init(&w) == 0);
}

static void teardown(void)
{
        msg_fini(&m);
        pw_fini(&w);
        alloc_reset();
}

TestSuite(proto_env, .init = setup, .fini = teardown);

Test(proto_env, writer_round_trips_every_type)
{
        static const uint8_t bin[] = { 0, 1, 2, 0xff };
        const struct pv *v;
        int r;

        pw_array(&w, 13);
        pw_nil(&w);
        pw_bool(&w, true);
        pw_i64(&w, INT64_MIN);
        pw_i64(&w, 5);
        pw_u64(&w, UINT64_MAX);
        pw_f64(&w, -0.25);
        pw_str(&w, "h\xc3\xa9llo");
        pw_strn(&w, "a\0b", 3);
        pw_str(&w, NULL);
        pw_bin(&w, bin, sizeof(bin));
        pw_map(&w, 1);
        pw_str(&w, "k");
        pw_array(&w, 0);
        pw_str(&w, "");
        pw_f64(&w, NAN);
        r = msg_take(&m, &w);
        cr_assert(r == 0, "%d %s", r, m.err);
        v = m.doc.root;
        cr_assert(v->type == PV_ARRAY && v->a.n == 13);
        cr_assert(v->a.items[0].type == PV_NIL);
        cr_assert(v->a.items[1].type == PV_BOOL && v->a.items[1].b);
        cr_assert(v->a.items[2].type == PV_INT && v->a.items[2].i == INT64_MIN);
        cr_assert(v->a.items[3].type == PV_UINT && v->a.items[3].u == 5);
        cr_assert(v->a.items[4].type == PV_UINT && v->a.items[4].u == UINT64_MAX);
        cr_assert(v->a.items[5].type == PV_FLOAT && v->a.items[5].f == -0.25);
        cr_assert(pv_is_str(&v->a.items[6], "h\xc3\xa9llo"));
        cr_assert(v->a.items[7].type == PV_STR && v->a.items[7].s.len == 3);
        cr_assert(v->a.items[8].type == PV_NIL, "pw_str(NULL) writes nil");
        cr_assert(v->a.items[9].type == PV_BIN && v->a.items[9].s.len == 4 &&
                  !memcmp(v->a.items[9].s.ptr, bin, 4));
        cr_assert(pv_get(&v->a.items[10], "k")->type == PV_ARRAY);
        cr_assert(pv_is_str(&v->a.items[11], ""));
        cr_assert(isnan(v->a.items[12].f));
}

Test(proto_env, pw_pv_re_encodes_a_decoded_value_equal)
{
        struct msg again;
        struct pw w2;
        int r;

        pw_map(&w, 3);
        pw_str(&w, "a");
        pw_array(&w, 3);
        pw_i64(&w, -7);
        pw_f64(&w, 1e300);
        pw_bin(&w, "xy", 2);
        pw_u64(&w, 9);
        pw_map(&w, 0);
        pw_bool(&w, false);
        pw_nil(&w);
        r = msg_take(&m, &w);
        cr_assert(r == 0, "%d %s", r, m.err);
        cr_assert(pw_init(&w2) == 0);
        pw_pv(&w2, m.doc.root);
        r = msg_take(&again, &w2);
        cr_assert(r == 0, "%d %s", r, again.err);
        cr_assert(pv_equal(m.doc.root, again.doc.root));
        cr_assert(again.len == m.len && !memcmp(again.buf, m.buf, m.len));
        msg_fini(&again);
        pw_fini(&w2);
}

Test(proto_env, writer_errors_are_sticky)
{
        size_t len;
        char big[20000];

        memset(big, 'x', sizeof(big));
        pw_str(&w, "before");
        alloc_reset();
        alloc_fail_after = 0;
        /* Past the initial buffer: the next growth fails. */
        pw_strn(&w, big, sizeof(big));
        alloc_reset();
        cr_assert(w.error == -ENOMEM, "%d", w.error);
        pw_str(&w, "after");
        cr_assert(w.error == -ENOMEM);
        cr_assert(pw_take(&w, &len) == NULL);
        /* pw_take reset the writer: usable again. */
        cr_assert(w.error == 0);
        pw_u64(&w, 1);
        cr_assert(pw_size(&w) == 1 && ((const uint8_t *)pw_data(&w))[0] == 0x01);
        pw_reset(&w);
        cr_assert(pw_size(&w) == 0);
}

Test(proto_env, request_envelope_round_trips)
{
        const struct pv *args;

        proto_req_begin(&w, 42, PROTO_OP_STATUS, 1);
        pw_str(&w, "session");
        pw_u64(&w, 3);
        args = msg_req(&m, &w, PROTO_OP_STATUS, 42);
        cr_assert(pv_get(args, "session")->u == 3);
}

static int req(const uint8_t *b, size_t len, struct proto_req *r, char *err, size_t errlen)
{
        int rc = msg_decode(&m, b, len, NULL);

        cr_assert(rc == 0, "%d %s", rc, m.err);
        return proto_req_decode(m.doc.root, r, err, errlen);
}

#define B(...) ((const uint8_t[]){ __VA_ARGS__ }), sizeof((const uint8_t[]){ __VA_ARGS__ })

Test(proto_env, request_without_args_reads_an_empty_map)
{
        struct proto_req r;
        char err[128];

        /* {"id": 1, "op": "list"} */
        cr_assert(req(B(0x82, 0xa2, 'i', 'd', 0x01, 0xa2, 'o', 'p', 0xa4, 'l', 'i', 's', 't'), &r,
                      err, sizeof(err)) == 0, "%s", err);
        cr_assert(r.op == PROTO_OP_LIST && r.id == 1);
        cr_assert(r.args && r.args->type == PV_MAP && r.args->m.n == 0);
        msg_fini(&m);
        /* args: nil likewise */
        cr_assert(req(B(0x83, 0xa2, 'i', 'd', 0x01, 0xa2, 'o', 'p', 0xa4, 'l', 'i', 's', 't', 0xa4,
                        'a', 'r', 'g', 's', 0xc0), &r, err, sizeof(err)) == 0, "%s", err);
        cr_assert(r.args->type == PV_MAP);
}

Test(proto_env, unknown_op_is_eopnotsupp_and_keeps_the_id)
{
        struct proto_req r = { .id = 99 };
        char err[128];
        int rc;

        /* {"id": 7, "op": "fly"} */
        rc = req(B(0x82, 0xa2, 'i', 'd', 0x07, 0xa2, 'o', 'p', 0xa3, 'f', 'l', 'y'), &r, err,
                 sizeof(err));
        cr_assert(rc == -EOPNOTSUPP, "%d", rc);
        cr_assert(strstr(err, "'fly'") != NULL, "%s", err);
        cr_assert(r.id == 99, "ret written on failure");
        cr_assert(proto_req_id(m.doc.root) == 7);
}

Test(proto_env, malformed_requests_are_refused)
{
        struct proto_req r;
        char err[128];
        int rc;

        /* not a map */
        rc = req(B(0x90), &r, err, sizeof(err));
        cr_assert(rc == -EBADMSG);
        cr_assert(proto_req_id(m.doc.root) == 0);
        msg_fini(&m);
        /* no id */
        rc = req(B(0x81, 0xa2, 'o', 'p', 0xa4, 'l', 'i', 's', 't'), &r, err, sizeof(err));
        cr_assert(rc == -EBADMSG && strstr(err, "id"), "%d %s", rc, err);
        msg_fini(&m);
        /* negative id */
        rc = req(B(0x82, 0xa2, 'i', 'd', 0xff, 0xa2, 'o', 'p', 0xa4, 'l', 'i', 's', 't'), &r, err,
                 sizeof(err));
        cr_assert(rc == -EBADMSG && strstr(err, "id"), "%d %s", rc, err);
        msg_fini(&m);
        /* op not a string */
        rc = req(B(0x82, 0xa2, 'i', 'd', 0x01, 0xa2, 'o', 'p', 0x01), &r, err, sizeof(err));
        cr_assert(rc == -EBADMSG && strstr(err, "op"), "%d %s", rc, err);
        cr_assert(proto_req_id(m.doc.root) == 1);
        msg_fini(&m);
        /* args an array */
        rc = req(B(0x83, 0xa2, 'i', 'd', 0x01, 0xa2, 'o', 'p', 0xa4, 'l', 'i', 's', 't', 0xa4, 'a',
                   'r', 'g', 's', 0x90), &r, err, sizeof(err));
        cr_assert(rc == -EBADMSG && strstr(err, "args"), "%d %s", rc, err);
        msg_fini(&m);
        /* an unknown envelope key, with a non-printable byte */
        rc = req(B(0x83, 0xa2, 'i', 'd', 0x01, 0xa2, 'o', 'p', 0xa4, 'l', 'i', 's', 't', 0xa2, 'x',
                   0x01, 0xc0), &r, err, sizeof(err));
        cr_assert(rc == -EBADMSG && strstr(err, "'x\\x01'"), "%d %s", rc, err);
        msg_fini(&m);
        /* an op with an embedded NUL is no op */
        rc = req(B(0x82, 0xa2, 'i', 'd', 0x01, 0xa2, 'o', 'p', 0xa5, 'l', 'i', 's', 't', 0), &r,
                 err, sizeof(err));
        cr_assert(rc == -EOPNOTSUPP, "%d %s", rc, err);
}

Test(proto_env, error_reply_round_trips)
{
        struct proto_reply rep;
        char err[128];
        int rc;

        proto_reply_error(&w, 5, PROTO_E_STALE, "generation 3 is not 4");
        rc = msg_take(&m, &w);
        cr_assert(rc == 0);
        rc = proto_reply_decode(m.doc.root, &rep, err, sizeof(err));
        cr_assert(rc == 0, "%s", err);
        cr_assert(rep.id == 5 && !rep.ok && rep.code == PROTO_E_STALE);
        cr_assert(rep.message_len == 21 && !memcmp(rep.message, "generation 3 is not 4", 21));
        cr_assert(pv_is_str(pv_get(pv_get(m.doc.root, "error"), "code"), "stale"));
}

Test(proto_env, ok_reply_round_trips)
{
        struct proto_reply rep;
        char err[128];

        proto_reply_ok_begin(&w, 6);
        pw_nil(&w);
        cr_assert(msg_take(&m, &w) == 0);
        cr_assert(proto_reply_decode(m.doc.root, &rep, err, sizeof(err)) == 0, "%s", err);
        cr_assert(rep.id == 6 && rep.ok && rep.result->type == PV_NIL);
}

Test(proto_env, reply_with_unknown_code_and_keys_decodes)
{
        struct proto_reply rep;
        char err[128];

        pw_map(&w, 4);
        pw_str(&w, "id");
        pw_u64(&w, 8);
        pw_str(&w, "ok");
        pw_bool(&w, false);
        pw_str(&w, "error");
        pw_map(&w, 3);
        pw_str(&w, "code");
        pw_str(&w, "quota-exceeded");
        pw_str(&w, "message");
        pw_str(&w, "too many");
        pw_str(&w, "retryAfter");
        pw_u64(&w, 3);
        pw_str(&w, "trace");
        pw_str(&w, "abc");
        cr_assert(msg_take(&m, &w) == 0);
        cr_assert(proto_reply_decode(m.doc.root, &rep, err, sizeof(err)) == 0, "%s", err);
        cr_assert(!rep.ok && rep.code == -1 && rep.message_len == 8);
}

Test(proto_env, broken_replies_are_refused)
{
        struct proto_reply rep;
        char err[128];

        /* {"id": 1} without ok */
        pw_map(&w, 1);
        pw_str(&w, "id");
        pw_u64(&w, 1);
        cr_assert(msg_take(&m, &w) == 0);
        cr_assert(proto_reply_decode(m.doc.root, &rep, err, sizeof(err)) == -EBADMSG);
        cr_assert(strstr(err, "ok") != NULL, "%s", err);
        msg_fini(&m);
        /* ok: false without error */
        pw_map(&w, 2);
        pw_str(&w, "id");
        pw_u64(&w, 1);
        pw_str(&w, "ok");
        pw_bool(&w, false);
        cr_assert(msg_take(&m, &w) == 0);
        cr_assert(proto_reply_decode(m.doc.root, &rep, err, sizeof(err)) == -EBADMSG);
        msg_fini(&m);
        /* error.code not a string */
        pw_map(&w, 3);
        pw_str(&w, "id");
        pw_u64(&w, 1);
        pw_str(&w, "ok");
        pw_bool(&w, false);
        pw_str(&w, "error");
        pw_map(&w, 1);
        pw_str(&w, "code");
        pw_u64(&w, 3);
        cr_assert(msg_take(&m, &w) == 0);
        cr_assert(proto_reply_decode(m.doc.root, &rep, err, sizeof(err)) == -EBADMSG);
        msg_fini(&m);
        /* a reply that is a string */
        pw_str(&w, "ok");
        cr_assert(msg_take(&m, &w) == 0);
        cr_assert(proto_reply_decode(m.doc.root, &rep, err, sizeof(err)) == -EBADMSG);
}

/* The id of a message the decoder refuses, read from the bytes up to it. */
static uint64_t raw_id(struct pw *pw)
{
        cr_assert(!pw->error);
        return proto_req_id_raw(pw_data(pw), pw_size(pw));
}

Test(proto_env, the_id_of_a_refused_message_is_read_from_its_bytes)
{
        static const uint8_t ext8[] = { 0xc7, 0x03, 0x01, 'a', 'b', 'c' };
        uint8_t buf[64];
        size_t n;

        /* A duplicate key after the id, in args. */
        proto_req_begin(&w, 7, PROTO_OP_SET, 2);
        pw_str(&w, "u");
        pw_u64(&w, 1);
        pw_str(&w, "u");
        pw_u64(&w, 2);
        cr_assert(raw_id(&w) == 7);
        cr_assert(pv_decode(pw_data(&w), pw_size(&w), NULL, &m.doc, m.err, sizeof(m.err)) ==
                  -EBADMSG);
        cr_assert(strstr(m.err, "duplicate key 'u'"), "%s", m.err);
        pv_doc_fini(&m.doc);
        pw_reset(&w);

        /* The id after nested containers and an extension value. */
        pw_map(&w, 2);
        pw_str(&w, "args");
        pw_map(&w, 1);
        pw_str(&w, "x");
        n = pw_size(&w);
        memcpy(buf, pw_data(&w), n);
        memcpy(buf + n, ext8, sizeof(ext8));
        n += sizeof(ext8);
        pw_reset(&w);
        pw_str(&w, "id");
        pw_u64(&w, 300);
        memcpy(buf + n, pw_data(&w), pw_size(&w));
        n += pw_size(&w);
        pw_reset(&w);
        cr_assert(proto_req_id_raw(buf, n) == 300);
        /* Cut anywhere before the id's value: no id. */
        for (size_t cut = 0; cut < n - 2; cut++)
                cr_assert(proto_req_id_raw(buf, cut) == 0, "cut at %zu", cut);

        /* Two ids that disagree, an id that is no uint, a count past the end, no map. */
        pw_map(&w, 2);
        pw_str(&w, "id");
        pw_u64(&w, 1);
        pw_str(&w, "id");
        pw_u64(&w, 2);
        cr_assert(raw_id(&w) == 0);
        pw_reset(&w);
        pw_map(&w, 1);
        pw_str(&w, "id");
        pw_i64(&w, -5);
        cr_assert(raw_id(&w) == 0);
        pw_reset(&w);
        buf[0] = 0xdf;                  /* map32 of 2^32 - 1 pairs: "id": 9, then nothing */
        memset(buf + 1, 0xff, 4);
        memcpy(buf + 5, "\xa2" "id" "\x09", 4);
        cr_assert(proto_req_id_raw(buf, 9) == 9);
        buf[0] = 0x93;
        cr_assert(proto_req_id_raw(buf, 9) == 0);
        cr_assert(proto_req_id_raw(NULL, 0) == 0);
}
