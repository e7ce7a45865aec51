/*
 * md_xml: libxml2 behind a small interface, configured for hostile input.
 *
 * DESIGN: xmlCtxtReadMemory() on a private parser context with
 * XML_PARSE_NONET and without NOENT, DTDLOAD, DTDATTR, XINCLUDE or HUGE.
 * Before it, md_scan.c counts attributes per element and elements in one
 * linear pass over the bytes (libxml2 would spend quadratic time on a
 * start tag's attributes before any callback could object).
 * Two SAX callbacks are replaced on that context only: internalSubset (a
 * DOCTYPE stops the parse before its content is read, so no entity is ever
 * declared, let alone expanded) and startElementNs (the cancellation poll,
 * the depth limit and the start tag's line). libxml2's errors arrive through the context's serror
 * callback, never through the process-wide handlers.
 */
#include "md_xml.h"

#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/SAX2.h>
#include <libxml/globals.h>
#include <libxml/xmlerror.h>

/* After its first error libxml2 mostly reports consequences of it: keep one. */
#define MX_MAX_XML_ERRORS 1
#define MX_MAX_XML_WARNINGS 8

static pthread_once_t mx_once = PTHREAD_ONCE_INIT;

/* xmlInitParser() is not safe to race with itself in libxml2 2.9. */
static void mx_init(void)
{
        xmlInitParser();
}

static struct mx *ctxt_mx(void *ctx)
{
        xmlParserCtxtPtr ctxt = ctx;

        return ctxt ? ctxt->_private : NULL;
}

static const char *what(const struct mx *x)
{
        return x->what ? x->what : "a model description";
}

__attribute__((format(printf, 3, 4)))
static void refuse(xmlParserCtxtPtr ctxt, int line, const char *fmt, ...)
{
        struct mx *x = ctxt->_private;
        va_list ap;
        int r = 0;

        va_start(ap, fmt);
        if (!x->refused)
                r = diag_addv(x->diags, DIAG_ERROR, x->file, line, NULL, fmt, ap);
        va_end(ap);
        if (r < 0)
                x->nomem = true;
        x->refused = true;
        xmlStopParser(ctxt);
}

/*
 * Line of the '<' that opened the tag the parser has just read: the parser
 * stands on its closing '>', and '<' cannot occur inside attribute values.
 * Bounded by what the parser still holds in its buffer.
 */
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
        if (fmi_cancelled(x->cancel)) {
                x->cancelled = x->refused = true;
                xmlStopParser(ctxt);
                return;
        }
        if (ctxt->nodeNr >= x->max_depth) {
                refuse(ctxt, line, "elements nested deeper than %d levels; document refused",
                       x->max_depth);
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
               "DOCTYPE declarations are refused: %s needs no DTD, "
               "and its entities could expand without bound or read local files",
               what(ctxt->_private));
}

static void on_error(void *ctx, xmlErrorPtr e)
{
        struct mx *x = ctxt_mx(ctx);
        enum diag_severity sev = DIAG_ERROR;
        char msg[512];
        size_t len;

        if (!x || !e || x->refused || e->level == XML_ERR_WARNING)
                return;
        if (e->code == XML_ERR_NO_MEMORY) {
                x->nomem = true;
                return;
        }
        /* An undeclared prefix breaks namespaces, not XML 1.0; FMI never needs one. */
        if (e->domain == XML_FROM_NAMESPACE && e->level == XML_ERR_ERROR)
                sev = DIAG_WARNING;
        if (sev == DIAG_ERROR && x->n_xml_errors >= MX_MAX_XML_ERRORS)
                return;
        snprintf(msg, sizeof(msg), "%s", e->message ? e->message : "unknown error");
        len = strlen(msg);
        while (len > 0 && (msg[len - 1] == '\n' || msg[len - 1] == ' '))
                msg[--len] = '\0';
        /* libxml2 breaks some messages over lines; a diagnostic is one line. */
        for (size_t i = 0; i < len; i++)
                if ((unsigned char)msg[i] < 0x20)
                        msg[i] = ' ';
        if (sev == DIAG_ERROR)
                x->n_xml_errors++;
        else if (x->n_xml_warnings++ >= MX_MAX_XML_WARNINGS)
                return;
        if (diag_add(x->diags, sev, x->file, e->line, NULL, "%s: %s (XML 1.0)",
                     sev == DIAG_ERROR ? "not well-formed XML" : "XML namespace problem",
                     msg) < 0)
                x->nomem = true;
}

