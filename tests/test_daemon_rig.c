/*
 * daemon_rig: rig ports declared by a load's arguments against a real
 * fmud (daemon_fixture.h): status reports the session's rig (its state,
 * policy and counters), and a port the load may not declare, or a
 * policy or timeout out of range, refuses the load with the name and
 * the reason, leaving nothing behind.
 */
#include <criterion/criterion.h>
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

TestSuite(daemon_rig, .init = setup, .fini = teardown);

static struct proto_str ins[2], outs[1];

static struct proto_load feedthrough(void)
{
        ins[0] = daemon_str("Float64_input=-1");
        ins[1] = daemon_str("Int32_input");
        outs[0] = daemon_str("Float64_output");
        return (struct proto_load){ .path = daemon_str(FMUD_TEST_FMU_DIR "/Feedthrough.fmu"),
                                    .has_stop = true, .stop = 0.1, .has_step = true,
                                    .step = 0.01, .n_rig_in = 2, .rig_in = ins,
                                    .n_rig_out = 1, .rig_out = outs,
                                    .rig_policy = daemon_str("safe"), .has_rig_timeout = true,
                                    .rig_timeout_ms = 50 };
}

Test(daemon_rig, status_reports_the_rig_its_policy_and_counters)
{
        struct proto_load a = feedthrough();
        struct proto_session_status st;
        uint64_t s = daemon_load(c, &a, NULL);

        cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
        cr_assert(st.has_rig);
        cr_assert(daemon_str_eq(st.rig.state, "none"));
        cr_assert(daemon_str_eq(st.rig.policy, "safe"));
        cr_assert(!st.rig.in_force);
        cr_assert(fmud_start(c, &(struct proto_target){ s, 0 }, NULL) == 0, "%s",
                  fmud_errmsg(c));
        daemon_wait_state(c, s, PROTO_STATE_FINISHED, &st);
        cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
        /* No rig attached: nothing applied, and no point counts as missing. */
        cr_assert(st.has_rig);
        cr_assert(st.rig.applied + st.rig.missing + st.rig.late + st.rig.bad == 0);
}

Test(daemon_rig, a_session_without_rig_ports_reports_no_rig)
{
        struct proto_load a = feedthrough();
        struct proto_session_status st;
        uint64_t s;

        a.n_rig_in = a.n_rig_out = 0;
        a.rig_policy = daemon_str("");
        a.has_rig_timeout = false;
        s = daemon_load(c, &a, NULL);
        cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
        cr_assert(!st.has_rig);
}

static void refused(struct proto_load *a, int code, const char *text)
{
        pid_t kids[8];
        uint64_t s;
        int r = fmud_load(c, a, &s, NULL);

        daemon_assert_refused(c, r, code, text);
        cr_assert(strstr(fmud_errmsg(c), text), "%s", fmud_errmsg(c));
        cr_assert(daemon_children(d.pid, kids, 8) == 0);
}

Test(daemon_rig, ports_policies_and_timeouts_out_of_bounds_refuse_the_load)
{
        struct proto_load a = feedthrough();

        ins[1] = daemon_str("nothing");
        refused(&a, PROTO_E_INVALID, "'nothing': rig input: no such variable");
        a = feedthrough();
        ins[1] = daemon_str("String_input");
        refused(&a, PROTO_E_INVALID, "String: only Float32, Float64, integer and Boolean "
                "scalars are rig ports");
        a = feedthrough();
        outs[0] = daemon_str("Float64_input");
        refused(&a, PROTO_E_INVALID, "not an output");
        a = feedthrough();
        a.rig_policy = daemon_str("later");
        refused(&a, PROTO_E_BAD_REQUEST, "args.rigPolicy: expected \"hold\", \"safe\" or "
                "\"pause\"");
        a = feedthrough();
        a.rig_timeout_ms = 0;
        refused(&a, PROTO_E_BAD_REQUEST, "args.rigTimeoutMs: expected 1 to 60000");
        /* The daemon is unharmed: the same load without the mistake goes through. */
        a = feedthrough();
        (void) daemon_load(c, &a, NULL);
}
