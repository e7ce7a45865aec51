/*
 * libfmud_vars: fmud_vars(), a session's variables (fmud.h), the reply of
 * the vars operation (proto/PROTOCOL.md) checked entry by entry: the
 * daemon's reply is not trusted to be well formed.
 */
#include <errno.h>
#include <stdlib.h>

#include "libfmud_int.h"

/* A string of v's map at key into *ret; false when it is missing or no string. */
static bool str_at(const struct pv *v, const char *key, struct proto_str *ret)
{
        const struct pv *s = pv_get(v, key);

        if (!s || s->type != PV_STR)
                return false;
        *ret = (struct proto_str){ s->s.ptr, s->s.len };
        return true;
}

int fmud_vars(struct fmud *c, const struct proto_target *t, const struct fmud_var **ret_vars,
              size_t *ret_n, double *ret_time)
{
        const struct pv *v, *list, *unit;
        struct fmud_var *vars;
        uint64_t id;
        double time = 0;
        int r;

        if (!c || !t || !ret_vars || !ret_n)
                return fmud_missing(c, "vars", !t ? "the target" : "the result's place");
        id = fmud_begin(c);
        proto_target_encode(&c->w, id, PROTO_OP_VARS, t);
        r = fmud_call(c, id, "vars", &v);
        if (r < 0)
                return r;
        list = pv_get(v, "vars");
        if (!list || list->type != PV_ARRAY || !pv_get(v, "time") ||
            pv_f64(pv_get(v, "time"), &time) < 0)
                return fmud_bad_result(c, "vars", "no 'vars' array and 'time'");
        vars = calloc(list->a.n ? list->a.n : 1, sizeof(*vars));
        if (!vars)
                return fmud_fail(c, -ENOMEM, "out of memory");
        for (uint32_t i = 0; i < list->a.n; i++) {
                const struct pv *e = &list->a.items[i];
                struct fmud_var *x = &vars[i];

                unit = pv_get(e, "unit");
                if (e->type != PV_MAP || !str_at(e, "name", &x->name) ||
                    !str_at(e, "type", &x->type) || !str_at(e, "causality", &x->causality) ||
                    !str_at(e, "variability", &x->variability) || !unit ||
                    (unit->type != PV_NIL && !str_at(e, "unit", &x->unit)) || !pv_get(e, "value")) {
                        free(vars);
                        return fmud_bad_result(c, "vars", "an entry is not {name, type, "
                                               "causality, variability, unit, value}");
                }
                x->value = pv_get(e, "value")->type == PV_NIL ? NULL : pv_get(e, "value");
        }
        /* Released with the reply, as a decoded result's memory is. */
        free(c->reply_mem);
        c->reply_mem = vars;
        *ret_vars = vars;
        *ret_n = list->a.n;
        if (ret_time)
                *ret_time = time;
        return 0;
}
