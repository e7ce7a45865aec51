/*
 * inst_kept: the step layout the worker keeps (worker/call.h,
 * call_do_step.compact): a step whose input and output blocks are those
 * of the last full step goes out compact, values only, and its reply
 * comes back values only.
 *
 * DESIGN: the daemon remembers the blocks of the last full step it sent
 * with a layout number, a copy taken when it was sent. It does not ask the
 * worker whether it kept them: the worker keeps every full step's blocks
 * that pass its checks, and any refused step makes the daemon forget its
 * copy (kept_drop()), so that the next step is sent full again. A compact
 * step the worker cannot place is refused, never misread. The reply's
 * values are placed by call_layout_place() from the blocks the caller
 * asked for, and each block goes through values_take() as a full reply's
 * would, so a worker that lies about them is a protocol fault.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/instance/inst_int.h"

struct kept_block {
        enum md_type type;
        size_t nvr, nvalues;
        uint32_t vrs_at;
};

struct inst_kept {
        uint32_t id;            /* the last number given out; 0: none yet */
        bool live;              /* the worker may hold blocks[] as layout id */
        uint32_t n_in, n_out;
        struct kept_block blocks[CALL_LAYOUT_BLOCKS_MAX];
        uint32_t vrs[CALL_LAYOUT_VRS_MAX];
};

/* Block i of s, inputs first; *ret_vrs its value references. */
static struct kept_block block_of(const struct inst_step *s, size_t i, const uint32_t **ret_vrs)
{
        if (i < s->n_inputs) {
                const struct inst_in *b = &s->inputs[i];

                *ret_vrs = b->vrs;
                return (struct kept_block){ .type = b->type, .nvr = b->nvr, .nvalues = b->nvalues };
        }
        const struct inst_out *b = &s->outputs[i - s->n_inputs];

        *ret_vrs = b->vrs;
        return (struct kept_block){ .type = b->type, .nvr = b->nvr, .nvalues = b->nvalues };
}

/* The bounds of worker/call.h, as the worker applies them. */
static bool fits(const struct inst_step *s)
{
        size_t n = s->n_inputs + s->n_outputs, vrs = 0;

        if (s->n_inputs > CALL_LAYOUT_BLOCKS_MAX || n > CALL_LAYOUT_BLOCKS_MAX)
                return false;
        for (size_t i = 0; i < n; i++) {
                const uint32_t *v;
                struct kept_block b = block_of(s, i, &v);

                if ((unsigned)b.type >= MD_TYPE_COUNT || !call_layout_block_fits(b.type, b.nvalues) ||
                    b.nvr > CALL_LAYOUT_VRS_MAX - vrs || (b.nvr && !v))
                        return false;
                vrs += b.nvr;
        }
        return true;
}

bool kept_match(const struct inst *inst, const struct inst_step *s)
{
        const struct inst_kept *k = inst->kept;

        if (!k || !k->live || s->n_inputs != k->n_in || s->n_outputs != k->n_out)
                return false;
        for (size_t i = 0; i < s->n_inputs + s->n_outputs; i++) {
                const uint32_t *v;
                struct kept_block b = block_of(s, i, &v);
                const struct kept_block *kb = &k->blocks[i];

                if (b.type != kb->type || b.nvr != kb->nvr || b.nvalues != kb->nvalues ||
                    (b.nvr && memcmp(v, &k->vrs[kb->vrs_at], b.nvr * sizeof(uint32_t))))
                        return false;
        }
        return true;
}

uint32_t kept_next(struct inst *inst, const struct inst_step *s)
{
        if (!fits(s))
                return 0;
        if (!inst->kept) {
                inst->kept = calloc(1, sizeof(*inst->kept));
                if (!inst->kept)
                        return 0;       /* sent full, as a step no layout can hold */
        }
        /* 0 means none: after UINT32_MAX layouts the numbers start again at 1. */
        return inst->kept->id == UINT32_MAX ? 1 : inst->kept->id + 1;
}

