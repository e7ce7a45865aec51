/*
 * scenario_int: what the passes of one scenario load share. Internal to
 * the scenario library.
 *
 * The passes, in order (scenario.c runs them):
 *   scenario_comp.c       components: flatten the systems, import the FMUs,
 *                         check every declared connector against its FMU
 *   scenario_conn.c       connections: resolve through system connectors
 *                         (scenario_graph.c), check direction, type, shape, units
 *   scenario_params.c     parameter bindings and --start overrides
 *   scenario_dims.c       array sizes with structural parameters set, checked
 *   scenario_settings.c   the fmud annotation, with the overrides over it
 *   scenario_experiment.c the experiment's defaults and checks, Gauss-Seidel order
 *   scenario_record.c     recorded variables and CSV columns
 * with helpers: scenario_source.c (where a source URI points),
 * scenario_units.c (unit lookup and conversion), scenario_value.c (values
 * given as text).
 */
#ifndef FMUD_ENGINE_SCENARIO_INT_H
#define FMUD_ENGINE_SCENARIO_INT_H

#include <stdarg.h>

#include "engine/scenario/scenario.h"
#include "engine/scenario/ssd.h"
#include "engine/scenario/ssp_archive.h"

struct sc_load {
        const char *path;
        const struct scenario_opts *opts;
        const struct scenario_overrides *ov;
        enum fmu_interface iface;       /* the interface the next sc_import() hosts */
        struct diag_list *diags;
        struct scenario *s;

        struct ssp_archive *ar;         /* a .ssp; NULL for files on disk */
        char *dir;                      /* on disk: the SSD's folder (resolved unless confined) */
        int dir_fd;                     /* on disk: the SSD's folder, opened; -1: none */
        char *label;                    /* the SSD in messages: "a.ssp:SystemStructure.ssd" */
        struct ssd_doc doc;
        bool has_doc;
        bool flattened;                 /* sc_components() named every component */
        int sys_error;                  /* the first FMU a full or read-only cache could not
                                           take (-ENOSPC, -EROFS ...): what the load returns */
        bool private;                   /* confined, a file others may not read: no details */

        const struct ssd_element **elems;       /* per component: its SSD element */
        const struct ssd_element **systems;     /* per component: the system holding it */
};

/* A hostile-XML reader for file with the load's limits and cancellation. */
struct mx sc_mx(struct sc_load *l, const char *file);

/* Append an error; returns -EINVAL so that callers can 'return sc_err(...)'. */
__attribute__((format(printf, 5, 6)))
int sc_err(struct sc_load *l, const char *file, int line, const char *subject,
           const char *fmt, ...);

/* Append a warning: something the user should know that does not refuse the scenario. */
__attribute__((format(printf, 5, 6)))
void sc_warn(struct sc_load *l, const char *file, int line, const char *subject,
             const char *fmt, ...);

/*
 * Whether the file's content may show in messages: a daemon reads what its
 * client may not, so a confined load of a file others cannot read keeps
 * what is in it out of every message (scenario_load() replaces them all).
 */
void sc_note_private(struct sc_load *l, int fd);

/* "file:line" in a new string (line 0: the file alone); NULL on OOM. */
char *sc_origin(const char *file, int line);

/* scenario_source.c */
/*
 * Open a source URI of the scenario as a file fmu_open_fd() can read
 * (*ret_fd, caller closes): a path inside the scenario's folder, an
 * absolute path under an allowed directory, or (for a .ssp) the entry
 * copied into the cache. *ret_path names the file for fmu->path,
 * *ret_label for messages. Problems are reported at line with subject.
 * Returns 0, -EINVAL (reported), -ENOMEM.
 */
int sc_source_fmu(struct sc_load *l, const char *uri, int line, const char *subject,
                  int *ret_fd, char **ret_path, char **ret_label);

/*
 * A relative source URI as the path a confined load opens beneath the
 * scenario's folder: percent-decoded, '.' and empty parts dropped. NULL
 * for an absolute or refused URI, or one with a '..' part (*ret_nomem
 * false), or on OOM (*ret_nomem true). Caller frees.
 */
char *sc_source_relative(const char *uri, bool *ret_nomem);

/* Read a source (an .ssv) into memory, with the same rules; capped at max_xml_bytes. */
int sc_source_read(struct sc_load *l, const char *uri, int line, const char *subject,
                   char **ret_buf, size_t *ret_len, char **ret_label);

/* scenario_comp.c */
/*
 * Import one FMU as component c (name and source set) from fd, which
 * path names; reports and returns like fmu_open.
 */
int sc_import(struct sc_load *l, struct scenario_component *c, int fd, const char *path,
              const char *label);
/* Flatten doc's systems into s->components, import each FMU, check connectors. */
int sc_components(struct sc_load *l);
/* Whether an SSD/SSV type element admits an FMU variable of type m. */
bool sc_type_fits(enum ssd_type t, enum md_type exact, enum md_type m);
const char *sc_ssd_type_name(enum ssd_type t, enum md_type exact);

