/*
 * numfmt: exact text for chosen values, bit-exact round trips over many
 * values, and agreement with the previous, independent implementation
 * (numfmt_ref.c) and with printf's correctly rounded digits.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/record/numfmt.h"
#include "numfmt_ref.h"
#include "support/run.h"
#include "support/tmpdir.h"

static uint64_t rng = 0x9e3779b97f4a7c15u;

/* xorshift64*: deterministic, so a failure is reproducible. */
static uint64_t next(void)
{
        rng ^= rng >> 12;
        rng ^= rng << 25;
        rng ^= rng >> 27;
        return rng * 2685821657736338717u;
}

static double bits_f64(uint64_t u)
{
        double d;

        memcpy(&d, &u, sizeof d);
        return d;
}

static uint64_t f64_bits(double d)
{
        uint64_t u;

        memcpy(&u, &d, sizeof u);
        return u;
}

static uint32_t f32_bits(float f)
{
        uint32_t u;

        memcpy(&u, &f, sizeof u);
        return u;
}

static const char *f64(double v)
{
        static char buf[64];
        size_t n = numfmt_f64(buf, v);

        cr_assert(n <= NUMFMT_F64_MAX, "%zu bytes for %a", n, v);
        buf[n] = '\0';
        return buf;
}

static const char *f32(float v)
{
        static char buf[64];
        size_t n = numfmt_f32(buf, v);

        cr_assert(n <= NUMFMT_F32_MAX, "%zu bytes for %a", n, (double)v);
        buf[n] = '\0';
        return buf;
}

/* The significant digits of a number's text, without leading and trailing zeros, in ret. */
static int sig_digits_of(const char *s, char ret[40])
{
        char d[40];
        int n = 0, first = 0;

        for (; *s && *s != 'e' && n < 39; s++)
                if (*s >= '0' && *s <= '9')
                        d[n++] = *s;
        while (first < n && d[first] == '0')
                first++;
        while (n > first && d[n - 1] == '0')
                n--;
        memcpy(ret, d + first, (size_t)(n - first));
        ret[n - first] = '\0';
        return n - first;
}

static int sig_digits(const char *s)
{
        char d[40];

        return sig_digits_of(s, d);
}

/*
 * The fewest significant digits with which printf's correct rounding reads
 * back. numfmt may need fewer: at a power of two the interval is narrower
 * below, and a digit string rounded up can fit where the correctly rounded
 * one does not.
 */
static int shortest_ref(double v)
{
        char buf[64];

        for (int k = 1; k < 17; k++) {
                snprintf(buf, sizeof buf, "%.*e", k - 1, v);
                if (strtod(buf, NULL) == v)
                        return k;
        }
        return 17;
}

/*
 * Elsewhere the interval is symmetric, the correctly rounded k digits are
 * the nearest k-digit decimal, and the two lengths must be equal; the
 * digits are glibc's correctly rounded ones (ties to even, as Python's).
 */
static void check_length(double v, const char *s)
{
        bool pow2 = (f64_bits(v) & ((UINT64_C(1) << 52) - 1)) == 0;
        char ours[40], ref[40], text[64];
        int n;

        if (pow2) {
                cr_assert(sig_digits(s) <= shortest_ref(v), "%a written as \"%s\"", v, s);
                return;
        }
        n = sig_digits_of(s, ours);
        cr_assert(eq(int, n, shortest_ref(v)), "%a written as \"%s\"", v, s);
        snprintf(text, sizeof text, "%.*e", n - 1, v);
        sig_digits_of(text, ref);
        cr_assert(eq(str, ours, ref), "%a written as \"%s\", correctly rounded \"%s\"", v, s, text);
}

/* Format, read back with strtod, compare bits; every 8th value also for length. */
static void check_f64(double v, unsigned i)
{
        const char *s = f64(v);
        double back = strtod(s, NULL);

        if (isnan(v)) {
                cr_assert(eq(str, (char *)s, "nan"));
                return;
        }
        cr_assert(eq(u64, f64_bits(back), f64_bits(v)), "%a written as \"%s\"", v, s);
        if (i % 8 == 0 && isfinite(v) && v != 0)
                check_length(v, s);
}

