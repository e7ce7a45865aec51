/*
 * recorder_disk: what reaches the file, for every backend: a full file
 * system (a small tmpfs in a private mount namespace), a file made
 * immutable mid-run (EPERM), rows flushed without new rows coming
 * (rec_tick()), a recording process killed mid-run, and a row larger
 * than a buffer. In each case the
 * file ends on a complete line and holds exactly rec_stats.rows_written
 * rows, the last of them at rec_stats.last_time.
 *
 * Rows are "k,k\n" for k = 0, 1, 2... (column "n", UInt64).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/record/recorder.h"
#include "support/tmpdir.h"

static const struct rec_column counter_col[] = { { "n", REC_UINT64 } };
static const enum rec_backend backends[] = { REC_BACKEND_URING, REC_BACKEND_THREAD, REC_BACKEND_SYNC };
#define NBACKENDS (sizeof backends / sizeof backends[0])

static bool uring_refused(int e)
{
        return e == -ENOSYS || e == -EPERM || e == -EOPNOTSUPP;
}

/*
 * The file at path: the header, then rows "k,k" for k = 0... in order,
 * every line complete. Returns the rows; *ret_last: the last k, or -1.
 */
static uint64_t check_rows(const char *path, long long *ret_last)
{
        FILE *fp = fopen(path, "re");
        char line[128];
        uint64_t n = 0;

        cr_assert(fp != NULL, "%s", path);
        *ret_last = -1;
        if (!fgets(line, sizeof line, fp)) {
                fclose(fp);
                return 0;
        }
        cr_assert(eq(str, line, "time,n\n"));
        while (fgets(line, sizeof line, fp)) {
                char want[64];

                snprintf(want, sizeof want, "%llu,%llu\n", (unsigned long long)n,
                         (unsigned long long)n);
                cr_assert(eq(str, line, want), "row %llu", (unsigned long long)n);
                n++;
        }
        fclose(fp);
        *ret_last = (long long)n - 1;
        return n;
}

static char *slurp(const char *path, size_t *ret_len)
{
        FILE *fp = fopen(path, "re");
        char *s = NULL;
        size_t cap = 0;

        cr_assert(fp != NULL);
        *ret_len = getdelim(&s, &cap, '\0', fp) > 0 ? strlen(s) : 0;
        if (!s)
                s = strdup("");
        fclose(fp);
        return s;
}

/* Rows until rec_sample() fails (at most max); returns the error. */
static int sample_until_error(struct rec *r, uint64_t max)
{
        for (uint64_t k = 0; k < max; k++) {
                union rec_value v = { .u64 = k };
                int e = rec_sample(r, (double)k, &v);

                if (e)
                        return e;
        }
        return rec_flush(r);
}

/* What a failed recording left: error, every row counted is in the file, nothing else. */
static void check_failed(const char *path, const struct rec_stats *st, int close_err, int want,
                         enum rec_backend b)
{
        long long last;
        uint64_t n = check_rows(path, &last);

        cr_assert(eq(int, close_err, want), "%s", rec_backend_name(b));
        cr_assert(eq(int, st->error, want));
        cr_assert(eq(u64, st->rows_written, n), "%s", rec_backend_name(b));
        if (n)
                cr_assert(eq(dbl, st->last_time, (double)last));
        else
                cr_assert(isnan(st->last_time));
        cr_assert(st->rows > n, "%s: rows handed over, not all written", rec_backend_name(b));
}

/* A tmpfs of 64 KiB fills up: ENOSPC, the file cut back to its last complete line. */
Test(recorder_disk, full_tmpfs_is_enospc_and_the_file_ends_on_a_complete_row)
{
        char *dir = tmpdir_new("recorder-disk"), *mnt, *path;

        cr_assert(dir != NULL);
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
                tmpdir_free(dir);
                cr_skip_test("no private mount namespace here: %s", strerror(errno));
        }
        cr_assert(asprintf(&mnt, "%s/small", dir) > 0);
        cr_assert(eq(int, mkdir(mnt, 0700), 0));
        cr_assert(eq(int, mount("tmpfs", mnt, "tmpfs", 0, "size=64k"), 0), "%s", strerror(errno));
        for (size_t i = 0; i < NBACKENDS; i++) {
                struct rec_options o = { .backend = backends[i], .buffer_size = 3000, .buffers = 4 };
                struct rec_stats st;
                struct rec *r;
                int e;

                cr_assert(asprintf(&path, "%s/run.csv", mnt) > 0);
                e = rec_open(path, counter_col, 1, &o, &r);
                if (uring_refused(e)) {
                        free(path);
                        continue;
                }
                cr_assert(eq(int, e, 0));
                cr_assert(eq(int, sample_until_error(r, 1000000), -ENOSPC), "%s",
                          rec_backend_name(backends[i]));
                e = rec_close(r, &st);
                check_failed(path, &st, e, -ENOSPC, backends[i]);
                cr_assert(st.rows_written > 1000, "the file system held rows before it was full");
                cr_assert(eq(int, unlink(path), 0));
                free(path);
        }
        cr_assert(eq(int, umount(mnt), 0));
        free(mnt);
        tmpdir_free(dir);
}

