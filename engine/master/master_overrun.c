/*
 * master_overrun: a paced point is done (warp > 0): how late it is
 * against its deadline, what the overrun policy makes of that, and the
 * sleep to the deadline.
 *
 * A point's deadline is the wall time its simulation time is due at
 * (master_pace.h); its lateness is its completion after that, 0 when on
 * time. A point later than the deadline plus the margin is an overrun,
 * counted whatever the policy, which is after the Distributed
 * Co-Simulation Protocol's timing modes:
 *   none  nothing more: the run catches up as fast as it can;
 *   soft  counted and noted (at most once a second, with the number and
 *         the worst since), and the pace re-bases forward to the point
 *         just done, so the points after it are not run back to back;
 *   hard  the run faults, held at the point (its values are good), with
 *         the point's time, the lateness and the instance whose step took
 *         longest named.
 *
 * The policy, the margin and the spin come from the scenario's experiment
 * (scenario.h), set by its settings, a load's arguments or the daemon's
 * defaults.
 *
 * DESIGN: every paced point's lateness goes into fixed-memory histograms
 * (master_lateness.h), whatever the policy, and every wait that ran to its
 * deadline how late it woke (the wait's own cost). Master thread.
 */
#include "engine/master/master_int.h"

#include <errno.h>
#include <string.h>

#define NOTE_PERIOD_NS  1000000000ull   /* soft overruns: noted at most once a second */

static uint64_t margin_ns(const struct master *m)
{
        return (uint64_t)(m->sc->experiment.overrun_margin_us * 1e3);
}

static int hard(struct master *m, uint64_t late_ns)
{
        m->fault = -ETIME;
        return master_err(m, -ETIME, "overrun: the paced point at t = %.17g was done %.3f ms after "
                          "its deadline (margin %.3f ms); the slowest instance was '%s' (its step "
                          "took %.3f ms)", m->t_cur, (double)late_ns * 1e-6,
                          (double)margin_ns(m) * 1e-6,
                          m->slow_ns ? session_name(m->s, m->slow_comp) : "(none stepped)",
                          (double)m->slow_ns * 1e-6);
}

static void soft(struct master *m, uint64_t now, uint64_t late_ns)
{
        m->overruns_unsaid++;
        if (m->overrun_note_ns && now - m->overrun_note_ns < NOTE_PERIOD_NS)
                return;
        master_note(m, m->slow_ns ? m->slow_comp : 0, "overrun: %llu paced point(s) late beyond "
                    "the margin of %.3f ms (the last at t = %.17g, %.3f ms late, this instance's "
                    "step taking %.3f ms); %llu in all; the pace re-bases forward",
                    (unsigned long long)m->overruns_unsaid,
                    (double)margin_ns(m) * 1e-6, m->t_cur, (double)late_ns * 1e-6,
                    (double)m->slow_ns * 1e-6, (unsigned long long)m->overruns);
        m->overrun_note_ns = now;
        m->overruns_unsaid = 0;
}

int mpace_point(struct master *m, uint64_t warp_bits)
{
        uint64_t now = pace_now_ns(), due = pace_due_ns(&m->pace, m->t_cur);
        uint64_t late = now > due ? now - due : 0;
        enum scenario_overrun policy = m->sc->experiment.overrun;

        m->lag_ns = late;
        if (late > m->lag_max_ns)
                m->lag_max_ns = late;
        lateness_add(&m->lat, now, late);
        if (late > margin_ns(m))
                m->overruns++;
        if (late > margin_ns(m) && policy != SCENARIO_OVERRUN_NONE) {
                if (policy == SCENARIO_OVERRUN_HARD)
                        return hard(m, late);
                soft(m, now, late);
                /* No catch-up: this point is due now, the next one a step from now. */
                pace_rebase(&m->pace, now, m->t_cur, m->warp);
                return 0;
        }
        /* Cut short by a request to serve: the next stepping call owes the rest (master_live.c). */
        m->pace_owed = !mlive_sleep(m, due, warp_bits);
        /* Only a wait that ran to its deadline says how late the master wakes. */
        if (!m->pace_owed && !late)
                lat_hist_add(&m->wake, (pace_now_ns() - due) / 1000u);
        return 0;
}
