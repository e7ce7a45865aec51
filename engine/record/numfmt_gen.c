/*
 * numfmt_gen: writes numfmt_pow10.h, the table that numfmt.c scales by,
 * at build time, with exact integer arithmetic (no floating point).
 *
 * For every e in NUMFMT_E_MIN..NUMFMT_E_MAX the table holds g, the 126-bit
 * integer with 10^e = g * 2^r approximately, 2^125 <= g < 2^126 and
 * r = floor(log2(10^e)) - 125, rounded up: g = floor(10^e * 2^-r) + 1. It
 * is split into two 63-bit halves (g = hi * 2^63 + lo), the shape the
 * round-to-odd product in numfmt.c works on.
 *
 * It also checks, exactly, the three integer logarithms numfmt.c computes
 * with multiply-and-shift (numfmt_log.h) over every exponent they are used
 * for, and the eight-digits-at-once conversion (numfmt_digits.h) for every
 * input, so a wrong constant fails the build instead of a digit.
 *
 * Usage: numfmt_gen OUTPUT.h
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/record/numfmt_digits.h"
#include "engine/record/numfmt_log.h"

#define LIMBS   200     /* 6400 bits: 5^1100 * 2^1100 is about 3660 */

struct big {
        uint32_t w[LIMBS];      /* little-endian */
};

static void die(const char *what, int arg)
{
        fprintf(stderr, "numfmt_gen: %s (%d)\n", what, arg);
        exit(1);
}

static void big_set(struct big *b, uint32_t v)
{
        memset(b, 0, sizeof *b);
        b->w[0] = v;
}

static void big_mul_small(struct big *b, uint32_t m)
{
        uint64_t carry = 0;

        for (int i = 0; i < LIMBS; i++) {
                uint64_t t = (uint64_t)b->w[i] * m + carry;

                b->w[i] = (uint32_t)t;
                carry = t >> 32;
        }
        if (carry)
                die("overflow", (int)m);
}

static void big_shl(struct big *b, int n)
{
        for (; n > 0; n--) {
                uint32_t carry = 0;

                for (int i = 0; i < LIMBS; i++) {
                        uint32_t nc = b->w[i] >> 31;

                        b->w[i] = b->w[i] << 1 | carry;
                        carry = nc;
                }
                if (carry)
                        die("overflow in shift", n);
        }
}

static int big_cmp(const struct big *a, const struct big *b)
{
        for (int i = LIMBS - 1; i >= 0; i--)
                if (a->w[i] != b->w[i])
                        return a->w[i] < b->w[i] ? -1 : 1;
        return 0;
}

static void big_sub(struct big *a, const struct big *b)
{
        int64_t borrow = 0;

        for (int i = 0; i < LIMBS; i++) {
                int64_t t = (int64_t)a->w[i] - b->w[i] - borrow;

                borrow = t < 0;
                a->w[i] = (uint32_t)t;
        }
}

static int big_bitlen(const struct big *b)
{
        for (int i = LIMBS - 1; i >= 0; i--)
                if (b->w[i])
                        return 32 * i + 32 - __builtin_clz(b->w[i]);
        return 0;
}

static int big_bit(const struct big *b, int i)
{
        return (int)(b->w[i / 32] >> (i % 32)) & 1;
}

/* m * 2^p2 * 5^p5 for p2, p5 >= 0. */
static void big_term(struct big *b, uint32_t m, int p2, int p5)
{
        big_set(b, m);
        for (int i = 0; i < p5; i++)
                big_mul_small(b, 5);
        big_shl(b, p2);
}

/* The sign of m * 2^p2 * 5^p5 - 1, exactly. */
static int cmp_one(uint32_t m, int p2, int p5)
{
        static struct big l, r;

        big_term(&l, m, p2 > 0 ? p2 : 0, p5 > 0 ? p5 : 0);
        big_term(&r, 1, p2 < 0 ? -p2 : 0, p5 < 0 ? -p5 : 0);
        return big_cmp(&l, &r);
}

