/*
 * session_event: the event iteration of one instance in Event Mode (FMI
 * 3.0 section 2.3.5, and the code example of section 4.3.3), shared by
 * initialization (after fmi3ExitInitializationMode) and the master (after
 * an event at a communication point).
 */
#include "engine/master/session_int.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#define EVENT_ITERATIONS_DEFAULT 1000

const char *session_message(const struct session *s)
{
        return s->msg;
}

/*
 * A call of the Event Mode failed: its status, the worker's reason where
 * it gave one, and the FMU's last log messages (an FMU that returns
 * Discard says why in its log only).
 */
static int failed(struct session *s, struct session_inst *si, int r, const char *fn)
{
        const char *why = inst_message(si->inst);
        int err = session_call_result(si, r);

        session_err(s, err, "component '%s': %s returned %s%s%s", s->sc->components[si->comp].name,
                    fn, r >= 0 ? session_status_name(r) : strerror(-r), *why ? ": " : "", why);
        return session_logs(s, si, err);
}

int session_event_update(struct session *s, size_t comp, double t, uint32_t max_iterations,
                         int (*between)(void *ctx), void *ctx, bool *ret_terminate,
                         double *ret_next_event)
{
        struct session_inst *si = &s->insts[comp];
        const char *name = s->sc->components[comp].name;
        struct inst_discrete d = { 0 };
        uint32_t max = max_iterations ? max_iterations : EVENT_ITERATIONS_DEFAULT;
        uint32_t i;
        int r;

        *ret_terminate = false;
        *ret_next_event = INFINITY;
        for (i = 0; i < max; i++) {
                d = (struct inst_discrete){ 0 };
                r = inst_update_discrete_states(si->inst, &d);
                if (r != INST_OK && r != INST_WARNING)
                        return failed(s, si, r, "fmi3UpdateDiscreteStates");
                if (d.terminate_simulation) {
                        *ret_terminate = true;
                        return 0;
                }
                if (!d.discrete_states_need_update)
                        break;
                if (between && i + 1 < max && (r = between(ctx)) < 0)
                        return r;
        }
        if (i == max)
                return session_err(s, -ELOOP, "component '%s': the event iteration did not end "
                                   "after %u calls of fmi3UpdateDiscreteStates", name, (unsigned)max);
        if (!d.next_event_time_defined)
                return 0;
        /* A time event must be a time at or after this one; +inf is none. */
        if (!(d.next_event_time >= t)) {
                session_mark_failed(s, comp);
                return session_err(s, -EPROTO, "component '%s': fmi3UpdateDiscreteStates at t = "
                                   "%.17g returned nextEventTime %.17g, which is not a time at or "
                                   "after the event (FMI 3.0 section 3.2.2)", name, t,
                                   d.next_event_time);
        }
        *ret_next_event = d.next_event_time;
        return 0;
}

int session_enter_step_mode(struct session *s, size_t comp)
{
        struct session_inst *si = &s->insts[comp];
        int r;

        r = inst_enter_step_mode(si->inst);
        /* A Model Exchange FMU's worker enters Continuous-Time Mode and restarts CVODE. */
        if (r != INST_OK && r != INST_WARNING)
                return failed(s, si, r, s->sc->components[comp].fmu->md->hosted_me
                              ? "fmi3EnterContinuousTimeMode (with the integrator's restart)"
                              : "fmi3EnterStepMode");
        return 0;
}

