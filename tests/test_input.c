/*
 * input: unconnected inputs driven from a CSV file (daemon/input_table.h,
 * daemon/input_csv.h): sampling (interpolation, hold, steps, before the
 * first and after the last row), every refusal of the reader with its
 * message, the master and the session setting the values in real
 * workers (Feedthrough copies each input to an output, so the recorded
 * outputs show what was set), and `fmuctl run --input` through a real
 * daemon and with --local.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/input_csv.h"
#include "daemon/input_table.h"
#include "daemon_fixture.h"
#include "support/run.h"
#include "support/tmpdir.h"
#include "test_master_sys.h"

/* ---- Sampling ---------------------------------------------------------------- */

/* times 0, 1, 1, 2; column 0 linear Float64, column 1 held Int32. */
static struct input_table *table4(void)
{
        static const double t[] = { 0, 1, 1, 2 }, f[] = { 0, 10, 20, 40 };
        static const int64_t i[] = { 7, 8, 9, 10 };
        struct input_table *tab = input_table_new(2, 4);

        cr_assert(tab != NULL);
        tab->cols[0] = (struct input_column){ .type = MD_FLOAT64, .linear = true };
        tab->cols[1] = (struct input_column){ .type = MD_INT32, .var = 1 };
        for (size_t r = 0; r < 4; r++) {
                tab->time[r] = t[r];
                input_table_at(tab, r, 0)->f = f[r];
                input_table_at(tab, r, 1)->i = i[r];
        }
        return tab;
}

static double sample(const struct input_table *t, size_t col, double time)
{
        return input_table_double(t, col, input_table_find(t, time), time);
}

Test(input_table, find_counts_the_rows_at_or_before_a_time)
{
        struct input_table *t = table4();

        cr_assert(input_table_find(t, -1) == 0);
        cr_assert(input_table_find(t, 0) == 1);
        cr_assert(input_table_find(t, 0.5) == 1);
        cr_assert(input_table_find(t, 1) == 3);
        cr_assert(input_table_find(t, 1.5) == 3);
        cr_assert(input_table_find(t, 2) == 4);
        cr_assert(input_table_find(t, 9) == 4);
        input_table_free(t);
}

Test(input_table, linear_interpolates_and_a_repeated_time_is_a_step)
{
        struct input_table *t = table4();

        cr_assert(sample(t, 0, 0) == 0);
        cr_assert(sample(t, 0, 0.25) == 2.5);
        cr_assert(sample(t, 0, 0.75) == 7.5);
        /* Left of the step: towards the first row at t = 1; at it: the later row. */
        cr_assert(sample(t, 0, 0.999) == 0 + (10.0 - 0) * ((0.999 - 0) / (1.0 - 0)));
        cr_assert(sample(t, 0, 1) == 20);
        cr_assert(sample(t, 0, 1.5) == 30);
        cr_assert(sample(t, 0, 2) == 40);
        input_table_free(t);
}

Test(input_table, before_the_first_and_after_the_last_row_the_end_values_hold)
{
        struct input_table *t = table4();

        cr_assert(sample(t, 0, -5) == 0);
        cr_assert(sample(t, 0, 1e9) == 40);
        cr_assert(sample(t, 1, -5) == 7);
        cr_assert(sample(t, 1, 1e9) == 10);
        input_table_free(t);
}

Test(input_table, held_columns_take_the_last_row_at_or_before_the_time)
{
        struct input_table *t = table4();
        int32_t v[3] = { 0 };

        cr_assert(sample(t, 1, 0) == 7);
        cr_assert(sample(t, 1, 0.999) == 7);
        cr_assert(sample(t, 1, 1) == 9);        /* the later of the two rows at t = 1 */
        cr_assert(sample(t, 1, 1.999) == 9);
        input_table_put(t, 1, input_table_find(t, 1.5), 1.5, v, 2);
        cr_assert(v[2] == 9 && v[0] == 0 && v[1] == 0);
        input_table_free(t);
}

Test(input_table, float32_rounds_the_interpolated_double_once)
{
        struct input_table *t = table4();
        float f[1];

        t->cols[0].type = MD_FLOAT32;
        input_table_at(t, 0, 0)->f = 0.1;
        input_table_at(t, 1, 0)->f = 0.7;
        input_table_put(t, 0, input_table_find(t, 0.3), 0.3, f, 0);
        cr_assert(f[0] == (float)(0.1 + (0.7 - 0.1) * ((0.3 - 0) / (1.0 - 0))));
        input_table_free(t);
}

