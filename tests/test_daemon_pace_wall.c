/*
 * daemon_pace_wall: a paced run against the wall clock, through libfmud
 * against a real fmud (daemon_fixture.h): warp 1 never runs ahead of the
 * wall clock and cannot finish early; a pause, a soft overrun and a warp
 * change each re-base the pace, so the points after them come no faster
 * than the pace allows (no burst to catch up).
 *
 * DESIGN: no wall-clock threshold a loaded machine could break. Every
 * bound compares the simulated time status reports with clock readings
 * the test takes around its requests: a status reply seen at wall time w
 * proves its point was done by w, so a point seen too early is a point
 * paced too early, however slow the machine; a slow machine only makes
 * the points later.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon_fixture.h"

#define H               0.01            /* the step of every run here */
#define SLACK           1e-9            /* rounding of the simulated times */
#define POLL_US         2000

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

TestSuite(daemon_pace_wall, .init = setup, .fini = teardown);

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static struct proto_load paced(double stop, double warp)
{
        return (struct proto_load){ .path = daemon_str(FMUD_MASTER_FMU_DIR "/Scripted.fmu"),
                                    .has_stop = true, .stop = stop, .has_step = true, .step = H,
                                    .has_warp = true, .warp = warp };
}

/*
 * Status of s and the wall time its reply was seen at. A point it shows
 * was done by then.
 */
static double status_at(uint64_t s, struct proto_session_status *st)
{
        cr_assert(fmud_status(c, s, st) == 0, "%s", fmud_errmsg(c));
        return now_s();
}

/*
 * Poll s until it is no longer running, each reply checked: the simulated
 * time gained since sim0 is at most warp times the wall time since wall0,
 * plus one step (the first point after a re-base is due at once). The
 * wall time the end was seen at; *st the last status.
 */
static double run_out(uint64_t s, double sim0, double wall0, double warp,
                      struct proto_session_status *st)
{
        for (;;) {
                double w = status_at(s, st);

                cr_assert(st->time - sim0 <= warp * (w - wall0) + H + SLACK,
                          "t %.6g seen %.6f s after the pace's base at t %.6g: ahead of the pace",
                          st->time, w - wall0, sim0);
                if (st->state != PROTO_STATE_RUNNING)
                        return w;
                usleep(POLL_US);
        }
}

Test(daemon_pace_wall, warp_1_never_runs_ahead_of_the_wall_clock_nor_finishes_early)
{
        struct proto_load a = paced(0.3, 1.0);
        struct proto_session_status st;
        uint64_t s = daemon_load(c, &a, NULL);
        double t0, end;

        t0 = now_s();
        cr_assert(fmud_start(c, &(struct proto_target){ s, 0 }, NULL) == 0, "%s",
                  fmud_errmsg(c));
        /* At no reply is the simulated time ahead of the wall time since the start was asked. */
        end = run_out(s, 0.0, t0, 1.0, &st);
        cr_assert(eq(int, (int)st.state, (int)PROTO_STATE_FINISHED));
        cr_assert(eq(dbl, st.time, 0.3));
        cr_assert(st.time <= end - t0 + SLACK, "t %g after %g s", st.time, end - t0);
        /* 30 points of 10 ms: not before 29 steps of wall time. */
        cr_assert(end - t0 >= 29 * H, "30 points paced at 10 ms done in %.6f s", end - t0);
}

Test(daemon_pace_wall, a_resume_re_bases_the_pace_without_a_burst)
{
        struct proto_load a = paced(0.4, 1.0);
        struct proto_session_status st;
        struct proto_progress p;
        uint64_t s = daemon_load(c, &a, NULL);
        double t0, p1, r0, end, tp;

        t0 = now_s();
        cr_assert(fmud_start(c, &(struct proto_target){ s, 0 }, NULL) == 0, "%s",
                  fmud_errmsg(c));
        do {
                usleep(POLL_US);
                (void)status_at(s, &st);
                cr_assert(eq(int, (int)st.state, (int)PROTO_STATE_RUNNING));
        } while (st.time < 0.1);
        cr_assert(fmud_pause(c, &(struct proto_target){ s, 0 }, &p) == 0, "%s", fmud_errmsg(c));
        p1 = now_s();
        cr_assert(eq(int, (int)p.state, (int)PROTO_STATE_PAUSED));
        tp = p.time;
        /* Paused for 300 ms: nothing runs meanwhile. */
        usleep(300000);
        (void)status_at(s, &st);
        cr_assert(eq(int, (int)st.state, (int)PROTO_STATE_PAUSED));
        cr_assert(eq(dbl, st.time, tp));
        r0 = now_s();
        cr_assert(fmud_resume(c, &(struct proto_target){ s, 0 }, NULL) == 0, "%s",
                  fmud_errmsg(c));
        /* The k-th point after the resume is not done before r0 + (k - 1) h. */
        end = run_out(s, tp, r0, 1.0, &st);
        cr_assert(eq(int, (int)st.state, (int)PROTO_STATE_FINISHED));
        cr_assert(eq(dbl, st.time, 0.4));
        /* The rest of the run, paced after the resume; so its paced length plus the pause. */
        cr_assert(end - r0 >= 0.4 - tp - H - SLACK, "%.6g s simulated in %.6f s after resume",
                  0.4 - tp, end - r0);
        cr_assert(end - t0 >= 0.4 + (r0 - p1) - H - SLACK,
                  "0.4 s paced plus a %.6f s pause over in %.6f s", r0 - p1, end - t0);
}

