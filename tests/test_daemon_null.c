/*
 * daemon_null: every function of libfmud's API (client/fmud.h, exported
 * by client/libfmud.map) given NULL or empty arguments returns an error,
 * says which argument where it has a handle to say it in, and leaves the
 * handle working: against a real fmud, so that nothing is sent that the
 * daemon would have to refuse instead.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdio.h>
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

TestSuite(daemon_null, .init = setup, .fini = teardown);

/* r is -EINVAL and the handle's message is want. */
static void said(int r, const char *want)
{
        cr_assert(eq(int, r, -EINVAL), "%s: %d", want, r);
        cr_assert(eq(str, (char *)fmud_errmsg(c), (char *)want));
}

/* The handle still serves a request. */
static void still_works(void)
{
        struct proto_daemon_status ds;

        cr_assert(eq(int, fmud_status_daemon(c, &ds), 0), "%s", fmud_errmsg(c));
}

Test(daemon_null, the_handle_and_connection_functions)
{
        struct fmud *x = NULL;
        char err[128] = "", buf[8] = "x";

        cr_assert(eq(int, fmud_connect(NULL, NULL, &x, err, sizeof(err)), -EINVAL));
        cr_assert(eq(str, err, "invalid endpoint"));
        cr_assert(fmud_connect("", NULL, &x, err, sizeof(err)) < 0);
        cr_assert(x == NULL);
        cr_assert(eq(int, fmud_connect(d.endpoint, NULL, NULL, err, sizeof(err)), -EINVAL));
        cr_assert(eq(str, err, "fmud_connect: the handle's place is missing"));
        fmud_close(NULL);
        cr_assert(eq(str, (char *)fmud_errmsg(NULL), "no connection (a NULL handle)"));
        cr_assert(eq(int, fmud_errcode(NULL), -1));
        fmud_set_timeout(NULL, 10);
        cr_assert(eq(str, (char *)fmud_server(NULL), ""));
        cr_assert(eq(str, (char *)fmud_pub_endpoint(NULL), ""));
        cr_assert(fmud_load_warnings(NULL) == NULL);
        cr_assert(fmud_load_out(NULL) == NULL);
        cr_assert(fmud_str((struct proto_str){ "abc", 3 }, NULL, 8) == NULL);
        cr_assert(eq(str, (char *)fmud_str((struct proto_str){ NULL, 3 }, buf, sizeof(buf)), ""));
        still_works();
}

Test(daemon_null, the_session_operations)
{
        struct proto_target t = { 1, 0 };
        struct proto_progress p;
        struct fmud_results rr;
        char buf[8];

        cr_assert(eq(int, fmud_load(NULL, NULL, NULL, NULL), -EINVAL));
        said(fmud_load(c, NULL, NULL, NULL), "load: args is missing");
        said(fmud_unload(c, NULL), "unload: the target is missing");
        said(fmud_start(c, NULL, &p), "start: the target is missing");
        said(fmud_pause(c, NULL, &p), "pause: the target is missing");
        said(fmud_resume(c, NULL, &p), "resume: the target is missing");
        said(fmud_stop(c, NULL, &p), "stop: the target is missing");
        said(fmud_warp(c, NULL, 1, &p), "warp: the target is missing");
        said(fmud_step(c, NULL, 1, &p), "step: the target is missing");
        said(fmud_run_until(c, NULL, 1, &p), "run-until: the target is missing");
        said(fmud_status(c, 1, NULL), "status: the result's place is missing");
        said(fmud_status_daemon(c, NULL), "status: the result's place is missing");
        said(fmud_list(c, NULL), "list: the result is missing");
        said(fmud_logs(c, &t, NULL), "logs: the result's place is missing");
        said(fmud_logs(c, NULL, &(struct proto_logs_result){ 0 }), "logs: the target is missing");
        said(fmud_snapshot(c, NULL, NULL, NULL), "snapshot: the target is missing");
        said(fmud_restore(c, NULL, 1, NULL), "restore: the target is missing");
        said(fmud_results_read(c, NULL, 0, buf, 1, &rr), "results: the target is missing");
        said(fmud_results_read(c, &t, 0, NULL, 1, &rr), "results: the buffer is missing");
        said(fmud_results_read(c, &t, 0, buf, 1, NULL), "results: the result's place is missing");
        said(fmud_results_read(c, &t, 0, buf, PROTO_RESULTS_CHUNK + 1, &rr),
             "results: more than a chunk asked for");
        said(fmud_put_file(c, NULL, "fmu", NULL, NULL), "put: the path is missing");
        cr_assert(eq(int, fmud_results_read(NULL, &t, 0, buf, 1, &rr), -EINVAL));
        cr_assert(eq(int, fmud_put_file(NULL, "x", "fmu", NULL, NULL), -EINVAL));
        cr_assert(eq(int, fmud_unload(NULL, &t), -EINVAL));
        cr_assert(eq(int, fmud_step(NULL, &t, 1, NULL), -EINVAL));
        cr_assert(eq(int, fmud_status(NULL, 1, NULL), -EINVAL));
        cr_assert(eq(int, fmud_list(NULL, NULL), -EINVAL));
        cr_assert(eq(int, fmud_shutdown(NULL), -EINVAL));
        still_works();
}

