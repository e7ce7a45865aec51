/*
 * instance: a step chained behind another (struct inst_step.chained) runs
 * in the worker right after a plain step, with results bit-identical to
 * the same steps made one round trip at a time, and never after a step
 * that was not plain: then the FMU is not called and the chained step
 * comes back -ECANCELED. A repeat (struct inst_step.repeat) is that many
 * chained steps in one request, each with its own reply. What may not be
 * chained is refused before anything is sent.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <string.h>

#include "test_instance_drv.h"
#include "worker/call.h"

#define ok(in, expr) cr_assert(eq(int, (expr), INST_OK), "%s: %s", #expr, inst_message(in))

/* Misbehave's value references. */
#define VR_X            2u
#define VR_STEPS        3u
#define VR_FAULT        4u
#define VR_AT           5u

static struct inst *start(const char *fmu, int32_t fault, double at)
{
        struct inst_instantiate a = { 0 };
        struct inst_opts o;
        struct inst *in;
        char *why = NULL;

        drv_opts(&o, fmu);
        cr_assert(eq(int, inst_new(&o, &in, &why), 0), "%s", why ? why : "");
        ok(in, inst_instantiate(in, &a));
        if (fault) {
                ok(in, inst_set(in, MD_INT32, (uint32_t[]){ VR_FAULT }, 1, &fault, 1));
                ok(in, inst_set(in, MD_FLOAT64, (uint32_t[]){ VR_AT }, 1, &at, 1));
        }
        ok(in, inst_enter_initialization_mode(in, NULL));
        ok(in, inst_exit_initialization_mode(in));
        return in;
}

/* LinearOde's x and its ten outputs y0..y9, got with every step. */
struct outs {
        uint32_t vrs[11];
        double v[11];
        struct inst_out out;
};

static void outs_init(struct outs *o)
{
        o->vrs[0] = 1;
        for (uint32_t i = 0; i < 10; i++)
                o->vrs[1 + i] = 20 + i;
        o->out = (struct inst_out){ .type = MD_FLOAT64, .vrs = o->vrs, .nvr = 11, .values = o->v,
                                    .nvalues = 11 };
}

static struct inst_step step_at(double t, const struct outs *o, bool chained)
{
        return (struct inst_step){ .t = t, .h = 0.125, .outputs = o ? &o->out : NULL,
                                   .n_outputs = o ? 1 : 0,
                                   .chained = chained };
}

static int32_t steps_done(struct inst *in)
{
        int32_t n = -1;

        ok(in, inst_get(in, MD_INT32, (uint32_t[]){ VR_STEPS }, 1, &n, 1));
        return n;
}

Test(instance_chain, chained_steps_match_one_round_trip_at_a_time_bit_for_bit, .timeout = 120)
{
        struct inst *a = start("LinearOde", 0, 0), *b = start("LinearOde", 0, 0);
        struct outs oa, ob[2];
        struct inst_step sa, sb[2];
        struct inst_step_result res;

        outs_init(&oa);
        outs_init(&ob[0]);
        outs_init(&ob[1]);
        /* b: step k + 1 is posted before step k's reply is read, every time. */
        sb[0] = step_at(0.0, &ob[0], false);
        ok(b, inst_post_step(b, &sb[0]));
        for (unsigned k = 0; k < 40; k++) {
                double t = 0.125 * k;

                sa = step_at(t, &oa, false);
                ok(a, inst_do_step(a, &sa, &res));
                if (k + 1 < 40) {
                        sb[(k + 1) % 2] = step_at(0.125 * (k + 1), &ob[(k + 1) % 2], true);
                        ok(b, inst_post_step(b, &sb[(k + 1) % 2]));
                }
                ok(b, inst_wait_step(b, &res));
                cr_assert(eq(int, res.phase, INST_PHASE_DONE));
                cr_assert(memcmp(oa.v, ob[k % 2].v, sizeof(oa.v)) == 0, "step at t = %g differs", t);
        }
        cr_assert(eq(int, inst_free(a), 0));
        cr_assert(eq(int, inst_free(b), 0));
        cr_assert(eq(int, drv_count_children(), 0));
}

