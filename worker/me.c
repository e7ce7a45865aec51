/*
 * me: a Model Exchange FMU hosted as a Co-Simulation instance. The worker
 * integrates it with CVODE (SUNDIALS): doStep(t, h) integrates from t to
 * t + h and handles every event inside the step, so the master sees a
 * Co-Simulation FMU without Event Mode (md_host_me()).
 *
 * DESIGN: one CVODE context per instance, made after Initialization Mode
 * (when the FMU knows its numbers of states and event indicators) and
 * freed by reset and free. BDF with Newton iteration and a dense linear
 * solver (stiff models) or Adams with fixed-point iteration; relative
 * tolerance from the experiment (fmi3EnterInitializationMode) or the
 * DefaultExperiment, absolute tolerance that times the states' nominals.
 * CVODE steps one internal step at a time (CV_ONE_STEP) with the stop time
 * at the step's end or the next time event, so that after each step the
 * FMU gets the accepted time and states and fmi3CompletedIntegratorStep
 * (FMI 3.0 section 3.2.1). Events (FMI 3.0 section 3.1.1): a state event
 * is an event indicator changing domain, between z > 0 and z <= 0, from
 * one accepted point to the next (the section 3.3 example's test), found
 * where it happens by bisection over the last step's interpolant (CVODE's
 * roots of the indicators stop a step at a crossing, but CVODE ignores an
 * indicator leaving exactly 0, as a threshold of time or a state reset to
 * 0 at an event gives); time events the
 * nextEventTime of fmi3UpdateDiscreteStates, step events the
 * enterEventMode of fmi3CompletedIntegratorStep; each is handled by Event
 * Mode iteration (section 3.2, fmi3UpdateDiscreteStates until no
 * discreteStatesNeedUpdate), and CVODE restarts from the states after it.
 * Inputs set for a step count as an event at its start: the FMU may
 * change discrete states then, and the integrator's history is stale.
 * A model without states integrates a dummy state with derivative 0, so
 * that time events and event indicators still work. FMI 2.0 Model
 * Exchange (FMI 2.0 section 3.2) is the same sequence under other names
 * (fmi2NewDiscreteStates for fmi3UpdateDiscreteStates, fmi2GetDerivatives,
 * the sizes from modelDescription.xml): me_api.h's table makes the calls,
 * and the FMI 3.0 names here stand for both.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#include "worker/me.h"
#include "worker/me_int.h"
#include "worker/me_api.h"
#include "worker/worker.h"

#define ME_RTOL_DEFAULT         1e-4    /* CVODE's usual relative tolerance */
#define ME_EVENT_ITER_MAX       1000u   /* Event Mode iterations before giving up */
/* CVODE steps in one doStep before giving up (CVodeSetMaxNumSteps counts per CVode call). */
#define ME_STEPS_MAX            100000u
/* Bisections locating where an indicator changed domain, at most (2^-200: far past a double). */
#define LOCATE_MAX              200u
/* A stop this close after t is too close for CVODE to integrate to. */
#define ME_TOO_CLOSE(t)         (4.0 * DBL_EPSILON * fmax(1.0, fabs(t)))

struct me_opts me_opts = { .integrator = FMU_INTEGRATOR_BDF };

static void me_free_cvode(struct me *m)
{
        if (m->cv)
                CVodeFree(&m->cv);
        if (m->nls)
                SUNNonlinSolFree(m->nls);
        if (m->ls)
                SUNLinSolFree(m->ls);
        if (m->A)
                SUNMatDestroy(m->A);
        if (m->y)
                N_VDestroy(m->y);
        if (m->atol)
                N_VDestroy(m->atol);
        if (m->yi)
                N_VDestroy(m->yi);
        free(m->nominals);
        free(m->z);
        free(m->above);
        m->yi = NULL;
        m->z = NULL;
        m->above = NULL;
        m->cv = NULL;
        m->nls = NULL;
        m->ls = NULL;
        m->A = NULL;
        m->y = m->atol = NULL;
        m->nominals = NULL;
}

