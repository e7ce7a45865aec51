/*
 * input_table: storage and sampling of input values over time (see
 * input_table.h).
 */
#include "engine/master/input_table.h"

#include <math.h>
#include <stdlib.h>

struct input_table *input_table_new(size_t n_cols, size_t n_rows)
{
        struct input_table *t;
        size_t cells;

        if (n_rows && n_cols > SIZE_MAX / sizeof(union input_value) / n_rows)
                return NULL;
        cells = n_cols * n_rows;
        t = calloc(1, sizeof(*t));
        if (!t)
                return NULL;
        t->n_rows = n_rows;
        t->n_cols = n_cols;
        t->time = calloc(n_rows ? n_rows : 1, sizeof(*t->time));
        t->cols = calloc(n_cols ? n_cols : 1, sizeof(*t->cols));
        t->vals = calloc(cells ? cells : 1, sizeof(*t->vals));
        if (!t->time || !t->cols || !t->vals) {
                input_table_free(t);
                return NULL;
        }
        return t;
}

void input_table_free(struct input_table *t)
{
        if (!t)
                return;
        for (size_t i = 0; t->cols && i < t->n_cols; i++)
                free(t->cols[i].name);
        free(t->cols);
        free(t->time);
        free(t->vals);
        free(t->text);
        free(t);
}

size_t input_table_find(const struct input_table *t, double time)
{
        size_t lo = 0, hi = t->n_rows;

        /* Upper bound: the first row later than time. */
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (t->time[mid] <= time)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

/* The row whose value a held column has at k: the last at or before time, else the first. */
static size_t held_row(size_t k)
{
        return k ? k - 1 : 0;
}

static double linear(const struct input_table *t, size_t col, size_t k, double time)
{
        double ta, tb, va, vb;

        if (k == 0 || k >= t->n_rows)
                return input_table_at(t, k ? t->n_rows - 1 : 0, col)->f;
        ta = t->time[k - 1];
        tb = t->time[k];
        va = input_table_at(t, k - 1, col)->f;
        vb = input_table_at(t, k, col)->f;
        /* ta <= time < tb, so tb > ta: no division by zero, and time == ta gives va exactly. */
        return va + (vb - va) * ((time - ta) / (tb - ta));
}

double input_table_double(const struct input_table *t, size_t col, size_t k, double time)
{
        const struct input_column *c = &t->cols[col];
        const union input_value *v;

        if (c->linear)
                return linear(t, col, k, time);
        v = input_table_at(t, held_row(k), col);
        switch (c->type) {
        case MD_FLOAT32:
        case MD_FLOAT64:
                return v->f;
        case MD_UINT8:
        case MD_UINT16:
        case MD_UINT32:
        case MD_UINT64:
                return (double)v->u;
        case MD_BOOLEAN:
                return v->b ? 1.0 : 0.0;
        case MD_STRING:
        case MD_BINARY:
        case MD_CLOCK:
                return NAN;
        default:
                return (double)v->i;
        }
}

void input_table_put(const struct input_table *t, size_t col, size_t k, double time, void *dst,
                     size_t i)
{
        const struct input_column *c = &t->cols[col];
        const union input_value *v = input_table_at(t, held_row(k), col);
        double x = c->linear ? linear(t, col, k, time) : md_type_is_float(c->type) ? v->f : 0;

        switch (c->type) {
        case MD_FLOAT32:
                ((float *)dst)[i] = (float)x;
                break;
        case MD_FLOAT64:
                ((double *)dst)[i] = x;
                break;
        case MD_INT8:
                ((int8_t *)dst)[i] = (int8_t)v->i;
                break;
        case MD_INT16:
                ((int16_t *)dst)[i] = (int16_t)v->i;
                break;
        case MD_INT32:
                ((int32_t *)dst)[i] = (int32_t)v->i;
                break;
        case MD_INT64:
        case MD_ENUMERATION:
                ((int64_t *)dst)[i] = v->i;
                break;
        case MD_UINT8:
                ((uint8_t *)dst)[i] = (uint8_t)v->u;
                break;
        case MD_UINT16:
                ((uint16_t *)dst)[i] = (uint16_t)v->u;
                break;
        case MD_UINT32:
                ((uint32_t *)dst)[i] = (uint32_t)v->u;
                break;
        case MD_UINT64:
                ((uint64_t *)dst)[i] = v->u;
                break;
        case MD_BOOLEAN:
                ((bool *)dst)[i] = v->b;
                break;
        case MD_STRING:
                ((const char **)dst)[i] = v->s;
                break;
        default:
                break;  /* Binary and Clock columns are refused when the table is read */
        }
}

/* O(columns): asked once per input variable while a session starts. */
bool input_table_drives(const struct input_table *t, size_t comp, size_t var)
{
        for (size_t i = 0; t && i < t->n_cols; i++)
                if (t->cols[i].comp == comp && t->cols[i].var == var)
                        return true;
        return false;
}
