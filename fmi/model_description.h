/*
 * model_description: the parsed, validated content of an FMU's
 * modelDescription.xml, for FMI 3.0 and FMI 2.0, in one data model.
 *
 * DESIGN: the document is hostile input. md_parse() caps its size before
 * libxml2 sees it, never loads a DTD or the network, refuses a DOCTYPE and
 * never substitutes entities. It reports every problem it finds (it does not
 * stop at the first) and still returns what it could read, so a user sees all
 * that is wrong at once.
 *
 * FMI 2.0 documents are mapped onto the FMI 3.0 model: Real is MD_FLOAT64,
 * Integer MD_INT32, Boolean MD_BOOLEAN, String MD_STRING, Enumeration
 * MD_ENUMERATION; the guid is the instantiation token; ModelStructure indices
 * become variable indices.
 *
 * Ownership: everything hangs off struct md and is freed by md_free().
 * Pointers between parts (type_def, unit_def) are borrowed from the same md.
 */
#ifndef FMUD_FMI_MODEL_DESCRIPTION_H
#define FMUD_FMI_MODEL_DESCRIPTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cancel.h"
#include "diag.h"

enum md_fmi_version {
        MD_FMI2 = 2,
        MD_FMI3 = 3,
};

/* Variable types, in the order of FMI 3.0 section 2.4.7.5. */
enum md_type {
        MD_FLOAT32,
        MD_FLOAT64,
        MD_INT8,
        MD_UINT8,
        MD_INT16,
        MD_UINT16,
        MD_INT32,
        MD_UINT32,
        MD_INT64,
        MD_UINT64,
        MD_BOOLEAN,
        MD_STRING,
        MD_BINARY,
        MD_CLOCK,
        MD_ENUMERATION,
        MD_TYPE_COUNT,
};

enum md_causality {
        MD_CAUSALITY_PARAMETER,
        MD_CAUSALITY_CALCULATED_PARAMETER,
        MD_CAUSALITY_INPUT,
        MD_CAUSALITY_OUTPUT,
        MD_CAUSALITY_LOCAL,
        MD_CAUSALITY_INDEPENDENT,
        MD_CAUSALITY_STRUCTURAL_PARAMETER,
};

enum md_variability {
        MD_VARIABILITY_CONSTANT,
        MD_VARIABILITY_FIXED,
        MD_VARIABILITY_TUNABLE,
        MD_VARIABILITY_DISCRETE,
        MD_VARIABILITY_CONTINUOUS,
};

enum md_initial {
        MD_INITIAL_NONE,        /* no initial applies (e.g. an input, independent) */
        MD_INITIAL_EXACT,
        MD_INITIAL_APPROX,
        MD_INITIAL_CALCULATED,
};

/* Names as they appear in the XML ("Float64", "calculatedParameter", ...). */
const char *md_type_name(enum md_type t);
const char *md_causality_name(enum md_causality c);
const char *md_variability_name(enum md_variability v);
const char *md_initial_name(enum md_initial i);  /* "" for MD_INITIAL_NONE */

bool md_type_is_float(enum md_type t);      /* Float32, Float64 */
bool md_type_is_signed(enum md_type t);     /* Int8..Int64, Enumeration */
bool md_type_is_unsigned(enum md_type t);   /* UInt8..UInt64 */

/*
 * One scalar of a numeric or Boolean type. Float32 values are stored in 'f'
 * after rounding to float, so they compare exactly with what the FMU sees.
 */
union md_scalar {
        double f;
        int64_t i;
        uint64_t u;
        bool b;
};

struct md_binary {
        uint8_t *data;
        size_t len;
};

/* A list of values of one type: a scalar start value has n == 1. */
struct md_values {
        size_t n;
        union {
                double *f;              /* MD_FLOAT32, MD_FLOAT64 */
                int64_t *i;             /* MD_INT8..MD_INT64 (signed), MD_ENUMERATION */
                uint64_t *u;            /* MD_UINT8..MD_UINT64 */
                bool *b;                /* MD_BOOLEAN, MD_CLOCK */
                char **s;               /* MD_STRING */
                struct md_binary *bin;  /* MD_BINARY */
        };
};

