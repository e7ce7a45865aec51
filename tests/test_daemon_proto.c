/*
 * daemon: the control plane's envelope promises (proto/PROTOCOL.md
 * sections 3, 5 and 8) at the message level, against a real fmud: every
 * refusal carries the request's id whatever made the request invalid,
 * every operation refuses an argument it does not define (and does
 * nothing), and no reply exceeds the message limit.
 *
 * Requests are sent raw on a DEALER socket, so that a message libfmud
 * would never send (a duplicate key, an unknown argument, trailing bytes)
 * reaches the daemon as it is.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_fixture.h"

static struct fmud_daemon d;
static struct fmud *c;
static struct daemon_raw raw;

static void setup(void)
{
        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        daemon_raw_open(&d, &raw);
}

static void teardown(void)
{
        daemon_raw_close(&raw);
        fmud_close(c);
        c = NULL;
        daemon_stop(&d);
}

static void raw_send(const void *buf, size_t len)
{
        daemon_raw_send(&raw, buf, len, false);
}

static void raw_send_pw(struct pw *w)
{
        daemon_raw_send_pw(&raw, w);
}

/* Receive a refusal and check its id, code and that its message holds needle (NULL: any). */
static void expect_refused(uint64_t id, enum proto_err code, const char *needle, const char *what)
{
        struct daemon_raw_reply r;

        daemon_raw_recv(&raw, &r);
        cr_assert(!r.rep.ok, "%s: expected a refusal", what);
        cr_assert(r.rep.id == id, "%s: the refusal carries id %" PRIu64 ", not the request's %"
                  PRIu64 " (%s)", what, r.rep.id, id, r.message);
        cr_assert(r.rep.code == (int)code, "%s: code %s, expected %s: %s", what,
                  r.rep.code >= 0 ? proto_err_name((enum proto_err)r.rep.code) : "?",
                  proto_err_name(code), r.message);
        if (needle)
                cr_assert(strstr(r.message, needle), "%s: '%s' does not name '%s'", what,
                          r.message, needle);
        daemon_raw_reply_fini(&r);
}

static void expect_serving(void)
{
        struct proto_daemon_status ds;

        cr_assert(fmud_status_daemon(c, &ds) == 0, "the daemon stopped serving: %s",
                  fmud_errmsg(c));
}

static uint64_t load_path(const char *path, uint64_t *ret_gen)
{
        struct proto_load a = { .path = daemon_str(path) };

        return daemon_load(c, &a, ret_gen);
}

/* Scripted alone: an unconnected input u (start 0), output x' = u. */
static uint64_t load_scripted(void)
{
        return load_path(FMUD_MASTER_FMU_DIR "/Scripted.fmu", NULL);
}

static double get1(uint64_t s, const char *name)
{
        const char *const names[] = { name };
        double v;
        int r = fmud_get_f64(c, &(struct proto_target){ s, 0 }, names, 1, &v);

        cr_assert(r == 0, "get %s: %s", name, fmud_errmsg(c));
        return v;
}

/* ---- Every refusal carries the request's id ---------------------------------------- */

Test(daemon_proto, a_variable_set_twice_is_refused_naming_it, .init = setup, .fini = teardown)
{
        uint64_t s = load_scripted();
        struct pv one = { .type = PV_FLOAT, .f = 1.0 }, two = { .type = PV_FLOAT, .f = 2.0 };
        struct proto_named_value v[2] = { { daemon_str("u"), &one }, { daemon_str("u"), &two } };

        /* Through libfmud, as fmuctl set S u=1 u=2 sends it: answered, not a lost reply. */
        daemon_assert_refused(c, fmud_set(c, &(struct proto_target){ s, 0 }, v, 2),
                              PROTO_E_BAD_REQUEST, "set u twice");
        cr_assert(strstr(fmud_errmsg(c), "'u'"), "names the variable: %s", fmud_errmsg(c));
        cr_assert(get1(s, "u") == 0.0, "nothing was applied");
        /* The connection goes on: the next request gets its own reply. */
        cr_assert(fmud_set(c, &(struct proto_target){ s, 0 }, v, 1) == 0, "%s", fmud_errmsg(c));
        cr_assert(get1(s, "u") == 1.0);
}

