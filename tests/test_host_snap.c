/*
 * host: snapshot and restore. A restored session continues exactly as
 * the first time (samples and results file, bit for bit) under a new
 * generation, which fences requests naming the old one; FMUs that cannot
 * save their state refuse a snapshot, naming the instance.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_host_drv.h"

#define MSD HDRV_EXAMPLE("msd.ssp")

static void steps(struct hdrv *d, uint64_t s, uint64_t gen, uint64_t n, struct hrep *rep)
{
        struct pw w;

        cr_assert(pw_init(&w) == 0);
        proto_step_encode(&w, hdrv_id(d), &(struct proto_step){ .t = { s, gen }, .n = n });
        hdrv_wait(d, hdrv_send(d, &w), rep);
        pw_fini(&w);
}

static void step_ok(struct hdrv *d, uint64_t s, uint64_t n)
{
        struct hrep rep;

        steps(d, s, 0, n, &rep);
        cr_assert(rep.r.ok, "%.*s", (int)rep.r.message_len, rep.r.message);
        hrep_fini(&rep);
}

static uint64_t snapshot(struct hdrv *d, uint64_t s)
{
        struct proto_snapshot_result sr;
        struct hrep rep;
        char err[256];

        hdrv_target(d, PROTO_OP_SNAPSHOT, s, 0, &rep);
        cr_assert(rep.r.ok, "%.*s", (int)rep.r.message_len, rep.r.message);
        cr_assert(proto_snapshot_result_decode(rep.r.result, &sr, err, sizeof(err)) == 0, "%s", err);
        hrep_fini(&rep);
        return sr.snapshot;
}

static void restore(struct hdrv *d, uint64_t s, uint64_t id, struct hrep *rep)
{
        struct pw w;

        cr_assert(pw_init(&w) == 0);
        proto_restore_encode(&w, hdrv_id(d), &(struct proto_restore){ .t = { s, 0 }, .snapshot = id });
        hdrv_wait(d, hdrv_send(d, &w), rep);
        pw_fini(&w);
}

static char *subscribe(struct hdrv *d, uint64_t s)
{
        struct proto_subscribe_result sr;
        struct hrep rep;
        struct pw w;
        char err[256], *topic;

        cr_assert(pw_init(&w) == 0);
        proto_subscribe_encode(&w, hdrv_id(d), &(struct proto_subscribe){ .t = { s, 0 } });
        hdrv_wait(d, hdrv_send(d, &w), &rep);
        pw_fini(&w);
        cr_assert(rep.r.ok, "%.*s", (int)rep.r.message_len, rep.r.message);
        cr_assert(proto_subscribe_result_decode(rep.r.result, &sr, err, sizeof(err)) == 0, "%s", err);
        topic = strndup(sr.topic.ptr, sr.topic.len);
        hrep_fini(&rep);
        return topic;
}

/* Samples [a, a+n) and [b, b+n) on topic: the same times, points and values. */
static void same_samples(struct hdrv *d, const char *topic, size_t a, size_t b, size_t n,
                         uint64_t gen_b)
{
        for (size_t i = 0; i < n; i++) {
                struct proto_sample p, q;
                struct pv_doc dp, dq;
                void *mp = NULL, *mq = NULL;
                char err[256];

                cr_assert(proto_sample_decode(hdrv_pub(d, topic, a + i, &dp), &p, &mp, err,
                                              sizeof(err)) == 0, "%s", err);
                cr_assert(proto_sample_decode(hdrv_pub(d, topic, b + i, &dq), &q, &mq, err,
                                              sizeof(err)) == 0, "%s", err);
                cr_assert(!memcmp(&p.time, &q.time, sizeof(double)) && p.point == q.point);
                cr_assert(q.generation == gen_b && p.generation == 1);
                cr_assert(p.values->a.n == q.values->a.n && p.values->a.n == 5);
                for (uint32_t k = 0; k < p.values->a.n; k++)
                        cr_assert(!memcmp(&p.values->a.items[k].f, &q.values->a.items[k].f,
                                          sizeof(double)), "sample %zu value %u differs", i, k);
                free(mp);
                free(mq);
                pv_doc_fini(&dp);
                pv_doc_fini(&dq);
        }
}

/* Line i of a CSV buffer: pointer and length including its newline. */
static const char *line(const char *buf, size_t len, size_t i, size_t *ret_len)
{
        const char *p = buf, *end = buf + len, *nl;

        for (;; i--) {
                nl = memchr(p, '\n', (size_t)(end - p));
                cr_assert(nl != NULL, "the CSV has too few lines");
                if (!i)
                        break;
                p = nl + 1;
        }
        *ret_len = (size_t)(nl + 1 - p);
        return p;
}

