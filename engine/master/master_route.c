/*
 * master_route: the data movement of a point: an instance's inputs from
 * its producers' published outputs (or, on a Gauss-Seidel connection, the
 * producer's outputs of this very step), publishing a step's outputs, and
 * sample rows for the sink.
 *
 * DESIGN: every buffer was sized in master_plan.c; nothing here allocates
 * except publishing a String or Binary longer than any before it in the
 * same slot (its owned copy grows, amortized). Values are read by byte
 * offset; there is no lookup. Master thread only.
 */
#include "engine/master/master_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/master/master_value.h"

static unsigned char *at(const struct mblock *b, size_t off)
{
        return b->vals + off * mv_size(b->type);
}

/*
 * Whether a Gauss-Seidel consumer takes its producer's outputs after the
 * step: once it stepped, but not from one whose step ends past the
 * consumer's (a multirate producer's longer step, or a fixed step over an
 * extra point, master_step.c), whose outputs are held until it is there:
 * taken at its step's start and held at the points between, they would
 * go back in time.
 */
static bool take_next(const struct master *m, const struct mi *mi, const struct mroute *r)
{
        const struct mi *p = &m->mi[r->prod];

        return r->sequential && p->stepped && !(p->aim > mi->aim + master_tol(m, mi->aim));
}

void mroute_inputs(struct master *m, struct mi *mi)
{
        for (size_t i = 0; i < mi->n_routes; i++) {
                const struct mroute *r = &mi->routes[i];
                const struct mblock *src = take_next(m, mi, r) ? r->src_next : r->src_pub;

                mv_copy(r->dst->type, at(r->dst, r->dst_off), r->dst->sizes + r->dst_off,
                        src->type, at(src, r->src_off), src->sizes + r->src_off, r->n,
                        r->identity, r->factor, r->offset);
        }
        mfeed_inputs(m, mi);
}

/* Copy n bytes into the owned slot j of block b, growing it when needed. */
static int own_copy(struct mblock *b, size_t j, const void *p, size_t n)
{
        if (n > b->own_cap[j]) {
                size_t cap = n < 64 ? 64 : n + n / 2;
                unsigned char *q = realloc(b->own[j], cap);

                if (!q)
                        return -ENOMEM;
                b->own[j] = q;
                b->own_cap[j] = cap;
        }
        if (n)
                memcpy(b->own[j], p, n);
        return 0;
}

int mroute_publish(struct master *m, struct mi *mi)
{
        for (size_t i = 0; i < mi->n_out; i++) {
                const struct mblock *nb = &mi->next[i];
                struct mblock *pb = &mi->pub[i];

                if (nb->type != MD_STRING && nb->type != MD_BINARY) {
                        memcpy(pb->vals, nb->vals, nb->n * mv_size(nb->type));
                        mnan_check(m, mi, i);
                        continue;
                }
                for (size_t j = 0; j < nb->n; j++) {
                        const void *p = ((const void *const *)nb->vals)[j];
                        size_t len = nb->type == MD_STRING ? (p ? strlen(p) + 1 : 0) : nb->sizes[j];

                        /* A NULL String is published as "" (its NUL copied), size 0. */
                        if (own_copy(pb, j, p ? p : "", nb->type == MD_STRING && !p ? 1 : len) < 0)
                                return -ENOMEM;
                        ((const void **)pb->vals)[j] = pb->own[j];
                        pb->sizes[j] = len;
                }
        }
        mi->t_pub = mi->t;
        mi->t_der = NAN;        /* the derivatives of these values are yet to be got */
        return 0;
}

/*
 * An integer cell's exact bits, for a column recorded as a 64-bit integer:
 * an Enumeration is one whatever block carries it (FMI 2.0 gets it as an
 * Integer, in an Int32 block). 0 for other types.
 */
static uint64_t int_bits(const struct mblock *b, size_t off)
{
        switch (b->type) {
        case MD_INT8: return (uint64_t)(int64_t)((const int8_t *)b->vals)[off];
        case MD_INT16: return (uint64_t)(int64_t)((const int16_t *)b->vals)[off];
        case MD_INT32: return (uint64_t)(int64_t)((const int32_t *)b->vals)[off];
        case MD_INT64: case MD_ENUMERATION: return (uint64_t)((const int64_t *)b->vals)[off];
        case MD_UINT8: return ((const uint8_t *)b->vals)[off];
        case MD_UINT16: return ((const uint16_t *)b->vals)[off];
        case MD_UINT32: return ((const uint32_t *)b->vals)[off];
        case MD_UINT64: return ((const uint64_t *)b->vals)[off];
        default: return 0;
        }
}

void mroute_cell(struct master *m, size_t col, const struct mblock *b, size_t off)
{
        switch (b->type) {
        case MD_STRING: {
                const char *s = ((const char *const *)b->vals)[off];

                m->row_vals[col] = NAN;
                m->row_blobs[col] = (struct master_blob){ s ? s : "", s ? strlen(s) : 0 };
                break;
        }
        case MD_BINARY:
                m->row_vals[col] = NAN;
                m->row_blobs[col] = (struct master_blob){ ((const void *const *)b->vals)[off],
                                                          b->sizes[off] };
                break;
        default:
                m->row_vals[col] = mv_to_double(b->type, b->vals, off);
                m->row_blobs[col] = (struct master_blob){ NULL, 0 };
                m->row_bits[col] = int_bits(b, off);
                break;
        }
}

