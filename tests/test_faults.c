/*
 * faults: an FMU that misbehaves (tests/fmus/Misbehave) hurts only its
 * own worker. Each way to fail gets its exact report: the signal by name
 * with the call it interrupted, the exit status, the missed deadline, the
 * address-space limit, the FMU's status with its last messages, a log
 * flood counted, garbage in the channel as a protocol fault; another
 * instance keeps working throughout, and after inst_free() no process,
 * descriptor or channel mapping is left.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test_instance_drv.h"
#include "worker/call.h"

#define ok(i, expr) cr_assert((expr) == INST_OK, "%s: %s", #expr, inst_message(i))
#define VR_FAULT        4u
#define VR_AT           5u
#define VR_COUNT        6u
#define MS              1000000ull

struct logs {
        unsigned fmu;           /* messages of the FMU that reached the callback */
        unsigned fmud;          /* the daemon side's own notes ("... not forwarded") */
        char last[CALL_MSG_MAX + 1];
};

static int fds_before;
/* The workers' environment; NULL: empty. */
static char *const *worker_env;

static void setup(void)
{
        fds_before = drv_count_fds();
        cr_assert(drv_count_children() == 0);
}

static void on_log(void *ctx, struct inst *in, int status, const char *category, const char *msg)
{
        struct logs *lg = ctx;

        (void) in;
        (void) status;
        if (!strcmp(category, "fmud")) {
                lg->fmud++;
                return;
        }
        lg->fmu++;
        snprintf(lg->last, sizeof(lg->last), "%s", msg);
}

/* Whether this process still maps a channel named name (memfd:name). */
static bool maps_channel(const char *name)
{
        char line[1024], want[128];
        bool found = false;
        FILE *f = fopen("/proc/self/maps", "r");

        cr_assert(f != NULL);
        snprintf(want, sizeof(want), "/memfd:%s ", name);
        while (fgets(line, sizeof(line), f))
                if (strstr(line, want))
                        found = true;
        fclose(f);
        return found;
}

/* Nothing left of a freed worker: process, descriptors, mapping. */
static void hygiene(pid_t pid, const char *name)
{
        cr_assert(kill(pid, 0) == -1 && errno == ESRCH, "worker %d still exists", (int)pid);
        cr_assert(drv_count_children() == 0);
        cr_assert(drv_count_fds() == fds_before, "%d descriptors, %d before", drv_count_fds(),
                  fds_before);
        cr_assert(!maps_channel(name), "channel '%s' still mapped", name);
}

static void to_step(struct inst *in)
{
        struct inst_instantiate a = { .logging_on = true };

        ok(in, inst_instantiate(in, &a));
        ok(in, inst_enter_initialization_mode(in, NULL));
        ok(in, inst_exit_initialization_mode(in));
}

static struct inst *start(const char *fmu, const char *name, struct logs *lg, uint64_t timeout_ns)
{
        struct inst_opts o;
        struct inst *in;
        char *why = NULL;
        int r;

        drv_opts(&o, fmu);
        o.name = name;
        o.timeout_ns = timeout_ns;
        o.envp = worker_env;
        o.log = lg ? on_log : NULL;
        o.log_ctx = lg;
        r = inst_new(&o, &in, &why);
        cr_assert(r == 0, "inst_new(%s): %d %s", fmu, r, why ? why : "");
        return in;
}

/* Misbehave with fault from time at (count: fault 14's messages), in Step Mode. */
static struct inst *misbehave(const char *name, int32_t fault, double at, int32_t count,
                              struct logs *lg, uint64_t timeout_ns)
{
        struct inst *in = start("Misbehave", name, lg, timeout_ns);
        struct inst_instantiate a = { .logging_on = true };

        ok(in, inst_instantiate(in, &a));
        ok(in, inst_set(in, MD_INT32, (uint32_t[]){ VR_FAULT }, 1, &fault, 1));
        ok(in, inst_set(in, MD_FLOAT64, (uint32_t[]){ VR_AT }, 1, &at, 1));
        ok(in, inst_set(in, MD_INT32, (uint32_t[]){ VR_COUNT }, 1, &count, 1));
        ok(in, inst_enter_initialization_mode(in, NULL));
        ok(in, inst_exit_initialization_mode(in));
        return in;
}