void kept_sent(struct inst *inst, const struct inst_step *s, uint32_t id)
{
        struct inst_kept *k = inst->kept;
        uint32_t at = 0;

        /* The worker forgets what it kept whenever a full step reaches its checks. */
        if (!k)
                return;
        k->live = false;
        if (!id)
                return;
        for (size_t i = 0; i < s->n_inputs + s->n_outputs; i++) {
                const uint32_t *v;

                k->blocks[i] = block_of(s, i, &v);
                k->blocks[i].vrs_at = at;
                if (k->blocks[i].nvr)
                        memcpy(&k->vrs[at], v, k->blocks[i].nvr * sizeof(uint32_t));
                at += (uint32_t)k->blocks[i].nvr;
        }
        k->n_in = (uint32_t)s->n_inputs;
        k->n_out = (uint32_t)s->n_outputs;
        k->id = id;
        k->live = true;
}

uint32_t kept_id(const struct inst *inst)
{
        return inst->kept ? inst->kept->id : 0;
}

void kept_drop(struct inst *inst)
{
        if (inst->kept)
                inst->kept->live = false;
}

void kept_free(struct inst *inst)
{
        free(inst->kept);
        inst->kept = NULL;
}

int kept_put_inputs(struct req *rq, const struct inst_step *s, struct call_range *ret)
{
        uint64_t lens[CALL_LAYOUT_BLOCKS_MAX], offs[CALL_LAYOUT_BLOCKS_MAX], total, off, end = 0;
        size_t n = s->n_inputs;
        unsigned char *p;

        if (n > CALL_LAYOUT_BLOCKS_MAX)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                lens[i] = (uint64_t)s->inputs[i].nvalues * call_elem_size(s->inputs[i].type);
        total = call_layout_place(lens, (uint32_t)n, offs);
        if (call_out_alloc(&rq->out, total, &off) < 0)
                return -EMSGSIZE;
        p = call_out_ptr(&rq->out, off);
        for (size_t i = 0; i < n; i++) {
                if (lens[i] && !s->inputs[i].values)
                        return -EINVAL;
                /* Zero the alignment gap: nothing private leaks through padding. */
                if (offs[i] > end)
                        memset(p + end, 0, offs[i] - end);
                if (lens[i])
                        memcpy(p + offs[i], s->inputs[i].values, lens[i]);
                end = offs[i] + lens[i];
        }
        *ret = (struct call_range){ off, total };
        return 0;
}

int kept_take_outputs(struct inst *inst, const struct rep *rp, const struct call_step_result *res)
{
        uint64_t lens[CALL_LAYOUT_BLOCKS_MAX], offs[CALL_LAYOUT_BLOCKS_MAX], total;
        const struct inst_step *s = inst->step;
        const void *p;
        int r;

        if (s->n_outputs > CALL_LAYOUT_BLOCKS_MAX)
                return -EINVAL;
        if (res->n_outputs != s->n_outputs)
                return inst_protocol(inst, "a step result with another number of outputs");
        for (size_t i = 0; i < s->n_outputs; i++)
                lens[i] = (uint64_t)s->outputs[i].nvalues * call_elem_size(s->outputs[i].type);
        total = call_layout_place(lens, (uint32_t)s->n_outputs, offs);
        if (res->outputs.len != total)
                return inst_protocol(inst, "compact outputs of another length");
        r = rep_range(inst, rp, &res->outputs, 1, total, &p);
        if (r < 0)
                return r;
        for (size_t i = 0; i < s->n_outputs; i++) {
                const struct inst_out *b = &s->outputs[i];
                struct call_values cv = {
                        .type = (uint32_t)b->type, .n_vrs = (uint32_t)b->nvr, .n_values = b->nvalues,
                        .data = { res->outputs.off + offs[i], lens[i] },
                };

                r = values_take(inst, rp, &cv, b->type, b->nvr, b->values, b->sizes, b->nvalues);
                if (r < 0)
                        return r;
        }
        return 0;
}
