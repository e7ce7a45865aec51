/*
 * daemon: FMI-level instances through the clients: libfmud's batches
 * (fmud_fmi_*, with array variables and structural parameters set in
 * Configuration and Reconfiguration Mode, down to arrays of no elements)
 * and the example remote master
 * client/examples/fmi_master,
 * which couples two LinearOde instances in a loop of its own over ipc and
 * over tcp with CURVE. LinearOde steps x *= exp(-k h) with y_i = x + u_i,
 * so every value printed is compared bit for bit with the same arithmetic
 * done here.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "daemon_fixture.h"
#include "support/run.h"
#include "support/tmpdir.h"

#define LINEAR_ODE      FMUD_TEST_FMU_DIR "/LinearOde.fmu"
#define FEEDTHROUGH     FMUD_TEST_FMU_DIR "/Feedthrough.fmu"

static struct fmud_daemon d;
static char *keydir;

static const uint32_t U[10] = { 10, 11, 12, 13, 14, 15, 16, 17, 18, 19 };
static const uint32_t Y[10] = { 20, 21, 22, 23, 24, 25, 26, 27, 28, 29 };

static void setup(void)
{
        daemon_start(&d, NULL);
}

static void teardown(void)
{
        daemon_stop(&d);
        tmpdir_free(keydir);
        keydir = NULL;
}

TestSuite(daemon_fmi_client, .fini = teardown, .timeout = 120);

Test(daemon_fmi_client, libfmud_batches_step_instances_and_report_refusals, .init = setup)
{
        struct fmud *c = daemon_connect(&d);
        struct fmud_batch *b = fmud_fmi_batch_new();
        const uint32_t x_vr = 1;
        struct fmud_step_result sr;
        uint64_t a, s, state;
        double u[10] = { 0 }, y[10], x = 1.0;
        int r;

        cr_assert(b != NULL);
        cr_assert(eq(int, fmud_instantiate(c, &(struct proto_instantiate){
                .fmu = daemon_str(LINEAR_ODE), .instance_name = daemon_str("lib") }, &a), 0),
                "%s", fmud_errmsg(c));
        /* Refused: doStep in Instantiated; the set before it was made. */
        cr_assert(eq(int, fmud_fmi_add_set_f64(b, a, U, u, 10), 0));
        cr_assert(eq(int, fmud_fmi_add_do_step(b, a, 0, 0.1), 0));
        r = fmud_fmi_submit(c, b);
        daemon_assert_refused(c, r, PROTO_E_STATE, "doStep before initialization");
        cr_assert(eq(long, fmud_fmi_refused(b), 1));
        cr_assert(eq(sz, fmud_fmi_count(b), 1));
        cr_assert(strstr(fmud_errmsg(c), "calls[1] (instance ") != NULL, "%s", fmud_errmsg(c));
        cr_assert(strstr(fmud_errmsg(c), "fmi3DoStep") != NULL, "%s", fmud_errmsg(c));
        fmud_fmi_batch_clear(b);
        cr_assert(eq(int, fmud_fmi_add(b, a, "enterInitializationMode"), 0));
        cr_assert(eq(int, fmud_fmi_add(b, a, "exitInitializationMode"), 0));
        cr_assert(eq(int, fmud_fmi_submit(c, b), 0), "%s", fmud_errmsg(c));
        for (int k = 0; k < 3; k++) {
                fmud_fmi_batch_clear(b);
                for (int i = 0; i < 10; i++)
                        u[i] = k + i * 0.5;
                cr_assert(eq(int, fmud_fmi_add_set_f64(b, a, U, u, 10), 0));
                cr_assert(eq(int, fmud_fmi_add_do_step(b, a, k * 0.1, 0.1), 0));
                cr_assert(eq(int, fmud_fmi_add_get_f64(b, a, Y, 10), 0));
                cr_assert(eq(int, fmud_fmi_submit(c, b), 0), "%s", fmud_errmsg(c));
                cr_assert(eq(int, fmud_fmi_step(b, 1, &sr), 0));
                cr_assert(not(sr.event_handling_needed || sr.terminate_simulation));
                cr_assert(eq(int, fmud_fmi_f64(b, 2, y, 10), 0));
                x *= exp(-0.1);
                for (int i = 0; i < 10; i++)
                        cr_assert(eq(dbl, y[i], x + u[i]));
        }
        fmud_fmi_batch_clear(b);
        cr_assert(eq(int, fmud_fmi_add(b, a, "getFMUState"), 0));
        cr_assert(eq(int, fmud_fmi_add_get_f64(b, a, &x_vr, 1), 0));
        cr_assert(eq(int, fmud_fmi_submit(c, b), 0), "%s", fmud_errmsg(c));
        cr_assert(eq(int, fmud_fmi_state(b, 0, &state), 0));
        cr_assert(eq(int, fmud_fmi_f64(b, 1, y, 2), -EPROTO), "two values asked of one");
        /* A whole batch refused: no instance. */
        fmud_fmi_batch_clear(b);
        cr_assert(eq(int, fmud_fmi_add(b, 999, "terminate"), 0));
        daemon_assert_refused(c, fmud_fmi_submit(c, b), PROTO_E_NO_SESSION, "no instance");
        cr_assert(eq(long, fmud_fmi_refused(b), -1));
        s = a;
        cr_assert(eq(int, fmud_free_instance(c, s), 0), "%s", fmud_errmsg(c));
        fmud_fmi_batch_free(b);
        fmud_close(c);
}

