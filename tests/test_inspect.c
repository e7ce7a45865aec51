/*
 * inspect: `fmuctl inspect` end to end, the real binary on the real test
 * FMUs and on broken archives built here, checked through its JSON output
 * (parsed with json-c) and its exit codes.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>

#include "archive_fixture.h"
#include "support/private_env.h"
#include "support/run.h"
#include "support/tmpdir.h"

static char *dir;

static void setup(void)
{
        dir = tmpdir_new("fmud-inspect");
        cr_assert(dir != NULL);
        cr_assert(private_env(dir) == 0);
}

static void teardown(void)
{
        tmpdir_free(dir);
}

static char *fmu_path(const char *name)
{
        char *p;

        cr_assert(asprintf(&p, "%s/%s.fmu", FMUD_TEST_FMU_DIR, name) > 0);
        return p;
}

/* Run fmuctl with up to three arguments; returns its result. */
static struct run_result fmuctl(const char *a1, const char *a2, const char *a3)
{
        char *argv[] = { (char *)FMUD_FMUCTL, (char *)a1, (char *)a2, (char *)a3, NULL };
        struct run_result r = { 0 };

        cr_assert(eq(int, run_capture(argv, &r), 0));
        return r;
}

/* `fmuctl inspect --json PATH`, parsed; *ret_code gets the exit code. */
static struct json_object *inspect_json(const char *path, int *ret_code)
{
        struct run_result r = fmuctl("inspect", "--json", path);
        struct json_object *o = json_tokener_parse(r.out);

        cr_assert(o != NULL, "not JSON: %s (stderr: %s)", r.out, r.err);
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

static struct json_object *variable(struct json_object *root, const char *name)
{
        struct json_object *vars = key(root, "variables");

        for (size_t i = 0; i < json_object_array_length(vars); i++) {
                struct json_object *v = json_object_array_get_idx(vars, i);

                if (!strcmp(skey(v, "name"), name))
                        return v;
        }
        cr_assert(false, "no variable %s", name);
        return NULL;
}

static bool has_problem(struct json_object *root, const char *text)
{
        struct json_object *p = key(root, "problems");

        for (size_t i = 0; i < json_object_array_length(p); i++)
                if (strstr(skey(json_object_array_get_idx(p, i), "message"), text) ||
                    strstr(json_object_to_json_string(json_object_array_get_idx(p, i)), text))
                        return true;
        return false;
}

Test(inspect, describes_bouncing_ball, .init = setup, .fini = teardown)
{
        char *path = fmu_path("BouncingBall");
        struct json_object *root, *cs, *de, *g, *bounces;
        int code;

        root = inspect_json(path, &code);
        cr_assert(eq(int, code, 0));
        cr_assert(json_object_get_boolean(key(root, "valid")));
        cr_assert(eq(str, (char *)skey(root, "fmiVersion"), "3.0"));
        cr_assert(eq(str, (char *)skey(root, "modelName"), "BouncingBall"));
        cr_assert(eq(int, skey(root, "instantiationToken")[0], '{'));
        cr_assert(eq(str, (char *)skey(root, "binary"), "binaries/x86_64-linux/BouncingBall.so"));
        cr_assert(eq(sz, strlen(skey(root, "sha256")), 64));

        cs = key(root, "coSimulation");
        cr_assert(eq(str, (char *)skey(cs, "modelIdentifier"), "BouncingBall"));
        cr_assert(json_object_get_boolean(key(cs, "hasEventMode")));
        cr_assert(json_object_get_boolean(key(cs, "mightReturnEarlyFromDoStep")));
        cr_assert(json_object_get_boolean(key(cs, "canGetAndSetFMUState")));
        cr_assert(json_object_get_boolean(key(cs, "canSerializeFMUState")));
        cr_assert(not(json_object_get_boolean(key(cs, "providesIntermediateUpdate"))));

        de = key(root, "defaultExperiment");
        cr_assert(eq(dbl, json_object_get_double(key(de, "stopTime")), 3.0));
        cr_assert(eq(dbl, json_object_get_double(key(de, "stepSize")), 0.01));

        g = variable(root, "g");
        cr_assert(eq(int, json_object_get_int(key(g, "valueReference")), 5));
        cr_assert(eq(str, (char *)skey(g, "type"), "Float64"));
        cr_assert(eq(str, (char *)skey(g, "causality"), "parameter"));
        cr_assert(eq(str, (char *)skey(g, "variability"), "fixed"));
        cr_assert(eq(str, (char *)skey(g, "initial"), "exact"));
        cr_assert(eq(dbl, json_object_get_double(key(g, "start")), 9.81));
        cr_assert(eq(str, (char *)skey(g, "unit"), "m/s2"));
        cr_assert(eq(sz, json_object_array_length(key(g, "dimensions")), 0));

        bounces = variable(root, "bounces");
        cr_assert(eq(str, (char *)skey(bounces, "type"), "Int32"));
        cr_assert(eq(str, (char *)skey(bounces, "causality"), "output"));
        cr_assert(eq(sz, json_object_array_length(key(root, "problems")), 0));
        json_object_put(root);
        free(path);
}

Test(inspect, every_test_fmu_is_valid_and_names_its_identifier, .init = setup, .fini = teardown)
{
        static const char *const names[] = { "LinearOde", "LinearOde2", "MsdMass1", "MsdMass2",
                                              "Feedthrough", "BouncingBall", "IntermediateProbe",
                                              "GlobalCounter" };

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                char *path = fmu_path(names[i]);
                struct json_object *root;
                int code;

                root = inspect_json(path, &code);
                cr_assert(eq(int, code, 0), "%s", names[i]);
                cr_assert(eq(str, (char *)skey(key(root, "coSimulation"), "modelIdentifier"),
                             (char *)names[i]));
                cr_assert(eq(str, (char *)skey(root, "fmiVersion"),
                             strcmp(names[i], "LinearOde2") ? "3.0" : "2.0"));
                cr_assert(json_object_array_length(key(root, "variables")) > 1);
                json_object_put(root);
                free(path);
        }
}

