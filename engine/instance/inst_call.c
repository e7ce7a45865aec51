/*
 * inst_call: one round trip with a worker: build a request, push it, wait
 * for the reply while serving the worker's events (log records,
 * intermediate updates: inst_events.c), check the reply, and turn what
 * can go wrong into the errors of instance.h.
 *
 * DESIGN: waiting is sliced: each slice waits on the reply ring with the
 * instance's wait policy (spin, yield, futex) for at most SLICE_NS, then
 * checks that the worker is still alive, so a dead worker is reported
 * within a slice, not at the deadline. A missed deadline, a dead worker or
 * a reply that breaks the protocol is a sticky fault (inst_fault.c words
 * it and kills a worker that missed its deadline or broke the protocol).
 * A death the supervisor saw between calls faults the next call before
 * anything is sent.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/instance/inst_int.h"

#define SLICE_NS        20000000ull     /* 20 ms between liveness checks */
/*
 * The slice of a step with chained steps behind it: the worker may hold
 * its reply's tail (worker/serve.c) and miss this thread falling asleep
 * (ring_commit_held()), so a sleep ends this soon to look at the stamp.
 */
#define HELD_SLICE_NS   1000000ull

/* Active calls of this process: the spin hint for workers and our own policy. */
static _Atomic unsigned active_calls;
/*
 * Waiters beside the workers (inst_count_waiter()): in the workers' hint
 * only. This thread spins on for a reply all the same: such a waiter
 * waits for what this thread does next, so holding its cpu delays nobody.
 */
static _Atomic unsigned waiters;
/*
 * Posts this thread announced with inst_post_batch() and has not made yet;
 * they are already counted in active_calls. Thread-local: each master is
 * one thread and announces only its own posts.
 */
static _Thread_local unsigned announced;

struct arena_chunk {
        struct arena_chunk *next;
        max_align_t data[];
};

void *arena_alloc(struct inst *inst, size_t n)
{
        struct arena_chunk *c;

        if (n > SIZE_MAX - sizeof(*c))
                return NULL;
        c = malloc(sizeof(*c) + (n ? n : 1));
        if (!c)
                return NULL;
        c->next = inst->arena;
        inst->arena = c;
        return c->data;
}

void arena_reset(struct inst *inst)
{
        while (inst->arena) {
                struct arena_chunk *c = inst->arena;

                inst->arena = c->next;
                free(c);
        }
}

void call_deadline(struct inst *inst, uint64_t override_ns, uint64_t now, struct timespec *ret)
{
        uint64_t t = override_ns ? override_ns : inst->next_timeout_ns ? inst->next_timeout_ns :
                     inst->timeout_ns;

        /* A new call uses up the one-shot, whether or not it overrides it. */
        inst->next_timeout_ns = 0;
        call_deadline_restart(inst, t, now, ret);
}

void call_deadline_restart(struct inst *inst, uint64_t timeout_ns, uint64_t now, struct timespec *ret)
{
        inst->last_timeout_ns = timeout_ns;
        inst->last_start_ns = now ? now : now_ns();
        ns_ts(inst->last_start_ns + timeout_ns, ret);
}

int inst_fault_set(struct inst *inst, int err, const char *fmt, ...)
{
        va_list ap;

        if (inst->fault)
                return inst->fault;
        inst->fault = err;
        va_start(ap, fmt);
        vsnprintf(inst->msg, sizeof(inst->msg), fmt, ap);
        va_end(ap);
        /* Pairs with the acquire in inst_health(). */
        atomic_store_explicit(&inst->fault_pub, err, memory_order_release);
        /* Never trusted again: stopped now, not at inst_free() (inst_fault.c). */
        if (err == -ETIMEDOUT || err == -EPROTO)
                fault_kill(inst);
        return err;
}

int call_begin(struct inst *inst, bool chained)
{
        if (inst->fault)
                return inst->fault;
        /* Dead while nobody was calling: say so now, without sending anything. */
        if (fault_check_idle(inst) < 0)
                return inst->fault;
        if (inst->n_posted && !chained && inst->depth == 0) {
                snprintf(inst->msg, sizeof(inst->msg), "a posted step awaits inst_wait_step()");
                return -EBUSY;
        }
        inst->msg[0] = '\0';
        /* A chained post keeps what the step in flight has not handed over yet. */
        if (!chained)
                arena_reset(inst);
        return 0;
}

void req_init(struct inst *inst, struct req *rq, enum call_op op, size_t body_len)
{
        size_t off = sizeof(struct call_hdr) + body_len;

        rq->op = op;
        rq->body_len = body_len;
        memset(rq->body, 0, body_len);
        call_out_init(&rq->out, inst->scratch + off, inst->max_record - off, inst->side,
                      inst->side_size);
}

