/*
 * instance: a worker that dies, stops answering or breaks the protocol is
 * reported (-ESRCH with how it died, -ETIMEDOUT, -EPROTO), never hangs or
 * crashes the daemon side, and leaves the other instances usable; and
 * after inst_free() no child process and no descriptor is left.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "engine/instance/inst_int.h"
#include "test_instance_drv.h"
#include "worker/call.h"

#define ok(i, expr) cr_assert(eq(int, (expr), INST_OK), "%s: %s", #expr, inst_message(i))

static int fds_before;

static void setup(void)
{
        fds_before = drv_count_fds();
        cr_assert(eq(int, drv_count_children(), 0));
}

/* Nothing left: no child, every descriptor closed. */
static void hygiene(void)
{
        cr_assert(eq(int, drv_count_children(), 0));
        cr_assert(eq(int, drv_count_fds(), fds_before));
}

static struct inst *start(const char *fmu, inst_iu_fn *iu, void *ctx)
{
        struct inst_opts o;
        struct inst *in;

        drv_opts(&o, fmu);
        o.iu = iu;
        o.iu_ctx = ctx;
        cr_assert(eq(int, inst_new(&o, &in, NULL), 0));
        return in;
}

static void to_step(struct inst *in, const uint32_t *required, size_t n_required)
{
        struct inst_instantiate a = { .required = required, .n_required = n_required };

        ok(in, inst_instantiate(in, &a));
        ok(in, inst_enter_initialization_mode(in, NULL));
        ok(in, inst_exit_initialization_mode(in));
}

