/*
 * md_ctx: the state of one md_parse() call, shared by the files that read
 * the parts of a modelDescription.xml (md_root.c, md_units.c, md_types.c,
 * md_vars.c, md_vars3.c, md_vars2.c, md_structure.c) and check them
 * (md_validate.c, md_check.c). Private to fmi/.
 *
 * DESIGN: readers never stop at a problem: they add a diagnostic, keep what
 * they could read and go on. Only allocation failure stops them (nomem).
 * Every diagnostic about a rule of the standard ends with the section that
 * states it, in the version of the document: md_err(c, line, subject,
 * SEC(c, "2.4.7.4", "2.2.7"), ...) prints "(FMI 3.0 section 2.4.7.4)" or
 * "(FMI 2.0 section 2.2.7)".
 */
#ifndef FMUD_FMI_MD_CTX_H
#define FMUD_FMI_MD_CTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "md_xml.h"
#include "model_description.h"

/* Longest modelIdentifier: it becomes "<id>.so", one path component. */
#define MD_MAX_MODEL_IDENTIFIER 252    /* a file name of 255 bytes with ".so" */

/* An <Alias> of an FMI 3.0 variable: only checked, not kept in struct md. */
struct md_alias {
        const char *name;               /* borrowed from the document */
        const char *display_unit;       /* borrowed; NULL when absent */
        int line;
        size_t var;
};

struct md_ctx {
        struct mx x;
        struct md *md;
        struct md_limits lim;
        struct diag_list *diags;
        const char *file;
        bool nomem;
        const xmlNode *root;
        /* The root's children, found once by md_read_root(); NULL when absent. */
        const xmlNode *units, *types, *vars, *structure;

        size_t *units_by_name;          /* indices into md->units, sorted by name */
        size_t **display_by_name;       /* per unit: its display units sorted by name */
        size_t *types_by_name;          /* indices into md->type_defs, sorted by name */
        int64_t **item_values;          /* per type definition: its Item values, sorted */

        struct md_alias *aliases;
        size_t n_aliases, cap_aliases;

        uint8_t *var_flags;             /* per variable: MD_VF_* */
};

#define MD_VF_NO_VR 0x1                 /* no valid valueReference: skip vr checks */
#define MD_VF_BAD_START 0x2             /* a start was given but refused: not "missing" */
#define MD_VF_BAD_KIND 0x4              /* causality, variability or initial refused */

#define SEC(c, s3, s2) ((c)->md->fmi == MD_FMI3 ? (s3) : (s2))

/*
 * Diagnostics (md_attrs.c). sec is a section number of the document's FMI
 * version, or NULL when the rule is fmud's own. Allocation failure sets
 * c->nomem.
 */
__attribute__((format(printf, 5, 6)))
void md_err(struct md_ctx *c, int line, const char *subject, const char *sec,
            const char *fmt, ...);
__attribute__((format(printf, 5, 6)))
void md_warn(struct md_ctx *c, int line, const char *subject, const char *sec,
             const char *fmt, ...);
/*
 * A rule that FMI 3.0 states normatively but FMI 2.0 only in non-normative
 * text, or that FMI 2.0.1 or the FMI cross-check rules settled after FMI
 * 2.0 was published: an error in an FMI 3.0 document, a warning in an FMI
 * 2.0 one, so that FMI 2.0 FMUs that other importers run are not refused.
 * Every caller says in a comment why its rule is one of these.
 *
 * The classification: warnings in FMI 2.0 are a unit or display unit
 * missing from UnitDefinitions (md_units.c) and aliases of different
 * variability (md_validate.c); a warning in both versions is a start value
 * outside min/max (md_check.c). Every other md_err() rule is stated by the
 * standard's normative text or schema for the version it is applied to
 * (required elements and attributes, the causality/variability/initial
 * tables, start required or forbidden, unique names, value references and
 * items, references that must resolve, the ModelStructure lists), or is
 * fmud's own bound on hostile input, and stays an error.
 */
__attribute__((format(printf, 5, 6)))
void md_err3(struct md_ctx *c, int line, const char *subject, const char *sec,
             const char *fmt, ...);

/* An attribute value fit for a message: at most 64 chars, controls as '?'. */
#define MD_SHOW_LEN 72
const char *md_show(const char *s, char *buf);

/*
 * Attribute readers (md_attrs.c). Each returns 1 when the attribute is
 * present and valid (*ret written), 0 when absent, -1 when present but
 * invalid (an error naming the element's line, subject, attribute and sec
 * was added). Strings are borrowed from the document.
 */
const char *md_attr(struct md_ctx *c, const xmlNode *n, const char *name);
int md_attr_dup(struct md_ctx *c, const xmlNode *n, const char *name, char **ret);
int md_attr_bool(struct md_ctx *c, const xmlNode *n, const char *subject, const char *name,
                 const char *sec, bool *ret);
