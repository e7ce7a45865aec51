/*
 * cache_seal: the seal of an unpacked copy, and setting a changed copy
 * aside (see cache_seal.h).
 */
#include "cache_seal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SEAL_SUFFIX     ".seal"
#define STALE_DEPTH_MAX 64      /* directories deeper than this in a changed copy are left */

static int64_t ctime_ns(const struct stat *st)
{
        return (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}

/* Stat path under root: must be a directory, or a regular file of size bytes (size >= 0). */
static int entry_ok(int root_fd, const char *path, int64_t size, int64_t *max)
{
        struct stat st;

        if (fstatat(root_fd, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT || errno == ENOTDIR ? 1 : -errno;
        if (size < 0 ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode) || st.st_size != size)
                return 1;
        if (ctime_ns(&st) > *max)
                *max = ctime_ns(&st);
        return 0;
}

/*
 * The latest ctime of the copy's root, entries and their parents into
 * *ret_ns: 0, 1 when an entry is missing or not what the archive has, or
 * -errno.
 */
static int tree_ctime(int root_fd, const struct fmu_archive *ar, int64_t *ret_ns)
{
        struct stat st;
        int r = 0;

        if (fstat(root_fd, &st) < 0)
                return -errno;
        *ret_ns = ctime_ns(&st);
        for (size_t i = 0; i < ar->n && r == 0; i++) {
                const struct ar_entry *e = &ar->v[i];
                char *path = strdup(e->name);

                if (!path)
                        return -ENOMEM;
                for (char *s = strchr(path, '/'); s && r == 0; s = strchr(s + 1, '/')) {
                        *s = '\0';
                        r = entry_ok(root_fd, path, -1, ret_ns);
                        *s = '/';
                }
                if (r == 0)
                        r = entry_ok(root_fd, path, e->kind == AR_DIR ? -1 : (int64_t)e->size,
                                     ret_ns);
                free(path);
        }
        return r;
}

static int copy_ctime(int cache_fd, const struct fmu_archive *ar, int64_t *ret_ns)
{
        int fd = openat(cache_fd, ar->sha256, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int r;

        if (fd < 0)
                return -errno;
        r = tree_ctime(fd, ar, ret_ns);
        close(fd);
        return r;
}

int cache_seal_write(int cache_fd, const struct fmu_archive *ar)
{
        char name[SHA256_HEX_LEN + 16], tmp[SHA256_HEX_LEN + 48], text[32];
        int64_t ns;
        int fd, r, len;

        r = copy_ctime(cache_fd, ar, &ns);
        if (r != 0)
                return r < 0 ? r : -ESTALE;
        snprintf(name, sizeof(name), "%s" SEAL_SUFFIX, ar->sha256);
        snprintf(tmp, sizeof(tmp), ".%s.%ld.%d", name, (long)getpid(), rand());
        len = snprintf(text, sizeof(text), "%" PRId64 "\n", ns);
        fd = openat(cache_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        r = write(fd, text, (size_t)len) == len ? 0 : -EIO;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        /* Another process's seal of the same copy says the same: replacing it is fine. */
        if (r == 0 && renameat(cache_fd, tmp, cache_fd, name) < 0)
                r = -errno;
        if (r < 0)
                (void) unlinkat(cache_fd, tmp, 0);
        return r;
}

/* The recorded ctime: 0, 1 when there is no seal (or it does not read as one), -errno. */
static int seal_read(int cache_fd, const char *sha256, int64_t *ret_ns)
{
        char name[SHA256_HEX_LEN + 16], text[32] = { 0 }, *end;
        ssize_t n;
        int fd;

        snprintf(name, sizeof(name), "%s" SEAL_SUFFIX, sha256);
        fd = openat(cache_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 1 : -errno;
        n = read(fd, text, sizeof(text) - 1);
        close(fd);
        if (n <= 0)
                return 1;
        errno = 0;
        *ret_ns = strtoll(text, &end, 10);
        return errno || end == text || *end != '\n' ? 1 : 0;
}

int cache_seal_check(int cache_fd, const struct fmu_archive *ar)
{
        int64_t sealed, now;
        int r = copy_ctime(cache_fd, ar, &now);

        if (r != 0)
                return r;
        r = seal_read(cache_fd, ar->sha256, &sealed);
        if (r < 0)
                return r;
        if (r == 1)
                return cache_seal_write(cache_fd, ar) == 0 ? 0 : 1;
        return now > sealed ? 1 : 0;
}

/* Remove name under parent_fd and everything below it, depth levels down at most. */
static int remove_all(int parent_fd, const char *name, int depth)
{
        struct stat st;
        DIR *d;
        int fd, r = 0;

        if (fstatat(parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISDIR(st.st_mode))
                return unlinkat(parent_fd, name, 0) < 0 ? -errno : 0;
        if (depth >= STALE_DEPTH_MAX)
                return -ELOOP;
        fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        /* A sealed directory is read-only: its entries can be removed once it is not. */
        (void) fchmod(fd, 0700);
        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return -errno;
        }
        for (struct dirent *e; (e = readdir(d));) {
                int q;

                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                        continue;
                q = remove_all(dirfd(d), e->d_name, depth + 1);
                if (q < 0 && r == 0)
                        r = q;
        }
        closedir(d);
        if (unlinkat(parent_fd, name, AT_REMOVEDIR) < 0 && r == 0)
                r = -errno;
        return r;
}

int cache_set_aside(int cache_fd, const char *sha256)
{
        char stale[SHA256_HEX_LEN + 48];
        int r;

        snprintf(stale, sizeof(stale), ".%s.stale.%ld.%ld", sha256, (long)getpid(),
                 (long)time(NULL));
        if (renameat(cache_fd, sha256, cache_fd, stale) < 0)
                return errno == ENOENT ? 0 : -errno;
        r = remove_all(cache_fd, stale, 0);
        return r == -ELOOP ? 0 : r;     /* too deep: left, under a name never used */
}
