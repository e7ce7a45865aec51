/*
 * master_lateness: lateness histograms of a paced run (see master_lateness.h).
 */
#include "engine/master/master_lateness.h"

#include <string.h>

static unsigned bucket(uint64_t us)
{
        unsigned e;

        if (us < LAT_SUB)
                return (unsigned)us;
        e = 63u - (unsigned)__builtin_clzll(us);
        if (e >= LAT_EXP_MAX)
                return LAT_BUCKETS - 1;
        return LAT_SUB + (e - LAT_SUB_BITS) * LAT_SUB +
               (unsigned)((us >> (e - LAT_SUB_BITS)) & (LAT_SUB - 1));
}

/* The largest value bucket b holds. */
static uint64_t upper(unsigned b)
{
        unsigned e, sub;

        if (b < LAT_SUB)
                return b;
        if (b >= LAT_BUCKETS - 1)
                return UINT64_MAX;
        e = (b - LAT_SUB) / LAT_SUB + LAT_SUB_BITS;
        sub = (b - LAT_SUB) % LAT_SUB;
        return ((uint64_t)(LAT_SUB + sub + 1) << (e - LAT_SUB_BITS)) - 1;
}

void lat_hist_add(struct lat_hist *h, uint64_t us)
{
        unsigned b = bucket(us);

        if (h->n[b] < UINT32_MAX)
                h->n[b]++;
        h->count++;
        if (us > h->max_us)
                h->max_us = us;
}

uint64_t lat_hist_quantile(const struct lat_hist *h, double q)
{
        uint64_t want, seen = 0;

        if (!h->count)
                return 0;
        if (!(q > 0))
                q = 0;
        if (!(q < 1))
                return h->max_us;
        /* The rank of the value wanted: ceil(q * count), at least 1. */
        want = (uint64_t)((double)h->count * q);
        if ((double)want < (double)h->count * q || want == 0)
                want++;
        for (unsigned b = 0; b < LAT_BUCKETS; b++) {
                seen += h->n[b];
                if (seen >= want)
                        return upper(b) < h->max_us ? upper(b) : h->max_us;
        }
        return h->max_us;
}

void lat_hist_summary(const struct lat_hist *h, struct lat_summary *ret)
{
        *ret = (struct lat_summary){
                .count = h->count,
                .p50_us = lat_hist_quantile(h, 0.5),
                .p99_us = lat_hist_quantile(h, 0.99),
                .p999_us = lat_hist_quantile(h, 0.999),
                .max_us = h->max_us,
        };
}

void lateness_add(struct lateness *l, uint64_t now_ns, uint64_t late_ns)
{
        uint64_t sec = now_ns / 1000000000u + 1, us = late_ns / 1000u;
        struct lat_hist *s = &l->slot[sec % LAT_WINDOW_S];

        if (l->slot_sec[sec % LAT_WINDOW_S] != sec) {
                memset(s, 0, sizeof(*s));
                l->slot_sec[sec % LAT_WINDOW_S] = sec;
        }
        lat_hist_add(s, us);
        lat_hist_add(&l->all, us);
}

void lateness_all(const struct lateness *l, struct lat_summary *ret)
{
        lat_hist_summary(&l->all, ret);
}

void lateness_window(const struct lateness *l, uint64_t now_ns, struct lat_summary *ret)
{
        uint64_t sec = now_ns / 1000000000u + 1;
        struct lat_hist w;

        memset(&w, 0, sizeof(w));
        for (unsigned i = 0; i < LAT_WINDOW_S; i++) {
                if (!l->slot_sec[i] || l->slot_sec[i] > sec || sec - l->slot_sec[i] >= LAT_WINDOW_S)
                        continue;
                w.count += l->slot[i].count;
                if (l->slot[i].max_us > w.max_us)
                        w.max_us = l->slot[i].max_us;
                for (unsigned b = 0; b < LAT_BUCKETS; b++)
                        w.n[b] += l->slot[i].n[b];
        }
        lat_hist_summary(&w, ret);
}
