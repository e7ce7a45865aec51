/*
 * master_lateness: how late a paced run's points are done against their
 * deadlines, in fixed memory: a log-linear histogram of lateness in µs
 * over the whole run and one over a sliding window of the last
 * LAT_WINDOW_S seconds of wall time.
 *
 * Buckets: 0 to 15 µs one each; above, every power of two [2^e, 2^(e+1))
 * split into 16 equal buckets, so a percentile is reported as the upper
 * edge of its bucket, at most 1/16 (6.25 %) above the true value and
 * never above the largest value seen. Values from 2^LAT_EXP_MAX µs up
 * share the last bucket.
 *
 * DESIGN: no allocation per point; adding is a few shifts. The window is
 * LAT_WINDOW_S histograms of one wall second each, reused round-robin:
 * the window's percentiles sum those of the last LAT_WINDOW_S seconds.
 * Pure: the caller passes the clock, so tests need none. Master thread.
 */
#ifndef FMUD_ENGINE_MASTER_LATENESS_H
#define FMUD_ENGINE_MASTER_LATENESS_H

#include <stdint.h>

#define LAT_SUB_BITS    4u
#define LAT_SUB         (1u << LAT_SUB_BITS)
#define LAT_EXP_MAX     40u     /* 2^40 µs: about 12.7 days */
#define LAT_BUCKETS     (LAT_SUB + (LAT_EXP_MAX - LAT_SUB_BITS) * LAT_SUB)
#define LAT_WINDOW_S    10u

struct lat_hist {
        uint64_t count;
        uint64_t max_us;
        uint32_t n[LAT_BUCKETS];
};

/* Percentiles of a histogram, in µs (0 when empty). */
struct lat_summary {
        uint64_t count;
        uint64_t p50_us, p99_us, p999_us, max_us;
};

struct lateness {
        struct lat_hist all;
        struct lat_hist slot[LAT_WINDOW_S];
        uint64_t slot_sec[LAT_WINDOW_S];        /* the wall second each slot holds; 0: none */
};

void lat_hist_add(struct lat_hist *h, uint64_t us);
/*
 * The value at or below which a fraction q (0 < q <= 1) of the values lie,
 * as the upper edge of its bucket (at most the largest value). 0 when empty.
 */
uint64_t lat_hist_quantile(const struct lat_hist *h, double q);
void lat_hist_summary(const struct lat_hist *h, struct lat_summary *ret);

/* A point late_ns late, done at wall time now_ns (CLOCK_MONOTONIC). */
void lateness_add(struct lateness *l, uint64_t now_ns, uint64_t late_ns);
/* The whole run's percentiles. */
void lateness_all(const struct lateness *l, struct lat_summary *ret);
/* The percentiles of the points done in the LAT_WINDOW_S seconds up to now_ns. */
void lateness_window(const struct lateness *l, uint64_t now_ns, struct lat_summary *ret);

#endif
