/*
 * daemon: values in and out. Set then get round-trips every FMI 3.0 type
 * (Feedthrough: scalars, a matrix, a structural-length vector, String and
 * Binary), and subscribed samples carry the names first and exactly the
 * values written to the results file.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_fixture.h"

static struct fmud_daemon d;
static struct fmud *c;

static void setup(void)
{
        daemon_start(&d, NULL);
        c = daemon_connect(&d);
}

static void teardown(void)
{
        fmud_close(c);
        c = NULL;
        daemon_stop(&d);
}

/* ---- Every type ------------------------------------------------------------------- */

#define PV_F(x) ((struct pv){ .type = PV_FLOAT, .f = (x) })
#define PV_I(x) ((struct pv){ .type = PV_INT, .i = (x) })
#define PV_U(x) ((struct pv){ .type = PV_UINT, .u = (x) })

static const char bin_value[] = { 0x00, (char)0xff, 0x7f, 0x00, (char)0x80 };
static const char str_value[] = "gr\xc3\xbc\xc3\x9f" "e \xe2\x9c\x93";  /* UTF-8 */

static struct pv matrix_items[6], vector_items[4];

/* The values to set, by input name; the output of the same type must echo them. */
static size_t values(struct proto_named_value *v, struct pv *p)
{
        static const char *const names[] = {
                "Float32_input", "Float64_input", "Int8_input", "UInt8_input", "Int16_input",
                "UInt16_input", "Int32_input", "UInt32_input", "Int64_input", "UInt64_input",
                "Boolean_input", "String_input", "Binary_input", "Enumeration_input",
                "Float64_matrix_input", "Float64_vector_input",
        };
        size_t n = sizeof(names) / sizeof(names[0]);

        p[0] = PV_F((double)0.1f);              /* exactly representable in Float32 */
        p[1] = PV_F(-0.0);
        p[2] = PV_I(INT8_MIN);
        p[3] = PV_U(UINT8_MAX);
        p[4] = PV_I(INT16_MIN);
        p[5] = PV_U(UINT16_MAX);
        p[6] = PV_I(INT32_MIN);
        p[7] = PV_U(UINT32_MAX);
        p[8] = PV_I(INT64_MIN);
        p[9] = PV_U(UINT64_MAX);
        p[10] = (struct pv){ .type = PV_BOOL, .b = false };
        p[11] = (struct pv){ .type = PV_STR, .s = { str_value, sizeof(str_value) - 1 } };
        p[12] = (struct pv){ .type = PV_BIN, .s = { bin_value, sizeof(bin_value) } };
        p[13] = PV_I(3);
        for (int i = 0; i < 6; i++)
                matrix_items[i] = PV_F(1e300 * (i % 2 ? -1 : 1) / (i + 1));
        p[14] = (struct pv){ .type = PV_ARRAY, .a = { matrix_items, 6 } };
        for (int i = 0; i < 4; i++)
                vector_items[i] = PV_F(5e-324 * (i + 1));      /* subnormals */
        p[15] = (struct pv){ .type = PV_ARRAY, .a = { vector_items, 4 } };
        for (size_t i = 0; i < n; i++)
                v[i] = (struct proto_named_value){ daemon_str(names[i]), &p[i] };
        return n;
}

/* Equal as values: integers by value whatever their msgpack family, floats bit for bit. */
static bool same(const struct pv *a, const struct pv *b)
{
        int64_t ia, ib;

        if (a->type == PV_FLOAT || b->type == PV_FLOAT)
                return a->type == b->type && memcmp(&a->f, &b->f, sizeof(double)) == 0;
        if ((a->type == PV_INT || a->type == PV_UINT) && (b->type == PV_INT || b->type == PV_UINT)) {
                if (a->type == PV_UINT && b->type == PV_UINT)
                        return a->u == b->u;
                return pv_i64(a, &ia) == 0 && pv_i64(b, &ib) == 0 && ia == ib;
        }
        if (a->type != b->type)
                return false;
        switch (a->type) {
        case PV_BOOL:
                return a->b == b->b;
        case PV_STR:
        case PV_BIN:
                return a->s.len == b->s.len && memcmp(a->s.ptr, b->s.ptr, a->s.len) == 0;
        case PV_ARRAY:
                if (a->a.n != b->a.n)
                        return false;
                for (uint32_t i = 0; i < a->a.n; i++)
                        if (!same(&a->a.items[i], &b->a.items[i]))
                                return false;
                return true;
        default:
                return false;
        }
}

