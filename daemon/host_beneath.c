/*
 * host_beneath: open a file a client names, once, beneath the allowed
 * directory it lies in, so that nothing swapped into the path between a
 * check and the use can lead anywhere else (a symbolic link put in place
 * of a directory of the path, a rename(RENAME_EXCHANGE) loop).
 *
 * DESIGN: the allowed directories are the daemon's own (configuration,
 * resolved at start) and are trusted; the rest of the path is the
 * client's and is not. The allowed directory is opened (O_PATH) and the
 * rest resolved beneath it by the kernel with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS): no "..", no symbolic
 * link of any kind on the way, the last component included. Where the
 * kernel has no openat2 (before 5.6), the same walk is made component by
 * component with O_NOFOLLOW, each directory opened from the one before.
 * Which allowed directory a path is in is decided on the path's text, or,
 * where the client's spelling of that directory differs (it holds a
 * link), on realpath() of a prefix; either way the file is resolved
 * beneath the allowed directory's own descriptor, so a race there can
 * only choose another file beneath it. The caller then uses only the
 * descriptor.
 */
#include "daemon/host_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
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

/*
 * The allowed directory path is in and the rest of it: by text, else by
 * the realpath() of one of its prefixes. -1 when none.
 */
static int split(char *const *allowed, size_t n, const char *path, const char **ret_rel)
{
        char prefix[PATH_MAX];

        for (size_t i = 0; i < n; i++)
                if (under(allowed[i], path, ret_rel))
                        return (int)i;
        for (const char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
                size_t len = (size_t)(s - path);
                char *real;

                if (len >= sizeof(prefix))
                        break;
                memcpy(prefix, path, len);
                prefix[len] = '\0';
                real = realpath(prefix, NULL);
                for (size_t i = 0; real && i < n; i++)
                        if (!strcmp(real, allowed[i])) {
                                free(real);
                                *ret_rel = s + 1;
                                return (int)i;
                        }
                free(real);
        }
        return -1;
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

static int open_beneath(int dfd, const char *rel, int flags, mode_t mode)
{
        struct open_how how = { .flags = (uint64_t)flags, .mode = flags & O_CREAT ? mode : 0,
                                .resolve = BENEATH_RESOLVE };
        long fd;

        if (!rel[0])
                return -EISDIR;
        fd = syscall(SYS_openat2, dfd, rel, &how, sizeof(how));
        if (fd >= 0)
                return (int)fd;
        /* No openat2, or a seccomp profile that refuses what it does not know. */
        if (errno != ENOSYS && errno != EPERM)
                return -errno;
        return walk(dfd, rel, flags, mode);
}

int hpath_open(char *const *allowed, size_t n, const char *path, int flags, mode_t mode,
               int *ret_fd, char *msg, size_t size)
{
        int err;

        return hpath_open_in(allowed, n, "allowed", path, flags, mode, ret_fd, &err, msg, size);
}

int hpath_open_in(char *const *allowed, size_t n, const char *what, const char *path, int flags,
                  mode_t mode, int *ret_fd, int *ret_err, char *msg, size_t size)
{
        const char *rel = NULL;
        int i, dfd, fd;

        *ret_err = EACCES;

        if (path[0] != '/') {
                snprintf(msg, size, "'%s' is not an absolute path", path);
                return PROTO_E_DENIED;
        }
        i = split(allowed, n, path, &rel);
        if (i < 0) {
                snprintf(msg, size, "'%s' is not below an %s directory", path, what);
                return PROTO_E_DENIED;
        }
        dfd = open(allowed[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0) {
                *ret_err = errno;
                snprintf(msg, size, "%s directory '%s': %s", what, allowed[i], strerror(errno));
                return PROTO_E_INTERNAL;
        }
        fd = open_beneath(dfd, rel, flags | O_CLOEXEC | O_NOCTTY, mode);
        close(dfd);
        if (fd >= 0) {
                *ret_fd = fd;
                return -1;
        }
        *ret_err = -fd;
        switch (fd) {
        case -ELOOP:
                snprintf(msg, size, "'%s': a symbolic link on the way (links are not followed "
                         "below an %s directory)", path, what);
                return PROTO_E_DENIED;
        case -EXDEV:
                snprintf(msg, size, "'%s' leaves its %s directory", path, what);
                return PROTO_E_DENIED;
        case -ENOENT:
        case -EACCES:
                /* The same answer for a file that is not there and one that may not be read. */
                snprintf(msg, size, "cannot open '%s': %s", path, strerror(-fd));
                return PROTO_E_DENIED;
        default:
                snprintf(msg, size, "cannot open '%s': %s", path, strerror(-fd));
                return PROTO_E_INVALID;
        }
}
