/*
 * scenario: one system of coupled FMUs, loaded from an SSP 1.0 description
 * (a .ssp archive, a SystemStructure.ssd with its FMUs beside it, or a
 * folder holding one) or from a single .fmu, checked against every FMU's
 * model description and flattened into what the master runs: components,
 * connections with their transformation, the experiment, and the recorded
 * columns.
 *
 * DESIGN: every file read here is hostile input. XML is parsed with the
 * options of fmi/md_xml.c (no network, no DTD, no entity, DOCTYPE refused,
 * size and depth capped); .ssp archives pass fmi/archive.h's entry checks
 * before anything is read from them; FMUs are imported with fmu_open()
 * into the caller's cache directory, which is the only place written to.
 * A component source may not leave the scenario's own folder (or archive)
 * unless it is an absolute path under a directory the caller allows. A
 * confined load (the daemon's) opens every file once, beneath a directory
 * descriptor, following no link, and reads only that descriptor.
 *
 * Loading reports every problem it can find through a diag list (file,
 * line, element name) and keeps going where a later check does not depend
 * on a failed earlier one, so a user sees as much as possible at once.
 * Overrides (the command line's --stop-time, --step, --start NAME=VALUE,
 * ...) are applied during the load, before the checks, so an override is
 * validated exactly like the setting it replaces.
 *
 * docs/scenarios.md describes the fmud settings annotation.
 *
 * Threads: scenario_load() touches no global state; any thread may call it
 * for different scenarios at once. A loaded scenario is read-only.
 */
#ifndef FMUD_ENGINE_SCENARIO_H
#define FMUD_ENGINE_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fmi/diag.h"
#include "fmi/fmu.h"
#include "fmi/model_description.h"
#include "shm/rig.h"

struct open_as;

/* The annotation type of fmud's settings (ssc:Annotation type=...). */
#define SCENARIO_ANNOTATION_TYPE "org.fmud.settings"

/* Defaults, documented in docs/scenarios.md. */
#define SCENARIO_DEFAULT_BUDGET         10.0    /* seconds of wall clock per step */
#define SCENARIO_DEFAULT_POINTS         500     /* step = (stop - start) / 500 */
#define SCENARIO_DEFAULT_DURATION       1.0     /* stop = start + 1 */

enum scenario_algorithm {
        SCENARIO_JACOBI,        /* every due instance steps at once from the outputs at t_n */
        SCENARIO_GAUSS_SEIDEL,  /* sequential connections wait for their producer's step */
};

/* A start value or parameter given by a binding or an override. */
struct scenario_start {
        size_t var;                     /* index into fmu->md->vars */
        uint32_t vr;
        enum md_type type;
        struct md_values value;         /* n == the variable's elements, or 1 for all of them */
        char *origin;                   /* "file:line" or "--start", for messages */
};

struct scenario_component {
        char *name;                     /* unique; "sub.component" for nested systems */
        char *source;                   /* the FMU as the scenario names it, for messages */
        struct fmu *fmu;                /* imported and unpacked into the cache (owned) */
        uint32_t multirate;             /* steps every multirate-th point; >= 1 */
        size_t n_starts;
        struct scenario_start *starts;  /* one per variable, the winning binding */
        /*
         * Tunable structural parameters set since the load, in
         * Reconfiguration Mode (scenario_set_structural()): their values
         * size arrays over the starts', which stay what the load set.
         */
        size_t n_sp_now;
        struct scenario_sp {
                uint32_t vr;
                uint64_t value;
        } *sp_now;

        /* What the master must know before it starts (copied from fmu->md->cs). */
        bool might_return_early;
        bool can_get_set_state;
        bool provides_intermediate_update;
        bool has_event_mode;

        /*
         * The relative tolerance this instance gets in fmi3EnterInitializationMode
         * or fmi2SetupExperiment: the experiment's, else its own DefaultExperiment
         * tolerance (as FMPy passes it); tolerance_defined false: neither gives one.
         */
        bool tolerance_defined;
        double tolerance;
};

/*
 * One output feeding one input: to = factor * from + offset, element by
 * element (unit conversion and LinearTransformation folded together).
 * identity: factor == 1 and offset == 0 and no transformation asked, so
 * the value is copied bit for bit (and may be of any type).
 */
struct scenario_connection {
        size_t from_comp, from_var;     /* producer: component index, variable index */
        size_t to_comp, to_var;         /* consumer */
        enum md_type from_type, to_type;        /* equal unless Float32 <-> Float64 */
        uint64_t elements;              /* scalars per value (arrays: the product of dims) */
        double factor, offset;
        bool identity;
        bool parameter;                 /* calculatedParameter -> parameter: Initialization only */
        bool sequential;                /* Gauss-Seidel: the consumer waits for this producer */
        char *origin;                   /* "file:line" of the (innermost) Connection */
};

