/*
 * input_csv: the CSV reader of unconnected inputs (engine/master/input_csv.h):
 * every refusal with its message (also of an array sized 0), quoted
 * fields, CRLF, a BOM and bare names, and a file it cannot read.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/master/input_csv.h"
#include "engine/master/input_table.h"
#include "support/tmpdir.h"
#include "test_master_sys.h"

static char *cache;
static struct scenario *fmu;            /* Feedthrough.fmu alone: bare names */

/* Feedthrough.fmu into fmu, with overrides ov (may be NULL). */
static void load_feedthrough(const struct scenario_overrides *ov)
{
        struct scenario_opts o;
        struct diag_list d;

        cache = tmpdir_new("fmud-input");
        cr_assert(cache != NULL);
        diag_list_init(&d, 0);
        scenario_opts_default(&o);
        o.cache_dir = cache;
        cr_assert(scenario_load(FMUD_TEST_FMU_DIR "/Feedthrough.fmu", &o, ov, &d, &fmu) == 0);
        diag_list_fini(&d);
}

static void fmu_setup(void)
{
        load_feedthrough(NULL);
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

Test(input_csv, refuses_an_array_with_no_elements, .fini = fmu_teardown)
{
        /* n = 0, which n's min allows (FMI 3.0 section 2.4.7.2): the vectors have no element. */
        struct scenario_assign n0 = { "n", "0" };

        load_feedthrough(&(struct scenario_overrides){ .n_starts = 1, .starts = &n0 });
        refused("time,Float64_vector_input[1]\n0,1\n", "in.csv:1:6: 'Float64_vector_input[1]' "
                "has no elements (its structural parameters size it 0): no column can drive it");
        refused("time,Float64_vector_input\n0,1\n", "in.csv:1:6: 'Float64_vector_input' "
                "has no elements (its structural parameters size it 0): no column can drive it");
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

Test(input_csv, refuses_a_rig_input)
{
        struct msys x;
        struct input_table *t = NULL;
        char *m = NULL;
        static const char text[] = "time,A.Int32_input,A.Float64_input\n0,1,2\n";

        msys_load(&x, &(struct msys_spec){
                .elements = MSYS_COMP("A", "Feedthrough"),
                .stop = 1,
                .attrs = "rigInputs=\"A.Float64_input\"",
        });
        cr_assert(input_csv_parse("in.csv", text, sizeof(text) - 1, x.sc, NULL, &t, &m) == -EINVAL);
        cr_assert(m && !strcmp(m, "in.csv:1:20: 'A.Float64_input' is a rig input: a rig writes "
                               "it, not a file"), "%s", m);
        free(m);
        msys_fini(&x);
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
