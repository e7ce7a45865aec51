/*
 * master_point: one coupled step from the current point to the next,
 * start to finish: plan, save, step, meet early returns, then move the
 * session to the new point: publish what is there, run Event Mode, hand
 * the rows to the sink, refresh output derivatives, act on
 * terminateSimulation.
 *
 * DESIGN: an instance's results are published when the session reaches
 * the time they belong to: a multirate instance's outputs at t_{n+m}
 * stay in its 'next' block until the session is at t_{n+m} (zero-order
 * hold in between), which is also when its Event Mode and its
 * terminateSimulation take effect.
 */
#include "engine/master/master_int.h"

#include <errno.h>
#include <math.h>

#define ZERO_MEETS_MAX 100      /* early returns in a row that do not advance time */

static uint64_t max_extra(const struct master *m)
{
        return m->opts.max_extra_points ? m->opts.max_extra_points : MASTER_EXTRA_RUN_MAX;
}

static int move(struct master *m, double t_prev)
{
        double t_new = m->t_next;

        for (size_t i = 0; i < m->n; i++) {
                struct mi *mi = &m->mi[i];

                if (!mi->due)
                        continue;
                mi->t = mi->reached;
                if (mi->t < t_new)
                        t_new = mi->t;
        }
        if (t_new < m->t_next - master_tol(m, m->t_next)) {
                m->at_grid = false;
                m->extra_points++;
                m->extra_run++;
        } else {
                t_new = m->t_next;
                m->pt++;
                m->at_grid = true;
                m->extra_run = 0;
        }
        m->points++;
        m->t_cur = t_new;
        master_note_point(m);
        if (m->extra_run > max_extra(m)) {
                m->fault = -ELOOP;
                return master_err(m, -ELOOP, "more than %llu extra points (early returns or time "
                                  "events) between t = %.17g and the next grid point %.17g: "
                                  "events too dense to go on", (unsigned long long)max_extra(m),
                                  master_grid(m, m->pt), m->t_next);
        }
        if (t_new > t_prev) {
                m->zero_meets = 0;
                return 0;
        }
        if (++m->zero_meets > ZERO_MEETS_MAX) {
                m->fault = -ELOOP;
                return master_err(m, -ELOOP, "early returns at t = %.17g over and over (%u times): "
                                  "time does not advance", t_new, (unsigned)ZERO_MEETS_MAX);
        }
        return 0;
}

static int publish(struct master *m)
{
        for (size_t i = 0; i < m->n; i++) {
                struct mi *mi = &m->mi[i];

                mi->stepped = false;    /* from now on, routes read published values */
                if (mi->t == m->t_cur)
                        mclock_publish(m, mi);
                if (!mi->pending || mi->t != m->t_cur)
                        continue;
                if (mroute_publish(m, mi) < 0) {
                        m->fault = -ENOMEM;
                        return master_err(m, -ENOMEM, "out of memory");
                }
                mi->pending = false;
        }
        return 0;
}

static void terminate(struct master *m)
{
        for (size_t i = 0; i < m->n; i++) {
                struct mi *mi = &m->mi[i];

                if (!mi->terminate || mi->t != m->t_cur)
                        continue;
                /* A step that stopped short to ask it (beside others, the point is its end). */
                if (mi->res.terminate_simulation &&
                    mi->res.last_successful_time < m->t_cur - master_tol(m, m->t_cur))
                        master_err(m, 0, "terminateSimulation requested by '%s' at t = %.17g (it "
                                   "stopped at t = %.17g)", mi->name, m->t_cur,
                                   mi->res.last_successful_time);
                else
                        master_err(m, 0, "terminateSimulation requested by '%s' at t = %.17g",
                                   mi->name, m->t_cur);
                master_set_state(m, MASTER_FINISHED);
                return;
        }
}

int mstep_point(struct master *m)
{
        double t_prev = m->t_cur;
        bool record;
        int r;

        m->iu_msg[0] = '\0';
        mrig_inputs(m);
        r = minput_point(m);
        if (r == MINPUT_TERMINATE)
                return 0;
        if (r < 0)
                return r;
        mstep_plan(m);
        r = mstep_save(m);
        m->point_ns = pace_now_ns();
        m->slow_ns = 0;
        m->step_deadline_ns = isfinite(m->budget_s) ? m->point_ns + (uint64_t)(m->budget_s * 1e9) : 0;
        if (r == 0)
                r = mstep_run(m);
        if (r == 0)
                r = mmeet_resolve(m);
        /* Asked in the Event Mode of an input's change, before its step: the run ends here. */
        if (r == MINPUT_TERMINATE) {
                mstep_roll_back(m);
                master_set_state(m, MASTER_FINISHED);
                return 0;
        }
        if (r < 0) {
                mstep_roll_back(m);
                return r;
        }
        r = move(m, t_prev);
        if (r == 0)
                r = publish(m);
        if (r < 0)
                return r;
        /* A recorded Clock that ticked since the last recorded row is in this one. */
        record = !m->at_grid || m->pt % m->decimation == 0 || m->pt == m->n_end || m->flagged;
        mspread_check(m);
        r = mevent_point(m, record);
        if (r == 0)
                r = miu_refresh_derivatives(m);
        if (r < 0)
                return r;
        terminate(m);
        mrig_outputs(m);
        return 0;
}
