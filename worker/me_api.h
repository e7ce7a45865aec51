/*
 * me_api: the Model Exchange calls the worker's integrator makes (me.c),
 * one table for FMI 3.0 and one for FMI 2.0. Private to worker/.
 *
 * DESIGN: me.c is one integrator for both versions; the calls differ in
 * names, in the shape of the event iteration's results (FMI 3.0
 * fmi3UpdateDiscreteStates' six outputs, FMI 2.0 fmi2NewDiscreteStates'
 * fmi2EventInfo) and in where the sizes come from (FMI 3.0 asks the FMU,
 * FMI 2.0 states them in modelDescription.xml), and nothing else. Each
 * function returns the FMU's status through status_norm().
 */
#ifndef FMUD_WORKER_ME_API_H
#define FMUD_WORKER_ME_API_H

#include <stdbool.h>
#include <stddef.h>

struct worker;

/* One pass of the event iteration (FMI 3.0 section 3.2.3, FMI 2.0 section 3.2.2). */
struct me_discrete {
        bool need;              /* discreteStatesNeedUpdate / newDiscreteStatesNeeded */
        bool term;              /* terminateSimulation */
        bool nominals;          /* nominalsOfContinuousStatesChanged */
        bool values;            /* valuesOfContinuousStatesChanged */
        bool next_defined;      /* nextEventTimeDefined */
        double next;            /* nextEventTime */
};

struct me_api {
        const char *update_name;        /* the event iteration's function, for messages */
        int (*sizes)(struct worker *w, size_t *ret_nx, size_t *ret_nz);
        int (*set_time)(struct worker *w, double t);
        int (*set_states)(struct worker *w, const double *x, size_t nx);
        int (*get_states)(struct worker *w, double *x, size_t nx);
        int (*get_derivatives)(struct worker *w, double *dx, size_t nx);
        int (*get_indicators)(struct worker *w, double *z, size_t nz);
        int (*get_nominals)(struct worker *w, double *nominals, size_t nx);
        int (*completed_step)(struct worker *w, bool *ret_enter, bool *ret_term);
        int (*enter_event)(struct worker *w);
        int (*update_discrete)(struct worker *w, struct me_discrete *d);
        int (*enter_continuous)(struct worker *w);
};

/* The table for the worker's FMI version. */
const struct me_api *me_api_of(const struct worker *w);

#endif
