/*
 * master: a coupled step that fails holds the session at the last good
 * point (a worker killed between points, a missed step budget, an FMI
 * Error), with the message naming the instance, the call, the time and
 * the cause; and terminateSimulation ends the run cleanly where asked.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "test_master_sys.h"

static double val(const struct msys *x, const struct mrow *row, const char *name)
{
        return row->v[msys_col(x, name)];
}

struct nan_notes {
        unsigned n;
        char last[1024];
};

static void nan_note(void *ctx, size_t comp, const char *message)
{
        struct nan_notes *nt = ctx;

        (void)comp;
        nt->n++;
        snprintf(nt->last, sizeof(nt->last), "%s", message);
}

static bool has(const struct msys *x, const char *text)
{
        return strstr(master_message(x->m), text) != NULL;
}

/* LinearOde a coupled with b (LinearOde: u0 and y0; Scripted: u and x). */
static void pair(struct msys *x, const char *second, const char *params)
{
        bool lin = !strcmp(second, "LinearOde");
        char elements[256], connections[512];
        struct msys_spec spec = {
                .elements = elements,
                .connections = connections,
                .parameters = params,
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\"",
                .settings = MSYS_RECORD("a.x") MSYS_RECORD("a.y0") MSYS_RECORD("b.x"),
        };

        snprintf(elements, sizeof(elements), MSYS_COMP("a", "LinearOde")
                 "<ssd:Component name=\"b\" source=\"resources/%s.fmu\"/>", second);
        snprintf(connections, sizeof(connections), MSYS_CONN("a", "y0", "b", "%s")
                 MSYS_CONN("b", "x", "a", "u0"), lin ? "u0" : "u");
        msys_load(x, &spec);
}

Test(master_fault, a_killed_worker_holds_the_session_at_the_last_good_point)
{
        struct msys x;
        const struct mrow *last;
        size_t b;
        double v;
        int r;

        pair(&x, "LinearOde", MSYS_REAL("b.k", "2"));
        msys_start(&x);
        cr_assert(eq(int, master_step(x.m, 3), MASTER_RUNNING), "%s", master_message(x.m));
        last = &x.rows[x.n_rows - 1];
        cr_assert(eq(dbl, last->t, master_time(x.m)));
        cr_assert(kill(inst_pid(session_inst(x.s, msys_comp(&x, "a"))), SIGKILL) == 0);
        r = master_step(x.m, 1);
        cr_assert(eq(int, r, -ESRCH), "%d: %s", r, master_message(x.m));
        cr_assert(eq(int, master_state(x.m), MASTER_FAULTED));
        cr_assert(has(&x, "'a'") && has(&x, "DoStep") && has(&x, "signal 9"), "%s",
                  master_message(x.m));
        cr_assert(has(&x, "t = 0.30000000000000004"), "%s", master_message(x.m));
        /* Nothing was published: the values and the time are those of the last good point. */
        last = &x.rows[x.n_rows - 1];
        cr_assert(eq(dbl, master_time(x.m), last->t));
        b = msys_comp(&x, "b");
        cr_assert(eq(int, master_value(x.m, b, msys_var(&x, b, "x"), 0, &v), 0));
        cr_assert(v == val(&x, last, "b.x"));
        cr_assert(eq(int, master_step(x.m, 1), -EPERM));
        msys_fini(&x);
}

/* The published value of comp.var, and what its FMU says now. */
static void both(struct msys *x, const char *comp, const char *var, double *ret_pub,
                 double *ret_fmu)
{
        size_t c = msys_comp(x, comp), v = msys_var(x, c, var);
        uint32_t vr = x->sc->components[c].fmu->md->vars[v].vr;

        cr_assert(eq(int, master_value(x->m, c, v, 0, ret_pub), 0));
        cr_assert(eq(int, inst_get(session_inst(x->s, c), MD_FLOAT64, &vr, 1, ret_fmu, 1), INST_OK),
                  "%s", inst_message(session_inst(x->s, c)));
}

