/*
 * daemon: unloading a session whose worker hangs (stopped with SIGSTOP,
 * or asleep in a step) kills and reaps it when unload answers; the worker
 * is not first waited for until a call's deadline or the step's budget.
 * The deadline and the budget are made far longer than the client's reply
 * timeout, so waiting for them fails the test.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon_fixture.h"
#include "support/run.h"

/* Whether pid is stopped: /proc/PID/stat's state, after the last ')', is 'T'. */
static bool is_stopped(pid_t pid)
{
        char path[64], buf[512] = "", *p;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        f = fopen(path, "r");
        if (!f)
                return false;
        if (!fgets(buf, sizeof(buf), f))
                buf[0] = '\0';
        fclose(f);
        p = strrchr(buf, ')');
        return p && p[1] == ' ' && p[2] == 'T';
}

Test(daemon_unload_hung, a_stopped_worker_is_killed_not_waited_for, .timeout = 120)
{
        static const char conf[] = "[limits]\ncall_timeout = 100000\n";
        struct proto_load a = { .path = daemon_str(FMUD_TEST_FMU_DIR "/Feedthrough.fmu") };
        struct proto_session_status st;
        struct fmud_daemon d;
        struct fmud *c;
        char *log;
        uint64_t s;
        pid_t pid;

        daemon_start_conf(&d, conf);
        c = daemon_connect(&d);
        cr_assert(eq(int, fmud_load(c, &a, &s, NULL), 0), "%s", fmud_errmsg(c));
        cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
        pid = (pid_t)st.insts[0].pid;
        cr_assert(pid > 0 && daemon_pid_alive(pid));
        cr_assert(eq(int, kill(pid, SIGSTOP), 0));
        /* SIGSTOP takes effect a little after kill() returns (a hang guard, not a measure). */
        for (int i = 0; i < 10000 && !is_stopped(pid); i++)
                usleep(1000);
        cr_assert(is_stopped(pid));
        cr_assert(eq(int, fmud_unload(c, &(struct proto_target){ s, 0 }), 0), "%s",
                  fmud_errmsg(c));
        /* Reaped when unload answers, and not by a call that ran out of time. */
        cr_assert(daemon_pid_alive(pid) == false);
        log = daemon_log(&d);
        cr_assert(strstr(log, "did not answer") == NULL, "%s", log);
        free(log);
        fmud_close(c);
        daemon_stop(&d);
}

/*
 * Scripted asleep in its step at 0.05 for an hour, with a step budget
 * (INFINITY: none), in a session of client c (transient: leased to c).
 * Returns the session; *ret_pid its worker.
 */
static uint64_t asleep_budget(struct fmud *c, bool transient, double budget, pid_t *ret_pid)
{
        struct proto_assign starts[] = {
                { daemon_str("sleep_at"), daemon_str("0.05") },
                { daemon_str("sleep_ms"), daemon_str("3600000") },
        };
        struct proto_load a = {
                .path = daemon_str(FMUD_MASTER_FMU_DIR "/Scripted.fmu"),
                .has_stop = true, .stop = 2.0, .has_step = true, .step = 0.01,
                .has_budget = true, .budget = budget, .n_starts = 2, .starts = starts,
                .transient = transient,
        };
        struct proto_session_status st;
        uint64_t s;

        cr_assert(eq(int, fmud_load(c, &a, &s, NULL), 0), "%s", fmud_errmsg(c));
        cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
        *ret_pid = (pid_t)st.insts[0].pid;
        cr_assert(fmud_start(c, &(struct proto_target){ s, 0 }, NULL) == 0, "%s", fmud_errmsg(c));
        /* Until the step at 0.05 is under way (a hang guard, not a measure). */
        for (int i = 0; i < 20000; i++) {
                cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
                if (st.time >= 0.05)
                        break;
                usleep(1000);
        }
        cr_assert(st.state == PROTO_STATE_RUNNING && st.time >= 0.05);
        return s;
}

/* The same with a budget longer than an hour. */
static uint64_t asleep(struct fmud *c, bool transient, pid_t *ret_pid)
{
        return asleep_budget(c, transient, 100000.0, ret_pid);
}

/*
 * The daemon told to stop (SIGTERM, as systemctl stop does) while a step
 * never returns: after a grace its worker is killed and the daemon exits
 * (daemon_stop() asserts the exit and that no worker outlived it); it
 * waited for the step for ever.
 */