static void check_all(const struct proto_target *t, const struct proto_named_value *v, size_t n,
                      bool outputs)
{
        const char *names[16];
        char bufs[16][64];
        const struct pv *const *got;

        for (size_t i = 0; i < n; i++) {
                fmud_str(v[i].name, bufs[i], sizeof(bufs[i]));
                if (outputs)    /* X_input -> X_output */
                        strcpy(strstr(bufs[i], "_input"), "_output");
                names[i] = bufs[i];
        }
        cr_assert(fmud_get(c, t, names, n, &got) == 0, "%s", fmud_errmsg(c));
        for (size_t i = 0; i < n; i++)
                cr_assert(same(v[i].value, got[i]), "%s: type %d does not round-trip (got type %d)",
                          names[i], v[i].value->type, got[i]->type);
}

Test(daemon_values, set_then_get_round_trips_every_type, .init = setup, .fini = teardown)
{
        struct proto_load a = { .path = daemon_str(FMUD_TEST_FMU_DIR "/Feedthrough.fmu") };
        struct proto_target t = { daemon_load(c, &a, NULL), 0 };
        struct proto_named_value v[16];
        struct pv p[16];
        size_t n = values(v, p);

        cr_assert(fmud_set(c, &t, v, n) == 0, "%s", fmud_errmsg(c));
        /* The FMU computes its outputs in the next step: they echo every input. */
        cr_assert(fmud_step(c, &t, 1, NULL) == 0, "%s", fmud_errmsg(c));
        check_all(&t, v, n, false);
        check_all(&t, v, n, true);
}

/* host_values.c: "after a set of an input, get of that input shows the new value at once". */
Test(daemon_values, get_right_after_set_shows_the_new_value, .init = setup, .fini = teardown)
{
        struct proto_load a = { .path = daemon_str(FMUD_TEST_FMU_DIR "/Feedthrough.fmu") };
        struct proto_target t = { daemon_load(c, &a, NULL), 0 };
        struct proto_named_value v[16];
        struct pv p[16];
        size_t n = values(v, p);

        /* In Step Mode, after a step, as a remote master does between two steps. */
        cr_assert(fmud_step(c, &t, 1, NULL) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_set(c, &t, v, n) == 0, "%s", fmud_errmsg(c));
        check_all(&t, v, n, false);
}

/* A load's start of a structural parameter sizes the arrays that get and set take. */
Test(daemon_values, a_structural_start_sizes_the_arrays_got_and_set, .init = setup,
     .fini = teardown)
{
        struct proto_assign starts[] = { { daemon_str("n"), daemon_str("6") } };
        struct proto_load a = { .path = daemon_str(FMUD_TEST_FMU_DIR "/Feedthrough.fmu"),
                                .n_starts = 1, .starts = starts };
        struct proto_target t = { daemon_load(c, &a, NULL), 0 };
        const char *names[] = { "Float64_vector_output", "n" };
        struct pv items[6], arr = { .type = PV_ARRAY, .a = { items, 6 } };
        struct proto_named_value v = { daemon_str("Float64_vector_input"), &arr };
        const struct pv *const *got;

        for (int i = 0; i < 6; i++)
                items[i] = PV_F(10.0 * (i + 1));
        cr_assert(fmud_set(c, &t, &v, 1) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_step(c, &t, 1, NULL) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_get(c, &t, names, 2, &got) == 0, "%s", fmud_errmsg(c));
        cr_assert(eq(int, got[0]->type, PV_ARRAY));
        cr_assert(eq(u32, got[0]->a.n, 6));
        for (int i = 0; i < 6; i++)
                cr_assert(eq(dbl, got[0]->a.items[i].f, 10.0 * (i + 1)));
        cr_assert(eq(u64, got[1]->u, 6));
        /* Four values, as the description's size, are refused: the vector has six. */
        arr.a.n = 4;
        cr_assert(fmud_set(c, &t, &v, 1) < 0);
        cr_assert(strstr(fmud_errmsg(c), "is an array of 6 Float64 values") != NULL, "%s",
                  fmud_errmsg(c));
}

/* ---- Samples ---------------------------------------------------------------------- */