/* The step at 'at' is not plain: the chained one behind it must not reach the FMU. */
static void not_plain(int32_t fault, int want_first)
{
        struct inst *in = start("Misbehave", fault, 0.25);
        struct inst_step s0 = step_at(0.0, NULL, false), s1 = step_at(0.125, NULL, true);
        struct inst_step s2 = step_at(0.25, NULL, false), s3 = step_at(0.375, NULL, true);
        struct inst_step_result res;

        /* Two plain steps, the second chained: both run. */
        ok(in, inst_post_step(in, &s0));
        ok(in, inst_post_step(in, &s1));
        ok(in, inst_wait_step(in, &res));
        ok(in, inst_wait_step(in, &res));
        cr_assert(eq(i32, steps_done(in), 2));
        /* Then the faulty step, and one chained behind it. */
        ok(in, inst_post_step(in, &s2));
        ok(in, inst_post_step(in, &s3));
        cr_assert(eq(int, inst_wait_step(in, &res), want_first), "%s", inst_message(in));
        cr_assert(eq(int, inst_wait_step(in, &res), -ECANCELED));
        cr_assert(strstr(inst_message(in), "fmi3DoStep: not run: the step before it did not "
                         "complete plainly") != NULL, "%s", inst_message(in));
        cr_assert(eq(int, inst_fault(in), 0), "a skipped step is no fault");
        if (want_first == INST_DISCARD)
                cr_assert(eq(i32, steps_done(in), 2), "the chained step ran");
        cr_assert(eq(int, inst_free(in), 0));
        cr_assert(eq(int, drv_count_children(), 0));
}

Test(instance_chain, nothing_runs_behind_a_discarded_step, .timeout = 120)
{
        not_plain(13, INST_DISCARD);
}

Test(instance_chain, nothing_runs_behind_a_step_that_returned_error, .timeout = 120)
{
        not_plain(11, INST_ERROR);
}

Test(instance_chain, a_worker_that_dies_under_a_chained_step_faults_both, .timeout = 120)
{
        struct inst *in = start("Misbehave", 1, 0.0);
        struct inst_step s0 = step_at(0.0, NULL, false), s1 = step_at(0.125, NULL, true);
        struct inst_step_result res;

        ok(in, inst_post_step(in, &s0));
        ok(in, inst_post_step(in, &s1));
        cr_assert(eq(int, inst_wait_step(in, &res), -ESRCH), "%s", inst_message(in));
        cr_assert(strstr(inst_message(in), "SIGSEGV") != NULL, "%s", inst_message(in));
        cr_assert(eq(int, inst_wait_step(in, &res), -ESRCH));
        cr_assert(eq(int, inst_wait_step(in, &res), -EINVAL), "nothing left to wait for");
        cr_assert(eq(int, inst_free(in), -ESRCH));
        cr_assert(eq(int, drv_count_children(), 0));
}