Test(master_fault, a_missed_step_budget_faults_the_step)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("fast", "LinearOde") MSYS_COMP("slow", "Scripted"),
                .connections = MSYS_CONN("fast", "x", "slow", "u"),
                /* Seconds of work against a 50 ms budget. */
                .parameters = MSYS_INT("slow.spin", "2000000000"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\" stepBudget=\"0.05\"",
        };
        struct msys x;
        double pub, fmu;
        int r;

        msys_load(&x, &spec);
        cr_assert(x.sc->experiment.budget_given);
        x.mo.rollback_on_fault = true;
        msys_start(&x);
        r = master_run(x.m);
        cr_assert(eq(int, r, -ETIMEDOUT), "%d: %s", r, master_message(x.m));
        cr_assert(has(&x, "'slow'") && has(&x, "step budget of 0.05 s"), "%s", master_message(x.m));
        cr_assert(eq(dbl, master_time(x.m), 0.0));
        cr_assert(eq(sz, x.n_rows, (size_t)1));
        /* 'fast' finished its step, and went back to the point: its state was saved. */
        both(&x, "fast", "x", &pub, &fmu);
        cr_assert(pub == 1.0 && fmu == pub, "published %.17g, FMU at %.17g", pub, fmu);
        msys_fini(&x);
}

Test(master_fault, an_fmi_error_names_the_instance_the_call_and_the_time)
{
        struct msys x;
        int r;

        pair(&x, "Scripted", MSYS_REAL("b.fail_at", "0.25"));
        msys_start(&x);
        r = master_run(x.m);
        cr_assert(eq(int, r, -EIO), "%d: %s", r, master_message(x.m));
        cr_assert(has(&x, "component 'b': fmi3DoStep at t = 0.30000000000000004 (step to"),
                  "%s", master_message(x.m));
        cr_assert(has(&x, "returned Error") && has(&x, "scripted failure"), "%s",
                  master_message(x.m));
        cr_assert(eq(dbl, master_time(x.m), 0.30000000000000004));
        cr_assert(eq(dbl, x.rows[x.n_rows - 1].t, 0.30000000000000004));
        msys_fini(&x);
}

Test(master_fault, terminate_simulation_ends_the_run_where_asked)
{
        struct msys x;
        struct master_stats st;

        pair(&x, "Scripted", MSYS_REAL("b.stop_at", "0.5"));
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        cr_assert(has(&x, "terminateSimulation requested by 'b' at t = 0.5"), "%s",
                  master_message(x.m));
        cr_assert(eq(dbl, master_time(x.m), 0.5));
        cr_assert(eq(dbl, x.rows[x.n_rows - 1].t, 0.5));
        master_get_stats(x.m, &st);
        cr_assert(eq(u64, st.points, 5));
        cr_assert(eq(int, master_run(x.m), -EPERM));
        msys_fini(&x);
}

Test(master_fault, a_nan_output_that_reaches_a_consumer_is_said_once_with_the_variable_and_time)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("bad", "Misbehave") MSYS_COMP("lin", "LinearOde"),
                .connections = MSYS_CONN("bad", "x", "lin", "u0"),
                .parameters = MSYS_INT("bad.fault", "17") MSYS_REAL("bad.at", "0.25")
                              MSYS_REAL("bad.u", "1"),
                .stop = 1.0,
                .attrs = "stepSize=\"0.125\"",
                .settings = MSYS_RECORD("lin.y0"),
        };
        struct nan_notes nt = { 0 };
        struct msys x;

        msys_load(&x, &spec);
        x.mo.note = nan_note;
        x.mo.note_ctx = &nt;
        msys_start(&x);
        /* Routed as it is: the consumer's FMU decides; LinearOde passes it to y0. */
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        cr_assert(isnan(x.rows[x.n_rows - 1].v[msys_col(&x, "lin.y0")]));
        cr_assert(eq(u32, nt.n, 1));
        cr_assert(strstr(nt.last, "'bad'") && strstr(nt.last, "'x'") && strstr(nt.last, "NaN") &&
                  strstr(nt.last, "t = 0.375") && strstr(nt.last, "'lin'"), "%s", nt.last);
        msys_fini(&x);
}