struct csv {
        char *text;
        size_t n_cols, n_rows;
        char **header;          /* n_cols, pointing into text */
        double *cells;          /* n_rows * n_cols */
};

static void csv_read(const char *path, struct csv *ret)
{
        char *line, *save = NULL;

        *ret = (struct csv){ .text = daemon_slurp(path, NULL) };
        for (char *p = ret->text; *p && *p != '\n'; p++)
                ret->n_cols += *p == ',';
        ret->n_cols++;
        ret->header = calloc(ret->n_cols, sizeof(char *));
        ret->cells = calloc(2000 * ret->n_cols, sizeof(double));
        cr_assert(ret->header && ret->cells);
        line = strtok_r(ret->text, "\n", &save);
        for (size_t i = 0; i < ret->n_cols; i++) {
                ret->header[i] = line;
                line = strchr(line, ',');
                if (line)
                        *line++ = '\0';
        }
        while ((line = strtok_r(NULL, "\n", &save)) != NULL && ret->n_rows < 2000) {
                char *end = line;

                for (size_t i = 0; i < ret->n_cols; i++) {
                        ret->cells[ret->n_rows * ret->n_cols + i] = strtod(end, &end);
                        end += *end == ',';
                }
                ret->n_rows++;
        }
}

static void csv_fini(struct csv *x)
{
        free(x->text);
        free(x->header);
        free(x->cells);
}

/* The row whose time equals time exactly, or -1. */
/*
 * The row of time: the file writes a grid point as the step was written
 * (0.7 for 7 * 0.1, numfmt_grid()), which reads back within a few units in
 * the last place of the double a sample carries.
 */
static long csv_row(const struct csv *x, double time)
{
        double ulp = nextafter(fabs(time), INFINITY) - fabs(time);

        for (size_t r = 0; r < x->n_rows; r++)
                if (fabs(x->cells[r * x->n_cols] - time) <= 4 * ulp)
                        return (long)r;
        return -1;
}

#define MAX_SAMPLES 1200

struct sample {
        double time;
        uint64_t point;
        double v[8];
};

Test(daemon_values, samples_carry_names_first_and_the_recorded_values, .init = setup,
     .fini = teardown)
{
        char *out = daemon_path(&d, "msd.csv"), topic[128], names[8][64];
        struct proto_load a = { .path = daemon_str(FMUD_EXAMPLES "/msd.ssp"),
                                .out = daemon_str(out) };
        struct proto_target t = { daemon_load(c, &a, NULL), 0 };
        static struct sample got[MAX_SAMPLES];
        size_t n_got = 0, n_names = 0, matched = 0;
        struct fmud_msg m;
        struct csv x;

        cr_assert(fmud_subscribe(c, &t, NULL, 0, 1, topic, sizeof(topic)) == 0, "%s",
                  fmud_errmsg(c));
        /*
         * A SUB socket joins late: step point by point until the first
         * sample comes through, then let the session run to its end.
         */
        for (int steps = 0;;) {
                int r;

                if (!n_got) {
                        cr_assert(steps++ < 200, "no sample within 200 steps");
                        cr_assert(fmud_step(c, &t, 1, NULL) == 0, "%s", fmud_errmsg(c));
                        r = fmud_next(c, 20, &m);
                        if (r == -EAGAIN)
                                continue;
                } else {
                        r = fmud_next(c, 60000, &m);
                }
                cr_assert(r == 0, "no sample: %d", r);
                if (m.kind != FMUD_MSG_SAMPLE)
                        continue;
                cr_assert(strcmp(m.topic, topic) == 0, "%s", m.topic);
                if (!n_got) {
                        cr_assert(m.sample.names != NULL, "the first sample carries the names");
                        n_names = m.sample.n;
                        cr_assert(n_names > 0 && n_names <= 8, "%zu names", n_names);
                        for (size_t k = 0; k < n_names; k++)
                                fmud_str(m.sample.names[k], names[k], sizeof(names[k]));
                }
                cr_assert(m.sample.session == t.session);
                cr_assert(m.sample.n == n_names && m.sample.values->type == PV_ARRAY);
                cr_assert(n_got < MAX_SAMPLES);
                got[n_got].time = m.sample.time;
                got[n_got].point = m.sample.point;
                for (size_t k = 0; k < n_names; k++)
                        cr_assert(pv_f64(&m.sample.values->a.items[k], &got[n_got].v[k]) == 0);
                if (++n_got == 1)
                        cr_assert(fmud_resume(c, &t, NULL) == 0,
                                  "%s", fmud_errmsg(c));
                if (m.sample.time == 10.0)
                        break;
        }
        daemon_wait_state(c, t.session, PROTO_STATE_FINISHED, NULL);
        cr_assert(fmud_unload(c, &t) == 0, "%s", fmud_errmsg(c));

        csv_read(out, &x);
        cr_assert(x.n_cols == n_names + 1, "%zu columns, %zu names", x.n_cols, n_names);
        for (size_t k = 0; k < n_names; k++)
                cr_assert(strcmp(x.header[k + 1], names[k]) == 0, "column %zu: '%s' vs '%s'", k,
                          x.header[k + 1], names[k]);
        for (size_t i = 0; i < n_got; i++) {
                long r = csv_row(&x, got[i].time);

                if (i)
                        cr_assert(got[i].point > got[i - 1].point);
                if (r < 0)
                        continue;       /* a point the file does not record (decimation) */
                for (size_t k = 0; k < n_names; k++)
                        cr_assert(memcmp(&got[i].v[k], &x.cells[r * x.n_cols + k + 1],
                                         sizeof(double)) == 0,
                                  "t %g, %s: sample %.17g, file %.17g", got[i].time, names[k],
                                  got[i].v[k], x.cells[r * x.n_cols + k + 1]);
                matched++;
        }
        /* Every recorded row from the first sample on came through. */
        cr_assert(matched == x.n_rows - (size_t)csv_row(&x, got[0].time) ||
                  csv_row(&x, got[0].time) < 0, "%zu of the rows matched", matched);
        cr_assert(matched >= 50, "only %zu samples matched rows", matched);
        csv_fini(&x);
        free(out);
}

