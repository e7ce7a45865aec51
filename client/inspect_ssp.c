/*
 * inspect_ssp: `fmuctl inspect` of a system (.ssp, .ssd, or a folder with
 * a SystemStructure.ssd): its components, connections, parameters and
 * communication grid, as a table or as JSON (docs/inspect-json.md).
 *
 * DESIGN: the system is loaded with scenario_load(), the function the
 * daemon's load runs, so inspect reports exactly the problems that would
 * refuse it there; what is shown is what the master would run (nested
 * systems flattened, units and transformations folded into factor and
 * offset). The FMUs are unpacked into the cache fmuctl run --local uses;
 * no FMU code runs.
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "engine/engine.h"
#include "fmt.h"
#include "inspect.h"
#include "proto/paths.h"

static const char *var_name(const struct scenario *s, size_t comp, size_t var)
{
        return s->components[comp].fmu->md->vars[var].name;
}

static const char *algorithm_name(enum scenario_algorithm a)
{
        return a == SCENARIO_GAUSS_SEIDEL ? "gauss-seidel" : "jacobi";
}

/* A start value as text: the scalar, or "[a, b, ...]" for an array. */
static void start_text(char *buf, size_t size, const struct scenario_start *st)
{
        char val[64];
        size_t o = 0;

        if (st->value.n == 1) {
                snprintf(buf, size, "%s", fmt_value(val, sizeof(val), st->type, &st->value, 0));
                return;
        }
        o += (size_t)snprintf(buf, size, "[");
        for (size_t i = 0; i < st->value.n && i < 4 && o < size; i++)
                o += (size_t)snprintf(buf + o, size - o, "%s%s", i ? ", " : "",
                                      fmt_value(val, sizeof(val), st->type, &st->value, i));
        if (o < size)
                snprintf(buf + o, size - o, "%s]", st->value.n > 4 ? ", ..." : "");
}

/* ---- Text --------------------------------------------------------------------- */

static void text_components(FILE *out, const struct scenario *s)
{
        fprintf(out, "\nComponents (%zu)\n", s->n_components);
        fprintf(out, "  %-20s %-32s %-20s %-4s %s\n", "name", "FMU", "model", "FMI", "multirate");
        for (size_t i = 0; i < s->n_components; i++) {
                const struct scenario_component *c = &s->components[i];
                const struct md *md = c->fmu->md;

                fprintf(out, "  %-20s %-32s %-20s %-4s %u\n", c->name, c->source ? c->source : "-",
                        md->model_name ? md->model_name : "-", md->fmi_version, c->multirate);
        }
}

static void text_connections(FILE *out, const struct scenario *s)
{
        char f[FMT_NUM_MAX], o[FMT_NUM_MAX];

        fprintf(out, "\nConnections (%zu)\n", s->n_connections);
        for (size_t i = 0; i < s->n_connections; i++) {
                const struct scenario_connection *k = &s->connections[i];

                fprintf(out, "  %s.%s -> %s.%s", s->components[k->from_comp].name,
                        var_name(s, k->from_comp, k->from_var), s->components[k->to_comp].name,
                        var_name(s, k->to_comp, k->to_var));
                if (!k->identity)
                        fprintf(out, "  (x %s + %s)", fmt_double(f, k->factor), fmt_double(o, k->offset));
                if (k->parameter)
                        fprintf(out, "  [parameter, at initialization]");
                if (k->sequential)
                        fprintf(out, "  [sequential]");
                fputc('\n', out);
        }
}

static size_t n_parameters(const struct scenario *s)
{
        size_t n = 0;

        for (size_t i = 0; i < s->n_components; i++)
                n += s->components[i].n_starts;
        return n;
}

static void text_parameters(FILE *out, const struct scenario *s)
{
        char val[128];

        fprintf(out, "\nParameters and start values (%zu)\n", n_parameters(s));
        for (size_t i = 0; i < s->n_components; i++) {
                const struct scenario_component *c = &s->components[i];

                for (size_t j = 0; j < c->n_starts; j++) {
                        start_text(val, sizeof(val), &c->starts[j]);
                        fprintf(out, "  %s.%s = %s  (%s)\n", c->name,
                                var_name(s, i, c->starts[j].var), val,
                                c->starts[j].origin ? c->starts[j].origin : "-");
                }
        }
}