Test(inspect, shows_every_type_array_and_structural_dimension, .init = setup, .fini = teardown)
{
        static const char *const types[] = { "Float32", "Float64", "Int8", "UInt8", "Int16", "UInt16",
                                             "Int32", "UInt32", "Int64", "UInt64", "Boolean", "String",
                                             "Binary", "Enumeration" };
        char *path = fmu_path("Feedthrough");
        struct json_object *root, *m, *dims, *vec, *d0, *s;
        char name[64];
        int code;

        root = inspect_json(path, &code);
        cr_assert(eq(int, code, 0));
        for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
                snprintf(name, sizeof(name), "%s_input", types[i]);
                cr_assert(eq(str, (char *)skey(variable(root, name), "type"), (char *)types[i]));
        }
        cr_assert(eq(int, json_object_get_int(key(variable(root, "Int8_input"), "start")), -8));
        cr_assert(eq(str, (char *)skey(variable(root, "String_input"), "start"), "hello"));
        cr_assert(eq(str, (char *)skey(variable(root, "Binary_input"), "start"), "cafe"));
        cr_assert(json_object_get_boolean(key(variable(root, "Boolean_input"), "start")));
        cr_assert(eq(dbl, json_object_get_double(key(variable(root, "Float32_input"), "start")), 1.5));

        m = variable(root, "Float64_matrix_input");
        dims = key(m, "dimensions");
        cr_assert(eq(sz, json_object_array_length(dims), 2));
        cr_assert(eq(int, json_object_get_int(key(json_object_array_get_idx(dims, 0), "start")), 3));
        cr_assert(eq(int, json_object_get_int(key(json_object_array_get_idx(dims, 1), "start")), 2));
        s = key(m, "start");
        cr_assert(eq(sz, json_object_array_length(s), 6));
        cr_assert(eq(dbl, json_object_get_double(json_object_array_get_idx(s, 5)), 2.1));

        vec = variable(root, "Float64_vector_input");
        d0 = json_object_array_get_idx(key(vec, "dimensions"), 0);
        cr_assert(eq(int, json_object_get_int(key(d0, "valueReference")), 31));
        cr_assert(eq(str, (char *)skey(d0, "variable"), "n"));
        cr_assert(eq(str, (char *)skey(variable(root, "n"), "causality"), "structuralParameter"));
        cr_assert(eq(str, (char *)skey(variable(root, "length"), "displayUnit"), "mm"));
        json_object_put(root);
        free(path);
}

