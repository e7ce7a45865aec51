/*
 * daemon: values while the session runs. A set on a running session lands
 * at one communication point, every value of the request together, in
 * the order the requests came; its reply names that point; the results
 * show the change in the row after it, for every variable at once (rows
 * hold what each step produced: the inputs set at a point are what the
 * next step uses). A get answers from the last completed point with its
 * time, without waiting for a paced run's next point.
 *
 * Feedthrough echoes its inputs as outputs at the next step. Runs are
 * paced so that sets land amid the run; no assertion depends on how fast
 * anything is: the results file is the judge.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_fixture.h"

#define H       0.01    /* the step size of every run here */

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

static uint64_t load(const char *out, double stop, double warp)
{
        static const char *const rec[] = { "Float64_output", "Int32_output" };
        struct proto_str record[2] = { daemon_str(rec[0]), daemon_str(rec[1]) };
        struct proto_load a = {
                .path = daemon_str(FMUD_TEST_FMU_DIR "/Feedthrough.fmu"),
                .out = daemon_str(out),
                .has_stop = true, .stop = stop,
                .has_step = true, .step = H,
                .has_warp = true, .warp = warp,
                .n_record = 2, .record = record,
        };

        return daemon_load(c, &a, NULL);
}

/* The rows of a results file: time, Float64_output, Int32_output. */
struct rows {
        size_t n;
        double t[4096], f[4096], i[4096];
};

static void read_rows(const char *out, struct rows *r)
{
        size_t len;
        char *csv = daemon_slurp(out, &len), *line, *save = NULL;
        int fcol = -1, icol = -1;

        r->n = 0;
        line = strtok_r(csv, "\n", &save);
        cr_assert(line, "the results have a header");
        for (int col = 0; line && *line; col++) {
                const char *end = strchr(line, ',');
                size_t l = end ? (size_t)(end - line) : strlen(line);

                if (l >= 14 && !strncmp(line + l - 14, "Float64_output", 14))
                        fcol = col;
                if (l >= 12 && !strncmp(line + l - 12, "Int32_output", 12))
                        icol = col;
                line = end ? (char *)end + 1 : NULL;
        }
        cr_assert(fcol > 0 && icol > 0, "both columns recorded");
        while ((line = strtok_r(NULL, "\n", &save)) && r->n < 4096) {
                char *p = line;

                for (int col = 0; p; col++) {
                        double v = strtod(p, NULL);

                        if (col == 0)
                                r->t[r->n] = v;
                        if (col == fcol)
                                r->f[r->n] = v;
                        if (col == icol)
                                r->i[r->n] = v;
                        p = strchr(p, ',');
                        if (p)
                                p++;
                }
                r->n++;
        }
        free(csv);
}

/* The row at time t (exactly as the daemon wrote it), or SIZE_MAX. */
static size_t row_at(const struct rows *r, double t)
{
        for (size_t k = 0; k < r->n; k++)
                if (r->t[k] == t)
                        return k;
        return SIZE_MAX;
}

/* Whether t is a grid point: t_n = n * h, as the master computes it. */
static bool on_grid(double t)
{
        double n = nearbyint(t / H);

        return n >= 0 && n * H == t;
}

static double set2(const struct proto_target *t, double f, int64_t i)
{
        struct pv pf = { .type = PV_FLOAT, .f = f }, pi = { .type = PV_INT, .i = i };
        struct proto_named_value v[2] = {
                { daemon_str("Float64_input"), &pf },
                { daemon_str("Int32_input"), &pi },
        };
        double at = NAN;

        cr_assert(fmud_set_at(c, t, v, 2, &at) == 0, "%s", fmud_errmsg(c));
        cr_assert(on_grid(at), "set applied at t = %.17g, a grid point", at);
        return at;
}

static void finish(const struct proto_target *t)
{
        cr_assert(fmud_warp(c, t, 0, NULL) == 0, "%s", fmud_errmsg(c));
        daemon_wait_state(c, t->session, PROTO_STATE_FINISHED, NULL);
        cr_assert(fmud_unload(c, t) == 0, "%s", fmud_errmsg(c));
}

Test(daemon_live, sets_while_running_land_whole_and_in_order, .init = setup, .fini = teardown)
{
        char *out = daemon_path(&d, "sets.csv");
        struct proto_target t = { load(out, 2, 5), 0 };
        double at[4], fv[4] = { 10.5, 11.5, 12.5, 13.5 };
        int64_t iv[4] = { 100, 101, 102, 103 };
        struct rows *r = calloc(1, sizeof(*r));
        size_t changes = 0;

        cr_assert(r);
        cr_assert(fmud_start(c, &t, NULL) == 0, "%s", fmud_errmsg(c));
        for (int k = 0; k < 4; k++) {
                at[k] = set2(&t, fv[k], iv[k]);
                cr_assert(k == 0 || at[k] >= at[k - 1], "set %d at %.17g, before set %d's %.17g",
                          k, at[k], k - 1, at[k - 1]);
        }
        finish(&t);
        read_rows(out, r);
        cr_assert(r->n > 2);
        /* Each row holds the values of the last set applied at a point before it. */
        for (size_t k = 0; k < r->n; k++) {
                double want_f = 2.5, want_i = -32;

                for (int s = 0; s < 4; s++)
                        if (at[s] < r->t[k]) {
                                want_f = fv[s];
                                want_i = (double)iv[s];
                        }
                cr_assert(r->f[k] == want_f && r->i[k] == want_i,
                          "row %zu (t = %.17g): %g, %g; expected %g, %g", k, r->t[k], r->f[k],
                          r->i[k], want_f, want_i);
                if (k > 0 && r->f[k] != r->f[k - 1]) {
                        changes++;
                        /* The row of the reply's point is the last before the change. */
                        for (int s = 0; s < 4; s++)
                                if (at[s] < r->t[k] && at[s] >= r->t[k - 1])
                                        cr_assert(at[s] == r->t[k - 1], "set %d at %.17g", s, at[s]);
                }
        }
        cr_assert(changes >= 1 && changes <= 4, "%zu changes", changes);
        cr_assert(row_at(r, at[0]) != SIZE_MAX, "a row at the first set's point");
        free(r);
        free(out);
}

