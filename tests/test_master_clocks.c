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
#include <stdio.h>
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
                    MSYS_RECORD("c.y1") MSYS_RECORD("c.tick") MSYS_RECORD("c.hi") \
                    MSYS_RECORD("c.slow"), \
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
        static const struct { double t, level, cy, hy, tick, hi, slow; } want[] = {
                { 0.0, 0, 0, 0, 1, 0, 1 }, { 0.1, 0, 0, 0, 1, 0, 0 }, { 0.2, 0, 0, 0, 1, 0, 0 },
                { 0.25, 1, 0, 0, 0, 0, 0 }, { 0.3, 1, 2, 0, 1, 0, 0 }, { 0.4, 1, 2, 0, 1, 0, 0 },
                { 0.5, 1, 2, 0, 1, 0, 1 }, { 0.6, 1, 2, 0, 1, 0, 0 }, { 0.7, 1, 2, 0, 1, 0, 0 },
                { 0.75, 2, 2, 0, 0, 0, 0 }, { 0.8, 2, 4, 20, 1, 1, 0 },
                { 0.9, 2, 4, 20, 1, 1, 0 }, { 1.0, 2, 4, 20, 1, 1, 1 },
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
                /* A recorded Clock: 1 in the row after it ticked, 0 in every other. */
                cr_assert(eq(dbl, val(&x, r, "c.tick"), want[n].tick), "t = %g", want[n].t);
                cr_assert(eq(dbl, val(&x, r, "c.hi"), want[n].hi), "t = %g", want[n].t);
                cr_assert(eq(dbl, val(&x, r, "c.slow"), want[n].slow), "t = %g", want[n].t);
                n++;
        }
        cr_assert(eq(sz, n, sizeof(want) / sizeof(want[0])));
        /* Before the tick at 0.8, its left row still has the last tick's values. */
        cr_assert(eq(dbl, val(&x, msys_row(&x, 0.8, MASTER_ROW_EVENT_LEFT), "c.cy"), 2.0));
        cr_assert(eq(dbl, val(&x, msys_row(&x, 0.8, MASTER_ROW_EVENT_LEFT), "c.hy"), 0.0));
        cr_assert(eq(dbl, val(&x, msys_row(&x, 0.8, MASTER_ROW_EVENT_LEFT), "c.tick"), 0.0));
        cr_assert(eq(dbl, val(&x, msys_row(&x, 0.8, MASTER_ROW_EVENT_LEFT), "c.hi"), 0.0));
        cr_assert(eq(u64, ticks(&x, VR_TICK), 11));
        cr_assert(eq(u64, ticks(&x, VR_SLOW), 3));
        cr_assert(eq(u64, ticks(&x, VR_HI), 3));
        cr_assert(eq(u64, ticks(&x, VR_TRIG), 0));
        msys_fini(&x);
}

/*
 * A start for a clocked input is set in Initialization Mode, where FMI 3.0
 * section 2.2.7.2 allows it (never in Instantiated): cu = 2 from the
 * first tick on, so cy = 2 cu = 4 and hi ticks (cu > 1) with hy = 10 cu.
 */
Test(master_clocks, a_start_of_a_clocked_input_is_set_in_initialization_mode)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("c", "ClockedDeriv"),
                .parameters = MSYS_REAL("c.cu", "2"),
                .stop = 0.3,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("c.cy") MSYS_RECORD("c.hy"),
        };
        const struct mrow **g;
        struct msys x;
        size_t n;

        run_to_end(&x, &spec);
        g = msys_grid(&x, &n);
        cr_assert(eq(sz, n, (size_t)4));
        for (size_t k = 1; k < n; k++) {
                cr_assert(eq(dbl, val(&x, g[k], "c.cy"), 4.0), "t = %g", g[k]->t);
                cr_assert(eq(dbl, val(&x, g[k], "c.hy"), 20.0), "t = %g", g[k]->t);
        }
        free(g);
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

#define KINDS_SPEC { \
        .elements = MSYS_COMP("k", "ClockKinds"), \
        .stop = 1.0, \
        .attrs = "stepSize=\"0.1\"", \
        .settings = MSYS_RECORD("k.n_cst") MSYS_RECORD("k.n_fix") MSYS_RECORD("k.n_chg") \
                    MSYS_RECORD("k.n_cd") MSYS_RECORD("k.oy"), \
}

/* The value of column name in the row after the events at t (or the plain row there). */
static double at(const struct msys *x, double t, const char *name)
{
        const struct mrow *r = NULL;

        for (size_t i = 0; i < x->n_rows; i++)
                if (fabs(x->rows[i].t - t) < 1e-12 && !(x->rows[i].flags & MASTER_ROW_EVENT_LEFT))
                        r = &x->rows[i];
        cr_assert(r != NULL, "no row at %g", t);
        return val(x, r, name);
}

