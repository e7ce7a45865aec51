/*
 * numfmt_ref: the previous numfmt_f64()/numfmt_f32() (x87 long double
 * scaling, strtod() on near-boundary candidates), kept unchanged as a
 * second, independent implementation to compare the current one with:
 * the two must agree digit for digit wherever this one is documented to
 * pick the nearest shortest digits (1e-10 <= |v| < 1e44, Float32
 * 1e-18 .. 1e36), and in length everywhere.
 */
#include "numfmt_ref.h"

#include <stdint.h>

#include <float.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#if LDBL_MANT_DIG < 64
#error "numfmt needs a long double with at least a 64-bit mantissa (x86-64, aarch64)"
#endif

#define F64_FRAC_BITS   52
#define F64_FRAC_MASK   ((UINT64_C(1) << F64_FRAC_BITS) - 1)
#define F32_FRAC_BITS   23
#define F32_FRAC_MASK   ((UINT32_C(1) << F32_FRAC_BITS) - 1)
#define P10_MIN         (-352)          /* pow10_ld() domain: P10_MIN..P10_MIN+703 */

static const char digit_pairs[201] =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
        "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";

/*
 * 10^(32k - 352) for k = 0..21 and 10^j for j = 0..31. The compiler rounds
 * each literal to the nearest long double, so each entry is within half an
 * ulp (2^-64 relative) of the power it names; 10^0..10^27 are exact.
 */
static const long double p10_hi[22] = {
        1e-352L, 1e-320L, 1e-288L, 1e-256L, 1e-224L, 1e-192L, 1e-160L, 1e-128L,
        1e-96L, 1e-64L, 1e-32L, 1e0L, 1e32L, 1e64L, 1e96L, 1e128L,
        1e160L, 1e192L, 1e224L, 1e256L, 1e288L, 1e320L,
};
static const uint64_t pow10_u64[18] = {
        UINT64_C(1), UINT64_C(10), UINT64_C(100), UINT64_C(1000), UINT64_C(10000),
        UINT64_C(100000), UINT64_C(1000000), UINT64_C(10000000), UINT64_C(100000000),
        UINT64_C(1000000000), UINT64_C(10000000000), UINT64_C(100000000000),
        UINT64_C(1000000000000), UINT64_C(10000000000000), UINT64_C(100000000000000),
        UINT64_C(1000000000000000), UINT64_C(10000000000000000), UINT64_C(100000000000000000),
};
static const long double p10_lo[32] = {
        1e0L, 1e1L, 1e2L, 1e3L, 1e4L, 1e5L, 1e6L, 1e7L,
        1e8L, 1e9L, 1e10L, 1e11L, 1e12L, 1e13L, 1e14L, 1e15L,
        1e16L, 1e17L, 1e18L, 1e19L, 1e20L, 1e21L, 1e22L, 1e23L,
        1e24L, 1e25L, 1e26L, 1e27L, 1e28L, 1e29L, 1e30L, 1e31L,
};

/* 10^p for P10_MIN <= p < P10_MIN + 704, relative error below 3 * 2^-64. */
static long double pow10_ld(int p)
{
        unsigned u = (unsigned)(p - P10_MIN);

        return p10_hi[u >> 5] * p10_lo[u & 31];
}

/* An estimate of floor(log10(2^e)) for |e| < 1200, off by at most one. */
static int log10_pow2_est(int e)
{
        if (e >= 0)
                return (e * 78913) >> 18;
        return -((-e * 78913 + (1 << 18) - 1) >> 18);
}

/* 2^e as a long double, for -1074 <= e <= 1023 (built as a double's bits). */
static long double pow2_ld(int e)
{
        uint64_t bits;
        double d;

        if (e >= -1022)
                bits = (uint64_t)(e + 1023) << F64_FRAC_BITS;
        else
                bits = UINT64_C(1) << (e + 1074);
        memcpy(&d, &bits, sizeof d);
        return d;
}

/* Writes exactly 8 digits of u < 10^8 ending just before end (32-bit arithmetic). */
static void u32_rev8(char *end, uint32_t u)
{
        for (int i = 0; i < 4; i++) {
                end -= 2;
                memcpy(end, digit_pairs + (u % 100) * 2, 2);
                u /= 100;
        }
}

