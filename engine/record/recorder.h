/*
 * recorder: a session's results as a CSV file, written without ever making
 * the master wait on the disk.
 *
 * File format
 * - Header: "time,<column>,<column>...", the names the caller gives
 *   ("<instance>.<variable>", or bare names for a single-FMU scenario; an
 *   array is one column per element, named by the caller), quoted per
 *   RFC 4180 when needed. With an intermediate-row marker column (see
 *   rec_options), its name comes last.
 * - One row per recorded sample: the time, then the values, "\n"-terminated.
 *   The time as a Float64 below, except that a recorder given the grid
 *   (rec_options.grid) writes a grid point t0 + k h as the decimal the
 *   grid was written with (numfmt_grid(): "0.7", not "0.7000000000000001"),
 *   which reads back as the double nearest that decimal.
 *   Float64 and Float32: shortest text that reads back bit-exactly, C
 *   locale, "inf", "-inf", "nan" (numfmt.h). Integers of every width in
 *   decimal. Boolean: 0 or 1 (as FMPy and fmusim). String: RFC 4180 quoting
 *   when needed. Binary: lowercase hex, two digits per byte (csv_fmt.h).
 * - Intermediate updates (FMI 3.0 section 4.2.2) are optional rows of the
 *   same file, written by rec_sample_intermediate() when the recorder was
 *   opened with a marker column: that last column is 0 on communication
 *   points and 1 on intermediate rows. Without the marker column the file
 *   is exactly "time + values" and intermediate rows are refused (-EINVAL),
 *   so that no reader can mistake one for a communication point.
 * - Decimation k records the 1st, (k+1)th, (2k+1)th... communication-point
 *   sample. It does not apply to intermediate rows, which are recorded
 *   whenever the caller chooses to pass them.
 *
 * Buffering and backpressure
 * - Rows are formatted into the current buffer of a fixed pool ('buffers'
 *   of 'buffer_size' bytes). A full buffer is submitted to the backend and
 *   the call returns at once; finished writes are collected without waiting.
 * - When every buffer is in flight (the disk is slower than the simulation):
 *   an as-fast-as-possible run waits for the disk, so that no sample is
 *   ever lost; a paced run ('paced', real-time) does not wait: the row is
 *   dropped, counted in rec_stats.dropped, and rec_sample() says so.
 * - rec_close() flushes, waits for every write, re-submits the remainder of
 *   short writes, optionally fsyncs, and reports the first error.
 *
 * Flushing and what is on disk
 * - Rows never wait in a buffer for long: a buffer holding rows is
 *   submitted once its first row has waited 'flush_ms' (1 s by default),
 *   checked as rows come (a coarse clock read at every row while rows are
 *   slow, at every 64th while they are fast) and by rec_tick(), which the
 *   caller calls while no rows come (a paced run's sleep, a paused
 *   session). A row that comes so long after the one before that the next
 *   look would miss the deadline is submitted at once. Submitting is never
 *   waiting: the disk is only waited for as described above.
 * - Buffers are submitted on row boundaries only (a row larger than a
 *   buffer excepted), so a file cut by a crash ends on a complete line as
 *   of the last flush.
 * - rec_stats.rows_written counts the rows the kernel confirmed written,
 *   in file order: rows handed to the recorder but not yet written, or
 *   written after a failed write, are not counted. last_time is the time
 *   of the last of them.
 * - After a failed write (ENOSPC, EDQUOT, EFBIG, EIO, EPERM, a write of
 *   zero bytes), nothing more is recorded: rec_sample() and rec_tick()
 *   return the error, and rec_close() cuts a regular file back to the end
 *   of its last complete line, so that it holds exactly rows_written rows.
 *
 * Backends (recorder_uring.c, recorder_thread.c, recorder_sync.c)
 * - io_uring: IORING_OP_WRITE at increasing file offsets (one write in
 *   flight at a time for pipes and devices, which have no offsets);
 *   completions are reaped by peeking at the completion queue.
 * - thread: one writer thread doing write(2)/pwrite(2); the fallback where
 *   io_uring_queue_init() fails (ENOSYS, EPERM in containers that disable
 *   it, or any other error) or lacks IORING_OP_WRITE.
 * - sync: write(2) on the calling thread. It blocks the caller, so the
 *   daemon never uses it; it exists to measure and for offline tools.
 *
 * Threads: a recorder is used by one thread at a time (the session's master
 * once it runs; the thread that opened it before that). The thread backend
 * adds its own writer thread (see recorder_thread.c for what it touches).
 */