Test(numfmt, f64_chosen_values_exactly)
{
        static const struct { double v; const char *s; } cases[] = {
                { 0.0, "0" }, { -0.0, "-0" }, { 1.0, "1" }, { -1.25, "-1.25" },
                { 0.1, "0.1" }, { 0.3, "0.3" }, { 0.1 + 0.2, "0.30000000000000004" },
                { 1.0 / 3, "0.3333333333333333" }, { 2.0 / 3, "0.6666666666666666" },
                { 123.456, "123.456" }, { 0.0001, "0.0001" }, { 0.00001, "1e-05" },
                { 1e15, "1000000000000000" }, { 1e16, "1e+16" }, { 1e22, "1e+22" }, { 1e23, "1e+23" },
                { 9007199254740992.0, "9007199254740992" }, { 123456789012345680.0, "1.2345678901234568e+17" },
                { 5e-324, "5e-324" }, { 2.2250738585072014e-308, "2.2250738585072014e-308" },
                { DBL_MAX, "1.7976931348623157e+308" }, { -DBL_MAX, "-1.7976931348623157e+308" },
                { 1.5e300, "1.5e+300" }, { 6.02214076e23, "6.02214076e+23" }, { 299792458.0, "299792458" },
                { 1e-7, "1e-07" }, { 0.001, "0.001" }, { 1e100, "1e+100" }, { 2.5e-100, "2.5e-100" },
                /* Near-ties: an exact tie (to even, as Python) and a value 2e-21 below a midpoint. */
                { 562949953421312.25, "562949953421312.2" },
                { -0x1.2d075e0f46a52p+3, "-9.407149343334058" },
                { INFINITY, "inf" }, { -INFINITY, "-inf" }, { NAN, "nan" }, { -NAN, "nan" },
        };
        /*
         * Outside 1e-10 .. 1e44 too, the nearest of the shortest (Python's
         * repr() of these bits); subnormals whose shortest text is a
         * multiple of the next power of ten (20 * 2^-1074 is 1e-322).
         */
        static const struct { uint64_t bits; const char *s; } by_bits[] = {
                { 0x000ce892031dd0d3u, "1.7951448051154353e-308" },
                { 0x8883de08bd07c5b6u, "-1.2034087603180943e-267" },
                { 0xaafbfac9691ddf08u, "-1.2492332387323005e-101" },
                { 0x4fe68ddf6181d675u, "8.161239858551425e+76" },
                { 0x2f1556483a72aaecu, "7.029352973766823e-82" },
                { 0x0000000000000014u, "1e-322" }, { 0x8000000000000014u, "-1e-322" },
                { 0x0000000000000001u, "5e-324" }, { 0x0000000000000002u, "1e-323" },
                { 0x000fffffffffffffu, "2.225073858507201e-308" },
        };

        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
                cr_expect(eq(str, (char *)f64(cases[i].v), (char *)cases[i].s), "case %zu", i);
        for (size_t i = 0; i < sizeof by_bits / sizeof by_bits[0]; i++)
                cr_expect(eq(str, (char *)f64(bits_f64(by_bits[i].bits)), (char *)by_bits[i].s),
                          "bits %016llx", (unsigned long long)by_bits[i].bits);
}

/*
 * The previous implementation (long double scaling, strtod() near the
 * boundaries: numfmt_ref.c) chose the nearest of the shortest digits in
 * 1e-10 <= |v| < 1e44 and just as short digits elsewhere: the same text
 * there, the same length everywhere, for millions of random bit patterns
 * and every subnormal class of value. Where they differ, ours is the
 * correctly rounded one (check_length()).
 */
static void check_against_ref(double v)
{
        char ours[64], ref[64];
        size_t n = numfmt_f64(ours, v), m = numfmt_ref_f64(ref, v);
        double av = fabs(v);

        ours[n] = '\0';
        ref[m] = '\0';
        if (strcmp(ours, ref) == 0)
                return;
        cr_assert(av < 1e-10 || av >= 1e44, "%a: \"%s\", previously \"%s\"", v, ours, ref);
        cr_assert(eq(int, sig_digits(ours), sig_digits(ref)), "%a: \"%s\", previously \"%s\"", v,
                  ours, ref);
        cr_assert(eq(u64, f64_bits(strtod(ours, NULL)), f64_bits(v)), "\"%s\"", ours);
        check_length(v, ours);
}

