/*
 * daemon: the operations do what proto/PROTOCOL.md section 5 says, against
 * a real fmud: run-until's goal and its refusal of a past time, get of one
 * array element, restore's result and its refusals, and warp and
 * subscribe only while a session can still run.
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_fixture.h"

static struct fmud_daemon d;
static struct fmud *c;
static struct daemon_raw raw;

static void setup(void)
{
        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        daemon_raw_open(&d, &raw);
}

static void teardown(void)
{
        daemon_raw_close(&raw);
        fmud_close(c);
        c = NULL;
        daemon_stop(&d);
}

static uint64_t load_path(const char *path, uint64_t *ret_gen)
{
        struct proto_load a = { .path = daemon_str(path) };

        return daemon_load(c, &a, ret_gen);
}

/* ---- run-until ------------------------------------------------------------------------ */

Test(daemon_contract, run_until_stops_at_the_last_point_at_or_before_its_time, .init = setup,
     .fini = teardown)
{
        /* msd: step 0.01, stop 10. */
        struct proto_target t = { load_path(FMUD_EXAMPLES "/msd.ssp", NULL), 0 };
        struct proto_session_status st;
        struct proto_progress p;

        /* Between two points: the one before, never past the time asked for. */
        cr_assert(fmud_run_until(c, &t, 0.255, &p) == 0, "%s", fmud_errmsg(c));
        cr_assert(p.points == 25 && p.time == 25 * 0.01, "%" PRIu64 " points, t %.17g",
                  p.points, p.time);
        /* The same time again (a retry) is answered where the session is. */
        cr_assert(fmud_run_until(c, &t, 0.255, &p) == 0, "%s", fmud_errmsg(c));
        cr_assert(p.points == 25 && p.state == PROTO_STATE_PAUSED);
        cr_assert(fmud_run_until(c, &t, 0.25, &p) == 0, "%s", fmud_errmsg(c));
        cr_assert(p.points == 25);
        /* A time behind the session's is refused and changes nothing. */
        daemon_assert_refused(c, fmud_run_until(c, &t, 0.1, &p), PROTO_E_INVALID, "past time");
        cr_assert(strstr(fmud_errmsg(c), "0.1") && strstr(fmud_errmsg(c), "before"), "%s",
                  fmud_errmsg(c));
        cr_assert(fmud_status(c, t.session, &st) == 0, "%s", fmud_errmsg(c));
        cr_assert(st.points == 25 && st.state == PROTO_STATE_PAUSED, "%" PRIu64 " points, %s",
                  st.points, proto_state_name(st.state));
        /* Past the stop time: to the stop time. */
        cr_assert(fmud_run_until(c, &t, 99.0, &p) == 0, "%s", fmud_errmsg(c));
        cr_assert(p.state == PROTO_STATE_FINISHED && p.time == 10.0, "%s t %.17g",
                  proto_state_name(p.state), p.time);
}

/* ---- get of one element --------------------------------------------------------------- */

#define PV_F(x) ((struct pv){ .type = PV_FLOAT, .f = (x) })

static double get_f64(uint64_t s, const char *name)
{
        const char *const names[] = { name };
        double v;

        cr_assert(fmud_get_f64(c, &(struct proto_target){ s, 0 }, names, 1, &v) == 0,
                  "get %s: %s", name, fmud_errmsg(c));
        return v;
}

static void get_refused(uint64_t s, const char *name, const char *needle)
{
        const char *const names[] = { "Float64_input", name };
        const struct pv *const *vals;

        daemon_assert_refused(c, fmud_get(c, &(struct proto_target){ s, 0 }, names, 2, &vals),
                              PROTO_E_NO_VARIABLE, name);
        cr_assert(strstr(fmud_errmsg(c), name) && strstr(fmud_errmsg(c), needle),
                  "%s: '%s' does not say '%s'", name, fmud_errmsg(c), needle);
}

