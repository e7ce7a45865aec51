/*
 * master: control from outside the master's loop. Pause (from the sink on
 * the master's thread, and from another thread) stops at a point with
 * everything kept, and resuming gives the same rows bit for bit as an
 * uninterrupted run; stop ends for good; stepping by points and running
 * to a time; pacing (warp) as the pure computation it is, and a paced run
 * giving the same rows as an unpaced one.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "engine/master/master_pace.h"
#include "test_master_sys.h"

static void load(struct msys *x, const char *attrs)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("mass1", "MsdMass1") MSYS_COMP("mass2", "MsdMass2")
                            MSYS_COMP("lin", "LinearOde"),
                .connections = MSYS_CONN("mass2", "F", "mass1", "F")
                               MSYS_CONN("mass1", "x1", "mass2", "x1")
                               MSYS_CONN("mass1", "v1", "mass2", "v1")
                               MSYS_CONN("mass2", "x2", "lin", "u0"),
                .stop = 0.6,
                .attrs = attrs ? attrs : "stepSize=\"0.01\"",
        };

        msys_load(x, &spec);
        msys_start(x);
}

static void reference(struct msys *x)
{
        load(x, NULL);
        cr_assert(eq(int, master_run(x->m), MASTER_FINISHED), "%s", master_message(x->m));
}

static void pause_at_37(struct msys *x, const struct mrow *row)
{
        if (row->point == 37 && row->flags == 0)
                master_request_pause(x->m);
}

Test(master_control, pause_keeps_everything_and_resume_continues_identically)
{
        struct msys ref, x;

        reference(&ref);
        load(&x, NULL);
        x.on_row = pause_at_37;
        cr_assert(eq(int, master_run(x.m), MASTER_PAUSED), "%s", master_message(x.m));
        cr_assert(eq(int, master_state(x.m), MASTER_PAUSED));
        /* Row 37 reaches the sink while point 38 is stepped: the pause lands there. */
        cr_assert(eq(u64, master_point(x.m), 38));
        cr_assert(eq(sz, x.n_rows, (size_t)39));
        x.on_row = NULL;
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        cr_assert(msys_same_rows(&ref, &x), "the resumed run differs");
        msys_fini(&ref);
        msys_fini(&x);
}

struct pauser {
        struct msys *x;
        _Atomic size_t rows;
};

static void count_rows(struct msys *x, const struct mrow *row)
{
        struct pauser *p = x->user;

        (void) row;
        atomic_fetch_add(&p->rows, 1);
}

static void *pause_later(void *arg)
{
        struct pauser *p = arg;

        while (atomic_load(&p->rows) < 20)
                sched_yield();
        master_request_pause(p->x->m);
        return NULL;
}

Test(master_control, pause_from_another_thread_stops_between_points)
{
        struct msys ref, x;
        struct pauser p = { .x = &x };
        pthread_t th;
        int r;

        reference(&ref);
        load(&x, NULL);
        x.user = &p;
        x.on_row = count_rows;
        cr_assert(pthread_create(&th, NULL, pause_later, &p) == 0);
        r = master_run(x.m);
        pthread_join(th, NULL);
        /* The request may come after the last point: then the run simply finished. */
        if (r == MASTER_PAUSED) {
                cr_assert(x.rows[x.n_rows - 1].t == master_time(x.m));
                r = master_run(x.m);
        }
        cr_assert(eq(int, r, MASTER_FINISHED), "%s", master_message(x.m));
        cr_assert(msys_same_rows(&ref, &x), "the resumed run differs");
        msys_fini(&ref);
        msys_fini(&x);
}

Test(master_control, stop_ends_the_run_for_good)
{
        struct msys x;

        load(&x, NULL);
        cr_assert(eq(int, master_step(x.m, 5), MASTER_RUNNING));
        master_request_stop(x.m);
        cr_assert(eq(int, master_run(x.m), MASTER_STOPPED));
        cr_assert(eq(u64, master_point(x.m), 5));
        cr_assert(eq(int, master_run(x.m), -EPERM));
        cr_assert(eq(int, master_step(x.m, 1), -EPERM));
        msys_fini(&x);
}