/* fmi_master's rows against the coupling computed here: points + 1 rows of time,a,b. */
static void check_rows(const char *out, int points)
{
        double x = 1.0, ya = 1.0, yb = 1.0, t = 0;
        const char *p = strchr(out, '\n');
        int rows = 0;

        cr_assert(strncmp(out, "time,a,b\n", 9) == 0, "%s", out);
        for (; p && p[1]; p = strchr(p + 1, '\n'), rows++) {
                double g[3];

                cr_assert(eq(int, sscanf(p + 1, "%lf,%lf,%lf", &g[0], &g[1], &g[2]), 3), "%s", p);
                if (rows) {
                        double ua = yb, ub = ya;

                        x *= exp(-1.0 * 0.1);
                        t += 0.1;
                        ya = x + ua;
                        yb = x + ub;
                }
                cr_assert(eq(dbl, g[0], t), "row %d", rows);
                cr_assert(eq(dbl, g[1], ya), "row %d: a", rows);
                cr_assert(eq(dbl, g[2], yb), "row %d: b", rows);
        }
        cr_assert(eq(int, rows, points + 1));
}

Test(daemon_fmi_client, fmi_master_couples_two_instances_over_ipc, .init = setup)
{
        struct run_result res = { 0 };

        cr_assert(run_capture((char *[]){ FMUD_FMI_MASTER, "--endpoint", d.endpoint, "--points",
                                          "20", LINEAR_ODE, NULL }, &res) == 0);
        cr_assert(eq(int, res.exit_code, 0), "%s", res.err);
        check_rows(res.out, 20);
        run_result_fini(&res);
}