/* Writes u's decimal digits so that they end just before end; returns the first. */
static char *u64_rev(char *end, uint64_t u)
{
        uint32_t w;

        while (u >= 100000000) {
                u32_rev8(end, (uint32_t)(u % 100000000));
                u /= 100000000;
                end -= 8;
        }
        w = (uint32_t)u;
        while (w >= 100) {
                end -= 2;
                memcpy(end, digit_pairs + (w % 100) * 2, 2);
                w /= 100;
        }
        if (w >= 10) {
                end -= 2;
                memcpy(end, digit_pairs + w * 2, 2);
        } else {
                *--end = (char)('0' + w);
        }
        return end;
}

static size_t numfmt_u64(char *dst, uint64_t v)
{
        char tmp[20];
        char *s = u64_rev(tmp + sizeof tmp, v);
        size_t n = (size_t)(tmp + sizeof tmp - s);

        memcpy(dst, s, n);
        return n;
}

static size_t numfmt_i64(char *dst, int64_t v)
{
        if (v < 0) {
                *dst = '-';
                /* 0 - (uint64_t)v is |v| even for INT64_MIN. */
                return 1 + numfmt_u64(dst + 1, UINT64_C(0) - (uint64_t)v);
        }
        return numfmt_u64(dst, (uint64_t)v);
}

/* The value c * 10^q as text, c > 0 without trailing zeros (layout in numfmt.h). */
static size_t emit(char *dst, uint64_t c, int q)
{
        char tmp[20];
        char *s = u64_rev(tmp + sizeof tmp, c);
        int nd = (int)(tmp + sizeof tmp - s);
        int x = q + nd - 1;             /* decimal exponent of the leading digit */
        char *p = dst;

        if (x >= -4 && x <= 15) {
                if (q >= 0) {
                        memcpy(p, s, (size_t)nd);
                        p += nd;
                        memset(p, '0', (size_t)q);
                        p += q;
                } else if (x >= 0) {
                        memcpy(p, s, (size_t)x + 1);
                        p += x + 1;
                        *p++ = '.';
                        memcpy(p, s + x + 1, (size_t)(nd - x - 1));
                        p += nd - x - 1;
                } else {
                        *p++ = '0';
                        *p++ = '.';
                        memset(p, '0', (size_t)(-x - 1));
                        p += -x - 1;
                        memcpy(p, s, (size_t)nd);
                        p += nd;
                }
                return (size_t)(p - dst);
        }
        *p++ = s[0];
        if (nd > 1) {
                *p++ = '.';
                memcpy(p, s + 1, (size_t)nd - 1);
                p += nd - 1;
        }
        *p++ = 'e';
        if (x < 0) {
                *p++ = '-';
                x = -x;
        } else {
                *p++ = '+';
        }
        if (x >= 100) {
                *p++ = (char)('0' + x / 100);
                x %= 100;
        }
        memcpy(p, digit_pairs + 2 * x, 2);
        p += 2;
        return (size_t)(p - dst);
}

static size_t emit_stripped(char *dst, uint64_t c, int q)
{
        while (c % 10000 == 0) {
                c /= 10000;
                q += 4;
        }
        while (c % 10 == 0) {
                c /= 10;
                q++;
        }
        return emit(dst, c, q);
}

/*
 * The rounding interval of a binary value v: it reads back as itself from
 * any decimal less than 'below' under it or 'above' over it (the half-gaps
 * to its neighbours). fits() computes c * 10^q - v in long double with a
 * relative error below 4 * 2^-64 = 2.2e-19 of v, and a half-gap is more
 * than 2^-54 = 5.55e-17 of v: so the check's error is under 1/256 of a
 * half-gap. A difference that is clear of the boundary by 1/128 of it is
 * decided there; a candidate closer to the boundary than that (about one
 * candidate in a hundred) is decided exactly by the C library's correctly
 * rounded strtod()/strtof() on radix-free text ("<digits>e<exp>"), which
 * no locale affects.
 */
struct interval {
        long double v;          /* |value|, exact */
        long double below, above;
        bool f32;               /* the value is a float */
        int gap_shift;          /* half-gap < 2^-gap_shift of the value; 0: unknown (subnormal) */
};