Test(daemon_proto, one_variable_under_two_names_is_refused, .init = setup, .fini = teardown)
{
        uint64_t s = load_path(FMUD_TEST_FMU_DIR "/Feedthrough.fmu", NULL);
        struct proto_session_status st;
        struct pv one = { .type = PV_FLOAT, .f = 1.0 }, two = { .type = PV_FLOAT, .f = 2.0 };
        struct proto_named_value v[2];
        char full[128];

        cr_assert(fmud_status(c, s, &st) == 0 && st.n_insts == 1, "%s", fmud_errmsg(c));
        snprintf(full, sizeof(full), "%.*s.Float64_input", (int)st.insts[0].name.len,
                 st.insts[0].name.ptr);
        v[0] = (struct proto_named_value){ daemon_str(full), &one };
        v[1] = (struct proto_named_value){ daemon_str("Float64_input"), &two };
        daemon_assert_refused(c, fmud_set(c, &(struct proto_target){ s, 0 }, v, 2),
                              PROTO_E_BAD_REQUEST, "the same variable by two names");
        cr_assert(strstr(fmud_errmsg(c), "Float64_input") && strstr(fmud_errmsg(c), "twice"),
                  "%s", fmud_errmsg(c));
        cr_assert(get1(s, "Float64_input") == 2.5, "nothing was applied");
}

/* {id, op: "status", args: {session: 0}} with the args map's pairs written by the caller. */
static void status_begin(struct pw *w, uint64_t id, uint32_t n_args)
{
        proto_req_begin(w, id, PROTO_OP_STATUS, n_args);
}

Test(daemon_proto, every_refusal_carries_the_request_id, .init = setup, .fini = teardown)
{
        static const uint8_t ext[] = { 0xd4, 0x01, 0x00 };      /* fixext 1 */
        char *big = malloc(PROTO_MAX_STR + 2);
        struct pw w;

        cr_assert(big && pw_init(&w) == 0);
        /* A duplicate key in args. */
        status_begin(&w, 11, 2);
        pw_str(&w, "session");
        pw_u64(&w, 0);
        pw_str(&w, "session");
        pw_u64(&w, 0);
        raw_send_pw(&w);
        expect_refused(11, PROTO_E_BAD_REQUEST, "duplicate key 'session'", "duplicate key");

        /* Trailing bytes after the request. */
        status_begin(&w, 12, 0);
        pw_nil(&w);
        raw_send_pw(&w);
        expect_refused(12, PROTO_E_BAD_REQUEST, "trailing", "trailing bytes");

        /* A string over the string limit. */
        memset(big, 'a', PROTO_MAX_STR + 1);
        big[PROTO_MAX_STR + 1] = '\0';
        proto_req_begin(&w, 13, PROTO_OP_GET, 1);
        pw_str(&w, "names");
        pw_array(&w, 1);
        pw_str(&w, big);
        raw_send_pw(&w);
        expect_refused(13, PROTO_E_BAD_REQUEST, "limit", "a string over the limit");

        /* An extension type, and the id after it. */
        pw_map(&w, 3);
        pw_str(&w, "op");
        pw_str(&w, "list");
        pw_str(&w, "args");
        pw_map(&w, 1);
        pw_str(&w, "x");
        cr_assert(!w.error);
        {
                size_t n = pw_size(&w);
                uint8_t *buf = malloc(n + sizeof(ext) + 8);

                cr_assert(buf);
                memcpy(buf, pw_data(&w), n);
                memcpy(buf + n, ext, sizeof(ext));
                n += sizeof(ext);
                pw_reset(&w);
                pw_str(&w, "id");
                pw_u64(&w, 14);
                memcpy(buf + n, pw_data(&w), pw_size(&w));
                n += pw_size(&w);
                pw_reset(&w);
                raw_send(buf, n);
                free(buf);
        }
        expect_refused(14, PROTO_E_BAD_REQUEST, "extension", "an extension type");

        /* Truncated after the id: the args map promises more than there is. */
        status_begin(&w, 15, 2);
        pw_str(&w, "session");
        raw_send_pw(&w);
        expect_refused(15, PROTO_E_BAD_REQUEST, "truncated", "truncated");

        /* Two frames: not a request layout, but the body's id is readable. */
        status_begin(&w, 16, 0);
        daemon_raw_send(&raw, pw_data(&w), pw_size(&w), true);
        raw_send_pw(&w);
        expect_refused(16, PROTO_E_BAD_REQUEST, "one frame", "two frames");

        /* An unknown key in the envelope, and an unknown op. */
        pw_map(&w, 4);
        pw_str(&w, "id");
        pw_u64(&w, 18);
        pw_str(&w, "op");
        pw_str(&w, "list");
        pw_str(&w, "args");
        pw_nil(&w);
        pw_str(&w, "bogus");
        pw_u64(&w, 1);
        raw_send_pw(&w);
        pw_map(&w, 2);
        pw_str(&w, "id");
        pw_u64(&w, 19);
        pw_str(&w, "op");
        pw_str(&w, "frobnicate");
        raw_send_pw(&w);
        expect_refused(18, PROTO_E_BAD_REQUEST, "bogus", "unknown envelope key");
        expect_refused(19, PROTO_E_UNKNOWN_OP, "frobnicate", "unknown op");

        /* No id to read: a string id, and bytes that are no map. Those get 0. */
        pw_map(&w, 2);
        pw_str(&w, "id");
        pw_str(&w, "20");
        pw_str(&w, "op");
        pw_str(&w, "list");
        raw_send_pw(&w);
        expect_refused(0, PROTO_E_BAD_REQUEST, "id", "a string id");
        raw_send("\xc1", 1);
        expect_refused(0, PROTO_E_BAD_REQUEST, NULL, "garbage");

        pw_fini(&w);
        free(big);
        expect_serving();
}

