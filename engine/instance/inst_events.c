/*
 * inst_events: the worker's events met while a call waits for its reply
 * (inst_call.c): a log record handed to the log callback, an intermediate
 * update handed to its callback and answered.
 *
 * DESIGN: an event is copied and its record released before any callback
 * runs: the intermediate update callback makes nested calls on the same
 * ring. The time a callback takes does not count against the worker's
 * deadline: the deadline moves by it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "engine/instance/inst_int.h"

/* Copy a text range of an event or reply into buf (NUL-terminated); -EPROTO when malformed. */
int call_take_text(struct inst *inst, const struct call_in *in, const struct call_range *r,
                          uint64_t max, char *buf)
{
        const void *p;

        if (call_in_bytes(in, r, max, &p) < 0)
                return inst_protocol(inst, "a text range is outside the message");
        if (r->len)
                memcpy(buf, p, r->len);
        buf[r->len] = '\0';
        if (strlen(buf) != r->len)
                return inst_protocol(inst, "a text holds a NUL byte");
        return 0;
}
int call_on_log(struct inst *inst, const struct call_in *in, struct timespec *deadline)
{
        uint64_t t0;
        char category[CALL_CATEGORY_MAX + 1], message[CALL_MSG_MAX + 1];
        struct call_log ev;
        int r;

        if (in->hdr.body_len != sizeof(ev))
                return inst_protocol(inst, "a log event of the wrong size");
        memcpy(&ev, in->body, sizeof(ev));
        if (ev.status < 0 || ev.status > 4 || ev.truncated > 1)
                return inst_protocol(inst, "a log event with an invalid status");
        r = call_take_text(inst, in, &ev.category, CALL_CATEGORY_MAX, category);
        if (r == 0)
                r = call_take_text(inst, in, &ev.message, CALL_MSG_MAX, message);
        ring_release(inst->rx);
        if (r < 0)
                return r;
        if (fault_on_log(inst, ev.status, category, message))
                return 0;
        if (inst->log) {
                t0 = now_ns();
                inst->log(inst->log_ctx, inst, ev.status, category, message);
                ns_ts(ts_ns(deadline) + (now_ns() - t0), deadline);
        }
        return 0;
}

int call_on_iu(struct inst *inst, const struct call_in *in, enum call_op op,
                struct timespec *deadline)
{
        struct call_iu ev;
        struct call_iu_answer a = { 0 };
        struct inst_iu iu;
        bool early = false;
        double t;
        uint64_t t0, seq;
        struct req rq;
        int r;

        if (in->hdr.body_len != sizeof(ev))
                return inst_protocol(inst, "an intermediate update event of the wrong size");
        memcpy(&ev, in->body, sizeof(ev));
        ring_release(inst->rx);
        if (op != CALL_OP_DO_STEP || inst->depth || !inst->iu_wanted || inst->fmi != 3)
                return inst_protocol(inst, "an intermediate update nobody asked for");
        if (ev.set_requested > 1 || ev.get_allowed > 1 || ev.step_finished > 1 ||
            ev.can_return_early > 1)
                return inst_protocol(inst, "an intermediate update with invalid flags");
        iu = (struct inst_iu){
                .time = ev.time,
                .set_requested = ev.set_requested,
                .get_allowed = ev.get_allowed,
                .step_finished = ev.step_finished,
                .can_return_early = ev.can_return_early,
        };
        t = ev.time;
        t0 = now_ns();
        inst->depth = 1;
        if (inst->iu)
                inst->iu(inst->iu_ctx, inst, &iu, &early, &t);
        inst->depth = 0;
        /* Nested calls named themselves; the step is in flight again. */
        inst->cur_op = op;
        inst->cur_timeout_ns = inst->step_timeout_ns;
        if (inst->fault)
                return inst->fault;
        /* The callback's time is the master's, not the worker's. */
        ns_ts(ts_ns(deadline) + (now_ns() - t0), deadline);
        a.early_return_requested = early;
        a.early_return_time = early ? t : ev.time;
        req_init(inst, &rq, CALL_OP_IU_ANSWER, sizeof(a));
        memcpy(rq.body, &a, sizeof(a));
        r = call_send(inst, &rq, deadline, &seq);
        return r;
}
