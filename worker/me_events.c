/*
 * me_events: a hosted Model Exchange FMU whose Event Mode is the master's,
 * as a Co-Simulation FMU's with eventModeUsed: an FMU with Clocks
 * (md_host_me() gives it hasEventMode and early return).
 *
 * DESIGN: the importer ticks input Clocks with fmi3SetClock in Event Mode
 * and reads output Clocks there (FMI 3.0 sections 2.2.8 and 3.2.2), so the
 * events of such an FMU cannot be iterated inside the worker's step as
 * those of an FMU without Clocks are (me.c): its output Clocks would tick
 * unseen. Instead a step ends at the FMU's first event (a state, time or
 * step event) with eventHandlingNeeded, returning early when that is
 * before the step's end, "signaled to the environment without any delay
 * (in CS using early return)" (Appendix A, event); the master then
 * enters Event Mode (here: fmi3EnterEventMode, unless the FMU is in it
 * already), sets and gets Clocks and clocked variables, iterates
 * fmi3UpdateDiscreteStates (its nextEventTime kept for the integration),
 * and enters Step Mode (here: fmi3EnterContinuousTimeMode and CVODE
 * restarted from the states, made at the first one after initialization).
 * The master's Event Mode at a Clock's tick is the same sequence at a
 * communication point.
 */
#include <math.h>
#include <stdio.h>

#include "worker/call.h"
#include "worker/me.h"
#include "worker/me_api.h"
#include "worker/me_int.h"
#include "worker/worker.h"

int me_event_mode(struct worker *w)
{
        struct me *m = w->me;

        m->event_pending = false;
        /* After initialization, or a set that needed it (me_before_set()), it is there already. */
        if (!m->ct)
                return fmi3OK;
        m->stats.events++;
        return me_enter_event(w);
}

void me_discrete_updated(struct worker *w, int status, const struct call_discrete *d)
{
        struct me *m = w->me;

        m->stats.event_iterations++;
        if (status > fmi3Warning)
                return;
        m->nominals_changed |= d->nominals_changed;
        /* +inf is no time event; the master refuses a time before this one. */
        m->next_defined = d->next_event_time_defined && d->next_event_time < INFINITY;
        m->next_time = d->next_event_time;
        if (d->terminate_simulation)
                m->terminated = true;
}

/* A time event at its own time again, a few times, as me.c allows inside a step. */
static int same_time(struct worker *w)
{
        struct me *m = w->me;

        if (!m->next_defined || m->next_time > m->time)
                return fmi3OK;
        m->same_n = m->same_t == m->time ? m->same_n + 1 : 1;
        m->same_t = m->time;
        if (m->same_n <= ME_SAME_TIME_MAX)
                return fmi3OK;
        snprintf(w->last_error, sizeof(w->last_error), "nextEventTime %.17g is not after the "
                 "event at t = %.17g, %u times in a row: time would not advance", m->next_time,
                 m->time, m->same_n);
        return fmi3Error;
}

int me_step_mode(struct worker *w)
{
        struct me *m = w->me;
        int s, s2;

        if (m->ct)
                return fmi3OK;
        s = m->api->enter_continuous(w);
        m->ct = s <= fmi3Warning;
        if (s > fmi3Warning || m->terminated)
                return s;
        if (!m->cv) {
                /* The first Step Mode after initialization: the integrator starts here. */
                s2 = me_create(w);
        } else {
                /* Restart even when no state jumped: the right-hand side may have. */
                me_cv_counts(m, &m->stats);
                s2 = me_restart(w, m->nominals_changed);
                if (s2 <= fmi3Warning) {
                        int s3 = me_take_domains(w);

                        s2 = s3 > s2 ? s3 : s2;
                }
        }
        m->nominals_changed = false;
        s = s2 > s ? s2 : s;
        if (s > fmi3Warning)
                return s;
        /*
         * A time event within the master's rounding of now is at the
         * master's point (its early return was rounded onto it): the FMU
         * goes there, to handle it in the Event Mode the master enters next.
         */
        if (w->event_mode_used && m->next_defined && m->next_time > m->time &&
            m->next_time - m->time <= me_master_tol(m, m->next_time)) {
                bool changed;

                s2 = me_snap(w, m->next_time, &changed);
                if (s2 <= fmi3Warning)
                        s2 = me_take_domains(w);
                s = s2 > s ? s2 : s;
                if (s > fmi3Warning)
                        return s;
        }
        s2 = same_time(w);
        return s2 > s ? s2 : s;
}