/*
 * Scripted's step from t = 0.1 sleeps 300 ms (from at least 0.1 s after
 * the start): under the soft policy with a 50 ms margin that point is an
 * overrun (not the only one on a loaded machine), the session goes on,
 * and the pace re-bases at the late point, so the 19 points after it take
 * their 190 ms again instead of running back to back to catch up.
 */
Test(daemon_pace_wall, a_soft_overrun_is_counted_and_the_run_goes_on_without_a_burst)
{
        struct proto_assign starts[] = {
                { daemon_str("sleep_at"), daemon_str("0.095") },
                { daemon_str("sleep_ms"), daemon_str("300") },
        };
        struct proto_load a = paced(0.3, 1.0);
        struct proto_session_status st;
        uint64_t s;
        double t0, end;

        a.n_starts = 2;
        a.starts = starts;
        a.overrun = daemon_str("soft");
        a.has_overrun_margin = true;
        a.overrun_margin_us = 50000;
        s = daemon_load(c, &a, NULL);
        t0 = now_s();
        cr_assert(fmud_start(c, &(struct proto_target){ s, 0 }, NULL) == 0, "%s",
                  fmud_errmsg(c));
        end = run_out(s, 0.0, t0, 1.0, &st);
        cr_assert(eq(int, (int)st.state, (int)PROTO_STATE_FINISHED), "%.*s",
                  (int)st.message.len, st.message.ptr);
        cr_assert(eq(dbl, st.time, 0.3));
        /* The stall's point at least; a loaded machine may make another point late too. */
        cr_assert(st.overruns >= 1, "overruns %llu", (unsigned long long)st.overruns);
        cr_assert(daemon_str_eq(st.overrun, "soft"));
        cr_assert(st.lateness.max_us >= 250000, "max %g us", st.lateness.max_us);
        /* 0.1 s paced, the 300 ms stall, then 19 points paced again (one step of rounding). */
        cr_assert(end - t0 >= 0.1 + 0.3 + 19 * H - H - SLACK,
                  "done %.6f s after the start: the points after the stall caught up",
                  end - t0);
}

/*
 * At warp 0.5 the run is behind the wall clock by half the time run; a
 * change to warp 1 re-bases at the change, so the points after it come at
 * warp 1 from then on instead of catching up with the wall clock.
 */
Test(daemon_pace_wall, a_warp_change_re_bases_the_pace_without_a_burst)
{
        struct proto_load a = paced(0.3, 0.5);
        struct proto_session_status st;
        struct proto_progress p;
        uint64_t s = daemon_load(c, &a, NULL);
        double t0, r0, end;

        t0 = now_s();
        cr_assert(fmud_start(c, &(struct proto_target){ s, 0 }, NULL) == 0, "%s",
                  fmud_errmsg(c));
        do {
                double w;

                usleep(POLL_US);
                w = status_at(s, &st);
                cr_assert(eq(int, (int)st.state, (int)PROTO_STATE_RUNNING));
                cr_assert(st.time <= 0.5 * (w - t0) + H + SLACK, "t %g after %g s at warp 0.5",
                          st.time, w - t0);
        } while (st.time < 0.1);
        r0 = now_s();
        cr_assert(fmud_warp(c, &(struct proto_target){ s, 0 }, 1.0, &p) == 0, "%s",
                  fmud_errmsg(c));
        /* From the point the change was answered at, warp 1 and no faster. */
        end = run_out(s, p.time, r0, 1.0, &st);
        cr_assert(eq(int, (int)st.state, (int)PROTO_STATE_FINISHED));
        cr_assert(eq(dbl, st.time, 0.3));
        cr_assert(eq(dbl, st.warp, 1.0));
        cr_assert(end - r0 >= 0.3 - p.time - H - SLACK,
                  "%.6g s simulated in %.6f s after the change to warp 1", 0.3 - p.time,
                  end - r0);
}