Test(inspect, prints_a_table_for_people, .init = setup, .fini = teardown)
{
        char *path = fmu_path("LinearOde2");
        struct run_result r = fmuctl("inspect", path, NULL);

        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(strstr(r.out, "FMI version            2.0") != NULL, "%s", r.out);
        cr_assert(strstr(r.out, "fmud runs it           yes, as Co-Simulation\n") != NULL, "%s", r.out);
        cr_assert(strstr(r.out, "Co-Simulation capabilities") != NULL);
        cr_assert(strstr(r.out, "canGetAndSetFMUstate") != NULL);
        cr_assert(strstr(r.out, "Variables (") != NULL);
        cr_assert(eq(str, r.err, ""));
        run_result_fini(&r);
        free(path);
}

Test(inspect, shows_each_clock_with_its_kind_timing_and_clocked_variables, .init = setup,
     .fini = teardown)
{
        char *path = fmu_path("ClockedDeriv");
        struct run_result r = fmuctl("inspect", path, NULL);
        struct json_object *root, *tick, *hi;
        int code;

        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(strstr(r.out, "\nClocks (5)\n") != NULL, "%s", r.out);
        cr_assert(strstr(r.out, "  tick                     input      tunable    0.1 shift 0"
                         "                  cu, cy, sub, cw\n") != NULL, "%s", r.out);
        cr_assert(strstr(r.out, "  hi                       output     triggered  -"
                         "                            hy\n") != NULL, "%s", r.out);
        cr_assert(strstr(r.out, "  sub                      input      triggered  -"
                         "                            -\n") != NULL, "%s", r.out);
        run_result_fini(&r);
        root = inspect_json(path, &code);
        cr_assert(eq(int, code, 0));
        tick = variable(root, "tick");
        hi = variable(root, "hi");
        cr_assert(eq(str, (char *)skey(tick, "intervalVariability"), "tunable"));
        cr_assert(eq(dbl, json_object_get_double(key(tick, "intervalDecimal")), 0.1));
        cr_assert(json_object_get_boolean(key(tick, "canBeDeactivated")));
        cr_assert(eq(str, (char *)skey(hi, "intervalVariability"), "triggered"));
        json_object_put(root);
        free(path);
}

/* Read a built test FMU's entry through libzip, for building variants. */
static void *read_entry(const char *fmu, const char *entry, size_t *ret_len)
{
        zip_t *za = zip_open(fmu, ZIP_RDONLY, NULL);
        zip_stat_t st;
        zip_file_t *f;
        void *buf;

        cr_assert(za != NULL);
        cr_assert(eq(int, zip_stat(za, entry, 0, &st), 0), "%s", entry);
        buf = malloc(st.size + 1);
        f = zip_fopen(za, entry, 0);
        cr_assert(f != NULL && buf != NULL);
        cr_assert(eq(i64, zip_fread(f, buf, st.size), (int64_t)st.size));
        zip_fclose(f);
        zip_close(za);
        *ret_len = st.size;
        return buf;
}

/* An archive with BouncingBall's binary and the given description and extra entry. */
static char *variant(const char *md, size_t md_len, bool with_binary, const char *extra)
{
        char *src = fmu_path("BouncingBall"), *out = fx_path(dir, "variant.fmu");
        const char *bin_name = "binaries/x86_64-linux/BouncingBall.so";
        size_t bin_len = 0;
        void *bin = read_entry(src, bin_name, &bin_len);
        struct fx_lzentry e[3] = {
                { .name = "modelDescription.xml", .data = md, .len = md_len },
        };
        size_t n = 1;

        if (with_binary)
                e[n++] = (struct fx_lzentry){ .name = bin_name, .data = bin, .len = bin_len };
        if (extra)
                e[n++] = (struct fx_lzentry){ .name = extra, .data = "x", .len = 1 };
        cr_assert(eq(int, fx_write_libzip(out, e, n), 0));
        free(bin);
        free(src);
        return out;
}

