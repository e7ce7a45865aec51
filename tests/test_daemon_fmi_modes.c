/*
 * daemon: FMI-level instances beyond stepping (PROTOCOL.md "instantiate",
 * "fmi", "free"): Event Mode calls on ClockedDeriv, fmi3Reset, an FMU that
 * answers Discard or crashes (Misbehave), an instance made from uploaded
 * content (and how fmuctl list shows it), what instantiate refuses as load
 * does, and that sessions and instances keep to their own operations.
 * Through libfmud against a real daemon.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon_fixture.h"
#include "support/run.h"

#define LINEAR_ODE      FMUD_TEST_FMU_DIR "/LinearOde.fmu"
#define CLOCKED_DERIV   FMUD_TEST_FMU_DIR "/ClockedDeriv.fmu"
#define MISBEHAVE       FMUD_TEST_FMU_DIR "/Misbehave.fmu"
#define LINEAR_ODE2     FMUD_TEST_FMU_DIR "/LinearOde2.fmu"

static struct fmud_daemon d;
static struct fmud *c;
static struct fmud_batch *b;

static void setup(void)
{
        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        b = fmud_fmi_batch_new();
        cr_assert(b != NULL);
}

static void teardown(void)
{
        fmud_fmi_batch_free(b);
        fmud_close(c);
        daemon_stop(&d);
}

TestSuite(daemon_fmi_modes, .init = setup, .fini = teardown, .timeout = 120);

static uint64_t instantiate(struct proto_instantiate a)
{
        uint64_t id = 0;

        cr_assert(eq(int, fmud_instantiate(c, &a, &id), 0), "%s", fmud_errmsg(c));
        return id;
}

static void submit(void)
{
        cr_assert(eq(int, fmud_fmi_submit(c, b), 0), "%s", fmud_errmsg(c));
}

/* A bool of call i's result map. */
static bool flag(size_t i, const char *key)
{
        const struct pv *r = fmud_fmi_result(b, i);
        bool v = false;

        cr_assert(r != NULL && r->type == PV_MAP);
        cr_assert(pv_bool(pv_get(r, key), &v) == 0, "no %s", key);
        return v;
}

Test(daemon_fmi_modes, event_mode_calls_follow_the_state_machine)
{
        uint64_t cd = instantiate((struct proto_instantiate){
                .fmu = daemon_str(CLOCKED_DERIV), .event_mode_used = true });
        uint64_t lin = instantiate((struct proto_instantiate){ .fmu = daemon_str(LINEAR_ODE) });

        /* With eventModeUsed, Initialization Mode ends in Event Mode (FMI 3.0 section 4.2). */
        fmud_fmi_add(b, cd, "enterInitializationMode");
        fmud_fmi_add(b, cd, "exitInitializationMode");
        fmud_fmi_add(b, cd, "updateDiscreteStates");
        fmud_fmi_add(b, cd, "enterStepMode");
        fmud_fmi_add_do_step(b, cd, 0, 0.05);
        fmud_fmi_add(b, cd, "enterEventMode");
        fmud_fmi_add(b, cd, "updateDiscreteStates");
        fmud_fmi_add(b, cd, "enterStepMode");
        submit();
        cr_assert(eq(sz, fmud_fmi_count(b), 8));
        cr_assert(not(flag(2, "terminateSimulation")));
        cr_assert(not(flag(6, "discreteStatesNeedUpdate")));
        cr_assert(eq(int, fmud_fmi_result(b, 5)->type, PV_NIL));
        /* Step Mode refuses a second enterStepMode; an FMU without Event Mode refuses it. */
        fmud_fmi_batch_clear(b);
        fmud_fmi_add(b, cd, "enterStepMode");
        daemon_assert_refused(c, fmud_fmi_submit(c, b), PROTO_E_STATE, "enterStepMode twice");
        cr_assert(strstr(fmud_errmsg(c), "fmi3EnterStepMode") != NULL, "%s", fmud_errmsg(c));
        fmud_fmi_batch_clear(b);
        fmud_fmi_add(b, lin, "enterInitializationMode");
        fmud_fmi_add(b, lin, "exitInitializationMode");
        fmud_fmi_add(b, lin, "enterEventMode");
        daemon_assert_refused(c, fmud_fmi_submit(c, b), PROTO_E_UNSUPPORTED, "no Event Mode");
        cr_assert(eq(long, fmud_fmi_refused(b), 2));
        cr_assert(strstr(fmud_errmsg(c), "hasEventMode is false") != NULL, "%s",
                  fmud_errmsg(c));
}

