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
 * set) is a change. A variable's memo is its values' bytes as the block
 * carries them: a String's with their NULs, a Binary's after their sizes.
 * The same memo answers a get of an input in Continuous-Time Mode (a
 * recorded input), which a strict FMU refuses there; the FMU is asked for
 * one nobody set. It is not asked in Event Mode to fill the memo: an
 * FMU's error there would end its use (FMI 3.0 section 2.2.4).
 */
#include "worker/me_int.h"

#include <stdlib.h>
#include <string.h>

#include "worker/worker.h"

struct me_input {
        struct wbuf buf;
        size_t len;
        bool known;
};

void me_inputs_free(struct me *m)
{
        for (size_t i = 0; m->inputs && i < m->n_inputs; i++)
                wbuf_fini(&m->inputs[i].buf);
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

bool me_input_same(struct worker *w, const struct md_variable *v, const struct me_bytes *x)
{
        const struct me_input *m = memo_of(w, v);

        return m && m->known && m->len == x->len_a + x->len_b &&
               (!x->len_a || memcmp(m->buf.p, x->a, x->len_a) == 0) &&
               (!x->len_b || memcmp(m->buf.p + x->len_a, x->b, x->len_b) == 0);
}

static void keep(struct worker *w, const struct md_variable *v, const struct me_bytes *x)
{
        struct me_input *m = memo_of(w, v);
        size_t len = x->len_a + x->len_b;

        if (!m)
                return;
        m->known = false;
        if (wbuf_reserve(&m->buf, len) < 0)
                return;         /* not known: the next set is a change */
        if (x->len_a)
                memcpy(m->buf.p, x->a, x->len_a);
        if (x->len_b)
                memcpy(m->buf.p + x->len_a, x->b, x->len_b);
        m->len = len;
        m->known = true;
}

bool me_inputs_next(const struct worker *w, const struct vblock *b, struct me_walk *k,
                    const struct md_variable **ret_v, struct me_bytes *ret)
{
        size_t elem = call_elem_size(b->type);
        const unsigned char *data = b->data;
        const struct md_variable *v;
        uint64_t n, len = 0;

        if (k->i >= b->n_vrs)
                return false;
        v = vars_find(w, b->type, b->vrs[k->i]);
        n = v ? vars_elements(w, v) : 0;
        if (!v || n > b->n_values - k->off) {
                k->bad = true;
                return false;
        }
        *ret = (struct me_bytes){ 0 };
        if (b->type == MD_STRING) {
                /* vars_check() saw exactly n_values NUL-terminated strings. */
                for (uint64_t j = 0; j < n; j++)
                        len += strlen((const char *)data + k->pos + len) + 1;
        } else if (b->type == MD_BINARY) {
                for (uint64_t j = 0; j < n; j++)
                        len += b->sizes[k->off + j];
                ret->a = b->sizes + k->off;
                ret->len_a = n * sizeof(*b->sizes);
        } else {
                len = n * elem;
        }
        ret->b = data + k->pos;
        ret->len_b = len;
        *ret_v = v;
        k->i++;
        k->off += n;
        k->pos += len;
        return true;
}

void me_inputs_note(struct worker *w, const struct vblock *b, bool ok)
{
        struct me_walk k = { 0 };
        const struct md_variable *v;
        struct me_bytes x;

        if (!w->me)
                return;
        while (me_inputs_next(w, b, &k, &v, &x)) {
                struct me_input *m = memo_of(w, v);

                if (ok)
                        keep(w, v, &x);
                else if (m)
                        m->known = false;
        }
        if (k.bad)
                me_inputs_forget(w);    /* a block it cannot split: nothing is known */
}

bool me_input_peek(struct worker *w, const struct md_variable *v, const void **ret, size_t *ret_len)
{
        const struct me_input *m = memo_of(w, v);

        if (!m || !m->known)
                return false;
        *ret = m->buf.p;
        *ret_len = m->len;
        return true;
}

bool me_inputs_any(const struct worker *w)
{
        return w->me && w->me->inputs;
}

bool me_input_get(struct worker *w, const struct md_variable *v, void *dst, size_t len)
{
        const struct me_input *m = memo_of(w, v);

        if (!m || !m->known || m->len != len)
                return false;
        if (len)
                memcpy(dst, m->buf.p, len);
        return true;
}
