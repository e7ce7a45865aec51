/*
 * step: one communication point in one round trip (DO_STEP): set the
 * inputs, fmi3DoStep (or fmi2DoStep), get the outputs; and the
 * intermediate update callback that runs inside fmi3DoStep (FMI 3.0
 * section 4.2.2).
 *
 * DESIGN: every input and output block is checked before anything is
 * set, so a bad request leaves the FMU untouched. The reply says how far
 * the step got (phase, block) and carries the doStep out-arguments, and
 * the outputs only when everything succeeded.
 *
 * Crashes: the first doStep installs the crash handler (crash.h), so a
 * worker the FMU kills sends its last words first.
 *
 * Service time: the time inside the FMU's doStep (CLOCK_MONOTONIC, read
 * just around the call; intermediate updates included) goes back with
 * the result, so the daemon can tell the FMU's time from the channel's.
 *
 * Intermediate update: the callback sends an event and serves the
 * daemon's nested requests (gets, then sets, of the required intermediate
 * variables) with the second set of buffers, until the daemon answers
 * with the early return request. An answer the standard does not allow
 * (early return when canReturnEarly is false, a time outside the step) is
 * not passed on; the daemon is told with a log event.
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "worker/crash.h"
#include "worker/me.h"
#include "worker/se.h"
#include "worker/worker.h"

static uint64_t mono_ns(void)
{
        struct timespec t;

        (void) clock_gettime(CLOCK_MONOTONIC, &t);
        return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/*
 * A doStep that failed with the address space at its limit ran out of
 * memory, whatever the FMU says: the reply's message says so first.
 */
static void note_memory(struct worker *w, int status, struct reply *rp)
{
        char limit_text[32];
        uint64_t limit;
        int n;

        if (status < fmi3Error || rp->head.error || !crash_near_limit(&limit))
                return;
        crash_format_limit(limit, limit_text, sizeof(limit_text));
        n = snprintf(rp->msg, sizeof(rp->msg), "out of memory (address-space limit %s reached)%s%s",
                     limit_text, w->last_error[0] ? ": " : "", w->last_error);
        rp->msg_len = n < 0 ? 0 : (size_t)n < sizeof(rp->msg) ? (size_t)n : sizeof(rp->msg) - 1;
}

bool step_blocks_init(struct worker *w, uint32_t n_in, uint32_t n_out, struct step_blocks *ret,
                      struct reply *rp)
{
        if (wbuf_reserve(&w->blocks, ((size_t)n_in + n_out + 1) * sizeof(struct vblock)) < 0) {
                reply_refuse(rp, CALL_E_NOMEM, "out of memory");
                return false;
        }
        ret->in = (struct vblock *)(void *)w->blocks.p;
        ret->out = ret->in + n_in;
        ret->n_in = n_in;
        ret->n_out = n_out;
        return true;
}

static bool parse_blocks(struct worker *w, const struct call_in *in, const struct call_do_step *ds,
                         struct step_blocks *bl, const char *fn, struct reply *rp)
{
        const struct call_values *cin, *cout;
        const void *p;

        if (call_in_range(in, &ds->inputs, sizeof(*cin), ds->n_inputs, &p) < 0)
                goto bad;
        cin = p;
        if (call_in_range(in, &ds->outputs, sizeof(*cout), ds->n_outputs, &p) < 0)
                goto bad;
        cout = p;
        if (!step_blocks_init(w, ds->n_inputs, ds->n_outputs, bl, rp))
                return false;
        for (uint32_t i = 0; i < bl->n_in; i++) {
                struct call_values cv = cin[i];

                if (!vars_check(w, in, &cv, true, fsm_fmi_name(w, CALL_OP_SET, cv.type), &bl->in[i], rp))
                        return false;
        }
        for (uint32_t i = 0; i < bl->n_out; i++) {
                struct call_values cv = cout[i];

                if (!vars_check(w, in, &cv, false, fsm_fmi_name(w, CALL_OP_GET, cv.type), &bl->out[i], rp))
                        return false;
        }
        return true;
bad:
        reply_refuse(rp, CALL_E_BADMSG, "%s: malformed input or output blocks", fn);
        return false;
}

static bool step_args_ok(const struct call_do_step *ds, const char *fn, struct reply *rp)
{
        if (ds->no_set_prior > 1 || ds->chained > 1 || ds->compact > 1) {
                reply_refuse(rp, CALL_E_BADMSG, "%s: malformed arguments", fn);
                return false;
        }
        /* serve_one() expands a well-formed repeat into single steps. */
        if (ds->repeat > 1) {
                reply_refuse(rp, CALL_E_BADMSG, "%s: a repeat of %u steps without their times",
                             fn, ds->repeat);
                return false;
        }
        if (!isfinite(ds->current_communication_point) ||
            !(ds->communication_step_size > 0.0) || !isfinite(ds->communication_step_size)) {
                reply_refuse(rp, CALL_E_INVAL, "%s: currentCommunicationPoint must be finite and "
                             "communicationStepSize finite and > 0", fn);
                return false;
        }
        return true;
}