/*
 * What a paced point done after its deadline plus the overrun margin
 * does, after the Distributed Co-Simulation Protocol's timing modes (non,
 * soft and hard real time); the master's master_overrun.c.
 */
enum scenario_overrun {
        SCENARIO_OVERRUN_NONE,  /* counted only: a late run catches up as fast as it can */
        SCENARIO_OVERRUN_SOFT,  /* counted and noted (rate-limited); the pace re-bases forward */
        SCENARIO_OVERRUN_HARD,  /* the run faults, naming the point, the lateness, the slowest instance */
};
const char *scenario_overrun_name(enum scenario_overrun o);
/* "none", "soft", "hard" (len bytes) to *ret; -EINVAL otherwise. */
int scenario_overrun_parse(const char *s, size_t len, enum scenario_overrun *ret);
#define SCENARIO_SPIN_US_MAX    1000000.0       /* a second of spinning at most */

struct scenario_experiment {
        double start, stop;
        double step;                    /* base step h: t_n = start + n * h */
        double budget;                  /* seconds per coupled step; INFINITY: none */
        bool budget_given;              /* by the scenario or an override, not the default */
        double warp;                    /* 0: as fast as possible */
        uint32_t decimation;            /* record every decimation-th point; >= 1 */
        enum scenario_algorithm algorithm;
        size_t *order;                  /* n_components indices: stepping order (Gauss-Seidel) */
        bool tolerance_given;           /* by the scenario or an override: every instance gets it */
        double tolerance;               /* relative, 0 < tolerance < 1 */
        /* Save every instance's state before each step, so a fault holds every one at the point. */
        bool rollback_on_fault;
        /*
         * Real time (engine/master/realtime.h), from the settings' rtPriority,
         * rtWorkerPriority, rtCpus, rtWorkerCpus, rtBestEffort and rtMlock;
         * the load's arguments override them, they override the daemon's
         * [realtime].
         */
        struct scenario_realtime {
                bool has_priority, has_worker_priority;
                uint32_t priority, worker_priority;     /* 0 (none) to 99 */
                char cpus[256], worker_cpus[256];       /* cpu lists; empty: not set */
                bool best_effort;
                bool has_mlock, mlock;                  /* the workers lock their memory */
        } realtime;
        /*
         * Paced runs: the overrun policy and margin (µs past a point's
         * deadline), and the µs before a deadline spun on the clock rather
         * than slept; each _given when the scenario or an override set it,
         * else none, 0 and 0 (a daemon may put its defaults in).
         */
        enum scenario_overrun overrun;
        double overrun_margin_us, spin_us;
        bool overrun_given, overrun_margin_given, spin_given;
};

/* One CSV column: one scalar element of one variable. */
struct scenario_column {
        size_t comp, var;
        uint64_t element;               /* row-major index into the variable's elements */
        char *name;                     /* "<component>.<variable>[i,j]" (bare for one FMU) */
};

/*
 * A rig port (shm/rig.h): an unconnected scalar input a rig writes, or an
 * output it reads, every point. Numeric and Boolean variables only.
 */
struct scenario_rig_port {
        size_t comp, var;
        enum md_type type;
        bool has_safe;                  /* inputs: the safe value of rigPolicy safe */
        double safe;
        char *name;                     /* as given: "<component>.<variable>" */
};

/* The rig ports, from the settings' rigInputs/rigOutputs/rigPolicy/rigTimeoutMs and overrides. */
struct scenario_rig {
        size_t n_in, n_out;             /* each at most RIG_PORTS_MAX; 0 and 0: no rig */
        struct scenario_rig_port *in, *out;
        enum rig_policy policy;         /* default hold */
        uint32_t timeout_ms;            /* default SCENARIO_RIG_TIMEOUT_MS */
};
/* The rig type of a variable type; 0 for one that cannot be a rig port. */
enum rig_type scenario_rig_type(enum md_type t);
#define SCENARIO_RIG_TIMEOUT_MS         100u
#define SCENARIO_RIG_TIMEOUT_MAX_MS     RIG_TIMEOUT_MAX_MS

struct scenario {
        char *name;                     /* the SSD's name, or the model name of a single FMU */
        char *path;                     /* as given */
        bool single_fmu;

        size_t n_components;
        struct scenario_component *components;
        size_t n_connections;
        struct scenario_connection *connections;        /* sorted by (to_comp, to_var) */
        struct scenario_experiment experiment;
        size_t n_columns;
        struct scenario_column *columns;
        /*
         * Arrays recorded with no elements at load (a structural
         * parameter sized them 0, FMI 3.0 section 2.4.7.2): no column,
         * but the results hold them at that size all the same.
         */
        size_t n_empty_recorded;
        struct scenario_var_ref { size_t comp, var; } *empty_recorded;
        struct scenario_rig rig;

