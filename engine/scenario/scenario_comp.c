/*
 * scenario_comp: the components of a scenario. Nested systems are
 * flattened (a component C in system S is "S.C"), every FMU is imported
 * through fmu_open_fd() (from the descriptor scenario_source.c opened)
 * into the cache, and every connector the SSD declares
 * on a component is checked against the FMU's variable of that name: it
 * must exist, its kind must match the causality, its type the variable's
 * type, and its unit (if declared) the variable's unit. Component
 * "a" with variable "b.y" and component "a.b" with variable "y" would
 * both be "a.b.y" (a column, a name in get and set): refused, naming both.
 *
 * DESIGN: every component is imported even after one fails, so a user
 * sees all broken FMUs at once; fmu_open()'s own diagnostics are passed
 * through with the FMU's name in front of "modelDescription.xml".
 */
#include "engine/scenario/scenario_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* fmu_open()'s diagnostic, with the file named as the scenario names it. */
static void pass_diag(struct sc_load *l, const struct diag *d, const char *path, const char *label)
{
        char *file = NULL;

        if (!d->file || strcmp(d->file, path) == 0)
                file = strdup(label);
        else if (asprintf(&file, "%s:%s", label, d->file) < 0)
                file = NULL;
        diag_add(l->diags, d->severity, file ? file : d->file, d->line, d->subject, "%s", d->message);
        free(file);
}

int sc_import(struct sc_load *l, struct scenario_component *c, int fd, const char *path,
              const char *label)
{
        struct fmu_opts fo = l->opts->fmu;
        struct diag_list tmp;
        const struct md_cosim *cs;
        int r;

        fo.cache_dir = l->opts->cache_dir;
        fo.iface = l->iface;
        fo.md_limits.cancel = l->opts->cancel;
        if (fmi_cancelled(&l->opts->cancel))
                return -ECANCELED;
        diag_list_init(&tmp, 0);
        r = fmu_open_fd(fd, path, &fo, &tmp, &c->fmu);
        for (size_t i = 0; i < tmp.n; i++)
                pass_diag(l, &tmp.v[i], path, label);
        diag_count_unstored(l->diags, &tmp);
        diag_list_fini(&tmp);
        if (r == -ENOMEM || r == -ECANCELED)
                goto out_free;
        /* -EBADMSG (not a zip) and -ESTALE come with fmu_open()'s own diagnostic. */
        if (r == -EINVAL || r == -EBADMSG || r == -ESTALE)
                sc_err(l, label, 0, c->name, "the FMU is refused (see above)");
        else if (r < 0 && c->fmu)
                /* Read, but the cache could not take it (fmu_open()'s diagnostic says why). */
                l->sys_error = l->sys_error ? l->sys_error : r;
        else if (r < 0)
                sc_err(l, label, 0, c->name, "the FMU cannot be read: %s", strerror(-r));
        if (r < 0) {
                r = -EINVAL;
                goto out_free;
        }
        cs = &c->fmu->md->cs;
        c->might_return_early = cs->might_return_early_from_do_step;
        c->can_get_set_state = cs->can_get_and_set_fmu_state;
        c->provides_intermediate_update = cs->provides_intermediate_update;
        c->has_event_mode = cs->has_event_mode;
        return 0;

out_free:
        fmu_free(c->fmu);
        c->fmu = NULL;
        return r;
}

static int add(struct sc_load *l, struct ssd_element *sys, struct ssd_element *e, const char *prefix)
{
        struct scenario *s = l->s;
        struct scenario_component *c;

        if (s->n_components >= l->opts->max_components)
                return sc_err(l, l->label, e->line, e->name,
                              "more than %zu components", l->opts->max_components);
        c = &s->components[s->n_components];
        if (prefix ? asprintf(&c->name, "%s.%s", prefix, e->name) < 0
                   : !(c->name = strdup(e->name))) {
                c->name = NULL;
                return -ENOMEM;
        }
        c->multirate = 1;
        l->elems[s->n_components] = e;
        l->systems[s->n_components] = sys;
        e->comp = s->n_components++;
        return 0;
}

