/*
 * host_beneath: open a file a client names, once, beneath the allowed
 * directory it lies in, so that nothing swapped into the path between a
 * check and the use can lead anywhere else (a symbolic link put in place
 * of a directory of the path, a rename(RENAME_EXCHANGE) loop).
 *
 * DESIGN: the allowed directories are the daemon's own (configuration,
 * resolved at start) and are trusted; the rest of the path is the
 * client's and is not. The allowed directory is opened (O_PATH) and the
 * rest resolved beneath it by engine/scenario/beneath.h (openat2 with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS, or the
 * same walk by hand): no "..", no symbolic link of any kind on the way.
 * Which allowed directory a path is in is decided on the path's text
 * alone, after the path is bounded (PATH_MAX, BENEATH_MAX_DEPTH
 * components): no system call is made for a path the daemon refuses, and
 * a client spelling an allowed directory through a link is refused (fmuctl
 * sends canonical paths). The file is resolved beneath the allowed
 * directory's own descriptor, so a race there can only choose another
 * file beneath it. The caller then uses only the descriptor.
 *
 * The walk beneath the allowed directory is made with the client's
 * filesystem identity (open_as.h, chosen by hout_as()): a root daemon
 * opens only what the client itself could, and a file that is not there
 * and one the client may not reach get the same answer.
 */
#include "daemon/host_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "engine/scenario/beneath.h"

int hpath_open(const struct open_as *as, char *const *allowed, size_t n, const char *path,
               int flags, mode_t mode, int *ret_fd, char *msg, size_t size)
{
        int err;

        return hpath_open_in(as, allowed, n, "allowed", path, flags, mode, ret_fd, &err, msg,
                             size);
}

int hpath_open_in(const struct open_as *as, char *const *allowed, size_t n, const char *what,
                  const char *path, int flags, mode_t mode, int *ret_fd, int *ret_err, char *msg,
                  size_t size)
{
        const char *rel = NULL;
        int i, dfd, fd;

        *ret_err = EACCES;

        if (path[0] != '/') {
                snprintf(msg, size, "'%s' is not an absolute path", path);
                return PROTO_E_DENIED;
        }
        i = beneath_split((const char *const *)allowed, n, path, &rel);
        if (i == -ENAMETOOLONG) {
                snprintf(msg, size, "'%.64s...' is too long (at most %d components and %d bytes)",
                         path, BENEATH_MAX_DEPTH, PATH_MAX - 1);
                return PROTO_E_INVALID;
        }
        if (i < 0) {
                snprintf(msg, size, "'%s' is not below an %s directory (a path is matched by "
                         "its text: name the file by its canonical path, not through a link)",
                         path, what);
                return PROTO_E_DENIED;
        }
        dfd = open(allowed[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0) {
                *ret_err = errno;
                snprintf(msg, size, "%s directory '%s': %s", what, allowed[i], strerror(errno));
                return PROTO_E_INTERNAL;
        }
        /* openat2 refuses O_PATH with any flag but O_DIRECTORY, O_NOFOLLOW, O_CLOEXEC. */
        fd = beneath_openat_as(as, dfd, rel, flags & O_PATH ? flags : flags | O_NOCTTY, mode);
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
                snprintf(msg, size, "'%s' leaves its %s directory (no '..' component is "
                         "accepted)", path, what);
                return PROTO_E_DENIED;
        case -ENOENT:
        case -EACCES:
                /* The same answer for a file that is not there and one that may not be read. */
                snprintf(msg, size, "cannot open '%s': not there, or this client may not "
                         "reach it", path);
                return PROTO_E_DENIED;
        default:
                snprintf(msg, size, "cannot open '%s': %s", path, strerror(-fd));
                return PROTO_E_INVALID;
        }
}
