/*
 * ssp_xml: an SSP document (.ssd, .ssv) parsed as hostile XML into a tree
 * that the fmi/md_xml.h accessors (mx_attr, mx_first, mx_next, mx_is,
 * mx_line) read.
 *
 * DESIGN: the reader of fmi/md_xml.c, which holds every hostile-input
 * setting (no network, entities, DTD or XInclude; DOCTYPE refused; depth
 * and UTF-8 checks; line numbers kept), with messages that name SSP
 * documents. The caller checks the size limit before parsing
 * (ssp_read_file() does it for files).
 */
#ifndef FMUD_ENGINE_SSP_XML_H
#define FMUD_ENGINE_SSP_XML_H

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

/* The same from a descriptor the caller opened (borrowed, read from where it stands). */
int ssp_read_fd(int fd, size_t max, char **ret_buf, size_t *ret_len);

#endif