/* ---- Reading and refusals ---------------------------------------------------------- */

static char *cache;
static struct scenario *fmu;            /* Feedthrough.fmu alone: bare names */

static void fmu_setup(void)
{
        struct scenario_opts o;
        struct diag_list d;

        cache = tmpdir_new("fmud-input");
        cr_assert(cache != NULL);
        diag_list_init(&d, 0);
        scenario_opts_default(&o);
        o.cache_dir = cache;
        cr_assert(scenario_load(FMUD_TEST_FMU_DIR "/Feedthrough.fmu", &o, NULL, &d, &fmu) == 0);
        diag_list_fini(&d);
}

static void fmu_teardown(void)
{
        scenario_free(fmu);
        fmu = NULL;
        tmpdir_free(cache);
}

/* Parse text for Feedthrough.fmu with limits lim (NULL: defaults); returns the result. */
static int parse_lim(const char *text, const struct input_csv_limits *lim,
                     struct input_table **ret, char **ret_msg)
{
        *ret = NULL;
        *ret_msg = NULL;
        return input_csv_parse("in.csv", text, strlen(text), fmu, lim, ret, ret_msg);
}

/* text must be refused with -EINVAL and exactly msg. */
static void refused_lim(const char *text, const struct input_csv_limits *lim, int err,
                        const char *msg)
{
        struct input_table *t;
        char *m;
        int r = parse_lim(text, lim, &t, &m);

        cr_assert(r == err, "'%s': %d, expected %d", text, r, err);
        cr_assert(t == NULL);
        cr_assert(m != NULL && !strcmp(m, msg), "'%s':\n got      '%s'\n expected '%s'", text,
                  m ? m : "(null)", msg);
        free(m);
}

static void refused(const char *text, const char *msg)
{
        refused_lim(text, NULL, -EINVAL, msg);
}

Test(input_csv, refuses_names_that_are_not_unconnected_inputs, .init = fmu_setup,
     .fini = fmu_teardown)
{
        refused("time,nope\n0,1\n", "in.csv:1:6: 'nope' is not a variable of the scenario");
        refused("time,Float64_input,Float64_output\n0,1,2\n",
                "in.csv:1:20: 'Float64_output' is not an input (its causality is output)");
        refused("time,length\n0,1\n",
                "in.csv:1:6: 'length' is not an input (its causality is parameter)");
        refused("time,Binary_input\n0,ca\n", "in.csv:1:6: 'Binary_input' is a Binary input: "
                "Binary inputs are not driven from a file");
        refused("time,Float64_input,Float64_input\n0,1,2\n",
                "in.csv:1:20: 'Float64_input': a second column for the same input");
        refused("t,Float64_input\n0,1\n", "in.csv:1:1: the first column must be 'time', not 't'");
        refused("time\n0\n", "in.csv:1:1: the header names no input after 'time'");
        refused("", "in.csv: empty: expected a header 'time,<input>...'");
        refused("time,Float64_input\n", "in.csv: no rows after the header");
}

Test(input_csv, refuses_array_columns_that_are_not_one_per_element, .init = fmu_setup,
     .fini = fmu_teardown)
{
        refused("time,Float64_vector_input\n0,1\n", "in.csv:1:6: 'Float64_vector_input' is an "
                "array input: give one column per element ('Float64_vector_input[1]', ...)");
        /* A name with a comma is quoted, as the results file writes it. */
        refused("time,\"Float64_matrix_input[1,1]\",\"Float64_matrix_input[3,2]\"\n0,1,2\n",
                "in.csv:1:6: 'Float64_matrix_input[1,1]': the array input 'Float64_matrix_input' "
                "has 6 elements, the header gives 2: every element needs a column");
        refused("time,\"Float64_matrix_input[4,1]\"\n0,1\n", "in.csv:1:6: "
                "'Float64_matrix_input[4,1]': an index is out of the array's dimensions");
        refused("time,Float64_matrix_input[1]\n0,1\n", "in.csv:1:6: "
                "'Float64_matrix_input[1]': expected one 1-based index per dimension");
        refused("time,Float64_input[1]\n0,1\n",
                "in.csv:1:6: 'Float64_input[1]': 'Float64_input' is not an array");
}