        bool any_might_return_early;    /* save states before each step (if all can) */
        bool all_can_get_set_state;
};

/* "NAME=VALUE" from a command line, both as text. */
struct scenario_assign {
        const char *name;
        const char *value;
};

/*
 * Settings a caller puts above the scenario's own (fmuctl run --stop-time,
 * --step, --start NAME=VALUE, ...). Zero-initialise, then set what is
 * given. Everything is borrowed for the duration of scenario_load().
 */
struct scenario_overrides {
        bool has_start, has_stop, has_step, has_budget, has_warp, has_decimation,
             has_algorithm, has_tolerance;
        double start, stop, step, budget, warp, tolerance;
        bool rollback_on_fault;         /* true: on, whatever the scenario says */
        bool has_overrun, has_overrun_margin, has_spin;
        enum scenario_overrun overrun;
        double overrun_margin_us, spin_us;
        uint64_t decimation;
        enum scenario_algorithm algorithm;
        const char *order;              /* "a b c": Gauss-Seidel order; NULL: keep */
        /* component=factor, factor as text ("2"): checked like the annotation's */
        size_t n_multirate;
        const struct scenario_assign *multirate;
        /* component.variable=value (a bare variable name for a single FMU) */
        size_t n_starts;
        const struct scenario_assign *starts;
        /* replaces the recorded variables when n_record > 0 */
        size_t n_record;
        const char *const *record;
        /*
         * Rig ports: each list replaces the scenario's when not empty;
         * inputs as "NAME" or "NAME=SAFE", outputs as "NAME".
         */
        size_t n_rig_in, n_rig_out;
        const char *const *rig_in;
        const char *const *rig_out;
        bool has_rig_policy, has_rig_timeout;
        enum rig_policy rig_policy;
        uint32_t rig_timeout_ms;
};

struct scenario_opts {
        const char *cache_dir;          /* FMUs are unpacked here (required) */
        struct fmu_opts fmu;            /* limits per FMU; its cache_dir is ignored; its
                                         * strict refuses the scenario's own warnings too */
        struct fmu_limits ssp_limits;   /* limits on a .ssp archive */
        size_t max_xml_bytes;           /* one .ssd or .ssv; default 16 MiB */
        int max_xml_depth;              /* element nesting; default 64 */
        size_t max_xml_attributes;      /* on one element; default 256 */
        size_t max_xml_elements;        /* in one .ssd or .ssv; default 1,000,000 */
        size_t max_components;          /* default 4096 */
        size_t max_connections;         /* default 65536 */
        size_t max_columns;             /* default 1,000,000 */
        /* absolute component sources are allowed only below these directories */
        size_t n_allowed_dirs;
        const char *const *allowed_dirs;
        /*
         * The daemon's load: the scenario's path must lie below one of
         * allowed_dirs (resolved, absolute), and every file is opened once,
         * beneath a descriptor (beneath.h): the scenario beneath its allowed
         * directory, a relative source beneath the SSD's folder, an
         * absolute one beneath its allowed directory; no "..", no symbolic
         * or magic link anywhere on the way. false (fmuctl run --local,
         * inspect): the user's own files, links followed.
         */
        bool confined;
        /*
         * Confined: whose rights every file the scenario names is opened
         * with (open_as.h; NULL: the daemon's own). The daemon's client's.
         */
        const struct open_as *open_as;
        /*
         * Polled throughout the load (between FMUs, while parsing, while
         * unpacking): when it answers true the load stops with -ECANCELED.
         */
        struct fmi_cancel cancel;
};

/* Default limits, no cache dir, no allowed directories. */
void scenario_opts_default(struct scenario_opts *opts);

/*
 * Load the scenario at path: a .fmu, a .ssp, a .ssd, or a folder with a
 * SystemStructure.ssd. overrides may be NULL. Every problem found is
 * appended to diags (file, line, element names).
 *
 * Returns 0 with *ret set (free with scenario_free()); -EINVAL when the
 * scenario is refused (see diags); -ENOENT/-EACCES/... when path cannot be
 * read; the cache's error (-ENOSPC, -EROFS ..., see diags) when an FMU
 * could not be unpacked into it; -ECANCELED when opts->cancel answered
 * true; -ENOMEM. Nothing is
 * written outside opts->cache_dir, and nothing
 * is left in it but unpacked FMUs (and FMUs taken out of a .ssp).
 */
