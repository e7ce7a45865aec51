/*
 * fmuctl_waits: fmuctl waits for what the daemon lets take long (a load's
 * Initialization Mode, a Terminate) instead of giving up after the 30 s a
 * request gets, and a load it does give up on (killed, Ctrl-C) is said
 * and cleaned up. Against real daemons. fmuctl runs with a request
 * timeout of 2 s (FMUD_TEST_REQUEST_MS, honoured by a build for the tests
 * only) and Misbehave takes 4 s (faults 22 and 28), so that what outlasts
 * a request's timeout needs not take 30 s.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon_fixture.h"
#include "support/run.h"

/* Every fmuctl this binary starts gives up on a reply after 2 s (see above). */
__attribute__((constructor)) static void short_requests(void)
{
        setenv("FMUD_TEST_REQUEST_MS", "2000", 1);
}

/*
 * fmuctl stop of a loaded session whose Terminate takes 4 s (longer
 * than a request's timeout, 2 s here, 30 s usually): the stop is answered
 * once it returned, exit 0. fmuctl gave up at the request's timeout and
 * said the daemon did not answer (exit 3).
 */
Test(fmuctl_waits, fmuctl_stop_waits_for_a_long_terminate, .timeout = 150)
{
        struct proto_assign starts[] = {
                { daemon_str("fault"), daemon_str("28") },
                { daemon_str("count"), daemon_str("4000") },
        };
        struct proto_load a = {
                .path = daemon_str(FMUD_TEST_FMU_DIR "/Misbehave.fmu"),
                .n_starts = 2, .starts = starts,
        };
        struct fmud_daemon d;
        struct run_result r;
        struct fmud *c;
        char sid[32];
        uint64_t s;

        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        cr_assert(eq(int, fmud_load(c, &a, &s, NULL), 0), "%s", fmud_errmsg(c));
        snprintf(sid, sizeof(sid), "%llu", (unsigned long long)s);
        cr_assert(eq(int, run_capture((char *[]){ (char *)FMUD_FMUCTL, (char *)"--endpoint",
                                                  d.endpoint, (char *)"stop", sid, NULL },
                                      &r), 0));
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(not(eq(ptr, strstr(r.out, "stopped"), NULL)), "%s", r.out);
        run_result_fini(&r);
        fmud_close(c);
        daemon_stop(&d);
}

/* Until the daemon lists a session (a load under way): 10 ms polls for a minute, a hang guard. */
static void wait_for_a_load(struct fmud *c)
{
        struct proto_list_result l = { 0 };

        for (int i = 0; i < 6000; i++) {
                cr_assert(eq(int, fmud_list(c, &l), 0), "%s", fmud_errmsg(c));
                if (l.n > 0)
                        return;
                usleep(10000);
        }
        cr_fatal("the load never showed");
}

/*
 * fmuctl load of an FMU whose initial equations take 4 s, longer than a
 * request's timeout (2 s here, 30 s usually; a large
 * model's; the daemon allows Initialization Mode 600 s): the load is
 * answered once they are done, exit 0, and the session is permanent.
 * fmuctl gave up at the timeout (exit 3) and the session stayed loaded under a
 * number nobody was told.
 */
Test(fmuctl_waits, fmuctl_load_waits_for_a_long_initialization, .timeout = 150)
{
        struct proto_session_status st;
        struct fmud_daemon d;
        struct run_result r;
        struct fmud *c;
        uint64_t s;

        daemon_start(&d, NULL);
        cr_assert(eq(int, run_capture((char *[]){ (char *)FMUD_FMUCTL, (char *)"--endpoint",
                                                  d.endpoint, (char *)"load",
                                                  (char *)FMUD_TEST_FMU_DIR "/Misbehave.fmu",
                                                  (char *)"--start", (char *)"fault=22",
                                                  (char *)"--start", (char *)"count=4000",
                                                  NULL }, &r), 0));
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        s = strtoull(r.out, NULL, 10);
        cr_assert(s > 0, "%s", r.out);
        c = daemon_connect(&d);
        cr_assert(eq(int, fmud_status(c, s, &st), 0), "%s", fmud_errmsg(c));
        cr_assert(st.state == PROTO_STATE_LOADED);
        cr_assert(not(st.transient), "fmuctl load leaves a permanent session");
        run_result_fini(&r);
        fmud_close(c);
        daemon_stop(&d);
}

/*
 * fmuctl load killed while the daemon loads (a user's Ctrl-C, a CI job's
 * timeout): the session is unloaded once its load is done and the lease
 * runs out, instead of staying loaded under a number nobody was told.
 */
Test(fmuctl_waits, a_load_its_fmuctl_gave_up_on_is_unloaded, .timeout = 120)
{
        static const char conf[] = "[limits]\ntransient_grace = 1\n";
        struct proto_list_result l;
        struct fmud_daemon d;
        struct fmud *c;
        bool listed = true;
        pid_t kid;

        daemon_start_conf(&d, conf);
        c = daemon_connect(&d);
        kid = fork();
        cr_assert(kid >= 0);
        if (kid == 0) {
                execl(FMUD_FMUCTL, FMUD_FMUCTL, "--endpoint", d.endpoint, "load",
                      FMUD_TEST_FMU_DIR "/Misbehave.fmu", "--start", "fault=22", "--start",
                      "count=3000", (char *)NULL);
                _exit(127);
        }
        wait_for_a_load(c);
        cr_assert(eq(int, kill(kid, SIGKILL), 0));
        cr_assert(eq(int, (int)waitpid(kid, NULL, 0), (int)kid));
        /* Polls of 50 ms for a minute: a hang guard, not a measure. */
        for (int i = 0; i < 1200 && listed; i++) {
                cr_assert(eq(int, fmud_list(c, &l), 0), "%s", fmud_errmsg(c));
                listed = l.n > 0;
                if (listed)
                        usleep(50000);
        }
        cr_assert(not(listed), "the session of a load nobody waits for stayed loaded");
        fmud_close(c);
        daemon_stop(&d);
}

/*
 * Ctrl-C of fmuctl run while the daemon loads: "interrupted", exit 130,
 * as during the run (it said "load: Interrupted system call", exit 3).
 */
Test(fmuctl_waits, ctrl_c_during_a_load_is_an_interruption, .timeout = 120)
{
        struct fmud_daemon d;
        char *err_path, *err;
        struct fmud *c;
        bool interrupted;
        int status;
        pid_t kid;

        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        err_path = daemon_path(&d, "run.err");
        kid = fork();
        cr_assert(kid >= 0);
        if (kid == 0) {
                int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

                if (fd < 0 || dup2(fd, 2) < 0)
                        _exit(126);
                execl(FMUD_FMUCTL, FMUD_FMUCTL, "--endpoint", d.endpoint, "run",
                      FMUD_TEST_FMU_DIR "/Misbehave.fmu", "--start", "fault=22", "--start",
                      "count=5000", "-q", (char *)NULL);
                _exit(127);
        }
        wait_for_a_load(c);
        cr_assert(eq(int, kill(kid, SIGINT), 0));
        cr_assert(eq(int, (int)waitpid(kid, &status, 0), (int)kid));
        err = daemon_slurp(err_path, NULL);
        interrupted = WIFEXITED(status) && WEXITSTATUS(status) == 130;
        cr_assert(interrupted, "status %#x: %s", status, err);
        cr_assert(strstr(err, "fmuctl run: interrupted\n") != NULL, "%s", err);
        free(err);
        free(err_path);
        fmud_close(c);
        daemon_stop(&d);
}
