/*
 * mat4_csv: CSV to MAT v4, streamed (mat4_csv.h).
 *
 * DESIGN: bytes are cut into lines as they come; only the line being
 * completed is held (at most LINE_MAX bytes), so a results file of any
 * length converts in bounded memory. The header names the columns (RFC
 * 4180 quoting, as the recorder writes it); the MAT file is opened once
 * the header is complete, with each column's unit, description and
 * parameter flag looked up by name in the caller's list (sorted once,
 * searched per column). Values are read in the C locale, as the recorder
 * wrote them ("inf", "nan" included). A text column (String or Binary,
 * by the caller's list: a Binary's hex may look like a number, so it is
 * never guessed from the values) is passed over unread.
 */
#include <errno.h>
#include <locale.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "engine/record/mat4_csv.h"

#define LINE_MAX_BYTES  (64u << 20)
#define READ_CHUNK      65536   /* bytes of CSV read at a time by mat4_csv_convert_fd() */

struct mat4_csv {
        int fd;
        int err;
        struct mat4_var *meta;          /* sorted by name */
        size_t n_meta;
        struct mat4 *m;
        size_t ncols;                   /* after time */
        bool *skip;                     /* per column after time: text, left out */
        size_t n_left_out;
        char left_out[MAT4_LIST_MAX];   /* their names (mat4_list_add()) */
        bool left_out_cut;              /* "..." ends it: names did not fit */
        bool quoted;                    /* the bytes so far end inside a quoted field */
        double *vals;
        uint64_t line;                  /* lines read */
        char *buf;
        size_t len, cap;
        locale_t c_locale;
};

static int fail(struct mat4_csv *c, int r, char *err, size_t errlen, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));

static int fail(struct mat4_csv *c, int r, char *err, size_t errlen, const char *fmt, ...)
{
        va_list ap;

        if (err && errlen) {
                va_start(ap, fmt);
                vsnprintf(err, errlen, fmt, ap);
                va_end(ap);
        }
        return c->err = r;
}

static int by_name(const void *a, const void *b)
{
        return strcmp(((const struct mat4_var *)a)->name, ((const struct mat4_var *)b)->name);
}

int mat4_csv_new(int fd, const struct mat4_var *meta, size_t n_meta, struct mat4_csv **ret)
{
        struct mat4_csv *c = calloc(1, sizeof(*c));

        if (!c)
                return -ENOMEM;
        c->fd = fd;
        c->c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
        c->meta = n_meta ? calloc(n_meta, sizeof(*c->meta)) : NULL;
        if (c->c_locale == (locale_t)0 || (n_meta && !c->meta)) {
                if (c->c_locale != (locale_t)0)
                        freelocale(c->c_locale);
                free(c->meta);
                free(c);
                return -ENOMEM;
        }
        /* The array only: its strings are the caller's until mat4_csv_finish(). */
        for (size_t i = 0; i < n_meta; i++) {
                if (!meta[i].name)
                        continue;
                c->meta[c->n_meta++] = meta[i];
        }
        if (c->n_meta)
                qsort(c->meta, c->n_meta, sizeof(*c->meta), by_name);
        *ret = c;
        return 0;
}

