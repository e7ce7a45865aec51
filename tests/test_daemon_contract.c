/*
 * daemon: the operations do what proto/PROTOCOL.md section 5 says, against
 * a real fmud: run-until's goal and its refusal of a past time, get of one
 * array element, restore's result and its refusals, and warp and
 * subscribe only while a session can still run.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_fixture.h"

static struct fmud_daemon d;
static struct fmud *c;
static struct daemon_raw raw;

static void setup(void)
{
        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        daemon_raw_open(&d, &raw);
}

static void teardown(void)
{
        daemon_raw_close(&raw);
        fmud_close(c);
        c = NULL;
        daemon_stop(&d);
}

static uint64_t load_path(const char *path, uint64_t *ret_gen)
{
        struct proto_load a = { .path = daemon_str(path) };

        return daemon_load(c, &a, ret_gen);
}

/* ---- run-until ------------------------------------------------------------------------ */

Test(daemon_contract, run_until_stops_at_the_last_point_at_or_before_its_time, .init = setup,
     .fini = teardown)
{
        /* msd: step 0.01, stop 10. */
        struct proto_target t = { load_path(FMUD_EXAMPLES "/msd.ssp", NULL), 0 };
        struct proto_session_status st;
        struct proto_progress p;

        /* Between two points: the one before, never past the time asked for. */
        cr_assert(fmud_run_until(c, &t, 0.255, &p) == 0, "%s", fmud_errmsg(c));
        cr_assert(p.points == 25 && p.time == 25 * 0.01, "%" PRIu64 " points, t %.17g",
                  p.points, p.time);
        /* The same time again (a retry) is answered where the session is. */
        cr_assert(fmud_run_until(c, &t, 0.255, &p) == 0, "%s", fmud_errmsg(c));
        cr_assert(p.points == 25 && p.state == PROTO_STATE_PAUSED);
        cr_assert(fmud_run_until(c, &t, 0.25, &p) == 0, "%s", fmud_errmsg(c));
        cr_assert(p.points == 25);
        /* A time behind the session's is refused and changes nothing. */
        daemon_assert_refused(c, fmud_run_until(c, &t, 0.1, &p), PROTO_E_INVALID, "past time");
        cr_assert(strstr(fmud_errmsg(c), "0.1") && strstr(fmud_errmsg(c), "before"), "%s",
                  fmud_errmsg(c));
        cr_assert(fmud_status(c, t.session, &st) == 0, "%s", fmud_errmsg(c));
        cr_assert(st.points == 25 && st.state == PROTO_STATE_PAUSED, "%" PRIu64 " points, %s",
                  st.points, proto_state_name(st.state));
        /* Past the stop time: to the stop time. */
        cr_assert(fmud_run_until(c, &t, 99.0, &p) == 0, "%s", fmud_errmsg(c));
        cr_assert(p.state == PROTO_STATE_FINISHED && p.time == 10.0, "%s t %.17g",
                  proto_state_name(p.state), p.time);
}
