/*
 * master_value: typed value arrays as the instance API takes them
 * (inst_get()/inst_set(): float, double, int8_t .. uint64_t, bool, const
 * char *, const uint8_t * with sizes), and the conversions the session
 * and the master need between them, doubles and start values.
 *
 * DESIGN: a connection's transformation is to = factor * from + offset,
 * evaluated in double (Float32 values widen exactly, the result rounds
 * once to Float32 when the input is Float32). An identity connection
 * copies the bits (same type) or converts exactly between Float32 and
 * Float64 (widening is exact; narrowing rounds once, as the FMU would).
 * Pure functions; any thread.
 */
#ifndef FMUD_ENGINE_MASTER_VALUE_H
#define FMUD_ENGINE_MASTER_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fmi/model_description.h"

/*
 * The type an instance call uses for variables of type t: Enumeration is
 * MD_INT64 in FMI 3.0 and MD_INT32 in FMI 2.0; every other type is itself.
 */
enum md_type mv_call_type(enum md_type t, int fmi);

/* Bytes of one value of call type t (sizeof(const char *) for String and Binary). */
size_t mv_size(enum md_type t);

/* Element i of an array of call type t as a double; NaN for String, Binary, Clock. */
double mv_to_double(enum md_type t, const void *values, size_t i);

/*
 * Whether values of call type st can be copied into call type dt: the
 * same type, Float32 and Float64 either way, or Int32 and Int64 either
 * way: an Enumeration connected across FMI versions (FMI 2.0 gets it as
 * an Integer, FMI 3.0 as an Int64; the scenario checked that both are
 * Enumerations).
 */
bool mv_convertible(enum md_type st, enum md_type dt);

/*
 * Copy n values from src (call type st) to dst (call type dt), through
 * the transformation to = factor * from + offset unless identity. The
 * types are mv_convertible(); a non-identity transformation needs float
 * types. An Int64 beyond Int32's range saturates. Binary sizes go along
 * when both size arrays are given.
 */
void mv_copy(enum md_type dt, void *dst, size_t *dst_sizes, enum md_type st, const void *src,
             const size_t *src_sizes, size_t n, bool identity, double factor, double offset);

/*
 * Expand a start value (n == 1 for all elements, or n == elements) into
 * dst, an array of 'elements' values of call type t (strings and binaries
 * borrowed from v; sizes for Binary). Returns 0, or -EINVAL when v has
 * another count.
 */
int mv_from_md(enum md_type t, const struct md_values *v, uint64_t elements, void *dst,
               size_t *sizes);

/*
 * Whether a and b (n values of call type t; Binary with their sizes)
 * differ by more than tol relative to max(1, |a|) (floats), or at all
 * (others, by content); *ret_index is the first element that does.
 */
bool mv_differ(enum md_type t, const void *a, const void *b, const size_t *a_sizes,
               const size_t *b_sizes, size_t n, double tol, size_t *ret_index);

#endif