Test(daemon_live, get_and_set_while_running_do_not_wait_for_the_next_point, .init = setup,
     .fini = teardown)
{
        static const char *const names[] = { "Float64_output", "Int32_output" };
        char *out = daemon_path(&d, "get.csv");
        /* A point every 10,000 s of wall time: only an answer from between points can come. */
        struct proto_target t = { load(out, 1, 1e-6), 0 };
        const struct pv *const *v;
        struct proto_session_status st;
        struct rows *r = calloc(1, sizeof(*r));
        double tg = NAN, ts, tg2 = NAN, f, fi;
        size_t k;

        cr_assert(r);
        fmud_set_timeout(c, 60000);     /* a hang guard: without it a wait would be 10,000 s */
        cr_assert(fmud_start(c, &t, NULL) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_get_at(c, &t, names, 2, &v, &tg) == 0, "%s", fmud_errmsg(c));
        cr_assert(on_grid(tg) && tg <= H, "get at t = %.17g", tg);
        cr_assert(pv_f64(v[0], &f) == 0 && f == 2.5, "Float64_output %g", f);
        ts = set2(&t, 7.5, 7);
        cr_assert(ts >= tg && ts <= H, "set at %.17g", ts);
        cr_assert(fmud_get_at(c, &t, names, 2, &v, &tg2) == 0, "%s", fmud_errmsg(c));
        /* The first point is due at once, the second 10,000 s later: none waited for. */
        cr_assert(tg2 >= ts && tg2 <= H, "get at %.17g, set at %.17g", tg2, ts);
        cr_assert(pv_f64(v[0], &f) == 0 && pv_f64(v[1], &fi) == 0, "numbers");
        cr_assert(fmud_status(c, t.session, &st) == 0 && st.state == PROTO_STATE_RUNNING,
                  "still running");
        finish(&t);
        read_rows(out, r);
        k = row_at(r, tg2);
        cr_assert(k != SIZE_MAX, "a row at the get's point %.17g", tg2);
        cr_assert(r->f[k] == f && r->i[k] == fi, "get said %g, %g; the row at its point holds "
                  "%g, %g", f, fi, r->f[k], r->i[k]);
        k = row_at(r, ts);
        cr_assert(k != SIZE_MAX && k + 1 < r->n, "a row at %.17g and after it", ts);
        cr_assert(r->f[k] == 2.5 && r->i[k] == -32, "the row of the set's point: %g, %g",
                  r->f[k], r->i[k]);
        cr_assert(r->f[k + 1] == 7.5 && r->i[k + 1] == 7, "the next row holds the set values");
        free(r);
        free(out);
}

/* The entry of the list named name. */
static const struct fmud_var *var_named(const struct fmud_var *v, size_t n, const char *name)
{
        for (size_t i = 0; i < n; i++)
                if (v[i].name.len == strlen(name) && !memcmp(v[i].name.ptr, name, v[i].name.len))
                        return &v[i];
        cr_assert_fail("no variable %s in the list", name);
        return NULL;
}

/*
 * vars of a running session answers from what the last point published
 * (the recorded outputs) and nil for the rest: no worker round trip per
 * variable between points. Loaded, it reads every value from the FMU.
 */
Test(daemon_live, vars_while_running_answers_from_published_values_only, .init = setup,
     .fini = teardown)
{
        char *out = daemon_path(&d, "vars.csv");
        struct proto_target t = { load(out, 1, 1e-6), 0 };
        const struct fmud_var *v;
        struct proto_session_status st;
        size_t n;
        double at, f;

        fmud_set_timeout(c, 60000);
        cr_assert(fmud_vars(c, &t, &v, &n, &at) == 0, "%s", fmud_errmsg(c));
        cr_assert(var_named(v, n, "Float32_output")->value != NULL, "loaded: read from the FMU");
        cr_assert(fmud_start(c, &t, NULL) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_vars(c, &t, &v, &n, &at) == 0, "%s", fmud_errmsg(c));
        cr_assert(var_named(v, n, "Float64_output")->value != NULL, "recorded: published");
        cr_assert(pv_f64(var_named(v, n, "Float64_output")->value, &f) == 0);
        cr_assert(f == 2.5, "Float64_output %g", f);
        cr_assert(var_named(v, n, "Float32_output")->value == NULL, "not published: nil");
        cr_assert(var_named(v, n, "Float64_input")->value == NULL, "not published: nil");
        cr_assert(fmud_status(c, t.session, &st) == 0 && st.state == PROTO_STATE_RUNNING,
                  "still running");
        finish(&t);
        free(out);
}