int me_open(struct worker *w)
{
        struct me *m = calloc(1, sizeof(*m));

        if (!m)
                return -ENOMEM;
        if (SUNContext_Create(NULL, &m->ctx) != 0) {
                free(m);
                return -ENOMEM;
        }
        m->integrator = me_opts.integrator;
        m->api = me_api_of(w);
        w->me = m;
        return 0;
}

void me_close(struct worker *w)
{
        struct me *m = w->me;

        if (!m)
                return;
        me_free_cvode(m);
        me_inputs_free(m);
        SUNContext_Free(&m->ctx);
        free(m);
        w->me = NULL;
}

void me_reset(struct worker *w)
{
        struct me *m = w->me;

        me_free_cvode(m);
        m->stats = (struct me_stats){ 0 };
        m->tol_given = false;
        m->next_defined = false;
        m->ct = false;
        m->terminated = false;
        m->event_pending = m->nominals_changed = false;
        m->same_n = 0;
        m->set = false;
        me_inputs_forget(w);
}

void me_experiment(struct worker *w, bool tolerance_defined, double tolerance, double start,
                   double grid_step)
{
        w->me->tol_given = tolerance_defined;
        w->me->rtol = tolerance;
        w->me->time = start;
        w->me->grid_step = isfinite(grid_step) && grid_step > 0.0 ? grid_step : 0.0;
}

/*
 * Keep the worst status; map it to CVODE's: 0, 1 (recoverable: Discard), -1.
 * A Discard is counted, not kept: FMI 3.0 section 3.2.1 lets an FMU discard
 * a trial point so that the integrator reduces its step, and a step CVODE
 * recovers from that way has not failed (cv_failed() when it has not).
 */
static int cv_status(struct me *m, int s)
{
        if (s == fmi3Discard)
                m->discards++;
        else if (s > m->status)
                m->status = s;
        return s <= fmi3Warning ? 0 : s == fmi3Discard ? 1 : -1;
}

/* The FMU at (t, y): fmi3SetTime and fmi3SetContinuousStates. */
static int put_point(struct worker *w, double t, N_Vector y)
{
        struct me *m = w->me;
        int s = m->api->set_time(w, t);

        if (s <= fmi3Warning && m->nx)
                s = m->api->set_states(w, N_VGetArrayPointer(y), m->nx);
        return s;
}

/*
 * A derivative that is not finite, though the FMU said OK, is taken as a
 * Discard: the trial point was too far (an overflow), and CVODE retries
 * with a smaller step, as it does in an importer that hands it the NaN.
 * Counted, and named in the message should CVODE give up (cv_failed()).
 */
static int nonfinite_derivative(struct me *m, sunrealtype t, const double *d)
{
        size_t i;

        for (i = 0; i < m->nx && isfinite(d[i]); i++)
                ;
        if (i == m->nx)
                return 0;
        if (!m->nonfinite++) {
                m->nonfinite_i = i;
                m->nonfinite_v = d[i];
                m->nonfinite_t = t;
        }
        return 1;
}

static int rhs(sunrealtype t, N_Vector y, N_Vector ydot, void *data)
{
        struct worker *w = data;
        struct me *m = w->me;
        int s = put_point(w, t, y), r;

        if (s <= fmi3Warning && m->nx)
                s = m->api->get_derivatives(w, N_VGetArrayPointer(ydot), m->nx);
        if (!m->nx)
                NV_Ith_S(ydot, 0) = 0.0;
        r = cv_status(m, s);
        return r ? r : nonfinite_derivative(m, t, N_VGetArrayPointer(ydot));
}

/*
 * An event indicator that is NaN has no sign, so no root finding can see
 * it cross: the step fails, naming it, rather than miss the event.
 */
static int nan_indicator(struct worker *w, double t, const double *g)
{
        size_t i;

        for (i = 0; i < w->me->nz && !isnan(g[i]); i++)
                ;
        if (i == w->me->nz)
                return fmi3OK;
        snprintf(w->last_error, sizeof(w->last_error), "event indicator %zu is NaN at t = %.17g: "
                 "no state event can be found from it", i, t);
        return fmi3Error;
}

