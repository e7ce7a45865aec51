/*
 * master: a Scheduled Execution FMU (FMI 3.0 section 5) hosted by its
 * worker, with Partitions: partition fast (10 ms, priority 1) adds step = 1
 * to shared, partition slow (25 ms, priority 2) copies shared into seen,
 * counts its activations in n_slow, keeps its activationTime in t_slow and
 * ticks the output Clock odd at its 1st, 3rd, ... activation.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_master_sys.h"

#define VR_FAST 1u
#define VR_SLOW 2u
#define VR_ODD 8u

static double val(const struct msys *x, const struct mrow *row, const char *name)
{
        return row->v[msys_col(x, name)];
}

#define SE_SPEC(fmu, params) { \
        .elements = MSYS_COMP("p", fmu), \
        .parameters = params, \
        .stop = 0.1, \
        .attrs = "stepSize=\"0.01\"", \
        .settings = MSYS_RECORD("p.shared") MSYS_RECORD("p.seen") MSYS_RECORD("p.n_slow") \
                    MSYS_RECORD("p.t_slow") MSYS_RECORD("p.odd") MSYS_RECORD("p.fast") \
                    MSYS_RECORD("p.slow"), \
}

static uint64_t ticks(const struct msys *x, uint32_t vr)
{
        return master_clock_ticks(x->m, msys_comp(x, "p"), vr);
}

Test(master_se, partitions_run_at_their_ticks_in_priority_order)
{
        /*
         * Hand-computed: fast ticks at 0, 0.01, ..., 0.1, so shared is
         * k + 1 from its tick at 0.01 k on; slow ticks at 0, 0.025, 0.05,
         * 0.075 and 0.1 (0.025 and 0.075 are extra points off the grid).
         * At 0, 0.05 and 0.1 both tick and fast runs first, so slow sees
         * that instant's sum: 1, 6 and 11 (fast second would give 0, 5,
         * 10). odd ticks at slow's 1st, 3rd and 5th activation.
         */
        static const struct { double t, shared, seen, n_slow, t_slow, odd, fast, slow; } want[] = {
                { 0.0, 1, 1, 1, 0.0, 1, 1, 1 },         { 0.01, 2, 1, 1, 0.0, 0, 1, 0 },
                { 0.02, 3, 1, 1, 0.0, 0, 1, 0 },        { 0.025, 3, 3, 2, 0.025, 0, 0, 1 },
                { 0.03, 4, 3, 2, 0.025, 0, 1, 0 },      { 0.04, 5, 3, 2, 0.025, 0, 1, 0 },
                { 0.05, 6, 6, 3, 0.05, 1, 1, 1 },       { 0.06, 7, 6, 3, 0.05, 0, 1, 0 },
                { 0.07, 8, 6, 3, 0.05, 0, 1, 0 },       { 0.075, 8, 8, 4, 0.075, 0, 0, 1 },
                { 0.08, 9, 8, 4, 0.075, 0, 1, 0 },      { 0.09, 10, 8, 4, 0.075, 0, 1, 0 },
                { 0.1, 11, 11, 5, 0.1, 1, 1, 1 },
        };
        struct msys_spec spec = SE_SPEC("Partitions", NULL);
        size_t n = 0;
        struct msys x;

        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        for (size_t i = 0; i < x.n_rows; i++) {
                const struct mrow *r = &x.rows[i];

                if (r->flags & MASTER_ROW_EVENT_LEFT)
                        continue;
                cr_assert(n < sizeof(want) / sizeof(want[0]), "row at %.17g", r->t);
                cr_assert(fabs(r->t - want[n].t) < 1e-12, "row %zu at %.17g, not %g", n, r->t,
                          want[n].t);
                cr_assert(eq(dbl, val(&x, r, "p.shared"), want[n].shared), "t = %g", want[n].t);
                cr_assert(eq(dbl, val(&x, r, "p.seen"), want[n].seen), "t = %g", want[n].t);
                cr_assert(eq(dbl, val(&x, r, "p.n_slow"), want[n].n_slow), "t = %g", want[n].t);
                cr_assert(fabs(val(&x, r, "p.t_slow") - want[n].t_slow) < 1e-12, "t = %g: %.17g",
                          want[n].t, val(&x, r, "p.t_slow"));
                cr_assert(eq(dbl, val(&x, r, "p.odd"), want[n].odd), "t = %g", want[n].t);
                cr_assert(eq(dbl, val(&x, r, "p.fast"), want[n].fast), "t = %g", want[n].t);
                cr_assert(eq(dbl, val(&x, r, "p.slow"), want[n].slow), "t = %g", want[n].t);
                n++;
        }
        cr_assert(eq(sz, n, sizeof(want) / sizeof(want[0])));
        cr_assert(eq(u64, ticks(&x, VR_FAST), 11));
        cr_assert(eq(u64, ticks(&x, VR_SLOW), 5));
        cr_assert(eq(u64, ticks(&x, VR_ODD), 3));
        msys_fini(&x);
}

