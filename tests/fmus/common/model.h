/*
 * model.h: what one test FMU's model.c provides to the shared FMI
 * implementation (common/fmi3_*.c, common/fmi2_*.c), and the functions it
 * may call back.
 *
 * A model is plain C: a struct model_data holding every variable (inputs,
 * outputs, parameters, states), a table of struct var describing how each
 * value reference maps into that struct, and a few hooks (start values,
 * output equations, one communication step, event update, resize). The
 * shared code does everything FMI: the state machine, argument checks,
 * get/set of every type with array serialization, FMU state snapshots,
 * logging. The same model hooks serve FMI 2.0 and FMI 3.0.
 *
 * DESIGN: struct model_data must be plain old data (numbers, bools and the
 * fixed-capacity struct var_string / struct var_binary, no pointers),
 * because an FMU state snapshot is a byte copy of it. That caps the length
 * of String and Binary values; setting a longer one is refused.
 */
#ifndef FMUD_TEST_FMU_MODEL_H
#define FMUD_TEST_FMU_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Capacity of one String value, terminating NUL included. */
#define VAR_STRING_CAP 1024
/* Capacity of one Binary value, in bytes. */
#define VAR_BINARY_CAP 4096

struct var_string {
        char s[VAR_STRING_CAP];
};

struct var_binary {
        size_t size;
        uint8_t bytes[VAR_BINARY_CAP];
};

/* The FMI variable types; each is stored as the matching fmi3 C type. */
enum var_type {
        VAR_FLOAT32,
        VAR_FLOAT64,
        VAR_INT8,
        VAR_UINT8,
        VAR_INT16,
        VAR_UINT16,
        VAR_INT32,
        VAR_UINT32,
        VAR_INT64,      /* also Enumeration */
        VAR_UINT64,
        VAR_BOOLEAN,    /* bool */
        VAR_STRING,     /* struct var_string */
        VAR_BINARY,     /* struct var_binary */
        VAR_CLOCK,      /* bool */
};

enum var_causality {
        VAR_PARAMETER,
        VAR_CALCULATED_PARAMETER,
        VAR_INPUT,
        VAR_OUTPUT,
        VAR_LOCAL,
        VAR_INDEPENDENT,
        VAR_STRUCTURAL_PARAMETER,
};

enum var_variability {
        VAR_CONSTANT,
        VAR_FIXED,
        VAR_TUNABLE,
        VAR_DISCRETE,
        VAR_CONTINUOUS,
};

/* The initial attribute; VAR_NO_INITIAL only for the independent variable. */
enum var_initial {
        VAR_EXACT,
        VAR_APPROX,
        VAR_CALCULATED,
        VAR_NO_INITIAL,
};

/*
 * One variable, as modelDescription.xml declares it. The value lives at
 * offset in struct model_data (the independent variable lives in the
 * instance instead). An array has count elements per unit of its dynamic
 * dimension: if sized, the number of elements is count times the current
 * value of the UInt64 structural parameter size_vr, at most capacity.
 */
struct var {
        uint32_t vr;
        const char *name;
        enum var_type type;
        enum var_causality causality;
        enum var_variability variability;
        enum var_initial initial;
        bool intermediate;      /* intermediateUpdate="true" */
        size_t offset;
        size_t count;
        bool sized;
        uint32_t size_vr;
        size_t capacity;
};

/* Declare a table entry; the storage field of struct model_data is named. */
#define VAR_SCALAR(vr_, name_, type_, caus_, var_, init_, field_) \
        { .vr = (vr_), .name = (name_), .type = (type_), .causality = (caus_), \
          .variability = (var_), .initial = (init_), \
          .offset = offsetof(struct model_data, field_), .count = 1 }

/* Same, for a variable with intermediateUpdate="true". */
#define VAR_SCALAR_IU(vr_, name_, type_, caus_, var_, init_, field_) \
        { .vr = (vr_), .name = (name_), .type = (type_), .causality = (caus_), \
          .variability = (var_), .initial = (init_), .intermediate = true, \
          .offset = offsetof(struct model_data, field_), .count = 1 }

/* An array of fixed size n (all <Dimension start=...> multiplied). */
#define VAR_ARRAY(vr_, name_, type_, caus_, var_, init_, field_, n_) \
        { .vr = (vr_), .name = (name_), .type = (type_), .causality = (caus_), \
          .variability = (var_), .initial = (init_), \
          .offset = offsetof(struct model_data, field_), .count = (n_) }

