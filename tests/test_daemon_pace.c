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

/*
 * The same stall under the load's hard policy with a 150 ms margin: the
 * session faults at the late point, the message names it and the
 * instance, and status counts the overrun and shows the lateness. The
 * margin is wide enough that a busy machine's stall of an earlier point
 * is no overrun; the 300 ms sleep is one.
 */
Test(daemon_pace, a_hard_overrun_faults_the_session_and_status_shows_the_lateness,
     .init = setup, .fini = teardown)
{
        struct proto_assign starts[] = {
                { daemon_str("sleep_at"), daemon_str("0.095") },
                { daemon_str("sleep_ms"), daemon_str("300") },
        };
        struct proto_load a = {
                .path = daemon_str(FMUD_MASTER_FMU_DIR "/Scripted.fmu"),
                .has_stop = true, .stop = 0.3, .has_step = true, .step = 0.01,
                .has_warp = true, .warp = 1.0, .n_starts = 2, .starts = starts,
                .overrun = daemon_str("hard"), .has_overrun_margin = true,
                .overrun_margin_us = 150000, .has_spin = true, .spin_us = 100,
        };
        struct proto_session_status st;
        struct fmud_msg m;
        uint64_t s;
        char msg[512];

        /* Back once the subscription is in force (PROTOCOL.md "Joining"). */
        cr_assert(fmud_events(c, true) == 0, "%s", fmud_errmsg(c));
        s = daemon_load(c, &a, NULL);
        cr_assert(fmud_start(c, &(struct proto_target){ s, 0 }, NULL) == 0, "%s",
                  fmud_errmsg(c));
        /* The faulted event carries the overrun and the lateness. */
        for (;;) {
                cr_assert(fmud_next(c, 60000, &m) == 0, "no faulted event");
                if (m.kind == FMUD_MSG_EVENT && m.event.session == s &&
                    m.event.state == PROTO_STATE_FAULTED)
                        break;
        }
        cr_assert(m.event.overruns == 1, "event overruns %llu",
                  (unsigned long long)m.event.overruns);
        cr_assert(m.event.lateness_max_us >= 290000, "event max %g us", m.event.lateness_max_us);
        daemon_wait_state(c, s, PROTO_STATE_FAULTED, &st);
        snprintf(msg, sizeof(msg), "%.*s", (int)st.message.len, st.message.ptr);
        cr_assert(strstr(msg, "overrun: the paced point at t = 0.11") != NULL, "%s", msg);
        cr_assert(strstr(msg, "the slowest instance was 'Scripted'") != NULL, "%s", msg);
        cr_assert(st.time == 0.11, "t %.17g", st.time);
        cr_assert(st.overruns == 1, "overruns %llu", (unsigned long long)st.overruns);
        cr_assert(daemon_str_eq(st.overrun, "hard"));
        cr_assert(st.lateness.max_us >= 290000, "max %g us", st.lateness.max_us);
        cr_assert(st.lateness.p50_us <= st.lateness.p99_us &&
                  st.lateness.p99_us <= st.lateness.p999_us &&
                  st.lateness.p999_us <= st.lateness.max_us);
        cr_assert(st.lateness_window.max_us >= 290000, "window max %g us",
                  st.lateness_window.max_us);
}

Test(daemon_pace, a_bad_overrun_policy_is_refused_and_nothing_is_loaded, .init = setup,
     .fini = teardown)
{
        struct proto_load a = {
                .path = daemon_str(FMUD_MASTER_FMU_DIR "/Scripted.fmu"),
                .overrun = daemon_str("firm"),
        };
        struct proto_list_result l;

        daemon_assert_refused(c, fmud_load(c, &a, NULL, NULL), PROTO_E_INVALID, "overrun");
        cr_assert(strstr(fmud_errmsg(c), "overrun: 'firm' is not none, soft or hard") != NULL,
                  "%s", fmud_errmsg(c));
        a.overrun = daemon_str("");
        a.has_spin = true;
        a.spin_us = 2e6;
        daemon_assert_refused(c, fmud_load(c, &a, NULL, NULL), PROTO_E_INVALID, "spin");
        cr_assert(strstr(fmud_errmsg(c), "spin 2e+06 us: must be 0 to 1e+06 us") != NULL, "%s",
                  fmud_errmsg(c));
        cr_assert(fmud_list(c, &l) == 0);
        cr_assert(l.n == 0);
}