Test(daemon_fmi_client, fmi_master_reaches_a_tcp_daemon_with_its_keys)
{
        char tcp[64], path[512], err[256], pub[64], conf[1024], spub[512], ckey[512];
        struct run_result res = { 0 };
        size_t len = sizeof(tcp);
        void *ctx = zmq_ctx_new(), *s = zmq_socket(ctx, ZMQ_REP);

        /* A free port on the loopback: bind to 0, read it back. */
        cr_assert(zmq_bind(s, "tcp://127.0.0.1:*") == 0);
        cr_assert(zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, tcp, &len) == 0);
        zmq_close(s);
        zmq_ctx_term(ctx);
        keydir = tmpdir_new("fmud-fmi-keys");
        cr_assert(keydir != NULL);
        for (int i = 0; i < 2; i++) {
                snprintf(path, sizeof(path), "%s/%s", keydir, i ? "client" : "server");
                cr_assert(fmud_keygen(path, err, sizeof(err)) == 0, "%s", err);
        }
        snprintf(path, sizeof(path), "%s/client.pub", keydir);
        cr_assert(fmud_key_read(path, pub, err, sizeof(err)) == 0, "%s", err);
        cr_assert(tmpdir_write(keydir, "authorized_keys", pub, strlen(pub)) == 0);
        snprintf(conf, sizeof(conf), "[control]\ntcp_endpoint = %s\nserver_secret_key = "
                 "%s/server.key\nauthorized_keys = %s/authorized_keys\n", tcp, keydir, keydir);
        cr_assert(tmpdir_write(keydir, "fmud.conf", conf, strlen(conf)) == 0);
        snprintf(path, sizeof(path), "%s/fmud.conf", keydir);
        daemon_start(&d, (const char *const[]){ "--config", path, NULL });
        snprintf(spub, sizeof(spub), "%s/server.pub", keydir);
        snprintf(ckey, sizeof(ckey), "%s/client.key", keydir);
        cr_assert(run_capture((char *[]){ FMUD_FMI_MASTER, "--endpoint", tcp, "--server-key",
                                          spub, "--key", ckey, "--points", "5", LINEAR_ODE,
                                          NULL }, &res) == 0);
        cr_assert(eq(int, res.exit_code, 0), "%s", res.err);
        check_rows(res.out, 5);
        run_result_fini(&res);
}

