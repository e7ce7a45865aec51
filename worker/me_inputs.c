/*
 * me_inputs: the values the worker last set of each variable of a hosted
 * Model Exchange FMU, so that a set in Continuous-Time Mode leaves out
 * what the FMU holds already (worker/values.c, set_continuous()).
 *
 * DESIGN: the master sets every input with each step; only a change is an
 * event (FMI 3.0 section 3.2.1 takes continuous inputs in Continuous-Time
 * Mode; a discrete one changes in Event Mode, and a jump of a continuous
 * one is an event too, as section 4.3.1 has the importer raise one). The
 * comparison is with what was set, not with what the FMU answers: section
 * 3.2.1 lists no fmi3Get of inputs in Continuous-Time Mode, a strict FMU
 * refuses it, and one may answer another value than it took (a clamp).
 * What is not known (never set, a restored FMU state, a reset, a failed
 * set) is a change. Fixed-size types only; String and Binary are set
 * always.
 */
#include "worker/me_int.h"

#include <stdlib.h>
#include <string.h>

#include "worker/worker.h"

struct me_input {
        unsigned char *p;
        size_t len, cap;
        bool known;
};

void me_inputs_free(struct me *m)
{
        for (size_t i = 0; m->inputs && i < m->n_inputs; i++)
                free(m->inputs[i].p);
        free(m->inputs);
        m->inputs = NULL;
        m->n_inputs = 0;
}

void me_inputs_forget(struct worker *w)
{
        struct me *m = w->me;

        for (size_t i = 0; m && m->inputs && i < m->n_inputs; i++)
                m->inputs[i].known = false;
}

/* The memo of v; NULL when there is no memory for it. */
static struct me_input *memo_of(struct worker *w, const struct md_variable *v)
{
        struct me *m = w->me;
        size_t i = vars_index(w, v);

        if (!m->inputs) {
                m->inputs = calloc(w->md->n_vars ? w->md->n_vars : 1, sizeof(*m->inputs));
                if (!m->inputs)
                        return NULL;
                m->n_inputs = w->md->n_vars;
        }
        return i < m->n_inputs ? &m->inputs[i] : NULL;
}

bool me_input_same(struct worker *w, const struct md_variable *v, const void *data, size_t len)
{
        const struct me_input *x = memo_of(w, v);

        return x && x->known && x->len == len && (!len || memcmp(x->p, data, len) == 0);
}

void me_input_keep(struct worker *w, const struct md_variable *v, const void *data, size_t len)
{
        struct me_input *x = memo_of(w, v);

        if (!x)
                return;
        x->known = false;
        if (len > x->cap) {
                unsigned char *p = realloc(x->p, len);

                if (!p)
                        return;         /* not known: the next set is a change */
                x->p = p;
                x->cap = len;
        }
        if (len)
                memcpy(x->p, data, len);
        x->len = len;
        x->known = true;
}

void me_inputs_note(struct worker *w, const struct vblock *b, bool ok)
{
        size_t elem = call_elem_size(b->type);
        const unsigned char *data = b->data;
        uint64_t off = 0;

        if (!w->me)
                return;
        for (uint32_t i = 0; i < b->n_vrs; i++) {
                const struct md_variable *v = vars_find(w, b->type, b->vrs[i]);
                uint64_t n = v ? vars_elements(w, v) : 0;
                struct me_input *x = v ? memo_of(w, v) : NULL;

                if (!v || n > b->n_values - off) {
                        me_inputs_forget(w);    /* a block it cannot split: nothing is known */
                        return;
                }
                if (ok && elem && b->type != MD_STRING && b->type != MD_BINARY)
                        me_input_keep(w, v, data + off * elem, n * elem);
                else if (x)
                        x->known = false;
                off += n;
        }
}
