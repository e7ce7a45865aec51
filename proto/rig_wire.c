/*
 * rig_wire: a remote rig's messages (rig_wire.h, PROTOCOL.md "Remote
 * rigs"). The only place their keys are spelled.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "proto/rig_wire.h"

static const char *const kinds[] = {
        [RIGW_HELLO] = "hello", [RIGW_WRITE] = "w", [RIGW_BEAT] = "beat", [RIGW_BYE] = "bye",
        [RIGW_PORTS] = "ports", [RIGW_POINT] = "pt", [RIGW_ERROR] = "err",
};
#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))

static void kind(struct pw *w, uint32_t n_fields, enum rigw_kind k)
{
        pw_reset(w);
        pw_map(w, n_fields + 1);
        pw_str(w, "t");
        pw_str(w, kinds[k]);
}

static void values(struct pw *w, const double *vals, uint32_t n)
{
        pw_str(w, "v");
        pw_array(w, n);
        for (uint32_t i = 0; i < n; i++)
                pw_f64(w, vals[i]);
}

void rigw_hello(struct pw *w, const char *token)
{
        kind(w, 1, RIGW_HELLO);
        pw_str(w, "token");
        pw_str(w, token);
}

void rigw_write(struct pw *w, uint64_t point, const double *vals, uint32_t n)
{
        kind(w, 2, RIGW_WRITE);
        pw_str(w, "p");
        pw_u64(w, point);
        values(w, vals, n);
}

void rigw_beat(struct pw *w)
{
        kind(w, 0, RIGW_BEAT);
}

void rigw_bye(struct pw *w, const char *message)
{
        kind(w, 1, RIGW_BYE);
        pw_str(w, "message");
        pw_str(w, message ? message : "");
}

static void ports(struct pw *w, const char *key, const struct rigw_port *p, uint32_t n)
{
        pw_str(w, key);
        pw_array(w, n);
        for (uint32_t i = 0; i < n; i++) {
                pw_array(w, 2);
                pw_strn(w, p[i].name.ptr, p[i].name.len);
                pw_strn(w, p[i].type.ptr, p[i].type.len);
        }
}

void rigw_ports(struct pw *w, const struct rigw_port *in, uint32_t n_in,
                const struct rigw_port *out, uint32_t n_out, uint32_t beat_ms)
{
        kind(w, 3, RIGW_PORTS);
        ports(w, "in", in, n_in);
        ports(w, "out", out, n_out);
        pw_str(w, "beatMs");
        pw_u64(w, beat_ms);
}

void rigw_point(struct pw *w, uint64_t point, double time, uint64_t skipped, const double *vals,
                uint32_t n)
{
        kind(w, 4, RIGW_POINT);
        pw_str(w, "p");
        pw_u64(w, point);
        pw_str(w, "time");
        pw_f64(w, time);
        pw_str(w, "skipped");
        pw_u64(w, skipped);
        values(w, vals, n);
}

void rigw_error(struct pw *w, const char *code, const char *message, uint64_t bad)
{
        kind(w, 3, RIGW_ERROR);
        pw_str(w, "code");
        pw_str(w, code);
        pw_str(w, "message");
        pw_str(w, message);
        pw_str(w, "bad");
        pw_u64(w, bad);
}

/* ---- Decoding ------------------------------------------------------------------------- */

static int bad(char *err, size_t errlen, const char *fmt, const char *what)
{
        snprintf(err, errlen, fmt, what);
        return -EBADMSG;
}

static int u64_at(const struct pv *m, const char *key, uint64_t *ret, char *err, size_t errlen)
{
        const struct pv *v = pv_get(m, key);

        if (!v || pv_u64(v, ret) < 0)
                return bad(err, errlen, "'%s': expected an unsigned integer", key);
        return 0;
}

static int str_at(const struct pv *m, const char *key, struct proto_str *ret, char *err,
                  size_t errlen)
{
        const struct pv *v = pv_get(m, key);

        if (!v || v->type != PV_STR)
                return bad(err, errlen, "'%s': expected a string", key);
        *ret = (struct proto_str){ v->s.ptr, v->s.len };
        return 0;
}

static int vals_at(const struct pv *m, double *vals, uint32_t max, uint32_t *ret_n, char *err,
                   size_t errlen)
{
        const struct pv *v = pv_get(m, "v");

        if (!v || v->type != PV_ARRAY)
                return bad(err, errlen, "'%s': expected an array of numbers", "v");
        if (v->a.n > max) {
                snprintf(err, errlen, "'v': %u values, at most %u", v->a.n, max);
                return -EBADMSG;
        }
        for (uint32_t i = 0; i < v->a.n; i++) {
                const struct pv *x = &v->a.items[i];

                if (x->type == PV_BOOL)
                        vals[i] = x->b;
                else if (pv_f64(x, &vals[i]) < 0) {
                        snprintf(err, errlen, "'v'[%u]: expected a number", i);
                        return -EBADMSG;
                }
        }
        *ret_n = v->a.n;
        return 0;
}

