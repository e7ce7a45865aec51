/*
 * pv: looking into a decoded value (proto.h): map lookup, comparison and
 * conversions that never lose information.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "proto/proto_int.h"

const struct pv *pv_get(const struct pv *m, const char *key)
{
        size_t len;

        if (!m || m->type != PV_MAP || !key)
                return NULL;
        len = strlen(key);
        /* O(pairs); requests have a handful of keys. */
        for (uint32_t i = 0; i < m->m.n; i++) {
                const struct pv *k = m->m.kv[i].key;

                if (k->type == PV_STR && k->s.len == len && !memcmp(k->s.ptr, key, len))
                        return m->m.kv[i].val;
        }
        return NULL;
}

bool pv_is_str(const struct pv *v, const char *s)
{
        size_t len;

        if (!v || v->type != PV_STR || !s)
                return false;
        len = strlen(s);
        return v->s.len == len && !memcmp(v->s.ptr, s, len);
}

static int cmp_u64(uint64_t a, uint64_t b)
{
        return a < b ? -1 : a > b;
}

int pv_cmp(const struct pv *a, const struct pv *b)
{
        uint64_t x, y;
        int r;

        if (a->type != b->type)
                return a->type < b->type ? -1 : 1;
        switch (a->type) {
        case PV_NIL:
                return 0;
        case PV_BOOL:
                return (int)a->b - (int)b->b;
        case PV_INT:
                return a->i < b->i ? -1 : a->i > b->i;
        case PV_UINT:
                return cmp_u64(a->u, b->u);
        case PV_FLOAT:
                /* By bit pattern: a total order in which equal means identical. */
                memcpy(&x, &a->f, sizeof(x));
                memcpy(&y, &b->f, sizeof(y));
                return cmp_u64(x, y);
        case PV_STR:
        case PV_BIN:
                if (a->s.len != b->s.len)
                        return cmp_u64(a->s.len, b->s.len);
                return a->s.len ? memcmp(a->s.ptr, b->s.ptr, a->s.len) : 0;
        case PV_ARRAY:
                if (a->a.n != b->a.n)
                        return cmp_u64(a->a.n, b->a.n);
                for (uint32_t i = 0; i < a->a.n; i++) {
                        r = pv_cmp(&a->a.items[i], &b->a.items[i]);
                        if (r)
                                return r;
                }
                return 0;
        case PV_MAP:
                if (a->m.n != b->m.n)
                        return cmp_u64(a->m.n, b->m.n);
                for (uint32_t i = 0; i < a->m.n; i++) {
                        r = pv_cmp(a->m.kv[i].key, b->m.kv[i].key);
                        if (!r)
                                r = pv_cmp(a->m.kv[i].val, b->m.kv[i].val);
                        if (r)
                                return r;
                }
                return 0;
        }
        return 0;
}

bool pv_equal(const struct pv *a, const struct pv *b)
{
        return pv_cmp(a, b) == 0;
}

int pv_u64(const struct pv *v, uint64_t *ret)
{
        if (!v || v->type != PV_UINT)
                return -EPROTOTYPE;
        *ret = v->u;
        return 0;
}

int pv_i64(const struct pv *v, int64_t *ret)
{
        if (!v)
                return -EPROTOTYPE;
        if (v->type == PV_INT) {
                *ret = v->i;
                return 0;
        }
        if (v->type == PV_UINT && v->u <= INT64_MAX) {
                *ret = (int64_t)v->u;
                return 0;
        }
        return -EPROTOTYPE;
}

int pv_f64(const struct pv *v, double *ret)
{
        double d;

        if (!v)
                return -EPROTOTYPE;
        switch (v->type) {
        case PV_FLOAT:
                *ret = v->f;
                return 0;
        case PV_UINT:
                d = (double)v->u;
                /* 2^64 does not convert back: test before the cast. */
                if (d >= 18446744073709551616.0 || (uint64_t)d != v->u)
                        return -EPROTOTYPE;
                *ret = d;
                return 0;
        case PV_INT:
                d = (double)v->i;
                /* 2^63 does not convert back either. */
                if (d >= 9223372036854775808.0 || (int64_t)d != v->i)
                        return -EPROTOTYPE;
                *ret = d;
                return 0;
        default:
                return -EPROTOTYPE;
        }
}

int pv_bool(const struct pv *v, bool *ret)
{
        if (!v || v->type != PV_BOOL)
                return -EPROTOTYPE;
        *ret = v->b;
        return 0;
}

char *pv_strdup(const struct pv *v)
{
        char *s;

        if (!v || v->type != PV_STR)
                return NULL;
        if (has_nul(v->s.ptr, v->s.len))
                return NULL;
        s = malloc((size_t)v->s.len + 1);
        if (!s)
                return NULL;
        if (v->s.len)
                memcpy(s, v->s.ptr, v->s.len);
        s[v->s.len] = '\0';
        return s;
}