Test(numfmt, f64_same_text_as_the_previous_implementation)
{
        for (unsigned i = 0; i < 2000000; i++) {
                uint64_t u = next();
                double v;

                /* Every fourth a subnormal, every fourth in the usual range 2^-20 .. 2^20. */
                if (i % 4 == 1)
                        u &= (UINT64_C(1) << 52) - 1;
                else if (i % 4 == 2)
                        u = (u & ~(UINT64_C(0x7ff) << 52)) | (uint64_t)(1003 + u % 41) << 52;
                v = bits_f64(u);
                if (!isnan(v))
                        check_against_ref(v);
        }
        for (int e = -1074; e <= 1023; e++) {
                double p = ldexp(1.0, e);

                check_against_ref(p);
                check_against_ref(nextafter(p, 0));
                check_against_ref(nextafter(p, INFINITY));
        }
}

Test(numfmt, f64_random_bit_patterns_round_trip_exactly_and_shortest)
{
        for (unsigned i = 0; i < 1000000; i++)
                check_f64(bits_f64(next()), i);
}

Test(numfmt, f64_subnormals_round_trip_exactly_and_shortest)
{
        for (unsigned i = 0; i < 200000; i++)
                check_f64(bits_f64((next() & ((UINT64_C(1) << 52) - 1)) | (next() & (UINT64_C(1) << 63))), i);
        for (uint64_t m = 1; m < 5000; m++)
                check_f64(bits_f64(m), 0);
}

Test(numfmt, f64_boundaries_round_trip_exactly)
{
        unsigned i = 0;

        /* Every power of two and its neighbours: the narrow interval below them. */
        for (int e = -1074; e <= 1023; e++) {
                double p = ldexp(1.0, e);

                check_f64(p, i++);
                check_f64(nextafter(p, 0), i++);
                check_f64(nextafter(p, INFINITY), i++);
        }
        /* Powers of ten and their neighbours: where the digit count changes. */
        for (int e = -323; e <= 308; e++) {
                char buf[32];
                double p;

                snprintf(buf, sizeof buf, "1e%d", e);
                p = strtod(buf, NULL);
                check_f64(p, 0);
                cr_assert(eq(str, (char *)f64(p), e >= 0 && e <= 15 ? (snprintf(buf, sizeof buf, "%.0f", p), buf)
                                                  : e >= -4 && e < 0 ? (snprintf(buf, sizeof buf, "%.*f", -e, p), buf)
                                                  : (snprintf(buf, sizeof buf, "1e%+03d", e), buf)),
                          "10^%d", e);
                check_f64(nextafter(p, 0), i++);
                check_f64(nextafter(p, INFINITY), i++);
                check_f64(-p, i++);
                /* d * 10^e: one significant digit, read back as such */
                for (int d = 2; d <= 9; d++) {
                        snprintf(buf, sizeof buf, "%de%d", d, e);
                        p = strtod(buf, NULL);
                        if (isinf(p))
                                continue;
                        check_f64(p, 0);
                        cr_assert(eq(int, sig_digits(f64(p)), 1), "%s written as \"%s\"", buf, f64(p));
                }
        }
        check_f64(DBL_MIN, 0);
        check_f64(nextafter(DBL_MIN, 0), 0);
        check_f64(DBL_MAX, 0);
}

Test(numfmt, f64_simulation_like_values_round_trip_exactly)
{
        /* Times n*h and smooth outputs: the values result files mostly hold. */
        for (unsigned n = 0; n < 300000; n++) {
                check_f64(n * 1e-3, n);
                check_f64(0.1 * n, n);
                check_f64(sin(n * 1e-3) * 9.81, n);
                check_f64((double)(next() % 2000000) / 1000, n);
        }
}

