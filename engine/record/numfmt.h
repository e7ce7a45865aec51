/*
 * numfmt: numbers as text for the result files, exact and fast.
 *
 * Every function writes into dst (no NUL terminator) and returns the number
 * of bytes written, at most the matching NUMFMT_*_MAX. dst must have room
 * for that many: numfmt_f64() and numfmt_f32() may store bytes past the
 * text within it (whole words are faster than single bytes). The text never
 * depends on the process or thread locale: the decimal point is always '.'.
 * All functions are pure and thread-safe.
 *
 * Floating point (numfmt_f64, numfmt_f32)
 * - Round trip: strtod() of the text gives back the same double, bit for
 *   bit (numfmt_f32: strtof(), or strtod() then a conversion to float, gives
 *   back the same float). Negative zero is written "-0".
 * - Shortest: the fewest significant digits that round-trip (at most 17,
 *   or 9 for a Float32); among those, the digits nearest the value, ties
 *   to even: the digits Python's repr() writes, for every double.
 * - Layout (Python's repr): fixed notation when the leading digit's decimal
 *   exponent X is in -4..15 ("0.0001", "123.5", "1000000000000000"),
 *   otherwise scientific with a signed exponent of at least two digits
 *   ("1e-05", "1.5e+16", "-2.2250738585072014e-308"). No trailing ".0".
 * - Non-finite: "inf", "-inf" and "nan" (any NaN, whatever its sign or
 *   payload: strtod() reads it back as a quiet NaN; the payload is lost).
 *
 * DESIGN: Schubfach (R. Giulietti, "The Schubfach way to render doubles",
 * 2020), written from the paper: v = c * 2^q and the two ends of its
 * rounding interval are each scaled by 10^-k, k = floor(log10(2^q)),
 * with one 64 x 126-bit integer product rounded to odd; that is exact
 * enough to compare them with the decimals around v, so the one or two
 * candidates (a multiple of 10^(k+1) in the interval, else the nearer of
 * the two multiples of 10^k around v) are decided with integer compares
 * alone: no floating point, no loop over lengths, no fallback to strtod.
 * The 617 126-bit powers of ten come from numfmt_gen.c, which computes
 * them with exact big-integer arithmetic at build time. A Float32 goes
 * through the same code with its own c and q, plus one guard against the
 * double rounding of strtod() then (float) (numfmt_f32()); every float
 * was checked. Integers below 2^53 take an integer-only path. Digits are
 * made eight at a time in a 64-bit word (numfmt_digits.h). No per-call
 * state, no libc formatting, no locale. Measured (bench/recorder -F): 92 ns
 * a Float64 against 319 ns for snprintf("%.16g"), which is not even
 * exact; the formatting of rows is most of the recorder's cost.
 */
#ifndef FMUD_ENGINE_NUMFMT_H
#define FMUD_ENGINE_NUMFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NUMFMT_F64_MAX  24      /* "-2.2250738585072014e-308" */
#define NUMFMT_F32_MAX  17      /* "-9999999000000000" */
#define NUMFMT_I64_MAX  20      /* "-9223372036854775808" */
#define NUMFMT_U64_MAX  20      /* "18446744073709551615" */

/* Shortest round-trip text of v (see above). Returns the length. */
size_t numfmt_f64(char *dst, double v);

/*
 * n values, each preceded by sep (",1.5,-2,0.1" for sep ','), as
 * numfmt_f64() writes them: one call for a row, the formatter inlined in
 * its loop. dst must hold n * (1 + NUMFMT_F64_MAX) bytes. Returns the length.
 */
size_t numfmt_f64_list(char *dst, const double *v, size_t n, char sep);

/* Shortest text that reads back as the same float. Returns the length. */
size_t numfmt_f32(char *dst, float v);

/*
 * The time of a point of the grid t0 + k h as its decimal t0' + k h',
 * where t0' and h' are the shortest texts of t0 and h, i.e. what the user
 * wrote: "0.7" for 7 * 0.1, whose double prints 0.7000000000000001. Only
 * for t equal, bit for bit, to the double t0 + (double)k * h, when the
 * decimal has at most 17 significant digits and reads back within a few
 * units in the last place of t; any other t as numfmt_f64(). The text
 * then reads back as the nearest double to the decimal, not always t
 * itself (numfmt_grid.c). Same layout and room as numfmt_f64().
 */
struct numfmt_grid {
        bool ok;                        /* h > 0, both finite */
        bool t0_neg;
        double t0, h;
        uint64_t t0_digits, h_digits;   /* t0' = ±t0_digits 10^t0_exp, h' likewise */
        int t0_exp, h_exp;
};

void numfmt_grid_init(struct numfmt_grid *g, double t0, double h);
size_t numfmt_grid(const struct numfmt_grid *g, char *dst, double t);

/* Decimal integers, '-' for negatives. Return the length. */
size_t numfmt_i64(char *dst, int64_t v);
size_t numfmt_u64(char *dst, uint64_t v);

#endif
