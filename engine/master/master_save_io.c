/*
 * master_save_io: the master's saved state (master_save_int.h) as bytes
 * and back, for a snapshot that leaves the daemon and comes back to a
 * session of the same scenario (master.h, master_saved_encode()).
 *
 * DESIGN: fixed-width little-endian fields in the order of the structs,
 * doubles by their bits, so that a decoded state restores bit for bit.
 * Every count the bytes carry (instances, blocks, their types and element
 * counts, derivatives, Clocks and their value references) is written and
 * checked on decode against the master it is decoded for: a state of
 * another shape is refused before anything is allocated after it, and
 * every length is checked against the bytes left, so a hostile input
 * allocates at most about its own size. The values themselves are the
 * master's own (no index is taken from them); the current time must be a
 * number, and the point within this master's grid.
 *
 * Threads: as master_save().
 */
#include "engine/master/master_int.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/master/master_save_int.h"
#include "engine/master/master_value.h"

#define SAVE_IO_VERSION         2u

struct wbuf {
        uint8_t *p;
        size_t len, cap;
        bool oom;
};

static void put(struct wbuf *w, const void *src, size_t n)
{
        if (w->oom)
                return;
        if (n > w->cap - w->len) {
                size_t cap = w->cap ? w->cap : 256;
                uint8_t *q;

                while (cap - w->len < n)
                        cap *= 2;
                q = realloc(w->p, cap);
                if (!q) {
                        w->oom = true;
                        return;
                }
                w->p = q;
                w->cap = cap;
        }
        if (n)
                memcpy(w->p + w->len, src, n);
        w->len += n;
}

static void put_u64(struct wbuf *w, uint64_t v)
{
        uint8_t b[8];

        for (int i = 0; i < 8; i++)
                b[i] = (uint8_t)(v >> (8 * i));
        put(w, b, 8);
}

static void put_f64(struct wbuf *w, double d)
{
        uint64_t v;

        memcpy(&v, &d, sizeof(v));
        put_u64(w, v);
}

struct rbuf {
        const uint8_t *p;
        size_t len, off;
        char *msg;
        size_t size;
        bool bad;
};

static int fail(struct rbuf *r, const char *fmt, ...)
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

static const uint8_t *take(struct rbuf *r, size_t n)
{
        const uint8_t *q;

        if (r->bad)
                return NULL;
        if (n > r->len - r->off) {
                fail(r, "master state: truncated at byte %zu (%zu more wanted, %zu left)", r->off,
                     n, r->len - r->off);
                return NULL;
        }
        q = r->p + r->off;
        r->off += n;
        return q;
}

static uint64_t get_u64(struct rbuf *r)
{
        const uint8_t *b = take(r, 8);
        uint64_t v = 0;

        for (int i = 0; b && i < 8; i++)
                v |= (uint64_t)b[i] << (8 * i);
        return v;
}

static double get_f64(struct rbuf *r)
{
        uint64_t v = get_u64(r);
        double d;

        memcpy(&d, &v, sizeof(d));
        return d;
}

static bool get_bool(struct rbuf *r)
{
        uint64_t v = get_u64(r);

        if (v > 1)
                fail(r, "master state: a flag of %llu at byte %zu", (unsigned long long)v,
                     r->off - 8);
        return v == 1;
}

/* A count that must be want (what the master has). */
static bool get_count(struct rbuf *r, uint64_t want, const char *what, const char *name)
{
        uint64_t v = get_u64(r);

        if (!r->bad && v != want)
                fail(r, "master state: %s%s%s has %llu %s, the session's %llu",
                     name ? "component '" : "the master", name ? name : "", name ? "'" : "",
                     (unsigned long long)v, what, (unsigned long long)want);
        return !r->bad;
}

static bool is_blob(enum md_type t)
{
        return t == MD_STRING || t == MD_BINARY;
}

/* ---- encode -------------------------------------------------------------------- */

static void block_put(struct wbuf *w, const struct saved_block *d, const struct mblock *b)
{
        bool have = is_blob(b->type) ? d->blobs != NULL : d->vals != NULL;

        put_u64(w, (uint64_t)b->type);
        put_u64(w, b->n);
        put_u64(w, have);
        if (!have)
                return;
        if (!is_blob(b->type)) {
                put(w, d->vals, b->n * mv_size(b->type));
                return;
        }
        for (size_t j = 0; j < b->n; j++) {
                put_u64(w, d->sizes[j]);
                put(w, d->blobs[j], d->sizes[j]);
        }
}

