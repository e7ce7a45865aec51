/*
 * daemon_drops: samples lost to a subscriber that does not keep up are
 * known: the next sample of the subscription carries the dropped flag and
 * status counts them (samplesDropped), while a reader that keeps up sees
 * every sample and no flag. Through libfmud against a real fmud
 * (daemon_fixture.h).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

struct seen {
        uint64_t n, last, gaps, flagged, flagged_at_gap;
};

/* Note one sample: its point after the last one's, and its flag. */
static void note(struct seen *s, const struct fmud_msg *m)
{
        bool gap = s->n && m->sample.point != s->last + 1;

        cr_assert(m->kind == FMUD_MSG_SAMPLE, "kind %d", (int)m->kind);
        s->gaps += gap;
        s->flagged += (m->sample.flags & PROTO_SAMPLE_DROPPED) != 0;
        s->flagged_at_gap += gap && (m->sample.flags & PROTO_SAMPLE_DROPPED);
        s->last = m->sample.point;
        s->n++;
}

/* Read until nothing comes for a while (what was sent is in by then). */
static void read_all(struct seen *s)
{
        struct fmud_msg m;
        int r;

        while ((r = fmud_next(c, 500, &m)) == 0)
                note(s, &m);
        cr_assert(r == -EAGAIN, "fmud_next: %d %s", r, fmud_errmsg(c));
}

/* Read n samples (each must come: a hang guard, not a measure). */
static void read_n(struct seen *s, int n)
{
        struct fmud_msg m;

        for (int i = 0; i < n; i++) {
                int r = fmud_next(c, 60000, &m);

                cr_assert(r == 0, "sample %d of %d: %d %s", i, n, r, fmud_errmsg(c));
                note(s, &m);
        }
}

/*
 * Scripted as fast as possible in steps of 0.01, x subscribed; stepped
 * one point at a time until the SUB socket has joined (a sample comes).
 */
static struct proto_target subscribed(struct seen *s)
{
        const char *const x[] = { "x" };
        struct proto_load a = {
                .path = daemon_str(FMUD_MASTER_FMU_DIR "/Scripted.fmu"),
                .has_stop = true, .stop = 10000.0, .has_step = true, .step = 0.01,
        };
        struct proto_target t = { daemon_load(c, &a, NULL), 0 };
        char topic[64];
        struct fmud_msg m;
        bool joined = false;

        cr_assert(fmud_subscribe(c, &t, x, 1, 1, topic, sizeof(topic)) == 0, "%s",
                  fmud_errmsg(c));
        for (int i = 0; i < 200 && !joined; i++) {
                cr_assert(fmud_step(c, &t, 1, NULL) == 0, "%s", fmud_errmsg(c));
                joined = fmud_next(c, 50, &m) == 0;
        }
        cr_assert(joined, "no sample after 200 steps");
        note(s, &m);
        read_all(s);
        cr_assert(s->flagged == 0 && s->gaps == 0);
        return t;
}

Test(daemon_drops, a_stalled_subscriber_gets_the_dropped_flag_and_a_count, .init = setup,
     .fini = teardown)
{
        struct proto_session_status st;
        struct seen s = { 0 };
        struct proto_target t = subscribed(&s);

        /*
         * 50000 samples while nothing is read: far more than the daemon's
         * queue and high-water mark and the socket buffers hold. Those that
         * fit come through in order; the rest are lost.
         */
        cr_assert(fmud_step(c, &t, 50000, NULL) == 0, "%s", fmud_errmsg(c));
        read_all(&s);
        cr_assert(fmud_status(c, t.session, &st) == 0, "%s", fmud_errmsg(c));
        cr_assert(st.samples_dropped > 0, "samplesDropped 0, %" PRIu64 " samples read", s.n);
        /*
         * A sample after the loss says so. Where the loss fell depends on
         * when the socket's buffers drained (the last samples may well have
         * come): the samples read show at least one gap, and a flag after
         * it, at the gap or a few samples later (the count reaches the
         * session thread after the samples it had already queued).
         */
        cr_assert(fmud_step(c, &t, 10, NULL) == 0, "%s", fmud_errmsg(c));
        read_n(&s, 10);
        cr_assert(s.gaps >= 1, "no gap in %" PRIu64 " samples", s.n);
        cr_assert(s.flagged > 0, "%" PRIu64 " gaps, no sample flagged", s.gaps);
        cr_assert(s.last == st.points + 10, "last point %" PRIu64 ", session at %" PRIu64,
                  s.last, st.points + 10);
}

Test(daemon_drops, a_reader_that_keeps_up_sees_every_sample_and_no_flag, .init = setup,
     .fini = teardown)
{
        struct proto_session_status st;
        struct seen s = { 0 };
        struct proto_target t = subscribed(&s);
        uint64_t first = s.last;

        /* 500 samples: within every queue on the way, read as they come. */
        cr_assert(fmud_step(c, &t, 500, NULL) == 0, "%s", fmud_errmsg(c));
        read_n(&s, 500);
        cr_assert(s.gaps == 0 && s.flagged == 0, "%" PRIu64 " gaps, %" PRIu64 " flagged",
                  s.gaps, s.flagged);
        cr_assert(s.last == first + 500);
        cr_assert(fmud_status(c, t.session, &st) == 0, "%s", fmud_errmsg(c));
        cr_assert(st.samples_dropped == 0, "samplesDropped %" PRIu64, st.samples_dropped);
}