static void interval_init(struct interval *iv, long double av, int e2, bool narrow_below, bool f32,
                          bool subnormal)
{
        long double half = pow2_ld(e2) / 2;

        iv->v = av;
        iv->above = half;
        /* At a power of two the next value down is half as far away. */
        iv->below = narrow_below ? half / 2 : half;
        iv->f32 = f32;
        iv->gap_shift = subnormal ? 0 : f32 ? 24 : 53;
}

static bool reads_back(const struct interval *iv, uint64_t c, int q)
{
        char text[20 + 8];
        size_t n = numfmt_u64(text, c);

        text[n++] = 'e';
        n += numfmt_i64(text + n, q);
        text[n] = '\0';
        if (iv->f32)
                return strtof(text, NULL) == (float)iv->v &&
                       (float)strtod(text, NULL) == (float)iv->v;
        return strtod(text, NULL) == (double)iv->v;
}

static bool fits(const struct interval *iv, uint64_t c, int q)
{
        long double diff = (long double)c * pow10_ld(q) - iv->v;
        long double half = diff >= 0 ? iv->above : iv->below;
        long double margin = half / 128;

        if (diff < 0)
                diff = -diff;
        if (diff < half - margin)
                return true;
        if (diff > half + margin)
                return false;
        return reads_back(iv, c, q);
}

/*
 * x * y exactly, as hi + *lo (Dekker's product with Veltkamp's split of the
 * 64-bit mantissa into two 32-bit halves, whose products are exact).
 */
static long double two_prod(long double x, long double y, long double *lo)
{
        const long double split = 0x1p32L + 1;
        long double hi = x * y, t, xh, xl, yh, yl;

        t = split * x;
        xh = t - (t - x);
        xl = x - xh;
        t = split * y;
        yh = t - (t - y);
        yl = y - yh;
        *lo = ((xh * yh - hi) + xh * yl + xl * yh) + xl * yl;
        return hi;
}

/*
 * The sign of d * 10^p - v, for d * 10^p within a factor of two of v. The
 * long double difference decides when it is clearly away from zero (its
 * error is below 2^-62 of v); closer than that the sign is computed
 * exactly, wherever 10^|p| is exact in long double (|p| <= 27, i.e.
 * 5^|p| < 2^64): the product is hi + lo exactly, hi - v (or d - hi) is
 * exact by Sterbenz's lemma, and a rounded sum is zero only if it is
 * exactly zero. Outside that range a near-tie keeps the approximate sign.
 */
static int cmp_decimal(uint64_t d, int p, long double v)
{
        long double diff = (long double)d * pow10_ld(p) - v, hi, lo;

        if ((diff < 0 ? -diff : diff) <= v * 0x1p-60L && p >= -27 && p <= 27) {
                if (p >= 0) {
                        hi = two_prod((long double)d, p10_lo[p], &lo);
                        diff = (hi - v) + lo;
                } else {
                        hi = two_prod(v, p10_lo[-p], &lo);
                        diff = ((long double)d - hi) - lo;
                }
        }
        return (diff > 0) - (diff < 0);
}

/*
 * d (a 'digits'-digit integer, value d * 10^(e - digits + 1)) rounded to
 * drop the digits that div = 10^k covers: the candidate that reads back,
 * nearest to the value, if any. Inline, so that div is a constant at each
 * call. Two cases need a second candidate:
 * - d ends in exactly 5, 50, ...: rounding it again may have gone the
 *   wrong way, so the candidate on the value's side of d is tried first
 *   (on an exact tie, the even one, as correct rounding does);
 * - at a power of two the interval is narrower below: a candidate that
 *   misses below can have a neighbour that fits above.
 */
static inline bool take(const struct interval *iv, uint64_t c, int q, uint64_t *ret_c, int *ret_q)
{
        if (!fits(iv, c, q))
                return false;
        *ret_c = c;
        *ret_q = q;
        return true;
}

