/*
 * master_event: Event Mode at a point (FMI 3.0 sections 2.3.5 and 4.3.3)
 * for every instance at the point that asked for it (eventHandlingNeeded
 * from its step) or whose time event (nextEventTime) has come: enter
 * Event Mode, set its inputs from the published outputs at the point,
 * iterate fmi3UpdateDiscreteStates, enter Step Mode, publish its new
 * outputs. The rows of the point: the values before (flagged
 * MASTER_ROW_EVENT_LEFT) and after. A Clock's tick is a time event too:
 * master_clock.c sets the ticking Clocks, gets the clocked outputs and
 * polls the output Clocks in the same Event Mode. Clocks that tick at the
 * start time, and a nextEventTime at the start time, are an Event Mode
 * before the first step (mevent_start()). An instance with output Clocks
 * is still in the Event Mode after initialization when the master starts
 * (session_in_init_event()): its event iteration is the master's there,
 * so that what ticks in it reaches the Clocks it triggers.
 *
 * An instance's discrete inputs that change before its step get an Event
 * Mode of their own (master_input_event.c).
 *
 * DESIGN: instances run Event Mode one after the other in index order;
 * each sees the others' outputs as published at the point (before their
 * own events). The master does not iterate events across instances (a
 * discrete change of one instance's outputs reaches its consumers at
 * their next step, like any output).
 */
#include "engine/master/master_int.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* Event Modes in a row at one point for nextEventTime at that point, at most. */
#define SAME_TIME_MAX   100u

static int event(struct master *m, struct mi *mi);

/* With Event Mode, at this point, its step taken. */
static bool here(const struct master *m, const struct mi *mi)
{
        return mi->event_mode && mi->t == m->t_cur && !mi->pending;
}

static bool needs(const struct master *m, const struct mi *mi)
{
        return here(m, mi) &&
               (mi->event || mi->trig || mi_next_time(mi) <= m->t_cur + master_tol(m, m->t_cur));
}

/*
 * After its Event Mode at this point: its nextEventTime is this point
 * again, exactly (an event a rounding after it, which needs() took for
 * the point, the FMU may put after it: the master steps there instead),
 * and it runs on.
 */
static bool again(const struct master *m, const struct mi *mi)
{
        return !mi->terminate && here(m, mi) && mi_next_time(mi) <= m->t_cur;
}

/*
 * Event Mode for every instance that needs it, in index order, then again
 * for those whose triggered input Clocks a later one's output Clock
 * ticked (master_clock.c), until none is left.
 */
static int events(struct master *m, bool (*want)(const struct master *, const struct mi *))
{
        for (size_t pass = 0;; pass++) {
                bool again = false;

                for (size_t i = 0; i < m->n; i++) {
                        int r;

                        if (!(pass == 0 ? want(m, &m->mi[i]) : m->mi[i].trig))
                                continue;
                        /*
                         * A Clock ticks where its consumer is: one whose
                         * step is fixed may be past an extra point
                         * (master_step.c), and cannot meet a tick there.
                         */
                        if (m->mi[i].trig && !here(m, &m->mi[i])) {
                                m->fault = -ENOTSUP;
                                return master_err(m, -ENOTSUP, "component '%s': its triggered "
                                                  "input Clock ticks at t = %.17g, between its own "
                                                  "points, which it cannot meet (its step is "
                                                  "fixed: canHandleVariableCommunicationStepSize "
                                                  "is false)", m->mi[i].name, m->t_cur);
                        }
                        r = event(m, &m->mi[i]);
                        if (r < 0)
                                return r;
                }
                /* Only a Clock connection triggers a Clock. */
                if (m->n_clinks == 0)
                        return 0;
                for (size_t i = 0; i < m->n; i++)
                        again |= m->mi[i].trig;
                if (!again)
                        return 0;
                if (pass >= m->n) {
                        m->fault = -ELOOP;
                        return master_err(m, -ELOOP, "Clock connections tick each other over "
                                          "and over at t = %.17g", m->t_cur);
                }
        }
}

/*
 * Event Mode for what want() picks, then again at once for every instance
 * whose nextEventTime is still this point: the importer enters Event Mode
 * once time >= nextEventTime (FMI 3.0 section 3.2.2, as its section 3.3
 * example does), also where an event names its own time. A bounded number
 * of times: an FMU that always answers now would stop time.
 */
static int settle(struct master *m, bool (*want)(const struct master *, const struct mi *))
{
        int r = events(m, want);

        for (unsigned k = 0; r == 0; k++) {
                const struct mi *mi = NULL;

                for (size_t i = 0; i < m->n && !mi; i++)
                        mi = again(m, &m->mi[i]) ? &m->mi[i] : NULL;
                if (!mi)
                        return 0;
                if (k == SAME_TIME_MAX) {
                        m->fault = -ELOOP;
                        return master_err(m, -ELOOP, "component '%s': nextEventTime %.17g is "
                                          "not after its event at t = %.17g, %u times in a row: "
                                          "time would not advance", mi->name, mi_next_time(mi),
                                          m->t_cur, SAME_TIME_MAX);
                }
                r = events(m, again);
        }
        return r;
}

static int session_failed(struct master *m, int r)
{
        m->fault = r;
        return master_err(m, r, "%s", session_message(m->s));
}

