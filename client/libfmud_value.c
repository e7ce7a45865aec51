/*
 * libfmud_value: values as written on a command line, to and from struct
 * pv (fmud.h). The parsed tree is heap nodes (fmud_value_free() walks it);
 * values are small, so clarity wins over one allocation.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmud.h"

struct parser {
        const char *s;
        size_t pos;
        char *err;
        size_t errlen;
};

static int perr(struct parser *p, int r, const char *what)
{
        if (p->err && p->errlen)
                snprintf(p->err, p->errlen, "%s at character %zu", what, p->pos + 1);
        return r;
}

static void skip_blank(struct parser *p)
{
        while (p->s[p->pos] && isspace((unsigned char)p->s[p->pos]))
                p->pos++;
}

static int set_str(struct pv *v, const char *s, size_t len)
{
        char *c;

        if (len > PROTO_MAX_STR)
                return -E2BIG;
        c = malloc(len + 1);
        if (!c)
                return -ENOMEM;
        memcpy(c, s, len);
        c[len] = '\0';
        *v = (struct pv){ .type = PV_STR, .s = { c, (uint32_t)len } };
        return 0;
}

/* A "quoted" string at p->pos. */
static int quoted(struct parser *p, struct pv *v)
{
        size_t n = 0, cap = 16;
        char *buf = malloc(cap), *nb;

        if (!buf)
                return -ENOMEM;
        p->pos++;
        for (;;) {
                char ch = p->s[p->pos];

                if (!ch) {
                        free(buf);
                        return perr(p, -EINVAL, "unterminated quoted string");
                }
                p->pos++;
                if (ch == '"')
                        break;
                if (ch == '\\') {
                        char e = p->s[p->pos];

                        switch (e) {
                        case '"': case '\\': ch = e; break;
                        case 'n': ch = '\n'; break;
                        case 't': ch = '\t'; break;
                        default:
                                free(buf);
                                return perr(p, -EINVAL, "unknown escape in quoted string");
                        }
                        p->pos++;
                }
                if (n + 1 >= cap) {
                        cap *= 2;
                        nb = realloc(buf, cap);
                        if (!nb) {
                                free(buf);
                                return -ENOMEM;
                        }
                        buf = nb;
                }
                buf[n++] = ch;
        }
        buf[n] = '\0';
        *v = (struct pv){ .type = PV_STR, .s = { buf, (uint32_t)n } };
        return 0;
}

static int hex_digit(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* The hex digits s[0..len) of a "hex:" word: PV_BIN, two digits per byte. */
static int binary(struct parser *p, const char *s, size_t len, struct pv *v)
{
        unsigned char *b;

        if (len % 2)
                return perr(p, -EINVAL, "a Binary value needs two hex digits per byte after 'hex:'");
        if (len / 2 > PROTO_MAX_STR)
                return perr(p, -EINVAL, "a Binary value longer than the protocol allows");
        b = malloc(len / 2 + 1);
        if (!b)
                return -ENOMEM;
        for (size_t i = 0; i < len / 2; i++) {
                int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);

                if (hi < 0 || lo < 0) {
                        free(b);
                        return perr(p, -EINVAL, "a Binary value needs two hex digits per byte "
                                    "after 'hex:'");
                }
                b[i] = (unsigned char)(hi << 4 | lo);
        }
        *v = (struct pv){ .type = PV_BIN, .s = { (const char *)b, (uint32_t)(len / 2) } };
        return 0;
}

static bool all_digits(const char *s, size_t len, bool hex)
{
        if (!len)
                return false;
        for (size_t i = 0; i < len; i++)
                if (!(hex ? isxdigit((unsigned char)s[i]) : isdigit((unsigned char)s[i])))
                        return false;
        return true;
}

