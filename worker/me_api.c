/*
 * me_api: the FMI 3.0 and FMI 2.0 Model Exchange calls behind one table
 * (me_api.h), so that one integrator (me.c) hosts both versions.
 *
 * DESIGN: FMI 2.0 booleans are ints and its event iteration fills an
 * fmi2EventInfo (FMI 2.0 section 3.2.2); FMI 3.0 booleans are bytes read
 * as bytes, so that a value other than 0 or 1 is true. FMI 2.0 has no
 * functions for the numbers of states and event indicators: they are the
 * Derivatives of ModelStructure and numberOfEventIndicators (FMI 2.0
 * sections 2.2.8 and 2.2.1), which fmu.c bounded at load.
 */
#include <stdio.h>
#include <string.h>

#include "worker/me_api.h"
#include "worker/worker.h"

typedef union { fmi3Boolean b; uint8_t u; } bool3;

static int sizes3(struct worker *w, size_t *ret_nx, size_t *ret_nz)
{
        int s = status_norm(w, w->lib->f3.fmi3GetNumberOfContinuousStates(w->inst, ret_nx));

        if (s <= fmi3Warning) {
                int s2 = status_norm(w, w->lib->f3.fmi3GetNumberOfEventIndicators(w->inst, ret_nz));

                s = s2 > s ? s2 : s;
        }
        return s;
}

static int set_time3(struct worker *w, double t)
{
        return status_norm(w, w->lib->f3.fmi3SetTime(w->inst, t));
}

static int set_states3(struct worker *w, const double *x, size_t nx)
{
        return status_norm(w, w->lib->f3.fmi3SetContinuousStates(w->inst, x, nx));
}

static int get_states3(struct worker *w, double *x, size_t nx)
{
        return status_norm(w, w->lib->f3.fmi3GetContinuousStates(w->inst, x, nx));
}

static int get_derivatives3(struct worker *w, double *dx, size_t nx)
{
        return status_norm(w, w->lib->f3.fmi3GetContinuousStateDerivatives(w->inst, dx, nx));
}

static int get_indicators3(struct worker *w, double *z, size_t nz)
{
        return status_norm(w, w->lib->f3.fmi3GetEventIndicators(w->inst, z, nz));
}

static int get_nominals3(struct worker *w, double *nominals, size_t nx)
{
        return status_norm(w, w->lib->f3.fmi3GetNominalsOfContinuousStates(w->inst, nominals, nx));
}

static int completed_step3(struct worker *w, bool *ret_enter, bool *ret_term)
{
        bool3 enter = { 0 }, term = { 0 };
        int s = status_norm(w, w->lib->f3.fmi3CompletedIntegratorStep(w->inst, fmi3True, &enter.b,
                                                                       &term.b));

        *ret_enter = enter.u != 0;
        *ret_term = term.u != 0;
        return s;
}

static int enter_event3(struct worker *w)
{
        return status_norm(w, w->lib->f3.fmi3EnterEventMode(w->inst));
}

static int update_discrete3(struct worker *w, struct me_discrete *d)
{
        bool3 need = { 0 }, term = { 0 }, nom = { 0 }, val = { 0 }, def = { 0 };
        double next = 0.0;
        int s = status_norm(w, w->lib->f3.fmi3UpdateDiscreteStates(w->inst, &need.b, &term.b, &nom.b,
                                                                    &val.b, &def.b, &next));

        *d = (struct me_discrete){
                .need = need.u != 0, .term = term.u != 0, .nominals = nom.u != 0,
                .values = val.u != 0, .next_defined = def.u != 0, .next = next,
        };
        return s;
}

static int enter_continuous3(struct worker *w)
{
        return status_norm(w, w->lib->f3.fmi3EnterContinuousTimeMode(w->inst));
}