Test(numfmt, f64_list_is_each_value_after_a_separator)
{
        double v[64];
        char got[64 * (1 + NUMFMT_F64_MAX)], want[sizeof got];
        size_t n, m = 0;

        for (size_t i = 0; i < 64; i++)
                v[i] = i % 5 == 0 ? bits_f64(next()) : i % 5 == 1 ? -(double)i : sin((double)i) * 1e-3;
        v[7] = NAN;
        v[8] = -0.0;
        for (size_t i = 0; i < 64; i++) {
                want[m++] = ';';
                m += numfmt_f64(want + m, v[i]);
        }
        n = numfmt_f64_list(got, v, 64, ';');
        cr_assert(eq(sz, n, m));
        cr_assert(memcmp(got, want, n) == 0, "%.*s\n%.*s", (int)n, got, (int)m, want);
        cr_assert(eq(sz, numfmt_f64_list(got, v, 0, ','), 0));
}

Test(numfmt, f64_non_finite_read_back_by_strtod)
{
        cr_assert(eq(dbl, strtod(f64(INFINITY), NULL), INFINITY));
        cr_assert(eq(dbl, strtod(f64(-INFINITY), NULL), -INFINITY));
        cr_assert(isnan(strtod(f64(bits_f64(0x7ff0000000000001u)), NULL)));
        cr_assert(isnan(strtod(f64(bits_f64(0xfff8000000000000u)), NULL)));
}

/*
 * One float: reads back through strtof() and through strtod() then a
 * conversion to float (no double rounding trap), and is the previous
 * implementation's text where that one is documented to be the nearest
 * (1e-18 .. 1e36), and as short everywhere.
 */
static void check_f32(uint32_t x)
{
        char ours[64], ref[64];
        size_t n, m;
        float v, a, b;

        memcpy(&v, &x, sizeof v);
        if (isnan(v))
                return;
        n = numfmt_f32(ours, v);
        m = numfmt_ref_f32(ref, v);
        cr_assert(n <= NUMFMT_F32_MAX, "%zu bytes for %a", n, (double)v);
        ours[n] = '\0';
        ref[m] = '\0';
        a = strtof(ours, NULL);
        b = (float)strtod(ours, NULL);
        cr_assert(eq(u32, f32_bits(a), x), "%a written as \"%s\"", (double)v, ours);
        cr_assert(eq(u32, f32_bits(b), x), "%a written as \"%s\" (via strtod)", (double)v, ours);
        if (strcmp(ours, ref) == 0)
                return;
        cr_assert(fabsf(v) < 1e-18f || fabsf(v) >= 1e36f, "%a: \"%s\", previously \"%s\"",
                  (double)v, ours, ref);
        cr_assert(eq(int, sig_digits(ours), sig_digits(ref)), "%a: \"%s\", previously \"%s\"",
                  (double)v, ours, ref);
}

Test(numfmt, f32_chosen_values_exactly)
{
        static const struct { float v; const char *s; } cases[] = {
                { 0.0f, "0" }, { -0.0f, "-0" }, { 0.1f, "0.1" }, { 1.0f / 3, "0.33333334" },
                { 16777216.0f, "16777216" }, { 16777217.0f, "16777216" }, { 123456.7f, "123456.7" },
                { FLT_MAX, "3.4028235e+38" }, { FLT_MIN, "1.1754944e-38" }, { 1e-45f, "1e-45" },
                { -2.5f, "-2.5" }, { 1e10f, "10000000000" }, { 1e16f, "1e+16" }, { 3.14159265f, "3.1415927" },
                { INFINITY, "inf" }, { -INFINITY, "-inf" }, { NAN, "nan" },
        };

        uint32_t trap = 0x15ae43fdu;
        float t;

        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
                cr_expect(eq(str, (char *)f32(cases[i].v), (char *)cases[i].s), "case %zu", i);
        /*
         * The one float whose shortest decimal, 7.038531e-26, strtod() reads
         * as the midpoint to its neighbour (a double), which the conversion
         * to float then rounds to that even neighbour: one digit more.
         */
        memcpy(&t, &trap, sizeof t);
        cr_expect(eq(str, (char *)f32(t), "7.0385307e-26"));
        cr_expect(eq(str, (char *)f32(-t), "-7.0385307e-26"));
        check_f32(trap);
        check_f32(trap | 0x80000000u);
}