static inline bool shorten(const struct interval *iv, uint64_t d, int digits, int e, uint64_t div,
                           int k, uint64_t *ret_c, int *ret_q)
{
        uint64_t c = (d + div / 2) / div, rem = d % div;
        int q = e - digits + 1 + k;

        if (rem == div / 2) {
                /* d is a midpoint: the neighbour on the value's side of it first, or the even one. */
                int side = cmp_decimal(d, e - digits + 1, iv->v);
                uint64_t near = side > 0 ? c - 1 : side < 0 ? c : c & 1 ? c - 1 : c;

                return take(iv, near, q, ret_c, ret_q) ||
                       take(iv, near == c ? c - 1 : c, q, ret_c, ret_q);
        }
        /*
         * Integer pre-check, exact: with the unit of d's last digit, the
         * value is within 0.51 of d and its half-gap is below
         * d * 2^-gap_shift + 0.51 * 2^-gap_shift < (d >> gap_shift) + 1,
         * so a candidate further than (d >> gap_shift) + 1 from d cannot
         * fit (nor can the one beyond it, tried at powers of two).
         */
        if (iv->gap_shift && (rem < div / 2 ? rem : div - rem) > (d >> iv->gap_shift) + 1)
                return false;
        return take(iv, c, q, ret_c, ret_q) ||
               (iv->below != iv->above && take(iv, c + 1, q, ret_c, ret_q));
}

/*
 * The integer r (0 <= r < 2^63) as a uint64_t. On x87 the plain conversion
 * switches the rounding mode twice (fldcw), which stalls the pipeline; but
 * r + 2^63 is exact and its 64-bit significand, explicit integer bit
 * included, is r + 2^63 itself.
 */
static uint64_t ld_to_u64(long double r)
{
#if LDBL_MANT_DIG == 64 && (defined(__x86_64__) || defined(__i386__))
        long double y = r + 0x1p63L;
        uint64_t m;

        memcpy(&m, &y, sizeof m);
        return m - (UINT64_C(1) << 63);
#else
        return (uint64_t)r;
#endif
}

/*
 * round(av * 10^(digits-1-E)) as an integer of exactly 'digits' digits
 * (9 or 17), and the E that makes it so: the decimal exponent of av's
 * leading digit. lg2 = floor(log2(av)). Correctly rounded (half to even)
 * where cmp_decimal() is exact; elsewhere at worst the other neighbour,
 * which still round-trips (see the error budget in numfmt_f64()).
 */
static uint64_t scaled_digits(long double av, int lg2, int digits, int *ret_e)
{
        uint64_t lo = pow10_u64[digits - 1], d;
        int e = log10_pow2_est(lg2);
        long double x = av * pow10_ld(digits - 1 - e), r, frac;

        while (x >= lo * 10.0L) {
                e++;
                x = av * pow10_ld(digits - 1 - e);
        }
        while (x < lo) {
                e--;
                x = av * pow10_ld(digits - 1 - e);
        }
        /*
         * Round to nearest (x < 10^17 < 2^63, so x + 2^63 has no fraction
         * bits left). Within 4 times x's error of a half, decide which side
         * of that half the value is on, exactly where possible.
         */
        r = (x + 0x1p63L) - 0x1p63L;
        frac = x - r;
        d = ld_to_u64(r);
        if (0.5L - (frac < 0 ? -frac : frac) <= x * 0x1p-60L) {
                if (frac > 0) {
                        int side = cmp_decimal(10 * d + 5, e - digits, av);

                        d += side < 0 || (side == 0 && (d & 1));
                } else {
                        int side = cmp_decimal(10 * d - 5, e - digits, av);

                        d -= side > 0 || (side == 0 && (d & 1));
                }
        }
        if (d == lo * 10) {
                d = lo;
                e++;
        }
        *ret_e = e;
        return d;
}

/*
 * The shortest rounding of d that reads back, else d itself (which always
 * does). For a normal value, a fitting candidate of 15 digits (6 for a
 * float) is the only one of its length: those decimals are further apart
 * than the interval is wide; so with its trailing zeros removed it is the
 * shortest of all. Subnormals have wider intervals and search from one
 * digit.
 */