/* <Dimension start=.../> or <Dimension valueReference=.../>, section 2.4.7.2. */
struct md_dimension {
        bool has_start;
        uint64_t start;
        bool has_vr;
        uint32_t vr;            /* a structural parameter (or constant) of type UInt64 */
};

/* Clock attributes, section 2.2.8 and 2.4.7.5 (Clock). */
enum md_interval_variability {
        MD_INTERVAL_NONE,       /* not a clock */
        MD_INTERVAL_CONSTANT,
        MD_INTERVAL_FIXED,
        MD_INTERVAL_TUNABLE,
        MD_INTERVAL_CHANGING,
        MD_INTERVAL_COUNTDOWN,
        MD_INTERVAL_TRIGGERED,
};

struct md_clock_attrs {
        bool can_be_deactivated;
        bool has_priority;
        uint32_t priority;
        enum md_interval_variability interval_variability;
        bool has_interval_decimal, has_shift_decimal;
        double interval_decimal, shift_decimal;
        bool supports_fraction;
        bool has_resolution, has_interval_counter, has_shift_counter;
        uint64_t resolution, interval_counter, shift_counter;
};

/* Attributes that a TypeDefinition and a variable share (section 2.4.4). */
struct md_type_attrs {
        char *quantity;
        char *unit;
        char *display_unit;
        bool relative_quantity;
        bool unbounded;
        bool has_min, has_max, has_nominal;
        union md_scalar min, max, nominal;
        char *mime_type;        /* Binary; default "application/octet-stream" */
        bool has_max_size;
        uint64_t max_size;      /* Binary */
        struct md_clock_attrs clock;
};

struct md_enum_item {
        char *name;
        int64_t value;
        char *description;
};

struct md_type_def {
        char *name;
        char *description;
        enum md_type type;
        int line;
        struct md_type_attrs attrs;
        size_t n_items;                 /* MD_ENUMERATION */
        struct md_enum_item *items;
};

struct md_unit {
        char *name;
        int line;
        bool has_base_unit;
        struct {
                int32_t kg, m, s, A, K, mol, cd, rad;
                double factor, offset;
        } base;
        size_t n_display;
        struct md_display_unit {
                char *name;
                double factor, offset;
                bool inverse;
        } *display;
};

struct md_variable {
        char *name;
        char *description;
        uint32_t vr;
        enum md_type type;
        enum md_causality causality;
        enum md_variability variability;
        enum md_initial initial;        /* after the standard's defaults applied */
        bool initial_given;             /* the attribute was in the document */
        int line;

        char *declared_type;
        const struct md_type_def *type_def;     /* resolved declared_type, or NULL */
        struct md_type_attrs attrs;             /* own attributes, inherited from
                                                 * type_def where not given */
        const struct md_unit *unit_def;         /* resolved attrs.unit, or NULL */

        bool has_start;
        /*
         * n == product of dims for arrays, or n == 1 for an array whose
         * elements all start at that one value (section 2.4.7.5, start):
         * the list is never expanded, so a hostile document cannot make a
         * small attribute cost gigabytes.
         */
        struct md_values start;

        size_t n_dims;
        struct md_dimension *dims;      /* empty for a scalar */

        bool can_handle_multiple_set_per_time_instant;
        bool intermediate_update;
        bool has_previous;
        uint32_t previous;
        size_t n_clocks;
        uint32_t *clocks;               /* value references of Clock variables */

        bool has_derivative;            /* Float: derivative of this vr */
        uint32_t derivative;
        bool reinit;
};

struct md_log_category {
        char *name;
        char *description;
};

struct md_default_experiment {
        bool has_start, has_stop, has_tolerance, has_step;
        double start, stop, tolerance, step;
};

/* Co-Simulation capability flags: FMI 3.0 section 4.4 (and 2.4.2). */
struct md_cosim {
        bool present;
        char *model_identifier;
        bool needs_execution_tool;
        bool can_be_instantiated_only_once_per_process;
        bool can_get_and_set_fmu_state;
        bool can_serialize_fmu_state;
        bool provides_directional_derivatives;
        bool provides_adjoint_derivatives;
        bool provides_per_element_dependencies;
        bool can_handle_variable_communication_step_size;
        bool has_fixed_internal_step_size;
        double fixed_internal_step_size;
        uint32_t max_output_derivative_order;
        bool recommended_intermediate_input_smoothness_given;
        int32_t recommended_intermediate_input_smoothness;
        bool provides_intermediate_update;
        bool might_return_early_from_do_step;
        bool can_return_early_after_intermediate_update;
        bool has_event_mode;
        bool provides_evaluate_discrete_states;
        /* FMI 2.0 only */
        bool can_interpolate_inputs;
        bool can_run_asynchronuously;
        bool can_not_use_memory_management_functions;
};