static void clock_put(struct wbuf *w, const struct mclock *c)
{
        put_u64(w, c->vr);
        put_u64(w, c->fraction);
        put_u64(w, c->num);
        put_u64(w, c->res);
        put_u64(w, c->step);
        put_f64(w, c->base);
        put_f64(w, c->interval);
        put_u64(w, c->k);
        put_f64(w, c->next);
        put_u64(w, c->ticks);
        put_u64(w, c->due);
        put_u64(w, c->pending);
}

static void inst_put(struct wbuf *w, const struct saved_inst *si, const struct mi *mi)
{
        const double times[] = { si->t, si->reached, si->from, si->aim, si->goal,
                                 si->next_event, si->t_pub, si->t_der, si->clock_next };

        for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++)
                put_f64(w, times[i]);
        put_u64(w, si->k);
        put_u64(w, si->pending);
        put_u64(w, si->event);
        put_u64(w, si->terminate);
        put_u64(w, si->stats.steps);
        put_u64(w, si->stats.ns_total);
        put_u64(w, si->stats.ns_max);
        put_u64(w, si->stats.ns_service);
        put_u64(w, mi->n_out);
        for (size_t b = 0; b < mi->n_out; b++) {
                block_put(w, &si->next[b], &mi->next[b]);
                block_put(w, &si->pub[b], &mi->pub[b]);
        }
        put_u64(w, mi->n_der_vals);
        for (size_t j = 0; j < mi->n_der_vals; j++)
                put_f64(w, si->der_vals[j]);
        put_u64(w, mi->n_clocks);
        for (size_t j = 0; j < mi->n_clocks; j++)
                clock_put(w, &si->clocks[j]);
        put_u64(w, mi->n_oclocks);
        for (size_t j = 0; j < mi->n_oclocks; j++)
                put_u64(w, si->oclock_ticks[j]);
        put_u64(w, si->any_ahead);
        put_u64(w, mi->ticked.n);
        for (size_t j = 0; j < mi->ticked.n; j++)
                put_u64(w, si->ticked_ahead[j]);
}

int master_saved_encode(const struct master *m, const struct master_saved *s, uint8_t **ret,
                        size_t *ret_len)
{
        struct wbuf w = { 0 };
        size_t msg_len;

        if (!m || !s || !ret || !ret_len || s->m != m || s->n != m->n)
                return -EINVAL;
        msg_len = strnlen(s->msg, sizeof(s->msg) - 1);
        put_u64(&w, SAVE_IO_VERSION);
        put_u64(&w, m->n);
        put_u64(&w, (uint64_t)s->state);
        put_u64(&w, s->pt);
        put_f64(&w, s->t_cur);
        put_f64(&w, s->t_next);
        put_u64(&w, s->at_grid);
        put_u64(&w, s->zero_meets);
        put_u64(&w, s->extra_run);
        put_u64(&w, s->points);
        put_u64(&w, s->extra_points);
        put_u64(&w, s->events);
        put_u64(&w, s->restores);
        put_u64(&w, s->wall_ns);
        put_u64(&w, msg_len);
        put(&w, s->msg, msg_len);
        for (size_t i = 0; i < m->n; i++)
                inst_put(&w, &s->insts[i], &m->mi[i]);
        if (w.oom) {
                free(w.p);
                return -ENOMEM;
        }
        *ret = w.p;
        *ret_len = w.len;
        return 0;
}

/* ---- decode -------------------------------------------------------------------- */

