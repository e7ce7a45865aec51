/*
 * daemon: many clients at once. Two connections interleave requests on
 * their own and on a shared session; a client that goes away in the
 * middle of a request harms nobody; a session busy stepping does not hold
 * up another client's status.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "daemon_fixture.h"

static struct fmud_daemon d;
static struct fmud *c;

static void setup(void)
{
        daemon_start(&d, NULL);
        c = daemon_connect(&d);
}

static void teardown(void)
{
        fmud_close(c);
        c = NULL;
        daemon_stop(&d);
}

/*
 * Scripted alone with x' = u, run to t = 1000 in steps of 0.1, each step
 * busy for `spin` iterations.
 */
static uint64_t load_scripted(const char *u, const char *spin)
{
        struct proto_assign starts[] = {
                { daemon_str("u"), daemon_str(u) },
                { daemon_str("spin"), daemon_str(spin) },
        };
        struct proto_load a = {
                .path = daemon_str(FMUD_MASTER_FMU_DIR "/Scripted.fmu"),
                .has_stop = true, .stop = 1000.0,
                .n_starts = 2, .starts = starts,
        };

        return daemon_load(c, &a, NULL);
}

/* ---- Two clients ------------------------------------------------------------------ */

#define ROUNDS 40

struct client_run {
        const char *endpoint;
        uint64_t own, shared;
        double u;
        double x;               /* own x after ROUNDS steps */
        char error[256];        /* empty when every request succeeded */
};

static void *client_thread(void *arg)
{
        struct client_run *run = arg;
        const char *const x[] = { "x" }, *const x1[] = { "mass1.x1" };
        struct proto_target own = { run->own, 0 }, shared = { run->shared, 0 };
        struct proto_session_status st;
        struct fmud *cc = NULL;
        uint64_t last = 0;
        double v;

        if (fmud_connect(run->endpoint, NULL, &cc, run->error, sizeof(run->error)) < 0)
                return NULL;
        for (int i = 0; i < ROUNDS; i++) {
                if (fmud_step(cc, &own, 1, NULL) < 0 || fmud_step(cc, &shared, 1, NULL) < 0 ||
                    fmud_get_f64(cc, &own, x, 1, &run->x) < 0 ||
                    fmud_get_f64(cc, &shared, x1, 1, &v) < 0 ||
                    fmud_status(cc, run->shared, &st) < 0) {
                        snprintf(run->error, sizeof(run->error), "round %d: %s", i,
                                 fmud_errmsg(cc));
                        break;
                }
                if (st.points <= last) {
                        snprintf(run->error, sizeof(run->error),
                                 "round %d: shared session went from %" PRIu64 " to %" PRIu64
                                 " points", i, last, st.points);
                        break;
                }
                last = st.points;
        }
        fmud_close(cc);
        return NULL;
}

Test(daemon_clients, two_clients_interleave_on_own_and_shared_sessions, .init = setup,
     .fini = teardown)
{
        struct proto_load msd = { .path = daemon_str(FMUD_EXAMPLES "/msd.ssp") };
        uint64_t shared = daemon_load(c, &msd, NULL);
        struct client_run runs[2] = {
                { d.endpoint, load_scripted("1", "0"), shared, 1.0, 0, "" },
                { d.endpoint, load_scripted("2", "0"), shared, 2.0, 0, "" },
        };
        struct proto_session_status st;
        pthread_t th[2];

        for (int i = 0; i < 2; i++)
                cr_assert(pthread_create(&th[i], NULL, client_thread, &runs[i]) == 0);
        for (int i = 0; i < 2; i++)
                cr_assert(pthread_join(th[i], NULL) == 0);
        for (int i = 0; i < 2; i++) {
                double x = runs[i].u * 0.1 * ROUNDS;

                cr_assert(runs[i].error[0] == '\0', "client %d: %s", i, runs[i].error);
                /* Each step of Scripted adds u * h: x = u * t, up to rounding. */
                cr_assert(fabs(runs[i].x - x) < 1e-12, "client %d: x %.17g, expected %.17g", i,
                          runs[i].x, x);
                cr_assert(fmud_status(c, runs[i].own, &st) == 0);
                cr_assert(st.points == ROUNDS, "own session: %" PRIu64 " points", st.points);
        }
        cr_assert(fmud_status(c, shared, &st) == 0);
        cr_assert(st.points == 2 * ROUNDS, "shared session: %" PRIu64 " points", st.points);
}

/* ---- Raw requests (a client that does not wait for its reply) ---------------------- */

struct raw {
        void *ctx, *s;
};

static void raw_open(struct raw *r)
{
        int linger = 0;

        r->ctx = zmq_ctx_new();
        cr_assert(r->ctx != NULL);
        r->s = zmq_socket(r->ctx, ZMQ_DEALER);
        cr_assert(r->s != NULL);
        cr_assert(zmq_setsockopt(r->s, ZMQ_LINGER, &linger, sizeof(linger)) == 0);
        cr_assert(zmq_connect(r->s, d.endpoint) == 0);
}

