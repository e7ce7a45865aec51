/*
 * daemon: every refusal, through libfmud against a real fmud. A refusal
 * names its code and a reason, changes nothing, and leaves the daemon
 * serving.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "daemon_fixture.h"
#include "support/tmpdir.h"

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

static uint64_t load_path(const char *path, uint64_t *ret_gen)
{
        struct proto_load a = { .path = daemon_str(path) };

        return daemon_load(c, &a, ret_gen);
}

/* Scripted alone: one worker, an unconnected input u, output x' = u. */
static uint64_t load_scripted(uint64_t *ret_gen)
{
        return load_path(FMUD_MASTER_FMU_DIR "/Scripted.fmu", ret_gen);
}

static double get1(uint64_t s, uint64_t gen, const char *name)
{
        const char *const names[] = { name };
        double v;
        int r = fmud_get_f64(c, &(struct proto_target){ s, gen }, names, 1, &v);

        cr_assert(r == 0, "get %s: %s", name, fmud_errmsg(c));
        return v;
}

Test(daemon_refuse, unknown_session, .init = setup, .fini = teardown)
{
        struct proto_target t = { 42, 0 };
        struct proto_session_status st;
        const char *const names[] = { "x" };
        const struct pv *const *vals;

        daemon_assert_refused(c, fmud_status(c, 42, &st), PROTO_E_NO_SESSION, "status");
        daemon_assert_refused(c, fmud_start(c, &t, NULL), PROTO_E_NO_SESSION, "start");
        daemon_assert_refused(c, fmud_pause(c, &t, NULL), PROTO_E_NO_SESSION, "pause");
        daemon_assert_refused(c, fmud_step(c, &t, 1, NULL), PROTO_E_NO_SESSION, "step");
        daemon_assert_refused(c, fmud_get(c, &t, names, 1, &vals), PROTO_E_NO_SESSION, "get");
        daemon_assert_refused(c, fmud_unload(c, &t), PROTO_E_NO_SESSION, "unload");
        /* An unloaded session is unknown too. */
        t.session = load_scripted(NULL);
        cr_assert(fmud_unload(c, &t) == 0, "%s", fmud_errmsg(c));
        daemon_assert_refused(c, fmud_start(c, &t, NULL), PROTO_E_NO_SESSION, "start after unload");
}

Test(daemon_refuse, wrong_state, .init = setup, .fini = teardown)
{
        struct proto_target t = { load_scripted(NULL), 0 };
        struct proto_session_status st;

        daemon_assert_refused(c, fmud_pause(c, &t, NULL), PROTO_E_STATE, "pause when loaded");
        daemon_assert_refused(c, fmud_resume(c, &t, NULL), PROTO_E_STATE, "resume when loaded");
        cr_assert(fmud_start(c, &t, NULL) == 0, "%s", fmud_errmsg(c));
        daemon_wait_state(c, t.session, PROTO_STATE_FINISHED, &st);
        daemon_assert_refused(c, fmud_start(c, &t, NULL), PROTO_E_STATE, "start when finished");
        daemon_assert_refused(c, fmud_step(c, &t, 1, NULL), PROTO_E_STATE, "step when finished");
        daemon_assert_refused(c, fmud_resume(c, &t, NULL), PROTO_E_STATE, "resume when finished");
        cr_assert(fmud_status(c, t.session, &st) == 0);
        cr_assert(st.state == PROTO_STATE_FINISHED && st.time == 1.0, "t %g", st.time);
}

Test(daemon_refuse, unknown_variable, .init = setup, .fini = teardown)
{
        struct proto_target t = { load_path(FMUD_EXAMPLES "/msd.ssp", NULL), 0 };
        const char *const nosuch_var[] = { "mass1.x1", "mass1.nosuch" };
        const char *const nosuch_inst[] = { "nosuch.x1" };
        const struct pv *const *vals;
        double one = 1.0;

        daemon_assert_refused(c, fmud_get(c, &t, nosuch_var, 2, &vals), PROTO_E_NO_VARIABLE,
                              "get mass1.nosuch");
        cr_assert(strstr(fmud_errmsg(c), "nosuch") != NULL, "names it: %s", fmud_errmsg(c));
        daemon_assert_refused(c, fmud_get(c, &t, nosuch_inst, 1, &vals), PROTO_E_NO_VARIABLE,
                              "get nosuch.x1");
        daemon_assert_refused(c, fmud_set_f64(c, &t, nosuch_var + 1, &one, 1),
                              PROTO_E_NO_VARIABLE, "set mass1.nosuch");
}

