/*
 * snap_blob: a snapshot's file format, written and read with every length
 * bounded (snap_blob.h).
 *
 * DESIGN: see snap_blob.h. The checksum is checked before any length is
 * believed, so a damaged or truncated file is named as such rather than by
 * the first length it happens to break; a hostile file with a valid
 * checksum still meets every bound.
 */
#include "daemon/snap_blob.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi/sha256.h"

#define HEAD_LEN        (8u + 4u + 4u + 8u + 4u)

size_t snap_blob_max_size(uint32_t n)
{
        return HEAD_LEN + (size_t)n * (4u + SNAP_BLOB_MAX_NAME + 4u + SNAP_BLOB_MAX_NAME + 64u +
                                       4u + SNAP_BLOB_MAX_STATE) +
               4u + SNAP_BLOB_MAX_MASTER + SNAP_BLOB_SUM_LEN;
}

static uint8_t *put(uint8_t *q, const void *src, size_t n)
{
        if (n)
                memcpy(q, src, n);
        return q + n;
}

static uint8_t *put_u32(uint8_t *q, uint32_t v)
{
        for (int i = 0; i < 4; i++)
                *q++ = (uint8_t)(v >> (8 * i));
        return q;
}

static uint8_t *put_u64(uint8_t *q, uint64_t v)
{
        for (int i = 0; i < 8; i++)
                *q++ = (uint8_t)(v >> (8 * i));
        return q;
}

int snap_blob_encode(const struct snap_blob *b, uint8_t **ret, size_t *ret_len)
{
        size_t len = HEAD_LEN + 4u + b->master_len + SNAP_BLOB_SUM_LEN;
        char sum[SHA256_HEX_LEN + 1];
        uint64_t bits;
        uint8_t *p, *q;

        if (b->n > SNAP_BLOB_MAX_INSTANCES || b->master_len > SNAP_BLOB_MAX_MASTER)
                return -EINVAL;
        for (uint32_t i = 0; i < b->n; i++) {
                const struct snap_blob_inst *s = &b->insts[i];

                if (s->name_len > SNAP_BLOB_MAX_NAME || s->token_len > SNAP_BLOB_MAX_NAME ||
                    s->state_len > SNAP_BLOB_MAX_STATE || strlen(s->sha256) != 64)
                        return -EINVAL;
                len += 4u + s->name_len + 4u + s->token_len + 64u + 4u + s->state_len;
        }
        p = malloc(len);
        if (!p)
                return -ENOMEM;
        memcpy(&bits, &b->time, sizeof(bits));
        q = put(p, SNAP_BLOB_MAGIC, 8);
        q = put_u32(q, SNAP_BLOB_VERSION);
        q = put_u32(q, b->flags);
        q = put_u64(q, bits);
        q = put_u32(q, b->n);
        for (uint32_t i = 0; i < b->n; i++) {
                const struct snap_blob_inst *s = &b->insts[i];

                q = put(put_u32(q, (uint32_t)s->name_len), s->name, s->name_len);
                q = put(put_u32(q, (uint32_t)s->token_len), s->token, s->token_len);
                q = put(q, s->sha256, 64);
                q = put(put_u32(q, (uint32_t)s->state_len), s->state, s->state_len);
        }
        q = put(put_u32(q, (uint32_t)b->master_len), b->master, b->master_len);
        if (sha256_buf(p, (size_t)(q - p), sum) < 0) {
                free(p);
                return -ENOMEM;
        }
        q = put(q, sum, SNAP_BLOB_SUM_LEN);
        *ret = p;
        *ret_len = (size_t)(q - p);
        return 0;
}

struct rd {
        const uint8_t *p;
        size_t len, off;
        char *msg;
        size_t size;
        bool bad;
};

static int fail(struct rd *r, const char *fmt, ...)
{
        va_list ap;

        if (!r->bad) {
                va_start(ap, fmt);
                vsnprintf(r->msg, r->size, fmt, ap);
                va_end(ap);
        }
        r->bad = true;
        return -EBADMSG;
}

static const uint8_t *take(struct rd *r, size_t n, const char *what)
{
        const uint8_t *q;

        if (r->bad)
                return NULL;
        if (n > r->len - r->off) {
                fail(r, "snapshot: %s of %zu bytes at byte %zu passes the end (%zu bytes)", what,
                     n, r->off, r->len);
                return NULL;
        }
        q = r->p + r->off;
        r->off += n;
        return q;
}

static uint32_t get_u32(struct rd *r, const char *what)
{
        const uint8_t *b = take(r, 4, what);
        uint32_t v = 0;

        for (int i = 0; b && i < 4; i++)
                v |= (uint32_t)b[i] << (8 * i);
        return v;
}

/* A length (u32) at most max, then its bytes. */
static const uint8_t *get_bytes(struct rd *r, uint32_t max, const char *what, size_t *ret_len)
{
        uint32_t n = get_u32(r, what);

        if (r->bad)
                return NULL;
        if (n > max) {
                fail(r, "snapshot: %s of %u bytes, over the limit of %u", what, n, max);
                return NULL;
        }
        *ret_len = n;
        return take(r, n, what);
}

