/*
 * instance: the intermediate update round trip (FMI 3.0 section 4.2.2)
 * with IntermediateProbe, and the FMU's log messages forwarded, bounded
 * and counted.
 *
 * IntermediateProbe calls the callback after each of its 4 internal steps
 * and records what the importer did: n_updates, sum_u, last_u, last_t of
 * the last step. The test's callback answers with u = f(time), so the
 * FMU's outputs must be exactly the values the test computes.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "test_instance_drv.h"
#include "worker/call.h"

#define ok(expr) cr_assert(eq(int, (expr), INST_OK), "%s: %s", #expr, inst_message(in))

enum { U = 1, Y = 2, N_UPDATES = 3, LAST_U = 4, SUM_U = 5, LAST_T = 6, THREADED = 8 };

static struct inst *in;

struct probe {
        int calls;
        double times[16];
        double y_seen[16];
        double u_set[16];
        int early_at;           /* request early return at this call (1-based), 0: never */
        bool misbehave;         /* try the calls Intermediate Update Mode refuses */
};

static double u_of(double t)
{
        return 10.0 * t + 1.0;
}

static void on_iu(void *ctx, struct inst *i, const struct inst_iu *iu, bool *early, double *t)
{
        static const uint32_t u = U, y = Y, n = N_UPDATES;
        struct probe *p = ctx;
        double v = 0.0;
        int32_t k;

        cr_assert(i == in);
        cr_assert(iu->set_requested && iu->get_allowed && iu->step_finished);
        if (p->misbehave) {
                cr_assert(eq(int, inst_get(i, MD_INT32, &n, 1, &k, 1), -EACCES));
                cr_assert(strstr(inst_message(i), "is not an intermediate variable") != NULL);
                cr_assert(eq(int, inst_enter_event_mode(i), -EOPNOTSUPP));
                cr_assert(eq(int, inst_terminate(i), -EPERM));
                cr_assert(strstr(inst_message(i), "Intermediate Update Mode") != NULL);
                cr_assert(eq(int, inst_post_step(i, &(struct inst_step){ .t = 0, .h = 1 }), -EBUSY));
        }
        cr_assert(eq(int, inst_get(i, MD_FLOAT64, &y, 1, &p->y_seen[p->calls], 1), INST_OK), "%s",
                  inst_message(i));
        v = u_of(iu->time);
        cr_assert(eq(int, inst_set(i, MD_FLOAT64, &u, 1, &v, 1), INST_OK), "%s", inst_message(i));
        if (p->misbehave) {
                /* All gets come first (4.2.2). */
                cr_assert(eq(int, inst_get(i, MD_FLOAT64, &y, 1, &v, 1), -EPERM));
                cr_assert(strstr(inst_message(i), "all gets come first") != NULL);
        }
        p->times[p->calls] = iu->time;
        p->u_set[p->calls] = u_of(iu->time);
        p->calls++;
        if (p->calls == p->early_at) {
                *early = true;
                *t = iu->time;
        }
}

static void start_as(struct probe *p, bool early_return, bool threaded)
{
        static const uint32_t required[] = { U, Y }, vt = THREADED;
        int32_t on = threaded;
        struct inst_instantiate a = { .early_return_allowed = early_return, .required = required,
                                      .n_required = 2 };
        struct inst_opts o;

        drv_opts(&o, "IntermediateProbe");
        o.iu = on_iu;
        o.iu_ctx = p;
        cr_assert(eq(int, inst_new(&o, &in, NULL), 0));
        ok(inst_instantiate(in, &a));
        ok(inst_set(in, MD_INT32, &vt, 1, &on, 1));
        ok(inst_enter_initialization_mode(in, NULL));
        ok(inst_exit_initialization_mode(in));
}

static void start(struct probe *p, bool early_return)
{
        start_as(p, early_return, false);
}

static void stop(void)
{
        cr_assert(eq(int, inst_free(in), 0));
        cr_assert(eq(int, drv_count_children(), 0));
}

/* What the probe reports after a step. */
struct report {
        int32_t n_updates;
        double last_u, sum_u, last_t, y;
};