static char *bouncing_ball_md(size_t *ret_len)
{
        char *src = fmu_path("BouncingBall");
        char *md = read_entry(src, "modelDescription.xml", ret_len);

        free(src);
        return md;
}

Test(inspect, refuses_an_entry_that_escapes_the_archive, .init = setup, .fini = teardown)
{
        size_t len;
        char *md = bouncing_ball_md(&len);
        char *path = variant(md, len, true, "resources/../../evil");
        struct run_result r = fmuctl("inspect", path, NULL);
        struct json_object *root;
        int code;

        cr_assert(eq(int, r.exit_code, 1));
        cr_assert(strstr(r.err, "resources/../../evil") != NULL, "%s", r.err);
        run_result_fini(&r);
        root = inspect_json(path, &code);
        cr_assert(eq(int, code, 1));
        cr_assert(not(json_object_get_boolean(key(root, "valid"))));
        cr_assert(has_problem(root, "resources/../../evil"));
        json_object_put(root);
        free(path);
        free(md);
}

Test(inspect, shows_what_it_parsed_of_an_invalid_description, .init = setup, .fini = teardown)
{
        size_t len;
        char *md = bouncing_ball_md(&len), *dup, *path;
        struct json_object *root;
        struct run_result r;
        int code;

        /* Give 'v' the value reference of 'h': unique value references are a rule. */
        dup = strstr(md, "name=\"v\" valueReference=\"3\"");
        cr_assert(dup != NULL, "BouncingBall's description changed; update this test");
        memcpy(strstr(dup, "\"3\""), "\"1\"", 3);
        path = variant(md, len, true, NULL);
        r = fmuctl("inspect", path, NULL);
        cr_assert(eq(int, r.exit_code, 1));
        cr_assert(strstr(r.out, "fmud runs it           no: the FMU is refused") != NULL, "%s", r.out);
        cr_assert(strstr(r.err, "Errors (") != NULL, "%s", r.err);
        run_result_fini(&r);
        root = inspect_json(path, &code);
        cr_assert(eq(int, code, 1));
        cr_assert(not(json_object_get_boolean(key(root, "runnable"))));
        cr_assert(eq(str, (char *)skey(root, "modelName"), "BouncingBall"));
        cr_assert(eq(str, (char *)skey(variable(root, "v"), "causality"), "output"));
        cr_assert(has_problem(root, "valueReference"), "%s", json_object_to_json_string(root));
        json_object_put(root);
        free(path);
        free(md);
}

/*
 * Clock attributes FMI 3.0 section 2.4.4 rules on: a negative shiftDecimal
 * and a resolution of 0 are errors; counters without supportsFraction
 * (which "must not be used otherwise") and a priority on an output Clock
 * are warnings, the decimals used and the priority ignored.
 */
