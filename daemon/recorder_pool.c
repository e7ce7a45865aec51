/*
 * recorder_pool: the fixed pool of large buffers between the row formatter
 * and the backend.
 *
 * DESIGN: rows are formatted straight into the current buffer; a full one
 * is submitted and the next comes from a free stack (the most recently
 * returned buffer first: it is the most likely to be in cache). The pool
 * never grows: this is where the disk's backpressure reaches the caller,
 * who either waits (as fast as possible) or drops (paced). Offsets are
 * assigned at submission, so writes may complete in any order on a regular
 * file; streams are kept in order by the backend.
 * Runs on the recording thread only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "recorder_int.h"

#define POOL_ALIGN      4096

int rec_pool_init(struct rec *r)
{
        void *mem;

        if (posix_memalign(&mem, POOL_ALIGN, (size_t)r->nbufs * r->bufsize))
                return -ENOMEM;
        r->mem = mem;
        r->bufs = calloc(r->nbufs, sizeof *r->bufs);
        r->free = calloc(r->nbufs, sizeof *r->free);
        if (!r->bufs || !r->free)
                return -ENOMEM;
        for (unsigned i = 0; i < r->nbufs; i++) {
                r->bufs[i].data = r->mem + (size_t)i * r->bufsize;
                r->free[r->nbufs - 1 - i] = &r->bufs[i];
        }
        r->nfree = r->nbufs;
        return 0;
}

/* Only with nothing in flight (or after the backend failed for good). */
void rec_pool_fini(struct rec *r)
{
        free(r->free);
        free(r->bufs);
        free(r->mem);
        r->free = NULL;
        r->bufs = NULL;
        r->mem = NULL;
        r->cur = NULL;
}

/* A backend returns a buffer whose write finished, successfully or not. */
void rec_pool_done(struct rec *r, struct rec_buf *b)
{
        r->st.bytes += b->done;
        r->st.short_writes += b->short_writes;
        if (b->err && !r->st.error)
                r->st.error = b->err;
        r->inflight--;
        r->free[r->nfree++] = b;
}

static int backend_failed(struct rec *r, int err)
{
        if (!r->st.error)
                r->st.error = err;
        return err;
}

/*
 * Make r->cur a free, empty buffer. When none is free: with may_drop on a
 * paced run, -ENOBUFS at once; otherwise wait for the disk. Returns 0, or
 * the recorder's error.
 */
int rec_pool_acquire(struct rec *r, bool may_drop)
{
        int e;

        if (!r->nfree) {
                e = r->ops->reap(r, false);
                if (e < 0)
                        return backend_failed(r, e);
        }
        while (!r->nfree) {
                if (may_drop && r->paced)
                        return -ENOBUFS;
                r->st.waits++;
                e = r->ops->reap(r, true);
                if (e < 0)
                        return backend_failed(r, e);
        }
        if (r->st.error)
                return r->st.error;
        r->cur = r->free[--r->nfree];
        r->cur->len = 0;
        r->cur->done = 0;
        r->cur->err = 0;
        r->cur->short_writes = 0;
        return 0;
}

/*
 * Hand the current buffer (if it holds anything) to the backend, then
 * collect whatever has finished, without waiting.
 */
int rec_pool_submit(struct rec *r)
{
        struct rec_buf *b = r->cur;
        int e;

        if (!b || !b->len)
                return 0;
        r->cur = NULL;
        if (r->stream) {
                b->off = -1;
        } else {
                b->off = r->next_off;
                r->next_off += (int64_t)b->len;
        }
        r->inflight++;
        e = r->ops->submit(r, b);
        if (e < 0)
                return backend_failed(r, e);
        e = r->ops->reap(r, false);
        if (e < 0)
                return backend_failed(r, e);
        return 0;
}

/* Wait until nothing is in flight. Returns 0 or the backend's failure. */
int rec_pool_drain(struct rec *r)
{
        while (r->inflight) {
                int e = r->ops->reap(r, true);

                if (e < 0)
                        return backend_failed(r, e);
        }
        return 0;
}

/* Bytes that can be taken without waiting: the current buffer's rest and the free buffers. */
size_t rec_pool_room(struct rec *r)
{
        size_t room = r->cur ? r->bufsize - r->cur->len : 0;

        if (!r->nfree)
                (void) r->ops->reap(r, false);
        return room + (size_t)r->nfree * r->bufsize;
}
