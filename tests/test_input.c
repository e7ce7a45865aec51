/*
 * input: unconnected inputs driven from a CSV file, end to end: the
 * master and the session setting the values in real workers (Feedthrough
 * copies each input to an output, so the recorded outputs show what was
 * set), and `fmuctl run --input` through a real daemon and with --local.
 * The table is tested in test_input_table.c, the reader in
 * test_input_csv.c.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/master/input_csv.h"
#include "engine/master/input_table.h"
#include "daemon_fixture.h"
#include "support/run.h"
#include "support/tmpdir.h"
#include "test_master_sys.h"

/* ---- The master and the session, in real workers -------------------------------------- */

/* The file of the master tests: a step at 0.8, rows from 0.3 to 1.4, a run from 0 to 2. */
static const char master_csv[] =
        "time,F.Float64_input,F.Float32_input,F.Int32_input,F.Boolean_input,F.UInt64_input,"
        "F.Enumeration_input,F.Float64_vector_input[3],F.Float64_vector_input[1],"
        "F.Float64_vector_input[4],F.Float64_vector_input[2]\n"
        "0.3,1.5,0.1,-3,true,18446744073709551615,3,30,10,40,20\n"
        "0.8,-2.25,0.7,4,false,5,1,-3,-1,-4,-2\n"
        "0.8,7,2.5,5,1,6,2,0.5,0.25,0.75,0.375\n"
        "1.4,0.125,-1,6,0,7,3,3,1,4,2\n";

#define NR 4
static const double T[NR] = { 0.3, 0.8, 0.8, 1.4 };

/* The last row at or before t (the first before it). */
static size_t row_at(double t)
{
        size_t i = 0;

        for (size_t j = 0; j < NR; j++)
                if (T[j] <= t)
                        i = j;
        return i;
}

static double lin(const double v[NR], double t)
{
        size_t i = row_at(t);

        if (t < T[0] || i == NR - 1)
                return v[i];
        return v[i] + (v[i + 1] - v[i]) * ((t - T[i]) / (T[i + 1] - T[i]));
}

static double held(const double v[NR], double t)
{
        return v[row_at(t)];
}

struct expect_col {
        const char *name;
        double v[NR];
        bool linear, f32;
};

static const struct expect_col expect_cols[] = {
        { "F.Float64_output", { 1.5, -2.25, 7, 0.125 }, true, false },
        { "F.Float32_output", { 0.1, 0.7, 2.5, -1 }, true, true },
        { "F.Int32_output", { -3, 4, 5, 6 }, false, false },
        { "F.Boolean_output", { 1, 0, 1, 0 }, false, false },
        { "F.UInt64_output", { 18446744073709551615.0, 5, 6, 7 }, false, false },
        { "F.Enumeration_output", { 3, 1, 2, 3 }, false, false },
        { "F.Float64_vector_output[1]", { 10, -1, 0.25, 1 }, true, false },
        { "F.Float64_vector_output[2]", { 20, -2, 0.375, 2 }, true, false },
        { "F.Float64_vector_output[3]", { 30, -3, 0.5, 3 }, true, false },
        { "F.Float64_vector_output[4]", { 40, -4, 0.75, 4 }, true, false },
};

static double expected(const struct expect_col *c, double t)
{
        double x = c->linear ? lin(c->v, t) : held(c->v, t);

        return c->f32 ? (double)(float)x : x;
}

static struct input_table *master_table(struct msys *x)
{
        struct input_table *t = NULL;
        char *path = NULL, *m = NULL;

        cr_assert(tmpdir_write(x->dir, "in.csv", master_csv, sizeof(master_csv) - 1) == 0);
        cr_assert(asprintf(&path, "%s/in.csv", x->dir) > 0);
        cr_assert(input_csv_read(path, x->sc, NULL, &t, &m) == 0, "%s", m ? m : "");
        free(path);
        return t;
}

static void master_load(struct msys *x)
{
        msys_load(x, &(struct msys_spec){
                .elements = MSYS_COMP("F", "Feedthrough"),
                .stop = 2,
                .attrs = "stepSize=\"0.125\"",
                .settings = MSYS_RECORD("F.Float64_output") MSYS_RECORD("F.Float32_output")
                            MSYS_RECORD("F.Int32_output") MSYS_RECORD("F.Boolean_output")
                            MSYS_RECORD("F.UInt64_output") MSYS_RECORD("F.Enumeration_output")
                            MSYS_RECORD("F.Float64_vector_output"),
        });
}

/*
 * Feedthrough's outputs after a step are the inputs set before it: the
 * row at t_n shows the inputs at t_(n-1), the first row those set in
 * Initialization Mode at the start time.
 */
Test(input, inputs_follow_the_file_at_every_point_and_in_initialization)
{
        struct input_table *t;
        struct msys x;

        master_load(&x);
        t = master_table(&x);
        x.so.inputs = t;
        x.mo.inputs = t;
        msys_start(&x);
        cr_assert(master_run(x.m) == MASTER_FINISHED, "%s", master_message(x.m));
        cr_assert(x.n_rows == 17, "%zu rows", x.n_rows);
        for (size_t n = 0; n < x.n_rows; n++) {
                double at = n ? (double)(n - 1) * 0.125 : 0;

                cr_assert(x.rows[n].t == (double)n * 0.125 && x.rows[n].flags == 0);
                for (size_t c = 0; c < sizeof(expect_cols) / sizeof(*expect_cols); c++) {
                        const struct expect_col *e = &expect_cols[c];
                        double got = x.rows[n].v[msys_col(&x, e->name)];

                        cr_assert(got == expected(e, at), "t = %g: %s = %.17g, expected %.17g",
                                  x.rows[n].t, e->name, got, expected(e, at));
                }
        }
        msys_fini(&x);
        input_table_free(t);
}