/* A vector sized by structural parameter size_vr_, at most cap_ elements. */
#define VAR_SIZED(vr_, name_, type_, caus_, var_, init_, field_, size_vr_, cap_) \
        { .vr = (vr_), .name = (name_), .type = (type_), .causality = (caus_), \
          .variability = (var_), .initial = (init_), \
          .offset = offsetof(struct model_data, field_), .count = 1, \
          .sized = true, .size_vr = (size_vr_), .capacity = (cap_) }

/* The independent variable "time"; its value is the instance's time. */
#define VAR_TIME(vr_) \
        { .vr = (vr_), .name = "time", .type = VAR_FLOAT64, \
          .causality = VAR_INDEPENDENT, .variability = VAR_CONTINUOUS, \
          .initial = VAR_NO_INITIAL, .count = 1 }

/* Status severities, in FMI order (same values as fmi2Status/fmi3Status). */
enum fmu_status {
        FMU_OK,
        FMU_WARNING,
        FMU_DISCARD,
        FMU_ERROR,
        FMU_FATAL,
};

/* What the model learns about and reports from one communication step. */
struct step {
        double t;               /* in: currentCommunicationPoint */
        double h;               /* in: communicationStepSize, > 0 */
        bool early_return_allowed;      /* in: earlyReturnAllowed */
        bool event_mode_used;           /* in: eventModeUsed */
        double t_end;           /* out: lastSuccessfulTime, preset to t + h */
        bool early_return;      /* out: returned before t + h */
        bool event_needed;      /* out: eventHandlingNeeded */
        bool terminate;         /* out: terminateSimulation */
};

/* One call of the importer's intermediate update callback (FMI 3.0 4.2.2). */
struct intermediate {
        double t;               /* in: intermediateUpdateTime */
        bool set_requested;     /* in: intermediateVariableSetRequested */
        bool get_allowed;       /* in: intermediateVariableGetAllowed */
        bool step_finished;     /* in: intermediateStepFinished */
        bool can_return_early;  /* in: canReturnEarly */
        bool early_return_requested;    /* out */
        double early_return_time;       /* out */
};

/* What the model reports from fmi3UpdateDiscreteStates. */
struct discrete {
        bool need_update;       /* discreteStatesNeedUpdate */
        bool terminate;         /* terminateSimulation */
        bool next_event_time_defined;
        double next_event_time;
};

struct inst;

/* Capability flags; they must match modelDescription.xml. */
#define MODEL_HAS_EVENT_MODE            (1u << 0)
#define MODEL_CAN_GET_SET_STATE         (1u << 1)
#define MODEL_CAN_SERIALIZE_STATE       (1u << 2)
#define MODEL_PROVIDES_INTERMEDIATE     (1u << 3)
#define MODEL_MIGHT_RETURN_EARLY        (1u << 4)
#define MODEL_EARLY_RETURN_AFTER_IU     (1u << 5)
/* providesDirectionalDerivatives, providesAdjointDerivatives: need partial(). */
#define MODEL_PROVIDES_DIRECTIONAL      (1u << 6)
#define MODEL_PROVIDES_ADJOINT          (1u << 7)
/* providesPerElementDependencies: needs the dependencies table. */
#define MODEL_PER_ELEMENT_DEPENDENCIES  (1u << 8)

/* The kind of one dependency (same values as fmi3DependencyKind). */
enum dep_kind {
        DEP_INDEPENDENT,
        DEP_CONSTANT,
        DEP_FIXED,
        DEP_TUNABLE,
        DEP_DISCRETE,
        DEP_DEPENDENT,
};

/*
 * One entry of a model's dependency table, for fmi3GetVariableDependencies
 * (section 2.2.9): dependent depends on independent (whole variables,
 * element index 0). initial: an <InitialUnknown> dependency, returned
 * before fmi3ExitInitializationMode; else an <Output> or
 * <ContinuousStateDerivative> one, returned after it.
 */
struct dependency {
        uint32_t dependent;
        uint32_t independent;
        enum dep_kind kind;
        bool initial;
};

/* What a Clock timing call gets or sets (section 2.2.8.4). */
enum clock_quantity {
        CLOCK_INTERVAL,
        CLOCK_SHIFT,
};

