/*
 * fmuctl_results: what fmuctl run gives people, the same through a real
 * daemon and with --local: the results format named by --out's extension,
 * `--out -` (the rows on standard output), a scenario with nothing to
 * record, the exit code of each kind of failure, and a mistyped command.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon_fixture.h"
#include "support/run.h"

static struct fmud_daemon d;

static void setup(void)
{
        daemon_start(&d, NULL);
        cr_assert(eq(int, setenv("FMUD_ENDPOINT", d.endpoint, 1), 0));
        /* Default results files (SCENARIO_out.csv) land here, below the daemon's output directory. */
        cr_assert(eq(int, chdir(d.dir), 0));
}

static void teardown(void)
{
        daemon_stop(&d);
}

/* fmuctl ARGS... (NULL-terminated; a NULL may end it early); caller frees with run_result_fini(). */
static struct run_result fmuctl(const char *const args[])
{
        char *argv[32] = { (char *)FMUD_FMUCTL };
        struct run_result r = { 0 };
        size_t n = 1;

        for (; args[n - 1] && n < 31; n++)
                argv[n] = (char *)args[n - 1];
        argv[n] = NULL;
        cr_assert(eq(int, run_capture(argv, &r), 0));
        return r;
}

/* How many sessions the daemon holds. */
static size_t sessions(void)
{
        struct run_result r = fmuctl((const char *[]){ "list", "--json", NULL });
        struct json_object *o, *v = NULL;
        size_t n;

        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        o = json_tokener_parse(r.out);
        cr_assert(o != NULL && json_object_object_get_ex(o, "sessions", &v), "%s", r.out);
        n = json_object_array_length(v);
        json_object_put(o);
        run_result_fini(&r);
        return n;
}

static const char *way(int local)
{
        return local ? "--local" : "--quiet";
}

