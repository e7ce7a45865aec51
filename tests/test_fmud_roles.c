/*
 * fmud's roles (daemon/access.h): a local client's role from its uid and
 * groups as the kernel reported them, a CURVE client's from
 * authorized_keys; refusals name the role needed; a session is changed by
 * its owner or an admin only; changing requests are logged with who asked.
 *
 * Another local user is a child that drops to uid/gid 65534 (nobody) and
 * connects: these tests need root and are skipped without it.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "support/as_other.h"
#include "test_fmud.h"

#define MAX_ASKS        8

static struct tf_daemon d;

struct answer {
        bool ok;
        int code;
        uint64_t session;               /* a load's */
        char msg[200];
};

static void cleanup(void)
{
        tf_cleanup(&d);
}

/* Start fmud with conf; the folder is opened for nobody to reach the socket (socket_group). */
static void start(const char *conf)
{
        const char *extra[] = { "--allow", FMUD_EXAMPLES, "--sandbox", "off", NULL };

        if (geteuid() != 0)
                cr_skip_test("another local user needs root");
        cr_assert(tf_start(&d, conf, extra) == 0, "fmud did not start: %s/fmud.log", d.dir);
        cr_assert(chmod(d.dir, 0711) == 0);
}

static void answer_of(const struct proto_reply *rep, struct answer *a)
{
        const struct pv *sid = rep->ok ? pv_get(rep->result, "session") : NULL;

        a->ok = rep->ok;
        a->code = rep->ok ? -1 : rep->code;
        if (sid)
                (void)pv_u64(sid, &a->session);
        if (!rep->ok)
                snprintf(a->msg, sizeof(a->msg), "%.*s", (int)rep->message_len, rep->message);
}

struct asks {
        struct pw *w;
        size_t n;
};

/* As the other user: each request on one connection, each answer written to fd. */
static int ask_each(void *ctx, int fd)
{
        const struct asks *q = ctx;
        int t = TF_REPLY_MS, linger = 0;
        void *zctx, *s;

        zctx = zmq_ctx_new();
        s = zmq_socket(zctx, ZMQ_DEALER);
        zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof(linger));
        zmq_setsockopt(s, ZMQ_RCVTIMEO, &t, sizeof(t));
        if (zmq_connect(s, d.ctl) < 0)
                return 3;
        for (size_t i = 0; i < q->n; i++) {
                struct answer a = { .code = -2 };
                struct proto_reply rep;
                struct pv_doc doc;
                void *buf;

                if (tf_call(s, &q->w[i], &doc, &rep, &buf) == 0) {
                        answer_of(&rep, &a);
                        pv_doc_fini(&doc);
                        free(buf);
                }
                if (write(fd, &a, sizeof(a)) != (ssize_t)sizeof(a))
                        return 4;
        }
        zmq_close(s);
        zmq_ctx_term(zctx);
        return 0;
}

/* Send each request of w[0..n) as uid/gid 65534 on one connection; their answers in out. */
static void ask_as_nobody(struct pw *w, size_t n, struct answer *out)
{
        struct asks q = { w, n };
        int status = 0;
        ssize_t len;

        cr_assert(n <= MAX_ASKS);
        len = as_other(ask_each, &q, out, n * sizeof(*out), &status);
        cr_assert(len >= 0, "%s", strerror((int)-len));
        for (size_t i = 0; i < n; i++)
                cr_assert((size_t)len >= (i + 1) * sizeof(*out), "the child gave no answer %zu",
                          i);
        cr_assert(status == 0, "child status %d", status);
        for (size_t i = 0; i < n; i++)
                pw_fini(&w[i]);
}

/* One request as this process (root: admin). */
static struct answer ask_as_root(struct pw *w)
{
        void *s = tf_dealer(&d, d.ctl, TF_REPLY_MS);
        struct answer a = { .code = -2 };
        struct proto_reply rep;
        struct pv_doc doc;
        void *buf;

        cr_assert(s);
        cr_assert(tf_call(s, w, &doc, &rep, &buf) == 0, "no reply");
        answer_of(&rep, &a);
        pv_doc_fini(&doc);
        free(buf);
        pw_fini(w);
        zmq_close(s);
        return a;
}

static void enc_load(struct pw *w, bool paced)
{
        struct proto_load a = {
                .path = { FMUD_EXAMPLES "/msd.ssp", (uint32_t)strlen(FMUD_EXAMPLES "/msd.ssp") },
                .has_warp = paced, .warp = 1.0,
        };

        pw_init(w);
        proto_load_encode(w, 10, &a);
}

