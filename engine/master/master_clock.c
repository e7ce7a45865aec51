/*
 * master_clock: the Clocks of Co-Simulation instances with Event Mode
 * (FMI 3.0 sections 2.2.8 and 4) at a tick: time-based input Clocks
 * ticked by the master, output Clocks polled, the next ticks (planned
 * once in master_clock_plan.c).
 *
 * At a tick (an Event Mode at a communication point the plan lands on
 * it, master_step.c and master_event.c): fmi3SetClock of every input
 * Clock that ticks there, in one call; the unclocked inputs are already
 * set, the clocked inputs of the ticking Clocks are set; the outputs are
 * got, which computes the clocked partitions (section 2.2.8.3: "invoking
 * fmi3Get on variables in the output vector y_k will trigger the
 * execution of f_event"); the output Clocks are polled with
 * fmi3GetClock and the clocked outputs of every ticking Clock got; then
 * fmi3UpdateDiscreteStates, which deactivates the Clocks (section
 * 2.2.7.2), and the next ticks are read before Step Mode. Clocked
 * variables are never set or got with a step (section 2.2.8.3: only
 * while a Clock of theirs is active): between ticks they hold the last
 * tick's values, and a clocked output is 0 until its first tick.
 *
 * The next ticks:
 *
 *   constant, fixed   t_i = t_start + shift + i interval (section 2.2.8.2)
 *   tunable           the same; fmi3GetInterval after each tick, and a
 *                     changed interval counts from that tick on
 *   changing          t_i = t_{i-1} + interval, fmi3GetInterval after
 *                     each tick (Table 8)
 *   countdown         t_i = t_event + interval, fmi3GetInterval in every
 *                     Event Mode: fmi3IntervalChanged schedules it,
 *                     fmi3IntervalNotYetKnown leaves it unscheduled
 *                     (section 2.2.8.4, Table 9)
 *
 * DESIGN: a periodic Clock with a fraction ticks at t_start + counter /
 * resolution, computed from integers at every tick and never
 * accumulated, so ticks off the grid (interval 0.1, step 0.03) are the
 * exact doubles 0.1, 0.2, ...; decimals tick at base + k interval. A tick
 * is an instance's time event like nextEventTime (mi_next_time()), so it
 * becomes an extra point every due instance meets and the grid is not
 * shifted. Clocks that tick at the same time are set together.
 */
#include "engine/master/master_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/master/master_value.h"

#define QUAL_NOT_YET_KNOWN 0    /* fmi3IntervalQualifier, section 2.2.8.4 */
#define QUAL_CHANGED 2

const struct md_variable *mclock_var(const struct master *m, const struct mi *mi, size_t var)
{
        return &m->sc->components[mi->idx].fmu->md->vars[var];
}

bool mclock_periodic(enum md_interval_variability iv)
{
        return iv == MD_INTERVAL_CONSTANT || iv == MD_INTERVAL_FIXED || iv == MD_INTERVAL_TUNABLE;
}

double mclock_tick_time(const struct master *m, const struct mclock *c)
{
        if (c->next == INFINITY)
                return INFINITY;
        if (c->fraction)
                return m->t0 + (double)c->num / (double)c->res;
        return c->base + (double)c->k * c->interval;
}

void mclock_note_next(struct mi *mi)
{
        mi->clock_next = INFINITY;
        for (size_t i = 0; i < mi->n_clocks; i++)
                if (mi->clocks[i].next < mi->clock_next)
                        mi->clock_next = mi->clocks[i].next;
}

void mclock_from_here(struct mclock *c, double t, double interval)
{
        c->fraction = false;
        c->base = t;
        c->k = 1;
        c->interval = interval;
        c->next = isfinite(interval) && interval >= 0 ? 0 : INFINITY;
}

/*
 * A recorded Clock that ticks at t. Ahead of the session (a multirate
 * instance's own Event Mode between its points, master_meet.c) it is
 * flagged with the outputs of that time, in the first row where the
 * session has them (mclock_publish()), not in the session's next row.
 */
static void flag(struct master *m, struct mi *mi, uint32_t vr, double t)
{
        bool ahead = t > m->t_cur + master_tol(m, m->t_cur);

        for (size_t i = 0; i < mi->ticked.n_vars; i++) {
                if (mi->ticked.vrs[i] != vr)
                        continue;
                if (ahead) {
                        mi->ticked_ahead[i] = true;
                        mi->any_ahead = true;
                } else {
                        ((bool *)mi->ticked.vals)[i] = true;
                        m->flagged = true;
                }
        }
}

