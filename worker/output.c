/*
 * output: what the FMU writes to its standard output and error (printf
 * and fprintf(stderr) are common in exports), forwarded to the daemon as
 * LOG events of status OK with the category "stdout" or "stderr", line by
 * line, so that a session's log (fmuctl logs, fmuctl run) shows them
 * under their instance's name, as an in-process importer shows them on
 * its terminal.
 *
 * DESIGN: fds 1 and 2 become memfds of OUTPUT_BYTES each, sealed against
 * growing and shrinking, that the worker also maps and keeps a descriptor
 * of its own to (sharing fd 1's or 2's file offset while the FMU leaves
 * them be). Text the FMU writes lands in those pages, so after each call
 * the worker sees whether anything came by reading the byte at its
 * position: no system call and no thread for an FMU that prints nothing.
 * When something came, the file offset (one lseek) says where the
 * written bytes end, so a NUL the FMU writes is dropped, not taken for
 * the end; a NUL written first of all after a drain is found by the same
 * lseek made every OUTPUT_CHECK_EVERY drains and at the end. A line
 * longer than CALL_MSG_MAX is sent in parts; a partial line waits for its
 * newline (stdout is line buffered, main.c) or goes out at the end of the
 * next call, at Terminate, at FREE and before a crash's last words (its
 * last eight lines within 8 KiB, leaving the channel room for them). Once
 * past half of a file and caught up, the worker punches out what it read
 * and seeks back to 0, through its own descriptor: an FMU that put
 * another file on fd 1 (freopen) never has that file touched. What does
 * not fit (more than OUTPUT_BYTES within a call or two) fails to be
 * written, as on a full disk, and the worker says so. A thread of the
 * FMU's writing while the worker seeks back may lose that write. The
 * lines have their own budget per call (OUTPUT_LINES_PER_CALL), beside
 * the FMU's log messages: chatter never crowds out a Warning or an Error.
 * A sanitizer's report goes to the standard error the worker was given.
 * If the files cannot be made, fds 1 and 2 stay where they were.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#include <stdint.h>
#endif

#include "worker/worker.h"

#define OUTPUT_BYTES            (1u << 20)      /* each stream's file: what one call may print */
#define OUTPUT_CHECK_EVERY      64u             /* drains between two looks at the offset */
#define OUTPUT_CRASH_BYTES      8192u           /* what a crash sends at most, its last lines */
#define OUTPUT_CRASH_LINES      8u

enum { OUT_STDOUT, OUT_STDERR, OUT_N };

static const char *const out_category[OUT_N] = { "stdout", "stderr" };

static struct stream {
        const volatile char *map;       /* NULL: not captured */
        int fd;                         /* the worker's own descriptor of the memfd */
        size_t pos;                     /* the first byte not sent */
        size_t seen;                    /* end of a partial line seen at the last drain */
        bool full;                      /* the file filled up since the last warning */
} streams[OUT_N] = { { .fd = -1 }, { .fd = -1 } };

static unsigned drains;

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
        *st = (struct stream){ .map = map, .fd = fd };
        return 0;
}

int output_capture(void)
{
#if defined(__SANITIZE_ADDRESS__)
        {
                /* A sanitizer's report goes where fd 2 went, read when the worker dies. */
                int given = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);

                if (given >= 0)
                        __sanitizer_set_report_fd((void *)(intptr_t)given);
        }
#endif
        for (int i = 0; i < OUT_N; i++) {
                int r = make_file(i == OUT_STDOUT ? STDOUT_FILENO : STDERR_FILENO, &streams[i]);

                if (r < 0) {
                        for (int k = 0; k < i; k++) {
                                munmap((void *)streams[k].map, OUTPUT_BYTES);
                                close(streams[k].fd);
                                streams[k] = (struct stream){ .fd = -1 };
                        }
                        return r;
                }
        }
        /* fd 1 and 2 share the memfds' open file descriptions, and so their offsets. */
        for (int i = 0; i < OUT_N; i++)
                (void) dup2(streams[i].fd, i == OUT_STDOUT ? STDOUT_FILENO : STDERR_FILENO);
        return 0;
}