Test(host_snap, restore_continues_exactly_under_a_new_generation)
{
        struct proto_load base = { .has_stop = true, .stop = 1, .has_decimation = true,
                                   .decimation = 1 };
        struct proto_load_result lr;
        char ref[600], out[600], err[256], *topic;
        char *rb, *fb;
        size_t rl, fl, n0, n1, n2, k, ll, pos;
        struct hdrv d;
        struct hrep rep;
        uint64_t s, r, snap;

        hdrv_init(&d, NULL);
        snprintf(ref, sizeof(ref), "%s/ref.csv", d.out);
        snprintf(out, sizeof(out), "%s/out.csv", d.out);
        r = hdrv_load(&d, MSD, ref, &base);
        hdrv_target(&d, PROTO_OP_START, r, 0, &rep);
        hrep_fini(&rep);
        hdrv_wait_state(&d, r, PROTO_STATE_FINISHED);

        s = hdrv_load(&d, MSD, out, &base);
        topic = subscribe(&d, s);
        step_ok(&d, s, 30);
        snap = snapshot(&d, s);
        n0 = hdrv_pub_count(&d, topic);
        step_ok(&d, s, 50);
        n1 = hdrv_pub_count(&d, topic);
        restore(&d, s, snap, &rep);
        cr_assert(rep.r.ok, "%.*s", (int)rep.r.message_len, rep.r.message);
        cr_assert(proto_load_result_decode(rep.r.result, &lr, err, sizeof(err)) == 0, "%s", err);
        cr_assert(lr.session == s && lr.generation == 2);
        hrep_fini(&rep);
        cr_assert(hdrv_state(&d, s) == PROTO_STATE_PAUSED);
        /* The old generation is fenced off, never applied. */
        steps(&d, s, 1, 5, &rep);
        (void) hrep_err(&rep, PROTO_E_STALE);
        hrep_fini(&rep);
        step_ok(&d, s, 50);
        n2 = hdrv_pub_count(&d, topic);
        cr_assert(n1 - n0 == 50 && n2 - n1 == 50, "%zu %zu %zu", n0, n1, n2);
        same_samples(&d, topic, n0, n1, 50, 2);
        /* To the end: the file holds the rows in the order they were computed. */
        hdrv_target(&d, PROTO_OP_RESUME, s, 2, &rep);
        cr_assert(rep.r.ok);
        hrep_fini(&rep);
        hdrv_wait_state(&d, s, PROTO_STATE_FINISHED);
        rb = hdrv_slurp(ref, &rl);
        fb = hdrv_slurp(out, &fl);
        /* header + rows 0..80, then rows 31..80 again, then rows 31..100. */
        pos = 0;
        for (size_t i = 0; i <= 81; i++) {
                const char *p = line(rb, rl, i, &ll);

                cr_assert(pos + ll <= fl && !memcmp(fb + pos, p, ll), "line %zu", i);
                pos += ll;
        }
        for (k = 32; k <= 101; k++) {
                const char *p = line(rb, rl, k, &ll);

                cr_assert(pos + ll <= fl && !memcmp(fb + pos, p, ll), "row %zu after the restore", k);
                pos += ll;
        }
        cr_assert(pos == fl, "%zu bytes, %zu expected", fl, pos);
        free(rb);
        free(fb);
        free(topic);
        hdrv_fini(&d);
}

Test(host_snap, snapshot_of_a_loaded_session_and_refusals)
{
        struct proto_progress p;
        struct hdrv d;
        struct hrep rep;
        const char *msg;
        uint64_t s, snap;

        hdrv_init(&d, NULL);
        s = hdrv_load(&d, MSD, NULL, NULL);
        snap = snapshot(&d, s);
        step_ok(&d, s, 10);
        restore(&d, s, snap, &rep);
        cr_assert(rep.r.ok);
        hrep_fini(&rep);
        /* Back to loaded: start is allowed again. */
        hdrv_target(&d, PROTO_OP_START, s, 2, &rep);
        hrep_progress(&rep, &p);
        cr_assert(p.state == PROTO_STATE_RUNNING && p.time < 10);
        hrep_fini(&rep);
        hdrv_target(&d, PROTO_OP_PAUSE, s, 2, &rep);
        hrep_fini(&rep);
        restore(&d, s, 99, &rep);
        (void) hrep_err(&rep, PROTO_E_INVALID);
        hrep_fini(&rep);

        /* GlobalCounter cannot get and set its state. */
        s = hdrv_load(&d, HDRV_FMU("GlobalCounter"), NULL, NULL);
        hdrv_target(&d, PROTO_OP_SNAPSHOT, s, 0, &rep);
        msg = hrep_err(&rep, PROTO_E_UNSUPPORTED);
        cr_assert(strstr(msg, "GlobalCounter"), "%s", msg);
        hrep_fini(&rep);
        hdrv_fini(&d);
}