/* A bare word s[0..len): bool, integer, float, Binary (hex:...) or string. */
static int word(struct parser *p, const char *s, size_t len, struct pv *v)
{
        char buf[128], *end;
        size_t off;
        bool neg, hex;

        if (len >= 4 && !strncmp(s, "hex:", 4))
                return binary(p, s + 4, len - 4, v);
        if (len == 4 && !strncmp(s, "true", 4)) {
                *v = (struct pv){ .type = PV_BOOL, .b = true };
                return 0;
        }
        if (len == 5 && !strncmp(s, "false", 5)) {
                *v = (struct pv){ .type = PV_BOOL, .b = false };
                return 0;
        }
        if (len == 0 || len >= sizeof(buf))
                return set_str(v, s, len);
        memcpy(buf, s, len);
        buf[len] = '\0';
        neg = buf[0] == '-';
        off = buf[0] == '-' || buf[0] == '+';
        hex = !strncmp(buf + off, "0x", 2) || !strncmp(buf + off, "0X", 2);
        if (all_digits(buf + off + (hex ? 2 : 0), len - off - (hex ? 2 : 0), hex)) {
                errno = 0;
                if (neg) {
                        long long i = strtoll(buf, &end, 0);

                        if (errno)
                                return perr(p, -EINVAL, "integer out of range");
                        *v = i < 0 ? (struct pv){ .type = PV_INT, .i = i } :
                                     (struct pv){ .type = PV_UINT, .u = 0 };
                } else {
                        unsigned long long u = strtoull(buf + off, &end, 0);

                        if (errno)
                                return perr(p, -EINVAL, "integer out of range");
                        *v = (struct pv){ .type = PV_UINT, .u = u };
                }
                return 0;
        }
        if (!hex && strpbrk(buf, "0123456789iInN")) {
                double d;

                errno = 0;
                d = strtod(buf, &end);
                /* Out of range is still the number asked for: inf, or 0 and denormals. */
                if (end != buf && !*end) {
                        *v = (struct pv){ .type = PV_FLOAT, .f = d };
                        return 0;
                }
        }
        return set_str(v, s, len);
}

static int value(struct parser *p, struct pv *v, unsigned depth, bool in_array);

/* Free what v owns, not v itself. */
static void free_items(struct pv *v)
{
        if (v->type == PV_STR || v->type == PV_BIN)
                free((char *)v->s.ptr);
        if (v->type == PV_ARRAY) {
                for (uint32_t i = 0; i < v->a.n; i++)
                        free_items((struct pv *)&v->a.items[i]);
                free((struct pv *)v->a.items);
        }
        v->type = PV_NIL;
}

static int array(struct parser *p, struct pv *v, unsigned depth)
{
        struct pv *items = NULL, *ni;
        size_t n = 0, cap = 0;
        int r;

        if (depth >= PROTO_MAX_DEPTH)
                return perr(p, -EINVAL, "arrays nested too deep");
        p->pos++;
        skip_blank(p);
        if (p->s[p->pos] == ']') {
                p->pos++;
                *v = (struct pv){ .type = PV_ARRAY };
                return 0;
        }
        for (;;) {
                if (n == cap) {
                        cap = cap ? 2 * cap : 8;
                        ni = n >= PROTO_MAX_ITEMS ? NULL : realloc(items, cap * sizeof(*items));
                        if (!ni) {
                                r = n >= PROTO_MAX_ITEMS ? perr(p, -EINVAL, "too many items") : -ENOMEM;
                                goto out_free;
                        }
                        items = ni;
                }
                r = value(p, &items[n], depth + 1, true);
                if (r < 0)
                        goto out_free;
                n++;
                skip_blank(p);
                if (p->s[p->pos] == ']') {
                        p->pos++;
                        break;
                }
                if (p->s[p->pos] != ',') {
                        r = perr(p, -EINVAL, "expected ',' or ']' in array");
                        goto out_free;
                }
                p->pos++;
        }
        *v = (struct pv){ .type = PV_ARRAY, .a = { items, (uint32_t)n } };
        return 0;

out_free:
        for (size_t i = 0; i < n; i++)
                free_items(&items[i]);
        free(items);
        return r;
}

static int value(struct parser *p, struct pv *v, unsigned depth, bool in_array)
{
        size_t start, end;

        skip_blank(p);
        if (p->s[p->pos] == '"')
                return quoted(p, v);
        if (p->s[p->pos] == '[')
                return array(p, v, depth);
        start = p->pos;
        if (in_array) {
                while (p->s[p->pos] && p->s[p->pos] != ',' && p->s[p->pos] != ']' &&
                       p->s[p->pos] != '[' && p->s[p->pos] != '"')
                        p->pos++;
        } else {
                p->pos += strlen(p->s + p->pos);
        }
        end = p->pos;
        while (end > start && isspace((unsigned char)p->s[end - 1]))
                end--;
        if (in_array && end == start)
                return perr(p, -EINVAL, "empty array item");
        return word(p, p->s + start, end - start, v);
}

