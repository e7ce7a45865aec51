/*
 * archive_src: positional reads over a file or a buffer, and the libzip
 * source callback on top of them (libzip's own file source would reopen the
 * path, its buffer source would need a copy of the file).
 */
#include "archive_src.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int ar_src_pread(const struct ar_src *s, void *buf, size_t len, uint64_t off)
{
        unsigned char *p = buf;

        if (off > s->size || len > s->size - off)
                return -EBADMSG;
        if (!s->mem) {
                while (len > 0) {
                        ssize_t n = pread(s->fd, p, len, (off_t)off);

                        if (n < 0 && errno == EINTR)
                                continue;
                        if (n < 0)
                                return -errno;
                        if (n == 0)
                                return -EIO;    /* the file shrank under us */
                        p += n;
                        off += (uint64_t)n;
                        len -= (size_t)n;
                }
                return 0;
        }
        memcpy(p, s->mem + off, len);
        return 0;
}

/* One libzip source: the bytes and libzip's read position in them. */
struct zsrc {
        const struct ar_src *s;
        uint64_t pos;
        zip_error_t error;
};

static zip_int64_t zsrc_read(struct zsrc *z, void *data, zip_uint64_t len)
{
        uint64_t left = z->s->size - z->pos;
        size_t n = (size_t)(len < left ? len : left);
        int r;

        if (n == 0)
                return 0;
        r = ar_src_pread(z->s, data, n, z->pos);
        if (r < 0) {
                zip_error_set(&z->error, ZIP_ER_READ, -r);
                return -1;
        }
        z->pos += n;
        return (zip_int64_t)n;
}

static zip_int64_t zsrc_cb(void *ud, void *data, zip_uint64_t len, zip_source_cmd_t cmd)
{
        struct zsrc *z = ud;
        zip_int64_t pos;
        zip_stat_t *st;

        switch (cmd) {
        case ZIP_SOURCE_OPEN:
                z->pos = 0;
                return 0;
        case ZIP_SOURCE_READ:
                return zsrc_read(z, data, len);
        case ZIP_SOURCE_CLOSE:
                return 0;
        case ZIP_SOURCE_STAT:
                st = ZIP_SOURCE_GET_ARGS(zip_stat_t, data, len, &z->error);
                if (!st)
                        return -1;
                zip_stat_init(st);
                st->size = z->s->size;
                st->comp_size = z->s->size;
                st->comp_method = ZIP_CM_STORE;
                st->encryption_method = ZIP_EM_NONE;
                st->valid = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD |
                            ZIP_STAT_ENCRYPTION_METHOD;
                return sizeof(*st);
        case ZIP_SOURCE_ERROR:
                return zip_error_to_data(&z->error, data, len);
        case ZIP_SOURCE_FREE:
                zip_error_fini(&z->error);
                free(z);
                return 0;
        case ZIP_SOURCE_SEEK:
                pos = zip_source_seek_compute_offset(z->pos, z->s->size, data, len, &z->error);
                if (pos < 0)
                        return -1;
                z->pos = (uint64_t)pos;
                return 0;
        case ZIP_SOURCE_TELL:
                return (zip_int64_t)z->pos;
        case ZIP_SOURCE_SUPPORTS:
                return ZIP_SOURCE_SUPPORTS_SEEKABLE;
        default:
                zip_error_set(&z->error, ZIP_ER_OPNOTSUPP, 0);
                return -1;
        }
}

zip_source_t *ar_src_zip_source(const struct ar_src *s, zip_error_t *err)
{
        struct zsrc *z = calloc(1, sizeof(*z));
        zip_source_t *zs;

        if (!z) {
                zip_error_set(err, ZIP_ER_MEMORY, 0);
                return NULL;
        }
        z->s = s;
        zip_error_init(&z->error);
        zs = zip_source_function_create(zsrc_cb, z, err);
        if (!zs) {
                zip_error_fini(&z->error);
                free(z);
        }
        return zs;
}
