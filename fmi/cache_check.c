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
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NAME_MAX_CACHE (SHA256_HEX_LEN + 32)    /* ".<sha256>.stale.<pid>.<n>" */

static void seal_name(char *buf, size_t size, const char *sha)
{
        snprintf(buf, size, "%s.seal", sha);
}

/* a is at or after b: a change since a seal made at b (cache_check.h). */
static bool not_before(const struct timespec *a, const struct timespec *b)
{
        return a->tv_sec > b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec >= b->tv_nsec);
}

int cache_seal(int cache_fd, const char *sha, int root_fd)
{
        char name[NAME_MAX_CACHE];
        struct stat seal, root;

        seal_name(name, sizeof(name), sha);
        if (unlinkat(cache_fd, name, 0) < 0 && errno != ENOENT)
                return -errno;
        if (fstat(root_fd, &root) < 0)
                return -errno;
        /* Bounded: a clock set back would otherwise hold the load. */
        for (int i = 0; i < 3000; i++) {
                int fd = openat(cache_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
                                O_CLOEXEC, 0444), r = 0;

                if (fd < 0)
                        return -errno;
                if (fstat(fd, &seal) < 0 || fsync(fd) < 0)
                        r = -errno;
                close(fd);
                if (r == 0 && !not_before(&root.st_ctim, &seal.st_ctim))
                        return fsync(cache_fd) < 0 ? -errno : 0;
                if (unlinkat(cache_fd, name, 0) < 0 && r == 0)
                        r = -errno;
                if (r < 0)
                        return r;
                (void) nanosleep(&(struct timespec){ .tv_nsec = 1000 * 1000 }, NULL);
        }
        return -ETIME;
}

int cache_hold(int cache_fd, const char *sha)
{
        int fd = openat(cache_fd, sha, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

        if (fd < 0)
                return errno == ENOTDIR || errno == ELOOP ? -ENOENT : -errno;
        if (flock(fd, LOCK_SH) < 0) {
                int err = errno;

                close(fd);
                return -err;
        }
        return fd;
}

/* 1: path is a node of this kind (and size, >= 0), unchanged since the seal; 0: not; -errno. */
static int node_ok(int root, const char *path, mode_t kind, int64_t size,
                   const struct timespec *seal)
{
        struct stat st;

        if (fstatat(root, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? 0 : -errno;
        if ((st.st_mode & S_IFMT) != kind || not_before(&st.st_ctim, seal))
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

int cache_intact(int cache_fd, const struct fmu_archive *ar, int root)
{
        char name[NAME_MAX_CACHE];
        struct stat seal, st;

        seal_name(name, sizeof(name), ar->sha256);
        if (fstatat(cache_fd, name, &seal, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISREG(seal.st_mode))
                return 0;
        if (fstat(root, &st) < 0)
                return -errno;
        if (not_before(&st.st_ctim, &seal.st_ctim))
                return 0;
        return entries_ok(root, ar, &seal.st_ctim);
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

/* Remove the hidden tree name, unless a process still holds it (cache_hold()). */
static void remove_if_free(int cache_fd, const char *name)
{
        int fd = openat(cache_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

        if (fd < 0)
                return;
        /* What cannot be removed stays behind, hidden: the load goes on. */
        if (flock(fd, LOCK_EX | LOCK_NB) == 0)
                (void) remove_node(cache_fd, name, 0);
        close(fd);
}

/* Leftovers of earlier discards of sha that are free now. */
static void sweep(int cache_fd, const char *sha)
{
        char prefix[NAME_MAX_CACHE];
        int fd = dup(cache_fd);
        struct dirent *e;
        size_t n;
        DIR *d;

        snprintf(prefix, sizeof(prefix), ".%s.stale.", sha);
        n = strlen(prefix);
        d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d) {
                if (fd >= 0)
                        close(fd);
                return;
        }
        while ((e = readdir(d)))
                if (strncmp(e->d_name, prefix, n) == 0)
                        remove_if_free(cache_fd, e->d_name);
        closedir(d);
}

int cache_discard(int cache_fd, const char *sha)
{
        char name[NAME_MAX_CACHE];

        seal_name(name, sizeof(name), sha);
        if (unlinkat(cache_fd, name, 0) < 0 && errno != ENOENT)
                return -errno;
        sweep(cache_fd, sha);
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
        remove_if_free(cache_fd, name);
        return 0;
}
