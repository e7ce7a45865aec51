/*
 * ssp_xml: an SSP document (.ssd, .ssv) parsed as hostile XML into a tree
 * that the fmi/md_xml.h accessors (mx_attr, mx_first, mx_next, mx_is,
 * mx_line) read.
 *
 * DESIGN: the same libxml2 configuration as fmi/md_xml.c, mirrored rather
 * than called because its messages speak of model descriptions: a private
 * parser context, XML_PARSE_NONET without NOENT, DTDLOAD, DTDATTR,
 * XINCLUDE or HUGE, a DOCTYPE stops the parse before any entity is
 * declared, a depth limit, UTF-8 only, and every element's line kept in
 * its psvi field as md_xml.h describes. The caller checks the size limit
 * before parsing (ssp_xml_read_file() does it for files).
 */
#ifndef FMUD_DAEMON_SSP_XML_H
#define FMUD_DAEMON_SSP_XML_H

#include <stddef.h>

#include "fmi/md_xml.h"

/*
 * Parse buf into x->doc; x->diags, x->file and x->max_depth must be set.
 * Returns 0; -EINVAL when the document is not well-formed or was refused
 * (diagnostics added); -EFBIG when over INT_MAX bytes; -ENOMEM. Free the
 * tree with mx_fini(). Any thread may call it.
 */
int ssp_xml_read(struct mx *x, const void *buf, size_t len);

/*
 * Read the regular file at path, at most max bytes, into a new
 * NUL-terminated buffer (caller frees). Returns 0; -EFBIG when it is
 * larger than max; -EISDIR; -EINVAL when not a regular file (a FIFO, a
 * device); -errno from open/read.
 */
int ssp_read_file(const char *path, size_t max, char **ret_buf, size_t *ret_len);

#endif
