/*
 * inspect_ssp: `fmuctl inspect` of a system, the real binary on the
 * fixtures of tests/ssp (staged with their FMUs by test_scenario_fixture):
 * what it describes (components, connections, parameters, the grid), and
 * that it reports the problems the daemon's load would refuse the system
 * for, as text and as JSON.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive_fixture.h"
#include "support/run.h"
#include "test_scenario_fixture.h"

static struct sx x;

static void teardown(void)
{
        sx_fini(&x);
}

/* fmuctl inspect [--json] PATH with the staged cache. */
static struct run_result inspect(const char *path, bool json)
{
        char *argv[] = { (char *)FMUD_FMUCTL, "inspect", json ? "--json" : (char *)path,
                         json ? (char *)path : NULL, NULL };
        struct run_result r = { 0 };

        cr_assert(eq(int, setenv("FMUD_CACHE_DIR", x.cache, 1), 0));
        cr_assert(eq(int, run_capture(argv, &r), 0));
        return r;
}

static struct json_object *inspect_json(const char *path, int *ret_code)
{
        struct run_result r = inspect(path, true);
        struct json_object *o = json_tokener_parse(r.out);

        cr_assert(ne(ptr, o, NULL), "not JSON: %s (stderr: %s)", r.out, r.err);
        *ret_code = r.exit_code;
        run_result_fini(&r);
        return o;
}

static struct json_object *key(struct json_object *o, const char *k)
{
        struct json_object *v = NULL;

        cr_assert(json_object_object_get_ex(o, k, &v), "no key '%s' in %s", k,
                  json_object_to_json_string(o));
        return v;
}

static const char *skey(struct json_object *o, const char *k)
{
        return json_object_get_string(key(o, k));
}

/* The parameter comp.var in root's "parameters", or NULL. */
static struct json_object *parameter(struct json_object *root, const char *comp, const char *var)
{
        struct json_object *a = key(root, "parameters");

        for (size_t i = 0; i < json_object_array_length(a); i++) {
                struct json_object *p = json_object_array_get_idx(a, i);

                if (!strcmp(skey(p, "component"), comp) && !strcmp(skey(p, "variable"), var))
                        return p;
        }
        return NULL;
}

Test(inspect_ssp, describes_components_connections_parameters_and_grid, .fini = teardown)
{
        const char *extra[] = { "params.ssv", NULL };
        struct json_object *root, *comps, *c, *grid, *p;
        struct run_result r;
        int code;

        sx_stage(&x, "valid/ssv_binding/SystemStructure.ssd", extra);
        root = inspect_json(x.ssd, &code);
        cr_assert(eq(int, code, 0));
        cr_assert(json_object_get_boolean(key(root, "valid")));
        cr_assert(eq(str, (char *)skey(root, "kind"), "system"));
        cr_assert(eq(str, (char *)skey(root, "name"), "bound"));
        comps = key(root, "components");
        cr_assert(eq(sz, json_object_array_length(comps), 2));
        c = json_object_array_get_idx(comps, 1);
        cr_assert(eq(str, (char *)skey(c, "name"), "mass2"));
        cr_assert(eq(str, (char *)skey(c, "modelName"), "MsdMass2"));
        cr_assert(eq(str, (char *)skey(c, "fmiVersion"), "3.0"));
        cr_assert(ne(ptr, strstr(skey(c, "fmu"), "MsdMass2.fmu"), NULL));
        cr_assert(eq(sz, json_object_array_length(key(root, "connections")), 3));
        /* The system level wins over the component's own set; the .ssv's gram become kg. */
        p = parameter(root, "mass2", "kc");
        cr_assert(ne(ptr, p, NULL));
        cr_assert(eq(str, (char *)skey(p, "value"), "20"));
        p = parameter(root, "mass1", "m1");
        cr_assert(ne(ptr, p, NULL));
        cr_assert(eq(str, (char *)skey(p, "value"), "2.5"));
        cr_assert(ne(ptr, strstr(skey(p, "origin"), "params.ssv"), NULL));
        grid = key(root, "grid");
        cr_assert(eq(dbl, json_object_get_double(key(grid, "startTime")), 0.0));
        cr_assert(json_object_get_double(key(grid, "stepSize")) > 0);
        cr_assert(eq(str, (char *)skey(grid, "algorithm"), "jacobi"));
        cr_assert(eq(int, json_object_get_int(key(key(grid, "multirate"), "mass1")), 1));
        cr_assert(eq(sz, json_object_array_length(key(root, "errors")), 0));
        json_object_put(root);

        r = inspect(x.ssd, false);
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(ne(ptr, strstr(r.out, "Components (2)"), NULL), "%s", r.out);
        cr_assert(ne(ptr, strstr(r.out, "mass2.F -> mass1.F"), NULL), "%s", r.out);
        cr_assert(ne(ptr, strstr(r.out, "mass2.kc = 20"), NULL), "%s", r.out);
        cr_assert(ne(ptr, strstr(r.out, "Communication grid"), NULL), "%s", r.out);
        cr_assert(eq(str, r.err, ""));
        run_result_fini(&r);
}

