/*
 * inst_step: one communication point in one round trip (DO_STEP: inputs,
 * doStep, outputs), split into post and wait so that a master can start
 * many instances and then collect them; FMI 2.0 cancel and status calls.
 *
 * DESIGN: inst_post_step() encodes everything (input values copied, the
 * output lists) and sends; the deadline starts then. inst_wait_step()
 * runs the log and intermediate update callbacks as their events arrive,
 * then checks the result against the request: phase and block in range,
 * out-arguments 0 or 1, and for a completed step exactly the output blocks
 * asked for, each of the type and count asked for. A chained step (one
 * posted behind another, instance.h) is the worker's to skip: it runs it
 * only after a plain step, so a caller that posts the next point of a run
 * early never gets an instance ahead of what it decides from the reply.
 * A step whose blocks are those of the last full step goes values only
 * (inst_kept.c), and its reply likewise.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "engine/instance/inst_int.h"

static_assert(INST_REPEAT_MAX <= CALL_REPEAT_MAX, "a repeat the worker takes");

/* Reply payload bytes a step's outputs need at most. */
static uint64_t outputs_need(const struct inst_step *s)
{
        uint64_t total = call_out_need((uint64_t)s->n_outputs * sizeof(struct call_values), 1);

        for (size_t i = 0; i < s->n_outputs; i++) {
                uint64_t n = values_reply_need(s->outputs[i].type, s->outputs[i].nvalues);

                if (n > UINT64_MAX - total)
                        return UINT64_MAX;
                total += n;
        }
        return total;
}

/*
 * Encode s: compact (values only) when its blocks are the layout the
 * worker keeps, else in full under *ret_layout, the layout number the
 * worker is to keep them as (0: none).
 */
static int encode(struct inst *inst, struct req *rq, const struct inst_step *s, bool *ret_compact,
                  uint32_t *ret_layout)
{
        struct call_do_step ds = {
                .current_communication_point = s->t,
                .communication_step_size = s->h,
                .no_set_prior = s->no_set_prior,
                .n_inputs = (uint32_t)s->n_inputs,
                .n_outputs = (uint32_t)s->n_outputs,
        };
        size_t n = s->n_inputs + s->n_outputs;
        struct call_values cv;
        uint64_t off;
        int r;

        for (size_t i = 0; i < s->n_outputs; i++) {
                const struct inst_out *b = &s->outputs[i];

                if ((b->nvalues && !b->values) || (b->type == MD_BINARY && b->nvalues && !b->sizes))
                        return -EINVAL;
        }
        req_init(inst, rq, CALL_OP_DO_STEP, sizeof(ds));
        /* A chained step's request stays in the ring: the side buffer may be the worker's now. */
        if (s->chained) {
                rq->out.side = NULL;
                rq->out.side_cap = 0;
        }
        ds.chained = s->chained;
        if (s->repeat > 1) {
                ds.repeat = s->repeat;
                r = req_put(rq, s->times, ((uint64_t)s->repeat + 1) * sizeof(double), &ds.times);
                if (r < 0)
                        return r;
        }
        *ret_compact = kept_match(inst, s);
        if (*ret_compact) {
                ds.compact = 1;
                ds.layout = kept_id(inst);
                *ret_layout = ds.layout;
                r = kept_put_inputs(rq, s, &ds.inputs);
                if (r < 0)
                        return r;
                memcpy(rq->body, &ds, sizeof(ds));
                return 0;
        }
        ds.layout = *ret_layout = kept_next(inst, s);
        if (call_out_alloc(&rq->out, (uint64_t)n * sizeof(cv), &off) < 0)
                return -EMSGSIZE;
        /*
         * Each descriptor goes into its reserved place as soon as it is
         * known: a values_put() may move the payload to the side buffer,
         * so the place is looked up again after each one.
         */
        for (size_t i = 0; i < s->n_inputs; i++) {
                const struct inst_in *b = &s->inputs[i];

                r = values_put(rq, b->type, b->vrs, b->nvr, b->values, b->sizes, b->nvalues, true, &cv);
                if (r < 0)
                        return r;
                memcpy(call_out_ptr(&rq->out, off + i * sizeof(cv)), &cv, sizeof(cv));
        }
        for (size_t i = 0; i < s->n_outputs; i++) {
                const struct inst_out *b = &s->outputs[i];

                r = values_put(rq, b->type, b->vrs, b->nvr, NULL, NULL, b->nvalues, false, &cv);
                if (r < 0)
                        return r;
                memcpy(call_out_ptr(&rq->out, off + (s->n_inputs + i) * sizeof(cv)), &cv, sizeof(cv));
        }
        ds.inputs = (struct call_range){ off, s->n_inputs * sizeof(cv) };
        ds.outputs = (struct call_range){ off + s->n_inputs * sizeof(cv), s->n_outputs * sizeof(cv) };
        memcpy(rq->body, &ds, sizeof(ds));
        return 0;
}

