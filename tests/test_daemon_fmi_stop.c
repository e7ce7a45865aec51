/*
 * daemon: fmi batches whose instance ends under them (PROTOCOL.md "fmi").
 * A batch handed on to an instance that ends before serving it, and a
 * long batch running when the daemon shuts down, are both answered the
 * batch's way: the results of the calls made and, under "refused", the
 * index of the first call not made and why.
 *
 * Misbehave's fault 19 makes every step sleep `count` milliseconds, so a
 * batch of them lasts far longer than a shutdown takes to arrive. Nothing
 * is timed: the order of events is fixed by replies where it matters.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon_fixture.h"

#define MISBEHAVE       FMUD_TEST_FMU_DIR "/Misbehave.fmu"
#define N_STEPS         1000u   /* of 50 ms each: 50 s, were the batch not interrupted */

static struct fmud_daemon d;
static struct daemon_raw raw;
static uint64_t next_id = 1;

static void nap_ms(long ms)
{
        struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

        nanosleep(&ts, NULL);
}

static void setup(void)
{
        daemon_start(&d, NULL);
        daemon_raw_open(&d, &raw);
}

static void teardown(void)
{
        daemon_raw_close(&raw);
        daemon_kill(&d);
}

TestSuite(daemon_fmi_stop, .init = setup, .fini = teardown, .timeout = 120);

static void call(struct pw *w, uint64_t inst, const char *fn, uint32_t n_more)
{
        pw_map(w, 2 + n_more);
        pw_str(w, "instance");
        pw_u64(w, inst);
        pw_str(w, "fn");
        pw_str(w, fn);
}

static void set_i32(struct pw *w, uint64_t inst, uint32_t vr, int32_t v)
{
        call(w, inst, "set", 3);
        pw_str(w, "type");
        pw_str(w, "Int32");
        pw_str(w, "vrs");
        pw_array(w, 1);
        pw_u64(w, vr);
        pw_str(w, "values");
        pw_array(w, 1);
        pw_i64(w, v);
}

static void set_f64(struct pw *w, uint64_t inst, uint32_t vr, double v)
{
        call(w, inst, "set", 3);
        pw_str(w, "type");
        pw_str(w, "Float64");
        pw_str(w, "vrs");
        pw_array(w, 1);
        pw_u64(w, vr);
        pw_str(w, "values");
        pw_array(w, 1);
        pw_f64(w, v);
}

/* The reply to request id: replies to other requests are skipped. */
static void recv_for(uint64_t id, struct daemon_raw_reply *rep)
{
        for (;;) {
                daemon_raw_recv(&raw, rep);
                if (rep->rep.id == id)
                        return;
                daemon_raw_reply_fini(rep);
        }
}

/* A Misbehave instance, initialized, whose steps each sleep ms milliseconds. */
static uint64_t slow_instance(int32_t ms)
{
        struct daemon_raw_reply rep;
        uint64_t id = 0, req = next_id++;
        struct pw w;

        cr_assert(pw_init(&w) == 0);
        proto_req_begin(&w, req, PROTO_OP_INSTANTIATE, 1);
        pw_str(&w, "fmu");
        pw_str(&w, MISBEHAVE);
        daemon_raw_send_pw(&raw, &w);
        pw_fini(&w);
        recv_for(req, &rep);
        cr_assert(rep.rep.ok, "instantiate: %s", rep.message);
        cr_assert(pv_u64(pv_get(rep.rep.result, "instance"), &id) == 0);
        daemon_raw_reply_fini(&rep);

        req = next_id++;
        cr_assert(pw_init(&w) == 0);
        proto_req_begin(&w, req, PROTO_OP_FMI, 1);
        pw_str(&w, "calls");
        pw_array(&w, 5);
        call(&w, id, "enterInitializationMode", 0);
        set_i32(&w, id, 4, 19);         /* fault: a slow step */
        set_f64(&w, id, 5, 0);          /* at: from the start */
        set_i32(&w, id, 6, ms);         /* count: its milliseconds */
        call(&w, id, "exitInitializationMode", 0);
        daemon_raw_send_pw(&raw, &w);
        pw_fini(&w);
        recv_for(req, &rep);
        cr_assert(rep.rep.ok, "initialize: %s", rep.message);
        cr_assert(pv_get(rep.rep.result, "refused") == NULL, "initialize: a call was refused");
        daemon_raw_reply_fini(&rep);
        return id;
}

/* Send a batch of n steps of inst from t = t0 (h = 0.01) as request id. */
static void send_steps(uint64_t id, uint64_t inst, uint32_t n, double t0)
{
        struct pw w;

        cr_assert(pw_init(&w) == 0);
        proto_req_begin(&w, id, PROTO_OP_FMI, 1);
        pw_str(&w, "calls");
        pw_array(&w, n);
        for (uint32_t i = 0; i < n; i++) {
                call(&w, inst, "doStep", 2);
                pw_str(&w, "t");
                pw_f64(&w, t0 + i * 0.01);
                pw_str(&w, "h");
                pw_f64(&w, 0.01);
        }
        daemon_raw_send_pw(&raw, &w);
        pw_fini(&w);
}