Test(daemon_contract, get_names_one_element_of_an_array, .init = setup, .fini = teardown)
{
        /* Feedthrough: a vector of n = 4, a 3x2 matrix; outputs follow inputs at a step. */
        uint64_t s = load_path(FMUD_TEST_FMU_DIR "/Feedthrough.fmu", NULL);
        struct proto_target t = { s, 0 };
        struct pv vec[4] = { PV_F(1), PV_F(2), PV_F(3), PV_F(4) };
        struct pv mat[6] = { PV_F(11), PV_F(12), PV_F(21), PV_F(22), PV_F(31), PV_F(32) };
        struct pv v = { .type = PV_ARRAY, .a = { vec, 4 } };
        struct pv m = { .type = PV_ARRAY, .a = { mat, 6 } };
        struct proto_named_value nv[2] = { { daemon_str("Float64_vector_input"), &v },
                                           { daemon_str("Float64_matrix_input"), &m } };
        const char *const both[] = { "Float64_vector_output[4]", "Float64_matrix_output[3,1]" };
        const struct pv *const *vals;

        cr_assert(fmud_set(c, &t, nv, 2) == 0, "%s", fmud_errmsg(c));
        /* Before a step: from the value set. */
        cr_assert(get_f64(s, "Float64_vector_input[2]") == 2.0);
        cr_assert(get_f64(s, "Float64_matrix_input[2,2]") == 22.0);
        cr_assert(fmud_step(c, &t, 1, NULL) == 0, "%s", fmud_errmsg(c));
        /* After it: from the FMU, 1-based and row-major as the results file's columns. */
        cr_assert(get_f64(s, "Float64_vector_output[1]") == 1.0);
        cr_assert(fmud_get(c, &t, both, 2, &vals) == 0, "%s", fmud_errmsg(c));
        cr_assert(vals[0]->type == PV_FLOAT && vals[0]->f == 4.0);
        cr_assert(vals[1]->type == PV_FLOAT && vals[1]->f == 31.0);
        /* The whole array is still one name away. */
        cr_assert(fmud_get(c, &t, (const char *const[]){ "Float64_vector_output" }, 1, &vals) == 0);
        cr_assert(vals[0]->type == PV_ARRAY && vals[0]->a.n == 4);

        get_refused(s, "Float64_vector_output[5]", "dimensions [4]");
        get_refused(s, "Float64_vector_output[0]", "dimensions [4]");
        get_refused(s, "Float64_matrix_output[4,1]", "dimensions [3,2]");
        get_refused(s, "Float64_matrix_output[2]", "expected 2");
        get_refused(s, "Float64_vector_output[x]", "expected 1");
        get_refused(s, "Float64_input[1]", "not an array");
        get_refused(s, "nosuch[1]", "no variable");
        /* set takes whole variables. */
        nv[0] = (struct proto_named_value){ daemon_str("Float64_vector_input[1]"), &vec[0] };
        daemon_assert_refused(c, fmud_set(c, &t, nv, 1), PROTO_E_TYPE, "set of an element");
        cr_assert(strstr(fmud_errmsg(c), "whole"), "%s", fmud_errmsg(c));
        cr_assert(get_f64(s, "Float64_vector_input[1]") == 1.0, "nothing was applied");
}

/* ---- restore -------------------------------------------------------------------------- */

