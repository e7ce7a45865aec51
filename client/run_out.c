/*
 * run_out: fmuctl run --out - through a daemon on this machine (run_out.h).
 * The daemon names the file it wrote; fmuctl reads it and deletes it, so
 * the name is not trusted (a daemon that is not fmud, or not this user's,
 * could name any file of the user): only the per-load file the daemon
 * makes (daemon/host_out.c, STATE/results/session-ID-XXXXXX/results.csv),
 * owned by this user, opened without following links, and removed through
 * the directories opened once, after checking it is still the file read.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run_out.h"

#define RESULTS_NAME    "results.csv"
#define RESULTS_DIR     "results"

/* "session-<id>-XXXXXX", as mkdtemp() completes it, for this session id. */
static bool load_dir_name(const char *name, size_t len, uint64_t session)
{
        char want[64];
        int n = snprintf(want, sizeof(want), "session-%" PRIu64 "-", session);

        if (n < 0 || (size_t)n + 6 != len || strncmp(name, want, (size_t)n))
                return false;
        for (size_t i = (size_t)n; i < len; i++) {
                char c = name[i];

                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
                        return false;
        }
        return true;
}

/* This user's, and nobody else may write to it. */
static bool mine(const struct stat *st)
{
        return st->st_uid == getuid() && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

static int copy_fd(int fd, FILE *to, char *err, size_t size)
{
        char buf[65536];
        ssize_t n;

        while ((n = read(fd, buf, sizeof(buf))) != 0) {
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int e = errno;

                        snprintf(err, size, "cannot read the results file: %s", strerror(e));
                        return -e;
                }
                if (fwrite(buf, 1, (size_t)n, to) != (size_t)n)
                        break;
        }
        if (fflush(to) != 0 || ferror(to)) {
                int e = errno ? errno : EIO;

                snprintf(err, size, "cannot copy the results to standard output: %s", strerror(e));
                return -e;
        }
        return 0;
}

int run_out_take(const char *path, uint64_t session, FILE *to, char *err, size_t size)
{
        char *top = NULL, *slash, *dir;
        struct stat st, sd, again;
        int tfd = -1, dfd = -1, fd = -1, r = -EPERM;

        /* .../results/session-ID-XXXXXX/results.csv: split it into its three names. */
        top = strdup(path);
        if (!top) {
                snprintf(err, size, "out of memory");
                return -ENOMEM;
        }
        slash = strrchr(top, '/');
        if (path[0] != '/' || !slash || strcmp(slash + 1, RESULTS_NAME))
                goto refused;
        *slash = '\0';
        dir = strrchr(top, '/');
        if (!dir || !load_dir_name(dir + 1, strlen(dir + 1), session))
                goto refused;
        *dir++ = '\0';
        slash = strrchr(top, '/');
        if (!slash || strcmp(slash + 1, RESULTS_DIR))
                goto refused;
        tfd = open(*top ? top : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (tfd < 0)
                goto failed;
        dfd = openat(tfd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0) {
                if (errno == ELOOP || errno == ENOTDIR)
                        goto refused;
                goto failed;
        }
        if (fstat(dfd, &sd) < 0)
                goto failed;
        if (!mine(&sd))
                goto refused;
        fd = openat(dfd, RESULTS_NAME, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
                if (errno == ELOOP)
                        goto refused;
                goto failed;
        }
        if (fstat(fd, &st) < 0)
                goto failed;
        if (!S_ISREG(st.st_mode) || st.st_uid != getuid() || st.st_nlink != 1)
                goto refused;
        r = copy_fd(fd, to, err, size);
        /* Removed only if the names still lead to what was read. */
        if (fstatat(dfd, RESULTS_NAME, &again, AT_SYMLINK_NOFOLLOW) == 0 &&
            again.st_dev == st.st_dev && again.st_ino == st.st_ino)
                (void)unlinkat(dfd, RESULTS_NAME, 0);
        if (fstatat(tfd, dir, &again, AT_SYMLINK_NOFOLLOW) == 0 &&
            again.st_dev == sd.st_dev && again.st_ino == sd.st_ino)
                (void)unlinkat(tfd, dir, AT_REMOVEDIR);
        goto out;
failed:
        r = -errno;
        snprintf(err, size, "cannot read the daemon's results file '%s': %s", path, strerror(errno));
        goto out;
refused:
        r = -EPERM;
        snprintf(err, size, "refusing the daemon's results file '%s': not the file this user's "
                 "daemon writes for session %" PRIu64 " (results/session-%" PRIu64
                 "-XXXXXX/" RESULTS_NAME ", this user's own); it is left as it is", path, session,
                 session);
out:
        if (fd >= 0)
                close(fd);
        if (dfd >= 0)
                close(dfd);
        if (tfd >= 0)
                close(tfd);
        free(top);
        return r;
}