Test(daemon_fmi_modes, reset_returns_an_instance_to_its_start)
{
        uint64_t a = instantiate((struct proto_instantiate){ .fmu = daemon_str(LINEAR_ODE) });
        const uint32_t u0 = 10, y0 = 20;
        const double two = 2.0;
        double y;

        fmud_fmi_add(b, a, "enterInitializationMode");
        fmud_fmi_add(b, a, "exitInitializationMode");
        fmud_fmi_add_set_f64(b, a, &u0, &two, 1);
        fmud_fmi_add_do_step(b, a, 0, 0.5);
        fmud_fmi_add_get_f64(b, a, &y0, 1);
        submit();
        cr_assert(eq(int, fmud_fmi_f64(b, 4, &y, 1), 0));
        cr_assert(eq(dbl, y, exp(-0.5) + 2.0));
        /* fmi3Reset: back to Instantiated, start values again (FMI 3.0 section 2.3.1). */
        fmud_fmi_batch_clear(b);
        fmud_fmi_add(b, a, "reset");
        fmud_fmi_add(b, a, "enterInitializationMode");
        fmud_fmi_add(b, a, "exitInitializationMode");
        fmud_fmi_add_get_f64(b, a, &y0, 1);
        submit();
        cr_assert(eq(int, fmud_fmi_f64(b, 3, &y, 1), 0));
        cr_assert(eq(dbl, y, 1.0), "x0 + u0 with their start values");
}

Test(daemon_fmi_modes, an_instance_from_uploaded_content_is_listed_as_one)
{
        char sha[FMUD_SHA256_HEX + 1];
        struct proto_session_status st;
        struct proto_list_result l;
        uint64_t a;

        cr_assert(eq(int, fmud_put_file(c, LINEAR_ODE, "fmu", sha, NULL), 0), "%s",
                  fmud_errmsg(c));
        a = instantiate((struct proto_instantiate){ .content = daemon_str(sha),
                                                    .instance_name = daemon_str("up") });
        cr_assert(eq(int, fmud_status(c, a, &st), 0), "%s", fmud_errmsg(c));
        cr_assert(eq(int, st.state, PROTO_STATE_LOADED));
        cr_assert(daemon_str_eq(st.name, "up"));
        cr_assert(eq(int, fmud_list(c, &l), 0), "%s", fmud_errmsg(c));
        cr_assert(eq(u32, l.n, 1));
        cr_assert(daemon_str_eq(l.sessions[0].kind, "instance"));
        {
                /* fmuctl list says so too. */
                struct run_result res = { 0 };

                cr_assert(run_capture((char *[]){ FMUD_FMUCTL, "list", "--endpoint", d.endpoint,
                                                  NULL }, &res) == 0);
                cr_assert(eq(int, res.exit_code, 0), "%s", res.err);
                cr_assert(strstr(res.out, "up  {instance}") != NULL, "%s", res.out);
                run_result_fini(&res);
                cr_assert(run_capture((char *[]){ FMUD_FMUCTL, "list", "--json", "--endpoint",
                                                  d.endpoint, NULL }, &res) == 0);
                cr_assert(strstr(res.out, "\"kind\": \"instance\"") != NULL ||
                          strstr(res.out, "\"kind\":\"instance\"") != NULL, "%s", res.out);
                run_result_fini(&res);
        }
        fmud_fmi_add(b, a, "enterInitializationMode");
        fmud_fmi_add(b, a, "exitInitializationMode");
        submit();
}

