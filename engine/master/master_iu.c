/*
 * master_iu: the master's side of Intermediate Update Mode (FMI 3.0
 * section 4.2.2) and the output derivatives it needs.
 *
 * In an instance's intermediate update at time t (inside its DoStep from
 * the current point), the master:
 *   1. reads the instance's recorded intermediate outputs, when the
 *      session asked for them, and hands the sink a row flagged
 *      MASTER_ROW_INTERMEDIATE (the other columns hold their published
 *      values);
 *   2. sets each connected intermediate input to its producer's published
 *      value extrapolated to t (extrapolate.h) with the producer's output
 *      derivatives at the time of that value, where it provides them and
 *      they belong to the current point (else the held value), then the
 *      connection's transformation;
 *   3. asks for an early return when the hook says so, or (with
 *      opts.early_return_on_request) when a pause or stop is pending.
 * Derivatives are got after every point, for the producers that feed
 * intermediate inputs only.
 *
 * Threads: runs on the master thread, inside inst_wait_step() of the
 * instance (the worker waits in its callback meanwhile).
 */
#include "engine/master/master_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/master/extrapolate.h"
#include "engine/master/master_value.h"

static void iu_failed(struct master *m, struct mi *mi, const char *what, int r)
{
        if (!m->iu_msg[0])
                snprintf(m->iu_msg, sizeof(m->iu_msg), "%s of '%s' failed: %s", what, mi->name,
                         r >= 0 ? session_status_name(r) : inst_message(mi->inst));
}

static void record(struct master *m, struct mi *mi, double t)
{
        for (size_t i = 0; i < mi->n_iu_out; i++) {
                struct mblock *b = &mi->iu_out[i];
                int r;

                if (b->type == MD_BINARY)
                        r = inst_get_binary(mi->inst, b->vrs, b->n_vars, b->sizes,
                                            (const uint8_t **)b->vals, b->n);
                else
                        r = inst_get(mi->inst, b->type, b->vrs, b->n_vars, b->vals, b->n);
                if (r != INST_OK && r != INST_WARNING) {
                        iu_failed(m, mi, "getting intermediate outputs", r);
                        return;
                }
        }
        mroute_fill(m);
        for (size_t i = 0; i < mi->n_iu_cols; i++)
                mroute_cell(m, mi->iu_cols[i].col, mi->iu_cols[i].block, mi->iu_cols[i].off);
        mroute_emit(m, t, MASTER_ROW_INTERMEDIATE | (m->at_grid ? 0 : MASTER_ROW_EXTRA), mi->idx);
}

static double src_value(const struct mblock *b, size_t i)
{
        return b->type == MD_FLOAT32 ? (double)((const float *)b->vals)[i]
                                     : ((const double *)b->vals)[i];
}

static void inputs(struct master *m, struct mi *mi, double t)
{
        for (size_t i = 0; i < mi->n_iu; i++) {
                const struct miu *u = &mi->iu_routes[i];
                const struct mi *p = &m->mi[u->prod];
                /* Derivatives only where they describe the value being extrapolated. */
                unsigned order = p->t_der == p->t_pub && p->t_pub == m->t_cur ? u->order : 0;
                double dt = t - p->t_pub;

                for (size_t e = 0; e < u->n; e++) {
                        double d[EXTRAPOLATE_MAX_ORDER] = { 0 };
                        double x;

                        for (unsigned o = 0; o < order; o++)
                                d[o] = p->der_vals[u->der_off + o * u->n + e];
                        x = extrapolate(src_value(u->src, u->src_off + e), d, order, dt);
                        if (!u->identity)
                                x = u->factor * x + u->offset;
                        if (u->dst->type == MD_FLOAT32)
                                ((float *)u->dst->vals)[u->dst_off + e] = (float)x;
                        else
                                ((double *)u->dst->vals)[u->dst_off + e] = x;
                }
        }
        for (size_t i = 0; i < mi->n_iu_in; i++) {
                const struct mblock *b = &mi->iu_in[i];
                int r = inst_set(mi->inst, b->type, b->vrs, b->n_vars, b->vals, b->n);

                if (r != INST_OK && r != INST_WARNING) {
                        iu_failed(m, mi, "setting intermediate inputs", r);
                        return;
                }
        }
}

void miu_callback(void *ctx, size_t comp, struct inst *inst, const struct inst_iu *iu,
                  bool *ret_early_return, double *ret_time)
{
        struct master *m = ctx;
        struct mi *mi = &m->mi[comp];

        (void) inst;
        /* All gets come before any set (section 4.2.2). */
        if (iu->get_allowed && mi->n_iu_out && m->opts.sink)
                record(m, mi, iu->time);
        if (iu->set_requested && mi->n_iu)
                inputs(m, mi, iu->time);
        if (!iu->can_return_early)
                return;
        if (m->opts.iu_hook && m->opts.iu_hook(m->opts.iu_hook_ctx, comp, ret_time))
                *ret_early_return = true;
        else if (m->opts.early_return_on_request &&
                 (atomic_load_explicit(&m->requests, memory_order_relaxed) &
                  (MASTER_REQ_PAUSE | MASTER_REQ_STOP)))
                *ret_early_return = true;
}

int miu_refresh_derivatives(struct master *m)
{
        for (size_t i = 0; i < m->n; i++) {
                struct mi *p = &m->mi[i];
                int r;

                if (!p->n_der || !isnan(p->t_der) || p->t_pub != m->t_cur || p->t != m->t_cur)
                        continue;
                r = inst_get_output_derivatives(p->inst, p->der_vrs, p->n_der, p->der_orders,
                                                p->der_vals, p->n_der_vals);
                if (r != INST_OK && r != INST_WARNING)
                        return mstep_fault(m, p, r, "GetOutputDerivatives");
                p->t_der = m->t_cur;
        }
        return 0;
}