Test(numfmt, f32_round_trips_through_strtof_and_strtod)
{
        /* A sample of every exponent and mantissa, subnormals included. */
        for (uint64_t u = 0; u < (UINT64_C(1) << 32); u += 4099) {
                uint32_t x = (uint32_t)u;
                float v, a, b;
                const char *s;

                memcpy(&v, &x, sizeof v);
                if (isnan(v))
                        continue;
                s = f32(v);
                a = strtof(s, NULL);
                b = (float)strtod(s, NULL);
                cr_assert(eq(u32, f32_bits(a), x), "%a written as \"%s\"", (double)v, s);
                cr_assert(eq(u32, f32_bits(b), x), "%a written as \"%s\" (via strtod)", (double)v, s);
        }
}

Test(numfmt, f32_same_text_as_the_previous_implementation)
{
        /* Every subnormal class and exponent; every float in [1, 2); a stride over all. */
        for (uint32_t x = 0; x < (UINT32_C(1) << 23); x += 7)
                check_f32(x);
        for (uint32_t x = 0x3f800000u; x < 0x40000000u; x += 3)
                check_f32(x);
        for (uint64_t u = 0; u < (UINT64_C(1) << 32); u += 1021)
                check_f32((uint32_t)u);
}

/* All 2^32 floats (about 30 minutes); only with FMUD_NUMFMT_EXHAUSTIVE=1 in the environment. */
Test(numfmt, f32_every_float_exhaustive)
{
        const char *on = getenv("FMUD_NUMFMT_EXHAUSTIVE");

        if (!on || strcmp(on, "1") != 0)
                cr_skip_test("set FMUD_NUMFMT_EXHAUSTIVE=1 to check all 2^32 floats");
        for (uint64_t u = 0; u < (UINT64_C(1) << 32); u++)
                check_f32((uint32_t)u);
}

Test(numfmt, integers_of_every_width)
{
        char buf[32];

        buf[numfmt_i64(buf, INT64_MIN)] = '\0';
        cr_assert(eq(str, buf, "-9223372036854775808"));
        buf[numfmt_i64(buf, INT64_MAX)] = '\0';
        cr_assert(eq(str, buf, "9223372036854775807"));
        buf[numfmt_u64(buf, UINT64_MAX)] = '\0';
        cr_assert(eq(str, buf, "18446744073709551615"));
        buf[numfmt_i64(buf, 0)] = '\0';
        cr_assert(eq(str, buf, "0"));
        buf[numfmt_i64(buf, -1)] = '\0';
        cr_assert(eq(str, buf, "-1"));
        for (uint64_t p = 1, k = 0; k < 20; k++, p *= 10) {
                char ref[32];

                for (uint64_t v = p - 1; v <= p + 1; v++) {
                        snprintf(ref, sizeof ref, "%llu", (unsigned long long)v);
                        buf[numfmt_u64(buf, v)] = '\0';
                        cr_assert(eq(str, buf, ref));
                        snprintf(ref, sizeof ref, "%lld", -(long long)(v & INT64_MAX));
                        buf[numfmt_i64(buf, -(int64_t)(v & INT64_MAX))] = '\0';
                        cr_assert(eq(str, buf, ref));
                }
        }
}

/* A comma-decimal locale built on the fly (localedef), or skip. */
static char *make_comma_locale(void)
{
        char *dir = tmpdir_new("numfmt-locale"), *out;
        char *argv[] = { "/usr/bin/localedef", "-i", "de_DE", "-f", "UTF-8", NULL, NULL };
        struct run_result rr;

        cr_assert(dir != NULL);
        cr_assert(asprintf(&out, "%s/de_DE.UTF-8", dir) > 0);
        argv[5] = out;
        if (run_capture(argv, &rr) < 0 || rr.exit_code > 1) {
                tmpdir_free(dir);
                cr_skip_test("localedef cannot build de_DE.UTF-8 here");
        }
        run_result_fini(&rr);
        free(out);
        setenv("LOCPATH", dir, 1);
        if (!setlocale(LC_ALL, "de_DE.UTF-8")) {
                tmpdir_free(dir);
                cr_skip_test("de_DE.UTF-8 not loadable");
        }
        return dir;
}