static bool is_hex(const uint8_t *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        return true;
}

static int inst_get(struct rd *r, struct snap_blob_inst *s, uint32_t i)
{
        char what[64];
        const uint8_t *q;

        snprintf(what, sizeof(what), "instance %u's name", i);
        s->name = (const char *)get_bytes(r, SNAP_BLOB_MAX_NAME, what, &s->name_len);
        snprintf(what, sizeof(what), "instance %u's instantiationToken", i);
        s->token = (const char *)get_bytes(r, SNAP_BLOB_MAX_NAME, what, &s->token_len);
        snprintf(what, sizeof(what), "instance %u's SHA-256", i);
        q = take(r, 64, what);
        if (q && !is_hex(q, 64))
                return fail(r, "snapshot: instance %u's SHA-256 is not 64 lowercase hex digits",
                            i);
        if (q) {
                memcpy(s->sha256, q, 64);
                s->sha256[64] = '\0';
        }
        snprintf(what, sizeof(what), "instance %u's FMU state", i);
        s->state = get_bytes(r, SNAP_BLOB_MAX_STATE, what, &s->state_len);
        return r->bad ? -EBADMSG : 0;
}

int snap_blob_decode(const uint8_t *p, size_t len, struct snap_blob *ret, char *msg, size_t size)
{
        struct rd r = { .p = p, .len = len, .msg = msg, .size = size };
        struct snap_blob b = { 0 };
        char sum[SHA256_HEX_LEN + 1];
        uint32_t version;
        uint64_t bits = 0;
        const uint8_t *q;
        int e;

        *ret = (struct snap_blob){ 0 };
        if (len < 8 || memcmp(p, SNAP_BLOB_MAGIC, 8))
                return fail(&r, "snapshot: not a snapshot file (no '%s' at its start)",
                            SNAP_BLOB_MAGIC);
        if (len < HEAD_LEN + 4u + SNAP_BLOB_SUM_LEN)
                return fail(&r, "snapshot: truncated: %zu bytes, a snapshot has at least %u",
                            len, HEAD_LEN + 4u + SNAP_BLOB_SUM_LEN);
        r.off = 8;
        version = get_u32(&r, "version");
        if (version != SNAP_BLOB_VERSION)
                return fail(&r, "snapshot: version %u, this daemon reads version %u", version,
                            SNAP_BLOB_VERSION);
        if (sha256_buf(p, len - SNAP_BLOB_SUM_LEN, sum) < 0) {
                snprintf(msg, size, "out of memory");
                return -ENOMEM;
        }
        if (memcmp(sum, p + len - SNAP_BLOB_SUM_LEN, SNAP_BLOB_SUM_LEN))
                return fail(&r, "snapshot: its checksum does not match its bytes (the file is "
                            "damaged or truncated)");
        r.len = len - SNAP_BLOB_SUM_LEN;
        b.flags = get_u32(&r, "flags");
        if (b.flags & ~SNAP_BLOB_PAUSED)
                return fail(&r, "snapshot: unknown flags 0x%x", b.flags & ~SNAP_BLOB_PAUSED);
        q = take(&r, 8, "time");
        for (int i = 0; q && i < 8; i++)
                bits |= (uint64_t)q[i] << (8 * i);
        memcpy(&b.time, &bits, sizeof(b.time));
        if (!r.bad && !isfinite(b.time))
                return fail(&r, "snapshot: its time is not a finite number");
        b.n = get_u32(&r, "the count of instances");
        if (!r.bad && b.n > SNAP_BLOB_MAX_INSTANCES)
                return fail(&r, "snapshot: %u instances, over the limit of %u", b.n,
                            SNAP_BLOB_MAX_INSTANCES);
        /* Each instance takes at least 76 bytes: the count cannot claim more than the bytes. */
        if (!r.bad && b.n > (r.len - r.off) / 76u)
                return fail(&r, "snapshot: %u instances cannot fit in its %zu bytes", b.n, len);
        if (r.bad)
                return -EBADMSG;
        b.insts = calloc(b.n ? b.n : 1, sizeof(*b.insts));
        if (!b.insts) {
                snprintf(msg, size, "out of memory");
                return -ENOMEM;
        }
        for (uint32_t i = 0; i < b.n; i++)
                if ((e = inst_get(&r, &b.insts[i], i)) < 0)
                        break;
        b.master = get_bytes(&r, SNAP_BLOB_MAX_MASTER, "the master's state", &b.master_len);
        if (!r.bad && r.off != r.len)
                fail(&r, "snapshot: %zu bytes after the master's state", r.len - r.off);
        if (r.bad) {
                snap_blob_fini(&b);
                return -EBADMSG;
        }
        *ret = b;
        return 0;
}

void snap_blob_fini(struct snap_blob *b)
{
        if (!b)
                return;
        free(b->insts);
        *b = (struct snap_blob){ 0 };
}
