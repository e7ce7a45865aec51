/* archive_fixture: zip writers for the archive tests (see the header). */
#include "archive_fixture.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zip.h>

struct buf {
        unsigned char *p;
        size_t len, cap;
};

static void put(struct buf *b, const void *p, size_t len)
{
        if (b->len + len > b->cap) {
                b->cap = (b->len + len) * 2 + 256;
                b->p = realloc(b->p, b->cap);
                if (!b->p)
                        abort();
        }
        memcpy(b->p + b->len, p, len);
        b->len += len;
}

static void put16(struct buf *b, uint16_t v)
{
        unsigned char x[2] = { (unsigned char)v, (unsigned char)(v >> 8) };

        put(b, x, 2);
}

static void put32(struct buf *b, uint32_t v)
{
        put16(b, (uint16_t)v);
        put16(b, (uint16_t)(v >> 16));
}

static void put64(struct buf *b, uint64_t v)
{
        put32(b, (uint32_t)v);
        put32(b, (uint32_t)(v >> 32));
}

uint32_t fx_crc32(const void *p, size_t len)
{
        const unsigned char *s = p;
        uint32_t c = 0xffffffffu;

        for (size_t i = 0; i < len; i++) {
                c ^= s[i];
                for (int k = 0; k < 8; k++)
                        c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
        }
        return c ^ 0xffffffffu;
}

struct meta {
        size_t nlen;
        uint32_t crc;
        uint64_t size, comp, offset;
};

static struct meta meta_of(const struct fx_entry *e)
{
        const void *plain = e->plain ? e->plain : e->data;
        size_t plen = e->plain ? e->plain_len : e->len;

        return (struct meta){
                .nlen = e->name_len ? e->name_len : strlen(e->name),
                .crc = fx_crc32(plain, plen),
                .size = e->lie ? e->lie_size : plen,
                .comp = e->len,
        };
}

static void local_record(struct buf *b, const struct fx_entry *e, const struct meta *m,
                         const void *data, size_t len, bool zip64)
{
        const char *name = e->local_name ? e->local_name : e->name;
        size_t nlen = e->local_name ? strlen(e->local_name) : m->nlen;

        put32(b, 0x04034b50);
        put16(b, zip64 ? 45 : 20);
        put16(b, e->flags | (e->descriptor ? 0x0008 : 0));
        put16(b, e->method);
        put16(b, 0);
        put16(b, 0x21);
        put32(b, e->descriptor ? 0 : m->crc);
        put32(b, zip64 ? 0xffffffffu : e->descriptor ? 0 : (uint32_t)len);
        put32(b, zip64 ? 0xffffffffu : e->local_size ? e->local_size : (uint32_t)m->size);
        put16(b, (uint16_t)nlen);
        put16(b, zip64 ? 20 : 0);
        put(b, name, nlen);
        if (zip64) {
                put16(b, 0x0001);
                put16(b, 16);
                put64(b, m->size);
                put64(b, len);
        }
        put(b, data, len);
        if (e->descriptor) {
                put32(b, 0x08074b50);
                put32(b, m->crc);
                put32(b, (uint32_t)len);
                put32(b, (uint32_t)m->size);
        }
}

static void central_record(struct buf *b, const struct fx_entry *e, const struct meta *m, bool zip64)
{
        uint32_t mode = e->mode;

        if (!mode)
                mode = e->name[m->nlen - 1] == '/' ? 040755 : 0100644;
        put32(b, 0x02014b50);
        put16(b, 0x031e);
        put16(b, zip64 ? 45 : 20);
        put16(b, e->flags | (e->descriptor ? 0x0008 : 0));
        put16(b, e->method);
        put16(b, 0);
        put16(b, 0x21);
        put32(b, m->crc);
        put32(b, zip64 ? 0xffffffffu : (uint32_t)m->comp);
        put32(b, zip64 ? 0xffffffffu : (uint32_t)m->size);
        put16(b, (uint16_t)m->nlen);
        put16(b, zip64 ? 28 : 0);
        put16(b, 0);
        put16(b, 0);
        put16(b, 0);
        put32(b, mode << 16);
        put32(b, zip64 ? 0xffffffffu : (uint32_t)m->offset);
        put(b, e->name, m->nlen);
        if (zip64) {
                put16(b, 0x0001);
                put16(b, 24);
                put64(b, m->size);
                put64(b, m->comp);
                put64(b, m->offset);
        }
}

static void end_records(struct buf *b, size_t n, uint64_t cd_off, uint64_t cd_len, bool zip64)
{
        uint64_t eocd64 = b->len;

        if (zip64) {
                put32(b, 0x06064b50);
                put64(b, 44);
                put16(b, 45);
                put16(b, 45);
                put32(b, 0);
                put32(b, 0);
                put64(b, n);
                put64(b, n);
                put64(b, cd_len);
                put64(b, cd_off);
                put32(b, 0x07064b50);
                put32(b, 0);
                put64(b, eocd64);
                put32(b, 1);
        }
        put32(b, 0x06054b50);
        put16(b, 0);
        put16(b, 0);
        put16(b, zip64 ? 0xffff : (uint16_t)n);
        put16(b, zip64 ? 0xffff : (uint16_t)n);
        put32(b, zip64 ? 0xffffffffu : (uint32_t)cd_len);
        put32(b, zip64 ? 0xffffffffu : (uint32_t)cd_off);
        put16(b, 0);
}

static int write_file(const char *path, const struct buf *b)
{
        FILE *f = fopen(path, "wb");
        int r = 0;

        if (!f)
                return -errno;
        if (fwrite(b->p, 1, b->len, f) != b->len)
                r = -EIO;
        if (fclose(f) != 0 && r == 0)
                r = -errno;
        return r;
}

