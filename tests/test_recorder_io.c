/*
 * recorder_io: the backends (io_uring, and the writer thread it falls back
 * to when io_uring is refused), backpressure from a stalled writer (a pipe
 * whose reader the test controls), and write errors.
 *
 * No test here sets .timeout: Criterion 2.4.1's runner now and then leaks
 * its timeout record when such tests run in parallel, and LeakSanitizer
 * then fails the whole asan run. ctest's TIMEOUT catches a hang instead
 * (a paced run that blocked would never return).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "engine/record/recorder.h"
#include "support/tmpdir.h"

static const struct rec_column counter_col[] = { { "n", REC_UINT64 } };

static bool uring_refused(int e)
{
        return e == -ENOSYS || e == -EPERM || e == -EOPNOTSUPP;
}

static char *slurp_fd(int fd, size_t *ret_len)
{
        size_t cap = 1 << 16, len = 0;
        char *s = malloc(cap + 1);
        ssize_t k;

        cr_assert(s != NULL);
        while ((k = read(fd, s + len, cap - len)) > 0) {
                len += (size_t)k;
                if (len == cap) {
                        s = realloc(s, 2 * cap + 1);
                        cr_assert(s != NULL);
                        cap *= 2;
                }
        }
        cr_assert(eq(sz, (size_t)k, 0));
        s[len] = '\0';
        *ret_len = len;
        return s;
}

static char *slurp(const char *path, size_t *ret_len)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        char *s;

        cr_assert(fd >= 0);
        s = slurp_fd(fd, ret_len);
        close(fd);
        return s;
}

/* Make io_uring_setup() fail with err in this (isolated) test process. */
static void refuse_io_uring(int err)
{
        scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);

        cr_assert(ctx != NULL);
        cr_assert(eq(int, seccomp_rule_add(ctx, SCMP_ACT_ERRNO(err), SCMP_SYS(io_uring_setup), 0), 0));
        cr_assert(eq(int, seccomp_load(ctx), 0));
        seccomp_release(ctx);
}

Test(recorder_io, auto_uses_io_uring_where_the_kernel_allows)
{
        struct rec_options o = { .backend = REC_BACKEND_URING };
        struct rec *r;
        int e = rec_open("/dev/null", counter_col, 1, &o, &r);

        if (uring_refused(e))
                cr_skip_test("io_uring unavailable: %s", strerror(-e));
        cr_assert(eq(int, e, 0));
        cr_assert(eq(int, rec_close(r, NULL), 0));
        o.backend = REC_BACKEND_AUTO;
        cr_assert(eq(int, rec_open("/dev/null", counter_col, 1, &o, &r), 0));
        cr_assert(eq(int, rec_backend(r), REC_BACKEND_URING));
        cr_assert(eq(str, (char *)rec_backend_name(rec_backend(r)), "io_uring"));
        cr_assert(eq(int, rec_fallback_reason(r), 0));
        cr_assert(eq(int, rec_close(r, NULL), 0));
}

static void falls_back(int err)
{
        char *dir = tmpdir_new("recorder-io"), *path, *got;
        struct rec_options o = { 0 };
        union rec_value v = { .u64 = 7 };
        struct rec *r;
        size_t len;

        cr_assert(dir != NULL);
        cr_assert(asprintf(&path, "%s/fallback.csv", dir) > 0);
        refuse_io_uring(err);
        o.backend = REC_BACKEND_URING;
        cr_assert(eq(int, rec_open(path, counter_col, 1, &o, &r), -err));
        o.backend = REC_BACKEND_AUTO;
        cr_assert(eq(int, rec_open(path, counter_col, 1, &o, &r), 0));
        cr_assert(eq(int, rec_backend(r), REC_BACKEND_THREAD));
        cr_assert(eq(str, (char *)rec_backend_name(rec_backend(r)), "thread"));
        cr_assert(eq(int, rec_fallback_reason(r), -err));
        cr_assert(eq(int, rec_sample(r, 0.5, &v), 0));
        cr_assert(eq(int, rec_close(r, NULL), 0));
        got = slurp(path, &len);
        cr_assert(eq(str, got, "time,n\n0.5,7\n"));
        free(got);
        free(path);
        tmpdir_free(dir);
}

Test(recorder_io, auto_falls_back_to_the_thread_when_io_uring_is_eperm)
{
        falls_back(EPERM);
}

Test(recorder_io, auto_falls_back_to_the_thread_when_io_uring_is_enosys)
{
        falls_back(ENOSYS);
}

/* The test's end of a pipe: reads everything until EOF, optionally slowly. */
struct reader {
        pthread_t tid;
        int fd;
        unsigned pause_us;      /* after each read */
        char *data;
        size_t len;
};

