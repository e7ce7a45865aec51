/*
 * daemon: SIGTERM while a load is in progress. The daemon runs with
 * FMUD_TEST_HOLD_LOADS, so a load waits at its first cancellation poll
 * until it is cancelled: it can only end, and the daemon can only exit,
 * if the shutdown cancels it. daemon_stop() then checks the clean exit
 * (status 0, no socket file, worker or scratch file left), and the load's
 * reply says it was cancelled.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon_fixture.h"

/* The daemon's log holds text; false if it never does (a hang guard, not a measure). */
static bool log_shows(const struct fmud_daemon *d, const char *text)
{
        for (int i = 0; i < 3000; i++) {
                char *log = daemon_log(d);
                bool found = strstr(log, text) != NULL;

                free(log);
                if (found)
                        return true;
                usleep(10000);
        }
        return false;
}

Test(daemon_cancel, sigterm_cancels_a_load_in_progress)
{
        struct fmud_daemon d;
        struct daemon_raw raw;
        struct daemon_raw_reply rep;
        struct pw w;

        cr_assert(setenv("FMUD_TEST_HOLD_LOADS", "1", 1) == 0);
        daemon_start(&d, NULL);
        cr_assert(unsetenv("FMUD_TEST_HOLD_LOADS") == 0);
        daemon_raw_open(&d, &raw);
        cr_assert(pw_init(&w) == 0);
        proto_req_begin(&w, 7, PROTO_OP_LOAD, 1);
        pw_str(&w, "path");
        pw_str(&w, FMUD_EXAMPLES "/msd.ssp");
        daemon_raw_send_pw(&raw, &w);
        pw_fini(&w);
        cr_assert(log_shows(&d, "load held until cancelled"), "the load never started");

        /* Returns only if the daemon exited 0 and left nothing behind. */
        daemon_stop(&d);
        daemon_raw_recv(&raw, &rep);
        cr_assert(not(rep.rep.ok), "the held load succeeded");
        cr_assert(eq(u64, rep.rep.id, 7));
        cr_assert(eq(int, rep.rep.code, PROTO_E_STATE), "%s", rep.message);
        cr_assert(strstr(rep.message, "msd.ssp' cancelled: the daemon is shutting down") != NULL,
                  "%s", rep.message);
        daemon_raw_reply_fini(&rep);
        daemon_raw_close(&raw);
}