void mclock_unflag(struct master *m)
{
        m->flagged = false;
        for (size_t i = 0; i < m->n; i++)
                if (m->mi[i].ticked.n)
                        memset(m->mi[i].ticked.vals, 0, m->mi[i].ticked.n * sizeof(bool));
}

void mclock_publish(struct master *m, struct mi *mi)
{
        if (!mi->any_ahead)
                return;
        for (size_t i = 0; i < mi->ticked.n; i++)
                if (mi->ticked_ahead[i])
                        ((bool *)mi->ticked.vals)[i] = true;
        m->flagged = true;
        memset(mi->ticked_ahead, 0, mi->ticked.n * sizeof(bool));
        mi->any_ahead = false;
}

/* The consumers of mi's output Clocks that ticked: their Clocks tick at this point too. */
static void trigger(struct master *m, const struct mi *mi)
{
        for (size_t i = 0; i < m->n_clinks; i++) {
                const struct mclink *l = &m->clinks[i];

                if (l->prod != mi->idx || !mi->oclock_on[l->oclock])
                        continue;
                m->mi[l->cons].clocks[l->clock].pending = true;
                m->mi[l->cons].trig = true;
        }
}

bool mclock_due(const struct master *m, const struct mi *mi, double t)
{
        return mi->clock_next <= t + master_tol(m, t);
}

/* Whether one of v's Clocks ticks in the Event Mode under way. */
static bool active(const struct mi *mi, const struct md_variable *v)
{
        for (size_t j = 0; j < v->n_clocks; j++) {
                for (size_t i = 0; i < mi->n_clocks; i++)
                        if (mi->clocks[i].due && mi->clocks[i].vr == v->clocks[j])
                                return true;
                for (size_t i = 0; i < mi->n_oclocks; i++)
                        if (mi->oclock_on[i] && mi->oclock_vrs[i] == v->clocks[j])
                                return true;
        }
        return false;
}

/* Whether one of v's Clocks is an output Clock ticking in now[] (mi->oclock_vrs' order). */
static bool ticks_now(const struct mi *mi, const struct md_variable *v, const bool *now)
{
        for (size_t j = 0; j < v->n_clocks; j++)
                for (size_t i = 0; i < mi->n_oclocks; i++)
                        if (now[i] && mi->oclock_vrs[i] == v->clocks[j])
                                return true;
        return false;
}

/*
 * Set (in) or get the clocked variables of blocks [first, n) whose Clocks
 * tick; now: only those of the output Clocks ticking in now[].
 */
static int clocked(struct master *m, struct mi *mi, bool in, const bool *now)
{
        const struct mslot *slots = in ? mi->in_slots : mi->slots;
        size_t n = in ? mi->n_in_slots : mi->n_slots, first = in ? mi->n_in_step : mi->n_out_step;
        struct mblock *blocks = in ? mi->in : mi->next;

        for (size_t i = 0; i < n; i++) {
                const struct md_variable *v = mclock_var(m, mi, slots[i].var);
                struct mblock *b = &blocks[slots[i].block];
                unsigned char *p = b->vals + slots[i].off * mv_size(b->type);
                int r;

                if (slots[i].block < first || !(now ? ticks_now(mi, v, now) : active(mi, v)))
                        continue;
                r = in ? inst_set(mi->inst, b->type, &v->vr, 1, p, slots[i].n)
                       : inst_get(mi->inst, b->type, &v->vr, 1, p, slots[i].n);
                if (r != INST_OK && r != INST_WARNING)
                        return mstep_fault(m, mi, r, in ? "Set (clocked inputs at a tick)"
                                                        : "Get (clocked outputs at a tick)");
        }
        return 0;
}

