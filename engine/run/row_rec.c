/*
 * row_rec: master rows (master.h) as recorder values (recorder.h). See
 * row_rec.h.
 */
#include "engine/run/row_rec.h"
#include "engine/record/numfmt.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum rec_type row_rec_type(enum md_type t)
{
        switch (t) {
        case MD_FLOAT32: return REC_FLOAT32;
        case MD_FLOAT64: return REC_FLOAT64;
        case MD_INT8: return REC_INT8;
        case MD_UINT8: return REC_UINT8;
        case MD_INT16: return REC_INT16;
        case MD_UINT16: return REC_UINT16;
        case MD_INT32: return REC_INT32;
        case MD_UINT32: return REC_UINT32;
        case MD_INT64: case MD_ENUMERATION: return REC_INT64;
        case MD_UINT64: return REC_UINT64;
        case MD_BOOLEAN: case MD_CLOCK: return REC_BOOLEAN;
        case MD_STRING: return REC_STRING;
        case MD_BINARY: return REC_BINARY;
        case MD_TYPE_COUNT: break;
        }
        return REC_FLOAT64;
}

void row_rec_cell(union rec_value *v, enum rec_type t, const struct master_row *row, size_t col)
{
        const struct master_blob *b = row->blobs ? &row->blobs[col] : NULL;
        double d = row->values ? row->values[col] : NAN;
        uint64_t bits = row->bits ? row->bits[col] : 0;

        /* Never cast NaN to an integer. */
        if (isnan(d) && t != REC_FLOAT32 && t != REC_FLOAT64)
                d = 0;
        switch (t) {
        case REC_FLOAT32: v->f32 = (float)d; break;
        case REC_FLOAT64: v->f64 = d; break;
        case REC_INT8: v->i8 = (int8_t)d; break;
        case REC_UINT8: v->u8 = (uint8_t)d; break;
        case REC_INT16: v->i16 = (int16_t)d; break;
        case REC_UINT16: v->u16 = (uint16_t)d; break;
        case REC_INT32: v->i32 = (int32_t)d; break;
        case REC_UINT32: v->u32 = (uint32_t)d; break;
        case REC_INT64: v->i64 = (int64_t)bits; break;
        case REC_UINT64: v->u64 = bits; break;
        case REC_BOOLEAN: v->b = d != 0; break;
        case REC_STRING: v->s = b && b->data ? b->data : ""; break;
        case REC_BINARY:
                v->bin.data = b ? b->data : NULL;
                v->bin.size = b ? b->len : 0;
                break;
        case REC_TYPE_COUNT: break;
        }
}

int row_rec_sample(struct rec *rec, const enum rec_type *types, union rec_value *vals,
                   const struct master_row *row)
{
        if (row->values && rec_all_f64(rec))
                return rec_sample_f64(rec, row->time, row->values);
        for (size_t i = 0; i < row->n_columns; i++)
                row_rec_cell(&vals[i], types[i], row, i);
        return rec_sample(rec, row->time, vals);
}

void row_rec_failure(char *buf, size_t size, const char *path, int err, const struct rec_stats *st)
{
        const char *name = strerrorname_np(-err);
        char t[NUMFMT_F64_MAX + 1];

        /* rec_close(): removed while written, the rows with it. */
        if (err == -ENOENT) {
                snprintf(buf, size, "'%s' was removed while it was written: its %llu rows are lost",
                         path, (unsigned long long)st->rows_written);
                return;
        }
        if (st->rows_written && !isnan(st->last_time)) {
                t[numfmt_f64(t, st->last_time)] = '\0';
                snprintf(buf, size, "writing '%s' failed: %s (%s); the file holds %llu rows, "
                         "the last at t = %s", path, strerror(-err), name ? name : "?",
                         (unsigned long long)st->rows_written, t);
        } else {
                snprintf(buf, size, "writing '%s' failed: %s (%s); the file holds no rows", path,
                         strerror(-err), name ? name : "?");
        }
}
