/*
 * master_step: one coupled step, from the current point to the next one:
 * which instances are due and where each goes, their FMU states saved
 * where an early return may make them meet another, their DoSteps posted
 * and collected stage by stage, and what a failure means.
 *
 * DESIGN: inside a stage every DoStep is posted before any reply is
 * awaited, so the workers run in parallel; replies are then collected in
 * a fixed order (instances with an intermediate update callback first,
 * then index order). What the master computes from them (the earliest early
 * return, the first fault) is a minimum or a first-in-index-order, so the
 * result does not depend on which worker finished first. The step budget
 * is one deadline for the whole coupled step: each post gets what is left
 * of it.
 */
#include "engine/master/master_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/master/master_value.h"

static uint64_t next_own(const struct master *m, uint64_t n, uint32_t rate)
{
        uint64_t k = (n / rate + 1) * rate;

        return k > m->n_end ? m->n_end : k;
}

/*
 * Which instances are due at the current point, and where this coupled
 * step takes each: 'goal' is its next own grid point; 'aim', where its
 * DoStep ends, is earlier at a time event (nextEventTime, or a Clock's
 * tick: master_clock.c). A time event
 * before the next grid point is a planned extra point every due
 * instance meets; a later one (a multirate instance's) it meets alone
 * (master_meet.c).
 */
void mstep_plan(struct master *m)
{
        double t_plan = INFINITY, tol = master_tol(m, m->t_next);

        for (size_t i = 0; i < m->n; i++) {
                struct mi *mi = &m->mi[i];
                double te;

                mi->due = mi->t == m->t_cur;
                mi->todo = mi->stepped = mi->saved = false;
                if (!mi->due)
                        continue;
                if (m->at_grid)
                        mi->k = next_own(m, m->pt, mi->rate);
                mi->goal = mi->aim = master_grid(m, mi->k);
                /*
                 * An event within rounding of a grid point (phase + k period
                 * against t0 + n h) is at the grid point: stepping to a time
                 * a hair before it would leave the instance behind the
                 * session, never due again. FMI 3.0 section 2.3.5 allows it:
                 * the importer computes up to nextEventTime "or if needed
                 * slightly further".
                 */
                te = mi_next_time(mi);
                te = fabs(te - m->t_next) <= tol ? m->t_next : te;
                if (te > m->t_cur && te < mi->goal - master_tol(m, mi->goal)) {
                        mi->aim = te;
                        if (te < t_plan)
                                t_plan = te;
                }
        }
        for (size_t i = 0; i < m->n; i++) {
                struct mi *mi = &m->mi[i];

                if (!mi->due)
                        continue;
                /*
                 * One that cannot take a shorter step (FMI 3.0 section 4.4)
                 * keeps its own, past the extra point, as a multirate one
                 * does past the points between its own: its input held from
                 * here, its outputs held until it is there.
                 */
                if (t_plan < m->t_next - tol && t_plan < mi->aim && !mi->rigid)
                        mi->aim = t_plan;
                mi->from = m->t_cur;
                mi->todo = true;
        }
}

/* The FMI call a DoStep request failed in: the step, or setting or getting a block. */
static void call_name(const struct mi *mi, int r, const char *fn, char *buf, size_t size)
{
        const struct inst_step_result *res = &mi->res;
        bool in = res->phase == INST_PHASE_INPUTS;
        enum md_type t = MD_FLOAT64;

        if (r < 0 || strcmp(fn, "DoStep") || res->phase == INST_PHASE_STEP) {
                snprintf(buf, size, "%s", fn);
                return;
        }
        if (in && res->block < mi->n_in)
                t = mi->inst_in[res->block].type;
        else if (!in && res->block < mi->n_out)
                t = mi->inst_out[res->block].type;
        snprintf(buf, size, "%s%s (%s of DoStep)", in ? "Set" : "Get", md_type_name(t),
                 in ? "inputs" : "outputs");
}

