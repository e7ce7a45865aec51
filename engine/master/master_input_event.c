/*
 * master_input_event: discrete input changes of an instance with Event
 * Mode. FMI 3.0 section 2.4.7.4 ("discrete": with Event Mode used, the
 * value may only change in Event Mode) and section 4.3.1 (the importer
 * must call fmi3EnterEventMode when it plans discrete changes to
 * inputs): before such an instance's step, where a discrete input it is
 * set with the step would change, it gets an Event Mode of its own at the
 * step's start (enter, set the inputs, iterate fmi3UpdateDiscreteStates,
 * enter Step Mode), and the step then sets the same values again, which
 * is no change. For an instance whose inputs are the published values
 * (Jacobi, the first Gauss-Seidel stage) that is before the point's
 * steps are planned (minput_point()), so that a nextEventTime the event
 * gives is a point the master lands on; a later stage's inputs are
 * known only when its producers stepped, and its Event Mode comes just
 * before its step: a nextEventTime inside that step ends the step there,
 * and the others meet it as an early return (mstep_run()).
 *
 * DESIGN: the values the FMU last took are kept per discrete input (the
 * unclocked step blocks' discrete variables; String and Binary by their
 * contents, copied), read from the FMU after initialization, updated whenever the
 * master sets them; after a restored FMU state they are not known, and the
 * next step has the Event Mode. Like any Event Mode
 * of an instance (master_event.c), its outputs after the event reach
 * others with its next step; its nextEventTime is taken. Output Clocks
 * it ticks there tick their consumers' triggered input Clocks at the same
 * point, in an Event Mode of theirs before their steps (mevent_triggered());
 * in a later Gauss-Seidel stage only consumers that have not stepped yet
 * can meet them, so there they tick at the next point. An instance that
 * asks to terminate there ends the run at that point (mstep_point()).
 */
#include "engine/master/master_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/master/master_value.h"

/* Whether the slot is a discrete input set with each step. */
static bool tracked(const struct mi *mi, const struct md *md, const struct mslot *sl)
{
        return sl->block < mi->n_in_step &&
               md->vars[sl->var].variability == MD_VARIABILITY_DISCRETE;
}

/* Compared by their contents, which the block's values point to. */
static bool by_content(enum md_type t)
{
        return t == MD_STRING || t == MD_BINARY;
}

int minput_plan(struct master *m, struct mi *mi)
{
        const struct md *md = m->sc->components[mi->idx].fmu->md;
        size_t n = 0, bytes = 0;

        if (!mi->event_mode)
                return 0;
        for (size_t i = 0; i < mi->n_in_slots; i++)
                n += tracked(mi, md, &mi->in_slots[i]);
        if (!n)
                return 0;
        mi->disc = calloc(n, sizeof(*mi->disc));
        if (!mi->disc)
                return -ENOMEM;
        for (size_t i = 0; i < mi->n_in_slots; i++) {
                const struct mslot *sl = &mi->in_slots[i];
                enum md_type t;
                size_t sz;

                if (!tracked(mi, md, sl))
                        continue;
                t = mi->in[sl->block].type;
                sz = mv_size(t);
                mi->disc[mi->n_disc] = (struct mdisc){
                        .block = sl->block, .off = sl->off * sz, .len = sl->n * sz,
                        .at = bytes, .vr = md->vars[sl->var].vr, .n = sl->n,
                };
                if (by_content(t)) {
                        struct mblock *last = calloc(1, sizeof(*last));

                        mi->disc[mi->n_disc++].last = last;
                        if (!last)
                                return -ENOMEM;
                        *last = (struct mblock){ .type = t, .n = sl->n };
                        last->vals = calloc(sl->n ? sl->n : 1, sizeof(void *));
                        last->sizes = calloc(sl->n ? sl->n : 1, sizeof(*last->sizes));
                        if (!last->vals || !last->sizes)
                                return -ENOMEM;
                        continue;
                }
                mi->n_disc++;
                bytes += sl->n * sz;
        }
        mi->disc_last = malloc(bytes ? bytes : 1);
        return mi->disc_last ? 0 : -ENOMEM;
}