Test(inspect, judges_clock_timing_attributes, .init = setup, .fini = teardown)
{
        static const char clocks[] =
                "    <Clock name=\"neg\" valueReference=\"101\" causality=\"input\" "
                "variability=\"discrete\" intervalVariability=\"constant\" "
                "intervalDecimal=\"0.5\" shiftDecimal=\"-0.1\"/>\n"
                "    <Clock name=\"res0\" valueReference=\"102\" causality=\"input\" "
                "variability=\"discrete\" intervalVariability=\"constant\" "
                "intervalDecimal=\"0.5\" supportsFraction=\"true\" resolution=\"0\" "
                "intervalCounter=\"1\"/>\n"
                "    <Clock name=\"nofrac\" valueReference=\"103\" causality=\"input\" "
                "variability=\"discrete\" intervalVariability=\"constant\" "
                "intervalDecimal=\"0.25\" resolution=\"3\" intervalCounter=\"1\"/>\n"
                "    <Clock name=\"outprio\" valueReference=\"104\" causality=\"output\" "
                "variability=\"discrete\" intervalVariability=\"triggered\" "
                "priority=\"1\"/>\n";
        size_t len, at;
        char *md = bouncing_ball_md(&len), *end, *with, *path;
        struct json_object *root;
        int code;

        end = strstr(md, "  </ModelVariables>");
        cr_assert(end != NULL, "BouncingBall's description changed; update this test");
        at = (size_t)(end - md);
        with = malloc(len + sizeof(clocks));
        cr_assert(with != NULL);
        memcpy(with, md, at);
        memcpy(with + at, clocks, sizeof(clocks) - 1);
        memcpy(with + at + sizeof(clocks) - 1, md + at, len - at);
        path = variant(with, len + sizeof(clocks) - 1, true, NULL);
        root = inspect_json(path, &code);
        cr_assert(eq(int, code, 1));
        cr_assert(has_problem(root, "shiftDecimal must be 0 or greater"), "%s",
                  json_object_to_json_string(root));
        cr_assert(has_problem(root, "resolution must be greater than 0"));
        cr_assert(has_problem(root, "intervalCounter and shiftCounter are only for "
                                    "supportsFraction=\"true\": ignored"));
        cr_assert(has_problem(root, "an output Clock must not have priority: ignored"));
        json_object_put(root);
        free(path);
        free(with);
        free(md);
}

/* A valid FMU without this platform's binary is described, and said not to run here. */
Test(inspect, describes_an_fmu_without_a_binary_for_this_platform, .init = setup, .fini = teardown)
{
        size_t len;
        char *md = bouncing_ball_md(&len);
        char *path = variant(md, len, false, "binaries/x86_64-windows/BouncingBall.dll");
        struct run_result r = fmuctl("inspect", path, NULL);
        struct json_object *root;
        int code;

        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(strstr(r.out, "fmud runs it           no: no binary for this platform") != NULL,
                  "%s", r.out);
        cr_assert(strstr(r.out, "BouncingBall") != NULL, "the parsed part is still shown");
        run_result_fini(&r);
        root = inspect_json(path, &code);
        cr_assert(eq(int, code, 0));
        cr_assert(json_object_get_boolean(key(root, "valid")));
        cr_assert(not(json_object_get_boolean(key(root, "runnable"))));
        cr_assert(not(json_object_get_boolean(key(root, "hasBinary"))));
        cr_assert(strstr(skey(root, "cannotRun"), "binaries/x86_64-linux/BouncingBall.so") != NULL);
        json_object_put(root);
        free(path);
        free(md);
}

/* An archive holding only this modelDescription.xml. */
static char *md_only(const char *md)
{
        char *out = fx_path(dir, "md-only.fmu");
        struct fx_lzentry e = { .name = "modelDescription.xml", .data = md, .len = strlen(md) };

        cr_assert(eq(int, fx_write_libzip(out, &e, 1), 0));
        return out;
}

#define MD3_HEAD "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" \
        "<fmiModelDescription fmiVersion=\"3.0\" modelName=\"Tiny\" instantiationToken=\"{t}\">\n"
#define MD3_TAIL "  <ModelVariables>\n" \
        "    <Float64 name=\"time\" valueReference=\"0\" causality=\"independent\"/>\n" \
        "    <Float64 name=\"x\" valueReference=\"1\" causality=\"output\" initial=\"exact\" start=\"1\"/>\n" \
        "  </ModelVariables>\n" \
        "  <ModelStructure><Output valueReference=\"1\"/></ModelStructure>\n" \
        "</fmiModelDescription>\n"

