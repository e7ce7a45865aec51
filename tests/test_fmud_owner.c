/*
 * What another local user cannot do to a session it does not own
 * (daemon/host.h, daemon/host_sub.c): keep a transient session's lease
 * alive by claiming its owner's routing id, see that routing id, remove
 * another's subscription or take every subscription slot of a session;
 * call, free or detach an FMI-level instance (daemon/host_fmi.c).
 *
 * Another local user is a child that drops to uid/gid 65534 (nobody) and
 * connects: these tests need root and are skipped without it.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "support/as_other.h"
#include "test_fmud.h"

#define HOLDER          "lease-holder"
#define N_SUBS          17              /* one above a subscriber's bound */

static struct tf_daemon d;

struct answer {
        bool ok;
        int code;
        uint64_t session;
        char msg[200];
        char owner[128];                /* list's first session's, or status's */
        char topic[48];
};

static void cleanup(void)
{
        tf_cleanup(&d);
}

static void start(const char *conf)
{
        const char *extra[] = { "--allow", FMUD_EXAMPLES, "--allow", FMUD_TEST_FMU_DIR,
                                "--sandbox", "off", NULL };

        if (geteuid() != 0)
                cr_skip_test("another local user needs root");
        cr_assert(tf_start(&d, conf, extra) == 0, "fmud did not start: %s/fmud.log", d.dir);
        cr_assert(chmod(d.dir, 0711) == 0);
}

static void nap_ms(long ms)
{
        nanosleep(&(struct timespec){ .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000L },
                  NULL);
}

/* A DEALER on the daemon's socket, with routing id rid when not NULL. */
static void *dealer(void *zctx, const char *rid)
{
        int t = TF_REPLY_MS, linger = 0;
        void *s = zmq_socket(zctx, ZMQ_DEALER);

        if (!s)
                return NULL;
        zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof(linger));
        zmq_setsockopt(s, ZMQ_RCVTIMEO, &t, sizeof(t));
        if (rid)
                zmq_setsockopt(s, ZMQ_ROUTING_ID, rid, strlen(rid));
        if (zmq_connect(s, d.ctl) < 0) {
                zmq_close(s);
                return NULL;
        }
        return s;
}

/* Send w (taken) on s; its answer. */
static struct answer call(void *s, struct pw *w)
{
        struct answer a = { .code = -2 };
        struct proto_reply rep;
        struct pv_doc doc;
        void *buf;

        if (tf_call(s, w, &doc, &rep, &buf) == 0) {
                const struct pv *v = rep.ok ? pv_get(rep.result, "session") : NULL;
                const struct pv *tp = rep.ok ? pv_get(rep.result, "topic") : NULL;
                const struct pv *ss = rep.ok ? pv_get(rep.result, "sessions") : NULL;
                const struct pv *o = rep.ok ? pv_get(rep.result, "owner") : NULL;

                a.ok = rep.ok;
                a.code = rep.ok ? -1 : rep.code;
                if (v)
                        (void)pv_u64(v, &a.session);
                if (tp && tp->type == PV_STR)
                        snprintf(a.topic, sizeof(a.topic), "%.*s", (int)tp->s.len, tp->s.ptr);
                if (ss && ss->type == PV_ARRAY && ss->a.n > 0)
                        o = pv_get(&ss->a.items[0], "owner");
                if (o && o->type == PV_STR)
                        snprintf(a.owner, sizeof(a.owner), "%.*s", (int)o->s.len, o->s.ptr);
                if (!rep.ok)
                        snprintf(a.msg, sizeof(a.msg), "%.*s", (int)rep.message_len, rep.message);
                pv_doc_fini(&doc);
                free(buf);
        }
        pw_fini(w);
        return a;
}

static void enc_load(struct pw *w, bool transient)
{
        pw_init(w);
        proto_load_encode(w, 10, &(struct proto_load){
                .path = { FMUD_EXAMPLES "/msd.ssp", (uint32_t)strlen(FMUD_EXAMPLES "/msd.ssp") },
                .transient = transient });
}

