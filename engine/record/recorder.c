/*
 * recorder: opening and closing a session's result file, and choosing the
 * backend that writes it (contract and file format in recorder.h).
 *
 * DESIGN: REC_BACKEND_AUTO tries io_uring and falls back to the writer
 * thread on any failure of io_uring_queue_init() (containers commonly
 * refuse it with EPERM or ENOSYS) or when IORING_OP_WRITE is missing; the
 * reason is kept for rec_fallback_reason() so the daemon can report which
 * backend runs and why. The descriptor is made blocking (io_uring and the
 * writer thread then wait in the kernel instead of spinning on EAGAIN), and
 * a file without usable offsets (pipe, FIFO, device, O_APPEND) or whose
 * offset is shared (rec_options.shared_offset) is written strictly in order.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/record/numfmt.h"
#include "engine/record/recorder_int.h"

static int check_args(const struct rec_column *cols, size_t ncols, const struct rec_options *o)
{
        if (ncols && !cols)
                return -EINVAL;
        for (size_t i = 0; i < ncols; i++)
                if (!cols[i].name || (unsigned)cols[i].type >= REC_TYPE_COUNT)
                        return -EINVAL;
        if (o->buffer_size && (o->buffer_size < REC_BUFFER_SIZE_MIN ||
                               o->buffer_size > REC_BUFFER_SIZE_MAX))
                return -EINVAL;
        if (o->buffers == 1 || o->buffers > REC_BUFFERS_MAX)
                return -EINVAL;
        if ((unsigned)o->backend > REC_BACKEND_SYNC)
                return -EINVAL;
        return 0;
}

/*
 * Regular files are written at offsets from the current one; anything else,
 * and a file whose offset others write through too, in order at the offset.
 */
