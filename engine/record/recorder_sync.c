/*
 * recorder_sync: the backend that writes on the caller's thread, and the
 * write loop the writer thread shares.
 *
 * DESIGN: write(2) for streams, pwrite(2) at the buffer's offset for
 * regular files; a short write is continued for the remainder, EINTR
 * retried, EAGAIN (a descriptor someone else made non-blocking again)
 * waited out with poll(2). The caller blocks for the whole write, so the
 * daemon's master never uses this backend: it is the reference point of
 * bench/recorder.c and serves offline tools.
 */
#include <errno.h>
#include <poll.h>
#include <unistd.h>

#include "engine/record/recorder_int.h"

void rec_write_all(int fd, struct rec_buf *b)
{
        while (b->done < b->len) {
                size_t n = b->len - b->done;
                ssize_t k;

                if (b->off < 0)
                        k = write(fd, b->data + b->done, n);
                else
                        k = pwrite(fd, b->data + b->done, n, (off_t)(b->off + (int64_t)b->done));
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN) {
                                struct pollfd p = { .fd = fd, .events = POLLOUT };

                                (void) poll(&p, 1, -1);
                                continue;
                        }
                        b->err = -errno;
                        return;
                }
                if (k == 0) {
                        /* Nothing written and no error: do not loop forever. */
                        b->err = -EIO;
                        return;
                }
                if ((size_t)k < n)
                        b->short_writes++;
                b->done += (size_t)k;
        }
}

static int sync_start(struct rec *r)
{
        (void)r;
        return 0;
}

static int sync_submit(struct rec *r, struct rec_buf *b)
{
        /* After a failed write, later buffers are not written: the file has a hole anyway. */
        if (!r->st.error)
                rec_write_all(r->fd, b);
        rec_pool_done(r, b);
        return 0;
}

static int sync_reap(struct rec *r, bool wait)
{
        (void)r;
        (void)wait;
        return 0;
}

static void sync_stop(struct rec *r)
{
        (void)r;
}

const struct rec_ops rec_sync_ops = {
        .kind = REC_BACKEND_SYNC,
        .start = sync_start,
        .submit = sync_submit,
        .reap = sync_reap,
        .stop = sync_stop,
};