static int block_get(struct rbuf *r, struct saved_block *d, const struct mblock *b,
                     const char *name, bool need)
{
        uint64_t type = get_u64(r), n = get_u64(r);
        bool have = get_bool(r);
        size_t k;

        if (r->bad)
                return -EBADMSG;
        if (type != (uint64_t)b->type)
                return fail(r, "master state: component '%s' has an output block of type %llu "
                            "where the session's is %s: a snapshot of another scenario", name,
                            (unsigned long long)type, md_type_name(b->type));
        if (n != b->n)
                return fail(r, "master state: component '%s': the snapshot holds %llu %s "
                            "output values where this session holds %zu: it was taken with "
                            "other array sizes (structural parameters) or of another scenario",
                            name, (unsigned long long)n, md_type_name(b->type), b->n);
        if (need && !have)
                return fail(r, "master state: component '%s' lacks the values of an output "
                            "block", name);
        if (!have)
                return 0;
        k = b->n ? b->n : 1;
        if (!is_blob(b->type)) {
                const uint8_t *q = take(r, b->n * mv_size(b->type));

                if (!q)
                        return -EBADMSG;
                d->vals = malloc(k * mv_size(b->type));
                if (!d->vals)
                        return -ENOMEM;
                memcpy(d->vals, q, b->n * mv_size(b->type));
                return 0;
        }
        d->blobs = calloc(k, sizeof(*d->blobs));
        d->sizes = calloc(k, sizeof(*d->sizes));
        if (!d->blobs || !d->sizes)
                return -ENOMEM;
        for (size_t j = 0; j < b->n; j++, d->n++) {
                uint64_t len = get_u64(r);
                const uint8_t *q = r->bad ? NULL : take(r, len);

                if (!q)
                        return -EBADMSG;
                d->sizes[j] = len;
                d->blobs[j] = malloc(len ? len : 1);
                if (!d->blobs[j])
                        return -ENOMEM;
                if (len)
                        memcpy(d->blobs[j], q, len);
                else
                        d->blobs[j][0] = '\0';
        }
        return 0;
}

static int clock_get(struct rbuf *r, struct mclock *c, const char *name)
{
        uint64_t vr = get_u64(r);

        if (!r->bad && vr != c->vr)
                return fail(r, "master state: component '%s' has Clock %llu where the "
                            "session's has Clock %u", name, (unsigned long long)vr, c->vr);
        c->fraction = get_bool(r);
        c->num = get_u64(r);
        c->res = get_u64(r);
        c->step = get_u64(r);
        c->base = get_f64(r);
        c->interval = get_f64(r);
        c->k = get_u64(r);
        c->next = get_f64(r);
        c->ticks = get_u64(r);
        c->due = get_bool(r);
        c->pending = get_bool(r);
        return r->bad ? -EBADMSG : 0;
}

static int saved_inst_get(struct rbuf *r, struct saved_inst *si, const struct mi *mi)
{
        double *times[] = { &si->t, &si->reached, &si->from, &si->aim, &si->goal,
                            &si->next_event, &si->t_pub, &si->t_der, &si->clock_next };
        int e;

        /* NaN is a time of the master's own ("none yet"): taken as it is. */
        for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++)
                *times[i] = get_f64(r);
        si->k = get_u64(r);
        si->pending = get_bool(r);
        si->event = get_bool(r);
        si->terminate = get_bool(r);
        si->stats.steps = get_u64(r);
        si->stats.ns_total = get_u64(r);
        si->stats.ns_max = get_u64(r);
        si->stats.ns_service = get_u64(r);
        if (!get_count(r, mi->n_out, "output blocks", mi->name))
                return -EBADMSG;
        si->n_out = mi->n_out;
        si->next = calloc(mi->n_out ? mi->n_out : 1, sizeof(*si->next));
        si->pub = calloc(mi->n_out ? mi->n_out : 1, sizeof(*si->pub));
        if (!si->next || !si->pub)
                return -ENOMEM;
        for (size_t b = 0; b < mi->n_out; b++) {
                /* What master_restore() reads: numeric next blocks and every published one. */
                e = block_get(r, &si->next[b], &mi->next[b], mi->name, !is_blob(mi->next[b].type));
                if (e == 0)
                        e = block_get(r, &si->pub[b], &mi->pub[b], mi->name, true);
                if (e < 0)
                        return e;
                if (si->pending && is_blob(mi->next[b].type) && si->next[b].blobs)
                        return fail(r, "master state: component '%s' holds String or Binary "
                                    "outputs for its next point", mi->name);
        }
        if (!get_count(r, mi->n_der_vals, "output derivatives", mi->name))
                return -EBADMSG;
        if (mi->n_der_vals && !(si->der_vals = malloc(mi->n_der_vals * sizeof(double))))
                return -ENOMEM;
        for (size_t j = 0; j < mi->n_der_vals; j++)
                si->der_vals[j] = get_f64(r);
        if (!get_count(r, mi->n_clocks, "Clocks", mi->name))
                return -EBADMSG;
        if (mi->n_clocks && !(si->clocks = malloc(mi->n_clocks * sizeof(*si->clocks))))
                return -ENOMEM;
        for (size_t j = 0; j < mi->n_clocks; j++) {
                si->clocks[j] = mi->clocks[j];
                if ((e = clock_get(r, &si->clocks[j], mi->name)) < 0)
                        return e;
        }
        if (!get_count(r, mi->n_oclocks, "output Clocks", mi->name))
                return -EBADMSG;
        if (mi->n_oclocks && !(si->oclock_ticks = malloc(mi->n_oclocks * sizeof(uint64_t))))
                return -ENOMEM;
        for (size_t j = 0; j < mi->n_oclocks; j++)
                si->oclock_ticks[j] = get_u64(r);
        si->any_ahead = get_bool(r);
        if (!get_count(r, mi->ticked.n, "recorded Clocks", mi->name))
                return -EBADMSG;
        if (mi->ticked.n && !(si->ticked_ahead = malloc(mi->ticked.n * sizeof(bool))))
                return -ENOMEM;
        for (size_t j = 0; j < mi->ticked.n; j++)
                si->ticked_ahead[j] = get_bool(r);
        return r->bad ? -EBADMSG : 0;
}