/* Append the FMU's last log messages (not the one the text already is) to why. */
static void recent_logs(const struct mi *mi, const char *text, char *why, size_t size)
{
        size_t len = strlen(why);
        char logs[MASTER_MSG_MAX / 2];

        if (!inst_recent_logs(mi->inst, text, logs, sizeof(logs)) || len >= size)
                return;
        snprintf(why + len, size - len, "; the FMU's last messages: %s", logs);
}

int mstep_fault(struct master *m, struct mi *mi, int r, const char *fn)
{
        char call[96], why[MASTER_MSG_MAX - 256];
        const char *text = inst_message(mi->inst);
        const struct md *md = m->sc->components[mi->idx].fmu->md;
        int err = r >= 0 ? -EIO : r, len;

        call_name(mi, r, fn, call, sizeof(call));
        if (r >= 0)
                len = snprintf(why, sizeof(why), "returned %s%s%s%s", session_status_name(r),
                               text[0] ? ": " : "", text, r == INST_DISCARD ?
                               " (the master does not retry a discarded step)" : "");
        else if (r == -ETIMEDOUT && isfinite(m->budget_s) && !strcmp(fn, "DoStep"))
                len = snprintf(why, sizeof(why), "missed the step budget of %g s "
                               MASTER_BUDGET_HINT ": %s", m->budget_s, text);
        else
                len = snprintf(why, sizeof(why), "%s", text[0] ? text : strerror(-r));
        if (m->iu_msg[0] && len >= 0 && (size_t)len < sizeof(why))
                snprintf(why + len, sizeof(why) - (size_t)len, "; in its intermediate update: %s",
                         m->iu_msg);
        /* Status or death: what the FMU said last often says why. */
        if (r >= INST_DISCARD || r == -ESRCH)
                recent_logs(mi, text, why, sizeof(why));
        if (r >= INST_ERROR || inst_fault(mi->inst))
                session_mark_failed(m->s, mi->idx);
        m->fault = err;
        if (strcmp(fn, "DoStep"))
                return master_err(m, err, "component '%s': %s%s at t = %.17g: %s", mi->name,
                                  mi->fmi == 2 ? "fmi2" : "fmi3", call, m->t_cur, why);
        /* A Model Exchange or Scheduled Execution FMU has no DoStep: its worker's step is named. */
        if (!strcmp(call, "DoStep") && (md->hosted_me || md->hosted_se))
                return master_err(m, err, "component '%s': the %s at t = %.17g (step to %.17g): "
                                  "%s", mi->name, md->hosted_me ? "Model Exchange integration "
                                  "(CVODE, in its worker)" : "Scheduled Execution activation of "
                                  "its partitions", mi->from, mi->aim, why);
        return master_err(m, err, "component '%s': %s%s at t = %.17g (step to %.17g): %s",
                          mi->name, mi->fmi == 2 ? "fmi2" : "fmi3", call, mi->from, mi->aim, why);
}

/*
 * Without an early return the instance is at the point it was sent to,
 * whatever lastSuccessfulTime says: "Even if the FMU returns from
 * fmi3DoStep with fmi3OK and earlyReturn = fmi3False, it is allowed that
 * lastSuccessfulTime deviates from the expected currentCommunicationPoint
 * + communicationStepSize" (FMI 3.0 section 4.2.1), as a fixed-step
 * integrator's does. Said once per instance, never a fault.
 */
static void note_deviation(struct master *m, struct mi *mi, double lst)
{
        if (mi->noted_lst)
                return;
        mi->noted_lst = true;
        master_note(m, mi->idx, "component '%s': fmi3DoStep at t = %.17g (step to %.17g) returned "
                    "lastSuccessfulTime %.17g with earlyReturn = false (%+.3g): taken as being at "
                    "%.17g, as FMI 3.0 section 4.2.1 allows (e.g. a fixed internal step%s); said "
                    "once", mi->name, mi->from, mi->aim, lst, lst - mi->aim, mi->aim,
                    mi->fixed_step > 0 ? " larger than the communication step" : "");
}

