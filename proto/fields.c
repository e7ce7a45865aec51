/*
 * fields: the table-driven codec of an operation's plain keys (proto_int.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "proto/proto_int.h"

int proto_fail(char *err, size_t errlen, const char *fmt, ...)
{
        va_list ap;

        if (err && errlen) {
                va_start(ap, fmt);
                vsnprintf(err, errlen, fmt, ap);
                va_end(ap);
        }
        return -EBADMSG;
}

void proto_quote(char *dst, size_t dstlen, const char *s, size_t len)
{
        size_t o = 0;

        if (!dstlen)
                return;
        for (size_t i = 0; i < len && i < 64; i++) {
                unsigned char c = (unsigned char)s[i];

                if (o + 5 >= dstlen)
                        break;
                if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'')
                        dst[o++] = (char)c;
                else
                        o += (size_t)snprintf(dst + o, dstlen - o, "\\x%02x", c);
        }
        if (len > 64 && o + 4 < dstlen) {
                memcpy(dst + o, "...", 3);
                o += 3;
        }
        dst[o] = '\0';
}

bool has_nul(const char *s, uint32_t len)
{
        return len && memchr(s, '\0', len);
}

struct proto_str proto_str_of(const struct pv *v)
{
        if (!v || v->type != PV_STR || !v->s.len)
                return (struct proto_str){ "", 0 };
        return (struct proto_str){ v->s.ptr, v->s.len };
}

void pw_pstr(struct pw *w, struct proto_str s)
{
        pw_strn(w, s.ptr ? s.ptr : "", s.ptr ? s.len : 0);
}

static const struct field *find(const struct field *f, size_t n, const struct pv *key)
{
        for (size_t i = 0; i < n; i++)
                if (pv_is_str(key, f[i].key))
                        return &f[i];
        return NULL;
}

static int check_unknown(const struct pv *map, const char *what, const struct field *f, size_t n,
                         char *err, size_t errlen)
{
        char q[300];

        for (uint32_t i = 0; i < map->m.n; i++) {
                const struct pv *k = map->m.kv[i].key;

                if (k->type != PV_STR)
                        return proto_fail(err, errlen, "%s: a key that is not a string", what);
                if (!find(f, n, k)) {
                        proto_quote(q, sizeof(q), k->s.ptr, k->s.len);
                        return proto_fail(err, errlen, "%s: unknown key '%s'", what, q);
                }
        }
        return 0;
}

static int decode_num(const struct pv *v, const struct field *f, char *p, const char *what,
                      char *err, size_t errlen)
{
        uint64_t u;
        int64_t i;
        double d;

        switch (f->type) {
        case FT_U64:
        case FT_U32:
                if (pv_u64(v, &u) < 0)
                        return proto_fail(err, errlen, "%s.%s: expected a non-negative integer",
                                          what, f->key);
                if (f->type == FT_U32) {
                        if (u > UINT32_MAX)
                                return proto_fail(err, errlen, "%s.%s: %llu is out of range",
                                                  what, f->key, (unsigned long long)u);
                        *(uint32_t *)(void *)p = (uint32_t)u;
                } else {
                        *(uint64_t *)(void *)p = u;
                }
                return 0;
        case FT_I64:
                if (pv_i64(v, &i) < 0)
                        return proto_fail(err, errlen, "%s.%s: expected an integer", what, f->key);
                *(int64_t *)(void *)p = i;
                return 0;
        default:
                if (pv_f64(v, &d) < 0)
                        return proto_fail(err, errlen, "%s.%s: expected a number", what, f->key);
                if (((f->flags & (FF_NOTNAN | FF_FINITE)) && isnan(d)) ||
                    ((f->flags & FF_FINITE) && !isfinite(d)))
                        return proto_fail(err, errlen, "%s.%s: expected a finite number", what,
                                          f->key);
                if ((f->flags & FF_NONNEG) && d < 0)
                        return proto_fail(err, errlen, "%s.%s: negative", what, f->key);
                *(double *)(void *)p = d;
                return 0;
        }
}

static int decode_one(const struct pv *v, const struct field *f, char *base, const char *what,
                      char *err, size_t errlen)
{
        char *p = base + f->off;
        int e;

        switch (f->type) {
        case FT_STR:
                if (v->type != PV_STR)
                        return proto_fail(err, errlen, "%s.%s: expected a string", what, f->key);
                if ((f->flags & (FF_NAME | FF_PATH)) && has_nul(v->s.ptr, v->s.len))
                        return proto_fail(err, errlen, "%s.%s: embedded NUL", what, f->key);
                if ((f->flags & FF_PATH) && v->s.len && v->s.ptr[0] != '/')
                        return proto_fail(err, errlen, "%s.%s: not an absolute path", what, f->key);
                *(struct proto_str *)(void *)p = proto_str_of(v);
                return 0;
        case FT_STATE:
        case FT_LSTATE:
                if (v->type != PV_STR)
                        return proto_fail(err, errlen, "%s.%s: expected a string", what, f->key);
                e = f->type == FT_STATE ? proto_state_parse(v->s.ptr, v->s.len) :
                                          proto_layer_state_parse(v->s.ptr, v->s.len);
                if (e < 0)
                        return proto_fail(err, errlen, "%s.%s: unknown state", what, f->key);
                if (f->type == FT_STATE)
                        *(enum proto_state *)(void *)p = (enum proto_state)e;
                else
                        *(enum proto_layer_state *)(void *)p = (enum proto_layer_state)e;
                return 0;
        case FT_BOOL:
                if (pv_bool(v, (bool *)(void *)p) < 0)
                        return proto_fail(err, errlen, "%s.%s: expected a boolean", what, f->key);
                return 0;
        case FT_EXT:
                return 0;
        default:
                return decode_num(v, f, p, what, err, errlen);
        }
}

int fields_decode(const struct pv *map, const char *what, const struct field *f, size_t n,
                  void *base, bool strict, char *err, size_t errlen)
{
        int r;

        if (!map || map->type != PV_MAP)
                return proto_fail(err, errlen, "%s: expected a map", what);
        if (strict) {
                r = check_unknown(map, what, f, n, err, errlen);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < n; i++) {
                const struct pv *v = pv_get(map, f[i].key);

                if (!v) {
                        if (f[i].flags & FF_REQ)
                                return proto_fail(err, errlen, "%s.%s: missing", what, f[i].key);
                        if (f[i].type == FT_STR)
                                *(struct proto_str *)(void *)((char *)base + f[i].off) =
                                        (struct proto_str){ "", 0 };
                        continue;
                }
                r = decode_one(v, &f[i], base, what, err, errlen);
                if (r < 0)
                        return r;
                if (f[i].has != NO_HAS && f[i].type != FT_EXT)
                        *(bool *)((char *)base + f[i].has) = true;
        }
        return 0;
}

static bool omitted(const struct field *f, const char *base)
{
        if (f->type == FT_EXT)
                return true;
        if (!(f->flags & FF_OMIT))
                return false;
        if (f->has != NO_HAS)
                return !*(const bool *)(base + f->has);
        if (f->type == FT_BOOL)
                return !*(const bool *)(base + f->off);
        if (f->type == FT_STR) {
                const struct proto_str *s = (const void *)(base + f->off);

                return !s->ptr || !s->len;
        }
        return false;
}

uint32_t fields_count(const struct field *f, size_t n, const void *base)
{
        uint32_t c = 0;

        for (size_t i = 0; i < n; i++)
                if (!omitted(&f[i], base))
                        c++;
        return c;
}

void fields_encode(struct pw *w, const struct field *f, size_t n, const void *base)
{
        const char *b = base;

        for (size_t i = 0; i < n; i++) {
                const void *p = b + f[i].off;

                if (omitted(&f[i], b))
                        continue;
                pw_str(w, f[i].key);
                switch (f[i].type) {
                case FT_U64:
                        pw_u64(w, *(const uint64_t *)p);
                        break;
                case FT_U32:
                        pw_u64(w, *(const uint32_t *)p);
                        break;
                case FT_I64:
                        pw_i64(w, *(const int64_t *)p);
                        break;
                case FT_F64:
                        pw_f64(w, *(const double *)p);
                        break;
                case FT_STR:
                        pw_pstr(w, *(const struct proto_str *)p);
                        break;
                case FT_STATE:
                        pw_str(w, proto_state_name(*(const enum proto_state *)p));
                        break;
                case FT_LSTATE:
                        pw_str(w, proto_layer_state_name(*(const enum proto_layer_state *)p));
                        break;
                case FT_BOOL:
                        pw_bool(w, *(const bool *)p);
                        break;
                case FT_EXT:
                        break;
                }
        }
}

int strs_check(const struct pv *v, const char *what, const char *key, uint32_t max, char *err,
               size_t errlen)
{
        if (!v)
                return 0;
        if (v->type != PV_ARRAY)
                return proto_fail(err, errlen, "%s.%s: expected an array of strings", what, key);
        if (v->a.n > max)
                return proto_fail(err, errlen, "%s.%s: more than %u entries", what, key, max);
        for (uint32_t i = 0; i < v->a.n; i++) {
                const struct pv *s = &v->a.items[i];

                if (s->type != PV_STR)
                        return proto_fail(err, errlen, "%s.%s[%u]: expected a string", what, key,
                                          i);
                if (has_nul(s->s.ptr, s->s.len))
                        return proto_fail(err, errlen, "%s.%s[%u]: embedded NUL", what, key, i);
        }
        return (int)v->a.n;
}

void strs_fill(const struct pv *v, struct proto_str *out)
{
        for (uint32_t i = 0; v && i < v->a.n; i++)
                out[i] = proto_str_of(&v->a.items[i]);
}

void strs_encode(struct pw *w, const char *key, const struct proto_str *s, uint32_t n)
{
        pw_str(w, key);
        pw_array(w, n);
        for (uint32_t i = 0; i < n; i++)
                pw_pstr(w, s[i]);
}

void res_encode(struct pw *w, const struct field *f, size_t n, const void *base, uint32_t n_ext)
{
        pw_map(w, fields_count(f, n, base) + n_ext);
        fields_encode(w, f, n, base);
}

int res_decode(const struct pv *v, const char *what, const struct field *f, size_t n, void *base,
               char *err, size_t errlen)
{
        return fields_decode(v, what, f, n, base, false, err, errlen);
}

bool pstr_is(struct proto_str s, const char *lit)
{
        size_t len = strlen(lit);

        return s.len == len && (!len || !memcmp(s.ptr, lit, len));
}
