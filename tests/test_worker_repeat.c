/*
 * worker_repeat: a DO_STEP whose repeat (call_do_step.repeat) the worker
 * cannot expand, sent from the daemon's end of a real channel: it gets one
 * refusal, as any malformed request does, and the FMU is never reached
 * (the worker here has no instance to reach).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <string.h>

#include "worker_fixture.h"

static struct worker w;
static struct chan *daemon_end;

static void setup(void)
{
        wfix_load(&w, "LinearOde");
        wfix_channel(&w, &daemon_end);
        /* Step Mode, so that only the request itself can be refused. */
        w.state = CALL_ST_STEP;
}

static void teardown(void)
{
        wfix_channel_close(&w, daemon_end);
        wfix_unload(&w);
}

/* Send a DO_STEP of 'repeat' steps with n_times times (in the payload) as request 7. */
static void send_repeat(uint32_t repeat, const double *times, size_t n_times)
{
        unsigned char rec[sizeof(struct call_hdr) + sizeof(struct call_do_step) + 40 * sizeof(double)];
        struct call_do_step ds = {
                .current_communication_point = 0.0,
                .communication_step_size = 0.125,
                .repeat = repeat,
                .times = { 0, n_times * sizeof(double) },
        };
        struct call_hdr h = {
                .magic = CALL_MAGIC, .kind = CALL_REQUEST, .op = CALL_OP_DO_STEP, .seq = 7,
                .body_len = sizeof(ds), .payload_len = n_times * sizeof(double),
        };

        cr_assert(n_times <= 40, "%zu times", n_times);
        memcpy(rec, &h, sizeof(h));
        memcpy(rec + sizeof(h), &ds, sizeof(ds));
        if (n_times)
                memcpy(rec + sizeof(h) + sizeof(ds), times, n_times * sizeof(double));
        cr_assert(eq(int, ring_push(chan_tx(daemon_end), rec, sizeof(h) + sizeof(ds) + h.payload_len), 0));
}

/* The one reply: request 7 refused with error e and a message containing text. */
static void expect_one_refusal(enum call_error e, const char *text)
{
        wfix_expect_one_refusal(daemon_end, 7, e, text);
}

Test(worker_repeat, a_repeat_without_its_times_gets_one_refusal, .init = setup, .fini = teardown)
{
        enum call_op op;

        send_repeat(3, NULL, 0);
        cr_assert(serve_one(&w, &op));
        cr_assert(eq(int, op, CALL_OP_DO_STEP));
        expect_one_refusal(CALL_E_BADMSG, "a repeat of 3 steps without their times");
}

Test(worker_repeat, a_repeat_short_of_one_time_gets_one_refusal, .init = setup, .fini = teardown)
{
        double times[3] = { 0.0, 0.125, 0.25 };
        enum call_op op;

        send_repeat(3, times, 3);
        cr_assert(serve_one(&w, &op));
        expect_one_refusal(CALL_E_BADMSG, "a repeat of 3 steps without their times");
}

Test(worker_repeat, a_repeat_over_the_limit_gets_one_refusal, .init = setup, .fini = teardown)
{
        double times[CALL_REPEAT_MAX + 2];
        enum call_op op;

        for (unsigned j = 0; j < CALL_REPEAT_MAX + 2; j++)
                times[j] = 0.125 * j;
        send_repeat(CALL_REPEAT_MAX + 1, times, CALL_REPEAT_MAX + 2);
        cr_assert(serve_one(&w, &op));
        expect_one_refusal(CALL_E_BADMSG, "a repeat of 17 steps without their times");
}