/* Where its step goes: the aim, or a time event before it (mi->cut). */
static double step_end(const struct mi *mi)
{
        return mi->cut > mi->from && mi->cut < mi->aim ? mi->cut : mi->aim;
}

/* Check a step's reply; the instance is then at mi->reached. */
static int take(struct master *m, struct mi *mi)
{
        double end = step_end(mi), lst = mi->res.last_successful_time, tol = master_tol(m, end);

        mi->cut = NAN;
        mi->stepped = true;
        mi->pending = true;
        mi->event = mi->res.event_handling_needed;
        mi->terminate = mi->res.terminate_simulation;
        if (mi->fmi == 3 && mi->res.early_return && !session_early_return_allowed(m->s, mi->idx)) {
                mi->stepped = false;
                session_mark_failed(m->s, mi->idx);
                m->fault = -EPROTO;
                return master_err(m, -EPROTO, "component '%s': fmi3DoStep at t = %.17g (step to "
                                  "%.17g) returned earlyReturn = true, but it was instantiated "
                                  "with earlyReturnAllowed = false (FMI 3.0 section 4.2.1)",
                                  mi->name, mi->from, mi->aim);
        }
        /*
         * A lone instance that asks to terminate short of its aim, without
         * an early return (a Model Exchange FMU whose time event ends the
         * simulation, in its worker): it stopped at lastSuccessfulTime, "the
         * internal time of the FMU when fmi3DoStep returns" (section 4.2.1),
         * so the session ends there. Beside others, which are at the aim,
         * or for a multirate one (whose grid point is not its aim), the
         * point stays the aim.
         */
        if (mi->terminate && !mi->res.early_return && m->n == 1 && mi->rate == 1 &&
            lst < end - tol && lst >= mi->from - tol) {
                mi->reached = lst < mi->from ? mi->from : lst;
                return 0;
        }
        if (mi->fmi == 2 || !mi->res.early_return || fabs(lst - end) <= tol) {
                /* Short of the aim to terminate is the request's, said with it (master_point.c). */
                if (mi->fmi == 3 && !(fabs(lst - end) <= tol) && !mi->terminate)
                        note_deviation(m, mi, lst);
                /* Sent short of its aim (mi->cut), it is short of it as after an early return. */
                mi->reached = end;
                return 0;
        }
        if (!(lst >= mi->from - tol) || lst > end + tol) {
                mi->stepped = false;
                session_mark_failed(m->s, mi->idx);
                m->fault = -EPROTO;
                return master_err(m, -EPROTO, "component '%s': fmi3DoStep at t = %.17g (step to "
                                  "%.17g) returned lastSuccessfulTime %.17g, outside the step",
                                  mi->name, mi->from, end, lst);
        }
        mi->reached = lst < mi->from ? mi->from : lst;
        return 0;
}

static uint64_t budget_left(const struct master *m, uint64_t now)
{
        if (!m->step_deadline_ns)
                return INST_TIMEOUT_NONE;       /* no budget: a step has no deadline */
        return now < m->step_deadline_ns ? m->step_deadline_ns - now : 1;
}

/*
 * The step size to send: the grid's difference, except for an instance
 * that cannot vary its step (canHandleVariableCommunicationStepSize =
 * false, FMI 3.0 section 4.4, FMI 2.0 section 4.3.1), which gets rate * h
 * exactly at every step, as fmusim and FMPy send their fixed step; t_n +
 * rate * h differs from t_{n+rate} in the last bits at most. The scenario
 * made the grid fit such instances (whole steps to the stop time), so a
 * shorter step can only come from meeting another's early return or time
 * event: a fault that says so. 0, or the fault.
 */