static int ports_at(const struct pv *m, const char *key, struct rigw_port *p, uint32_t *ret_n,
                    char *err, size_t errlen)
{
        const struct pv *v = pv_get(m, key);

        if (!v || v->type != PV_ARRAY || v->a.n > RIGW_MAX_PORTS || (v->a.n && !p)) {
                snprintf(err, errlen, "'%s': expected an array of at most %u [name, type]", key,
                         RIGW_MAX_PORTS);
                return -EBADMSG;
        }
        for (uint32_t i = 0; i < v->a.n; i++) {
                const struct pv *e = &v->a.items[i];

                if (e->type != PV_ARRAY || e->a.n != 2 || e->a.items[0].type != PV_STR ||
                    e->a.items[1].type != PV_STR || e->a.items[0].s.len == 0 ||
                    e->a.items[0].s.len >= RIGW_NAME_MAX || e->a.items[1].s.len >= RIGW_TYPE_MAX ||
                    memchr(e->a.items[0].s.ptr, 0, e->a.items[0].s.len)) {
                        snprintf(err, errlen, "'%s': a port is [name, type], the name 1 to "
                                 "%u bytes without NUL", key, RIGW_NAME_MAX - 1);
                        return -EBADMSG;
                }
                p[i].name = (struct proto_str){ e->a.items[0].s.ptr, e->a.items[0].s.len };
                p[i].type = (struct proto_str){ e->a.items[1].s.ptr, e->a.items[1].s.len };
        }
        *ret_n = v->a.n;
        return 0;
}

int rigw_decode(const void *buf, size_t len, struct rigw_msg *m, double *vals, uint32_t max,
                struct rigw_port *in, struct rigw_port *out, struct pv_doc *doc, char *err,
                size_t errlen)
{
        const struct proto_limits lim = {
                .max_msg = RIGW_MAX_MSG, .max_depth = 4, .max_str = RIGW_MAX_MSG,
                .max_items = 2 * RIGW_MAX_PORTS, .max_nodes = 8 * RIGW_MAX_PORTS + 64,
        };
        const struct pv *root, *t;
        int r;

        *m = (struct rigw_msg){ 0 };
        if (len > RIGW_MAX_MSG) {
                snprintf(err, errlen, "a message of %zu bytes, at most %u", len, RIGW_MAX_MSG);
                return -EMSGSIZE;
        }
        r = pv_decode(buf, len, &lim, doc, err, errlen);
        if (r < 0)
                return r;
        root = doc->root;
        t = root && root->type == PV_MAP ? pv_get(root, "t") : NULL;
        if (!t || t->type != PV_STR)
                return bad(err, errlen, "%s", "a message is a map with a string 't'");
        for (size_t k = 1; k < N_KINDS; k++)
                if (pv_is_str(t, kinds[k]))
                        m->kind = (enum rigw_kind)k;
        switch (m->kind) {
        case RIGW_HELLO:
                return str_at(root, "token", &m->token, err, errlen);
        case RIGW_WRITE:
                r = u64_at(root, "p", &m->point, err, errlen);
                return r < 0 ? r : vals_at(root, vals, max, &m->n, err, errlen);
        case RIGW_BEAT:
                return 0;
        case RIGW_BYE:
                m->message = (struct proto_str){ "", 0 };
                return pv_get(root, "message") ? str_at(root, "message", &m->message, err,
                                                        errlen) : 0;
        case RIGW_PORTS: {
                uint64_t beat = RIGW_BEAT_MS_DEFAULT;

                if (pv_get(root, "beatMs") && (r = u64_at(root, "beatMs", &beat, err, errlen)) < 0)
                        return r;
                if (beat < 1 || beat > RIGW_BEAT_MS_MAX)
                        return bad(err, errlen, "'%s': expected 1 to 60000", "beatMs");
                m->beat_ms = (uint32_t)beat;
                r = ports_at(root, "in", in, &m->n_in, err, errlen);
                return r < 0 ? r : ports_at(root, "out", out, &m->n_out, err, errlen);
        }
        case RIGW_POINT: {
                const struct pv *tm = pv_get(root, "time");

                if (!tm || pv_f64(tm, &m->time) < 0)
                        return bad(err, errlen, "'%s': expected a number", "time");
                if ((r = u64_at(root, "p", &m->point, err, errlen)) < 0 ||
                    (r = u64_at(root, "skipped", &m->skipped, err, errlen)) < 0)
                        return r;
                return vals_at(root, vals, max, &m->n, err, errlen);
        }
        case RIGW_ERROR:
                if ((r = str_at(root, "code", &m->code, err, errlen)) < 0 ||
                    (r = str_at(root, "message", &m->message, err, errlen)) < 0)
                        return r;
                return u64_at(root, "bad", &m->bad, err, errlen);
        }
        return bad(err, errlen, "%s", "'t': not a kind of rig message");
}

bool rigw_token_eq(const char *a, const char *b)
{
        unsigned char d = 0;

        for (unsigned i = 0; i < RIGW_TOKEN_LEN; i++)
                d |= (unsigned char)(a[i] ^ b[i]);
        return d == 0;
}
