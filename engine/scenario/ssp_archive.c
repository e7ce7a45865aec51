/*
 * ssp_archive: the .ssp container, read through fmi/archive.h, which checks
 * every entry as it does an FMU's and never reads past a checked size.
 */
#include "engine/scenario/ssp_archive.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fmi/sha256.h"

struct ssp_archive {
        struct fmu_archive *ar;
};

int ssp_archive_open_fd(int fd, const char *path, const struct fmu_limits *lim,
                        struct diag_list *diags, struct ssp_archive **ret)
{
        struct fmu_limits l;
        struct ssp_archive *a;
        size_t errors = diag_errors(diags);
        int r;

        if (lim)
                l = *lim;
        else
                fmu_limits_default(&l);
        l.container = true;     /* an SSP has no modelDescription.xml of its own */
        a = calloc(1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        r = fd >= 0 ? fmu_archive_open_fd(fd, path, &l, diags, &a->ar)
                    : fmu_archive_open(path, &l, diags, &a->ar);
        if (r == -EINVAL || r == -EBADMSG || r == -ESTALE) {
                if (diag_errors(diags) == errors)
                        diag_add(diags, DIAG_ERROR, path, 0, NULL, "not a readable SSP archive");
                r = -EINVAL;
        }
        if (r < 0) {
                free(a);
                return r;
        }
        *ret = a;
        return 0;
}

int ssp_archive_open(const char *path, const struct fmu_limits *lim, struct diag_list *diags,
                     struct ssp_archive **ret)
{
        return ssp_archive_open_fd(-1, path, lim, diags, ret);
}

void ssp_archive_close(struct ssp_archive *a)
{
        if (!a)
                return;
        fmu_archive_close(a->ar);
        free(a);
}

bool ssp_archive_has(const struct ssp_archive *a, const char *name)
{
        return fmu_archive_has(a->ar, name);
}

int ssp_archive_read(const struct ssp_archive *a, const char *name, size_t max, char **ret_buf,
                     size_t *ret_len)
{
        void *buf;
        int r;

        r = fmu_archive_read(a->ar, name, max, &buf, ret_len);
        if (r == 0)
                *ret_buf = buf;
        return r;
}

/* mkdir -p for a path we own; 0755 like the FMU cache. */
static int make_dirs(const char *path)
{
        char *p = strdup(path);
        int r = 0;

        if (!p)
                return -ENOMEM;
        /* Each '/' after the first character ends a prefix to create, then the whole path. */
        for (char *s = p + 1; r == 0; s++) {
                char c = *s;

                if (c != '/' && c != '\0')
                        continue;
                *s = '\0';
                if (mkdir(p, 0755) < 0 && errno != EEXIST)
                        r = -errno;
                *s = c;
                if (!c)
                        break;
        }
        free(p);
        return r;
}

/* Write the entry into tmp (open on fd), then name it by its hash. */
static int store(const struct ssp_archive *a, const char *name, int fd, const char *tmp,
                 const char *dir, char **ret_path, char sha[65])
{
        char *final = NULL;
        int r;

        r = fmu_archive_copy(a->ar, name, fd);
        if (r == 0 && fsync(fd) < 0)
                r = -errno;
        if (r == 0)
                r = sha256_fd(fd, sha);
        if (r == 0 && fchmod(fd, 0444) < 0)
                r = -errno;
        if (r == 0 && asprintf(&final, "%s/%s.fmu", dir, sha) < 0) {
                final = NULL;
                r = -ENOMEM;
        }
        if (r == 0 && rename(tmp, final) < 0)
                r = -errno;
        if (r < 0) {
                free(final);
                return r;
        }
        *ret_path = final;
        return 0;
}

int ssp_archive_extract(const struct ssp_archive *a, const char *name, const char *cache_dir,
                        char **ret_path, int *ret_fd, char ret_sha256[65])
{
        char *dir = NULL, *tmp = NULL;
        int fd, r;

        if (!ssp_archive_has(a, name))
                return -ENOENT;
        if (asprintf(&dir, "%s/ssp", cache_dir) < 0)
                return -ENOMEM;
        r = make_dirs(dir);
        if (r < 0)
                goto out_free;
        if (asprintf(&tmp, "%s/.fmu-XXXXXX", dir) < 0) {
                tmp = NULL;
                r = -ENOMEM;
                goto out_free;
        }
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0) {
                r = -errno;
                goto out_free;
        }
        r = store(a, name, fd, tmp, dir, ret_path, ret_sha256);
        if (r < 0)
                (void) unlink(tmp);
        /* The copy is read through the descriptor it was written by, never by its name. */
        if (r == 0 && ret_fd && lseek(fd, 0, SEEK_SET) == 0) {
                *ret_fd = fd;
                fd = -1;
        } else if (r == 0 && ret_fd) {
                r = -errno;
                free(*ret_path);
                *ret_path = NULL;
        }
        if (fd >= 0)
                close(fd);

out_free:
        free(tmp);
        free(dir);
        return r;
}