static int set_immutable(const char *path, bool on)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC), flags = 0, r = -1;

        if (fd < 0)
                return -1;
        if (ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0) {
                flags = on ? flags | FS_IMMUTABLE_FL : flags & ~FS_IMMUTABLE_FL;
                r = ioctl(fd, FS_IOC_SETFLAGS, &flags);
        }
        close(fd);
        return r;
}

/* Wait (rec_tick()) until every row so far is written. */
static void tick_until_written(struct rec *r, uint64_t rows)
{
        struct rec_stats st;

        for (;;) {
                cr_assert(eq(int, rec_tick(r), 0));
                rec_get_stats(r, &st);
                if (st.rows_written == rows)
                        return;
                usleep(1000);
        }
}

/* The file made immutable mid-run (chattr +i): EPERM; the rows written before it stay. */
Test(recorder_disk, immutable_file_is_eperm_and_counts_only_rows_on_disk)
{
        char *dir = tmpdir_new("recorder-disk"), *path;

        cr_assert(dir != NULL);
        for (size_t i = 0; i < NBACKENDS; i++) {
                struct rec_options o = { .backend = backends[i], .buffer_size = 4096, .buffers = 4,
                                         .flush_ms = 1 };
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
                for (uint64_t k = 0; k < 100; k++) {
                        union rec_value v = { .u64 = k };

                        cr_assert(eq(int, rec_sample(r, (double)k, &v), 0));
                }
                tick_until_written(r, 100);
                if (set_immutable(path, true) < 0) {
                        (void) rec_close(r, NULL);
                        free(path);
                        tmpdir_free(dir);
                        cr_skip_test("cannot make a file immutable here: %s", strerror(errno));
                }
                e = 0;
                for (uint64_t k = 100; k < 1000000 && !e; k++) {
                        union rec_value v = { .u64 = k };

                        e = rec_sample(r, (double)k, &v);
                }
                cr_assert(eq(int, e, -EPERM), "%s", rec_backend_name(backends[i]));
                e = rec_close(r, &st);
                cr_assert(eq(int, set_immutable(path, false), 0));
                check_failed(path, &st, e, -EPERM, backends[i]);
                cr_assert(eq(u64, st.rows_written, 100));
                free(path);
        }
        tmpdir_free(dir);
}

/* With no new rows, rows reach the file through rec_tick(); REC_FLUSH_OFF keeps them. */
Test(recorder_disk, rows_reach_the_file_without_more_rows)
{
        char *dir = tmpdir_new("recorder-disk"), *path;

        cr_assert(dir != NULL);
        for (size_t i = 0; i < NBACKENDS; i++) {
                struct rec_options o = { .backend = backends[i], .flush_ms = 20 };
                struct rec_stats st;
                long long last;
                struct rec *r;
                int e;

                cr_assert(asprintf(&path, "%s/tick%zu.csv", dir, i) > 0);
                e = rec_open(path, counter_col, 1, &o, &r);
                if (uring_refused(e)) {
                        free(path);
                        continue;
                }
                cr_assert(eq(int, e, 0));
                for (uint64_t k = 0; k < 50; k++) {
                        union rec_value v = { .u64 = k };

                        cr_assert(eq(int, rec_sample(r, (double)k, &v), 0));
                }
                tick_until_written(r, 50);
                cr_assert(eq(u64, check_rows(path, &last), 50));
                cr_assert(rec_idle(r));
                rec_get_stats(r, &st);
                cr_assert(eq(dbl, st.last_time, 49.0));
                cr_assert(eq(int, rec_close(r, NULL), 0));
                free(path);
        }
        tmpdir_free(dir);
}

/*
 * The results file removed while it is written (rm, a cleaning job): the
 * rows go to a file nobody can read, which rec_close() says (-ENOENT);
 * it said nothing and the run ended as a success.
 */