static size_t count(const struct ssd_element *sys)
{
        size_t n = 0;

        for (size_t i = 0; i < sys->n_elements; i++)
                n += sys->elements[i].kind == SSD_SYSTEM ? count(&sys->elements[i]) : 1;
        return n;
}

static int flatten(struct sc_load *l, struct ssd_element *sys, const char *prefix)
{
        int r = 0;

        for (size_t i = 0; i < sys->n_elements && r >= 0; i++) {
                struct ssd_element *e = &sys->elements[i];
                char *sub = NULL;

                if (e->kind == SSD_COMPONENT) {
                        r = add(l, sys, e, prefix);
                        continue;
                }
                if (prefix ? asprintf(&sub, "%s.%s", prefix, e->name) < 0 : !(sub = strdup(e->name)))
                        return -ENOMEM;
                r = flatten(l, e, sub);
                free(sub);
        }
        return r;
}

/* Names with dots can collide after flattening ("a.b" beside system "a" holding "b"). */
static int check_unique(struct sc_load *l)
{
        const struct scenario *s = l->s;
        int bad = 0;

        /* O(n^2) string compares; n is capped by max_components. */
        for (size_t i = 1; i < s->n_components; i++)
                for (size_t j = 0; j < i; j++)
                        if (strcmp(s->components[i].name, s->components[j].name) == 0) {
                                bad |= sc_err(l, l->label, l->elems[i]->line, s->components[i].name,
                                              "two components flatten to this name (the other "
                                              "at line %d)", l->elems[j]->line) < 0;
                                break;
                        }
        return bad ? -EINVAL : 0;
}

static int cmp_name(const void *a, const void *b, void *ctx)
{
        const struct scenario *s = ctx;

        return strcmp(s->components[*(const size_t *)a].name,
                      s->components[*(const size_t *)b].name);
}

/* The component named exactly name[0..len), by binary search in sorted, or -1. */
static long find_sorted(const struct scenario *s, const size_t *sorted, const char *name,
                        size_t len)
{
        size_t lo = 0, hi = s->n_components;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                const char *m = s->components[sorted[mid]].name;
                int c = strncmp(m, name, len);

                if (c == 0 && m[len] != '\0')
                        c = 1;
                if (c == 0)
                        return (long)sorted[mid];
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return -1;
}

/*
 * Component d ("a.b") against the component named by its prefix up to a
 * dot ("a"): the first variable of d whose "<rest>.<variable>" ("b.y") the
 * other also has, and how many more there are.
 */
static int check_prefix(struct sc_load *l, size_t c, size_t d, const char *rest)
{
        const struct scenario_component *pc = &l->s->components[c], *dc = &l->s->components[d];
        const struct md *md = dc->fmu->md;
        size_t clashes = 0, first = 0;
        char *name = NULL;

        for (size_t i = 0; i < md->n_vars; i++) {
                if (asprintf(&name, "%s.%s", rest, md->vars[i].name) < 0)
                        return -ENOMEM;
                if (md_find_name(pc->fmu->md, name) && clashes++ == 0)
                        first = i;
                free(name);
        }
        if (!clashes)
                return 0;
        return sc_err(l, l->label, l->elems[d]->line, dc->name, "component '%s' variable '%s.%s' "
                      "and component '%s' variable '%s' are both named '%s.%s' (a column, a name "
                      "in get and set)%s: rename one of the components", pc->name, rest,
                      md->vars[first].name, dc->name, md->vars[first].name, dc->name,
                      md->vars[first].name, clashes > 1 ? ", and more variables alike" : "");
}

