/*
 * master_save: the master's own state at a point, saved and set back
 * (master.h, master_save()), so that a session whose instances' FMU
 * states are restored at the same time continues exactly as an
 * uninterrupted run would: the same rows, bit for bit.
 *
 * DESIGN: what survives from one point to the next is copied: the time
 * (grid index, current and next time, at-grid flag), each instance's own
 * position (its time, next own grid index, pending outputs of a slow
 * multirate instance, its time event, its event and terminate flags, its
 * Clocks' next ticks and tick counts), the
 * published outputs (String and Binary copied by content), the output
 * derivatives and the statistics. Input blocks are not saved: they are
 * rebuilt from the published outputs before every use. What a step
 * computes only for itself (due, todo, saved FMU state handles, ...) is
 * reset. A slow instance's pending String or Binary outputs are borrowed
 * from its worker's reply, which a restore of its FMU state invalidates:
 * saving them is refused (-EOPNOTSUPP).
 *
 * Threads: the master's thread, or any thread while no stepping call
 * runs (as master_time()).
 */
#include "engine/master/master_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/master/master_save_int.h"
#include "engine/master/master_value.h"

static bool is_blob(enum md_type t)
{
        return t == MD_STRING || t == MD_BINARY;
}

static void block_free(struct saved_block *b)
{
        if (b->blobs)
                for (size_t j = 0; j < b->n; j++)
                        free(b->blobs[j]);
        free(b->blobs);
        free(b->sizes);
        free(b->vals);
}

static int block_save(struct saved_block *d, const struct mblock *b)
{
        size_t n = b->n ? b->n : 1;

        if (!is_blob(b->type)) {
                d->vals = malloc(n * mv_size(b->type));
                if (!d->vals)
                        return -ENOMEM;
                memcpy(d->vals, b->vals, b->n * mv_size(b->type));
                return 0;
        }
        d->blobs = calloc(n, sizeof(*d->blobs));
        d->sizes = calloc(n, sizeof(*d->sizes));
        if (!d->blobs || !d->sizes)
                return -ENOMEM;
        for (size_t j = 0; j < b->n; j++, d->n++) {
                const void *p = ((const void *const *)b->vals)[j];

                d->sizes[j] = b->sizes[j];
                d->blobs[j] = malloc(d->sizes[j] ? d->sizes[j] : 1);
                if (!d->blobs[j])
                        return -ENOMEM;
                if (p && d->sizes[j])
                        memcpy(d->blobs[j], p, d->sizes[j]);
                else
                        d->blobs[j][0] = '\0';
        }
        return 0;
}

/* Published blocks own their String/Binary copies (master_route.c): refill them. */
static int block_restore_pub(struct mblock *b, const struct saved_block *d)
{
        if (!is_blob(b->type)) {
                memcpy(b->vals, d->vals, b->n * mv_size(b->type));
                return 0;
        }
        for (size_t j = 0; j < b->n; j++) {
                size_t len = d->sizes[j], need = len ? len : 1;

                if (need > b->own_cap[j]) {
                        unsigned char *q = realloc(b->own[j], need);

                        if (!q)
                                return -ENOMEM;
                        b->own[j] = q;
                        b->own_cap[j] = need;
                }
                memcpy(b->own[j], d->blobs[j], need);
                ((const void **)b->vals)[j] = b->own[j];
                b->sizes[j] = len;
        }
        return 0;
}

static void inst_free_saved(struct saved_inst *si)
{
        for (size_t i = 0; si->next && i < si->n_out; i++)
                block_free(&si->next[i]);
        for (size_t i = 0; si->pub && i < si->n_out; i++)
                block_free(&si->pub[i]);
        free(si->next);
        free(si->pub);
        free(si->der_vals);
        free(si->clocks);
        free(si->oclock_ticks);
        free(si->ticked_ahead);
}

void master_saved_free(struct master_saved *s)
{
        if (!s)
                return;
        for (size_t i = 0; s->insts && i < s->n; i++)
                inst_free_saved(&s->insts[i]);
        free(s->insts);
        free(s);
}

static int inst_save(struct master *m, struct saved_inst *si, const struct mi *mi, size_t i)
{
        *si = (struct saved_inst){
                .t = mi->t, .reached = mi->reached, .from = mi->from, .aim = mi->aim,
                .goal = mi->goal, .next_event = mi->next_event, .t_pub = mi->t_pub,
                .t_der = mi->t_der, .k = mi->k, .pending = mi->pending, .event = mi->event,
                .terminate = mi->terminate, .stats = m->ist[i], .n_out = mi->n_out,
        };
        si->next = calloc(mi->n_out ? mi->n_out : 1, sizeof(*si->next));
        si->pub = calloc(mi->n_out ? mi->n_out : 1, sizeof(*si->pub));
        if (!si->next || !si->pub)
                return -ENOMEM;
        for (size_t b = 0; b < mi->n_out; b++) {
                /* Not pending: 'next' is dead until the next step writes it. */
                if (is_blob(mi->next[b].type) && !mi->pending)
                        continue;
                if (is_blob(mi->next[b].type))
                        return master_err(m, -EOPNOTSUPP, "component '%s' holds String or "
                                          "Binary outputs for its next point (multirate): its "
                                          "state cannot be saved between its points", mi->name);
                if (block_save(&si->next[b], &mi->next[b]) < 0 ||
                    block_save(&si->pub[b], &mi->pub[b]) < 0)
                        return -ENOMEM;
        }
        for (size_t b = 0; b < mi->n_out; b++)
                if (is_blob(mi->pub[b].type) && block_save(&si->pub[b], &mi->pub[b]) < 0)
                        return -ENOMEM;
        if (mi->n_der_vals) {
                si->der_vals = malloc(mi->n_der_vals * sizeof(double));
                if (!si->der_vals)
                        return -ENOMEM;
                memcpy(si->der_vals, mi->der_vals, mi->n_der_vals * sizeof(double));
        }
        si->clock_next = mi->clock_next;
        if (mi->n_clocks && !(si->clocks = malloc(mi->n_clocks * sizeof(*si->clocks))))
                return -ENOMEM;
        if (mi->n_oclocks && !(si->oclock_ticks = malloc(mi->n_oclocks * sizeof(uint64_t))))
                return -ENOMEM;
        if (mi->n_clocks)
                memcpy(si->clocks, mi->clocks, mi->n_clocks * sizeof(*si->clocks));
        if (mi->n_oclocks)
                memcpy(si->oclock_ticks, mi->oclock_ticks, mi->n_oclocks * sizeof(uint64_t));
        /* Ticks of a multirate instance between its points, flagged at its next one. */
        si->any_ahead = mi->any_ahead;
        if (mi->ticked.n && !(si->ticked_ahead = malloc(mi->ticked.n * sizeof(bool))))
                return -ENOMEM;
        if (mi->ticked.n)
                memcpy(si->ticked_ahead, mi->ticked_ahead, mi->ticked.n * sizeof(bool));
        return 0;
}

