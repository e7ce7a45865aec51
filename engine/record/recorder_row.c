/*
 * recorder_row: samples to CSV rows, and the header.
 *
 * DESIGN: a row is formatted in place into the current buffer once its
 * worst-case length (fixed per column type, plus the String and Binary
 * contents) is known to fit; rows never straddle buffers, so a paced run
 * that drops a row drops all of it and the file stays well-formed. A row
 * larger than one buffer (and the header) is formatted into a scratch
 * buffer and copied across as many buffers as it needs; a paced run drops
 * it unless all of them are available at once.
 * Runs on the recording thread only.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/record/csv_fmt.h"
#include "engine/record/numfmt.h"
#include "engine/record/recorder_int.h"

#define MARKER_WIDTH    2       /* ",0" or ",1" */

/* Longest text of one fixed-width value (String and Binary: 0, their contents vary). */
size_t rec_type_width(enum rec_type t)
{
        switch (t) {
        case REC_FLOAT32:       return NUMFMT_F32_MAX;
        case REC_FLOAT64:       return NUMFMT_F64_MAX;
        case REC_INT8:          return 4;
        case REC_UINT8:         return 3;
        case REC_INT16:         return 6;
        case REC_UINT16:        return 5;
        case REC_INT32:         return 11;
        case REC_UINT32:        return 10;
        case REC_INT64:         return NUMFMT_I64_MAX;
        case REC_UINT64:        return NUMFMT_U64_MAX;
        case REC_BOOLEAN:       return 1;
        default:                return 0;
        }
}

/* Worst-case bytes of the String and Binary contents; SIZE_MAX on overflow. */
static size_t var_width(const struct rec *r, const union rec_value *v)
{
        size_t n = 0, w;

        for (size_t i = 0; i < r->ncols; i++) {
                if (r->types[i] == REC_STRING)
                        w = v[i].s ? strlen(v[i].s) : 0;
                else if (r->types[i] == REC_BINARY)
                        w = v[i].bin.size;
                else
                        continue;
                if (w > SIZE_MAX / 4 - n)
                        return SIZE_MAX;
                n += csv_fmt_text_max(w);
        }
        return n;
}

static char *put_value(char *p, enum rec_type t, const union rec_value *v)
{
        switch (t) {
        case REC_FLOAT32:       return p + numfmt_f32(p, v->f32);
        case REC_FLOAT64:       return p + numfmt_f64(p, v->f64);
        case REC_INT8:          return p + numfmt_i64(p, v->i8);
        case REC_UINT8:         return p + numfmt_u64(p, v->u8);
        case REC_INT16:         return p + numfmt_i64(p, v->i16);
        case REC_UINT16:        return p + numfmt_u64(p, v->u16);
        case REC_INT32:         return p + numfmt_i64(p, v->i32);
        case REC_UINT32:        return p + numfmt_u64(p, v->u32);
        case REC_INT64:         return p + numfmt_i64(p, v->i64);
        case REC_UINT64:        return p + numfmt_u64(p, v->u64);
        case REC_BOOLEAN:
                *p = v->b ? '1' : '0';
                return p + 1;
        case REC_STRING:
                return v->s ? p + csv_fmt_text(p, v->s, strlen(v->s)) : p;
        case REC_BINARY:
                return v->bin.size ? p + csv_fmt_hex(p, v->bin.data, v->bin.size) : p;
        default:
                return p;
        }
}

/*
 * A row's values: typed (rec_sample()) or, when every column is Float64,
 * the doubles themselves (rec_sample_f64()); exactly one is set.
 */
struct row_in {
        const union rec_value *v;
        const double *f64;
};

/*
 * The row at p, which has room for its worst case. Returns its length.
 * All-Float64 rows (the common case: the master widens to double) take a
 * loop with no per-column dispatch.
 */
static size_t format_row(const struct rec *r, char *p, double time, struct row_in in,
                         bool intermediate)
{
        char *start = p;

        p += r->grid ? numfmt_grid(&r->time_grid, p, time) : numfmt_f64(p, time);
        if (in.f64) {
                p += numfmt_f64_list(p, in.f64, r->ncols, ',');
        } else {
                for (size_t i = 0; i < r->ncols; i++) {
                        *p++ = ',';
                        p = put_value(p, r->types[i], &in.v[i]);
                }
        }
        if (r->marker) {
                *p++ = ',';
                *p++ = intermediate ? '1' : '0';
        }
        *p++ = '\n';
        return (size_t)(p - start);
}

static int scratch_reserve(struct rec *r, size_t n)
{
        char *s;

        if (n <= r->scratch_cap)
                return 0;
        s = realloc(r->scratch, n);
        if (!s)
                return -ENOMEM;
        r->scratch = s;
        r->scratch_cap = n;
        return 0;
}

/*
 * Copy the line of n bytes (a row at time, or the header) into as
 * many buffers as it needs (waiting for buffers if necessary), and count
 * it in the buffer where it ends. The full buffers of a line that spans
 * several are held back until the line is whole, then submitted with the
 * one where it ends, so that a crash never leaves part of it in the file;
 * only a line larger than the whole pool goes out in parts.
 */
