/*
 * serve: the worker's side of the channel: wait for a request, take a
 * private copy, check it, hand it to its handler, send the reply; and send
 * events (log records, intermediate updates) on the same ring.
 *
 * DESIGN: a request is copied out of shared memory (record and side
 * payload) before anything in it is looked at, so the daemon cannot change
 * what was checked. A reply is built in a private scratch record and
 * pushed in one go; only a payload too large for a record goes to the side
 * buffer. Events are pushed as they happen: a log record is dropped (and
 * counted) rather than waited for, a reply or intermediate update waits
 * for room, since the daemon drains the ring while it waits for us.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker/sandbox.h"
#include "worker/worker.h"

#define SLICE_NS        1000000000ull   /* how often an idle wait checks the daemon is alive */
/*
 * A chained step's reply holds the tail only after a step this short, the
 * daemon then being most likely to poll and take it on its stamp. A daemon
 * found asleep is woken at once (ring_commit_held()); one missed as it
 * falls asleep wakes at the request's end or at its own slice
 * (engine/instance/inst_call.c).
 */
#define HOLD_STEP_NS    20000u

static bool daemon_alive(const struct worker *w)
{
        return getppid() == w->ppid;
}

bool wait_writable(struct worker *w)
{
        for (;;) {
                struct timespec dl;
                int r;

                wait_deadline_in(&dl, SLICE_NS);
                r = ring_wait_writable(w->tx, &w->wait, &dl);
                if (r == 0)
                        return true;
                if (r != -ETIMEDOUT || !daemon_alive(w))
                        return false;
        }
}

/*
 * The deadline of the idle check is kept from wait to wait and moved on
 * only when it passes: reading the clock before every wait would cost as
 * much as the wait itself when the next request is already coming.
 */
static int wait_readable(struct worker *w)
{
        int r;

        if (!w->idle_deadline.tv_sec && !w->idle_deadline.tv_nsec)
                wait_deadline_in(&w->idle_deadline, SLICE_NS);
        r = chan_wait_rx(w->chan, &w->wait, &w->idle_deadline);
        if (r == -ETIMEDOUT) {
                wait_deadline_in(&w->idle_deadline, SLICE_NS);
                return daemon_alive(w) ? 0 : -EPIPE;
        }
        return r;
}

static int push(struct worker *w, const void *rec, size_t len, bool may_drop, bool held)
{
        for (;;) {
                int r = held ? ring_push_held(w->tx, rec, len) : ring_push(w->tx, rec, len);

                if (r != -ENOSPC)
                        return r;
                if (may_drop)
                        return r;
                /* The daemon frees space only for records it can see. */
                ring_flush(w->tx);
                if (!wait_writable(w))
                        return -EPIPE;
        }
}

int send_event(struct worker *w, enum call_op op, const void *body, size_t body_len,
               const void *payload, size_t payload_len, bool may_drop)
{
        unsigned char rec[sizeof(struct call_hdr) + CALL_BODY_MAX + CALL_MSG_MAX +
                          CALL_CATEGORY_MAX + 16];
        struct call_hdr h = {
                .magic = CALL_MAGIC,
                .kind = CALL_EVENT,
                .op = (uint16_t)op,
                .seq = w->seq,
                .body_len = (uint32_t)body_len,
                .payload_len = payload_len,
        };
        size_t len = sizeof(h) + body_len + payload_len;

        if (len > sizeof(rec) || body_len % 8)
                return -EMSGSIZE;
        memcpy(rec, &h, sizeof(h));
        memcpy(rec + sizeof(h), body, body_len);
        if (payload_len)
                memcpy(rec + sizeof(h) + body_len, payload, payload_len);
        return push(w, rec, len, may_drop, false);
}

void reply_refuse(struct reply *rp, enum call_error e, const char *fmt, ...)
{
        va_list ap;
        int n;

        if (rp->head.error)
                return;         /* the first reason stands */
        rp->head.error = e;
        va_start(ap, fmt);
        n = vsnprintf(rp->msg, sizeof(rp->msg), fmt, ap);
        va_end(ap);
        rp->msg_len = n < 0 ? 0 : (size_t)n < sizeof(rp->msg) ? (size_t)n : sizeof(rp->msg) - 1;
}