static void enc_op(struct pw *w, enum proto_op op, uint64_t session)
{
        pw_init(w);
        if (op == PROTO_OP_LIST || op == PROTO_OP_SHUTDOWN)
                proto_req_begin(w, 20 + op, op, 0);
        else
                proto_target_encode(w, 20 + op, op, &(struct proto_target){ .session = session });
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

#define eq_denied(a, want) \
        cr_assert(!(a).ok && (a).code == PROTO_E_DENIED && !strcmp((a).msg, (want)), \
                  "ok %d code %d '%s', want denied '%s'", (a).ok, (a).code, (a).msg, (want))

/* A hang fails its test by name, well inside ctest's limit for the file. */
TestSuite(fmud_roles, .timeout = 120);

Test(fmud_roles, a_configured_observer_reads_and_is_denied_load_and_shutdown, .fini = cleanup)
{
        struct pw w[4];
        struct answer a[4];

        start("[control]\nsocket_group = 65534\n[roles]\nuser = nobody observer\n");
        enc_op(&w[0], PROTO_OP_LIST, 0);
        enc_op(&w[1], PROTO_OP_STATUS, 0);
        enc_load(&w[2], false);
        enc_op(&w[3], PROTO_OP_SHUTDOWN, 0);
        ask_as_nobody(w, 4, a);
        cr_assert(a[0].ok && a[1].ok, "list: %s; status: %s", a[0].msg, a[1].msg);
        eq_denied(a[2], "load needs the operator role; you are observer");
        eq_denied(a[3], "shutdown needs the admin role; you are observer");
        /* Nothing was loaded, and the daemon still serves. */
        enc_op(&w[0], PROTO_OP_STATUS, 1);
        cr_assert(ask_as_root(&w[0]).code == PROTO_E_NO_SESSION);
        cr_assert(tf_pid_alive(d.pid));
        cr_assert(log_has("request: shutdown by uid 65534 (nobody) as observer: denied: shutdown "
                          "needs the admin role; you are observer"));
        cr_assert(log_has("request: load by uid 65534 (nobody) as observer: denied"));
}

Test(fmud_roles, the_socket_group_makes_an_operator_who_changes_only_its_own_sessions,
     .fini = cleanup)
{
        struct pw w[6];
        struct answer a[6], r;

        start("[control]\nsocket_group = 65534\n");
        enc_load(&w[0], false);
        r = ask_as_root(&w[0]);
        cr_assert(r.ok && r.session == 1, "%s", r.msg);
        enc_op(&w[0], PROTO_OP_SHUTDOWN, 0);
        enc_op(&w[1], PROTO_OP_PAUSE, 1);
        enc_op(&w[2], PROTO_OP_UNLOAD, 1);
        enc_op(&w[3], PROTO_OP_STATUS, 1);
        enc_load(&w[4], true);
        ask_as_nobody(w, 5, a);
        eq_denied(a[0], "shutdown needs the admin role; you are operator");
        eq_denied(a[1], "pause of session 1 needs its owner (uid 0) or the admin role; you are "
                        "operator (uid 65534)");
        eq_denied(a[2], "unload of session 1 needs its owner (uid 0) or the admin role; you are "
                        "operator (uid 65534)");
        cr_assert(a[3].ok, "an operator sees every session: %s", a[3].msg);
        cr_assert(a[4].ok && a[4].session == 2, "%s", a[4].msg);
        /* Its own session it may run; an admin may pause it. */
        enc_op(&w[0], PROTO_OP_START, 2);
        ask_as_nobody(w, 1, a);
        cr_assert(a[0].ok, "%s", a[0].msg);
        enc_op(&w[0], PROTO_OP_PAUSE, 2);
        r = ask_as_root(&w[0]);
        cr_assert(r.ok, "%s", r.msg);
        enc_op(&w[0], PROTO_OP_STATUS, 1);
        cr_assert(ask_as_root(&w[0]).ok, "session 1 was unloaded");
        cr_assert(log_has("request: load session 2 by uid 65534 (nobody) as operator: ok"));
        cr_assert(log_has("request: pause session 2 by uid 0 (root) as admin: ok"));
        cr_assert(log_has("request: pause session 1 by uid 65534 (nobody) as operator: denied"));
}

Test(fmud_roles, list_and_status_name_the_user_who_loaded, .fini = cleanup)
{
        struct proto_list_result lr;
        struct proto_session_status st;
        struct proto_reply rep;
        struct answer a[1];
        struct pv_doc doc;
        char err[256];
        void *s, *buf, *mem = NULL;
        struct pw w;

        start("[control]\nsocket_group = 65534\n");
        enc_load(&w, false);
        ask_as_nobody(&w, 1, a);
        cr_assert(a[0].ok, "%s", a[0].msg);
        s = tf_dealer(&d, d.ctl, TF_REPLY_MS);
        enc_op(&w, PROTO_OP_LIST, 0);
        cr_assert(tf_call(s, &w, &doc, &rep, &buf) == 0 && rep.ok);
        cr_assert(proto_list_result_decode(rep.result, &lr, &mem, err, sizeof(err)) == 0, "%s", err);
        cr_assert(lr.n == 1 && lr.sessions[0].user.len == strlen("uid 65534") &&
                  !memcmp(lr.sessions[0].user.ptr, "uid 65534", lr.sessions[0].user.len));
        free(mem);
        mem = NULL;
        pv_doc_fini(&doc);
        free(buf);
        pw_fini(&w);
        enc_op(&w, PROTO_OP_STATUS, 1);
        cr_assert(tf_call(s, &w, &doc, &rep, &buf) == 0 && rep.ok);
        cr_assert(proto_session_status_decode(rep.result, &st, &mem, err, sizeof(err)) == 0, "%s",
                  err);
        cr_assert(st.user.len == strlen("uid 65534") &&
                  !memcmp(st.user.ptr, "uid 65534", st.user.len));
        free(mem);
        pv_doc_fini(&doc);
        free(buf);
        pw_fini(&w);
        zmq_close(s);
}

Test(fmud_roles, a_group_entry_makes_an_admin_whose_shutdown_ends_the_daemon_with_0,
     .fini = cleanup)
{
        struct pw w[1];
        struct answer a[1];

        start("[control]\nsocket_group = 65534\n[roles]\ngroup = nogroup admin\n"
              "default_role = observer\n");
        enc_op(&w[0], PROTO_OP_SHUTDOWN, 0);
        ask_as_nobody(w, 1, a);
        cr_assert(a[0].ok, "%s", a[0].msg);
        cr_assert(tf_wait(&d) == 0, "the daemon's exit status after shutdown");
        cr_assert(log_has("request: shutdown by uid 65534 (nobody) as admin: ok"));
}

Test(fmud_roles, default_role_applies_to_a_user_matched_by_nothing, .fini = cleanup)
{
        struct pw w[2];
        struct answer a[2];

        /* nobody reaches the socket by its group, which is not socket_group's role here: */
        start("[control]\nsocket_group = 65534\n[roles]\ngroup = 65534 observer\n");
        enc_op(&w[0], PROTO_OP_LIST, 0);
        enc_load(&w[1], false);
        ask_as_nobody(w, 2, a);
        cr_assert(a[0].ok);
        eq_denied(a[1], "load needs the operator role; you are observer");
}

Test(fmud_roles, an_observer_exports_a_snapshot_and_is_denied_its_import, .fini = cleanup)
{
        static const char sha[] = "0000000000000000000000000000000000000000000000000000000000000000";
        struct pw w[2];
        struct answer a[2], r;

        start("[control]\nsocket_group = 65534\n[roles]\nuser = nobody observer\n");
        enc_load(&w[0], false);
        r = ask_as_root(&w[0]);
        cr_assert(r.ok, "%s", r.msg);
        enc_op(&w[0], PROTO_OP_SNAPSHOT, r.session);
        cr_assert(ask_as_root(&w[0]).ok);
        pw_init(&w[0]);
        proto_snapshot_export_encode(&w[0], 30, &(struct proto_snapshot_export){
                .t = { .session = r.session }, .snapshot = 1, .offset = 0 });
        pw_init(&w[1]);
        proto_snapshot_import_encode(&w[1], 31, &(struct proto_snapshot_import){
                .t = { .session = r.session }, .content = { sha, 64 } });
        ask_as_nobody(w, 2, a);
        cr_assert(a[0].ok, "export: %s", a[0].msg);
        eq_denied(a[1], "snapshot-import needs the operator role; you are observer");
}