Test(inspect_ssp, shows_gauss_seidel_order_and_multirate, .fini = teardown)
{
        struct json_object *root, *grid, *conns;
        size_t sequential = 0;
        int code;

        sx_stage(&x, "valid/gauss_seidel.ssd", NULL);
        root = inspect_json(x.ssd, &code);
        cr_assert(eq(int, code, 0));
        grid = key(root, "grid");
        cr_assert(eq(str, (char *)skey(grid, "algorithm"), "gauss-seidel"));
        cr_assert(eq(int, json_object_get_int(key(key(grid, "multirate"), "mass2")), 2));
        conns = key(root, "connections");
        for (size_t i = 0; i < json_object_array_length(conns); i++)
                sequential += json_object_get_boolean(key(json_object_array_get_idx(conns, i),
                                                          "sequential"));
        cr_assert(eq(sz, sequential, 2));
        json_object_put(root);
}

/* The problems the daemon's load would refuse the system for, as errors; exit 1. */
Test(inspect_ssp, reports_what_would_refuse_the_load, .fini = teardown)
{
        struct json_object *root, *errors;
        struct run_result r;
        int code;

        sx_stage(&x, "invalid/type_mismatch.ssd", NULL);
        root = inspect_json(x.ssd, &code);
        cr_assert(eq(int, code, 1));
        cr_assert(not(json_object_get_boolean(key(root, "valid"))));
        errors = key(root, "errors");
        cr_assert(eq(sz, json_object_array_length(errors), 1));
        cr_assert(ne(ptr, strstr(skey(json_object_array_get_idx(errors, 0), "message"),
                                 "type mismatch: Float64 'a.Float64_output'"), NULL));
        cr_assert(not(json_object_object_get_ex(root, "components", NULL)));
        json_object_put(root);

        r = inspect(x.ssd, false);
        cr_assert(eq(int, r.exit_code, 1));
        cr_assert(ne(ptr, strstr(r.err, "Errors (1)\n  error: "), NULL), "%s", r.err);
        cr_assert(ne(ptr, strstr(r.err, "SystemStructure.ssd:16: 'b.Int32_input'"), NULL), "%s", r.err);
        cr_assert(ne(ptr, strstr(r.err, "1 error: the system is refused"), NULL), "%s", r.err);
        run_result_fini(&r);
}

static void *slurp(const char *path, size_t *ret_len)
{
        FILE *f = fopen(path, "rb");
        char *buf;
        long n;

        cr_assert(ne(ptr, f, NULL), "%s", path);
        cr_assert(eq(int, fseek(f, 0, SEEK_END), 0));
        n = ftell(f);
        rewind(f);
        buf = malloc((size_t)n + 1);
        cr_assert(ne(ptr, buf, NULL));
        cr_assert(eq(sz, fread(buf, 1, (size_t)n, f), (size_t)n));
        fclose(f);
        *ret_len = (size_t)n;
        return buf;
}