int fmud_value_parse(const char *text, struct pv **ret, char *err, size_t errlen)
{
        struct parser p = { .s = text, .err = err, .errlen = errlen };
        struct pv *v;
        int r;

        if (!text || !ret) {
                if (err && errlen)
                        snprintf(err, errlen, "no %s", !text ? "value text" : "place for the value");
                return -EINVAL;
        }
        v = calloc(1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        r = value(&p, v, 0, false);
        if (r == 0) {
                skip_blank(&p);
                if (p.s[p.pos])
                        r = perr(&p, -EINVAL, "unexpected text after the value");
        }
        if (r < 0) {
                if (r == -ENOMEM && err && errlen)
                        snprintf(err, errlen, "out of memory");
                fmud_value_free(v);
                return r;
        }
        *ret = v;
        return 0;
}

void fmud_value_free(struct pv *v)
{
        if (!v)
                return;
        free_items(v);
        free(v);
}

struct out {
        char *buf;
        size_t len, n;
};

static void put(struct out *o, const char *s, size_t len)
{
        for (size_t i = 0; i < len; i++, o->n++)
                if (o->n + 1 < o->len)
                        o->buf[o->n] = s[i];
}

static void putf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct out *o, const char *fmt, ...)
{
        char tmp[64];
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
        va_end(ap);
        if (n > 0)
                put(o, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* The shortest %g form that reads back as d. */
static void put_double(struct out *o, double d)
{
        char tmp[40];

        if (isnan(d)) {
                put(o, "nan", 3);
                return;
        }
        if (isinf(d)) {
                put(o, d < 0 ? "-inf" : "inf", d < 0 ? 4 : 3);
                return;
        }
        /*
         * From 15 digits, which read back as themselves for every normal
         * number and keep a plain form for plain ones ("10", not "1e+01");
         * a subnormal has fewer significant digits, and %.15g gives them
         * with noise after (1e-310 as 9.99999999999997e-311): from 1.
         */
        for (int prec = fpclassify(d) == FP_SUBNORMAL ? 1 : 15; prec <= 17; prec++) {
                snprintf(tmp, sizeof(tmp), "%.*g", prec, d);
                if (strtod(tmp, NULL) == d)
                        break;
        }
        /* Keep it a float when read back: "2" would come back an integer. */
        if (!strpbrk(tmp, ".eEn"))
                strcat(tmp, ".0");
        put(o, tmp, strlen(tmp));
}

static void fmt(struct out *o, const struct pv *v, unsigned depth)
{
        switch (v->type) {
        case PV_NIL: put(o, "nil", 3); break;
        case PV_BOOL: put(o, v->b ? "true" : "false", v->b ? 4 : 5); break;
        case PV_INT: putf(o, "%" PRId64, v->i); break;
        case PV_UINT: putf(o, "%" PRIu64, v->u); break;
        case PV_FLOAT: put_double(o, v->f); break;
        case PV_STR:
                put(o, "\"", 1);
                for (uint32_t i = 0; i < v->s.len; i++) {
                        char ch = v->s.ptr[i];

                        if (ch == '"' || ch == '\\') {
                                put(o, "\\", 1);
                                put(o, &ch, 1);
                        } else if (ch == '\n') {
                                put(o, "\\n", 2);
                        } else if (ch == '\t') {
                                put(o, "\\t", 2);
                        } else if ((unsigned char)ch < 0x20 || ch == 0x7f) {
                                put(o, "?", 1);
                        } else {
                                put(o, &ch, 1);
                        }
                }
                put(o, "\"", 1);
                break;
        case PV_BIN:
                put(o, "hex:", 4);
                for (uint32_t i = 0; i < v->s.len; i++)
                        putf(o, "%02x", (unsigned char)v->s.ptr[i]);
                break;
        case PV_ARRAY:
                if (depth >= PROTO_MAX_DEPTH) {
                        put(o, "[...]", 5);
                        break;
                }
                put(o, "[", 1);
                for (uint32_t i = 0; i < v->a.n; i++) {
                        if (i)
                                put(o, ", ", 2);
                        fmt(o, &v->a.items[i], depth + 1);
                }
                put(o, "]", 1);
                break;
        case PV_MAP: putf(o, "<map of %u>", v->m.n); break;
        }
}

size_t fmud_value_format(const struct pv *v, char *buf, size_t len)
{
        struct out o = { buf, buf ? len : 0, 0 };

        if (!buf)
                len = 0;
        if (!v) {
                if (len)
                        buf[0] = '\0';
                return 0;
        }
        fmt(&o, v, 0);
        if (len)
                buf[o.n < len ? o.n : len - 1] = '\0';
        return o.n;
}
