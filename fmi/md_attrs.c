/*
 * md_attrs: typed attribute readers and the diagnostics they add, so every
 * reader words a bad value the same way: the attribute, the value (cut
 * short, controls masked), what it should be, and the section.
 */
#include "md_ctx.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "md_values.h"

/* Names can be megabytes long in a hostile document; diagnostics stay short. */
#define MD_MAX_SUBJECT 256
#define MD_MAX_MESSAGE 1024

static void cut(char *s, size_t max)
{
        if (strlen(s) > max)
                memcpy(s + max - 4, "...", 4);
}

static void add(struct md_ctx *c, enum diag_severity sev, int line, const char *subject,
                const char *sec, const char *fmt, va_list ap)
{
        char *msg = NULL, subj[MD_MAX_SUBJECT + 1];
        int r;

        if (vasprintf(&msg, fmt, ap) < 0) {
                c->nomem = true;
                return;
        }
        cut(msg, MD_MAX_MESSAGE);
        if (subject) {
                /* The precision stops the copy: the rest of the name is never read. */
                snprintf(subj, sizeof(subj), "%.*s", MD_MAX_SUBJECT, subject);
                if (subject[strnlen(subject, MD_MAX_SUBJECT)] != '\0')
                        memcpy(subj + MD_MAX_SUBJECT - 3, "...", 4);
                subject = subj;
        }
        if (sec)
                r = diag_add(c->diags, sev, c->file, line, subject, "%s (FMI %s section %s)", msg,
                             c->md && c->md->fmi == MD_FMI2 ? "2.0" : "3.0", sec);
        else
                r = diag_add(c->diags, sev, c->file, line, subject, "%s", msg);
        if (r < 0)
                c->nomem = true;
        free(msg);
}

void md_err(struct md_ctx *c, int line, const char *subject, const char *sec, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        add(c, DIAG_ERROR, line, subject, sec, fmt, ap);
        va_end(ap);
}

void md_warn(struct md_ctx *c, int line, const char *subject, const char *sec, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        add(c, DIAG_WARNING, line, subject, sec, fmt, ap);
        va_end(ap);
}

void md_err3(struct md_ctx *c, int line, const char *subject, const char *sec, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        add(c, c->md && c->md->fmi == MD_FMI2 ? DIAG_WARNING : DIAG_ERROR, line, subject, sec, fmt,
            ap);
        va_end(ap);
}

const char *md_show(const char *s, char *buf)
{
        size_t i;

        for (i = 0; s[i] && i < 64; i++)
                buf[i] = (unsigned char)s[i] < 0x20 ? '?' : s[i];
        if (s[i])
                memcpy(buf + i, "...", 4);
        else
                buf[i] = '\0';
        return buf;
}

const char *md_attr(struct md_ctx *c, const xmlNode *n, const char *name)
{
        const char *s = mx_attr(&c->x, n, name);

        if (c->x.nomem)
                c->nomem = true;
        return s;
}

int md_attr_dup(struct md_ctx *c, const xmlNode *n, const char *name, char **ret)
{
        const char *s = md_attr(c, n, name);
        char *d;

        if (!s)
                return 0;
        d = strdup(s);
        if (!d) {
                c->nomem = true;
                return -1;
        }
        free(*ret);
        *ret = d;
        return 1;
}

/* Report a value that did not parse; r is what the parser returned. */
static int bad(struct md_ctx *c, const xmlNode *n, const char *subject, const char *name,
               const char *sec, const char *value, int r, const char *what)
{
        char buf[MD_SHOW_LEN];

        if (r == -ENOMEM) {
                c->nomem = true;
                return -1;
        }
        md_show(value, buf);
        if (r == -ERANGE)
                md_err(c, mx_line(n), subject, sec, "%s=\"%s\" is outside the range of %s",
                       name, buf, what);
        else if (r == -E2BIG)
                md_err(c, mx_line(n), subject, sec, "%s=\"%s\" is too long for %s", name, buf,
                       what);
        else
                md_err(c, mx_line(n), subject, sec, "%s=\"%s\" is not a valid %s", name, buf, what);
        return -1;
}

int md_attr_bool(struct md_ctx *c, const xmlNode *n, const char *subject, const char *name,
                 const char *sec, bool *ret)
{
        const char *s = md_attr(c, n, name);
        int r;

        if (!s)
                return 0;
        r = mv_bool(s, ret);
        return r < 0 ? bad(c, n, subject, name, sec, s, r, "Boolean (true, false, 1, 0)") : 1;
}

int md_attr_u32(struct md_ctx *c, const xmlNode *n, const char *subject, const char *name,
                const char *sec, uint32_t *ret)
{
        const char *s = md_attr(c, n, name);
        uint64_t u;
        int r;

        if (!s)
                return 0;
        r = mv_uint(s, UINT32_MAX, &u);
        if (r < 0)
                return bad(c, n, subject, name, sec, s, r, "unsigned 32-bit integer");
        *ret = (uint32_t)u;
        return 1;
}

