/*
 * common.h: the instance shared by the FMI 2.0 and FMI 3.0 front ends of
 * the test FMUs, and the version-independent services of common/inst.c
 * (variable lookup, state machine bookkeeping, snapshots, logging).
 *
 * DESIGN: everything that an FMU state snapshot must restore lives in
 * struct sim and in the model data; everything fixed at instantiation
 * (callbacks, names, eventModeUsed, ...) lives beside it and is never
 * restored. A snapshot is therefore two byte copies.
 */
#ifndef FMUD_TEST_FMU_COMMON_H
#define FMUD_TEST_FMU_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

/*
 * States of FMI 3.0 Co-Simulation (section 2.3 and 4.2). The FMI 2.0
 * front end uses the subset INSTANTIATED, INITIALIZATION, STEP (slave
 * initialized) and TERMINATED (which also stands for FMI 2.0's error
 * state: both allow only get, reset, free and FMU state calls).
 */
enum inst_state {
        ST_INSTANTIATED,
        ST_INITIALIZATION,
        ST_STEP,
        ST_EVENT,
        ST_CONFIGURATION,
        ST_RECONFIGURATION,
        ST_INTERMEDIATE_UPDATE,
        ST_TERMINATED,
        ST_N_STATES,
};

#define STATE_BIT(s) (1u << (s))
#define ANY_STATE ((1u << ST_N_STATES) - 1)
/* Every state but Intermediate Update Mode (callback in progress). */
#define SETTLED_STATE (ANY_STATE & ~STATE_BIT(ST_INTERMEDIATE_UPDATE))

/* The part of an instance an FMU state snapshot saves and restores. */
struct sim {
        enum inst_state state;
        double time;
        double start_time;
        double stop_time;
        bool stop_time_defined;
        bool dirty;             /* a value was set since the last calculate */
        bool tolerance_defined; /* as the importer gave it (not kept in a serialized state) */
        double tolerance;
        bool terminated;        /* FMI 2.0: a step ended in Discard to ask to stop */
};

/* The standard log categories every test FMU declares, in this order. */
enum log_category {
        LOG_EVENTS,
        LOG_STATUS_WARNING,
        LOG_STATUS_DISCARD,
        LOG_STATUS_ERROR,
        LOG_STATUS_FATAL,
        LOG_N_CATEGORIES,
};

extern const char *const log_category_names[LOG_N_CATEGORIES];

/* Forwards one formatted message to the importer's logger. */
typedef void inst_logger_fn(struct inst *inst, enum fmu_status status,
                            const char *category, const char *message);

/* Calls the importer's intermediate update callback (FMI 3.0 only). */
typedef void inst_iu_fn(struct inst *inst, struct intermediate *iu);

struct inst {
        const struct model *model;
        char *name;
        char *resource_path;            /* NULL if none given */

        /* Importer callbacks, fixed at instantiation. */
        inst_logger_fn *logger;         /* NULL: no logging at all */
        void *env;                      /* instanceEnvironment */
        void (*log_callback)(void);     /* the importer's, cast back by the front end */
        void (*iu_callback)(void);      /* FMI 3.0 intermediateUpdate */
        inst_iu_fn *iu;                 /* NULL: no intermediate update */
        unsigned log_mask;              /* bit per enum log_category */

        bool event_mode_used;
        bool early_return_allowed;
        uint32_t *required_iu;          /* requiredIntermediateVariables */
        size_t n_required_iu;

        /* Intermediate Update Mode, valid while in it. */
        bool iu_set_requested;
        bool iu_get_allowed;
        bool iu_did_set;                /* Set seen: no more Get (4.2.2) */
        bool iu_failed;                 /* a call inside the callback failed */

        struct sim sim;
        void *data;                     /* struct model_data */
};

/*
 * Allocate an instance of the model, copy name and resource path, and set
 * the start values. Returns NULL only for OOM.
 */
struct inst *inst_new(const char *name, const char *resource_path);

/* Free an instance; NULL is a no-op. */
void inst_free(struct inst *inst);

/* True if s holds only spaces, tabs and line breaks (an unusable instance name). */
bool inst_name_blank(const char *s);

/*
 * Start the experiment at start, ending at stop if stop_defined. Refuses
 * (logs "<fn>: stopTime ... < startTime ..." and returns -EINVAL) a stop
 * before the start.
 */
int inst_set_experiment(struct inst *inst, const char *fn, double start, bool stop_defined,
                        double stop);

/* Keep the relative tolerance the importer gave, for inst_tolerance(). */
void inst_set_tolerance(struct inst *inst, bool defined, double tolerance);