static void enc_op(struct pw *w, enum proto_op op, uint64_t session)
{
        pw_init(w);
        if (op == PROTO_OP_HELLO)
                proto_hello_encode(w, 20 + op, &(struct proto_hello){ .version = PROTO_VERSION });
        else if (op == PROTO_OP_LIST)
                proto_req_begin(w, 20 + op, op, 0);
        else
                proto_target_encode(w, 20 + op, op, &(struct proto_target){ .session = session });
}

static void enc_sub(struct pw *w, uint64_t session)
{
        pw_init(w);
        proto_subscribe_encode(w, 30, &(struct proto_subscribe){ .t = { .session = session } });
}

static void enc_unsub(struct pw *w, uint64_t session, const char *topic)
{
        pw_init(w);
        proto_unsubscribe_encode(w, 31, &(struct proto_unsubscribe){
                .t = { .session = session },
                .topic = { topic, (uint32_t)strlen(topic) } });
}

struct nobody_run {
        void (*fn)(void *zctx, int fd);
};

/* As the other user: fn on a ZeroMQ context of its own. */
static int run_as_nobody(void *ctx, int fd)
{
        const struct nobody_run *run = ctx;
        void *zctx = zmq_ctx_new();

        run->fn(zctx, fd);
        zmq_ctx_term(zctx);
        return 0;
}

/* Run fn as uid/gid 65534 in a child; its n answers (written to fd) into out. */
static void as_nobody(void (*fn)(void *zctx, int fd), struct answer *out, size_t n)
{
        struct nobody_run run = { fn };
        int status = 0;
        ssize_t len;

        len = as_other(run_as_nobody, &run, out, n * sizeof(*out), &status);
        cr_assert(len >= 0, "%s", strerror((int)-len));
        for (size_t i = 0; i < n; i++)
                cr_assert((size_t)len >= (i + 1) * sizeof(*out), "the child gave no answer %zu",
                          i);
        cr_assert(status == 0, "child status %d", status);
}

static void put(int fd, const struct answer *a)
{
        if (write(fd, a, sizeof(*a)) != (ssize_t)sizeof(*a))
                _exit(4);
}

static bool log_has(const char *needle)
{
        char path[512], *text;
        bool found;
        FILE *f;
        long len;

        tf_path(&d, "fmud.log", path, sizeof(path));
        f = fopen(path, "r");
        cr_assert(f);
        fseek(f, 0, SEEK_END);
        len = ftell(f);
        rewind(f);
        text = calloc(1, (size_t)len + 1);
        cr_assert(fread(text, 1, (size_t)len, f) == (size_t)len);
        fclose(f);
        found = strstr(text, needle) != NULL;
        free(text);
        return found;
}

/* Three times the grace, as the lease's routing id: a byte, then a hello, every 250 ms. */
static void claim_lease(void *zctx, int fd)
{
        struct answer a = { .ok = true };
        void *s = dealer(zctx, HOLDER);

        if (!s)
                _exit(3);
        for (int i = 0; i < 12; i++) {
                struct pw w;

                if (i % 2 == 0) {
                        (void)zmq_send(s, "x", 1, 0);
                } else {
                        enc_op(&w, PROTO_OP_HELLO, 0);
                        (void)zmq_send(s, pw_data(&w), pw_size(&w), 0);
                        pw_fini(&w);
                }
                nap_ms(250);
        }
        zmq_close(s);
        put(fd, &a);
}

/* A hang fails its test by name, well inside ctest's limit for the file. */
TestSuite(fmud_owner, .timeout = 120);