void reply_status(struct reply *rp, int status)
{
        if (status > rp->head.status)
                rp->head.status = status;
}

static void reply_init(struct worker *w, struct reply *rp, enum call_op op)
{
        size_t off;

        rp->op = op;
        rp->head = (struct call_reply){ 0 };
        rp->result_len = call_result_body(op);
        memset(rp->result, 0, rp->result_len);
        rp->msg_len = 0;
        off = sizeof(struct call_hdr) + sizeof(struct call_reply) + rp->result_len;
        call_out_init(&rp->out, w->scratch[w->depth].p + off, w->max_record - off,
                      w->side, w->side_size);
}

static int reply_send(struct worker *w, struct reply *rp, uint64_t seq)
{
        unsigned char *rec = w->scratch[w->depth].p;
        struct call_hdr h;
        size_t len;

        if (rp->head.error) {
                /* A refused call reports no partial results. */
                memset(rp->result, 0, rp->result_len);
                call_out_init(&rp->out, rp->out.inl, rp->out.inl_cap, w->side, w->side_size);
        }
        if (rp->msg_len && call_out_put(&rp->out, rp->msg, rp->msg_len, &rp->head.msg) < 0)
                rp->head.msg = (struct call_range){ 0, 0 };
        rp->head.state = w->state;
        /* Those the queue had no room for are counted here (log.c). */
        log_count_foreign(w);
        rp->head.logs_dropped = w->logs_dropped;
        h = (struct call_hdr){
                .magic = CALL_MAGIC,
                .kind = CALL_REPLY,
                .op = (uint16_t)rp->op,
                .seq = seq,
                .body_len = (uint32_t)(sizeof(rp->head) + rp->result_len),
                .flags = rp->out.in_side ? CALL_F_SIDE : 0,
                .payload_len = rp->out.len,
        };
        memcpy(rec, &h, sizeof(h));
        memcpy(rec + sizeof(h), &rp->head, sizeof(rp->head));
        memcpy(rec + sizeof(h) + sizeof(rp->head), rp->result, rp->result_len);
        len = sizeof(h) + h.body_len + (rp->out.in_side ? 0 : rp->out.len);
        return push(w, rec, len, false, w->hold_reply && w->plain && w->step_ns < HOLD_STEP_NS);
}

/* Copy the next request, record and side payload, into w->req[depth]. */
static int copy_request(struct worker *w, const void *rec, size_t len, struct call_in *in)
{
        struct wbuf *b = &w->req[w->depth];
        uint64_t plen, off;
        void *side;
        bool in_side;
        int r;

        if (wbuf_reserve(b, len) < 0)
                return -ENOMEM;
        memcpy(b->p, rec, len);
        r = call_parse(b->p, len, in, &in_side);
        if (r < 0 || !in_side)
                return r;
        plen = in->hdr.payload_len;
        if (chan_side_ref(w->chan, in->hdr.payload_off, plen, &side) < 0)
                return -EBADMSG;
        off = (len + 7) & ~(size_t)7;
        if (wbuf_reserve(b, off + plen) < 0)
                return -ENOMEM;
        if (plen)
                memcpy(b->p + off, side, plen);
        /* The buffer may have moved: point into it again. */
        in->body = b->p + sizeof(struct call_hdr);
        in->payload = b->p + off;
        in->payload_len = plen;
        return 0;
}

int recv_request(struct worker *w, struct call_in *in)
{
        for (;;) {
                const void *rec;
                size_t len;
                int r;

                r = ring_peek(w->rx, &rec, &len);
                if (r == 0) {
                        r = copy_request(w, rec, len, in);
                        if (ring_release(w->rx) < 0)
                                return -EPROTO;
                        if (r == -EBADMSG) {
                                /* A header we cannot trust: no seq to answer to. */
                                log_worker(w, fmi3Fatal, "malformed request record from the daemon");
                                return -EPROTO;
                        }
                        return r;
                }
                if (r != -EAGAIN)
                        return r;
                r = wait_readable(w);
                if (r < 0)
                        return r;
        }
}

