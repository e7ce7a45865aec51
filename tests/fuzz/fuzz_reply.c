/*
 * fuzz_reply: arbitrary bytes as what a worker writes on its reply ring,
 * read by the daemon's instance API (engine/instance/instance.h). The instance is
 * real but has no worker: its requests go onto a real channel, and the
 * input's records are already waiting on the reply ring (and in the side
 * buffer) when a call reads. Whatever they say, every call must end in a
 * status, a refusal or a fault: no crash, no leak, no access outside what
 * it was given, no hang (a call's deadline is 200 µs, and a worker that
 * sent nothing more by then counts as gone).
 *
 * Input: byte 0 picks a call sequence (enum seq below); byte 1, bit 0:
 * fix each record's magic and sequence number, and a reply's op, as the
 * calls will expect them, so that mutations reach the bodies. Then
 * records: a 2-byte little-endian length and that many bytes, pushed
 * onto the reply ring in order, as far as it takes them. A length of
 * 0xffff instead writes the next 2-byte length's worth of bytes into the
 * side buffer, from its start.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/instance/inst_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* For the test suite's replay: the calls of the last input, and how many returned INST_OK. */
/*
 * A call's deadline: short, so that the fuzzer finds hangs fast. The test
 * suite's replay of valid replies lengthens it: on a loaded machine the
 * thread can be preempted for longer than 200 µs between posting a call
 * and reading the reply that is already there.
 */
uint64_t fuzz_reply_timeout_ns = 200000;
unsigned fuzz_reply_calls, fuzz_reply_calls_ok;

static int note(int r)
{
        fuzz_reply_calls++;
        if (r == INST_OK)
                fuzz_reply_calls_ok++;
        return r;
}

enum seq {
        SEQ_GET_F64,            /* inst_get of 3 Float64 */
        SEQ_GET_BOOL,           /* inst_get of 2 Booleans */
        SEQ_GET_STRING,         /* inst_get of 2 Strings */
        SEQ_GET_BINARY,         /* inst_get_binary of 2 */
        SEQ_STEP,               /* a full step, then the same step compact */
        SEQ_REPEAT,             /* a step and a repeat of 3 chained behind it */
        SEQ_STATE,              /* get FMU state, its size, serialize */
        SEQ_DISCRETE,           /* update discrete states, a string status */
        SEQ_PARTIAL,            /* directional derivative, dependencies */
        SEQ_IU_NESTED,          /* a step whose intermediate update gets 2 Float64 inside it */
        SEQ_CLOCKS,             /* Clock intervals, decimal and fraction */
        SEQ_MORE,               /* output derivatives, deserialize, number of dependencies */
        SEQ_COUNT,
};

/* The reply ops each sequence reads, in order. */
static const enum call_op reply_ops[SEQ_COUNT][5] = {
        [SEQ_GET_F64] = { CALL_OP_GET },
        [SEQ_GET_BOOL] = { CALL_OP_GET },
        [SEQ_GET_STRING] = { CALL_OP_GET },
        [SEQ_GET_BINARY] = { CALL_OP_GET },
        [SEQ_STEP] = { CALL_OP_DO_STEP, CALL_OP_DO_STEP },
        [SEQ_REPEAT] = { CALL_OP_DO_STEP, CALL_OP_DO_STEP, CALL_OP_DO_STEP, CALL_OP_DO_STEP },
        [SEQ_STATE] = { CALL_OP_GET_FMU_STATE, CALL_OP_SERIALIZED_SIZE, CALL_OP_SERIALIZE },
        [SEQ_DISCRETE] = { CALL_OP_UPDATE_DISCRETE, CALL_OP_GET_STATUS },
        [SEQ_PARTIAL] = { CALL_OP_DIRECTIONAL_DERIVATIVE, CALL_OP_DEPENDENCIES },
        [SEQ_IU_NESTED] = { CALL_OP_GET, CALL_OP_DO_STEP },
        [SEQ_CLOCKS] = { CALL_OP_GET_INTERVAL_DECIMAL, CALL_OP_GET_INTERVAL_FRACTION },
        [SEQ_MORE] = { CALL_OP_GET_OUTPUT_DERIVATIVES, CALL_OP_DESERIALIZE,
                       CALL_OP_NUM_DEPENDENCIES },
};

/*
 * With fix, the sequence number of each reply, where it is not the next
 * request's: a get inside an intermediate update is request 2, answered
 * before the step (request 1) it interrupts.
 */
static const uint64_t reply_seqs[SEQ_COUNT][5] = {
        [SEQ_IU_NESTED] = { 2, 1 },
};

