/*
 * master_meet: early return (FMI 3.0 section 4.1.3). After the DoSteps of
 * a coupled step, the earliest time t_e at which a due instance stopped
 * short of where it was sent, if it is before the next grid point, is
 * where every due instance must meet: each one that went further is
 * restored to the state saved at the point and steps again, to t_e. Its
 * Gauss-Seidel consumers step again too, since they took its outputs,
 * except one already at t_e that cannot be restored (the instance whose
 * early return t_e is, a Model Exchange FMU with Clocks, say): it keeps
 * its step and the inputs it took, as one whose step is fixed does.
 * That may reveal an earlier t_e: the loop goes on until nobody is past
 * the meeting time. An instance whose state was not saved (it cannot
 * get and set its FMU state) makes the meeting impossible: a fault that
 * says so.
 *
 * An instance that cannot take a shorter step (FMI 3.0 section 4.4,
 * canHandleVariableCommunicationStepSize = false) is never sent back: it
 * goes on to its own next point, its inputs held and its outputs seen by
 * no one before then, as a multirate instance between its points.
 *
 * A multirate instance that stopped short at or after the next grid
 * point (an early return, or a time event of its own) continues alone to
 * its own next point: its inputs are held until then and nobody sees its
 * outputs before then, so no one else needs to be there. Event Mode runs
 * in between where it asked for it or its time event came.
 *
 * DESIGN: every decision is a minimum over instances or a walk in index
 * (or stage) order, so it is the same whatever order replies came in.
 */
#include "engine/master/master_int.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#define ALONE_STEPS_MAX 100000  /* early returns of one instance within one of its steps */

static bool is_short(const struct master *m, const struct mi *mi)
{
        return mi->due && mi->reached < mi->aim - master_tol(m, mi->aim);
}

/* Event Mode for one instance between its own steps; inputs are what it stepped with. */
static int alone_event(struct master *m, struct mi *mi)
{
        bool term;
        int r;

        r = mevent_iterate(m, mi, mi->reached, &term);
        if (r == 0)
                mi->terminate = term;
        return r;
}

static int alone(struct master *m, struct mi *mi)
{
        for (unsigned i = 0; i < ALONE_STEPS_MAX; i++) {
                double tol = master_tol(m, mi->reached), te;
                int r;

                if (mi->event_mode && (mi->event || mi_next_time(mi) <= mi->reached + tol)) {
                        r = alone_event(m, mi);
                        if (r < 0 || mi->terminate)
                                return r;
                }
                mi->from = mi->reached;
                /* An event within rounding of the goal is at the goal (mstep_plan()). */
                te = mi_next_time(mi);
                mi->aim = te > mi->from && te < mi->goal - master_tol(m, mi->goal) ? te : mi->goal;
                r = mstep_one(m, mi, false);
                if (r < 0)
                        return r;
                if (mi->reached >= mi->goal - master_tol(m, mi->goal)) {
                        mi->reached = mi->goal;
                        return 0;
                }
        }
        m->fault = -ELOOP;
        return master_err(m, -ELOOP, "component '%s' returned early %u times in one step from "
                          "t = %.17g", mi->name, (unsigned)ALONE_STEPS_MAX, m->t_cur);
}

/* Its inputs over the step came from its producers' steps past t_meet, which are redone. */
static void note_kept(struct master *m, struct mi *mi, double t_meet)
{
        if (mi->noted_kept)
                return;
        mi->noted_kept = true;
        master_note(m, mi->idx, "component '%s' keeps its step to t = %.17g, where an early return "
                    "is met, and the inputs it took from Gauss-Seidel producers that had gone "
                    "further and step again to meet it: it cannot restore its FMU state; said "
                    "once", mi->name, t_meet);
}

/* Mark who must step again to meet at t_meet: who went further, and their GS consumers. */
static bool mark(struct master *m, double t_meet)
{
        double tol = master_tol(m, t_meet);
        bool any = false;

        for (size_t k = 0; k < m->n; k++) {
                struct mi *mi = &m->mi[m->by_stage[k]];
                /*
                 * One whose step is fixed goes on to its own point
                 * (master_step.c), with the inputs it took, also from a
                 * Gauss-Seidel producer that steps again.
                 */
                bool r = mi->due && mi->reached > t_meet + tol && !mi->rigid;
                bool keep = mi->reached <= t_meet + tol && !mi->can_state;

                for (size_t j = 0; mi->due && !mi->rigid && !r && j < mi->n_routes; j++)
                        r = mi->routes[j].sequential && m->mi[mi->routes[j].prod].redo;
                if (r && keep) {
                        note_kept(m, mi, t_meet);
                        r = false;
                }
                mi->redo = r;
                any |= r;
        }
        return any;
}

static int restore(struct master *m, struct mi *mi, double t_meet)
{
        int r;

        if (!mi->saved)
                return master_err(m, (m->fault = -ENOTSUP), "component '%s' went on to t = %.17g "
                                  "but must meet an early return at t = %.17g, and %s: the "
                                  "instances cannot continue at the same time", mi->name,
                                  mi->reached, t_meet, mi->can_state ?
                                  "its FMU state was not saved before this step" :
                                  "its FMU state cannot be restored (canGetAndSetFMUState is false)");
        r = inst_set_fmu_state(mi->inst, mi->state);
        if (r != INST_OK && r != INST_WARNING)
                return mstep_fault(m, mi, r, "SetFMUState");
        m->restores++;
        minput_forget(mi);
        mi->reached = m->t_cur;
        mi->stepped = mi->pending = mi->event = mi->terminate = false;
        mi->from = m->t_cur;
        mi->aim = t_meet;
        mi->cut = NAN;
        mi->todo = t_meet > m->t_cur;
        return 0;
}

/* Every due instance past the next grid point but short of its own goes on alone. */
static int go_alone(struct master *m)
{
        double tol = master_tol(m, m->t_next);

        for (size_t i = 0; i < m->n; i++) {
                struct mi *mi = &m->mi[i];
                int r;

                if (!mi->due || !mi->stepped || mi->reached < m->t_next - tol ||
                    mi->reached >= mi->goal - master_tol(m, mi->goal))
                        continue;
                r = alone(m, mi);
                if (r < 0)
                        return r;
        }
        return 0;
}

int mmeet_resolve(struct master *m)
{
        double t_meet = INFINITY, tol_next = master_tol(m, m->t_next);

        for (size_t iter = 0; iter <= 2 * m->n + 2; iter++) {
                double t_min = t_meet;
                bool todo = false;
                int r;

                for (size_t i = 0; i < m->n; i++)
                        if (is_short(m, &m->mi[i]) && m->mi[i].reached < t_min)
                                t_min = m->mi[i].reached;
                if (isinf(t_min) || (isinf(t_meet) && t_min >= m->t_next - tol_next))
                        return isinf(t_meet) ? go_alone(m) : 0;
                t_meet = t_min;
                if (!mark(m, t_meet))
                        return 0;
                for (size_t i = 0; i < m->n; i++) {
                        if (!m->mi[i].redo)
                                continue;
                        r = restore(m, &m->mi[i], t_meet);
                        if (r < 0)
                                return r;
                        todo |= m->mi[i].todo;
                }
                /* The restores took time: the stages start now. */
                m->point_ns = pace_now_ns();
                /* Or MINPUT_TERMINATE, for mstep_point(). */
                if (todo && (r = mstep_run(m)) != 0)
                        return r;
        }
        m->fault = -ELOOP;
        return master_err(m, -ELOOP, "the instances did not meet after repeated early returns "
                          "before t = %.17g", t_meet);
}