static int step(struct inst *in, double t, struct inst_step_result *res)
{
        struct inst_step s = { .t = t, .h = 0.1 };
        struct inst_step_result tmp;

        return inst_do_step(in, &s, res ? res : &tmp);
}

/* A bystander: a LinearOde instance that must not notice anything. */
static struct inst *bystander(void)
{
        struct inst *in = start("LinearOde", "bystander", NULL, 0);

        to_step(in);
        ok(in, step(in, 0.0, NULL));
        return in;
}

static void bystander_done(struct inst *in)
{
        double x;

        ok(in, step(in, 0.1, NULL));
        ok(in, inst_get(in, MD_FLOAT64, (uint32_t[]){ 1 }, 1, &x, 1));
        cr_assert(x > 0.0 && x < 1.0, "x = %g", x);
        cr_assert(inst_free(in) == 0);
}

/* Two good steps, then the fault at t = 0.2 kills the worker: how, and nothing left. */
static void dies(int32_t fault, int want_sig, int want_exit, const char *text)
{
        struct inst *other = bystander();
        struct inst *in = misbehave("mis-dies", fault, 0.2, 0, NULL, 0);
        pid_t pid = inst_pid(in);
        int r, status;

        ok(in, step(in, 0.0, NULL));
        ok(in, step(in, 0.1, NULL));
        r = step(in, 0.2, NULL);
        cr_assert(r == -ESRCH, "fault %d: %d %s", fault, r, inst_message(in));
        cr_assert(inst_exit_status(in, &status) == 0);
        if (want_sig)
                cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == want_sig, "status %#x", status);
        else
                cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == want_exit, "status %#x",
                          status);
        cr_assert(strstr(inst_message(in), text) != NULL, "%s", inst_message(in));
        cr_assert(strstr(inst_message(in), "during fmi3DoStep") != NULL, "%s", inst_message(in));
        /* Sticky, nothing sent any more; the bystander goes on. */
        cr_assert(step(in, 0.2, NULL) == -ESRCH);
        cr_assert(inst_health(in) == -ESRCH);
        bystander_done(other);
        cr_assert(inst_free(in) == -ESRCH);
        hygiene(pid, "mis-dies");
}

Test(faults, sigsegv_is_reported_by_name_with_the_faulting_address, .init = setup)
{
        dies(1, SIGSEGV, 0, "killed by SIGSEGV (segmentation fault, signal 11) during fmi3DoStep; "
             "faulting address 0x0");
}

Test(faults, a_crash_while_instantiating_has_last_words_too, .init = setup)
{
        struct inst *other = bystander();
        struct inst *in = start("Misbehave", "misbehave-crash-at-instantiation", NULL, 0);
        struct inst_instantiate a = { .logging_on = true };
        pid_t pid = inst_pid(in);
        int r = inst_instantiate(in, &a);

        cr_assert(r == -ESRCH, "%d %s", r, inst_message(in));
        cr_assert(strstr(inst_message(in), "killed by SIGSEGV (segmentation fault, signal 11) during "
                         "fmi3InstantiateCoSimulation; faulting address 0x0") != NULL, "%s",
                  inst_message(in));
        bystander_done(other);
        cr_assert(inst_free(in) == -ESRCH);
        hygiene(pid, "misbehave-crash-at-instantiation");
}

Test(faults, abort_is_reported_as_sigabrt, .init = setup)
{
        dies(2, SIGABRT, 0, "killed by SIGABRT (aborted, signal 6)");
}

Test(faults, a_division_by_zero_is_reported_as_sigfpe, .init = setup)
{
        dies(3, SIGFPE, 0, "killed by SIGFPE (floating point exception, signal 8)");
}

Test(faults, a_bus_error_is_reported_as_sigbus, .init = setup)
{
        dies(4, SIGBUS, 0, "killed by SIGBUS (bus error, signal 7)");
}

Test(faults, an_illegal_instruction_is_reported_as_sigill, .init = setup)
{
        dies(5, SIGILL, 0, "killed by SIGILL (illegal instruction, signal 4)");
}

Test(faults, exit_in_the_fmu_is_reported_with_its_status, .init = setup)
{
        dies(6, 0, 3, "the FMU exited the worker with status 3 during fmi3DoStep");
}