Test(master_clocks, every_kind_of_input_clock_ticks_at_its_times)
{
        /*
         * Hand-computed: cst (constant, 1/4) at 0, 0.25, 0.5, 0.75, 1; fix
         * (fixed, 0.2 shifted 0.1, got from the FMU) at 0.1, 0.3, 0.5,
         * 0.7, 0.9; chg (changing 0.1, 0.2, 0.3, 0.4) at 0.1, 0.3, 0.6, 1;
         * cd (countdown 0.05 after chg) at 0.15, 0.35, 0.65; the output
         * Clock out at the first, third and fifth tick of cst, with oy =
         * the ticks of cst before it: 0, 2, 4.
         */
        struct msys_spec spec = KINDS_SPEC;
        struct master_stats st;
        size_t k;
        struct msys x;

        run_to_end(&x, &spec);
        k = msys_comp(&x, "k");
        cr_assert(eq(u64, master_clock_ticks(x.m, k, 1), 5));
        cr_assert(eq(u64, master_clock_ticks(x.m, k, 2), 5));
        cr_assert(eq(u64, master_clock_ticks(x.m, k, 5), 4));
        cr_assert(eq(u64, master_clock_ticks(x.m, k, 6), 3));
        cr_assert(eq(u64, master_clock_ticks(x.m, k, 10), 3));
        master_get_stats(x.m, &st);
        cr_assert(eq(u64, st.extra_points, 5));         /* 0.15 0.25 0.35 0.65 0.75 */
        cr_assert(eq(dbl, at(&x, 0.0, "k.n_cst"), 1.0));
        cr_assert(eq(dbl, at(&x, 0.25, "k.n_cst"), 2.0));
        cr_assert(eq(dbl, at(&x, 0.2, "k.n_fix"), 1.0));
        cr_assert(eq(dbl, at(&x, 0.3, "k.n_fix"), 2.0));
        cr_assert(eq(dbl, at(&x, 0.5, "k.n_chg"), 2.0));
        cr_assert(eq(dbl, at(&x, 0.6, "k.n_chg"), 3.0));
        cr_assert(eq(dbl, at(&x, 0.15, "k.n_cd"), 1.0));
        cr_assert(eq(dbl, at(&x, 0.3, "k.n_cd"), 1.0));
        cr_assert(eq(dbl, at(&x, 0.35, "k.n_cd"), 2.0));
        cr_assert(eq(dbl, at(&x, 0.65, "k.n_cd"), 3.0));
        cr_assert(eq(dbl, at(&x, 0.4, "k.oy"), 0.0));
        cr_assert(eq(dbl, at(&x, 0.5, "k.oy"), 2.0));
        cr_assert(eq(dbl, at(&x, 0.75, "k.oy"), 2.0));
        cr_assert(eq(dbl, at(&x, 1.0, "k.oy"), 4.0));
        cr_assert(eq(dbl, at(&x, 1.0, "k.n_cst"), 5.0));
        cr_assert(eq(dbl, at(&x, 1.0, "k.n_chg"), 4.0));
        msys_fini(&x);
}

/*
 * A countdown Clock whose first interval the FMU knows only in the Event
 * Mode after initialization (cd_at_start: fmi3IntervalNotYetKnown in
 * Initialization Mode, fmi3IntervalChanged after the first
 * fmi3UpdateDiscreteStates; FMI 3.0 section 2.2.8: intervals are known
 * after fmi3UpdateDiscreteStates at the latest) ticks 0.05 after the
 * start, then 0.05 after each tick of chg (0.1, 0.3). With no Clock
 * ticking at the start (ClockKindsLate) it was not read there: it was
 * read at the first tick of another Clock (0.01), and ticked at 0.06.
 */
Test(master_clocks, a_countdown_known_only_after_initialization_ticks)
{
        struct msys_spec spec = KINDS_SPEC;
        struct msys x;

        spec.elements = MSYS_COMP("k", "ClockKindsLate");
        spec.parameters = MSYS_REAL("k.cd_at_start", "1");
        run_to_end(&x, &spec);
        cr_assert(eq(dbl, at(&x, 0.05, "k.n_cd"), 1.0));
        cr_assert(eq(dbl, at(&x, 0.15, "k.n_cd"), 2.0));
        cr_assert(eq(dbl, at(&x, 0.35, "k.n_cd"), 3.0));
        msys_fini(&x);
}