Test(daemon_fmi_modes, sessions_and_instances_keep_to_their_own_operations)
{
        uint64_t a = instantiate((struct proto_instantiate){ .fmu = daemon_str(LINEAR_ODE),
                                                             .instance_name = daemon_str("a") });
        uint64_t session = daemon_load(c, &(struct proto_load){ .path = daemon_str(LINEAR_ODE) },
                                       NULL);
        struct proto_list_result l;
        bool found = false;

        /* An instance has no master to start; a session takes no fmi calls, nor free. */
        daemon_assert_refused(c, fmud_start(c, &(struct proto_target){ a, 0 }, NULL),
                              PROTO_E_STATE, "start of an instance");
        cr_assert(strstr(fmud_errmsg(c), "is an FMI-level instance, not a session") != NULL,
                  "%s", fmud_errmsg(c));
        fmud_fmi_add(b, session, "terminate");
        daemon_assert_refused(c, fmud_fmi_submit(c, b), PROTO_E_STATE, "fmi on a session");
        cr_assert(strstr(fmud_errmsg(c), "is a session, not an FMI-level instance") != NULL,
                  "%s", fmud_errmsg(c));
        daemon_assert_refused(c, fmud_free_instance(c, session), PROTO_E_STATE, "free a session");
        cr_assert(strstr(fmud_errmsg(c), "not an FMI-level instance: unload it") != NULL, "%s",
                  fmud_errmsg(c));
        /* list shows the instance as one, by its instanceName; the session as a session. */
        cr_assert(eq(int, fmud_list(c, &l), 0), "%s", fmud_errmsg(c));
        for (uint32_t i = 0; i < l.n; i++)
                if (l.sessions[i].session == a) {
                        found = true;
                        cr_assert(daemon_str_eq(l.sessions[i].kind, "instance"));
                        cr_assert(daemon_str_eq(l.sessions[i].name, "a"));
                } else {
                        cr_assert(eq(u32, l.sessions[i].kind.len, 0));
                }
        cr_assert(found);
        /* free frees it; then its number is gone. */
        cr_assert(eq(int, fmud_free_instance(c, a), 0), "%s", fmud_errmsg(c));
        daemon_assert_refused(c, fmud_free_instance(c, a), PROTO_E_NO_SESSION, "freed twice");
        cr_assert(strstr(fmud_errmsg(c), "no instance") != NULL, "%s", fmud_errmsg(c));
        cr_assert(eq(int, fmud_unload(c, &(struct proto_target){ session, 0 }), 0), "%s",
                  fmud_errmsg(c));
}

/* instantiate a, asserting the refusal's code and a text its message holds. */
static void refused(struct proto_instantiate a, enum proto_err code, const char *text)
{
        uint64_t id = 0;

        daemon_assert_refused(c, fmud_instantiate(c, &a, &id), code, text);
        cr_assert(strstr(fmud_errmsg(c), text) != NULL, "'%s' does not say '%s'",
                  fmud_errmsg(c), text);
}

