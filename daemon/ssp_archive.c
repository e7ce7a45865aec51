/*
 * ssp_archive: the .ssp container, checked by fmi/archive.h and read with
 * libzip from one open descriptor.
 */
#include "ssp_archive.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zip.h>

#include "fmi/sha256.h"

#define CHUNK (64 * 1024)

struct ssp_archive {
        int fd;
        zip_t *zip;
        struct stat st;         /* when opened: a rewritten file is noticed */
        struct fmu_limits lim;
};

/* Copy one diagnostic of the check, naming the archive by its path. */
static void pass_diag(struct diag_list *to, const struct diag *d, const char *proc,
                      const char *path)
{
        const char *file = d->file && strcmp(d->file, proc) == 0 ? path : d->file;

        diag_add(to, d->severity, file, d->line, d->subject, "%s", d->message);
}

/*
 * The archive passes fmi/archive.h's entry checks as a container (no
 * modelDescription.xml of its own), through the descriptor already open,
 * so the file checked is the file read.
 */
static int check(struct ssp_archive *a, const char *path, struct diag_list *diags)
{
        struct fmu_archive *ar = NULL;
        struct fmu_limits lim = a->lim;
        struct diag_list tmp;
        char proc[64];
        size_t errors;
        int r;

        lim.container = true;
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", a->fd);
        diag_list_init(&tmp, 0);
        r = fmu_archive_open(proc, &lim, &tmp, &ar);
        fmu_archive_close(ar);
        for (size_t i = 0; i < tmp.n; i++)
                pass_diag(diags, &tmp.v[i], proc, path);
        errors = diag_errors(&tmp);
        diag_list_fini(&tmp);
        if (r == -EINVAL || r == -EBADMSG || r == -ESTALE) {
                if (!errors)
                        diag_add(diags, DIAG_ERROR, path, 0, NULL, "not a readable SSP archive");
                return -EINVAL;
        }
        return r;
}

static int open_zip(struct ssp_archive *a)
{
        int zerr = 0, fd;

        fd = dup(a->fd);
        if (fd < 0)
                return -errno;
        a->zip = zip_fdopen(fd, ZIP_RDONLY, &zerr);
        if (!a->zip) {
                close(fd);
                return zerr == ZIP_ER_MEMORY ? -ENOMEM : 0;    /* the check reports it */
        }
        return 0;
}

int ssp_archive_open(const char *path, const struct fmu_limits *lim, struct diag_list *diags,
                     struct ssp_archive **ret)
{
        struct ssp_archive *a;
        int r;

