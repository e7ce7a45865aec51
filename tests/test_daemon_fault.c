/*
 * daemon_fault: what status says about a session whose worker dies or
 * hangs: the instance's fault names the cause (the signal, the missed
 * deadline) without an errno prefix, and while a step hangs, time is the
 * point the session is at, not where the host's last chunk of points
 * began. Through libfmud against a real fmud (daemon_fixture.h).
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon_fixture.h"

static struct fmud_daemon d;
static struct fmud *c;

static void setup(void)
{
        daemon_start(&d, NULL);
        c = daemon_connect(&d);
}

static void teardown(void)
{
        fmud_close(c);
        c = NULL;
        daemon_stop(&d);
}

static void nap_ms(long ms)
{
        struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

        while (nanosleep(&ts, &ts) < 0)
                ;
}

/* "worker N ..." as the instance's own text, nothing before it. */
static void assert_fault_names(const struct proto_inst_status *in, const char *cause)
{
        char text[1100];

        snprintf(text, sizeof(text), "%.*s", (int)in->fault.len, in->fault.ptr);
        cr_assert(strncmp(text, "worker ", 7) == 0, "fault '%s'", text);
        cr_assert(strstr(text, cause), "fault '%s' does not say '%s'", text, cause);
        cr_assert(!strstr(text, "No such process") && !strstr(text, "timed out") &&
                  !strstr(text, "Timer expired"), "fault '%s' has an errno text", text);
}

Test(daemon_fault, a_killed_worker_is_named_by_its_signal, .init = setup, .fini = teardown)
{
        struct proto_load a = { .path = daemon_str(FMUD_MASTER_FMU_DIR "/Scripted.fmu") };
        struct proto_target t = { daemon_load(c, &a, NULL), 0 };
        struct proto_session_status st;
        pid_t pid;

        cr_assert(fmud_step(c, &t, 1, NULL) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_status(c, t.session, &st) == 0, "%s", fmud_errmsg(c));
        pid = (pid_t)st.insts[0].pid;
        cr_assert(pid > 0 && kill(pid, SIGKILL) == 0);
        (void) fmud_step(c, &t, 1, NULL);
        daemon_wait_state(c, t.session, PROTO_STATE_FAULTED, &st);
        assert_fault_names(&st.insts[0], "SIGKILL");
}

/*
 * Scripted as fast as possible in steps of 0.01, its step at t = 1 hanging
 * far longer than the 3 s budget: while it hangs the session is at t = 1
 * (the host steps many points per call by then), and status says so; then
 * the budget ends it there, and the fault names the missed deadline.
 */
Test(daemon_fault, status_shows_the_point_a_hanging_step_started_from, .init = setup,
     .fini = teardown)
{
        struct proto_assign starts[] = {
                { daemon_str("sleep_at"), daemon_str("0.995") },
                { daemon_str("sleep_ms"), daemon_str("60000") },
        };
        struct proto_load a = {
                .path = daemon_str(FMUD_MASTER_FMU_DIR "/Scripted.fmu"),
                .has_stop = true, .stop = 2.0, .has_step = true, .step = 0.01,
                .has_budget = true, .budget = 3.0, .n_starts = 2, .starts = starts,
        };
        struct proto_session_status st;
        uint64_t s = daemon_load(c, &a, NULL);
        bool seen = false;

        cr_assert(fmud_start(c, &(struct proto_target){ s, 0 }, NULL) == 0, "%s",
                  fmud_errmsg(c));
        /* Polled until the fault: a hang guard, not a measure. */
        for (int i = 0; i < 6000; i++) {
                cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
                if (st.state != PROTO_STATE_RUNNING)
                        break;
                cr_assert(st.time <= 1.0, "t %.17g while the step at 1 hangs", st.time);
                seen |= st.time == 1.0 && st.points == 100;
                nap_ms(5);
        }
        cr_assert(st.state == PROTO_STATE_FAULTED, "%s", proto_state_name(st.state));
        cr_assert(seen, "status never showed t = 1 while the step there hung");
        cr_assert(st.time == 1.0, "faulted at t %.17g", st.time);
        assert_fault_names(&st.insts[0], "did not answer");
}

/* Load Misbehave with its licence check (fault 23): 0, or the load's error with its message. */
static int load_licensed(struct fmud *cl, char *msg, size_t size)
{
        struct proto_assign starts[] = { { daemon_str("fault"), daemon_str("23") } };
        struct proto_load a = { .path = daemon_str(FMUD_TEST_FMU_DIR "/Misbehave.fmu"),
                                .n_starts = 1, .starts = starts };
        uint64_t s;
        int r = fmud_load(cl, &a, &s, NULL);

        snprintf(msg, size, "%s", r ? fmud_errmsg(cl) : "");
        return r;
}

/*
 * A worker starts from a clean environment: a variable of the daemon's
 * reaches it only where [sandbox] pass_env (--pass-env) names it, and a
 * sandboxed worker's HOME is its scratch directory.
 */
Test(daemon_fault, a_worker_gets_only_the_environment_the_daemon_passes)
{
        char msg[1024];

        cr_assert(setenv("FMUD_MISBEHAVE_ENV", "2.5", 1) == 0);
        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        cr_assert(load_licensed(c, msg, sizeof(msg)) != 0);
        cr_assert(strstr(msg, "FMUD_MISBEHAVE_ENV is not set") != NULL, "%s", msg);
        teardown();
        daemon_start(&d, (const char *const[]){ "--pass-env", "HOME FMUD_MISBEHAVE_ENV", NULL });
        c = daemon_connect(&d);
        cr_assert(load_licensed(c, msg, sizeof(msg)) == 0, "%s", msg);
        teardown();
}
