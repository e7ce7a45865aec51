/*
 * host_mlock: the daemon's locked-memory budget. A session whose workers
 * lock their memory (rtMlock, host_rt.c) reserves its workers' share,
 * [realtime] worker_mlock_bytes each, from [realtime]
 * worker_mlock_max_bytes before any worker starts, and gives it back when
 * it is freed; each worker's RLIMIT_MEMLOCK is set to its share
 * (worker/mlock.c), so the kernel holds it there.
 *
 * DESIGN: the budget is the operator's word on how much memory clients
 * may pin, so going over it refuses the load ("limit", naming the budget,
 * what is in use and what was asked) whatever rtBestEffort says: best
 * effort is about what the kernel refuses, not about policy. The default
 * budget is 0: no session locks until the operator says how much may be.
 */
#include "daemon/host_int.h"

#include <errno.h>
#include <stdio.h>

int hmlock_reserve(struct hsess *hs, size_t n_workers, char *msg, size_t size)
{
        struct host *h = hs->h;
        uint64_t each = h->opts.mlock_bytes, max = h->opts.mlock_max_bytes, asked, used;
        bool over;

        /* n_workers is bounded by the scenario's limits: only the product can overflow. */
        asked = n_workers && each > UINT64_MAX / n_workers ? UINT64_MAX : each * n_workers;
        pthread_mutex_lock(&h->lock);
        used = h->mlock_used;
        over = used > max || asked > max - used;
        if (!over) {
                h->mlock_used += asked;
                hs->mlock_reserved = asked;
        }
        pthread_mutex_unlock(&h->lock);
        if (!over)
                return 0;
        snprintf(msg, size, "realtime worker-mlock: over the daemon's locked-memory budget "
                 "([realtime] worker_mlock_max_bytes): %llu bytes, %llu in use, %llu asked "
                 "(%zu workers of %llu)", (unsigned long long)max, (unsigned long long)used,
                 (unsigned long long)asked, n_workers, (unsigned long long)each);
        return -ENOMEM;
}

void hmlock_release(struct hsess *hs)
{
        struct host *h = hs->h;

        pthread_mutex_lock(&h->lock);
        h->mlock_used -= hs->mlock_reserved;
        hs->mlock_reserved = 0;
        pthread_mutex_unlock(&h->lock);
}

void host_mlock_counts(struct host *h, uint64_t *ret_budget, uint64_t *ret_used)
{
        pthread_mutex_lock(&h->lock);
        *ret_budget = h->opts.mlock_max_bytes;
        *ret_used = h->mlock_used;
        pthread_mutex_unlock(&h->lock);
}