int mclock_enter(struct master *m, struct mi *mi, double t)
{
        double tol = master_tol(m, t);
        size_t n = 0;
        int r;

        if (mi->n_clocks == 0 && mi->n_oclocks == 0)
                return 0;
        for (size_t i = 0; i < mi->n_clocks; i++) {
                struct mclock *c = &mi->clocks[i];

                /* Initialization's Event Mode: only what an output Clock triggered there. */
                c->due = (!mi->init_event && c->next <= t + tol) || c->pending;
                c->pending = false;
                if (c->due) {
                        flag(m, mi, c->vr, t);
                        mi->clock_vrs[n] = c->vr;
                        mi->clock_buf[n++] = true;
                }
        }
        if (n > 0) {
                r = inst_set(mi->inst, MD_CLOCK, mi->clock_vrs, n, mi->clock_buf, n);
                if (r != INST_OK && r != INST_WARNING)
                        return mstep_fault(m, mi, r, "SetClock");
        }
        mi->trig = false;
        for (size_t i = 0; i < mi->n_oclocks; i++)
                mi->oclock_on[i] = false;
        if (n == 0 && mi->n_oclocks == 0)
                return 0;
        r = clocked(m, mi, true, NULL);
        if (r < 0)
                return r;
        r = mroute_get_outputs(m, mi);
        if (r != INST_OK && r != INST_WARNING)
                return mstep_fault(m, mi, r, "Get (outputs at a tick)");
        if (mi->n_oclocks > 0) {
                r = inst_get(mi->inst, MD_CLOCK, mi->oclock_vrs, mi->n_oclocks, mi->oclock_on,
                             mi->n_oclocks);
                if (r != INST_OK && r != INST_WARNING)
                        return mstep_fault(m, mi, r, "GetClock (output Clocks)");
                for (size_t i = 0; i < mi->n_oclocks; i++) {
                        mi->oclock_ticks[i] += mi->oclock_on[i];
                        if (mi->oclock_on[i])
                                flag(m, mi, mi->oclock_vrs[i], t);
                }
                trigger(m, mi);
        }
        return clocked(m, mi, false, NULL);
}

int mclock_instant(struct master *m, struct mi *mi, double t)
{
        bool *now = mi->clock_buf, any = false;        /* free after mclock_enter() */
        int r;

        if (mi->n_oclocks == 0)
                return 0;
        r = inst_get(mi->inst, MD_CLOCK, mi->oclock_vrs, mi->n_oclocks, now, mi->n_oclocks);
        if (r != INST_OK && r != INST_WARNING)
                return mstep_fault(m, mi, r, "GetClock (output Clocks)");
        for (size_t i = 0; i < mi->n_oclocks; i++) {
                if (!now[i])
                        continue;
                any = true;
                mi->oclock_on[i] = true;
                mi->oclock_ticks[i]++;
                flag(m, mi, mi->oclock_vrs[i], t);
        }
        if (!any)
                return 0;
        trigger(m, mi);
        return clocked(m, mi, false, now);
}

struct instant_ctx {
        struct master *m;
        struct mi *mi;
        double t;
        bool failed;            /* the master's message says why, not the session's */
};

static int between(void *ctx)
{
        struct instant_ctx *x = ctx;
        int r = mclock_instant(x->m, x->mi, x->t);

        x->failed = r < 0;
        return r;
}

int mclock_update(struct master *m, struct mi *mi, double t, bool *ret_term, double *ret_next)
{
        struct instant_ctx x = { m, mi, t, false };
        int r;

        r = session_event_update(m->s, mi->idx, t, m->opts.max_event_iterations,
                                 mi->n_oclocks ? between : NULL, &x, ret_term, ret_next);
        if (r < 0 && !x.failed) {
                m->fault = r;
                return master_err(m, r, "%s", session_message(m->s));
        }
        return r;
}

/* fmi3GetInterval* of c in Event Mode: *ret_t its interval, *ret_q its qualifier. */
static int get_interval(struct master *m, struct mi *mi, struct mclock *c, uint64_t *ret_cnt,
                        uint64_t *ret_res, double *ret_t, int *ret_q)
{
        int r;

        *ret_res = 0;
        if (c->supports_fraction) {
                r = inst_get_interval_fraction(mi->inst, &c->vr, 1, ret_cnt, ret_res, ret_q);
                *ret_t = *ret_res ? (double)*ret_cnt / (double)*ret_res : NAN;
        } else {
                r = inst_get_interval_decimal(mi->inst, &c->vr, 1, ret_t, ret_q);
        }
        if (r != INST_OK && r != INST_WARNING)
                return mstep_fault(m, mi, r, c->supports_fraction ? "GetIntervalFraction"
                                                                  : "GetIntervalDecimal");
        return 0;
}

