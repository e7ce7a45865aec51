/*
 * me: a Model Exchange FMU integrated with CVODE inside the worker, so that
 * the daemon sees a Co-Simulation instance (me.c). Private to worker/.
 *
 * DESIGN: w->me is NULL for a Co-Simulation FMU; the handlers that differ
 * (instantiate, enter and exit initialization, doStep, reset, free) ask
 * for it and call here; every other call (get, set, terminate) goes to the
 * FMU as it is, since both interfaces share those functions.
 */
#ifndef FMUD_WORKER_ME_H
#define FMUD_WORKER_ME_H

#include <stdbool.h>

#include "fmi/fmu.h"

struct md_variable;
struct vblock;
struct worker;

/*
 * fmud-worker --interface me --integrator bdf|adams (main.c), before
 * worker_open(): FMU_INTEGRATOR_BDF (Newton iteration, dense linear
 * solver) or FMU_INTEGRATOR_ADAMS (fixed-point iteration).
 */
struct me_opts {
        bool model_exchange;    /* host the ModelExchange interface though CoSimulation is there */
        bool scheduled_execution;       /* --interface se: host ScheduledExecution (se.h) */
        enum fmu_integrator integrator;
};
extern struct me_opts me_opts;

/* w->me for an FMU hosted as Model Exchange. 0 or -ENOMEM. */
int me_open(struct worker *w);
void me_close(struct worker *w);
/* fmi3Reset: the integrator goes; the next initialization makes another. */
void me_reset(struct worker *w);
/* fmi3EnterInitializationMode's tolerance (when defined) and start time. */
void me_experiment(struct worker *w, bool tolerance_defined, double tolerance, double start,
                   double grid_step);
/*
 * After fmi3ExitInitializationMode: Event Mode iteration, Continuous-Time
 * Mode, the integrator made. The worst FMU status (w->last_error says why
 * for an Error); *ret_term when the FMU asked to terminate.
 */
int me_start(struct worker *w, bool *ret_term);
/*
 * Integrate from t to t + h, handling every event; inputs_set: inputs were
 * set for this step (an event at t). The worst status; *ret_term when the
 * FMU asked to terminate, *ret_end where the integration got. With
 * w->event_mode_used the step ends at the first event instead, with
 * *ret_event, for the master's Event Mode (me_events.c).
 */
int me_step(struct worker *w, double t, double h, bool inputs_set, bool *ret_term, bool *ret_event,
            double *ret_end);
/*
 * The master's Event Mode, for an FMU with Clocks (me_events.c):
 * fmi3EnterEventMode unless the FMU is in Event Mode already; each
 * fmi3UpdateDiscreteStates' result (status and what it returned); Step
 * Mode: fmi3EnterContinuousTimeMode and the integrator (re)started. FMI
 * statuses; w->last_error says why for an Error.
 */
int me_event_mode(struct worker *w);
struct call_discrete;
void me_discrete_updated(struct worker *w, int status, const struct call_discrete *d);
int me_step_mode(struct worker *w);
/*
 * Before fmi3Set of vrs: from Continuous-Time Mode, which takes only
 * continuous inputs (FMI 3.0 section 3.2.1; FMI 2.0 likewise),
 * a tunable parameter or a discrete input makes the FMU enter Event Mode
 * first, and the next me_step() iterates that event and restarts the
 * integrator. The FMU's status (fmi3OK when nothing was needed).
 */
int me_before_set(struct worker *w, enum md_type type, const uint32_t *vrs, uint32_t n);
/* What Continuous-Time Mode takes from fmi3Set: continuous inputs (FMI 3.0 section 3.2.1). */
bool me_ct_settable(const struct md_variable *v);
/* A Model Exchange FMU in Continuous-Time Mode, its integration started. */
bool me_in_ct(const struct worker *w);
/*
 * A value was set on the FMU since its integrator last (re)started
 * (values_set()); me_take_set() says so once.
 */
void me_note_set(struct worker *w);
bool me_take_set(struct worker *w);

/*
 * me_inputs.c: what the worker last set of each variable, so that an
 * unchanged input set in Continuous-Time Mode is left out. A variable's
 * values in a block are its bytes: a, then b (a Binary's sizes, then its
 * bytes; one part for the other types). me_inputs_next() walks block b
 * variable by variable (k zeroed first; k->bad when it cannot split it).
 * same: whether they are what v was last set to; note: the set of block b
 * went through (ok) or failed; forget: nothing is known (a restored FMU
 * state, a reset).
 */
struct me_bytes {
        const void *a, *b;
        size_t len_a, len_b;
};
struct me_walk {
        uint32_t i;
        uint64_t off, pos;
        bool bad;
};
bool me_inputs_next(const struct worker *w, const struct vblock *b, struct me_walk *k,
                    const struct md_variable **ret_v, struct me_bytes *ret);
bool me_input_same(struct worker *w, const struct md_variable *v, const struct me_bytes *x);
/* v's bytes as last set, borrowed until the next set; false when they are not known. */
bool me_input_peek(struct worker *w, const struct md_variable *v, const void **ret, size_t *ret_len);
/* Whether anything was set yet (else me_input_get() knows nothing). */
bool me_inputs_any(const struct worker *w);
/* v's len bytes as last set into dst; false when they are not known. */
bool me_input_get(struct worker *w, const struct md_variable *v, void *dst, size_t len);
void me_inputs_note(struct worker *w, const struct vblock *b, bool ok);
void me_inputs_forget(struct worker *w);
struct call_step_result;
/* What the integrator did since initialization into a DO_STEP result, for the daemon's status. */
void me_result(const struct worker *w, struct call_step_result *res);

#endif
