/* endpoint: the default control and PUB endpoints of a local fmud (proto/endpoint.h). */
#define _POSIX_C_SOURCE 200809L        /* lstat() */

#include "endpoint.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* snprintf's result n for a buffer of len bytes: 0, or -ENAMETOOLONG when it was cut. */
static int put(size_t len, int n)
{
        if (n < 0 || (size_t)n >= len)
                return -ENAMETOOLONG;
        return 0;
}

int fmud_runtime_dir(char *buf, size_t len)
{
        const char *rt = getenv("RUNTIME_DIRECTORY"), *xdg = getenv("XDG_RUNTIME_DIR");

        if (rt && rt[0] == '/') {
                /* systemd separates several RuntimeDirectory= entries with ':'. */
                size_t n = strcspn(rt, ":");

                return put(len, snprintf(buf, len, "%.*s", (int)n, rt));
        }
        if (geteuid() == 0)
                return put(len, snprintf(buf, len, "/run/fmud"));
        if (xdg && xdg[0] == '/')
                return put(len, snprintf(buf, len, "%s/fmud", xdg));
        return put(len, snprintf(buf, len, "/tmp/fmud-%u", (unsigned)geteuid()));
}

static int endpoint_in_rundir(char *buf, size_t len, const char *file)
{
        char dir[4096];
        int r;

        r = fmud_runtime_dir(dir, sizeof(dir));
        if (r < 0)
                return r;
        return put(len, snprintf(buf, len, "ipc://%s/%s", dir, file));
}

int fmud_default_endpoint(char *buf, size_t len)
{
        return endpoint_in_rundir(buf, len, "control.sock");
}

int fmud_default_pub_endpoint(char *buf, size_t len)
{
        return endpoint_in_rundir(buf, len, "events.sock");
}

int fmud_pub_endpoint_for(const char *ep, char *buf, size_t len)
{
        const char *path, *slash;

        if (strncmp(ep, "ipc://", 6) || ep[6] != '/')
                return -EINVAL;
        path = ep + 6;
        slash = strrchr(path, '/');
        if (!slash[1])
                return -EINVAL;
        if (!strcmp(slash + 1, "events.sock"))
                return -EEXIST;
        return put(len, snprintf(buf, len, "ipc://%.*s/events.sock", (int)(slash - path), path));
}

/*
 * The user's own socket at path (ipc's path, not "ipc://"): 1 when it is
 * there and to be trusted, its directory and itself this user's and the
 * directory closed to others' writes; 0 when neither is there; -1 when
 * something of somebody else's is (in sticky /tmp, another local user may
 * make /tmp/fmud-UID first and listen there for this user's requests).
 */
static int own_socket(const char *path)
{
        char dir[4096];
        const char *slash = strrchr(path, '/');
        struct stat st;

        if (!slash || (size_t)(slash - path) >= sizeof(dir))
                return -1;
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash - path] = '\0';
        if (lstat(dir, &st) < 0)
                return errno == ENOENT ? 0 : -1;
        if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
                return -1;
        if (lstat(path, &st) < 0)
                return errno == ENOENT ? 0 : -1;
        return st.st_uid == geteuid() ? 1 : -1;
}

int fmud_client_endpoint(const char *system_dir, char *buf, size_t len)
{
        char sys[4096];
        struct stat st;
        int r, own;

        r = fmud_default_endpoint(buf, len);
        if (r < 0 || geteuid() == 0)
                return r;
        own = own_socket(buf + 6);
        if (own > 0)
                return 0;
        r = put(sizeof(sys), snprintf(sys, sizeof(sys), "%s/control.sock", system_dir));
        if (r < 0)
                return r;
        /* The user's own directory is somebody else's: never that one, even as the last resort. */
        if (stat(sys, &st) == 0 || errno == EACCES || own < 0)
                return put(len, snprintf(buf, len, "ipc://%s", sys));
        return 0;
}