Test(fmud_owner, another_user_on_the_owners_routing_id_does_not_keep_a_transient_session,
     .fini = cleanup)
{
        struct answer a, r;
        struct pw w;
        void *s;

        start("[control]\nsocket_group = 65534\n[limits]\ntransient_grace = 1\n");
        s = dealer(d.zctx, HOLDER);
        cr_assert(s);
        enc_load(&w, true);
        r = call(s, &w);
        cr_assert(r.ok && r.session == 1, "%s", r.msg);
        /* The owner dies without a word; another user takes its routing id. */
        zmq_close(s);
        nap_ms(100);
        as_nobody(claim_lease, &a, 1);
        cr_assert(log_has("session 1: transient, its owner (ipc 0x"),
                  "the session outlived its owner by three times the grace: %s/fmud.log", d.dir);
        cr_assert(tf_pid_alive(d.pid));
}

/* list and status of session 1, as a child's answers. */
static void look(void *zctx, int fd)
{
        void *s = dealer(zctx, NULL);
        struct answer a;
        struct pw w;

        if (!s)
                _exit(3);
        enc_op(&w, PROTO_OP_LIST, 0);
        a = call(s, &w);
        put(fd, &a);
        enc_op(&w, PROTO_OP_STATUS, 1);
        a = call(s, &w);
        put(fd, &a);
        zmq_close(s);
}

Test(fmud_owner, only_the_owner_and_an_admin_see_a_transient_sessions_routing_id,
     .fini = cleanup)
{
        struct answer a[2], r;
        struct pw w;
        void *s;

        start("[control]\nsocket_group = 65534\n");
        s = dealer(d.zctx, HOLDER);
        cr_assert(s);
        enc_load(&w, true);
        r = call(s, &w);
        cr_assert(r.ok && r.session == 1, "%s", r.msg);
        as_nobody(look, a, 2);
        cr_assert(a[0].ok && a[1].ok, "list: %s; status: %s", a[0].msg, a[1].msg);
        cr_assert(!strcmp(a[0].owner, "ipc"), "list shows another user '%s'", a[0].owner);
        cr_assert(!strcmp(a[1].owner, "ipc"), "status shows another user '%s'", a[1].owner);
        /* The owner (root, also an admin) sees it whole: "ipc 0x" and HOLDER in hex. */
        enc_op(&w, PROTO_OP_STATUS, 1);
        r = call(s, &w);
        cr_assert(r.ok && !strcmp(r.owner, "ipc 0x6c656173652d686f6c646572"), "'%s'", r.owner);
        zmq_close(s);
}

/* Remove root's subscription s1.1, then subscribe N_SUBS times to session 1. */
static void crowd(void *zctx, int fd)
{
        void *s = dealer(zctx, NULL);
        struct answer a;
        struct pw w;

        if (!s)
                _exit(3);
        enc_unsub(&w, 1, "s1.1");
        a = call(s, &w);
        put(fd, &a);
        for (int i = 0; i < N_SUBS; i++) {
                enc_sub(&w, 1);
                a = call(s, &w);
                put(fd, &a);
        }
        zmq_close(s);
}

Test(fmud_owner, another_user_neither_removes_a_subscription_nor_takes_every_slot,
     .fini = cleanup)
{
        struct answer a[1 + N_SUBS], r;
        struct pw w;
        void *s;

        start("[control]\nsocket_group = 65534\n");
        s = dealer(d.zctx, NULL);
        cr_assert(s);
        enc_load(&w, false);
        r = call(s, &w);
        cr_assert(r.ok && r.session == 1, "%s", r.msg);
        enc_sub(&w, 1);
        r = call(s, &w);
        cr_assert(r.ok && !strcmp(r.topic, "s1.1"), "%s '%s'", r.msg, r.topic);
        as_nobody(crowd, a, 1 + N_SUBS);
        cr_assert(!a[0].ok && a[0].code == PROTO_E_DENIED &&
                  !strcmp(a[0].msg, "unsubscribe of 's1.1' needs its subscriber (uid 0), the "
                                    "owner of session 1 (uid 0) or the admin role; you are "
                                    "uid 65534"), "%d '%s'", a[0].code, a[0].msg);
        for (int i = 1; i < N_SUBS; i++)
                cr_assert(a[i].ok, "subscription %d: %s", i, a[i].msg);
        cr_assert(!a[N_SUBS].ok && a[N_SUBS].code == PROTO_E_LIMIT &&
                  !strcmp(a[N_SUBS].msg, "16 subscriptions of uid 65534 in session 1 already "
                                         "(the limit for one subscriber)"),
                  "%d '%s'", a[N_SUBS].code, a[N_SUBS].msg);
        /* Root's subscription is still there; others still find room; an admin removes any. */
        enc_unsub(&w, 1, "s1.1");
        r = call(s, &w);
        cr_assert(r.ok, "%s", r.msg);
        enc_sub(&w, 1);
        r = call(s, &w);
        cr_assert(r.ok, "%s", r.msg);
        enc_unsub(&w, 1, "s1.2");
        r = call(s, &w);
        cr_assert(r.ok, "%s", r.msg);
        zmq_close(s);
}