/*
 * One Clock's interval or shift. A get fills both forms (and, for an
 * interval, the qualifier, an fmi3IntervalQualifier); a set gives the form
 * fraction says.
 */
struct clock_time {
        bool fraction;          /* counter/resolution asked for or given, else decimal */
        double decimal;
        uint64_t counter;
        uint64_t resolution;
        int qualifier;
};

/*
 * The model. Hooks return 0 or a negative errno; on failure they log the
 * reason with inst_log() first. Optional hooks may be NULL.
 */
struct model {
        const char *token;              /* instantiationToken */
        size_t data_size;               /* sizeof(struct model_data) */
        const struct var *vars;
        size_t n_vars;
        unsigned caps;                  /* MODEL_* */
        int max_output_derivative_order;

        /* Set every variable of data to its start value. */
        void (*start)(struct inst *inst);
        /*
         * Compute outputs and calculated variables from states, inputs and
         * parameters. In Instantiated and Initialization Mode
         * (inst_initializing()) it also applies the initial equations.
         */
        int (*calculate)(struct inst *inst);
        /* Advance from step->t towards step->t + step->h. */
        int (*do_step)(struct inst *inst, struct step *step);
        /* Optional: handle an event in Event Mode. */
        int (*update_discrete)(struct inst *inst, struct discrete *ret);
        /* Optional: structural parameters changed; resize. */
        int (*configure)(struct inst *inst);
        /* Optional: the terminal computations of fmi3Terminate/fmi2Terminate; < 0 fails it. */
        int (*terminate)(struct inst *inst);
        /* Optional: the order-th time derivative of an output's values. */
        int (*output_derivative)(struct inst *inst, const struct var *v,
                                 int order, double *values);
        /*
         * Optional (MODEL_PROVIDES_DIRECTIONAL/ADJOINT): the partial
         * derivative d unknown / d known at the current values, both scalar
         * float variables; 0 where unknown does not depend on known. The
         * shared code builds directional and adjoint derivatives from it.
         */
        int (*partial)(struct inst *inst, const struct var *unknown,
                       const struct var *known, double *ret);
        /* Optional (MODEL_PER_ELEMENT_DEPENDENCIES): the dependency table. */
        const struct dependency *dependencies;
        size_t n_dependencies;
        /*
         * Optional: get (set false) or set the interval or shift of the
         * input Clock clock, in Initialization or Event Mode. NULL: the
         * model has no time-based Clocks and every timing call is refused.
         */
        int (*clock_timing)(struct inst *inst, const struct var *clock,
                            enum clock_quantity what, bool set, struct clock_time *t);
};

/* The one model an FMU binary is built from; model.c defines it. */
extern const struct model model;

/* The model data of an instance (a struct model_data). */
void *inst_data(struct inst *inst);

/* Current time of the instance (the independent variable). */
double inst_time(const struct inst *inst);

/* The instance name the importer gave. */
const char *inst_name(const struct inst *inst);
/* True in Instantiated and Initialization Mode: initial equations apply. */
bool inst_initializing(const struct inst *inst);
/* True in Event Mode. */
bool inst_event_mode(const struct inst *inst);
/*
 * Whether the importer gave a relative tolerance (fmi3EnterInitializationMode,
 * fmi2SetupExperiment) and, if so, *ret: what it gave. false until then.
 */
bool inst_tolerance(const struct inst *inst, double *ret);

/*
 * Log a message through the importer's callback, printf-style. FMU_OK
 * messages go to category logEvents and only when that category is
 * enabled; every other status is always delivered (see common/inst.c).
 */
void inst_log(struct inst *inst, enum fmu_status status, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* True when the importer provided an intermediate update callback. */
bool inst_has_intermediate_update(const struct inst *inst);

/*
 * Enter Intermediate Update Mode and call the importer's callback with
 * iu's inputs; fills iu's outputs. Returns 0, or -EIO when the importer
 * made a call inside the callback that failed (the step must then fail).
 */
int inst_intermediate_update(struct inst *inst, struct intermediate *iu);

/* Copy a NUL-terminated start value into a String variable's storage. */
void var_string_init(struct var_string *s, const char *value);

/* Copy bytes into a Binary variable's storage (size <= VAR_BINARY_CAP). */
void var_binary_init(struct var_binary *b, const void *bytes, size_t size);

#endif /* FMUD_TEST_FMU_MODEL_H */
