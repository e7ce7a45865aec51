/*
 * recorder_uring: the io_uring backend. A full buffer becomes one
 * IORING_OP_WRITE at its file offset, submitted without waiting;
 * completions are collected by peeking at the completion queue, which costs
 * no system call, so the master waits only when the pool is exhausted in an
 * as-fast-as-possible run (io_uring_wait_cqe) and at close.
 *
 * DESIGN
 * - Regular files: every buffer has its own offset, so all of them may be
 *   in flight at once and complete in any order.
 * - Streams (pipes, FIFOs, devices, O_APPEND): one write in flight; the
 *   others wait in a FIFO and the next is issued when the previous one
 *   completes (on the next reap, i.e. at the next buffer switch).
 * - A completion shorter than asked for is re-issued for the remainder at
 *   the advanced offset; -EINTR and -EAGAIN are re-issued as they are; any
 *   other error, or a write of zero bytes, ends the buffer with that error.
 * - The ring has one submission entry per buffer, so a submission entry is
 *   always available, and twice as many completion entries (the default),
 *   so the completion queue cannot overflow.
 * - Submission happens at once (io_uring_submit per buffer): with buffers of
 *   tens of KiB, one system call per buffer is noise, and batching would
 *   delay the data.
 * - IOSQE_ASYNC: see REC_URING_SQE_FLAGS below.
 * The ring is used by the recording thread only; no locking. The kernel
 * (an io-wq worker, with IOSQE_ASYNC) reads a submitted buffer until its
 * completion is reaped; the pool does not touch the buffer before that.
 */
#include <errno.h>
#include <liburing.h>
#include <stdlib.h>

#include "engine/record/recorder_int.h"

/*
 * Buffered writes to a regular file are normally attempted inline, inside
 * io_uring_submit(), on the master's own CPU (the copy into the page cache),
 * and punted to an io-wq worker only if they would block. IOSQE_ASYNC punts
 * every write to a worker at once, so the copy runs on another CPU while
 * the master formats the next buffer: measured in docs/BENCHMARKS.md.
 */
#ifndef REC_URING_SQE_FLAGS
#define REC_URING_SQE_FLAGS     IOSQE_ASYNC
#endif

struct uring_be {
        struct io_uring ring;
        struct rec_buf **fifo;          /* streams: buffers waiting their turn */
        unsigned head, tail;            /* free-running */
        bool busy;                      /* streams: a write is in flight */
};

static int issue(struct rec *r, struct rec_buf *b)
{
        struct uring_be *u = r->be;
        struct io_uring_sqe *sqe;
        uint64_t off = b->off < 0 ? (uint64_t)-1 : (uint64_t)b->off + b->done;
        int e;

        sqe = io_uring_get_sqe(&u->ring);
        if (!sqe)
                return -EBUSY;          /* cannot happen: one entry per buffer */
        io_uring_prep_write(sqe, r->fd, b->data + b->done, (unsigned)(b->len - b->done), off);
        io_uring_sqe_set_flags(sqe, REC_URING_SQE_FLAGS);
        io_uring_sqe_set_data(sqe, b);
        do
                e = io_uring_submit(&u->ring);
        while (e == -EINTR);
        if (e < 0)
                return e;
        u->busy = true;
        return 0;
}

/* Issue the next queued stream write, if nothing is in flight. */
static int issue_next(struct rec *r)
{
        struct uring_be *u = r->be;
        struct rec_buf *b;

        while (!u->busy && u->head != u->tail) {
                b = u->fifo[u->head++ % r->nbufs];
                if (!r->st.error)
                        return issue(r, b);
                /* After a failed write, later data is not written. */
                rec_pool_done(r, b);
        }
        return 0;
}

static int complete(struct rec *r, struct rec_buf *b, int res)
{
        struct uring_be *u = r->be;

        if (res == -EINTR || res == -EAGAIN)
                return issue(r, b);
        if (res < 0) {
                b->err = res;
        } else if (res == 0) {
                b->err = -EIO;          /* nothing written and no error: do not loop */
        } else {
                b->done += (size_t)res;
                if (b->done < b->len) {
                        b->short_writes++;
                        return issue(r, b);
                }
        }
        u->busy = false;
        rec_pool_done(r, b);
        return r->stream ? issue_next(r) : 0;
}

static int uring_start(struct rec *r)
{
        struct io_uring_probe *probe;
        struct uring_be *u;
        int e;

        u = calloc(1, sizeof *u);
        if (!u)
                return -ENOMEM;
        u->fifo = calloc(r->nbufs, sizeof *u->fifo);
        if (!u->fifo) {
                e = -ENOMEM;
                goto out_free;
        }
        e = io_uring_queue_init(r->nbufs, &u->ring, 0);
        if (e < 0)
                goto out_free;
        probe = io_uring_get_probe_ring(&u->ring);
        if (!probe || !io_uring_opcode_supported(probe, IORING_OP_WRITE))
                e = -EOPNOTSUPP;
        io_uring_free_probe(probe);
        if (e < 0)
                goto out_exit;
        r->be = u;
        return 0;

out_exit:
        io_uring_queue_exit(&u->ring);
out_free:
        free(u->fifo);
        free(u);
        return e;
}

static int uring_submit(struct rec *r, struct rec_buf *b)
{
        struct uring_be *u = r->be;

        if (r->stream && u->busy) {
                u->fifo[u->tail++ % r->nbufs] = b;
                return 0;
        }
        return issue(r, b);
}

static int uring_reap(struct rec *r, bool wait)
{
        struct uring_be *u = r->be;
        struct io_uring_cqe *cqe;
        unsigned nfree = r->nfree;
        int e;

        for (;;) {
                while (io_uring_peek_cqe(&u->ring, &cqe) == 0) {
                        struct rec_buf *b = io_uring_cqe_get_data(cqe);
                        int res = cqe->res;

                        io_uring_cqe_seen(&u->ring, cqe);
                        e = complete(r, b, res);
                        if (e < 0)
                                return e;
                }
                if (!wait || r->nfree != nfree || !r->inflight)
                        return 0;
                e = io_uring_wait_cqe(&u->ring, &cqe);
                if (e < 0 && e != -EINTR)
                        return e;
        }
}

static void uring_stop(struct rec *r)
{
        struct uring_be *u = r->be;

        if (!u)
                return;
        io_uring_queue_exit(&u->ring);
        free(u->fifo);
        free(u);
        r->be = NULL;
}

const struct rec_ops rec_uring_ops = {
        .kind = REC_BACKEND_URING,
        .start = uring_start,
        .submit = uring_submit,
        .reap = uring_reap,
        .stop = uring_stop,
};
