/*
 * archive: open an FMU archive as hostile input, read entries from it, and
 * hand it to the cache for unpacking.
 *
 * DESIGN: the file is opened once; its hash, libzip and our own central
 * directory walker all read that one open file (archive_src). libzip opens
 * with ZIP_CHECKCONS, which also makes it refuse duplicate names outright;
 * such an archive is reopened without the flag only to report which names
 * collide, and is refused either way. Reading never trusts a declared size:
 * ar_stream() stops at it and then makes sure the data ends there.
 */
#include "archive_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache.h"
#include "model_description.h"

#define STREAM_CHUNK (64 * 1024)

void fmu_limits_default(struct fmu_limits *lim)
{
        *lim = (struct fmu_limits){
                /* An embedded Python or Java runtime is tens of thousands of files. */
                .max_entries = 100000,
                .max_total_size = 4ull << 30,
                .max_entry_size = 2ull << 30,
                /*
                 * Past 256 MiB only: below, real data compresses as well as
                 * deflate can (an erased flash image, constant tables, about
                 * 1000:1), and the sizes are bounded anyway; a bomb needs far
                 * more than that to hurt.
                 */
                .max_ratio = 200,
                .ratio_min_size = 256ull << 20,
                .max_path_len = 1024,
                /*
                 * Unpacking costs a directory per component and per implied
                 * directory, whatever the (possibly empty) data: a name of
                 * 500 components is 1 KiB. Real FMUs' resources trees are
                 * rarely more than ~15 deep; as many directories as entries.
                 */
                .max_depth = 64,
                .max_dirs = 100000,
                /* A Dymola model of 300,000 variables with descriptions is 80 MB. */
                .max_md_size = MD_MAX_BYTES,
        };
}

/* libzip's error as -errno: its own I/O errors keep their errno. */
static int zip_errno(zip_error_t *ze)
{
        switch (zip_error_code_zip(ze)) {
        case ZIP_ER_MEMORY:
                return -ENOMEM;
        case ZIP_ER_READ:
        case ZIP_ER_SEEK:
        case ZIP_ER_TELL:
        case ZIP_ER_OPEN:
                if (zip_error_system_type(ze) == ZIP_ET_SYS && zip_error_code_system(ze) > 0)
                        return -zip_error_code_system(ze);
                return -EIO;
        default:
                return -EBADMSG;
        }
}

static int zip_open_src(struct fmu_archive *ar, int flags, zip_error_t *ze)
{
        zip_source_t *zs = ar_src_zip_source(&ar->src, ze);

        if (!zs)
                return -1;
        ar->zip = zip_open_from_source(zs, flags | ZIP_RDONLY, ze);
        if (!ar->zip) {
                zip_source_free(zs);
                return -1;
        }
        return 0;
}

/*
 * ZIP_CHECKCONS first. libzip refuses two kinds of archive with it that we
 * must still look at: duplicate names (ZIP_ER_EXISTS), so that the
 * diagnostic can name them, and archives from libarchive (cmake -E tar
 * --format=zip, bsdtar), which record the uncompressed size in the local
 * header of an entry with a data descriptor (ZIP_ER_INCONS, or ZIP_ER_NOZIP
 * when no end record passes its checks). Any archive it calls malformed is
 * opened again without the flag: a real non-zip fails again; otherwise our
 * own checks (ar_check: duplicates, every local
 * header against its central record, overlaps) then decide, and they refuse
 * whatever libzip's would have that matters to an importer.
 * Returns 0, or -EBADMSG (reported) when libzip cannot read a zip at all.
 */
static int open_zip(struct fmu_archive *ar, struct ar_report *rep, bool *ret_dups)
{
        zip_error_t ze;
        int code, r = 0;

        *ret_dups = false;
        zip_error_init(&ze);
        if (zip_open_src(ar, ZIP_CHECKCONS, &ze) < 0) {
                code = zip_error_code_zip(&ze);
                if (zip_errno(&ze) == -EBADMSG) {
                        *ret_dups = code == ZIP_ER_EXISTS;
                        zip_error_fini(&ze);
                        zip_error_init(&ze);
                        (void) zip_open_src(ar, 0, &ze);
                }
        }
        if (!ar->zip) {
                r = zip_errno(&ze);
                if (r == -EBADMSG)
                        ar_error(rep, NULL, 0, "not a zip archive: %s", zip_error_strerror(&ze));
        }
        zip_error_fini(&ze);
        return r;
}

