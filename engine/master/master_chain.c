/*
 * master_chain: the next points' steps posted behind the current one, so
 * that a lone instance's worker goes from one step to the next without
 * waiting a round trip for the master, and the master posts one request
 * for several points.
 *
 * DESIGN: in a session of one instance whose inputs nothing drives (no
 * connection, no input file) and whose steps nothing can cut short or
 * follow with another call (no Event Mode, no early return, no
 * intermediate update, no saved states, numeric outputs only), the step
 * from t_{n+1} to t_{n+2} is known before the reply of the step to t_{n+1}
 * is read: the same inputs, the next two grid times. It is posted chained
 * (instance.h): the worker runs it only if the step before it completed
 * plainly, which is exactly when the master would post it next anyway,
 * so results are bit-identical to one round trip per point. When the step
 * before was not plain, the chained one is skipped by the worker and the
 * master, which sees the same reply, drops it and goes on as always.
 * Up to MCHAIN_REPEAT of the next points' steps go in one request
 * (instance.h, inst_step.repeat), each still chained behind the one
 * before and answered by its own reply, so the master reads point by
 * point as before. The next request is posted once no more than
 * MCHAIN_LOW chained steps are left to take, behind the last of them: so
 * the worker finds its next steps queued when it ends a request, instead
 * of idling until the master has taken the last reply. A step of 20 µs or
 * more (INST_HEAVY_STEP_NS) chains only the next one, and only once
 * nothing is chained, since a round trip is nothing beside it. Steps are
 * chained only inside the current stepping call (never past its target),
 * in a run as fast as possible, and with no pause, stop or warp change
 * pending: a request arriving later is honoured once the steps chained by
 * then are taken, at most MCHAIN_REPEAT + MCHAIN_LOW points later. The
 * step budget: a chained step is checked,
 * once collected, against the coupled step's deadline (from the start of
 * its point, as any step); the worker's deadline of the first step of a
 * request chained right behind the current step is what is left of the
 * current step's plus the budget, and of every other chained step that
 * much again from when its collection starts, so a hung chained step is
 * caught at most about one budget later than a hung step posted at its
 * point.
 */
#include "engine/master/master_int.h"

#include <assert.h>
#include <errno.h>
#include <math.h>

static_assert(MCHAIN_REPEAT >= 2 && MCHAIN_REPEAT <= INST_REPEAT_MAX, "a repeat the instance takes");
static_assert(1 + MCHAIN_LOW + MCHAIN_REPEAT <= INST_CHAIN_MAX, "steps the instance holds in flight");

void mchain_plan(struct master *m)
{
        const struct mi *mi = &m->mi[0];

        m->chain_ok = false;
        if (m->opts.no_chain || m->n != 1 || m->any_early ||
            m->opts.inputs || m->opts.rollback_on_fault)
                return;
        /* A rigid instance's step is rate * h, not the difference of two grid times. */
        if (mi->rate != 1 || mi->event_mode || mi->iu || mi->save_state || mi->n_routes ||
            mi->n_feeds || mi->n_iu || mi->rigid)
                return;
        for (size_t i = 0; i < mi->n_out; i++)
                if (mi->next[i].type == MD_STRING || mi->next[i].type == MD_BINARY ||
                    mi->next[i].type == MD_CLOCK)
                        return;
        m->chain_ok = true;
}

/*
 * Steps to chain from grid point 'from' on: up to MCHAIN_REPEAT, none past
 * the target or the last point; one for a step long enough that a round
 * trip is nothing beside it (a repeat would only hold a pause longer), and
 * none then while one is chained.
 */
static uint32_t chain_count(const struct master *m, const struct mi *mi, uint64_t from)
{
        uint64_t last = m->target < m->n_end ? m->target : m->n_end, n;

        if (last < from + 1)
                return 0;
        n = last - from;
        if (inst_last_service_ns(mi->inst) >= INST_HEAVY_STEP_NS)
                return mi->chained ? 0 : 1;
        return n < MCHAIN_REPEAT ? (uint32_t)n : MCHAIN_REPEAT;
}

/* Nothing chained any more. */
static void forget(struct mi *mi)
{
        mi->chained = 0;
        mi->chain_reqs = 0;
        mi->chain_head = 0;
}

