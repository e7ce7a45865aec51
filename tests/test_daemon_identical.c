/*
 * daemon: interrupting a run changes nothing in its results. Pausing and
 * resuming, or going back to a snapshot and running on, writes a results
 * file byte for byte equal to an uninterrupted run's; warp 1 paces
 * simulated time at wall-clock time; and 'finished' is reported with the
 * run's final time, points and results.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

static uint64_t load_msd(const char *out, bool has_warp, double warp)
{
        struct proto_load a = {
                .path = daemon_str(FMUD_EXAMPLES "/msd.ssp"),
                .out = daemon_str(out),
                .has_warp = has_warp,
                .warp = warp,
        };

        return daemon_load(c, &a, NULL);
}

/* Unload a finished session (which closes its results) and read the results. */
static char *finish(uint64_t s, const char *out, size_t *ret_len)
{
        daemon_wait_state(c, s, PROTO_STATE_FINISHED, NULL);
        cr_assert(fmud_unload(c, &(struct proto_target){ s, 0 }) == 0, "%s", fmud_errmsg(c));
        return daemon_slurp(out, ret_len);
}

/* The uninterrupted run's results. */
static char *reference(size_t *ret_len)
{
        char *out = daemon_path(&d, "reference.csv"), *csv;
        uint64_t s = load_msd(out, false, 0);

        cr_assert(fmud_start(c, &(struct proto_target){ s, 0 }, NULL) == 0, "%s",
                  fmud_errmsg(c));
        csv = finish(s, out, ret_len);
        free(out);
        return csv;
}

static void assert_same(const char *a, size_t na, const char *b, size_t nb)
{
        size_t i = 0;

        while (i < na && i < nb && a[i] == b[i])
                i++;
        cr_assert(na == nb && i == na, "results differ at byte %zu (%zu vs %zu bytes): '%.40s' vs '%.40s'",
                  i, na, nb, a + (i < na ? i : na), b + (i < nb ? i : nb));
}

Test(daemon_identical, pause_and_resume_change_no_result, .init = setup, .fini = teardown)
{
        char *out = daemon_path(&d, "paused.csv"), *ref, *csv;
        size_t n_ref, n;
        uint64_t s;
        struct proto_target t;
        struct proto_progress p;
        double last = -1.0;

        ref = reference(&n_ref);
        /* Paced at warp 1 (10 s), so that every pause lands inside the run. */
        s = load_msd(out, true, 1.0);
        t = (struct proto_target){ s, 0 };
        cr_assert(fmud_start(c, &t, NULL) == 0, "%s", fmud_errmsg(c));
        for (int i = 0; i < 3; i++) {
                cr_assert(fmud_pause(c, &t, &p) == 0, "%s", fmud_errmsg(c));
                cr_assert(p.state == PROTO_STATE_PAUSED && p.time < 10.0, "%s at %g",
                          proto_state_name(p.state), p.time);
                cr_assert(p.time >= last);
                last = p.time;
                cr_assert(fmud_resume(c, &t, &p) == 0, "%s", fmud_errmsg(c));
        }
        cr_assert(fmud_warp(c, &t, 0.0, NULL) == 0, "%s", fmud_errmsg(c));
        csv = finish(s, out, &n);
        assert_same(ref, n_ref, csv, n);
        free(ref);
        free(csv);
        free(out);
}

/* Byte offset of line k (0: the header) in text. */
static size_t line_at(const char *text, size_t len, size_t k)
{
        size_t off = 0;

        for (; k > 0; k--) {
                const char *nl = memchr(text + off, '\n', len - off);

                cr_assert(nl != NULL, "fewer lines than expected");
                off = (size_t)(nl - text) + 1;
        }
        return off;
}

