/*
 * numfmt_grid: the time of a grid point as the user wrote the grid
 * (numfmt.h, numfmt_grid()).
 *
 * DESIGN: the master's grid point k is the double t0 + k * h (engine/
 * master/master.c, master_grid()), which is what the FMUs are given as the
 * communication point and must stay so. Its shortest round-trip text is
 * often not the decimal the user meant: 7 * 0.1 is 0.7000000000000001.
 * The decimals the user wrote are the shortest texts of t0 and h (what
 * strtod() read them from), so the grid point they mean is the exact
 * decimal T = t0' + k * h', computed here in integers. T is printed when it
 * has at most 17 significant digits and reads back within a few units in
 * the last place of the double the FMUs were given (rounding of one
 * product and one sum); otherwise, and for every time off the grid, the
 * double's own shortest text. Only the text differs: 0.7 reads back as a
 * double one unit below the FMUs' time.
 */
#include "engine/record/numfmt.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned __int128 u128;

#define MAX_DIGITS 17
#define ULPS 8

/* A decimal: ±digits * 10^exp, digits without trailing zeros (0: zero). */
struct dec {
        bool neg;
        uint64_t digits;
        int exp;
};

/* The shortest text of v as a decimal; false for what is not finite. */
static bool to_dec(double v, struct dec *d)
{
        char buf[NUMFMT_F64_MAX + 8], *p = buf;
        int frac = 0, e = 0;
        size_t n;

        if (!isfinite(v))
                return false;
        n = numfmt_f64(buf, v);
        buf[n] = '\0';
        *d = (struct dec){ .neg = *p == '-' };
        if (d->neg)
                p++;
        for (bool point = false; *p && *p != 'e'; p++) {
                if (*p == '.') {
                        point = true;
                        continue;
                }
                d->digits = d->digits * 10 + (uint64_t)(*p - '0');
                frac += point;
        }
        if (*p == 'e')
                e = atoi(p + 1);
        d->exp = e - frac;
        while (d->digits && d->digits % 10 == 0) {
                d->digits /= 10;
                d->exp++;
        }
        return true;
}

void numfmt_grid_init(struct numfmt_grid *g, double t0, double h)
{
        struct dec a, b;

        *g = (struct numfmt_grid){ .t0 = t0, .h = h };
        if (!(h > 0) || !to_dec(t0, &a) || !to_dec(h, &b))
                return;
        g->t0_neg = a.neg;
        g->t0_digits = a.digits;
        g->t0_exp = a.exp;
        g->h_digits = b.digits;
        g->h_exp = b.exp;
        g->ok = true;
}

/* x * 10^n, false when it would not fit in 127 bits. */
static bool scale(u128 *x, int n)
{
        for (; n > 0; n--) {
                if (*x > ((u128)1 << 123))
                        return false;
                *x *= 10;
        }
        return true;
}

/* Significant digits of x > 0 after dropping its trailing zeros (into *x, *exp). */
static int trim(u128 *x, int *exp)
{
        int n = 0;

        while (*x % 10 == 0) {
                *x /= 10;
                (*exp)++;
        }
        for (u128 y = *x; y; y /= 10)
                n++;
        return n;
}

/* Python repr's layout (numfmt.h) of ±x * 10^exp, x of n digits without trailing zeros. */
static size_t layout(char *dst, bool neg, u128 x, int n, int exp)
{
        char d[40] = "0";       /* n >= 1 (the caller handles 0): set for -O3 flow analysis */
        int lead = exp + n - 1;         /* the leading digit's decimal exponent */
        size_t len = 0;

        for (int i = n - 1; i >= 0; i--, x /= 10)
                d[i] = (char)('0' + (int)(x % 10));
        if (neg)
                dst[len++] = '-';
        if (lead >= -4 && lead <= 15) {
                if (lead < 0) {
                        dst[len++] = '0';
                        dst[len++] = '.';
                        for (int i = -1; i > lead; i--)
                                dst[len++] = '0';
                        memcpy(dst + len, d, (size_t)n);
                        return len + (size_t)n;
                }
                for (int i = 0; i <= lead; i++)
                        dst[len++] = i < n ? d[i] : '0';
                if (n > lead + 1) {
                        dst[len++] = '.';
                        memcpy(dst + len, d + lead + 1, (size_t)(n - lead - 1));
                        len += (size_t)(n - lead - 1);
                }
                return len;
        }
        dst[len++] = d[0];
        if (n > 1) {
                dst[len++] = '.';
                memcpy(dst + len, d + 1, (size_t)n - 1);
                len += (size_t)n - 1;
        }
        dst[len++] = 'e';
        dst[len++] = lead < 0 ? '-' : '+';
        lead = abs(lead);
        if (lead >= 100)
                dst[len++] = (char)('0' + lead / 100);
        dst[len++] = (char)('0' + lead / 10 % 10);
        dst[len++] = (char)('0' + lead % 10);
        return len;
}

/* a and b, both finite, at most ULPS doubles apart. */
static bool near(double a, double b)
{
        int64_t ia, ib;

        if ((a < 0) != (b < 0))
                return a == b;
        memcpy(&ia, &a, sizeof(ia));
        memcpy(&ib, &b, sizeof(ib));
        return llabs(ia - ib) <= ULPS;
}

size_t numfmt_grid(const struct numfmt_grid *g, char *dst, double t)
{
        char buf[64];
        double kf;
        uint64_t k;
        u128 a, b, x;
        int exp, n;
        bool neg;
        size_t len;

        if (!g->ok || !isfinite(t))
                return numfmt_f64(dst, t);
        kf = nearbyint((t - g->t0) / g->h);
        if (!(kf >= 0 && kf < 9007199254740992.0))
                return numfmt_f64(dst, t);
        k = (uint64_t)kf;
        /* The master's own expression (master_grid()): a grid point, bit for bit. */
        if (g->t0 + (double)k * g->h != t)
                return numfmt_f64(dst, t);
        /* t0' + k h' over the smaller of the two exponents, signs apart. */
        exp = g->t0_exp < g->h_exp ? g->t0_exp : g->h_exp;
        a = g->t0_digits;
        b = (u128)g->h_digits * k;
        if (!scale(&a, g->t0_exp - exp) || !scale(&b, g->h_exp - exp))
                return numfmt_f64(dst, t);
        if (!g->t0_neg) {
                x = a + b;
                neg = false;
        } else {
                neg = a > b;
                x = neg ? a - b : b - a;
        }
        if (x == 0)
                return numfmt_f64(dst, t);
        n = trim(&x, &exp);
        if (n > MAX_DIGITS)
                return numfmt_f64(dst, t);
        len = layout(buf, neg, x, n, exp);
        buf[len] = '\0';
        if (!near(strtod(buf, NULL), t))
                return numfmt_f64(dst, t);
        memcpy(dst, buf, len);
        return len;
}