/* Handlers by op; NULL: not a function of that FMI version. */
static handler_fn *const handlers3[CALL_OP_COUNT] = {
        [CALL_OP_INSTANTIATE] = h_instantiate3,
        [CALL_OP_FREE] = h_free,
        [CALL_OP_SET_DEBUG_LOGGING] = h_debug_logging,
        [CALL_OP_ENTER_INIT] = h_enter_init3,
        [CALL_OP_EXIT_INIT] = h_exit_init,
        [CALL_OP_ENTER_CONFIG] = h_enter_config,
        [CALL_OP_EXIT_CONFIG] = h_exit_config,
        [CALL_OP_ENTER_EVENT] = h_enter_event,
        [CALL_OP_ENTER_STEP] = h_enter_step,
        [CALL_OP_EVALUATE_DISCRETE] = h_evaluate,
        [CALL_OP_UPDATE_DISCRETE] = h_update_discrete,
        [CALL_OP_TERMINATE] = h_terminate,
        [CALL_OP_RESET] = h_reset,
        [CALL_OP_GET] = h_get,
        [CALL_OP_SET] = h_set,
        [CALL_OP_GET_INTERVAL_DECIMAL] = h_clock_timing,
        [CALL_OP_GET_INTERVAL_FRACTION] = h_clock_timing,
        [CALL_OP_GET_SHIFT_DECIMAL] = h_clock_timing,
        [CALL_OP_GET_SHIFT_FRACTION] = h_clock_timing,
        [CALL_OP_SET_INTERVAL_DECIMAL] = h_clock_timing,
        [CALL_OP_SET_INTERVAL_FRACTION] = h_clock_timing,
        [CALL_OP_SET_SHIFT_DECIMAL] = h_clock_timing,
        [CALL_OP_SET_SHIFT_FRACTION] = h_clock_timing,
        [CALL_OP_DO_STEP] = h_do_step,
        [CALL_OP_GET_OUTPUT_DERIVATIVES] = h_output_derivatives,
        [CALL_OP_DIRECTIONAL_DERIVATIVE] = h_partial,
        [CALL_OP_ADJOINT_DERIVATIVE] = h_partial,
        [CALL_OP_GET_FMU_STATE] = h_fmu_state,
        [CALL_OP_SET_FMU_STATE] = h_fmu_state,
        [CALL_OP_FREE_FMU_STATE] = h_fmu_state,
        [CALL_OP_SERIALIZED_SIZE] = h_fmu_state,
        [CALL_OP_SERIALIZE] = h_fmu_state,
        [CALL_OP_DESERIALIZE] = h_fmu_state,
        [CALL_OP_NUM_DEPENDENCIES] = h_dependencies,
        [CALL_OP_DEPENDENCIES] = h_dependencies,
};

static handler_fn *const handlers2[CALL_OP_COUNT] = {
        [CALL_OP_INSTANTIATE] = h_instantiate2,
        [CALL_OP_FREE] = h_free,
        [CALL_OP_SET_DEBUG_LOGGING] = h_debug_logging,
        [CALL_OP_SETUP_EXPERIMENT] = h_setup_experiment,
        [CALL_OP_ENTER_INIT] = h_enter_init2,
        [CALL_OP_EXIT_INIT] = h_exit_init,
        [CALL_OP_TERMINATE] = h_terminate,
        [CALL_OP_RESET] = h_reset,
        [CALL_OP_GET] = h_get,
        [CALL_OP_SET] = h_set,
        [CALL_OP_DO_STEP] = h_do_step,
        [CALL_OP_CANCEL_STEP] = h_cancel_step,
        [CALL_OP_GET_STATUS] = h_get_status,
        [CALL_OP_GET_OUTPUT_DERIVATIVES] = h_output_derivatives,
        [CALL_OP_SET_INPUT_DERIVATIVES] = h_input_derivatives,
        [CALL_OP_DIRECTIONAL_DERIVATIVE] = h_partial,
        [CALL_OP_GET_FMU_STATE] = h_fmu_state,
        [CALL_OP_SET_FMU_STATE] = h_fmu_state,
        [CALL_OP_FREE_FMU_STATE] = h_fmu_state,
        [CALL_OP_SERIALIZED_SIZE] = h_fmu_state,
        [CALL_OP_SERIALIZE] = h_fmu_state,
        [CALL_OP_DESERIALIZE] = h_fmu_state,
};