/*
 * A set of a discrete input of an FMU with Event Mode, between two steps,
 * reaches it in an Event Mode (FMI 3.0 sections 2.4.7.4 and 4.3.1): TimeEvent
 * counts k's changes taken in fmi3UpdateDiscreteStates and those it first
 * sees in a step. It was set in Step Mode.
 */
Test(daemon_values, a_discrete_input_set_between_steps_goes_in_in_event_mode, .init = setup,
     .fini = teardown)
{
        struct proto_load a = { .path = daemon_str(FMUD_TEST_FMU_DIR "/TimeEvent.fmu") };
        struct proto_target t = { daemon_load(c, &a, NULL), 0 };
        static const char *const names[] = { "k_events", "k_in_step" };
        struct pv seven = PV_I(7);
        struct proto_named_value v = { daemon_str("k"), &seven };
        const struct pv *const *got;

        cr_assert(fmud_step(c, &t, 1, NULL) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_set(c, &t, &v, 1) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_step(c, &t, 1, NULL) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_get(c, &t, names, 2, &got) == 0, "%s", fmud_errmsg(c));
        cr_assert(eq(i64, got[0]->i, 1), "k_events");
        cr_assert(eq(i64, got[1]->i, 0), "k_in_step");
}

/*
 * The outputs an Event Mode computed are the instance's outputs at that
 * time (FMI 3.0 section 3.2.2: fmi3Get* gives the values after the event):
 * a get right after the set that caused it answers them, not those of the
 * step before, and so does what its consumers take next.
 */
Test(daemon_values, a_get_after_a_discrete_set_answers_the_outputs_after_its_event,
     .init = setup, .fini = teardown)
{
        struct proto_load a = { .path = daemon_str(FMUD_TEST_FMU_DIR "/TimeEvent.fmu") };
        struct proto_target t = { daemon_load(c, &a, NULL), 0 };
        static const char *const names[] = { "k_events" };
        struct pv seven = PV_I(7);
        struct proto_named_value v = { daemon_str("k"), &seven };
        const struct pv *const *got;

        cr_assert(fmud_step(c, &t, 1, NULL) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_get(c, &t, names, 1, &got) == 0, "%s", fmud_errmsg(c));
        cr_assert(eq(i64, got[0]->i, 0), "k_events before the set");
        cr_assert(fmud_set(c, &t, &v, 1) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_get(c, &t, names, 1, &got) == 0, "%s", fmud_errmsg(c));
        cr_assert(eq(i64, got[0]->i, 1), "k_events right after the set");
}
