/*
 * numfmt: numbers as text for the result files, exact and fast.
 *
 * Every function writes into dst (no NUL terminator) and returns the number
 * of bytes written, at most the matching NUMFMT_*_MAX. The text never
 * depends on the process or thread locale: the decimal point is always '.'.
 * All functions are pure and thread-safe.
 *
 * Floating point (numfmt_f64, numfmt_f32)
 * - Round trip: strtod() of the text gives back the same double, bit for
 *   bit (numfmt_f32: strtof(), or strtod() then a conversion to float, gives
 *   back the same float). Negative zero is written "-0".
 * - Shortest: the fewest significant digits that round-trip (at most 17,
 *   or 9 for a Float32); among those, the digits nearest the value, ties
 *   to even: the digits Python's repr() writes. That last choice is exact
 *   for 1e-10 <= |v| < 1e44 (Float32: 1e-18 .. 1e36); outside, in about one
 *   random value in 10^4, the last digit may be the other neighbour (still
 *   exact and just as short).
 * - Layout (Python's repr): fixed notation when the leading digit's decimal
 *   exponent X is in -4..15 ("0.0001", "123.5", "1000000000000000"),
 *   otherwise scientific with a signed exponent of at least two digits
 *   ("1e-05", "1.5e+16", "-2.2250738585072014e-308"). No trailing ".0".
 * - Non-finite: "inf", "-inf" and "nan" (any NaN, whatever its sign or
 *   payload: strtod() reads it back as a quiet NaN; the payload is lost).
 *
 * DESIGN: the digits come from one scaling |v| * 10^p computed in x87
 * 80-bit long double (64-bit mantissa; 10^p from two tables of exactly
 * rounded constants), rounded to a 17-digit integer D (9 for a Float32).
 * Its relative error (< 2.2e-19) is far inside the 5.5e-17 that separates a
 * correctly rounded 17-digit decimal from the rounding boundary, so D
 * always round-trips without a check. Shorter candidates (D rounded to 15,
 * then 16 digits) are checked against the exact rounding interval of v in
 * long double; a candidate within 1/128 of a half-gap of the boundary is
 * decided exactly by the C library's strtod() on radix-free text. A
 * 15-digit candidate that fits is the only one of its length, hence the
 * shortest once its trailing zeros are removed. Near-ties (to a decimal
 * midpoint) are decided with an exact product (Dekker), not an estimate.
 * Integers below 2^53 take an integer-only path. No bignum, no per-call
 * state, no libc formatting: 3 to 7 times faster than snprintf("%.17g"),
 * measured in bench/recorder.c (docs/BENCHMARKS.md).
 * Needs a long double with at least a 64-bit mantissa (x86-64, aarch64)
 * and round-to-nearest, the default floating-point environment.
 */
#ifndef FMUD_DAEMON_NUMFMT_H
#define FMUD_DAEMON_NUMFMT_H

#include <stddef.h>
#include <stdint.h>

#define NUMFMT_F64_MAX  24      /* "-2.2250738585072014e-308" */
#define NUMFMT_F32_MAX  17      /* "-9999999000000000" */
#define NUMFMT_I64_MAX  20      /* "-9223372036854775808" */
#define NUMFMT_U64_MAX  20      /* "18446744073709551615" */

/* Shortest round-trip text of v (see above). Returns the length. */
size_t numfmt_f64(char *dst, double v);

/* Shortest text that reads back as the same float. Returns the length. */
size_t numfmt_f32(char *dst, float v);

/* Decimal integers, '-' for negatives. Return the length. */
size_t numfmt_i64(char *dst, int64_t v);
size_t numfmt_u64(char *dst, uint64_t v);

#endif