/* scenario_conn.c */
int sc_connections(struct sc_load *l);

/* scenario_params.c: bindings, then the overrides' --start assignments. */
int sc_parameters(struct sc_load *l);

/* scenario_settings.c: the fmud annotation and the overrides over it. */
struct sc_settings {
        bool has_start, has_stop, has_step, has_budget, has_warp, has_algorithm, has_tolerance;
        double start, stop, step, budget, warp, tolerance;
        /* where each came from, for messages: an override's flag, or NULL for the SSD */
        const char *start_from, *stop_from, *step_from, *budget_from, *warp_from, *tolerance_from;
        uint64_t decimation;            /* 0: not given */
        bool rollback_on_fault;
        bool has_overrun, has_overrun_margin, has_spin;
        enum scenario_overrun overrun;
        double overrun_margin_us, spin_us;
        const char *overrun_margin_from, *spin_from;
        enum scenario_algorithm algorithm;
        const char *order;              /* component names, or NULL */
        const char *order_origin;
        size_t n_sequential;            /* <GaussSeidel input="..."/> */
        const char **sequential;
        int *sequential_lines;
        size_t n_record;
        const char **record;
        char **record_origins;          /* owned: "file:line" or "--record" */
        /* Rig ports: the annotation's text (borrowed), or the overrides' lists */
        const char *rig_in, *rig_out;
        int rig_line;
        bool has_rig_policy, has_rig_timeout;
        enum rig_policy rig_policy;
        double rig_timeout_ms;
};

/* Read the annotation (if any), apply l->ov and the multirate factors. */
int sc_settings(struct sc_load *l, struct sc_settings *st);
void sc_settings_fini(struct sc_settings *st);

/* scenario_grid.c */
/* The smallest fixedInternalStepSize of the components; INFINITY: none gives one. */
double sc_grid_default_step(const struct scenario *s);
/*
 * Check the grid against the time representation and the components that
 * cannot vary their step, and end it at their last whole step (a warning);
 * problems are reported at file:line. 0 or -EINVAL.
 */
int sc_grid(struct sc_load *l, const char *file, int line);

/* scenario_experiment.c: defaults, checks, the Gauss-Seidel order. */
int sc_experiment(struct sc_load *l, const struct sc_settings *st);

/* scenario_record.c */
/* Columns for the listed names (all outputs when n == 0). */
int sc_columns(struct sc_load *l, size_t n, const char *const *names, const char *const *origins);

/* scenario_rig.c: the rig ports named by st (or the overrides), checked. */
int sc_rig(struct sc_load *l, const struct sc_settings *st);

/* scenario_units.c */
/*
 * The unit named name as seen from component md (its UnitDefinitions),
 * with the SSD's Units taking precedence; NULL when undefined.
 */
const struct md_unit *sc_unit(const struct sc_load *l, const struct md *md, const char *name);
/* The unit of an FMU variable: the FMU's own definition first, then the SSD's. */
const struct md_unit *sc_var_unit(const struct sc_load *l, const struct md *md, const char *name);
/*
 * The unit of variable v of component comp: its own, else its connector's
 * declared one (SSP: a connector's unit where the variable has none);
 * *ret_name its name (NULL: none, and NULL returned); NULL also for a
 * name nothing defines.
 */
const struct md_unit *sc_var_unit_of(const struct sc_load *l, size_t comp,
                                     const struct md_variable *v, const char **ret_name);
/* Whether two units are the same unit (same name, or same base and factor/offset). */
bool sc_unit_same(const struct md_unit *a, const struct md_unit *b);
/* A unit's definition as "m", "kg.m.s-2 * 0.001 + 0" for messages, into buf. */
const char *sc_unit_str(const struct md_unit *u, char *buf, size_t size);

/* scenario_value.c */
/*
 * Parse text as the value of variable v of md (a scalar, or a whitespace
 * separated list with one element per array element or one for all).
 * Enumeration values may be item names. On failure *ret_why says why.
 */
int sc_parse_value(const struct md *md, const struct md_variable *v, const char *text,
                   struct md_values *ret, const char **ret_why);

/* scenario_dims.c */
/*
 * Dimensions of v resolved with the description's start values, into dims
 * (at most max); returns the count or -EINVAL.
 */
int sc_var_dims(const struct md *md, const struct md_variable *v, uint64_t *dims, size_t max);
/* Whether a Dimension of v names a structural parameter (FMI 3.0 section 2.4.7.2). */
bool sc_var_structural(const struct md_variable *v);
/*
 * After sc_parameters(): structural parameter starts within min/max and
 * sizing at least one element, array starts with one value or one per
 * element as set, connections between arrays so sized of equal shapes.
 */
int sc_structural(struct sc_load *l);

#endif
