/*
 * numfmt_log: the integer logarithms numfmt.c needs, as multiply-and-shift
 * (fixed-point approximations of log10(2), log10(3/4) and log2(10) with
 * 2^-41 and 2^-38 units), shared with the table generator numfmt_gen.c,
 * which checks each of them exactly over the whole range below before it
 * writes the table: a wrong constant fails the build.
 *
 * The shifts floor: they rely on >> of a negative int64_t being an
 * arithmetic shift, as it is with gcc and clang (implementation-defined
 * in C11, 6.5.7).
 */
#ifndef FMUD_ENGINE_NUMFMT_LOG_H
#define FMUD_ENGINE_NUMFMT_LOG_H

#include <stdint.h>

/* Binary exponents q of v = c * 2^q, c an integer: Float64 and Float32. */
#define NUMFMT_Q_MIN    (-1074)
#define NUMFMT_Q_MAX    971
/* The powers 10^e that scale them: e = -floor(log10(v's half-gap)). */
#define NUMFMT_E_MIN    (-292)
#define NUMFMT_E_MAX    324

/* floor(log10(2^q)) */
static inline int numfmt_flog10_pow2(int q)
{
        return (int)((int64_t)q * INT64_C(661971961083) >> 41);
}

/* floor(log10(3/4 * 2^q)) */
static inline int numfmt_flog10_3q_pow2(int q)
{
        return (int)(((int64_t)q * INT64_C(661971961083) - INT64_C(274743187321)) >> 41);
}

/* floor(log2(10^e)) */
static inline int numfmt_flog2_pow10(int e)
{
        return (int)((int64_t)e * INT64_C(913124641741) >> 38);
}

#endif