/* The type a GET or SET names, for function names in messages. */
static enum md_type request_type(const struct call_in *in)
{
        struct call_values cv;

        if ((in->hdr.op != CALL_OP_GET && in->hdr.op != CALL_OP_SET) ||
            in->hdr.body_len != sizeof(cv))
                return MD_TYPE_COUNT;
        memcpy(&cv, in->body, sizeof(cv));
        return cv.type < MD_TYPE_COUNT ? (enum md_type)cv.type : MD_TYPE_COUNT;
}

static bool body_ok(const struct call_in *in)
{
        enum call_op op = (enum call_op)in->hdr.op;

        if (op == CALL_OP_ENTER_INIT && in->hdr.body_len == 0)
                return true;
        return in->hdr.body_len == call_request_body(op);
}

/* A chained DO_STEP whose predecessor did not complete plainly (call_ops.h, call_do_step.chained). */
static bool chain_broken(const struct call_in *in, bool after_plain)
{
        if (after_plain || in->hdr.op != CALL_OP_DO_STEP ||
            in->hdr.body_len != sizeof(struct call_do_step))
                return false;
        /* The one byte, read once; h_do_step() refuses any value but 0 and 1. */
        return in->body[offsetof(struct call_do_step, chained)] == 1;
}

/* op has no handler in this FMI version: named as the other version, which has it, spells it. */
static void refuse_other_version(const struct worker *w, enum call_op op, struct reply *rp)
{
        int mine = w->fmi == MD_FMI3 ? 3 : 2, other = 5 - mine;
        const char *name = call_fmi_function(op, other);

        if (name)
                reply_refuse(rp, CALL_E_NOTSUP, "fmi%d%s is not a Co-Simulation function of FMI "
                             "%d.0", other, name, mine);
        else
                reply_refuse(rp, CALL_E_NOTSUP, "%s is not a Co-Simulation function of FMI %d.0",
                             call_op_name(op), mine);
}

void dispatch(struct worker *w, const struct call_in *in)
{
        enum call_op op = (enum call_op)in->hdr.op;
        handler_fn *h = NULL;
        struct reply rp;
        bool after_plain = w->plain;

        /* Only h_do_step() sets it again, and only for a plain step. */
        w->plain = false;
        w->seq = in->hdr.seq;
        w->logs_sent = w->logs_dropped = 0;
        w->out_sent = w->out_dropped = 0;
        w->last_error[0] = '\0';
        reply_init(w, &rp, op);
        if (in->hdr.kind != CALL_REQUEST || op < CALL_OP_INSTANTIATE || op == CALL_OP_IU_ANSWER) {
                reply_refuse(&rp, CALL_E_BADMSG, "%s is not a request here", call_op_name(op));
        } else if (!body_ok(in)) {
                reply_refuse(&rp, CALL_E_BADMSG, "%s: body of %u bytes, expected %zu",
                             call_op_name(op), in->hdr.body_len, call_request_body(op));
        } else if (chain_broken(in, after_plain)) {
                reply_refuse(&rp, CALL_E_SKIPPED, "%s: not run: the step before it did not "
                             "complete plainly", w->fmi == MD_FMI3 ? "fmi3DoStep" : "fmi2DoStep");
        } else {
                h = (w->fmi == MD_FMI3 ? handlers3 : handlers2)[op];
                if (!h)
                        refuse_other_version(w, op, &rp);
                else if (fsm_allows(w, op, request_type(in), &rp))
                        h(w, in, &rp);
                if (!rp.head.error) {
                        fsm_after(w, op, rp.head.status);
                        clocks_after(w, op, rp.head.status);
                }
        }
        /* What the FMU's own threads logged during the call, before its reply. */
        log_drain_foreign(w);
        /* A partial last line goes out at the end: Terminate may be the last reply read. */
        if ((op == CALL_OP_FREE || op == CALL_OP_TERMINATE) && !rp.head.error)
                output_finish(w);
        else
                output_drain(w);
        if (!rp.head.error && rp.head.status >= fmi3Discard && !rp.msg_len && w->last_error[0]) {
                rp.msg_len = strlen(w->last_error);
                memcpy(rp.msg, w->last_error, rp.msg_len + 1);
        }
        /* What the sandbox refused during the call goes out before its reply. */
        sandbox_flush(w);
        if (reply_send(w, &rp, in->hdr.seq) < 0)
                w->quit = true;
        if (op == CALL_OP_FREE && !rp.head.error)
                w->quit = true;
}