Test(daemon_unload_hung, shutdown_ends_a_session_whose_step_never_returns, .timeout = 120)
{
        struct fmud_daemon d;
        struct fmud *c;
        pid_t pid;

        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        (void) asleep(c, false, &pid);
        fmud_close(c);
        daemon_stop(&d);
        cr_assert(daemon_pid_alive(pid) == false);
}

/*
 * A transient session whose client vanished while its step never returns:
 * when the lease runs out the worker is killed and the session goes; a
 * stop waited for the step for ever, and the session stayed.
 */
Test(daemon_unload_hung, an_expired_lease_ends_a_session_whose_step_never_returns,
     .timeout = 120)
{
        static const char conf[] = "[limits]\ntransient_grace = 1\n";
        struct proto_list_result l;
        struct fmud_daemon d;
        struct fmud *c, *other;
        bool listed = true;
        pid_t pid;
        uint64_t s;

        daemon_start_conf(&d, conf);
        c = daemon_connect(&d);
        s = asleep(c, true, &pid);
        fmud_close(c);
        other = daemon_connect(&d);
        /* The grace is 1 s: a minute of 50 ms polls is a hang guard, not a measure. */
        for (int i = 0; i < 1200 && listed; i++) {
                cr_assert(eq(int, fmud_list(other, &l), 0), "%s", fmud_errmsg(other));
                listed = false;
                for (uint32_t k = 0; k < l.n; k++)
                        listed |= l.sessions[k].session == s;
                if (listed)
                        usleep(50000);
        }
        cr_assert(not(listed), "the session outlived its lease");
        cr_assert(daemon_pid_alive(pid) == false);
        fmud_close(other);
        daemon_stop(&d);
}

/*
 * A stop of a session whose step never returns (no budget to end it) is
 * answered after a grace: the worker is killed, the session faulted and
 * kept, saying so, and the daemon log says why. The stop waited for the
 * step for ever and its client got no answer. (With a budget longer than
 * the grace the stop waits that long: a step may take it.)
 */
Test(daemon_unload_hung, a_stop_ends_a_step_that_never_returns_after_a_grace, .timeout = 120)
{
        struct proto_session_status st;
        struct proto_progress sp;
        struct fmud_daemon d;
        struct fmud *c;
        char *log, *msg;
        uint64_t s;
        pid_t pid;

        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        s = asleep_budget(c, false, INFINITY, &pid);
        cr_assert(eq(int, fmud_stop(c, &(struct proto_target){ s, 0 }, &sp), 0), "%s",
                  fmud_errmsg(c));
        cr_assert(eq(int, sp.state, PROTO_STATE_FAULTED));
        msg = strndup(sp.message.ptr, sp.message.len);
        cr_assert(msg && strstr(msg, "killed in its step: it did not come back within 5 s of the "
                                     "stop"), "%s", msg);
        free(msg);
        cr_assert(daemon_pid_alive(pid) == false);
        cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
        cr_assert(eq(int, st.state, PROTO_STATE_FAULTED));
        log = daemon_log(&d);
        cr_assert(strstr(log, "did not come back within 5 s of the stop") != NULL, "%s", log);
        free(log);
        fmud_close(c);
        daemon_stop(&d);
}

Test(daemon_unload_hung, a_worker_asleep_in_a_step_is_killed_not_waited_for, .timeout = 120)
{
        struct fmud_daemon d;
        struct fmud *c;
        uint64_t s;
        pid_t pid;

        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        s = asleep(c, false, &pid);
        cr_assert(eq(int, fmud_unload(c, &(struct proto_target){ s, 0 }), 0), "%s",
                  fmud_errmsg(c));
        cr_assert(daemon_pid_alive(pid) == false);
        fmud_close(c);
        daemon_stop(&d);
}

struct loader {
        struct fmud *c;
        int r;
};

/* Load Misbehave asleep for an hour in its initial equations (fault 22). */
static void *load_asleep(void *arg)
{
        struct loader *l = arg;
        struct proto_assign starts[] = {
                { daemon_str("fault"), daemon_str("22") },
                { daemon_str("count"), daemon_str("3600000") },
        };
        struct proto_load a = {
                .path = daemon_str(FMUD_TEST_FMU_DIR "/Misbehave.fmu"),
                .n_starts = 2, .starts = starts,
        };
        uint64_t s;

        l->r = fmud_load(l->c, &a, &s, NULL);
        return NULL;
}

