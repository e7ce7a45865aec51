/*
 * daemon_join: a subscriber learns when its subscriptions are in force
 * (PROTOCOL.md section 1). The daemon answers a subscription to a join
 * topic on that topic, and only after every earlier subscription of the
 * connection; a join topic that is empty or too long gets no answer and
 * harms nothing. libfmud joins after every change of its subscriptions,
 * so a subscription gets every sample from the point after its reply and
 * an events reader every state change after fmud_events(), however soon
 * the daemon publishes them; what arrives while it joins is kept in order.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "client/libfmud_int.h"
#include "daemon_fixture.h"

#define WAIT_MS 20000

static struct fmud_daemon d;
static struct fmud *c;
static void *zctx;

static void setup(void)
{
        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        zctx = zmq_ctx_new();
        cr_assert(zctx);
}

static void teardown(void)
{
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

static void *sub_on(const char *topic)
{
        int zero = 0;
        void *s = zmq_socket(zctx, ZMQ_SUB);

        cr_assert(s);
        zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof(zero));
        if (topic)
                cr_assert(zmq_setsockopt(s, ZMQ_SUBSCRIBE, topic, strlen(topic)) == 0);
        cr_assert(zmq_connect(s, d.pub_endpoint) == 0, "%s", zmq_strerror(errno));
        return s;
}

/* The next message's topic (into topic) and body size within ms; false: none came. */
static bool next(void *s, int ms, char *topic, size_t len, unsigned char *body, int *body_len)
{
        zmq_pollitem_t it = { .socket = s, .events = ZMQ_POLLIN };
        int more = 0, n;
        size_t sz = sizeof(more);

        if (zmq_poll(&it, 1, ms) <= 0)
                return false;
        n = zmq_recv(s, topic, len - 1, 0);
        cr_assert(n > 0 && n < (int)len, "topic frame of %d bytes", n);
        topic[n] = '\0';
        zmq_getsockopt(s, ZMQ_RCVMORE, &more, &sz);
        cr_assert(more, "'%s' without a body frame", topic);
        *body_len = zmq_recv(s, body, 256, 0);
        return true;
}

static struct proto_target load_msd(void)
{
        struct proto_load a = {
                .path = daemon_str(FMUD_EXAMPLES "/msd.ssp"), .has_stop = true, .stop = 1e6,
        };

        return (struct proto_target){ daemon_load(c, &a, NULL), 0 };
}

Test(daemon_join, a_join_is_answered_on_its_topic_once_the_subscriptions_before_it_are_in_force,
     .init = setup, .fini = teardown)
{
        void *s = sub_on("events");
        unsigned char body[256];
        char topic[128];
        int n;

        cr_assert(zmq_setsockopt(s, ZMQ_SUBSCRIBE, "jfeed1", 6) == 0);
        cr_assert(next(s, WAIT_MS, topic, sizeof(topic), body, &n), "no answer to the join");
        cr_assert_str_eq(topic, "jfeed1");
        cr_assert(n == 1 && body[0] == 0x80, "the answer is an empty map, not %d bytes", n);

        /* "events" was in force before the answer: the load's event is here. */
        (void)load_msd();
        cr_assert(next(s, WAIT_MS, topic, sizeof(topic), body, &n), "no event after the join");
        cr_assert_str_eq(topic, "events");
        zmq_close(s);
}

Test(daemon_join, a_join_topic_empty_or_too_long_gets_no_answer_and_harms_nothing,
     .init = setup, .fini = teardown)
{
        char big[PROTO_JOIN_TOPIC_MAX + 2], topic[128];
        void *s = sub_on(NULL);
        unsigned char body[256];
        int n;

        memset(big, 'x', sizeof(big) - 1);
        big[0] = 'j';
        big[sizeof(big) - 1] = '\0';
        cr_assert(zmq_setsockopt(s, ZMQ_SUBSCRIBE, "j", 1) == 0);
        cr_assert(zmq_setsockopt(s, ZMQ_SUBSCRIBE, big, strlen(big)) == 0);
        cr_assert(zmq_setsockopt(s, ZMQ_SUBSCRIBE, "jok", 3) == 0);
        /* "j" is a prefix of every join topic: only "jok" itself is answered. */
        cr_assert(next(s, WAIT_MS, topic, sizeof(topic), body, &n), "no answer to 'jok'");
        cr_assert_str_eq(topic, "jok");
        cr_assert(!next(s, 500, topic, sizeof(topic), body, &n), "'%s' answered too", topic);
        /* The daemon serves on. */
        cr_assert(load_msd().session > 0);
        zmq_close(s);
}