/*
 * The status of block i's set or get (< 0: rp is refused) into rp; false
 * when the step stops there (res says where: 'phase', block i).
 */
static bool block_ok(int status, uint32_t phase, uint32_t i, struct call_step_result *res,
                     struct reply *rp)
{
        if (status < 0)
                return false;
        reply_status(rp, status);
        if (status > fmi3Warning) {
                res->phase = phase;
                res->block = i;
                return false;
        }
        return true;
}

/* Set the inputs; false when one did not succeed (res says which). */
static bool set_inputs(struct worker *w, const struct step_blocks *bl, struct call_step_result *res,
                       struct reply *rp)
{
        for (uint32_t i = 0; i < bl->n_in; i++)
                if (!block_ok(values_set(w, &bl->in[i], rp), CALL_PHASE_INPUTS, i, res, rp))
                        return false;
        return true;
}

bool step_output_ok(int status, uint32_t i, struct call_step_result *res, struct reply *rp)
{
        return block_ok(status, CALL_PHASE_OUTPUTS, i, res, rp);
}

static uint64_t outputs_size(const struct step_blocks *bl)
{
        uint64_t total = (uint64_t)bl->n_out * sizeof(struct call_values);

        for (uint32_t i = 0; i < bl->n_out; i++) {
                uint64_t n = bl->out[i].n_values * call_elem_size(bl->out[i].type);

                total = call_out_need(total, 1);
                if (n > UINT64_MAX - total)
                        return UINT64_MAX;
                total += n;
        }
        return total;
}

static void get_outputs(struct worker *w, const struct step_blocks *bl, struct call_step_result *res,
                        struct reply *rp)
{
        struct call_values *cv;
        uint64_t off;

        call_out_expect(&rp->out, outputs_size(bl));
        if (wbuf_reserve(&w->tmp2, ((size_t)bl->n_out + 1) * sizeof(*cv)) < 0) {
                reply_refuse(rp, CALL_E_NOMEM, "out of memory");
                return;
        }
        cv = (struct call_values *)(void *)w->tmp2.p;
        if (call_out_alloc(&rp->out, (uint64_t)bl->n_out * sizeof(*cv), &off) < 0) {
                reply_refuse(rp, CALL_E_MSGSIZE, "the outputs do not fit the channel");
                return;
        }
        for (uint32_t i = 0; i < bl->n_out; i++)
                if (!step_output_ok(values_get(w, &bl->out[i], rp, &cv[i]), i, res, rp))
                        return;
        if (bl->n_out)
                memcpy(call_out_ptr(&rp->out, off), cv, (size_t)bl->n_out * sizeof(*cv));
        res->outputs = (struct call_range){ off, (uint64_t)bl->n_out * sizeof(*cv) };
        res->n_outputs = bl->n_out;
        res->phase = CALL_PHASE_DONE;
}

/* Enter or leave our fmi3DoStep, under iu_lock where updates may come from any thread. */
static void set_in_call(struct worker *w, bool on)
{
        w->stepping = on;
        if (!w->iu_on) {
                w->in_call = on;
                return;
        }
        pthread_mutex_lock(&w->iu_lock);
        w->in_call = on;
        pthread_mutex_unlock(&w->iu_lock);
}

/*
 * An asynchronous fmi2DoStep (canRunAsynchronuously, FMI 2.0 section
 * 4.3.1) returned fmi2Pending: ask fmi2GetStatus(fmi2DoStepStatus) until
 * the step is done (section 4.2.3; no stepFinished was given, which
 * section 4.2.1 allows), yielding at first, then sleeping up to 1 ms
 * between asks. The step's status is the one the inquiry gives; the
 * master's step budget bounds the wait, as any step's.
 */
static int await_pending(struct worker *w)
{
        long nap = 0;

        for (unsigned i = 0;; i++) {
                fmi2Status st = fmi2Pending;
                int s = status_norm(w, w->lib->f2.fmi2GetStatus(w->inst, fmi2DoStepStatus, &st));

                /* Section 4.2.3 lets fmi2GetStatus itself return fmi2Pending: still under way. */
                if (s == fmi2Pending)
                        st = fmi2Pending;
                else if (s > fmi2Warning || (int)st < fmi2OK || st > fmi2Pending) {
                        if (!w->last_error[0])
                                snprintf(w->last_error, sizeof(w->last_error), "fmi2GetStatus("
                                         "fmi2DoStepStatus) of a pending fmi2DoStep returned %d, "
                                         "the step's status %d", s, (int)st);
                        return s > fmi2Warning ? s : fmi2Error;
                }
                if (st != fmi2Pending)
                        return st;
                if (i < 64) {
                        sched_yield();
                        continue;
                }
                nap = nap ? (nap < 500000 ? nap * 2 : 1000000) : 10000;
                nanosleep(&(struct timespec){ .tv_nsec = nap }, NULL);
        }
}

