/*
 * daemon_subs: what a subscription's samples carry against a real fmud:
 * an everyPoint subscription gets one sample per communication point,
 * in order, while a recorded-only one gets the recorded points; every
 * sample carries the wall clock of its point (within clock readings taken
 * around the steps); first once per subscription, restored once after a
 * restore, dropped after a stalled subscriber; and a paced session's
 * telemetry on "t<session>" with status's figures.
 *
 * The samples are read on a SUB socket of the test's own, subscribed to
 * the session's topic prefix and seen to have joined before the
 * subscriptions under test are made, so none of their samples is missed
 * (PUB loses what comes before a subscriber joined).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "daemon_fixture.h"

static struct fmud_daemon d;
static struct fmud *c;
static void *zctx, *sub;

static void setup(void)
{
        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        zctx = zmq_ctx_new();
        cr_assert(zctx);
}

static void teardown(void)
{
        if (sub)
                zmq_close(sub);
        sub = NULL;
        /*
         * Not zmq_ctx_term(): it waits for every socket, and one that a
         * failed assertion left open would hold the test until ctest's
         * timeout. The process ends with the test.
         */
        zmq_ctx_shutdown(zctx);
        fmud_close(c);
        c = NULL;
        daemon_stop(&d);
}

static uint64_t clock_ns(clockid_t id)
{
        struct timespec ts;

        clock_gettime(id, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A SUB socket of the test's own on prefix (rcvhwm > 0: that high-water mark). */
static void open_sub(const char *prefix, int rcvhwm)
{
        int zero = 0;

        sub = zmq_socket(zctx, ZMQ_SUB);
        cr_assert(sub);
        zmq_setsockopt(sub, ZMQ_LINGER, &zero, sizeof(zero));
        if (rcvhwm > 0)
                zmq_setsockopt(sub, ZMQ_RCVHWM, &rcvhwm, sizeof(rcvhwm));
        cr_assert(zmq_setsockopt(sub, ZMQ_SUBSCRIBE, prefix, strlen(prefix)) == 0);
        cr_assert(zmq_connect(sub, d.pub_endpoint) == 0, "%s", zmq_strerror(errno));
}

struct msg {
        char topic[64];
        struct pv_doc doc;
        struct proto_sample s;
        void *mem;
        void *buf;
};

static void msg_fini(struct msg *m)
{
        pv_doc_fini(&m->doc);
        free(m->mem);
        free(m->buf);
        memset(m, 0, sizeof(*m));
}

/* The next message within ms (false: none came), decoded as a sample unless raw. */
static bool next(struct msg *m, int ms, bool sample)
{
        zmq_pollitem_t it = { .socket = sub, .events = ZMQ_POLLIN };
        struct proto_limits lim;
        char err[256];
        int n;

        memset(m, 0, sizeof(*m));
        if (zmq_poll(&it, 1, ms) <= 0)
                return false;
        n = zmq_recv(sub, m->topic, sizeof(m->topic) - 1, 0);
        cr_assert(n > 0 && n < (int)sizeof(m->topic), "topic frame %d", n);
        m->buf = malloc(1 << 20);
        cr_assert(m->buf);
        n = zmq_recv(sub, m->buf, 1 << 20, 0);
        cr_assert(n > 0 && n < (1 << 20), "body frame %d", n);
        proto_limits_default(&lim);
        cr_assert(pv_decode(m->buf, (size_t)n, &lim, &m->doc, err, sizeof(err)) == 0, "%s", err);
        if (sample)
                cr_assert(proto_sample_decode(m->doc.root, &m->s, &m->mem, err, sizeof(err)) == 0,
                          "%s: %s", m->topic, err);
        return true;
}

/*
 * libfmud's own SUB socket gets the samples of the subscriptions made
 * through it: read them too, since a full subscriber pipe makes the
 * daemon refuse a message to every subscriber of its topic.
 */
static void drain_client(void)
{
        struct fmud_msg fm;

        while (fmud_next(c, 0, &fm) == 0)
                ;
}

/* Drain what came. */
static void drain(void)
{
        struct msg m;

        while (next(&m, 300, false)) {
                msg_fini(&m);
                drain_client();
        }
        drain_client();
}

static char prefix[32];

/*
 * msd.ssp, recording every 10th point, with a recorded-only
 * subscription (*ret_rec) that the test's SUB socket is seen to receive:
 * from then on it misses nothing of the session's subscriptions.
 */
static struct proto_target joined(char *ret_rec, int rcvhwm)
{
        const char *const x[] = { "mass1.x1" };
        struct proto_load a = {
                .path = daemon_str(FMUD_EXAMPLES "/msd.ssp"), .has_stop = true, .stop = 1e6,
                .has_decimation = true, .decimation = 10,
        };
        struct proto_target t = { daemon_load(c, &a, NULL), 0 };
        bool in = false;
        struct msg m;

        snprintf(prefix, sizeof(prefix), "s%" PRIu64 ".", t.session);
        open_sub(prefix, rcvhwm);
        cr_assert(fmud_subscribe(c, &t, x, 1, 1, ret_rec, 64) == 0, "%s", fmud_errmsg(c));
        for (int i = 0; i < 200 && !in; i++) {
                cr_assert(fmud_step(c, &t, 10, NULL) == 0, "%s", fmud_errmsg(c));
                in = next(&m, 50, false);
                if (in)
                        msg_fini(&m);
        }
        cr_assert(in, "the SUB socket never joined");
        drain();
        return t;
}

struct seen {
        uint64_t n, first, first_flags, restored, dropped, unrecorded, gaps;
        uint64_t p0, last, mono_last;
        bool named_first;
};

/* Read every sample of topic until nothing comes; samples of other topics are counted in *other. */
static void collect(const char *topic, struct seen *s, uint64_t mono0, uint64_t mono1,
                    uint64_t real0, uint64_t real1, struct seen *other)
{
        struct msg m;

        while (next(&m, 500, true)) {
                struct seen *w = strcmp(m.topic, topic) ? other : s;
                uint32_t f = m.s.flags;

                if (w->n == 0) {
                        w->p0 = m.s.point;
                        w->first_flags = f;
                        w->named_first = m.s.names != NULL;
                } else if (m.s.point != w->last + 1) {
                        w->gaps++;
                }
                w->first += (f & PROTO_SAMPLE_FIRST) != 0;
                w->restored += (f & PROTO_SAMPLE_RESTORED) != 0;
                w->dropped += (f & PROTO_SAMPLE_DROPPED) != 0;
                w->unrecorded += (f & PROTO_SAMPLE_UNRECORDED) != 0;
                if (w == s && mono1) {
                        /* The point was done between the readings around the steps, in order. */
                        cr_assert(m.s.mono_ns >= mono0 && m.s.mono_ns <= mono1,
                                  "point %" PRIu64 ": monoNs %" PRIu64 " outside [%" PRIu64
                                  ", %" PRIu64 "]", m.s.point, m.s.mono_ns, mono0, mono1);
                        cr_assert(m.s.real_ns >= real0 && m.s.real_ns <= real1,
                                  "point %" PRIu64 ": realNs %" PRIu64 " outside [%" PRIu64
                                  ", %" PRIu64 "]", m.s.point, m.s.real_ns, real0, real1);
                        cr_assert(m.s.mono_ns >= w->mono_last, "monoNs went back at point %"
                                  PRIu64, m.s.point);
                        /* The recorded points (every 10th) are the ones not flagged. */
                        cr_assert_eq((f & PROTO_SAMPLE_UNRECORDED) != 0, m.s.point % 10 != 0,
                                     "point %" PRIu64 " flags %#x", m.s.point, f);
                }
                w->mono_last = m.s.mono_ns;
                w->last = m.s.point;
                w->n++;
                msg_fini(&m);
                drain_client();
        }
        drain_client();
}

Test(daemon_subs, every_point_gets_each_point_in_order_with_stamps_and_first_once,
     .init = setup, .fini = teardown)
{
        const char *const x[] = { "mass1.x1", "mass2.x2" };
        char rec[64], every[64];
        struct proto_progress p1;
        struct seen s = { 0 }, r = { 0 };
        struct proto_target t = joined(rec, 0);
        uint64_t mono0, mono1, real0, real1;

        cr_assert(fmud_subscribe_every(c, &t, x, 2, 1, true, every, sizeof(every)) == 0, "%s",
                  fmud_errmsg(c));
        mono0 = clock_ns(CLOCK_MONOTONIC);
        real0 = clock_ns(CLOCK_REALTIME);
        cr_assert(fmud_step(c, &t, 200, &p1) == 0, "%s", fmud_errmsg(c));
        mono1 = clock_ns(CLOCK_MONOTONIC);
        real1 = clock_ns(CLOCK_REALTIME);
        collect(every, &s, mono0, mono1, real0, real1, &r);

        /* Every point, one sample each, in order, the last at the session's point. */
        cr_assert_eq(s.n, 200, "%" PRIu64 " samples for 200 points", s.n);
        cr_assert_eq(s.gaps, 0);
        cr_assert_eq(s.last, p1.points, "last sample at point %" PRIu64 ", session at %" PRIu64,
                     s.last, p1.points);
        cr_assert_eq(s.p0, p1.points - 199);
        cr_assert_eq(s.unrecorded, 180);
        /* first: once, on the first sample, which names the values. */
        cr_assert_eq(s.first, 1);
        cr_assert(s.first_flags & PROTO_SAMPLE_FIRST);
        cr_assert(s.named_first);
        cr_assert_eq(s.dropped + s.restored, 0);
        /* Meanwhile the recorded-only subscription got the recorded points: every 10th. */
        cr_assert_eq(r.n, 20, "%" PRIu64 " recorded samples for 200 points", r.n);
        cr_assert_eq(r.unrecorded + r.first + r.dropped + r.restored, 0);
        cr_assert_eq(r.last % 10, 0);
}

Test(daemon_subs, the_first_sample_after_a_restore_is_flagged_restored, .init = setup,
     .fini = teardown)
{
        const char *const x[] = { "mass1.x1" };
        char rec[64], every[64];
        struct seen s = { 0 }, r = { 0 }, s2 = { 0 }, r2 = { 0 };
        struct proto_target t = joined(rec, 0);
        struct proto_progress p;
        uint64_t snap, gen;
        double at;

        cr_assert(fmud_subscribe_every(c, &t, x, 1, 1, true, every, sizeof(every)) == 0, "%s",
                  fmud_errmsg(c));
        cr_assert(fmud_snapshot(c, &t, &snap, &at) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_step(c, &t, 30, NULL) == 0, "%s", fmud_errmsg(c));
        collect(every, &s, 0, 0, 0, 0, &r);
        cr_assert_eq(s.n, 30);
        cr_assert_eq(s.restored + r.restored, 0);

        cr_assert(fmud_restore(c, &t, snap, &gen) == 0, "%s", fmud_errmsg(c));
        t.generation = gen;
        cr_assert(fmud_step(c, &t, 30, &p) == 0, "%s", fmud_errmsg(c));
        collect(every, &s2, 0, 0, 0, 0, &r2);
        /* The same 30 points again; the first of each subscription says so, the others not. */
        cr_assert_eq(s2.n, 30);
        cr_assert_eq(s2.p0, s.p0);
        cr_assert_eq(s2.restored, 1);
        cr_assert(s2.first_flags & PROTO_SAMPLE_RESTORED);
        cr_assert_eq(s2.first, 0);
        cr_assert_eq(r2.n, 3);
        cr_assert_eq(r2.restored, 1);
        cr_assert(r2.first_flags & PROTO_SAMPLE_RESTORED);
}

Test(daemon_subs, a_stalled_every_point_subscriber_gets_the_dropped_flag, .init = setup,
     .fini = teardown)
{
        const char *const x[] = { "mass1.x1" };
        char rec[64], every[64];
        struct seen s = { 0 }, r = { 0 };
        struct proto_target t = joined(rec, 10);
        struct proto_session_status st;

        cr_assert(fmud_unsubscribe(c, &t, rec) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_subscribe_every(c, &t, x, 1, 1, true, every, sizeof(every)) == 0, "%s",
                  fmud_errmsg(c));
        /* Not read meanwhile: far more than the high-water marks and socket buffers hold. */
        cr_assert(fmud_step(c, &t, 50000, NULL) == 0, "%s", fmud_errmsg(c));
        collect(every, &s, 0, 0, 0, 0, &r);
        cr_assert(fmud_status(c, t.session, &st) == 0, "%s", fmud_errmsg(c));
        cr_assert(st.samples_dropped > 0, "samplesDropped 0, %" PRIu64 " samples read", s.n);
        cr_assert(s.n < 50000);
        /* The next sample built after the loss was counted says so (and names the values again). */
        cr_assert(fmud_step(c, &t, 10, NULL) == 0, "%s", fmud_errmsg(c));
        collect(every, &s, 0, 0, 0, 0, &r);
        cr_assert(s.dropped >= 1, "%" PRIu64 " samples, %" PRIu64 " gaps, none flagged", s.n,
                  s.gaps);
        cr_assert_eq(s.first, 1);
}

Test(daemon_subs, a_paced_session_publishes_telemetry_shaped_as_status, .init = setup,
     .fini = teardown)
{
        struct proto_load a = {
                .path = daemon_str(FMUD_EXAMPLES "/msd.ssp"), .has_stop = true, .stop = 4.0,
                .has_step = true, .has_warp = true, .warp = 1.0, .step = 0.01,
        };
        struct proto_target t = { daemon_load(c, &a, NULL), 0 };
        struct proto_session_status st;
        struct proto_telemetry tm[8];
        struct msg ms[8];
        void *mem[8] = { 0 };
        char topic[32], err[256];
        bool in = false;
        int got = 0;
        struct msg m;

        snprintf(topic, sizeof(topic), "t%" PRIu64, t.session);
        open_sub(topic, 0);
        /*
         * Joined once a state event comes (both topics are subscribed on one
         * pipe, in order): step a point at a time until one does.
         */
        cr_assert(zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "events", 6) == 0);
        for (int i = 0; i < 100 && !in; i++) {
                cr_assert(fmud_step(c, &t, 1, NULL) == 0, "%s", fmud_errmsg(c));
                in = next(&m, 50, false);
                if (in)
                        msg_fini(&m);
        }
        cr_assert(in, "the SUB socket never joined");
        drain();
        cr_assert(fmud_resume(c, &t, NULL) == 0, "%s", fmud_errmsg(c));
        while (got < 8 && next(&ms[got], 3000, false)) {
                if (!strcmp(ms[got].topic, topic)) {
                        /* Its strings point into the message: kept until the end. */
                        cr_assert(proto_telemetry_decode(ms[got].doc.root, &tm[got], &mem[got], err,
                                                         sizeof(err)) == 0, "%s", err);
                        got++;
                        continue;
                }
                msg_fini(&ms[got]);
                if (got >= 2)
                        break;
        }
        daemon_wait_state(c, t.session, PROTO_STATE_FINISHED, &st);
        /* A paced run of almost 4 s sends one at its start and one every second: at least 2. */
        cr_assert(got >= 2, "%d telemetry messages in a 4 s paced run", got);
        for (int i = 0; i < got; i++) {
                cr_assert_eq(tm[i].session, t.session);
                cr_assert_eq(tm[i].warp, 1.0);
                cr_assert_eq(tm[i].n_insts, st.n_insts);
                for (uint32_t k = 0; k < st.n_insts; k++)
                        cr_assert(tm[i].insts[k].name.len == st.insts[k].name.len &&
                                  !memcmp(tm[i].insts[k].name.ptr, st.insts[k].name.ptr,
                                          st.insts[k].name.len), "instance %u", k);
                cr_assert(tm[i].lateness.max_us <= st.lateness.max_us);
                cr_assert(tm[i].overruns <= st.overruns);
                cr_assert(i == 0 || tm[i].points > tm[i - 1].points);
        }
        /* Later ones show a run under way: points done, a factor, each instance's steps. */
        cr_assert(tm[got - 1].points > 0 && tm[got - 1].real_time_factor > 0);
        cr_assert(tm[got - 1].insts[0].steps > 0 && tm[got - 1].insts[0].service_us_mean > 0);
        cr_assert_eq(tm[got - 1].dropped, 0);
        for (int i = 0; i < got; i++) {
                free(mem[i]);
                msg_fini(&ms[i]);
        }
}

/*
 * A subscriber that goes away without unsubscribing (a watch killed, a
 * dashboard whose network dropped): its subscriptions are removed once
 * its connection has been gone for the grace a transient session gets (1
 * s here), and the daemon logs it. They were held for the session's life,
 * so 16 such ones shut their user out of the session (and 64 everyone),
 * and an every-point one kept the master building a sample at every point
 * for nobody.
 */
static char grace_dir[] = "/tmp/fmud-subs-XXXXXX";
static char grace_conf[sizeof(grace_dir) + 16];

static void setup_with(const char *conf)
{
        const char *extra[] = { "--config", grace_conf, NULL };
        FILE *f;

        cr_assert(mkdtemp(grace_dir) != NULL);
        snprintf(grace_conf, sizeof(grace_conf), "%s/fmud.conf", grace_dir);
        f = fopen(grace_conf, "w");
        cr_assert(f != NULL);
        fputs(conf, f);
        cr_assert(fclose(f) == 0);
        daemon_start(&d, extra);
        c = daemon_connect(&d);
        zctx = zmq_ctx_new();
        cr_assert(zctx);
}

static void setup_grace(void)
{
        setup_with("[limits]\ntransient_grace = 1\n");
}

static void setup_small(void)
{
        setup_with("[control]\nmax_message = 4K\n");
}

static void teardown_grace(void)
{
        teardown();
        unlink(grace_conf);
        rmdir(grace_dir);
}

Test(daemon_subs, the_subscriptions_of_a_subscriber_that_went_away_are_removed,
     .init = setup_grace, .fini = teardown_grace)
{
        struct proto_load a = {
                .path = daemon_str(FMUD_EXAMPLES "/msd.ssp"), .has_stop = true, .stop = 1e6,
        };
        struct proto_target t = { daemon_load(c, &a, NULL), 0 };
        const char *names[] = { "mass1.x1" };
        struct fmud *gone = daemon_connect(&d);
        char topic[64], *log;
        int r = -1;

        for (int i = 0; i < 16; i++)
                cr_assert(fmud_subscribe_every(gone, &t, names, 1, 1, true, topic,
                                               sizeof(topic)) == 0, "%s", fmud_errmsg(gone));
        r = fmud_subscribe(c, &t, names, 1, 1, topic, sizeof(topic));
        daemon_assert_refused(c, r, PROTO_E_LIMIT, "the limit for one subscriber");
        fmud_close(gone);
        /* Removed after the grace: within seconds, not the session's life (a hang guard). */
        for (int i = 0; i < 300 && r != 0; i++) {
                usleep(100 * 1000);
                r = fmud_subscribe(c, &t, names, 1, 1, topic, sizeof(topic));
        }
        cr_assert(r == 0, "%s", fmud_errmsg(c));
        log = daemon_log(&d);
        cr_assert(strstr(log, "removed: its subscribers have all gone"), "%s", log);
        free(log);
}

/*
 * A subscription whose topic does not fit the caller's buffer is refused
 * with -ENAMETOOLONG and is gone in the daemon too: nothing publishes for
 * it, and no one can find it to unsubscribe.
 */
Test(daemon_subs, a_subscribe_refused_for_a_short_topic_buffer_leaves_nothing, .init = setup,
     .fini = teardown)
{
        struct proto_load a = { .path = daemon_str(FMUD_EXAMPLES "/msd.ssp") };
        struct proto_target t = { daemon_load(c, &a, NULL), 0 };
        const char *names[] = { "mass1.x1" };
        struct fmud *other = daemon_connect(&d);
        char small[3], topic[64];
        int r;

        r = fmud_subscribe(c, &t, names, 1, 1, small, sizeof(small));
        cr_assert(r == -ENAMETOOLONG, "%d: %s", r, fmud_errmsg(c));
        snprintf(topic, sizeof(topic), "s%llu.1", (unsigned long long)t.session);
        r = fmud_unsubscribe(other, &t, topic);
        daemon_assert_refused(other, r, PROTO_E_INVALID, "the refused subscription");
        fmud_close(other);
}

/*
 * Samples whose first one (with the names) is larger than a message may
 * be (max_message 4K here): the subscribe is refused saying so. It was
 * accepted, and the subscriber's socket dropped that sample with its
 * connection: a watch waited for ever, silent.
 */
Test(daemon_subs, a_subscription_whose_samples_cannot_be_sent_is_refused, .init = setup_small,
     .fini = teardown_grace)
{
        struct proto_load a = { .path = daemon_str(FMUD_EXAMPLES "/msd.ssp") };
        struct proto_target t = { daemon_load(c, &a, NULL), 0 };
        const char *names[350];
        char topic[64];
        int r;

        for (size_t i = 0; i < 350; i++)
                names[i] = "mass1.x1";
        r = fmud_subscribe(c, &t, names, 350, 1, topic, sizeof(topic));
        daemon_assert_refused(c, r, PROTO_E_TOO_LARGE, "samples larger than a message");
        cr_assert(strstr(fmud_errmsg(c), "350 columns") != NULL, "%s", fmud_errmsg(c));
        /* A few columns still go. */
        r = fmud_subscribe(c, &t, names, 3, 1, topic, sizeof(topic));
        cr_assert(r == 0, "%s", fmud_errmsg(c));
}
