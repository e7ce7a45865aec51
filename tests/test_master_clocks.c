/*
 * master: Clocks in Co-Simulation (FMI 3.0 sections 2.2.8 and 4), with
 * ClockedDeriv (an input Clock tick, periodic and tunable with interval
 * 1/10, clocking the input cu and the output cy = 2 cu; an output Clock
 * hi that ticks at a tick of tick with cu > 1, clocking hy = 10 cu; a
 * fixed periodic input Clock slow, interval 0.5) fed by TimeEvent, whose
 * level steps 0 -> 1 at t = 0.25 and 1 -> 2 at t = 0.75.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/instance/instance.h"
#include "test_master_sys.h"

#define VR_TICK 10u
#define VR_HI 13u
#define VR_SLOW 14u
#define VR_TRIG 15u

static double val(const struct msys *x, const struct mrow *row, const char *name)
{
        return row->v[msys_col(x, name)];
}

#define CLOCKED_SPEC(step, stop_time) { \
        .elements = MSYS_COMP("te", "TimeEvent") MSYS_COMP("c", "ClockedDeriv"), \
        .connections = MSYS_CONN("te", "level", "c", "cu"), \
        .parameters = MSYS_REAL("te.phase", "0.25") MSYS_REAL("te.period", "0.5"), \
        .stop = stop_time, \
        .attrs = "stepSize=\"" step "\"", \
        .settings = MSYS_RECORD("te.level") MSYS_RECORD("c.cy") MSYS_RECORD("c.hy") \
                    MSYS_RECORD("c.y1"), \
}

static void run_to_end(struct msys *x, const struct msys_spec *spec)
{
        msys_load(x, spec);
        msys_start(x);
        cr_assert(eq(int, master_run(x->m), MASTER_FINISHED), "%s", master_message(x->m));
}

static uint64_t ticks(const struct msys *x, uint32_t vr)
{
        return master_clock_ticks(x->m, msys_comp(x, "c"), vr);
}

Test(master_clocks, clocked_partitions_execute_at_every_tick)
{
        /*
         * Hand-computed: tick ticks at 0, 0.1, ..., 1.0; cy = 2 cu there
         * and holds in between; cu = level = 0 before 0.25, 1 before 0.75,
         * 2 after, so hi ticks at 0.8, 0.9 and 1.0 only (hy = 20), and
         * slow at 0, 0.5 and 1.0. The time events of te add the points
         * 0.25 and 0.75.
         */
        static const struct { double t, level, cy, hy; } want[] = {
                { 0.0, 0, 0, 0 }, { 0.1, 0, 0, 0 }, { 0.2, 0, 0, 0 }, { 0.25, 1, 0, 0 },
                { 0.3, 1, 2, 0 }, { 0.4, 1, 2, 0 }, { 0.5, 1, 2, 0 }, { 0.6, 1, 2, 0 },
                { 0.7, 1, 2, 0 }, { 0.75, 2, 2, 0 }, { 0.8, 2, 4, 20 }, { 0.9, 2, 4, 20 },
                { 1.0, 2, 4, 20 },
        };
        struct msys_spec spec = CLOCKED_SPEC("0.1", 1.0);
        size_t n = 0;
        struct msys x;

        run_to_end(&x, &spec);
        for (size_t i = 0; i < x.n_rows; i++) {
                const struct mrow *r = &x.rows[i];

                if (r->flags & MASTER_ROW_EVENT_LEFT)
                        continue;
                cr_assert(n < sizeof(want) / sizeof(want[0]), "row at %.17g", r->t);
                cr_assert(fabs(r->t - want[n].t) < 1e-12, "row %zu at %.17g, not %g", n, r->t,
                          want[n].t);
                cr_assert(eq(dbl, val(&x, r, "te.level"), want[n].level), "t = %g", want[n].t);
                cr_assert(eq(dbl, val(&x, r, "c.cy"), want[n].cy), "t = %g", want[n].t);
                cr_assert(eq(dbl, val(&x, r, "c.hy"), want[n].hy), "t = %g", want[n].t);
                n++;
        }
        cr_assert(eq(sz, n, sizeof(want) / sizeof(want[0])));
        /* Before the tick at 0.8, its left row still has the last tick's values. */
        cr_assert(eq(dbl, val(&x, msys_row(&x, 0.8, MASTER_ROW_EVENT_LEFT), "c.cy"), 2.0));
        cr_assert(eq(dbl, val(&x, msys_row(&x, 0.8, MASTER_ROW_EVENT_LEFT), "c.hy"), 0.0));
        cr_assert(eq(u64, ticks(&x, VR_TICK), 11));
        cr_assert(eq(u64, ticks(&x, VR_SLOW), 3));
        cr_assert(eq(u64, ticks(&x, VR_HI), 3));
        cr_assert(eq(u64, ticks(&x, VR_TRIG), 0));
        msys_fini(&x);
}

Test(master_clocks, a_tick_off_the_grid_is_an_extra_point_that_does_not_shift_the_grid)
{
        struct msys_spec spec = CLOCKED_SPEC("0.03", 0.3);
        struct master_stats st;
        const struct mrow **g;
        size_t n;
        struct msys x;

        run_to_end(&x, &spec);
        g = msys_grid(&x, &n);
        cr_assert(eq(sz, n, 11));
        for (size_t k = 0; k < n; k++)
                cr_assert(g[k]->t == (double)k * 0.03, "grid row %zu at %.17g", k, g[k]->t);
        cr_assert(eq(dbl, val(&x, g[10], "c.cy"), 2.0));
        free(g);
        /* The ticks at 0.1 and 0.2 are off the grid, exactly there; 0.3 is on it. */
        cr_assert(msys_row(&x, 0.1, MASTER_ROW_EXTRA) != NULL);
        cr_assert(msys_row(&x, 0.2, MASTER_ROW_EXTRA) != NULL);
        cr_assert(msys_row(&x, 0.1, MASTER_ROW_EXTRA | MASTER_ROW_EVENT_LEFT) != NULL);
        master_get_stats(x.m, &st);
        /* 0.1, 0.2 (ticks) and 0.25 (te's time event). */
        cr_assert(eq(u64, st.extra_points, 3));
        cr_assert(eq(u64, ticks(&x, VR_TICK), 4));
        cr_assert(eq(dbl, val(&x, msys_row(&x, 0.2, MASTER_ROW_EXTRA), "c.cy"), 0.0));
        cr_assert(eq(dbl, val(&x, msys_row(&x, 0.27, 0), "c.cy"), 0.0));
        msys_fini(&x);
}

Test(master_clocks, runs_are_bit_identical)
{
        struct msys_spec spec = CLOCKED_SPEC("0.03", 1.0);
        struct msys a, b;

        run_to_end(&a, &spec);
        run_to_end(&b, &spec);
        cr_assert(msys_same_rows(&a, &b));
        msys_fini(&a);
        msys_fini(&b);
}

Test(master_clocks, input_clocks_without_event_mode_are_refused_at_load)
{
        struct msys_spec spec = CLOCKED_SPEC("0.1", 1.0);
        char *msg = NULL;
        struct msys x;

        msys_load(&x, &spec);
        x.so.no_event_mode = true;
        cr_assert(eq(int, msys_session_try(&x, &msg), -EINVAL));
        cr_assert(eq(str, msg, "component 'c': 'tick' is an input Clock, which is ticked with "
                     "fmi3SetClock in Event Mode only (FMI 3.0 section 2.2.8.2, Table 5), and "
                     "Event Mode is turned off for this session"));
        free(msg);
        msys_fini(&x);
}