Test(master_control, step_and_run_until_stop_on_grid_points)
{
        struct msys x;

        load(&x, NULL);
        cr_assert(eq(int, master_state(x.m), MASTER_LOADED));
        cr_assert(eq(int, master_step(x.m, 5), MASTER_RUNNING));
        cr_assert(eq(u64, master_point(x.m), 5));
        cr_assert(eq(dbl, master_time(x.m), 0.05));
        cr_assert(eq(int, master_run_until(x.m, 0.2349), MASTER_RUNNING));
        cr_assert(eq(u64, master_point(x.m), 23));
        cr_assert(eq(int, master_run_until(x.m, 0.24), MASTER_RUNNING));
        cr_assert(eq(u64, master_point(x.m), 24));
        cr_assert(eq(int, master_run_until(x.m, 0.1), MASTER_RUNNING));  /* behind: stays */
        cr_assert(eq(u64, master_point(x.m), 24));
        cr_assert(eq(int, master_run_until(x.m, 99.0), MASTER_FINISHED));
        cr_assert(eq(dbl, master_time(x.m), 0.6));
        cr_assert(eq(sz, x.n_rows, (size_t)61));
        msys_fini(&x);
}

Test(master_control, pacing_is_wall0_plus_simulated_time_over_warp)
{
        struct pace p;

        pace_rebase(&p, 1000000000u, 2.0, 0.5);
        cr_assert(eq(u64, pace_due_ns(&p, 2.0), 1000000000u));
        cr_assert(eq(u64, pace_due_ns(&p, 3.0), 3000000000u));        /* 1 s at half speed */
        cr_assert(eq(u64, pace_due_ns(&p, 1.0), 1000000000u));        /* the past: due now */
        /* A new warp at t = 3: from there on, 4 times real time, without a jump. */
        pace_rebase(&p, 3000000000u, 3.0, 4.0);
        cr_assert(eq(u64, pace_due_ns(&p, 3.0), 3000000000u));
        cr_assert(eq(u64, pace_due_ns(&p, 5.0), 3500000000u));
        /* Unpaced, and absurd distances. */
        pace_rebase(&p, 5, 0.0, 0.0);
        cr_assert(eq(u64, pace_due_ns(&p, 1e9), 0));
        pace_rebase(&p, 5, 0.0, 1e-300);
        cr_assert(eq(u64, pace_due_ns(&p, 1.0), UINT64_MAX));
        pace_rebase(&p, 5, 0.0, NAN);
        cr_assert(eq(dbl, p.warp, 0.0));
}

Test(master_control, a_paced_run_gives_the_same_rows)
{
        struct msys ref, x;

        reference(&ref);
        load(&x, "stepSize=\"0.01\" warp=\"200\"");
        cr_assert(eq(int, master_set_warp(x.m, -1.0), -EINVAL));
        cr_assert(eq(int, master_set_warp(x.m, NAN), -EINVAL));
        cr_assert(eq(int, master_step(x.m, 10), MASTER_RUNNING));
        cr_assert(eq(int, master_set_warp(x.m, 400.0), 0));
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        cr_assert(msys_same_rows(&ref, &x), "pacing changed the results");
        msys_fini(&ref);
        msys_fini(&x);
}

/*
 * The real-time factor is simulated over wall time of the whole run: the
 * time between two stepping calls of a running session counts, so a host
 * busy elsewhere does not read as fast.
 */
Test(master_control, the_real_time_factor_counts_the_time_between_stepping_calls)
{
        struct timespec nap = { 0, 200000000 };
        struct master_stats ms;
        struct msys x;

        load(&x, NULL);
        cr_assert(eq(int, master_step(x.m, 1), MASTER_RUNNING));
        while (nanosleep(&nap, &nap) < 0 && errno == EINTR)
                ;
        cr_assert(eq(int, master_step(x.m, 1), MASTER_RUNNING));
        master_get_stats(x.m, &ms);
        cr_assert(eq(dbl, ms.sim_time, 0.02));
        cr_assert(ms.wall_s >= 0.2, "wall %g s", ms.wall_s);
        cr_assert(ms.rtf > 0 && ms.rtf <= ms.sim_time / 0.2, "rtf %g over %g s simulated",
                  ms.rtf, ms.sim_time);
        msys_fini(&x);
}