static void on_log(void *ctx, struct inst *inst, int status, const char *category,
                   const char *message)
{
        (void) ctx;
        (void) inst;
        (void) status;
        /* Read every byte: what the daemon hands on must be whole strings. */
        if (strlen(category) + strlen(message) == (size_t)-1)
                abort();
}

static void on_iu(void *ctx, struct inst *inst, const struct inst_iu *iu, bool *ret_early,
                  double *ret_time)
{
        static const uint32_t vrs[2] = { 1, 2 };
        double v[2];

        /* The nested call of SEQ_IU_NESTED; its result is the harness's to count. */
        if (ctx)
                (void) note(inst_get(inst, MD_FLOAT64, vrs, 2, v, 2));
        *ret_early = iu->can_return_early;
        *ret_time = iu->time;
}

/*
 * An instance on a fresh channel with no worker; *ret_end is the worker's
 * end. With iu, it answers intermediate updates (and so takes no chained
 * steps).
 */
static struct inst *make(bool iu, struct chan **ret_end)
{
        struct chan_params p = { .name = "fuzz", .slot_size = 64, .req_slots = 64, .rep_slots = 64,
                                 .side_size = 4096 };
        struct inst *inst = calloc(1, sizeof(*inst));
        int fd;

        if (!inst)
                abort();
        inst->pid = -1;
        inst->reaped = true;    /* nothing to kill or reap: silence ends a call at once */
        inst->name = strdup("fuzz");
        /* Short, yet long enough for the events before a reply: each is checked against it. */
        inst->timeout_ns = fuzz_reply_timeout_ns;
        wait_policy_init(&inst->wait, WAIT_SPIN);
        inst->max_string = CALL_STRING_MAX_DEFAULT;
        inst->max_binary = CALL_BINARY_MAX_DEFAULT;
        inst->fmi = 3;
        inst->caps = ~0ull;
        inst->log = on_log;
        inst->iu = iu ? on_iu : NULL;
        inst->iu_wanted = iu;
        inst->iu_ctx = NULL;
        fd = chan_create(&p, &inst->chan);
        if (fd < 0 || chan_attach(dup(fd), ret_end) < 0 || !inst->name)
                abort();
        inst->tx = chan_tx(inst->chan);
        inst->rx = chan_rx(inst->chan);
        inst->side = chan_side(inst->chan, &inst->side_size);
        inst->max_record = inst->tx->max_record;
        inst->scratch = malloc(inst->max_record);
        if (!inst->scratch)
                abort();
        return inst;
}

static uint16_t le16(const uint8_t *p)
{
        return (uint16_t)(p[0] | p[1] << 8);
}

/* Push the input's records; with fix, headers as the sequence's calls expect them. */
static void feed(struct chan *end, enum seq s, bool fix, const uint8_t *p, size_t n)
{
        unsigned char rec[4096];
        /* The request a reply or event belongs to, and the next one's number. */
        uint64_t seq = 1, next = 2;
        unsigned reply = 0;
        size_t side_cap;
        unsigned char *side = chan_side(end, &side_cap);

        while (n >= 2) {
                size_t len = le16(p);

                p += 2;
                n -= 2;
                if (len == 0xffff) {
                        if (n < 2)
                                return;
                        len = le16(p);
                        p += 2;
                        n -= 2;
                        len = len < n ? len : n;
                        memcpy(side, p, len < side_cap ? len : side_cap);
                } else {
                        len = len < n ? len : n;
                        if (len > sizeof(rec))
                                return;
                        memcpy(rec, p, len);
                        if (fix && len >= sizeof(struct call_hdr)) {
                                struct call_hdr h;

                                memcpy(&h, rec, sizeof(h));
                                h.magic = CALL_MAGIC;
                                h.seq = seq;
                                if (h.kind == CALL_REPLY) {
                                        if (reply < 5 && reply_ops[s][reply])
                                                h.op = (uint16_t)reply_ops[s][reply];
                                        if (reply < 5 && reply_seqs[s][reply])
                                                h.seq = reply_seqs[s][reply];
                                        reply++;
                                        seq = next++;
                                } else if (h.kind == CALL_EVENT && h.op == CALL_EV_IU) {
                                        next++;         /* the daemon's answer is a request */
                                }
                                memcpy(rec, &h, sizeof(h));
                        }
                        if (ring_push(chan_tx(end), rec, len) < 0)
                                return;
                }
                p += len;
                n -= len;
        }
}