Test(numfmt, text_is_the_same_in_a_comma_decimal_locale)
{
        char *dir = make_comma_locale();
        locale_t c = newlocale(LC_ALL_MASK, "C", (locale_t)0);
        char buf[32];

        snprintf(buf, sizeof buf, "%.1f", 0.5);
        cr_assert(eq(str, buf, "0,5"), "the locale is not in effect");
        cr_assert(eq(str, (char *)f64(0.5), "0.5"));
        cr_assert(eq(str, (char *)f32(0.25f), "0.25"));
        /* The exact tie-breaker (strtod on radix-free text) runs here too. */
        for (unsigned i = 0; i < 200000; i++) {
                double v = bits_f64(next());
                const char *s;

                if (!isfinite(v))
                        continue;
                s = f64(v);
                cr_assert(eq(u64, f64_bits(strtod_l(s, NULL, c)), f64_bits(v)), "\"%s\"", s);
        }
        freelocale(c);
        setlocale(LC_ALL, "C");
        tmpdir_free(dir);
}

/* numfmt_grid() of grid point k of (t0, h), NUL-terminated into buf. */
static const char *grid_text(char *buf, double t0, double h, double t)
{
        struct numfmt_grid g;
        size_t n;

        numfmt_grid_init(&g, t0, h);
        n = numfmt_grid(&g, buf, t);
        cr_assert(n <= NUMFMT_F64_MAX);
        buf[n] = '\0';
        return buf;
}

Test(numfmt, grid_points_print_as_the_step_was_written)
{
        static const struct {
                double t0, h;
                uint64_t k;
                const char *text, *shortest;
        } cases[] = {
                { 0, 0.1, 7, "0.7", "0.7000000000000001" },
                { 0, 0.1, 3, "0.3", "0.30000000000000004" },
                { 0, 0.1, 10, "1", "1" },
                { 0, 0.01, 7, "0.07", "0.07" },
                { 0.5, 0.1, 2, "0.7", "0.7" },
                { 0, 1e-3, 123457, "123.457", "123.45700000000001" },
                { -1, 0.1, 3, "-0.7", "-0.7" },
                { 0, 1e-7, 3, "3e-07", "3e-07" },
                { 1e20, 1e19, 3, "1.3e+20", "1.3e+20" },
        };
        char buf[NUMFMT_F64_MAX + 8], ref[NUMFMT_F64_MAX + 8];

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                double t = cases[i].t0 + (double)cases[i].k * cases[i].h;

                ref[numfmt_f64(ref, t)] = '\0';
                /* The double the FMUs are given prints as it always did... */
                cr_assert(eq(str, ref, (char *)cases[i].shortest), "case %zu", i);
                /* ...and the grid point as the decimal the user wrote. */
                cr_assert(eq(str, (char *)grid_text(buf, cases[i].t0, cases[i].h, t),
                             (char *)cases[i].text), "case %zu", i);
        }
}

Test(numfmt, grid_leaves_other_times_as_they_are)
{
        char buf[NUMFMT_F64_MAX + 8];

        /* Between grid points (an event), and a grid point computed another way (t += h). */
        cr_assert(eq(str, (char *)grid_text(buf, 0, 0.1, 0.25), "0.25"));
        cr_assert(eq(str, (char *)grid_text(buf, 0, 0.1, 0.1 + 0.1 + 0.1 + 0.1 + 0.1 + 0.1 +
                                            0.1 + 0.1), "0.7999999999999999"));
        cr_assert(eq(str, (char *)grid_text(buf, 0, 0.1, INFINITY), "inf"));
        cr_assert(eq(str, (char *)grid_text(buf, 0, 0, 0.3), "0.3"));
        cr_assert(eq(str, (char *)grid_text(buf, 0, 0.1, -0.1), "-0.1"));
}