Test(daemon_contract, restore_answers_progress_and_the_new_generation, .init = setup,
     .fini = teardown)
{
        uint64_t gen, s = load_path(FMUD_EXAMPLES "/msd.ssp", &gen);
        struct proto_target t = { s, 0 };
        struct proto_restore_result rr;
        struct proto_progress p;
        struct daemon_raw_reply r;
        uint64_t snap;
        double at;
        char err[256];
        struct pw w;

        cr_assert(fmud_step(c, &t, 3, NULL) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_snapshot(c, &t, &snap, &at) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_step(c, &t, 5, NULL) == 0, "%s", fmud_errmsg(c));

        cr_assert(pw_init(&w) == 0);
        proto_restore_encode(&w, 42, &(struct proto_restore){ .t = t, .snapshot = snap });
        daemon_raw_send_pw(&raw, &w);
        daemon_raw_recv(&raw, &r);
        cr_assert(r.rep.ok && r.rep.id == 42, "restore: %s", r.message);
        /* Progress, as every operation that moves time ... */
        cr_assert(proto_progress_decode(r.rep.result, &p, err, sizeof(err)) == 0, "%s", err);
        cr_assert(p.state == PROTO_STATE_PAUSED && p.time == at && p.points == 3,
                  "%s t %.17g (snapshot at %.17g), %" PRIu64 " points",
                  proto_state_name(p.state), p.time, at, p.points);
        /* ... with the session and its new generation. */
        cr_assert(proto_restore_result_decode(r.rep.result, &rr, err, sizeof(err)) == 0, "%s",
                  err);
        cr_assert(rr.session == s && rr.generation == gen + 1, "session %" PRIu64 " gen %"
                  PRIu64, rr.session, rr.generation);
        daemon_raw_reply_fini(&r);
        pw_fini(&w);

        /* No such snapshot, no such subscription: invalid, as a value that names nothing. */
        daemon_assert_refused(c, fmud_restore(c, &t, 99, NULL), PROTO_E_INVALID, "snapshot 99");
        cr_assert(strstr(fmud_errmsg(c), "99"), "%s", fmud_errmsg(c));
        daemon_assert_refused(c, fmud_unsubscribe(c, &t, "s1.77"), PROTO_E_INVALID,
                              "unsubscribe s1.77");
        cr_assert(strstr(fmud_errmsg(c), "s1.77"), "%s", fmud_errmsg(c));
}

/* ---- warp and subscribe --------------------------------------------------------------- */

Test(daemon_contract, warp_and_subscribe_are_refused_once_a_session_is_final, .init = setup,
     .fini = teardown)
{
        /* Scripted alone runs to t = 1 in a moment. */
        struct proto_target a = { load_path(FMUD_MASTER_FMU_DIR "/Scripted.fmu", NULL), 0 };
        struct proto_target b = { load_path(FMUD_MASTER_FMU_DIR "/Scripted.fmu", NULL), 0 };
        const char *const x[] = { "x" };
        struct proto_session_status st;
        char topic[64];

        /* Allowed while the session can run. */
        cr_assert(fmud_warp(c, &a, 0.0, NULL) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_subscribe(c, &a, x, 1, 1, topic, sizeof(topic)) == 0, "%s",
                  fmud_errmsg(c));
        cr_assert(fmud_stop(c, &a, NULL) == 0, "%s", fmud_errmsg(c));
        daemon_assert_refused(c, fmud_warp(c, &a, 1.0, NULL), PROTO_E_STATE, "warp when stopped");
        cr_assert(strstr(fmud_errmsg(c), "stopped"), "%s", fmud_errmsg(c));
        daemon_assert_refused(c, fmud_subscribe(c, &a, x, 1, 1, topic, sizeof(topic)),
                              PROTO_E_STATE, "subscribe when stopped");

        cr_assert(fmud_start(c, &b, NULL) == 0, "%s", fmud_errmsg(c));
        daemon_wait_state(c, b.session, PROTO_STATE_FINISHED, &st);
        daemon_assert_refused(c, fmud_warp(c, &b, 1.0, NULL), PROTO_E_STATE, "warp when finished");
        daemon_assert_refused(c, fmud_subscribe(c, &b, x, 1, 1, topic, sizeof(topic)),
                              PROTO_E_STATE, "subscribe when finished");
        /* The refused warp changed nothing. */
        cr_assert(fmud_status(c, b.session, &st) == 0 && st.warp == 0.0, "warp %g", st.warp);
}