static void *reader_main(void *arg)
{
        struct reader *rd = arg;
        size_t cap = 1 << 16;
        ssize_t k;

        rd->data = malloc(cap + 1);
        for (;;) {
                if (rd->len + 4096 > cap) {
                        cap *= 2;
                        rd->data = realloc(rd->data, cap + 1);
                }
                k = read(rd->fd, rd->data + rd->len, 4096);
                if (k <= 0)
                        break;
                rd->len += (size_t)k;
                if (rd->pause_us)
                        usleep(rd->pause_us);
        }
        rd->data[rd->len] = '\0';
        return NULL;
}

/* A pipe of one page: the "disk" stalls as soon as the reader stops reading. */
static void small_pipe(int p[2])
{
        cr_assert(eq(int, pipe2(p, O_CLOEXEC), 0));
        cr_assert(fcntl(p[1], F_SETPIPE_SZ, 4096) >= 4096);
}

/* Rows "k,k" in strictly increasing k, all complete; returns how many. */
static uint64_t check_counter_rows(const char *s)
{
        uint64_t rows = 0, last = 0;
        const char *line;

        cr_assert(eq(int, strncmp(s, "time,n\n", 7), 0));
        for (line = s + 7; *line; rows++) {
                char *end;
                double t = strtod(line, &end);
                unsigned long long n;

                cr_assert(eq(chr, *end, ','), "row %llu", (unsigned long long)rows);
                n = strtoull(end + 1, &end, 10);
                cr_assert(eq(chr, *end, '\n'), "row %llu", (unsigned long long)rows);
                cr_assert(eq(dbl, t, (double)n));
                cr_assert(rows == 0 || n > last, "row %llu: %llu after %llu",
                          (unsigned long long)rows, n, (unsigned long long)last);
                last = n;
                line = end + 1;
        }
        return rows;
}

#define STALL_SAMPLES   20000

static void paced_drops(enum rec_backend b)
{
        struct rec_options o = { .backend = b, .paced = true, .buffer_size = 1024, .buffers = 2 };
        struct reader rd = { 0 };
        struct rec_stats st;
        uint64_t refused = 0;
        struct rec *r;
        int p[2], e;

        small_pipe(p);
        e = rec_open_fd(p[1], counter_col, 1, &o, &r);
        if (b == REC_BACKEND_URING && uring_refused(e))
                cr_skip_test("io_uring unavailable: %s", strerror(-e));
        cr_assert(eq(int, e, 0));
        /* Nobody reads: a paced run must neither block nor lose rows silently. */
        for (uint64_t k = 0; k < STALL_SAMPLES; k++) {
                union rec_value v = { .u64 = k };

                e = rec_sample(r, (double)k, &v);
                if (e == -ENOBUFS)
                        refused++;
                else
                        cr_assert(eq(int, e, 0));
        }
        rec_get_stats(r, &st);
        cr_assert(refused > 0);
        cr_assert(eq(u64, st.dropped, refused));
        cr_assert(eq(u64, st.rows + st.dropped, STALL_SAMPLES));
        cr_assert(eq(u64, st.waits, 0));

        rd.fd = p[0];
        cr_assert(eq(int, pthread_create(&rd.tid, NULL, reader_main, &rd), 0));
        cr_assert(eq(int, rec_close(r, &st), 0));
        pthread_join(rd.tid, NULL);
        close(p[0]);
        cr_assert(eq(u64, st.dropped, refused));
        cr_assert(eq(u64, check_counter_rows(rd.data), st.rows));
        cr_assert(eq(u64, st.bytes, rd.len));
        free(rd.data);
}

Test(recorder_io, paced_run_drops_and_counts_rows_when_io_uring_stalls)
{
        paced_drops(REC_BACKEND_URING);
}

Test(recorder_io, paced_run_drops_and_counts_rows_when_the_thread_stalls)
{
        paced_drops(REC_BACKEND_THREAD);
}

static void unpaced_waits(enum rec_backend b)
{
        struct rec_options o = { .backend = b, .buffer_size = 1024, .buffers = 2 };
        struct reader rd = { .pause_us = 1000 };
        struct rec_stats st;
        struct rec *r;
        int p[2], e;

        small_pipe(p);
        e = rec_open_fd(p[1], counter_col, 1, &o, &r);
        if (b == REC_BACKEND_URING && uring_refused(e))
                cr_skip_test("io_uring unavailable: %s", strerror(-e));
        cr_assert(eq(int, e, 0));
        /* A reader far slower than the recorder: it must wait, and lose nothing. */
        rd.fd = p[0];
        cr_assert(eq(int, pthread_create(&rd.tid, NULL, reader_main, &rd), 0));
        for (uint64_t k = 0; k < STALL_SAMPLES; k++) {
                union rec_value v = { .u64 = k };

                cr_assert(eq(int, rec_sample(r, (double)k, &v), 0));
        }
        cr_assert(eq(int, rec_close(r, &st), 0));
        pthread_join(rd.tid, NULL);
        close(p[0]);
        cr_assert(eq(u64, st.dropped, 0));
        cr_assert(eq(u64, st.rows, STALL_SAMPLES));
        cr_assert(st.waits > 0);
        cr_assert(eq(u64, check_counter_rows(rd.data), STALL_SAMPLES));
        cr_assert(eq(u64, st.bytes, rd.len));
        free(rd.data);
}