static int check_archive(struct fmu_archive *ar, struct ar_report *rep)
{
        struct cdir cd;
        zip_int64_t n;
        bool dups;
        int r;

        if (ar->src.size == 0) {
                ar_error(rep, NULL, 0, "not a zip archive: the file is empty");
                return -EBADMSG;
        }
        r = open_zip(ar, rep, &dups);
        if (r < 0)
                return r;
        /* Count first: nothing below is allowed to cost more than max_entries. */
        n = zip_get_num_entries(ar->zip, 0);
        if (n < 0 || (uint64_t)n > ar->lim.max_entries) {
                ar_error(rep, NULL, 0, "%lld entries, over the limit of %zu", (long long)n,
                         ar->lim.max_entries);
                return -EINVAL;
        }
        r = cdir_read(&ar->src, ar->lim.max_entries, &cd);
        if (r < 0 && r != -EBADMSG && r != -E2BIG)
                return r;       /* I/O or memory, not the archive's fault */
        if (r < 0 || cd.n != (uint64_t)n) {
                ar_error(rep, NULL, 0,
                         "not a zip archive: the central directory is malformed or read differently by libzip");
                if (r == 0)
                        cdir_fini(&cd);
                return -EBADMSG;
        }
        r = ar_check(ar, &cd, rep);
        cdir_fini(&cd);
        if (r < 0)
                return r;
        /* libzip saw duplicates that our check neither refused nor found identical. */
        if (dups && rep->errors == 0 && !ar->twins)
                ar_error(rep, NULL, 0, "duplicate entry names");
        return rep->errors ? -EINVAL : 0;
}

static int open_src(const struct ar_src *src, const char *label, const struct stat *st,
                    const char *sha, const struct fmu_limits *lim, struct diag_list *diags,
                    struct fmu_archive **ret_ar)
{
        struct ar_report rep = { .diags = diags, .file = label };
        struct fmu_archive *ar;
        int r;

        ar = calloc(1, sizeof(*ar));
        if (!ar)
                return -ENOMEM;
        ar->src = *src;
        ar->label = strdup(label);
        if (!ar->label) {
                free(ar);
                return -ENOMEM;
        }
        if (st)
                ar->st = *st;
        memcpy(ar->sha256, sha, sizeof(ar->sha256));
        if (lim)
                ar->lim = *lim;
        else
                fmu_limits_default(&ar->lim);

        r = check_archive(ar, &rep);
        if (r < 0) {
                ar->src.fd = -1;        /* the caller still owns it */
                fmu_archive_close(ar);
                return r;
        }
        *ret_ar = ar;
        return 0;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
        return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
               a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
               a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

int fmu_archive_open_fd(int fd_in, const char *label, const struct fmu_limits *lim,
                        struct diag_list *diags, struct fmu_archive **ret_ar)
{
        struct ar_report rep = { .diags = diags, .file = label };
        char sha[SHA256_HEX_LEN + 1];
        struct stat st, st2;
        struct ar_src src;
        int fd, r;

        /* The archive keeps a descriptor of its own; the caller keeps fd_in. */
        fd = fcntl(fd_in, F_DUPFD_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0) {
                r = -errno;
                goto out_close;
        }
        if (S_ISDIR(st.st_mode)) {
                r = -EISDIR;
                goto out_close;
        }
        if (!S_ISREG(st.st_mode)) {
                ar_error(&rep, NULL, 0, "not a zip archive: not a regular file");
                r = -EBADMSG;
                goto out_close;
        }
        r = sha256_fd(fd, sha);
        if (r < 0)
                goto out_close;
        if (fstat(fd, &st2) < 0 || !same_file(&st, &st2)) {
                ar_error(&rep, NULL, 0, "the file changed while it was being hashed");
                r = -ESTALE;
                goto out_close;
        }
        src = (struct ar_src){ .fd = fd, .size = (uint64_t)st.st_size };
        r = open_src(&src, label, &st, sha, lim, diags, ret_ar);
        if (r < 0)
                goto out_close;
        return 0;

out_close:
        close(fd);
        return r;
}

int fmu_archive_open(const char *path, const struct fmu_limits *lim, struct diag_list *diags,
                     struct fmu_archive **ret_ar)
{
        int fd, r;

        /* O_NONBLOCK: a FIFO planted under the name must not hang us in open(). */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        r = fmu_archive_open_fd(fd, path, lim, diags, ret_ar);
        close(fd);
        return r;
}

int fmu_archive_open_buffer(const void *buf, size_t len, const char *name,
                            const struct fmu_limits *lim, struct diag_list *diags,
                            struct fmu_archive **ret_ar)
{
        struct ar_src src = { .fd = -1, .mem = buf, .size = len };
        char sha[SHA256_HEX_LEN + 1];
        int r;