Test(daemon_refuse, an_invalid_name_is_refused_by_the_client, .init = setup, .fini = teardown)
{
        struct proto_target t = { load_path(FMUD_EXAMPLES "/msd.ssp", NULL), 0 };
        const char *const with_null[] = { "mass1.x1", NULL };
        const char *const empty[] = { "" };
        const struct pv *const *vals;
        char topic[64];

        cr_assert(fmud_subscribe(c, &t, with_null, 2, 1, topic, sizeof(topic)) == -EINVAL);
        cr_assert(strstr(fmud_errmsg(c), "invalid variable name") != NULL, "%s", fmud_errmsg(c));
        cr_assert(fmud_subscribe(c, &t, empty, 1, 1, topic, sizeof(topic)) == -EINVAL);
        cr_assert(fmud_get(c, &t, with_null, 2, &vals) == -EINVAL);
        /* Nothing reached the daemon: the connection goes on serving. */
        cr_assert(fmud_get(c, &t, with_null, 1, &vals) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_subscribe(c, &t, with_null, 1, 1, topic, sizeof(topic)) == 0, "%s",
                  fmud_errmsg(c));
}

Test(daemon_refuse, wrong_type, .init = setup, .fini = teardown)
{
        struct proto_target t = { load_path(FMUD_TEST_FMU_DIR "/Feedthrough.fmu", NULL), 0 };
        struct pv str = { .type = PV_STR, .s = { "text", 4 } };
        struct pv two[2] = { { .type = PV_FLOAT, .f = 1 }, { .type = PV_FLOAT, .f = 2 } };
        struct pv vec = { .type = PV_ARRAY, .a = { two, 2 } };
        struct pv big = { .type = PV_UINT, .u = 300 };
        struct proto_named_value v;

        v = (struct proto_named_value){ daemon_str("Float64_input"), &str };
        daemon_assert_refused(c, fmud_set(c, &t, &v, 1), PROTO_E_TYPE, "string to Float64");
        /* The vector has n = 4 elements. */
        v = (struct proto_named_value){ daemon_str("Float64_vector_input"), &vec };
        daemon_assert_refused(c, fmud_set(c, &t, &v, 1), PROTO_E_TYPE, "2 elements for 4");
        v = (struct proto_named_value){ daemon_str("Int8_input"), &big };
        daemon_assert_refused(c, fmud_set(c, &t, &v, 1), PROTO_E_TYPE, "300 to Int8");
        v = (struct proto_named_value){ daemon_str("Float64_input"), &vec };
        daemon_assert_refused(c, fmud_set(c, &t, &v, 1), PROTO_E_TYPE, "array to a scalar");
        /* Nothing was applied. */
        cr_assert(get1(t.session, 0, "Float64_input") == 2.5);
}

Test(daemon_refuse, paths_outside_the_allowed_directories, .init = setup, .fini = teardown)
{
        struct proto_load a = { 0 };
        char *link = daemon_path(&d, "escape.ssd"), *dotdot = NULL;
        struct proto_list_result l;

        /* A readable, valid scenario, but not below an allowed directory. */
        a.path = daemon_str(FMUD_TEST_SRC_DIR "/ssp/valid/units.ssd");
        daemon_assert_refused(c, fmud_load(c, &a, NULL, NULL), PROTO_E_DENIED, "source tree");
        /* A symbolic link inside an allowed directory pointing out of it. */
        cr_assert(symlink(FMUD_TEST_SRC_DIR "/ssp/valid/units.ssd", link) == 0);
        a.path = daemon_str(link);
        daemon_assert_refused(c, fmud_load(c, &a, NULL, NULL), PROTO_E_DENIED, "symlink");
        /* Dot-dot out of an allowed directory. */
        cr_assert(asprintf(&dotdot, "%s/../../../../../../../../etc/passwd", d.dir) > 0);
        a.path = daemon_str(dotdot);
        daemon_assert_refused(c, fmud_load(c, &a, NULL, NULL), PROTO_E_DENIED, "dot-dot");
        cr_assert(fmud_list(c, &l) == 0);
        cr_assert(l.n == 0);
        free(link);
        free(dotdot);
}