/* The daemon's one worker, once it is there (a hang guard, not a measure). */
static pid_t the_worker(const struct fmud_daemon *d)
{
        pid_t workers[4];
        size_t n = 0;

        for (int i = 0; i < 20000 && n == 0; i++) {
                n = daemon_children(d->pid, workers, 4);
                if (n == 0)
                        usleep(1000);
        }
        cr_assert(eq(sz, n, 1));
        return workers[0];
}

/*
 * The daemon told to stop while a load's FMU never finishes its
 * initialization (a licence server that does not answer, a model whose
 * initial equations do not converge): after the grace its worker is
 * killed, the load is refused and the daemon exits (daemon_stop()
 * asserts the exit within its own hang guard, a minute, and that no
 * worker outlived it). It waited for the call's deadline, ten minutes
 * at least for initialization, past any service manager's stop timeout.
 */
Test(daemon_unload_hung, shutdown_ends_a_load_whose_fmu_never_initializes, .timeout = 150)
{
        struct fmud_daemon d;
        struct loader l = { .r = 1 };
        pthread_t t;
        pid_t pid;

        daemon_start(&d, NULL);
        l.c = daemon_connect(&d);
        fmud_set_timeout(l.c, 100000);
        cr_assert(eq(int, pthread_create(&t, NULL, load_asleep, &l), 0));
        pid = the_worker(&d);
        daemon_stop(&d);
        cr_assert(daemon_pid_alive(pid) == false);
        cr_assert(eq(int, pthread_join(t, NULL), 0));
        cr_assert(l.r < 0, "the load succeeded");
        cr_assert(eq(int, fmud_errcode(l.c), PROTO_E_STATE), "%s", fmud_errmsg(l.c));
        cr_assert(not(eq(ptr, strstr(fmud_errmsg(l.c), "the daemon is shutting down"), NULL)),
                  "%s", fmud_errmsg(l.c));
        fmud_close(l.c);
}

/*
 * An operator unloads a session whose load never ends (its FMU asleep in
 * its initialization): the worker is killed, the unload answers success,
 * the load is refused saying it was unloaded, and the daemon serves on.
 * The unload waited behind the load for the initialization's deadline
 * (ten minutes at least), past the client's reply timeout.
 */
Test(daemon_unload_hung, unloading_a_session_whose_fmu_never_initializes_ends_its_load,
     .timeout = 150)
{
        struct proto_list_result ls;
        struct fmud_daemon d;
        struct loader l = { .r = 1 };
        struct fmud *c;
        pthread_t t;
        uint64_t s = 0;
        pid_t pid;

        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        l.c = daemon_connect(&d);
        fmud_set_timeout(l.c, 100000);
        cr_assert(eq(int, pthread_create(&t, NULL, load_asleep, &l), 0));
        pid = the_worker(&d);
        cr_assert(eq(int, fmud_list(c, &ls), 0), "%s", fmud_errmsg(c));
        cr_assert(eq(u32, ls.n, 1));
        s = ls.sessions[0].session;
        cr_assert(eq(int, fmud_unload(c, &(struct proto_target){ s, 0 }), 0), "%s",
                  fmud_errmsg(c));
        cr_assert(eq(int, pthread_join(t, NULL), 0));
        cr_assert(l.r < 0, "the load succeeded");
        cr_assert(not(eq(ptr, strstr(fmud_errmsg(l.c), "cancelled: the session was unloaded"),
                         NULL)), "%s", fmud_errmsg(l.c));
        cr_assert(daemon_pid_alive(pid) == false);
        cr_assert(eq(int, fmud_list(c, &ls), 0), "%s", fmud_errmsg(c));
        cr_assert(eq(u32, ls.n, 0));
        fmud_close(l.c);
        fmud_close(c);
        daemon_stop(&d);
}

/*
 * An unload while the run's end is in an fmi3Terminate that takes an
 * hour (Misbehave fault 28; Terminate has the initialization's long
 * deadline, as an FMU may flush a lot there): the call is cut, the worker
 * killed, and the unload answered, as for a step. It waited for the call.
 */