Test(daemon_identical, snapshot_and_restore_change_no_result, .init = setup, .fini = teardown)
{
        char *out = daemon_path(&d, "restored.csv"), *ref, *csv, *expect;
        size_t n_ref, n, head, tail, n_expect;
        uint64_t snap, gen, s;
        struct proto_target t;

        ref = reference(&n_ref);
        s = load_msd(out, false, 0);
        t = (struct proto_target){ s, 0 };
        cr_assert(fmud_step(c, &t, 300, NULL) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_snapshot(c, &t, &snap, NULL) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_step(c, &t, 200, NULL) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_restore(c, &t, snap, &gen) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_resume(c, &(struct proto_target){ s, gen }, NULL) == 0, "%s",
                  fmud_errmsg(c));
        csv = finish(s, out, &n);
        /*
         * The file is not rewound (host_snap.c): it holds the rows in the
         * order they were computed: t = 0 .. 5 (rows 0..50, every 10th
         * point), then, after going back to t = 3, t = 3.1 .. 10 again. Both
         * parts must be the uninterrupted run's rows, byte for byte.
         */
        head = line_at(ref, n_ref, 1 + 51);
        tail = line_at(ref, n_ref, 1 + 31);
        n_expect = head + (n_ref - tail);
        expect = malloc(n_expect);
        cr_assert(expect != NULL);
        memcpy(expect, ref, head);
        memcpy(expect + head, ref + tail, n_ref - tail);
        assert_same(expect, n_expect, csv, n);
        free(expect);
        free(ref);
        free(csv);
        free(out);
}

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

Test(daemon_identical, warp_one_tracks_wall_time, .init = setup, .fini = teardown)
{
        struct proto_load a = {
                .path = daemon_str(FMUD_EXAMPLES "/msd.ssp"),
                .has_stop = true, .stop = 1.0,
                .has_warp = true, .warp = 1.0,
        };
        uint64_t s = daemon_load(c, &a, NULL);
        struct proto_session_status st;
        double t0, wall;

        t0 = now_s();
        cr_assert(fmud_start(c, &(struct proto_target){ s, 0 }, NULL) == 0, "%s",
                  fmud_errmsg(c));
        daemon_wait_state(c, s, PROTO_STATE_FINISHED, &st);
        wall = now_s() - t0;
        cr_assert(st.time == 1.0);
        /* A functional bound: paced (not as fast as possible), and not stalled. */
        cr_assert(wall > 0.5 && wall < 5.0, "1 s simulated took %.3f s of wall time", wall);
}

/*
 * What status says of a finished run is said together: the final time,
 * every point and the closed results file come with 'finished', never
 * the figures of an earlier refresh. Polled as fast as the socket answers
 * while several runs end.
 */
Test(daemon_identical, finished_comes_with_the_final_figures, .init = setup, .fini = teardown)
{
        for (int run = 0; run < 8; run++) {
                char name[32];
                char *out;
                uint64_t s;
                struct proto_session_status st;

                snprintf(name, sizeof(name), "run%d.csv", run);
                out = daemon_path(&d, name);
                s = load_msd(out, false, 0);
                cr_assert(fmud_start(c, &(struct proto_target){ s, 0 }, NULL) == 0, "%s",
                          fmud_errmsg(c));
                do {
                        cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
                } while (st.state == PROTO_STATE_RUNNING || st.state == PROTO_STATE_LOADED);
                cr_assert(st.state == PROTO_STATE_FINISHED, "%s", proto_state_name(st.state));
                cr_assert(st.time == st.stop, "finished at %.17g, stop %.17g", st.time, st.stop);
                cr_assert(st.points == (uint64_t)llround((st.stop - st.start) / st.step),
                          "finished after %" PRIu64 " points of %g", st.points, st.step);
                cr_assert(st.results.len == 8 && memcmp(st.results.ptr, "complete", 8) == 0,
                          "results '%.*s' when finished", (int)st.results.len, st.results.ptr);
                cr_assert(st.rows_recorded == 101, "%" PRIu64 " rows when finished",
                          st.rows_recorded);
                cr_assert(fmud_unload(c, &(struct proto_target){ s, 0 }) == 0, "%s",
                          fmud_errmsg(c));
                free(out);
        }
}
