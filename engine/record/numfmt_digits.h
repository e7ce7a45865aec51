/*
 * numfmt_digits: eight decimal digits at once, shared by numfmt.c and
 * its table generator numfmt_gen.c (which checks it exhaustively).
 */
#ifndef FMUD_ENGINE_NUMFMT_DIGITS_H
#define FMUD_ENGINE_NUMFMT_DIGITS_H

#include <stdint.h>

/*
 * The 8 digits of u < 10^8 (leading zeros included) as ASCII in one word,
 * the first digit in the lowest byte (memory order on little-endian), all
 * at once with lane arithmetic: u splits into two 4-digit halves in 32-bit
 * lanes, each into 2-digit halves in 16-bit lanes (n / 100 = n * 10486 >> 20
 * for n < 10^4), each into digits in bytes (n / 10 = n * 103 >> 10 for
 * n < 100). No lane's product reaches the bits the mask keeps of the lane
 * below it. numfmt_gen checks it against plain division for every u < 10^8
 * before the build goes on.
 */
static inline uint64_t numfmt_digits8(uint32_t u)
{
        uint64_t x = u / 10000 | (uint64_t)(u % 10000) << 32, y;

        y = (x * 10486 >> 20) & UINT64_C(0x0000007f0000007f);
        x = y | (x - y * 100) << 16;
        y = (x * 103 >> 10) & UINT64_C(0x000f000f000f000f);
        x = y | (x - y * 10) << 8;
        return x + UINT64_C(0x3030303030303030);
}

#endif