Test(recorder_disk, a_file_removed_while_written_is_an_error)
{
        char *dir = tmpdir_new("recorder-disk"), *path;

        cr_assert(dir != NULL);
        for (size_t i = 0; i < NBACKENDS; i++) {
                struct rec_options o = { .backend = backends[i] };
                struct rec *r;
                int e;

                cr_assert(asprintf(&path, "%s/gone%zu.csv", dir, i) > 0);
                e = rec_open(path, counter_col, 1, &o, &r);
                if (uring_refused(e)) {
                        free(path);
                        continue;
                }
                cr_assert(eq(int, e, 0));
                for (uint64_t k = 0; k < 50; k++) {
                        union rec_value v = { .u64 = k };

                        cr_assert(eq(int, rec_sample(r, (double)k, &v), 0));
                        if (k == 10)
                                cr_assert(eq(int, unlink(path), 0));
                }
                cr_assert(eq(int, rec_close(r, NULL), -ENOENT), "backend %zu", i);
                free(path);
        }
        tmpdir_free(dir);
}

/*
 * A recording process killed (SIGKILL) while it records a row every
 * millisecond: every row it had for longer than the flush interval is in
 * the file, which ends on a complete line.
 */
Test(recorder_disk, killed_recorder_leaves_complete_rows)
{
        char *dir = tmpdir_new("recorder-disk"), *path;

        cr_assert(dir != NULL);
        for (size_t i = 0; i < NBACKENDS; i++) {
                long long last = -1;
                int status;
                pid_t pid;

                cr_assert(asprintf(&path, "%s/kill%zu.csv", dir, i) > 0);
                pid = fork();
                cr_assert(pid >= 0);
                if (pid == 0) {
                        struct rec_options o = { .backend = backends[i], .paced = true,
                                                 .flush_ms = 10 };
                        struct rec *r;

                        if (rec_open(path, counter_col, 1, &o, &r) < 0)
                                _exit(3);
                        for (uint64_t k = 0;; k++) {
                                union rec_value v = { .u64 = k };

                                (void) rec_sample(r, (double)k, &v);
                                (void) rec_tick(r);
                                usleep(1000);
                        }
                }
                /* Until the file holds 20 rows (the buffer is 256 KiB: only flushes put them there). */
                while (last < 19) {
                        struct stat sb;

                        if (waitpid(pid, &status, WNOHANG) == pid) {
                                cr_assert(eq(int, WEXITSTATUS(status), 3));
                                break;          /* io_uring refused: nothing to check */
                        }
                        if (stat(path, &sb) == 0 && sb.st_size > 0)
                                (void) check_rows(path, &last);
                        usleep(2000);
                }
                if (last >= 19) {
                        cr_assert(eq(int, kill(pid, SIGKILL), 0));
                        cr_assert(eq(int, waitpid(pid, &status, 0), pid));
                        cr_assert(check_rows(path, &last) >= 20);
                }
                free(path);
        }
        tmpdir_free(dir);
}

/*
 * A row larger than a buffer goes to the file whole, with the buffer it
 * ends in: never its first buffers alone (the sync backend writes at
 * once, so the file shows what was submitted).
 */
Test(recorder_disk, a_row_larger_than_a_buffer_is_submitted_whole)
{
        static const struct rec_column cols[] = { { "s", REC_STRING } };
        struct rec_options o = { .backend = REC_BACKEND_SYNC, .buffer_size = 256, .buffers = 8,
                                 .flush_ms = REC_FLUSH_OFF };
        char *dir = tmpdir_new("recorder-disk"), *path, big[1001], *want, *got;
        union rec_value v = { .s = "a" };
        struct rec_stats st;
        struct rec *r;
        size_t len;

        cr_assert(dir != NULL);
        memset(big, 'x', 1000);
        big[1000] = '\0';
        cr_assert(asprintf(&path, "%s/big.csv", dir) > 0);
        cr_assert(eq(int, rec_open(path, cols, 1, &o, &r), 0));
        cr_assert(eq(int, rec_sample(r, 0, &v), 0));
        cr_assert(eq(int, rec_flush(r), 0));
        v.s = big;
        cr_assert(eq(int, rec_sample(r, 1, &v), 0));
        v.s = "b";
        cr_assert(eq(int, rec_sample(r, 2, &v), 0));    /* buffered: not in the file yet */
        cr_assert(asprintf(&want, "time,s\n0,a\n1,%s\n", big) > 0);
        got = slurp(path, &len);
        cr_assert(eq(str, got, want));
        rec_get_stats(r, &st);
        cr_assert(eq(u64, st.rows_written, 2));
        cr_assert(eq(dbl, st.last_time, 1.0));
        free(got);
        free(want);
        cr_assert(eq(int, rec_close(r, &st), 0));
        cr_assert(eq(u64, st.rows_written, 3));
        free(path);
        tmpdir_free(dir);
}