/* The i-th step awaiting inst_wait_step(), the oldest 0. */
static struct inst_posted *posted_at(struct inst *inst, unsigned i)
{
        return &inst->posted[(inst->posted_head + i) % INST_CHAIN_MAX];
}

/*
 * A chained step and the one before it must both travel in the ring: the
 * side buffer is the worker's until it replies to the first, and its reply
 * to the second may come before the daemon has read the first's.
 */
static int chain_refused(struct inst *inst, const struct inst_step *s, uint64_t room)
{
        uint32_t steps = s->repeat > 1 ? s->repeat : 1;
        const char *why = NULL;

        if (!inst->n_posted)
                why = "a chained step needs a step in flight to follow";
        else if (inst->n_posted + steps > INST_CHAIN_MAX)
                why = "more steps in flight than an instance holds";
        else if (inst->iu)
                why = "no chained step with an intermediate update callback";
        else if (outputs_need(s) > room / 2 ||
                 outputs_need(posted_at(inst, inst->n_posted - 1)->step) > room / 2)
                why = "a chained step's outputs must fit the ring";
        if (!why)
                return 0;
        snprintf(inst->msg, sizeof(inst->msg), "%s", why);
        return -EAGAIN;
}

int inst_post_step(struct inst *inst, const struct inst_step *s)
{
        struct inst_posted *e;
        uint64_t room;
        uint32_t steps, layout = 0;
        bool compact = false;
        struct req rq;
        int r;

        if (!s || s->n_inputs > UINT32_MAX || s->n_outputs > UINT32_MAX ||
            (s->n_inputs && !s->inputs) || (s->n_outputs && !s->outputs) ||
            (s->repeat > 1 && (!s->chained || s->repeat > INST_REPEAT_MAX || !s->times)))
                return -EINVAL;
        steps = s->repeat > 1 ? s->repeat : 1;
        if (inst->depth) {
                snprintf(inst->msg, sizeof(inst->msg), "no step inside an intermediate update");
                return -EBUSY;
        }
        room = inst->max_record - sizeof(struct call_hdr) - sizeof(struct call_reply) -
               sizeof(struct call_step_result);
        if (s->chained && (r = chain_refused(inst, s, room)) < 0)
                return inst->fault ? inst->fault : r;
        r = call_begin(inst, s->chained);
        if (r < 0)
                return r;
        r = encode(inst, &rq, s, &compact, &layout);
        if (r == -EMSGSIZE && s->chained) {
                snprintf(inst->msg, sizeof(inst->msg), "a chained step's inputs must fit the ring");
                return -EAGAIN;
        }
        if (r < 0)
                return r;
        if (outputs_need(s) > (room > inst->side_size ? room : inst->side_size))
                return -EMSGSIZE;
        e = posted_at(inst, inst->n_posted);
        call_deadline(inst, s->timeout_ns, s->now_ns, &e->deadline);
        e->timeout_ns = inst->last_timeout_ns;
        e->step = s;
        e->compact = compact;
        /* Behind more than one step: the worker runs those first. */
        e->deadline_at_wait = inst->n_posted > 1;
        if (!inst->n_posted) {
                inst->cur_op = CALL_OP_DO_STEP;
                inst->cur_timeout_ns = e->timeout_ns;
                /* One worker busy, however many steps it has queued. */
                call_post_active();
        }
        r = call_send(inst, &rq, &e->deadline, &e->seq);
        if (r < 0) {
                if (!inst->n_posted) {
                        inst->cur_op = CALL_OP_NONE;
                        call_active(-1);
                }
                return r;
        }
        if (compact)
                inst->compact_steps += steps;
        else
                kept_sent(inst, s, layout);
        /* A repeat's later steps answer with the next sequence numbers. */
        for (uint32_t i = 1; i < steps; i++)
                *posted_at(inst, inst->n_posted + i) = (struct inst_posted){
                        .step = s, .seq = e->seq + i, .deadline = e->deadline,
                        .timeout_ns = e->timeout_ns, .deadline_at_wait = true, .compact = compact,
                };
        inst->seq += steps - 1;
        inst->n_posted += steps;
        return 0;
}