static void text_grid(FILE *out, const struct scenario *s)
{
        const struct scenario_experiment *e = &s->experiment;
        char a[FMT_NUM_MAX];

        fprintf(out, "\nCommunication grid\n");
        fprintf(out, "  %-12s %s\n", "startTime", fmt_double(a, e->start));
        fprintf(out, "  %-12s %s\n", "stopTime", fmt_double(a, e->stop));
        fprintf(out, "  %-12s %s\n", "stepSize", fmt_double(a, e->step));
        fprintf(out, "  %-12s", "multirate");
        for (size_t i = 0; i < s->n_components; i++)
                fprintf(out, "%s %s=%u", i ? "," : "", s->components[i].name,
                        s->components[i].multirate);
        fprintf(out, "\n  %-12s %s", "algorithm", algorithm_name(e->algorithm));
        for (size_t i = 0; e->algorithm == SCENARIO_GAUSS_SEIDEL && e->order && i < s->n_components; i++)
                fprintf(out, "%s%s", i ? " " : " (order: ", s->components[e->order[i]].name);
        fprintf(out, "%s\n", e->algorithm == SCENARIO_GAUSS_SEIDEL && e->order ? ")" : "");
        fprintf(out, "  %-12s %u\n", "decimation", e->decimation);
        fprintf(out, "  %-12s %s\n", "budget", isinf(e->budget) ? "none" : fmt_double(a, e->budget));
        fprintf(out, "  %-12s %s\n", "warp", fmt_double(a, e->warp));
        fprintf(out, "\nRecorded columns: %zu\n", s->n_columns);
}

static void print_text(const char *path, const struct scenario *s, const struct diag_list *diags)
{
        printf("%s\n", path);
        if (s) {
                printf("%-22s %s\n", "system", s->name ? s->name : "-");
                text_components(stdout, s);
                text_connections(stdout, s);
                text_parameters(stdout, s);
                text_grid(stdout, s);
        }
        fflush(stdout);
        inspect_print_problems(stderr, path, diags, "the system is refused");
}

/* ---- JSON --------------------------------------------------------------------- */

static void put(struct json_object *o, const char *key, struct json_object *v)
{
        if (o && v)
                json_object_object_add(o, key, v);
        else
                json_object_put(v);
}

static struct json_object *num(double d)
{
        char buf[FMT_NUM_MAX];
        const char *txt = fmt_double(buf, d);

        return isfinite(d) ? json_object_new_double_s(d, txt) : json_object_new_string(txt);
}

static struct json_object *json_components(const struct scenario *s)
{
        struct json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < s->n_components; i++) {
                const struct scenario_component *c = &s->components[i];
                struct json_object *o = json_object_new_object();

                put(o, "name", json_object_new_string(c->name));
                if (c->source)
                        put(o, "fmu", json_object_new_string(c->source));
                if (c->fmu->md->model_name)
                        put(o, "modelName", json_object_new_string(c->fmu->md->model_name));
                put(o, "fmiVersion", json_object_new_string(c->fmu->md->fmi_version));
                put(o, "sha256", json_object_new_string(c->fmu->sha256));
                put(o, "multirate", json_object_new_uint64(c->multirate));
                json_object_array_add(a, o);
        }
        return a;
}

static struct json_object *endpoint(const struct scenario *s, size_t comp, size_t var)
{
        struct json_object *o = json_object_new_object();

        put(o, "component", json_object_new_string(s->components[comp].name));
        put(o, "variable", json_object_new_string(var_name(s, comp, var)));
        return o;
}

static struct json_object *json_connections(const struct scenario *s)
{
        struct json_object *a = json_object_new_array();

        for (size_t i = 0; a && i < s->n_connections; i++) {
                const struct scenario_connection *k = &s->connections[i];
                struct json_object *o = json_object_new_object();

                put(o, "from", endpoint(s, k->from_comp, k->from_var));
                put(o, "to", endpoint(s, k->to_comp, k->to_var));
                if (!k->identity) {
                        put(o, "factor", num(k->factor));
                        put(o, "offset", num(k->offset));
                }
                put(o, "parameter", json_object_new_boolean(k->parameter));
                put(o, "sequential", json_object_new_boolean(k->sequential));
                if (k->origin)
                        put(o, "origin", json_object_new_string(k->origin));
                json_object_array_add(a, o);
        }
        return a;
}