int master_save(struct master *m, struct master_saved **ret)
{
        struct master_saved *s;
        int r = 0;

        if (!m || !ret)
                return -EINVAL;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        *s = (struct master_saved){
                .m = m, .state = (int)master_state(m), .pt = m->pt, .t_cur = m->t_cur,
                .t_next = m->t_next, .at_grid = m->at_grid, .zero_meets = m->zero_meets,
                .extra_run = m->extra_run,
                .points = m->points, .extra_points = m->extra_points, .events = m->events,
                .restores = m->restores, .wall_ns = m->wall_ns, .n = m->n,
        };
        memcpy(s->msg, m->msg, sizeof(s->msg));
        s->insts = calloc(m->n ? m->n : 1, sizeof(*s->insts));
        if (!s->insts)
                r = -ENOMEM;
        for (size_t i = 0; r == 0 && i < m->n; i++)
                r = inst_save(m, &s->insts[i], &m->mi[i], i);
        if (r < 0) {
                master_saved_free(s);
                return r;
        }
        *ret = s;
        return 0;
}

static int inst_restore(struct master *m, struct mi *mi, const struct saved_inst *si, size_t i)
{
        mi->t = si->t;
        mi->reached = si->reached;
        mi->from = si->from;
        mi->aim = si->aim;
        mi->goal = si->goal;
        mi->next_event = si->next_event;
        mi->t_pub = si->t_pub;
        mi->t_der = si->t_der;
        mi->k = si->k;
        mi->pending = si->pending;
        mi->event = si->event;
        mi->terminate = si->terminate;
        mi->due = mi->todo = mi->redo = mi->posted = mi->stepped = mi->saved = false;
        m->ist[i] = si->stats;
        for (size_t b = 0; b < mi->n_out; b++) {
                if (si->next[b].vals)
                        memcpy(mi->next[b].vals, si->next[b].vals,
                               mi->next[b].n * mv_size(mi->next[b].type));
                if (block_restore_pub(&mi->pub[b], &si->pub[b]) < 0)
                        return master_err(m, -ENOMEM, "out of memory");
        }
        if (mi->n_der_vals)
                memcpy(mi->der_vals, si->der_vals, mi->n_der_vals * sizeof(double));
        mi->clock_next = si->clock_next;
        mi->trig = false;
        if (mi->n_clocks)
                memcpy(mi->clocks, si->clocks, mi->n_clocks * sizeof(*si->clocks));
        if (mi->n_oclocks)
                memcpy(mi->oclock_ticks, si->oclock_ticks, mi->n_oclocks * sizeof(uint64_t));
        mi->any_ahead = si->any_ahead;
        if (mi->ticked.n)
                memcpy(mi->ticked_ahead, si->ticked_ahead, mi->ticked.n * sizeof(bool));
        return 0;
}

int master_restore(struct master *m, const struct master_saved *s)
{
        if (!m || !s || s->m != m || s->n != m->n)
                return -EINVAL;
        for (size_t i = 0; i < m->n; i++) {
                int r = inst_restore(m, &m->mi[i], &s->insts[i], i);

                if (r < 0)
                        return r;
                minput_forget(&m->mi[i]);
        }
        m->pt = s->pt;
        m->t_cur = s->t_cur;
        m->t_next = s->t_next;
        m->at_grid = s->at_grid;
        m->zero_meets = s->zero_meets;
        m->extra_run = s->extra_run;
        m->points = s->points;
        master_note_point(m);
        m->extra_points = s->extra_points;
        m->events = s->events;
        m->restores = s->restores;
        m->wall_ns = s->wall_ns;
        m->call_end_ns = 0;     /* the restored run starts anew */
        m->fault = 0;
        m->iu_msg[0] = '\0';
        memcpy(m->msg, s->msg, sizeof(m->msg));
        /* Pacing starts afresh from the restored point, as after a resume. */
        m->pace_valid = false;
        atomic_store_explicit(&m->requests, 0, memory_order_relaxed);
        m->pause_self = m->paused_self = false;
        mrig_restored(m);
        master_set_state(m, (enum master_state)s->state);
        return 0;
}

double master_saved_time(const struct master_saved *s)
{
        return s->t_cur;
}