static int indicators(sunrealtype t, N_Vector y, sunrealtype *g, void *data)
{
        struct worker *w = data;
        struct me *m = w->me;
        int s = put_point(w, t, y);

        if (s <= fmi3Warning)
                s = m->api->get_indicators(w, g, m->nz);
        if (cv_status(m, s))
                return -1;
        if (nan_indicator(w, t, g) == fmi3OK)
                return 0;
        m->status = fmi3Error;
        return -1;
}

/*
 * CVODE's error messages become the worker's (and the step's) message,
 * unless the FMU or the callbacks above said why already.
 */
static void cv_error(int code, const char *module, const char *function, char *msg, void *data)
{
        struct worker *w = data;

        /* A warning is no failure: it must not become a later Error's message. */
        if (code == CV_WARNING || (w->me->status > fmi3Warning && w->last_error[0]))
                return;
        snprintf(w->last_error, sizeof(w->last_error), "%s: %s: %s", module, function, msg);
}

/* absolute tolerance: rtol times each state's nominal (1 when not given) */
static int read_nominals(struct worker *w)
{
        struct me *m = w->me;
        int s = fmi3OK;

        for (size_t i = 0; i < m->nx; i++)
                m->nominals[i] = 1.0;
        if (m->nx)
                s = m->api->get_nominals(w, m->nominals, m->nx);
        for (size_t i = 0; i < (m->nx ? m->nx : 1); i++) {
                double n = i < m->nx ? fabs(m->nominals[i]) : 1.0;

                NV_Ith_S(m->atol, i) = m->rtol * (isfinite(n) && n > 0.0 ? n : 1.0);
        }
        return s;
}

/* Read the states into y and restart CVODE at m->time. FMI status, or Error. */
int me_restart(struct worker *w, bool nominals)
{
        struct me *m = w->me;
        int s = fmi3OK, r;

        m->set = false;         /* the restart starts from what was set */
        if (m->nx)
                s = m->api->get_states(w, N_VGetArrayPointer(m->y), m->nx);
        if (s <= fmi3Warning && nominals) {
                int s2 = read_nominals(w);

                s = s2 > s ? s2 : s;
        }
        if (s > fmi3Warning)
                return s;
        for (size_t i = 0; i < m->nx; i++)
                if (!isfinite(NV_Ith_S(m->y, i))) {
                        snprintf(w->last_error, sizeof(w->last_error), "continuous state %zu is "
                                 "%g at t = %.17g (%s): no integration can start from it", i,
                                 NV_Ith_S(m->y, i), m->time, w->fmi == MD_FMI3 ?
                                 "fmi3GetContinuousStates" : "fmi2GetContinuousStates");
                        return fmi3Error;
                }
        r = CVodeReInit(m->cv, m->time, m->y);
        if (r == CV_SUCCESS && nominals)
                r = CVodeSVtolerances(m->cv, m->rtol, m->atol);
        return r == CV_SUCCESS ? s : fmi3Error;
}

/*
 * The indicators at (t, y) into m->z: *ret_changed, whether one is in
 * another domain (z > 0 or z <= 0, FMI 3.0 section 3.1.1) than at the last
 * accepted point. FMI status.
 */
static int domains_at(struct worker *w, double t, N_Vector y, bool *ret_changed)
{
        struct me *m = w->me;
        int s = put_point(w, t, y), s2;

        *ret_changed = false;
        if (s <= fmi3Warning) {
                s2 = m->api->get_indicators(w, m->z, m->nz);
                s = s2 > s ? s2 : s;
        }
        if (s > fmi3Warning)
                return s;
        if (nan_indicator(w, t, m->z) != fmi3OK)
                return fmi3Error;
        for (size_t i = 0; i < m->nz && !*ret_changed; i++)
                *ret_changed = (m->z[i] > 0.0) != m->above[i];
        return s;
}