static void run(struct inst *inst, enum seq s)
{
        static const uint32_t vrs[3] = { 1, 2, 3 };
        static const double times[4] = { 0.125, 0.25, 0.375, 0.5 };
        const uint8_t *bins[2];
        const char *strs[2];
        size_t sizes[2], n;
        double f[3], in[2] = { 1.0, 2.0 };
        bool b[2];
        int16_t i16;
        struct inst_step_result res;
        struct inst_discrete d;
        uint64_t handle = 0;
        uint8_t buf[64] = { 0 };
        int kinds[2];
        uint64_t counters[2], resolutions[2];
        static const int32_t orders[2] = { 1, 2 };
        uint32_t indep[2];
        size_t elem_dep[2], elem_indep[2];
        const char *text;
        struct inst_in ib = { .type = MD_FLOAT64, .vrs = vrs, .nvr = 2, .values = in, .nvalues = 2 };
        struct inst_out ob[3] = {
                { .type = MD_FLOAT64, .vrs = vrs, .nvr = 3, .values = f, .nvalues = 3 },
                { .type = MD_BOOLEAN, .vrs = vrs, .nvr = 2, .values = b, .nvalues = 2 },
                { .type = MD_INT16, .vrs = vrs, .nvr = 1, .values = &i16, .nvalues = 1 },
        };
        struct inst_step st = { .t = 0.0, .h = 0.125, .inputs = &ib, .n_inputs = 1, .outputs = ob,
                                .n_outputs = 3 };
        struct inst_step rep = st;

        switch (s) {
        case SEQ_GET_F64:
                (void) note(inst_get(inst, MD_FLOAT64, vrs, 3, f, 3));
                break;
        case SEQ_GET_BOOL:
                (void) note(inst_get(inst, MD_BOOLEAN, vrs, 2, b, 2));
                break;
        case SEQ_GET_STRING:
                (void) note(inst_get(inst, MD_STRING, vrs, 2, strs, 2));
                break;
        case SEQ_GET_BINARY:
                (void) note(inst_get_binary(inst, vrs, 2, sizes, bins, 2));
                break;
        case SEQ_STEP:
                (void) note(inst_do_step(inst, &st, &res));
                st.t = 0.125;
                (void) note(inst_do_step(inst, &st, &res));
                break;
        case SEQ_REPEAT:
                rep.chained = true;
                rep.repeat = 3;
                rep.times = times;
                if (note(inst_post_step(inst, &st)) == 0)
                        (void) note(inst_post_step(inst, &rep));
                while (inst->n_posted)
                        (void) note(inst_wait_step(inst, &res));
                break;
        case SEQ_STATE:
                (void) note(inst_get_fmu_state(inst, &handle));
                if (note(inst_serialized_fmu_state_size(inst, handle, &n)) >= 0 && n <= sizeof(buf))
                        (void) note(inst_serialize_fmu_state(inst, handle, buf, n));
                break;
        case SEQ_DISCRETE:
                (void) note(inst_update_discrete_states(inst, &d));
                (void) note(inst_get_string_status(inst, 3, &text));
                break;
        case SEQ_PARTIAL:
                (void) note(inst_get_directional_derivative(inst, vrs, 2, vrs + 1, 2, in, 2, f, 2));
                (void) note(inst_get_variable_dependencies(inst, 1, elem_dep, indep, elem_indep, kinds, 2));
                break;
        case SEQ_IU_NESTED:
                inst->iu_ctx = inst;
                st.n_inputs = 0;
                st.n_outputs = 1;
                (void) note(inst_do_step(inst, &st, &res));
                break;
        case SEQ_CLOCKS:
                (void) note(inst_get_interval_decimal(inst, vrs, 2, f, kinds));
                (void) note(inst_get_interval_fraction(inst, vrs, 2, counters, resolutions, kinds));
                break;
        case SEQ_MORE:
                (void) note(inst_get_output_derivatives(inst, vrs, 2, orders, f, 2));
                (void) note(inst_deserialize_fmu_state(inst, buf, 16, &handle));
                (void) note(inst_get_number_of_variable_dependencies(inst, 1, &n));
                break;
        case SEQ_COUNT:
                break;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct chan *end;
        struct inst *inst;
        enum seq s;

        if (size < 2)
                return 0;
        s = (enum seq)(data[0] % SEQ_COUNT);
        fuzz_reply_calls = fuzz_reply_calls_ok = 0;
        inst = make(s != SEQ_REPEAT, &end);
        feed(end, s, data[1] & 1, data + 2, size - 2);
        run(inst, s);
        (void) inst_free(inst);
        chan_close(end);
        return 0;
}