static void raw_close(struct raw *r)
{
        zmq_close(r->s);
        zmq_ctx_term(r->ctx);
}

static void raw_step(struct raw *r, uint64_t session, uint64_t n)
{
        struct proto_step a = { .t = { session, 0 }, .n = n };
        struct pw w;

        cr_assert(pw_init(&w) == 0);
        proto_step_encode(&w, 7, &a);
        cr_assert(w.error == 0);
        cr_assert(zmq_send(r->s, pw_data(&w), pw_size(&w), 0) == (int)pw_size(&w));
        pw_fini(&w);
}

/* Whether a reply is waiting on the raw socket now. */
static bool raw_has_reply(struct raw *r)
{
        zmq_pollitem_t it = { .socket = r->s, .events = ZMQ_POLLIN };

        cr_assert(zmq_poll(&it, 1, 0) >= 0);
        return it.revents & ZMQ_POLLIN;
}

/*
 * Send a step of n points, then a status request, on the raw socket. The
 * control thread serves one connection's requests in order and answers
 * status at once: when the status reply is back, the step has been handed
 * to the session's thread and is queued or running, not answered.
 */
static void raw_step_in_flight(struct raw *r, uint64_t session, uint64_t n)
{
        struct proto_target t = { session, 0 };
        struct proto_limits lim;
        struct proto_reply rep;
        struct pv_doc doc = { 0 };
        char buf[65536], err[128];
        int len, timeout = 60000;
        struct pw w;

        raw_step(r, session, n);
        cr_assert(pw_init(&w) == 0);
        proto_target_encode(&w, 8, PROTO_OP_STATUS, &t);
        cr_assert(zmq_send(r->s, pw_data(&w), pw_size(&w), 0) == (int)pw_size(&w));
        pw_fini(&w);
        cr_assert(zmq_setsockopt(r->s, ZMQ_RCVTIMEO, &timeout, sizeof(timeout)) == 0);
        len = zmq_recv(r->s, buf, sizeof(buf), 0);
        cr_assert(len > 0 && (size_t)len <= sizeof(buf), "no status reply");
        proto_limits_default(&lim);
        cr_assert(pv_decode(buf, (size_t)len, &lim, &doc, err, sizeof(err)) == 0, "%s", err);
        cr_assert(proto_reply_decode(doc.root, &rep, err, sizeof(err)) == 0, "%s", err);
        cr_assert(rep.id == 8, "reply %llu came before the status reply: the step is done",
                  (unsigned long long)rep.id);
        cr_assert(rep.ok);
        pv_doc_fini(&doc);
}

Test(daemon_clients, a_client_gone_mid_request_harms_nobody, .init = setup, .fini = teardown)
{
        uint64_t s = load_scripted("1", "1000000");
        struct proto_target t = { s, 0 };
        struct proto_session_status st;
        const char *const x[] = { "x" };
        struct raw r;
        double v;

        raw_open(&r);
        raw_step_in_flight(&r, s, 200);
        raw_close(&r);
        /* The daemon serves the next client; the step completes into a consistent state. */
        for (;;) {
                cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
                if (st.state != PROTO_STATE_RUNNING && st.points == 200)
                        break;
                /* The 200th point is counted a moment before the state turns to paused. */
                cr_assert(st.points <= 200, "stepped past the request: %" PRIu64, st.points);
                usleep(10000);
        }
        cr_assert(st.state == PROTO_STATE_PAUSED, "%s", proto_state_name(st.state));
        cr_assert(st.insts[0].steps == 200);
        cr_assert(fmud_get_f64(c, &t, x, 1, &v) == 0, "%s", fmud_errmsg(c));
        cr_assert(fabs(v - 20.0) < 1e-9, "x %.17g after 200 steps of 0.1 at u = 1", v);
        cr_assert(fmud_step(c, &t, 1, NULL) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_unload(c, &t) == 0, "%s", fmud_errmsg(c));
}

Test(daemon_clients, a_busy_session_does_not_delay_another_clients_status, .init = setup,
     .fini = teardown)
{
        struct proto_load msd = { .path = daemon_str(FMUD_EXAMPLES "/msd.ssp") };
        uint64_t a = load_scripted("1", "1000000"), b = daemon_load(c, &msd, NULL);
        struct proto_session_status st;
        struct raw r;

        raw_open(&r);
        raw_step_in_flight(&r, a, 100000);
        /* A is in the middle of a long step: B's status is answered first. */
        for (int i = 0; i < 20; i++) {
                cr_assert(fmud_status(c, b, &st) == 0, "%s", fmud_errmsg(c));
                cr_assert(st.state == PROTO_STATE_LOADED);
                cr_assert(!raw_has_reply(&r), "A's step answered before B's status");
        }
        cr_assert(fmud_status(c, a, &st) == 0);
        cr_assert(st.points < 100000);
        raw_close(&r);
        /* The daemon's shutdown (teardown) ends A's step at its next point. */
}