void mchain_post(struct master *m, struct mi *mi, uint64_t now)
{
        unsigned buf = (mi->chain_first + mi->chain_reqs) % MCHAIN_BUFS;
        uint64_t timeout = INST_TIMEOUT_NONE, from;
        struct inst_step *s;
        double *times;
        uint32_t n;
        int r;

        if (!m->chain_ok || mi->chained > MCHAIN_LOW || mi->chain_reqs >= 2 || !mi->posted ||
            !m->at_grid || mi->aim != m->t_next || isfinite(mi_next_time(mi)) || m->warp != 0 ||
            atomic_load_explicit(&m->requests, memory_order_relaxed) != 0 ||
            atomic_load_explicit(&m->warp_bits, memory_order_relaxed) != 0)
                return;
        /* Behind the current step, or behind the last step chained. */
        from = mi->chained ? mi->chain_end : m->pt + 1;
        n = chain_count(m, mi, from);
        if (!n)
                return;
        /* The steps mstep_plan() will plan at t_{from}, t_{from+1}, ..., value for value. */
        times = mi->chain_times[buf];
        if (mi->chained) {
                unsigned last = (mi->chain_first + mi->chain_reqs - 1) % MCHAIN_BUFS;

                times[0] = mi->chain_times[last][mi->chain_len[last]];
        } else {
                times[0] = m->t_next;
        }
        for (uint32_t j = 1; j <= n; j++)
                times[j] = master_grid(m, from + j);
        if (m->step_deadline_ns)
                timeout = (m->step_deadline_ns > now ? m->step_deadline_ns - now : 1) +
                          (uint64_t)(m->budget_s * 1e9);
        s = &mi->chain[buf];
        *s = (struct inst_step){
                .t = times[0],
                .h = times[1] - times[0],
                .no_set_prior = true,
                .inputs = mi->inst_in,
                .n_inputs = mi->n_in_step,
                .outputs = mi->inst_out,
                .n_outputs = mi->n_out_step,
                .timeout_ns = timeout,
                .now_ns = now,
                .chained = true,
                .repeat = n > 1 ? n : 0,
                .times = n > 1 ? times : NULL,
        };
        r = inst_post_step(mi->inst, s);
        if (r == -EAGAIN) {
                /* This instance's steps do not fit the ring: not again in this session. */
                m->chain_ok = false;
                return;
        }
        if (r < 0)
                return;         /* a fault: the current step's reply reports it */
        if (!mi->chain_reqs) {
                mi->chain_first = buf;
                mi->chain_head = 0;
        }
        mi->chain_len[buf] = n;
        mi->chain_reqs++;
        mi->chained += n;
        mi->chain_end = from + n;
}

int mchain_collected(struct master *m, struct mi *mi, int r, uint64_t now)
{
        const struct inst_step_result *res = &mi->res;
        bool took = mi->took_chain;

        mi->took_chain = false;
        /* The worker's test (worker/call.h, call_do_step.chained), on the same values. */
        mi->plain = (r == INST_OK || r == INST_WARNING) && res->phase == INST_PHASE_DONE &&
                    !res->event_handling_needed && !res->terminate_simulation &&
                    !res->early_return;
        if (!took || r < 0 || r > INST_WARNING || !m->step_deadline_ns ||
            now <= m->step_deadline_ns)
                return r;
        /* Its worker's deadline was longer than the budget: the budget is checked here. */
        mi->plain = false;
        session_mark_failed(m->s, mi->idx);
        m->fault = -ETIMEDOUT;
        return master_err(m, -ETIMEDOUT, "component '%s': fmi3DoStep at t = %.17g (step to %.17g): "
                          "missed the step budget of %g s " MASTER_BUDGET_HINT, mi->name,
                          mi->from, mi->aim, m->budget_s);
}

/* Collect the chained steps the worker must have skipped, all of them. 0, or the fault. */
static int drop(struct master *m, struct mi *mi)
{
        while (mi->chained) {
                struct inst_step_result res;
                int r;

                mi->chained--;
                r = inst_wait_step(mi->inst, &res);
                if (r == -ECANCELED)
                        continue;
                if (r < 0) {
                        forget(mi);     /* a fault: nothing more will come */
                        return m->fault ? m->fault : mstep_fault(m, mi, r, "DoStep");
                }
                /* It ran: the instance is a step past the point the master holds. */
                forget(mi);
                session_mark_failed(m->s, mi->idx);
                if (m->fault)
                        return m->fault;
                m->fault = -EPROTO;
                return master_err(m, -EPROTO, "component '%s': a step chained behind the one to "
                                  "t = %.17g ran although that step did not complete plainly",
                                  mi->name, mi->aim);
        }
        forget(mi);
        return 0;
}

int mchain_take(struct master *m, struct mi *mi, bool *ret_taken)
{
        unsigned buf = mi->chain_first, j = mi->chain_head;
        const struct inst_step *s = &mi->chain[buf];
        const double *times = mi->chain_times[buf];

        *ret_taken = false;
        if (!mi->chained)
                return 0;
        if (!mi->plain || times[j] != mi->from || times[j + 1] != mi->aim)
                return drop(m, mi);
        /* Its round trip counts from now (post()): until now the worker ran the one before. */
        mi->chained--;
        if (++mi->chain_head == mi->chain_len[buf]) {
                /* Its buffer stays untouched while this last step is in flight. */
                mi->chain_first = (buf + 1) % MCHAIN_BUFS;
                mi->chain_head = 0;
                mi->chain_reqs--;
        }
        mi->step = *s;
        mi->step.t = times[j];
        mi->step.h = times[j + 1] - times[j];
        mi->step.repeat = 0;
        mi->step.times = NULL;
        mi->took_chain = true;
        m->chained++;
        *ret_taken = true;
        return 0;
}

bool mchain_live(const struct master *m)
{
        return m->chain_ok && m->mi[0].chained;
}

int mchain_drain(struct master *m)
{
        int fault = 0;

        for (size_t i = 0; i < m->n; i++) {
                struct mi *mi = &m->mi[i];
                int r;

                if (!mi->chained)
                        continue;
                if (inst_fault(mi->inst)) {
                        struct inst_step_result res;

                        for (; mi->chained; mi->chained--)
                                (void) inst_wait_step(mi->inst, &res);
                        forget(mi);
                        continue;
                }
                mi->plain = false;
                r = drop(m, mi);
                if (r < 0 && !fault)
                        fault = r;
        }
        return fault;
}
