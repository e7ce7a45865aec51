/*
 * diag: an append-only list of problems with a cap, so a hostile archive with
 * a million bad entries costs bounded memory.
 */
#include "diag.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIAG_DEFAULT_MAX 1000

void diag_list_init(struct diag_list *l, size_t max)
{
        *l = (struct diag_list){ .max = max ? max : DIAG_DEFAULT_MAX };
}

void diag_list_fini(struct diag_list *l)
{
        if (!l)
                return;
        for (size_t i = 0; i < l->n; i++) {
                free(l->v[i].file);
                free(l->v[i].subject);
                free(l->v[i].message);
        }
        free(l->v);
        *l = (struct diag_list){ .max = l->max };
}

static char *dup_or_null(const char *s)
{
        return s ? strdup(s) : NULL;
}

int diag_addv(struct diag_list *l, enum diag_severity sev, const char *file, int line,
              const char *subject, const char *fmt, va_list ap)
{
        struct diag d = { .severity = sev, .line = line };
        char *msg = NULL;

        if (l->n >= l->max)
                goto out_drop;
        if (l->n == l->cap) {
                size_t cap = l->cap ? 2 * l->cap : 16;
                struct diag *v = realloc(l->v, cap * sizeof(*v));

                if (!v)
                        goto out_drop;
                l->v = v;
                l->cap = cap;
        }
        if (vasprintf(&msg, fmt, ap) < 0)
                goto out_drop;
        d.message = msg;
        d.file = dup_or_null(file);
        d.subject = dup_or_null(subject);
        if ((file && !d.file) || (subject && !d.subject)) {
                free(d.file);
                free(d.subject);
                free(d.message);
                goto out_drop;
        }
        l->v[l->n++] = d;
        return 0;

out_drop:
        /* Never lost from the counts, even when not stored. */
        if (sev == DIAG_ERROR)
                l->dropped++;
        else if (sev == DIAG_WARNING)
                l->dropped_warnings++;
        return l->n >= l->max ? 0 : -ENOMEM;
}

int diag_add(struct diag_list *l, enum diag_severity sev, const char *file, int line,
             const char *subject, const char *fmt, ...)
{
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = diag_addv(l, sev, file, line, subject, fmt, ap);
        va_end(ap);
        return r;
}

size_t diag_errors(const struct diag_list *l)
{
        size_t n = l->dropped;

        for (size_t i = 0; i < l->n; i++)
                n += l->v[i].severity == DIAG_ERROR;
        return n;
}

size_t diag_warnings(const struct diag_list *l)
{
        size_t n = l->dropped_warnings;

        for (size_t i = 0; i < l->n; i++)
                n += l->v[i].severity == DIAG_WARNING;
        return n;
}

size_t diag_promote(struct diag_list *l, size_t from, const char *note)
{
        size_t n = 0;

        for (size_t i = from; i < l->n; i++) {
                struct diag *d = &l->v[i];
                char *msg;

                if (d->severity != DIAG_WARNING)
                        continue;
                d->severity = DIAG_ERROR;
                n++;
                /* Without memory for the note the error stands without it. */
                if (note && asprintf(&msg, "%s; %s", d->message, note) >= 0) {
                        free(d->message);
                        d->message = msg;
                }
        }
        /* Those only counted are errors too (also any counted before 'from'). */
        n += l->dropped_warnings;
        l->dropped += l->dropped_warnings;
        l->dropped_warnings = 0;
        return n;
}

void diag_count_unstored(struct diag_list *l, const struct diag_list *from)
{
        l->dropped += from->dropped;
        l->dropped_warnings += from->dropped_warnings;
}

int diag_format(const struct diag *d, char *buf, size_t size)
{
        char where[64] = "";

        if (d->line > 0)
                snprintf(where, sizeof(where), ":%d", d->line);
        return snprintf(buf, size, "%s%s%s%s%s%s%s",
                        d->file ? d->file : "", where, d->file ? ": " : "",
                        d->subject ? "'" : "", d->subject ? d->subject : "",
                        d->subject ? "': " : "", d->message);
}
