/*
 * master: a lone instance's next steps are chained behind the current one
 * (engine/master/master_chain.c). The rows, the faults, the end of a stepping
 * call, a pause and terminateSimulation come out exactly as with one
 * round trip per point, and the FMU never gets a step ahead of the session.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "test_master_sys.h"

/* Scripted alone, 100 points of 0.01 s, its x and steps recorded. */
static void lone(struct msys *x, const char *params, const char *attrs, bool no_chain)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("s", "Scripted"),
                .parameters = params,
                .stop = 1.0,
                .attrs = attrs ? attrs : "stepSize=\"0.01\"",
                .settings = MSYS_RECORD("s.x") MSYS_RECORD("s.steps"),
        };

        msys_load(x, &spec);
        x->mo.no_chain = no_chain;
        msys_start(x);
}

static uint64_t chained(const struct msys *x)
{
        struct master_stats st;

        master_get_stats(x->m, &st);
        return st.chained;
}

/* The FMU's own count of completed steps, asked directly. */
static int32_t fmu_steps(const struct msys *x)
{
        struct inst *in = session_inst(x->s, 0);
        uint32_t vr = 3;
        int32_t n = -1;

        cr_assert(eq(int, inst_get(in, MD_INT32, &vr, 1, &n, 1), INST_OK), "%s", inst_message(in));
        return n;
}

Test(master_chain, a_lone_instance_gives_the_same_rows_chained_or_not)
{
        struct msys a, b;

        lone(&a, MSYS_REAL("s.u", "0.5"), NULL, false);
        lone(&b, MSYS_REAL("s.u", "0.5"), NULL, true);
        cr_assert(eq(int, master_run(a.m), MASTER_FINISHED), "%s", master_message(a.m));
        cr_assert(eq(int, master_run(b.m), MASTER_FINISHED), "%s", master_message(b.m));
        cr_assert(eq(sz, a.n_rows, (size_t)101));
        cr_assert(msys_same_rows(&a, &b));
        /* Every step but the first of the run went behind another. */
        cr_assert(eq(u64, chained(&a), (uint64_t)99));
        cr_assert(eq(u64, chained(&b), (uint64_t)0));
        cr_assert(eq(i32, fmu_steps(&a), 100));
        msys_fini(&a);
        msys_fini(&b);
}

Test(master_chain, a_stepping_call_leaves_the_fmu_at_its_target)
{
        struct msys a, b;

        lone(&a, NULL, NULL, false);
        lone(&b, NULL, NULL, true);
        cr_assert(eq(int, master_step(a.m, 7), MASTER_RUNNING));
        cr_assert(eq(u64, master_point(a.m), (uint64_t)7));
        cr_assert(eq(i32, fmu_steps(&a), 7), "a chained step ran past the target");
        cr_assert(eq(int, master_step(a.m, 1), MASTER_RUNNING));
        cr_assert(eq(i32, fmu_steps(&a), 8));
        cr_assert(eq(int, master_run_until(a.m, 0.5), MASTER_RUNNING));
        cr_assert(eq(i32, fmu_steps(&a), 50));
        master_request_pause(a.m);
        cr_assert(eq(int, master_run(a.m), MASTER_PAUSED));
        cr_assert(eq(i32, fmu_steps(&a), (int32_t)master_point(a.m)));
        cr_assert(eq(int, master_run(a.m), MASTER_FINISHED));
        cr_assert(eq(int, master_run(b.m), MASTER_FINISHED));
        cr_assert(msys_same_rows(&a, &b));
        msys_fini(&a);
        msys_fini(&b);
}

Test(master_chain, an_error_holds_the_session_where_it_would_unchained)
{
        struct msys a, b;
        int ra, rb;

        lone(&a, MSYS_REAL("s.fail_at", "0.5"), NULL, false);
        lone(&b, MSYS_REAL("s.fail_at", "0.5"), NULL, true);
        ra = master_run(a.m);
        rb = master_run(b.m);
        cr_assert(eq(int, ra, rb));
        cr_assert(eq(int, master_state(a.m), MASTER_FAULTED));
        cr_assert(eq(str, (char *)master_message(a.m), (char *)master_message(b.m)));
        cr_assert(strstr(master_message(a.m), "t = 0.5") != NULL, "%s", master_message(a.m));
        cr_assert(eq(dbl, master_time(a.m), master_time(b.m)));
        cr_assert(msys_same_rows(&a, &b));
        msys_fini(&a);
        msys_fini(&b);
}

