/*
 * daemon_example: client/examples/remote_master drives a session of a real
 * fmud point by point; what it prints equals, bit for bit, the results of
 * the same scenario run in process (engine/run/run.h) at every point;
 * over tcp it takes the CURVE keys, and says a key the daemon refuses.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zmq.h>

#include "engine/run/run.h"
#include "daemon_fixture.h"
#include "support/run.h"
#include "support/tmpdir.h"

static struct fmud_daemon d;

static void setup(void)
{
        daemon_start(&d, NULL);
}

static void teardown(void)
{
        daemon_stop(&d);
}

/* A CSV table: a header and rows of numbers. */
struct table {
        char *text;
        size_t n_cols, n_rows;
        char *cols[16];
        double *cells;
};

static void table_parse(char *text, struct table *ret)
{
        char *save = NULL, *line;

        *ret = (struct table){ .text = text };
        line = strtok_r(text, "\n", &save);
        cr_assert(line != NULL, "no header");
        for (char *f = line; f && ret->n_cols < 16; ret->n_cols++) {
                ret->cols[ret->n_cols] = f;
                f = strchr(f, ',');
                if (f)
                        *f++ = '\0';
        }
        while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
                char *end = line;

                ret->cells = realloc(ret->cells, (ret->n_rows + 1) * ret->n_cols * sizeof(double));
                cr_assert(ret->cells != NULL);
                for (size_t i = 0; i < ret->n_cols; i++) {
                        ret->cells[ret->n_rows * ret->n_cols + i] = strtod(end, &end);
                        end += *end == ',';
                }
                ret->n_rows++;
        }
}

static void table_fini(struct table *t)
{
        free(t->text);
        free(t->cells);
}

static long table_col(const struct table *t, const char *name)
{
        for (size_t i = 0; i < t->n_cols; i++)
                if (strcmp(t->cols[i], name) == 0)
                        return (long)i;
        return -1;
}

/* What a run counted: points, extra points, events and rows written. */
struct counts {
        uint64_t points, extra_points, events, rows;
};

/*
 * The scenario in process, every point recorded, into ref (freed by the
 * caller), and what the run counted into *ret (may be NULL).
 */
static void in_process(const char *scenario, const struct scenario_assign *starts, size_t n_starts,
                       struct table *ref, struct counts *ret)
{
        char *out = daemon_path(&d, "in_process.csv"), *cache = daemon_path(&d, "ref-cache");
        const char *const allowed[] = { FMUD_TEST_FMU_DIR, FMUD_EXAMPLES, FMUD_MASTER_FMU_DIR };
        struct scenario_overrides ov = {
                .has_decimation = true, .decimation = 1,
                .n_starts = n_starts, .starts = starts,
        };
        struct run_opts o = {
                .scenario = scenario, .out = out, .cache_dir = cache, .worker_path = FMUD_WORKER,
                .overrides = &ov, .n_allowed_dirs = 3, .allowed_dirs = allowed,
        };
        struct diag_list diags;
        struct run_report rep = { 0 };
        int r;

        cr_assert(mkdir(cache, 0700) == 0 || errno == EEXIST);
        diag_list_init(&diags, 16);
        r = run_scenario(&o, &diags, &rep);
        cr_assert(r == 0, "in-process run: %s", rep.message ? rep.message : "(no message)");
        if (ret)
                *ret = (struct counts){ rep.points, rep.extra_points, rep.events, rep.rec.rows };
        run_report_fini(&rep);
        diag_list_fini(&diags);
        table_parse(daemon_slurp(out, NULL), ref);
        free(out);
        free(cache);
}

/* Every row remote_master printed equals the in-process row at the same time. */
static void compare(const struct table *got, const struct table *ref, size_t expect_rows)
{
        cr_assert(got->n_rows == expect_rows, "%zu rows, expected %zu", got->n_rows, expect_rows);
        cr_assert(strcmp(got->cols[0], "time") == 0);
        for (size_t r = 0; r < got->n_rows; r++) {
                const double *g = &got->cells[r * got->n_cols];
                const double *f = &ref->cells[r * ref->n_cols];

                cr_assert(r < ref->n_rows);
                /* The file writes a grid point as the step was written (numfmt_grid()). */
                cr_assert(fabs(g[0] - f[0]) <= 4 * (nextafter(fabs(g[0]), INFINITY) - fabs(g[0])),
                          "row %zu: time %.17g vs %.17g", r, g[0], f[0]);
                for (size_t k = 1; k < got->n_cols; k++) {
                        long col = table_col(ref, got->cols[k]);

                        cr_assert(col > 0, "'%s' is not a column of the in-process run",
                                  got->cols[k]);
                        cr_assert(memcmp(&g[k], &f[col], sizeof(double)) == 0,
                                  "t %g, %s: remote %.17g, in process %.17g", g[0], got->cols[k],
                                  g[k], f[col]);
                }
        }
}

static struct table remote(char *const argv[])
{
        struct run_result res = { 0 };
        struct table t;

        cr_assert(run_capture(argv, &res) == 0);
        cr_assert(res.exit_code == 0, "remote_master exited %d: %s", res.exit_code, res.err);
        table_parse(res.out, &t);
        free(res.err);
        return t;
}