        r = sha256_buf(buf, len, sha);
        if (r < 0)
                return r;
        return open_src(&src, name, NULL, sha, lim, diags, ret_ar);
}

void fmu_archive_close(struct fmu_archive *ar)
{
        if (!ar)
                return;
        /* libzip's source points into ar: discard it before anything else. */
        if (ar->zip)
                zip_discard(ar->zip);
        if (ar->src.fd >= 0)
                close(ar->src.fd);
        for (size_t i = 0; i < ar->n; i++)
                free(ar->v[i].name);
        free(ar->v);
        free(ar->label);
        free(ar);
}

const char *fmu_archive_sha256(const struct fmu_archive *ar)
{
        return ar->sha256;
}

static int find_cmp(const void *key, const void *e)
{
        return strcmp(key, ((const struct ar_entry *)e)->name);
}

const struct ar_entry *ar_find(const struct fmu_archive *ar, const char *name)
{
        return bsearch(name, ar->v, ar->n, sizeof(*ar->v), find_cmp);
}

bool fmu_archive_has(const struct fmu_archive *ar, const char *name)
{
        const struct ar_entry *e = ar_find(ar, name);

        return e && e->kind == AR_FILE;
}

int ar_unchanged(const struct fmu_archive *ar, struct ar_report *rep)
{
        struct stat st;

        if (ar->src.fd < 0)
                return 0;
        if (fstat(ar->src.fd, &st) == 0 && same_file(&ar->st, &st))
                return 0;
        ar_error(rep, NULL, 0, "the file changed since it was opened");
        return -ESTALE;
}

int ar_stream(const struct fmu_archive *ar, const struct ar_entry *e, ar_sink_fn *sink,
              void *ctx, const char **reason)
{
        uint64_t left = e->size;
        const char *why = NULL;
        zip_file_t *zf;
        zip_int64_t n;
        void *buf;
        int r = 0;

        buf = malloc(STREAM_CHUNK);
        if (!buf)
                return -ENOMEM;
        zf = zip_fopen_index(ar->zip, e->index, 0);
        if (!zf) {
                r = zip_errno(zip_get_error(ar->zip));
                why = "its data cannot be opened";
                goto out_free;
        }
        while (left > 0) {
                n = zip_fread(zf, buf, left < STREAM_CHUNK ? left : STREAM_CHUNK);
                if (n <= 0) {
                        r = n < 0 ? zip_errno(zip_file_get_error(zf)) : -EBADMSG;
                        why = n < 0 ? "its data is corrupt or fails its CRC"
                                    : "it decompresses to fewer bytes than its header declares";
                        goto out_fclose;
                }
                r = sink(ctx, buf, (size_t)n);
                if (r < 0)
                        goto out_fclose;
                left -= (uint64_t)n;
        }
        /* The data must end here; reading to the end also makes libzip check the CRC. */
        n = zip_fread(zf, buf, 1);
        if (n != 0) {
                r = n < 0 ? zip_errno(zip_file_get_error(zf)) : -EBADMSG;
                why = n < 0 ? "its data is corrupt or fails its CRC"
                            : "it decompresses to more bytes than its header declares";
        }

out_fclose:
        zip_fclose(zf);
out_free:
        free(buf);
        if (r == -EBADMSG && reason)
                *reason = why;
        return r;
}

struct membuf {
        unsigned char *p;
        size_t len;
};

static int mem_sink(void *ctx, const void *buf, size_t len)
{
        struct membuf *m = ctx;

        memcpy(m->p + m->len, buf, len);
        m->len += len;
        return 0;
}

int fmu_archive_read(const struct fmu_archive *ar, const char *name, size_t max,
                     void **ret_buf, size_t *ret_len)
{
        const struct ar_entry *e = ar_find(ar, name);
        struct membuf m = { 0 };
        int r;

        if (!e)
                return -ENOENT;
        if (e->kind != AR_FILE)
                return -EISDIR;
        if (e->size > max || e->size >= SIZE_MAX)
                return -EFBIG;
        /* ar_stream() hands over at most e->size bytes: the buffer cannot overflow. */
        m.p = malloc((size_t)e->size + 1);
        if (!m.p)
                return -ENOMEM;
        r = ar_stream(ar, e, mem_sink, &m, NULL);
        if (r < 0) {
                free(m.p);
                return r;
        }
        m.p[m.len] = '\0';
        *ret_buf = m.p;
        *ret_len = m.len;
        return 0;
}

int ar_fd_sink(void *ctx, const void *buf, size_t len)
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

int fmu_archive_copy(const struct fmu_archive *ar, const char *name, int fd)
{
        const struct ar_entry *e = ar_find(ar, name);

        if (!e)
                return -ENOENT;
        if (e->kind != AR_FILE)
                return -EISDIR;
        return ar_stream(ar, e, ar_fd_sink, &fd, NULL);
}

int fmu_archive_unpack(const struct fmu_archive *ar, const char *cache_dir, struct diag_list *diags,
                       const struct fmi_cancel *cancel, char **ret_dir)
{
        return fmu_archive_unpack_held(ar, cache_dir, diags, cancel, ret_dir, NULL);
}

int fmu_archive_unpack_held(const struct fmu_archive *ar, const char *cache_dir,
                            struct diag_list *diags, const struct fmi_cancel *cancel,
                            char **ret_dir, int *ret_hold)
{
        struct ar_report rep = { .diags = diags, .file = ar->label, .cancel = cancel };

        return cache_unpack(ar, cache_dir, &rep, ret_dir, ret_hold);
}