Test(daemon_fmi_modes, instantiate_refuses_what_load_refuses)
{
        struct proto_list_result l;

        refused((struct proto_instantiate){ .fmu = daemon_str("/etc/passwd.fmu") },
                PROTO_E_DENIED, "/etc/passwd.fmu");
        refused((struct proto_instantiate){ .fmu = daemon_str(FMUD_EXAMPLES "/msd.ssp") },
                PROTO_E_INVALID, "is not a .fmu");
        refused((struct proto_instantiate){ .fmu = daemon_str(LINEAR_ODE),
                                            .interface = daemon_str("me") },
                PROTO_E_BAD_REQUEST, "args.interface: expected \"cs\"");
        refused((struct proto_instantiate){ .fmu = daemon_str(LINEAR_ODE),
                                            .content = daemon_str("ab") },
                PROTO_E_BAD_REQUEST, "args.content: not with args.fmu");
        {
                /* Uploaded content that is no FMU: named as the upload, not by the daemon's path. */
                char sha[FMUD_SHA256_HEX + 1];

                cr_assert(eq(int, fmud_put_file(c, FMUD_EXAMPLES "/msd.ssp", "ssp", sha, NULL), 0),
                          "%s", fmud_errmsg(c));
                refused((struct proto_instantiate){ .content = daemon_str(sha) },
                        PROTO_E_INVALID, "fmu: 'model.ssp' is not a .fmu");
        }
        /* A model with Clocks needs eventModeUsed: the FMU's instantiation is refused. */
        refused((struct proto_instantiate){ .fmu = daemon_str(CLOCKED_DERIV) }, PROTO_E_FAULT,
                "eventModeUsed must be true");
        /* Scheduled Execution only: no doStep to call, said as such (not a Clock's refusal). */
        refused((struct proto_instantiate){ .fmu = daemon_str(FMUD_TEST_FMU_DIR
                                                              "/Partitions.fmu") },
                PROTO_E_UNSUPPORTED, "a Scheduled Execution FMU runs in a session");
        /* Nothing was left behind. */
        cr_assert(eq(int, fmud_list(c, &l), 0), "%s", fmud_errmsg(c));
        cr_assert(eq(u32, l.n, 0));
}

/*
 * A Misbehave instance whose steps do fault (its Int32 parameter, vr 4)
 * from at = 0 (vr 5), initialized, then one doStep (call 4): the reply.
 */
static void misbehave_step(int fault, struct daemon_raw_reply *rep, uint64_t *ret_inst)
{
        uint64_t a = instantiate((struct proto_instantiate){ .fmu = daemon_str(MISBEHAVE) });
        struct daemon_raw raw;
        struct pw w;

        daemon_raw_open(&d, &raw);
        cr_assert(pw_init(&w) == 0);
        proto_req_begin(&w, 1, PROTO_OP_FMI, 1);
        pw_str(&w, "calls");
        pw_array(&w, 5);
        /* at = 0: from the first step on. */
        pw_map(&w, 5);
        pw_str(&w, "instance");
        pw_u64(&w, a);
        pw_str(&w, "fn");
        pw_str(&w, "set");
        pw_str(&w, "type");
        pw_str(&w, "Float64");
        pw_str(&w, "vrs");
        pw_array(&w, 1);
        pw_u64(&w, 5);
        pw_str(&w, "values");
        pw_array(&w, 1);
        pw_f64(&w, 0);
        pw_map(&w, 5);
        pw_str(&w, "instance");
        pw_u64(&w, a);
        pw_str(&w, "fn");
        pw_str(&w, "set");
        pw_str(&w, "type");
        pw_str(&w, "Int32");
        pw_str(&w, "vrs");
        pw_array(&w, 1);
        pw_u64(&w, 4);
        pw_str(&w, "values");
        pw_array(&w, 1);
        pw_i64(&w, fault);
        for (int i = 0; i < 2; i++) {
                pw_map(&w, 2);
                pw_str(&w, "instance");
                pw_u64(&w, a);
                pw_str(&w, "fn");
                pw_str(&w, i ? "exitInitializationMode" : "enterInitializationMode");
        }
        pw_map(&w, 4);
        pw_str(&w, "instance");
        pw_u64(&w, a);
        pw_str(&w, "fn");
        pw_str(&w, "doStep");
        pw_str(&w, "t");
        pw_f64(&w, 0);
        pw_str(&w, "h");
        pw_f64(&w, 0.1);
        daemon_raw_send_pw(&raw, &w);
        pw_fini(&w);
        daemon_raw_recv(&raw, rep);
        daemon_raw_close(&raw);
        cr_assert(rep->rep.ok, "%s", rep->message);
        *ret_inst = a;
}

/* The refused map's key as a C string in buf. */
static const char *text_of(const struct pv *ref, const char *key, char *buf, size_t size)
{
        const struct pv *v = pv_get(ref, key);

        cr_assert(v && v->type == PV_STR, "no %s", key);
        snprintf(buf, size, "%.*s", (int)v->s.len, v->s.ptr);
        return buf;
}