static int take_outputs(struct inst *inst, const struct rep *rp, const struct call_step_result *res)
{
        const struct inst_step *s = inst->step;
        const void *p;
        int r;

        if (res->n_outputs != s->n_outputs)
                return inst_protocol(inst, "a step result with another number of outputs");
        r = rep_range(inst, rp, &res->outputs, sizeof(struct call_values), s->n_outputs, &p);
        if (r < 0)
                return r;
        for (size_t i = 0; i < s->n_outputs; i++) {
                const struct inst_out *b = &s->outputs[i];
                struct call_values cv;

                /* One descriptor at a time, copied: the worker's memory may change. */
                memcpy(&cv, (const struct call_values *)p + i, sizeof(cv));
                r = values_take(inst, rp, &cv, b->type, b->nvr, b->values, b->sizes, b->nvalues);
                if (r < 0)
                        return r;
        }
        return 0;
}

int inst_wait_step(struct inst *inst, struct inst_step_result *ret)
{
        struct call_step_result res;
        struct inst_posted e;
        struct rep rp;
        int r, t;

        if (!ret)
                return -EINVAL;
        if (!inst->n_posted) {
                snprintf(inst->msg, sizeof(inst->msg), "no step was posted");
                return -EINVAL;
        }
        /* The oldest first: replies come in the order of the requests. */
        e = *posted_at(inst, 0);
        inst->posted_head = (inst->posted_head + 1) % INST_CHAIN_MAX;
        inst->n_posted--;
        /*
         * The worker ran the steps before it until now. A reply already in
         * the ring cannot be late: its deadline then counts from the last
         * clock reading, which saves a clock read per step of a repeat
         * collected at once (only a log record before the reply can make
         * the call wait, and then against a slightly earlier deadline).
         */
        if (e.deadline_at_wait) {
                const void *rec;
                size_t len;
                bool there = !inst->fault && ring_peek(inst->rx, &rec, &len) == 0;

                call_deadline_restart(inst, e.timeout_ns, there ? inst->last_start_ns : 0,
                                      &e.deadline);
        }
        inst->step = e.step;
        inst->step_compact = e.compact;
        inst->step_timeout_ns = e.timeout_ns;
        inst->cur_op = CALL_OP_DO_STEP;
        inst->cur_timeout_ns = e.timeout_ns;
        /* After a fault nothing more is read: a reply that follows it is not trusted. */
        rp.held = false;
        r = inst->fault ? inst->fault : call_recv(inst, CALL_OP_DO_STEP, e.seq, &e.deadline, &rp);
        if (inst->n_posted) {
                inst->cur_timeout_ns = posted_at(inst, 0)->timeout_ns;
        } else {
                inst->cur_op = CALL_OP_NONE;
                call_active(-1);
        }
        if (r < 0) {
                /* Refused: whether the worker kept the blocks is not known. */
                kept_drop(inst);
                call_end(inst, &rp);
                return r;
        }
        memcpy(&res, rp.result, sizeof(res));
        /* A statistic only: any value is harmless, and the sum saturates. */
        inst->svc_steps++;
        inst->svc_last_ns = res.service_ns;
        inst->svc_ns = res.service_ns > UINT64_MAX - inst->svc_ns ? UINT64_MAX :
                       inst->svc_ns + res.service_ns;
        inst->me = (struct inst_me_stats){
                .steps = res.me_steps, .rhs_evals = res.me_rhs_evals,
                .root_evals = res.me_root_evals, .jac_evals = res.me_jac_evals,
                .events = res.me_events, .event_iterations = res.me_event_iterations,
        };
        if (res.event_handling_needed > 1 || res.terminate_simulation > 1 || res.early_return > 1 ||
            res.phase > CALL_PHASE_DONE ||
            (res.phase == CALL_PHASE_INPUTS && res.block >= inst->step->n_inputs) ||
            (res.phase == CALL_PHASE_OUTPUTS && res.block >= inst->step->n_outputs) ||
            (res.phase == CALL_PHASE_DONE) != (r <= INST_WARNING)) {
                call_end(inst, &rp);
                return inst_protocol(inst, "an inconsistent step result");
        }
        if (res.phase == CALL_PHASE_DONE) {
                t = inst->step_compact ? kept_take_outputs(inst, &rp, &res) :
                                         take_outputs(inst, &rp, &res);
                if (t < 0) {
                        call_end(inst, &rp);
                        return t;
                }
        }
        *ret = (struct inst_step_result){
                .event_handling_needed = res.event_handling_needed,
                .terminate_simulation = res.terminate_simulation,
                .early_return = res.early_return,
                .last_successful_time = res.last_successful_time,
                .phase = (enum inst_phase)res.phase,
                .block = res.block,
                .service_ns = res.service_ns,
        };
        call_end(inst, &rp);
        return r;
}