/* libxml2 reports some errors (encoding, I/O) through the thread's handlers. */
static void drop(void *ctx, const char *msg, ...)
{
        (void)ctx;
        (void)msg;
}

/*
 * FMI requires UTF-8 (FMI 3.0 section 2.4). After an optional UTF-8 BOM and
 * blanks the document must begin with '<': anything else (UTF-16, UCS-4,
 * EBCDIC) would make libxml2 switch to a converter, which fmud never wants
 * to run on hostile input.
 */
static bool utf8_xml_start(const unsigned char *p, size_t len)
{
        size_t i = 0;

        if (len >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF)
                i = 3;
        while (i < len && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
                i++;
        return i < len && p[i] == '<';
}

/*
 * Length of the UTF-8 sequence at p (left bytes), or 0 when it is not one
 * (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF).
 */
static size_t utf8_seq(const unsigned char *p, size_t left)
{
        unsigned char lo = 0x80, hi = 0xBF;
        size_t n;

        if (p[0] < 0x80)
                return 1;
        if (p[0] >= 0xC2 && p[0] <= 0xDF)
                n = 2;
        else if (p[0] >= 0xE0 && p[0] <= 0xEF)
                n = 3;
        else if (p[0] >= 0xF0 && p[0] <= 0xF4)
                n = 4;
        else
                return 0;
        /* The second byte's range rules out overlong forms, surrogates and > U+10FFFF. */
        if (p[0] == 0xE0)
                lo = 0xA0;
        else if (p[0] == 0xED)
                hi = 0x9F;
        else if (p[0] == 0xF0)
                lo = 0x90;
        else if (p[0] == 0xF4)
                hi = 0x8F;
        if (left < n || p[1] < lo || p[1] > hi)
                return 0;
        for (size_t i = 2; i < n; i++)
                if (p[i] < 0x80 || p[i] > 0xBF)
                        return 0;
        return n;
}

/* The offset of the first byte that begins no UTF-8 sequence, or len. */
static size_t utf8_invalid_at(const unsigned char *p, size_t len)
{
        size_t i = 0, n;

        while (i < len) {
                n = utf8_seq(p + i, len - i);
                if (!n)
                        return i;
                i += n;
        }
        return len;
}

/*
 * The encoding named by the XML declaration at the start of p, copied into
 * out (size outsz) when it is a plain name; "" when there is none.
 */
static void declared_encoding(const unsigned char *p, size_t len, char *out, size_t outsz)
{
        const unsigned char *end, *e;
        size_t n = 0;
        unsigned char q;

        out[0] = '\0';
        if (len >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF) {
                p += 3;
                len -= 3;
        }
        if (len < 6 || memcmp(p, "<?xml", 5) != 0)
                return;
        end = memmem(p, len < 1024 ? len : 1024, "?>", 2);
        e = end ? memmem(p, (size_t)(end - p), "encoding", 8) : NULL;
        if (!e)
                return;
        for (e += 8; e < end && (*e == ' ' || *e == '\t' || *e == '\r' || *e == '\n' || *e == '='); e++)
                ;
        if (e >= end || (*e != '"' && *e != '\''))
                return;
        q = *e++;
        /* EncName (XML 1.0 [81]): ASCII letters, digits, '.', '_', '-', whatever the locale. */
        while (e + n < end && n + 1 < outsz && e[n] != q &&
               ((e[n] >= 'A' && e[n] <= 'Z') || (e[n] >= 'a' && e[n] <= 'z') ||
                (e[n] >= '0' && e[n] <= '9') || e[n] == '.' || e[n] == '_' || e[n] == '-'))
                n++;
        if (e + n < end && e[n] == q) {
                memcpy(out, e, n);
                out[n] = '\0';
        }
}

/*
 * libxml2 would refuse the document too, but its message ("indicate
 * encoding") asks for an encoding declaration, which FMI does not allow
 * and the parser ignores (IGNORE_ENC): say what is wrong, where, and what
 * the document claims to be.
 */
static int refuse_not_utf8(struct mx *x, const unsigned char *p, size_t len, size_t bad)
{
        char enc[64], said[128] = "";
        int line = 1;

        for (size_t i = 0; i < bad; i++)
                line += p[i] == '\n';
        declared_encoding(p, len, enc, sizeof(enc));
        if (enc[0])
                snprintf(said, sizeof(said), " (the XML declaration says encoding=\"%s\")", enc);
        if (diag_add(x->diags, DIAG_ERROR, x->file, line, NULL,
                     "not UTF-8: byte 0x%02X does not begin a valid UTF-8 sequence%s; %s must be UTF-8 (%s)",
                     p[bad], said, what(x),
                     x->encoding_rule ? x->encoding_rule : "FMI 3.0 section 2.4") < 0)
                return -ENOMEM;
        return -EINVAL;
}

int mx_read(struct mx *x, const void *buf, size_t len)
{
        /*
         * No NOENT (entities stay references), no DTDLOAD/DTDATTR/DTDVALID,
         * no XINCLUDE, no HUGE (libxml2 keeps its own length limits).
         * IGNORE_ENC: FMI requires UTF-8, so a declared encoding is not
         * obeyed and no iconv converter is ever reached from the document.
         */
        const int options = XML_PARSE_NONET | XML_PARSE_NOWARNING | XML_PARSE_NOERROR |
                            XML_PARSE_IGNORE_ENC;
        xmlStructuredErrorFunc saved_serror;
        xmlGenericErrorFunc saved_error;
        void *saved_serror_ctx, *saved_error_ctx;
        xmlParserCtxtPtr ctxt;
        xmlDocPtr doc;
        size_t bad;
        int r = 0;

        if (len > INT_MAX)
                return -EFBIG;
        if (!utf8_xml_start(buf, len)) {
                if (diag_add(x->diags, DIAG_ERROR, x->file, 1, NULL,
                             "empty, or not XML in UTF-8: %s must be UTF-8 (%s)", what(x),
                             x->encoding_rule ? x->encoding_rule : "FMI 3.0 section 2.4") < 0)
                        return -ENOMEM;
                return -EINVAL;
        }
        bad = utf8_invalid_at(buf, len);
        if (bad < len)
                return refuse_not_utf8(x, buf, len, bad);
        r = mx_prescan(x, buf, len);
        if (r < 0)
                return r;
        pthread_once(&mx_once, mx_init);
        ctxt = xmlNewParserCtxt();
        if (!ctxt)
                return -ENOMEM;
        ctxt->_private = x;
        ctxt->sax->startElementNs = on_start;
        ctxt->sax->internalSubset = on_doctype;
        ctxt->sax->externalSubset = NULL;
        ctxt->sax->serror = on_error;

        /*
         * Errors raised without the parser context (encoding, I/O) go to the
         * calling thread's handlers: libxml2 keeps those per thread, so
         * borrowing them for the parse is safe; they are given back after.
         */
        saved_serror = xmlStructuredError;
        saved_serror_ctx = xmlStructuredErrorContext;
        saved_error = xmlGenericError;
        saved_error_ctx = xmlGenericErrorContext;
        xmlSetStructuredErrorFunc(ctxt, on_error);
        xmlSetGenericErrorFunc(NULL, drop);
        doc = xmlCtxtReadMemory(ctxt, buf, (int)len, NULL, NULL, options);
        xmlSetStructuredErrorFunc(saved_serror_ctx, saved_serror);
        xmlSetGenericErrorFunc(saved_error_ctx, saved_error);
        if (x->nomem || ctxt->errNo == XML_ERR_NO_MEMORY) {
                r = -ENOMEM;
        } else if (x->cancelled) {
                r = -ECANCELED;
        } else if (x->refused) {
                r = -EINVAL;
        } else if (doc && (doc->intSubset || doc->extSubset)) {
                /* Cannot happen with on_doctype in place; kept as a second lock. */
                if (diag_add(x->diags, DIAG_ERROR, x->file, 0, NULL,
                             "DOCTYPE declarations are refused") < 0)
                        r = -ENOMEM;
                else
                        r = -EINVAL;
        } else if (!doc || !ctxt->wellFormed) {
                if (x->n_xml_errors == 0 &&
                    diag_add(x->diags, DIAG_ERROR, x->file, 0, NULL,
                             "not well-formed XML (XML 1.0)") < 0)
                        x->nomem = true;
                r = x->nomem ? -ENOMEM : -EINVAL;
        }
        if (r < 0) {
                xmlFreeDoc(doc);
                doc = NULL;
        }
        xmlFreeParserCtxt(ctxt);
        x->doc = doc;
        return r;
}

void mx_fini(struct mx *x)
{
        for (size_t i = 0; i < x->n_scratch; i++)
                xmlFree(x->scratch[i]);
        free(x->scratch);
        x->scratch = NULL;
        x->n_scratch = x->cap_scratch = 0;
        xmlFreeDoc(x->doc);
        x->doc = NULL;
}

int mx_line(const xmlNode *n)
{
        uintptr_t line;

        if (!n)
                return 0;
        line = (uintptr_t)n->psvi;
        if (line > 0 && line <= INT_MAX)
                return (int)line;
        return n->line;
}

static const char *keep(struct mx *x, xmlChar *s)
{
        if (!s) {
                x->nomem = true;
                return NULL;
        }
        if (x->n_scratch == x->cap_scratch) {
                size_t cap = x->cap_scratch ? 2 * x->cap_scratch : 16;
                char **v = realloc(x->scratch, cap * sizeof(*v));

                if (!v) {
                        xmlFree(s);
                        x->nomem = true;
                        return NULL;
                }
                x->scratch = v;
                x->cap_scratch = cap;
        }
        x->scratch[x->n_scratch++] = (char *)s;
        return (const char *)s;
}

const char *mx_attr(struct mx *x, const xmlNode *n, const char *name)
{
        if (!n || n->type != XML_ELEMENT_NODE)
                return NULL;
        for (const xmlAttr *a = n->properties; a; a = a->next) {
                if (a->ns || !a->name || strcmp((const char *)a->name, name) != 0)
                        continue;
                if (!a->children)
                        return "";
                if (a->children->type == XML_TEXT_NODE && !a->children->next &&
                    a->children->content)
                        return (const char *)a->children->content;
                return keep(x, xmlNodeListGetString(n->doc, a->children, 1));
        }
        return NULL;
}

const xmlNode *mx_first(const xmlNode *parent)
{
        if (!parent)
                return NULL;
        for (const xmlNode *c = parent->children; c; c = c->next)
                if (c->type == XML_ELEMENT_NODE)
                        return c;
        return NULL;
}

const xmlNode *mx_next(const xmlNode *n)
{
        for (const xmlNode *c = n ? n->next : NULL; c; c = c->next)
                if (c->type == XML_ELEMENT_NODE)
                        return c;
        return NULL;
}

bool mx_is(const xmlNode *n, const char *name)
{
        return n && n->type == XML_ELEMENT_NODE && n->name &&
               strcmp((const char *)n->name, name) == 0;
}

const char *mx_name(const xmlNode *n)
{
        return n && n->name ? (const char *)n->name : "";
}

size_t mx_count(const xmlNode *parent, const char *name)
{
        size_t k = 0;

        for (const xmlNode *c = mx_first(parent); c; c = mx_next(c))
                if (!name || mx_is(c, name))
                        k++;
        return k;
}