void minput_free(struct mi *mi)
{
        for (size_t i = 0; i < mi->n_disc; i++)
                if (mi->disc[i].last)
                        mplan_free_blocks(mi->disc[i].last, 1, false);
        free(mi->disc);
        free(mi->disc_last);
        mi->disc = NULL;
        mi->disc_last = NULL;
        mi->n_disc = 0;
        mi->disc_valid = false;
}

/* The block element d starts at (its off counts bytes of the pointers). */
static size_t first(const struct mdisc *d)
{
        return d->off / sizeof(void *);
}

/* Copy the n values of block b from its element from into d's block, which holds them. */
static int keep(const struct mdisc *d, const struct mblock *b, size_t from)
{
        memcpy(d->last->vals, (const void *const *)b->vals + from, d->n * sizeof(void *));
        if (b->sizes)
                memcpy(d->last->sizes, b->sizes + from, d->n * sizeof(*b->sizes));
        return mroute_hold(d->last);
}

/* Whether d's values differ from block b's from its element from on. */
static bool differ(const struct mdisc *d, const struct mblock *b, size_t from)
{
        return mv_differ(d->last->type, d->last->vals, (const void *const *)b->vals + from,
                         d->last->sizes, b->sizes ? b->sizes + from : d->last->sizes, d->n, 0.0,
                         NULL);
}

/* The contents the FMU holds now of a String or Binary input d: 0, or the fault. */
static int read_contents(struct master *m, struct mi *mi, const struct mdisc *d)
{
        struct mblock *last = d->last;
        int r;

        if (last->type == MD_STRING)
                r = inst_get(mi->inst, last->type, &d->vr, 1, last->vals, d->n);
        else
                r = inst_get_binary(mi->inst, &d->vr, 1, last->sizes, (const uint8_t **)last->vals,
                                    d->n);
        if (r != INST_OK && r != INST_WARNING)
                return mstep_fault(m, mi, r, "Get (its discrete inputs)");
        return mroute_hold(last) < 0 ? -ENOMEM : 0;
}

/* The values the FMU holds now (after initialization, before any set). */
static int read_back(struct master *m, struct mi *mi)
{
        for (size_t i = 0; i < mi->n_disc; i++) {
                const struct mdisc *d = &mi->disc[i];
                int r;

                if (d->last) {
                        r = read_contents(m, mi, d);
                        if (r < 0)
                                return r;
                        continue;
                }
                r = inst_get(mi->inst, mi->in[d->block].type, &d->vr, 1, mi->disc_last + d->at,
                             d->n);
                if (r != INST_OK && r != INST_WARNING)
                        return mstep_fault(m, mi, r, "Get (its discrete inputs)");
        }
        mi->disc_valid = true;
        return 0;
}

int minput_start(struct master *m)
{
        for (size_t i = 0; i < m->n; i++) {
                int r = m->mi[i].n_disc ? read_back(m, &m->mi[i]) : 0;

                if (r < 0)
                        return r;
        }
        return 0;
}

void minput_forget(struct mi *mi)
{
        mi->disc_valid = false;
}

void minput_remember(struct mi *mi)
{
        bool kept = true;

        for (size_t i = 0; i < mi->n_disc; i++) {
                const struct mdisc *d = &mi->disc[i];
                const struct mblock *b = &mi->in[d->block];

                if (!d->last)
                        memcpy(mi->disc_last + d->at, b->vals + d->off, d->len);
                /*
                 * Copied when not known to be the same (a failed copy may
                 * have left borrowed pointers); without the memory for it,
                 * the next step has an Event Mode.
                 */
                else if ((!mi->disc_valid || differ(d, b, first(d))) && keep(d, b, first(d)) < 0)
                        kept = false;
        }
        mi->disc_valid = mi->n_disc > 0 && kept;
}

static bool changed(const struct mi *mi)
{
        for (size_t i = 0; i < mi->n_disc; i++) {
                const struct mdisc *d = &mi->disc[i];
                const struct mblock *b = &mi->in[d->block];

                if (d->last ? differ(d, b, first(d)) :
                    memcmp(mi->disc_last + d->at, b->vals + d->off, d->len) != 0)
                        return true;
        }
        return false;
}

