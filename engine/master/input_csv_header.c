/*
 * input_csv_header: the header of an input file resolved against the
 * scenario: "time", then one unconnected input element per column (see
 * input_csv.h for the names).
 *
 * DESIGN: names resolve as the results file writes them (the scenario's
 * own lookup, scenario.h): the whole name first, since an FMI 2.0
 * scalar may be called "x[1]", then an array variable with FMI's 1-based
 * indices. Duplicate columns and arrays missing an element are refused
 * after the whole header is known: O(columns log columns).
 */
#include "engine/master/input_csv_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/master/master_value.h"
#include "engine/scenario/scenario_int.h"

#define MAX_DIMS 32

/* Which connection feeds input var of comp, or NULL (connections sorted by (to_comp, to_var)). */
static const struct scenario_connection *feeder(const struct scenario *sc, size_t comp, size_t var)
{
        size_t lo = 0, hi = sc->n_connections;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                const struct scenario_connection *c = &sc->connections[mid];

                if (c->to_comp < comp || (c->to_comp == comp && c->to_var < var))
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo < sc->n_connections && sc->connections[lo].to_comp == comp &&
            sc->connections[lo].to_var == var)
                return &sc->connections[lo];
        return NULL;
}

/* The variable a name (possibly "name[i,j]") means: 0, or -ENOENT; *ret_index: where '[' is. */
static int lookup(const struct scenario *sc, char *name, size_t *ret_comp, size_t *ret_var,
                  char **ret_index)
{
        size_t n = strlen(name);
        char *br;
        int r;

        *ret_index = NULL;
        if (scenario_find_variable(sc, name, ret_comp, ret_var) == 0)
                return 0;
        br = strrchr(name, '[');
        if (!br || br == name || name[n - 1] != ']')
                return -ENOENT;
        *br = '\0';
        r = scenario_find_variable(sc, name, ret_comp, ret_var);
        *br = '[';
        if (r == 0)
                *ret_index = br;
        return r;
}

static int resolve(struct icsv *c, const struct scenario *sc, const struct icsv_field *f,
                   struct input_column *col)
{
        const struct scenario_connection *feed;
        const struct md_variable *v;
        const struct md *md;
        uint64_t dims[MAX_DIMS], n;
        size_t comp, var;
        char *index;
        int nd, r;

        if (lookup(sc, f->s, &comp, &var, &index) < 0)
                return icsv_err(c, f->line, f->col, "'%s' is not a variable of the scenario",
                                f->s);
        md = sc->components[comp].fmu->md;
        v = &md->vars[var];
        if (v->causality != MD_CAUSALITY_INPUT)
                return icsv_err(c, f->line, f->col, "'%s' is not an input (its causality is %s)",
                                f->s, md_causality_name(v->causality));
        if (v->type == MD_CLOCK || v->type == MD_BINARY)
                return icsv_err(c, f->line, f->col, "'%s' is a %s input: %s inputs are not "
                                "driven from a file", f->s, md_type_name(v->type),
                                md_type_name(v->type));
        feed = feeder(sc, comp, var);
        if (feed)
                return icsv_err(c, f->line, f->col, "'%s' is connected (%s): only unconnected "
                                "inputs are driven from a file", f->s,
                                feed->origin ? feed->origin : "a connection");
        /* A rig port is the rig's: two writers of one input, one would undo the other. */
        for (size_t i = 0; i < sc->rig.n_in; i++)
                if (sc->rig.in[i].comp == comp && sc->rig.in[i].var == var)
                        return icsv_err(c, f->line, f->col, "'%s' is a rig input: a rig writes "
                                        "it, not a file", f->s);
        n = scenario_var_elements(sc, comp, v);
        nd = scenario_var_dims(sc, comp, v, dims, MAX_DIMS);
        if (nd < 0 || n == SCENARIO_NO_SIZE)
                return icsv_err(c, f->line, f->col, "'%s': its dimensions cannot be resolved",
                                f->s);
        if (n == 0)
                return icsv_err(c, f->line, f->col, "'%s' has no elements (its structural "
                                "parameters size it 0): no column can drive it", f->s);
        *col = (struct input_column){
                .comp = comp, .var = var,
                .type = mv_call_type(v->type, md->fmi),
                .linear = md_type_is_float(v->type) && v->variability == MD_VARIABILITY_CONTINUOUS,
        };
        if (nd == 0 && index)
                return icsv_err(c, f->line, f->col, "'%s': '%.*s' is not an array", f->s,
                                (int)(index - f->s), f->s);
        if (nd > 0 && !index)
                return icsv_err(c, f->line, f->col, "'%s' is an array input: give one column per "
                                "element ('%s[1%s]', ...)", f->s, f->s, nd > 1 ? ",1" : "");
        if (index) {
                r = scenario_element_index(index + 1, dims, nd, &col->element);
                if (r < 0)
                        return icsv_err(c, f->line, f->col, "'%s': %s", f->s, r == -ERANGE ?
                                        "an index is out of the array's dimensions" :
                                        "expected one 1-based index per dimension");
        }
        col->name = strdup(f->s);
        return col->name ? 0 : -ENOMEM;
}

