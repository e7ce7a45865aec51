/*
 * master_chain: the next point's step posted behind the current one, so
 * that a lone instance's worker goes from one step to the next without
 * waiting a round trip for the master.
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
 * A step is chained only inside the current stepping call (never past its
 * target), in a run as fast as possible, and with no pause, stop or warp
 * change pending: a request arriving later is honoured one point later.
 * The step budget: a chained step is checked, once collected, against the
 * coupled step's deadline (from the start of its point, as any step), and
 * its worker's deadline is what is left of the current step's plus the
 * budget, so a hung chained step is caught at most one budget later than
 * a hung step posted at its point.
 */
#include "daemon/master_int.h"

#include <errno.h>
#include <math.h>

void mchain_plan(struct master *m)
{
        const struct mi *mi = &m->mi[0];

        m->chain_ok = false;
        if (m->opts.no_chain || m->n != 1 || m->any_early ||
            m->opts.inputs || m->opts.rollback_on_fault)
                return;
        if (mi->rate != 1 || mi->event_mode || mi->iu || mi->save_state || mi->n_routes ||
            mi->n_feeds || mi->n_iu)
                return;
        for (size_t i = 0; i < mi->n_out; i++)
                if (mi->next[i].type == MD_STRING || mi->next[i].type == MD_BINARY ||
                    mi->next[i].type == MD_CLOCK)
                        return;
        m->chain_ok = true;
}

void mchain_post(struct master *m, struct mi *mi, uint64_t now)
{
        uint64_t k = m->pt + 2, timeout = 0;
        struct inst_step *s;
        double t_end;
        int r;

        if (!m->chain_ok || mi->chained || !mi->posted || !m->at_grid || k > m->target ||
            k > m->n_end || mi->aim != m->t_next || isfinite(mi->next_event) || m->warp != 0 ||
            atomic_load_explicit(&m->requests, memory_order_relaxed) != 0 ||
            atomic_load_explicit(&m->warp_bits, memory_order_relaxed) != 0)
                return;
        /* The step mstep_plan() will plan at t_{n+1}, value for value. */
        t_end = master_grid(m, k);
        if (m->step_deadline_ns)
                timeout = (m->step_deadline_ns > now ? m->step_deadline_ns - now : 1) +
                          (uint64_t)(m->budget_s * 1e9);
        s = &mi->chain[mi->chain_next];
        *s = (struct inst_step){
                .t = m->t_next,
                .h = t_end - m->t_next,
                .no_set_prior = true,
                .inputs = mi->inst_in,
                .n_inputs = mi->n_in,
                .outputs = mi->inst_out,
                .n_outputs = mi->n_out,
                .timeout_ns = timeout,
                .now_ns = now,
                .chained = true,
        };
        r = inst_post_step(mi->inst, s);
        if (r == -EAGAIN) {
                /* This instance's steps do not fit the ring: not again in this session. */
                m->chain_ok = false;
                return;
        }
        if (r < 0)
                return;         /* a fault: the current step's reply reports it */
        mi->chained = true;
        mi->chain_aim = t_end;
        mi->chain_next ^= 1;
}

int mchain_collected(struct master *m, struct mi *mi, int r, uint64_t now)
{
        const struct inst_step_result *res = &mi->res;
        bool took = mi->took_chain;

        mi->took_chain = false;
        /* The worker's test (worker/call.h, call_do_step.chained), on the same values. */
        mi->plain = (r == INST_OK || r == INST_WARNING) && res->phase == INST_PHASE_DONE &&
                    !res->event_handling_needed && !res->terminate_simulation &&
                    !res->early_return &&
                    res->last_successful_time == mi->step.t + mi->step.h;
        if (!took || r < 0 || r > INST_WARNING || !m->step_deadline_ns ||
            now <= m->step_deadline_ns)
                return r;
        /* Its worker's deadline was longer than the budget: the budget is checked here. */
        mi->plain = false;
        session_mark_failed(m->s, mi->idx);
        m->fault = -ETIMEDOUT;
        return master_err(m, -ETIMEDOUT, "component '%s': fmi3DoStep at t = %.17g (step to %.17g): "
                          "missed the step budget of %g s", mi->name, mi->from, mi->aim,
                          m->budget_s);
}

/* Collect a chained step the worker must have skipped. 0, or the fault. */
static int drop(struct master *m, struct mi *mi)
{
        struct inst_step_result res;
        int r;

        mi->chained = false;
        r = inst_wait_step(mi->inst, &res);
        if (r == -ECANCELED)
                return 0;
        if (r < 0)
                return m->fault ? m->fault : mstep_fault(m, mi, r, "DoStep");
        /* It ran: the instance is a step past the point the master holds. */
        session_mark_failed(m->s, mi->idx);
        if (m->fault)
                return m->fault;
        m->fault = -EPROTO;
        return master_err(m, -EPROTO, "component '%s': a step chained behind the one to t = %.17g "
                          "ran although that step did not complete plainly", mi->name, mi->aim);
}

int mchain_take(struct master *m, struct mi *mi, bool *ret_taken)
{
        const struct inst_step *s = &mi->chain[mi->chain_next ^ 1];

        *ret_taken = false;
        if (!mi->chained)
                return 0;
        if (!mi->plain || s->t != mi->from || mi->chain_aim != mi->aim)
                return drop(m, mi);
        /* Its round trip counts from now (post()): until now the worker ran the one before. */
        mi->chained = false;
        mi->step = *s;
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

                        mi->chained = false;
                        (void) inst_wait_step(mi->inst, &res);
                        continue;
                }
                mi->plain = false;
                r = drop(m, mi);
                if (r < 0 && !fault)
                        fault = r;
        }
        return fault;
}