void h_do_step(struct worker *w, const struct call_in *in, struct reply *rp)
{
        const char *fn = w->fmi == MD_FMI3 ? "fmi3DoStep" : "fmi2DoStep";
        struct call_step_result res = { .phase = CALL_PHASE_STEP };
        union { fmi3Boolean b; uint8_t u; } event = { 0 }, term = { 0 }, early = { 0 };
        struct call_do_step ds;
        struct step_blocks bl;
        uint64_t t0;
        double t_end;
        int s;

        memcpy(&ds, in->body, sizeof(ds));
        if (!step_args_ok(&ds, fn, rp))
                return;
        if (ds.compact) {
                if (!layout_blocks(w, in, &ds, &bl, fn, rp))
                        return;
        } else {
                if (!parse_blocks(w, in, &ds, &bl, fn, rp))
                        return;
                layout_keep(w, ds.layout, &bl);
        }
        if (!set_inputs(w, &bl, &res, rp))
                goto out;
        t_end = ds.current_communication_point + ds.communication_step_size;
        if (w->me) {
                bool stop = false, ev = false;

                t0 = mono_ns();
                s = me_step(w, ds.current_communication_point, ds.communication_step_size,
                            me_take_set(w), &stop, &ev, &t_end);
                res.service_ns = mono_ns() - t0;
                term.u = stop;
                /* At an event inside the step, for the master's Event Mode (me_events.c). */
                event.u = ev;
                early.u = ev && t_end < ds.current_communication_point + ds.communication_step_size;
                me_result(w, &res);
        } else if (w->se) {
                /* Scheduled Execution: nothing runs between ticks (se.h). */
                se_set_time(w, t_end);
                s = fmi3OK;
        } else if (w->fmi == MD_FMI3) {
                w->step_t = ds.current_communication_point;
                w->step_h = ds.communication_step_size;
                w->iu_failed = false;
                set_in_call(w, true);
                t0 = mono_ns();
                s = w->lib->f3.fmi3DoStep(w->inst, ds.current_communication_point,
                                          ds.communication_step_size, ds.no_set_prior,
                                          &event.b, &term.b, &early.b, &t_end);
                res.service_ns = mono_ns() - t0;
                set_in_call(w, false);
                s = status_norm(w, s);
                if (w->iu_failed && s < fmi3Error)
                        s = fmi3Error;  /* a call in the intermediate update failed */
        } else {
                fmi2Real last = t_end;
                fmi2Boolean stop = fmi2False;

                t0 = mono_ns();
                s = status_norm(w, w->lib->f2.fmi2DoStep(w->inst, ds.current_communication_point,
                                                         ds.communication_step_size,
                                                         ds.no_set_prior));
                if (s == fmi2Pending)
                        s = await_pending(w);
                res.service_ns = mono_ns() - t0;
                if (s == fmi2Discard) {
                        /* Where it got and whether it wants to stop (FMI 2.0 section 4.2.3). */
                        if (w->lib->f2.fmi2GetRealStatus(w->inst, fmi2LastSuccessfulTime, &last) == fmi2OK)
                                t_end = last;
                        if (w->lib->f2.fmi2GetBooleanStatus(w->inst, fmi2Terminated, &stop) == fmi2OK)
                                term.u = stop != fmi2False;
                        /*
                         * Discard with fmi2Terminated is how FMI 2.0 says
                         * terminateSimulation (a Modelica terminate()): the
                         * step ended at lastSuccessfulTime, its outputs are
                         * valid, and the run ends there, as FMI 3.0's does.
                         */
                        if (term.u && isfinite(t_end) && t_end >= ds.current_communication_point &&
                            t_end <= ds.current_communication_point + ds.communication_step_size) {
                                s = fmi3OK;
                                w->discard_terminated = true;   /* stepFailed all the same (fsm.c) */
                        }
                }
        }
        reply_status(rp, s);
        note_memory(w, s, rp);
        res.event_handling_needed = event.u != 0;
        res.terminate_simulation = term.u != 0;
        res.early_return = early.u != 0;
        res.last_successful_time = t_end;
        if (s > fmi3Warning || w->state == CALL_ST_FATAL)
                goto out;
        if (ds.compact)
                layout_get_outputs(w, &bl, &res, rp);
        else
                get_outputs(w, &bl, &res, rp);
        /* What a chained step after this one needs (call_ops.h); exact end, no tolerance. */
        w->plain = res.phase == CALL_PHASE_DONE && !rp->head.error && !res.event_handling_needed &&
                   !res.terminate_simulation && !res.early_return;
out:
        w->step_ns = res.service_ns;
        memcpy(rp->result, &res, sizeof(res));
}