/* The indicators' domains at the current point, from which changes count. FMI status. */
int me_take_domains(struct worker *w)
{
        struct me *m = w->me;
        bool changed;
        int s = m->nz ? domains_at(w, m->time, m->y, &changed) : fmi3OK;

        for (size_t i = 0; i < m->nz && s <= fmi3Warning; i++)
                m->above[i] = m->z[i] > 0.0;
        m->t_prev = m->time;
        return s;
}

/*
 * A domain changed between the last accepted point and *t (CVODE's root,
 * or an indicator that left 0, which CVODE does not see): bisect the last
 * step's interpolant for the first time one has, to the precision CVODE
 * finds roots to, and move *t and m->y there. FMI status.
 */
static int locate_change(struct worker *w, double *t)
{
        struct me *m = w->me;
        double a = m->t_prev, b = *t;
        /* CVODE's root tolerance, fixed for the search: it must end at a = 0 too. */
        double tol = 100.0 * DBL_EPSILON * (fabs(b) + (b - a));
        bool changed;
        int s = fmi3OK;

        if (CVodeGetDky(m->cv, a, 0, m->yi) != CV_SUCCESS)
                return fmi3OK;          /* no interpolant there: the event stays at *t */
        for (unsigned k = 0; b - a > tol && k < LOCATE_MAX; k++) {
                double mid = a + 0.5 * (b - a);

                if (!(mid > a && mid < b) || CVodeGetDky(m->cv, mid, 0, m->yi) != CV_SUCCESS)
                        break;
                s = domains_at(w, mid, m->yi, &changed);
                if (s > fmi3Warning)
                        return s;
                if (changed)
                        b = mid;
                else
                        a = mid;
        }
        if (b < *t && CVodeGetDky(m->cv, b, 0, m->yi) == CV_SUCCESS) {
                N_VScale(1.0, m->yi, m->y);
                *t = b;
        }
        return put_point(w, *t, m->y);
}

/*
 * Event Mode iteration (FMI 3.0 section 3.2): the FMU is in Event Mode;
 * update its discrete states until it needs no more, then back to
 * Continuous-Time Mode. *ret_nominals: the states' nominals changed.
 */
static int event_iteration(struct worker *w, bool *ret_term, bool *ret_nominals)
{
        struct me *m = w->me;
        int worst = fmi3OK, s;
        unsigned k;

        *ret_term = *ret_nominals = false;
        m->next_defined = false;
        for (k = 0; k < ME_EVENT_ITER_MAX; k++) {
                struct me_discrete d;

                s = m->api->update_discrete(w, &d);
                m->stats.event_iterations++;
                worst = s > worst ? s : worst;
                if (s > fmi3Warning)
                        return s;
                *ret_nominals |= d.nominals;
                if (d.term) {
                        *ret_term = true;
                        return worst;
                }
                /* +inf is no time event; NaN or a past time is no time at all. */
                if (d.next_defined && !(d.next >= m->time)) {
                        snprintf(w->last_error, sizeof(w->last_error), "nextEventTime %.17g "
                                 "is not a time at or after the event at t = %.17g", d.next,
                                 m->time);
                        return fmi3Error;
                }
                m->next_defined = d.next_defined && d.next < INFINITY;
                m->next_time = d.next;
                if (!d.need)
                        break;
        }
        if (k == ME_EVENT_ITER_MAX) {
                snprintf(w->last_error, sizeof(w->last_error), "Event Mode iteration did not end: "
                         "%s after %u %s calls", w->fmi == MD_FMI3 ? "discreteStatesNeedUpdate"
                         : "newDiscreteStatesNeeded", ME_EVENT_ITER_MAX, m->api->update_name);
                return fmi3Error;
        }
        s = m->api->enter_continuous(w);
        m->ct = s <= fmi3Warning;
        return s > worst ? s : worst;
}