static int step(double t, double h, struct report *out, struct inst_step_result *res)
{
        static const uint32_t n = N_UPDATES, f[] = { LAST_U, SUM_U, LAST_T, Y };
        double v[4];
        struct inst_out o[] = {
                { MD_INT32, &n, 1, &out->n_updates, NULL, 1 },
                { MD_FLOAT64, f, 4, v, NULL, 4 },
        };
        struct inst_step s = { .t = t, .h = h, .outputs = o, .n_outputs = 2 };
        int r = inst_do_step(in, &s, res);

        out->last_u = v[0];
        out->sum_u = v[1];
        out->last_t = v[2];
        out->y = v[3];
        return r;
}

Test(instance_iu, callback_values_reach_the_fmu_exactly, .timeout = 120)
{
        struct probe p = { 0 };
        struct inst_step_result res;
        struct report out;
        double sum = 0.0;

        start(&p, false);
        ok(step(0.0, 0.1, &out, &res));
        ok(step(0.1, 0.1, &out, &res));
        cr_assert(eq(int, p.calls, 8));
        cr_assert(eq(i32, out.n_updates, 4));
        for (int j = 4; j < 8; j++)
                sum += p.u_set[j];
        cr_assert(eq(dbl, out.last_u, p.u_set[7]), "last_u");
        cr_assert(eq(dbl, out.sum_u, sum), "sum_u");
        cr_assert(eq(dbl, out.last_t, p.times[7]), "last_t");
        cr_assert(eq(dbl, p.times[7], 0.1 + 0.1));
        /* The y read in each update is the integral of the u set in the one before. */
        cr_assert(eq(dbl, p.y_seen[0], 0.0));
        cr_assert(eq(dbl, p.y_seen[1], p.u_set[0] * (p.times[1] - p.times[0])));
        cr_assert(eq(int, res.early_return, false));
        cr_assert(eq(dbl, res.last_successful_time, 0.2));
        stop();
}

/*
 * The FMU's callbacks from a solver thread of its own (joined within its
 * fmi3DoStep) are served as its main thread's: they were dropped, unlogged.
 */
Test(instance_iu, callbacks_from_a_thread_of_the_fmus_are_served, .timeout = 120)
{
        struct probe p = { 0 };
        struct inst_step_result res;
        struct report out;

        start_as(&p, true, true);
        ok(step(0.0, 0.1, &out, &res));
        cr_assert(eq(int, p.calls, 4));
        cr_assert(eq(i32, out.n_updates, 4));
        cr_assert(eq(dbl, out.last_u, p.u_set[3]), "last_u");
        cr_assert(eq(dbl, p.y_seen[1], p.u_set[0] * (p.times[1] - p.times[0])));
        /* An early return asked from there ends the step there. */
        p.early_at = 6;
        ok(step(0.1, 0.1, &out, &res));
        cr_assert(eq(int, p.calls, 6));
        cr_assert(eq(int, res.early_return, true));
        cr_assert(eq(dbl, res.last_successful_time, p.times[5]));
        stop();
}

Test(instance_iu, early_return_requested_in_the_callback_ends_the_step, .timeout = 120)
{
        struct probe p = { .early_at = 2 };
        struct inst_step_result res;
        struct report out;

        start(&p, true);
        ok(step(0.0, 0.4, &out, &res));
        cr_assert(eq(int, res.early_return, true));
        cr_assert(eq(dbl, res.last_successful_time, p.times[1]));
        cr_assert(eq(dbl, p.times[1], 0.4 * 2 / 4));
        cr_assert(eq(i32, out.n_updates, 2));
        cr_assert(eq(dbl, out.last_t, p.times[1]), "last_t");
        /* The next step starts where this one ended. */
        p.early_at = 0;
        ok(step(res.last_successful_time, 0.2, &out, &res));
        cr_assert(eq(int, res.early_return, false));
        stop();
}

static int warnings;
static char last_warning[CALL_MSG_MAX + 1];

static void count_warnings(void *ctx, struct inst *i, int status, const char *category,
                           const char *message)
{
        (void) ctx;
        (void) i;
        if (status == INST_WARNING && strcmp(category, "fmud") == 0) {
                warnings++;
                snprintf(last_warning, sizeof(last_warning), "%s", message);
        }
}