Test(recorder_io, unpaced_run_waits_and_loses_nothing_when_io_uring_stalls)
{
        unpaced_waits(REC_BACKEND_URING);
}

Test(recorder_io, unpaced_run_waits_and_loses_nothing_when_the_thread_stalls)
{
        unpaced_waits(REC_BACKEND_THREAD);
}

/* /dev/full: every write fails with ENOSPC; the error reaches rec_sample() and rec_close(). */
Test(recorder_io, write_errors_are_reported_with_errno)
{
        static const enum rec_backend backends[] = { REC_BACKEND_URING, REC_BACKEND_THREAD, REC_BACKEND_SYNC };

        for (size_t i = 0; i < 3; i++) {
                struct rec_options o = { .backend = backends[i], .buffer_size = 256, .buffers = 2 };
                struct rec_stats st;
                struct rec *r;
                int e = rec_open("/dev/full", counter_col, 1, &o, &r), seen = 0;

                if (uring_refused(e))
                        continue;
                cr_assert(eq(int, e, 0));
                for (uint64_t k = 0; k < 10000 && !seen; k++) {
                        union rec_value v = { .u64 = k };

                        e = rec_sample(r, (double)k, &v);
                        if (e)
                                seen = e;
                }
                cr_assert(eq(int, seen, -ENOSPC), "%s", rec_backend_name(backends[i]));
                cr_assert(eq(int, rec_flush(r), -ENOSPC));
                cr_assert(eq(int, rec_close(r, &st), -ENOSPC));
                cr_assert(eq(int, st.error, -ENOSPC));
                cr_assert(eq(u64, st.bytes, 0));
        }
}

/*
 * RLIMIT_FSIZE cuts the write that straddles the limit short (the remainder
 * is re-submitted and fails with EFBIG): the error is reported, and the
 * file is cut back to the last complete line below the limit, which holds
 * exactly the rows counted as written, the last of them at last_time.
 */
Test(recorder_io, short_writes_are_resubmitted_and_efbig_reported)
{
        static const enum rec_backend backends[] = { REC_BACKEND_URING, REC_BACKEND_THREAD, REC_BACKEND_SYNC };
        const size_t limit = 10000;
        char *dir = tmpdir_new("recorder-io"), *path, *ref = NULL, *got;
        struct rlimit rl = { limit, limit };
        size_t ref_len, len, want;
        uint64_t rows;

        cr_assert(dir != NULL);
        for (size_t i = 0; i < 4; i++) {
                struct rec_options o = { .backend = i ? backends[i - 1] : REC_BACKEND_SYNC,
                                         .buffer_size = 4096, .buffers = 4 };
                struct rec_stats st;
                struct rec *r;
                int e;

                cr_assert(asprintf(&path, "%s/run%zu.csv", dir, i) > 0);
                e = rec_open(path, counter_col, 1, &o, &r);
                if (uring_refused(e)) {
                        free(path);
                        continue;
                }
                cr_assert(eq(int, e, 0));
                for (uint64_t k = 0; k < 3000; k++) {
                        union rec_value v = { .u64 = k };

                        (void) rec_sample(r, (double)k, &v);
                }
                e = rec_close(r, &st);
                if (i == 0) {
                        /* The reference, written before the limit is set. */
                        cr_assert(eq(int, e, 0));
                        ref = slurp(path, &ref_len);
                        cr_assert(ref_len > 2 * limit);
                        signal(SIGXFSZ, SIG_IGN);
                        cr_assert(eq(int, setrlimit(RLIMIT_FSIZE, &rl), 0));
                        free(path);
                        continue;
                }
                cr_assert(eq(int, e, -EFBIG), "%s", rec_backend_name(o.backend));
                cr_assert(st.short_writes >= 1, "%s", rec_backend_name(o.backend));
                cr_assert(eq(u64, st.bytes, limit));
                got = slurp(path, &len);
                want = (size_t)((char *)memrchr(ref, '\n', limit) - ref) + 1;
                cr_assert(eq(sz, len, want), "%s", rec_backend_name(o.backend));
                cr_assert(eq(int, memcmp(got, ref, want), 0));
                rows = 0;
                for (size_t k = 0; k < want; k++)
                        rows += got[k] == '\n';
                cr_assert(eq(u64, st.rows_written, rows - 1));  /* the header is no row */
                cr_assert(eq(dbl, st.last_time, (double)(rows - 2)));
                cr_assert(st.rows > st.rows_written);
                free(got);
                free(path);
        }
        free(ref);
        tmpdir_free(dir);
}