static int setup_fd(struct rec *r, bool shared_offset)
{
        struct stat st;
        int fl;
        off_t pos;

        if (fstat(r->fd, &st) < 0)
                return -errno;
        fl = fcntl(r->fd, F_GETFL);
        if (fl < 0)
                return -errno;
        if ((fl & O_ACCMODE) == O_RDONLY)
                return -EBADF;
        if ((fl & O_NONBLOCK) && fcntl(r->fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
                return -errno;
        r->regular = S_ISREG(st.st_mode);
        r->named = r->regular && st.st_nlink > 0;
        /*
         * pwrite(2) leaves a shared offset where it was, so what others
         * write after the rows would land on them; write(2) moves it.
         */
        r->stream = !r->regular || (fl & O_APPEND) || shared_offset;
        if (!r->stream) {
                pos = lseek(r->fd, 0, SEEK_CUR);
                if (pos < 0)
                        return -errno;
                r->next_off = pos;
        }
        r->base_off = r->stream ? -1 : r->next_off;
        return 0;
}

static int setup_columns(struct rec *r, const struct rec_column *cols, size_t ncols)
{
        r->ncols = ncols;
        r->types = malloc((ncols ? ncols : 1) * sizeof *r->types);
        if (!r->types)
                return -ENOMEM;
        /* time, a separator and the widest value per column, marker, newline */
        r->row_fixed = NUMFMT_F64_MAX + 2 + 1;
        r->all_f64 = true;
        for (size_t i = 0; i < ncols; i++) {
                r->all_f64 &= cols[i].type == REC_FLOAT64;
                r->types[i] = cols[i].type;
                r->row_fixed += 1 + rec_type_width(cols[i].type);
                if (cols[i].type == REC_STRING || cols[i].type == REC_BINARY)
                        r->has_var = true;
        }
        return 0;
}

static int start_backend(struct rec *r, enum rec_backend want)
{
        int e;

        switch (want) {
        case REC_BACKEND_AUTO:
                r->ops = &rec_uring_ops;
                e = r->ops->start(r);
                if (e >= 0)
                        return 0;
                r->fallback = e;
                /* fall through */
        case REC_BACKEND_THREAD:
                r->ops = &rec_thread_ops;
                break;
        case REC_BACKEND_URING:
                r->ops = &rec_uring_ops;
                break;
        case REC_BACKEND_SYNC:
                r->ops = &rec_sync_ops;
                break;
        }
        e = r->ops->start(r);
        if (e < 0)
                r->ops = NULL;
        return e;
}

static void rec_free(struct rec *r)
{
        rec_pool_fini(r);
        free(r->types);
        free(r->scratch);
        free(r);
}

int rec_open_fd(int fd, const struct rec_column *cols, size_t ncols,
                const struct rec_options *opt, struct rec **ret_rec)
{
        static const struct rec_options defaults;
        const struct rec_options *o = opt ? opt : &defaults;
        struct rec *r;
        int e;

        e = check_args(cols, ncols, o);
        if (e < 0)
                return e;
        r = calloc(1, sizeof *r);
        if (!r)
                return -ENOMEM;
        r->fd = fd;
        r->bufsize = o->buffer_size ? o->buffer_size : REC_BUFFER_SIZE_DEFAULT;
        r->nbufs = o->buffers ? o->buffers : REC_BUFFERS_DEFAULT;
        r->decimation = o->decimation ? o->decimation : 1;
        r->countdown = 1;
        r->paced = o->paced;
        r->fsync = o->fsync;
        r->flush_ns = o->flush_ms == REC_FLUSH_OFF ? 0 :
                      (uint64_t)(o->flush_ms ? o->flush_ms : REC_FLUSH_MS_DEFAULT) * 1000000u;
        r->st.last_time = NAN;
        r->check_every = r->check_in = 1;
        r->marker = o->intermediate_column != NULL;
        r->grid = o->grid;
        if (o->grid)
                numfmt_grid_init(&r->time_grid, o->grid_t0, o->grid_h);

        e = setup_fd(r, o->shared_offset);
        if (e < 0)
                goto out_free;
        e = setup_columns(r, cols, ncols);
        if (e < 0)
                goto out_free;
        e = rec_pool_init(r);
        if (e < 0)
                goto out_free;
        e = start_backend(r, o->backend);
        if (e < 0)
                goto out_free;
        e = rec_put_header(r, cols, o->intermediate_column);
        if (e < 0)
                goto out_stop;
        *ret_rec = r;
        return 0;

out_stop:
        (void) rec_pool_drain(r);
        r->ops->stop(r);
out_free:
        rec_free(r);
        return e;
}

int rec_open(const char *path, const struct rec_column *cols, size_t ncols,
             const struct rec_options *opt, struct rec **ret_rec)
{
        int fd, e;

        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        e = rec_open_fd(fd, cols, ncols, opt, ret_rec);
        if (e < 0)
                close(fd);
        return e;
}

int rec_flush(struct rec *r)
{
        if (r->st.error)
                return r->st.error;
        return rec_pool_submit(r);
}

int rec_tick(struct rec *r)
{
        int e;

        if (r->st.error)
                return r->st.error;
        if (r->inflight) {
                e = r->ops->reap(r, false);
                if (e < 0 && !r->st.error)
                        r->st.error = e;
        }
        if (r->cur && r->cur->len && r->flush_ns && !r->st.error &&
            rec_coarse_ns() - r->pending_ns >= r->flush_ns / 2)
                (void) rec_pool_submit(r);
        return r->st.error;
}

bool rec_idle(const struct rec *r)
{
        return !r->inflight && !(r->cur && r->cur->len);
}

void rec_set_paced(struct rec *r, bool paced)
{
        r->paced = paced;
}

enum rec_backend rec_backend(const struct rec *r)
{
        return r->ops->kind;
}

bool rec_all_f64(const struct rec *r)
{
        return r->all_f64;
}

const char *rec_backend_name(enum rec_backend b)
{
        switch (b) {
        case REC_BACKEND_AUTO:  return "auto";
        case REC_BACKEND_URING: return "io_uring";
        case REC_BACKEND_THREAD: return "thread";
        case REC_BACKEND_SYNC:  return "sync";
        }
        return "unknown";
}

int rec_fallback_reason(const struct rec *r)
{
        return r->fallback;
}

void rec_get_stats(const struct rec *r, struct rec_stats *ret)
{
        *ret = r->st;
        ret->bytes_complete = r->line_end;
}

int rec_close(struct rec *r, struct rec_stats *ret_stats)
{
        struct stat st;
        int e;

        if (!r)
                return 0;
        if (!r->st.error)
                (void) rec_pool_submit(r);
        (void) rec_pool_drain(r);
        r->ops->stop(r);
        e = r->st.error;
        /* A failed write: the file ends with the last complete line that reached it. */
        if (r->broken && r->base_off >= 0)
                (void) ftruncate(r->fd, r->base_off + (off_t)r->line_end);
        /* Pipes and devices have nothing to sync (fsync would say EINVAL). */
        if (r->fsync && r->regular && fsync(r->fd) < 0 && !e)
                e = -errno;
        /* Removed while written: the rows went to a file nobody can open. */
        if (!e && r->named && fstat(r->fd, &st) == 0 && st.st_nlink == 0)
                e = -ENOENT;
        if (close(r->fd) < 0 && !e && errno != EINTR)
                e = -errno;
        if (ret_stats) {
                *ret_stats = r->st;
                ret_stats->bytes_complete = r->line_end;
                ret_stats->error = e;
        }
        rec_free(r);
        return e;
}