enum md_dep_kind {
        MD_DEP_DEPENDENT,
        MD_DEP_CONSTANT,
        MD_DEP_FIXED,
        MD_DEP_TUNABLE,
        MD_DEP_DISCRETE,
};

/* One <Output>, <ContinuousStateDerivative>, ... entry, section 2.4.8. */
struct md_unknown {
        size_t var;                     /* index into md->vars */
        int line;
        bool has_dependencies;          /* attribute present (absent: depends on all) */
        size_t n_deps;
        size_t *deps;                   /* indices into md->vars */
        enum md_dep_kind *dep_kinds;    /* n_deps entries, or NULL when not given */
};

struct md_unknowns {
        size_t n;
        struct md_unknown *v;
};

struct md_model_structure {
        struct md_unknowns outputs;
        struct md_unknowns derivatives;         /* ContinuousStateDerivative / Derivatives */
        struct md_unknowns clocked_states;
        struct md_unknowns initial_unknowns;
        struct md_unknowns event_indicators;
};

enum md_naming {
        MD_NAMING_FLAT,
        MD_NAMING_STRUCTURED,
};

struct md {
        enum md_fmi_version fmi;
        char *fmi_version;              /* the attribute as written, "3.0" */
        char *model_name;
        char *instantiation_token;      /* FMI 2.0: guid */
        char *description;
        char *author;
        char *version;
        char *copyright;
        char *license;
        char *generation_tool;
        char *generation_date_and_time;
        enum md_naming naming;
        uint32_t number_of_event_indicators;    /* FMI 2.0 */

        struct md_cosim cs;
        bool has_model_exchange;
        char *me_model_identifier;      /* ModelExchange's modelIdentifier */
        bool me_needs_completed_integrator_step;        /* FMI 3.0 section 3.3 */
        /*
         * md_host_me() made cs the view of the ModelExchange interface that
         * a worker offers when it integrates the FMU (FMI 3.0 and 2.0
         * section 3);
         * cs_declared says whether the description has CoSimulation itself.
         */
        bool hosted_me;
        bool cs_declared;
        bool has_scheduled_execution;
        char *se_model_identifier;      /* ScheduledExecution's modelIdentifier */
        /*
         * md_host_se() made cs the view of the ScheduledExecution interface
         * that a worker offers when it activates the FMU's model partitions
         * (FMI 3.0 section 5): Event Mode stands for Clock Activation Mode.
         */
        bool hosted_se;

        size_t n_units;
        struct md_unit *units;
        size_t n_type_defs;
        struct md_type_def *type_defs;
        size_t n_log_categories;
        struct md_log_category *log_categories;
        bool has_default_experiment;
        struct md_default_experiment default_experiment;

        size_t n_vars;
        struct md_variable *vars;       /* in document order */

        struct md_model_structure structure;

        /*
         * FMI 3.0 <Alias> elements (section 2.4.7.3): another name of
         * vars[var], which md_find_name() finds too. Document order.
         */
        size_t n_aliases;
        struct md_alias_name {
                char *name;
                size_t var;
        } *aliases;

        /* Private to md_find_*(): variable indices sorted by vr / by name, alias indices by name. */
        size_t *by_vr;
        size_t *by_name;
        size_t *aliases_by_name;
};

/* Bounds for a hostile document. Zero fields take the defaults. */
/* The largest modelDescription.xml read, by default: archive, parser and worker alike. */
#define MD_MAX_BYTES    (128u << 20)