static int step_size(struct master *m, struct mi *mi, double *ret_h)
{
        double h = step_end(mi) - mi->from, fixed = (double)mi->rate * m->h;

        if (!mi->rigid) {
                *ret_h = h;
                return 0;
        }
        if (fabs(h - fixed) <= master_tol(m, mi->aim)) {
                *ret_h = fixed;
                return 0;
        }
        session_mark_failed(m->s, mi->idx);
        m->fault = -ENOTSUP;
        return master_err(m, -ENOTSUP, "component '%s' must step from t = %.17g to %.17g (%.17g) "
                          "to meet another instance's early return or event, but its step is "
                          "fixed at %.17g (canHandleVariableCommunicationStepSize is false)",
                          mi->name, mi->from, mi->aim, h, fixed);
}

static int post(struct master *m, struct mi *mi, bool route, uint64_t now)
{
        double h = 0;
        bool taken;
        int r;

        /* The step chained at the last point may be this one, already in flight. */
        r = mchain_take(m, mi, &taken);
        if (r < 0)
                return r;
        mi->todo = false;
        mi->stepped = false;
        mi->event = mi->terminate = false;
        mi->post_ns = now;
        if (taken) {
                mi->posted = true;
                return 0;
        }
        r = step_size(m, mi, &h);
        if (r < 0)
                return r;
        if (route)
                mroute_inputs(m, mi);
        mi->step = (struct inst_step){
                .t = mi->from,
                .h = h,
                .no_set_prior = true,   /* states are only ever restored to mi->from */
                .inputs = mi->inst_in,
                .n_inputs = mi->n_in_step,
                .outputs = mi->inst_out,
                .n_outputs = mi->n_out_step,
                .timeout_ns = budget_left(m, now),
                .now_ns = now,
        };
        r = inst_post_step(mi->inst, &mi->step);
        if (r < 0)
                return mstep_fault(m, mi, r, "DoStep");
        mi->posted = true;
        if (mi->n_disc)
                minput_remember(mi);
        return 0;
}

static int collect(struct master *m, struct mi *mi)
{
        struct master_inst_stats *st = &m->ist[mi->idx];
        uint64_t ns, now;
        int r;

        r = inst_wait_step(mi->inst, &mi->res);
        mi->posted = false;
        now = pace_now_ns();
        ns = now - mi->post_ns;
        st->steps++;
        st->ns_total += ns;
        if (ns > st->ns_max)
                st->ns_max = ns;
        if (ns > m->slow_ns) {
                m->slow_ns = ns;
                m->slow_comp = mi->idx;
        }
        if (r >= 0)
                st->ns_service += mi->res.service_ns;
        r = mchain_collected(m, mi, r, now);
        if (r != INST_OK && r != INST_WARNING)
                return r;
        return take(m, mi);
}

int mstep_one(struct master *m, struct mi *mi, bool route)
{
        int r = post(m, mi, route, pace_now_ns());

        if (r < 0)
                return r;
        r = collect(m, mi);
        return r > 0 || (r < 0 && !m->fault) ? mstep_fault(m, mi, r, "DoStep") : r;
}

/* The earliest early return so far before the next grid point clips later stages. */
/*
 * Collect the replies of stage [a, b): instances with an intermediate
 * update callback first (they wait for the master inside their step, so
 * their time should not pass while the master waits on others), then the
 * rest, each group in index order. The first failure in that fixed order
 * is the step's fault; *t_early is the earliest early return before the
 * next grid point.
 */
static int collect_stage(struct master *m, size_t a, size_t b, int fault, double *t_early)
{
        double tol = master_tol(m, m->t_next);

        for (int pass = 0; pass < 2; pass++)
                for (size_t k = a; k < b; k++) {
                        struct mi *mi = &m->mi[m->by_stage[k]];
                        int r;

                        if (!mi->posted || mi->iu != (pass == 0))
                                continue;
                        r = collect(m, mi);
                        if (r != 0 && !fault)
                                fault = r < 0 && m->fault ? r : mstep_fault(m, mi, r, "DoStep");
                        else if (r >= INST_ERROR || (r < 0 && inst_fault(mi->inst)))
                                session_mark_failed(m->s, mi->idx);
                        if (r == 0 && mi->reached < mi->aim && mi->reached < m->t_next - tol &&
                            mi->reached < *t_early)
                                *t_early = mi->reached;
                }
        return fault;
}

