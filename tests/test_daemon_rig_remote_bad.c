/*
 * daemon_rig_remote_bad: what a remote rig sends is untrusted. Garbage,
 * an oversize message, the wrong number or type of values, an unknown
 * kind: each is answered "bad" and counted, by the bridge and in the
 * session's rig status, and the session runs on with the good writes.
 * A remote rig that goes silent is a rig that vanished: the session's
 * policy (hold, safe, pause) applies, as for a local rig.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "rig_remote_fixture.h"

#define POLL_MAX        20000   /* status polls before giving up: a hang guard, not a measure */

static struct rr t;

static void setup(void)
{
        rr_start(&t);
}

static void teardown(void)
{
        rr_stop(&t);
}

TestSuite(daemon_rig_remote_bad, .init = setup, .fini = teardown);

static void expect_bad(void *z, uint64_t n, const char *why)
{
        char text[320], want[320];
        struct rigw_msg m;
        double vals[8];

        /* Points (point 0 comes after the ports) are not the answer. */
        do
                rr_recv(z, &m, vals, 8, text, sizeof(text));
        while (m.kind == RIGW_POINT);
        snprintf(want, sizeof(want), "bad: bad message, not applied: %s", why);
        cr_assert(eq(int, m.kind, RIGW_ERROR));
        cr_assert(eq(str, text, want));
        cr_assert(eq(u64, m.bad, n));
}

Test(daemon_rig_remote_bad, bad_messages_are_counted_and_the_session_runs_on)
{
        struct proto_load a = rr_feedthrough(0.1, "hold");
        uint64_t s = daemon_load(t.c, &a, NULL);
        char token[RIGW_TOKEN_LEN + 1], text[256];
        struct proto_session_status st;
        const struct pv *const *v;
        size_t big = RIGW_MAX_MSG + 16;
        unsigned char *blob = calloc(1, big);
        struct rigw_msg m;
        double f = 0, i = 0;
        unsigned port;
        struct pw w;
        void *z;

        cr_assert(blob != NULL);
        rr_ask(&t, s, token, &port);
        z = rr_bridge(&t, port, t.ok_pub, t.ok_sec);
        cr_assert(pw_init(&w) == 0);
        rigw_hello(&w, token);
        rr_send(z, pw_data(&w), pw_size(&w));
        rr_recv(z, &m, NULL, 0, text, sizeof(text));
        cr_assert(eq(int, m.kind, RIGW_PORTS), "%s", text);
        /* Not msgpack. */
        rr_send(z, "\xc1garbage", 8);
        expect_bad(z, 1, "at byte 0: byte 0xc1 is never used in msgpack");
        /* Too big. */
        rr_send(z, blob, big);
        expect_bad(z, 2, "a message of 98320 bytes, at most 98304");
        /* A write without its point, one with too few values, one with strings. */
        rr_send(z, "\x82\xa1t\xa1w\xa1v\x92\x01\x02", 10);
        expect_bad(z, 3, "'p': expected an unsigned integer");
        rigw_write(&w, 0, (double[]){ 1 }, 1);
        rr_send(z, pw_data(&w), pw_size(&w));
        expect_bad(z, 4, "1 values for 2 inputs");
        rr_send(z, "\x83\xa1t\xa1w\xa1p\x00\xa1v\x92\xa1x\xa1y", 15);
        expect_bad(z, 5, "'v'[0]: expected a number");
        /* A kind the rig does not send, and one nobody does. */
        rigw_hello(&w, token);
        rr_send(z, pw_data(&w), pw_size(&w));
        expect_bad(z, 6, "a remote rig sends w, beat or bye once attached");
        rr_send(z, "\x81\xa1t\xa4nope", 8);
        expect_bad(z, 7, "'t': not a kind of rig message");
        /* Then a good write, fenced by one more bad message whose answer says it is in. */
        rigw_write(&w, 0, (double[]){ 3, 4 }, 2);
        rr_send(z, pw_data(&w), pw_size(&w));
        rigw_write(&w, 0, (double[]){ 3, 4, 5 }, 3);
        rr_send(z, pw_data(&w), pw_size(&w));
        expect_bad(z, 8, "3 values for 2 inputs");
        cr_assert(eq(int, fmud_start(t.c, &(struct proto_target){ s, 0 }, NULL), 0), "%s",
                  fmud_errmsg(t.c));
        daemon_wait_state(t.c, s, PROTO_STATE_FINISHED, &st);
        cr_assert(eq(int, fmud_status(t.c, s, &st), 0), "%s", fmud_errmsg(t.c));
        cr_assert(eq(u64, st.rig.bad, 8));
        cr_assert(eq(u64, st.rig.applied, 1));
        cr_assert(eq(int, fmud_get(t.c, &(struct proto_target){ s, 0 },
                                   (const char *[]){ "Float64_output", "Int32_output" }, 2, &v),
                     0), "%s", fmud_errmsg(t.c));
        cr_assert(eq(int, pv_f64(v[0], &f), 0));
        cr_assert(eq(int, pv_f64(v[1], &i), 0));
        cr_assert(eq(dbl, f, 3));
        cr_assert(eq(dbl, i, 4));
        pw_fini(&w);
        free(blob);
        rr_close(&t, z);
}