int md_attr_u32(struct md_ctx *c, const xmlNode *n, const char *subject, const char *name,
                const char *sec, uint32_t *ret);
int md_attr_u64(struct md_ctx *c, const xmlNode *n, const char *subject, const char *name,
                const char *sec, uint64_t *ret);
int md_attr_i32(struct md_ctx *c, const xmlNode *n, const char *subject, const char *name,
                const char *sec, int32_t *ret);
int md_attr_double(struct md_ctx *c, const xmlNode *n, const char *subject, const char *name,
                   const char *sec, double *ret);
/* One value of type t (its range; FMI 2.0 Enumeration: Int32). */
int md_attr_scalar(struct md_ctx *c, const xmlNode *n, const char *subject, const char *name,
                   const char *sec, enum md_type t, union md_scalar *ret);
/*
 * A min or max of type t: as md_attr_scalar(), except that a Float32 one
 * beyond the range is an infinity of its sign, with a warning.
 */
int md_attr_limit(struct md_ctx *c, const xmlNode *n, const char *subject, const char *name,
                  const char *sec, enum md_type t, union md_scalar *ret);
/* One of names[0..count) into *ret (its index). */
int md_attr_enum(struct md_ctx *c, const xmlNode *n, const char *subject, const char *name,
                 const char *sec, const char *const *names, int count, int *ret);
/* A whitespace-separated list of unsigned 32-bit integers (may be empty). */
int md_attr_u32_list(struct md_ctx *c, const xmlNode *n, const char *subject, const char *name,
                     const char *sec, uint32_t **ret, size_t *ret_n);

/* Name lookups (md_index.c). */
size_t *md_sort_by_name(const void *base, size_t n, size_t stride, size_t name_off);
size_t md_lookup_name(const size_t *idx, size_t n, const void *base, size_t stride,
                      size_t name_off, const char *name);      /* SIZE_MAX when absent */
size_t *md_sort_by_vr(const struct md_variable *vars, size_t n);
/* The first variable (in document order) with that vr, or SIZE_MAX. */
size_t md_var_by_vr(const struct md *md, uint32_t vr);

/* Readers, in the order md_parse() calls them. */
int md_read_root(struct md_ctx *c);                             /* md_root.c */
void md_read_units(struct md_ctx *c, const xmlNode *units);    /* md_units.c */
bool md_display_unit_exists(const struct md_ctx *c, const struct md_unit *u, const char *name);
/*
 * The unit and display unit of a exist. Names equal to those of 'inherited'
 * (the declared type's, NULL for none) were checked with the type and are
 * not reported again.
 */
void md_check_unit_ref(struct md_ctx *c, int line, const char *subject, const char *sec,
                       const struct md_type_attrs *a, const struct md_type_attrs *inherited,
                       const struct md_unit **ret_unit);
const struct md_unit *md_unit_find(const struct md_ctx *c, const char *name);
void md_read_types(struct md_ctx *c, const xmlNode *types);    /* md_types.c */
const struct md_type_def *md_type_def_find(const struct md_ctx *c, const char *name);
void md_read_type_attrs(struct md_ctx *c, const xmlNode *n, const char *subject, enum md_type t,
                        struct md_type_attrs *a);
int md_copy_type_attrs(struct md_type_attrs *dst, const struct md_type_attrs *src);
void md_free_type_attrs(struct md_type_attrs *a);
void md_read_vars(struct md_ctx *c, const xmlNode *vars);      /* md_vars.c */
int md_read_var3(struct md_ctx *c, const xmlNode *n, struct md_variable *v);   /* md_vars3.c */
int md_read_var2(struct md_ctx *c, const xmlNode *n, struct md_variable *v);   /* md_vars2.c */
void md_read_structure(struct md_ctx *c, const xmlNode *ms);   /* md_structure.c */
void md_check_structure(struct md_ctx *c);

/* Shared by md_vars3.c and md_vars2.c (md_vars.c). */
const char *md_type_label(const struct md_ctx *c, enum md_type t);    /* "Real" in FMI 2.0 */
int md_add_alias(struct md_ctx *c, const xmlNode *e, size_t var);
void md_var_common(struct md_ctx *c, const xmlNode *n, struct md_variable *v,
                   bool *ret_variability_given);
void md_var_declared_type(struct md_ctx *c, const xmlNode *n, struct md_variable *v);
void md_var_defaults(struct md_ctx *c, struct md_variable *v, bool variability_given);
void md_var_free(struct md_variable *v);

/* Checks across the whole document, after reading (md_validate.c, md_check.c). */
void md_validate(struct md_ctx *c);
void md_check_var(struct md_ctx *c, struct md_variable *v);
bool md_initial_allowed(const struct md_ctx *c, const struct md_variable *v);

#endif