/* After a tick of a periodic Clock: a tunable one's interval may have changed. */
static int next_periodic(struct master *m, struct mi *mi, struct mclock *c, double t)
{
        uint64_t cnt = 0, res = 0;
        double iv;
        int q = 0, r;

        if (c->iv == MD_INTERVAL_TUNABLE) {
                r = get_interval(m, mi, c, &cnt, &res, &iv, &q);
                if (r < 0)
                        return r;
        }
        if (q == QUAL_CHANGED && c->fraction && res == c->res && cnt > 0) {
                c->step = cnt;
        } else if (q == QUAL_CHANGED && (c->fraction || iv != c->interval)) {
                if (!(iv > 0 && isfinite(iv)))
                        return master_err(m, -EINVAL, "component '%s': Clock '%s' changed its "
                                          "interval to %.17g at t = %.17g: a periodic Clock's "
                                          "interval must be > 0 (FMI 3.0 section 2.2.8.2, Table "
                                          "7)", mi->name, mclock_var(m, mi, c->var)->name, iv, t);
                mclock_from_here(c, t, iv);
                return 0;
        }
        if (c->fraction)
                c->num += c->step;
        else
                c->k++;
        return 0;
}

/* After any Event Mode: a countdown Clock's qualifier; after a tick: a changing one's interval. */
static int next_aperiodic(struct master *m, struct mi *mi, struct mclock *c, double t)
{
        uint64_t cnt, res;
        double iv;
        int q = QUAL_NOT_YET_KNOWN, r;

        r = get_interval(m, mi, c, &cnt, &res, &iv, &q);
        if (r < 0)
                return r;
        if (c->iv == MD_INTERVAL_CHANGING || q == QUAL_CHANGED) {
                mclock_from_here(c, t, q == QUAL_NOT_YET_KNOWN ? INFINITY : iv);
                /* A known NaN interval (or infinite, yet Changed) would stop the Clock silently. */
                if (iv < 0 || (q != QUAL_NOT_YET_KNOWN && (isnan(iv) ||
                                                           (q == QUAL_CHANGED && isinf(iv)))))
                        return master_err(m, -EINVAL, "component '%s': Clock '%s' has interval "
                                          "%.17g at t = %.17g: it must be finite and >= 0 (FMI "
                                          "3.0 section 2.2.8.2, Tables 8 and 9)", mi->name,
                                          mclock_var(m, mi, c->var)->name, iv, t);
        } else if (c->due) {
                c->next = INFINITY;     /* ticked, and no new countdown yet */
        }
        return 0;
}

int mclock_leave(struct master *m, struct mi *mi, double t)
{
        int r = 0;

        if (mi->n_clocks == 0)
                return 0;
        for (size_t i = 0; i < mi->n_clocks && r == 0; i++) {
                struct mclock *c = &mi->clocks[i];
                bool was_due = c->due;

                if (mclock_periodic(c->iv) && c->due)
                        r = next_periodic(m, mi, c, t);
                else if (c->iv == MD_INTERVAL_COUNTDOWN ||
                         (c->iv == MD_INTERVAL_CHANGING && c->due))
                        r = next_aperiodic(m, mi, c, t);
                if (r < 0)
                        break;
                c->ticks += was_due;
                c->due = false;
                if (c->next != INFINITY)
                        c->next = mclock_tick_time(m, c);
                if (was_due && c->next <= t + master_tol(m, t))
                        r = master_err(m, -EINVAL, "component '%s': Clock '%s' would tick again "
                                       "at t = %.17g, in the time instant of its tick at %.17g: "
                                       "the master ticks a Clock once per time instant",
                                       mi->name, mclock_var(m, mi, c->var)->name, c->next, t);
        }
        if (r < 0 && m->fault == 0)
                m->fault = r;
        mclock_note_next(mi);
        return r;
}

uint64_t master_clock_ticks(const struct master *m, size_t comp, uint32_t vr)
{
        const struct mi *mi;

        if (!m || comp >= m->n)
                return 0;
        mi = &m->mi[comp];
        for (size_t i = 0; i < mi->n_clocks; i++)
                if (mi->clocks[i].vr == vr)
                        return mi->clocks[i].ticks;
        for (size_t i = 0; i < mi->n_oclocks; i++)
                if (mi->oclock_vrs[i] == vr)
                        return mi->oclock_ticks[i];
        return 0;
}
