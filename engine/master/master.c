/*
 * master: the public API of the master (master.h): construction, the
 * stepping loops with their pause/stop checks and pacing, requests from
 * other threads, statistics and published values.
 *
 * DESIGN: the stepping loop checks the request flags between points
 * only, so a point is never cut in half: a pause leaves every instance at
 * the point with its state and published outputs, and the next stepping
 * call goes on from there exactly as an uninterrupted run would.
 *
 * Threads: see master_int.h for what the atomics protect. Everything
 * else belongs to the thread that calls the stepping functions.
 */
#include "engine/master/master_int.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/master/master_value.h"

static uint64_t dbl_bits(double d)
{
        uint64_t u;

        memcpy(&u, &d, sizeof(u));
        return u;
}

static double bits_dbl(uint64_t u)
{
        double d;

        memcpy(&d, &u, sizeof(d));
        return d;
}

double master_grid(const struct master *m, uint64_t k)
{
        return k >= m->n_end ? m->t_stop : m->t0 + (double)k * m->h;
}

double master_tol(const struct master *m, double t)
{
        return fmax(1e-9 * m->h, 16 * DBL_EPSILON * fabs(t));
}

int master_err(struct master *m, int err, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(m->msg, sizeof(m->msg), fmt, ap);
        va_end(ap);
        return err;
}

void master_note(struct master *m, size_t comp, const char *fmt, ...)
{
        char buf[MASTER_NOTE_MAX];
        va_list ap;

        if (!m->opts.note)
                return;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        m->opts.note(m->opts.note_ctx, comp, buf);
}

void master_set_state(struct master *m, enum master_state st)
{
        atomic_store_explicit(&m->state, (int)st, memory_order_release);
}

enum master_state master_state(const struct master *m)
{
        return (enum master_state)atomic_load_explicit(&((struct master *)m)->state,
                                                       memory_order_acquire);
}