int md_attr_u64(struct md_ctx *c, const xmlNode *n, const char *subject, const char *name,
                const char *sec, uint64_t *ret)
{
        const char *s = md_attr(c, n, name);
        int r;

        if (!s)
                return 0;
        r = mv_uint(s, UINT64_MAX, ret);
        return r < 0 ? bad(c, n, subject, name, sec, s, r, "unsigned 64-bit integer") : 1;
}

int md_attr_i32(struct md_ctx *c, const xmlNode *n, const char *subject, const char *name,
                const char *sec, int32_t *ret)
{
        const char *s = md_attr(c, n, name);
        int64_t i;
        int r;

        if (!s)
                return 0;
        r = mv_int(s, INT32_MIN, INT32_MAX, &i);
        if (r < 0)
                return bad(c, n, subject, name, sec, s, r, "32-bit integer");
        *ret = (int32_t)i;
        return 1;
}

int md_attr_double(struct md_ctx *c, const xmlNode *n, const char *subject, const char *name,
                   const char *sec, double *ret)
{
        const char *s = md_attr(c, n, name);
        int r;

        if (!s)
                return 0;
        r = mv_double(s, ret);
        return r < 0 ? bad(c, n, subject, name, sec, s, r, "double") : 1;
}

int md_attr_scalar(struct md_ctx *c, const xmlNode *n, const char *subject, const char *name,
                   const char *sec, enum md_type t, union md_scalar *ret)
{
        const char *s = md_attr(c, n, name);
        int r;

        if (!s)
                return 0;
        r = mv_scalar(t, s, ret);
        return r < 0 ? bad(c, n, subject, name, sec, s, r, md_type_name(t)) : 1;
}

int md_attr_limit(struct md_ctx *c, const xmlNode *n, const char *subject, const char *name,
                  const char *sec, enum md_type t, union md_scalar *ret)
{
        const char *s = md_attr(c, n, name), *p;
        char buf[MD_SHOW_LEN];
        int r;

        if (!s)
                return 0;
        r = mv_scalar(t, s, ret);
        if (r != -ERANGE || t != MD_FLOAT32)
                return r < 0 ? bad(c, n, subject, name, sec, s, r, md_type_name(t)) : 1;
        /*
         * XML Schema 1.1's float lexical mapping rounds a magnitude beyond
         * the range to an infinity, and exporters that write every real's
         * limits alike give a Float32 the Float64 ones. A limit, unlike a
         * start value, need not be a value of the type: a min of -1e39 or
         * a max of +1e39 bounds nothing (a max of -1e39 leaves no value,
         * as it would in any importer that reads it so).
         */
        for (p = s; mv_is_space(*p); p++)
                ;
        ret->f = *p == '-' ? -INFINITY : INFINITY;
        md_warn(c, mx_line(n), subject, sec, "%s=\"%s\" is beyond the range of Float32 and is "
                "read as %s, as XML Schema 1.1 rounds it", name, md_show(s, buf),
                *p == '-' ? "-INF" : "INF");
        return 1;
}

int md_attr_enum(struct md_ctx *c, const xmlNode *n, const char *subject, const char *name,
                 const char *sec, const char *const *names, int count, int *ret)
{
        const char *s = md_attr(c, n, name);
        char buf[MD_SHOW_LEN];

        if (!s)
                return 0;
        for (int i = 0; i < count; i++) {
                if (strcmp(s, names[i]) == 0) {
                        *ret = i;
                        return 1;
                }
        }
        md_err(c, mx_line(n), subject, sec,
               "%s=\"%s\" is not one of the values the standard defines", name, md_show(s, buf));
        return -1;
}

int md_attr_u32_list(struct md_ctx *c, const xmlNode *n, const char *subject, const char *name,
                     const char *sec, uint32_t **ret, size_t *ret_n)
{
        const char *s = md_attr(c, n, name);
        struct md_values l = { .n = 0 };
        size_t bad_at = 0, max = c->lim.max_array_elements;
        uint32_t *v;
        int r;

        if (!s)
                return 0;
        while (mv_is_space(*s))
                s++;
        if (!*s) {
                *ret = NULL;
                *ret_n = 0;
                return 1;
        }
        r = mv_list(MD_UINT32, s, max, &l, &bad_at);
        if (r == -E2BIG) {
                md_err(c, mx_line(n), subject, sec, "%s lists more than %zu value references",
                       name, max);
                return -1;
        }
        if (r < 0)
                return bad(c, n, subject, name, sec, s, r, "list of value references");
        v = malloc(l.n * sizeof(*v));
        if (!v) {
                mv_free(MD_UINT32, &l);
                c->nomem = true;
                return -1;
        }
        for (size_t i = 0; i < l.n; i++)
                v[i] = (uint32_t)l.u[i];
        *ret = v;
        *ret_n = l.n;
        mv_free(MD_UINT32, &l);
        return 1;
}