/* The signal that ended a process, 0 when it exited. */
static int signal_of(int status)
{
        return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

static int step(struct inst *in, double t)
{
        struct inst_step s = { .t = t, .h = 0.1 };
        struct inst_step_result res;

        return inst_do_step(in, &s, &res);
}

/* The worker is killed in the middle of its doStep (inside an intermediate update). */
static void kill_it(void *ctx, struct inst *in, const struct inst_iu *iu, bool *early, double *t)
{
        (void) ctx;
        (void) iu;
        (void) early;
        (void) t;
        cr_assert(eq(int, kill(inst_pid(in), SIGKILL), 0));
}

Test(instance_fault, a_worker_killed_mid_call_is_reported_dead_with_its_signal, .init = setup,
     .timeout = 120)
{
        static const uint32_t required[] = { 1, 2 };
        struct inst *other = start("LinearOde", NULL, NULL);
        struct inst *in = start("IntermediateProbe", kill_it, NULL);
        int status;

        to_step(other, NULL, 0);
        to_step(in, required, 2);
        cr_assert(eq(int, step(in, 0.0), -ESRCH));
        cr_assert(eq(int, inst_exit_status(in, &status), 0));
        cr_assert(eq(int, signal_of(status), SIGKILL));
        cr_assert(strstr(inst_message(in), "was killed by SIGKILL (killed, signal 9)") != NULL, "%s", inst_message(in));
        /* Sticky, and nothing is sent any more. */
        cr_assert(eq(int, step(in, 0.0), -ESRCH));
        cr_assert(eq(int, inst_reset(in), -ESRCH));
        /* The other instance does not notice. */
        ok(other, step(other, 0.0));
        cr_assert(eq(int, inst_free(in), -ESRCH));
        cr_assert(eq(int, inst_free(other), 0));
        hygiene();
}

Test(instance_fault, a_worker_killed_while_idle_is_reported_on_the_next_call, .init = setup,
     .timeout = 120)
{
        struct inst *in = start("LinearOde", NULL, NULL);
        int status;

        to_step(in, NULL, 0);
        cr_assert(eq(int, kill(inst_pid(in), SIGTERM), 0));
        cr_assert(eq(int, step(in, 0.0), -ESRCH));
        cr_assert(eq(int, inst_exit_status(in, &status), 0));
        cr_assert(eq(int, signal_of(status), SIGTERM));
        cr_assert(eq(int, inst_free(in), -ESRCH));
        hygiene();
}

Test(instance_fault, a_stopped_worker_hits_the_deadline, .init = setup, .timeout = 120)
{
        struct inst *other = start("LinearOde", NULL, NULL);
        struct inst *in = start("LinearOde", NULL, NULL);

        to_step(in, NULL, 0);
        to_step(other, NULL, 0);
        cr_assert(eq(int, kill(inst_pid(in), SIGSTOP), 0));
        inst_next_timeout(in, 300 * 1000000ull);
        cr_assert(eq(int, step(in, 0.0), -ETIMEDOUT));
        cr_assert(strstr(inst_message(in), "did not answer fmi3DoStep within 0.3 s") != NULL);
        cr_assert(eq(int, inst_get(in, MD_FLOAT64, (uint32_t[]){ 1 }, 1, (double[1]){ 0 }, 1),
                     -ETIMEDOUT));
        ok(other, step(other, 0.0));
        /* Freeing kills the stopped worker and reaps it. */
        cr_assert(eq(int, inst_free(in), -ETIMEDOUT));
        cr_assert(eq(int, inst_free(other), 0));
        hygiene();
}

/* ---- A worker that breaks the protocol ------------------------------------ */

static struct inst *start_fake(const char *mode, int *ret_r)
{
        struct inst_opts o;
        struct inst *in = NULL;
        char *why = NULL;

        inst_opts_default(&o);
        o.worker_path = FMUD_FAKE_WORKER;
        o.fmu_dir = mode;
        o.start_timeout_ns = 2000 * 1000000ull;
        *ret_r = inst_new(&o, &in, &why);
        free(why);
        return in;
}

/* A fake worker asked to lock its memory; *ret_why its start's reason (caller frees). */
static struct inst *start_fake_mlock(const char *mode, int *ret_r, char **ret_why)
{
        struct inst_opts o;
        struct inst *in = NULL;

        inst_opts_default(&o);
        o.worker_path = FMUD_FAKE_WORKER;
        o.fmu_dir = mode;
        o.mlock = true;
        o.start_timeout_ns = 2000 * 1000000ull;
        *ret_r = inst_new(&o, &in, ret_why);
        return in;
}

Test(instance_fault, a_memory_lock_report_missing_or_malformed_is_a_protocol_fault,
     .init = setup, .timeout = 120)
{
        struct inst *in;
        char *why = NULL;
        int r;

        cr_assert(start_fake_mlock("mlock-none", &r, &why) == NULL);
        cr_assert(eq(int, r, -EPROTO));
        cr_assert(why && strstr(why, "did not report its memory lock") != NULL, "%s",
                  why ? why : "(none)");
        free(why);
        why = NULL;
        cr_assert(start_fake_mlock("mlock-bad", &r, &why) == NULL);
        cr_assert(eq(int, r, -EPROTO));
        cr_assert(why && strstr(why, "sent a malformed memory lock report") != NULL, "%s",
                  why ? why : "(none)");
        free(why);
        why = NULL;
        /* A refusal is no fault: the instance runs and says why it is not locked. */
        in = start_fake_mlock("mlock-enomem", &r, &why);
        cr_assert(in != NULL, "%d %s", r, why ? why : "");
        cr_assert(eq(int, inst_mlock(in), -ENOMEM));
        cr_assert(eq(int, inst_free(in), 0));
        free(why);
        hygiene();
}

static void hostile(const char *mode, enum md_type type)
{
        struct inst *other = start("LinearOde", NULL, NULL);
        static const uint32_t vr = 1;
        unsigned char values[16];
        struct inst *in;
        int r;

        in = start_fake(mode, &r);
        cr_assert(eq(int, r, 0), "%s", mode);
        r = inst_get(in, type, &vr, 1, values, 1);
        cr_assert(eq(int, r, -EPROTO), "%s: %d %s", mode, r, inst_message(in));
        cr_assert(strstr(inst_message(in), "broke the protocol") != NULL, "%s", inst_message(in));
        cr_assert(eq(int, inst_get(in, type, &vr, 1, values, 1), -EPROTO));
        to_step(other, NULL, 0);
        cr_assert(eq(int, inst_free(in), -EPROTO));
        cr_assert(eq(int, inst_free(other), 0));
}

Test(instance_fault, replies_that_break_the_protocol_give_eproto, .timeout = 120)
{
        static const struct {
                const char *mode;
                enum md_type type;
        } cases[] = {
                { "bad-magic", MD_FLOAT64 },
                { "wrong-seq", MD_FLOAT64 },
                { "wrong-op", MD_FLOAT64 },
                { "side-range", MD_FLOAT64 },
                { "huge-range", MD_FLOAT64 },
                { "count-mismatch", MD_FLOAT64 },
                { "bad-bool", MD_BOOLEAN },
                { "unterminated-string", MD_STRING },
                { "bad-status", MD_FLOAT64 },
                { "bad-error", MD_FLOAT64 },
                { "long-message", MD_FLOAT64 },
                { "log-outside", MD_FLOAT64 },
                { "iu-unasked", MD_FLOAT64 },
                { "garbage", MD_FLOAT64 },
                { "ring-index", MD_FLOAT64 },
                { "ring-rewound", MD_FLOAT64 },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                int fds = drv_count_fds();

                hostile(cases[i].mode, cases[i].type);
                cr_assert(eq(int, drv_count_children(), 0), "%s", cases[i].mode);
                cr_assert(eq(int, drv_count_fds(), fds), "%s", cases[i].mode);
        }
}

Test(instance_fault, a_worker_that_only_sends_events_still_hits_the_deadline, .init = setup,
     .timeout = 120)
{
        static const uint32_t vr = 1;
        struct inst *in;
        double v;
        int r;

        in = start_fake("event-flood", &r);
        cr_assert(eq(int, r, 0));
        inst_next_timeout(in, 500 * 1000000ull);
        /* The call returns at the deadline whether or not the flood has begun by then. */
        cr_assert(eq(int, inst_get(in, MD_FLOAT64, &vr, 1, &v, 1), -ETIMEDOUT));
        cr_assert(strstr(inst_message(in), "did not answer fmi3GetFloat64 within 0.5 s") != NULL, "%s",
                  inst_message(in));
        cr_assert(eq(int, inst_free(in), -ETIMEDOUT));
        hygiene();
}

/* The times of a repeat of three steps, behind a step from 0. */
static const double repeat_times[4] = { 0.125, 0.25, 0.375, 0.5 };

/* A step, and a repeat of three behind it, on a worker broken as mode says; two collected. */
static struct inst *repeat_on(const char *mode, struct inst_step *s0, struct inst_step *rep)
{
        const double *times = repeat_times;
        struct inst_step_result res;
        struct inst *in;
        int r;

        in = start_fake(mode, &r);
        cr_assert(eq(int, r, 0), "%s", mode);
        *s0 = (struct inst_step){ .t = 0.0, .h = 0.125 };
        *rep = (struct inst_step){ .t = times[0], .h = times[1] - times[0], .chained = true,
                                   .repeat = 3, .times = times, .timeout_ns = 500 * 1000000ull };
        cr_assert(eq(int, inst_post_step(in, s0), 0), "%s", inst_message(in));
        cr_assert(eq(int, inst_post_step(in, rep), 0), "%s", inst_message(in));
        cr_assert(eq(int, inst_wait_step(in, &res), INST_OK), "%s", inst_message(in));
        cr_assert(eq(int, inst_wait_step(in, &res), INST_OK), "%s", inst_message(in));
        return in;
}

Test(instance_fault, a_repeat_the_worker_does_not_finish_hits_the_deadline, .init = setup,
     .timeout = 120)
{
        struct inst_step s0, rep;
        struct inst_step_result res;
        struct inst *in = repeat_on("repeat-short", &s0, &rep);

        /* Its second step's deadline counts from when the wait for it starts. */
        cr_assert(eq(int, inst_wait_step(in, &res), -ETIMEDOUT), "%s", inst_message(in));
        cr_assert(strstr(inst_message(in), "within 0.5 s") != NULL, "%s", inst_message(in));
        cr_assert(eq(int, inst_wait_step(in, &res), -ETIMEDOUT), "the rest of the repeat");
        cr_assert(eq(int, inst_wait_step(in, &res), -EINVAL), "nothing left to wait for");
        cr_assert(eq(int, inst_free(in), -ETIMEDOUT));
        hygiene();
}

Test(instance_fault, a_reply_for_another_step_of_a_repeat_gives_eproto, .init = setup,
     .timeout = 120)
{
        struct inst_step s0, rep;
        struct inst_step_result res;
        struct inst *in = repeat_on("repeat-seq", &s0, &rep);

        cr_assert(eq(int, inst_wait_step(in, &res), -EPROTO), "%s", inst_message(in));
        cr_assert(strstr(inst_message(in), "a message for another request") != NULL, "%s",
                  inst_message(in));
        cr_assert(eq(int, inst_wait_step(in, &res), -EPROTO), "the rest of the repeat");
        cr_assert(eq(int, inst_free(in), -EPROTO));
        hygiene();
}

/*
 * A one-shot deadline set while a repeat is being collected belongs to the
 * next call: collecting the repeat's later steps restarts their deadlines
 * and must not use it up.
 */
Test(instance_fault, a_one_shot_deadline_set_during_a_repeat_is_kept_for_the_next_call,
     .init = setup, .timeout = 120)
{
        const double *times = repeat_times;
        struct inst *in = start("LinearOde", NULL, NULL);
        struct inst_step s0 = { .t = 0.0, .h = 0.125 };
        struct inst_step rep = { .t = times[0], .h = times[1] - times[0], .chained = true,
                                 .repeat = 3, .times = times };
        struct inst_step_result res;
        double v;

        to_step(in, NULL, 0);
        /* Were the one-shot lost, the call below would end after 3 s and say so. */
        inst_set_timeout(in, 3000 * 1000000ull);
        ok(in, inst_post_step(in, &s0));
        ok(in, inst_post_step(in, &rep));
        ok(in, inst_wait_step(in, &res));
        ok(in, inst_wait_step(in, &res));
        inst_next_timeout(in, 300 * 1000000ull);
        ok(in, inst_wait_step(in, &res));
        ok(in, inst_wait_step(in, &res));
        cr_assert(eq(int, kill(inst_pid(in), SIGSTOP), 0));
        cr_assert(eq(int, inst_get(in, MD_FLOAT64, (uint32_t[]){ 1 }, 1, &v, 1), -ETIMEDOUT));
        cr_assert(strstr(inst_message(in), "did not answer fmi3GetFloat64 within 0.3 s") != NULL,
                  "%s", inst_message(in));
        cr_assert(eq(int, inst_free(in), -ETIMEDOUT));
        hygiene();
}

Test(instance_fault, workers_that_cannot_start_leave_nothing_behind, .init = setup, .timeout = 120)
{
        struct inst_opts o;
        struct inst *in;
        char *why = NULL;
        int r;

        cr_assert(start_fake("bad-hello", &r) == NULL);
        cr_assert(eq(int, r, -EPROTO));
        cr_assert(start_fake("no-hello", &r) == NULL);
        cr_assert(eq(int, r, -ETIMEDOUT));
        cr_assert(start_fake("exit-hello", &r) == NULL);
        cr_assert(eq(int, r, -ESRCH));
        drv_opts(&o, "LinearOde");
        o.worker_path = "/nonexistent/fmud-worker";
        cr_assert(eq(int, inst_new(&o, &in, &why), -ENOENT));
        free(why);
        drv_opts(&o, "NoSuchFmu");
        cr_assert(eq(int, inst_new(&o, &in, &why), -ENOENT));
        cr_assert(why && strstr(why, "NoSuchFmu") != NULL, "%s", why ? why : "(none)");
        free(why);
        drv_opts(&o, "MissingSymbol");
        cr_assert(eq(int, inst_new(&o, &in, &why), -ENOSYS));
        cr_assert(why && strstr(why, "fmi3DoStep") != NULL, "%s", why ? why : "(none)");
        free(why);
        hygiene();
}

Test(instance_fault, free_leaves_no_child_and_no_descriptor, .init = setup, .timeout = 120)
{
        struct inst *a = start("LinearOde", NULL, NULL), *b = start("Feedthrough", NULL, NULL);
        int fds = drv_count_fds();

        cr_assert(fds > fds_before, "%d descriptors with two workers, %d before", fds, fds_before);
        cr_assert(eq(int, drv_count_children(), 2));
        to_step(a, NULL, 0);
        ok(a, step(a, 0.0));
        /* b is freed without ever being instantiated. */
        cr_assert(eq(int, inst_free(b), 0));
        cr_assert(eq(int, inst_free(a), 0));
        hygiene();
        /* A clean exit is reported as such. */
        a = start("BouncingBall", NULL, NULL);
        to_step(a, NULL, 0);
        cr_assert(eq(int, inst_free(a), 0));
        hygiene();
}

Test(instance_fault, last_words_are_parsed_strictly)
{
        static const char *const bad[] = {
                "", "signal 11", "signal 11 code 1 address 0x0 limit 0 near 1 ",
                "signal +11 code 1 address 0x0 limit 0 near 1",
                "signal  11 code 1 address 0x0 limit 0 near 1",
                "signal 0 code 1 address 0x0 limit 0 near 1",
                "signal 65 code 1 address 0x0 limit 0 near 1",
                "signal 11 code 99999999999 address 0x0 limit 0 near 1",
                "signal 11 code -2147483648 address 0x0 limit 0 near 1",
                "signal 11 code 1 address 0x10000000000000000 limit 0 near 1",
                "signal 11 code 1 address 0xABC limit 0 near 1",
                "signal 11 code 1 address 0x0 limit 18446744073709551616 near 1",
                "signal 11 code 1 address 0x0 limit 0 near 2",
                "signal 11 code 1 address 0x0 limit 0 near 01",
                "signal 11 code 1 address 0x limit 0 near 1",
        };
        struct inst_last_words w;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                cr_assert(fault_parse_words(bad[i], &w) == false, "accepted '%s'", bad[i]);
        cr_assert(fault_parse_words("signal 11 code -6 address 0xdeadbeef limit "
                                    "18446744073709551615 near 1", &w));
        cr_assert(w.valid && w.sig == 11 && w.code == -6 && w.addr == 0xdeadbeefu &&
                  w.limit == UINT64_MAX && w.near_limit);
        cr_assert(fault_parse_words("signal 7 code 2 address 0xffffffffffffffff limit 0 near 0", &w));
        cr_assert(w.sig == 7 && w.code == 2 && w.addr == UINT64_MAX && w.limit == 0 &&
                  w.near_limit == false);
}