Test(instance_chain, what_cannot_be_chained_is_refused_before_it_is_sent, .timeout = 120)
{
        struct inst *in = start("LinearOde", 0, 0);
        struct inst_step s0 = step_at(0.0, NULL, false), s1 = step_at(0.125, NULL, true);
        struct inst_step s2 = step_at(0.25, NULL, true), plain = step_at(0.125, NULL, false);
        struct inst_step big = step_at(0.375, NULL, true);
        double x, times[INST_REPEAT_MAX + 1];
        struct inst_step_result res;

        /* Nothing in flight to chain behind. */
        cr_assert(eq(int, inst_post_step(in, &s1), -EAGAIN));
        cr_assert(strstr(inst_message(in), "a step in flight to follow") != NULL, "%s",
                  inst_message(in));
        ok(in, inst_post_step(in, &s0));
        /* An unchained post, or any other call, waits for the step in flight. */
        cr_assert(eq(int, inst_post_step(in, &plain), -EBUSY));
        ok(in, inst_post_step(in, &s1));
        /* Behind the last of several in flight too, but no more than INST_CHAIN_MAX in all. */
        ok(in, inst_post_step(in, &s2));
        for (unsigned j = 0; j <= INST_REPEAT_MAX; j++)
                times[j] = 0.125 * (3 + j);
        big.repeat = INST_REPEAT_MAX;
        big.times = times;
        cr_assert(eq(int, inst_post_step(in, &big), -EAGAIN));
        cr_assert(strstr(inst_message(in), "more steps in flight") != NULL, "%s", inst_message(in));
        for (int j = 0; j < 3; j++) {
                cr_assert(eq(int, inst_get(in, MD_FLOAT64, (uint32_t[]){ 1 }, 1, &x, 1), -EBUSY));
                ok(in, inst_wait_step(in, &res));
                cr_assert(res.last_successful_time == 0.125 * (j + 1), "step %d", j);
        }
        ok(in, inst_get(in, MD_FLOAT64, (uint32_t[]){ 1 }, 1, &x, 1));
        cr_assert(eq(int, inst_fault(in), 0));
        cr_assert(eq(int, inst_free(in), 0));
}

/* Grid times 0.125 * (first + j), j = 0..n: the times of a repeat of n steps. */
static void grid(double *times, unsigned first, unsigned n)
{
        for (unsigned j = 0; j <= n; j++)
                times[j] = 0.125 * (first + j);
}

static struct inst_step repeat_of(const double *times, unsigned n, const struct outs *o)
{
        struct inst_step s = step_at(times[0], o, true);

        s.repeat = n;
        s.times = times;
        return s;
}

Test(instance_chain, a_repeat_matches_one_round_trip_at_a_time_bit_for_bit, .timeout = 120)
{
        static const unsigned sizes[] = { INST_REPEAT_MAX, 5, 2, 3 };
        struct inst *a = start("LinearOde", 0, 0), *b = start("LinearOde", 0, 0);
        struct inst_step sa, s0, rep;
        struct inst_step_result res;
        double times[INST_REPEAT_MAX + 1];
        struct outs oa, ob;
        unsigned k = 0;

        outs_init(&oa);
        outs_init(&ob);
        /* b: one step, then each repeat posted behind the last step of the one before. */
        s0 = step_at(0.0, &ob, false);
        ok(b, inst_post_step(b, &s0));
        for (unsigned round = 0; round < sizeof(sizes) / sizeof(sizes[0]); round++) {
                unsigned n = sizes[round];

                grid(times, k + 1, n);
                rep = repeat_of(times, n, &ob);
                ok(b, inst_post_step(b, &rep));
                /* Collect the step in flight before the repeat, and all of it but its last. */
                for (unsigned j = 0; j < n; j++, k++) {
                        sa = step_at(0.125 * k, &oa, false);
                        ok(a, inst_do_step(a, &sa, &res));
                        ok(b, inst_wait_step(b, &res));
                        cr_assert(eq(int, res.phase, INST_PHASE_DONE));
                        cr_assert(res.last_successful_time == 0.125 * (k + 1), "step %u ended at %.17g",
                                  k, res.last_successful_time);
                        cr_assert(memcmp(oa.v, ob.v, sizeof(oa.v)) == 0, "step %u differs", k);
                }
        }
        /* The last step of the last repeat. */
        sa = step_at(0.125 * k, &oa, false);
        ok(a, inst_do_step(a, &sa, &res));
        ok(b, inst_wait_step(b, &res));
        cr_assert(memcmp(oa.v, ob.v, sizeof(oa.v)) == 0, "step %u differs", k);
        cr_assert(eq(int, inst_free(a), 0));
        cr_assert(eq(int, inst_free(b), 0));
        cr_assert(eq(int, drv_count_children(), 0));
}