struct md_limits {
        size_t max_bytes;               /* document size; default MD_MAX_BYTES */
        size_t max_variables;           /* default 1,000,000 */
        size_t max_array_elements;      /* one start list or dimension product; default 16,777,216 */
        size_t max_string_bytes;        /* one String/Binary start; default 16 MiB */
        int max_depth;                  /* element nesting; default 64 */
        /*
         * Attributes on one element; default 256. The most any FMI 3.0
         * element has is about 20 (<Float64>, <Clock>: FMI 3.0 sections
         * 2.4.7.4 and 2.4.7.5); the rest is margin for tool-specific ones.
         */
        size_t max_attributes;
        /*
         * Elements in the document; default 4,000,000. A 500,000-variable
         * FMI 3.0 description with every variable an output and an initial
         * unknown has 1,500,000 (in 80 MiB, over the default size cap);
         * FMI 2.0 adds a type element per variable.
         */
        size_t max_elements;
        /* Not a bound on size but on time: polled while parsing (NULL fn: never). */
        struct fmi_cancel cancel;
};

void md_limits_default(struct md_limits *lim);

/*
 * Host the FMU through its ModelExchange interface: md->cs becomes what the
 * worker that integrates it offers a master (a Co-Simulation FMU that
 * handles a variable communication step size, and with Clocks has Event
 * Mode and may return early; nothing else optional), with the
 * ModelExchange modelIdentifier. 0; -EINVAL when the FMU has no
 * ModelExchange interface; -ENOMEM.
 */
int md_host_me(struct md *md);

/* Whether a variable is of type Clock. */
bool md_has_clocks(const struct md *md);

/*
 * Host the FMU through its ScheduledExecution interface (FMI 3.0 section
 * 5): md->cs becomes what the worker that activates its model partitions
 * offers a master (a Co-Simulation FMU with Event Mode that handles a
 * variable communication step size), with the ScheduledExecution
 * modelIdentifier. 0; -EINVAL when the FMU has no ScheduledExecution
 * interface; -ENOMEM.
 */
int md_host_se(struct md *md);

/*
 * Parse and validate a modelDescription.xml held in memory.
 * 'file' names the document in diagnostics ("modelDescription.xml").
 * lim may be NULL for the defaults.
 *
 * Returns 0 when the document is valid; -EINVAL when it is not, with every
 * problem appended to diags; -ENOMEM on allocation failure; -EFBIG when it is
 * over lim->max_bytes (not parsed).
 * *ret_md is set whenever the root element could be read, even on -EINVAL,
 * so callers can show what was parsed; it is NULL otherwise (not well-formed
 * XML, a DOCTYPE, too deep, another root element, or an fmiVersion that is
 * neither "2.0" nor "3.x"). Caller frees it with md_free(). In a partial md
 * every variable has a name (maybe "") and every String start element is a
 * string, but optional or missing attributes are NULL and references (vrs,
 * dimensions) may point nowhere: look them up, never index with them.
 *
 * Warnings (DIAG_WARNING, e.g. no CoSimulation element) do not make the
 * result -EINVAL. Any thread may call md_parse() concurrently.
 */
int md_parse(const void *buf, size_t len, const char *file, const struct md_limits *lim,
             struct diag_list *diags, struct md **ret_md);

void md_free(struct md *md);

/* Lookups; NULL when absent. Borrowed pointers, valid until md_free(). */
/* FMI 3.0: unique. FMI 2.0: the first in document order, of any type. */
const struct md_variable *md_find_vr(const struct md *md, uint32_t vr);
/*
 * FMI 2.0 value references are unique per base type only (Real, Integer
 * and Enumeration, Boolean, String): the first variable in document order
 * with that vr and the base type of 'type'. For FMI 3.0 the same as
 * md_find_vr() with a type check.
 */
const struct md_variable *md_find_vr_type(const struct md *md, enum md_type type, uint32_t vr);
/* By name, or by the name of one of its FMI 3.0 <Alias> elements. */
const struct md_variable *md_find_name(const struct md *md, const char *name);
/* By its own name only. */
const struct md_variable *md_find_own_name(const struct md *md, const char *name);

/*
 * Number of scalar elements of a variable: 1 for a scalar, the product of
 * its dimensions for an array, resolving structural parameters through
 * their start values. Returns 0 when a dimension cannot be resolved.
 */
uint64_t md_var_elements(const struct md *md, const struct md_variable *v);

#endif