static int saved_get(struct rbuf *r, struct master *m, struct master_saved *s)
{
        uint64_t version = get_u64(r), state, msg_len;
        const uint8_t *q;
        int e;

        if (!r->bad && version != SAVE_IO_VERSION)
                return fail(r, "master state: version %llu, not %u", (unsigned long long)version,
                            SAVE_IO_VERSION);
        if (!get_count(r, m->n, "instances", NULL))
                return -EBADMSG;
        state = get_u64(r);
        if (!r->bad && state > MASTER_STOPPED)
                return fail(r, "master state: state %llu is none of the master's",
                            (unsigned long long)state);
        s->state = (int)state;
        s->pt = get_u64(r);
        s->t_cur = get_f64(r);
        s->t_next = get_f64(r);
        if (!r->bad && isnan(s->t_cur))
                return fail(r, "master state: its time is not a number");
        /* From a longer run: restored, it would have no point left to reach. */
        if (!r->bad && (s->pt > m->n_end || s->t_cur > m->t_stop + master_tol(m, m->t_stop)))
                return fail(r, "master state: at t = %.17g (point %llu), past this session's "
                            "stop time %.17g (point %llu)", s->t_cur, (unsigned long long)s->pt,
                            m->t_stop, (unsigned long long)m->n_end);
        s->at_grid = get_bool(r);
        s->zero_meets = (uint32_t)get_u64(r);
        s->extra_run = get_u64(r);
        s->points = get_u64(r);
        s->extra_points = get_u64(r);
        s->events = get_u64(r);
        s->restores = get_u64(r);
        s->wall_ns = get_u64(r);
        msg_len = get_u64(r);
        if (!r->bad && msg_len >= sizeof(s->msg))
                return fail(r, "master state: a message of %llu bytes (at most %zu)",
                            (unsigned long long)msg_len, sizeof(s->msg) - 1);
        q = take(r, msg_len);
        if (!q)
                return -EBADMSG;
        memcpy(s->msg, q, msg_len);
        s->msg[msg_len] = '\0';
        s->n = m->n;
        s->insts = calloc(m->n ? m->n : 1, sizeof(*s->insts));
        if (!s->insts)
                return -ENOMEM;
        for (size_t i = 0; i < m->n; i++)
                if ((e = saved_inst_get(r, &s->insts[i], &m->mi[i])) < 0)
                        return e;
        if (r->off != r->len)
                return fail(r, "master state: %zu bytes after its end", r->len - r->off);
        return 0;
}

int master_saved_decode(struct master *m, const uint8_t *p, size_t len, struct master_saved **ret,
                        char *msg, size_t size)
{
        struct rbuf r = { .p = p, .len = len, .msg = msg, .size = size };
        struct master_saved *s;
        int e;

        if (!m || (len && !p) || !ret || !msg || !size)
                return -EINVAL;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->m = m;
        e = saved_get(&r, m, s);
        if (e < 0) {
                if (e == -ENOMEM)
                        snprintf(msg, size, "out of memory");
                master_saved_free(s);
                return e;
        }
        *ret = s;
        return 0;
}