static int put_bytes(struct rec *r, const char *s, size_t n, double time, bool header)
{
        bool first = true;
        int e = 0;

        while (n) {
                size_t k;

                if (!r->cur || r->cur->len == r->bufsize) {
                        if (r->cur)
                                rec_pool_hold(r);
                        if (!r->nfree && !r->inflight)
                                e = rec_pool_submit_held(r);    /* larger than the pool */
                        if (e == 0)
                                e = rec_pool_acquire(r, false);
                        if (e < 0)
                                break;
                        r->cur->lead = !first;
                        r->cur->lead_time = time;
                }
                first = false;
                k = r->bufsize - r->cur->len;
                if (k > n)
                        k = n;
                memcpy(r->cur->data + r->cur->len, s, k);
                r->cur->len += k;
                s += k;
                n -= k;
        }
        if (e < 0) {
                (void) rec_pool_submit_held(r);
                return e;
        }
        if (header) {
                r->cur->header = true;
        } else {
                r->cur->rows++;
                r->cur->last_time = time;
        }
        if (!r->nheld)
                return 0;
        rec_pool_hold(r);
        e = rec_pool_submit_held(r);
        r->pending_ns = 0;
        return e;
}

static int dropped(struct rec *r)
{
        r->st.dropped++;
        return -ENOBUFS;
}

static int record_large(struct rec *r, size_t need, double time, struct row_in in,
                        bool intermediate)
{
        size_t n;
        int e;

        if (need == SIZE_MAX)
                return -ENOMEM;
        e = scratch_reserve(r, need);
        if (e < 0)
                return e;
        n = format_row(r, r->scratch, time, in, intermediate);
        if (r->paced && rec_pool_room(r) < n)
                return dropped(r);
        return put_bytes(r, r->scratch, n, time, false);
}

#define REC_CHECK_MAX   64u

/*
 * A row was added to the current buffer: submit the buffer when its first
 * row has waited flush_ns, or when rows come so far apart that the next
 * look at the clock would come after that (a paced run's, a slow FMU's).
 * The clock is looked at every check_every rows: every row while rows are
 * slow, every REC_CHECK_MAX-th while they come faster than flush_ns / 16
 * per look (as fast as possible: a clock read per row cost ~2% there).
 */
static void row_added(struct rec *r)
{
        uint64_t now, gap;

        if (!r->flush_ns || --r->check_in)
                return;
        now = rec_coarse_ns();
        gap = now - r->last_check_ns;
        r->last_check_ns = now;
        if (gap < r->flush_ns / 16) {
                if (r->check_every < REC_CHECK_MAX)
                        r->check_every *= 2;
        } else if (r->check_every > 1) {
                r->check_every /= 2;
        }
        r->check_in = r->check_every;
        if (!r->cur)
                return;         /* a row of several buffers: submitted whole already */
        if (!r->pending_ns)
                r->pending_ns = now;
        if (now - r->pending_ns >= r->flush_ns || gap >= r->flush_ns - (now - r->pending_ns))
                (void) rec_pool_submit(r);      /* an error is the recorder's: returned below */
}

static int record(struct rec *r, double time, struct row_in in, bool intermediate)
{
        size_t need = r->row_fixed;
        int e;

        if (r->has_var) {
                size_t w = var_width(r, in.v);

                need = w == SIZE_MAX ? SIZE_MAX : need + w;
        }
        if (need > r->bufsize) {
                e = record_large(r, need, time, in, intermediate);
        } else {
                e = 0;
                if (!r->cur || r->bufsize - r->cur->len < need) {
                        e = rec_pool_submit(r);
                        if (!e)
                                e = rec_pool_acquire(r, true);
                        if (e == -ENOBUFS)
                                return dropped(r);
                }
                if (!e) {
                        r->cur->len += format_row(r, r->cur->data + r->cur->len, time, in,
                                                  intermediate);
                        r->cur->rows++;
                        r->cur->last_time = time;
                }
        }
        if (e < 0)
                return e;
        r->st.rows++;
        r->st.intermediate += intermediate;
        row_added(r);
        return r->st.error;
}

/* A communication-point sample: counted, then recorded when decimation keeps it. */
static int sample(struct rec *r, double time, struct row_in in)
{
        if (r->st.error)
                return r->st.error;
        r->st.samples++;
        if (--r->countdown)
                return 0;
        r->countdown = r->decimation;
        return record(r, time, in, false);
}

int rec_sample(struct rec *r, double time, const union rec_value *values)
{
        return sample(r, time, (struct row_in){ .v = values });
}

int rec_sample_f64(struct rec *r, double time, const double *values)
{
        if (!r->all_f64)
                return -EINVAL;
        return sample(r, time, (struct row_in){ .f64 = values });
}

int rec_sample_intermediate(struct rec *r, double time, const union rec_value *values)
{
        if (!r->marker)
                return -EINVAL;
        if (r->st.error)
                return r->st.error;
        return record(r, time, (struct row_in){ .v = values }, true);
}

/* "time,<names>[,<marker>]\n", through the pool like a large row; never dropped. */
int rec_put_header(struct rec *r, const struct rec_column *cols, const char *marker)
{
        size_t need = sizeof "time\n", n = 0;
        int e;

        for (size_t i = 0; i < r->ncols; i++)
                need += 1 + csv_fmt_text_max(strlen(cols[i].name));
        if (marker)
                need += 1 + csv_fmt_text_max(strlen(marker));
        e = scratch_reserve(r, need);
        if (e < 0)
                return e;
        memcpy(r->scratch, "time", 4);
        n = 4;
        for (size_t i = 0; i < r->ncols; i++) {
                r->scratch[n++] = ',';
                n += csv_fmt_text(r->scratch + n, cols[i].name, strlen(cols[i].name));
        }
        if (marker) {
                r->scratch[n++] = ',';
                n += csv_fmt_text(r->scratch + n, marker, strlen(marker));
        }
        r->scratch[n++] = '\n';
        e = put_bytes(r, r->scratch, n, NAN, true);
        if (e < 0)
                return e;
        if (r->cur)
                r->pending_ns = rec_coarse_ns();
        return 0;
}