/* ---- Every operation refuses an argument it does not define ----------------------- */

/* op's request with valid arguments for session s, plus bogus: 1. */
static void bogus_request(struct pw *w, uint64_t id, enum proto_op op, uint64_t s)
{
        const char *path = FMUD_MASTER_FMU_DIR "/Scripted.fmu";
        bool target = op != PROTO_OP_HELLO && op != PROTO_OP_LOAD && op != PROTO_OP_LIST &&
                      op != PROTO_OP_SHUTDOWN && op != PROTO_OP_PUT &&
                      op != PROTO_OP_INSTANTIATE && op != PROTO_OP_FMI && op != PROTO_OP_FREE;
        uint32_t n = 1 + (target ? 1 : 0) + (op == PROTO_OP_PUT ? 3 : 0);

        switch (op) {
        case PROTO_OP_HELLO: case PROTO_OP_LOAD: case PROTO_OP_WARP: case PROTO_OP_STEP:
        case PROTO_OP_RUN_UNTIL: case PROTO_OP_GET: case PROTO_OP_SET:
        case PROTO_OP_UNSUBSCRIBE: case PROTO_OP_RESTORE: case PROTO_OP_SNAPSHOT_DELETE:
        case PROTO_OP_INSTANTIATE: case PROTO_OP_FMI: case PROTO_OP_FREE:
                n++;
                break;
        default:
                break;
        }
        proto_req_begin(w, id, op, n);
        if (target) {
                pw_str(w, "session");
                pw_u64(w, s);
        }
        switch (op) {
        case PROTO_OP_HELLO: pw_str(w, "version"); pw_u64(w, PROTO_VERSION); break;
        case PROTO_OP_LOAD: pw_str(w, "path"); pw_str(w, path); break;
        case PROTO_OP_WARP: pw_str(w, "factor"); pw_f64(w, 1.0); break;
        case PROTO_OP_STEP: pw_str(w, "n"); pw_u64(w, 1); break;
        case PROTO_OP_RUN_UNTIL: pw_str(w, "time"); pw_f64(w, 0.5); break;
        case PROTO_OP_GET: pw_str(w, "names"); pw_array(w, 1); pw_str(w, "x"); break;
        case PROTO_OP_SET:
                pw_str(w, "values");
                pw_map(w, 1);
                pw_str(w, "u");
                pw_f64(w, 3.0);
                break;
        case PROTO_OP_UNSUBSCRIBE: pw_str(w, "topic"); pw_str(w, "s1.1"); break;
        case PROTO_OP_RESTORE:
        case PROTO_OP_SNAPSHOT_DELETE: pw_str(w, "snapshot"); pw_u64(w, 1); break;
        case PROTO_OP_INSTANTIATE: pw_str(w, "fmu"); pw_str(w, path); break;
        case PROTO_OP_FMI:
                pw_str(w, "calls");
                pw_array(w, 1);
                pw_map(w, 2);
                pw_str(w, "instance");
                pw_u64(w, s);
                pw_str(w, "fn");
                pw_str(w, "terminate");
                break;
        case PROTO_OP_FREE: pw_str(w, "instance"); pw_u64(w, s); break;
        case PROTO_OP_PUT:
                pw_str(w, "sha256");
                pw_str(w, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
                pw_str(w, "size");
                pw_u64(w, 0);
                pw_str(w, "offset");
                pw_u64(w, 0);
                break;
        default: break;
        }
        pw_str(w, "bogus");
        pw_u64(w, 1);
}

Test(daemon_proto, every_operation_refuses_an_unknown_argument, .init = setup, .fini = teardown)
{
        uint64_t s = load_scripted();
        struct proto_list_result l;
        struct proto_session_status st;
        uint64_t snap;
        struct pw w;

        /* A snapshot 1 and a subscription s1.1 exist: only bogus can be wrong. */
        cr_assert(fmud_snapshot(c, &(struct proto_target){ s, 0 }, &snap, NULL) == 0);
        cr_assert(snap == 1 && s == 1);
        cr_assert(pw_init(&w) == 0);
        for (int op = 0; op < PROTO_OP_COUNT; op++) {
                char what[64];

                snprintf(what, sizeof(what), "%s {bogus: 1}", proto_op_name((enum proto_op)op));
                bogus_request(&w, 100 + (uint64_t)op, (enum proto_op)op, s);
                raw_send_pw(&w);
                expect_refused(100 + (uint64_t)op, PROTO_E_BAD_REQUEST, "'bogus'", what);
        }
        /* The daemon's own status (session 0) too. */
        proto_req_begin(&w, 99, PROTO_OP_STATUS, 2);
        pw_str(&w, "session");
        pw_u64(&w, 0);
        pw_str(&w, "bogus");
        pw_u64(&w, 1);
        raw_send_pw(&w);
        expect_refused(99, PROTO_E_BAD_REQUEST, "'bogus'", "status 0 {bogus: 1}");
        pw_fini(&w);

        /* Nothing was done: the daemon serves, one session, still loaded at 0 with u = 0. */
        expect_serving();
        cr_assert(fmud_list(c, &l) == 0 && l.n == 1, "%s", fmud_errmsg(c));
        cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
        cr_assert(st.state == PROTO_STATE_LOADED && st.time == 0.0 && st.generation == 1,
                  "state %d time %g generation %" PRIu64, st.state, st.time, st.generation);
        cr_assert(get1(s, "u") == 0.0);
}

/* ---- No reply exceeds the message limit --------------------------------------------- */

#define BIG_BINARY      4096    /* bytes: the test FMUs' largest Binary */
#define BIG_NAMES       4200    /* of them: about 17.2 MB, over the 16 MiB limit */

Test(daemon_proto, a_reply_over_the_message_limit_is_refused_too_large, .init = setup,
     .fini = teardown)
{
        uint64_t s = load_path(FMUD_TEST_FMU_DIR "/Feedthrough.fmu", NULL);
        struct proto_target t = { s, 0 };
        const char **names = calloc(BIG_NAMES, sizeof(*names));
        char *bytes = malloc(BIG_BINARY);
        struct pv v = { .type = PV_BIN, .s = { bytes, BIG_BINARY } };
        struct proto_named_value nv = { daemon_str("Binary_input"), &v };
        const struct pv *const *vals;
        char limit[32], asked[32];

        cr_assert(names && bytes);
        memset(bytes, 0xb5, BIG_BINARY);
        cr_assert(fmud_set(c, &t, &nv, 1) == 0, "%s", fmud_errmsg(c));
        for (size_t i = 0; i < BIG_NAMES; i++)
                names[i] = "Binary_input";
        /* A few are well within the limit ... */
        cr_assert(fmud_get(c, &t, names, 2, &vals) == 0, "%s", fmud_errmsg(c));
        cr_assert(vals[1]->type == PV_BIN && vals[1]->s.len == BIG_BINARY);
        /* ... all of them are not: refused, and the connection stays. */
        daemon_assert_refused(c, fmud_get(c, &t, names, BIG_NAMES, &vals), PROTO_E_TOO_LARGE,
                              "get of 17 MB");
        snprintf(limit, sizeof(limit), "%u bytes", PROTO_MAX_MSG);
        snprintf(asked, sizeof(asked), "%u values", BIG_NAMES);
        cr_assert(strstr(fmud_errmsg(c), limit), "names the limit: %s", fmud_errmsg(c));
        cr_assert(strstr(fmud_errmsg(c), asked), "says how much was asked: %s", fmud_errmsg(c));
        cr_assert(fmud_get(c, &t, names, 3, &vals) == 0, "%s", fmud_errmsg(c));
        free(names);
        free(bytes);
        expect_serving();
}