/* Split one CSV line into fields (RFC 4180); *ret_n fields in place, NUL-terminated. */
static int split(char *s, size_t len, char ***ret, size_t *ret_n)
{
        size_t n = 0, cap = 16;
        char **v = malloc(cap * sizeof(*v)), *w = s, *end = s + len;

        if (!v)
                return -ENOMEM;
        for (char *p = s;;) {
                if (n == cap) {
                        char **g = realloc(v, (cap *= 2) * sizeof(*v));

                        if (!g) {
                                free(v);
                                return -ENOMEM;
                        }
                        v = g;
                }
                v[n++] = w;
                if (p < end && *p == '"') {
                        for (p++;; p++) {
                                if (p >= end) {
                                        free(v);
                                        return -EBADMSG;
                                }
                                if (*p == '"' && p + 1 < end && p[1] == '"') {
                                        *w++ = '"';
                                        p++;
                                } else if (*p == '"') {
                                        p++;
                                        break;
                                } else {
                                        *w++ = *p;
                                }
                        }
                        if (p < end && *p != ',') {
                                free(v);
                                return -EBADMSG;
                        }
                } else {
                        while (p < end && *p != ',')
                                *w++ = *p++;
                }
                if (p >= end) {
                        *w = '\0';
                        break;
                }
                *w++ = '\0';
                p++;
                /* A field's text only ever shrinks (quotes removed): w never passes p. */
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

static const struct mat4_var *find(const struct mat4_csv *c, const char *name)
{
        struct mat4_var key = { .name = name };

        return c->n_meta ? bsearch(&key, c->meta, c->n_meta, sizeof(key), by_name) : NULL;
}

/* The column's own entry, else its array's ("x" for "x[2,1]"). */
static const struct mat4_var *meta_of(const struct mat4_csv *c, const char *name)
{
        const struct mat4_var *m = find(c, name);
        size_t n = strlen(name);
        const char *open;
        char *base;

        if (m || n < 3 || name[n - 1] != ']' || !(open = strrchr(name, '[')) || open == name)
                return m;
        base = strndup(name, (size_t)(open - name));
        if (!base)
                return NULL;
        m = find(c, base);
        free(base);
        return m;
}

bool mat4_list_add(char *buf, size_t size, bool cut, const char *name)
{
        size_t have, need = strlen(name) + 2;

        if (cut)
                return true;
        have = strlen(buf);
        /* Room for ", ..." and the NUL after it, whatever comes next. */
        if (have + need + 6 > size) {
                if (have + 6 <= size)
                        strcat(buf, have ? ", ..." : "...");
                return true;
        }
        if (have)
                strcat(buf, ", ");
        strcat(buf, name);
        return false;
}

/* Note a text column left out. */
static void leave_out(struct mat4_csv *c, const char *name)
{
        c->n_left_out++;
        c->left_out_cut = mat4_list_add(c->left_out, sizeof(c->left_out), c->left_out_cut, name);
}

size_t mat4_csv_left_out(const struct mat4_csv *c, char *buf, size_t size)
{
        if (size)
                snprintf(buf, size, "%s", c ? c->left_out : "");
        return c ? c->n_left_out : 0;
}

static int header_line(struct mat4_csv *c, char *s, size_t len, char *err, size_t errlen)
{
        struct mat4_var *vars;
        char **f;
        size_t n, kept = 0;
        int r = split(s, len, &f, &n);

        if (r == -ENOMEM)
                return fail(c, r, err, errlen, "out of memory");
        if (r < 0 || n < 1 || strcmp(f[0], "time")) {
                if (r == 0)
                        free(f);
                return fail(c, -EBADMSG, err, errlen, "line 1: not a results header "
                            "(\"time,...\")");
        }
        c->ncols = n - 1;
        vars = calloc(n, sizeof(*vars));
        c->vals = calloc(n, sizeof(*c->vals));
        c->skip = calloc(n, sizeof(*c->skip));
        if (!vars || !c->vals || !c->skip) {
                free(vars);
                free(f);
                return fail(c, -ENOMEM, err, errlen, "out of memory");
        }
        for (size_t i = 1; i < n; i++) {
                const struct mat4_var *m = meta_of(c, f[i]);

                if (m && m->text) {
                        c->skip[i - 1] = true;
                        leave_out(c, f[i]);
                        continue;
                }
                vars[kept] = m ? *m : (struct mat4_var){ 0 };
                vars[kept++].name = f[i];
        }
        if (c->ncols && !kept) {
                free(vars);
                free(f);
                return fail(c, -ENODATA, err, errlen, MAT4_ALL_TEXT);
        }
        /* The file is touched only now that it will hold something (EINVAL: not a regular file). */
        if (ftruncate(c->fd, 0) < 0 && errno != EINVAL) {
                r = -errno;
                free(vars);
                free(f);
                return fail(c, r, err, errlen, "cannot write the .mat file: %s", strerror(-r));
        }
        r = mat4_open(c->fd, vars, kept, &c->m);
        free(vars);
        free(f);
        if (r < 0)
                return fail(c, r, err, errlen, "cannot write the .mat file: %s", strerror(-r));
        return 0;
}

static int row_line(struct mat4_csv *c, char *s, size_t len, char *err, size_t errlen)
{
        char **f, *end;
        size_t n;
        double t = 0; /* n >= 1 below: set by the first column */
        int r = split(s, len, &f, &n);

        if (r == -ENOMEM)
                return fail(c, r, err, errlen, "out of memory");
        if (r < 0 || n != c->ncols + 1) {
                if (r == 0)
                        free(f);
                return fail(c, -EBADMSG, err, errlen, "line %llu: %s", (unsigned long long)c->line,
                            r < 0 ? "not a CSV row" : "not as many values as the header names");
        }
        for (size_t i = 0, k = 0; i < n; i++) {
                double v;

                if (i > 0 && c->skip[i - 1])
                        continue;
                v = strtod_l(f[i], &end, c->c_locale);
                if (end == f[i] || *end) {
                        r = fail(c, -EBADMSG, err, errlen, "line %llu, column %zu: '%.40s' is "
                                 "not a number (a .mat file holds numbers only)",
                                 (unsigned long long)c->line, i + 1, f[i]);
                        free(f);
                        return r;
                }
                if (i == 0)
                        t = v;
                else
                        c->vals[k++] = v;
        }
        free(f);
        r = mat4_row(c->m, t, c->vals);
        if (r < 0)
                return fail(c, r, err, errlen, "cannot write the .mat file: %s", strerror(-r));
        return 0;
}

static int line_done(struct mat4_csv *c, char *s, size_t len, char *err, size_t errlen)
{
        if (len && s[len - 1] == '\r')
                len--;
        c->line++;
        return c->line == 1 ? header_line(c, s, len, err, errlen) : row_line(c, s, len, err, errlen);
}

/*
 * The end of the line at p: the first newline outside a quoted field
 * (a String may hold newlines; the state carries over from piece to
 * piece in c->quoted), or NULL when it is not in [p, end).
 */
static const char *line_end(struct mat4_csv *c, const char *p, const char *end)
{
        for (; p < end; p++) {
                if (*p == '"')
                        c->quoted = !c->quoted;         /* "" inside a field toggles twice */
                else if (*p == '\n' && !c->quoted)
                        return p;
        }
        return NULL;
}

int mat4_csv_feed(struct mat4_csv *c, const void *data, size_t len, char *err, size_t errlen)
{
        const char *p = data, *end = p + len;

        if (c->err)
                return fail(c, c->err, err, errlen, "the conversion failed before");
        while (p < end) {
                const char *nl = line_end(c, p, end);
                size_t k = (size_t)((nl ? nl : end) - p);
                int r;

                if (c->len + k > LINE_MAX_BYTES)
                        return fail(c, -E2BIG, err, errlen, "line %llu: longer than %u bytes",
                                    (unsigned long long)c->line + 1, LINE_MAX_BYTES);
                if (c->len + k + 1 > c->cap) {
                        size_t cap = c->cap ? c->cap : 4096;
                        char *g;

                        while (cap < c->len + k + 1)
                                cap *= 2;
                        g = realloc(c->buf, cap);
                        if (!g)
                                return fail(c, -ENOMEM, err, errlen, "out of memory");
                        c->buf = g;
                        c->cap = cap;
                }
                memcpy(c->buf + c->len, p, k);
                c->len += k;
                p += k;
                if (!nl)
                        break;
                p++;
                c->buf[c->len] = '\0';
                r = line_done(c, c->buf, c->len, err, errlen);
                c->len = 0;
                if (r < 0)
                        return r;
        }
        return 0;
}

int mat4_csv_finish(struct mat4_csv *c, uint64_t *ret_rows, char *err, size_t errlen)
{
        uint64_t rows = 0;
        int r;

        if (!c)
                return 0;
        r = c->err;
        if (!r && c->len) {
                c->buf[c->len] = '\0';
                r = line_done(c, c->buf, c->len, err, errlen);
        }
        if (!r && !c->m)
                r = fail(c, -EBADMSG, err, errlen, "no results header: the CSV is empty");
        if (c->m) {
                int e = mat4_close(c->m, &rows);

                if (!r && e < 0)
                        r = fail(c, e, err, errlen, "cannot write the .mat file: %s",
                                 strerror(-e));
        }
        if (!r && ret_rows)
                *ret_rows = rows;
        free(c->meta);
        free(c->vals);
        free(c->skip);
        free(c->buf);
        freelocale(c->c_locale);
        free(c);
        return r;
}

int mat4_csv_convert_fd(int in_fd, off_t from, int out_fd, const struct mat4_var *meta,
                        size_t n_meta, char *err, size_t errlen)
{
        struct mat4_csv *c = NULL;
        char *buf = malloc(READ_CHUNK);
        ssize_t n;
        int r = buf ? mat4_csv_new(out_fd, meta, n_meta, &c) : -ENOMEM;

        if (r < 0) {
                if (err && errlen)
                        snprintf(err, errlen, "out of memory");
                goto out;
        }
        while ((n = pread(in_fd, buf, READ_CHUNK, from)) != 0) {
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int e = errno;

                        r = fail(c, -e, err, errlen, "cannot read the CSV back: %s", strerror(e));
                        goto out;
                }
                from += n;
                r = mat4_csv_feed(c, buf, (size_t)n, err, errlen);
                if (r < 0)
                        goto out;
        }
        r = mat4_csv_finish(c, NULL, err, errlen);
        c = NULL;
out:
        if (c)
                (void) mat4_csv_finish(c, NULL, NULL, 0);
        free(buf);
        return r;
}

bool mat4_wanted(const char *path)
{
        size_t n = path ? strlen(path) : 0;

        return n > 4 && !strcasecmp(path + n - 4, ".mat");
}
