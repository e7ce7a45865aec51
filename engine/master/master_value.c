/*
 * master_value: typed value arrays and their conversions (see
 * master_value.h).
 */
#include "engine/master/master_value.h"

#include <errno.h>
#include <math.h>
#include <string.h>

enum md_type mv_call_type(enum md_type t, int fmi)
{
        if (t == MD_ENUMERATION)
                return fmi == 2 ? MD_INT32 : MD_INT64;
        return t;
}

size_t mv_size(enum md_type t)
{
        switch (t) {
        case MD_FLOAT32:
                return sizeof(float);
        case MD_FLOAT64:
                return sizeof(double);
        case MD_INT8:
        case MD_UINT8:
                return 1;
        case MD_INT16:
        case MD_UINT16:
                return 2;
        case MD_INT32:
        case MD_UINT32:
                return 4;
        case MD_INT64:
        case MD_UINT64:
        case MD_ENUMERATION:
                return 8;
        case MD_BOOLEAN:
        case MD_CLOCK:
                return sizeof(bool);
        case MD_STRING:
        case MD_BINARY:
        default:
                return sizeof(const void *);
        }
}

double mv_to_double(enum md_type t, const void *values, size_t i)
{
        switch (t) {
        case MD_FLOAT32:
                return ((const float *)values)[i];
        case MD_FLOAT64:
                return ((const double *)values)[i];
        case MD_INT8:
                return ((const int8_t *)values)[i];
        case MD_UINT8:
                return ((const uint8_t *)values)[i];
        case MD_INT16:
                return ((const int16_t *)values)[i];
        case MD_UINT16:
                return ((const uint16_t *)values)[i];
        case MD_INT32:
                return ((const int32_t *)values)[i];
        case MD_UINT32:
                return ((const uint32_t *)values)[i];
        case MD_INT64:
        case MD_ENUMERATION:
                return (double)((const int64_t *)values)[i];
        case MD_UINT64:
                return (double)((const uint64_t *)values)[i];
        case MD_BOOLEAN:
        case MD_CLOCK:          /* a recorded Clock's flag (master_clock.c) */
                return ((const bool *)values)[i] ? 1.0 : 0.0;
        default:
                return NAN;
        }
}

static double get_float(enum md_type t, const void *v, size_t i)
{
        return t == MD_FLOAT32 ? (double)((const float *)v)[i] : ((const double *)v)[i];
}

bool mv_convertible(enum md_type st, enum md_type dt)
{
        return st == dt || (md_type_is_float(st) && md_type_is_float(dt)) ||
               (st == MD_INT32 && dt == MD_INT64) || (st == MD_INT64 && dt == MD_INT32);
}

void mv_copy(enum md_type dt, void *dst, size_t *dst_sizes, enum md_type st, const void *src,
             const size_t *src_sizes, size_t n, bool identity, double factor, double offset)
{
        if (identity && dt == st) {
                memcpy(dst, src, n * mv_size(dt));
                if (dt == MD_BINARY && dst_sizes && src_sizes)
                        memcpy(dst_sizes, src_sizes, n * sizeof(*dst_sizes));
                return;
        }
        if (st == MD_INT32 && dt == MD_INT64) {
                for (size_t i = 0; i < n; i++)
                        ((int64_t *)dst)[i] = ((const int32_t *)src)[i];
                return;
        }
        if (st == MD_INT64 && dt == MD_INT32) {
                for (size_t i = 0; i < n; i++) {
                        int64_t x = ((const int64_t *)src)[i];

                        ((int32_t *)dst)[i] = x > INT32_MAX ? INT32_MAX : x < INT32_MIN ?
                                              INT32_MIN : (int32_t)x;
                }
                return;
        }
        /* Only Float32/Float64 reach here (master_plan.c and init check it). */
        for (size_t i = 0; i < n; i++) {
                double x = get_float(st, src, i);

                if (!identity)
                        x = factor * x + offset;
                if (dt == MD_FLOAT32)
                        ((float *)dst)[i] = (float)x;
                else
                        ((double *)dst)[i] = x;
        }
}