Test(daemon_join, a_subscription_gets_every_sample_from_the_point_after_its_reply,
     .init = setup, .fini = teardown)
{
        const char *const x[] = { "mass1.x1" };
        struct proto_target t = load_msd();
        struct proto_progress p;
        struct fmud_msg m;
        uint64_t n = 0, last = 0;
        char topic[64];

        /* No wait between the reply and the step: the samples follow at once. */
        cr_assert(fmud_subscribe_every(c, &t, x, 1, 1, true, topic, sizeof(topic)) == 0, "%s",
                  fmud_errmsg(c));
        cr_assert(fmud_step(c, &t, 50, &p) == 0, "%s", fmud_errmsg(c));
        while (n < 50 && fmud_next(c, WAIT_MS, &m) == 0) {
                cr_assert_eq(m.kind, FMUD_MSG_SAMPLE);
                if (n == 0)
                        cr_assert(m.sample.flags & PROTO_SAMPLE_FIRST, "the first sample was lost");
                else
                        cr_assert_eq(m.sample.point, last + 1, "a gap after point %" PRIu64, last);
                last = m.sample.point;
                n++;
        }
        cr_assert_eq(n, 50, "%" PRIu64 " samples of 50 points", n);
        cr_assert_eq(last, p.points);
}

Test(daemon_join, an_events_reader_sees_the_state_change_right_after_it_turned_on,
     .init = setup, .fini = teardown)
{
        struct proto_target t = load_msd();
        struct fmud_msg m;

        cr_assert(fmud_events(c, true) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_step(c, &t, 1, NULL) == 0, "%s", fmud_errmsg(c));
        /* The load's own event may be published after its reply: the step's comes next. */
        do {
                cr_assert(fmud_next(c, WAIT_MS, &m) == 0, "%s", fmud_errmsg(c));
                cr_assert_eq(m.kind, FMUD_MSG_EVENT);
        } while (m.event.state == PROTO_STATE_LOADED);
        cr_assert_eq(m.event.state, PROTO_STATE_RUNNING, "the step's first event is state %d",
                     (int)m.event.state);
}

Test(daemon_join, samples_that_arrive_while_a_reader_joins_again_are_kept_in_order,
     .init = setup, .fini = teardown)
{
        const char *const x[] = { "mass1.x1" };
        struct proto_target t = load_msd();
        struct fmud_msg m;
        uint64_t n = 0, last = 0;
        char topic[64];

        cr_assert(fmud_subscribe_every(c, &t, x, 1, 1, true, topic, sizeof(topic)) == 0, "%s",
                  fmud_errmsg(c));
        /* Paced, so the samples flow through the join without filling a queue. */
        cr_assert(fmud_warp(c, &t, 20, NULL) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_start(c, &t, NULL) == 0, "%s", fmud_errmsg(c));
        while (n < 300 && fmud_next(c, WAIT_MS, &m) == 0) {
                if (m.kind != FMUD_MSG_SAMPLE)
                        continue;
                if (n)
                        cr_assert_eq(m.sample.point, last + 1, "a gap after point %" PRIu64, last);
                last = m.sample.point;
                /* Each of these joins, waiting a round trip while samples come. */
                n++;
                if (n == 50)
                        cr_assert(fmud_events(c, true) == 0, "%s", fmud_errmsg(c));
                if (n == 100)
                        cr_assert(fmud_logs_follow(c, t.session, true) == 0, "%s", fmud_errmsg(c));
                if (n == 150)
                        cr_assert(fmud_telemetry(c, t.session, true) == 0, "%s", fmud_errmsg(c));
        }
        cr_assert_eq(n, 300, "%" PRIu64 " samples", n);
        cr_assert(fmud_stop(c, &t, NULL) == 0, "%s", fmud_errmsg(c));
}

