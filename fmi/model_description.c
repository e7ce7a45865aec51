/*
 * model_description: md_parse() drives the readers in a fixed order, so a
 * document may list its sections in any order; md_free() and the small
 * helpers of the public interface live here too.
 *
 * DESIGN: the order is root and interfaces, units, type definitions (which
 * name units), variables (which name types), the lookup indices, the model
 * structure (which names variables), then the checks that need everything.
 * The XML tree is freed before md_parse() returns: struct md owns copies.
 */
#include "model_description.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "md_ctx.h"
#include "md_values.h"

void md_limits_default(struct md_limits *lim)
{
        *lim = (struct md_limits){
                .max_bytes = MD_MAX_BYTES,
                .max_variables = 1000000,
                .max_array_elements = 16777216,
                .max_string_bytes = 16u << 20,
                .max_depth = 64,
                .max_attributes = 256,
                .max_elements = 4000000,
        };
}

static void limits(const struct md_limits *in, struct md_limits *out)
{
        md_limits_default(out);
        if (!in)
                return;
        if (in->max_bytes)
                out->max_bytes = in->max_bytes;
        if (in->max_variables)
                out->max_variables = in->max_variables;
        if (in->max_array_elements)
                out->max_array_elements = in->max_array_elements;
        if (in->max_string_bytes)
                out->max_string_bytes = in->max_string_bytes;
        if (in->max_depth > 0)
                out->max_depth = in->max_depth;
        if (in->max_attributes)
                out->max_attributes = in->max_attributes;
        if (in->max_elements)
                out->max_elements = in->max_elements;
        out->cancel = in->cancel;
}

/* The version from fmiVersion; 0 (with an error) when not one fmud reads. */
static int version(struct md_ctx *c, const char *v)
{
        char buf[MD_SHOW_LEN];

        if (!v) {
                md_err(c, mx_line(c->root), NULL, "2.4.1", "missing required attribute fmiVersion");
                return 0;
        }
        if (strncmp(v, "3.", 2) == 0)
                return MD_FMI3;
        if (strcmp(v, "2.0") == 0)
                return MD_FMI2;
        md_err(c, mx_line(c->root), NULL, NULL,
               "fmiVersion=\"%s\" is not supported: fmud reads FMI 2.0 and FMI 3.x",
               md_show(v, buf));
        return 0;
}

static void build_index(struct md_ctx *c)
{
        struct md *md = c->md;

        md->by_vr = md_sort_by_vr(md->vars, md->n_vars);
        md->by_name = md_sort_by_name(md->vars, md->n_vars, sizeof(*md->vars),
                                      offsetof(struct md_variable, name));
        if (!md->by_vr || !md->by_name)
                c->nomem = true;
}

/* The aliases' names into md, for md_find_name(); one without a name is an error of its own. */
static void keep_aliases(struct md_ctx *c)
{
        struct md *md = c->md;

        if (!c->n_aliases)
                return;
        md->aliases = calloc(c->n_aliases, sizeof(*md->aliases));
        if (!md->aliases) {
                c->nomem = true;
                return;
        }
        for (size_t i = 0; i < c->n_aliases; i++) {
                const struct md_alias *a = &c->aliases[i];

                if (!a->name || a->var >= md->n_vars)
                        continue;
                md->aliases[md->n_aliases] = (struct md_alias_name){ .name = strdup(a->name),
                                                                     .var = a->var };
                if (!md->aliases[md->n_aliases++].name) {
                        c->nomem = true;
                        return;
                }
        }
        md->aliases_by_name = md_sort_by_name(md->aliases, md->n_aliases, sizeof(*md->aliases),
                                              offsetof(struct md_alias_name, name));
        if (!md->aliases_by_name)
                c->nomem = true;
}

static void ctx_fini(struct md_ctx *c)
{
        size_t n_units = c->md ? c->md->n_units : 0, n_types = c->md ? c->md->n_type_defs : 0;

        for (size_t i = 0; c->display_by_name && i < n_units; i++)
                free(c->display_by_name[i]);
        for (size_t i = 0; c->item_values && i < n_types; i++)
                free(c->item_values[i]);
        free(c->display_by_name);
        free(c->item_values);
        free(c->units_by_name);
        free(c->types_by_name);
        free(c->aliases);
        free(c->var_flags);
        mx_fini(&c->x);
}

