/*
 * cache_check: the seal of a cached tree, its check against the archive,
 * and the removal of a tree that changed (see cache_check.h).
 */
#include "cache_check.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NAME_MAX_CACHE (SHA256_HEX_LEN + 32)    /* ".<sha256>.stale.<pid>.<n>" */

static void seal_name(char *buf, size_t size, const char *sha)
{
        snprintf(buf, size, "%s.seal", sha);
}

static bool after(const struct timespec *a, const struct timespec *b)
{
        return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

/*
 * Until the clock file times come from is past t: a change time is the
 * coarse clock's tick (or later), so a node changed from now on is past
 * the seal, also within the tick the seal was made in. A tick at most
 * (1 to 10 ms), once per unpack; bounded, for a clock set back.
 */
static void tick_past(const struct timespec *t)
{
        struct timespec now;

        for (int i = 0; i < 100; i++) {
                if (clock_gettime(CLOCK_REALTIME_COARSE, &now) < 0 || after(&now, t))
                        return;
                (void) nanosleep(&(struct timespec){ .tv_nsec = 1000 * 1000 }, NULL);
        }
}

int cache_seal(int cache_fd, const char *sha)
{
        char name[NAME_MAX_CACHE];
        struct stat st;
        int fd, r = 0;

        seal_name(name, sizeof(name), sha);
        fd = openat(cache_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
        if (fd < 0)
                return errno == EEXIST ? 0 : -errno;
        if (fsync(fd) < 0 || fstat(fd, &st) < 0)
                r = -errno;
        close(fd);
        if (r == 0 && fsync(cache_fd) < 0)
                r = -errno;
        if (r == 0)
                tick_past(&st.st_ctim);
        return r;
}

/* 1: path is a node of this kind (and size, >= 0), unchanged since the seal; 0: not; -errno. */
static int node_ok(int root, const char *path, mode_t kind, int64_t size,
                   const struct timespec *seal)
{
        struct stat st;

        if (fstatat(root, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? 0 : -errno;
        if ((st.st_mode & S_IFMT) != kind || after(&st.st_ctim, seal))
                return 0;
        return size < 0 || (uint64_t)st.st_size == (uint64_t)size;
}

/* Every directory on the way to name (its first dirlen bytes), one by one. */
static int dirs_ok(int root, const char *name, size_t dirlen, const struct timespec *seal)
{
        char *path = strndup(name, dirlen);
        int r = 1;

        if (!path)
                return -ENOMEM;
        for (size_t i = 1; i <= dirlen && r == 1; i++) {
                if (i < dirlen && path[i] != '/')
                        continue;
                path[i] = '\0';
                r = node_ok(root, path, S_IFDIR, -1, seal);
                if (i < dirlen)
                        path[i] = '/';
        }
        free(path);
        return r;
}

static int entries_ok(int root, const struct fmu_archive *ar, const struct timespec *seal)
{
        const char *prev = "";
        size_t prev_len = 0;
        int r = 1;

        for (size_t i = 0; i < ar->n && r == 1; i++) {
                const struct ar_entry *e = &ar->v[i];
                const char *slash = strrchr(e->name, '/');
                size_t dirlen = slash ? (size_t)(slash - e->name) : 0;

                /* Names are sorted: the directories of the last entry are checked already. */
                if (dirlen && (dirlen != prev_len || strncmp(e->name, prev, dirlen) != 0))
                        r = dirs_ok(root, e->name, dirlen, seal);
                prev = e->name;
                prev_len = dirlen;
                if (r == 1)
                        r = e->kind == AR_DIR ? node_ok(root, e->name, S_IFDIR, -1, seal) :
                            node_ok(root, e->name, S_IFREG, (int64_t)e->size, seal);
        }
        return r;
}

int cache_intact(int cache_fd, const struct fmu_archive *ar)
{
        char name[NAME_MAX_CACHE];
        struct stat seal, st;
        int root, r;

        seal_name(name, sizeof(name), ar->sha256);
        if (fstatat(cache_fd, name, &seal, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISREG(seal.st_mode))
                return 0;
        root = openat(cache_fd, ar->sha256, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (root < 0)
                return errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? 0 : -errno;
        if (fstat(root, &st) < 0)
                r = -errno;
        else if (after(&st.st_ctim, &seal.st_ctim))
                r = 0;
        else
                r = entries_ok(root, ar, &seal.st_ctim);
        close(root);
        return r;
}

/* Remove name under parent, whatever it has become; directories at most so deep. */
static int remove_node(int parent, const char *name, unsigned depth)
{
        struct dirent *e;
        struct stat st;
        int fd, r = 0;
        DIR *d;

        if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISDIR(st.st_mode))
                return unlinkat(parent, name, 0) < 0 && errno != ENOENT ? -errno : 0;
        if (depth >= CACHE_DISCARD_DEPTH)
                return -ELOOP;
        fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        /* A sealed directory is read-only: unlinkat() needs write access to it. */
        (void) fchmod(fd, 0700);
        d = fdopendir(fd);
        if (!d) {
                r = -errno;
                close(fd);
                return r;
        }
        while ((e = readdir(d))) {
                int q;

                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                        continue;
                q = remove_node(dirfd(d), e->d_name, depth + 1);
                if (q < 0 && !r)
                        r = q;
        }
        closedir(d);
        if (unlinkat(parent, name, AT_REMOVEDIR) < 0 && errno != ENOENT && !r)
                r = -errno;
        return r;
}

int cache_discard(int cache_fd, const char *sha)
{
        char name[NAME_MAX_CACHE];

        seal_name(name, sizeof(name), sha);
        if (unlinkat(cache_fd, name, 0) < 0 && errno != ENOENT)
                return -errno;
        /* Out of the way at once, so that a new tree can take the name. */
        for (unsigned i = 0;; i++) {
                int err;

                snprintf(name, sizeof(name), ".%s.stale.%ld.%u", sha, (long)getpid(), i);
                if (renameat2(cache_fd, sha, cache_fd, name, RENAME_NOREPLACE) == 0)
                        break;
                err = errno;
                /* Without RENAME_NOREPLACE: a plain rename, to a name that is free. */
                if (err == EINVAL) {
                        if (faccessat(cache_fd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
                                err = EEXIST;
                        else if (renameat(cache_fd, sha, cache_fd, name) == 0)
                                break;
                        else
                                err = errno;
                }
                if (err == ENOENT)
                        return 0;
                if (err != EEXIST || i >= 100)
                        return -err;
        }
        return remove_node(cache_fd, name, 0);
}
