/*
 * md_structure: <ModelStructure>: the ordered lists of outputs, state
 * derivatives, clocked states, initial unknowns and event indicators with
 * their dependencies, mapped to variable indices, and the checks that each
 * entry names a variable of the right kind. FMI 3.0 section 2.4.8 (entries
 * by valueReference), FMI 2.0 section 2.2.8 (entries by 1-based index).
 */
#include "md_ctx.h"

#include <stdlib.h>
#include <string.h>

#include "md_values.h"

enum list_kind {
        LIST_OUTPUT,
        LIST_DERIVATIVE,
        LIST_CLOCKED_STATE,
        LIST_INITIAL_UNKNOWN,
        LIST_EVENT_INDICATOR,
        LIST_COUNT,
};

/* Element names: FMI 3.0 entries; FMI 2.0 lists of <Unknown>. */
static const char *const names3[LIST_COUNT] = {
        "Output", "ContinuousStateDerivative", "ClockedState", "InitialUnknown", "EventIndicator",
};
static const char *const names2[LIST_COUNT] = {
        "Outputs", "Derivatives", NULL, "InitialUnknowns", NULL,
};

static const char *const dep_kinds[] = {
        [MD_DEP_DEPENDENT] = "dependent", [MD_DEP_CONSTANT] = "constant",
        [MD_DEP_FIXED] = "fixed",         [MD_DEP_TUNABLE] = "tunable",
        [MD_DEP_DISCRETE] = "discrete",
};

static struct md_unknowns *list_of(struct md *md, enum list_kind k)
{
        struct md_model_structure *s = &md->structure;
        struct md_unknowns *lists[LIST_COUNT] = {
                &s->outputs, &s->derivatives, &s->clocked_states, &s->initial_unknowns,
                &s->event_indicators,
        };

        return lists[k];
}

/* A reference to a variable: a vr (FMI 3.0) or a 1-based index (FMI 2.0). */
static size_t resolve(struct md_ctx *c, uint32_t ref)
{
        if (c->md->fmi == MD_FMI3)
                return md_var_by_vr(c->md, ref);
        return ref >= 1 && ref <= c->md->n_vars ? ref - 1 : SIZE_MAX;
}

static void bad_ref(struct md_ctx *c, int line, const char *what, const char *elem, uint32_t ref)
{
        if (c->md->fmi == MD_FMI3)
                md_err(c, line, NULL, "2.4.8",
                       "%s %u in <%s> is not the valueReference of any variable", what, ref, elem);
        else
                md_err(c, line, NULL, "2.2.8",
                       "%s %u in <%s> is not a ScalarVariable index (1..%zu)", what, ref, elem,
                       c->md->n_vars);
}

/* dependenciesKind="..." for n dependencies; NULL (error added) when unusable. */
static enum md_dep_kind *read_kinds(struct md_ctx *c, const xmlNode *e, const char *elem,
                                    size_t n, bool initial)
{
        const char *s = md_attr(c, e, "dependenciesKind"), *sec = SEC(c, "2.4.8", "2.2.8");
        enum md_dep_kind *k = malloc((n ? n : 1) * sizeof(*k));
        size_t i = 0;

        if (!k) {
                c->nomem = true;
                return NULL;
        }
        for (const char *p = s; *p;) {
                size_t len = 0, j;

                while (mv_is_space(*p))
                        p++;
                while (p[len] && !mv_is_space(p[len]))
                        len++;
                if (!len)
                        break;
                for (j = 0; j < sizeof(dep_kinds) / sizeof(*dep_kinds); j++)
                        if (strlen(dep_kinds[j]) == len && memcmp(dep_kinds[j], p, len) == 0)
                                break;
                if (j == sizeof(dep_kinds) / sizeof(*dep_kinds)) {
                        md_err(c, mx_line(e), NULL, sec,
                               "dependenciesKind of <%s> has an unknown kind", elem);
                        goto out_free;
                }
                if (i == n) {
                        i++;
                        break;
                }
                if (initial && j > MD_DEP_CONSTANT) {
                        md_err(c, mx_line(e), NULL, sec,
                               "dependenciesKind \"%s\" is not allowed for <%s>", dep_kinds[j],
                               elem);
                        goto out_free;
                }
                k[i++] = (enum md_dep_kind)j;
                p += len;
        }
        if (i != n) {
                md_err(c, mx_line(e), NULL, sec,
                       "dependenciesKind of <%s> must have as many entries as dependencies (%zu)",
                       elem, n);
                goto out_free;
        }
        return k;

out_free:
        free(k);
        return NULL;
}