/* Make CVODE's objects for the FMU's current sizes. */
int me_create(struct worker *w)
{
        struct me *m = w->me;
        size_t nx = 0, nz = 0, n;
        int s, r;

        s = m->api->sizes(w, &nx, &nz);
        if (s > fmi3Warning)
                return s;
        if (nx > FMU_ME_STATES_MAX || nz > FMU_ME_INDICATORS_MAX) {
                snprintf(w->last_error, sizeof(w->last_error), "the FMU reports %zu continuous states "
                         "and %zu event indicators; at most %u of each are integrated", nx, nz,
                         FMU_ME_STATES_MAX);
                return fmi3Error;
        }
        me_free_cvode(m);
        m->nx = nx;
        m->nz = nz;
        n = nx ? nx : 1;
        if (!m->tol_given) {
                const struct md_default_experiment *x = &w->md->default_experiment;

                m->rtol = w->md->has_default_experiment && x->has_tolerance && x->tolerance > 0.0
                          ? x->tolerance : ME_RTOL_DEFAULT;
        }
        m->y = N_VNew_Serial((sunindextype)n, m->ctx);
        m->atol = N_VNew_Serial((sunindextype)n, m->ctx);
        m->yi = N_VNew_Serial((sunindextype)n, m->ctx);
        m->nominals = calloc(n, sizeof(double));
        m->z = calloc(nz ? nz : 1, sizeof(double));
        m->above = calloc(nz ? nz : 1, 1);
        m->cv = CVodeCreate(m->integrator == FMU_INTEGRATOR_ADAMS ? CV_ADAMS : CV_BDF, m->ctx);
        if (!m->y || !m->atol || !m->yi || !m->nominals || !m->z || !m->above || !m->cv)
                goto nomem;
        N_VConst(0.0, m->y);
        r = CVodeSetErrHandlerFn(m->cv, cv_error, w);
        if (r == CV_SUCCESS)
                r = CVodeSetUserData(m->cv, w);
        if (r == CV_SUCCESS)
                r = CVodeInit(m->cv, rhs, m->time, m->y);
        if (r != CV_SUCCESS)
                goto nomem;
        if (m->integrator == FMU_INTEGRATOR_ADAMS) {
                m->nls = SUNNonlinSol_FixedPoint(m->y, 0, m->ctx);
                if (!m->nls || CVodeSetNonlinearSolver(m->cv, m->nls) != CV_SUCCESS)
                        goto nomem;
        } else {
                m->A = SUNDenseMatrix((sunindextype)n, (sunindextype)n, m->ctx);
                m->ls = m->A ? SUNLinSol_Dense(m->y, m->A, m->ctx) : NULL;
                if (!m->ls || CVodeSetLinearSolver(m->cv, m->ls, m->A) != CV_SUCCESS)
                        goto nomem;
        }
        if (nz && CVodeRootInit(m->cv, (int)nz, indicators) != CV_SUCCESS)
                goto nomem;
        if (CVodeSetMaxNumSteps(m->cv, 100000) != CV_SUCCESS)
                goto nomem;
        s = me_restart(w, true);
        if (s <= fmi3Warning) {
                int s2 = me_take_domains(w);

                s = s2 > s ? s2 : s;
        }
        return s;

nomem:
        snprintf(w->last_error, sizeof(w->last_error), "CVODE: cannot set up the integrator "
                 "for %zu states and %zu event indicators", nx, nz);
        return fmi3Error;
}

int me_start(struct worker *w, bool *ret_term)
{
        bool nominals;
        int s, s2;

        /* After fmi3ExitInitializationMode the FMU is in Event Mode (section 3.2). */
        w->me->set = false;     /* what initialization took is the integration's start */
        s = event_iteration(w, ret_term, &nominals);
        w->me->terminated = *ret_term && s <= fmi3Warning;
        if (s > fmi3Warning || *ret_term)
                return s;
        w->me->stats.events = 0;
        s2 = me_create(w);
        return s2 > s ? s2 : s;
}

/* Into Event Mode from Continuous-Time Mode. */
int me_enter_event(struct worker *w)
{
        struct me *m = w->me;
        int s = m->api->enter_event(w);

        if (s <= fmi3Warning)
                m->ct = false;
        return s;
}

/*
 * An event at m->time: Event Mode (unless a set entered it already,
 * me_before_set()), iteration, restart.
 */