static struct json_object *json_parameters(const struct scenario *s)
{
        struct json_object *a = json_object_new_array();
        char val[128];

        for (size_t i = 0; a && i < s->n_components; i++) {
                const struct scenario_component *c = &s->components[i];

                for (size_t j = 0; j < c->n_starts; j++) {
                        struct json_object *o = json_object_new_object();

                        start_text(val, sizeof(val), &c->starts[j]);
                        put(o, "component", json_object_new_string(c->name));
                        put(o, "variable", json_object_new_string(var_name(s, i, c->starts[j].var)));
                        put(o, "value", json_object_new_string(val));
                        if (c->starts[j].origin)
                                put(o, "origin", json_object_new_string(c->starts[j].origin));
                        json_object_array_add(a, o);
                }
        }
        return a;
}

static struct json_object *json_grid(const struct scenario *s)
{
        const struct scenario_experiment *e = &s->experiment;
        struct json_object *o = json_object_new_object(), *mr = json_object_new_object();

        put(o, "startTime", num(e->start));
        put(o, "stopTime", num(e->stop));
        put(o, "stepSize", num(e->step));
        for (size_t i = 0; mr && i < s->n_components; i++)
                put(mr, s->components[i].name, json_object_new_uint64(s->components[i].multirate));
        put(o, "multirate", mr);
        put(o, "algorithm", json_object_new_string(algorithm_name(e->algorithm)));
        put(o, "decimation", json_object_new_uint64(e->decimation));
        if (!isinf(e->budget))
                put(o, "budget", num(e->budget));
        put(o, "warp", num(e->warp));
        return o;
}

static int print_json(const char *path, const struct scenario *s, const struct diag_list *diags,
                      bool strict)
{
        struct json_object *root = json_object_new_object();
        const char *txt;

        if (!root)
                return -ENOMEM;
        put(root, "file", json_object_new_string(path));
        put(root, "kind", json_object_new_string("system"));
        put(root, "valid", json_object_new_boolean(s != NULL));
        if (strict)
                put(root, "strict", json_object_new_boolean(true));
        if (s) {
                put(root, "name", json_object_new_string(s->name ? s->name : ""));
                put(root, "components", json_components(s));
                put(root, "connections", json_connections(s));
                put(root, "parameters", json_parameters(s));
                put(root, "grid", json_grid(s));
                put(root, "recordedColumns", json_object_new_uint64(s->n_columns));
        }
        if (inspect_put_problems(root, diags) < 0) {
                json_object_put(root);
                return -ENOMEM;
        }
        txt = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                             JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!txt) {
                json_object_put(root);
                return -ENOMEM;
        }
        printf("%s\n", txt);
        json_object_put(root);
        return 0;
}

int inspect_system(const char *path, bool json, bool strict)
{
        struct scenario_opts opts;
        struct scenario *s = NULL;
        struct diag_list diags;
        char *cache = paths_cache();
        int r, code;

        if (!cache) {
                fprintf(stderr, "fmuctl inspect: out of memory\n");
                return FMUCTL_EXIT_SYSTEM;
        }
        scenario_opts_default(&opts);
        opts.cache_dir = cache;
        opts.fmu.strict = strict;
        diag_list_init(&diags, 0);
        r = scenario_load(path, &opts, NULL, &diags, &s);
        if (r == -ENOMEM) {
                fprintf(stderr, "fmuctl inspect: out of memory\n");
                code = FMUCTL_EXIT_SYSTEM;
                goto out;
        }
        if (r < 0 && r != -EINVAL && !diag_errors(&diags))
                diag_add(&diags, DIAG_ERROR, path, 0, NULL, "cannot be read: %s", strerror(-r));
        if (json) {
                if (print_json(path, s, &diags, strict) < 0) {
                        fprintf(stderr, "fmuctl inspect: out of memory\n");
                        code = FMUCTL_EXIT_SYSTEM;
                        goto out;
                }
        } else {
                print_text(path, s, &diags);
        }
        code = r == 0 ? FMUCTL_EXIT_OK : r == -EINVAL ? FMUCTL_EXIT_INVALID : FMUCTL_EXIT_SYSTEM;
out:
        scenario_free(s);
        diag_list_fini(&diags);
        free(cache);
        return code;
}
