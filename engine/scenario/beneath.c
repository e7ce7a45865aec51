/*
 * beneath: open a file beneath a directory's descriptor (beneath.h).
 */
#include "engine/scenario/beneath.h"
#include "engine/scenario/open_as.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BENEATH_RESOLVE (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

/* Whether real is dir or below it, with a '/' boundary; *ret_rel: what follows. */
static bool under(const char *dir, const char *real, const char **ret_rel)
{
        size_t len = strlen(dir);

        if (len == 1 && dir[0] == '/') {
                *ret_rel = real + 1;
                return true;
        }
        if (strncmp(real, dir, len) || (real[len] != '/' && real[len] != '\0'))
                return false;
        *ret_rel = real[len] ? real + len + 1 : real + len;
        return true;
}

int beneath_bounded(const char *path)
{
        size_t depth = 0, len = strnlen(path, PATH_MAX);

        if (len >= PATH_MAX)
                return -ENAMETOOLONG;
        for (size_t i = 0; i < len; i++)
                if (path[i] == '/' && i + 1 < len && path[i + 1] != '/')
                        depth++;
        return depth > BENEATH_MAX_DEPTH ? -ENAMETOOLONG : 0;
}

int beneath_split(const char *const *allowed, size_t n, const char *path, const char **ret_rel)
{
        int r = beneath_bounded(path);

        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                if (under(allowed[i], path, ret_rel))
                        return (int)i;
        return -EPERM;
}

/* Whether rel has a ".." component (refused by text, whatever the walk would make of it). */
static bool has_dotdot(const char *rel)
{
        for (const char *c = rel; c; c = strchr(c, '/')) {
                while (*c == '/')
                        c++;
                if (c[0] == '.' && c[1] == '.' && (c[2] == '/' || c[2] == '\0'))
                        return true;
                if (!*c)
                        break;
        }
        return false;
}

/* The walk openat2 would make, by hand: every component, no link followed. */
static int walk(int dfd, const char *rel, int flags, mode_t mode)
{
        char *copy = strdup(rel), *save = NULL, *c, *next;
        int fd = dfd, r;

        if (!copy)
                return -ENOMEM;
        c = strtok_r(copy, "/", &save);
        while (c) {
                int nfd;

                next = strtok_r(NULL, "/", &save);
                if (!strcmp(c, "..") || !strcmp(c, ".")) {
                        r = -EXDEV;
                        goto out;
                }
                nfd = next ? openat(fd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                           : openat(fd, c, flags | O_NOFOLLOW, mode);
                if (nfd < 0) {
                        r = -errno;
                        goto out;
                }
                if (fd != dfd)
                        close(fd);
                fd = nfd;
                c = next;
        }
        free(copy);
        return fd == dfd ? -EISDIR : fd;
out:
        if (fd != dfd)
                close(fd);
        free(copy);
        return r;
}

int beneath_openat(int dfd, const char *rel, int flags, mode_t mode)
{
        struct open_how how = { .flags = (uint64_t)(flags | O_CLOEXEC),
                                .mode = flags & O_CREAT ? mode : 0, .resolve = BENEATH_RESOLVE };
        long fd;

        if (!rel[0])
                return -EISDIR;
        if (rel[0] == '/' || has_dotdot(rel))
                return -EXDEV;
        fd = syscall(SYS_openat2, dfd, rel, &how, sizeof(how));
        if (fd >= 0)
                return (int)fd;
        /* No openat2, or a seccomp profile that refuses what it does not know. */
        if (errno != ENOSYS && errno != EPERM)
                return -errno;
        return walk(dfd, rel, flags | O_CLOEXEC, mode);
}

int beneath_open(const char *const *allowed, size_t n, const char *path, int flags, mode_t mode)
{
        const char *rel = NULL;
        int i, dfd, fd;

        if (path[0] != '/')
                return -EPERM;
        i = beneath_split(allowed, n, path, &rel);
        if (i < 0)
                return i;
        dfd = open(allowed[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return -errno;
        if (rel[0]) {
                fd = beneath_openat(dfd, rel, flags, mode);
        } else {
                fd = openat(dfd, ".", flags | O_CLOEXEC, mode);
                if (fd < 0)
                        fd = -errno;
        }
        close(dfd);
        return fd;
}

int beneath_openat_as(const struct open_as *as, int dfd, const char *rel, int flags, mode_t mode)
{
        struct open_as_saved saved;
        int fd = open_as_enter(as, &saved);

        if (fd < 0)
                return fd;
        fd = beneath_openat(dfd, rel, flags, mode);
        open_as_leave(&saved);
        return fd;
}

int beneath_open_as(const struct open_as *as, const char *const *allowed, size_t n,
                    const char *path, int flags, mode_t mode)
{
        struct open_as_saved saved;
        int fd;

        /* Bounded and matched by text before any system call, as the daemon's own. */
        if (path[0] != '/')
                return -EPERM;
        fd = beneath_split(allowed, n, path, &(const char *){ NULL });
        if (fd < 0)
                return fd;
        fd = open_as_enter(as, &saved);
        if (fd < 0)
                return fd;
        fd = beneath_open(allowed, n, path, flags, mode);
        open_as_leave(&saved);
        return fd;
}
