/*
 * input_table: values for a scenario's unconnected inputs as functions of
 * time, read from a CSV file (input_csv.h) and sampled by the session at
 * the start time and by the master at every communication point.
 *
 * DESIGN: one column per scalar element of an input (an array input has
 * one column per element, all of them present), rows by non-decreasing
 * time, values kept row-major. Sampling at time t, with k the number of
 * rows whose time is <= t (a binary search, once per instance and point):
 *   - a continuous Float input (linear) interpolates between row a = k-1
 *     and row b = k: v_a + (v_b - v_a) * ((t - t_a) / (t_b - t_a)),
 *     evaluated in double and rounded once for a Float32 input;
 *   - every other input (discrete Float, integers, Enumeration, Boolean,
 *     String) holds the value of row k-1;
 *   - before the first row, the first row's value; after the last, the
 *     last row's value.
 * Rows a and b always have t_a < t_b, so two rows with the same time are
 * a step: the later one applies from that time on, the earlier one is
 * the limit from the left. Sampling is pure arithmetic on the stored
 * values: the same table gives bit-identical inputs run to run.
 *
 * Ownership: the table owns its columns, names, values and the text that
 * String values point into; it is read-only once built and outlives the
 * session and master that sample it. Any thread may sample it.
 */
#ifndef FMUD_ENGINE_INPUT_TABLE_H
#define FMUD_ENGINE_INPUT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fmi/model_description.h"

/* One stored value; which member is set depends on the column's call type. */
union input_value {
        double f;                       /* Float32, Float64 */
        int64_t i;                      /* Int8..Int64, Enumeration */
        uint64_t u;                     /* UInt8..UInt64 */
        bool b;                         /* Boolean */
        const char *s;                  /* String: NUL-terminated, owned by the table */
};

struct input_column {
        size_t comp, var;               /* component index, variable index in its md */
        uint64_t element;               /* row-major element of the variable */
        enum md_type type;              /* the call type (mv_call_type(): Enumeration as Int) */
        bool linear;                    /* continuous Float: interpolated; else held */
        char *name;                     /* as the header names it */
};

struct input_table {
        size_t n_rows, n_cols;
        double *time;                   /* n_rows, non-decreasing, finite */
        struct input_column *cols;      /* n_cols */
        union input_value *vals;        /* n_rows * n_cols, row-major */
        char *text;                     /* what String values point into; may be NULL */
};

/*
 * An empty table of n_cols columns and room for n_rows rows (n_rows set;
 * fill time, cols and vals). NULL when out of memory or n_cols * n_rows
 * overflows. Free with input_table_free().
 */
struct input_table *input_table_new(size_t n_cols, size_t n_rows);
void input_table_free(struct input_table *t);

/* The value of column col in row row. */
static inline union input_value *input_table_at(const struct input_table *t, size_t row,
                                                size_t col)
{
        return &t->vals[row * t->n_cols + col];
}

/* The number of rows whose time is <= time (0 .. n_rows). O(log rows). */
size_t input_table_find(const struct input_table *t, double time);

/* Column col sampled at time (k from input_table_find()) as a double (Strings: NaN). */
double input_table_double(const struct input_table *t, size_t col, size_t k, double time);

/*
 * Column col sampled at time (k from input_table_find()) into element i
 * of dst, an array of the column's call type as inst_set() takes it
 * (float, double, int8_t .. uint64_t, bool, const char *).
 */
void input_table_put(const struct input_table *t, size_t col, size_t k, double time, void *dst,
                     size_t i);

/* Whether some column drives variable var of component comp. */
bool input_table_drives(const struct input_table *t, size_t comp, size_t var);

#endif
