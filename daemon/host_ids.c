/*
 * host_ids: session ids that a restart of the daemon does not hand out
 * again. A client's target (session, generation) from before a restart
 * must not name a session loaded after it: with ids counted from 1 on
 * every start, the first load after a restart got the old first session's
 * id and generation 1, and a client that had held that target stepped,
 * read and unloaded someone else's run without an error.
 *
 * DESIGN: the last id handed out is kept in STATE_DIR/last-session (a
 * decimal number and a newline), read when the daemon starts and written
 * before each load's id is answered, through one descriptor opened at
 * start (O_NOFOLLOW: the state directory is the daemon's own) and locked
 * (flock) for the daemon's life: a second daemon on the same state
 * directory is refused, as it would hand out the same ids. Written
 * without fsync: a load is rare, but a machine that crashed restarts its
 * clients too. A daemon with no state directory, or whose file cannot be
 * read or written, counts from 1 as before and says so once.
 */
#include "daemon/host_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <syslog.h>
#include <unistd.h>

#define IDS_FILE        "last-session"

static void say(struct host *h, const char *what, int e)
{
        char line[4400];

        if (!h->opts.log)
                return;
        snprintf(line, sizeof(line), "session ids: %s %s/%s: %s: ids may repeat those of "
                 "before a restart", what, h->state_dir, IDS_FILE, strerror(e));
        h->opts.log(h->opts.log_ctx, LOG_WARNING, line);
}

int host_ids_open(struct host *h)
{
        char path[4096], buf[32];
        unsigned long long last;
        ssize_t n;
        char *end;
        int fd;

        h->ids_fd = -1;
        h->next_id = 1;
        if (!h->state_dir)
                return 0;
        if (snprintf(path, sizeof(path), "%s/%s", h->state_dir, IDS_FILE) >= (int)sizeof(path)) {
                say(h, "cannot name", ENAMETOOLONG);
                return 0;
        }
        fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
                say(h, "cannot open", errno);
                return 0;
        }
        /* Two daemons on one state directory would hand out the same ids (and results). */
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                int e = errno;

                close(fd);
                if (e == EWOULDBLOCK)
                        return -EBUSY;
                say(h, "cannot lock", e);
                return 0;
        }
        n = pread(fd, buf, sizeof(buf) - 1, 0);
        if (n < 0) {
                say(h, "cannot read", errno);
                close(fd);
                return 0;
        }
        buf[n] = '\0';
        errno = 0;
        last = strtoull(buf, &end, 10);
        if (n && (errno || end == buf || (*end && *end != '\n') || buf[0] == '-' ||
                  last >= UINT64_MAX))
                say(h, "ignores the unreadable", EINVAL);
        else if (n)
                h->next_id = (uint64_t)last + 1;
        h->ids_fd = fd;
        return 0;
}

void host_ids_taken(struct host *h, uint64_t id)
{
        char buf[32];
        int len = snprintf(buf, sizeof(buf), "%" PRIu64 "\n", id);

        if (h->ids_fd < 0)
                return;
        if (h->ids_broken)
                return;
        errno = 0;
        if (pwrite(h->ids_fd, buf, (size_t)len, 0) != len || ftruncate(h->ids_fd, len) < 0) {
                /* Not written from now on, but kept open: its lock keeps other daemons out. */
                say(h, "cannot write", errno ? errno : EIO);
                h->ids_broken = true;
        }
}

void host_ids_close(struct host *h)
{
        if (h->ids_fd >= 0)
                close(h->ids_fd);
        h->ids_fd = -1;
}