int inst_do_step(struct inst *inst, const struct inst_step *s, struct inst_step_result *ret)
{
        int r;

        if (!ret)
                return -EINVAL;
        r = inst_post_step(inst, s);
        if (r < 0)
                return r;
        return inst_wait_step(inst, ret);
}

int inst_cancel_step(struct inst *inst)
{
        struct rep rp;
        int r;

        r = call_simple(inst, CALL_OP_CANCEL_STEP, NULL, 0, &rp);
        call_end(inst, &rp);
        return r;
}

/* One fmi2Get*Status call; the result's fields in *ret. */
static int status_query(struct inst *inst, enum call_status_which which, int kind,
                        struct call_status_query *ret, const char **ret_str)
{
        struct call_status_query q = { .which = which, .kind = kind };
        struct rep rp;
        int r;

        r = call_simple(inst, CALL_OP_GET_STATUS, &q, sizeof(q), &rp);
        if (r >= 0 && r <= INST_WARNING) {
                memcpy(&q, rp.result, sizeof(q));
                if (q.which != which || (which == CALL_STATUS_BOOLEAN && (q.i < 0 || q.i > 1)) ||
                    (which == CALL_STATUS_STATUS && (q.i < 0 || q.i > INST_PENDING)) ||
                    (which == CALL_STATUS_INTEGER && (q.i < INT32_MIN || q.i > INT32_MAX))) {
                        call_end(inst, &rp);
                        return inst_protocol(inst, "an invalid status value");
                }
                if (which == CALL_STATUS_STRING) {
                        const void *p;
                        char *s;

                        if (call_in_bytes(&rp.in, &q.str, CALL_MSG_MAX, &p) < 0) {
                                call_end(inst, &rp);
                                return inst_protocol(inst, "a status string outside the message");
                        }
                        s = arena_alloc(inst, q.str.len + 1);
                        if (!s) {
                                call_end(inst, &rp);
                                return -ENOMEM;
                        }
                        if (q.str.len)
                                memcpy(s, p, q.str.len);
                        s[q.str.len] = '\0';
                        *ret_str = s;
                }
                *ret = q;
        }
        call_end(inst, &rp);
        return r;
}

int inst_get_status(struct inst *inst, int kind, int *ret)
{
        struct call_status_query q = { 0 };
        int r = status_query(inst, CALL_STATUS_STATUS, kind, &q, NULL);

        if (r >= 0 && r <= INST_WARNING)
                *ret = (int)q.i;
        return r;
}

int inst_get_real_status(struct inst *inst, int kind, double *ret)
{
        struct call_status_query q = { 0 };
        int r = status_query(inst, CALL_STATUS_REAL, kind, &q, NULL);

        if (r >= 0 && r <= INST_WARNING)
                *ret = q.f;
        return r;
}

int inst_get_integer_status(struct inst *inst, int kind, int32_t *ret)
{
        struct call_status_query q = { 0 };
        int r = status_query(inst, CALL_STATUS_INTEGER, kind, &q, NULL);

        if (r >= 0 && r <= INST_WARNING)
                *ret = (int32_t)q.i;
        return r;
}

int inst_get_boolean_status(struct inst *inst, int kind, bool *ret)
{
        struct call_status_query q = { 0 };
        int r = status_query(inst, CALL_STATUS_BOOLEAN, kind, &q, NULL);

        if (r >= 0 && r <= INST_WARNING)
                *ret = q.i != 0;
        return r;
}

int inst_get_string_status(struct inst *inst, int kind, const char **ret)
{
        struct call_status_query q = { 0 };

        return status_query(inst, CALL_STATUS_STRING, kind, &q, ret);
}