Test(fmuctl_results, out_names_its_format_and_other_formats_are_refused, .init = setup,
     .fini = teardown)
{
        static const char *const bad[][2] = {
                { "res.h5", "fmuctl run: --out 'res.h5': cannot write the format .h5; the formats "
                            "are: .csv (CSV), .mat (MAT v4), - (CSV on standard output)\n"
                            "(see 'fmuctl run --help')\n" },
                { "res", "fmuctl run: --out 'res': cannot write a file without an extension; the "
                         "formats are: .csv (CSV), .mat (MAT v4), - (CSV on standard output)\n"
                         "(see 'fmuctl run --help')\n" },
                { "dir.csv/res.json", "fmuctl run: --out 'dir.csv/res.json': cannot write the format "
                                      ".json; the formats are: .csv (CSV), .mat (MAT v4), - (CSV "
                                      "on standard output)\n(see 'fmuctl run --help')\n" },
        };
        struct run_result r;

        for (int local = 0; local < 2; local++)
                for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                        r = fmuctl((const char *[]){ "run", FMUD_EXAMPLES "/msd.ssp", "--out",
                                                     bad[i][0], "--quiet", local ? "--local" : NULL,
                                                     NULL });
                        cr_assert(eq(int, r.exit_code, 2), "%s: %s", bad[i][0], r.err);
                        cr_assert(eq(str, r.out, ""));
                        cr_assert(eq(str, r.err, (char *)bad[i][1]));
                        cr_assert(access(bad[i][0], F_OK) < 0, "%s was written", bad[i][0]);
                        run_result_fini(&r);
                }
        /* load: the daemon writes the file, so standard output is no format of its own. */
        r = fmuctl((const char *[]){ "load", FMUD_EXAMPLES "/msd.ssp", "--out", "-", NULL });
        cr_assert(eq(int, r.exit_code, 2), "%s", r.err);
        cr_assert(eq(str, r.err, "fmuctl load: --out '-': cannot write a file without an extension; "
                                 "the formats are: .csv (CSV), .mat (MAT v4)\n"
                                 "(see 'fmuctl load --help')\n"));
        run_result_fini(&r);
        /* Nothing was loaded, and an upper-case extension is the same format. */
        cr_assert(eq(sz, sessions(), 0));
        r = fmuctl((const char *[]){ "run", FMUD_EXAMPLES "/msd.ssp", "--out", "RES.CSV", "--quiet",
                                     NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(eq(int, access("RES.CSV", F_OK), 0));
        run_result_fini(&r);
}

Test(fmuctl_results, out_dash_puts_the_rows_on_standard_output_both_ways, .init = setup,
     .fini = teardown)
{
        struct run_result file, r;
        char *csv;

        file = fmuctl((const char *[]){ "run", FMUD_EXAMPLES "/msd.ssp", "--out", "msd.csv",
                                        "--quiet", NULL });
        cr_assert(eq(int, file.exit_code, 0), "%s", file.err);
        csv = daemon_slurp("msd.csv", NULL);
        cr_assert(eq(int, strncmp(csv, "time,mass1.x1,", 14), 0), "%s", csv);
        for (int local = 0; local < 2; local++) {
                /* Without --quiet: the summary goes to stderr, out of the rows' way. */
                r = fmuctl((const char *[]){ "run", FMUD_EXAMPLES "/msd.ssp", "--out", "-",
                                             local ? "--local" : NULL, NULL });
                cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
                cr_assert(eq(str, r.out, csv), "%s", local ? "--local" : "daemon");
                cr_assert(strstr(r.err, "results       standard output: 101 rows, 5 columns") !=
                          NULL, "%s", r.err);
                cr_assert(access("-", F_OK) < 0, "a file named '-' was written");
                run_result_fini(&r);
        }
        /* The daemon's copy of the rows was removed once printed; no session is left. */
        cr_assert(eq(sz, sessions(), 0));
        free(csv);
        run_result_fini(&file);
}

/* With no daemon at the endpoint, fmuctl run starts a private one: --out - works there too. */
Test(fmuctl_results, out_dash_through_a_private_daemon, .init = setup, .fini = teardown)
{
        struct run_result local, r;
        char *ep = NULL;

        local = fmuctl((const char *[]){ "run", FMUD_EXAMPLES "/msd.ssp", "--out", "-", "--local",
                                         "--quiet", NULL });
        cr_assert(eq(int, local.exit_code, 0), "%s", local.err);
        cr_assert(asprintf(&ep, "ipc://%s/nobody.sock", d.dir) > 0);
        r = fmuctl((const char *[]){ "run", FMUD_EXAMPLES "/msd.ssp", "--out", "-", "--quiet",
                                     "--endpoint", ep, NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(eq(str, r.out, local.out));
        cr_assert(eq(str, r.err, ""));
        run_result_fini(&r);
        run_result_fini(&local);
        free(ep);
}

/*
 * A scenario with no column (an FMU without outputs, FMI 3.0 section
 * 2.4.8; an array its structural parameter sizes 0) runs, and its results
 * are the time column alone, as other importers write them, both ways.
 */
Test(fmuctl_results, nothing_to_record_gives_the_time_column_both_ways, .init = setup,
     .fini = teardown)
{
        struct run_result r;
        char *csv;

        for (int local = 0; local < 2; local++) {
                r = fmuctl((const char *[]){ "run", FMUD_TEST_FMU_DIR "/Silent.fmu", "--out",
                                             "silent.csv", "--stop-time", "0.3", way(local), NULL });
                cr_assert(eq(int, r.exit_code, 0), "%s: %s", way(local), r.err);
                csv = daemon_slurp("silent.csv", NULL);
                cr_assert(eq(str, csv, "time\n0\n0.1\n0.2\n0.3\n"), "%s", way(local));
                free(csv);
                cr_assert(eq(int, unlink("silent.csv"), 0));
                run_result_fini(&r);
                /* On standard output too. */
                r = fmuctl((const char *[]){ "run", FMUD_TEST_FMU_DIR "/Silent.fmu", "--out", "-",
                                             "--stop-time", "0.1", "--quiet", local ? "--local" : NULL,
                                             NULL });
                cr_assert(eq(int, r.exit_code, 0), "%s: %s", way(local), r.err);
                cr_assert(eq(str, r.out, "time\n0\n0.1\n"), "%s", way(local));
                run_result_fini(&r);
                /* Named, a local variable is recorded. */
                r = fmuctl((const char *[]){ "run", FMUD_TEST_FMU_DIR "/Silent.fmu", "--out",
                                             "silent.csv", "--record", "local_count", way(local),
                                             NULL });
                cr_assert(eq(int, r.exit_code, 0), "%s: %s", way(local), r.err);
                csv = daemon_slurp("silent.csv", NULL);
                cr_assert(eq(int, strncmp(csv, "time,local_count\n", 17), 0), "%s", csv);
                free(csv);
                cr_assert(eq(int, unlink("silent.csv"), 0));
                run_result_fini(&r);
                /* Named, an array sized 0 (FMI 3.0 section 2.4.7.2) has no column either. */
                r = fmuctl((const char *[]){ "run", FMUD_TEST_FMU_DIR "/Feedthrough.fmu",
                                             "--out", "ft.csv", "--start", "n=0", "--record",
                                             "Float64_vector_output", "--stop-time", "0.1",
                                             "--step", "0.1", way(local), NULL });
                cr_assert(eq(int, r.exit_code, 0), "%s: %s", way(local), r.err);
                csv = daemon_slurp("ft.csv", NULL);
                cr_assert(eq(str, csv, "time\n0\n0.1\n"), "%s", way(local));
                free(csv);
                cr_assert(eq(int, unlink("ft.csv"), 0));
                run_result_fini(&r);
        }
        cr_assert(eq(sz, sessions(), 0));
}

/* One row of the exit code table (docs/fmuctl.md), through the daemon and with --local. */
static void exit_row(int code, const char *const args[], const char *err)
{
        const char *argv[32];
        struct run_result r;
        size_t n = 0;

        for (; args[n]; n++)
                argv[n] = args[n];
        for (int local = 0; local < 2; local++) {
                argv[n] = local ? "--local" : "--quiet";
                argv[n + 1] = NULL;
                r = fmuctl(argv);
                cr_assert(eq(int, r.exit_code, code), "%s %s: %s", args[1], way(local), r.err);
                cr_assert(strstr(r.err, err) != NULL, "%s %s: %s", args[1], way(local), r.err);
                run_result_fini(&r);
        }
}

Test(fmuctl_results, each_exit_code_is_the_same_both_ways, .init = setup, .fini = teardown)
{
        /* 1: the input is read and wrong. */
        exit_row(1, (const char *[]){ "run", FMUD_TEST_FMU_DIR "/BouncingBall.fmu", "--start",
                                      "nosuch=1", NULL }, "nosuch");
        /* 2: a command line fmuctl can check itself, before any daemon hears of it. */
        exit_row(2, (const char *[]){ "run", FMUD_EXAMPLES "/msd.ssp", "--warp", "-1", NULL },
                 "fmuctl run: --warp needs a factor >= 0 (0: as fast as possible), not '-1'\n");
        exit_row(2, (const char *[]){ "run", FMUD_EXAMPLES "/msd.ssp", "--step", "0", NULL },
                 "fmuctl run: --step needs a step > 0, not '0'\n");
        exit_row(2, (const char *[]){ "run", FMUD_EXAMPLES "/msd.ssp", "--spin-us", "-5", NULL },
                 "fmuctl run: --spin-us needs microseconds >= 0, not '-5'\n");
        /* 3: a file that cannot be read. */
        exit_row(3, (const char *[]){ "run", FMUD_EXAMPLES "/nosuch.ssp", NULL }, "nosuch.ssp");
        /* 4: the FMU's initialization fails (FMI 3.0 section 3.2.3), then one of its steps. */
        exit_row(4, (const char *[]){ "run", FMUD_TEST_FMU_DIR "/Misbehave.fmu", "--start",
                                      "fault=16", NULL }, "");
        exit_row(4, (const char *[]){ "run", FMUD_TEST_FMU_DIR "/Misbehave.fmu", "--start",
                                      "fault=12", "--start", "at=0.5", NULL }, "");
        cr_assert(eq(sz, sessions(), 0));
}

Test(fmuctl_results, a_mistyped_command_gets_the_nearest_one, .init = setup, .fini = teardown)
{
        static const char *const typo[][2] = {
                { "stauts", "status" }, { "lod", "load" }, { "unlaod", "unload" },
                { "snapshto", "snapshot" }, { "rn", "run" },
        };
        struct run_result r;
        char want[256];

        for (size_t i = 0; i < sizeof(typo) / sizeof(typo[0]); i++) {
                r = fmuctl((const char *[]){ typo[i][0], NULL });
                snprintf(want, sizeof(want), "fmuctl: unknown command '%s'; did you mean '%s'?\n"
                         "(see 'fmuctl --help')\n", typo[i][0], typo[i][1]);
                cr_assert(eq(int, r.exit_code, 2), "%s", typo[i][0]);
                cr_assert(eq(str, r.err, want));
                cr_assert(eq(str, r.out, ""));
                run_result_fini(&r);
        }
        /* Nothing near: no guess. */
        r = fmuctl((const char *[]){ "frobnicate", NULL });
        cr_assert(eq(int, r.exit_code, 2));
        cr_assert(eq(str, r.err, "fmuctl: unknown command 'frobnicate'\n(see 'fmuctl --help')\n"));
        run_result_fini(&r);
}

static struct json_object *key(struct json_object *o, const char *k)
{
        struct json_object *v = NULL;

        cr_assert(json_object_object_get_ex(o, k, &v), "no key '%s' in %s", k,
                  json_object_to_json_string(o));
        return v;
}

Test(fmuctl_results, run_json_is_one_object_with_the_same_keys_both_ways, .init = setup,
     .fini = teardown)
{
        struct json_object *o[2], *in, *res;
        struct run_result r;

        for (int local = 0; local < 2; local++) {
                r = fmuctl((const char *[]){ "run", FMUD_EXAMPLES "/msd.ssp", "--out", "msd.csv",
                                             "--json", local ? "--local" : NULL, NULL });
                cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
                o[local] = json_tokener_parse(r.out);
                cr_assert(o[local] != NULL, "not JSON: '%s'", r.out);
                cr_assert(eq(str, (char *)json_object_get_string(key(o[local], "state")),
                             "finished"));
                cr_assert(eq(int, json_object_get_int(key(o[local], "exitCode")), 0));
                cr_assert(eq(dbl, json_object_get_double(key(o[local], "time")), 10.0));
                cr_assert(eq(u64, json_object_get_uint64(key(o[local], "points")), 1000));
                in = key(o[local], "instances");
                cr_assert(eq(sz, json_object_array_length(in), 2));
                cr_assert(eq(str, (char *)json_object_get_string(
                                           key(json_object_array_get_idx(in, 0), "name")), "mass1"));
                res = key(o[local], "results");
                cr_assert(eq(str, (char *)json_object_get_string(key(res, "out")), "msd.csv"));
                cr_assert(eq(u64, json_object_get_uint64(key(res, "rows")), 101));
                cr_assert(eq(u64, json_object_get_uint64(key(res, "columns")), 5));
                run_result_fini(&r);
        }
        /* The same keys, in the same order. */
        {
                struct json_object_iterator a = json_object_iter_begin(o[0]),
                                            b = json_object_iter_begin(o[1]),
                                            ea = json_object_iter_end(o[0]);

                for (; !json_object_iter_equal(&a, &ea); json_object_iter_next(&a),
                     json_object_iter_next(&b))
                        cr_assert(eq(str, (char *)json_object_iter_peek_name(&a),
                                     (char *)json_object_iter_peek_name(&b)));
        }
        json_object_put(o[0]);
        json_object_put(o[1]);
        /* --json with the rows on standard output: one of them would spoil the other. */
        r = fmuctl((const char *[]){ "run", FMUD_EXAMPLES "/msd.ssp", "--out", "-", "--json", NULL });
        cr_assert(eq(int, r.exit_code, 2), "%s", r.err);
        cr_assert(eq(str, r.err, "fmuctl run: --json and --out - both want standard output\n"
                                 "(see 'fmuctl run --help')\n"));
        run_result_fini(&r);
}

/* The first field of each line after the header, joined with spaces. */
static char *times(const char *csv)
{
        char *out = calloc(1, strlen(csv) + 1), *p = out;
        const char *line = strchr(csv, '\n');

        cr_assert(out != NULL && line != NULL);
        for (line++; *line; line = strchr(line, '\n') + 1) {
                size_t n = strcspn(line, ",\n");

                if (p != out)
                        *p++ = ' ';
                memcpy(p, line, n);
                p += n;
        }
        return out;
}

Test(fmuctl_results, the_time_column_prints_grid_points_as_the_step_was_written, .init = setup,
     .fini = teardown)
{
        struct run_result r;
        char *csv, *t;

        for (int local = 0; local < 2; local++) {
                r = fmuctl((const char *[]){ "run", FMUD_EXAMPLES "/msd.ssp", "--out", "t.csv",
                                             "--step", "0.1", "--stop-time", "1.5",
                                             "--decimation", "1", way(local), NULL });
                cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
                csv = daemon_slurp("t.csv", NULL);
                t = times(csv);
                /* Not 0.30000000000000004, 0.7000000000000001, 1.2000000000000002... */
                cr_assert(eq(str, t, "0 0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8 0.9 1 1.1 1.2 1.3 1.4 "
                                     "1.5"), "%s", way(local));
                free(t);
                free(csv);
                run_result_fini(&r);
        }
}

Test(fmuctl_results, set_of_a_connected_input_is_refused_naming_the_connection, .init = setup,
     .fini = teardown)
{
        struct run_result r, before;

        r = fmuctl((const char *[]){ "load", FMUD_EXAMPLES "/msd.ssp", NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        run_result_fini(&r);
        before = fmuctl((const char *[]){ "get", "1", "mass2.x1", "mass1.F", NULL });
        cr_assert(eq(int, before.exit_code, 0), "%s", before.err);
        r = fmuctl((const char *[]){ "set", "1", "mass2.x1=5", NULL });
        cr_assert(eq(int, r.exit_code, 1), "%s", r.err);
        cr_assert(eq(str, r.out, ""));
        cr_assert(eq(str, r.err, "fmuctl: cannot set in session 1: 'mass2.x1' is fed by the "
                                 "connection from 'mass1.x1' (" FMUD_EXAMPLES "/msd.ssp:"
                                 "SystemStructure.ssd:46): the master sets it before every step, "
                                 "so a set would not last\n"), "%s", r.err);
        run_result_fini(&r);
        /* Each input a connection feeds, named by where it comes from; nothing applied. */
        r = fmuctl((const char *[]){ "set", "1", "mass1.F=0.5", "mass2.x1=5", NULL });
        cr_assert(eq(int, r.exit_code, 1), "%s", r.err);
        cr_assert(strstr(r.err, "'mass1.F' is fed by the connection from 'mass2.F' (") != NULL,
                  "%s", r.err);
        cr_assert(strstr(r.err, "SystemStructure.ssd:45)") != NULL, "%s", r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "get", "1", "mass2.x1", "mass1.F", NULL });
        cr_assert(eq(str, r.out, before.out));
        run_result_fini(&r);
        run_result_fini(&before);
        /* An input no connection feeds is set as before. */
        r = fmuctl((const char *[]){ "load", FMUD_TEST_FMU_DIR "/Feedthrough.fmu", NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "set", "2", "Float64_input=0.5", NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        run_result_fini(&r);
}

Test(fmuctl_results, vars_lists_every_variable_with_its_value, .init = setup, .fini = teardown)
{
        struct json_object *o, *v, *e;
        struct run_result r;
        bool seen = false;

        r = fmuctl((const char *[]){ "load", FMUD_EXAMPLES "/msd.ssp", NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "vars", "1", NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        /* Name, type, causality, unit, value, as get prints the value. */
        cr_assert(strstr(r.out, "\nmass2.kc                         Float64  parameter            "
                                "N/m      10.0\n") != NULL, "%s", r.out);
        cr_assert(strstr(r.out, "\nmass2.x1                         Float64  input                "
                                "m        ") != NULL, "%s", r.out);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "vars", "1", "--json", NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        o = json_tokener_parse(r.out);
        cr_assert(o != NULL, "%s", r.out);
        cr_assert(eq(dbl, json_object_get_double(key(o, "time")), 0.0));
        v = key(o, "vars");
        for (size_t i = 0; i < json_object_array_length(v); i++) {
                e = json_object_array_get_idx(v, i);
                if (strcmp(json_object_get_string(key(e, "name")), "mass2.kc"))
                        continue;
                cr_assert(eq(str, (char *)json_object_get_string(key(e, "type")), "Float64"));
                cr_assert(eq(str, (char *)json_object_get_string(key(e, "causality")),
                             "parameter"));
                cr_assert(eq(str, (char *)json_object_get_string(key(e, "variability")), "fixed"));
                cr_assert(eq(str, (char *)json_object_get_string(key(e, "unit")), "N/m"));
                cr_assert(eq(dbl, json_object_get_double(key(e, "value")), 10.0));
                seen = true;
        }
        cr_assert(seen, "%s", r.out);
        json_object_put(o);
        run_result_fini(&r);
        /* No such session: refused, exit 1; no session: a usage error. */
        r = fmuctl((const char *[]){ "vars", "7", NULL });
        cr_assert(eq(int, r.exit_code, 1), "%s", r.err);
        cr_assert(strncmp(r.err, "fmuctl: cannot list the variables of session 7: ", 48) == 0,
                  "%s", r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "vars", NULL });
        cr_assert(eq(int, r.exit_code, 2), "%s", r.err);
        cr_assert(eq(str, r.err, "fmuctl vars: expected SESSION\n(see 'fmuctl vars --help')\n"));
        run_result_fini(&r);
}