int minput_event(struct master *m, struct mi *mi, double t)
{
        bool term = false;
        int r;

        /*
         * After a restored state, what the FMU holds is not known (a Get
         * could come after a Set in Step Mode, which FMI 3.0 section
         * 4.2.1 forbids): an Event Mode then, which is allowed anyway.
         */
        if (!mi->n_disc || (mi->disc_valid && !changed(mi)))
                return 0;
        /* As any Event Mode of it: the inputs, its Clocks, the iteration, nextEventTime. */
        r = mevent_iterate(m, mi, t, &term);
        if (r < 0)
                return r;
        if (!term)
                return 0;
        master_err(m, 0, "terminateSimulation requested by '%s' at t = %.17g (in the Event Mode "
                   "of a discrete input's change)", mi->name, t);
        /* Not taken back with the others' steps: its terminal state is after the event. */
        mi->saved = false;
        return MINPUT_TERMINATE;
}

int minput_point(struct master *m)
{
        for (size_t i = 0; i < m->n; i++) {
                struct mi *mi = &m->mi[i];
                int r;

                if (!mi->n_disc || mi->stage != 0 || mi->t != m->t_cur)
                        continue;
                mroute_inputs(m, mi);
                r = minput_event(m, mi, m->t_cur);
                if (r != MINPUT_TERMINATE) {
                        if (r < 0)
                                return r;
                        continue;
                }
                /* Its outputs after the event are the last row, as after a time event's request. */
                r = mevent_publish(m, mi);
                if (r < 0)
                        return r;
                mroute_row(m, m->t_cur, 0);
                master_set_state(m, MASTER_FINISHED);
                return MINPUT_TERMINATE;
        }
        /* Output Clocks those Event Modes ticked tick their consumers here, before their steps. */
        int r = mevent_triggered(m);

        if (r != 1)
                return r;
        mroute_row(m, m->t_cur, 0);
        master_set_state(m, MASTER_FINISHED);
        return MINPUT_TERMINATE;
}

/* A failure of the set's Event Mode: the session faults there. */
static int set_fault(struct master *m, int r)
{
        master_set_state(m, MASTER_FAULTED);
        return r < 0 ? r : -EIO;
}

int master_set_event_begin(struct master *m, size_t comp)
{
        struct mi *mi = comp < m->n ? &m->mi[comp] : NULL;
        int r;

        if (!mi || !mi->event_mode)
                return 0;
        r = inst_enter_event_mode(mi->inst);
        if (r != INST_OK && r != INST_WARNING)
                return set_fault(m, mstep_fault(m, mi, r, "EnterEventMode (a value set)"));
        return 1;
}

int master_set_event_end(struct master *m, size_t comp)
{
        struct mi *mi = &m->mi[comp];
        bool term = false;
        double next;
        int r;

        /*
         * Output Clocks may tick in it too; no input Clock does
         * (mclock_instant()). At the instance's time: a multirate one
         * between its points is ahead of the session.
         */
        for (size_t i = 0; i < mi->n_oclocks; i++)
                mi->oclock_on[i] = false;
        r = mclock_instant(m, mi, mi->t);
        if (r == 0)
                r = mclock_update(m, mi, mi->t, &term, &next);
        if (r < 0)
                return set_fault(m, r);
        m->events++;
        if (term) {
                master_err(m, 0, "terminateSimulation requested by '%s' at t = %.17g (in the "
                           "Event Mode of a value set)", mi->name, m->t_cur);
                master_set_state(m, MASTER_FINISHED);
                return 1;
        }
        r = session_enter_step_mode(m->s, comp);
        if (r < 0) {
                m->fault = r;
                return set_fault(m, master_err(m, r, "%s", session_message(m->s)));
        }
        mi->next_event = next;
        /*
         * Its outputs after the event are its outputs at this point (FMI
         * 3.0 section 3.2.2): what a get answers and its consumers take
         * next. Not for an instance ahead of the point (multirate): its
         * published values are the ones held until it is there.
         */
        if (mi->t != m->t_cur)
                return 0;
        r = mevent_publish(m, mi);
        if (r == 0)
                r = mevent_triggered(m);
        if (r == 1)
                master_set_state(m, MASTER_FINISHED);
        return r < 0 ? set_fault(m, r) : r;
}