int scenario_load(const char *path, const struct scenario_opts *opts,
                  const struct scenario_overrides *overrides, struct diag_list *diags,
                  struct scenario **ret);

void scenario_free(struct scenario *s);

/*
 * The files an .ssd (held in buf, named file for messages) names by
 * relative source URI, its components' FMUs and its parameter bindings'
 * .ssv files, as the daemon's confined load opens them beneath the .ssd's
 * folder (scenario_source.c's rules: percent-decoded, '.' parts dropped),
 * each once, in document order. Sources that are absolute, that leave the
 * folder or that the rules refuse are not among them: the load reports
 * those. *ret (free each, then the array) and *ret_n. Returns 0, -EINVAL
 * (the document is refused), -ENOMEM.
 */
int scenario_ssd_sources(const void *buf, size_t len, const char *file, char ***ret,
                         size_t *ret_n);

/* The component named name, or -ENOENT. */
int scenario_find_component(const struct scenario *s, const char *name);
/*
 * The stopTime component comp is given (FMI 3.0 section 2.3.2, FMI 2.0
 * fmi2SetupExperiment): the experiment's stop, or, for a component that
 * cannot vary its step (sent multirate * step from each of its points,
 * which it adds itself), where its last step ends by that addition when
 * that is a few ulps later: an FMU may refuse a step past its stopTime.
 */
double scenario_stop_for(const struct scenario *s, size_t comp);
/*
 * The grid's last index n_end (t_n = start + n * step, the stop at n_end):
 * (stop - start) / step rounded to the nearest whole number within 1e-9,
 * else up; at least 1. 0 when it would exceed 2^53 (too many points).
 */
uint64_t scenario_grid_end(const struct scenario_experiment *e);

/*
 * Resolve "component.variable" (component names may hold dots: the
 * longest one with such a variable wins), or a bare variable name of a
 * single-FMU scenario, to (*ret_comp, *ret_var: the index in its model
 * description). Returns 0 or -ENOENT.
 */
/*
 * The indices of an array element as columns name it, "i,j]" (after the
 * '['; 1-based, one per dimension of dims[0..nd)), into its row-major
 * element. 0, -EINVAL (not that form) or -ERANGE (an index out of range).
 */
int scenario_element_index(const char *s, const uint64_t *dims, int nd, uint64_t *ret);

int scenario_find_variable(const struct scenario *s, const char *name, size_t *ret_comp,
                           size_t *ret_var);

/*
 * The dimensions (into dims, at most max; returns the count or -EINVAL)
 * and the number of elements (SCENARIO_NO_SIZE: unresolvable or beyond
 * 64 bits) of variable v of component comp, with the structural
 * parameters the scenario's starts set (FMI 3.0 sections 2.4.7.2 and
 * 2.3.3) over the description's start values, or as set since in
 * Reconfiguration Mode. A structural parameter of min 0 may size a
 * dimension 0: an array with no elements, which is a size like any other
 * (section 2.4.7.2).
 */
#define SCENARIO_NO_SIZE UINT64_MAX
int scenario_var_dims(const struct scenario *s, size_t comp, const struct md_variable *v,
                      uint64_t *dims, size_t max);
uint64_t scenario_var_elements(const struct scenario *s, size_t comp, const struct md_variable *v);

/*
 * The value of component comp's structural parameter vr that sizes its
 * arrays: the one set since the load, else its start, else the
 * description's start (0: none).
 */
uint64_t scenario_structural(const struct scenario *s, size_t comp, uint32_t vr);
/* A shape for a message: "[2,3]" in buf, "a scalar" (n 0) or "of unresolved shape" (n < 0). */
const char *scenario_dims_str(const uint64_t *d, int n, char *buf, size_t size);
/*
 * Component comp's structural parameter vr now holds value, set in
 * Reconfiguration Mode (FMI 3.0 section 2.3.7): the arrays it sizes take
 * that size from now on. 0 or -ENOMEM.
 */
int scenario_set_structural(struct scenario *s, size_t comp, uint32_t vr, uint64_t value);

/*
 * Split "NAME=VALUE" at the first '=' into *ret (pointing into arg, which
 * the caller keeps). Returns 0, or -EINVAL when there is no '=' or NAME is
 * empty.
 */
int scenario_assign_split(char *arg, struct scenario_assign *ret);

/*
 * The conversion from unit a to unit b (FMI 3.0 section 2.4.3: value in
 * base units = factor * value + offset): *ret_factor and *ret_offset such
 * that value_b = factor * value_a + offset. Returns 0; -EDOM when the base
 * units differ (a different quantity). Neither unit may be NULL.
 */
int scenario_unit_convert(const struct md_unit *a, const struct md_unit *b,
                          double *ret_factor, double *ret_offset);

#endif
