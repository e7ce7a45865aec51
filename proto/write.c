/*
 * write: struct pw, msgpack-c's packer writing into a growing buffer.
 *
 * DESIGN: the first failure (out of memory, a string too long for msgpack)
 * sticks in w->error and every later call does nothing, so an encoder
 * writes a whole message and checks once at the end (pw_take() returns
 * NULL). msgpack-c is trusted for encoding only; decoding is decode.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

#include "proto/proto.h"

struct pw_priv {
        msgpack_sbuffer sbuf;
        msgpack_packer pk;
};

static msgpack_packer *pk(struct pw *w)
{
        if (w->error || !w->priv)
                return NULL;
        return &((struct pw_priv *)w->priv)->pk;
}

static void check(struct pw *w, int r)
{
        if (r && !w->error)
                w->error = -ENOMEM;
}

int pw_init(struct pw *w)
{
        struct pw_priv *p = calloc(1, sizeof(*p));

        w->priv = p;
        w->error = 0;
        if (!p) {
                w->error = -ENOMEM;
                return -ENOMEM;
        }
        msgpack_sbuffer_init(&p->sbuf);
        msgpack_packer_init(&p->pk, &p->sbuf, msgpack_sbuffer_write);
        return 0;
}

void pw_fini(struct pw *w)
{
        struct pw_priv *p;

        if (!w)
                return;
        p = w->priv;
        if (p) {
                msgpack_sbuffer_destroy(&p->sbuf);
                free(p);
        }
        w->priv = NULL;
        w->error = -ENOMEM;
}

void pw_reset(struct pw *w)
{
        struct pw_priv *p = w->priv;

        if (!p)
                return;
        msgpack_sbuffer_clear(&p->sbuf);
        w->error = 0;
}

const void *pw_data(const struct pw *w)
{
        const struct pw_priv *p = w->priv;

        return p ? p->sbuf.data : NULL;
}

size_t pw_size(const struct pw *w)
{
        const struct pw_priv *p = w->priv;

        return p ? p->sbuf.size : 0;
}

void *pw_take(struct pw *w, size_t *ret_len)
{
        struct pw_priv *p = w->priv;
        size_t len;
        char *buf;

        if (!p || w->error) {
                pw_reset(w);
                return NULL;
        }
        len = p->sbuf.size;
        buf = msgpack_sbuffer_release(&p->sbuf);
        if (!buf) {
                /* Nothing written: still a buffer the caller can free(). */
                buf = malloc(1);
                if (!buf)
                        return NULL;
        }
        *ret_len = len;
        return buf;
}

void pw_map(struct pw *w, uint32_t n)
{
        if (pk(w))
                check(w, msgpack_pack_map(pk(w), n));
}

void pw_array(struct pw *w, uint32_t n)
{
        if (pk(w))
                check(w, msgpack_pack_array(pk(w), n));
}

void pw_nil(struct pw *w)
{
        if (pk(w))
                check(w, msgpack_pack_nil(pk(w)));
}

void pw_bool(struct pw *w, bool v)
{
        if (pk(w))
                check(w, v ? msgpack_pack_true(pk(w)) : msgpack_pack_false(pk(w)));
}

void pw_i64(struct pw *w, int64_t v)
{
        if (pk(w))
                check(w, msgpack_pack_int64(pk(w), v));
}

void pw_u64(struct pw *w, uint64_t v)
{
        if (pk(w))
                check(w, msgpack_pack_uint64(pk(w), v));
}

void pw_f64(struct pw *w, double v)
{
        if (pk(w))
                check(w, msgpack_pack_double(pk(w), v));
}

void pw_strn(struct pw *w, const char *s, size_t len)
{
        if (!pk(w))
                return;
        if (len > UINT32_MAX) {
                w->error = -EMSGSIZE;
                return;
        }
        check(w, msgpack_pack_str_with_body(pk(w), len ? s : "", len));
}

void pw_str(struct pw *w, const char *s)
{
        if (!s)
                pw_nil(w);
        else
                pw_strn(w, s, strlen(s));
}

void pw_bin(struct pw *w, const void *p, size_t len)
{
        if (!pk(w))
                return;
        if (len > UINT32_MAX) {
                w->error = -EMSGSIZE;
                return;
        }
        check(w, msgpack_pack_bin_with_body(pk(w), len ? p : "", len));
}

void pw_raw(struct pw *w, const void *p, size_t len)
{
        if (!pk(w) || !len)
                return;
        check(w, msgpack_sbuffer_write(&((struct pw_priv *)w->priv)->sbuf, p, len));
}

void pw_pv(struct pw *w, const struct pv *v)
{
        if (!pk(w))
                return;
        switch (v->type) {
        case PV_NIL:
                pw_nil(w);
                break;
        case PV_BOOL:
                pw_bool(w, v->b);
                break;
        case PV_INT:
                pw_i64(w, v->i);
                break;
        case PV_UINT:
                pw_u64(w, v->u);
                break;
        case PV_FLOAT:
                pw_f64(w, v->f);
                break;
        case PV_STR:
                pw_strn(w, v->s.ptr, v->s.len);
                break;
        case PV_BIN:
                pw_bin(w, v->s.ptr, v->s.len);
                break;
        case PV_ARRAY:
                pw_array(w, v->a.n);
                for (uint32_t i = 0; i < v->a.n; i++)
                        pw_pv(w, &v->a.items[i]);
                break;
        case PV_MAP:
                pw_map(w, v->m.n);
                for (uint32_t i = 0; i < v->m.n; i++) {
                        pw_pv(w, v->m.kv[i].key);
                        pw_pv(w, v->m.kv[i].val);
                }
                break;
        }
}
