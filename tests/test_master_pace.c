/*
 * master_pace: a paced run against the wall clock with real workers. Warp
 * 1 takes at least the simulated time; an overrun under the hard policy
 * faults naming the point and the slowest instance, under soft it is
 * counted and the pace re-bases forward; a pause and resume re-base so the
 * points after it are spaced by h / w, not run back to back; a spin before
 * each deadline keeps the pace; a point done late waits for no deadline,
 * so it has no wake-up lateness. Wall-clock bounds are lower bounds only.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/master/master_pace.h"
#include "test_master_sys.h"

/* The wall stamp of every grid row, as the sink saw it. */
struct stamps {
        size_t n;
        uint64_t ns[256];
        double t[256];
};

static void stamp(struct msys *x, const struct mrow *row)
{
        struct stamps *s = x->user;

        if (row->flags == 0 && s->n < 256) {
                s->ns[s->n] = pace_now_ns();
                s->t[s->n++] = row->t;
        }
}

/*
 * "fast" (LinearOde) and "slow" (Scripted) to t = stop in steps of 0.01;
 * slow's step at sleep_at sleeps sleep_ms (none when sleep_at is NULL).
 */
static void load(struct msys *x, double stop, const char *attrs, const char *sleep_at,
                 const char *sleep_ms)
{
        char params[512] = "";
        struct msys_spec spec = {
                .elements = MSYS_COMP("fast", "LinearOde") MSYS_COMP("slow", "Scripted"),
                .stop = stop,
                .attrs = attrs,
                .parameters = params,
        };

        if (sleep_at)
                snprintf(params, sizeof(params), MSYS_REAL("slow.sleep_at", "%s")
                         MSYS_INT("slow.sleep_ms", "%s"), sleep_at, sleep_ms);
        msys_load(x, &spec);
        msys_start(x);
}

Test(master_pace, warp_1_takes_at_least_the_simulated_time)
{
        struct msys x;
        uint64_t t0;
        double wall;
        struct master_stats ms;

        load(&x, 0.3, "stepSize=\"0.01\" warp=\"1\"", NULL, NULL);
        t0 = pace_now_ns();
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        wall = (double)(pace_now_ns() - t0) * 1e-9;
        cr_assert(wall >= 0.3, "0.3 s simulated at warp 1 in %g s", wall);
        master_get_stats(x.m, &ms);
        cr_assert(eq(u64, ms.lateness.count, 30));      /* every paced point measured */
        cr_assert(ms.lateness.p50_us <= ms.lateness.p99_us);
        cr_assert(ms.lateness.p99_us <= ms.lateness.p999_us);
        cr_assert(ms.lateness.p999_us <= ms.lateness.max_us);
        msys_fini(&x);
}

Test(master_pace, spinning_before_each_deadline_keeps_the_pace)
{
        struct msys x;
        uint64_t t0;
        double wall;

        load(&x, 0.2, "stepSize=\"0.01\" warp=\"1\" spinUs=\"2000\"", NULL, NULL);
        cr_assert(eq(dbl, x.sc->experiment.spin_us, 2000.0));
        t0 = pace_now_ns();
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        wall = (double)(pace_now_ns() - t0) * 1e-9;
        cr_assert(wall >= 0.2, "0.2 s simulated at warp 1 in %g s", wall);
        msys_fini(&x);
}

/* slow's step from 0.1 sleeps 300 ms: 290 ms past its deadline at least, the margin 50 ms. */
Test(master_pace, a_hard_overrun_faults_naming_the_point_and_the_slowest_instance)
{
        struct master_stats ms;
        struct msys x;

        load(&x, 0.3, "stepSize=\"0.01\" warp=\"1\" overrun=\"hard\" overrunMarginUs=\"50000\"",
             "0.095", "300");
        cr_assert(eq(int, master_run(x.m), -ETIME));
        cr_assert(eq(int, master_state(x.m), MASTER_FAULTED));
        cr_assert(strstr(master_message(x.m), "overrun: the paced point at t = 0.11") != NULL,
                  "%s", master_message(x.m));
        cr_assert(strstr(master_message(x.m), "the slowest instance was 'slow'") != NULL, "%s",
                  master_message(x.m));
        cr_assert(strstr(master_message(x.m), "(margin 50.000 ms)") != NULL, "%s", master_message(x.m));
        cr_assert(eq(dbl, master_time(x.m), 0.11));     /* held at the late point */
        master_get_stats(x.m, &ms);
        cr_assert(eq(u64, ms.overruns, 1));
        cr_assert(ms.lateness.max_us >= 290000, "max %llu us",
                  (unsigned long long)ms.lateness.max_us);
        msys_fini(&x);
}

/* The same stall within a margin larger than it: no overrun, no fault. */
Test(master_pace, a_stall_within_the_margin_is_no_overrun)
{
        struct master_stats ms;
        struct msys x;

        load(&x, 0.2, "stepSize=\"0.01\" warp=\"1\" overrun=\"hard\" overrunMarginUs=\"1e9\"",
             "0.095", "100");
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        master_get_stats(x.m, &ms);
        cr_assert(eq(u64, ms.overruns, 0));
        /*
         * The stalled step began at 0.09's deadline at the earliest, so the
         * points 0.1 to 0.19 were all done after their deadlines: none of
         * those ten waited, so none has a wake-up to measure.
         */
        cr_assert(eq(u64, ms.lateness.count, 20));
        cr_assert(ms.wakeup.count <= 10, "%llu wake-ups", (unsigned long long)ms.wakeup.count);
        cr_assert(ms.wakeup.p50_us <= ms.wakeup.max_us);
        msys_fini(&x);
}

