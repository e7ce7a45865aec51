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
 * file; streams are kept in order by the backend. A buffer the backend
 * gives back returns to the free stack only after every buffer submitted
 * before it, so that rows_written counts rows in file order: the rows of
 * a buffer written in full, and after a failed or short write only the
 * complete lines of what did reach the file (a rare path, which reads the
 * time of the last of them back from the text).
 * Runs on the recording thread only.
 */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/record/recorder_int.h"

#define POOL_ALIGN      4096

int rec_pool_init(struct rec *r)
{
        void *mem;

        if (posix_memalign(&mem, POOL_ALIGN, (size_t)r->nbufs * r->bufsize))
                return -ENOMEM;
        r->mem = mem;
        r->bufs = calloc(r->nbufs, sizeof *r->bufs);
        r->free = calloc(r->nbufs, sizeof *r->free);
        r->order = calloc(r->nbufs, sizeof *r->order);
        r->held = calloc(r->nbufs, sizeof *r->held);
        if (!r->bufs || !r->free || !r->order || !r->held)
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
        free(r->held);
        free(r->order);
        free(r->free);
        free(r->bufs);
        free(r->mem);
        r->held = NULL;
        r->order = NULL;
        r->free = NULL;
        r->bufs = NULL;
        r->mem = NULL;
        r->cur = NULL;
}

uint64_t rec_coarse_ns(void)
{
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The time at the start of a row's text (numfmt's C-locale form). */
static double row_time(const char *s)
{
        locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
        double t;

        if (c == (locale_t)0)
                return NAN;
        t = strtod_l(s, NULL, c);
        freelocale(c);
        return t;
}

/* What of a failed (or unwritten) buffer reached the file: its complete lines. */
static void commit_part(struct rec *r, const struct rec_buf *b)
{
        const char *d = b->data, *nl = NULL, *prev;
        size_t n = 0;

        for (const char *p = d; (p = memchr(p, '\n', b->done - (size_t)(p - d))); p++) {
                nl = p;
                n++;
        }
        if (!nl)
                return;
        r->line_end = b->pos + (size_t)(nl - d) + 1;
        if (b->header)
                n--;    /* the buffer's first line end is the header's */
        if (!n)
                return;
        r->st.rows_written += n;
        prev = memrchr(d, '\n', (size_t)(nl - d));
        r->st.last_time = prev ? row_time(prev + 1) : b->lead ? b->lead_time : row_time(d);
}

/* The oldest submitted buffer is back: count what it put in the file. */
static void commit(struct rec *r, const struct rec_buf *b)
{
        const char *nl;

        if (r->broken)
                return;
        if (b->err || b->done < b->len) {
                commit_part(r, b);
                r->broken = true;
                return;
        }
        r->st.rows_written += b->rows;
        if (b->rows)
                r->st.last_time = b->last_time;
        if (b->len && b->data[b->len - 1] == '\n')
                r->line_end = b->pos + b->len;
        else if ((nl = memrchr(b->data, '\n', b->len)))
                r->line_end = b->pos + (size_t)(nl - b->data) + 1;
}

/*
 * A backend returns a buffer whose write finished, successfully or not
 * (or that it did not write after an earlier failure: done < len, no err).
 * Buffers go back to the free stack in the order they were submitted.
 */
void rec_pool_done(struct rec *r, struct rec_buf *b)
{
        r->st.bytes += b->done;
        r->st.short_writes += b->short_writes;
        if (b->err && !r->st.error)
                r->st.error = b->err;
        b->finished = true;
        while (r->o_head != r->o_tail && r->order[r->o_head % r->nbufs]->finished) {
                struct rec_buf *o = r->order[r->o_head++ % r->nbufs];

                commit(r, o);
                r->inflight--;
                r->free[r->nfree++] = o;
        }
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
        r->cur->finished = false;
        r->cur->rows = 0;
        r->cur->header = false;
        r->cur->lead = false;
        return 0;
}

/*
 * Hand the current buffer (if it holds anything) to the backend, then
 * collect whatever has finished, without waiting.
 */
/* Hand b to the backend (offsets are given in this order), without reaping. */
static int submit_one(struct rec *r, struct rec_buf *b)
{
        int e;

        if (r->stream) {
                b->off = -1;
        } else {
                b->off = r->next_off;
                r->next_off += (int64_t)b->len;
        }
        b->pos = r->pos_next;
        r->pos_next += b->len;
        r->order[r->o_tail++ % r->nbufs] = b;
        r->inflight++;
        e = r->ops->submit(r, b);
        return e < 0 ? backend_failed(r, e) : 0;
}

int rec_pool_submit(struct rec *r)
{
        struct rec_buf *b = r->cur;
        int e;

        if (!b || !b->len)
                return 0;
        r->cur = NULL;
        r->pending_ns = 0;
        e = submit_one(r, b);
        if (e < 0)
                return e;
        e = r->ops->reap(r, false);
        if (e < 0)
                return backend_failed(r, e);
        return 0;
}

void rec_pool_hold(struct rec *r)
{
        r->held[r->nheld++] = r->cur;
        r->cur = NULL;
}

int rec_pool_submit_held(struct rec *r)
{
        unsigned n = r->nheld;
        int e = r->st.error;

        r->nheld = 0;
        for (unsigned i = 0; i < n; i++) {
                if (e < 0) {
                        r->free[r->nfree++] = r->held[i];       /* never written */
                        continue;
                }
                e = submit_one(r, r->held[i]);
                if (e < 0)
                        r->free[r->nfree++] = r->held[i];       /* the backend did not take it */
        }
        if (e < 0)
                return e;
        e = r->ops->reap(r, false);
        return e < 0 ? backend_failed(r, e) : 0;
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