/* Model Exchange only, without a binary: described in full; fmud says what it lacks. */
Test(inspect, describes_a_model_exchange_only_fmu_it_cannot_run, .init = setup, .fini = teardown)
{
        char *path = md_only(MD3_HEAD "  <ModelExchange modelIdentifier=\"Tiny\"/>\n" MD3_TAIL);
        struct run_result r = fmuctl("inspect", path, NULL);
        struct json_object *root, *ifaces;
        int code;

        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(strstr(r.out, "interface types        ModelExchange (Tiny)\n") != NULL, "%s", r.out);
        cr_assert(strstr(r.out, "fmud runs it           no: no binary for this platform (FMI 3.0 "
                                "section 2.5.1.4): binaries/") != NULL, "%s", r.out);
        cr_assert(strstr(r.out, "Co-Simulation capabilities") == NULL, "%s", r.out);
        cr_assert(strstr(r.out, "Variables (2)") != NULL, "%s", r.out);
        cr_assert(eq(str, r.err, ""));
        run_result_fini(&r);

        root = inspect_json(path, &code);
        cr_assert(eq(int, code, 0));
        cr_assert(json_object_get_boolean(key(root, "valid")));
        cr_assert(not(json_object_get_boolean(key(root, "runnable"))));
        ifaces = key(root, "interfaceTypes");
        cr_assert(json_object_get_boolean(key(ifaces, "modelExchange")));
        cr_assert(not(json_object_get_boolean(key(ifaces, "coSimulation"))));
        cr_assert(strstr(skey(root, "cannotRun"), "no binary for this platform") != NULL);
        cr_assert(eq(str, (char *)skey(root, "hostedAs"), "modelExchange"));
        cr_assert(eq(sz, json_object_array_length(key(root, "problems")), 0));
        cr_assert(eq(str, (char *)skey(variable(root, "x"), "causality"), "output"));
        json_object_put(root);
        free(path);
}

Test(inspect, describes_a_scheduled_execution_only_fmu_it_cannot_run, .init = setup,
     .fini = teardown)
{
        char *path = md_only(MD3_HEAD "  <ScheduledExecution modelIdentifier=\"Tiny\"/>\n" MD3_TAIL);
        struct json_object *root;
        int code;

        root = inspect_json(path, &code);
        cr_assert(eq(int, code, 0));
        cr_assert(json_object_get_boolean(key(root, "valid")));
        cr_assert(not(json_object_get_boolean(key(root, "runnable"))));
        cr_assert(json_object_get_boolean(key(key(root, "interfaceTypes"), "scheduledExecution")));
        cr_assert(eq(str, (char *)skey(root, "hostedAs"), "scheduledExecution"));
        cr_assert(strstr(skey(root, "cannotRun"), "no binary for this platform") != NULL);
        cr_assert(eq(sz, json_object_array_length(key(root, "partitions")), 0));
        json_object_put(root);
        free(path);
}

/* Partitions: its input Clocks listed as partitions, highest priority (smallest value) first. */
Test(inspect, shows_the_partitions_of_a_scheduled_execution_fmu, .init = setup, .fini = teardown)
{
        char *path = fmu_path("Partitions");
        struct json_object *root, *parts;
        struct run_result r;
        int code;

        root = inspect_json(path, &code);
        cr_assert(eq(int, code, 0));
        cr_assert(json_object_get_boolean(key(root, "runnable")));
        cr_assert(eq(str, (char *)skey(root, "hostedAs"), "scheduledExecution"));
        parts = key(root, "partitions");
        cr_assert(eq(sz, json_object_array_length(parts), 2));
        cr_assert(eq(str, (char *)skey(json_object_array_get_idx(parts, 0), "clock"), "fast"));
        cr_assert(eq(i64, json_object_get_int64(key(json_object_array_get_idx(parts, 0), "priority")),
                     1));
        cr_assert(eq(dbl, json_object_get_double(key(json_object_array_get_idx(parts, 0),
                                                     "intervalDecimal")), 0.01));
        cr_assert(eq(str, (char *)skey(json_object_array_get_idx(parts, 1), "clock"), "slow"));
        cr_assert(eq(i64, json_object_get_int64(key(json_object_array_get_idx(parts, 1), "priority")),
                     2));
        json_object_put(root);
        r = fmuctl("inspect", path, NULL);
        cr_assert(eq(int, r.exit_code, 0));
        cr_assert(strstr(r.out, "yes, as Scheduled Execution") != NULL, "%s", r.out);
        cr_assert(strstr(r.out, "fast (priority 1, every 0.01 s), slow (priority 2, every 0.025 s)")
                  != NULL, "%s", r.out);
        run_result_fini(&r);
        free(path);
}