/* SSP's implementation attribute may name ScheduledExecution (the SSD schema of SSP 2.0). */
Test(master_se, the_ssp_implementation_attribute_may_ask_for_scheduled_execution)
{
        struct msys_spec spec = SE_SPEC("Partitions", NULL), cs;
        char text[2048];
        struct msys x;

        spec.elements = "<ssd:Component name=\"p\" source=\"resources/Partitions.fmu\" "
                        "implementation=\"ScheduledExecution\"/>";
        cs = spec;
        msys_load(&x, &spec);
        cr_assert(x.sc->components[0].fmu->md->hosted_se);
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        cr_assert(eq(u64, ticks(&x, VR_FAST), 11));
        msys_fini(&x);

        cs.elements = "<ssd:Component name=\"p\" source=\"resources/Partitions.fmu\" "
                      "implementation=\"CoSimulation\"/>";
        cr_assert(eq(int, msys_load_try(&x, &cs), -EINVAL));
        msys_diag_text(&x, text, sizeof(text));
        cr_assert(strstr(text, "CoSimulation asked for, but the FMU has no CoSimulation interface")
                  != NULL, "%s", text);
        msys_fini(&x);
}

Test(master_se, an_input_clock_without_priority_is_refused_at_load)
{
        struct msys_spec spec = SE_SPEC("PartitionsNoPrio", NULL);
        char text[2048];
        struct msys x;

        cr_assert(eq(int, msys_load_try(&x, &spec), -EINVAL));
        msys_diag_text(&x, text, sizeof(text));
        cr_assert(strstr(text, "input Clock 'slow' has no priority") != NULL, "%s", text);
        cr_assert(x.sc == NULL);
        msys_fini(&x);
}

Test(master_se, an_unlock_without_lock_faults_the_partition_with_a_message)
{
        struct msys_spec spec = SE_SPEC("Partitions", MSYS_REAL("p.fault", "1"));
        const struct mrow *last;
        struct msys x;
        int r;

        msys_load(&x, &spec);
        msys_start(&x);
        r = master_run(x.m);
        cr_assert(r < 0, "%d", r);
        cr_assert(eq(int, master_state(x.m), MASTER_FAULTED));
        cr_assert(strstr(master_message(x.m), "fmi3ActivateModelPartition(slow): the FMU called "
                         "unlockPreemption without lockPreemption") != NULL, "%s",
                  master_message(x.m));
        /* Held at the last good point, 0.05 before the tick: slow's 3rd activation is not published. */
        last = &x.rows[x.n_rows - 1];
        cr_assert(fabs(last->t - 0.05) < 1e-12, "%.17g", last->t);
        cr_assert(eq(dbl, val(&x, last, "p.n_slow"), 2));
        msys_fini(&x);
}

/*
 * The clocked input step is set before the partitions run: fed by
 * TimeEvent's level (0, then 1 from its time event at 0.035), fast adds 0
 * at its ticks 0 to 0.03 and 1 at 0.04 to 0.1; slow, at 0.05 after fast,
 * sees 2.
 */
Test(master_se, clocked_inputs_are_set_before_the_partitions_run)
{
        static const struct { double t, shared, seen; } want[] = {
                { 0.0, 0, 0 }, { 0.03, 0, 0 }, { 0.04, 1, 0 }, { 0.05, 2, 2 }, { 0.1, 7, 7 },
        };
        struct msys_spec spec = {
                .elements = MSYS_COMP("te", "TimeEvent") MSYS_COMP("p", "Partitions"),
                .connections = MSYS_CONN("te", "level", "p", "step"),
                .parameters = MSYS_REAL("te.phase", "0.035") MSYS_REAL("te.period", "1"),
                .stop = 0.1,
                .attrs = "stepSize=\"0.01\"",
                .settings = MSYS_RECORD("p.shared") MSYS_RECORD("p.seen"),
        };
        struct msys x;

        msys_load(&x, &spec);
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
                const struct mrow *r = NULL;

                for (size_t k = 0; k < x.n_rows; k++)
                        if (fabs(x.rows[k].t - want[i].t) < 1e-12 &&
                            !(x.rows[k].flags & MASTER_ROW_EVENT_LEFT))
                                r = &x.rows[k];
                cr_assert(r != NULL, "no row at %g", want[i].t);
                cr_assert(eq(dbl, val(&x, r, "p.shared"), want[i].shared), "t = %g", want[i].t);
                cr_assert(eq(dbl, val(&x, r, "p.seen"), want[i].seen), "t = %g", want[i].t);
        }
        cr_assert(eq(u64, ticks(&x, VR_FAST), 11));
        msys_fini(&x);
}
