/*
 * worker_layout: compact DO_STEPs (worker/call.h, call_do_step.compact)
 * sent from the daemon's end of a real channel. A compact step of a
 * layout the worker does not keep, of another shape, or with its values
 * malformed gets one refusal; the kept blocks go through the same checks
 * as a full step's, so a value or a type that a full step could not carry
 * is refused too. The FMU is never reached (the worker here has no
 * instance to reach).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "worker_fixture.h"

static struct worker w;
static struct chan *daemon_end;

static void setup(void)
{
        wfix_load(&w, "Feedthrough");
        wfix_channel(&w, &daemon_end);
        w.state = CALL_ST_STEP;
        /* What a set's duplicate check needs (worker_open() makes it). */
        w.stamp = calloc(w.md->n_vars + 1, sizeof(*w.stamp));
        cr_assert(w.stamp != NULL);
}

static void teardown(void)
{
        free(w.stamp);
        wfix_channel_close(&w, daemon_end);
        wfix_unload(&w);
}

/* Keep a layout of one input block and one output block, as a full step that passed would. */
static void keep(uint32_t id, enum md_type in_type, uint32_t vr_in, enum md_type out_type,
                 uint32_t vr_out)
{
        static uint32_t vrs[2];
        struct vblock b[2] = {
                { .type = in_type, .vrs = &vrs[0], .n_vrs = 1, .n_values = 1 },
                { .type = out_type, .vrs = &vrs[1], .n_vrs = 1, .n_values = 1 },
        };
        struct step_blocks bl = { .in = &b[0], .out = &b[1], .n_in = 1, .n_out = 1 };

        vrs[0] = vr_in;
        vrs[1] = vr_out;
        layout_keep(&w, id, &bl);
}

/* Send a compact DO_STEP of layout id as request 7: values (len bytes) as the payload. */
static void send_compact(const struct call_do_step *proto, const void *values, size_t len)
{
        unsigned char rec[sizeof(struct call_hdr) + sizeof(struct call_do_step) + 64];
        struct call_do_step ds = *proto;
        struct call_hdr h = {
                .magic = CALL_MAGIC, .kind = CALL_REQUEST, .op = CALL_OP_DO_STEP, .seq = 7,
                .body_len = sizeof(ds), .payload_len = len,
        };
        enum call_op op;

        cr_assert(len <= 64);
        ds.current_communication_point = 0.0;
        ds.communication_step_size = 0.125;
        memcpy(rec, &h, sizeof(h));
        memcpy(rec + sizeof(h), &ds, sizeof(ds));
        if (len)
                memcpy(rec + sizeof(h) + sizeof(ds), values, len);
        cr_assert(eq(int, ring_push(chan_tx(daemon_end), rec, sizeof(h) + sizeof(ds) + len), 0));
        cr_assert(serve_one(&w, &op));
        cr_assert(eq(int, op, CALL_OP_DO_STEP));
}

/* The one reply: request 7 refused with error e and a message containing text. */
static void expect_refusal(enum call_error e, const char *text)
{
        wfix_expect_one_refusal(daemon_end, 7, e, text);
}

/* A compact step of layout 3 with one Float64 input and one output. */
static const struct call_do_step compact3 = {
        .compact = 1, .layout = 3, .n_inputs = 1, .n_outputs = 1, .inputs = { 0, 8 },
};

Test(worker_layout, a_compact_step_without_a_kept_layout_is_refused, .init = setup, .fini = teardown)
{
        double v = 1.0;

        send_compact(&compact3, &v, sizeof(v));
        expect_refusal(CALL_E_BADMSG, "a compact step of layout 3, which is not the one kept");
}

Test(worker_layout, a_compact_step_of_another_layout_or_shape_is_refused, .init = setup,
     .fini = teardown)
{
        struct call_do_step ds;
        double v[2] = { 1.0, 2.0 };

        keep(3, MD_FLOAT64, 3, MD_FLOAT64, 4);
        ds = compact3;
        ds.layout = 4;
        send_compact(&ds, v, 8);
        expect_refusal(CALL_E_BADMSG, "which is not the one kept");
        ds = compact3;
        ds.n_inputs = 2;
        send_compact(&ds, v, 16);
        expect_refusal(CALL_E_BADMSG, "which is not the one kept");
        ds = compact3;
        ds.outputs = (struct call_range){ 8, 8 };
        send_compact(&ds, v, 16);
        expect_refusal(CALL_E_BADMSG, "which is not the one kept");
        /* Values of another length, or outside the message. */
        ds = compact3;
        ds.inputs.len = 16;
        send_compact(&ds, v, 16);
        expect_refusal(CALL_E_BADMSG, "malformed input values");
        ds = compact3;
        send_compact(&ds, v, 4);
        expect_refusal(CALL_E_BADMSG, "malformed input values");
        ds = compact3;
        ds.inputs.off = 4;
        send_compact(&ds, v, 16);
        expect_refusal(CALL_E_BADMSG, "malformed input values");
        ds = compact3;
        ds.compact = 2;
        send_compact(&ds, v, 8);
        expect_refusal(CALL_E_BADMSG, "malformed arguments");
}

Test(worker_layout, kept_blocks_are_checked_as_a_full_steps_are, .init = setup, .fini = teardown)
{
        struct call_do_step ds = compact3;
        uint8_t b = 2;

        /* A Boolean that is neither 0 nor 1. */
        keep(3, MD_BOOLEAN, 21, MD_BOOLEAN, 22);
        ds.inputs.len = 1;
        send_compact(&ds, &b, 1);
        expect_refusal(CALL_E_INVAL, "value 0 is 2, not 0 or 1");
        /* A type that is not the variable's: a full step could not carry it either. */
        keep(3, MD_FLOAT32, 3, MD_FLOAT64, 4);
        ds = compact3;
        ds.inputs.len = 4;
        send_compact(&ds, &(float){ 1.0f }, 4);
        expect_refusal(CALL_E_TYPE, "fmi3SetFloat32");
        /* An output set as an input. */
        keep(3, MD_FLOAT64, 4, MD_FLOAT64, 4);
        send_compact(&compact3, &(double){ 1.0 }, 8);
        expect_refusal(CALL_E_ACCESS, "Float64_output");
}

Test(worker_layout, blocks_no_layout_holds_are_not_kept, .init = setup, .fini = teardown)
{
        struct call_do_step ds = compact3;

        /* Keeping another layout forgets the last one, even when it keeps nothing. */
        keep(3, MD_FLOAT64, 3, MD_FLOAT64, 4);
        keep(4, MD_STRING, 23, MD_FLOAT64, 4);
        ds.layout = 4;
        send_compact(&ds, &(double){ 1.0 }, 8);
        expect_refusal(CALL_E_BADMSG, "which is not the one kept");
        send_compact(&compact3, &(double){ 1.0 }, 8);
        expect_refusal(CALL_E_BADMSG, "which is not the one kept");
}