const char *master_state_name(enum master_state s)
{
        static const char *const names[] = { "loaded", "running", "paused", "finished",
                                             "faulted", "stopped" };

        return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

void master_opts_default(struct master_opts *o)
{
        *o = (struct master_opts){ 0 };
}

/* The grid: n_end points of h from start, the last one clipped to stop. */
static int grid_init(struct master *m)
{
        const struct scenario_experiment *e = &m->sc->experiment;

        m->t0 = e->start;
        m->t_stop = e->stop;
        m->h = e->step;
        if (!(m->h > 0) || !isfinite(m->h) || !isfinite(m->t0) || !isfinite(m->t_stop) ||
            !(m->t_stop > m->t0))
                return master_err(m, -EINVAL, "experiment: start %g, stop %g and step %g do not "
                                  "make a time grid", m->t0, m->t_stop, m->h);
        m->n_end = scenario_grid_end(e);
        if (!m->n_end)
                return master_err(m, -EINVAL, "experiment: %g points are too many",
                                  (m->t_stop - m->t0) / m->h);
        m->budget_s = e->budget > 0 ? e->budget : INFINITY;
        m->decimation = e->decimation ? e->decimation : 1;
        return 0;
}

/*
 * Whether an instance may end a coupled step before the others: an early
 * return, or, in a later Gauss-Seidel stage, a time event from the Event
 * Mode of a discrete input's change just before its step (master_step.c).
 */
static bool may_stop_short(const struct master *m, const struct mi *mi)
{
        return session_early_return_allowed(m->s, mi->idx) ||
               (mi->event_mode && mi->n_disc && mi->stage > 0 && !mi->rigid);
}

/* Who saves FMU states before each step (see master.h, early return). */
static void plan_states(struct master *m)
{
        size_t early = 0;

        for (size_t i = 0; i < m->n; i++)
                early += may_stop_short(m, &m->mi[i]);
        m->any_early = early > 0;
        for (size_t i = 0; i < m->n; i++) {
                struct mi *mi = &m->mi[i];
                bool others = early > (may_stop_short(m, mi) ? 1u : 0u);
                bool gs = false;

                for (size_t j = 0; j < mi->n_routes; j++)
                        gs |= mi->routes[j].sequential;
                /* One whose step is fixed is never sent back to meet an early return. */
                mi->save_state = mi->can_state &&
                                 (m->opts.rollback_on_fault ||
                                  (!mi->rigid && (others || (gs && m->any_early))));
        }
}

static int init_insts(struct master *m)
{
        for (size_t i = 0; i < m->n; i++) {
                const struct scenario_component *c = &m->sc->components[i];
                struct mi *mi = &m->mi[i];

                mi->inst = session_inst(m->s, i);
                mi->name = c->name;
                mi->idx = i;
                mi->fmi = c->fmu->md->fmi == MD_FMI2 ? 2 : 3;
                mi->rate = c->multirate ? c->multirate : 1;
                mi->event_mode = session_event_mode_used(m->s, i);
                mi->can_state = c->fmu->md->cs.can_get_and_set_fmu_state;
                mi->rigid = !c->fmu->md->cs.can_handle_variable_communication_step_size;
                if (c->fmu->md->cs.has_fixed_internal_step_size)
                        mi->fixed_step = c->fmu->md->cs.fixed_internal_step_size;
                mi->iu = session_iu_enabled(m->s, i);
                mi->next_event = session_next_event_time(m->s, i);
                mi->init_event = session_in_init_event(m->s, i);
                mi->cut = NAN;
                mi->t = m->t0;
                mi->t_pub = m->t0;
                mi->t_der = NAN;
        }
        return 0;
}

/* The outputs at the start time, published before the first step. */
static int first_outputs(struct master *m)
{
        for (size_t i = 0; i < m->n; i++) {
                struct mi *mi = &m->mi[i];
                int r = mroute_get_outputs(m, mi);

                mi->from = mi->aim = m->t0;
                if (r != INST_OK && r != INST_WARNING)
                        return mstep_fault(m, mi, r, "Get (outputs at the start time)");
                if (mroute_publish(m, mi) < 0)
                        return master_err(m, -ENOMEM, "out of memory");
        }
        return miu_refresh_derivatives(m);
}

int master_new(struct session *s, const struct master_opts *opts, struct master **ret,
               char **ret_message)
{
        struct master *m;
        size_t who;
        int r;

        if (ret_message)
                *ret_message = NULL;
        if (!s || !ret)
                return -EINVAL;
        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        atomic_init(&m->requests, 0);
        atomic_init(&m->state, MASTER_LOADED);
        m->s = s;
        m->sc = session_scenario(s);
        if (opts)
                m->opts = *opts;
        m->n = session_count(s);
        atomic_init(&m->warp_bits, dbl_bits(m->sc->experiment.warp > 0 ? m->sc->experiment.warp : 0));
        m->mi = calloc(m->n ? m->n : 1, sizeof(*m->mi));
        m->ist = calloc(m->n ? m->n : 1, sizeof(*m->ist));
        r = !m->mi || !m->ist ? master_err(m, -ENOMEM, "out of memory") : grid_init(m);
        if (r == 0 && mlive_init(m) < 0)
                r = master_err(m, -ENOMEM, "out of memory");
        if (r == 0)
                r = init_insts(m);
        if (r == 0)
                r = mplan_build(m);
        if (r == 0) {
                plan_states(m);
                mchain_plan(m);
                mspread_init(m);
                session_set_iu(s, miu_callback, m);
                m->pt = 0;
                m->t_cur = m->t0;
                master_note_point(m);
                m->at_grid = true;
                m->t_next = master_grid(m, 1);
                r = first_outputs(m);
                if (r == 0)
                        r = minput_start(m);
        }
        if (r == 0)
                mrig_start(m);
        if (r < 0) {
                if (ret_message)
                        *ret_message = strdup(m->msg[0] ? m->msg : strerror(-r));
                master_free(m);
                return r;
        }
        r = mevent_start(m);
        if (r < 0) {
                if (ret_message)
                        *ret_message = strdup(m->msg[0] ? m->msg : strerror(-r));
                master_free(m);
                return r;
        }
        mroute_flush(m);
        mrig_outputs(m);
        if (session_terminate_requested(s, &who)) {
                master_err(m, 0, "terminateSimulation requested by '%s' at t = %.17g "
                           "(initialization)", session_name(s, who), m->t0);
                master_set_state(m, MASTER_FINISHED);
        }
        *ret = m;
        return 0;
}

void master_free(struct master *m)
{
        if (!m)
                return;
        if (m->s)
                session_set_iu(m->s, NULL, NULL);
        mplan_free(m);
        mlive_fini(m);
        free(m->mi);
        free(m->ist);
        free(m);
}

/* Between points: honour requests and warp changes. False when the loop must end. */
static bool between(struct master *m)
{
        unsigned req = atomic_load_explicit(&m->requests, memory_order_relaxed);
        double w = bits_dbl(atomic_load_explicit(&m->warp_bits, memory_order_relaxed));

        if (req & MASTER_REQ_STOP) {
                master_set_state(m, MASTER_STOPPED);
                return false;
        }
        if ((req & MASTER_REQ_PAUSE) || m->pause_self) {
                atomic_fetch_and_explicit(&m->requests, ~MASTER_REQ_PAUSE, memory_order_relaxed);
                m->paused_self = m->pause_self;
                m->pause_self = false;
                m->pace_valid = false;
                master_set_state(m, MASTER_PAUSED);
                return false;
        }
        if (!m->pace_valid || w != m->warp) {
                pace_rebase(&m->pace, pace_now_ns(), m->t_cur, w);
                m->warp = w;
                m->pace_valid = true;
        }
        return true;
}

/* Advance until grid point 'target' (at most the last one). */
static int advance(struct master *m, uint64_t target)
{
        enum master_state st = master_state(m);
        uint64_t start = pace_now_ns();
        int r = 0;

        if (st == MASTER_FINISHED || st == MASTER_FAULTED || st == MASTER_STOPPED)
                return -EPERM;
        /*
         * A run goes on across stepping calls: the time between them (its
         * host serving requests, a slow machine) is the run's too, so the
         * real-time factor is simulated over wall time of every point, not
         * of the calls alone. A pause ends the run; resuming starts anew.
         */
        if (st == MASTER_RUNNING && m->call_end_ns && start > m->call_end_ns)
                m->wall_ns += start - m->call_end_ns;
        if (target > m->n_end)
                target = m->n_end;
        /* A run after a pause: the rig's pause policy holds while it is silent. */
        if (st == MASTER_PAUSED)
                mrig_resume(m);
        m->paused_self = false;
        master_set_state(m, MASTER_RUNNING);
        /* Restored at the last point (a snapshot of a longer run): nothing left to step. */
        if (m->at_grid && m->pt >= m->n_end)
                master_set_state(m, MASTER_FINISHED);
        m->target = target;
        while (!(m->at_grid && m->pt >= target)) {
                /* A step chained to the next point is in flight: requests wait for it. */
                if (!mchain_live(m) && !between(m))
                        break;
                /* A request to serve: back to the owner at this point (master_live.c). */
                if (!mchain_live(m) && mlive_serve_pending(m))
                        break;
                /* The wait a serve request cut short, before the next step. */
                if (m->pace_owed && m->warp > 0 &&
                    !mlive_sleep(m, pace_due_ns(&m->pace, m->t_cur), dbl_bits(m->warp)))
                        continue;
                m->pace_owed = false;
                m->t_next = master_grid(m, m->pt + 1);
                r = mstep_point(m);
                if (r < 0) {
                        master_set_state(m, MASTER_FAULTED);
                        break;
                }
                /* The last point too: a paced run does not end before its stop time is due. */
                if (m->warp > 0) {
                        /* A paced run's rows go out on time, not a point late. */
                        mroute_flush(m);
                        r = mpace_point(m, dbl_bits(m->warp));
                        if (r < 0) {
                                master_set_state(m, MASTER_FAULTED);
                                break;
                        }
                } else {
                        m->lag_ns = 0;
                }
                if (master_state(m) == MASTER_FINISHED)
                        break;
                if (m->at_grid && m->pt >= m->n_end) {
                        master_set_state(m, MASTER_FINISHED);
                        break;
                }
        }
        if (mchain_drain(m) < 0 && r >= 0) {
                master_set_state(m, MASTER_FAULTED);
                r = m->fault;
        }
        mroute_flush(m);
        mrig_idle(m);
        m->call_end_ns = pace_now_ns();
        m->wall_ns += m->call_end_ns - start;
        return r < 0 ? r : (int)master_state(m);
}

int master_terminate(struct master *m)
{
        size_t comp = 0;
        int r;

        if (m->terminated)
                return m->terminate_r;
        m->terminated = true;
        r = session_terminate(m->s, &comp);
        if (r == 0)
                return 0;
        for (size_t i = 0; i < m->n; i++)
                if (m->mi[i].idx == comp) {
                        r = mstep_fault(m, &m->mi[i], r, "Terminate");
                        break;
                }
        if (r >= 0)
                r = -EIO;
        master_set_state(m, MASTER_FAULTED);
        m->terminate_r = r;
        return r;
}

int master_step(struct master *m, uint64_t n)
{
        uint64_t target = n > m->n_end ? m->n_end + 1 : m->pt + n;

        if (n == 0) {
                enum master_state st = master_state(m);

                return st == MASTER_FINISHED || st == MASTER_FAULTED || st == MASTER_STOPPED ?
                       -EPERM : (int)st;
        }
        return advance(m, target);
}

int master_run_until(struct master *m, double t)
{
        uint64_t k;

        if (isnan(t))
                return -EINVAL;
        if (t >= m->t_stop - master_tol(m, m->t_stop))
                return advance(m, m->n_end);
        if (t <= m->t0)
                return advance(m, 0);
        k = (uint64_t)floor((t - m->t0) / m->h);
        while (k < m->n_end && master_grid(m, k + 1) <= t + master_tol(m, t))
                k++;
        while (k > 0 && master_grid(m, k) > t + master_tol(m, t))
                k--;
        return advance(m, k);
}

int master_run(struct master *m)
{
        return advance(m, m->n_end);
}

void master_request_pause(struct master *m)
{
        atomic_fetch_or_explicit(&m->requests, MASTER_REQ_PAUSE, memory_order_relaxed);
}

void master_request_stop(struct master *m)
{
        atomic_fetch_or_explicit(&m->requests, MASTER_REQ_STOP, memory_order_relaxed);
}

void master_request_abandon(struct master *m, const char *why)
{
        master_request_stop(m);
        for (size_t i = 0; i < session_count(m->s); i++)
                if (session_inst(m->s, i))
                        inst_abandon(session_inst(m->s, i), why);
}

int master_set_warp(struct master *m, double w)
{
        if (!(w >= 0) || !isfinite(w))
                return -EINVAL;
        atomic_store_explicit(&m->warp_bits, dbl_bits(w), memory_order_relaxed);
        return 0;
}

const char *master_message(const struct master *m)
{
        return m->msg;
}

void master_note_point(struct master *m)
{
        atomic_store_explicit(&m->live_t_bits, dbl_bits(m->t_cur), memory_order_relaxed);
        atomic_store_explicit(&m->live_points, m->points, memory_order_relaxed);
}

void master_live(const struct master *m, double *time, uint64_t *points)
{
        *time = bits_dbl(atomic_load_explicit(&m->live_t_bits, memory_order_relaxed));
        *points = atomic_load_explicit(&m->live_points, memory_order_relaxed);
}

double master_time(const struct master *m)
{
        return m->t_cur;
}

void master_hold(struct master *m)
{
        m->call_end_ns = 0;
        m->pace_valid = false;
}

uint64_t master_point(const struct master *m)
{
        return m->pt;
}

void master_get_stats(const struct master *m, struct master_stats *ret)
{
        double wall = (double)m->wall_ns * 1e-9;
        uint64_t now = pace_now_ns();

        *ret = (struct master_stats){
                .points = m->points,
                .extra_points = m->extra_points,
                .events = m->events,
                .restores = m->restores,
                .chained = m->chained,
                .moves = m->moves,
                .sim_time = m->t_cur,
                .wall_s = wall,
                .rtf = wall > 0 ? (m->t_cur - m->t0) / wall : 0.0,
                .lag_s = (double)m->lag_ns * 1e-9,
                .lag_max_s = (double)m->lag_max_ns * 1e-9,
                .overruns = m->overruns,
                .n_insts = m->n,
                .insts = m->ist,
        };
        lateness_all(&m->lat, &ret->lateness);
        lateness_window(&m->lat, now, &ret->lateness_window);
        lat_hist_summary(&m->wake, &ret->wakeup);
}

int master_published(const struct master *m, size_t comp, size_t var, struct master_pub *ret)
{
        const struct mslot *sl = comp < m->n ? mplan_slot(&m->mi[comp], var) : NULL;
        const struct mblock *b;

        if (!sl)
                return -ENOENT;
        b = &m->mi[comp].pub[sl->block];
        *ret = (struct master_pub){ .type = b->type, .vals = b->vals, .sizes = b->sizes,
                                    .off = sl->off, .n = sl->n, .time = m->mi[comp].t_pub };
        return 0;
}

int master_value(const struct master *m, size_t comp, size_t var, uint64_t element, double *ret)
{
        const struct mslot *sl = comp < m->n ? mplan_slot(&m->mi[comp], var) : NULL;

        if (!sl || element >= sl->n)
                return -ENOENT;
        *ret = mv_to_double(m->mi[comp].pub[sl->block].type, m->mi[comp].pub[sl->block].vals,
                            sl->off + (size_t)element);
        return 0;
}
