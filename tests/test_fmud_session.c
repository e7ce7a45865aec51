/*
 * fmud with sessions: the daemon hands session requests to its host and
 * keeps serving others while one is in flight; a load outside the allowed
 * directories is refused; SIGTERM ends every worker.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "test_fmud.h"

static struct tf_daemon d;

static void start(void)
{
        const char *extra[] = { "--allow", FMUD_EXAMPLES, "--sandbox", "off", NULL };

        cr_assert(tf_start(&d, NULL, extra) == 0, "fmud did not start: %s/fmud.log", d.dir);
}

static void stop(void)
{
        tf_cleanup(&d);
}

static void call(void *s, struct pw *w, struct pv_doc *doc, struct proto_reply *rep, void **buf)
{
        cr_assert(tf_call(s, w, doc, rep, buf) == 0, "no reply");
        pw_reset(w);
}

static uint64_t load_msd(void *s, bool paced)
{
        struct proto_load a = {
                .path = { FMUD_EXAMPLES "/msd.ssp", (uint32_t)strlen(FMUD_EXAMPLES "/msd.ssp") },
                .has_warp = paced,
                .warp = 1.0,
        };
        struct proto_load_result res;
        struct proto_reply rep;
        struct pv_doc doc;
        char err[256];
        void *buf;
        struct pw w;

        pw_init(&w);
        proto_load_encode(&w, 100, &a);
        call(s, &w, &doc, &rep, &buf);
        cr_assert(rep.ok, "load refused: %.*s", (int)rep.message_len, rep.message);
        cr_assert(proto_load_result_decode(rep.result, &res, err, sizeof(err)) == 0, "%s", err);
        pv_doc_fini(&doc);
        free(buf);
        pw_fini(&w);
        return res.session;
}

/* A hang fails its test by name, well inside ctest's limit for the file. */
TestSuite(fmud_session, .timeout = 120);

Test(fmud_session, a_load_outside_the_allowed_directories_is_denied, .init = start, .fini = stop)
{
        static const char *const paths[] = { "/etc/passwd", FMUD_EXAMPLES "/../../CMakeCache.txt" };
        void *s = tf_dealer(&d, d.ctl, TF_REPLY_MS);

        for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
                struct proto_load a = { .path = { paths[i], (uint32_t)strlen(paths[i]) } };
                struct proto_reply rep;
                struct pv_doc doc;
                void *buf;
                struct pw w;

                pw_init(&w);
                proto_load_encode(&w, 8, &a);
                call(s, &w, &doc, &rep, &buf);
                cr_assert(!rep.ok && rep.code == PROTO_E_DENIED, "'%s': ok %d code %d", paths[i],
                          rep.ok, rep.code);
                cr_assert(rep.id == 8);
                pv_doc_fini(&doc);
                free(buf);
                pw_fini(&w);
        }
        zmq_close(s);
}

Test(fmud_session, daemon_status_answers_while_another_request_is_in_flight, .init = start,
     .fini = stop)
{
        struct proto_run_until ru = { .time = 3.0 };
        struct proto_target t0 = { 0 };
        struct proto_reply rep;
        struct pv_doc doc;
        void *a = tf_dealer(&d, d.ctl, TF_REPLY_MS), *b = tf_dealer(&d, d.ctl, TF_REPLY_MS), *buf;
        zmq_pollitem_t pa = { .socket = a, .events = ZMQ_POLLIN };
        struct pw w;

        /* warp 1: the run to t = 3 s takes 3 s of wall-clock time. */
        ru.t.session = load_msd(a, true);
        pw_init(&w);
        proto_run_until_encode(&w, 200, &ru);
        cr_assert(tf_send(a, pw_data(&w), pw_size(&w)) == 0);
        pw_reset(&w);

        proto_target_encode(&w, 300, PROTO_OP_STATUS, &t0);
        call(b, &w, &doc, &rep, &buf);
        cr_assert(rep.ok && rep.id == 300);
        pv_doc_fini(&doc);
        free(buf);
        /* The session's own status comes from its published snapshot, not its thread. */
        proto_target_encode(&w, 301, PROTO_OP_STATUS, &ru.t);
        call(b, &w, &doc, &rep, &buf);
        cr_assert(rep.ok && rep.id == 301, "%.*s", (int)rep.message_len, rep.message);
        pv_doc_fini(&doc);
        free(buf);
        cr_assert(zmq_poll(&pa, 1, 0) == 0, "the run ended before the status was answered");

        cr_assert(tf_recv_reply(a, &doc, &rep, &buf) == 0, "the run-until was never answered");
        cr_assert(rep.ok && rep.id == 200, "%.*s", (int)rep.message_len, rep.message);
        pv_doc_fini(&doc);
        free(buf);
        pw_fini(&w);
        zmq_close(a);
        zmq_close(b);
}