/*
 * An output Clock that ticks in a later super-dense instant of an Event
 * Mode (out_late: the update at cst's tick asks for another and out ticks
 * in it, FMI 3.0 sections 2.3.5 and 2.2.8) is seen there, with its clocked
 * output, as in the instant of cst's tick: out at 0, 0.5 and 1 with oy
 * 0, 2, 4. It was polled once per Event Mode and never seen.
 */
Test(master_clocks, an_output_clock_ticking_in_a_later_event_iteration_is_seen)
{
        struct msys_spec spec = KINDS_SPEC;
        struct msys x;

        spec.parameters = MSYS_REAL("k.out_late", "1");
        run_to_end(&x, &spec);
        cr_assert(eq(u64, master_clock_ticks(x.m, msys_comp(&x, "k"), 10), 3));
        cr_assert(eq(dbl, at(&x, 0.4, "k.oy"), 0.0));
        cr_assert(eq(dbl, at(&x, 0.5, "k.oy"), 2.0));
        cr_assert(eq(dbl, at(&x, 1.0, "k.oy"), 4.0));
        msys_fini(&x);
}

Test(master_clocks, an_output_clock_ticks_a_connected_triggered_clock_with_its_values)
{
        /*
         * c.hi ticks at 0.8, 0.9 and 1 with hy = 20: k.trg ticks there too,
         * with tu = hy, so ty = 20, 40, 60. k.out ticks at 0, 0.5 and 1:
         * c.trig ticks there, at 0 and 1 in a second Event Mode of c after
         * k's (k comes after c).
         */
        struct msys_spec spec = {
                .elements = MSYS_COMP("te", "TimeEvent") MSYS_COMP("c", "ClockedDeriv")
                            MSYS_COMP("k", "ClockKinds"),
                .connections = MSYS_CONN("te", "level", "c", "cu") MSYS_CONN("c", "hi", "k", "trg")
                               MSYS_CONN("c", "hy", "k", "tu") MSYS_CONN("k", "out", "c", "trig"),
                .parameters = MSYS_REAL("te.phase", "0.25") MSYS_REAL("te.period", "0.5"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("k.ty") MSYS_RECORD("k.n_trg") MSYS_RECORD("c.hy"),
        };
        struct msys x;

        run_to_end(&x, &spec);
        cr_assert(eq(dbl, at(&x, 0.7, "k.n_trg"), 0.0));
        cr_assert(eq(dbl, at(&x, 0.7, "k.ty"), 0.0));
        cr_assert(eq(dbl, at(&x, 0.8, "k.n_trg"), 1.0));
        cr_assert(eq(dbl, at(&x, 0.8, "k.ty"), 20.0));
        cr_assert(eq(dbl, at(&x, 0.9, "k.ty"), 40.0));
        cr_assert(eq(dbl, at(&x, 1.0, "k.ty"), 60.0));
        cr_assert(eq(u64, master_clock_ticks(x.m, msys_comp(&x, "k"), 7), 3));
        cr_assert(eq(u64, master_clock_ticks(x.m, msys_comp(&x, "c"), VR_TRIG), 3));
        cr_assert(eq(u64, master_clock_ticks(x.m, msys_comp(&x, "c"), VR_TICK), 11));
        msys_fini(&x);
}

/*
 * Load spec and make its session; master_new() must refuse it with message
 * want, which is "connection <x.dir>/" + want where conn is true.
 */
static void master_refuses(const struct msys_spec *spec, const char *want, bool conn)
{
        struct master *m = NULL;
        char *msg = NULL;
        struct msys x;

        msys_load(&x, spec);
        cr_assert(eq(int, msys_session_try(&x, &msg), 0), "%s", msg ? msg : "");
        free(msg);
        msg = NULL;
        cr_assert(eq(int, master_new(x.s, &x.mo, &m, &msg), -EINVAL));
        cr_assert(m == NULL);
        if (conn) {
                char *full;

                cr_assert(asprintf(&full, "connection %s/%s", x.dir, want) > 0);
                cr_assert(eq(str, msg, full));
                free(full);
        } else {
                cr_assert(eq(str, msg, (char *)want));
        }
        free(msg);
        msys_fini(&x);
}

Test(master_clocks, a_periodic_clock_whose_interval_is_not_positive_is_refused)
{
        struct msys_spec spec = KINDS_SPEC;

        spec.parameters = MSYS_REAL("k.fix_interval", "0");
        master_refuses(&spec, "component 'k': Clock 'fix' has interval 0: a periodic Clock's "
                       "interval must be > 0 (FMI 3.0 section 2.2.8.2, Table 7)", false);
}

Test(master_clocks, a_periodic_clock_with_a_negative_shift_is_refused)
{
        struct msys_spec spec = KINDS_SPEC;

        spec.parameters = MSYS_REAL("k.fix_shift", "-0.5");
        master_refuses(&spec, "component 'k': Clock 'fix' has shift -0.5: it must be >= 0 (FMI "
                       "3.0 section 2.2.8.2)", false);
}

/* frc reports a fraction with resolution 0, as a broken export does: no number, refused at load. */
static void zero_resolution_refused(const char *frc_zero, const char *want)
{
        struct msys_spec spec = KINDS_SPEC;
        char *msg = NULL;
        struct msys x;

        spec.parameters = frc_zero;
        msys_load(&x, &spec);
        cr_assert(eq(int, msys_session_try(&x, &msg), -EINVAL));
        cr_assert(eq(str, msg, (char *)want));
        free(msg);
        msys_fini(&x);
}

Test(master_clocks, a_clock_shift_with_resolution_0_is_refused)
{
        zero_resolution_refused(MSYS_REAL("k.frc_zero", "1"), "component 'k': Clock 'frc' has "
                                "shift resolution 0 (fmi3GetShiftFraction in Initialization "
                                "Mode): a resolution must be > 0 (FMI 3.0 section 2.2.8.4)");
}

Test(master_clocks, a_clock_interval_with_resolution_0_is_refused)
{
        zero_resolution_refused(MSYS_REAL("k.frc_zero", "2"), "component 'k': Clock 'frc' has "
                                "interval resolution 0 (fmi3GetIntervalFraction in "
                                "Initialization Mode): a resolution must be > 0 (FMI 3.0 section "
                                "2.2.8.4)");
}

Test(master_clocks, a_clock_that_would_tick_twice_in_one_instant_is_refused)
{
        struct msys_spec spec = KINDS_SPEC;

        /* chg ticks at the start time (first interval 0), then gets interval 0 again. */
        spec.parameters = MSYS_REAL("k.chg_step", "0");
        master_refuses(&spec, "component 'k': Clock 'chg' would tick again at t = 0, in the "
                       "time instant of its tick at 0: the master ticks a Clock once per time "
                       "instant", false);
}

/*
 * chg reports the interval NaN with fmi3IntervalChanged after its first
 * tick (at 0.1): that is no interval, and accepted it would leave chg
 * never ticking again without a word. The run stops there and says why.
 */
Test(master_clocks, a_changing_clock_whose_new_interval_is_not_a_number_stops_the_run)
{
        struct msys_spec spec = KINDS_SPEC;
        struct msys x;

        spec.parameters = MSYS_REAL("k.chg_nan", "1");
        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), -EINVAL));
        cr_assert(eq(str, (char *)master_message(x.m), "component 'k': Clock 'chg' has interval "
                     "nan at t = 0.10000000000000001: it must be finite and >= 0 (FMI 3.0 "
                     "section 2.2.8.2, Tables 8 and 9)"));
        msys_fini(&x);
}

