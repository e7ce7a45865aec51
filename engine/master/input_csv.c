/*
 * input_csv: the reader of input files (see input_csv.h): the file read
 * whole into one buffer, split into RFC 4180 fields in place (quoted
 * fields unescaped, each field NUL-terminated where its delimiter was),
 * the header resolved against the scenario (input_csv_header.c), every
 * value parsed for its column's type.
 *
 * DESIGN: nothing is allocated in proportion to the file before its size
 * was checked; rows grow by doubling, bounded by max_rows and
 * max_values. A field's position is the line and byte column where it
 * starts, so a message points at it in an editor.
 */
#include "engine/master/input_csv_int.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void input_csv_limits_default(struct input_csv_limits *l)
{
        *l = (struct input_csv_limits){
                .max_bytes = INPUT_CSV_MAX_BYTES,
                .max_rows = INPUT_CSV_MAX_ROWS,
                .max_columns = INPUT_CSV_MAX_COLUMNS,
                .max_values = INPUT_CSV_MAX_VALUES,
        };
}

int icsv_err(struct icsv *c, size_t line, size_t col, const char *fmt, ...)
{
        va_list ap;
        int n = 0;

        if (!c->err_line) {
                c->err_line = line;
                c->err_col = col;
        }
        if (line)
                n = snprintf(c->msg, sizeof(c->msg), "%s:%zu:%zu: ", c->file, line, col);
        else
                n = snprintf(c->msg, sizeof(c->msg), "%s: ", c->file);
        if (n < 0 || (size_t)n >= sizeof(c->msg))
                return -EINVAL;
        va_start(ap, fmt);
        vsnprintf(c->msg + n, sizeof(c->msg) - (size_t)n, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

/* The record delimiter (or the end) at r: 0 and *ret_last, or -EINVAL. */
static int delimiter(struct icsv *c, char *r, struct icsv_field *f, bool *ret_last)
{
        if (r == c->end) {
                c->p = r;
                *ret_last = true;
        } else if (*r == ',') {
                c->p = r + 1;
                *ret_last = false;
        } else if (*r == '\n' || (*r == '\r' && r + 1 < c->end && r[1] == '\n')) {
                c->p = r + (*r == '\r' ? 2 : 1);
                c->line++;
                c->line_start = c->p;
                *ret_last = true;
        } else if (*r == '\r') {
                return icsv_err(c, c->line, (size_t)(r - c->line_start) + 1,
                                "a carriage return not followed by a line feed");
        } else {
                return icsv_err(c, f->line, f->col, "text after the closing quote of a field");
        }
        return 0;
}

int icsv_field(struct icsv *c, struct icsv_field *f, bool *ret_last)
{
        char *r = c->p, *w;
        int e;

        f->line = c->line;
        f->col = (size_t)(c->p - c->line_start) + 1;
        f->s = c->p;
        if (r < c->end && *r == '"') {
                /* Unescape in place: w never passes r, so the NUL goes where a quote was. */
                for (w = c->p, r++;; r++) {
                        if (r == c->end)
                                return icsv_err(c, f->line, f->col, "a quoted field is not closed");
                        if (*r == '"') {
                                if (r + 1 < c->end && r[1] == '"') {
                                        *w++ = *r++;
                                        continue;
                                }
                                break;
                        }
                        if (*r == '\n') {
                                c->line++;
                                c->line_start = r + 1;
                        }
                        *w++ = *r;
                }
                e = delimiter(c, r + 1, f, ret_last);
                *w = '\0';
                return e;
        }
        while (r < c->end && *r != ',' && *r != '\n' && *r != '\r') {
                if (*r == '"')
                        return icsv_err(c, f->line, (size_t)(r - c->line_start) + 1,
                                        "a quote inside a field that does not start with one");
                r++;
        }
        e = delimiter(c, r, f, ret_last);
        *r = '\0';      /* the delimiter, or the byte after the data */
        return e;
}

/* Skip the line breaks at p; true when only line breaks were left (the end of the data). */
static bool at_end(struct icsv *c)
{
        const char *q = c->p;

        while (q < c->end && (*q == '\n' || *q == '\r'))
                q++;
        return q == c->end;
}

/* A number's text without surrounding blanks, or NULL when empty. */
static const char *trim(char *s)
{
        size_t n;

        while (*s == ' ' || *s == '\t')
                s++;
        n = strlen(s);
        while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
                s[--n] = '\0';
        return n ? s : NULL;
}

static bool parse_double(const char *s, double *ret)
{
        char *e;

        errno = 0;
        *ret = strtod(s, &e);
        return e != s && !*e && isfinite(*ret);
}

static int parse_signed(const char *s, int64_t lo, int64_t hi, int64_t *ret)
{
        char *e;
        long long x;

        errno = 0;
        x = strtoll(s, &e, 10);
        if (e == s || *e)
                return -EINVAL;
        if (errno == ERANGE || x < lo || x > hi)
                return -ERANGE;
        *ret = x;
        return 0;
}

static int parse_unsigned(const char *s, uint64_t hi, uint64_t *ret)
{
        const char *sign = s;
        char *e;
        unsigned long long x;
        int64_t neg;

        /*
         * strtoull() would wrap "-1" around, also after the white space it
         * skips ("\v-1"): a sign is a negative number, out of range.
         */
        while (isspace((unsigned char)*sign))
                sign++;
        if (*sign == '-') {
                int r = parse_signed(s, INT64_MIN, 0, &neg);

                if (r < 0)
                        return r;
                if (neg != 0)
                        return -ERANGE;
                *ret = 0;
                return 0;
        }
        errno = 0;
        x = strtoull(s, &e, 10);
        if (e == s || *e)
                return -EINVAL;
        if (errno == ERANGE || x > hi)
                return -ERANGE;
        *ret = x;
        return 0;
}

static int int_value(enum md_type t, const char *s, union input_value *v)
{
        switch (t) {
        case MD_INT8: return parse_signed(s, INT8_MIN, INT8_MAX, &v->i);
        case MD_INT16: return parse_signed(s, INT16_MIN, INT16_MAX, &v->i);
        case MD_INT32: return parse_signed(s, INT32_MIN, INT32_MAX, &v->i);
        case MD_INT64: return parse_signed(s, INT64_MIN, INT64_MAX, &v->i);
        case MD_UINT8: return parse_unsigned(s, UINT8_MAX, &v->u);
        case MD_UINT16: return parse_unsigned(s, UINT16_MAX, &v->u);
        case MD_UINT32: return parse_unsigned(s, UINT32_MAX, &v->u);
        default: return parse_unsigned(s, UINT64_MAX, &v->u);
        }
}

static int value(struct icsv *c, const struct icsv_field *f, const struct input_column *col,
                 union input_value *v)
{
        const char *tn = md_type_name(col->type), *s;
        int r;

        if (col->type == MD_STRING) {
                v->s = f->s;
                c->strings = true;
                return 0;
        }
        s = trim(f->s);
        if (!s)
                return icsv_err(c, f->line, f->col, "'%s': an empty value", col->name);
        if (col->type == MD_BOOLEAN) {
                if (!strcmp(s, "true") || !strcmp(s, "1"))
                        v->b = true;
                else if (!strcmp(s, "false") || !strcmp(s, "0"))
                        v->b = false;
                else
                        return icsv_err(c, f->line, f->col, "'%s': '%s' is not a Boolean "
                                        "(true, false, 1 or 0)", col->name, s);
                return 0;
        }
        if (md_type_is_float(col->type)) {
                if (!parse_double(s, &v->f))
                        return icsv_err(c, f->line, f->col, "'%s': '%s' is not a finite %s",
                                        col->name, s, tn);
                if (col->type == MD_FLOAT32 && fabs(v->f) > FLT_MAX)
                        return icsv_err(c, f->line, f->col, "'%s': '%s' is out of the range "
                                        "of Float32", col->name, s);
                return 0;
        }
        r = int_value(col->type, s, v);
        if (r == -EINVAL)
                return icsv_err(c, f->line, f->col, "'%s': '%s' is not a whole number (%s)",
                                col->name, s, tn);
        if (r < 0)
                return icsv_err(c, f->line, f->col, "'%s': '%s' is out of the range of %s",
                                col->name, s, tn);
        return 0;
}

/* Room for one more row. */
static int grow(struct icsv *c, struct input_table *t, size_t *cap)
{
        size_t n = t->n_rows, want;
        union input_value *v;
        double *tm;

        if (n == c->lim.max_rows)
                return icsv_err(c, c->line, 1, "more than %zu rows", c->lim.max_rows);
        if (t->n_cols && n + 1 > c->lim.max_values / t->n_cols)
                return icsv_err(c, c->line, 1, "more than %zu values", c->lim.max_values);
        if (n < *cap)
                return 0;
        want = *cap ? *cap * 2 : 256;
        if (want > c->lim.max_rows)
                want = c->lim.max_rows;
        if (t->n_cols && want > c->lim.max_values / t->n_cols)
                want = c->lim.max_values / t->n_cols;
        tm = realloc(t->time, want * sizeof(*tm));
        if (!tm)
                return -ENOMEM;
        t->time = tm;
        v = realloc(t->vals, want * (t->n_cols ? t->n_cols : 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        t->vals = v;
        *cap = want;
        return 0;
}

static int row(struct icsv *c, struct input_table *t, size_t *cap)
{
        size_t n = t->n_rows, k = 0;
        struct icsv_field f;
        bool last = false;
        const char *s;
        int r;

        r = grow(c, t, cap);
        while (r == 0 && !last) {
                r = icsv_field(c, &f, &last);
                if (r < 0)
                        break;
                if (k > t->n_cols)
                        return icsv_err(c, f.line, f.col, "more fields than the header's %zu",
                                        t->n_cols + 1);
                if (k > 0) {
                        r = value(c, &f, &t->cols[k - 1], input_table_at(t, n, k - 1));
                        k++;
                        continue;
                }
                s = trim(f.s);
                if (!s || !parse_double(s, &t->time[n]))
                        return icsv_err(c, f.line, f.col, "time '%s' is not a finite number",
                                        s ? s : "");
                if (n && t->time[n] < t->time[n - 1])
                        return icsv_err(c, f.line, f.col, "time %s is before the previous row's "
                                        "%.17g: times must not decrease", s, t->time[n - 1]);
                k++;
        }
        if (r < 0)
                return r;
        if (k != t->n_cols + 1)
                return icsv_err(c, f.line, f.col, "%zu fields, the header has %zu", k,
                                t->n_cols + 1);
        t->n_rows++;
        return 0;
}

static int parse(struct icsv *c, const struct scenario *sc, struct input_table **ret)
{
        struct input_table *t = NULL;
        size_t cap = 0;
        int r;

        if (c->end - c->p >= 3 && !memcmp(c->p, "\xEF\xBB\xBF", 3))
                c->p += 3;      /* a UTF-8 byte order mark, as spreadsheets write */
        c->line_start = c->p;
        r = icsv_header(c, sc, &t);
        while (r == 0 && !at_end(c)) {
                if (*c->p == '\n' || *c->p == '\r')
                        r = icsv_err(c, c->line, 1, "an empty line");
                else
                        r = row(c, t, &cap);
        }
        if (r == 0 && t->n_rows == 0)
                r = icsv_err(c, 0, 0, "no rows after the header");
        if (r < 0) {
                input_table_free(t);
                return r;
        }
        if (c->strings) {
                t->text = c->buf;       /* String values point into it */
                c->buf = NULL;
        }
        *ret = t;
        return 0;
}

static int finish(struct icsv *c, int r, char **ret_message)
{
        free(c->buf);
        /* What the client may not read itself is not shown to it, not even a field. */
        if (r == -EINVAL && c->opaque)
                snprintf(c->msg, sizeof(c->msg), "%s:%zu:%zu: not a valid input file (its content "
                         "is not quoted: the file is not readable by everyone)", c->file,
                         c->err_line, c->err_col);
        if (r < 0 && ret_message)
                *ret_message = r == -ENOMEM ? NULL : strdup(c->msg);
        return r;
}

static void setup(struct icsv *c, const char *name, const struct input_csv_limits *lim)
{
        *c = (struct icsv){ .file = name, .line = 1 };
        if (lim)
                c->lim = *lim;
        else
                input_csv_limits_default(&c->lim);
}

/* Reject NUL bytes: Strings would be cut at them. */
static int no_nul(struct icsv *c, size_t len)
{
        const char *z = memchr(c->buf, '\0', len), *ls = c->buf;
        size_t line = 1;

        if (!z)
                return 0;
        for (const char *q = c->buf; q < z; q++)
                if (*q == '\n') {
                        line++;
                        ls = q + 1;
                }
        return icsv_err(c, line, (size_t)(z - ls) + 1, "a NUL byte");
}

static int run(struct icsv *c, size_t len, const struct scenario *sc, struct input_table **ret)
{
        int r;

        c->buf[len] = '\0';
        c->p = c->line_start = c->buf;
        c->end = c->buf + len;
        r = no_nul(c, len);
        return r < 0 ? r : parse(c, sc, ret);
}

int input_csv_parse(const char *name, const char *data, size_t len, const struct scenario *sc,
                    const struct input_csv_limits *lim, struct input_table **ret,
                    char **ret_message)
{
        struct icsv c;

        setup(&c, name, lim);
        if (len > c.lim.max_bytes) {
                snprintf(c.msg, sizeof(c.msg), "%s: larger than %zu bytes", name, c.lim.max_bytes);
                return finish(&c, -EFBIG, ret_message);
        }
        c.buf = malloc(len + 1);
        if (!c.buf)
                return finish(&c, -ENOMEM, ret_message);
        if (len)
                memcpy(c.buf, data, len);
        return finish(&c, run(&c, len, sc, ret), ret_message);
}

static int slurp(struct icsv *c, int fd, size_t *ret_len)
{
        struct stat st;
        size_t len = 0;
        ssize_t n;

        if (fstat(fd, &st) < 0) {
                int e = -errno;

                icsv_err(c, 0, 0, "%s", strerror(-e));
                return e;
        }
        if (!S_ISREG(st.st_mode))
                return icsv_err(c, 0, 0, "not a regular file");
        if ((uint64_t)st.st_size > c->lim.max_bytes) {
                icsv_err(c, 0, 0, "larger than %zu bytes", c->lim.max_bytes);
                return -EFBIG;
        }
        c->buf = malloc((size_t)st.st_size + 1);
        if (!c->buf)
                return -ENOMEM;
        /* A file that grows meanwhile is read as far as fstat() saw it. */
        while (len < (size_t)st.st_size) {
                n = read(fd, c->buf + len, (size_t)st.st_size - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int e = -errno;

                        icsv_err(c, 0, 0, "%s", strerror(-e));
                        return e;
                }
                if (n == 0)
                        break;
                len += (size_t)n;
        }
        *ret_len = len;
        return 0;
}

int input_csv_read_fd(int fd, const char *name, bool quote, const struct scenario *sc,
                      const struct input_csv_limits *lim, struct input_table **ret,
                      char **ret_message)
{
        struct icsv c;
        size_t len = 0;
        int r;

        setup(&c, name, lim);
        c.opaque = !quote;
        r = slurp(&c, fd, &len);
        if (r == 0)
                r = run(&c, len, sc, ret);
        return finish(&c, r, ret_message);
}

int input_csv_read(const char *path, const struct scenario *sc,
                   const struct input_csv_limits *lim, struct input_table **ret,
                   char **ret_message)
{
        int fd, r;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                r = -errno;
                if (ret_message && asprintf(ret_message, "cannot read '%s': %s", path,
                                            strerror(-r)) < 0)
                        *ret_message = NULL;
                return r;
        }
        r = input_csv_read_fd(fd, path, true, sc, lim, ret, ret_message);
        close(fd);
        return r;
}
