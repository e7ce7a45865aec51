/*
 * host_vars: names to variables for get and set (host_values.c).
 *
 * DESIGN: a name is "instance.variable" (the longest component name
 * that is a prefix of the name followed by '.', then the variable's name,
 * which may contain dots), or a bare variable name in a one-FMU scenario.
 * For get it may also be one element of an array, named as the results
 * file names its column: "v[2]", "m[1,2]" (FMI's 1-based structured-name
 * indices, one per dimension, row-major). The whole name is looked up
 * first, since an FMI 2.0 scalar may be called "v[2]". A set that names
 * one variable twice (under two names) is found by sorting, O(n log n).
 *
 * Threads: the session thread.
 */
#include "daemon/host_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/master/input_table.h"
#include "engine/master/master_value.h"
#include "engine/scenario/scenario_int.h"


void hvar_fini(struct hvar *x)
{
        if (x->vals && x->ct == MD_STRING)
                for (size_t i = 0; i < x->n; i++)
                        free(((char **)x->vals)[i]);
        if (x->vals && x->ct == MD_BINARY)
                for (size_t i = 0; i < x->n; i++)
                        free(((void **)x->vals)[i]);
        free(x->vals);
        free(x->sizes);
        free(x->name);
}

/*
 * x->name is no variable: is it "variable[i,...]", an element of an array?
 * -1 with x's variable and index, or the reply code with msg.
 */
static int resolve_element(struct hsess *hs, struct hvar *x, size_t *ret_var, char *msg,
                           size_t size)
{
        size_t len = strlen(x->name);
        char *br = strrchr(x->name, '[');
        uint64_t dims[HVAR_MAX_DIMS];
        const struct md *md;
        int nd, r;

        if (!br || br == x->name || x->name[len - 1] != ']')
                return PROTO_E_NO_VARIABLE;
        *br = '\0';
        r = scenario_find_variable(hs->sc, x->name, &x->comp, ret_var);
        *br = '[';
        if (r < 0)
                return PROTO_E_NO_VARIABLE;
        md = hs->sc->components[x->comp].fmu->md;
        nd = scenario_var_dims(hs->sc, x->comp, &md->vars[*ret_var], dims, HVAR_MAX_DIMS);
        if (nd <= 0) {
                snprintf(msg, size, "'%s': '%.*s' is not an array", x->name, (int)(br - x->name),
                         x->name);
                return PROTO_E_NO_VARIABLE;
        }
        r = scenario_element_index(br + 1, dims, nd, &x->index);
        if (r == -ERANGE) {
                int o = snprintf(msg, size, "'%s': an index is out of the array's dimensions [",
                                 x->name);

                for (int d = 0; d < nd && o > 0 && (size_t)o < size; d++)
                        o += snprintf(msg + o, size - (size_t)o, "%s%llu", d ? "," : "",
                                      (unsigned long long)dims[d]);
                if (o > 0 && (size_t)o < size)
                        snprintf(msg + o, size - (size_t)o, "] (indices start at 1)");
                return PROTO_E_NO_VARIABLE;
        }
        if (r < 0) {
                snprintf(msg, size, "'%s': expected %d 1-based ind%s, as in '%.*s[1%s]'",
                         x->name, nd, nd > 1 ? "ices separated by ','" : "ex",
                         (int)(br - x->name), x->name, nd > 1 ? ",1" : "");
                return PROTO_E_NO_VARIABLE;
        }
        x->element = true;
        return -1;
}

int hvar_resolve(struct hsess *hs, const struct proto_str *name, struct hvar *x, char *msg,
                 size_t size)
{
        const struct md *md;
        size_t var;
        uint64_t e;
        int code;

        x->name = hvalues_strdup(name);
        msg[0] = '\0';
        code = !x->name ? PROTO_E_NO_VARIABLE :
               scenario_find_variable(hs->sc, x->name, &x->comp, &var) == 0 ? -1 :
               resolve_element(hs, x, &var, msg, size);
        if (code >= 0) {
                if (!msg[0])
                        snprintf(msg, size, "no variable '%.*s' in session %llu",
                                 (int)(name->len > 200 ? 200 : name->len),
                                 name->ptr ? name->ptr : "", (unsigned long long)hs->id);
                return code;
        }
        md = hs->sc->components[x->comp].fmu->md;
        x->v = &md->vars[var];
        x->inst = session_inst(hs->s, x->comp);
        x->ct = mv_call_type(x->v->type, md->fmi == MD_FMI2 ? 2 : 3);
        x->array = x->v->n_dims > 0;
        e = scenario_var_elements(hs->sc, x->comp, x->v);
        /*
         * e == 0: an array its structural parameters size 0, got and set as
         * [] (section 2.4.7.2). SCENARIO_NO_SIZE is defensive: the sizes of a
         * loaded scenario resolve (scenario_dims.c checks them).
         */
        if (e == SCENARIO_NO_SIZE) {
                snprintf(msg, size, "'%s': its dimensions cannot be resolved", x->name);
                return PROTO_E_INVALID;
        }
        if (x->v->type == MD_CLOCK || e > HVAR_MAX_ELEMENTS) {
                snprintf(msg, size, "'%s' is a %s%s: not got or set by value", x->name,
                         md_type_name(x->v->type), e > HVAR_MAX_ELEMENTS ? " array too large" : "");
                return PROTO_E_TYPE;
        }
        x->n = (size_t)e;
        /* The dimensions and the element count come from one description; checked anyway. */
        if (x->element && x->index >= x->n) {
                snprintf(msg, size, "'%s': an index is out of the array's %zu elements", x->name,
                         x->n);
                return PROTO_E_NO_VARIABLE;
        }
        return -1;
}