Test(master_chain, terminate_simulation_ends_the_run_where_it_would_unchained)
{
        struct msys a, b;

        lone(&a, MSYS_REAL("s.stop_at", "0.505"), NULL, false);
        lone(&b, MSYS_REAL("s.stop_at", "0.505"), NULL, true);
        cr_assert(eq(int, master_run(a.m), MASTER_FINISHED), "%s", master_message(a.m));
        cr_assert(eq(int, master_run(b.m), MASTER_FINISHED), "%s", master_message(b.m));
        cr_assert(eq(dbl, master_time(a.m), master_time(b.m)));
        cr_assert(master_time(a.m) > 0.505 && master_time(a.m) < 0.515, "%g", master_time(a.m));
        cr_assert(msys_same_rows(&a, &b));
        /* The step chained behind the one that asked to stop never ran. */
        cr_assert(eq(i32, fmu_steps(&a), 51));
        cr_assert(eq(i32, fmu_steps(&b), 51));
        msys_fini(&a);
        msys_fini(&b);
}

Test(master_chain, a_chained_step_that_hangs_misses_the_step_budget)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("m", "Misbehave"),
                /* From t = 0.5 on, an endless loop. */
                .parameters = MSYS_INT("m.fault", "8") MSYS_REAL("m.at", "0.5"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.01\" stepBudget=\"0.2\"",
        };
        struct msys x;
        int r;

        msys_load(&x, &spec);
        msys_start(&x);
        r = master_run(x.m);
        cr_assert(eq(int, r, -ETIMEDOUT), "%d: %s", r, master_message(x.m));
        cr_assert(strstr(master_message(x.m), "missed the step budget of 0.2 s") != NULL, "%s",
                  master_message(x.m));
        cr_assert(strstr(master_message(x.m), "at t = 0.5 ") != NULL, "%s", master_message(x.m));
        cr_assert(eq(dbl, master_time(x.m), 0.5));
        cr_assert(chained(&x) > 0);
        msys_fini(&x);
}

Test(master_chain, a_paced_run_is_not_chained)
{
        struct msys a;

        /* 20 points of 0.01 s at 10x: 20 ms of wall time, paced point by point. */
        lone(&a, NULL, "stepSize=\"0.01\" warp=\"10\"", false);
        cr_assert(eq(int, master_step(a.m, 20), MASTER_RUNNING), "%s", master_message(a.m));
        cr_assert(eq(u64, chained(&a), (uint64_t)0));
        cr_assert(eq(i32, fmu_steps(&a), 20));
        /* As fast as possible again: chained from then on. */
        cr_assert(eq(int, master_set_warp(a.m, 0), 0));
        cr_assert(eq(int, master_run(a.m), MASTER_FINISHED), "%s", master_message(a.m));
        cr_assert(chained(&a) > 0);
        msys_fini(&a);
}

/* A pause once the run is under way: its first points done, however slow the machine. */
static void *pause_soon(void *m)
{
        uint64_t points = 0;
        double t;

        while (points < 100) {
                usleep(1000);
                master_live(m, &t, &points);
        }
        master_request_pause(m);
        return NULL;
}

Test(master_chain, a_pause_in_the_middle_of_a_run_holds_the_fmu_at_the_session_point)
{
        struct msys a, b;
        pthread_t th;
        uint64_t pt;

        /* 100,000 points: tens of milliseconds at the least, the pause comes after 100 of them. */
        lone(&a, NULL, "stepSize=\"0.00001\"", false);
        lone(&b, NULL, "stepSize=\"0.00001\"", true);
        cr_assert(eq(int, pthread_create(&th, NULL, pause_soon, a.m), 0));
        cr_assert(eq(int, master_run(a.m), MASTER_PAUSED), "%s", master_message(a.m));
        cr_assert(eq(int, pthread_join(th, NULL), 0));
        pt = master_point(a.m);
        cr_assert(pt >= 100 && pt < 100000, "paused at point %llu", (unsigned long long)pt);
        /* The steps chained when the pause came were taken; none is left in flight. */
        cr_assert(eq(i32, fmu_steps(&a), (int32_t)pt));
        cr_assert(eq(int, master_run(a.m), MASTER_FINISHED), "%s", master_message(a.m));
        cr_assert(eq(int, master_run(b.m), MASTER_FINISHED), "%s", master_message(b.m));
        cr_assert(eq(i32, fmu_steps(&a), 100000));
        cr_assert(msys_same_rows(&a, &b));
        cr_assert(chained(&a) > 90000, "%llu chained", (unsigned long long)chained(&a));
        msys_fini(&a);
        msys_fini(&b);
}