/* Everything after the root element was found to be fmiModelDescription. */
static int read_md(struct md_ctx *c)
{
        const char *v = md_attr(c, c->root, "fmiVersion");
        int fmi = version(c, v);

        if (!fmi)
                return c->nomem ? -ENOMEM : -EINVAL;
        c->md = calloc(1, sizeof(*c->md));
        if (!c->md)
                return -ENOMEM;
        c->md->fmi = (enum md_fmi_version)fmi;
        c->md->fmi_version = strdup(v);
        if (!c->md->fmi_version)
                return -ENOMEM;
        md_read_root(c);
        if (!c->nomem && c->units)
                md_read_units(c, c->units);
        if (!c->nomem && c->types)
                md_read_types(c, c->types);
        if (!c->nomem && c->vars)
                md_read_vars(c, c->vars);
        if (!c->nomem)
                build_index(c);
        if (!c->nomem)
                keep_aliases(c);
        if (!c->nomem && c->structure)
                md_read_structure(c, c->structure);
        if (!c->nomem)
                md_validate(c);
        return c->nomem ? -ENOMEM : 0;
}

int md_parse(const void *buf, size_t len, const char *file, const struct md_limits *lim,
             struct diag_list *diags, struct md **ret_md)
{
        struct md_ctx c = { .diags = diags, .file = file };
        size_t errors = diag_errors(diags);
        int r;

        *ret_md = NULL;
        limits(lim, &c.lim);
        if (len > c.lim.max_bytes) {
                (void)diag_add(diags, DIAG_ERROR, file, 0, NULL,
                               "document of %zu bytes is over the limit of %zu bytes; not parsed",
                               len, c.lim.max_bytes);
                return -EFBIG;
        }
        c.x = (struct mx){ .diags = diags, .file = file, .max_depth = c.lim.max_depth,
                           .max_attributes = c.lim.max_attributes,
                           .max_elements = c.lim.max_elements, .cancel = &c.lim.cancel };
        r = mx_read(&c.x, buf, len);
        if (r < 0)
                goto out;
        c.root = xmlDocGetRootElement(c.x.doc);
        if (!mx_is(c.root, "fmiModelDescription")) {
                md_err(&c, mx_line(c.root), NULL, "2.4.1",
                       "the root element is <%s>, not <fmiModelDescription>", mx_name(c.root));
                r = c.nomem ? -ENOMEM : -EINVAL;
                goto out;
        }
        r = read_md(&c);
        if (r == 0 && diag_errors(diags) > errors)
                r = -EINVAL;
out:
        ctx_fini(&c);
        if (r == 0 || r == -EINVAL)
                *ret_md = c.md;
        else
                md_free(c.md);
        return r;
}

static void free_unknowns(struct md_unknowns *l)
{
        for (size_t i = 0; i < l->n; i++) {
                free(l->v[i].deps);
                free(l->v[i].dep_kinds);
        }
        free(l->v);
}

void md_free(struct md *md)
{
        struct md_model_structure *s;

        if (!md)
                return;
        free(md->fmi_version);
        free(md->model_name);
        free(md->instantiation_token);
        free(md->description);
        free(md->author);
        free(md->version);
        free(md->copyright);
        free(md->license);
        free(md->generation_tool);
        free(md->generation_date_and_time);
        free(md->cs.model_identifier);
        free(md->me_model_identifier);
        free(md->se_model_identifier);
        for (size_t i = 0; i < md->n_units; i++) {
                for (size_t j = 0; j < md->units[i].n_display; j++)
                        free(md->units[i].display[j].name);
                free(md->units[i].display);
                free(md->units[i].name);
        }
        free(md->units);
        for (size_t i = 0; i < md->n_type_defs; i++) {
                struct md_type_def *td = &md->type_defs[i];

                free(td->name);
                free(td->description);
                md_free_type_attrs(&td->attrs);
                for (size_t j = 0; j < td->n_items; j++) {
                        free(td->items[j].name);
                        free(td->items[j].description);
                }
                free(td->items);
        }
        free(md->type_defs);
        for (size_t i = 0; i < md->n_log_categories; i++) {
                free(md->log_categories[i].name);
                free(md->log_categories[i].description);
        }
        free(md->log_categories);
        for (size_t i = 0; i < md->n_vars; i++)
                md_var_free(&md->vars[i]);
        free(md->vars);
        s = &md->structure;
        free_unknowns(&s->outputs);
        free_unknowns(&s->derivatives);
        free_unknowns(&s->clocked_states);
        free_unknowns(&s->initial_unknowns);
        free_unknowns(&s->event_indicators);
        free(md->by_vr);
        free(md->by_name);
        for (size_t i = 0; i < md->n_aliases; i++)
                free(md->aliases[i].name);
        free(md->aliases);
        free(md->aliases_by_name);
        free(md);
}

