/*
 * ssv: an SSP parameter set (SSP 1.0 section 6, SystemStructureParameterValues)
 * read into a list of named values, as text, before the values are checked
 * against the variables they bind to.
 *
 * DESIGN: a set comes either inline from an SSD (ssd:ParameterValues) or
 * from an .ssv file; both are read by the same function from a parsed
 * <ssv:ParameterSet>. Values stay text here: only the target variable's
 * type says how to parse them (scenario_value.c).
 *
 * Ownership: strings are borrowed from the XML tree (set->x for a file,
 * the SSD's tree for an inline set); free the set with ssv_set_fini().
 */
#ifndef FMUD_ENGINE_SSV_H
#define FMUD_ENGINE_SSV_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/scenario/ssd.h"

struct ssv_param {
        const char *name;
        enum ssd_type type;             /* SSD_TYPE_REAL, ..., SSD_TYPE_EXACT */
        enum md_type exact;             /* SSD_TYPE_EXACT */
        const char *value;              /* the value attribute, as text */
        const char *unit;               /* Real: the value's unit, or NULL */
        int line;
};

struct ssv_set {
        struct mx x;                    /* the tree of an .ssv file (x.doc NULL when inline) */
        const char *file;               /* names the document in diagnostics */
        size_t n;
        struct ssv_param *v;
        size_t n_units;
        struct ssd_unit *units;
};

/*
 * Read a parsed <ssv:ParameterSet> element; mx is the tree it belongs to
 * (its diags and file are used). Returns 0; -EINVAL (reported); -ENOMEM.
 */
int ssv_read_set(struct ssv_set *set, struct mx *mx, const xmlNode *node);

/*
 * Parse an .ssv document held in buf into set->x and read it.
 * set->x.diags, set->x.file and set->x.max_depth must be set.
 */
int ssv_read(struct ssv_set *set, const void *buf, size_t len);

void ssv_set_fini(struct ssv_set *set);

/* The unit of the set's Units named name, or NULL. */
const struct md_unit *ssv_unit(const struct ssv_set *set, const char *name);

#endif