static int handle_event(struct worker *w, bool *ret_term)
{
        struct me *m = w->me;
        bool nominals;
        int s = fmi3OK, s2;

        m->event_pending = false;
        if (m->ct) {
                s = me_enter_event(w);
                if (s > fmi3Warning)
                        return s;
        }
        m->stats.events++;
        s2 = event_iteration(w, ret_term, &nominals);
        s = s2 > s ? s2 : s;
        if (s > fmi3Warning || *ret_term)
                return s;
        /* Restart even when no state jumped: the right-hand side may have. */
        s2 = me_restart(w, nominals);
        s = s2 > s ? s2 : s;
        if (s > fmi3Warning)
                return s;
        s2 = me_take_domains(w);
        return s2 > s ? s2 : s;
}

/* CVODE's failure, with its own message when it gave one. */
static int cv_failed(struct worker *w, int r)
{
        struct me *m = w->me;
        char *name;

        if (m->status > fmi3Warning)
                return m->status;
        name = CVodeGetReturnFlagName(r);
        if (m->nonfinite) {
                /* The FMU's fault, not a Discard: the message says which derivative. */
                snprintf(w->last_error, sizeof(w->last_error), "CVODE failed at t = %.17g: the "
                         "derivative of continuous state %zu was not finite at %llu trial points, "
                         "the first %g at t = %.17g: %s", m->time, m->nonfinite_i,
                         (unsigned long long)m->nonfinite, m->nonfinite_v, m->nonfinite_t,
                         name ? name : "?");
                free(name);
                return fmi3Error;
        }
        if (m->discards) {
                /* CVODE gave up after the FMU's Discards: the step is discarded. */
                if (!w->last_error[0])
                        snprintf(w->last_error, sizeof(w->last_error), "CVODE failed at t = %.17g "
                                 "after %llu %s: %s", m->time, (unsigned long long)m->discards,
                                 w->fmi == MD_FMI3 ? "fmi3Discard" : "fmi2Discard", name ? name : "?");
                free(name);
                return fmi3Discard;
        }
        if (!w->last_error[0])
                snprintf(w->last_error, sizeof(w->last_error), "CVODE failed at t = %.17g: %s",
                         m->time, name ? name : "?");
        free(name);
        return fmi3Error;
}

double me_master_tol(const struct me *m, double t)
{
        return fmax(1e-9 * m->grid_step, 16.0 * DBL_EPSILON * fabs(t));
}

int me_restart_at(struct worker *w, bool *ret_changed)
{
        struct me *m = w->me;
        int s, s2;

        *ret_changed = false;
        me_cv_counts(m, &m->stats);
        s = me_restart(w, false);
        if (s > fmi3Warning || !m->nz)
                return s;
        s2 = domains_at(w, m->time, m->y, ret_changed);
        return s2 > s ? s2 : s;
}

int me_snap(struct worker *w, double t, bool *ret_changed)
{
        struct me *m = w->me;
        int s, s2;

        *ret_changed = false;
        if (!m->ct || !m->cv || !(t > m->time))
                return fmi3OK;
        s = put_point(w, t, m->y);
        if (s > fmi3Warning)
                return s;
        m->time = t;
        s2 = me_restart_at(w, ret_changed);
        return s2 > s ? s2 : s;
}

/* CVODE's counters since its last (re)start: steps, rhs, g and Jacobian evaluations. */
void me_cv_counts(const struct me *m, struct me_stats *add)
{
        long v;

        if (!m->cv)
                return;
        if (CVodeGetNumSteps(m->cv, &v) == CV_SUCCESS)
                add->steps += (uint64_t)v;
        if (CVodeGetNumRhsEvals(m->cv, &v) == CV_SUCCESS)
                add->rhs_evals += (uint64_t)v;
        if (CVodeGetNumGEvals(m->cv, &v) == CV_SUCCESS)
                add->root_evals += (uint64_t)v;
        if (m->ls && CVodeGetNumJacEvals(m->cv, &v) == CV_SUCCESS)
                add->jac_evals += (uint64_t)v;
}

