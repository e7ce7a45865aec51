/*
 * ssp_xml: libxml2 configured for hostile SSP documents, mirroring
 * fmi/md_xml.c (see its DESIGN note for why each option is set).
 */
#include "ssp_xml.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/SAX2.h>
#include <libxml/globals.h>
#include <libxml/xmlerror.h>

/* After its first error libxml2 mostly reports consequences of it: keep one. */
#define SX_MAX_XML_ERRORS 1

static pthread_once_t sx_once = PTHREAD_ONCE_INIT;

/* xmlInitParser() is not safe to race with itself in libxml2 2.9. */
static void sx_init(void)
{
        xmlInitParser();
}

static void refuse(xmlParserCtxtPtr ctxt, int line, const char *msg)
{
        struct mx *x = ctxt->_private;

        if (!x->refused && diag_add(x->diags, DIAG_ERROR, x->file, line, NULL, "%s", msg) < 0)
                x->nomem = true;
        x->refused = true;
        xmlStopParser(ctxt);
}

/* Line of the '<' of the tag just read (see md_xml.c: libxml2's own saturates). */
static int tag_line(xmlParserCtxtPtr ctxt)
{
        const xmlChar *p, *base;
        int line;

        if (!ctxt->input || !ctxt->input->cur || !ctxt->input->base)
                return 0;
        p = ctxt->input->cur;
        base = ctxt->input->base;
        line = ctxt->input->line;
        while (p > base) {
                p--;
                if (*p == '<')
                        break;
                if (*p == '\n')
                        line--;
        }
        return line > 0 ? line : 1;
}

static void on_start(void *ctx, const xmlChar *localname, const xmlChar *prefix,
                     const xmlChar *uri, int nb_namespaces, const xmlChar **namespaces,
                     int nb_attributes, int nb_defaulted, const xmlChar **attributes)
{
        xmlParserCtxtPtr ctxt = ctx;
        struct mx *x = ctxt->_private;
        xmlNodePtr parent = ctxt->node;
        int line = tag_line(ctxt);

        if (x->refused)
                return;
        if (ctxt->nodeNr >= x->max_depth) {
                char msg[128];

                snprintf(msg, sizeof(msg),
                         "elements nested deeper than %d levels; document refused", x->max_depth);
                refuse(ctxt, line, msg);
                return;
        }
        xmlSAX2StartElementNs(ctx, localname, prefix, uri, nb_namespaces, namespaces,
                              nb_attributes, nb_defaulted, attributes);
        if (ctxt->node && ctxt->node != parent && ctxt->node->type == XML_ELEMENT_NODE)
                ctxt->node->psvi = (void *)(uintptr_t)line;
}

static void on_doctype(void *ctx, const xmlChar *name, const xmlChar *external_id,
                       const xmlChar *system_id)
{
        xmlParserCtxtPtr ctxt = ctx;

        (void)name;
        (void)external_id;
        (void)system_id;
        refuse(ctxt, ctxt->input ? ctxt->input->line : 0,
               "DOCTYPE declarations are refused: an SSP document needs no DTD, "
               "and its entities could expand without bound or read local files");
}

static void on_error(void *ctx, xmlErrorPtr e)
{
        xmlParserCtxtPtr ctxt = ctx;
        struct mx *x = ctxt ? ctxt->_private : NULL;
        enum diag_severity sev = DIAG_ERROR;
        char msg[512];
        size_t len;

        if (!x || !e || x->refused || e->level == XML_ERR_WARNING)
                return;
        if (e->code == XML_ERR_NO_MEMORY) {
                x->nomem = true;
                return;
        }
        /* SSP documents are full of prefixes; an undeclared one breaks namespaces only. */
        if (e->domain == XML_FROM_NAMESPACE && e->level == XML_ERR_ERROR)
                sev = DIAG_WARNING;
        if (sev == DIAG_ERROR && x->n_xml_errors >= SX_MAX_XML_ERRORS)
                return;
        if (sev == DIAG_WARNING && x->n_xml_warnings++ >= 8)
                return;
        snprintf(msg, sizeof(msg), "%s", e->message ? e->message : "unknown error");
        len = strlen(msg);
        while (len > 0 && (msg[len - 1] == '\n' || msg[len - 1] == ' '))
                msg[--len] = '\0';
        for (size_t i = 0; i < len; i++)
                if ((unsigned char)msg[i] < 0x20)
                        msg[i] = ' ';
        if (sev == DIAG_ERROR)
                x->n_xml_errors++;
        if (diag_add(x->diags, sev, x->file, e->line, NULL, "%s: %s (XML 1.0)",
                     sev == DIAG_ERROR ? "not well-formed XML" : "XML namespace problem",
                     msg) < 0)
                x->nomem = true;
}

static void drop(void *ctx, const char *msg, ...)
{
        (void)ctx;
        (void)msg;
}

