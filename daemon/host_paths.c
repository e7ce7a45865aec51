/*
 * host_paths: which files a client may name. A scenario or an input file
 * must resolve (realpath()) to below an allowed directory (also
 * resolved), with a '/' boundary; a results file's directory so to below
 * an output directory, and the file must not be a symbolic link or
 * anything but a regular file, checked again when it is opened
 * (host_out.c).
 */
#include "daemon/host_int.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/scenario/beneath.h"

static bool below(char *const *allowed, size_t n, const char *real)
{
        for (size_t i = 0; i < n; i++) {
                size_t len = strlen(allowed[i]);

                if (len == 1 && allowed[i][0] == '/')
                        return true;
                if (!strncmp(real, allowed[i], len) && (real[len] == '/' || real[len] == '\0'))
                        return true;
        }
        return false;
}

int hpath_check_in(char *const *allowed, size_t n, const char *path, char **ret_real,
                   char *msg, size_t size)
{
        char *real;

        if (path[0] != '/') {
                snprintf(msg, size, "'%s' is not an absolute path", path);
                return PROTO_E_DENIED;
        }
        real = realpath(path, NULL);
        if (!real) {
                snprintf(msg, size, "cannot read '%s': %s", path, strerror(errno));
                /* Say nothing more about paths outside: the same answer for both. */
                return errno == ENOENT || errno == EACCES ? PROTO_E_DENIED : PROTO_E_INVALID;
        }
        if (!below(allowed, n, real)) {
                snprintf(msg, size, "'%s' is not below an allowed directory", path);
                free(real);
                return PROTO_E_DENIED;
        }
        *ret_real = real;
        return -1;
}

int hpath_check_out(char *const *output, size_t n, const char *out, char *msg, size_t size)
{
        char *dir = strdup(out), *base = strdup(out), *real = NULL;
        const char *b;
        struct stat st;
        int code = -1;

        if (!dir || !base) {
                snprintf(msg, size, "out of memory");
                code = PROTO_E_INTERNAL;
                goto out;
        }
        b = basename(base);
        if (beneath_bounded(out) < 0) {
                snprintf(msg, size, "'%.64s...' is too long (at most %d components and %d bytes)",
                         out, BENEATH_MAX_DEPTH, PATH_MAX - 1);
                code = PROTO_E_INVALID;
                goto out;
        }
        if (out[0] != '/') {
                snprintf(msg, size, "'%s' is not an absolute path", out);
                code = PROTO_E_DENIED;
                goto out;
        }
        if (!strcmp(b, ".") || !strcmp(b, "..") || !strcmp(b, "/") || out[strlen(out) - 1] == '/') {
                snprintf(msg, size, "'%s' does not name a file", out);
                code = PROTO_E_INVALID;
                goto out;
        }
        /* Writing is not reading: only the output directories count, never the allowed ones. */
        real = realpath(dirname(dir), NULL);
        if (!real || !below(output, n, real)) {
                snprintf(msg, size, "'%s' is not below an output directory (results are "
                         "written only there: [paths] output_dir)", out);
                code = PROTO_E_DENIED;
                goto out;
        }
        if (lstat(out, &st) == 0 && S_ISLNK(st.st_mode)) {
                snprintf(msg, size, "'%s' is a symbolic link", out);
                code = PROTO_E_DENIED;
        } else if (lstat(out, &st) == 0 && !S_ISREG(st.st_mode)) {
                snprintf(msg, size, "'%s' is not a regular file", out);
                code = PROTO_E_INVALID;
        }
out:
        free(real);
        free(dir);
        free(base);
        return code;
}
