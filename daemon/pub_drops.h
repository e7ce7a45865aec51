/*
 * pub_drops: the count of one subscription's samples lost on the way to
 * its subscriber, shared by the session thread that builds the samples
 * and the control thread that queues and sends them.
 *
 * DESIGN: reference counted. The subscription holds one reference for its
 * life; every sample handed to opts.publish holds another until the
 * control thread has sent it or dropped it (counting the drop first), so
 * a sample still queued when its subscription goes away never writes to
 * freed memory. Whoever drops the last reference frees it. The session
 * thread compares the count with the one it saw at its last sample: more
 * means samples were lost since, and the next sample carries
 * PROTO_SAMPLE_DROPPED.
 *
 * Threads: any; every field is atomic.
 */
#ifndef FMUD_DAEMON_PUB_DROPS_H
#define FMUD_DAEMON_PUB_DROPS_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

struct pub_drops {
        _Atomic uint32_t refs;
        _Atomic uint64_t dropped;       /* samples lost so far */
};

/* A new count (one reference, the caller's), or NULL. */
static inline struct pub_drops *pub_drops_new(void)
{
        struct pub_drops *d = calloc(1, sizeof(*d));

        if (d)
                atomic_init(&d->refs, 1);
        return d;
}

/* Another reference to d (NULL: none); returns d. */
static inline struct pub_drops *pub_drops_ref(struct pub_drops *d)
{
        if (d)
                atomic_fetch_add_explicit(&d->refs, 1, memory_order_relaxed);
        return d;
}

/* Drop a reference (NULL: none); the last frees d. */
static inline void pub_drops_unref(struct pub_drops *d)
{
        if (d && atomic_fetch_sub_explicit(&d->refs, 1, memory_order_acq_rel) == 1)
                free(d);
}

/* One more sample lost (d NULL: not counted, an event). */
static inline void pub_drops_add(struct pub_drops *d)
{
        if (d)
                atomic_fetch_add_explicit(&d->dropped, 1, memory_order_relaxed);
}

static inline uint64_t pub_drops_get(const struct pub_drops *d)
{
        return d ? atomic_load_explicit(&d->dropped, memory_order_relaxed) : 0;
}

#endif