/* UTF-8 only (an optional BOM, blanks, then '<'): no converter is ever reached. */
static bool utf8_xml_start(const unsigned char *p, size_t len)
{
        size_t i = 0;

        if (len >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF)
                i = 3;
        while (i < len && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
                i++;
        return i < len && p[i] == '<';
}

/* The verdict on a finished parse; frees doc when it is refused. */
static int verdict(struct mx *x, xmlParserCtxtPtr ctxt, xmlDocPtr *doc)
{
        int r = 0;

        if (x->nomem || ctxt->errNo == XML_ERR_NO_MEMORY) {
                r = -ENOMEM;
        } else if (x->refused) {
                r = -EINVAL;
        } else if (*doc && ((*doc)->intSubset || (*doc)->extSubset)) {
                /* Cannot happen with on_doctype in place; kept as a second lock. */
                r = diag_add(x->diags, DIAG_ERROR, x->file, 0, NULL,
                             "DOCTYPE declarations are refused") < 0 ? -ENOMEM : -EINVAL;
        } else if (!*doc || !ctxt->wellFormed) {
                if (x->n_xml_errors == 0 &&
                    diag_add(x->diags, DIAG_ERROR, x->file, 0, NULL,
                             "not well-formed XML (XML 1.0)") < 0)
                        x->nomem = true;
                r = x->nomem ? -ENOMEM : -EINVAL;
        }
        if (r < 0) {
                xmlFreeDoc(*doc);
                *doc = NULL;
        }
        return r;
}

int ssp_xml_read(struct mx *x, const void *buf, size_t len)
{
        /* As md_xml.c: no NOENT, DTDLOAD, DTDATTR, XINCLUDE or HUGE; UTF-8 only. */
        const int options = XML_PARSE_NONET | XML_PARSE_NOWARNING | XML_PARSE_NOERROR |
                            XML_PARSE_IGNORE_ENC;
        xmlStructuredErrorFunc saved_serror;
        xmlGenericErrorFunc saved_error;
        void *saved_serror_ctx, *saved_error_ctx;
        xmlParserCtxtPtr ctxt;
        xmlDocPtr doc;
        int r;

        if (len > INT_MAX)
                return -EFBIG;
        if (!utf8_xml_start(buf, len)) {
                if (diag_add(x->diags, DIAG_ERROR, x->file, 1, NULL,
                             "empty, or not XML in UTF-8: SSP documents are UTF-8 XML") < 0)
                        return -ENOMEM;
                return -EINVAL;
        }
        pthread_once(&sx_once, sx_init);
        ctxt = xmlNewParserCtxt();
        if (!ctxt)
                return -ENOMEM;
        ctxt->_private = x;
        ctxt->sax->startElementNs = on_start;
        ctxt->sax->internalSubset = on_doctype;
        ctxt->sax->externalSubset = NULL;
        ctxt->sax->serror = on_error;

        /* libxml2 keeps these handlers per thread: borrowing them for the parse is safe. */
        saved_serror = xmlStructuredError;
        saved_serror_ctx = xmlStructuredErrorContext;
        saved_error = xmlGenericError;
        saved_error_ctx = xmlGenericErrorContext;
        xmlSetStructuredErrorFunc(ctxt, on_error);
        xmlSetGenericErrorFunc(NULL, drop);
        doc = xmlCtxtReadMemory(ctxt, buf, (int)len, NULL, NULL, options);
        xmlSetStructuredErrorFunc(saved_serror_ctx, saved_serror);
        xmlSetGenericErrorFunc(saved_error_ctx, saved_error);
        r = verdict(x, ctxt, &doc);
        xmlFreeParserCtxt(ctxt);
        x->doc = doc;
        return r;
}

int ssp_read_file(const char *path, size_t max, char **ret_buf, size_t *ret_len)
{
        struct stat st;
        size_t len = 0;
        char *buf;
        int fd, r;

        /* O_NONBLOCK: a FIFO planted under the name must not hang us in open(). */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0) {
                r = -errno;
                goto out_close;
        }
        if (S_ISDIR(st.st_mode)) {
                r = -EISDIR;
                goto out_close;
        }
        if (!S_ISREG(st.st_mode)) {
                r = -EINVAL;
                goto out_close;
        }
        if ((uint64_t)st.st_size > max) {
                r = -EFBIG;
                goto out_close;
        }
        buf = malloc((size_t)st.st_size + 1);
        if (!buf) {
                r = -ENOMEM;
                goto out_close;
        }
        /* Read to end of file, but never more than the size seen (it may be growing). */
        while (len < (size_t)st.st_size) {
                ssize_t n = read(fd, buf + len, (size_t)st.st_size - len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        r = -errno;
                        free(buf);
                        goto out_close;
                }
                if (n == 0)
                        break;
                len += (size_t)n;
        }
        buf[len] = '\0';
        close(fd);
        *ret_buf = buf;
        *ret_len = len;
        return 0;

out_close:
        close(fd);
        return r;
}