        a = calloc(1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        if (lim)
                a->lim = *lim;
        else
                fmu_limits_default(&a->lim);
        /* O_NONBLOCK: a FIFO planted under the name must not hang us in open(). */
        a->fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (a->fd < 0) {
                r = -errno;
                goto out_free;
        }
        if (fstat(a->fd, &a->st) < 0) {
                r = -errno;
                goto out_free;
        }
        if (S_ISDIR(a->st.st_mode)) {
                r = -EISDIR;
                goto out_free;
        }
        r = S_ISREG(a->st.st_mode) ? open_zip(a) : 0;
        if (r < 0)
                goto out_free;
        r = check(a, path, diags);
        if (r < 0)
                goto out_free;
        if (!a->zip) {
                diag_add(diags, DIAG_ERROR, path, 0, NULL, "not a zip archive");
                r = -EINVAL;
                goto out_free;
        }
        *ret = a;
        return 0;

out_free:
        ssp_archive_close(a);
        return r;
}

void ssp_archive_close(struct ssp_archive *a)
{
        if (!a)
                return;
        if (a->zip)
                zip_discard(a->zip);
        if (a->fd >= 0)
                close(a->fd);
        free(a);
}

static bool unchanged(const struct ssp_archive *a)
{
        struct stat st;

        return fstat(a->fd, &st) == 0 && st.st_ino == a->st.st_ino &&
               st.st_dev == a->st.st_dev && st.st_size == a->st.st_size &&
               st.st_mtim.tv_sec == a->st.st_mtim.tv_sec &&
               st.st_mtim.tv_nsec == a->st.st_mtim.tv_nsec &&
               st.st_ctim.tv_sec == a->st.st_ctim.tv_sec &&
               st.st_ctim.tv_nsec == a->st.st_ctim.tv_nsec;
}

static int find(const struct ssp_archive *a, const char *name, zip_stat_t *ret)
{
        zip_int64_t i;

        if (!*name || name[strlen(name) - 1] == '/')
                return -ENOENT;
        i = zip_name_locate(a->zip, name, ZIP_FL_ENC_RAW);
        if (i < 0)
                return -ENOENT;
        zip_stat_init(ret);
        if (zip_stat_index(a->zip, (zip_uint64_t)i, 0, ret) < 0 || !(ret->valid & ZIP_STAT_SIZE))
                return -EBADMSG;
        return 0;
}

bool ssp_archive_has(const struct ssp_archive *a, const char *name)
{
        zip_stat_t st;

        return find(a, name, &st) == 0;
}

typedef int sink_fn(void *ctx, const void *buf, size_t len);

/* Decompress exactly the declared size into sink; the data must end there. */
static int stream(const struct ssp_archive *a, const zip_stat_t *st, sink_fn *sink, void *ctx)
{
        uint64_t left = st->size;
        zip_file_t *zf;
        zip_int64_t n;
        char *buf;
        int r = 0;

        if (!unchanged(a))
                return -ESTALE;
        buf = malloc(CHUNK);
        if (!buf)
                return -ENOMEM;
        zf = zip_fopen_index(a->zip, st->index, 0);
        if (!zf) {
                r = -EBADMSG;
                goto out_free;
        }
        while (left > 0) {
                n = zip_fread(zf, buf, left < CHUNK ? left : CHUNK);
                if (n <= 0) {
                        r = -EBADMSG;
                        goto out_close;
                }
                r = sink(ctx, buf, (size_t)n);
                if (r < 0)
                        goto out_close;
                left -= (uint64_t)n;
        }
        /* Reading past the end also makes libzip check the CRC. */
        if (zip_fread(zf, buf, 1) != 0)
                r = -EBADMSG;

out_close:
        zip_fclose(zf);
out_free:
        free(buf);
        if (r == 0 && !unchanged(a))
                r = -ESTALE;
        return r;
}

struct membuf {
        char *p;
        size_t len;
};

static int mem_sink(void *ctx, const void *buf, size_t len)
{
        struct membuf *m = ctx;

        memcpy(m->p + m->len, buf, len);
        m->len += len;
        return 0;
}

int ssp_archive_read(const struct ssp_archive *a, const char *name, size_t max, char **ret_buf,
                     size_t *ret_len)
{
        struct membuf m = { 0 };
        zip_stat_t st;
        int r;

        r = find(a, name, &st);
        if (r < 0)
                return r;
        if (st.size > max || st.size >= SIZE_MAX)
                return -EFBIG;
        /* stream() hands over at most st.size bytes: the buffer cannot overflow. */
        m.p = malloc((size_t)st.size + 1);
        if (!m.p)
                return -ENOMEM;
        r = stream(a, &st, mem_sink, &m);
        if (r < 0) {
                free(m.p);
                return r;
        }
        m.p[m.len] = '\0';
        *ret_buf = m.p;
        *ret_len = m.len;
        return 0;
}

static int fd_sink(void *ctx, const void *buf, size_t len)
{
        const char *p = buf;
        int fd = *(int *)ctx;

        while (len > 0) {
                ssize_t n = write(fd, p, len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                p += n;
                len -= (size_t)n;
        }
        return 0;
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
static int store(const struct ssp_archive *a, const zip_stat_t *st, int fd, const char *tmp,
                 const char *dir, char **ret_path, char sha[65])
{
        char *final = NULL;
        int r;

        r = stream(a, st, fd_sink, &fd);
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
                        char **ret_path, char ret_sha256[65])
{
        char *dir = NULL, *tmp = NULL;
        zip_stat_t st;
        int fd, r;

        r = find(a, name, &st);
        if (r < 0)
                return r;
        if (st.size > a->lim.max_entry_size)
                return -EFBIG;
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
        r = store(a, &st, fd, tmp, dir, ret_path, ret_sha256);
        close(fd);
        if (r < 0)
                (void) unlink(tmp);

out_free:
        free(tmp);
        free(dir);
        return r;
}