/* Back to Instantiated with start values (fmi3Reset, fmi2Reset). */
void inst_reset(struct inst *inst);

/* Log through the logger, from an already formatted va_list. */
void inst_vlog(struct inst *inst, enum fmu_status status, const char *fmt, va_list ap)
        __attribute__((format(printf, 3, 0)));

/* Name of a state for messages, e.g. "Step Mode". */
const char *inst_state_name(enum inst_state state);

/*
 * If the instance is in one of the states of mask, return true. Otherwise
 * log "<fn> must not be called in <state>" and return false.
 */
bool inst_check_state(struct inst *inst, const char *fn, unsigned mask);

/*
 * Record that a call failed with fmi3Error/fmi2Error: the FMU enters
 * Terminated (FMI 3.0 section 2.3.1).
 */
void inst_fail(struct inst *inst);

/* The variable with value reference vr, or NULL. O(vars); fine below ~100. */
const struct var *inst_find_var(const struct inst *inst, uint32_t vr);

/* Number of elements the variable has now (arrays may be resized). */
size_t inst_var_count(struct inst *inst, const struct var *v);

/* Pointer to the storage of a variable's first element. */
void *inst_var_ptr(struct inst *inst, const struct var *v);

/* Size in bytes of one stored element of type t. */
size_t var_type_size(enum var_type t);

/* FMI name of a type, e.g. "Float64". */
const char *var_type_name(enum var_type t);

/*
 * Why v cannot be set in the current state, or NULL if it can. The
 * message completes "variable 'x' (vr 3) ...".
 */
const char *inst_set_refusal(const struct inst *inst, const struct var *v);

/* Why v cannot be read in the current state, or NULL if it can. */
const char *inst_get_refusal(const struct inst *inst, const struct var *v);

/*
 * Run the model's calculate hook if values changed since the last run and
 * the state is one where getting values triggers computation.
 */
int inst_refresh(struct inst *inst);

/* Run the model's calculate hook unconditionally. */
int inst_calculate(struct inst *inst);

/*
 * Check the value of a UInt64 structural parameter about to be set:
 * every array it sizes must fit in its capacity.
 */
int inst_check_size(struct inst *inst, const struct var *v, uint64_t value);

/* Enable or disable log categories by name; -EINVAL on an unknown one. */
int inst_set_debug_logging(struct inst *inst, bool on, size_t n, const char *const names[]);

/*
 * Get the serialized values of nvr variables of type t (section 2.2.7.1:
 * arrays row-major, concatenated) into out, an array of n_values elements
 * of the fmi3 C type of t (const char * for String, const uint8_t * for
 * Binary, whose sizes go to sizes). Checks existence, type, state and
 * n_values; logs and returns -EINVAL on any violation, before copying.
 * fn names the FMI function in messages.
 */
int values_get(struct inst *inst, const char *fn, enum var_type t,
               const uint32_t vrs[], size_t nvr, void *out, size_t *sizes,
               size_t n_values);

/* The reverse of values_get(); nothing is written unless all checks pass. */
int values_set(struct inst *inst, const char *fn, enum var_type t,
               const uint32_t vrs[], size_t nvr, const void *in,
               const size_t *sizes, size_t n_values);

/* FMU state snapshots (FMI 3.0 section 2.2.7.4, FMI 2.0 section 2.1.8). */
struct snapshot;

/* Save into *snap (reused if non-NULL). 0, -ENOMEM, or -EINVAL for a bad snap. */
int snapshot_get(struct inst *inst, struct snapshot **snap);

/* Restore; -EINVAL if snap is not a snapshot of this model. */
int snapshot_set(struct inst *inst, const struct snapshot *snap);

/* Free a snapshot; -EINVAL if it is not one of this model. */
int snapshot_free(struct inst *inst, struct snapshot *snap);

/* Size of the serialized form of snap in *ret_size; -EINVAL for a bad snap. */
int snapshot_serialized_size(const struct inst *inst, const struct snapshot *snap,
                             size_t *ret_size);

/* Serialize into buf of exactly the serialized size; else -EINVAL. */
int snapshot_serialize(struct inst *inst, const struct snapshot *snap,
                       uint8_t *buf, size_t size);

/* Rebuild a snapshot from bytes; -EINVAL if they are not a valid state. */
int snapshot_deserialize(struct inst *inst, const uint8_t *buf, size_t size,
                         struct snapshot **ret_snap);

#endif /* FMUD_TEST_FMU_COMMON_H */