#ifndef FMUD_ENGINE_RECORDER_H
#define FMUD_ENGINE_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * 256 KiB x 8 (bench/recorder): io_uring was level with the writer thread
 * (0.96 to 1.05 of its wall time from 64 KiB to 1 MiB, depth 4 or 8) and
 * used the least process CPU here; 1 MiB buffers were slower (a pool of
 * 8 MiB outgrows the 4 MiB L2 in which the master formats and the writer
 * reads); 64 KiB x 8 was within the noise, where memory matters more.
 */
#define REC_BUFFER_SIZE_DEFAULT (256u * 1024)
#define REC_BUFFERS_DEFAULT     8u
#define REC_BUFFER_SIZE_MIN     256u
#define REC_FLUSH_MS_DEFAULT    1000u
#define REC_FLUSH_OFF           UINT32_MAX      /* only full buffers (and flush, close) are written */

enum rec_type {
        REC_FLOAT32,
        REC_FLOAT64,
        REC_INT8,
        REC_UINT8,
        REC_INT16,
        REC_UINT16,
        REC_INT32,
        REC_UINT32,
        REC_INT64,
        REC_UINT64,
        REC_BOOLEAN,
        REC_STRING,
        REC_BINARY,
        REC_TYPE_COUNT,
};

/* One value; the member read is the one the column's type names. */
union rec_value {
        float f32;
        double f64;
        int8_t i8;
        uint8_t u8;
        int16_t i16;
        uint16_t u16;
        int32_t i32;
        uint32_t u32;
        int64_t i64;
        uint64_t u64;
        bool b;
        const char *s;                  /* NUL-terminated; NULL is an empty string */
        struct {
                const uint8_t *data;    /* may be NULL when size is 0 */
                size_t size;
        } bin;
};

struct rec_column {
        const char *name;
        enum rec_type type;
};

enum rec_backend {
        REC_BACKEND_AUTO,       /* io_uring, else the writer thread */
        REC_BACKEND_URING,      /* io_uring or fail */
        REC_BACKEND_THREAD,
        REC_BACKEND_SYNC,
};

/* Zero-initialised options are the defaults. */
struct rec_options {
        enum rec_backend backend;
        size_t buffer_size;             /* bytes per buffer, >= REC_BUFFER_SIZE_MIN; 0: default */
        unsigned buffers;               /* pool depth, >= 2; 0: default */
        unsigned decimation;            /* record every k-th sample; 0 and 1: every one */
        bool paced;                     /* drop rather than wait when the pool is exhausted */
        bool fsync;                     /* fsync(2) at rec_close() */
        unsigned flush_ms;              /* rows wait at most this long; 0: default; REC_FLUSH_OFF */
        const char *intermediate_column; /* marker column name; NULL: no intermediate rows */
        bool grid;                      /* times on the grid grid_t0 + k grid_h printed as the
                                           decimal the user wrote (numfmt_grid()) */
        double grid_t0, grid_h;
        bool shared_offset;             /* rec_open_fd(): the descriptor's file offset is shared
                                           with other writers (a standard output redirected to a
                                           file): written at it, in order, moving it as write(2)
                                           does, so what they write before and after the rows
                                           lands before and after them */
};

struct rec_stats {
        uint64_t samples;       /* rec_sample() calls that were accepted, decimated or dropped */
        uint64_t rows;          /* rows formatted for the file (intermediate ones included) */
        uint64_t intermediate;  /* of which intermediate */
        uint64_t dropped;       /* rows lost: paced run with every buffer in flight */
        uint64_t waits;         /* times the caller waited for the disk (not paced) */
        uint64_t bytes;         /* bytes the kernel confirmed written, header included */
        uint64_t short_writes;  /* writes that completed short and were re-submitted */
        uint64_t rows_written;  /* rows the kernel confirmed written, in file order */
        double last_time;       /* the time of the last of them; NaN: none */
        /*
         * Bytes from where the recorder began to the end of the last
         * complete line the kernel confirmed written, in file order (the
         * header included): a reader of the file while it is written finds
         * exactly these bytes complete, whatever later writes completed first.
         */
        uint64_t bytes_complete;
        int error;              /* first write error (-errno), or 0 */
};

