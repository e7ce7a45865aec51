/*
 * host_results: the results operation, pieces of a session's results file
 * for a client that cannot read the daemon's disk (PROTOCOL.md "results").
 *
 * DESIGN: the file is read through the descriptor the load opened it with
 * (host_load.c keeps a duplicate in hs->res_fd), never by its path, so
 * nothing renamed or swapped in meanwhile is read, and the file's
 * permissions play no part once the load had the right to write it. While
 * the recorder writes, only the bytes it reports complete are served
 * (rec_stats.bytes_complete: complete lines in file order), because a later
 * buffer may land before an earlier one and leave a hole for a moment;
 * once the recorder is closed the whole file is. pread() leaves the
 * descriptor's offset, which the recorder does not use either, alone.
 *
 * Threads: the control thread. It takes a duplicate of the descriptor
 * under hs->lock and reads without the lock, so a read of a megabyte never
 * holds up the session thread's status updates.
 */
#include "daemon/host_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Read len bytes at off into buf; the count read (short at the end of the file) or -errno. */
static ssize_t read_at(int fd, void *buf, size_t len, off_t off)
{
        size_t got = 0;

        while (got < len) {
                ssize_t n = pread(fd, (char *)buf + got, len - got, off + (off_t)got);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                got += (size_t)n;
        }
        return (ssize_t)got;
}

void hres_reply(struct host *h, uint64_t token, const struct proto_req *req, struct hsess *hs)
{
        struct proto_results a;
        struct proto_results_result res;
        enum proto_state state;
        uint64_t size, max;
        char err[256];
        void *buf = NULL;
        bool done;
        struct stat st;
        struct pw w;
        ssize_t n;
        int fd;

        if (proto_results_decode(req->args, &a, err, sizeof(err)) < 0) {
                host_reply_error(h, token, req->id, PROTO_E_BAD_REQUEST, "%s", err);
                return;
        }
        max = a.has_max ? a.max : PROTO_RESULTS_CHUNK;
        pthread_mutex_lock(&hs->lock);
        state = hs->st.state;
        /* done before the size: a file closed by then is whole when its size is taken. */
        done = hs->st.res_done;
        size = hs->st.res_bytes;
        fd = hs->res_fd >= 0 ? fcntl(hs->res_fd, F_DUPFD_CLOEXEC, 3) : -2;
        pthread_mutex_unlock(&hs->lock);
        if (fd == -2) {
                if (state == PROTO_STATE_LOADING)
                        host_reply_error(h, token, req->id, PROTO_E_STATE, "session %llu is "
                                         "loading: its results file is not open yet",
                                         (unsigned long long)hs->id);
                else
                        host_reply_error(h, token, req->id, PROTO_E_INVALID, "session %llu has "
                                         "no results file (it records no variables)",
                                         (unsigned long long)hs->id);
                return;
        }
        if (fd < 0 || fstat(fd, &st) < 0) {
                snprintf(err, sizeof(err), "results of session %llu: %s",
                         (unsigned long long)hs->id, strerror(errno));
                goto out_internal;
        }
        /* The file as it is now: cut back after a failed write, or still growing. */
        if (done || size > (uint64_t)st.st_size)
                size = (uint64_t)st.st_size;
        if (a.offset > size) {
                host_reply_error(h, token, req->id, PROTO_E_INVALID, "offset %llu is past the "
                                 "end of the results of session %llu (%llu bytes%s)",
                                 (unsigned long long)a.offset, (unsigned long long)hs->id,
                                 (unsigned long long)size, done ? "" : " so far");
                close(fd);
                return;
        }
        if (max > size - a.offset)
                max = size - a.offset;
        buf = malloc(max ? max : 1);
        if (!buf) {
                snprintf(err, sizeof(err), "out of memory");
                goto out_internal;
        }
        n = read_at(fd, buf, max, (off_t)a.offset);
        if (n < 0) {
                snprintf(err, sizeof(err), "cannot read the results of session %llu: %s",
                         (unsigned long long)hs->id, strerror((int)-n));
                goto out_internal;
        }
        /* A file cut shorter under us (it is not, by the daemon): serve what is there. */
        if ((uint64_t)n < max)
                size = a.offset + (uint64_t)n;
        res = (struct proto_results_result){ .data = buf, .len = (uint32_t)n,
                                             .offset = a.offset, .size = size,
                                             .done = done && a.offset + (uint64_t)n == size,
                                             .format = { "csv", 3 } };
        if (pw_init(&w) < 0) {
                snprintf(err, sizeof(err), "out of memory");
                goto out_internal;
        }
        proto_reply_ok_begin(&w, req->id);
        proto_results_result_encode(&w, &res);
        host_reply_take(h, token, req->id, &w);
        pw_fini(&w);
        free(buf);
        close(fd);
        return;
out_internal:
        host_reply_error(h, token, req->id, PROTO_E_INTERNAL, "%s", err);
        free(buf);
        if (fd >= 0)
                close(fd);
}