Test(instance_iu, early_return_the_instance_did_not_allow_is_not_passed_on, .timeout = 120)
{
        struct probe p = { .early_at = 1 };
        struct inst_step_result res;
        struct report out;

        start(&p, false);
        inst_set_log(in, count_warnings, NULL);
        ok(step(0.0, 0.4, &out, &res));
        cr_assert(eq(int, res.early_return, false));
        cr_assert(eq(i32, out.n_updates, 4));
        cr_assert(eq(int, warnings, 1));
        cr_assert(strstr(last_warning, "canReturnEarly is false") != NULL, "%s", last_warning);
        stop();
}

Test(instance_iu, calls_intermediate_update_mode_forbids_are_refused, .timeout = 120)
{
        struct probe p = { .misbehave = true };
        struct inst_step_result res;
        struct report out;

        start(&p, false);
        ok(step(0.0, 0.1, &out, &res));
        cr_assert(eq(int, p.calls, 4));
        cr_assert(eq(dbl, out.last_u, p.u_set[3]));
        stop();
}

/* ---- Log messages ------------------------------------------------------- */

struct logs {
        int n, dropped_notes;
        char last[CALL_MSG_MAX + 1];
};

static void collect(void *ctx, struct inst *i, int status, const char *category,
                    const char *message)
{
        struct logs *l = ctx;

        (void) i;
        (void) status;
        if (strcmp(category, "fmud") == 0 && strstr(message, "were not forwarded"))
                l->dropped_notes++;
        else
                l->n++;
        snprintf(l->last, sizeof(l->last), "%s", message);
}

Test(instance_log, messages_reach_the_callback, .timeout = 120)
{
        struct inst_instantiate a = { .logging_on = true, .event_mode_used = true,
                                      .early_return_allowed = true };
        struct inst_step s = { .t = 0.0, .h = 1.0 };
        struct inst_step_result res;
        struct inst_discrete dis;
        struct logs l = { 0 };
        struct inst_opts o;

        drv_opts(&o, "BouncingBall");
        o.log = collect;
        o.log_ctx = &l;
        cr_assert(eq(int, inst_new(&o, &in, NULL), 0));
        ok(inst_instantiate(in, &a));
        ok(inst_enter_initialization_mode(in, NULL));
        ok(inst_exit_initialization_mode(in));
        ok(inst_enter_step_mode(in));
        ok(inst_do_step(in, &s, &res));
        cr_assert(res.event_handling_needed);
        ok(inst_enter_event_mode(in));
        ok(inst_update_discrete_states(in, &dis));
        cr_assert(strstr(l.last, "bounce 1 at t = ") != NULL, "%s", l.last);
        cr_assert(ge(int, l.n, 1));
        stop();
}

Test(instance_log, a_flooding_fmu_is_bounded_and_counted, .timeout = 120)
{
        static const uint32_t e_vr = 6, bounces_vr = 10;
        struct inst_instantiate a = { .logging_on = true };
        struct inst_out out = { MD_INT32, &bounces_vr, 1, &(int32_t){ 0 }, NULL, 1 };
        struct inst_step s = { .t = 0.0, .h = 100.0, .outputs = &out, .n_outputs = 1 };
        struct inst_step_result res;
        struct logs l = { 0 };
        struct inst_opts o;
        double e = 0.99;
        int32_t bounces;

        drv_opts(&o, "BouncingBall");
        o.log = collect;
        o.log_ctx = &l;
        cr_assert(eq(int, inst_new(&o, &in, NULL), 0));
        ok(inst_instantiate(in, &a));
        ok(inst_set(in, MD_FLOAT64, &e_vr, 1, &e, 1));
        ok(inst_enter_initialization_mode(in, NULL));
        ok(inst_exit_initialization_mode(in));
        /* Hundreds of bounces in one step, each logged. */
        ok(inst_do_step(in, &s, &res));
        bounces = *(int32_t *)out.values;
        cr_assert(gt(i32, bounces, (int32_t)CALL_LOGS_PER_CALL + 100));
        cr_assert(eq(int, l.n, (int)CALL_LOGS_PER_CALL));
        cr_assert(eq(int, l.dropped_notes, 1));
        cr_assert(eq(u64, inst_logs_dropped(in), (uint64_t)bounces - CALL_LOGS_PER_CALL));
        /* The next call has its own budget. */
        ok(inst_get(in, MD_INT32, &bounces_vr, 1, &bounces, 1));
        stop();
}