static void read_deps(struct md_ctx *c, const xmlNode *e, const char *elem, bool initial,
                      struct md_unknown *u)
{
        uint32_t *refs = NULL;
        size_t n = 0;
        int r;

        r = md_attr_u32_list(c, e, NULL, "dependencies", SEC(c, "2.4.8", "2.2.8"), &refs, &n);
        if (r != 1) {
                if (r == 0 && md_attr(c, e, "dependenciesKind"))
                        md_err(c, mx_line(e), NULL, SEC(c, "2.4.8", "2.2.8"),
                               "dependenciesKind of <%s> is given without dependencies", elem);
                return;
        }
        u->has_dependencies = true;
        u->deps = malloc((n ? n : 1) * sizeof(*u->deps));
        if (!u->deps) {
                c->nomem = true;
                goto out;
        }
        if (md_attr(c, e, "dependenciesKind"))
                u->dep_kinds = read_kinds(c, e, elem, n, initial);
        for (size_t i = 0; i < n; i++) {
                size_t v = resolve(c, refs[i]);

                if (v == SIZE_MAX) {
                        bad_ref(c, mx_line(e), "dependency", elem, refs[i]);
                        continue;
                }
                if (u->dep_kinds)
                        u->dep_kinds[u->n_deps] = u->dep_kinds[i];
                u->deps[u->n_deps++] = v;
        }
out:
        free(refs);
}

static void read_entry(struct md_ctx *c, const xmlNode *e, const char *elem, enum list_kind k)
{
        struct md_unknowns *l = list_of(c->md, k);
        const char *attr = SEC(c, "valueReference", "index");
        struct md_unknown *u = &l->v[l->n];
        uint32_t ref;
        size_t var;
        int r;

        r = md_attr_u32(c, e, NULL, attr, SEC(c, "2.4.8", "2.2.8"), &ref);
        if (r == 0)
                md_err(c, mx_line(e), NULL, SEC(c, "2.4.8", "2.2.8"),
                       "<%s> without the required attribute %s", elem, attr);
        if (r != 1)
                return;
        var = resolve(c, ref);
        if (var == SIZE_MAX) {
                bad_ref(c, mx_line(e), attr, elem, ref);
                return;
        }
        *u = (struct md_unknown){ .var = var, .line = mx_line(e) };
        l->n++;
        read_deps(c, e, elem, k == LIST_INITIAL_UNKNOWN, u);
}

static const char *entry_name(const struct md_ctx *c, enum list_kind k)
{
        static const char *const unknown2[LIST_COUNT] = {
                "Outputs/Unknown", "Derivatives/Unknown", "", "InitialUnknowns/Unknown", "",
        };

        return c->md->fmi == MD_FMI3 ? names3[k] : unknown2[k];
}

static void read_list(struct md_ctx *c, const xmlNode *parent, const char *elem, enum list_kind k)
{
        struct md_unknowns *l = list_of(c->md, k);
        size_t n = mx_count(parent, elem);

        if (n == 0)
                return;
        l->v = calloc(n, sizeof(*l->v));
        if (!l->v) {
                c->nomem = true;
                return;
        }
        for (const xmlNode *e = mx_first(parent); e && !c->nomem; e = mx_next(e))
                if (mx_is(e, elem))
                        read_entry(c, e, entry_name(c, k), k);
}