static void check_logs(void)
{
        for (int q = NUMFMT_Q_MIN - 30; q <= NUMFMT_Q_MAX + 30; q++) {
                int k = numfmt_flog10_pow2(q);

                /* 10^k <= 2^q < 10^(k+1) */
                if (cmp_one(1, q - k, -k) < 0 || cmp_one(1, q - k - 1, -k - 1) >= 0)
                        die("numfmt_flog10_pow2 is wrong", q);
                /* 10^k <= 3 * 2^(q-2) < 10^(k+1) */
                k = numfmt_flog10_3q_pow2(q);
                if (cmp_one(3, q - 2 - k, -k) < 0 || cmp_one(3, q - 2 - k - 1, -k - 1) >= 0)
                        die("numfmt_flog10_3q_pow2 is wrong", q);
        }
        for (int e = NUMFMT_E_MIN - 10; e <= NUMFMT_E_MAX + 10; e++) {
                int f = numfmt_flog2_pow10(e);

                /* 2^f <= 10^e < 2^(f+1) */
                if (cmp_one(1, e - f, e) < 0 || cmp_one(1, e - f - 1, e) >= 0)
                        die("numfmt_flog2_pow10 is wrong", e);
        }
}

/* Byte i of the word is digit i of u, most significant first. */
static void check_digits8(void)
{
        for (uint32_t u = 0; u < 100000000; u++) {
                uint64_t w = numfmt_digits8(u);
                uint32_t r = u;

                for (int i = 7; i >= 0; i--, r /= 10)
                        if (((w >> (8 * i)) & 0xff) != '0' + r % 10)
                                die("numfmt_digits8 is wrong", (int)u);
        }
}

/* g for 10^e (see the top of the file), as an unsigned 128-bit integer. */
static unsigned __int128 g_of(int e)
{
        static struct big p, rem;
        unsigned __int128 g = 0;
        int b;

        big_term(&p, 1, e >= 0 ? e : -e, e >= 0 ? e : -e);     /* 10^|e| */
        b = big_bitlen(&p);
        if (e >= 0) {
                /* g = floor(10^e / 2^(b-126)) + 1, a plain shift either way. */
                if (b <= 126) {
                        for (int i = b - 1; i >= 0; i--)
                                g = g << 1 | (unsigned)big_bit(&p, i);
                        g <<= 126 - b;
                } else {
                        for (int i = b - 1; i >= b - 126; i--)
                                g = g << 1 | (unsigned)big_bit(&p, i);
                }
                return g + 1;
        }
        /* g = floor(2^(125+b) / 10^|e|) + 1, by binary long division. */
        big_set(&rem, 0);
        for (int i = 125 + b; i >= 0; i--) {
                big_shl(&rem, 1);
                if (i == 125 + b)
                        rem.w[0] |= 1;
                g <<= 1;
                if (big_cmp(&rem, &p) >= 0) {
                        big_sub(&rem, &p);
                        g |= 1;
                }
        }
        return g + 1;
}

int main(int argc, char **argv)
{
        const unsigned __int128 lo_bound = (unsigned __int128)1 << 125;
        const uint64_t mask63 = (UINT64_C(1) << 63) - 1;
        FILE *f;

        if (argc != 2)
                die("usage: numfmt_gen OUTPUT.h", argc);
        check_logs();
        check_digits8();
        f = fopen(argv[1], "w");
        if (!f)
                die("cannot open the output", 0);
        fprintf(f, "/* Generated by numfmt_gen.c at build time: do not edit. */\n"
                   "/* g(e) = floor(10^e * 2^-r) + 1 in [2^125, 2^126), r = floor(log2 10^e) - 125, */\n"
                   "/* as { g >> 63, g & (2^63 - 1) }, for e = NUMFMT_E_MIN..NUMFMT_E_MAX. */\n"
                   "static const uint64_t numfmt_g[%d][2] = {\n",
                NUMFMT_E_MAX - NUMFMT_E_MIN + 1);
        for (int e = NUMFMT_E_MIN; e <= NUMFMT_E_MAX; e++) {
                unsigned __int128 g = g_of(e);

                if (g < lo_bound || g > 2 * lo_bound)
                        die("g out of range", e);
                fprintf(f, "        { UINT64_C(0x%016" PRIx64 "), UINT64_C(0x%016" PRIx64 ") }, /* %d */\n",
                        (uint64_t)(g >> 63), (uint64_t)g & mask63, e);
        }
        fprintf(f, "};\n");
        if (fclose(f) != 0)
                die("cannot write the output", 0);
        return 0;
}
