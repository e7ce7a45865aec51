/*
 * numfmt: exact, locale-free number formatting for the result files.
 * The contract and the DESIGN note are in numfmt.h.
 */
#include "engine/record/numfmt.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "engine/record/numfmt_digits.h"
#include "engine/record/numfmt_log.h"
#include "numfmt_pow10.h"       /* numfmt_g[], written by numfmt_gen.c at build time */

#define F64_FRAC_BITS   52
#define F64_FRAC_MASK   ((UINT64_C(1) << F64_FRAC_BITS) - 1)
#define F32_FRAC_BITS   23
#define F32_FRAC_MASK   ((UINT32_C(1) << F32_FRAC_BITS) - 1)

static const char digit_pairs[201] =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
        "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";

static const uint64_t pow10_u64[20] = {
        UINT64_C(1), UINT64_C(10), UINT64_C(100), UINT64_C(1000), UINT64_C(10000),
        UINT64_C(100000), UINT64_C(1000000), UINT64_C(10000000), UINT64_C(100000000),
        UINT64_C(1000000000), UINT64_C(10000000000), UINT64_C(100000000000),
        UINT64_C(1000000000000), UINT64_C(10000000000000), UINT64_C(100000000000000),
        UINT64_C(1000000000000000), UINT64_C(10000000000000000), UINT64_C(100000000000000000),
        UINT64_C(1000000000000000000), UINT64_C(10000000000000000000),
};

/* The number of decimal digits of u > 0: log10 from the bit length, then one compare. */
static inline int digit_count(uint64_t u)
{
        int t = ((64 - __builtin_clzll(u)) * 1233) >> 12;       /* 1233 / 4096 ~ log10(2) */

        return t + 1 - (u < pow10_u64[t]);
}

/*
 * Exactly 8 digits of u < 10^8 at p. The two halves are independent, so
 * the four divisions (multiplications by the compiler) overlap.
 */
static inline void put8(char *p, uint32_t u)
{
        uint32_t a = u / 10000, b = u % 10000;

        memcpy(p, digit_pairs + (a / 100) * 2, 2);
        memcpy(p + 2, digit_pairs + (a % 100) * 2, 2);
        memcpy(p + 4, digit_pairs + (b / 100) * 2, 2);
        memcpy(p + 6, digit_pairs + (b % 100) * 2, 2);
}

/* The nd = digit_count(u) digits of u at dst. */
static inline void put_digits(char *dst, uint64_t u, int nd)
{
        char *end = dst + nd;
        uint32_t w;

        while (u >= 100000000) {
                end -= 8;
                put8(end, (uint32_t)(u % 100000000));
                u /= 100000000;
        }
        /* The rest (1 to 8 digits): four, then two, then one or two. */
        w = (uint32_t)u;
        if (w >= 10000) {
                uint32_t lo = w % 10000;

                w /= 10000;
                end -= 4;
                memcpy(end, digit_pairs + (lo / 100) * 2, 2);
                memcpy(end + 2, digit_pairs + (lo % 100) * 2, 2);
        }
        if (w >= 100) {
                end -= 2;
                memcpy(end, digit_pairs + (w % 100) * 2, 2);
                w /= 100;
        }
        if (w >= 10)
                memcpy(end - 2, digit_pairs + w * 2, 2);
        else
                end[-1] = (char)('0' + w);
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/*
 * The nd = digit_count(u) digits of u < 10^17 at dst with whole 8-byte
 * stores; bytes up to dst + 8 past a shorter text may be overwritten (with
 * zeros). Two stores that overlap put a 9- to 16-digit number in place:
 * the high block shifted past its leading zeros, then the low block.
 */
static inline void put_digits_wide(char *dst, uint64_t u, int nd)
{
        uint64_t w;

        if (nd <= 8) {
                w = numfmt_digits8((uint32_t)u) >> (8 * (8 - nd));
                memcpy(dst, &w, 8);
                return;
        }
        if (nd == 17) {
                uint64_t hi = u / 100000000;

                dst[0] = (char)('0' + hi / 100000000);
                w = numfmt_digits8((uint32_t)(hi % 100000000));
                memcpy(dst + 1, &w, 8);
                w = numfmt_digits8((uint32_t)(u % 100000000));
                memcpy(dst + 9, &w, 8);
                return;
        }
        w = numfmt_digits8((uint32_t)(u / 100000000)) >> (8 * (16 - nd));
        memcpy(dst, &w, 8);
        w = numfmt_digits8((uint32_t)(u % 100000000));
        memcpy(dst + nd - 8, &w, 8);
}
#else
static inline void put_digits_wide(char *dst, uint64_t u, int nd)
{
        put_digits(dst, u, nd);
}
#endif

size_t numfmt_u64(char *dst, uint64_t v)
{
        int nd = v ? digit_count(v) : 1;

        put_digits(dst, v, nd);
        return (size_t)nd;
}

size_t numfmt_i64(char *dst, int64_t v)
{
        if (v < 0) {
                *dst = '-';
                /* 0 - (uint64_t)v is |v| even for INT64_MIN. */
                return 1 + numfmt_u64(dst + 1, UINT64_C(0) - (uint64_t)v);
        }
        return numfmt_u64(dst, (uint64_t)v);
}

/*
 * dst[1..] holds digits; moves the first x + 1 of them one place left and
 * puts the decimal point after them. For x < 7 (values below 10^7, the
 * usual ones) that is one 8-byte word assembled from two overlapping
 * loads: no loop, and no memmove() call (which the compiler makes of a
 * byte loop). The word is dst[0..7] as they must end up: its bytes past
 * the text, if any, are stored back unchanged, and all lie within the
 * NUMFMT_F64_MAX bytes the caller provides.
 */
static inline void point_after(char *dst, int x)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (x < 7) {
                uint64_t next, cur, low, high;

                memcpy(&next, dst + 1, 8);      /* digits 0..7 */
                memcpy(&cur, dst, 8);           /* the byte before them, digits 0..6 */
                low = (UINT64_C(1) << (8 * (x + 1))) - 1;      /* bytes 0..x */
                high = ~((low << 8) | 0xff);                    /* bytes x+2..7 */
                next = (next & low) | (uint64_t)'.' << (8 * (x + 1)) | (cur & high);
                memcpy(dst, &next, 8);
                return;
        }
#endif
        for (int i = 0; i <= x; i++)
                dst[i] = dst[i + 1];
        dst[x + 1] = '.';
}