Test(input, inputs_without_a_file_keep_their_start_values)
{
        struct msys x;

        master_load(&x);
        msys_start(&x);
        cr_assert(master_step(x.m, 2) >= 0, "%s", master_message(x.m));
        for (size_t n = 0; n < x.n_rows; n++)
                cr_assert(x.rows[n].v[msys_col(&x, "F.Float64_output")] == 2.5);
        msys_fini(&x);
}

/* ---- fmuctl run --input, through the daemon and --local ------------------------------ */

static const char e2e_csv[] =
        "time,Float64_input,Int32_input,String_input\n"
        "0.25,1,10,\"a,b\"\n"
        "0.5,3,20,\"say \"\"hi\"\"\"\n"
        "0.75,3,25,mid\n"
        "0.75,5,30,plain\n";

/* Row t_n: the inputs at t_(n-1) (at the start time for the first row). */
static const char e2e_out[] =
        "time,Float64_output,Int32_output,String_output\n"
        "0,1,10,\"a,b\"\n"
        "0.25,1,10,\"a,b\"\n"
        "0.5,1,10,\"a,b\"\n"
        "0.75,3,20,\"say \"\"hi\"\"\"\n"
        "1,5,30,plain\n"
        "1.25,5,30,plain\n";

static struct run_result fmuctl(const char *const args[])
{
        char *argv[32] = { (char *)FMUD_FMUCTL };
        struct run_result r = { 0 };
        size_t n = 1;

        for (; args[n - 1] && n < 31; n++)
                argv[n] = (char *)args[n - 1];
        argv[n] = NULL;
        cr_assert(run_capture(argv, &r) == 0);
        return r;
}

static struct run_result run_input(const char *input, const char *out, bool local)
{
        return fmuctl((const char *[]){ "run", FMUD_TEST_FMU_DIR "/Feedthrough.fmu", "--input",
                                        input, "--out", out, "--step", "0.25", "--stop-time",
                                        "1.25", "--record", "Float64_output", "--record",
                                        "Int32_output", "--record", "String_output", "-q",
                                        local ? "--local" : NULL, NULL });
}

Test(input, fmuctl_run_input_through_the_daemon_and_local_write_the_same_results)
{
        struct fmud_daemon d;
        struct run_result r;
        char *in, *out, *out_local, *csv, *local_cache = tmpdir_new("fmud-input-cache");
        size_t len;

        cr_assert(local_cache != NULL);
        daemon_start(&d, NULL);
        cr_assert(setenv("FMUD_ENDPOINT", d.endpoint, 1) == 0);
        cr_assert(setenv("FMUD_WORKER", FMUD_WORKER, 1) == 0);
        cr_assert(setenv("FMUD_CACHE_DIR", local_cache, 1) == 0);
        cr_assert(tmpdir_write(d.dir, "in.csv", e2e_csv, sizeof(e2e_csv) - 1) == 0);
        in = daemon_path(&d, "in.csv");
        out = daemon_path(&d, "out.csv");
        out_local = daemon_path(&d, "out_local.csv");

        r = run_input(in, out, false);
        cr_assert(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
        run_result_fini(&r);
        csv = daemon_slurp(out, &len);
        cr_assert(!strcmp(csv, e2e_out), "through the daemon:\n%s", csv);
        free(csv);

        r = run_input(in, out_local, true);
        cr_assert(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
        run_result_fini(&r);
        csv = daemon_slurp(out_local, &len);
        cr_assert(!strcmp(csv, e2e_out), "--local:\n%s", csv);
        free(csv);

        free(in);
        free(out);
        free(out_local);
        daemon_stop(&d);
        tmpdir_free(local_cache);
}

Test(input, fmuctl_run_refuses_a_bad_input_file_with_its_position)
{
        static const char bad[] = "time,Float64_input,Int32_input\n0,1,2\n1,2,x\n";
        char *in, *out, *outside_dir = tmpdir_new("fmud-input-outside"), *outside, *expect;
        struct fmud_daemon d;
        struct run_result r;

        cr_assert(outside_dir != NULL);
        daemon_start(&d, NULL);
        cr_assert(setenv("FMUD_ENDPOINT", d.endpoint, 1) == 0);
        cr_assert(tmpdir_write(d.dir, "bad.csv", bad, sizeof(bad) - 1) == 0);
        cr_assert(tmpdir_write(outside_dir, "in.csv", e2e_csv, sizeof(e2e_csv) - 1) == 0);
        in = daemon_path(&d, "bad.csv");
        out = daemon_path(&d, "out.csv");
        cr_assert(asprintf(&outside, "%s/in.csv", outside_dir) > 0);

        r = run_input(in, out, false);
        cr_assert(asprintf(&expect, "%s:3:5: 'Int32_input': 'x' is not a whole number (Int32)",
                           in) > 0);
        cr_assert(r.exit_code != 0 && strstr(r.err, expect), "exit %d: %s", r.exit_code, r.err);
        run_result_fini(&r);
        free(expect);

        /* Without --no-upload fmuctl would send it (test_daemon_upload.c). */
        r = fmuctl((const char *[]){ "run", FMUD_TEST_FMU_DIR "/Feedthrough.fmu", "--input",
                                     outside, "--out", out, "--no-upload", "-q", NULL });
        cr_assert(r.exit_code != 0 && strstr(r.err, "is not below an allowed directory"),
                  "exit %d: %s", r.exit_code, r.err);
        run_result_fini(&r);

        free(in);
        free(out);
        free(outside);
        daemon_stop(&d);
        tmpdir_free(outside_dir);
}