/*
 * After an Event Mode just before its step: a nextEventTime inside the
 * step is where the step ends (the importer must not step past it, FMI 3.0
 * section 4.3.3). The point was planned before the event was known, so
 * the instance is short of it as after an early return, and the others
 * meet it there (master_meet.c). Not one whose step is fixed: it cannot
 * take a shorter step.
 */
static void cut_at_event(struct master *m, struct mi *mi)
{
        double te = mi_next_time(mi);

        if (!mi->event_mode || mi->rigid)
                return;
        if (te > mi->from + master_tol(m, mi->from) && te < mi->aim - master_tol(m, mi->aim))
                mi->cut = te;
}

int mstep_run(struct master *m)
{
        double t_early = INFINITY;
        int fault = 0;

        for (unsigned st = 0; st < m->n_stages && !fault; st++) {
                size_t a = m->stage_start[st], b = m->stage_start[st + 1];
                /*
                 * One clock read per stage: posting is quick, and the budget
                 * is per step. The first stage starts when the coupled step does.
                 */
                uint64_t now = st ? pace_now_ns() : m->point_ns;
                size_t due = 0;

                /*
                 * A discrete input that changes: an Event Mode before the
                 * step (master_input_event.c). Never a chained step's. The
                 * first stage had it at the point's start (minput_point()),
                 * unless its state was restored since (an early return met).
                 */
                for (size_t k = a; k < b && !fault; k++) {
                        struct mi *mi = &m->mi[m->by_stage[k]];

                        if (mi->todo && mi->n_disc && (mi->stage > 0 || !mi->disc_valid)) {
                                mroute_inputs(m, mi);
                                fault = minput_event(m, mi, mi->from);
                                if (!fault)
                                        cut_at_event(m, mi);
                        }
                }
                if (fault)
                        break;
                /* A chained step in flight is counted already (inst_post_step()). */
                for (size_t k = a; k < b; k++)
                        due += m->mi[m->by_stage[k]].todo && !m->mi[m->by_stage[k]].chained;
                /* All posts first, then the waits: announce them before the first post. */
                inst_post_batch(due);
                for (size_t k = a; k < b && !fault; k++) {
                        struct mi *mi = &m->mi[m->by_stage[k]];

                        if (!mi->todo)
                                continue;
                        /*
                         * An early return found in an earlier stage is where
                         * later ones go, but for one whose step is fixed
                         * (mstep_plan()).
                         */
                        if (t_early < mi->aim && !mi->rigid)
                                mi->aim = t_early;
                        fault = post(m, mi, true, now);
                        if (!fault)
                                mchain_post(m, mi, now);
                }
                inst_post_batch_end();
                /* The last point's row is formatted while the workers step. */
                mroute_flush(m);
                fault = collect_stage(m, a, b, fault, &t_early);
        }
        return fault;
}

int mstep_save(struct master *m)
{
        for (size_t i = 0; i < m->n; i++) {
                struct mi *mi = &m->mi[i];
                int r;

                if (!mi->due || !mi->save_state)
                        continue;
                r = inst_get_fmu_state(mi->inst, &mi->state);
                if (r != INST_OK && r != INST_WARNING)
                        return mstep_fault(m, mi, r, "GetFMUState");
                mi->saved = true;
        }
        return 0;
}

/* After a fault: every instance that may have moved goes back to the point, where it can. */
void mstep_roll_back(struct master *m)
{
        for (size_t i = 0; i < m->n; i++) {
                struct mi *mi = &m->mi[i];
                int r;

                if (!mi->due)
                        continue;
                mi->stepped = mi->pending = mi->event = mi->terminate = false;
                mi->cut = NAN;
                if (!mi->saved || inst_fault(mi->inst))
                        continue;
                /* Refused after an Error: the instance stays where it is, as reported. */
                r = inst_set_fmu_state(mi->inst, mi->state);
                if (r == INST_OK || r == INST_WARNING)
                        m->restores++;
                minput_forget(mi);
        }
}