/* Check the daemon's answer; the early return request passed on, or false. */
static bool answer_ok(struct worker *w, const struct call_in *in, double t, double *ret_time)
{
        struct call_iu_answer a;
        double lo = w->step_t, hi = w->step_t + w->step_h;

        if (in->hdr.body_len != sizeof(a)) {
                log_worker(w, fmi3Warning, "malformed intermediate update answer, ignored");
                return false;
        }
        memcpy(&a, in->body, sizeof(a));
        if (!a.early_return_requested)
                return false;
        if (a.early_return_requested != 1 || !w->iu_can_return_early) {
                log_worker(w, fmi3Warning, "early return requested at t = %.17g, but canReturnEarly "
                           "is false: not passed on", t);
                return false;
        }
        if (!(a.early_return_time >= lo && a.early_return_time <= hi)) {
                log_worker(w, fmi3Warning, "earlyReturnTime %.17g is outside the step [%.17g, %.17g] "
                           "(section 4.2.2): not passed on", a.early_return_time, lo, hi);
                return false;
        }
        *ret_time = a.early_return_time;
        return true;
}

void iu_callback(fmi3InstanceEnvironment env, fmi3Float64 t, fmi3Boolean set_requested,
                 fmi3Boolean get_allowed, fmi3Boolean step_finished, fmi3Boolean can_return_early,
                 fmi3Boolean *early_return_requested, fmi3Float64 *early_return_time)
{
        struct worker *w = worker_of(env);
        struct call_iu ev = {
                .time = t,
                .set_requested = set_requested != 0,
                .get_allowed = get_allowed != 0,
                .step_finished = step_finished != 0,
                .can_return_early = can_return_early != 0,
        };
        uint64_t seq;
        uint32_t sent, out_sent, out_dropped, dropped;
        double when = t;
        bool early = false;

        if (early_return_requested)
                *early_return_requested = fmi3False;
        if (early_return_time)
                *early_return_time = t;
        if (!w)
                return;
        /*
         * Only from inside our own fmi3DoStep, on any thread of the FMU's
         * (FMI 3.0 section 4.2.2 does not say which): one at a time, and
         * the updating thread alone uses the channel (forward() in log.c).
         * Not from inside an update (a call it serves): that thread holds
         * the lock already.
         */
        if (!w || worker_speaking)
                return;
        pthread_mutex_lock(&w->iu_lock);
        if (!w->in_call || w->state != CALL_ST_STEP || w->depth != 0) {
                pthread_mutex_unlock(&w->iu_lock);
                return;
        }
        worker_speaking = true;
        seq = w->seq;
        sent = w->logs_sent;
        out_sent = w->out_sent;
        out_dropped = w->out_dropped;
        dropped = w->logs_dropped;
        w->state = CALL_ST_INTERMEDIATE;
        w->iu_set_requested = ev.set_requested;
        w->iu_get_allowed = ev.get_allowed;
        w->iu_can_return_early = ev.can_return_early;
        w->iu_did_set = false;
        w->in_call = false;
        if (send_event(w, CALL_EV_IU, &ev, sizeof(ev), NULL, 0, false) < 0) {
                w->quit = true;
                goto out;
        }
        w->depth = 1;
        for (;;) {
                struct call_in in;

                if (recv_request(w, &in) < 0) {
                        w->quit = true;
                        break;
                }
                if (in.hdr.op == CALL_OP_IU_ANSWER && in.hdr.kind == CALL_REQUEST) {
                        w->seq = seq;
                        early = answer_ok(w, &in, t, &when);
                        break;
                }
                dispatch(w, &in);
                if (w->quit)
                        break;
        }
        w->depth = 0;
out:
        w->seq = seq;
        w->logs_sent = sent;
        w->out_sent = out_sent;
        w->out_dropped = out_dropped;
        w->logs_dropped = dropped;
        w->in_call = true;
        if (w->state != CALL_ST_FATAL)
                w->state = CALL_ST_STEP;
        worker_speaking = false;
        pthread_mutex_unlock(&w->iu_lock);
        if (early && early_return_requested && early_return_time) {
                *early_return_requested = fmi3True;
                *early_return_time = when;
        }
}