/*
 * The master's way: each repeat posted while the one before still has steps
 * to take, so two are queued behind the step in flight.
 */
Test(instance_chain, repeats_queued_behind_each_other_match_one_round_trip_at_a_time,
     .timeout = 120)
{
        struct inst *a = start("LinearOde", 0, 0), *b = start("LinearOde", 0, 0);
        double times[3][8 + 1];
        struct inst_step sa, s0, rep[3];
        struct inst_step_result res;
        struct outs oa, ob;
        unsigned posted = 1, buf = 0;

        outs_init(&oa);
        outs_init(&ob);
        s0 = step_at(0.0, &ob, false);
        ok(b, inst_post_step(b, &s0));
        for (unsigned k = 0; k < 60; k++) {
                /* Four steps or fewer left behind the one in flight: the next 8 go behind them. */
                if (posted - k <= 1 + 4) {
                        grid(times[buf], posted, 8);
                        rep[buf] = repeat_of(times[buf], 8, &ob);
                        ok(b, inst_post_step(b, &rep[buf]));
                        posted += 8;
                        buf = (buf + 1) % 3;
                }
                sa = step_at(0.125 * k, &oa, false);
                ok(a, inst_do_step(a, &sa, &res));
                ok(b, inst_wait_step(b, &res));
                cr_assert(res.last_successful_time == 0.125 * (k + 1), "step %u ended at %.17g", k,
                          res.last_successful_time);
                cr_assert(memcmp(oa.v, ob.v, sizeof(oa.v)) == 0, "step %u differs", k);
        }
        /* What is still queued runs too. */
        for (unsigned k = 60; k < posted; k++)
                ok(b, inst_wait_step(b, &res));
        cr_assert(eq(int, inst_wait_step(b, &res), -EINVAL), "nothing left to wait for");
        cr_assert(eq(int, inst_free(a), 0));
        cr_assert(eq(int, inst_free(b), 0));
        cr_assert(eq(int, drv_count_children(), 0));
}

/*
 * A repeat over the faulty step at 0.25, and another repeat behind it: the
 * steps after the faulty one never reach the FMU, the second request's
 * neither.
 */
static void repeat_not_plain(int32_t fault, int want)
{
        struct inst *in = start("Misbehave", fault, 0.25);
        struct inst_step s0 = step_at(0.0, NULL, false), rep, rep2;
        struct inst_step_result res;
        double times[6], times2[4];

        grid(times, 1, 5);
        rep = repeat_of(times, 5, NULL);
        grid(times2, 6, 3);
        rep2 = repeat_of(times2, 3, NULL);
        ok(in, inst_post_step(in, &s0));
        ok(in, inst_post_step(in, &rep));
        ok(in, inst_post_step(in, &rep2));
        ok(in, inst_wait_step(in, &res));
        ok(in, inst_wait_step(in, &res));
        cr_assert(eq(int, inst_wait_step(in, &res), want), "%s", inst_message(in));
        for (unsigned j = 0; j < 3 + 3; j++) {
                cr_assert(eq(int, inst_wait_step(in, &res), -ECANCELED), "step %u of the rest", j);
                cr_assert(strstr(inst_message(in), "not run: the step before it did not "
                                 "complete plainly") != NULL, "%s", inst_message(in));
        }
        cr_assert(eq(int, inst_wait_step(in, &res), -EINVAL), "nothing left to wait for");
        cr_assert(eq(int, inst_fault(in), 0), "skipped steps are no fault");
        if (want == INST_DISCARD)
                cr_assert(eq(i32, steps_done(in), 2), "a step behind the discarded one ran");
        cr_assert(eq(int, inst_free(in), 0));
        cr_assert(eq(int, drv_count_children(), 0));
}