Test(input_csv, refuses_values_that_do_not_parse_for_the_type, .init = fmu_setup,
     .fini = fmu_teardown)
{
        refused("time,Int8_input\n0,1\n1,300\n",
                "in.csv:3:3: 'Int8_input': '300' is out of the range of Int8");
        refused("time,UInt8_input\n0,-1\n", "in.csv:2:3: 'UInt8_input': '-1' is out of the "
                "range of UInt8");
        refused("time,Int32_input\n0,1.5\n",
                "in.csv:2:3: 'Int32_input': '1.5' is not a whole number (Int32)");
        refused("time,UInt64_input\n0,18446744073709551616\n", "in.csv:2:3: 'UInt64_input': "
                "'18446744073709551616' is out of the range of UInt64");
        /* strtoull() skips white space other than blanks before wrapping a sign around. */
        refused("time,UInt64_input\n0,\v-1\n", "in.csv:2:3: 'UInt64_input': '\v-1' is out of "
                "the range of UInt64");
        refused("time,Float64_input\n0,abc\n",
                "in.csv:2:3: 'Float64_input': 'abc' is not a finite Float64");
        refused("time,Float64_input\n0,nan\n",
                "in.csv:2:3: 'Float64_input': 'nan' is not a finite Float64");
        refused("time,Float32_input\n0,1e39\n",
                "in.csv:2:3: 'Float32_input': '1e39' is out of the range of Float32");
        refused("time,Boolean_input\n0,yes\n", "in.csv:2:3: 'Boolean_input': 'yes' is not a "
                "Boolean (true, false, 1 or 0)");
        refused("time,Enumeration_input\n0,red\n",
                "in.csv:2:3: 'Enumeration_input': 'red' is not a whole number (Int64)");
        refused("time,Int16_input\n0,\n", "in.csv:2:3: 'Int16_input': an empty value");
}

Test(input_csv, refuses_bad_times_and_bad_records, .init = fmu_setup, .fini = fmu_teardown)
{
        refused("time,Float64_input\n1,1\n0.5,2\n", "in.csv:3:1: time 0.5 is before the "
                "previous row's 1: times must not decrease");
        refused("time,Float64_input\nnan,1\n", "in.csv:2:1: time 'nan' is not a finite number");
        refused("time,Float64_input\ninf,1\n", "in.csv:2:1: time 'inf' is not a finite number");
        refused("time,Float64_input\n,1\n", "in.csv:2:1: time '' is not a finite number");
        refused("time,Float64_input\n0,1,2\n", "in.csv:2:5: more fields than the header's 2");
        refused("time,Float64_input,Int8_input\n0,1\n", "in.csv:2:3: 2 fields, the header has 3");
        refused("time,String_input\n0,\"open\n", "in.csv:2:3: a quoted field is not closed");
        refused("time,String_input\n0,\"a\"b\n",
                "in.csv:2:3: text after the closing quote of a field");
        refused("time,String_input\n0,a\"b\n",
                "in.csv:2:4: a quote inside a field that does not start with one");
        refused("time,Float64_input\n0,1\n\n1,2\n", "in.csv:3:1: an empty line");
        refused("time,Float64_input\n0,1\r2,3\n",
                "in.csv:2:4: a carriage return not followed by a line feed");
}

Test(input_csv, refuses_nul_bytes, .init = fmu_setup, .fini = fmu_teardown)
{
        static const char text[] = "time,String_input\n0,a\0b\n";
        struct input_table *t = NULL;
        char *m = NULL;

        cr_assert(input_csv_parse("in.csv", text, sizeof(text) - 1, fmu, NULL, &t, &m) == -EINVAL);
        cr_assert(m && !strcmp(m, "in.csv:2:4: a NUL byte"), "%s", m ? m : "(null)");
        free(m);
}