/* Bytes [from, to) of stream i as one line (NULs dropped, a last '\r' too). */
static void send_line(struct worker *w, int i, size_t from, size_t to)
{
        const struct stream *st = &streams[i];
        char line[CALL_MSG_MAX + 1];
        size_t n = 0;

        for (size_t k = from; k < to && n < CALL_MSG_MAX; k++) {
                char c = st->map[k];

                if (c)
                        line[n++] = c;
        }
        if (!n && to > from)
                return;         /* NULs alone: nothing the FMU meant as a line */
        if (n && line[n - 1] == '\r')
                n--;
        line[n] = '\0';
        log_output(w, out_category[i], line);
}

/* Where the written bytes of stream i end: its file offset, within the file. */
static size_t extent(const struct stream *st)
{
        off_t o = lseek(st->fd, 0, SEEK_CUR);

        return o < 0 ? 0 : (uint64_t)o > OUTPUT_BYTES ? OUTPUT_BYTES : (size_t)o;
}

/* Back to the start of the file once past its middle (or at its end) and caught up. */
static void rewind_file(struct stream *st, size_t lim)
{
        if (st->pos < lim || (st->pos < OUTPUT_BYTES / 2 && lim < OUTPUT_BYTES))
                return;
        if (fallocate(st->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)st->pos) < 0 ||
            lseek(st->fd, 0, SEEK_SET) < 0)
                return;
        st->pos = st->seen = 0;
}

static void drain(struct worker *w, bool last, bool may_warn)
{
        bool look = last || ++drains % OUTPUT_CHECK_EVERY == 0;

        for (int i = 0; i < OUT_N; i++) {
                struct stream *st = &streams[i];
                size_t lim, end;

                if (!st->map || (!look && (st->pos >= OUTPUT_BYTES || !st->map[st->pos])))
                        continue;
                lim = extent(st);
                if (lim < st->pos)
                        lim = st->pos;          /* the FMU seeked back: nothing new here */
                if (!may_warn && lim - st->pos > OUTPUT_CRASH_BYTES) {
                        /* Before a crash's last words: the last lines only, from a line's start. */
                        st->pos = lim - OUTPUT_CRASH_BYTES;
                        while (st->pos < lim && st->map[st->pos - 1] != '\n')
                                st->pos++;
                }
                end = st->pos;
                while (end < lim) {
                        if (st->map[end] == '\n' || end - st->pos == CALL_MSG_MAX) {
                                bool nl = st->map[end] == '\n';

                                send_line(w, i, st->pos, end);
                                st->pos = end + nl;
                                end = st->pos;
                                continue;
                        }
                        end++;
                }
                /* A partial line: sent once it has waited a whole call, or at the end. */
                if (end > st->pos && (last || end == st->seen || end == OUTPUT_BYTES)) {
                        send_line(w, i, st->pos, end);
                        st->pos = end;
                }
                st->seen = end;
                st->full |= lim == OUTPUT_BYTES;
                if (st->full && may_warn) {
                        log_worker(w, fmi3Warning, "the FMU wrote more to its %s than fits "
                                   "(%u bytes) before fmud read it: the rest was not kept",
                                   out_category[i], OUTPUT_BYTES);
                        st->full = false;
                }
                rewind_file(st, lim);
        }
        if (may_warn && w->out_dropped) {
                char note[128];

                snprintf(note, sizeof(note), "(fmud: %u more printed lines not forwarded: at "
                         "most %u a call)", (unsigned)w->out_dropped, CALL_LOGS_PER_CALL);
                log_output_note(w, note);
                w->out_dropped = 0;
        }
}

void output_drain(struct worker *w)
{
        drain(w, false, true);
}

void output_finish(struct worker *w)
{
        /* A last line the FMU printed without a newline is still in stdio's buffer. */
        (void) fflush(stdout);
        (void) fflush(stderr);
        drain(w, true, true);
}

void output_last(struct worker *w)
{
        /*
         * In a crash handler: nothing that formats or locks (log_worker()
         * does both), and a few lines at most, so that they leave room in
         * the channel for the last words that follow them.
         */
        if (w->out_sent < CALL_LOGS_PER_CALL - OUTPUT_CRASH_LINES)
                w->out_sent = CALL_LOGS_PER_CALL - OUTPUT_CRASH_LINES;
        drain(w, true, false);
}