Test(faults, underscore_exit_in_the_fmu_is_reported_with_its_status, .init = setup)
{
        dies(7, 0, 4, "the FMU exited the worker with status 4 during fmi3DoStep");
}

/* A step that never returns: killed at the deadline (300 ms here), with its process group. */
static void hangs(int32_t fault)
{
        struct inst *other = bystander();
        struct inst *in = misbehave("mis-hangs", fault, 0.1, 0, NULL, 300 * MS);
        pid_t pid = inst_pid(in);
        int r, status;

        ok(in, step(in, 0.0, NULL));
        r = step(in, 0.1, NULL);
        cr_assert(r == -ETIMEDOUT, "fault %d: %d %s", fault, r, inst_message(in));
        cr_assert(strstr(inst_message(in), "did not answer fmi3DoStep within 0.3 s; killed") != NULL,
                  "%s", inst_message(in));
        /* Killed at once, not at inst_free(): the CPU is free again. */
        cr_assert(inst_exit_status(in, &status) == 0);
        cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "status %#x", status);
        cr_assert(inst_get(in, MD_FLOAT64, (uint32_t[]){ 2 }, 1, (double[1]){ 0 }, 1) == -ETIMEDOUT);
        bystander_done(other);
        cr_assert(inst_free(in) == -ETIMEDOUT);
        hygiene(pid, "mis-hangs");
}

Test(faults, an_endless_loop_is_killed_at_the_deadline, .init = setup)
{
        hangs(8);
}

Test(faults, a_deadlock_is_killed_at_the_deadline, .init = setup)
{
        hangs(9);
}

Test(faults, error_reports_the_status_and_the_last_messages, .init = setup)
{
        struct logs lg = { 0 };
        struct inst *in = misbehave("mis-error", 11, 0.1, 0, &lg, 0);
        pid_t pid = inst_pid(in);
        char recent[2048];

        ok(in, step(in, 0.0, NULL));
        cr_assert(step(in, 0.1, NULL) == INST_ERROR);
        cr_assert(strstr(inst_message(in), "the second of two messages at t = 0.1") != NULL, "%s",
                  inst_message(in));
        cr_assert(inst_recent_logs(in, NULL, recent, sizeof(recent)) == 2);
        cr_assert(!strcmp(recent, "[Warning] logStatusWarning: misbehave: the first of two messages "
                          "at t = 0.1; [Error] logStatusError: misbehave: the second of two "
                          "messages at t = 0.1"), "%s", recent);
        /* The one equal to the message is left out. */
        cr_assert(inst_recent_logs(in, inst_message(in), recent, sizeof(recent)) == 1);
        /* Terminated by its Error: the worker refuses another step. */
        cr_assert(step(in, 0.2, NULL) == -EPERM, "%s", inst_message(in));
        cr_assert(inst_health(in) == 0);
        cr_assert(inst_free(in) == 0);
        hygiene(pid, "mis-error");
}

Test(faults, fatal_is_final, .init = setup)
{
        static char *const quiet[] = { "ASAN_OPTIONS=detect_leaks=0", NULL };
        struct logs lg = { 0 };
        struct inst *in;
        pid_t pid;
        double x;

        /* After Fatal the FMU instance is never freed: a leak checker in the worker would say so. */
        worker_env = quiet;
        in = misbehave("mis-fatal", 12, 0.0, 0, &lg, 0);
        pid = inst_pid(in);

        cr_assert(step(in, 0.0, NULL) == INST_FATAL);
        cr_assert(strstr(inst_message(in), "misbehave: fatal at t = 0") != NULL, "%s",
                  inst_message(in));
        /* Never called again: not even a get, not even fmi3FreeInstance. */
        cr_assert(inst_get(in, MD_FLOAT64, (uint32_t[]){ 2 }, 1, &x, 1) == -ENOTRECOVERABLE);
        cr_assert(step(in, 0.0, NULL) == -ENOTRECOVERABLE);
        cr_assert(inst_reset(in) == -ENOTRECOVERABLE);
        cr_assert(lg.fmu == 1, "%u messages", lg.fmu);
        cr_assert(inst_free(in) == 0);
        hygiene(pid, "mis-fatal");
}