static int integrate(struct worker *w, double t, double h, bool inputs_set, bool *ret_term,
                     bool *ret_event, double *ret_end)
{
        struct me *m = w->me;
        double t_end = t + h;
        int worst = fmi3OK, s = fmi3OK, r;

        *ret_term = *ret_event = false;
        *ret_end = m->time;
        if (m->terminated) {
                /*
                 * The FMU asked to terminate (in its first Event Mode, or
                 * at an event of an earlier step; FMI 3.0 section 2.3.5),
                 * and the importer then ends the simulation (the section
                 * 3.3 example goes to fmi3Terminate): the step says so
                 * again without integrating, at the time it stopped.
                 */
                *ret_term = true;
                return fmi3OK;
        }
        if (!m->cv) {
                snprintf(w->last_error, sizeof(w->last_error), "no integrator: the FMU was not "
                         "initialized");
                return fmi3Error;
        }
        if (fabs(t - m->time) > fmax(1e-9 * fmax(1.0, fabs(t)), me_master_tol(m, t))) {
                snprintf(w->last_error, sizeof(w->last_error), "doStep from t = %.17g, but the "
                         "integration is at t = %.17g", t, m->time);
                return fmi3Error;
        }
        if (w->event_mode_used && m->ct && !m->event_pending && (t > m->time || inputs_set)) {
                /*
                 * Where the master's Event Mode is the FMU's (me_events.c):
                 * a point the master rounded an early return onto, which
                 * the FMU goes to (forward only), or continuous inputs set
                 * in Step Mode, with no event, which would tick output
                 * Clocks unseen. Either way the integrator restarts, and
                 * an indicator now in another domain is a state event here.
                 */
                bool changed = false;

                s = t > m->time ? me_snap(w, t, &changed) : me_restart_at(w, &changed);
                if (s > fmi3Warning)
                        return s;
                worst = s;
                if (changed) {
                        m->event_pending = true;
                        *ret_event = true;
                        return worst;
                }
        } else if (inputs_set || !m->ct || m->event_pending) {
                /* An event the master left without its Event Mode is handled here. */
                me_cv_counts(m, &m->stats);
                s = handle_event(w, ret_term);
                if (s > fmi3Warning || *ret_term)
                        return s;
                worst = s;
        }
        for (unsigned steps = 0; m->time < t_end; steps++) {
                double stop = t_end, tret = m->time;
                bool enter = false, term = false, state_event;

                if (steps == ME_STEPS_MAX) {
                        snprintf(w->last_error, sizeof(w->last_error), "CVODE took %u steps "
                                 "from t = %.17g and reached only t = %.17g of the step to "
                                 "%.17g: its step is held down (stiffness, or derivatives the "
                                 "FMU discards or cannot compute but at tiny steps)", steps, t,
                                 m->time, t_end);
                        return fmi3Error;
                }
                if (m->next_defined && m->next_time <= t_end)
                        stop = m->next_time > m->time ? m->next_time : m->time;
                m->status = fmi3OK;
                m->discards = m->nonfinite = 0;
                if (stop > m->time && stop - m->time <= ME_TOO_CLOSE(m->time)) {
                        /*
                         * FMI allows any later nextEventTime, but CVODE cannot
                         * step a few ulps (CV_TOO_CLOSE): the event is now.
                         */
                        tret = stop;
                        r = CV_TSTOP_RETURN;
                } else if (stop > m->time) {
                        if (CVodeSetStopTime(m->cv, stop) != CV_SUCCESS)
                                return cv_failed(w, CV_ILL_INPUT);
                        r = CVode(m->cv, stop, m->y, &tret, CV_ONE_STEP);
                        if (r < 0)
                                return cv_failed(w, r);
                        /* Discards CVODE recovered from do not decide the status. */
                        worst = m->status > worst ? m->status : worst;
                } else {
                        r = CV_TSTOP_RETURN;    /* a time event now */
                }
                /* The accepted point: the FMU's time and states are CVODE's. */
                m->time = tret >= stop ? stop : tret;
                state_event = false;
                if (m->nz) {
                        s = domains_at(w, m->time, m->y, &state_event);
                        /*
                         * Find where the domain changed first: CVODE's root
                         * (if any) is where one indicator crossed, but another
                         * may have left 0 before it, which CVODE ignores.
                         */
                        if (s <= fmi3Warning && state_event) {
                                int s2 = locate_change(w, &m->time);

                                s = s2 > s ? s2 : s;
                        }
                } else {
                        s = put_point(w, m->time, m->y);
                }
                worst = s > worst ? s : worst;
                if (s > fmi3Warning)
                        return worst;
                *ret_end = m->time;
                m->t_prev = m->time;
                s = m->api->completed_step(w, &enter, &term);
                worst = s > worst ? s : worst;
                if (s > fmi3Warning)
                        return worst;
                if (term) {
                        *ret_term = true;
                        return worst;
                }
                /*
                 * A state, step or time event. A root of CVODE's where no
                 * domain changed (an indicator reached 0 from below) is none
                 * yet: it is where the indicator leaves 0 upwards.
                 */
                if (state_event || enter || (m->next_defined && m->time >= m->next_time)) {
                        if (w->event_mode_used) {
                                /* The master's Event Mode handles it, here (me_events.c). */
                                m->event_pending = true;
                                *ret_event = true;
                                return worst;
                        }
                        me_cv_counts(m, &m->stats);
                        s = handle_event(w, ret_term);
                        worst = s > worst ? s : worst;
                        if (s > fmi3Warning || *ret_term)
                                return worst;
                        /*
                         * A time event at its own time again is allowed (FMI
                         * 3.0 section 3.3: the importer enters Event Mode once
                         * time >= nextEventTime), a few times: an FMU that
                         * always answers now would stop time.
                         */
                        if (m->next_defined && m->next_time <= m->time) {
                                m->same_n = m->same_t == m->time ? m->same_n + 1 : 1;
                                m->same_t = m->time;
                                if (m->same_n > ME_SAME_TIME_MAX) {
                                        snprintf(w->last_error, sizeof(w->last_error),
                                                 "nextEventTime %.17g is not after the event at "
                                                 "t = %.17g, %u times in a row: time would not "
                                                 "advance", m->next_time, m->time, m->same_n);
                                        return fmi3Error;
                                }
                        }
                }
        }
        return worst;
}