uint64_t md_var_elements(const struct md *md, const struct md_variable *v)
{
        uint64_t prod = 1;

        for (size_t i = 0; i < v->n_dims; i++) {
                const struct md_dimension *d = &v->dims[i];
                uint64_t size = 0;

                if (d->has_start) {
                        size = d->start;
                } else if (d->has_vr) {
                        const struct md_variable *r = md_find_vr(md, d->vr);

                        if (r && r->type == MD_UINT64 && r->has_start && r->start.n >= 1)
                                size = r->start.u[0];
                }
                if (size == 0 || prod > UINT64_MAX / size)
                        return 0;
                prod *= size;
        }
        return prod;
}

const char *md_type_name(enum md_type t)
{
        static const char *const names[MD_TYPE_COUNT] = {
                "Float32", "Float64", "Int8",    "UInt8",  "Int16",  "UInt16", "Int32",
                "UInt32",  "Int64",   "UInt64",  "Boolean", "String", "Binary", "Clock",
                "Enumeration",
        };

        return (unsigned)t < MD_TYPE_COUNT ? names[t] : "?";
}

const char *md_causality_name(enum md_causality c)
{
        static const char *const names[] = {
                "parameter", "calculatedParameter", "input", "output", "local", "independent",
                "structuralParameter",
        };

        return (unsigned)c < sizeof(names) / sizeof(*names) ? names[c] : "?";
}

const char *md_variability_name(enum md_variability v)
{
        static const char *const names[] = { "constant", "fixed", "tunable", "discrete",
                                             "continuous" };

        return (unsigned)v < sizeof(names) / sizeof(*names) ? names[v] : "?";
}

const char *md_initial_name(enum md_initial i)
{
        static const char *const names[] = { "", "exact", "approx", "calculated" };

        return (unsigned)i < sizeof(names) / sizeof(*names) ? names[i] : "?";
}

bool md_type_is_float(enum md_type t)
{
        return t == MD_FLOAT32 || t == MD_FLOAT64;
}

bool md_type_is_signed(enum md_type t)
{
        return t == MD_INT8 || t == MD_INT16 || t == MD_INT32 || t == MD_INT64 ||
               t == MD_ENUMERATION;
}

bool md_type_is_unsigned(enum md_type t)
{
        return t == MD_UINT8 || t == MD_UINT16 || t == MD_UINT32 || t == MD_UINT64;
}

bool md_has_clocks(const struct md *md)
{
        for (size_t i = 0; i < md->n_vars; i++)
                if (md->vars[i].type == MD_CLOCK)
                        return true;
        return false;
}

int md_host_me(struct md *md)
{
        bool clocks = md_has_clocks(md);
        char *id;

        if (!md->has_model_exchange || !md->me_model_identifier)
                return -EINVAL;
        if (md->hosted_me)
                return 0;
        id = strdup(md->me_model_identifier);
        if (!id)
                return -ENOMEM;
        free(md->cs.model_identifier);
        /*
         * Events are handled inside the worker's step: no Event Mode, no FMU
         * states. With Clocks, which the importer ticks and reads in Event
         * Mode (FMI 3.0 section 2.2.8), a step ends at an event instead, for
         * the master's Event Mode (worker/me_events.c).
         */
        md->cs = (struct md_cosim){
                .present = true,
                .model_identifier = id,
                .can_handle_variable_communication_step_size = true,
                .has_event_mode = clocks,
                .might_return_early_from_do_step = clocks,
        };
        md->hosted_me = true;
        return 0;
}

int md_host_se(struct md *md)
{
        char *id;

        if (!md->has_scheduled_execution || !md->se_model_identifier)
                return -EINVAL;
        if (md->hosted_se)
                return 0;
        id = strdup(md->se_model_identifier);
        if (!id)
                return -ENOMEM;
        free(md->cs.model_identifier);
        /*
         * The worker's Event Mode is Clock Activation Mode (section 5.2):
         * setting input Clocks activates their partitions; no FMU states.
         */
        md->cs = (struct md_cosim){
                .present = true,
                .model_identifier = id,
                .can_handle_variable_communication_step_size = true,
                .has_event_mode = true,
        };
        md->hosted_se = true;
        return 0;
}
