/*
 * ssd: a SystemStructure.ssd read into plain structs, before anything is
 * checked against an FMU: systems, their elements, connectors,
 * connections, parameter bindings, units, the default experiment and
 * fmud's settings annotation.
 *
 * DESIGN: reading and checking are separate passes. ssd_read() checks
 * only what the document alone decides (required attributes, names unique
 * within a system, kinds and types spelled as SSP 1.0 spells them, numbers
 * that parse) and reports every such problem with its line. The scenario
 * passes then resolve names against FMUs.
 *
 * Ownership: strings and nodes are borrowed from the parsed tree in
 * doc->x and live until ssd_doc_fini(); the arrays are owned by the doc.
 */
#ifndef FMUD_ENGINE_SSD_H
#define FMUD_ENGINE_SSD_H

#include <stdbool.h>
#include <stddef.h>

#include "fmi/md_xml.h"
#include "fmi/model_description.h"

enum ssd_kind {
        SSD_KIND_INPUT,
        SSD_KIND_OUTPUT,
        SSD_KIND_PARAMETER,
        SSD_KIND_CALCULATED_PARAMETER,
        SSD_KIND_STRUCTURAL_PARAMETER,
        SSD_KIND_CONSTANT,
        SSD_KIND_LOCAL,
        SSD_KIND_INOUT,
        SSD_KIND_UNSPECIFIED,
};

/* A connector's optional type element (ssc:Real, ... or an FMI 3.0 type name). */
enum ssd_type {
        SSD_TYPE_NONE,
        SSD_TYPE_REAL,          /* Float32 or Float64 */
        SSD_TYPE_INTEGER,       /* any integer type */
        SSD_TYPE_EXACT,         /* ssc:Float64, ssc:Int8, ...: exactly md_type */
        SSD_TYPE_BOOLEAN,
        SSD_TYPE_STRING,
        SSD_TYPE_ENUMERATION,
        SSD_TYPE_BINARY,
};

struct ssd_connector {
        const char *name;
        enum ssd_kind kind;
        enum ssd_type type;
        enum md_type exact;             /* SSD_TYPE_EXACT */
        const char *unit;               /* declared unit, or NULL */
        int line;
};

struct ssd_connection {
        const char *start_element;      /* NULL: the system's own connector */
        const char *start_connector;
        const char *end_element;
        const char *end_connector;
        bool has_transformation;        /* LinearTransformation */
        double factor, offset;
        bool suppress_unit_conversion;
        int line;
};

struct ssd_binding {
        const char *source;             /* an .ssv, or NULL for inline values */
        const char *prefix;             /* "" when absent */
        const xmlNode *values;          /* the inline ssv:ParameterSet, or NULL */
        int line;
};

enum ssd_element_kind {
        SSD_COMPONENT,
        SSD_SYSTEM,
};

struct ssd_element {
        enum ssd_element_kind kind;
        const char *name;
        int line;
        size_t n_connectors;
        struct ssd_connector *connectors;
        size_t n_bindings;
        struct ssd_binding *bindings;

        /* SSD_COMPONENT */
        size_t comp;                    /* index in the scenario, set when flattened */
        const char *source;
        const char *type;               /* MIME type; NULL: an FMU */
        const char *implementation;     /* NULL: "any" */

        /* SSD_SYSTEM */
        size_t n_elements;
        struct ssd_element *elements;
        size_t n_connections;
        struct ssd_connection *connections;
        const xmlNode *settings;        /* fmud's annotation content, or NULL */
        int settings_line;
};

struct ssd_unit {
        const char *name;
        struct md_unit def;             /* name borrowed; no display units */
};

struct ssd_doc {
        struct mx x;                    /* the parsed tree; x.file names the document */
        const char *name;
        struct ssd_element root;        /* the top-level System */
        size_t n_units;
        struct ssd_unit *units;
        bool has_start, has_stop;
        double start, stop;
        int experiment_line;            /* of DefaultExperiment, 0 when absent */
        const xmlNode *settings;        /* on SystemStructureDescription, or NULL */
        int settings_line;
};

/*
 * Parse and read an SSD held in buf. doc->x.diags, doc->x.file and
 * doc->x.max_depth must be set. Returns 0; -EINVAL when the document is
 * refused (every problem in diags); -ENOMEM. Free with ssd_doc_fini() in
 * either case.
 */
int ssd_read(struct ssd_doc *doc, const void *buf, size_t len);

void ssd_doc_fini(struct ssd_doc *doc);

/* The element named name directly inside system sys, or NULL. */
const struct ssd_element *ssd_child(const struct ssd_element *sys, const char *name);

/* The connector named name on element e, or NULL. */
const struct ssd_connector *ssd_connector(const struct ssd_element *e, const char *name);

/* The unit named name in the document's Units, or NULL. */
const struct md_unit *ssd_unit(const struct ssd_doc *doc, const char *name);

const char *ssd_kind_name(enum ssd_kind k);

/*
 * Read a Units element (ssd or ssv) into a new array (caller frees).
 * Returns the count, or -EINVAL (reported), -ENOMEM.
 */
int ssd_read_units(struct mx *x, const xmlNode *units, struct ssd_unit **ret);

/*
 * Read a double attribute: 0 with *ret set; 1 when absent (*ret untouched);
 * -EINVAL when it does not parse (reported, naming the element).
 */
int ssd_attr_double(struct mx *x, const xmlNode *n, const char *name, double *ret);

/* A boolean attribute; as ssd_attr_double(). */
int ssd_attr_bool(struct mx *x, const xmlNode *n, const char *name, bool *ret);

/* Report a missing required attribute; returns -EINVAL. */
int ssd_missing(struct mx *x, const xmlNode *n, const char *attr);

#endif