/* The FMI 2.0 unit rule is a warning: listed apart, valid; --strict refuses it. */
Test(inspect, lists_warnings_apart_and_strict_refuses_them, .init = setup, .fini = teardown)
{
        char *path = md_only("<?xml version=\"1.0\"?>\n"
                             "<fmiModelDescription fmiVersion=\"2.0\" modelName=\"M\" guid=\"{g}\">\n"
                             "  <CoSimulation modelIdentifier=\"M\"/>\n"
                             "  <ModelVariables>\n"
                             "    <ScalarVariable name=\"p\" valueReference=\"1\" causality=\"parameter\" "
                             "variability=\"fixed\"><Real unit=\"m\" start=\"0\"/></ScalarVariable>\n"
                             "  </ModelVariables>\n"
                             "  <ModelStructure/>\n"
                             "</fmiModelDescription>\n");
        struct run_result r = fmuctl("inspect", path, NULL);
        struct json_object *root, *w;
        int code;

        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(strstr(r.err, "Warnings (1)\n  warning: modelDescription.xml:5: 'p': unit=\"m\" "
                                "is not defined in UnitDefinitions") != NULL, "%s", r.err);
        cr_assert(strstr(r.err, "Errors") == NULL, "%s", r.err);
        cr_assert(strstr(r.err, "valid, with 1 warning") != NULL, "%s", r.err);
        run_result_fini(&r);

        root = inspect_json(path, &code);
        cr_assert(eq(int, code, 0));
        cr_assert(json_object_get_boolean(key(root, "valid")));
        cr_assert(eq(sz, json_object_array_length(key(root, "errors")), 0));
        w = key(root, "warnings");
        cr_assert(eq(sz, json_object_array_length(w), 1));
        cr_assert(eq(str, (char *)skey(json_object_array_get_idx(w, 0), "severity"), "warning"));
        json_object_put(root);

        r = fmuctl("inspect", "--strict", path);
        cr_assert(eq(int, r.exit_code, 1), "%s", r.err);
        cr_assert(strstr(r.err, "Errors (1)\n  error: modelDescription.xml:5: 'p': unit=\"m\" is not "
                                "defined in UnitDefinitions (FMI 2.0 section 2.2.7); refused under "
                                "strict validation") != NULL, "%s", r.err);
        run_result_fini(&r);
        free(path);
}

Test(inspect, exit_codes_for_usage_unreadable_and_non_zip_files, .init = setup, .fini = teardown)
{
        char *text = fx_path(dir, "notes.fmu"), *missing = fx_path(dir, "missing.fmu");
        struct run_result r;

        cr_assert(eq(int, tmpdir_write(dir, "notes.fmu", "not a zip\n", 10), 0));
        r = fmuctl("inspect", text, NULL);
        cr_assert(eq(int, r.exit_code, 1), "%s", r.err);
        cr_assert(strstr(r.err, "notes.fmu") != NULL, "%s", r.err);
        run_result_fini(&r);

        r = fmuctl("inspect", missing, NULL);
        cr_assert(eq(int, r.exit_code, 3), "%s", r.err);
        cr_assert(strstr(r.err, "missing.fmu") != NULL, "%s", r.err);
        run_result_fini(&r);

        r = fmuctl("inspect", NULL, NULL);
        cr_assert(eq(int, r.exit_code, 2));
        run_result_fini(&r);
        r = fmuctl("frobnicate", NULL, NULL);
        cr_assert(eq(int, r.exit_code, 2));
        run_result_fini(&r);
        free(text);
        free(missing);
}