/* An .ssp archive: the description and its FMUs inside, read as the daemon reads them. */
Test(inspect_ssp, describes_an_ssp_archive, .fini = teardown)
{
        struct fx_lzentry e[3] = {
                { .name = "SystemStructure.ssd" },
                { .name = "resources/MsdMass1.fmu" },
                { .name = "resources/MsdMass2.fmu" },
        };
        struct json_object *root;
        char *ssp;
        int code;

        sx_stage(&x, "valid/gauss_seidel.ssd", NULL);
        e[0].data = slurp(x.ssd, &e[0].len);
        e[1].data = slurp(FMUD_TEST_FMU_DIR "/MsdMass1.fmu", &e[1].len);
        e[2].data = slurp(FMUD_TEST_FMU_DIR "/MsdMass2.fmu", &e[2].len);
        ssp = fx_path(x.dir, "system.ssp");
        cr_assert(eq(int, fx_write_libzip(ssp, e, 3), 0));
        root = inspect_json(ssp, &code);
        cr_assert(eq(int, code, 0), "%s", json_object_to_json_string(root));
        cr_assert(eq(sz, json_object_array_length(key(root, "components")), 2));
        cr_assert(eq(str, (char *)skey(key(root, "grid"), "algorithm"), "gauss-seidel"));
        json_object_put(root);
        for (size_t i = 0; i < 3; i++)
                free((void *)e[i].data);
        free(ssp);
}

/* An .ssp with two identical copies of an entry: a warning; --strict refuses the system. */
Test(inspect_ssp, strict_refuses_a_system_with_warnings, .fini = teardown)
{
        struct fx_entry e[5] = {
                { .name = "SystemStructure.ssd" },
                { .name = "resources/MsdMass1.fmu" },
                { .name = "resources/MsdMass2.fmu" },
                { .name = "resources/note.txt", .data = "same", .len = 4 },
                { .name = "resources/note.txt", .data = "same", .len = 4 },
        };
        char *argv[] = { (char *)FMUD_FMUCTL, "inspect", "--strict", NULL, NULL };
        struct json_object *root, *w;
        struct run_result r = { 0 };
        char *ssp;
        int code;

        sx_stage(&x, "valid/gauss_seidel.ssd", NULL);
        e[0].data = slurp(x.ssd, &e[0].len);
        e[1].data = slurp(FMUD_TEST_FMU_DIR "/MsdMass1.fmu", &e[1].len);
        e[2].data = slurp(FMUD_TEST_FMU_DIR "/MsdMass2.fmu", &e[2].len);
        ssp = fx_path(x.dir, "twice.ssp");
        cr_assert(eq(int, fx_write_raw(ssp, e, 5, false), 0));
        root = inspect_json(ssp, &code);
        cr_assert(eq(int, code, 0), "%s", json_object_to_json_string(root));
        w = key(root, "warnings");
        cr_assert(eq(sz, json_object_array_length(w), 1));
        cr_assert(ne(ptr, strstr(skey(json_object_array_get_idx(w, 0), "message"),
                                 "'resources/note.txt': duplicate entry name; both copies hold"),
                     NULL), "%s", json_object_to_json_string(w));
        json_object_put(root);

        argv[3] = ssp;
        cr_assert(eq(int, run_capture(argv, &r), 0));
        cr_assert(eq(int, r.exit_code, 1), "%s", r.err);
        cr_assert(ne(ptr, strstr(r.err, "refused under strict validation"), NULL), "%s", r.err);
        cr_assert(ne(ptr, strstr(r.err, "the system is refused"), NULL), "%s", r.err);
        run_result_fini(&r);
        for (size_t i = 0; i < 3; i++)
                free((void *)e[i].data);
        free(ssp);
}