Test(daemon_null, the_value_operations)
{
        static const char *const one_null[] = { NULL };
        static const char *const one_empty[] = { "" };
        struct proto_target t = { 1, 0 };
        const struct pv *const *vals;
        const struct fmud_var *vars;
        struct proto_named_value nv = { { "x", 1 }, NULL };
        double out[1], in[1] = { 0 };
        size_t n;

        said(fmud_get(c, NULL, one_empty, 1, &vals), "get: the target is missing");
        said(fmud_get(c, &t, one_empty, 1, NULL), "get: the values' place is missing");
        said(fmud_get(c, &t, NULL, 1, &vals), "names: the list is missing");
        cr_assert(eq(int, fmud_get(c, &t, one_null, 1, &vals), -EINVAL));
        cr_assert(eq(str, (char *)fmud_errmsg(c), "invalid variable name"));
        cr_assert(eq(int, fmud_get(c, &t, one_empty, 1, &vals), -EINVAL));
        cr_assert(eq(str, (char *)fmud_errmsg(c), "invalid variable name"));
        said(fmud_get_at(c, &t, one_empty, 1, NULL, NULL), "get: the values' place is missing");
        said(fmud_get_f64(c, &t, one_empty, 1, NULL), "get: the values' place is missing");
        cr_assert(eq(int, fmud_get_f64(c, &t, one_null, 1, out), -EINVAL));
        said(fmud_set(c, NULL, &nv, 1), "set: the target is missing");
        said(fmud_set(c, &t, NULL, 1), "set: the values is missing");
        said(fmud_set(c, &t, &nv, 1), "set: a value is missing");
        /* Too many is said before any of them is looked at. */
        cr_assert(eq(int, fmud_set(c, &t, &nv, PROTO_MAX_ITEMS + 1), -E2BIG));
        cr_assert(eq(str, (char *)fmud_errmsg(c), "at most 1048576 values"));
        nv = (struct proto_named_value){ { NULL, 1 }, &(struct pv){ .type = PV_FLOAT } };
        said(fmud_set_at(c, &t, &nv, 1, NULL), "set: a name is missing");
        said(fmud_set_f64(c, &t, one_empty, NULL, 1), "set: the values is missing");
        cr_assert(eq(int, fmud_set_f64(c, &t, one_null, in, 1), -EINVAL));
        cr_assert(eq(str, (char *)fmud_errmsg(c), "invalid variable name"));
        said(fmud_vars(c, NULL, &vars, &n, NULL), "vars: the target is missing");
        said(fmud_vars(c, &t, NULL, &n, NULL), "vars: the result's place is missing");
        said(fmud_vars(c, &t, &vars, NULL, NULL), "vars: the result's place is missing");
        cr_assert(eq(int, fmud_get(NULL, &t, one_empty, 1, &vals), -EINVAL));
        cr_assert(eq(int, fmud_set_f64(NULL, &t, one_empty, in, 1), -EINVAL));
        cr_assert(eq(int, fmud_vars(NULL, &t, &vars, &n, NULL), -EINVAL));
        still_works();
}

Test(daemon_null, the_subscriptions)
{
        static const char *const one_null[] = { NULL };
        struct proto_target t = { 1, 0 };
        struct fmud_msg m;
        char topic[64];

        said(fmud_subscribe(c, NULL, one_null, 1, 1, topic, sizeof(topic)),
             "subscribe: the target is missing");
        said(fmud_subscribe(c, &t, NULL, 1, 1, topic, sizeof(topic)),
             "names: the list is missing");
        cr_assert(eq(int, fmud_subscribe(c, &t, one_null, 1, 1, topic, sizeof(topic)), -EINVAL));
        cr_assert(eq(str, (char *)fmud_errmsg(c), "invalid variable name"));
        said(fmud_subscribe_every(c, &t, one_null, 1, 1, true, NULL, 0), "invalid variable name");
        said(fmud_unsubscribe(c, &t, NULL), "unsubscribe: the topic is missing");
        said(fmud_unsubscribe(c, NULL, "v1"), "unsubscribe: the target is missing");
        said(fmud_unsubscribe(c, &t, ""), "unsubscribe: the topic is empty or too long");
        said(fmud_next(c, 0, NULL), "next: the message's place is missing");
        cr_assert(eq(int, fmud_subscribe(NULL, &t, one_null, 1, 1, NULL, 0), -EINVAL));
        cr_assert(eq(int, fmud_unsubscribe(NULL, &t, "v1"), -EINVAL));
        cr_assert(eq(int, fmud_events(NULL, true), -EINVAL));
        cr_assert(eq(int, fmud_logs_follow(NULL, 1, true), -EINVAL));
        cr_assert(eq(int, fmud_telemetry(NULL, 1, true), -EINVAL));
        cr_assert(eq(int, fmud_next(NULL, 0, &m), -EINVAL));
        still_works();
}