Test(input_csv, refuses_files_beyond_the_limits, .init = fmu_setup, .fini = fmu_teardown)
{
        struct input_csv_limits lim;

        input_csv_limits_default(&lim);
        cr_assert(lim.max_bytes == (size_t)64 << 20 && lim.max_rows == 10000000 &&
                  lim.max_columns == 65536);
        lim.max_columns = 2;
        refused_lim("time,Float64_input,Int8_input,Int16_input\n0,1,2,3\n", &lim, -EINVAL,
                    "in.csv:1:31: more than 2 input columns");
        input_csv_limits_default(&lim);
        lim.max_rows = 2;
        refused_lim("time,Float64_input\n0,1\n1,2\n2,3\n", &lim, -EINVAL,
                    "in.csv:4:1: more than 2 rows");
        input_csv_limits_default(&lim);
        lim.max_values = 5;
        refused_lim("time,Float64_input,Int8_input\n0,1,2\n1,2,3\n2,3,4\n", &lim, -EINVAL,
                    "in.csv:4:1: more than 5 values");
        input_csv_limits_default(&lim);
        lim.max_bytes = 10;
        refused_lim("time,Float64_input\n0,1\n", &lim, -EFBIG, "in.csv: larger than 10 bytes");
}

Test(input_csv, reads_quoted_fields_crlf_a_bom_and_bare_names, .init = fmu_setup,
     .fini = fmu_teardown)
{
        const char *text = "\xEF\xBB\xBF" "time,\"String_input\",Float64_input,"
                           "\"Float64_matrix_input[3,2]\",\"Float64_matrix_input[1,1]\","
                           "\"Float64_matrix_input[1,2]\",\"Float64_matrix_input[2,1]\","
                           "\"Float64_matrix_input[2,2]\",\"Float64_matrix_input[3,1]\"\r\n"
                           "0,\"a,\"\"b\"\"\nc\", 1.5 ,6,1,2,3,4,5\r\n"
                           "2,,-0.25,0,0,0,0,0,0\r\n";
        struct input_table *t;
        char *m;

        cr_assert(parse_lim(text, NULL, &t, &m) == 0, "%s", m ? m : "");
        cr_assert(t->n_rows == 2 && t->n_cols == 8);
        cr_assert(!strcmp(input_table_at(t, 0, 0)->s, "a,\"b\"\nc"));
        cr_assert(!strcmp(input_table_at(t, 1, 0)->s, ""));
        cr_assert(!t->cols[0].linear && t->cols[1].linear);
        cr_assert(input_table_at(t, 0, 1)->f == 1.5 && input_table_at(t, 1, 1)->f == -0.25);
        cr_assert(t->cols[2].element == 5 && t->cols[3].element == 0 && t->cols[7].element == 4);
        cr_assert(t->time[0] == 0 && t->time[1] == 2);
        input_table_free(t);
}

Test(input_csv, reports_a_file_it_cannot_read, .init = fmu_setup, .fini = fmu_teardown)
{
        struct input_table *t = NULL;
        char *m = NULL, *path = NULL;

        cr_assert(asprintf(&path, "%s/none.csv", cache) > 0);
        cr_assert(input_csv_read(path, fmu, NULL, &t, &m) == -ENOENT);
        cr_assert(m && strstr(m, "none.csv") && strstr(m, "No such file"), "%s", m);
        free(m);
        m = NULL;
        cr_assert(input_csv_read(cache, fmu, NULL, &t, &m) == -EINVAL);
        cr_assert(m && strstr(m, "not a regular file"), "%s", m);
        free(m);
        free(path);
}

Test(input_csv, refuses_a_connected_input)
{
        struct msys x;
        struct input_table *t = NULL;
        char *m = NULL;
        static const char text[] = "time,B.Float64_input,A.Float64_input\n0,1,2\n";

        msys_load(&x, &(struct msys_spec){
                .elements = MSYS_COMP("A", "Feedthrough") MSYS_COMP("B", "Feedthrough"),
                .connections = MSYS_CONN("A", "Float64_output", "B", "Float64_input"),
                .stop = 1,
        });
        cr_assert(input_csv_parse("in.csv", text, sizeof(text) - 1, x.sc, NULL, &t, &m) == -EINVAL);
        cr_assert(m && !strncmp(m, "in.csv:1:6: 'B.Float64_input' is connected (", 44) &&
                  strstr(m, "): only unconnected inputs are driven from a file"), "%s", m);
        free(m);
        msys_fini(&x);
}

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

        r = run_input(outside, out, false);
        cr_assert(r.exit_code != 0 && strstr(r.err, "is not below an allowed directory"),
                  "exit %d: %s", r.exit_code, r.err);
        run_result_fini(&r);

        free(in);
        free(out);
        free(outside);
        daemon_stop(&d);
        tmpdir_free(outside_dir);
}