Test(daemon_example, remote_master_prints_the_in_process_results, .init = setup,
     .fini = teardown)
{
        char *argv[] = { FMUD_REMOTE_MASTER, "--endpoint", d.endpoint, "--points", "300",
                         FMUD_EXAMPLES "/msd.ssp", "mass1.x1", "mass1.v1", "mass2.x2",
                         "mass2.v2", "mass2.F", NULL };
        struct table got = remote(argv), ref;

        in_process(FMUD_EXAMPLES "/msd.ssp", NULL, 0, &ref, NULL);
        cr_assert(got.n_cols == 6);
        compare(&got, &ref, 301);
        table_fini(&got);
        table_fini(&ref);
}

Test(daemon_example, remote_master_sets_inputs_and_runs_to_the_stop_time, .init = setup,
     .fini = teardown)
{
        char *argv[] = { FMUD_REMOTE_MASTER, "--endpoint", d.endpoint, "--set", "u=2.5",
                         FMUD_MASTER_FMU_DIR "/Scripted.fmu", "x", "steps", NULL };
        struct scenario_assign u = { "u", "2.5" };
        struct table got = remote(argv), ref;

        in_process(FMUD_MASTER_FMU_DIR "/Scripted.fmu", &u, 1, &ref, NULL);
        cr_assert(got.n_cols == 3, "%zu columns", got.n_cols);
        /* Scripted runs 0..1 in steps of 0.1: 11 points, the last at the stop time. */
        compare(&got, &ref, 11);
        cr_assert(got.cells[10 * got.n_cols] == 1.0);
        cr_assert(got.cells[10 * got.n_cols + 1] != 0.0, "u = 2.5 reached the FMU");
        table_fini(&got);
        table_fini(&ref);
}

Test(daemon_example, remote_master_reports_a_refusal, .init = setup, .fini = teardown)
{
        char *argv[] = { FMUD_REMOTE_MASTER, "--endpoint", d.endpoint,
                         FMUD_EXAMPLES "/msd.ssp", "mass1.nosuch", NULL };
        struct run_result res = { 0 };

        cr_assert(run_capture(argv, &res) == 0);
        cr_assert(res.exit_code == 1, "exit %d", res.exit_code);
        cr_assert(strstr(res.err, "nosuch") != NULL, "%s", res.err);
        run_result_fini(&res);
}

Test(daemon_example, status_counts_extra_points_events_and_rows_as_in_process, .init = setup,
     .fini = teardown)
{
        /* The bouncing ball: every bounce is an early return met at an extra point, then an event. */
        char *out = daemon_path(&d, "ball.csv");
        struct proto_load a = { .path = daemon_str(FMUD_TEST_FMU_DIR "/BouncingBall.fmu"),
                                .out = daemon_str(out), .has_decimation = true,
                                .decimation = 1 };
        struct fmud *c = daemon_connect(&d);
        struct proto_target t = { daemon_load(c, &a, NULL), 0 };
        struct proto_session_status st;
        struct counts ref;
        struct table ref_rows;

        cr_assert(fmud_start(c, &t, NULL) == 0, "%s", fmud_errmsg(c));
        daemon_wait_state(c, t.session, PROTO_STATE_FINISHED, &st);
        in_process(FMUD_TEST_FMU_DIR "/BouncingBall.fmu", NULL, 0, &ref_rows, &ref);
        cr_assert(ref.extra_points > 0 && ref.events > 0, "the ball bounced: %llu extra, %llu events",
                  (unsigned long long)ref.extra_points, (unsigned long long)ref.events);
        cr_assert(st.points == ref.points && st.extra_points == ref.extra_points &&
                  st.events == ref.events, "daemon %llu/%llu/%llu, in process %llu/%llu/%llu",
                  (unsigned long long)st.points, (unsigned long long)st.extra_points,
                  (unsigned long long)st.events, (unsigned long long)ref.points,
                  (unsigned long long)ref.extra_points, (unsigned long long)ref.events);
        cr_assert(st.rows_recorded == ref.rows && st.rows_recorded == ref_rows.n_rows,
                  "%llu rows, in process %llu (%zu in its file)",
                  (unsigned long long)st.rows_recorded, (unsigned long long)ref.rows,
                  ref_rows.n_rows);
        cr_assert(st.rows_dropped == 0);
        cr_assert(st.recorder.len > 0, "the status names the recorder");
        table_fini(&ref_rows);
        fmud_close(c);
        free(out);
}

/* One finished session's status: the scenario at path run as fast as possible. */
static struct proto_session_status run_to_end(struct fmud *c, const char *path)
{
        struct proto_load a = { .path = daemon_str(path) };
        struct proto_target t = { daemon_load(c, &a, NULL), 0 };
        struct proto_session_status st;

        cr_assert(fmud_start(c, &t, NULL) == 0, "%s", fmud_errmsg(c));
        daemon_wait_state(c, t.session, PROTO_STATE_FINISHED, &st);
        return st;
}

