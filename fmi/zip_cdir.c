/*
 * zip_cdir: end-of-central-directory search (with the ZIP64 records) and
 * central directory walk, after the ZIP APPNOTE section 4.3. Every length
 * read from the file is checked against what is left before it is used.
 */
#include "zip_cdir.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define SIG_LOCAL       0x04034b50u
#define SIG_CENTRAL     0x02014b50u
#define SIG_EOCD        0x06054b50u
#define SIG_EOCD64      0x06064b50u
#define SIG_LOCATOR64   0x07064b50u

#define EOCD_LEN        22
#define LOCATOR64_LEN   20
#define EOCD64_LEN      56
#define CENTRAL_LEN     46
#define LOCAL_LEN       30
#define MAX_COMMENT     0xffff

#define EXTRA_ZIP64     0x0001u

/* Where the central directory is, as the end records declare it. */
struct cdir_loc {
        uint64_t count, size, offset;
        uint64_t end;           /* offset of the first end record */
};

static uint16_t le16(const unsigned char *p)
{
        return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const unsigned char *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
        return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/*
 * The end record is the last signature whose comment reaches exactly to the
 * end of the file; a looser search would let a comment hide a second one.
 * tail receives the last *ret_n bytes of the file; *ret_at is the record's
 * index in it.
 */
static int find_eocd(const struct ar_src *s, unsigned char *tail, size_t *ret_n, size_t *ret_at)
{
        size_t n = s->size < EOCD_LEN + MAX_COMMENT ? (size_t)s->size : EOCD_LEN + MAX_COMMENT;
        int r;

        if (n < EOCD_LEN)
                return -EBADMSG;
        r = ar_src_pread(s, tail, n, s->size - n);
        if (r < 0)
                return r;
        for (size_t i = n - EOCD_LEN + 1; i-- > 0;) {
                if (le32(tail + i) == SIG_EOCD && i + EOCD_LEN + le16(tail + i + 20) == n) {
                        *ret_n = n;
                        *ret_at = i;
                        return 0;
                }
        }
        return -EBADMSG;
}

static int read_eocd64(const struct ar_src *s, uint64_t eocd_pos, struct cdir_loc *loc)
{
        unsigned char b[EOCD64_LEN];
        uint64_t at;
        int r;

        r = ar_src_pread(s, b, LOCATOR64_LEN, eocd_pos - LOCATOR64_LEN);
        if (r < 0)
                return r;
        if (le32(b + 4) != 0 || le32(b + 16) > 1)
                return -EBADMSG;        /* split archives are not FMUs */
        at = le64(b + 8);
        if (at > eocd_pos - LOCATOR64_LEN || eocd_pos - LOCATOR64_LEN - at < EOCD64_LEN)
                return -EBADMSG;
        r = ar_src_pread(s, b, EOCD64_LEN, at);
        if (r < 0)
                return r;
        if (le32(b) != SIG_EOCD64 || le32(b + 16) != 0 || le32(b + 20) != 0 ||
            le64(b + 24) != le64(b + 32))
                return -EBADMSG;
        loc->count = le64(b + 32);
        loc->size = le64(b + 40);
        loc->offset = le64(b + 48);
        loc->end = at;
        return 0;
}

static int locate(const struct ar_src *s, struct cdir_loc *loc)
{
        unsigned char *tail = malloc(EOCD_LEN + MAX_COMMENT);
        unsigned char sig[4];
        const unsigned char *e;
        size_t n, at;
        uint64_t pos;
        int r;

        if (!tail)
                return -ENOMEM;
        r = find_eocd(s, tail, &n, &at);
        if (r < 0)
                goto out_free;
        e = tail + at;
        pos = s->size - n + at;
        if (le16(e + 4) != 0 || le16(e + 6) != 0 || le16(e + 8) != le16(e + 10)) {
                r = -EBADMSG;   /* split archives are not FMUs */
                goto out_free;
        }
        *loc = (struct cdir_loc){ .count = le16(e + 10), .size = le32(e + 12),
                                  .offset = le32(e + 16), .end = pos };
        if (pos >= LOCATOR64_LEN) {
                r = ar_src_pread(s, sig, sizeof(sig), pos - LOCATOR64_LEN);
                if (r < 0)
                        goto out_free;
                if (le32(sig) == SIG_LOCATOR64)
                        r = read_eocd64(s, pos, loc);
        }
        if (r == 0 && (loc->offset > loc->end || loc->size > loc->end - loc->offset))
                r = -EBADMSG;

out_free:
        free(tail);
        return r;
}

/* Replace the 0xffffffff fields by their ZIP64 extra values (APPNOTE 4.5.3). */
static int apply_zip64(const unsigned char *x, size_t len, struct cdir_entry *e)
{
        uint64_t *want[] = { &e->size, &e->comp_size, &e->local_offset };
        const uint32_t max32 = 0xffffffffu;

        while (len >= 4) {
                size_t sz = le16(x + 2);
                size_t at = 4;

                if (sz > len - 4)
                        return -EBADMSG;
                if (le16(x) == EXTRA_ZIP64) {
                        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
                                if (*want[i] != max32)
                                        continue;
                                if (at + 8 > 4 + sz)
                                        return -EBADMSG;
                                *want[i] = le64(x + at);
                                at += 8;
                        }
                        return 0;
                }
                x += 4 + sz;
                len -= 4 + sz;
        }
        return 0;
}