static size_t count_entries(const char *path)
{
        DIR *dir = opendir(path);
        struct dirent *e;
        size_t n = 0;

        if (!dir)
                return 0;
        while ((e = readdir(dir)))
                if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                        n++;
        closedir(dir);
        return n;
}

Test(fmud_session, sigterm_ends_every_worker_and_removes_the_sockets, .init = start, .fini = stop)
{
        struct proto_session_status st;
        struct proto_target t = { 0 };
        struct proto_reply rep;
        struct pv_doc doc;
        char err[256], scratch[512];
        pid_t pids[8];
        size_t n = 0;
        void *s = tf_dealer(&d, d.ctl, TF_REPLY_MS), *buf, *mem = NULL;
        struct pw w;

        t.session = load_msd(s, false);
        pw_init(&w);
        proto_target_encode(&w, 2, PROTO_OP_STATUS, &t);
        call(s, &w, &doc, &rep, &buf);
        cr_assert(rep.ok);
        cr_assert(proto_session_status_decode(rep.result, &st, &mem, err, sizeof(err)) == 0,
                  "%s", err);
        cr_assert(st.n_insts == 2, "%u instances", st.n_insts);
        for (uint32_t i = 0; i < st.n_insts && n < 8; i++) {
                cr_assert(st.insts[i].pid > 0);
                pids[n++] = (pid_t)st.insts[i].pid;
                cr_assert(tf_pid_alive(pids[n - 1]), "worker %d not running", (int)pids[n - 1]);
        }
        free(mem);
        pv_doc_fini(&doc);
        free(buf);
        pw_fini(&w);
        zmq_close(s);

        cr_assert(tf_stop(&d, SIGTERM) == 0);
        for (size_t i = 0; i < n; i++)
                cr_assert(!tf_pid_alive(pids[i]), "worker %d outlived the daemon", (int)pids[i]);
        cr_assert(access(d.ctl_path, F_OK) < 0 && errno == ENOENT, "control.sock left behind");
        cr_assert(access(d.pub_path, F_OK) < 0 && errno == ENOENT, "events.sock left behind");
        tf_path(&d, "scratch", scratch, sizeof(scratch));
        cr_assert(count_entries(scratch) == 0, "scratch directories left behind");
}

Test(fmud_session, session_events_reach_pub_subscribers, .init = start, .fini = stop)
{
        struct proto_target t = { 0 };
        struct proto_limits lim;
        struct proto_event ev;
        struct proto_reply rep;
        struct pv_doc doc;
        char topic[64], body[4096], err[256];
        void *s = tf_dealer(&d, d.ctl, TF_REPLY_MS), *sub = zmq_socket(d.zctx, ZMQ_SUB), *buf;
        int linger = 0, to = TF_REPLY_MS, n, len;
        bool seen = false;
        struct pw w;

        zmq_setsockopt(sub, ZMQ_LINGER, &linger, sizeof(linger));
        zmq_setsockopt(sub, ZMQ_RCVTIMEO, &to, sizeof(to));
        zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "events", 6);
        cr_assert(zmq_connect(sub, d.pub) == 0);
        /* The load takes long enough (workers start) for the subscription to arrive. */
        t.session = load_msd(s, false);
        pw_init(&w);
        proto_target_encode(&w, 9, PROTO_OP_START, &t);
        call(s, &w, &doc, &rep, &buf);
        cr_assert(rep.ok, "start: %.*s", (int)rep.message_len, rep.message);
        pv_doc_fini(&doc);
        free(buf);
        pw_fini(&w);
        proto_limits_default(&lim);
        for (int i = 0; i < 100 && !seen; i++) {
                n = zmq_recv(sub, topic, sizeof(topic) - 1, 0);
                cr_assert(n > 0, "no event published");
                topic[n < (int)sizeof(topic) - 1 ? n : (int)sizeof(topic) - 1] = '\0';
                len = zmq_recv(sub, body, sizeof(body), 0);
                cr_assert(len >= 0 && len <= (int)sizeof(body), "an event of %d bytes", len);
                cr_assert_str_eq(topic, "events");
                cr_assert(pv_decode(body, (size_t)len, &lim, &doc, err, sizeof(err)) == 0, "%s",
                          err);
                cr_assert(proto_event_decode(doc.root, &ev, err, sizeof(err)) == 0, "%s", err);
                seen = ev.session == t.session;
                pv_doc_fini(&doc);
        }
        cr_assert(seen, "no event of session %llu", (unsigned long long)t.session);
        zmq_close(sub);
        zmq_close(s);
}