int req_put(struct req *rq, const void *p, uint64_t n, struct call_range *ret)
{
        return call_out_put(&rq->out, p, n, ret);
}

int call_send(struct inst *inst, struct req *rq, const struct timespec *deadline, uint64_t *ret_seq)
{
        struct call_hdr h = {
                .magic = CALL_MAGIC,
                .kind = CALL_REQUEST,
                .op = (uint16_t)rq->op,
                .seq = ++inst->seq,
                .body_len = (uint32_t)rq->body_len,
                .flags = rq->out.in_side ? CALL_F_SIDE : 0,
                .payload_len = rq->out.len,
        };
        size_t len = sizeof(h) + rq->body_len + (rq->out.in_side ? 0 : rq->out.len);
        uint32_t hint = atomic_load_explicit(&active_calls, memory_order_relaxed) + 1 +
                        atomic_load_explicit(&waiters, memory_order_relaxed);
        int r;

        memcpy(inst->scratch, &h, sizeof(h));
        memcpy(inst->scratch + sizeof(h), rq->body, rq->body_len);
        /* Only on change: each store costs the worker a cache miss on its next wait. */
        if (hint != inst->hint) {
                chan_set_active(inst->chan, hint);
                inst->hint = hint;
        }
        for (;;) {
                r = ring_push(inst->tx, inst->scratch, len);
                if (r == 0)
                        break;
                if (r != -ENOSPC)
                        return inst_fault_set(inst, -EPROTO, "request ring broken: %s", strerror(-r));
                /* The worker drains requests; a full ring means it is stuck or gone. */
                r = ring_wait_writable(inst->tx, &inst->wait, deadline);
                if (r == -ETIMEDOUT)
                        return spawn_poll(inst) ? fault_died(inst) : fault_timeout(inst);
                if (r < 0)
                        return inst_fault_set(inst, -EPROTO, "request ring broken: %s", strerror(-r));
        }
        *ret_seq = h.seq;
        return 0;
}

/* Why the call in flight is no longer waited for (its worker is killed), or NULL. */
static const char *unwanted(struct inst *inst)
{
        bool cancelled = inst->cancel && atomic_load_explicit(inst->cancel, memory_order_relaxed);
        /*
         * A Terminate, which may take as long as initialization, gets
         * INST_ABANDON_TERMINATE_NS from its start to flush what it kept
         * once its session is going away or its caller was interrupted.
         */
        bool term_over = inst->cur_op == CALL_OP_TERMINATE &&
                         now_ns() - inst->last_start_ns >= INST_ABANDON_TERMINATE_NS;

        if (term_over && cancelled && !atomic_load(&inst->abandoned))
                return "terminate: it was cancelled (the run interrupted or the daemon shutting "
                       "down)";
        /* Its session is going away: the step's result is wanted by no one. */
        if ((inst->cur_op == CALL_OP_DO_STEP || term_over) &&
            atomic_load_explicit(&inst->abandoned, memory_order_acquire)) {
                const char *why = atomic_load_explicit(&inst->abandoned_why, memory_order_relaxed);

                snprintf(inst->unwanted, sizeof(inst->unwanted), "%s: %s",
                         inst->cur_op == CALL_OP_DO_STEP ? "step" : "terminate",
                         why ? why : "the session was abandoned");
                return inst->unwanted;
        }
        /* Its caller was interrupted: nothing but the end of the FMU is waited for. */
        if (cancelled && inst->cur_op != CALL_OP_TERMINATE && inst->cur_op != CALL_OP_FREE)
                return "call: it was cancelled (the run interrupted or the daemon shutting down)";
        return NULL;
}

