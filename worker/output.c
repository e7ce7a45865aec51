/*
 * output: what the FMU writes to its standard output and error (printf
 * and fprintf(stderr) are common in exports), forwarded to the daemon as
 * LOG events of status OK with the category "stdout" or "stderr", line by
 * line, so that a session's log (fmuctl logs, fmuctl run) shows them
 * under their instance's name, as an in-process importer shows them on
 * its terminal.
 *
 * DESIGN: fds 1 and 2 become memfds of OUTPUT_BYTES each, sealed against
 * growing and shrinking, that the worker also maps. Text the FMU writes
 * lands in those pages, so after each call the worker's thread sees
 * whether anything came by reading the byte at its position: no system
 * call and no thread for an FMU that prints nothing, and every line
 * written within a call goes out with that call's reply. A byte 0 ends
 * what was written (text has none: a NUL the FMU writes ends its line
 * early). A line longer than CALL_MSG_MAX is sent in parts; a partial line
 * waits for its newline (stdout is line buffered, main.c) or goes out at
 * the end of the next call, or at FREE. Once past half of a file and
 * caught up, the worker punches out what it read and seeks fd 1 (or 2)
 * back to 0. What does not fit (more than OUTPUT_BYTES within a call or
 * two) fails to be written, as on a full disk, and the worker says so.
 * A sanitizer's report goes to the standard error the worker was given.
 * A thread of the FMU's writing while the worker seeks back may lose that
 * write. If the files cannot be made, fds 1 and 2 stay where they were.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#include <stdint.h>
#endif

#include "worker/worker.h"

#define OUTPUT_BYTES    (1u << 20)      /* each stream's file: what one call may print */

enum { OUT_STDOUT, OUT_STDERR, OUT_N };

static const char *const out_category[OUT_N] = { "stdout", "stderr" };

static struct stream {
        const volatile char *map;       /* NULL: not captured */
        size_t pos;                     /* the first byte not sent */
        size_t seen;                    /* end of a partial line seen at the last drain */
} streams[OUT_N];

static int make_file(int target, struct stream *st)
{
        int fd = memfd_create(target == STDOUT_FILENO ? "stdout" : "stderr",
                              MFD_CLOEXEC | MFD_ALLOW_SEALING);
        void *map;

        if (fd < 0)
                return -errno;
        if (ftruncate(fd, OUTPUT_BYTES) < 0 ||
            fcntl(fd, F_ADD_SEALS, F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) < 0) {
                int e = -errno;

                close(fd);
                return e;
        }
        map = mmap(NULL, OUTPUT_BYTES, PROT_READ, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED) {
                int e = -errno;

                close(fd);
                return e;
        }
        st->map = map;
        st->pos = st->seen = 0;
        return fd;
}

int output_capture(void)
{
        int fd[OUT_N];

#if defined(__SANITIZE_ADDRESS__)
        {
                /* A sanitizer's report goes where fd 2 went, read when the worker dies. */
                int given = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);

                if (given >= 0)
                        __sanitizer_set_report_fd((void *)(intptr_t)given);
        }
#endif

        for (int i = 0; i < OUT_N; i++) {
                fd[i] = make_file(i == OUT_STDOUT ? STDOUT_FILENO : STDERR_FILENO, &streams[i]);
                if (fd[i] < 0) {
                        int e = fd[i];

                        for (int k = 0; k < i; k++) {
                                munmap((void *)streams[k].map, OUTPUT_BYTES);
                                streams[k].map = NULL;
                                close(fd[k]);
                        }
                        return e;
                }
        }
        for (int i = 0; i < OUT_N; i++) {
                (void) dup2(fd[i], i == OUT_STDOUT ? STDOUT_FILENO : STDERR_FILENO);
                close(fd[i]);
        }
        return 0;
}

/* One line (or part of one) of stream i, from st->pos, len bytes. */
static void send_line(struct worker *w, int i, struct stream *st, size_t len)
{
        char line[CALL_MSG_MAX + 1];
        size_t n = len > CALL_MSG_MAX ? CALL_MSG_MAX : len;

        for (size_t k = 0; k < n; k++)
                line[k] = st->map[st->pos + k];
        if (n && line[n - 1] == '\r')
                n--;
        line[n] = '\0';
        log_output(w, out_category[i], line);
}

/* Back to the start of the file once past its middle with nothing left unread. */
static void rewind_file(int i, struct stream *st)
{
        int fd = i == OUT_STDOUT ? STDOUT_FILENO : STDERR_FILENO;

        if (st->pos < OUTPUT_BYTES / 2 || (st->pos < OUTPUT_BYTES && st->map[st->pos]))
                return;
        if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)st->pos) < 0 ||
            lseek(fd, 0, SEEK_SET) < 0)
                return;         /* the FMU closed or replaced it: nothing more comes */
        st->pos = st->seen = 0;
}

static void drain(struct worker *w, bool last)
{
        for (int i = 0; i < OUT_N; i++) {
                struct stream *st = &streams[i];
                size_t end = st->pos;

                if (!st->map || st->pos >= OUTPUT_BYTES || !st->map[st->pos])
                        continue;
                for (;;) {
                        char c = end < OUTPUT_BYTES ? st->map[end] : '\0';

                        if (c == '\n' || end - st->pos == CALL_MSG_MAX) {
                                send_line(w, i, st, end - st->pos);
                                st->pos = end + (c == '\n');
                                end = st->pos;
                                continue;
                        }
                        if (!c)
                                break;
                        end++;
                }
                /* A partial line: sent once it has waited a whole call, or at the end. */
                if (end > st->pos && (last || end == st->seen || end == OUTPUT_BYTES)) {
                        send_line(w, i, st, end - st->pos);
                        st->pos = end;
                }
                st->seen = end;
                if (st->pos == OUTPUT_BYTES)
                        log_worker(w, fmi3Warning, "the FMU wrote more to its %s than fits "
                                   "(%u bytes) before fmud read it: the rest was not kept",
                                   out_category[i], OUTPUT_BYTES);
                rewind_file(i, st);
        }
}

void output_drain(struct worker *w)
{
        drain(w, false);
}

void output_finish(struct worker *w)
{
        drain(w, true);
}