static int read_entry(const struct ar_src *s, uint64_t *off, uint64_t end, struct cdir_entry *e)
{
        unsigned char h[CENTRAL_LEN];
        unsigned char *var;
        size_t nlen, xlen, clen;
        int r;

        if (end - *off < CENTRAL_LEN)
                return -EBADMSG;
        r = ar_src_pread(s, h, sizeof(h), *off);
        if (r < 0)
                return r;
        if (le32(h) != SIG_CENTRAL)
                return -EBADMSG;
        nlen = le16(h + 28);
        xlen = le16(h + 30);
        clen = le16(h + 32);
        if (end - *off - CENTRAL_LEN < (uint64_t)nlen + xlen + clen)
                return -EBADMSG;
        var = malloc(nlen + xlen + 1);
        if (!var)
                return -ENOMEM;
        r = ar_src_pread(s, var, nlen + xlen, *off + CENTRAL_LEN);
        if (r < 0)
                goto out_free;
        *e = (struct cdir_entry){ .flags = le16(h + 8), .method = le16(h + 10),
                                  .crc = le32(h + 16),
                                  .comp_size = le32(h + 20), .size = le32(h + 24),
                                  .local_offset = le32(h + 42), .name_len = nlen };
        r = apply_zip64(var + nlen, xlen, e);
        if (r < 0)
                goto out_free;
        e->name = malloc(nlen + 1);
        if (!e->name) {
                r = -ENOMEM;
                goto out_free;
        }
        memcpy(e->name, var, nlen);
        e->name[nlen] = '\0';
        *off += CENTRAL_LEN + nlen + xlen + clen;

out_free:
        free(var);
        return r;
}

int cdir_read(const struct ar_src *s, size_t max_entries, struct cdir *ret)
{
        struct cdir cd = { 0 };
        struct cdir_loc loc;
        uint64_t off;
        int r;

        r = locate(s, &loc);
        if (r < 0)
                return r;
        if (loc.count > max_entries)
                return -E2BIG;
        if (loc.count > loc.size / CENTRAL_LEN)
                return -EBADMSG;
        cd.v = calloc(loc.count ? (size_t)loc.count : 1, sizeof(*cd.v));
        if (!cd.v)
                return -ENOMEM;
        cd.offset = loc.offset;
        off = loc.offset;
        for (; cd.n < loc.count; cd.n++) {
                r = read_entry(s, &off, loc.offset + loc.size, &cd.v[cd.n]);
                if (r < 0)
                        goto out_fini;
        }
        *ret = cd;
        return 0;

out_fini:
        cdir_fini(&cd);
        return r;
}

void cdir_fini(struct cdir *cd)
{
        if (!cd)
                return;
        for (size_t i = 0; i < cd->n; i++)
                free(cd->v[i].name);
        free(cd->v);
        *cd = (struct cdir){ 0 };
}

/* A local value agrees with the central one, or is zero under a data descriptor. */
static bool agrees(uint64_t local, uint64_t central, bool descriptor)
{
        return local == central || (descriptor && local == 0);
}

/* Compare the fixed header h and its name and extra fields (var) with e. */
static const char *compare_local(const unsigned char *h, const unsigned char *var,
                                 const struct cdir_entry *e)
{
        const uint16_t enc = CDIR_FLAG_ENCRYPTED | CDIR_FLAG_STRONG_ENCRYPTION;
        bool dd = le16(h + 6) & CDIR_FLAG_DATA_DESCRIPTOR;
        struct cdir_entry l = { .comp_size = le32(h + 18), .size = le32(h + 22) };
        size_t nlen = le16(h + 26);

        if (nlen != e->name_len || memcmp(var, e->name, nlen) != 0)
                return "local header names a different entry";
        if (le16(h + 8) != e->method || (le16(h + 6) & enc) != (e->flags & enc))
                return "local header disagrees on compression or encryption";
        if (apply_zip64(var + nlen, le16(h + 28), &l) < 0)
                return "local header has a malformed ZIP64 field";
        if (!agrees(le32(h + 14), e->crc, dd) || !agrees(l.comp_size, e->comp_size, dd) ||
            !agrees(l.size, e->size, dd))
                return "local header disagrees on CRC or sizes";
        return NULL;
}

int cdir_check_local(const struct ar_src *s, const struct cdir_entry *e, uint64_t *ret_end,
                     const char **reason)
{
        unsigned char h[LOCAL_LEN], *var;
        size_t vlen;
        uint64_t end;
        const char *why;
        int r;

        *reason = "local header missing or outside the archive";
        r = ar_src_pread(s, h, sizeof(h), e->local_offset);
        if (r < 0)
                return r;
        if (le32(h) != SIG_LOCAL)
                return -EBADMSG;
        vlen = (size_t)le16(h + 26) + le16(h + 28);
        end = e->local_offset + LOCAL_LEN + vlen;
        if (e->comp_size > s->size || end > s->size - e->comp_size) {
                *reason = "data runs past the end of the archive";
                return -EBADMSG;
        }
        var = malloc(vlen + 1);
        if (!var)
                return -ENOMEM;
        r = ar_src_pread(s, var, vlen, e->local_offset + LOCAL_LEN);
        if (r == 0) {
                why = compare_local(h, var, e);
                if (why) {
                        *reason = why;
                        r = -EBADMSG;
                }
        }
        free(var);
        if (r == 0)
                *ret_end = end + e->comp_size;
        return r;
}