static size_t shortest(char *dst, const struct interval *iv, uint64_t d, int digits, int e)
{
        uint64_t c;
        int q;

        if (!iv->gap_shift) {
                for (int k = digits - 1; k > 0; k--)
                        if (shorten(iv, d, digits, e, pow10_u64[k], k, &c, &q))
                                return emit_stripped(dst, c, q);
        } else if (digits == 17) {
                if (shorten(iv, d, 17, e, 100, 2, &c, &q) || shorten(iv, d, 17, e, 10, 1, &c, &q))
                        return emit_stripped(dst, c, q);
        } else {
                if (shorten(iv, d, 9, e, 1000, 3, &c, &q) || shorten(iv, d, 9, e, 100, 2, &c, &q) ||
                    shorten(iv, d, 9, e, 10, 1, &c, &q))
                        return emit_stripped(dst, c, q);
        }
        return emit_stripped(dst, d, e - digits + 1);
}

static size_t non_finite(char *dst, bool nan, bool neg)
{
        const char *s = nan ? "nan" : neg ? "-inf" : "inf";
        size_t n = strlen(s);

        memcpy(dst, s, n);
        return n;
}

size_t numfmt_ref_f64(char *dst, double v)
{
        struct interval iv;
        uint64_t bits, f, d;
        int be, e2, e;
        char *p = dst;

        memcpy(&bits, &v, sizeof bits);
        be = (int)(bits >> F64_FRAC_BITS) & 0x7ff;
        f = bits & F64_FRAC_MASK;
        if (be == 0x7ff)
                return non_finite(dst, f != 0, bits >> 63);
        if (bits >> 63)
                *p++ = '-';
        if (be == 0) {
                if (f == 0) {
                        *p++ = '0';
                        return (size_t)(p - dst);
                }
                e2 = -1074;
        } else {
                f |= UINT64_C(1) << F64_FRAC_BITS;
                e2 = be - 1075;
        }
        /* Integers below 2^53 (< 10^16, so always in fixed notation). */
        if (e2 <= 0 && e2 > -53 && (f & ((UINT64_C(1) << -e2) - 1)) == 0)
                return (size_t)(p - dst) + numfmt_u64(p, f >> -e2);

        interval_init(&iv, v < 0 ? -(long double)v : (long double)v, e2,
                      f == UINT64_C(1) << F64_FRAC_BITS && be > 1, false, be == 0);
        /*
         * Error budget of the 17 digits, which are used unchecked: the
         * scaling's relative error is below 4 * 2^-64 = 2.2e-19 and the
         * rounding of x + 0.5 adds at most 2^-7 for x < 10^17, so
         * |d - exact| <= 0.508 + 10^17 * 2.2e-19 and, with d >= 10^16,
         * |D - v| <= 5.1e-17 |v|, inside the half-gap (> 2^-54 |v| = 5.55e-17 |v|).
         */
        d = scaled_digits(iv.v, e2 + 63 - __builtin_clzll(f), 17, &e);
        return (size_t)(p - dst) + shortest(p, &iv, d, 17, e);
}

size_t numfmt_ref_f32(char *dst, float v)
{
        struct interval iv;
        uint32_t bits, f;
        uint64_t d;
        int be, e2, e;
        char *p = dst;

        memcpy(&bits, &v, sizeof bits);
        be = (int)(bits >> F32_FRAC_BITS) & 0xff;
        f = bits & F32_FRAC_MASK;
        if (be == 0xff)
                return non_finite(dst, f != 0, bits >> 31);
        if (bits >> 31)
                *p++ = '-';
        if (be == 0) {
                if (f == 0) {
                        *p++ = '0';
                        return (size_t)(p - dst);
                }
                e2 = -149;
        } else {
                f |= UINT32_C(1) << F32_FRAC_BITS;
                e2 = be - 150;
        }
        if (e2 <= 0 && e2 > -24 && (f & ((UINT32_C(1) << -e2) - 1)) == 0)
                return (size_t)(p - dst) + numfmt_u64(p, f >> -e2);

        interval_init(&iv, v < 0 ? -(long double)v : (long double)v, e2,
                      f == UINT32_C(1) << F32_FRAC_BITS && be > 1, true, be == 0);
        /* 9 digits always round-trip a float (half-gap > 2^-25 = 3e-8 relative). */
        d = scaled_digits(iv.v, e2 + 63 - __builtin_clzll(f), 9, &e);
        return (size_t)(p - dst) + shortest(p, &iv, d, 9, e);
}