Test(master_clocks, a_changing_clock_whose_first_interval_is_not_a_number_is_refused)
{
        struct msys_spec spec = KINDS_SPEC;

        spec.parameters = MSYS_REAL("k.chg_nan", "2");
        master_refuses(&spec, "component 'k': Clock 'chg' has first interval nan: it must be "
                       "finite and >= 0 (FMI 3.0 section 2.2.8.2, Tables 8 and 9)", false);
}

Test(master_clocks, a_clock_connection_to_a_multirate_component_is_refused)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("c", "ClockedDeriv") MSYS_COMP("k", "ClockKinds"),
                .connections = MSYS_CONN("c", "hi", "k", "trg"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\"",
                .settings = "<fmud:Component name=\"k\" multirate=\"2\"/>",
        };

        master_refuses(&spec, "SystemStructure.ssd:9: a Clock connection between components "
                       "with a multirate factor is not supported", true);
}

Test(master_clocks, a_tunable_clock_takes_its_new_interval_from_the_tick_after_a_change)
{
        /*
         * tun ticks every 0.2 from 0: 0, 0.2, 0.4; tun_interval becomes 0.3
         * at 0.5, the FMU reports it at the next tick (0.6), and tun ticks
         * at 0.9 next: 5 ticks to 1, not 6.
         */
        struct msys_spec spec = KINDS_SPEC;
        const uint32_t vr = 18;
        const double interval = 0.3;
        struct msys x;
        size_t k;

        spec.settings = MSYS_RECORD("k.n_tun") MSYS_RECORD("k.tun");
        msys_load(&x, &spec);
        msys_start(&x);
        k = msys_comp(&x, "k");
        cr_assert(master_run_until(x.m, 0.5) >= 0, "%s", master_message(x.m));
        cr_assert(eq(u64, master_clock_ticks(x.m, k, 17), 3));
        cr_assert(eq(int, inst_set(session_inst(x.s, k), MD_FLOAT64, &vr, 1, &interval, 1),
                     INST_OK));
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        cr_assert(eq(u64, master_clock_ticks(x.m, k, 17), 5));
        cr_assert(eq(dbl, at(&x, 0.6, "k.tun"), 1.0));
        cr_assert(eq(dbl, at(&x, 0.8, "k.tun"), 0.0));
        cr_assert(eq(dbl, at(&x, 0.9, "k.tun"), 1.0));
        cr_assert(eq(dbl, at(&x, 0.9, "k.n_tun"), 5.0));
        cr_assert(eq(dbl, at(&x, 1.0, "k.tun"), 0.0));
        msys_fini(&x);
}