/*
 * A remote rig that writes at every point, then goes silent: the policy
 * applies (want: the session's state then; PROTO_STATE_COUNT: any;
 * want_f64: the output the policy leads to, NAN: not checked).
 */
static void silent(const char *policy, enum proto_state want, double want_f64)
{
        struct proto_load a = rr_feedthrough(1e6, policy);
        uint64_t s = daemon_load(t.c, &a, NULL);
        struct proto_session_status st;
        const struct pv *const *v;
        struct fmud_rig *rig = NULL;
        struct fmud_rig_point pt;
        double f = 0;
        int i;

        cr_assert(eq(int, fmud_rig_open(t.c, s, &rig), 0), "%s", fmud_errmsg(t.c));
        cr_assert(eq(int, fmud_warp(t.c, &(struct proto_target){ s, 0 }, 1, NULL), 0), "%s",
                  fmud_errmsg(t.c));
        cr_assert(eq(int, fmud_start(t.c, &(struct proto_target){ s, 0 }, NULL), 0), "%s",
                  fmud_errmsg(t.c));
        for (i = 0; i < POLL_MAX; i++) {
                (void)fmud_rig_write(rig, (double[]){ 4, 2 }, 2);
                (void)fmud_rig_wait(rig, 10, &pt);
                cr_assert(eq(int, fmud_status(t.c, s, &st), 0), "%s", fmud_errmsg(t.c));
                if (daemon_str_eq(st.rig.state, "attached") && st.rig.applied > 0)
                        break;
        }
        cr_assert(i < POLL_MAX, "the remote rig never attached");
        cr_assert(st.rig.in_force == false);
        /* Silent from now on: no write, no wait, no beat; the connection stays. */
        for (i = 0; i < POLL_MAX; i++) {
                cr_assert(eq(int, fmud_status(t.c, s, &st), 0), "%s", fmud_errmsg(t.c));
                if (st.rig.in_force && (want == PROTO_STATE_COUNT || st.state == want))
                        break;
                usleep(1000);
        }
        cr_assert(i < POLL_MAX, "the policy never applied: state %d, rig %.*s, in force %d",
                  (int)st.state, (int)st.rig.state.len, st.rig.state.ptr, st.rig.in_force);
        cr_assert(daemon_str_eq(st.rig.state, "vanished"));
        cr_assert(daemon_str_eq(st.rig.policy, policy));
        if (want == PROTO_STATE_RUNNING && !isnan(want_f64)) {
                /* Whatever the policy put in, it reaches the output at a later point. */
                for (i = 0; i < POLL_MAX; i++) {
                        cr_assert(eq(int, fmud_get(t.c, &(struct proto_target){ s, 0 },
                                                   (const char *[]){ "Float64_output" }, 1, &v),
                                     0), "%s", fmud_errmsg(t.c));
                        cr_assert(eq(int, pv_f64(v[0], &f), 0));
                        if (f == want_f64)
                                break;
                        usleep(1000);
                }
                cr_assert(eq(dbl, f, want_f64));
        }
        fmud_rig_close(rig);
}

Test(daemon_rig_remote_bad, a_silent_remote_rig_gets_hold)
{
        /* The output keeps the rig's last value, 4, whether or not hold applied: not checked. */
        silent("hold", PROTO_STATE_RUNNING, NAN);
}

Test(daemon_rig_remote_bad, a_silent_remote_rig_gets_its_safe_values)
{
        silent("safe", PROTO_STATE_RUNNING, -1);
}

/*
 * The policy is in force; whether the session then shows paused is the
 * master's and the host's business, the same for a local rig.
 */
Test(daemon_rig_remote_bad, a_silent_remote_rig_gets_pause)
{
        silent("pause", PROTO_STATE_COUNT, 0);
}

/*
 * The bridges' port range is a limit like the number of bridges: with its
 * one port taken by a live bridge, another session's remote rig is
 * refused `limit`, saying so, and the first bridge is unharmed.
 */
static void one_port(void)
{
        char ports[16];
        int p = rr_free_port();

        snprintf(ports, sizeof(ports), "%d-%d", p, p);
        rr_start_ports(&t, ports);
}

Test(daemon_rig_remote_ports, a_port_range_all_taken_refuses_a_bridge_as_a_limit, .init = one_port,
     .fini = teardown)
{
        struct proto_load a = rr_feedthrough(0.1, "hold");
        uint64_t s1 = daemon_load(t.c, &a, NULL), s2 = daemon_load(t.c, &a, NULL);
        struct fmud_rig *first = NULL, *second = NULL;
        int r;

        cr_assert(eq(int, fmud_rig_open(t.c, s1, &first), 0), "%s", fmud_errmsg(t.c));
        r = fmud_rig_open(t.c, s2, &second);
        daemon_assert_refused(t.c, r, PROTO_E_LIMIT, "rig");
        cr_assert(strstr(fmud_errmsg(t.c), "every port") != NULL, "%s", fmud_errmsg(t.c));
        cr_assert(second == NULL);
        cr_assert(eq(int, fmud_rig_write(first, (double[]){ 1, 2 }, 2), 0));
        fmud_rig_close(first);
}