Test(instance_chain, nothing_of_a_repeat_runs_behind_a_discarded_step, .timeout = 120)
{
        repeat_not_plain(13, INST_DISCARD);
}

Test(instance_chain, nothing_of_a_repeat_runs_behind_an_error, .timeout = 120)
{
        repeat_not_plain(11, INST_ERROR);
}

Test(instance_chain, a_worker_that_dies_in_a_repeat_faults_the_rest_of_it, .timeout = 120)
{
        struct inst *in = start("Misbehave", 1, 0.25);
        struct inst_step s0 = step_at(0.0, NULL, false), rep;
        struct inst_step_result res;
        double times[5];

        grid(times, 1, 4);
        rep = repeat_of(times, 4, NULL);
        ok(in, inst_post_step(in, &s0));
        ok(in, inst_post_step(in, &rep));
        ok(in, inst_wait_step(in, &res));
        ok(in, inst_wait_step(in, &res));
        cr_assert(eq(int, inst_wait_step(in, &res), -ESRCH), "%s", inst_message(in));
        cr_assert(strstr(inst_message(in), "SIGSEGV") != NULL, "%s", inst_message(in));
        cr_assert(eq(int, inst_wait_step(in, &res), -ESRCH));
        cr_assert(eq(int, inst_wait_step(in, &res), -ESRCH));
        cr_assert(eq(int, inst_wait_step(in, &res), -EINVAL), "nothing left to wait for");
        cr_assert(eq(int, inst_free(in), -ESRCH));
        cr_assert(eq(int, drv_count_children(), 0));
}

Test(instance_chain, a_repeat_that_cannot_be_sent_is_refused_before_it_is, .timeout = 120)
{
        struct inst *in = start("LinearOde", 0, 0);
        struct inst_step s0 = step_at(0.0, NULL, false), rep, bad;
        struct inst_step_result res;
        double times[INST_REPEAT_MAX + 2], times2[INST_CHAIN_MAX];

        grid(times, 1, INST_REPEAT_MAX + 1);
        rep = repeat_of(times, 3, NULL);
        /* Nothing in flight to chain behind. */
        cr_assert(eq(int, inst_post_step(in, &rep), -EAGAIN));
        ok(in, inst_post_step(in, &s0));
        /* A repeat is chained, has its times, and at most INST_REPEAT_MAX steps. */
        bad = rep;
        bad.chained = false;
        cr_assert(eq(int, inst_post_step(in, &bad), -EINVAL));
        bad = rep;
        bad.times = NULL;
        cr_assert(eq(int, inst_post_step(in, &bad), -EINVAL));
        bad = repeat_of(times, INST_REPEAT_MAX + 1, NULL);
        cr_assert(eq(int, inst_post_step(in, &bad), -EINVAL));
        ok(in, inst_post_step(in, &rep));
        /* Behind a repeat, up to INST_CHAIN_MAX steps in flight in all. */
        grid(times2, 4, INST_CHAIN_MAX - 3);
        bad = repeat_of(times2, INST_CHAIN_MAX - 3, NULL);
        cr_assert(eq(int, inst_post_step(in, &bad), -EAGAIN));
        cr_assert(strstr(inst_message(in), "more steps in flight") != NULL, "%s", inst_message(in));
        bad = repeat_of(times2, INST_CHAIN_MAX - 4, NULL);
        ok(in, inst_post_step(in, &bad));
        bad = step_at(0.125 * INST_CHAIN_MAX, NULL, true);
        cr_assert(eq(int, inst_post_step(in, &bad), -EAGAIN));
        for (unsigned j = 0; j < INST_CHAIN_MAX; j++) {
                ok(in, inst_wait_step(in, &res));
                cr_assert(res.last_successful_time == 0.125 * (j + 1), "step %u", j);
        }
        cr_assert(eq(int, inst_fault(in), 0));
        cr_assert(eq(int, inst_free(in), 0));
}