Test(faults, discard_reports_where_the_step_got, .init = setup)
{
        struct logs lg = { 0 };
        struct inst *in = misbehave("mis-discard", 13, 0.1, 0, &lg, 0);
        struct inst_step_result res;
        pid_t pid = inst_pid(in);

        ok(in, step(in, 0.0, NULL));
        cr_assert(step(in, 0.1, &res) == INST_DISCARD);
        cr_assert(res.phase == INST_PHASE_STEP);
        cr_assert(res.last_successful_time == 0.1, "%.17g", res.last_successful_time);
        cr_assert(!strcmp(lg.last, "misbehave: step discarded at t = 0.1"), "%s", lg.last);
        cr_assert(inst_free(in) == 0);
        hygiene(pid, "mis-discard");
}

/* The daemon's resident memory in kB. */
static long rss_kb(void)
{
        char line[256];
        long kb = -1;
        FILE *f = fopen("/proc/self/status", "r");

        cr_assert(f != NULL);
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
                        break;
        fclose(f);
        cr_assert(kb >= 0, "no VmRSS in /proc/self/status");
        return kb;
}

Test(faults, a_log_flood_is_bounded_and_counted, .init = setup)
{
        const int32_t n = 1000000;
        struct logs lg = { 0 };
        struct inst *in = misbehave("mis-flood", 14, 0.1, n, &lg, 0);
        pid_t pid = inst_pid(in);
        long rss0 = rss_kb();
        int32_t steps;
        double x;

        ok(in, step(in, 0.0, NULL));
        ok(in, step(in, 0.1, NULL));
        /* At most CALL_LOGS_PER_CALL reach the callback; every other one is counted. */
        cr_assert(lg.fmu == CALL_LOGS_PER_CALL, "%u forwarded", lg.fmu);
        cr_assert(inst_logs_dropped(in) == (uint64_t)n - CALL_LOGS_PER_CALL, "%llu dropped",
                  (unsigned long long)inst_logs_dropped(in));
        cr_assert(lg.fmud == 1);
        cr_assert(rss_kb() - rss0 < 8192, "the daemon grew by %ld kB", rss_kb() - rss0);
        /* The step completed: the instance works on. */
        ok(in, inst_get(in, MD_INT32, (uint32_t[]){ 3 }, 1, &steps, 1));
        cr_assert(steps == 2);
        ok(in, inst_get(in, MD_FLOAT64, (uint32_t[]){ 2 }, 1, &x, 1));
        cr_assert(inst_free(in) == 0);
        hygiene(pid, "mis-flood");
}

Test(faults, garbage_in_the_channel_faults_only_that_worker, .init = setup)
{
        struct inst *other = bystander();
        struct inst *in = misbehave("mis-garbage", 15, 0.1, 0, NULL, 2000 * MS);
        pid_t pid = inst_pid(in);
        int r, status;

        ok(in, step(in, 0.0, NULL));
        r = step(in, 0.1, NULL);
        cr_assert(r == -EPROTO, "%d %s", r, inst_message(in));
        cr_assert(strstr(inst_message(in), "broke the protocol") != NULL, "%s", inst_message(in));
        /* Never trusted again: killed at once. */
        cr_assert(inst_exit_status(in, &status) == 0);
        cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "status %#x", status);
        bystander_done(other);
        cr_assert(inst_free(in) == -EPROTO);
        hygiene(pid, "mis-garbage");
}

Test(faults, out_of_memory_is_reported_with_the_limit, .init = setup)
{
        struct inst_instantiate a = { .logging_on = true };
        struct inst_opts o;
        struct inst *in;
        char *why = NULL;
        int32_t fault = 10;
        double at = 0.1;
        pid_t pid;
        int r;

#if defined(__SANITIZE_ADDRESS__)
        /* The sandbox adds the sanitizer's reservations to the limit: no 256 MiB to reach. */
        cr_skip_test("address-space limits are not meaningful under AddressSanitizer");
#endif
        drv_opts(&o, "Misbehave");
        o.name = "mis-oom";
        o.sandbox.mode = SANDBOX_BASIC;
        o.sandbox.mem_limit = 256ull << 20;
        r = inst_new(&o, &in, &why);
        cr_assert(r == 0, "%d %s", r, why ? why : "");
        pid = inst_pid(in);
        ok(in, inst_instantiate(in, &a));
        ok(in, inst_set(in, MD_INT32, (uint32_t[]){ VR_FAULT }, 1, &fault, 1));
        ok(in, inst_set(in, MD_FLOAT64, (uint32_t[]){ VR_AT }, 1, &at, 1));
        ok(in, inst_enter_initialization_mode(in, NULL));
        ok(in, inst_exit_initialization_mode(in));
        ok(in, step(in, 0.0, NULL));
        cr_assert(step(in, 0.1, NULL) == INST_ERROR, "%s", inst_message(in));
        cr_assert(strstr(inst_message(in), "out of memory (address-space limit 256 MiB reached): "
                         "allocation failed after") != NULL, "%s", inst_message(in));
        cr_assert(inst_free(in) == 0);
        hygiene(pid, "mis-oom");
}

