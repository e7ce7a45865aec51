/*
 * daemon_pace: what status says about a paced run that falls behind (the
 * lag and the real-time factor under a stall of known length), through
 * libfmud against a real fmud (daemon_fixture.h).
 */
#include <criterion/criterion.h>
#include <inttypes.h>
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

static double now_s(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * Scripted at warp 1 in steps of 0.01 to t = 0.3, its step at t = 0.1
 * sleeping 300 ms: that point is done at least 0.29 s after its due time,
 * and the run takes at least the 0.1 s paced up to it plus the stall, so
 * the factor is at most 0.3 / 0.4 (a slower machine only adds to both).
 * The run lies within the wall time the test measured around it, so the
 * factor is at least simulated time over that.
 */
Test(daemon_pace, status_shows_the_lag_and_factor_of_a_stalled_paced_run, .init = setup,
     .fini = teardown)
{
        struct proto_assign starts[] = {
                { daemon_str("sleep_at"), daemon_str("0.095") },
                { daemon_str("sleep_ms"), daemon_str("300") },
        };
        struct proto_load a = {
                .path = daemon_str(FMUD_MASTER_FMU_DIR "/Scripted.fmu"),
                .has_stop = true, .stop = 0.3, .has_step = true, .step = 0.01,
                .has_warp = true, .warp = 1.0, .n_starts = 2, .starts = starts,
        };
        struct proto_session_status st;
        uint64_t s = daemon_load(c, &a, NULL);
        double t0, wall;

        t0 = now_s();
        cr_assert(fmud_start(c, &(struct proto_target){ s, 0 }, NULL) == 0, "%s",
                  fmud_errmsg(c));
        daemon_wait_state(c, s, PROTO_STATE_FINISHED, &st);
        wall = now_s() - t0;
        cr_assert(st.time == 0.3, "t %.17g", st.time);
        cr_assert(st.warp == 1.0);
        cr_assert(st.lag_max_s >= 0.29, "worst lag %g s", st.lag_max_s);
        cr_assert(st.lag_s >= 0.0 && st.lag_s <= st.lag_max_s, "lag %g s", st.lag_s);
        cr_assert(st.real_time_factor <= (st.time - st.start) / 0.39,
                  "factor %g: the stall was not counted", st.real_time_factor);
        cr_assert(st.real_time_factor >= (st.time - st.start) / wall,
                  "factor %g, the test saw %g s simulated in %g s", st.real_time_factor,
                  st.time - st.start, wall);
}