struct rec;

/*
 * Create (or truncate) the file at path, mode 0644, and write the header.
 * cols: ncols >= 1 columns, copied. opt: NULL for the defaults.
 * Returns 0 and *ret_rec, or -errno: -EINVAL (bad options or columns),
 * -ENOMEM, the open(2) error, or with REC_BACKEND_URING the
 * io_uring_queue_init() error. Release with rec_close().
 */
int rec_open(const char *path, const struct rec_column *cols, size_t ncols,
             const struct rec_options *opt, struct rec **ret_rec);

/*
 * The same on a descriptor open for writing: a regular file (written from
 * its current offset, which stays there unless rec_options.shared_offset),
 * a pipe, a FIFO or a device. Takes ownership of fd
 * on success only: rec_close() closes it.
 */
int rec_open_fd(int fd, const struct rec_column *cols, size_t ncols,
                const struct rec_options *opt, struct rec **ret_rec);

/*
 * Record one communication-point sample: time and one value per column, in
 * column order; strings and binaries are only read during the call.
 * Returns 0 when the row was buffered or skipped by decimation; -ENOBUFS
 * when a paced run dropped it (counted; not an error of the recorder, and
 * recording continues); after a write error, that error (-errno) on every
 * call, with nothing more recorded. Never waits for the disk when paced;
 * otherwise waits only while every buffer is in flight.
 */
int rec_sample(struct rec *r, double time, const union rec_value *values);

/*
 * rec_sample() for a recorder whose columns are all Float64, from the
 * doubles themselves (what the master's rows hold): no rec_value per
 * column and no per-column type dispatch. -EINVAL if some column is not
 * Float64 (see rec_all_f64()); otherwise returns as rec_sample().
 */
int rec_sample_f64(struct rec *r, double time, const double *values);

/* Whether every column is Float64 (rec_sample_f64() applies). */
bool rec_all_f64(const struct rec *r);

/*
 * Record an intermediate-update row (marker column 1), never decimated.
 * Returns as rec_sample(), or -EINVAL if the recorder has no marker column.
 */
int rec_sample_intermediate(struct rec *r, double time, const union rec_value *values);

/* Submit the partly filled current buffer, without waiting (e.g. on pause). */
int rec_flush(struct rec *r);

/*
 * Between rows: collect finished writes and submit rows that have waited
 * half the flush interval, without waiting. Call it at least every few
 * hundred ms while rows are buffered or writes are in flight (see
 * rec_idle()). Returns 0, or the recorder's write error.
 */
int rec_tick(struct rec *r);

/* Nothing buffered and nothing in flight: rec_tick() has nothing to do. */
bool rec_idle(const struct rec *r);

/* Switch between paced (drop) and as-fast-as-possible (wait), e.g. on a warp change. */
void rec_set_paced(struct rec *r, bool paced);

/* The backend in use: REC_BACKEND_URING, _THREAD or _SYNC. */
enum rec_backend rec_backend(const struct rec *r);

/* "io_uring", "thread", "sync" or "auto": a static string. */
const char *rec_backend_name(enum rec_backend b);

/*
 * Why io_uring is not in use when REC_BACKEND_AUTO fell back to the thread:
 * the -errno of io_uring_queue_init() (-ENOSYS, -EPERM...) or -EOPNOTSUPP
 * when the kernel lacks IORING_OP_WRITE; 0 otherwise.
 */
int rec_fallback_reason(const struct rec *r);

/* The counters so far (bytes and errors as of the last reaped completion). */
void rec_get_stats(const struct rec *r, struct rec_stats *ret);

/*
 * Flush, wait for every write (re-submitting short ones), cut a regular
 * file back to its last complete line after a failed write, fsync when
 * asked, close the file and free r, whatever happens. Fills *ret_stats
 * when not NULL, on failure too (the counters then say what was written
 * and lost). Returns 0, or the first error as -errno (a write error, the
 * fsync or close error, -ENOENT when the file had a name when opened and
 * has none now: removed while written). rec_close(NULL) returns 0.
 */
int rec_close(struct rec *r, struct rec_stats *ret_stats);

#endif