void mroute_fill(struct master *m)
{
        for (size_t i = 0; i < m->n_cols; i++) {
                const struct mblock *b = m->col_block[i];

                /* Most columns are Float64: the value is its own double, no call per cell. */
                if (b->type == MD_FLOAT64) {
                        memcpy(&m->row_vals[i], b->vals + m->col_off[i] * sizeof(double),
                               sizeof(double));
                        m->row_blobs[i] = (struct master_blob){ NULL, 0 };
                        m->row_bits[i] = 0;
                        continue;
                }
                mroute_cell(m, i, b, m->col_off[i]);
        }
}

static void emit(struct master *m, double t, uint64_t pt, unsigned flags, size_t comp,
                 const double *vals, const uint64_t *bits, uint64_t mono_ns, uint64_t real_ns)
{
        struct master_row row = {
                .mono_ns = mono_ns,
                .real_ns = real_ns,
                .time = t,
                .point = pt,
                .flags = flags,
                .comp = comp,
                .n_columns = m->n_cols,
                .values = vals,
                .bits = bits,
                .blobs = m->row_blobs,
        };

        m->opts.sink(m->opts.sink_ctx, &row);
}

void mroute_flush(struct master *m)
{
        if (!m->row_held)
                return;
        m->row_held = false;
        emit(m, m->held_t, m->held_pt, m->held_flags, SIZE_MAX, m->held_vals, m->held_bits,
             m->held_mono_ns, m->held_real_ns);
}

void mroute_emit(struct master *m, double t, unsigned flags, size_t comp)
{
        mroute_flush(m);
        emit(m, t, m->pt, flags, comp, m->row_vals, m->row_bits, 0, 0);
}

static uint64_t clock_ns(clockid_t id)
{
        struct timespec ts;

        clock_gettime(id, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void master_set_rows(struct master *m, bool every_point, bool stamped)
{
        m->rows_every = every_point;
        m->rows_stamped = stamped;
}

void mroute_row(struct master *m, double t, unsigned flags)
{
        double *vals = m->row_vals;
        uint64_t *bits = m->row_bits;
        uint64_t mono = 0, real = 0;

        if (!m->opts.sink) {
                if (m->flagged)
                        mclock_unflag(m);
                return;
        }
        if (m->rows_stamped) {
                mono = clock_ns(CLOCK_MONOTONIC);
                real = clock_ns(CLOCK_REALTIME);
        }
        mroute_fill(m);
        /* Recorded Clocks are flagged in the first recorded row after their tick. */
        if (m->flagged && !(flags & MASTER_ROW_UNRECORDED))
                mclock_unflag(m);
        if (!m->row_defer) {
                mroute_flush(m);
                emit(m, t, m->pt, flags, SIZE_MAX, m->row_vals, m->row_bits, mono, real);
                return;
        }
        mroute_flush(m);
        /*
         * The row just filled becomes the held one by trading arrays, not
         * copying: every row is filled in full before it is emitted.
         */
        m->row_vals = m->held_vals;
        m->row_bits = m->held_bits;
        m->held_vals = vals;
        m->held_bits = bits;
        m->held_t = t;
        m->held_pt = m->pt;
        m->held_flags = flags;
        m->held_mono_ns = mono;
        m->held_real_ns = real;
        m->row_held = true;
}

/*
 * Strings and binaries a get returns are borrowed until the instance's
 * next call, which the get of the next block is: keep copies in the
 * block (its own slots, made on first use) until they are published.
 */
int mroute_hold(struct mblock *b)
{
        if (!b->own) {
                b->own = calloc(b->n ? b->n : 1, sizeof(*b->own));
                b->own_cap = calloc(b->n ? b->n : 1, sizeof(*b->own_cap));
                if (!b->own || !b->own_cap)
                        return -ENOMEM;
        }
        for (size_t j = 0; j < b->n; j++) {
                const void *p = ((const void *const *)b->vals)[j];
                size_t len = b->type == MD_STRING ? (p ? strlen(p) + 1 : 1) : b->sizes[j];

                if (own_copy(b, j, p ? p : "", len) < 0)
                        return -ENOMEM;
                ((const void **)b->vals)[j] = b->own[j];
        }
        return 0;
}

int mroute_get_outputs(struct master *m, struct mi *mi)
{
        (void) m;
        for (size_t i = 0; i < mi->n_out_step; i++) {
                struct mblock *b = &mi->next[i];
                int r;

                if (b->type == MD_BINARY)
                        r = inst_get_binary(mi->inst, b->vrs, b->n_vars, b->sizes,
                                            (const uint8_t **)b->vals, b->n);
                else
                        r = inst_get(mi->inst, b->type, b->vrs, b->n_vars, b->vals, b->n);
                if (r != INST_OK && r != INST_WARNING)
                        return r;
                if ((b->type == MD_STRING || b->type == MD_BINARY) && mroute_hold(b) < 0)
                        return -ENOMEM;
        }
        return INST_OK;
}

int mroute_set_inputs(struct master *m, struct mi *mi)
{
        (void) m;
        for (size_t i = 0; i < mi->n_in_step; i++) {
                const struct mblock *b = &mi->in[i];
                int r;

                if (b->type == MD_BINARY)
                        r = inst_set_binary(mi->inst, b->vrs, b->n_vars, b->sizes,
                                            (const uint8_t *const *)b->vals, b->n);
                else
                        r = inst_set(mi->inst, b->type, b->vrs, b->n_vars, b->vals, b->n);
                if (r != INST_OK && r != INST_WARNING)
                        return r;
        }
        return INST_OK;
}
