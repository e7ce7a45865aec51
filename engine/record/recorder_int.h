/*
 * recorder internals, shared by recorder*.c only.
 *
 * recorder.c        open, close, accessors
 * recorder_row.c    rows and the header: formatting, decimation, drops
 * recorder_pool.c   the buffer pool: acquire, submit, completion, drain
 * recorder_uring.c  backend: io_uring
 * recorder_thread.c backend: a writer thread with write(2)/pwrite(2)
 * recorder_sync.c   backend: write(2) on the caller's thread; the write loop
 */
#ifndef FMUD_ENGINE_RECORDER_INT_H
#define FMUD_ENGINE_RECORDER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/record/numfmt.h"
#include "engine/record/recorder.h"

#define REC_BUFFER_SIZE_MAX     (1u << 30)      /* io_uring lengths are 32-bit */
#define REC_BUFFERS_MAX         4096u

/*
 * One buffer of the pool. Between submit and completion it belongs to the
 * backend (and, for the thread backend, to its writer thread); otherwise
 * to the recording thread.
 */
struct rec_buf {
        char *data;
        size_t len;             /* bytes formatted */
        size_t done;            /* bytes written so far */
        int64_t off;            /* file offset of data[0]; -1 for a stream */
        int err;                /* 0, or the write's -errno */
        unsigned short_writes;  /* partial writes re-submitted for the remainder */
        bool finished;          /* the backend gave it back; it waits for those before it */
        /* What is in it, for rows_written (recorder_pool.c, commit()). */
        uint64_t pos;           /* bytes written by the recorder before data[0] */
        uint32_t rows;          /* rows whose line ends here */
        double last_time;       /* the time of the last of them */
        bool header;            /* the header's line ends here (its first line end) */
        bool lead;              /* data[0] continues a row begun in an earlier buffer */
        double lead_time;       /* that row's time (NaN: the header) */
};

/*
 * A backend. Every function runs on the recording thread.
 * start:  set up; -errno on failure (nothing to undo then).
 * submit: take a full buffer and return without waiting for the disk
 *         (the sync backend excepted); the buffer comes back through
 *         rec_pool_done(). -errno only if the backend itself failed.
 * reap:   hand finished buffers to rec_pool_done(); with wait, block until
 *         at least one buffer came back (the pool has nothing in flight
 *         otherwise). -errno only if the backend itself failed.
 * stop:   tear down; called with nothing in flight, or after a backend failure.
 */
struct rec_ops {
        enum rec_backend kind;
        int (*start)(struct rec *r);
        int (*submit)(struct rec *r, struct rec_buf *b);
        int (*reap)(struct rec *r, bool wait);
        void (*stop)(struct rec *r);
};

extern const struct rec_ops rec_uring_ops;
extern const struct rec_ops rec_thread_ops;
extern const struct rec_ops rec_sync_ops;

/* Everything here is owned by the recording thread (see recorder.h). */
struct rec {
        int fd;
        bool regular;           /* a regular file (fsync applies) */
        bool named;             /* it had a name when opened (not O_TMPFILE): losing it is lost rows */
        bool stream;            /* no offsets (pipe, FIFO, device, O_APPEND) or a
                                   shared one: write in order */
        int64_t next_off;       /* file offset of the next submitted buffer */

        char *mem;              /* the pool's memory: nbufs * bufsize bytes */
        struct rec_buf *bufs;
        struct rec_buf **free;  /* stack of free buffers */
        unsigned nbufs, nfree, inflight;
        size_t bufsize;
        struct rec_buf *cur;    /* being filled, or NULL */
        /* Submitted buffers, oldest first: they return to the free stack in this order. */
        struct rec_buf **order;
        unsigned o_head, o_tail;        /* free-running */
        /* Full buffers of a line that goes on: submitted once the line is whole. */
        struct rec_buf **held;
        unsigned nheld;
        uint64_t pos_next;      /* bytes submitted so far */
        uint64_t line_end;      /* bytes up to the end of the last complete line written */
        int64_t base_off;       /* file offset where the recorder began; -1: a stream */
        bool broken;            /* a write failed: nothing after it counts */

        uint64_t flush_ns;      /* 0: only full buffers */
        uint64_t pending_ns;    /* coarse clock when cur got its first byte; 0: empty */
        uint64_t last_check_ns; /* coarse clock when rows last looked at it */
        unsigned check_every;   /* rows between two looks: 1..REC_CHECK_MAX, fewer the slower */
        unsigned check_in;      /* rows until the next look */

        enum rec_type *types;
        size_t ncols;
        size_t row_fixed;       /* worst-case row length without String/Binary contents */
        bool has_var;           /* some column is String or Binary */
        bool all_f64;           /* every column is Float64: rec_sample_f64() */
        char *scratch;          /* rows larger than a buffer, and the header */
        size_t scratch_cap;

        unsigned decimation, countdown;
        bool paced, fsync, marker;
        bool grid;                      /* the time column per numfmt_grid() */
        struct numfmt_grid time_grid;

        const struct rec_ops *ops;
        void *be;               /* the backend's state */
        int fallback;           /* why AUTO did not get io_uring, or 0 */

        struct rec_stats st;
};

/* recorder_pool.c */
int rec_pool_init(struct rec *r);
void rec_pool_fini(struct rec *r);
int rec_pool_acquire(struct rec *r, bool may_drop);
int rec_pool_submit(struct rec *r);
/* Keep the full current buffer back: its last line goes on in the next one. */
void rec_pool_hold(struct rec *r);
/* Submit the held buffers, in order (after an error: back to the free stack). */
int rec_pool_submit_held(struct rec *r);
void rec_pool_done(struct rec *r, struct rec_buf *b);
int rec_pool_drain(struct rec *r);
size_t rec_pool_room(struct rec *r);
/* CLOCK_MONOTONIC_COARSE in ns: a few ns through the vDSO, a few ms of resolution. */
uint64_t rec_coarse_ns(void);

/* recorder_row.c */
int rec_put_header(struct rec *r, const struct rec_column *cols, const char *marker);
size_t rec_type_width(enum rec_type t);

/* recorder_sync.c: write b's remainder, retrying EINTR, EAGAIN and short writes. */
void rec_write_all(int fd, struct rec_buf *b);

#endif