/* Feedthrough: n (vr 31) sizes Float64_vector_input (32) and _output (33); it starts at 4. */
Test(daemon_fmi_client, arrays_sized_by_a_structural_parameter_set_in_configuration_mode,
     .init = setup)
{
        static const uint32_t N = 31, VIN = 32, VOUT = 33;
        static const double six[6] = { 1.5, -2, 3, 4e10, 5, -6.25 };
        struct fmud *c = daemon_connect(&d);
        struct fmud_batch *b = fmud_fmi_batch_new();
        uint64_t a, n = 6;
        double y[6];
        int r;

        cr_assert(b != NULL);
        cr_assert(eq(int, fmud_instantiate(c, &(struct proto_instantiate){
                .fmu = daemon_str(FEEDTHROUGH) }, &a), 0), "%s", fmud_errmsg(c));
        /* Configuration Mode from Instantiated (FMI 3.0 section 2.3.6), then six elements. */
        cr_assert(eq(int, fmud_fmi_add(b, a, "enterConfigurationMode"), 0));
        cr_assert(eq(int, fmud_fmi_add_set_u64(b, a, &N, &n, 1), 0));
        cr_assert(eq(int, fmud_fmi_add(b, a, "exitConfigurationMode"), 0));
        cr_assert(eq(int, fmud_fmi_add(b, a, "enterInitializationMode"), 0));
        cr_assert(eq(int, fmud_fmi_add(b, a, "exitInitializationMode"), 0));
        cr_assert(eq(int, fmud_fmi_add_set_f64_n(b, a, &VIN, 1, six, 6), 0));
        cr_assert(eq(int, fmud_fmi_add_do_step(b, a, 0, 0.1), 0));
        cr_assert(eq(int, fmud_fmi_add_get_f64_n(b, a, &VOUT, 1, 6), 0));
        cr_assert(eq(int, fmud_fmi_submit(c, b), 0), "%s", fmud_errmsg(c));
        cr_assert(eq(int, fmud_fmi_f64(b, 7, y, 6), 0));
        for (int i = 0; i < 6; i++)
                cr_assert(eq(dbl, y[i], six[i]));
        /* The described size is now the wrong count: the worker says so, naming both. */
        fmud_fmi_batch_clear(b);
        cr_assert(eq(int, fmud_fmi_add_get_f64_n(b, a, &VOUT, 1, 4), 0));
        r = fmud_fmi_submit(c, b);
        daemon_assert_refused(c, r, PROTO_E_INVALID, "a get of 4 values of a 6-element array");
        cr_assert(strstr(fmud_errmsg(c), "nValues = 4, but the variable has 6 values") != NULL,
                  "%s", fmud_errmsg(c));
        /* Reconfiguration Mode from Step Mode (section 2.3.7): shrink to 2, keep the prefix. */
        fmud_fmi_batch_clear(b);
        n = 2;
        cr_assert(eq(int, fmud_fmi_add(b, a, "enterConfigurationMode"), 0));
        cr_assert(eq(int, fmud_fmi_add_set_u64(b, a, &N, &n, 1), 0));
        cr_assert(eq(int, fmud_fmi_add(b, a, "exitConfigurationMode"), 0));
        cr_assert(eq(int, fmud_fmi_add_get_f64_n(b, a, &VIN, 1, 2), 0));
        cr_assert(eq(int, fmud_fmi_submit(c, b), 0), "%s", fmud_errmsg(c));
        cr_assert(eq(int, fmud_fmi_f64(b, 3, y, 2), 0));
        cr_assert(eq(dbl, y[0], six[0]));
        cr_assert(eq(dbl, y[1], six[1]));
        /* A set in Step Mode of a structural parameter is refused with the mode it needs. */
        fmud_fmi_batch_clear(b);
        cr_assert(eq(int, fmud_fmi_add_set_u64(b, a, &N, &n, 1), 0));
        r = fmud_fmi_submit(c, b);
        daemon_assert_refused(c, r, PROTO_E_STATE, "a structural parameter set in Step Mode");
        cr_assert(strstr(fmud_errmsg(c), "Reconfiguration Mode") != NULL, "%s", fmud_errmsg(c));
        /*
         * n's min is 0 (FMI 3.0 section 2.4.7.2): the vectors have no
         * element, got and set with no value; a count of one is the
         * worker's to refuse.
         */
        fmud_fmi_batch_clear(b);
        n = 0;
        cr_assert(eq(int, fmud_fmi_add(b, a, "enterConfigurationMode"), 0));
        cr_assert(eq(int, fmud_fmi_add_set_u64(b, a, &N, &n, 1), 0));
        cr_assert(eq(int, fmud_fmi_add(b, a, "exitConfigurationMode"), 0));
        cr_assert(eq(int, fmud_fmi_add_set_f64_n(b, a, &VIN, 1, NULL, 0), 0));
        cr_assert(eq(int, fmud_fmi_add_do_step(b, a, 0.1, 0.1), 0));
        cr_assert(eq(int, fmud_fmi_add_get_f64_n(b, a, &VOUT, 1, 0), 0));
        cr_assert(eq(int, fmud_fmi_submit(c, b), 0), "%s", fmud_errmsg(c));
        cr_assert(eq(int, fmud_fmi_f64(b, 5, NULL, 0), 0));
        fmud_fmi_batch_clear(b);
        cr_assert(eq(int, fmud_fmi_add_get_f64_n(b, a, &VOUT, 1, 1), 0));
        r = fmud_fmi_submit(c, b);
        daemon_assert_refused(c, r, PROTO_E_INVALID, "a get of 1 value of a 0-element array");
        cr_assert(strstr(fmud_errmsg(c), "nValues = 1, but the variable has 0 values") != NULL,
                  "%s", fmud_errmsg(c));
        /* The function is named once, though the worker's message starts with it too. */
        cr_assert(strstr(fmud_errmsg(c), "fmi3GetFloat64: fmi3GetFloat64") == NULL, "%s",
                  fmud_errmsg(c));
        fmud_fmi_batch_free(b);
        fmud_close(c);
}