/* Component and variable names that join into the same full name (see the header). */
static int check_full_names(struct sc_load *l)
{
        const struct scenario *s = l->s;
        size_t *sorted = malloc((s->n_components + 1) * sizeof(*sorted));
        int bad = 0, r;

        if (!sorted)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_components; i++)
                sorted[i] = i;
        qsort_r(sorted, s->n_components, sizeof(*sorted), cmp_name, (void *)s);
        /* O(components * dots * log components), then O(variables) where a prefix is a component. */
        for (size_t d = 0; d < s->n_components; d++) {
                const char *name = s->components[d].name;

                for (const char *dot = strchr(name, '.'); dot; dot = strchr(dot + 1, '.')) {
                        long c = find_sorted(s, sorted, name, (size_t)(dot - name));

                        if (c < 0 || !s->components[c].fmu || !s->components[d].fmu)
                                continue;
                        r = check_prefix(l, (size_t)c, d, dot + 1);
                        if (r == -ENOMEM) {
                                free(sorted);
                                return r;
                        }
                        bad |= r < 0;
                }
        }
        free(sorted);
        return bad ? -EINVAL : 0;
}

static int import_one(struct sc_load *l, size_t i)
{
        const struct ssd_element *e = l->elems[i];
        struct scenario_component *c = &l->s->components[i];
        const char *type = e->type, *impl = e->implementation;
        char *path = NULL;
        int fd, r;

        if (type && strcmp(type, "application/x-fmu-sharedlibrary") != 0)
                return sc_err(l, l->label, e->line, c->name, "component type '%s' is not supported: "
                              "fmud runs FMUs (application/x-fmu-sharedlibrary)", type);
        if (impl && strcmp(impl, "any") != 0 && strcmp(impl, "CoSimulation") != 0 &&
            strcmp(impl, "ModelExchange") != 0 && strcmp(impl, "ScheduledExecution") != 0)
                return sc_err(l, l->label, e->line, c->name, "implementation=\"%s\" is none of "
                              "any, CoSimulation, ModelExchange and ScheduledExecution", impl);
        r = sc_source_fmu(l, e->source, e->line, c->name, &fd, &path, &c->source);
        if (r < 0)
                return r;
        /*
         * SSP 1.0 section 5.3.2: the component's implementation picks the
         * FMU's interface; the SSD schema of SSP 2.0 adds ScheduledExecution.
         */
        l->iface = !impl || !strcmp(impl, "any") ? l->opts->fmu.iface
                   : !strcmp(impl, "ModelExchange") ? FMU_IFACE_ME
                   : !strcmp(impl, "ScheduledExecution") ? FMU_IFACE_SE : FMU_IFACE_CS;
        r = sc_import(l, c, fd, path, c->source);
        l->iface = l->opts->fmu.iface;
        close(fd);
        free(path);
        return r;
}

static bool kind_fits(enum ssd_kind k, const struct md_variable *v)
{
        switch (k) {
        case SSD_KIND_INPUT:
                return v->causality == MD_CAUSALITY_INPUT;
        case SSD_KIND_OUTPUT:
                return v->causality == MD_CAUSALITY_OUTPUT;
        case SSD_KIND_PARAMETER:
                return v->causality == MD_CAUSALITY_PARAMETER;
        case SSD_KIND_CALCULATED_PARAMETER:
                return v->causality == MD_CAUSALITY_CALCULATED_PARAMETER;
        case SSD_KIND_STRUCTURAL_PARAMETER:
                return v->causality == MD_CAUSALITY_STRUCTURAL_PARAMETER;
        case SSD_KIND_LOCAL:
                return v->causality == MD_CAUSALITY_LOCAL;
        case SSD_KIND_CONSTANT:
                return v->variability == MD_VARIABILITY_CONSTANT;
        case SSD_KIND_UNSPECIFIED:
                return true;
        default:
                return false;
        }
}

static int check_unit(struct sc_load *l, const struct scenario_component *c,
                      const struct ssd_connector *k, const struct md_variable *v)
{
        const struct md *md = c->fmu->md;
        const struct md_unit *ku = sc_unit(l, md, k->unit), *vu;
        char a[160], b[160];

        if (!ku)
                return sc_err(l, l->label, k->line, k->name, "unit '%s' of component '%s' is "
                              "defined neither in the SSD's Units nor in the FMU", k->unit, c->name);
        if (!v->attrs.unit)
                return 0;       /* the connector gives the unit the FMU leaves open */
        vu = sc_var_unit(l, md, v->attrs.unit);
        if (vu && sc_unit_same(ku, vu))
                return 0;
        return sc_err(l, l->label, k->line, k->name, "connector of component '%s' declares unit %s, "
                      "but the FMU variable's unit is %s", c->name, sc_unit_str(ku, a, sizeof(a)),
                      vu ? sc_unit_str(vu, b, sizeof(b)) : v->attrs.unit);
}