/* FMI 2.0 Model Exchange only, without a binary: hosted as FMI 3.0 ME is, it lacks only the binary. */
Test(inspect, says_an_fmi2_model_exchange_only_fmu_lacks_only_its_binary, .init = setup,
     .fini = teardown)
{
        char *path = md_only("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<fmiModelDescription fmiVersion=\"2.0\" modelName=\"Tiny2\" guid=\"{t}\">\n"
                "  <ModelExchange modelIdentifier=\"Tiny2\"/>\n"
                "  <ModelVariables>\n"
                "    <ScalarVariable name=\"x\" valueReference=\"1\" causality=\"output\" "
                "variability=\"continuous\" initial=\"exact\"><Real start=\"1\"/></ScalarVariable>\n"
                "  </ModelVariables>\n"
                "  <ModelStructure><Outputs><Unknown index=\"1\"/></Outputs></ModelStructure>\n"
                "</fmiModelDescription>\n");
        struct run_result r = fmuctl("inspect", path, NULL);
        struct json_object *root;
        int code;

        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(strstr(r.out, "fmud runs it           no: no binary for this platform (FMI 2.0 "
                                "section 2.3): binaries/") != NULL, "%s", r.out);
        cr_assert(strstr(r.out, "/Tiny2.so is not in the archive\n") != NULL, "%s", r.out);
        run_result_fini(&r);
        root = inspect_json(path, &code);
        cr_assert(eq(int, code, 0));
        cr_assert(json_object_get_boolean(key(root, "valid")));
        cr_assert(not(json_object_get_boolean(key(root, "runnable"))));
        cr_assert(strstr(skey(root, "cannotRun"), "no binary for this platform") != NULL);
        cr_assert(eq(str, (char *)skey(root, "hostedAs"), "modelExchange"));
        json_object_put(root);
        free(path);
}

/* A Model Exchange only FMU with its binary: fmud runs it, integrated in its worker. */
Test(inspect, says_a_model_exchange_fmu_runs_integrated_in_its_worker, .init = setup,
     .fini = teardown)
{
        struct run_result r = fmuctl("inspect", FMUD_TEST_FMU_DIR "/BallME.fmu", NULL);
        struct json_object *root;
        int code;

        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(strstr(r.out, "interface types        ModelExchange (BallME)\n") != NULL, "%s",
                  r.out);
        cr_assert(strstr(r.out, "fmud runs it           yes, as Model Exchange, integrated with "
                                "CVODE in its worker\n") != NULL, "%s", r.out);
        cr_assert(strstr(r.out, "Co-Simulation capabilities") == NULL, "%s", r.out);
        run_result_fini(&r);
        root = inspect_json(FMUD_TEST_FMU_DIR "/BallME.fmu", &code);
        cr_assert(eq(int, code, 0));
        cr_assert(json_object_get_boolean(key(root, "runnable")));
        cr_assert(eq(str, (char *)skey(root, "hostedAs"), "modelExchange"));
        cr_assert(not(json_object_get_boolean(key(key(root, "interfaceTypes"), "coSimulation"))));
        cr_assert(not(json_object_object_get_ex(root, "coSimulation", NULL)));
        json_object_put(root);
}

/* An FMI 2.0 Model Exchange only FMU with its binary: run the same way. */
Test(inspect, says_an_fmi2_model_exchange_fmu_runs_integrated_in_its_worker, .init = setup,
     .fini = teardown)
{
        struct run_result r = fmuctl("inspect", FMUD_TEST_FMU_DIR "/BallME2.fmu", NULL);
        struct json_object *root;
        int code;

        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(strstr(r.out, "interface types        ModelExchange (BallME2)\n") != NULL, "%s",
                  r.out);
        cr_assert(strstr(r.out, "fmud runs it           yes, as Model Exchange, integrated with "
                                "CVODE in its worker\n") != NULL, "%s", r.out);
        run_result_fini(&r);
        root = inspect_json(FMUD_TEST_FMU_DIR "/BallME2.fmu", &code);
        cr_assert(eq(int, code, 0));
        cr_assert(json_object_get_boolean(key(root, "runnable")));
        cr_assert(eq(str, (char *)skey(root, "hostedAs"), "modelExchange"));
        json_object_put(root);
}
