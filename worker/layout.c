/*
 * layout: the blocks of a DO_STEP that the worker keeps, so that the
 * later steps of a run carry values only (call_ops.h, call_do_step.compact).
 *
 * DESIGN: a master sends the same input and output lists with every
 * step; in a request of ten inputs and ten outputs they and their
 * descriptors are most of the bytes, and every byte is a cache line the
 * other core must fetch. A layout is kept only from blocks that passed
 * vars_check() in a full step, as a private copy. A compact step rebuilds
 * its blocks from that copy and runs the same checks again (the memo in
 * vars.c makes them cheap), so it is refused exactly when the same full
 * step would be; its values are placed by call_layout_place(), which the
 * daemon uses too, and the reply's values likewise.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "worker/worker.h"

struct kept_block {
        enum md_type type;
        uint32_t n_vrs;
        uint32_t vrs_at;        /* first value reference in vrs[] */
        uint64_t n_values;
};

struct step_layout {
        uint32_t id;            /* 0: none kept */
        uint32_t n_in, n_out;
        struct kept_block blocks[CALL_LAYOUT_BLOCKS_MAX];
        uint32_t vrs[CALL_LAYOUT_VRS_MAX];
};

/* Whether a layout can hold bl (the bounds in call_ops.h). */
static bool fits(const struct step_blocks *bl)
{
        uint64_t n = (uint64_t)bl->n_in + bl->n_out, vrs = 0;

        if (n > CALL_LAYOUT_BLOCKS_MAX)
                return false;
        for (uint32_t i = 0; i < n; i++) {
                const struct vblock *b = &bl->in[i];    /* out follows in (step.c) */

                if (!call_layout_block_fits(b->type, b->n_values))
                        return false;
                vrs += b->n_vrs;
        }
        return vrs <= CALL_LAYOUT_VRS_MAX;
}

void layout_keep(struct worker *w, uint32_t id, const struct step_blocks *bl)
{
        struct step_layout *l = w->layout;
        uint32_t at = 0;

        if (l)
                l->id = 0;
        if (!id || bl->out != bl->in + bl->n_in || !fits(bl))
                return;
        if (!l) {
                l = malloc(sizeof(*l));
                if (!l)
                        return;         /* no layout: the daemon's compact step is refused */
                w->layout = l;
        }
        for (uint32_t i = 0; i < bl->n_in + bl->n_out; i++) {
                const struct vblock *b = &bl->in[i];

                l->blocks[i] = (struct kept_block){ .type = b->type, .n_vrs = b->n_vrs,
                                                    .vrs_at = at, .n_values = b->n_values };
                if (b->n_vrs)
                        memcpy(&l->vrs[at], b->vrs, (size_t)b->n_vrs * sizeof(uint32_t));
                at += b->n_vrs;
        }
        l->n_in = bl->n_in;
        l->n_out = bl->n_out;
        l->id = id;
}

/* The value bytes of each of n kept blocks from the first. */
static void value_lens(const struct kept_block *k, uint32_t n, uint64_t *lens)
{
        for (uint32_t i = 0; i < n; i++)
                lens[i] = k[i].n_values * call_elem_size(k[i].type);
}

bool layout_blocks(struct worker *w, const struct call_in *in, const struct call_do_step *ds,
                   struct step_blocks *ret, const char *fn, struct reply *rp)
{
        uint64_t lens[CALL_LAYOUT_BLOCKS_MAX], offs[CALL_LAYOUT_BLOCKS_MAX], total;
        const struct step_layout *l = w->layout;
        const unsigned char *data;
        const void *p;
        uint32_t n;

        if (!l || !l->id || ds->layout != l->id || ds->n_inputs != l->n_in ||
            ds->n_outputs != l->n_out || ds->outputs.len) {
                reply_refuse(rp, CALL_E_BADMSG, "%s: a compact step of layout %u, which is not the "
                             "one kept", fn, ds->layout);
                return false;
        }
        n = l->n_in + l->n_out;
        value_lens(l->blocks, l->n_in, lens);
        total = call_layout_place(lens, l->n_in, offs);
        if (ds->inputs.len != total || (total && ds->inputs.off % 8) ||
            call_in_bytes(in, &ds->inputs, total, &p) < 0) {
                reply_refuse(rp, CALL_E_BADMSG, "%s: malformed input values", fn);
                return false;
        }
        data = p;
        if (!step_blocks_init(w, l->n_in, l->n_out, ret, rp))
                return false;
        for (uint32_t i = 0; i < n; i++) {
                const struct kept_block *k = &l->blocks[i];
                bool set = i < l->n_in;
                struct vblock *b = &ret->in[i];

                *b = (struct vblock){ .type = k->type, .vrs = &l->vrs[k->vrs_at], .n_vrs = k->n_vrs,
                                      .n_values = k->n_values };
                if (set) {
                        b->data = lens[i] ? data + offs[i] : NULL;
                        b->data_len = lens[i];
                }
                if (!vars_check_block(w, b, set, fsm_fmi_name(w, set ? CALL_OP_SET : CALL_OP_GET,
                                                              k->type), rp))
                        return false;
        }
        return true;
}

void layout_get_outputs(struct worker *w, const struct step_blocks *bl,
                        struct call_step_result *res, struct reply *rp)
{
        uint64_t lens[CALL_LAYOUT_BLOCKS_MAX], offs[CALL_LAYOUT_BLOCKS_MAX], total, off, end = 0;
        const struct step_layout *l = w->layout;
        unsigned char *base;

        /* Only after layout_blocks() passed, so l holds bl's blocks. */
        value_lens(l->blocks + l->n_in, l->n_out, lens);
        total = call_layout_place(lens, l->n_out, offs);
        call_out_expect(&rp->out, call_out_need(total, 1));
        if (call_out_alloc(&rp->out, total, &off) < 0) {
                reply_refuse(rp, CALL_E_MSGSIZE, "the outputs do not fit the channel");
                return;
        }
        base = call_out_ptr(&rp->out, off);
        for (uint32_t i = 0; i < bl->n_out; i++) {
                /* Zero the alignment gap: nothing private leaks through padding. */
                if (offs[i] > end)
                        memset(base + end, 0, offs[i] - end);
                end = offs[i] + lens[i];
                if (!step_output_ok(values_get_into(w, &bl->out[i], base + offs[i], rp), i, res, rp))
                        return;
        }
        res->outputs = (struct call_range){ off, total };
        res->n_outputs = bl->n_out;
        res->phase = CALL_PHASE_DONE;
}

void layout_free(struct worker *w)
{
        free(w->layout);
        w->layout = NULL;
}