/*
 * The steps of a DO_STEP (call_do_step.repeat): 1, or 2..CALL_REPEAT_MAX
 * with *ret_times pointing at repeat + 1 times in the private copy. A
 * repeat that is out of range or whose times do not hold is left to
 * h_do_step(), which refuses it: one reply, as for any malformed request.
 */
static uint32_t steps_of(const struct call_in *in, const double **ret_times)
{
        struct call_do_step ds;
        const void *p;

        if (in->hdr.op != CALL_OP_DO_STEP || in->hdr.body_len != sizeof(ds))
                return 1;
        memcpy(&ds, in->body, sizeof(ds));
        if (ds.repeat < 2 || ds.repeat > CALL_REPEAT_MAX ||
            call_in_range(in, &ds.times, sizeof(double), (uint64_t)ds.repeat + 1, &p) < 0)
                return 1;
        *ret_times = p;
        return ds.repeat;
}

/*
 * Make the private request step i of its repeat: its times, a single step,
 * chained behind the one before, and its own sequence number. The body is
 * the worker's copy (copy_request()), so rewriting it changes nothing the
 * daemon sees.
 */
static void step_i(struct call_in *in, const double *times, uint32_t i, uint64_t seq0)
{
        unsigned char *body = (unsigned char *)(uintptr_t)in->body;
        struct call_do_step ds;
        double t0, t1;

        memcpy(&t0, &times[i], sizeof(t0));
        memcpy(&t1, &times[i + 1], sizeof(t1));
        memcpy(&ds, body, sizeof(ds));
        ds.current_communication_point = t0;
        ds.communication_step_size = t1 - t0;
        ds.repeat = 0;
        if (i)
                ds.chained = 1;
        memcpy(body, &ds, sizeof(ds));
        in->hdr.seq = seq0 + i;
}

bool serve_one(struct worker *w, enum call_op *ret_op)
{
        const double *times = NULL;
        struct call_in in;
        uint64_t seq0;
        uint32_t n;
        int r;

        r = recv_request(w, &in);
        if (r < 0)
                return false;
        *ret_op = (enum call_op)in.hdr.op;
        n = steps_of(&in, &times);
        seq0 = in.hdr.seq;
        for (uint32_t i = 0; i < n && !w->quit; i++) {
                if (n > 1)
                        step_i(&in, times, i, seq0);
                w->hold_reply = i + 1 < n;
                w->step_ns = UINT64_MAX;
                dispatch(w, &in);
        }
        w->hold_reply = false;
        ring_flush(w->tx);
        return !w->quit;
}

int status_norm(const struct worker *w, int status)
{
        int max = w->fmi == MD_FMI2 ? fmi2Pending : fmi3Fatal;

        return status < 0 || status > max ? fmi3Fatal : status;
}