static int check_connector(struct sc_load *l, size_t i, const struct ssd_connector *k)
{
        const struct scenario_component *c = &l->s->components[i];
        const struct md_variable *v = md_find_name(c->fmu->md, k->name);

        if (!v)
                return sc_err(l, l->label, k->line, k->name, "unknown connector: the FMU of "
                              "component '%s' (%s) has no variable of that name", c->name, c->source);
        if (!kind_fits(k->kind, v))
                return sc_err(l, l->label, k->line, k->name, "connector of component '%s' has kind "
                              "%s, but the FMU variable's causality is %s (variability %s)", c->name,
                              ssd_kind_name(k->kind), md_causality_name(v->causality),
                              md_variability_name(v->variability));
        if (!sc_type_fits(k->type, k->exact, v->type))
                return sc_err(l, l->label, k->line, k->name, "connector of component '%s' has type "
                              "%s, but the FMU variable is %s", c->name,
                              sc_ssd_type_name(k->type, k->exact), md_type_name(v->type));
        return k->unit ? check_unit(l, c, k, v) : 0;
}

int sc_components(struct sc_load *l)
{
        struct scenario *s = l->s;
        size_t n = count(&l->doc.root);
        int r, bad = 0;

        s->components = calloc(n ? n : 1, sizeof(*s->components));
        l->elems = calloc(n ? n : 1, sizeof(*l->elems));
        l->systems = calloc(n ? n : 1, sizeof(*l->systems));
        if (!s->components || !l->elems || !l->systems)
                return -ENOMEM;
        r = flatten(l, &l->doc.root, NULL);
        if (r == 0 && s->n_components == 0)
                r = sc_err(l, l->label, l->doc.root.line, l->doc.root.name,
                           "the system has no components");
        if (r == 0)
                r = check_unique(l);
        if (r < 0)
                return r;
        l->flattened = true;
        for (size_t i = 0; i < s->n_components; i++) {
                r = import_one(l, i);
                if (r == -ENOMEM)
                        return r;
                bad |= r < 0;
                if (r < 0)
                        continue;
                for (size_t j = 0; j < l->elems[i]->n_connectors; j++)
                        bad |= check_connector(l, i, &l->elems[i]->connectors[j]) < 0;
        }
        r = check_full_names(l);
        if (r == -ENOMEM)
                return r;
        return bad || r < 0 ? -EINVAL : 0;
}

bool sc_type_fits(enum ssd_type t, enum md_type exact, enum md_type m)
{
        switch (t) {
        case SSD_TYPE_NONE:
                return true;
        case SSD_TYPE_REAL:
                return md_type_is_float(m);
        case SSD_TYPE_INTEGER:
                return md_type_is_unsigned(m) || (md_type_is_signed(m) && m != MD_ENUMERATION);
        case SSD_TYPE_EXACT:
                return m == exact;
        case SSD_TYPE_BOOLEAN:
                return m == MD_BOOLEAN;
        case SSD_TYPE_STRING:
                return m == MD_STRING;
        case SSD_TYPE_ENUMERATION:
                return m == MD_ENUMERATION;
        case SSD_TYPE_BINARY:
                return m == MD_BINARY;
        }
        return false;
}

const char *sc_ssd_type_name(enum ssd_type t, enum md_type exact)
{
        static const char *const names[] = {
                "(none)", "Real", "Integer", "?", "Boolean", "String", "Enumeration", "Binary",
        };

        if (t == SSD_TYPE_EXACT)
                return md_type_name(exact);
        return (unsigned)t < sizeof(names) / sizeof(*names) ? names[t] : "?";
}