/* As the other user, an operator: an fmi batch on instance 1, free it, detach it. */
static void meddle(void *zctx, int fd)
{
        void *s = dealer(zctx, NULL);
        struct answer a;
        struct pw w;

        if (!s)
                _exit(3);
        pw_init(&w);
        proto_req_begin(&w, 40, PROTO_OP_FMI, 1);
        pw_str(&w, "calls");
        pw_array(&w, 1);
        pw_map(&w, 2);
        pw_str(&w, "instance");
        pw_u64(&w, 1);
        pw_str(&w, "fn");
        pw_str(&w, "terminate");
        a = call(s, &w);
        put(fd, &a);
        pw_init(&w);
        proto_free_encode(&w, 41, 1);
        a = call(s, &w);
        put(fd, &a);
        pw_init(&w);
        proto_req_begin(&w, 42, PROTO_OP_DETACH, 1);
        pw_str(&w, "instance");
        pw_u64(&w, 1);
        a = call(s, &w);
        put(fd, &a);
        zmq_close(s);
}

Test(fmud_owner, another_user_neither_calls_nor_frees_nor_detaches_an_instance, .fini = cleanup)
{
        struct answer a[3], r;
        struct pw w;
        void *s;

        start("[control]\nsocket_group = 65534\n");
        s = dealer(d.zctx, NULL);
        cr_assert(s);
        pw_init(&w);
        proto_instantiate_encode(&w, 11, &(struct proto_instantiate){
                .fmu = { FMUD_TEST_FMU_DIR "/LinearOde.fmu",
                         (uint32_t)strlen(FMUD_TEST_FMU_DIR "/LinearOde.fmu") },
                .transient = true });
        r = call(s, &w);
        cr_assert(r.ok, "%s", r.msg);
        as_nobody(meddle, a, 3);
        cr_assert(!a[0].ok && a[0].code == PROTO_E_DENIED &&
                  !strcmp(a[0].msg, "fmi of instance 1 needs its owner (uid 0) or the admin "
                                    "role; you are operator (uid 65534)"), "%d '%s'", a[0].code,
                  a[0].msg);
        cr_assert(!a[1].ok && a[1].code == PROTO_E_DENIED &&
                  !strcmp(a[1].msg, "free of instance 1 needs its owner (uid 0) or the admin "
                                    "role; you are operator (uid 65534)"), "%d '%s'", a[1].code,
                  a[1].msg);
        cr_assert(!a[2].ok && a[2].code == PROTO_E_DENIED &&
                  !strcmp(a[2].msg, "instance 1 is leased to another connection: only its "
                                    "owner may detach it"), "%d '%s'", a[2].code, a[2].msg);
        /* Its owner still calls it and frees it. */
        pw_init(&w);
        proto_free_encode(&w, 12, 1);
        r = call(s, &w);
        cr_assert(r.ok, "%s", r.msg);
        zmq_close(s);
}