int fx_write_raw(const char *path, const struct fx_entry *v, size_t n, bool zip64)
{
        struct meta *m = calloc(n ? n : 1, sizeof(*m));
        struct buf b = { 0 }, cd = { 0 };
        int r;

        if (!m)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                m[i] = meta_of(&v[i]);
                m[i].offset = b.len;
                if (v[i].quotes_next && i + 1 < n) {
                        /* The next record, whole, is this entry's stored data. */
                        struct buf inner = { 0 };
                        struct fx_entry e = v[i];

                        m[i + 1] = meta_of(&v[i + 1]);
                        local_record(&inner, &v[i + 1], &m[i + 1], v[i + 1].data, v[i + 1].len, zip64);
                        e.data = inner.p;
                        e.len = inner.len;
                        m[i] = meta_of(&e);
                        m[i].offset = b.len;
                        local_record(&b, &e, &m[i], inner.p, inner.len, zip64);
                        m[i + 1].offset = b.len - inner.len;
                        free(inner.p);
                        i++;
                        continue;
                }
                local_record(&b, &v[i], &m[i], v[i].data, v[i].len, zip64);
        }
        for (size_t i = 0; i < n; i++)
                central_record(&cd, &v[i], &m[i], zip64);
        {
                uint64_t cd_off = b.len;

                put(&b, cd.p, cd.len);
                end_records(&b, n, cd_off, cd.len, zip64);
        }
        r = write_file(path, &b);
        free(b.p);
        free(cd.p);
        free(m);
        return r;
}

int fx_write_libzip(const char *path, const struct fx_lzentry *v, size_t n)
{
        zip_t *za;
        int err = 0;

        za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &err);
        if (!za)
                return -EIO;
        for (size_t i = 0; i < n; i++) {
                const struct fx_lzentry *e = &v[i];
                size_t nl = strlen(e->name);
                zip_int64_t idx;

                if (nl && e->name[nl - 1] == '/') {
                        idx = zip_dir_add(za, e->name, ZIP_FL_ENC_RAW);
                } else {
                        zip_source_t *s = zip_source_buffer(za, e->data, e->len, 0);

                        idx = s ? zip_file_add(za, e->name, s, ZIP_FL_ENC_RAW) : -1;
                        if (idx < 0)
                                zip_source_free(s);
                        else if (zip_set_file_compression(za, (zip_uint64_t)idx,
                                                          e->method ? e->method : ZIP_CM_STORE, 9) < 0)
                                idx = -1;
                }
                if (idx >= 0 && e->mode &&
                    zip_file_set_external_attributes(za, (zip_uint64_t)idx, 0, ZIP_OPSYS_UNIX,
                                                     e->mode << 16) < 0)
                        idx = -1;
                if (idx >= 0 && e->encryption &&
                    zip_file_set_encryption(za, (zip_uint64_t)idx, e->encryption, "fmud-test") < 0)
                        idx = -1;
                if (idx < 0) {
                        zip_discard(za);
                        return -EINVAL;
                }
        }
        return zip_close(za) == 0 ? 0 : -EIO;
}

int fx_deflate(const void *data, size_t len, void **ret, size_t *ret_len)
{
        char tmpl[] = "/tmp/fmud-deflate-XXXXXX";
        struct fx_lzentry e = { .name = "x", .data = data, .len = len, .method = ZIP_CM_DEFLATE };
        zip_file_t *zf = NULL;
        zip_stat_t st;
        zip_t *za = NULL;
        void *p = NULL;
        int fd, err, r = -EIO;

        fd = mkstemp(tmpl);
        if (fd < 0)
                return -errno;
        if (fx_write_libzip(tmpl, &e, 1) < 0)
                goto out;
        za = zip_open(tmpl, ZIP_RDONLY, &err);
        if (!za || zip_stat_index(za, 0, 0, &st) < 0)
                goto out;
        p = malloc(st.comp_size ? st.comp_size : 1);
        zf = zip_fopen_index(za, 0, ZIP_FL_COMPRESSED);
        if (p && zf && zip_fread(zf, p, st.comp_size) == (zip_int64_t)st.comp_size) {
                *ret = p;
                *ret_len = st.comp_size;
                p = NULL;
                r = 0;
        }
out:
        if (zf)
                zip_fclose(zf);
        if (za)
                zip_discard(za);
        free(p);
        unlink(tmpl);
        close(fd);
        return r;
}

char *fx_path(const char *dir, const char *name)
{
        char *p;

        if (asprintf(&p, "%s/%s", dir, name) < 0)
                abort();
        return p;
}

bool fx_has_diag(const struct diag_list *l, const char *a, const char *b)
{
        char line[2048];

        for (size_t i = 0; i < l->n; i++) {
                diag_format(&l->v[i], line, sizeof(line));
                if (strstr(line, a) && (!b || strstr(line, b)))
                        return true;
        }
        return false;
}

void fx_dump_diags(const struct diag_list *l)
{
        char line[2048];

        for (size_t i = 0; i < l->n; i++) {
                diag_format(&l->v[i], line, sizeof(line));
                fprintf(stderr, "  diag: %s\n", line);
        }
}

int fx_count_dir(const char *dir)
{
        DIR *d = opendir(dir);
        struct dirent *de;
        int n = 0;

        if (!d)
                return errno == ENOENT ? 0 : -1;
        while ((de = readdir(d))) {
                size_t len = strlen(de->d_name);
                /* A cache's per-archive lock and seal files are no trees (fmi/cache_check.h). */
                bool meta = len > 5 &&
                            (!strcmp(de->d_name + len - 5, ".lock") ||
                             !strcmp(de->d_name + len - 5, ".seal"));

                n += strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 && !meta;
        }
        closedir(d);
        return n;
}