int me_step(struct worker *w, double t, double h, bool inputs_set, bool *ret_term, bool *ret_event,
            double *ret_end)
{
        int s = integrate(w, t, h, inputs_set, ret_term, ret_event, ret_end);

        w->me->terminated |= *ret_term && s <= fmi3Warning;
        return s;
}

bool me_in_ct(const struct worker *w)
{
        return w->me && w->me->cv && w->me->ct;
}

void me_note_set(struct worker *w)
{
        w->me->set = true;
}

bool me_take_set(struct worker *w)
{
        bool set = w->me->set;

        w->me->set = false;
        return set;
}

bool me_ct_settable(const struct md_variable *v)
{
        return v && v->causality == MD_CAUSALITY_INPUT &&
               v->variability == MD_VARIABILITY_CONTINUOUS;
}

int me_before_set(struct worker *w, enum md_type type, const uint32_t *vrs, uint32_t n)
{
        struct me *m = w->me;
        uint32_t i;

        if (!m->cv || !m->ct)
                return fmi3OK;
        /* By type: FMI 2.0 lets a Real and an Integer share a value reference. */
        for (i = 0; i < n && me_ct_settable(vars_find(w, type, vrs[i])); i++)
                ;
        return i == n ? fmi3OK : me_enter_event(w);
}

void me_result(const struct worker *w, struct call_step_result *res)
{
        struct me_stats st = w->me->stats;

        me_cv_counts(w->me, &st);
        res->me_steps = st.steps;
        res->me_rhs_evals = st.rhs_evals;
        res->me_root_evals = st.root_evals;
        res->me_jac_evals = st.jac_evals;
        res->me_events = st.events > UINT32_MAX ? UINT32_MAX : (uint32_t)st.events;
        res->me_event_iterations = st.event_iterations > UINT32_MAX ? UINT32_MAX
                                   : (uint32_t)st.event_iterations;
}