Test(daemon_unload_hung, unloading_a_session_in_a_long_terminate_ends_it, .timeout = 120)
{
        struct proto_assign starts[] = {
                { daemon_str("fault"), daemon_str("28") },
                { daemon_str("count"), daemon_str("3600000") },
        };
        struct proto_load a = {
                .path = daemon_str(FMUD_TEST_FMU_DIR "/Misbehave.fmu"),
                .has_stop = true, .stop = 0.02, .has_step = true, .step = 0.01,
                .n_starts = 2, .starts = starts,
        };
        struct proto_session_status st;
        struct fmud_daemon d;
        struct fmud *c;
        uint64_t s;
        pid_t pid;

        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        cr_assert(eq(int, fmud_load(c, &a, &s, NULL), 0), "%s", fmud_errmsg(c));
        cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
        pid = (pid_t)st.insts[0].pid;
        cr_assert(fmud_start(c, &(struct proto_target){ s, 0 }, NULL) == 0, "%s", fmud_errmsg(c));
        /* Until the last point is done: the run is in its Terminate (a hang guard, not a measure). */
        for (int i = 0; i < 20000; i++) {
                cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
                if (st.time >= 0.02)
                        break;
                usleep(1000);
        }
        cr_assert(st.state == PROTO_STATE_RUNNING && st.time >= 0.02, "state %d t %g",
                  (int)st.state, st.time);
        usleep(100 * 1000);
        cr_assert(eq(int, fmud_unload(c, &(struct proto_target){ s, 0 }), 0), "%s",
                  fmud_errmsg(c));
        cr_assert(daemon_pid_alive(pid) == false);
        fmud_close(c);
        daemon_stop(&d);
}

struct stopper {
        struct fmud *c;
        uint64_t s;
};

static void *stop_it(void *arg)
{
        struct stopper *st = arg;

        (void)fmud_stop(st->c, &(struct proto_target){ st->s, 0 }, NULL);
        return NULL;
}

/*
 * The same for a session that is not running: a stop of a loaded session
 * makes its Terminate, which takes an hour; an unload sent meanwhile ends
 * it within seconds. It waited for the Terminate.
 */
Test(daemon_unload_hung, unloading_a_stopped_session_in_a_long_terminate_ends_it, .timeout = 120)
{
        struct proto_assign starts[] = {
                { daemon_str("fault"), daemon_str("28") },
                { daemon_str("count"), daemon_str("3600000") },
        };
        struct proto_load a = {
                .path = daemon_str(FMUD_TEST_FMU_DIR "/Misbehave.fmu"),
                .n_starts = 2, .starts = starts,
        };
        struct proto_session_status st;
        struct fmud_daemon d;
        struct stopper sp;
        pthread_t th;
        struct fmud *c;
        pid_t pid;

        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        sp.c = daemon_connect(&d);
        cr_assert(eq(int, fmud_load(c, &a, &sp.s, NULL), 0), "%s", fmud_errmsg(c));
        cr_assert(fmud_status(c, sp.s, &st) == 0, "%s", fmud_errmsg(c));
        pid = (pid_t)st.insts[0].pid;
        cr_assert(eq(int, pthread_create(&th, NULL, stop_it, &sp), 0));
        /* Let the stop reach its Terminate (no state says so: a wait, not a measure). */
        usleep(500 * 1000);
        cr_assert(eq(int, fmud_unload(c, &(struct proto_target){ sp.s, 0 }), 0), "%s",
                  fmud_errmsg(c));
        cr_assert(daemon_pid_alive(pid) == false);
        pthread_join(th, NULL);
        fmud_close(sp.c);
        fmud_close(c);
        daemon_stop(&d);
}

/*
 * The daemon told to stop while a session that never ran makes its hour-
 * long Terminate on the way out (Misbehave fault 28, loaded only): after
 * the stop's grace the call is cut and the daemon exits (daemon_stop()
 * asserts the exit and that no worker outlived it). It waited for the
 * Terminate, past any service manager's stop timeout.
 */
Test(daemon_unload_hung, shutdown_cuts_the_long_terminate_of_a_loaded_session, .timeout = 120)
{
        struct proto_assign starts[] = {
                { daemon_str("fault"), daemon_str("28") },
                { daemon_str("count"), daemon_str("3600000") },
        };
        struct proto_load a = {
                .path = daemon_str(FMUD_TEST_FMU_DIR "/Misbehave.fmu"),
                .n_starts = 2, .starts = starts,
        };
        struct proto_session_status st;
        struct fmud_daemon d;
        struct fmud *c;
        uint64_t s;
        pid_t pid;

        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        cr_assert(eq(int, fmud_load(c, &a, &s, NULL), 0), "%s", fmud_errmsg(c));
        cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
        pid = (pid_t)st.insts[0].pid;
        fmud_close(c);
        daemon_stop(&d);
        cr_assert(daemon_pid_alive(pid) == false);
}
