/*
 * leftovers: worker records, and the start-up sweep of what a dead
 * daemon left (leftovers.h).
 *
 * DESIGN: everything below the scratch root is reached from an open
 * directory descriptor with openat(O_NOFOLLOW) and fstatat/unlinkat
 * (AT_SYMLINK_NOFOLLOW), never by a path that a link could redirect: a
 * dead worker's FMU may have left links pointing anywhere. Records are
 * read bounded and parsed strictly; a record that does not parse is
 * removed without killing anything.
 */
#include "engine/instance/leftovers.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define REC_MAX         128     /* bytes of one record */
#define NAME_MAX_LEN    64      /* a scratch directory's name */
#define MAX_KEPT        4096    /* scratch directories of a running daemon's workers */
#define MAX_KILLED      4096    /* workers waited for at once */
#define MAX_DEPTH       64      /* directories below a scratch directory */

/* The start time (clock ticks after boot) and parent of pid; 0 or -errno. */
static int proc_stat(pid_t pid, unsigned long long *ret_start, pid_t *ret_ppid)
{
        char path[64], buf[1024], *p;
        unsigned long long start = 0;
        int fd, ppid = 0;
        ssize_t n;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return -ESRCH;
        buf[n] = '\0';
        /* The command name may hold anything, ')' too: the fields follow the last ')'. */
        p = strrchr(buf, ')');
        if (!p || sscanf(p + 1, " %*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
                                "%*d %*d %*d %*d %llu", &ppid, &start) != 2)
                return -EPROTO;
        *ret_start = start;
        *ret_ppid = (pid_t)ppid;
        return 0;
}

/* Whether pid runs a program named fmud (a daemon that owns its workers). */
static bool is_fmud(pid_t pid)
{
        char path[64], comm[32] = "";
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        n = read(fd, comm, sizeof(comm) - 1);
        close(fd);
        if (n <= 0)
                return false;
        comm[n] = '\0';
        comm[strcspn(comm, "\n")] = '\0';
        return !strcmp(comm, "fmud");
}

/* ROOT/fmud-XXXXXX: the names scratch_make() gives, nothing else. */
static bool scratch_name(const char *name)
{
        if (strncmp(name, "fmud-", 5) != 0 || strlen(name) != 11)
                return false;
        for (int i = 5; i < 11; i++)
                if (!isalnum((unsigned char)name[i]))
                        return false;
        return true;
}

int leftovers_record(const char *root, pid_t pid, const char *scratch, char **ret_path)
{
        const char *name = "-";
        char *dir = NULL, *path = NULL, line[REC_MAX];
        unsigned long long start;
        pid_t ppid;
        int fd = -1, len, r;

        if (scratch) {
                const char *slash = strrchr(scratch, '/');

                name = slash ? slash + 1 : scratch;
        }
        r = proc_stat(pid, &start, &ppid);
        if (r < 0)
                return r;
        len = snprintf(line, sizeof(line), "%llu %s\n", start, name);
        if (len < 0 || (size_t)len >= sizeof(line))
                return -ENAMETOOLONG;
        if (asprintf(&dir, "%s/" LEFTOVERS_REC_DIR, root) < 0)
                return -ENOMEM;
        if (asprintf(&path, "%s/%d", dir, (int)pid) < 0) {
                r = -ENOMEM;
                path = NULL;
                goto out_free;
        }
        /* The last forget may remove the directory between mkdir and open: once more. */
        for (int tries = 0; tries < 3 && fd < 0; tries++) {
                if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
                        r = -errno;
                        goto out_free;
                }
                fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
                if (fd < 0 && errno != ENOENT) {
                        r = -errno;
                        goto out_free;
                }
        }
        if (fd < 0) {
                r = -ENOENT;
                goto out_free;
        }
        r = write(fd, line, (size_t)len) == len ? 0 : -EIO;
        close(fd);
        if (r < 0) {
                (void)unlink(path);
                goto out_free;
        }
        free(dir);
        *ret_path = path;
        return 0;
out_free:
        free(path);
        free(dir);
        return r;
}

void leftovers_forget(char *path)
{
        char *slash;

        if (!path)
                return;
        (void)unlink(path);
        slash = strrchr(path, '/');
        if (slash) {
                *slash = '\0';
                (void)rmdir(path);      /* the last one: ENOTEMPTY otherwise */
        }
        free(path);
}

struct sweep {
        char (*kept)[NAME_MAX_LEN];
        size_t n_kept;
        bool kept_overflow;
        int pidfds[MAX_KILLED];
        size_t n_pidfds;
        struct leftovers_report rep;
};