Test(daemon_fmi_modes, an_fmus_discard_or_crash_ends_the_batch_and_a_crash_faults_the_instance)
{
        struct proto_session_status st;
        struct daemon_raw_reply rep;
        const struct pv *ref;
        char buf[512];
        uint64_t a, idx = 0;

        /* Discard: the FMU's status, the instance still usable. */
        misbehave_step(13, &rep, &a);
        ref = pv_get(rep.rep.result, "refused");
        cr_assert(ref != NULL);
        cr_assert(pv_u64(pv_get(ref, "index"), &idx) == 0);
        cr_assert(eq(u64, idx, 4));
        cr_assert(eq(str, (char *)text_of(ref, "status", buf, sizeof(buf)), "Discard"));
        cr_assert(eq(str, (char *)text_of(ref, "code", buf, sizeof(buf)), "fault"));
        cr_assert(strstr(text_of(ref, "message", buf, sizeof(buf)), "fmi3DoStep returned Discard")
                  != NULL,
                  "%s", buf);
        daemon_raw_reply_fini(&rep);
        cr_assert(eq(int, fmud_status(c, a, &st), 0), "%s", fmud_errmsg(c));
        cr_assert(eq(int, st.state, PROTO_STATE_LOADED));
        /* SIGSEGV in doStep: the worker is gone, the instance faulted with why. */
        misbehave_step(1, &rep, &a);
        ref = pv_get(rep.rep.result, "refused");
        cr_assert(ref != NULL);
        cr_assert(eq(str, (char *)text_of(ref, "code", buf, sizeof(buf)), "fault"));
        cr_assert(strstr(text_of(ref, "message", buf, sizeof(buf)), "SIGSEGV") != NULL, "%s", buf);
        cr_assert(pv_get(ref, "status") == NULL, "no status: the FMU never answered");
        daemon_raw_reply_fini(&rep);
        cr_assert(eq(int, fmud_status(c, a, &st), 0), "%s", fmud_errmsg(c));
        cr_assert(eq(int, st.state, PROTO_STATE_FAULTED));
        cr_assert(memmem(st.message.ptr, st.message.len, "SIGSEGV", 7) != NULL,
                  "status says why: %.*s", (int)st.message.len, st.message.ptr);
        /* free still ends it (and the daemon's stop finds no worker left). */
        cr_assert(eq(int, fmud_free_instance(c, a), 0), "%s", fmud_errmsg(c));
}

/*
 * An FMI 2.0 instance: calls are named as FMI 2.0 spells them
 * (fmi2GetFMUstate), and a call FMI 2.0 has no function for by its FMI
 * 3.0 name, refused saying so.
 */
Test(daemon_fmi_modes, an_fmi2_instance_names_its_functions_as_fmi2_spells_them)
{
        uint64_t a = instantiate((struct proto_instantiate){ .fmu = daemon_str(LINEAR_ODE2) });

        fmud_fmi_add(b, a, "enterInitializationMode");
        fmud_fmi_add(b, a, "exitInitializationMode");
        fmud_fmi_add(b, a, "enterConfigurationMode");
        daemon_assert_refused(c, fmud_fmi_submit(c, b), PROTO_E_UNSUPPORTED,
                              "Configuration Mode in FMI 2.0");
        cr_assert(eq(long, fmud_fmi_refused(b), 2));
        cr_assert(strstr(fmud_errmsg(c), "fmi3EnterConfigurationMode: fmi3EnterConfigurationMode "
                         "is not a Co-Simulation function of FMI 2.0") != NULL, "%s",
                  fmud_errmsg(c));
        /* A state call refused for its argument: its name in the message. */
        fmud_fmi_batch_clear(b);
        fmud_fmi_add_state(b, a, "setFMUState", 99);
        cr_assert(fmud_fmi_submit(c, b) != 0);
        cr_assert(strstr(fmud_errmsg(c), "fmi2SetFMUstate") != NULL, "%s", fmud_errmsg(c));
}