/*
 * An output Clock ticking in the Event Mode after initialization (with
 * eventModeUsed, fmi3ExitInitializationMode leaves the FMU in Event Mode,
 * FMI 3.0 section 2.3.3) is polled there like in any Event Mode: its tick
 * is counted, its clocked output oy = -1 is got at the start time, and the
 * triggered input Clock connected to it ticks at the start time. No Clock
 * of ClockKindsLate ticks at the start; out ticks later at cst's first
 * and third ticks (0.25, 0.75). The tick at the start was never polled:
 * oy stayed 0 until 0.25 and the consumer's trg never ticked.
 */
Test(master_clocks, an_output_clock_ticking_in_the_event_mode_after_initialization_is_seen)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("k", "ClockKindsLate") MSYS_COMP("c", "ClockKindsLate"),
                .connections = MSYS_CONN("k", "out", "c", "trg") MSYS_CONN("k", "oy", "c", "tu"),
                .parameters = MSYS_REAL("k.out_at_start", "1"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("k.oy") MSYS_RECORD("c.n_trg") MSYS_RECORD("c.ty"),
        };
        struct msys x;

        run_to_end(&x, &spec);
        cr_assert(eq(dbl, at(&x, 0.0, "k.oy"), -1.0));
        cr_assert(eq(u64, master_clock_ticks(x.m, msys_comp(&x, "k"), 10), 3));
        cr_assert(eq(dbl, at(&x, 0.2, "k.oy"), -1.0));
        cr_assert(eq(dbl, at(&x, 0.0, "c.n_trg"), 1.0));
        cr_assert(eq(dbl, at(&x, 0.0, "c.ty"), -1.0));
        cr_assert(eq(dbl, at(&x, 0.5, "c.n_trg"), 2.0));
        cr_assert(eq(dbl, at(&x, 1.0, "c.n_trg"), 3.0));
        msys_fini(&x);
}

/*
 * The triggered Clock's Event Mode at the start time asks to terminate
 * (stop_trg 1): the run ends there, at initialization, naming it, with
 * one row, whether or not another Clock of it is due at the start
 * (ClockKinds' cst ticks at 0). The request was lost: the run went on to
 * its first point, or, with a Clock due, fmi3EnterEventMode was called in
 * Event Mode and the load failed.
 */
static void terminate_at_start(const char *consumer)
{
        char elements[256];
        struct msys_spec spec = {
                .elements = elements,
                .connections = MSYS_CONN("k", "out", "c", "trg") MSYS_CONN("k", "oy", "c", "tu"),
                .parameters = MSYS_REAL("k.out_at_start", "1") MSYS_REAL("c.stop_trg", "1"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("k.oy") MSYS_RECORD("c.n_trg"),
        };
        struct msys x;

        snprintf(elements, sizeof(elements), "%s%s", MSYS_COMP("k", "ClockKindsLate"),
                 consumer);
        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(eq(int, master_state(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        cr_assert(eq(sz, x.n_rows, 1));
        cr_assert(eq(dbl, x.rows[0].t, 0.0));
        cr_assert(eq(dbl, at(&x, 0.0, "c.n_trg"), 1.0));
        cr_assert(ne(ptr, strstr(master_message(x.m), "requested by 'c' at t = 0 "
                                 "(initialization)"), NULL), "%s", master_message(x.m));
        msys_fini(&x);
}

Test(master_clocks, a_terminate_in_the_event_mode_an_output_clock_triggers_at_the_start_ends_there)
{
        terminate_at_start(MSYS_COMP("c", "ClockKindsLate"));
        terminate_at_start(MSYS_COMP("c", "ClockKinds"));
}