Test(daemon_null, the_rig_values_and_keys)
{
        struct fmud_rig *rig = NULL;
        struct pv *v = NULL;
        char err[128] = "", key[FMUD_KEY_Z85_LEN + 1], buf[8] = "x";
        size_t n = 7;
        double x[1];

        said(fmud_rig_open(c, 1, NULL), "rig: the rig's place is missing");
        cr_assert(eq(int, fmud_rig_open(NULL, 1, &rig), -EINVAL));
        cr_assert(fmud_rig_ports(NULL, false, &n) == NULL);
        cr_assert(eq(sz, n, 0));
        cr_assert(fmud_rig_ports(NULL, true, NULL) == NULL);
        cr_assert(eq(int, fmud_rig_write(NULL, x, 1), -EINVAL));
        cr_assert(eq(int, fmud_rig_wait(NULL, 0, NULL), -EINVAL));
        cr_assert(eq(int, fmud_rig_read(NULL, x, 1, NULL), -EINVAL));
        fmud_rig_close(NULL);
        cr_assert(eq(int, fmud_value_parse(NULL, &v, err, sizeof(err)), -EINVAL));
        cr_assert(eq(str, err, "no value text"));
        cr_assert(eq(int, fmud_value_parse("1", NULL, err, sizeof(err)), -EINVAL));
        cr_assert(eq(str, err, "no place for the value"));
        /* Empty text is a value: the empty string. */
        cr_assert(eq(int, fmud_value_parse("", &v, err, sizeof(err)), 0));
        cr_assert(v != NULL && v->type == PV_STR && v->s.len == 0);
        fmud_value_free(v);
        fmud_value_free(NULL);
        cr_assert(eq(sz, fmud_value_format(NULL, buf, sizeof(buf)), 0));
        cr_assert(eq(str, buf, ""));
        cr_assert(fmud_value_format(&(struct pv){ .type = PV_BOOL, .b = true }, NULL, 8) > 0);
        cr_assert(eq(int, fmud_keygen(NULL, err, sizeof(err)), -EINVAL));
        cr_assert(eq(str, err, "empty key name: Invalid argument"));
        cr_assert(eq(int, fmud_keygen("", NULL, 0), -EINVAL));
        cr_assert(eq(int, fmud_key_read(NULL, key, err, sizeof(err)), -EINVAL));
        cr_assert(eq(str, err, "no key file named: Invalid argument"));
        cr_assert(eq(int, fmud_key_read("", key, err, sizeof(err)), -EINVAL));
        cr_assert(eq(int, fmud_key_read("/etc/hostname", NULL, err, sizeof(err)), -EINVAL));
        cr_assert(eq(str, err, "no place for the key: Invalid argument"));
        still_works();
}

/* fmud_fmi_add() and fmud_fmi_add_state() take only the calls they can make whole. */
Test(daemon_null, a_batch_refuses_a_call_that_needs_arguments_when_it_is_added)
{
        struct fmud_batch *b = fmud_fmi_batch_new();

        cr_assert(b != NULL);
        cr_assert(eq(int, fmud_fmi_add(b, 1, "doStep"), -EINVAL));
        cr_assert(eq(int, fmud_fmi_add(b, 1, "serializeFMUState"), -EINVAL));
        cr_assert(eq(int, fmud_fmi_add(b, 1, "bogusFn"), -EINVAL));
        cr_assert(eq(int, fmud_fmi_add(b, 1, NULL), -EINVAL));
        cr_assert(eq(int, fmud_fmi_add_state(b, 1, "doStep", 1), -EINVAL));
        cr_assert(eq(int, fmud_fmi_add(b, 1, "terminate"), 0));
        cr_assert(eq(int, fmud_fmi_add_state(b, 1, "serializeFMUState", 1), 0));
        fmud_fmi_batch_free(b);
}