static void note_count(void *ctx, size_t comp, const char *message)
{
        struct msys *x = ctx;
        struct stamps *s = x->user;

        (void) comp;
        if (strstr(message, "overrun: 1 paced point(s) late"))
                s->t[255] += 1;
}

/*
 * Under soft, the stall is counted and noted, the run finishes, and the
 * points after it are not run back to back to catch up: each follows the
 * one before by h / w (a lower bound on the span of several).
 */
Test(master_pace, a_soft_overrun_is_counted_and_the_pace_re_bases_without_a_burst)
{
        struct stamps s = { 0 };
        struct master_stats ms;
        struct msys x;
        size_t late = 0;

        {
                struct msys_spec spec = {
                        .elements = MSYS_COMP("fast", "LinearOde") MSYS_COMP("slow", "Scripted"),
                        .stop = 0.3,
                        .attrs = "stepSize=\"0.01\" warp=\"1\" overrun=\"soft\"",
                        .parameters = MSYS_REAL("slow.sleep_at", "0.095")
                                      MSYS_INT("slow.sleep_ms", "200"),
                };

                msys_load(&x, &spec);
                x.mo.note = note_count;
                x.mo.note_ctx = &x;
                msys_start(&x);
        }
        x.user = &s;
        x.on_row = stamp;
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        master_get_stats(x.m, &ms);
        cr_assert(ms.overruns >= 1, "overruns %llu", (unsigned long long)ms.overruns);
        cr_assert(s.t[255] >= 1, "no note said so");
        for (size_t i = 0; i < s.n; i++)
                if (fabs(s.t[i] - 0.11) < 1e-9)
                        late = i;
        cr_assert(late > 0 && late + 6 < s.n, "the late row %zu of %zu", late, s.n);
        /*
         * A row goes out when its point is done, before the sleep to its
         * deadline. Re-based at the late point's completion (after its
         * row), the k-th point after it starts no earlier than k - 1 steps
         * later; caught up instead, they would all follow at once.
         */
        cr_assert(s.ns[late + 5] - s.ns[late] >= 40000000u, "5 points in %llu ns after the late one",
                  (unsigned long long)(s.ns[late + 5] - s.ns[late]));
        msys_fini(&x);
}

/*
 * Under none (today's behaviour), the same stall is caught up: the run
 * still finishes, the overrun counted, and it ends on its first pace.
 */
Test(master_pace, no_policy_counts_the_overrun_and_catches_up)
{
        struct master_stats ms;
        struct msys x;

        load(&x, 0.3, "stepSize=\"0.01\" warp=\"1\"", "0.095", "200");
        cr_assert(eq(int, x.sc->experiment.overrun, SCENARIO_OVERRUN_NONE));
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        master_get_stats(x.m, &ms);
        cr_assert(ms.overruns >= 1);
        msys_fini(&x);
}

/*
 * A pause, a long wait, a resume: the points after it are paced from the
 * resume (lower bound), not run back to back to make up for the pause.
 */
Test(master_pace, resuming_after_a_pause_re_bases_without_a_burst)
{
        struct timespec nap = { 0, 200000000 };
        struct stamps s = { 0 };
        struct msys x;
        uint64_t resumed;
        size_t first;

        load(&x, 0.3, "stepSize=\"0.01\" warp=\"1\"", NULL, NULL);
        x.user = &s;
        x.on_row = stamp;
        cr_assert(eq(int, master_step(x.m, 5), MASTER_RUNNING));
        master_request_pause(x.m);
        cr_assert(eq(int, master_run(x.m), MASTER_PAUSED));
        while (nanosleep(&nap, &nap) < 0 && errno == EINTR)
                ;
        first = s.n;
        resumed = pace_now_ns();
        cr_assert(eq(int, master_step(x.m, 6), MASTER_RUNNING), "%s", master_message(x.m));
        cr_assert(eq(sz, s.n, first + 6));
        /*
         * Re-based when the run resumed: the k-th point after it is not
         * begun before k - 1 steps have passed. Not re-based, all six were
         * long due and would follow at once.
         */
        cr_assert(s.ns[first + 5] - resumed >= 50000000u, "6 points in %llu ns after resuming",
                  (unsigned long long)(s.ns[first + 5] - resumed));
        msys_fini(&x);
}

static bool has_error(const struct msys *x, const char *text)
{
        for (size_t i = 0; i < x->diags.n; i++)
                if (x->diags.v[i].severity == DIAG_ERROR && strstr(x->diags.v[i].message, text))
                        return true;
        return false;
}

Test(master_pace, a_bad_overrun_setting_is_refused_with_its_reason)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("fast", "LinearOde"),
                .stop = 0.1,
                .attrs = "warp=\"1\" overrun=\"firm\" spinUs=\"-1\"",
        };
        struct msys x = { 0 };

        cr_assert(eq(int, msys_load_try(&x, &spec), -EINVAL));
        cr_assert(has_error(&x, "overrun \"firm\": expected none, soft or hard"),
                  "no message on the overrun");
        cr_assert(has_error(&x, "spin -1 us: must be 0 to 1e+06 us"), "no message on spin");
        msys_fini(&x);
}