/* The next sample within WAIT_MS (events and the rest passed over). */
static struct proto_sample next_sample(void)
{
        struct fmud_msg m;

        do
                cr_assert_eq(fmud_next(c, WAIT_MS, &m), 0, "%s", fmud_errmsg(c));
        while (m.kind != FMUD_MSG_SAMPLE);
        return m.sample;
}

/*
 * Past the bound of what a reader keeps while it waits for a join or a
 * reply, a message is dropped, and the first sample read after those
 * kept says so, as one the daemon drops for a slow reader does. The
 * bound is lowered to 1 here; the keeping is libfmud's own, driven by hand.
 */
Test(daemon_join, a_sample_dropped_while_kept_flags_the_next_one_read, .init = setup,
     .fini = teardown)
{
        const char *const x[] = { "mass1.x1" };
        struct proto_target t = load_msd();
        struct proto_sample s;
        uint64_t kept, after;
        char topic[64];

        cr_assert(fmud_subscribe_every(c, &t, x, 1, 1, true, topic, sizeof(topic)) == 0, "%s",
                  fmud_errmsg(c));
        cr_assert_eq(fmud_step(c, &t, 1, NULL), 0, "%s", fmud_errmsg(c));
        s = next_sample();
        cr_assert(!(s.flags & PROTO_SAMPLE_DROPPED));
        libfmud_keep_max = 1;
        cr_assert_eq(fmud_step(c, &t, 3, NULL), 0, "%s", fmud_errmsg(c));
        /* Until one is kept and one dropped: they come when the session publishes them. */
        for (int i = 0; i < WAIT_MS && !c->n_gap; i++) {
                cr_assert_eq(fmud_keep_pending(c), 0, "%s", fmud_errmsg(c));
                if (!c->n_gap)
                        usleep(1000);
        }
        libfmud_keep_max = 65536;
        cr_assert(c->n_gap == 1 && !strcmp(c->gap[0], topic), "nothing was dropped");
        s = next_sample();
        kept = s.point;
        cr_assert(!(s.flags & PROTO_SAMPLE_DROPPED), "the kept one came before the gap");
        cr_assert_eq(fmud_step(c, &t, 2, NULL), 0, "%s", fmud_errmsg(c));
        s = next_sample();
        after = s.point;
        cr_assert_gt(after, kept + 1, "the one after it was dropped");
        cr_assert(s.flags & PROTO_SAMPLE_DROPPED, "point %" PRIu64 " after %" PRIu64, after, kept);
        s = next_sample();
        cr_assert_eq(s.point, after + 1);
        cr_assert(!(s.flags & PROTO_SAMPLE_DROPPED), "once only");
}

Test(daemon_join, a_subscriber_that_never_reads_keeps_no_one_else_from_joining,
     .init = setup, .fini = teardown)
{
        const char *const x[] = { "mass1.x1" };
        struct proto_target t = load_msd();
        void *stalled = sub_on("");     /* everything, join answers included, never read */
        struct fmud *late;
        char topic[64];
        int one = 1;

        zmq_setsockopt(stalled, ZMQ_RCVHWM, &one, sizeof(one));
        /* Far more samples than the daemon queues for a subscriber (and the kernel). */
        cr_assert(fmud_subscribe_every(c, &t, x, 1, 1, true, topic, sizeof(topic)) == 0, "%s",
                  fmud_errmsg(c));
        cr_assert(fmud_step(c, &t, 50000, NULL) == 0, "%s", fmud_errmsg(c));
        late = daemon_connect(&d);
        cr_assert(fmud_events(late, true) == 0, "%s", fmud_errmsg(late));
        fmud_close(late);
        zmq_close(stalled);
}