/* One record: kill its worker unless it is gone, reused or a running daemon's. */
static void take_record(struct sweep *s, int recfd, const char *entry)
{
        unsigned long long want, start;
        char buf[REC_MAX], name[NAME_MAX_LEN];
        pid_t pid, ppid;
        long v;
        char *end;
        ssize_t n;
        int fd;

        errno = 0;
        v = strtol(entry, &end, 10);
        if (errno || *end || v <= 1 || v > INT32_MAX)
                goto out_unlink;
        pid = (pid_t)v;
        fd = openat(recfd, entry, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                goto out_unlink;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                goto out_unlink;
        buf[n] = '\0';
        if (sscanf(buf, "%llu %63s", &want, name) != 2)
                goto out_unlink;
        if (proc_stat(pid, &start, &ppid) < 0 || start != want)
                goto out_unlink;        /* gone, or the pid is another process's now */
        if (is_fmud(ppid)) {
                /* A running daemon's worker: its directory and record stay. */
                s->rep.kept++;
                if (s->n_kept < MAX_KEPT)
                        memcpy(s->kept[s->n_kept++], name, sizeof(name));
                else
                        s->kept_overflow = true;
                return;
        }
        if (s->n_pidfds < MAX_KILLED) {
                int pfd = (int)syscall(SYS_pidfd_open, pid, 0);

                if (pfd >= 0)
                        s->pidfds[s->n_pidfds++] = pfd;
        }
        /* spawn.c made the worker its own group: whatever it started goes with it. */
        if (getpgid(pid) == pid)
                (void)kill(-pid, SIGKILL);
        (void)kill(pid, SIGKILL);
        s->rep.killed++;
out_unlink:
        (void)unlinkat(recfd, entry, 0);
}

static void take_records(struct sweep *s, int rootfd)
{
        int recfd = openat(rootfd, LEFTOVERS_REC_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
                                                      O_CLOEXEC);
        struct dirent *e;
        DIR *d;

        if (recfd < 0)
                return;
        d = fdopendir(recfd);
        if (!d) {
                close(recfd);
                return;
        }
        while ((e = readdir(d)))
                if (e->d_name[0] != '.')
                        take_record(s, recfd, e->d_name);
        closedir(d);
        (void)unlinkat(rootfd, LEFTOVERS_REC_DIR, AT_REMOVEDIR);        /* kept ones: ENOTEMPTY */
}

/* Wait for the killed workers to exit (a zombie has exited), bounded in all. */
static void wait_killed(struct sweep *s)
{
        struct timespec t0, now;

        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (size_t i = 0; i < s->n_pidfds; i++) {
                struct pollfd p = { .fd = s->pidfds[i], .events = POLLIN };
                long left;
                int r;

                clock_gettime(CLOCK_MONOTONIC, &now);
                left = LEFTOVERS_WAIT_MS - ((now.tv_sec - t0.tv_sec) * 1000 +
                                            (now.tv_nsec - t0.tv_nsec) / 1000000);
                do
                        r = poll(&p, 1, left > 0 ? (int)left : 0);
                while (r < 0 && errno == EINTR);
                if (r <= 0)
                        s->rep.stuck++;
                close(s->pidfds[i]);
        }
        s->n_pidfds = 0;
}

/* Remove everything in directory fd (which it closes), on device dev only. 0 or -errno. */
static int empty_dir(int fd, dev_t dev, int depth)
{
        struct dirent *e;
        int r = 0;
        DIR *d;

        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return -errno;
        }
        while ((e = readdir(d))) {
                struct stat st;
                int sub;

                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                        continue;
                if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        r = -errno;
                        continue;
                }
                if (!S_ISDIR(st.st_mode)) {
                        if (unlinkat(fd, e->d_name, 0) < 0)
                                r = -errno;
                        continue;
                }
                if (st.st_dev != dev || depth >= MAX_DEPTH) {
                        r = -EXDEV;     /* a mount, or too deep: left alone */
                        continue;
                }
                sub = openat(fd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub < 0 || empty_dir(sub, dev, depth + 1) < 0 ||
                    unlinkat(fd, e->d_name, AT_REMOVEDIR) < 0)
                        r = r ? r : -EIO;
        }
        closedir(d);
        return r;
}

static bool kept(const struct sweep *s, const char *name)
{
        for (size_t i = 0; i < s->n_kept; i++)
                if (!strcmp(s->kept[i], name))
                        return true;
        return false;
}

static void remove_scratch(struct sweep *s, int rootfd, dev_t dev)
{
        int dupfd = fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
        struct dirent *e;
        DIR *d;

        if (dupfd < 0)
                return;
        d = fdopendir(dupfd);
        if (!d) {
                close(dupfd);
                return;
        }
        while ((e = readdir(d))) {
                struct stat st;
                int fd;

                if (!scratch_name(e->d_name) || kept(s, e->d_name))
                        continue;
                if (fstatat(rootfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISDIR(st.st_mode) || st.st_dev != dev)
                        continue;
                fd = openat(rootfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd >= 0 && empty_dir(fd, dev, 0) == 0 &&
                    unlinkat(rootfd, e->d_name, AT_REMOVEDIR) == 0)
                        s->rep.removed++;
                else
                        s->rep.failed++;
        }
        closedir(d);
}

int leftovers_sweep(const char *root, struct leftovers_report *ret)
{
        struct sweep *s;
        struct stat st;
        int rootfd, r = 0;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->kept = calloc(MAX_KEPT, sizeof(*s->kept));
        if (!s->kept) {
                r = -ENOMEM;
                goto out_free;
        }
        rootfd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (rootfd < 0) {
                r = errno == ENOENT ? 0 : -errno;
                goto out_free;
        }
        if (fstat(rootfd, &st) < 0) {
                r = -errno;
                goto out_close;
        }
        take_records(s, rootfd);
        wait_killed(s);
        /* Too many kept workers to tell theirs apart: remove nothing. */
        if (!s->kept_overflow)
                remove_scratch(s, rootfd, st.st_dev);
        *ret = s->rep;
out_close:
        close(rootfd);
out_free:
        free(s->kept);
        free(s);
        return r;
}