/*
 * The value c * 10^q as text, c > 0 (layout in numfmt.h). The digits are
 * written once, straight to where they belong. dst has room for
 * NUMFMT_F64_MAX - 1 bytes (a sign may precede it; NUMFMT_F32_MAX - 1 for
 * a float's at most 9 digits): no store reaches past dst + 5 + 17 (the
 * "0.000" layout), or dst + 5 + 8 for a float's.
 */
/* Always inlined: a call here costs more than the digits (register saves). */
static inline __attribute__((always_inline)) size_t emit(char *dst, uint64_t c, int q)
{
        int nd, x;
        char *p;

        /* Trailing zeros go: the shortest digits, as the layout wants them. */
        if (c % 10 == 0) {
                /* Up to 16 zeros (c < 10^17): by 8s, then 4, 2 and 1, not one by one. */
                while (c % 100000000 == 0) {
                        c /= 100000000;
                        q += 8;
                }
                if (c % 10000 == 0) {
                        c /= 10000;
                        q += 4;
                }
                if (c % 100 == 0) {
                        c /= 100;
                        q += 2;
                }
                if (c % 10 == 0) {
                        c /= 10;
                        q++;
                }
        }
        nd = digit_count(c);
        x = q + nd - 1;         /* decimal exponent of the leading digit */
        if (x >= -4 && x <= 15) {
                if (q >= 0) {
                        /* An integer: its digits, then q zeros (nd + q <= 16). */
                        put_digits_wide(dst, c, nd);
                        memset(dst + nd, '0', (size_t)q);
                        return (size_t)(nd + q);
                }
                if (x >= 0) {
                        /* The digits one place to the right, the first x + 1 back, then '.'. */
                        put_digits_wide(dst + 1, c, nd);
                        point_after(dst, x);
                        return (size_t)nd + 1;
                }
                /* "0." and -x - 1 zeros (at most 3: the constant is 6 bytes of at most 23). */
                memcpy(dst, "0.0000", 6);
                put_digits_wide(dst + 1 - x, c, nd);
                return (size_t)(1 - x + nd);
        }
        /* d.ddde+XX: the digits one place to the right, the first one back. */
        put_digits_wide(dst + 1, c, nd);
        dst[0] = dst[1];
        p = dst + 1;
        if (nd > 1) {
                *p = '.';
                p += nd;
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
        return (size_t)(p + 2 - dst);
}

/*
 * The shortest decimal in the rounding interval of v = c * 2^q, nearest to
 * v among those (ties to even), as digits (possibly with trailing zeros)
 * and a decimal exponent: Schubfach's choice (DESIGN note in numfmt.h).
 *
 * In units of 2^q / 4, v is cb = 4c and its interval runs from cbl to cbr:
 * half a gap each side (cb -+ 2), except at a power of two (c = 2^52 with
 * a normal neighbour below, asym), where the gap below is half as wide
 * (cb - 1). A decimal exactly at an end reads back as v when c is even
 * (round half to even), so the ends count then and not otherwise.
 *
 * k = floor(log10(width)), so the interval (narrower than 10^(k+1)) holds
 * at most one multiple of 10^(k+1): if it holds one, that one is the
 * shortest decimal (any further trailing zeros go in emit()); otherwise
 * the shortest lie among the multiples of 10^k, and the two nearest v,
 * s * 10^k <= v < t * 10^k, are the ones to try. Each end and v itself are
 * scaled by 10^-k exactly enough with one 64x126-bit product: rop()
 * returns floor(4 * x * 10^-k), with its lowest bit set when the product
 * is not an integer (round to odd), so comparing it with 4 * s (an even
 * number) is exact, and so is the tie test.
 */
struct decimal {
        uint64_t d;
        int e;
        bool edge;      /* within one scaled unit of an end of the interval (see numfmt_f32()) */
};

/*
 * floor(g * cp / 2^127), rounded to odd, g = g[0] * 2^63 + g[1]
 * (numfmt_gen.c). The low half of g[1] * cp is dropped: its error is far below the gap
 * between the scaled value and the next integer, for every c and q of a
 * double (Giulietti's analysis of this product), and for a float's, which
 * the tests check one by one.
 */
static inline uint64_t rop(const uint64_t g[2], uint64_t cp)
{
        const uint64_t mask63 = (UINT64_C(1) << 63) - 1;
        unsigned __int128 x = (unsigned __int128)g[1] * cp;
        unsigned __int128 y = (unsigned __int128)g[0] * cp;
        uint64_t z = ((uint64_t)y >> 1) + (uint64_t)(x >> 64);
        uint64_t vbp = (uint64_t)(y >> 64) + (z >> 63);

        return vbp | (((z & mask63) + mask63) >> 63);
}

/*
 * The decimal chosen, d * 10^e, and whether it is next to an end: d4 is
 * 4 * d in the units of vbl and vbr (10^k / 4), and "next" is within one.
 */
static inline struct decimal pick(uint64_t d, int e, uint64_t d4, uint64_t vbl, uint64_t vbr)
{
        return (struct decimal){ d, e, vbr - d4 + 1 <= 2 || d4 - vbl + 1 <= 2 };
}

/* narrow: the inner half of the interval only (cb -+ 1), for numfmt_f32()'s rare retry. */
static inline struct decimal to_decimal(uint64_t c, int q, bool asym, bool narrow)
{
        uint64_t out = c & 1;   /* 1: the ends of the interval are excluded */
        uint64_t cb = c << 2, cbr = cb + (narrow ? 1 : 2), cbl, vb, vbl, vbr, s, t, sp;
        const uint64_t *g;
        bool upin, wpin;
        int k, h;
        int64_t cmp;

        if (!asym) {
                cbl = cb - (narrow ? 1 : 2);
                k = numfmt_flog10_pow2(q);
        } else {
                cbl = cb - 1;
                k = numfmt_flog10_3q_pow2(q);
        }
        /* 10^-k = g * 2^(flog2pow10(-k) - 125): the product's binary point at 2^127. */
        h = q + numfmt_flog2_pow10(-k) + 2;
        g = numfmt_g[-k - NUMFMT_E_MIN];
        vb = rop(g, cb << h);
        vbl = rop(g, cbl << h);
        vbr = rop(g, cbr << h);
        s = vb >> 2;
        /*
         * The multiples of 10^(k+1) around v first (for the smallest
         * subnormals sp10 may be 0, which vbl > 0 keeps out).
         */
        sp = s / 10;
        upin = vbl + out <= (sp * 10) << 2;
        wpin = ((sp + 1) * 10 << 2) + out <= vbr;
        if (upin != wpin)
                return upin ? pick(sp, k + 1, sp * 40, vbl, vbr) : pick(sp + 1, k + 1, (sp + 1) * 40, vbl, vbr);
        t = s + 1;
        upin = vbl + out <= s << 2;
        wpin = (t << 2) + out <= vbr;
        if (upin != wpin)
                return upin ? pick(s, k, s << 2, vbl, vbr) : pick(t, k, t << 2, vbl, vbr);
        /* Both fit: the nearer; vb against the midpoint 2(s + t), exact as above. */
        cmp = (int64_t)(vb - ((s + t) << 1));
        return cmp < 0 || (cmp == 0 && !(s & 1)) ? pick(s, k, s << 2, vbl, vbr) : pick(t, k, t << 2, vbl, vbr);
}

/* Whether d * 10^e reads back as v through strtod() and a conversion to float. */
static bool f32_reads_back(struct decimal dec, float v)
{
        char text[NUMFMT_U64_MAX + 8];
        size_t n = numfmt_u64(text, dec.d);

        /* Radix-free text, which no locale affects. */
        text[n++] = 'e';
        n += numfmt_i64(text + n, dec.e);
        text[n] = '\0';
        return (float)strtod(text, NULL) == (v < 0 ? -v : v);
}

static size_t non_finite(char *dst, bool nan, bool neg)
{
        const char *s = nan ? "nan" : neg ? "-inf" : "inf";
        size_t n = strlen(s);

        memcpy(dst, s, n);
        return n;
}

/* numfmt_f64(), inlined into numfmt_f64_list()'s loop. */
static inline size_t f64_text(char *dst, double v)
{
        struct decimal dec;
        uint64_t bits, c;
        int be, q;
        char *p = dst;

        memcpy(&bits, &v, sizeof bits);
        be = (int)(bits >> F64_FRAC_BITS) & 0x7ff;
        c = bits & F64_FRAC_MASK;
        if (be == 0x7ff)
                return non_finite(dst, c != 0, bits >> 63);
        if (bits >> 63)
                *p++ = '-';
        if (be == 0) {
                if (c == 0) {
                        *p++ = '0';
                        return (size_t)(p - dst);
                }
                q = NUMFMT_Q_MIN;
        } else {
                c |= UINT64_C(1) << F64_FRAC_BITS;
                q = be - 1075;
        }
        /* Integers below 2^53 (< 10^16, so always in fixed notation). */
        if (q <= 0 && q > -53 && (c & ((UINT64_C(1) << -q) - 1)) == 0)
                return (size_t)(p - dst) + numfmt_u64(p, c >> -q);
        dec = to_decimal(c, q, c == UINT64_C(1) << F64_FRAC_BITS && be > 1, false);
        return (size_t)(p - dst) + emit(p, dec.d, dec.e);
}

size_t numfmt_f64(char *dst, double v)
{
        return f64_text(dst, v);
}

size_t numfmt_f64_list(char *dst, const double *v, size_t n, char sep)
{
        char *p = dst;

        for (size_t i = 0; i < n; i++) {
                *p++ = sep;
                p += f64_text(p, v[i]);
        }
        return (size_t)(p - dst);
}

size_t numfmt_f32(char *dst, float v)
{
        struct decimal dec;
        uint32_t bits, c;
        int be, q;
        char *p = dst;

        memcpy(&bits, &v, sizeof bits);
        be = (int)(bits >> F32_FRAC_BITS) & 0xff;
        c = bits & F32_FRAC_MASK;
        if (be == 0xff)
                return non_finite(dst, c != 0, bits >> 31);
        if (bits >> 31)
                *p++ = '-';
        if (be == 0) {
                if (c == 0) {
                        *p++ = '0';
                        return (size_t)(p - dst);
                }
                q = -149;
        } else {
                c |= UINT32_C(1) << F32_FRAC_BITS;
                q = be - 150;
        }
        if (q <= 0 && q > -24 && (c & ((UINT32_C(1) << -q) - 1)) == 0)
                return (size_t)(p - dst) + numfmt_u64(p, c >> -q);
        dec = to_decimal(c, q, c == UINT32_C(1) << F32_FRAC_BITS && be > 1, false);
        /*
         * strtod() then a conversion to float rounds twice: a decimal inside
         * the float's interval but within half a double's ulp of one of its
         * ends reads as that end, a tie, which goes to the even neighbour:
         * wrong when c is odd. Such a decimal is next to an end in the
         * scaled units too; then the text is checked with strtod(), and if
         * it fails, the shortest decimal of the inner half of the interval
         * (far from both ends) is taken instead. Of all 2^32 floats only
         * +-0x1.5c87fap-84 ("7.038531e-26" reads back as its neighbour) take
         * that retry (tests/test_numfmt.c, f32_every_float_exhaustive).
         */
        if (dec.edge && (c & 1) && !f32_reads_back(dec, v))
                dec = to_decimal(c, q, false, true);
        return (size_t)(p - dst) + emit(p, dec.d, dec.e);
}
