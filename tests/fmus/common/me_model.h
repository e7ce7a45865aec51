/*
 * me_model.h: what one Model Exchange test FMU's model.c provides to the
 * shared FMI 3.0 Model Exchange implementation (common/fmi3_me.c).
 *
 * A Model Exchange model here has Float64 variables only, value reference
 * = index into one array (0 is time), the way many tools' exports are laid
 * out: continuous states and their derivatives, event indicators, and an
 * event function that may make the states jump and names the next time
 * event (FMI 3.0 section 3). The shared code does the FMI state machine
 * and the calls; the model does the equations.
 *
 * DESIGN: ME-only, like an FMU a modelling tool exports for an importer's
 * own solver: no CoSimulation, no doStep; everything else of the FMI 3.0
 * API that a loader requires is there and refuses what the model lacks
 * (other types than Float64).
 */
#ifndef FMUD_TEST_FMU_ME_MODEL_H
#define FMUD_TEST_FMU_ME_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#define ME_MODEL_MAX_VARS       32

/*
 * When fmi3SetFloat64 may change a variable (FMI 3.0 sections 2.3.2, 3.2.1
 * and 3.2.2), as its description's causality and variability say.
 */
enum me_set {
        ME_SET_BEFORE_INIT,     /* fixed parameters, initial states: Instantiated, Initialization Mode */
        ME_SET_EVENT,           /* tunable parameters, discrete inputs: Event Mode too */
        ME_SET_CONTINUOUS,      /* continuous inputs: Continuous-Time Mode too */
};
#define ME_MODEL_MAX_STATES     8
#define ME_MODEL_MAX_INDICATORS 4
#define ME_MODEL_MAX_CLOCKS     4

/* A Clock (FMI 3.0 section 2.2.8): its value reference is its own, not an index of v. */
struct me_model_clock {
        unsigned vr;
        bool output;            /* else an input Clock the importer sets */
};

struct me_model {
        const char *token;              /* instantiationToken */
        size_t n_vars;                  /* value references 0 .. n_vars - 1; 0 is time */
        size_t nx, nz;                  /* continuous states, event indicators */
        unsigned state_vr[ME_MODEL_MAX_STATES];
        /* Per value reference; 0 (ME_SET_BEFORE_INIT) unless given. */
        unsigned char set[ME_MODEL_MAX_VARS];
        unsigned der_vr[ME_MODEL_MAX_STATES];
        double nominal[ME_MODEL_MAX_STATES];    /* 0: 1 */
        /* Start values of every variable. */
        void (*start)(double *v);
        /* Leaving Initialization Mode: the states from the parameters. */
        void (*init)(double *v);
        /* The derivatives (into v[der_vr]) and outputs at v[0], the states. */
        void (*derivatives)(double *v);
        /*
         * Optional: true makes fmi3GetContinuousStateDerivatives return
         * fmi3Discard at v (FMI 3.0 section 3.2.1: the importer retries with
         * a smaller step); t_accepted is the last accepted integrator time.
         */
        bool (*discard)(const double *v, double t_accepted);
        /*
         * Optional: true makes the derivatives at v NaN with fmi3OK, as an
         * export whose equations overflow at a far trial point does.
         */
        bool (*overflow)(const double *v, double t_accepted);
        /* nz event indicators; NULL when nz is 0. */
        void (*indicators)(const double *v, double *z);
        /*
         * One fmi3UpdateDiscreteStates at v[0]: handle what happened (state
         * jumps: *changed), say the next time event. NULL: none.
         */
        void (*event)(double *v, bool *changed, bool *next_defined, double *next);
        /*
         * true: a get of a variable the importer sets after initialization
         * (set[vr] of ME_SET_EVENT or more: its inputs, where it has no
         * tunable parameters) is refused in Continuous-Time Mode, as a
         * strict export does: FMI 3.0 section 3.2.1 lists no such get.
         */
        bool no_input_get;
        /*
         * With ME_STRING_INPUT defined (FMI 3.0 only): the value reference of
         * one discrete String input, set in Event Mode only (and before
         * initialization), and the variable counting its changes, which
         * fmi3UpdateDiscreteStates takes. Value references outside 0 ..
         * n_vars - 1.
         */
        unsigned string_vr;
        unsigned string_changes;        /* an index of v */
        /* Optional: true makes that fmi3UpdateDiscreteStates ask to terminate. */
        bool (*terminate)(const double *v);
        /* Optional: true makes that fmi3UpdateDiscreteStates return fmi3Discard, logged. */
        bool (*discard_event)(const double *v);
        /*
         * Clocks: fmi3SetClock activates input ones, fmi3GetClock reads
         * output ones, in Event Mode only; fmi3UpdateDiscreteStates
         * deactivates them all (section 2.3.5).
         */
        size_t n_clocks;
        struct me_model_clock clocks[ME_MODEL_MAX_CLOCKS];
        /*
         * Per value reference: 1 + i for a variable clocked by clocks[i],
         * got and set only in Initialization Mode or while clocks[i] is
         * active in Event Mode (section 2.2.8.3); 0: not clocked.
         */
        unsigned char clocked_by[ME_MODEL_MAX_VARS];
        /*
         * Optional: the partition of the input Clock clocks[i] at v[0],
         * run once per tick, when the first value is got after the tick
         * or at fmi3UpdateDiscreteStates (FMI 3.0 section 2.2.8.3: a get
         * "will trigger the execution of f_event"), so after the clocked
         * inputs are set.
         */
        void (*tick)(double *v, size_t i);
        /*
         * Optional: Event Mode entered at v[0] (fmi3EnterEventMode, and
         * after initialization): the model activates the output Clocks
         * of the event it finds (active[i] for clocks[i]).
         */
        void (*entered)(double *v, bool *active);
        /*
         * Optional: each fmi3UpdateDiscreteStates at v[0], after the
         * Clocks active in it are deactivated: the model activates the
         * output Clocks of what the values set in Event Mode caused
         * (section 3.2.2); true asks for another iteration, in which
         * they are read and deactivated.
         */
        bool (*updated)(double *v, bool *active);
};

/* Defined by model.c. */
extern const struct me_model me_model;

#endif
