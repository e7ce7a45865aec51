/*
 * lateness: the fixed-memory lateness histograms (master_lateness.h) on
 * known data: exact below 16 µs, within a bucket's 1/16 above, never
 * above the largest value; the window holds the last LAT_WINDOW_S seconds.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <string.h>

#include "engine/master/master_lateness.h"

Test(lateness, an_empty_histogram_reports_zeros)
{
        struct lat_hist h;
        struct lat_summary s;

        memset(&h, 0, sizeof(h));
        lat_hist_summary(&h, &s);
        cr_assert(eq(u64, s.count, 0));
        cr_assert(eq(u64, s.p50_us, 0));
        cr_assert(eq(u64, s.p999_us, 0));
        cr_assert(eq(u64, s.max_us, 0));
}

Test(lateness, small_values_are_exact)
{
        struct lat_hist h;

        memset(&h, 0, sizeof(h));
        for (uint64_t v = 1; v <= 10; v++)
                lat_hist_add(&h, v);
        cr_assert(eq(u64, lat_hist_quantile(&h, 0.5), 5));
        cr_assert(eq(u64, lat_hist_quantile(&h, 0.9), 9));
        cr_assert(eq(u64, lat_hist_quantile(&h, 0.99), 10));
        cr_assert(eq(u64, lat_hist_quantile(&h, 1.0), 10));
        cr_assert(eq(u64, h.max_us, 10));
}

/*
 * 1 to 1000 µs once each: the 500th value lies in [496, 511], the 990th
 * in [960, 991], the 999th in [992, 1023] but the largest is 1000.
 */
Test(lateness, percentiles_are_their_bucket_upper_edge)
{
        struct lat_hist h;
        struct lat_summary s;

        memset(&h, 0, sizeof(h));
        for (uint64_t v = 1; v <= 1000; v++)
                lat_hist_add(&h, v);
        lat_hist_summary(&h, &s);
        cr_assert(eq(u64, s.count, 1000));
        cr_assert(eq(u64, s.p50_us, 511));
        cr_assert(eq(u64, s.p99_us, 991));
        cr_assert(eq(u64, s.p999_us, 1000));
        cr_assert(eq(u64, s.max_us, 1000));
}

/* 999 points on time and one 5 ms late: p99 is 0, p99.9 and the max the late one. */
Test(lateness, one_late_point_in_a_thousand_shows_at_p999)
{
        struct lat_hist h;
        struct lat_summary s;

        memset(&h, 0, sizeof(h));
        for (int i = 0; i < 999; i++)
                lat_hist_add(&h, 0);
        lat_hist_add(&h, 5000);
        lat_hist_summary(&h, &s);
        cr_assert(eq(u64, s.p50_us, 0));
        cr_assert(eq(u64, s.p99_us, 0));
        cr_assert(eq(u64, s.p999_us, 0));       /* the 999th of 1000 is still on time */
        cr_assert(eq(u64, lat_hist_quantile(&h, 0.9995), 5000));
        cr_assert(eq(u64, s.max_us, 5000));
}

Test(lateness, huge_values_share_the_last_bucket_and_keep_the_max)
{
        struct lat_hist h;

        memset(&h, 0, sizeof(h));
        lat_hist_add(&h, UINT64_MAX / 2);
        lat_hist_add(&h, 1);
        cr_assert(eq(u32, h.n[LAT_BUCKETS - 1], 1));
        cr_assert(eq(u64, lat_hist_quantile(&h, 1.0), UINT64_MAX / 2));
        cr_assert(eq(u64, lat_hist_quantile(&h, 0.5), 1));
}

/* Points 1 ms late at seconds 0 to 4, one 9 ms late at second 20: the window sees that one only. */
Test(lateness, the_window_forgets_what_is_older_than_it)
{
        static struct lateness l;
        struct lat_summary all, win;
        const uint64_t s = 1000000000u;

        memset(&l, 0, sizeof(l));
        for (uint64_t t = 0; t < 5; t++)
                lateness_add(&l, t * s + 1, 1000000);
        lateness_window(&l, 4 * s + 2, &win);
        cr_assert(eq(u64, win.count, 5));
        cr_assert(eq(u64, win.max_us, 1000));
        lateness_add(&l, 20 * s, 9000000);
        lateness_all(&l, &all);
        lateness_window(&l, 20 * s, &win);
        cr_assert(eq(u64, all.count, 6));
        cr_assert(eq(u64, all.max_us, 9000));
        cr_assert(eq(u64, all.p50_us, 1023));  /* 1000 lies in [992, 1023] */
        cr_assert(eq(u64, win.count, 1));
        cr_assert(eq(u64, win.p50_us, 9000));
        /* Nine seconds on, still in; ten on, out. */
        lateness_window(&l, 29 * s, &win);
        cr_assert(eq(u64, win.count, 1));
        lateness_window(&l, 30 * s, &win);
        cr_assert(eq(u64, win.count, 0));
}
