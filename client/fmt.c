/* fmt: value formatting shared by fmuctl's table and JSON output. */
#include "fmt.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *nonfinite(double d)
{
        if (isnan(d))
                return "NaN";
        return d > 0 ? "INF" : "-INF";
}

/*
 * %g writes an exponent once it reaches the precision: 20 at precision 1
 * is "2e+01". Numbers below 1e15 (1e6 for a float, whose digits past
 * its precision would be noise) read better without one, and more digits
 * still read back to the same value.
 */
static const char *plain(char *buf, double d, int max_exp)
{
        const char *e = strchr(buf, 'e');
        int exp = e ? atoi(e + 1) : -1;

        if (exp >= 0 && exp <= max_exp)
                snprintf(buf, FMT_NUM_MAX, "%.*g", exp + 1, d);
        return buf;
}

const char *fmt_double(char buf[FMT_NUM_MAX], double d)
{
        if (!isfinite(d))
                return nonfinite(d);
        for (int prec = 1; prec <= 17; prec++) {
                snprintf(buf, FMT_NUM_MAX, "%.*g", prec, d);
                if (strtod(buf, NULL) == d)
                        break;
        }
        return plain(buf, d, 15);
}

const char *fmt_float(char buf[FMT_NUM_MAX], float f)
{
        if (!isfinite(f))
                return nonfinite(f);
        for (int prec = 1; prec <= 9; prec++) {
                snprintf(buf, FMT_NUM_MAX, "%.*g", prec, (double)f);
                if (strtof(buf, NULL) == f)
                        break;
        }
        return plain(buf, f, 6);
}

const char *fmt_value(char *buf, size_t size, enum md_type t, const struct md_values *v, size_t i)
{
        char num[FMT_NUM_MAX];

        if (!size)
                return "";
        buf[0] = '\0';
        switch (t) {
        case MD_FLOAT32:
                snprintf(buf, size, "%s", fmt_float(num, (float)v->f[i]));
                break;
        case MD_FLOAT64:
                snprintf(buf, size, "%s", fmt_double(num, v->f[i]));
                break;
        case MD_INT8: case MD_INT16: case MD_INT32: case MD_INT64: case MD_ENUMERATION:
                snprintf(buf, size, "%" PRId64, v->i[i]);
                break;
        case MD_UINT8: case MD_UINT16: case MD_UINT32: case MD_UINT64:
                snprintf(buf, size, "%" PRIu64, v->u[i]);
                break;
        case MD_BOOLEAN: case MD_CLOCK:
                snprintf(buf, size, "%s", v->b[i] ? "true" : "false");
                break;
        case MD_STRING:
                return v->s[i] ? v->s[i] : "";
        case MD_BINARY: {
                const struct md_binary *b = &v->bin[i];
                size_t o = 0;

                for (size_t k = 0; k < b->len && o + 3 <= size; k++)
                        o += (size_t)snprintf(buf + o, size - o, "%02x", b->data[k]);
                break;
        }
        case MD_TYPE_COUNT:
                break;
        }
        return buf;
}
