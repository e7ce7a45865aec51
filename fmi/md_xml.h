/*
 * md_xml: the only part of the model description reader that talks to
 * libxml2. It parses a hostile document into a tree and gives line numbers
 * and borrowed attribute strings to the md_*.c readers.
 *
 * DESIGN: one parser context per parse, no global libxml2 state: errors go
 * to the context's own structured handler (ctxt->sax->serror), so several
 * threads may parse at once. A DOCTYPE stops the parser the moment it is
 * seen, before any entity is declared; an element nested deeper than the
 * limit stops it too. Entities are never substituted, no DTD is loaded and
 * the network is never used.
 *
 * Each element's line is the line of its '<', kept in the node's psvi field
 * (unused without schema validation), because libxml2's own line field
 * saturates at 65535 and model descriptions are often longer.
 */
#ifndef FMUD_FMI_MD_XML_H
#define FMUD_FMI_MD_XML_H

#include <stdbool.h>
#include <stddef.h>

#include <libxml/tree.h>

#include "cancel.h"
#include "diag.h"

struct mx {
        xmlDoc *doc;
        struct diag_list *diags;
        const char *file;
        int max_depth;
        size_t max_attributes;  /* on one element; 0: no limit */
        size_t max_elements;    /* in the document; 0: no limit */
        const struct fmi_cancel *cancel;        /* NULL: never cancelled */
        /* What the document is, for messages ("an SSP document"); NULL: a model description. */
        const char *what;
        const char *encoding_rule;      /* where UTF-8 is required; NULL: FMI 3.0 section 2.4 */
        bool refused;           /* DOCTYPE, too deep or too many: the parse was stopped */
        bool cancelled;         /* x->cancel answered true: the parse was stopped */
        bool nomem;
        int n_xml_errors;       /* libxml2 errors reported as diagnostics */
        int n_xml_warnings;
        char **scratch;         /* attribute values that needed a copy */
        size_t n_scratch, cap_scratch;
};

/*
 * Parse buf into x->doc. x->diags, x->file and x->max_depth must be set
 * (x->what, x->encoding_rule, the counting limits and x->cancel may be).
 * The counting limits are checked by mx_prescan() before libxml2 runs.
 * Returns 0 with x->doc set; -EINVAL when the document is not well-formed
 * XML or was refused (diagnostics added); -ECANCELED when x->cancel
 * answered true (no diagnostic); -ENOMEM. The caller checks the size
 * limit first. Any thread may call it.
 */
int mx_read(struct mx *x, const void *buf, size_t len);

/*
 * The counting limits (x->max_attributes, x->max_elements) over the raw
 * bytes, in one linear pass (md_scan.c). Returns 0; -EINVAL with a
 * diagnostic naming the limit, the line and the element; -ECANCELED;
 * -ENOMEM.
 */
int mx_prescan(struct mx *x, const void *buf, size_t len);

/* Free the tree and every copied attribute value. */
void mx_fini(struct mx *x);

/* Line of an element's start tag (1-based), 0 when unknown. */
int mx_line(const xmlNode *n);

/*
 * Value of the attribute 'name' (no namespace) of element n, or NULL when
 * absent. Borrowed: valid until mx_fini(). Sets x->nomem on allocation
 * failure and returns NULL.
 */
const char *mx_attr(struct mx *x, const xmlNode *n, const char *name);

/* Element iteration: the first / next sibling element, skipping text. */
const xmlNode *mx_first(const xmlNode *parent);
const xmlNode *mx_next(const xmlNode *n);
/* Whether n is an element whose local name is 'name'. */
bool mx_is(const xmlNode *n, const char *name);
/* Local name of an element. */
const char *mx_name(const xmlNode *n);
/* Number of child elements named 'name' (all child elements when NULL). */
size_t mx_count(const xmlNode *parent, const char *name);

#endif