static const struct me_api api3 = {
        .update_name = "fmi3UpdateDiscreteStates",
        .sizes = sizes3,
        .set_time = set_time3,
        .set_states = set_states3,
        .get_states = get_states3,
        .get_derivatives = get_derivatives3,
        .get_indicators = get_indicators3,
        .get_nominals = get_nominals3,
        .completed_step = completed_step3,
        .enter_event = enter_event3,
        .update_discrete = update_discrete3,
        .enter_continuous = enter_continuous3,
};

/* The FMU's status; fmi2Pending, which only fmi2DoStep may return (FMI 2.0 section 4.2.3), is an Error. */
static int st2(struct worker *w, int status, const char *fn)
{
        int s = status_norm(w, status);

        if (s != fmi2Pending)
                return s;
        snprintf(w->last_error, sizeof(w->last_error), "%s returned fmi2Pending, which only "
                 "fmi2DoStep may return", fn);
        return fmi2Error;
}

#define CALL2(w, fn, ...) st2((w), (w)->lib->f2.fn((w)->inst, __VA_ARGS__), #fn)

static int sizes2(struct worker *w, size_t *ret_nx, size_t *ret_nz)
{
        *ret_nx = w->md->structure.derivatives.n;
        *ret_nz = w->md->number_of_event_indicators;
        return fmi2OK;
}

static int set_time2(struct worker *w, double t)
{
        return CALL2(w, fmi2SetTime, t);
}

static int set_states2(struct worker *w, const double *x, size_t nx)
{
        return CALL2(w, fmi2SetContinuousStates, x, nx);
}

static int get_states2(struct worker *w, double *x, size_t nx)
{
        return CALL2(w, fmi2GetContinuousStates, x, nx);
}

static int get_derivatives2(struct worker *w, double *dx, size_t nx)
{
        return CALL2(w, fmi2GetDerivatives, dx, nx);
}

static int get_indicators2(struct worker *w, double *z, size_t nz)
{
        return CALL2(w, fmi2GetEventIndicators, z, nz);
}

static int get_nominals2(struct worker *w, double *nominals, size_t nx)
{
        return CALL2(w, fmi2GetNominalsOfContinuousStates, nominals, nx);
}

static int completed_step2(struct worker *w, bool *ret_enter, bool *ret_term)
{
        fmi2Boolean enter = fmi2False, term = fmi2False;
        int s = CALL2(w, fmi2CompletedIntegratorStep, fmi2True, &enter, &term);

        *ret_enter = enter != fmi2False;
        *ret_term = term != fmi2False;
        return s;
}

static int enter_event2(struct worker *w)
{
        return st2(w, w->lib->f2.fmi2EnterEventMode(w->inst), "fmi2EnterEventMode");
}

static int update_discrete2(struct worker *w, struct me_discrete *d)
{
        fmi2EventInfo e;
        int s;

        memset(&e, 0, sizeof(e));
        s = CALL2(w, fmi2NewDiscreteStates, &e);
        *d = (struct me_discrete){
                .need = e.newDiscreteStatesNeeded != fmi2False,
                .term = e.terminateSimulation != fmi2False,
                .nominals = e.nominalsOfContinuousStatesChanged != fmi2False,
                .values = e.valuesOfContinuousStatesChanged != fmi2False,
                .next_defined = e.nextEventTimeDefined != fmi2False,
                .next = e.nextEventTime,
        };
        return s;
}

static int enter_continuous2(struct worker *w)
{
        return st2(w, w->lib->f2.fmi2EnterContinuousTimeMode(w->inst),
                   "fmi2EnterContinuousTimeMode");
}

static const struct me_api api2 = {
        .update_name = "fmi2NewDiscreteStates",
        .sizes = sizes2,
        .set_time = set_time2,
        .set_states = set_states2,
        .get_states = get_states2,
        .get_derivatives = get_derivatives2,
        .get_indicators = get_indicators2,
        .get_nominals = get_nominals2,
        .completed_step = completed_step2,
        .enter_event = enter_event2,
        .update_discrete = update_discrete2,
        .enter_continuous = enter_continuous2,
};

const struct me_api *me_api_of(const struct worker *w)
{
        return w->md->fmi == MD_FMI3 ? &api3 : &api2;
}