void md_read_structure(struct md_ctx *c, const xmlNode *ms)
{
        /*
         * FMI 2.0's <Outputs><Unknown index=.../></Outputs> in an FMI 3.0
         * document is not read: say so, naming the FMI 3.0 form, before each
         * output is reported as not listed.
         */
        for (const xmlNode *e = mx_first(ms); c->md->fmi == MD_FMI3 && e; e = mx_next(e))
                for (int k = 0; k < LIST_COUNT; k++)
                        if (names2[k] && mx_is(e, names2[k]))
                                md_warn(c, mx_line(e), NULL, "2.4.8",
                                        "<%s> is FMI 2.0 and is ignored; FMI 3.0 lists each entry "
                                        "directly in ModelStructure as <%s valueReference=\"...\"/>",
                                        names2[k], names3[k]);
        for (int k = 0; k < LIST_COUNT && !c->nomem; k++) {
                if (c->md->fmi == MD_FMI3) {
                        read_list(c, ms, names3[k], (enum list_kind)k);
                        continue;
                }
                for (const xmlNode *e = mx_first(ms), *first = NULL; names2[k] && e;
                     e = mx_next(e)) {
                        if (!mx_is(e, names2[k]))
                                continue;
                        if (first) {
                                md_err(c, mx_line(e), NULL, "2.2.8",
                                       "<%s> appears more than once", names2[k]);
                                continue;
                        }
                        first = e;
                        read_list(c, e, "Unknown", (enum list_kind)k);
                }
        }
}

/* Whether the entry's variable may be listed in list k; adds the error if not. */
static void check_entry(struct md_ctx *c, enum list_kind k, const struct md_unknown *u)
{
        const struct md_variable *v = &c->md->vars[u->var];
        const char *sec = SEC(c, "2.4.8", "2.2.8"), *elem = entry_name(c, k);

        switch (k) {
        case LIST_OUTPUT:
                if (v->causality != MD_CAUSALITY_OUTPUT)
                        md_err(c, u->line, v->name, sec,
                               "<%s> lists a variable whose causality is \"%s\", not output", elem,
                               md_causality_name(v->causality));
                break;
        case LIST_DERIVATIVE:
                if (!md_type_is_float(v->type) || !v->has_derivative)
                        md_err(c, u->line, v->name, sec,
                               "<%s> lists a variable that is not a %s with a derivative attribute",
                               elem, SEC(c, "floating point variable", "Real"));
                break;
        case LIST_CLOCKED_STATE:
                if (v->type == MD_CLOCK || !v->has_previous || !v->n_clocks ||
                    v->variability != MD_VARIABILITY_DISCRETE)
                        md_err(c, u->line, v->name, sec,
                               "<ClockedState> lists a variable that is not a discrete clocked "
                               "variable with a previous attribute");
                break;
        case LIST_EVENT_INDICATOR:
                if (!md_type_is_float(v->type) || v->variability != MD_VARIABILITY_CONTINUOUS)
                        md_err(c, u->line, v->name, sec,
                               "<EventIndicator> lists a variable that is not a continuous "
                               "floating point variable");
                break;
        default:
                break;
        }
}

void md_check_structure(struct md_ctx *c)
{
        const struct md *md = c->md;
        uint8_t *seen = calloc(md->n_vars ? md->n_vars : 1, 1);

        if (!seen) {
                c->nomem = true;
                return;
        }
        for (int k = 0; k < LIST_COUNT; k++) {
                const struct md_unknowns *l = list_of(c->md, (enum list_kind)k);

                memset(seen, 0, md->n_vars);
                for (size_t i = 0; i < l->n; i++) {
                        const struct md_unknown *u = &l->v[i];

                        if (seen[u->var])
                                md_err(c, u->line, md->vars[u->var].name, SEC(c, "2.4.8", "2.2.8"),
                                       "variable is listed twice in <%s>",
                                       entry_name(c, (enum list_kind)k));
                        seen[u->var] = 1;
                        check_entry(c, (enum list_kind)k, u);
                }
                if (k != LIST_OUTPUT)
                        continue;
                /* Every output is listed: Output is exactly the set of outputs. */
                for (size_t i = 0; i < md->n_vars; i++)
                        if (md->vars[i].causality == MD_CAUSALITY_OUTPUT && !seen[i])
                                md_err(c, md->vars[i].line, md->vars[i].name,
                                       SEC(c, "2.4.8", "2.2.8"),
                                       "output variable is not listed in ModelStructure <%s>",
                                       entry_name(c, LIST_OUTPUT));
        }
        free(seen);
}
