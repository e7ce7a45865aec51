/*
 * me_int: what the parts of worker/me*.c share of a hosted Model Exchange
 * FMU: its integrator and the calls that restart it. Private to me.c and
 * me_events.c.
 */
#ifndef FMUD_WORKER_ME_INT_H
#define FMUD_WORKER_ME_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>

#include "worker/me.h"

struct worker;

#define ME_SAME_TIME_MAX        100u    /* time events in a row at one time before giving up */

/* What the integrator did since the instance was initialized. */
struct me_stats {
        uint64_t steps;                 /* CVODE's internal steps */
        uint64_t rhs_evals;             /* derivative evaluations */
        uint64_t root_evals;            /* event indicator evaluations (root finding) */
        uint64_t jac_evals;             /* Jacobian evaluations (BDF) */
        uint64_t events;                /* Event Mode entries after initialization */
        uint64_t event_iterations;      /* fmi3UpdateDiscreteStates / fmi2NewDiscreteStates calls */
};

struct me {
        enum fmu_integrator integrator;
        const struct me_api *api;       /* the FMU's version's calls */
        SUNContext ctx;
        void *cv;               /* CVODE memory; NULL before the first start */
        N_Vector y, atol;
        SUNMatrix A;
        SUNLinearSolver ls;
        SUNNonlinearSolver nls;
        size_t nx, nz;          /* the FMU's; the vector has max(nx, 1) */
        double *nominals;       /* nx */
        N_Vector yi;            /* scratch: an interpolated state (locating a state event) */
        double *z;              /* nz: the indicators at the last point evaluated */
        unsigned char *above;   /* nz: each indicator's domain (z > 0) at the last accepted point */
        double t_prev;          /* the last accepted point: no domain changed up to it */
        double time;
        bool next_defined;
        double next_time;
        double rtol;
        bool tol_given;
        bool ct;                /* the FMU is in Continuous-Time Mode */
        bool set;               /* a value was set since the last (re)start (me_note_set()) */
        struct me_input *inputs;        /* per variable: what was set last (me_inputs.c) */
        size_t n_inputs;
        bool terminated;        /* the FMU asked to terminate: the step says so, no more calls */
        /*
         * Event Mode is the master's (w->event_mode_used, me_events.c): a
         * step ended at an event the master has not yet entered Event Mode
         * for, and the nominals changed in the master's iteration.
         */
        bool event_pending;
        bool nominals_changed;
        double grid_step;       /* the master's (me_master_tol()); 0: none */
        double same_t;          /* the time of the last time event, and how many in a row there */
        unsigned same_n;
        int status;             /* the worst FMU status but Discard inside one CVODE call */
        uint64_t discards;      /* the FMU's Discards inside one CVODE call */
        /* Derivatives not finite inside one CVODE call: how often, the first. */
        uint64_t nonfinite;
        size_t nonfinite_i;
        double nonfinite_v, nonfinite_t;
        struct me_stats stats;
};

/* Make CVODE's objects for the FMU's current sizes, from m->time. FMI status. */
int me_create(struct worker *w);
/* Restart CVODE from the FMU's states at m->time; nominals: read them again. FMI status. */
int me_restart(struct worker *w, bool nominals);
/* The indicators' domains at the current point, from which changes count. FMI status. */
int me_take_domains(struct worker *w);
/* Into Event Mode from Continuous-Time Mode. FMI status. */
int me_enter_event(struct worker *w);
/*
 * Two times the master takes as one point: within 1e-9 of its grid step or
 * 16 ulps (engine/master/master.c, master_tol()), so that it rounds an
 * early return onto its point and enters Event Mode for a time event that
 * close after it.
 */
double me_master_tol(const struct me *m, double t);
/*
 * CVODE restarted from the FMU's states at m->time; *ret_changed: an
 * indicator is in another domain than at the last accepted point (not
 * taken). FMI status.
 */
int me_restart_at(struct worker *w, bool *ret_changed);
/* The FMU's time moved forward to t (states held), then me_restart_at(). FMI status. */
int me_snap(struct worker *w, double t, bool *ret_changed);
/* CVODE's counters since its last (re)start added to *add (a restart zeroes them). */
void me_cv_counts(const struct me *m, struct me_stats *add);

/* me_inputs.c */
struct me_input;
void me_inputs_free(struct me *m);

#endif