Test(faults, a_global_state_fmu_instantiated_many_times_works, .init = setup)
{
        struct inst *in[8];
        pid_t pid[8];

        for (int i = 0; i < 8; i++) {
                in[i] = start("GlobalCounter", "global", NULL, 0);
                pid[i] = inst_pid(in[i]);
                to_step(in[i]);
        }
        for (int k = 0; k < 3; k++)
                for (int i = 0; i < 8; i++)
                        ok(in[i], step(in[i], 0.1 * k, NULL));
        for (int i = 0; i < 8; i++) {
                int64_t count, local;

                ok(in[i], inst_get(in[i], MD_INT64, (uint32_t[]){ 1 }, 1, &count, 1));
                ok(in[i], inst_get(in[i], MD_INT64, (uint32_t[]){ 2 }, 1, &local, 1));
                /* One process each: the "global" counter sees only this instance's steps. */
                cr_assert(count == 3 && local == 3, "instance %d: count %lld, local %lld", i,
                          (long long)count, (long long)local);
        }
        for (int i = 0; i < 8; i++)
                cr_assert(inst_free(in[i]) == 0);
        for (int i = 0; i < 8; i++)
                hygiene(pid[i], "global");
}

Test(faults, the_supervisor_notices_an_idle_worker_die, .init = setup)
{
        struct inst *in = start("LinearOde", "idle", NULL, 0);
        pid_t pid = inst_pid(in);
        struct timespec ms = { 0, 1000000 };
        int status, i;

        to_step(in);
        ok(in, step(in, 0.0, NULL));
        cr_assert(inst_health(in) == 0);
        cr_assert(kill(pid, SIGKILL) == 0);
        /* No call in flight: only the supervisor can tell (a bound, not a timing check). */
        for (i = 0; i < 20000 && inst_health(in) == 0; i++)
                nanosleep(&ms, NULL);
        cr_assert(inst_health(in) == -ESRCH);
        /* Not reaped by the supervisor: the owner reaps, once. */
        cr_assert(inst_exit_status(in, &status) == -EAGAIN);
        cr_assert(step(in, 0.1, NULL) == -ESRCH);
        cr_assert(strstr(inst_message(in), "was killed by SIGKILL (killed, signal 9) between calls")
                  != NULL, "%s", inst_message(in));
        cr_assert(inst_exit_status(in, &status) == 0);
        cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        cr_assert(inst_free(in) == -ESRCH);
        hygiene(pid, "idle");
}

Test(faults, service_time_is_measured_in_the_worker, .init = setup)
{
        struct inst *in = start("LinearOde", "service", NULL, 0);
        struct inst_step_result res;
        uint64_t steps = 1, ns = 1, sum = 0;
        pid_t pid = inst_pid(in);

        to_step(in);
        cr_assert(inst_service_stats(in, &steps, &ns) == 0);
        cr_assert(steps == 0 && ns == 0);
        for (int k = 0; k < 20; k++) {
                ok(in, step(in, 0.1 * k, &res));
                sum += res.service_ns;
        }
        cr_assert(inst_service_stats(in, &steps, &ns) == 0);
        cr_assert(steps == 20, "%llu steps", (unsigned long long)steps);
        cr_assert(ns == sum && ns > 0, "%llu ns, %llu summed", (unsigned long long)ns,
                  (unsigned long long)sum);
        cr_assert(inst_free(in) == 0);
        hygiene(pid, "service");
}
