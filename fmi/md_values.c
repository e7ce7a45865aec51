/*
 * md_values: locale-independent, exact parsing of FMI value texts.
 */
#include "md_values.h"

#include <errno.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static locale_t c_locale;       /* written once under c_locale_once, then read-only */

static void c_locale_init(void)
{
        c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

bool mv_is_space(char c)
{
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_digit(char c)
{
        return c >= '0' && c <= '9';
}

/* Trim XML whitespace: the token is [*ret_s, *ret_s + *ret_n). */
static void trim(const char *s, const char **ret_s, size_t *ret_n)
{
        size_t n;

        while (mv_is_space(*s))
                s++;
        n = strlen(s);
        while (n > 0 && mv_is_space(s[n - 1]))
                n--;
        *ret_s = s;
        *ret_n = n;
}

static size_t digits(const char *s, size_t i, size_t n)
{
        size_t k = 0;

        while (i + k < n && is_digit(s[i + k]))
                k++;
        return k;
}

/*
 * XML Schema double: [+-]?(d+(.d*)?|.d+)([eE][+-]?d+)? | [+-]?INF | NaN;
 * infinity also as people write it (inf, Infinity, any case), which a
 * start value from the command line is (strtod() reads them all).
 */
static bool lex_float(const char *s, size_t n)
{
        size_t i = 0, d1, d2 = 0;

        if (n == 3 && memcmp(s, "NaN", 3) == 0)
                return true;
        if (i < n && (s[i] == '+' || s[i] == '-'))
                i++;
        if ((n - i == 3 && strncasecmp(s + i, "inf", 3) == 0) ||
            (n - i == 8 && strncasecmp(s + i, "infinity", 8) == 0))
                return true;
        d1 = digits(s, i, n);
        i += d1;
        if (i < n && s[i] == '.') {
                i++;
                d2 = digits(s, i, n);
                i += d2;
        }
        if (d1 + d2 == 0)
                return false;
        if (i < n && (s[i] == 'e' || s[i] == 'E')) {
                size_t d3;

                i++;
                if (i < n && (s[i] == '+' || s[i] == '-'))
                        i++;
                d3 = digits(s, i, n);
                if (d3 == 0)
                        return false;
                i += d3;
        }
        return i == n;
}

/* One float token of n chars; single selects Float32 rounding. */
static int float_token(const char *s, size_t n, bool single, double *ret)
{
        char *end;
        double d;

        if (!lex_float(s, n))
                return -EINVAL;
        if (n > MV_MAX_FLOAT_CHARS)
                return -E2BIG;
        pthread_once(&c_locale_once, c_locale_init);
        if (c_locale == (locale_t)0)
                return -ENOMEM;
        errno = 0;
        if (single) {
                float f = strtof_l(s, &end, c_locale);

                /* ERANGE with a tiny result is underflow to a subnormal or 0: fine. */
                if (errno == ERANGE && isinf(f))
                        return -ERANGE;
                d = f;
        } else {
                d = strtod_l(s, &end, c_locale);
                if (errno == ERANGE && isinf(d))
                        return -ERANGE;
        }
        if ((size_t)(end - s) != n)
                return -EINVAL;
        *ret = d;
        return 0;
}

/* Sign and magnitude of an integer token; -ERANGE past 64 bits. */
static int int_token(const char *s, size_t n, bool *ret_neg, uint64_t *ret_mag)
{
        bool neg = false, overflow = false;
        uint64_t mag = 0;
        size_t i = 0;

        if (i < n && (s[i] == '+' || s[i] == '-')) {
                neg = s[i] == '-';
                i++;
        }
        if (i == n)
                return -EINVAL;
        for (; i < n; i++) {
                unsigned d;

                if (!is_digit(s[i]))
                        return -EINVAL;
                d = (unsigned)(s[i] - '0');
                if (mag > (UINT64_MAX - d) / 10)
                        overflow = true;
                else
                        mag = mag * 10 + d;
        }
        if (overflow)
                return -ERANGE;
        *ret_neg = neg;
        *ret_mag = mag;
        return 0;
}

static int signed_token(const char *s, size_t n, int64_t min, int64_t max, int64_t *ret)
{
        uint64_t mag;
        int64_t v;
        bool neg;
        int r;

        r = int_token(s, n, &neg, &mag);
        if (r < 0)
                return r;
        if (neg) {
                if (mag > (uint64_t)INT64_MAX + 1)
                        return -ERANGE;
                v = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
        } else {
                if (mag > (uint64_t)INT64_MAX)
                        return -ERANGE;
                v = (int64_t)mag;
        }
        if (v < min || v > max)
                return -ERANGE;
        *ret = v;
        return 0;
}

static int unsigned_token(const char *s, size_t n, uint64_t max, uint64_t *ret)
{
        uint64_t mag;
        bool neg;
        int r;

        r = int_token(s, n, &neg, &mag);
        if (r < 0)
                return r;
        if ((neg && mag != 0) || mag > max)
                return -ERANGE;
        *ret = mag;
        return 0;
}

static int bool_token(const char *s, size_t n, bool *ret)
{
        if ((n == 4 && memcmp(s, "true", 4) == 0) || (n == 1 && s[0] == '1'))
                *ret = true;
        else if ((n == 5 && memcmp(s, "false", 5) == 0) || (n == 1 && s[0] == '0'))
                *ret = false;
        else
                return -EINVAL;
        return 0;
}

void mv_signed_range(enum md_type t, int64_t *ret_min, int64_t *ret_max)
{
        switch (t) {
        case MD_INT8:
                *ret_min = INT8_MIN;
                *ret_max = INT8_MAX;
                break;
        case MD_INT16:
                *ret_min = INT16_MIN;
                *ret_max = INT16_MAX;
                break;
        case MD_INT32:
                *ret_min = INT32_MIN;
                *ret_max = INT32_MAX;
                break;
        default:
                *ret_min = INT64_MIN;
                *ret_max = INT64_MAX;
                break;
        }
}

uint64_t mv_unsigned_max(enum md_type t)
{
        switch (t) {
        case MD_UINT8:
                return UINT8_MAX;
        case MD_UINT16:
                return UINT16_MAX;
        case MD_UINT32:
                return UINT32_MAX;
        default:
                return UINT64_MAX;
        }
}

/* One token of type t into a scalar. */
static int scalar_token(enum md_type t, const char *s, size_t n, union md_scalar *ret)
{
        int64_t min, max;

        if (md_type_is_float(t))
                return float_token(s, n, t == MD_FLOAT32, &ret->f);
        if (md_type_is_signed(t)) {
                mv_signed_range(t, &min, &max);
                return signed_token(s, n, min, max, &ret->i);
        }
        if (md_type_is_unsigned(t))
                return unsigned_token(s, n, mv_unsigned_max(t), &ret->u);
        if (t == MD_BOOLEAN)
                return bool_token(s, n, &ret->b);
        return -EINVAL;
}

int mv_scalar(enum md_type t, const char *s, union md_scalar *ret)
{
        union md_scalar v = { .u = 0 };
        size_t n;
        int r;

        trim(s, &s, &n);
        r = scalar_token(t, s, n, &v);
        if (r == 0)
                *ret = v;
        return r;
}

int mv_double(const char *s, double *ret)
{
        size_t n;

        trim(s, &s, &n);
        return float_token(s, n, false, ret);
}

int mv_uint(const char *s, uint64_t max, uint64_t *ret)
{
        size_t n;

        trim(s, &s, &n);
        return unsigned_token(s, n, max, ret);
}

int mv_int(const char *s, int64_t min, int64_t max, int64_t *ret)
{
        size_t n;

        trim(s, &s, &n);
        return signed_token(s, n, min, max, ret);
}

int mv_bool(const char *s, bool *ret)
{
        size_t n;

        trim(s, &s, &n);
        return bool_token(s, n, ret);
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

int mv_hex(const char *s, size_t max, struct md_binary *ret)
{
        size_t n;

        trim(s, &s, &n);
        return mv_hex_n(s, n, max, ret);
}

int mv_hex_n(const char *s, size_t n, size_t max, struct md_binary *ret)
{
        uint8_t *data;
        size_t len;

        if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
                s += 2;
                n -= 2;
        }
        if (n % 2)
                return -EINVAL;
        len = n / 2;
        if (len > max)
                return -E2BIG;
        /* One spare byte: malloc(0) may return NULL, which reads as OOM. */
        data = malloc(len + 1);
        if (!data)
                return -ENOMEM;
        for (size_t i = 0; i < len; i++) {
                int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);

                if (hi < 0 || lo < 0) {
                        free(data);
                        return -EINVAL;
                }
                data[i] = (uint8_t)(hi << 4 | lo);
        }
        *ret = (struct md_binary){ .data = data, .len = len };
        return 0;
}

static size_t elem_size(enum md_type t)
{
        if (md_type_is_float(t))
                return sizeof(double);
        if (md_type_is_signed(t))
                return sizeof(int64_t);
        if (md_type_is_unsigned(t))
                return sizeof(uint64_t);
        if (t == MD_STRING)
                return sizeof(char *);
        if (t == MD_BINARY)
                return sizeof(struct md_binary);
        return sizeof(bool);
}

int mv_alloc(enum md_type t, size_t n, struct md_values *ret)
{
        void *p = calloc(n ? n : 1, elem_size(t));

        if (!p)
                return -ENOMEM;
        ret->n = n;
        ret->f = p;
        return 0;
}

/* Store scalar v as element i of a list of type t. */
static void put(enum md_type t, struct md_values *l, size_t i, union md_scalar v)
{
        if (md_type_is_float(t))
                l->f[i] = v.f;
        else if (md_type_is_signed(t))
                l->i[i] = v.i;
        else if (md_type_is_unsigned(t))
                l->u[i] = v.u;
        else
                l->b[i] = v.b;
}

int mv_list(enum md_type t, const char *s, size_t max_n, struct md_values *ret, size_t *ret_bad)
{
        struct md_values l;
        const char *p;
        size_t n = 0;
        int r;

        if (t == MD_STRING || t == MD_BINARY || t == MD_CLOCK || t >= MD_TYPE_COUNT)
                return -EINVAL;
        for (p = s; *p;) {
                while (mv_is_space(*p))
                        p++;
                if (!*p)
                        break;
                if (++n > max_n)
                        return -E2BIG;
                while (*p && !mv_is_space(*p))
                        p++;
        }
        if (n == 0) {
                *ret_bad = 0;
                return -EINVAL;
        }
        r = mv_alloc(t, n, &l);
        if (r < 0)
                return r;
        n = 0;
        for (p = s; *p;) {
                union md_scalar v = { .u = 0 };
                const char *tok;

                while (mv_is_space(*p))
                        p++;
                if (!*p)
                        break;
                tok = p;
                while (*p && !mv_is_space(*p))
                        p++;
                r = scalar_token(t, tok, (size_t)(p - tok), &v);
                if (r < 0) {
                        *ret_bad = n;
                        mv_free(t, &l);
                        return r;
                }
                put(t, &l, n++, v);
        }
        *ret = l;
        return 0;
}

void mv_free(enum md_type t, struct md_values *v)
{
        if (!v->f)
                goto out;
        if (t == MD_STRING)
                for (size_t i = 0; i < v->n; i++)
                        free(v->s[i]);
        else if (t == MD_BINARY)
                for (size_t i = 0; i < v->n; i++)
                        free(v->bin[i].data);
        free(v->f);
out:
        *v = (struct md_values){ .n = 0 };
}

const char *mv_float_refusal(enum md_type t, double f)
{
        if (isnan(f))
                return "NaN is never passed to an FMU by fmud";
        if (t != MD_FLOAT32 || !isfinite(f))
                return NULL;
        if (fabs(f) > FLT_MAX)
                return "beyond the range of Float32 (it would become an infinity)";
        if (f != 0 && (float)f == 0)
                return "too small for Float32 (it would become 0)";
        return NULL;
}