static void put_int(enum md_type t, void *dst, size_t i, int64_t x)
{
        switch (t) {
        case MD_INT8:
                ((int8_t *)dst)[i] = (int8_t)x;
                break;
        case MD_INT16:
                ((int16_t *)dst)[i] = (int16_t)x;
                break;
        case MD_INT32:
                ((int32_t *)dst)[i] = (int32_t)x;
                break;
        default:
                ((int64_t *)dst)[i] = x;
                break;
        }
}

static void put_uint(enum md_type t, void *dst, size_t i, uint64_t x)
{
        switch (t) {
        case MD_UINT8:
                ((uint8_t *)dst)[i] = (uint8_t)x;
                break;
        case MD_UINT16:
                ((uint16_t *)dst)[i] = (uint16_t)x;
                break;
        case MD_UINT32:
                ((uint32_t *)dst)[i] = (uint32_t)x;
                break;
        default:
                ((uint64_t *)dst)[i] = x;
                break;
        }
}

int mv_from_md(enum md_type t, const struct md_values *v, uint64_t elements, void *dst,
               size_t *sizes)
{
        if (v->n != 1 && v->n != elements)
                return -EINVAL;
        for (uint64_t e = 0; e < elements; e++) {
                size_t j = v->n == 1 ? 0 : (size_t)e;

                switch (t) {
                case MD_FLOAT32:
                        ((float *)dst)[e] = (float)v->f[j];
                        break;
                case MD_FLOAT64:
                        ((double *)dst)[e] = v->f[j];
                        break;
                case MD_INT8:
                case MD_INT16:
                case MD_INT32:
                case MD_INT64:
                        put_int(t, dst, e, v->i[j]);
                        break;
                case MD_UINT8:
                case MD_UINT16:
                case MD_UINT32:
                case MD_UINT64:
                        put_uint(t, dst, e, v->u[j]);
                        break;
                case MD_BOOLEAN:
                case MD_CLOCK:
                        ((bool *)dst)[e] = v->b[j];
                        break;
                case MD_STRING:
                        ((const char **)dst)[e] = v->s[j];
                        break;
                case MD_BINARY:
                        ((const uint8_t **)dst)[e] = v->bin[j].data;
                        if (sizes)
                                sizes[e] = v->bin[j].len;
                        break;
                default:
                        return -EINVAL;
                }
        }
        return 0;
}

bool mv_differ(enum md_type t, const void *a, const void *b, const size_t *a_sizes,
               const size_t *b_sizes, size_t n, double tol, size_t *ret_index)
{
        for (size_t i = 0; i < n; i++) {
                bool d;

                if (t == MD_FLOAT32 || t == MD_FLOAT64) {
                        double x = get_float(t, a, i), y = get_float(t, b, i);

                        d = !(fabs(x - y) <= tol * fmax(1.0, fabs(x)));
                } else if (t == MD_STRING) {
                        const char *x = ((const char *const *)a)[i], *y = ((const char *const *)b)[i];

                        d = strcmp(x ? x : "", y ? y : "") != 0;
                } else if (t == MD_BINARY) {
                        const uint8_t *x = ((const uint8_t *const *)a)[i];
                        const uint8_t *y = ((const uint8_t *const *)b)[i];

                        d = a_sizes[i] != b_sizes[i] ||
                            (a_sizes[i] && (!x || !y || memcmp(x, y, a_sizes[i]) != 0));
                } else {
                        size_t sz = mv_size(t);

                        d = memcmp((const char *)a + i * sz, (const char *)b + i * sz, sz) != 0;
                }
                if (d) {
                        if (ret_index)
                                *ret_index = i;
                        return true;
                }
        }
        return false;
}