Test(daemon_refuse, an_invalid_scenario_names_the_problem, .init = setup, .fini = teardown)
{
        static const char ssd[] =
                "<?xml version=\"1.0\"?>\n"
                "<ssd:SystemStructureDescription version=\"1.0\" name=\"bad\" "
                "xmlns:ssd=\"http://ssp-standard.org/SSP1/SystemStructureDescription\">\n"
                "<ssd:System name=\"bad\"><ssd:Elements>\n"
                "<ssd:Component name=\"a\" source=\"resources/Missing.fmu\"/>\n"
                "</ssd:Elements></ssd:System></ssd:SystemStructureDescription>\n";
        char *path = daemon_path(&d, "bad/SystemStructure.ssd");
        struct proto_load a = { .path = daemon_str(path) };

        cr_assert(tmpdir_write(d.dir, "bad/SystemStructure.ssd", ssd, sizeof(ssd) - 1) == 0);
        daemon_assert_refused(c, fmud_load(c, &a, NULL, NULL), PROTO_E_INVALID, "invalid");
        cr_assert(strstr(fmud_errmsg(c), "Missing.fmu") != NULL, "%s", fmud_errmsg(c));
        free(path);
}

Test(daemon_refuse, a_stale_generation_is_refused_and_not_applied, .init = setup,
     .fini = teardown)
{
        const char *const u[] = { "u" };
        uint64_t gen, gen2, snap, s = load_scripted(&gen);
        struct proto_target old = { s, gen };
        double five = 5.0, two = 2.0;

        cr_assert(fmud_snapshot(c, &old, &snap, NULL) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_set_f64(c, &old, u, &two, 1) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_step(c, &old, 2, NULL) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_restore(c, &old, snap, &gen2) == 0, "%s", fmud_errmsg(c));
        cr_assert(gen2 != gen);
        /* The old generation is refused, whatever the operation. */
        daemon_assert_refused(c, fmud_set_f64(c, &old, u, &five, 1), PROTO_E_STALE, "set");
        daemon_assert_refused(c, fmud_step(c, &old, 1, NULL), PROTO_E_STALE, "step");
        daemon_assert_refused(c, fmud_start(c, &old, NULL), PROTO_E_STALE, "start");
        /* ... and nothing of it was applied: u is the snapshot's, time did not move. */
        cr_assert(get1(s, gen2, "u") == 0.0, "u %g", get1(s, gen2, "u"));
        cr_assert(get1(s, 0, "x") == 0.0);
        cr_assert(fmud_step(c, &(struct proto_target){ s, gen2 }, 1, NULL) == 0, "%s",
                  fmud_errmsg(c));
        cr_assert(get1(s, gen2, "x") == 0.0, "x moved with u = %g", get1(s, gen2, "u"));
        /* The new generation is served. */
        cr_assert(fmud_set_f64(c, &(struct proto_target){ s, gen2 }, u, &five, 1) == 0, "%s",
                  fmud_errmsg(c));
        cr_assert(fmud_step(c, &(struct proto_target){ s, gen2 }, 1, NULL) == 0, "%s",
                  fmud_errmsg(c));
        cr_assert(get1(s, gen2, "u") == 5.0);
        cr_assert(get1(s, gen2, "x") > 0.0);
}

Test(daemon_refuse, garbage_gets_an_error_and_the_daemon_keeps_serving, .init = setup,
     .fini = teardown)
{
        static const char junk[] = "\xc1 not msgpack \xff";
        void *ctx = zmq_ctx_new(), *s = zmq_socket(ctx, ZMQ_DEALER);
        int linger = 0, timeout = 30000;
        char buf[1024];
        struct proto_daemon_status ds;

        cr_assert(zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof(linger)) == 0);
        cr_assert(zmq_setsockopt(s, ZMQ_RCVTIMEO, &timeout, sizeof(timeout)) == 0);
        cr_assert(zmq_connect(s, d.endpoint) == 0);
        cr_assert(zmq_send(s, junk, sizeof(junk) - 1, 0) == (int)sizeof(junk) - 1);
        /* A two-frame message, which no request is. */
        cr_assert(zmq_send(s, "a", 1, ZMQ_SNDMORE) == 1);
        cr_assert(zmq_send(s, "b", 1, 0) == 1);
        cr_assert(zmq_recv(s, buf, sizeof(buf), 0) > 0, "an error reply to garbage");
        zmq_close(s);
        zmq_ctx_term(ctx);
        cr_assert(fmud_status_daemon(c, &ds) == 0, "%s", fmud_errmsg(c));
}