struct hkey {
        size_t comp;
        const struct md_variable *v;
        uint32_t i;                     /* in the request */
};

static int cmp_hkey(const void *a, const void *b)
{
        const struct hkey *x = a, *y = b;

        if (x->comp != y->comp)
                return x->comp < y->comp ? -1 : 1;
        if (x->v != y->v)
                return x->v < y->v ? -1 : 1;
        return x->i < y->i ? -1 : x->i > y->i;
}

/*
 * A variable set twice in one request (the map's keys differ, the names
 * resolve alike: "Plant.u" and "u" in a one-FMU scenario): which value
 * would win is not for the daemon to guess. -1, or the reply code with msg.
 */
int hvar_set_twice(const struct hvar *xs, uint32_t n, char *msg, size_t size)
{
        struct hkey *k;
        int code = -1;

        if (n < 2)
                return -1;
        k = malloc(n * sizeof(*k));
        if (!k) {
                snprintf(msg, size, "out of memory");
                return PROTO_E_INTERNAL;
        }
        for (uint32_t i = 0; i < n; i++)
                k[i] = (struct hkey){ xs[i].comp, xs[i].v, i };
        qsort(k, n, sizeof(*k), cmp_hkey);
        for (uint32_t i = 1; i < n && code < 0; i++)
                if (k[i].comp == k[i - 1].comp && k[i].v == k[i - 1].v) {
                        snprintf(msg, size, "'%s' is set twice in one request (also as '%s')",
                                 xs[k[i - 1].i].name, xs[k[i].i].name);
                        code = PROTO_E_BAD_REQUEST;
                }
        free(k);
        return code;
}

static int cmp_conn(const void *key, const void *elem)
{
        const struct scenario_connection *k = key, *c = elem;

        if (k->to_comp != c->to_comp)
                return k->to_comp < c->to_comp ? -1 : 1;
        return k->to_var < c->to_var ? -1 : k->to_var > c->to_var;
}

const struct scenario_connection *hvar_connection(const struct hsess *hs, size_t comp, size_t var)
{
        const struct scenario *sc = hs->sc;
        const struct scenario_connection key = { .to_comp = comp, .to_var = var };

        if (!sc->n_connections)
                return NULL;
        /* scenario.h: connections sorted by (to_comp, to_var). */
        return bsearch(&key, sc->connections, sc->n_connections, sizeof(*sc->connections),
                       cmp_conn);
}

int hvar_apply(const struct hvar *x)
{
        if (hvar_empty(x))
                return INST_OK;
        return x->ct == MD_BINARY ?
               inst_set_binary(x->inst, &x->v->vr, 1, x->sizes, (const uint8_t *const *)x->vals,
                               x->n) :
               inst_set(x->inst, x->ct, &x->v->vr, 1, x->vals, x->n);
}

int hvar_set_by_master(const struct hsess *hs, const struct hvar *x, char *msg, size_t size)
{
        const struct md *md = hs->sc->components[x->comp].fmu->md;
        size_t var = (size_t)(x->v - md->vars);
        const struct scenario_connection *c = hvar_connection(hs, x->comp, var);
        const struct scenario_component *from;

        /* A rig port: the rig's values (or the policy's) go in before every step (master_rig.c). */
        for (size_t i = 0; i < hs->sc->rig.n_in; i++)
                if (hs->sc->rig.in[i].comp == x->comp && hs->sc->rig.in[i].var == var) {
                        snprintf(msg, size, "'%s' is the rig port '%s': the master sets it from "
                                 "the rig before every step, so a set would not last", x->name,
                                 hs->sc->rig.in[i].name);
                        return PROTO_E_INVALID;
                }
        /* An input file's column: put in the input before every step (input_feed.c). */
        for (size_t i = 0; hs->inputs && i < hs->inputs->n_cols; i++)
                if (hs->inputs->cols[i].comp == x->comp && hs->inputs->cols[i].var == var) {
                        snprintf(msg, size, "'%s' is driven by the input file's column '%s': "
                                 "the master sets it before every step, so a set would not "
                                 "last", x->name, hs->inputs->cols[i].name);
                        return PROTO_E_INVALID;
                }
        /*
         * A parameter's connection acts in Initialization Mode only: a later
         * set stays. One of arrays with no elements moves nothing.
         */
        if (!c || c->parameter || c->elements == 0)
                return -1;
        from = &hs->sc->components[c->from_comp];
        snprintf(msg, size, "'%s' is fed by the connection from '%s.%s'%s%s%s: the master sets it "
                 "before every step, so a set would not last", x->name, from->name,
                 from->fmu->md->vars[c->from_var].name, c->origin ? " (" : "",
                 c->origin ? c->origin : "", c->origin ? ")" : "");
        return PROTO_E_INVALID;
}