int call_next(struct inst *inst, const struct timespec *deadline, const void **rec,
                       size_t *len)
{
        uint64_t end = ts_ns(deadline);
        /*
         * The first slice is measured from the clock call_deadline() read,
         * so a reply that comes at once costs no clock read. Only when the
         * deadline is at least a slice after that reading: then the slice
         * ends first, and if the reading is stale (a step collected a while
         * after it was posted) the slice is only shorter, and a deadline
         * that passed meanwhile is still seen within the wait's first polls.
         * A short deadline (a step budget) reads the clock before waiting,
         * so a reply that is late is late.
         */
        uint64_t now = inst->last_start_ns;
        uint64_t slice_ns = inst->cur_op == CALL_OP_DO_STEP && inst->n_posted > 1 ? HELD_SLICE_NS
                            : SLICE_NS;
        bool reuse = end > now && end - now >= slice_ns;
        struct wait_policy p = inst->wait;

        for (bool first = true;; first = false) {
                struct timespec slice;
                int r;

                r = ring_peek(inst->rx, rec, len);
                if (r == 0)
                        return 0;
                if (r != -EAGAIN)
                        return inst_protocol(inst, "the reply ring is broken");
                if (!first || !reuse)
                        now = now_ns();
                const char *why = unwanted(inst);
                if (why) {
                        fault_kill(inst);
                        return inst_fault_set(inst, -ECANCELED, "worker %d killed in its %s",
                                              (int)inst->pid, why);
                }
                if (now >= end) {
                        if (spawn_poll(inst) && ring_peek(inst->rx, rec, len) != 0)
                                return fault_died(inst);
                        if (inst->reaped)
                                continue;
                        return fault_timeout(inst);
                }
                ns_ts(now + slice_ns < end ? now + slice_ns : end, &slice);
                if (!p.runnable)
                        p.runnable = atomic_load_explicit(&active_calls, memory_order_relaxed) + 1;
                /*
                 * A heavy step with calls outnumbering cpus waits as any
                 * other (with no spin: wait.c), yielding, then asleep. Not
                 * asleep at once: a worker that finishes first wakes a
                 * sleeping master, which the scheduler then often queues
                 * on the cpu of the worker still stepping, where it waits
                 * 20 to 30 µs a point after that one has replied (a point
                 * of two coupled 110 µs steps on 2 cpus, docs/BENCHMARKS.md
                 * "Coupled pairs"). A step longer than the yield budget is
                 * waited for asleep at once: the yields would end before
                 * its reply anyway, and only burn a cpu until then.
                 */
                if (p.strategy == WAIT_ADAPTIVE && inst->cur_op == CALL_OP_DO_STEP &&
                    p.yield_ns && inst->svc_last_ns >= INST_HEAVY_STEP_NS &&
                    inst->svc_last_ns >= p.yield_ns && p.runnable > wait_ncpu())
                        p.strategy = WAIT_FUTEX;
                r = ring_wait_readable(inst->rx, &p, &slice);
                if (r == -ETIMEDOUT) {
                        /* Dead: read what it sent before it went, else report it. */
                        if (spawn_poll(inst) && ring_peek(inst->rx, rec, len) != 0)
                                return fault_died(inst);
                } else if (r < 0) {
                        return inst_protocol(inst, "the reply ring is broken");
                }
        }
}

static void report_dropped(struct inst *inst, uint32_t n)
{
        char msg[160];

        if (!n)
                return;
        inst->logs_dropped += n;
        if (inst->log) {
                snprintf(msg, sizeof(msg), "%" PRIu32 " log messages of the FMU were not forwarded "
                         "(past the limit of a call, or of the queue of the FMU's own threads)", n);
                inst->log(inst->log_ctx, inst, 1, "fmud", msg);
        }
}

/* Check a reply's header and status part; the record stays held. */
static int check_reply(struct inst *inst, enum call_op op, struct rep *rp)
{
        size_t result = call_result_body(op);
        struct call_reply *h = &rp->head;
        char text[CALL_MSG_MAX + 1];
        int r;

        if (rp->in.hdr.body_len != sizeof(*h) + result)
                return inst_protocol(inst, "a reply body of the wrong size");
        /* Out of the record once, each part straight to where it is checked and used. */
        memcpy(h, rp->in.body, sizeof(*h));
        memcpy(rp->result, rp->in.body + sizeof(*h), result);
        if (h->error < 0 || h->error >= CALL_E_COUNT || h->state >= CALL_ST_COUNT)
                return inst_protocol(inst, "a reply with an invalid error or state");
        if (!h->error && (h->status < 0 || h->status > INST_FATAL) &&
            !(h->status == INST_PENDING && inst->fmi == 2 &&
              (op == CALL_OP_DO_STEP || op == CALL_OP_GET_STATUS)))
                return inst_protocol(inst, "a reply with an invalid status");
        r = call_take_text(inst, &rp->in, &h->msg, CALL_MSG_MAX, text);
        if (r < 0)
                return r;
        inst->state = (int)h->state;
        report_dropped(inst, h->logs_dropped);
        if (h->error) {
                snprintf(inst->msg, sizeof(inst->msg), "%s", text);
                return call_error_errno(h->error);
        }
        if (h->status > INST_WARNING)
                snprintf(inst->msg, sizeof(inst->msg), "%s", text);
        return h->status;
}