Test(daemon_fmi_stop, a_batch_handed_on_to_an_ending_instance_keeps_its_results)
{
        uint64_t a = slow_instance(0), b = slow_instance(50), idx = 99, inst = 0;
        uint64_t long_b = next_id++, ab = next_id++, probe = next_id++, stop = next_id++;
        const struct pv *r, *ref, *m;
        struct daemon_raw_reply rep;
        double t = -1;
        struct pw w;

        /* b is busy with a batch of 5 s; a's step is made, then the batch waits in b's queue. */
        send_steps(long_b, b, 100, 0);
        cr_assert(pw_init(&w) == 0);
        proto_req_begin(&w, ab, PROTO_OP_FMI, 1);
        pw_str(&w, "calls");
        pw_array(&w, 2);
        call(&w, a, "doStep", 2);
        pw_str(&w, "t");
        pw_f64(&w, 0);
        pw_str(&w, "h");
        pw_f64(&w, 0.01);
        call(&w, b, "getFMUState", 0);
        daemon_raw_send_pw(&raw, &w);
        pw_fini(&w);
        /* a's thread answers this only after it handed the batch on to b. */
        send_steps(probe, a, 1, 0.01);
        recv_for(probe, &rep);
        cr_assert(rep.rep.ok && pv_get(rep.rep.result, "refused") == NULL, "%s", rep.message);
        daemon_raw_reply_fini(&rep);
        cr_assert(pw_init(&w) == 0);
        proto_req_begin(&w, stop, PROTO_OP_SHUTDOWN, 0);
        daemon_raw_send_pw(&raw, &w);
        pw_fini(&w);

        recv_for(long_b, &rep);
        cr_assert(rep.rep.ok, "%s", rep.message);
        daemon_raw_reply_fini(&rep);
        recv_for(ab, &rep);
        cr_assert(rep.rep.ok, "answered with a bare error: %s", rep.message);
        r = pv_get(rep.rep.result, "results");
        cr_assert(r && r->type == PV_ARRAY);
        cr_assert(eq(u32, r->a.n, 1));
        cr_assert(pv_f64(pv_get(&r->a.items[0], "lastSuccessfulTime"), &t) == 0);
        cr_assert(eq(dbl, t, 0.01));
        ref = pv_get(rep.rep.result, "refused");
        cr_assert(ref != NULL);
        cr_assert(pv_u64(pv_get(ref, "index"), &idx) == 0);
        cr_assert(eq(u64, idx, 1));
        cr_assert(pv_u64(pv_get(ref, "instance"), &inst) == 0);
        cr_assert(eq(u64, inst, b));
        cr_assert(pv_is_str(pv_get(ref, "fn"), "getFMUState"));
        cr_assert(pv_is_str(pv_get(ref, "code"), "state"));
        m = pv_get(ref, "message");
        cr_assert(m && m->type == PV_STR && memmem(m->s.ptr, m->s.len, "shutting down", 13),
                  "'%.*s' does not say why", m ? (int)m->s.len : 0, m ? m->s.ptr : "");
        daemon_raw_reply_fini(&rep);
        daemon_raw_close(&raw);
        memset(&raw, 0, sizeof(raw));
        daemon_join(&d);
}

Test(daemon_fmi_stop, shutdown_ends_a_running_batch_with_the_results_so_far)
{
        uint64_t a = slow_instance(50), batch = next_id++, stop = next_id++, idx = N_STEPS;
        const struct pv *r, *ref, *m;
        struct daemon_raw_reply rep;
        struct pw w;

        send_steps(batch, a, N_STEPS, 0);
        /*
         * A moment for the batch to begin: the reply is the same either way (a
         * batch not yet begun is refused at its first call), only which path
         * ends it differs.
         */
        nap_ms(200);
        cr_assert(pw_init(&w) == 0);
        proto_req_begin(&w, stop, PROTO_OP_SHUTDOWN, 0);
        daemon_raw_send_pw(&raw, &w);
        pw_fini(&w);

        recv_for(batch, &rep);
        cr_assert(rep.rep.ok, "refused whole: %s", rep.message);
        ref = pv_get(rep.rep.result, "refused");
        cr_assert(ref != NULL, "the batch ran to its end");
        cr_assert(pv_is_str(pv_get(ref, "code"), "state"));
        cr_assert(pv_is_str(pv_get(ref, "fn"), "doStep"));
        cr_assert(pv_u64(pv_get(ref, "index"), &idx) == 0);
        cr_assert(idx < N_STEPS);
        m = pv_get(ref, "message");
        cr_assert(m && m->type == PV_STR && memmem(m->s.ptr, m->s.len, "shutting down", 13),
                  "'%.*s' does not say why", m ? (int)m->s.len : 0, m ? m->s.ptr : "");
        /* The steps made are there, each whole. */
        r = pv_get(rep.rep.result, "results");
        cr_assert(r && r->type == PV_ARRAY);
        cr_assert(eq(u64, r->a.n, idx));
        for (uint32_t i = 0; i < r->a.n; i++) {
                double t = -1;

                cr_assert(pv_f64(pv_get(&r->a.items[i], "lastSuccessfulTime"), &t) == 0);
                cr_assert(eq(dbl, t, i * 0.01 + 0.01), "step %u", i);
        }
        daemon_raw_reply_fini(&rep);
        daemon_raw_close(&raw);
        memset(&raw, 0, sizeof(raw));
        daemon_join(&d);
}