int mevent_iterate(struct master *m, struct mi *mi, double t, bool *ret_term)
{
        bool init = mi->init_event;     /* already in it: initialization's */
        double next;
        int r;

        r = init ? INST_OK : inst_enter_event_mode(mi->inst);
        if (r != INST_OK && r != INST_WARNING)
                return mstep_fault(m, mi, r, "EnterEventMode");
        r = mroute_set_inputs(m, mi);
        if (r != INST_OK && r != INST_WARNING)
                return mstep_fault(m, mi, r, "Set (inputs in Event Mode)");
        minput_remember(mi);
        r = mclock_enter(m, mi, t);
        mi->init_event = false;
        session_init_event_done(m->s, mi->idx);
        if (r < 0)
                return r;
        r = mclock_update(m, mi, t, ret_term, &next);
        if (r < 0)
                return r;
        r = mclock_leave(m, mi, t);
        if (r < 0)
                return r;
        if (!*ret_term) {
                r = session_enter_step_mode(m->s, mi->idx);
                if (r < 0)
                        return session_failed(m, r);
        }
        m->events += !init;     /* initialization's own iteration is not an event */
        mi->event = false;
        mi->next_event = next;
        return 0;
}

int mevent_publish(struct master *m, struct mi *mi)
{
        int r = mroute_get_outputs(m, mi);

        if (r != INST_OK && r != INST_WARNING)
                return mstep_fault(m, mi, r, "Get (outputs after Event Mode)");
        if (mroute_publish(m, mi) < 0) {
                m->fault = -ENOMEM;
                return master_err(m, -ENOMEM, "out of memory");
        }
        return 0;
}

static int event(struct master *m, struct mi *mi)
{
        bool term;
        int r;

        mroute_inputs(m, mi);
        r = mevent_iterate(m, mi, m->t_cur, &term);
        if (r < 0)
                return r;
        /*
         * A terminate request stays in Event Mode and ends the session
         * here, with the values the event computed (fmi3Get* is allowed in
         * Event Mode, FMI 3.0 section 3.2.2): the last row is after it, as
         * fmusim and FMPy record it.
         */
        mi->terminate |= term;  /* a request of the step stands */
        return mevent_publish(m, mi);
}

static bool triggered(const struct master *m, const struct mi *mi)
{
        (void) m;
        return mi->trig;
}

int mevent_triggered(struct master *m)
{
        int r = 0;

        for (size_t i = 0; i < m->n; i++)
                if (m->mi[i].trig) {
                        r = settle(m, triggered);
                        break;
                }
        if (r < 0)
                return r;
        /* One asked to terminate there (event() kept it in Event Mode): the run ends. */
        for (size_t i = 0; i < m->n; i++)
                if (m->mi[i].terminate && here(m, &m->mi[i])) {
                        master_err(m, 0, "terminateSimulation requested by '%s' at t = %.17g (in "
                                   "the Event Mode of a Clock another instance ticked)",
                                   m->mi[i].name, m->t_cur);
                        return 1;
                }
        return 0;
}

int mevent_point(struct master *m, bool record)
{
        unsigned flags = m->at_grid ? 0 : MASTER_ROW_EXTRA;
        bool any = false;
        int r;

        for (size_t i = 0; i < m->n && !any; i++)
                any = needs(m, &m->mi[i]);
        if (!any) {
                if (record)
                        mroute_row(m, m->t_cur, flags);
                else if (m->rows_every)
                        mroute_row(m, m->t_cur, flags | MASTER_ROW_UNRECORDED);
                return 0;
        }
        /*
         * A point with events is always recorded, on both sides of them
         * (Clocks that ticked before it are flagged in the row before them).
         */
        mroute_row(m, m->t_cur, flags | MASTER_ROW_EVENT_LEFT);
        r = settle(m, needs);
        if (r < 0)
                return r;
        mroute_row(m, m->t_cur, flags);
        return 0;
}

/* At the start time: a Clock ticks, or the initialization's nextEventTime is the start. */
static bool starts(const struct master *m, const struct mi *mi)
{
        return mi->event_mode && !mi->terminate && (mclock_due(m, mi, m->t_cur) || again(m, mi));
}

static bool in_init_event(const struct master *m, const struct mi *mi)
{
        (void) m;
        return mi->init_event;
}

int mevent_start(struct master *m)
{
        bool any = false;
        int r;

        /*
         * Initialization's event iteration, and what its output Clocks
         * trigger, with no row of its own; Clocks due at the start and a
         * nextEventTime there are the Event Mode after it, as for others.
         */
        for (size_t i = 0; i < m->n && !any; i++)
                any = m->mi[i].init_event;
        if (any && (r = events(m, in_init_event)) < 0)
                return r;
        /* One asked to terminate there (it stays in Event Mode): the run ends at the start. */
        for (size_t i = 0; any && i < m->n; i++)
                if (m->mi[i].terminate) {
                        mroute_row(m, m->t_cur, 0);
                        master_err(m, 0, "terminateSimulation requested by '%s' at t = %.17g "
                                   "(initialization)", m->mi[i].name, m->t_cur);
                        master_set_state(m, MASTER_FINISHED);
                        return 0;
                }
        any = false;

        for (size_t i = 0; i < m->n && !any; i++)
                any = starts(m, &m->mi[i]);
        if (!any) {
                mroute_row(m, m->t_cur, 0);
                return 0;
        }
        mroute_row(m, m->t_cur, MASTER_ROW_EVENT_LEFT);
        r = settle(m, starts);
        if (r < 0)
                return r;
        mroute_row(m, m->t_cur, 0);
        return 0;
}
