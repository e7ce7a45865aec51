/*
 * md_values: the lexical forms of FMI values (XML Schema double, float,
 * integers of each width, boolean, hexBinary) turned into C values, exactly
 * and independently of the process locale.
 *
 * DESIGN: integers are parsed digit by digit into 64 bits with an overflow
 * check, never through a double, so every Int64 and UInt64 is exact. Floats
 * are checked against the XML Schema grammar first and then converted with
 * strtod_l()/strtof_l() under a "C" locale object, so a comma-decimal
 * LC_NUMERIC in the daemon changes nothing. Float32 text is rounded to float
 * directly (no double rounding). Pure functions: no diagnostics here.
 *
 * Every parser takes the whole text (XML whitespace around the value is
 * allowed, as XML Schema collapses it) and returns 0, -EINVAL (not that
 * lexical form), -ERANGE (outside the type), -E2BIG (over a length limit)
 * or -ENOMEM. Any thread may call them.
 */
#ifndef FMUD_FMI_MD_VALUES_H
#define FMUD_FMI_MD_VALUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model_description.h"

/* Longest decimal float we convert; longer texts give -E2BIG. */
#define MV_MAX_FLOAT_CHARS 1024

bool mv_is_space(char c);

/* One value of a numeric, Boolean or Enumeration type into ret. */
int mv_scalar(enum md_type t, const char *s, union md_scalar *ret);

int mv_double(const char *s, double *ret);
int mv_uint(const char *s, uint64_t max, uint64_t *ret);
int mv_int(const char *s, int64_t min, int64_t max, int64_t *ret);
int mv_bool(const char *s, bool *ret);

/* hexBinary with an optional 0x prefix; at most max bytes. */
int mv_hex(const char *s, size_t max, struct md_binary *ret);
/* The same for exactly the n chars at s (no whitespace allowed). */
int mv_hex_n(const char *s, size_t n, size_t max, struct md_binary *ret);

/*
 * A whitespace-separated list of values of type t (numeric, Boolean or
 * Enumeration) with at least one and at most max_n elements. On a bad
 * element, *ret_bad is its 0-based position. ret is written only on success.
 */
int mv_list(enum md_type t, const char *s, size_t max_n, struct md_values *ret, size_t *ret_bad);

/* A list of n values of type t, zeroed. Returns 0 or -ENOMEM. */
int mv_alloc(enum md_type t, size_t n, struct md_values *ret);

/* Free the elements (strings, binaries) and the list; v is left empty. */
void mv_free(enum md_type t, struct md_values *v);

/* Smallest and largest value of a signed integer type (Enumeration: Int64). */
void mv_signed_range(enum md_type t, int64_t *ret_min, int64_t *ret_max);
/* Largest value of an unsigned integer type. */
uint64_t mv_unsigned_max(enum md_type t);

/*
 * Why a number a user gives (set, --start, a parameter binding) cannot go
 * to a variable of float type t, or NULL when it can (docs/scenarios.md,
 * "Numbers"): NaN never does; a Float32 beyond its range would become an
 * infinity, and one too small for it would become 0.
 */
const char *mv_float_refusal(enum md_type t, double f);

#endif