struct hcol {
        size_t comp, var;
        uint64_t element;
        size_t idx;                     /* header position (0: first input column) */
};

static int cmp_hcol(const void *a, const void *b)
{
        const struct hcol *x = a, *y = b;

        if (x->comp != y->comp)
                return x->comp < y->comp ? -1 : 1;
        if (x->var != y->var)
                return x->var < y->var ? -1 : 1;
        if (x->element != y->element)
                return x->element < y->element ? -1 : 1;
        return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Duplicates, and arrays whose every element has no column. */
static int complete(struct icsv *c, const struct scenario *sc, const struct input_table *t,
                    const struct icsv_field *fields)
{
        struct hcol *h = calloc(t->n_cols ? t->n_cols : 1, sizeof(*h));
        int r = 0;

        if (!h)
                return -ENOMEM;
        for (size_t i = 0; i < t->n_cols; i++)
                h[i] = (struct hcol){ t->cols[i].comp, t->cols[i].var, t->cols[i].element, i };
        qsort(h, t->n_cols, sizeof(*h), cmp_hcol);
        for (size_t i = 0, g = 0; i < t->n_cols && r == 0; i++) {
                const struct md *md = sc->components[h[i].comp].fmu->md;
                uint64_t n = scenario_var_elements(sc, h[i].comp, &md->vars[h[i].var]);
                size_t first = h[g].idx;

                if (i > 0 && !cmp_hcol(&h[i - 1], &(struct hcol){ h[i].comp, h[i].var,
                                                                   h[i].element, h[i - 1].idx })) {
                        const struct icsv_field *f = &fields[h[i].idx + 1];

                        r = icsv_err(c, f->line, f->col, "'%s': a second column for the same "
                                     "input", f->s);
                        break;
                }
                if (i + 1 < t->n_cols && h[i + 1].comp == h[i].comp && h[i + 1].var == h[i].var)
                        continue;
                /* h[g..i] is one variable's group. */
                for (size_t j = g; j <= i; j++)
                        if (h[j].idx < first)
                                first = h[j].idx;
                if (i - g + 1 != n)
                        r = icsv_err(c, fields[first + 1].line, fields[first + 1].col,
                                     "'%s': the array input '%s' has %llu elements, the header "
                                     "gives %zu: every element needs a column", fields[first + 1].s,
                                     md->vars[h[i].var].name, (unsigned long long)n, i - g + 1);
                g = i + 1;
        }
        free(h);
        return r;
}

/* The fields of the header record: 'time' and at most max_columns more. */
static int fields_of(struct icsv *c, struct icsv_field **ret, size_t *ret_n)
{
        struct icsv_field *v = NULL, *nv;
        size_t n = 0, cap = 0;
        bool last = false;
        int r = 0;

        while (!last) {
                if (n == cap) {
                        cap = cap ? cap * 2 : 16;
                        nv = realloc(v, cap * sizeof(*v));
                        if (!nv) {
                                r = -ENOMEM;
                                break;
                        }
                        v = nv;
                }
                r = icsv_field(c, &v[n], &last);
                if (r < 0)
                        break;
                if (++n > c->lim.max_columns + 1) {
                        r = icsv_err(c, v[n - 1].line, v[n - 1].col,
                                     "more than %zu input columns", c->lim.max_columns);
                        break;
                }
        }
        if (r < 0) {
                free(v);
                return r;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

int icsv_header(struct icsv *c, const struct scenario *sc, struct input_table **ret)
{
        struct icsv_field *f = NULL;
        struct input_table *t;
        size_t n = 0;
        int r;

        if (c->p == c->end)
                return icsv_err(c, 0, 0, "empty: expected a header 'time,<input>...'");
        r = fields_of(c, &f, &n);
        if (r < 0)
                return r;
        if (strcmp(f[0].s, "time")) {
                r = icsv_err(c, f[0].line, f[0].col, "the first column must be 'time', not '%s'",
                             f[0].s);
                goto out;
        }
        if (n == 1) {
                r = icsv_err(c, f[0].line, f[0].col, "the header names no input after 'time'");
                goto out;
        }
        t = input_table_new(n - 1, 0);
        if (!t) {
                r = -ENOMEM;
                goto out;
        }
        for (size_t i = 1; i < n && r == 0; i++)
                r = resolve(c, sc, &f[i], &t->cols[i - 1]);
        if (r == 0)
                r = complete(c, sc, t, f);
        if (r < 0)
                input_table_free(t);
        else
                *ret = t;
out:
        free(f);
        return r;
}