int call_recv(struct inst *inst, enum call_op op, uint64_t seq, struct timespec *deadline,
              struct rep *rp)
{
        rp->held = false;
        for (;;) {
                const void *rec;
                size_t len;
                bool side;
                int r;

                r = call_next(inst, deadline, &rec, &len);
                if (r < 0)
                        return r;
                if (call_parse(rec, len, &rp->in, &side) < 0) {
                        ring_release(inst->rx);
                        return inst_protocol(inst, "a malformed record");
                }
                if (side) {
                        void *p;

                        if (chan_side_ref(inst->chan, rp->in.hdr.payload_off, rp->in.hdr.payload_len,
                                          &p) < 0) {
                                ring_release(inst->rx);
                                return inst_protocol(inst, "a payload outside the side buffer");
                        }
                        rp->in.payload = p;
                        rp->in.payload_len = rp->in.hdr.payload_len;
                }
                if (rp->in.hdr.seq != seq) {
                        ring_release(inst->rx);
                        return inst_protocol(inst, "a message for another request");
                }
                if (rp->in.hdr.kind == CALL_EVENT) {
                        if (rp->in.hdr.op == CALL_EV_LOG)
                                r = call_on_log(inst, &rp->in, deadline);
                        else if (rp->in.hdr.op == CALL_EV_IU)
                                r = call_on_iu(inst, &rp->in, op, deadline);
                        else {
                                ring_release(inst->rx);
                                r = inst_protocol(inst, "an unexpected event");
                        }
                        if (r < 0)
                                return r;
                        /* A worker that only ever sends events must still meet the deadline. */
                        if (now_ns() > ts_ns(deadline))
                                return fault_timeout(inst);
                        continue;
                }
                if (rp->in.hdr.kind != CALL_REPLY || rp->in.hdr.op != op) {
                        ring_release(inst->rx);
                        return inst_protocol(inst, "a reply to another function");
                }
                rp->held = true;
                r = check_reply(inst, op, rp);
                if (r < 0 && inst->fault)
                        call_end(inst, rp);
                return r;
        }
}

void call_end(struct inst *inst, struct rep *rp)
{
        if (rp->held) {
                rp->held = false;
                (void) ring_release(inst->rx);
        }
}

int call_run(struct inst *inst, struct req *rq, struct rep *rp)
{
        enum call_op prev_op = inst->cur_op;
        enum md_type prev_type = inst->cur_type;
        uint64_t prev_timeout = inst->cur_timeout_ns;
        struct timespec deadline;
        uint64_t seq;
        int r;

        rp->held = false;
        call_deadline(inst, 0, 0, &deadline);
        /* Named in fault messages; a nested call (intermediate update) restores the outer one. */
        inst->cur_op = rq->op;
        inst->cur_timeout_ns = inst->last_timeout_ns;
        if (rq->op == CALL_OP_GET || rq->op == CALL_OP_SET) {
                struct call_values cv;

                memcpy(&cv, rq->body, sizeof(cv));
                inst->cur_type = (enum md_type)cv.type;
        }
        atomic_fetch_add_explicit(&active_calls, 1, memory_order_relaxed);
        r = call_send(inst, rq, &deadline, &seq);
        if (r == 0)
                r = call_recv(inst, rq->op, seq, &deadline, rp);
        atomic_fetch_sub_explicit(&active_calls, 1, memory_order_relaxed);
        inst->cur_op = prev_op;
        inst->cur_type = prev_type;
        inst->cur_timeout_ns = prev_timeout;
        return r;
}

int call_simple(struct inst *inst, enum call_op op, const void *body, size_t body_len,
                struct rep *rp)
{
        struct req rq;
        int r;

        rp->held = false;
        r = call_begin(inst, false);
        if (r < 0)
                return r;
        req_init(inst, &rq, op, body_len);
        if (body_len)
                memcpy(rq.body, body, body_len);
        return call_run(inst, &rq, rp);
}

int rep_range(struct inst *inst, const struct rep *rp, const struct call_range *r, uint64_t elem,
              uint64_t count, const void **ret)
{
        if (call_in_range(&rp->in, r, elem, count, ret) < 0)
                return inst_protocol(inst, "a result range that does not hold its values");
        return 0;
}

void call_active(int delta)
{
        if (delta > 0)
                atomic_fetch_add_explicit(&active_calls, 1, memory_order_relaxed);
        else
                atomic_fetch_sub_explicit(&active_calls, 1, memory_order_relaxed);
}

void inst_count_waiter(int delta)
{
        assert(delta == 1 || delta == -1);
        if (delta > 0)
                atomic_fetch_add_explicit(&waiters, 1, memory_order_relaxed);
        else
                atomic_fetch_sub_explicit(&waiters, 1, memory_order_relaxed);
}

void call_post_active(void)
{
        if (announced) {
                announced--;
                return;
        }
        atomic_fetch_add_explicit(&active_calls, 1, memory_order_relaxed);
}

void inst_post_batch(size_t n)
{
        /* Counted now, so the first worker posted already sees the others coming. */
        atomic_fetch_add_explicit(&active_calls, (unsigned)n, memory_order_relaxed);
        announced += (unsigned)n;
}

void inst_post_batch_end(void)
{
        /* Announced posts not made (a fault ended the batch) are no calls. */
        if (announced)
                atomic_fetch_sub_explicit(&active_calls, announced, memory_order_relaxed);
        announced = 0;
}
