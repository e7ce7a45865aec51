/* Test helpers: temporary directory trees. */
#include "tmpdir.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *tmpdir_new(const char *prefix)
{
        const char *base = getenv("TMPDIR");
        char *path;

        if (asprintf(&path, "%s/%s-XXXXXX", base && *base ? base : "/tmp", prefix) < 0)
                return NULL;
        if (!mkdtemp(path)) {
                free(path);
                return NULL;
        }
        return path;
}

static int make_writable(const char *path, const struct stat *st, int type, struct FTW *f)
{
        (void)f;
        if (type == FTW_D || type == FTW_DNR)
                (void)chmod(path, (st->st_mode & 07777) | S_IRWXU);
        return 0;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
        (void)st; (void)type; (void)f;
        (void)remove(path);
        return 0;
}

void tmpdir_free(char *path)
{
        if (!path)
                return;
        (void)nftw(path, make_writable, 16, FTW_PHYS);
        (void)nftw(path, remove_one, 16, FTW_PHYS | FTW_DEPTH);
        free(path);
}

int tmpdir_write(const char *dir, const char *name, const void *data, size_t len)
{
        char *path, *slash;
        int fd, r = 0;

        if (asprintf(&path, "%s/%s", dir, name) < 0)
                return -ENOMEM;
        for (slash = strchr(path + strlen(dir) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
                *slash = '\0';
                (void)mkdir(path, 0755);
                *slash = '/';
        }
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, data, len) != (ssize_t)len)
                r = -errno;
        if (fd >= 0)
                close(fd);
        free(path);
        return r;
}
