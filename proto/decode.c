/*
 * decode: the bounded msgpack decoder behind pv_decode() (proto.h).
 *
 * DESIGN: msgpack-c's unpacker allocates what a container's count claims
 * before it has seen the elements, so a 5-byte message can ask for
 * gigabytes. This decoder never does: a first pass walks the message
 * checking every header against the bytes left and the limits, counting
 * the values; only then is one block allocated for exactly that many
 * nodes (and map pairs), and a second pass fills it in. Every element
 * takes at least one byte, so the node count is bounded by the message
 * size whatever the counts claim. Strings and binaries are not copied:
 * they point into the caller's buffer.
 *
 * Both passes recurse once per container level; the depth is bounded by
 * max_depth, itself clamped to DEPTH_HARD so that no limit a caller sets
 * can exhaust the stack.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "proto/proto_int.h"
#include "proto/decode_int.h"

#define DEPTH_HARD              256u
/* Maps up to this many pairs are checked for duplicate keys pairwise. */
#define DUP_PAIRWISE_MAX        16u

static int fail(struct dec *d, int r, size_t at, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

static int fail(struct dec *d, int r, size_t at, const char *fmt, ...)
{
        va_list ap;
        int n;

        if (!d->err || !d->errlen)
                return r;
        n = snprintf(d->err, d->errlen, "at byte %zu: ", at);
        if (n >= 0 && (size_t)n < d->errlen) {
                va_start(ap, fmt);
                vsnprintf(d->err + n, d->errlen - (size_t)n, fmt, ap);
                va_end(ap);
        }
        return r;
}

uint64_t dec_be(const uint8_t *p, unsigned bytes)
{
        uint64_t v = 0;

        for (unsigned i = 0; i < bytes; i++)
                v = v << 8 | p[i];
        return v;
}

static void set_int(struct head *h, int64_t v)
{
        if (v < 0) {
                h->type = PV_INT;
                h->i = v;
        } else {
                h->type = PV_UINT;
                h->u = (uint64_t)v;
        }
}

/* Width of the length/count/value field that follows marker byte c, for the sized formats. */
static unsigned field_bytes(uint8_t c)
{
        switch (c) {
        case 0xc4: case 0xcc: case 0xd0: case 0xd9:
                return 1;
        case 0xc5: case 0xcd: case 0xd1: case 0xda: case 0xdc: case 0xde:
                return 2;
        case 0xc6: case 0xca: case 0xce: case 0xd2: case 0xdb: case 0xdd: case 0xdf:
                return 4;
        case 0xcb: case 0xcf: case 0xd3:
                return 8;
        }
        return 0;
}

/* Decode the header at pos: everything but a string's bytes and a container's elements. */
int dec_read_head(struct dec *d, size_t pos, struct head *h)
{
        const uint8_t *p = d->buf + pos;
        size_t left = d->len - pos;
        unsigned fb;
        uint64_t v;
        uint8_t c;

        if (!left)
                return fail(d, -EBADMSG, pos, "truncated: a value expected");
        c = p[0];
        memset(h, 0, sizeof(*h));
        h->size = 1;
        if (c <= 0x7f) {
                h->type = PV_UINT;
                h->u = c;
                return 0;
        }
        if (c >= 0xe0) {
                h->type = PV_INT;
                h->i = (int8_t)c;
                return 0;
        }
        if (c <= 0x8f || (c >= 0x90 && c <= 0x9f)) {
                h->type = c <= 0x8f ? PV_MAP : PV_ARRAY;
                h->n = c & 0x0f;
                return 0;
        }
        if (c <= 0xbf) {
                h->type = PV_STR;
                h->n = c & 0x1f;
                return 0;
        }
        switch (c) {
        case 0xc0:
                h->type = PV_NIL;
                return 0;
        case 0xc2: case 0xc3:
                h->type = PV_BOOL;
                h->b = c == 0xc3;
                return 0;
        case 0xc1:
                return fail(d, -EBADMSG, pos, "byte 0xc1 is never used in msgpack");
        case 0xc7: case 0xc8: case 0xc9:
        case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8:
                return fail(d, -EBADMSG, pos, "extension type 0x%02x is not accepted", c);
        }
        fb = field_bytes(c);
        if (left - 1 < fb)
                return fail(d, -EBADMSG, pos,
                            "truncated: header of type 0x%02x needs %u bytes, %zu left", c, fb + 1,
                            left);
        v = dec_be(p + 1, fb);
        h->size = 1 + fb;
        switch (c) {
        case 0xc4: case 0xc5: case 0xc6:
                h->type = PV_BIN;
                h->n = v;
                break;
        case 0xd9: case 0xda: case 0xdb:
                h->type = PV_STR;
                h->n = v;
                break;
        case 0xdc: case 0xdd:
                h->type = PV_ARRAY;
                h->n = v;
                break;
        case 0xde: case 0xdf:
                h->type = PV_MAP;
                h->n = v;
                break;
        case 0xca: {
                uint32_t bits = (uint32_t)v;
                float f;

                memcpy(&f, &bits, sizeof(f));
                h->type = PV_FLOAT;
                h->f = f;
                break;
        }
        case 0xcb:
                h->type = PV_FLOAT;
                memcpy(&h->f, &v, sizeof(h->f));
                break;
        case 0xcc: case 0xcd: case 0xce: case 0xcf:
                h->type = PV_UINT;
                h->u = v;
                break;
        case 0xd0:
                set_int(h, (int8_t)v);
                break;
        case 0xd1:
                set_int(h, (int16_t)v);
                break;
        case 0xd2:
                set_int(h, (int32_t)v);
                break;
        case 0xd3:
                set_int(h, (int64_t)v);
                break;
        }
        return 0;
}

/* Pass 1: check the value at *pos and everything in it; count the nodes. */
static int scan(struct dec *d, size_t *pos, unsigned depth)
{
        size_t at = *pos, left;
        uint64_t need;
        struct head h;
        int r;

        r = dec_read_head(d, at, &h);
        if (r < 0)
                return r;
        if (++d->nodes > d->max_nodes)
                return fail(d, -EMSGSIZE, at, "more than %zu values in the message", d->max_nodes);
        left = d->len - at - h.size;
        *pos = at + h.size;
        switch (h.type) {
        case PV_STR:
        case PV_BIN:
                if (h.n > left)
                        return fail(d, -EBADMSG, at, "truncated: %s of %llu bytes, %zu left",
                                    h.type == PV_STR ? "string" : "binary",
                                    (unsigned long long)h.n, left);
                if (h.n > d->max_str)
                        return fail(d, -EMSGSIZE, at, "%s of %llu bytes exceeds the limit of %u",
                                    h.type == PV_STR ? "string" : "binary",
                                    (unsigned long long)h.n, d->max_str);
                *pos += h.n;
                return 0;
        case PV_ARRAY:
        case PV_MAP:
                need = h.type == PV_MAP ? 2 * h.n : h.n;
                if (need > left)
                        return fail(d, -EBADMSG, at,
                                    "truncated: %s of %llu %s needs at least %llu bytes, %zu left",
                                    h.type == PV_MAP ? "map" : "array", (unsigned long long)h.n,
                                    h.type == PV_MAP ? "pairs" : "items",
                                    (unsigned long long)need, left);
                if (h.n > d->max_items)
                        return fail(d, -EMSGSIZE, at, "%s of %llu %s exceeds the limit of %u",
                                    h.type == PV_MAP ? "map" : "array", (unsigned long long)h.n,
                                    h.type == PV_MAP ? "pairs" : "items", d->max_items);
                if (depth + 1 > d->max_depth)
                        return fail(d, -EMSGSIZE, at, "nesting deeper than %u", d->max_depth);
                if (h.type == PV_MAP) {
                        d->pairs += h.n;
                        if (h.n > d->max_pairs)
                                d->max_pairs = h.n;
                }
                for (uint64_t i = 0; i < need; i++) {
                        r = scan(d, pos, depth + 1);
                        if (r < 0)
                                return r;
                }
                return 0;
        default:
                return 0;
        }
}

static int cmp_kv(const void *a, const void *b)
{
        const struct pv_kv *x = *(const struct pv_kv *const *)a;
        const struct pv_kv *y = *(const struct pv_kv *const *)b;

        return pv_cmp(x->key, y->key);
}

/* A map with two equal keys: the error names the key when it is a string (a name, usually). */
static int dup_key(struct dec *d, const struct pv *key, size_t at)
{
        char q[300];

        if (key->type != PV_STR)
                return fail(d, -EBADMSG, at, "map has a duplicate key");
        proto_quote(q, sizeof(q), key->s.ptr, key->s.len);
        return fail(d, -EBADMSG, at, "map has a duplicate key '%s'", q);
}

static int check_dups(struct dec *d, const struct pv_kv *kv, uint32_t n, size_t at)
{
        if (n <= DUP_PAIRWISE_MAX) {
                for (uint32_t i = 1; i < n; i++)
                        for (uint32_t j = 0; j < i; j++)
                                if (!pv_cmp(kv[i].key, kv[j].key))
                                        return dup_key(d, kv[i].key, at);
                return 0;
        }
        for (uint32_t i = 0; i < n; i++)
                d->scratch[i] = &kv[i];
        qsort(d->scratch, n, sizeof(*d->scratch), cmp_kv);
        for (uint32_t i = 1; i < n; i++)
                if (!pv_cmp(d->scratch[i]->key, d->scratch[i - 1]->key))
                        return dup_key(d, d->scratch[i]->key, at);
        return 0;
}

/* Pass 2: fill *out from the value at *pos, which pass 1 found well formed. */
static int fill(struct dec *d, size_t *pos, struct pv *out)
{
        size_t at = *pos;
        struct pv *items;
        struct pv_kv *kv;
        struct head h;
        int r;

        r = dec_read_head(d, at, &h);
        if (r < 0)
                return r;
        *pos = at + h.size;
        memset(out, 0, sizeof(*out));
        out->type = h.type;
        switch (h.type) {
        case PV_NIL:
                break;
        case PV_BOOL:
                out->b = h.b;
                break;
        case PV_INT:
                out->i = h.i;
                break;
        case PV_UINT:
                out->u = h.u;
                break;
        case PV_FLOAT:
                out->f = h.f;
                break;
        case PV_STR:
        case PV_BIN:
                out->s.ptr = (const char *)d->buf + *pos;
                out->s.len = (uint32_t)h.n;
                *pos += h.n;
                break;
        case PV_ARRAY:
                items = d->pool + d->pool_used;
                d->pool_used += h.n;
                out->a.items = items;
                out->a.n = (uint32_t)h.n;
                for (uint32_t i = 0; i < h.n; i++) {
                        r = fill(d, pos, &items[i]);
                        if (r < 0)
                                return r;
                }
                break;
        case PV_MAP:
                kv = d->kv + d->kv_used;
                d->kv_used += h.n;
                items = d->pool + d->pool_used;
                d->pool_used += 2 * h.n;
                out->m.kv = kv;
                out->m.n = (uint32_t)h.n;
                for (uint32_t i = 0; i < h.n; i++) {
                        kv[i].key = &items[2 * i];
                        kv[i].val = &items[2 * i + 1];
                        r = fill(d, pos, &items[2 * i]);
                        if (r < 0)
                                return r;
                        r = fill(d, pos, &items[2 * i + 1]);
                        if (r < 0)
                                return r;
                }
                return check_dups(d, kv, (uint32_t)h.n, at);
        }
        return 0;
}

void proto_limits_default(struct proto_limits *l)
{
        *l = (struct proto_limits){
                .max_msg = PROTO_MAX_MSG,
                .max_depth = PROTO_MAX_DEPTH,
                .max_str = PROTO_MAX_STR,
                .max_items = PROTO_MAX_ITEMS,
                .max_nodes = PROTO_MAX_NODES,
        };
}

static int alloc_doc(struct dec *d, struct pv_doc *doc)
{
        size_t bytes_pv = d->nodes * sizeof(struct pv);
        size_t bytes_kv = d->pairs * sizeof(struct pv_kv);
        char *mem;

        /* nodes and pairs are bounded by the message size: no overflow here. */
        mem = malloc(bytes_pv + bytes_kv);
        if (!mem)
                return -ENOMEM;
        doc->mem = mem;
        d->pool = (struct pv *)mem;
        d->kv = (struct pv_kv *)(mem + bytes_pv);
        if (d->max_pairs > DUP_PAIRWISE_MAX) {
                d->scratch = malloc(d->max_pairs * sizeof(*d->scratch));
                if (!d->scratch)
                        return -ENOMEM;
        }
        return 0;
}

int pv_decode(const void *buf, size_t len, const struct proto_limits *lim, struct pv_doc *doc,
              char *err, size_t errlen)
{
        struct proto_limits def;
        struct dec d;
        size_t pos = 0;
        int r;

        doc->root = NULL;
        doc->mem = NULL;
        if (err && errlen)
                err[0] = '\0';
        if (!lim) {
                proto_limits_default(&def);
                lim = &def;
        }
        d = (struct dec){
                .buf = buf,
                .len = len,
                .max_nodes = lim->max_nodes,
                .max_depth = lim->max_depth < DEPTH_HARD ? lim->max_depth : DEPTH_HARD,
                .max_str = lim->max_str,
                .max_items = lim->max_items,
                .err = err,
                .errlen = errlen,
        };
        if (len > lim->max_msg)
                return fail(&d, -EMSGSIZE, 0, "message of %zu bytes exceeds the limit of %zu", len,
                            lim->max_msg);
        r = scan(&d, &pos, 0);
        if (r < 0)
                return r;
        if (pos != len)
                return fail(&d, -EBADMSG, pos, "%zu trailing bytes after the value", len - pos);

        r = alloc_doc(&d, doc);
        if (r < 0) {
                fail(&d, r, 0, "out of memory for %zu values", d.nodes);
                goto out;
        }
        pos = 0;
        d.pool_used = 1;
        r = fill(&d, &pos, &d.pool[0]);
        if (r < 0)
                goto out;
        doc->root = &d.pool[0];
out:
        free(d.scratch);
        if (r < 0) {
                free(doc->mem);
                doc->mem = NULL;
        }
        return r;
}

void pv_doc_fini(struct pv_doc *doc)
{
        if (!doc)
                return;
        free(doc->mem);
        doc->mem = NULL;
        doc->root = NULL;
}