Test(daemon_example, status_counts_chained_steps_of_a_lone_instance_only, .init = setup,
     .fini = teardown)
{
        struct fmud *c = daemon_connect(&d);
        struct proto_session_status lone = run_to_end(c, FMUD_TEST_FMU_DIR "/LinearOde.fmu");
        struct proto_session_status msd = run_to_end(c, FMUD_EXAMPLES "/msd.ssp");

        /* Nothing feeds it: its next step is posted behind the one in flight. */
        cr_assert(lone.points >= 2, "%llu points", (unsigned long long)lone.points);
        cr_assert(lone.chained_steps > 0 && lone.chained_steps < lone.points,
                  "%llu chained of %llu points", (unsigned long long)lone.chained_steps,
                  (unsigned long long)lone.points);
        /* Coupled instances wait for each other's outputs: nothing is chained. */
        cr_assert(msd.points > 0 && msd.chained_steps == 0, "%llu chained",
                  (unsigned long long)msd.chained_steps);
        /* Trivial steps: no worker is heavy enough to be moved. */
        cr_assert(lone.worker_moves == 0 && msd.worker_moves == 0);
        fmud_close(c);
}

/* ---- over tcp, with CURVE keys ---- */

static char *keydir;

/* A daemon that also serves tcp with CURVE and admits the key pair keydir/client; its tcp endpoint. */
static void start_tcp(char *tcp, size_t size)
{
        char conf[1024], path[512], pub[FMUD_KEY_Z85_LEN + 1], err[256];
        void *ctx = zmq_ctx_new(), *s = zmq_socket(ctx, ZMQ_REP);
        size_t len = size;

        /* A free port on the loopback: bind to 0, read it back. */
        cr_assert(zmq_bind(s, "tcp://127.0.0.1:*") == 0);
        cr_assert(zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, tcp, &len) == 0);
        zmq_close(s);
        zmq_ctx_term(ctx);
        keydir = tmpdir_new("fmud-example-keys");
        cr_assert(keydir != NULL);
        for (int i = 0; i < 3; i++) {
                static const char *const names[] = { "server", "client", "other" };

                snprintf(path, sizeof(path), "%s/%s", keydir, names[i]);
                cr_assert(fmud_keygen(path, err, sizeof(err)) == 0, "%s", err);
        }
        snprintf(path, sizeof(path), "%s/client.pub", keydir);
        cr_assert(fmud_key_read(path, pub, err, sizeof(err)) == 0, "%s", err);
        cr_assert(tmpdir_write(keydir, "authorized_keys", pub, strlen(pub)) == 0);
        snprintf(conf, sizeof(conf), "[control]\ntcp_endpoint = %s\nserver_secret_key = %s/server.key\n"
                 "authorized_keys = %s/authorized_keys\n", tcp, keydir, keydir);
        cr_assert(tmpdir_write(keydir, "fmud.conf", conf, strlen(conf)) == 0);
        snprintf(path, sizeof(path), "%s/fmud.conf", keydir);
        daemon_start(&d, (const char *const[]){ "--config", path, NULL });
}

static void stop_tcp(void)
{
        daemon_stop(&d);
        tmpdir_free(keydir);
        keydir = NULL;
}

Test(daemon_example, remote_master_reaches_a_tcp_daemon_with_its_keys, .fini = stop_tcp)
{
        char tcp[64], spub[512], ckey[512], okey[512];
        struct run_result res = { 0 };
        struct table got, ref;

        start_tcp(tcp, sizeof(tcp));
        snprintf(spub, sizeof(spub), "%s/server.pub", keydir);
        snprintf(ckey, sizeof(ckey), "%s/client.key", keydir);
        snprintf(okey, sizeof(okey), "%s/other.key", keydir);
        got = remote((char *[]){ FMUD_REMOTE_MASTER, "--endpoint", tcp, "--server-key", spub,
                                 "--key", ckey, FMUD_MASTER_FMU_DIR "/Scripted.fmu", "x", NULL });
        in_process(FMUD_MASTER_FMU_DIR "/Scripted.fmu", NULL, 0, &ref, NULL);
        compare(&got, &ref, 11);
        table_fini(&got);
        table_fini(&ref);
        /* A key the daemon does not list: said as such. */
        cr_assert(run_capture((char *[]){ FMUD_REMOTE_MASTER, "--endpoint", tcp, "--server-key",
                                          spub, "--key", okey, FMUD_MASTER_FMU_DIR "/Scripted.fmu",
                                          "x", NULL }, &res) == 0);
        cr_assert(eq(int, res.exit_code, 1));
        cr_assert(strstr(res.err, "does not accept this client's key") != NULL, "%s", res.err);
        run_result_fini(&res);
        /* Half a key pair is a usage error, before any connection. */
        cr_assert(run_capture((char *[]){ FMUD_REMOTE_MASTER, "--endpoint", tcp, "--server-key",
                                          spub, FMUD_MASTER_FMU_DIR "/Scripted.fmu", "x", NULL },
                              &res) == 0);
        cr_assert(eq(int, res.exit_code, 2));
        cr_assert(strstr(res.err, "CURVE needs both --server-key and --key") != NULL, "%s",
                  res.err);
        run_result_fini(&res);
}
