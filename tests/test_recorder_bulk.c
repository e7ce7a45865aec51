/*
 * recorder_bulk: a long run with small buffers (thousands of buffer
 * switches) read back value by value and compared bit for bit.
 * (No .timeout: see test_recorder_io.c.)
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/record/recorder.h"
#include "support/tmpdir.h"

#define ROWS    200000
#define NCOLS   8

static const struct rec_column cols[NCOLS] = {
        { "m.a", REC_FLOAT64 }, { "m.b", REC_FLOAT64 }, { "m.c", REC_FLOAT64 }, { "m.d", REC_FLOAT64 },
        { "m.f", REC_FLOAT32 }, { "m.i", REC_INT64 }, { "m.u", REC_UINT64 }, { "m.z", REC_BOOLEAN },
};

static uint64_t next(uint64_t *s)
{
        *s ^= *s >> 12;
        *s ^= *s << 25;
        *s ^= *s >> 27;
        return *s * 2685821657736338717u;
}

/* Row k's values: random bit patterns (NaN and infinities included) and a smooth signal. */
static void row_values(uint64_t *s, uint64_t k, union rec_value v[NCOLS])
{
        uint64_t u = next(s);
        uint32_t w = (uint32_t)next(s);

        memcpy(&v[0].f64, &u, sizeof u);
        v[1].f64 = sin((double)k * 1e-3) * 42.0;
        v[2].f64 = (double)(next(s) % 1000000) / 1000;
        u = next(s) & ((UINT64_C(1) << 52) - 1);        /* subnormal */
        memcpy(&v[3].f64, &u, sizeof u);
        memcpy(&v[4].f32, &w, sizeof w);
        v[5].i64 = (int64_t)next(s);
        v[6].u64 = next(s);
        v[7].b = next(s) & 1;
}

static void same_f64(const char *field, double want, uint64_t k)
{
        char *end;
        double got = strtod(field, &end);

        if (isnan(want)) {
                cr_assert(eq(int, strncmp(field, "nan", 3), 0), "row %llu", (unsigned long long)k);
                return;
        }
        cr_assert(eq(int, memcmp(&got, &want, sizeof got), 0), "row %llu: \"%.30s\" for %a",
                  (unsigned long long)k, field, want);
}

static void check_file(const char *path)
{
        FILE *f = fopen(path, "r");
        char line[1024], *fld[NCOLS + 1];
        uint64_t s = 1, k = 0;

        cr_assert(f != NULL);
        cr_assert(fgets(line, sizeof line, f) != NULL);
        cr_assert(eq(str, line, "time,m.a,m.b,m.c,m.d,m.f,m.i,m.u,m.z\n"));
        for (; fgets(line, sizeof line, f); k++) {
                union rec_value v[NCOLS];
                char *p = line, *end;
                float g;

                cr_assert(strchr(line, '\n') != NULL, "row %llu is cut", (unsigned long long)k);
                for (int i = 0; i <= NCOLS; i++)
                        fld[i] = strsep(&p, ",");
                cr_assert(fld[NCOLS] != NULL && p == NULL, "row %llu has %d fields", (unsigned long long)k, NCOLS + 1);
                row_values(&s, k, v);
                same_f64(fld[0], (double)k * 1e-3, k);
                for (int i = 0; i < 4; i++)
                        same_f64(fld[1 + i], v[i].f64, k);
                g = strtof(fld[5], NULL);
                if (isnan(v[4].f32))
                        cr_assert(isnan(g));
                else
                        cr_assert(eq(int, memcmp(&g, &v[4].f32, sizeof g), 0), "row %llu", (unsigned long long)k);
                cr_assert(eq(i64, strtoll(fld[6], &end, 10), v[5].i64));
                cr_assert(eq(u64, strtoull(fld[7], &end, 10), v[6].u64));
                cr_assert(eq(str, fld[8], v[7].b ? "1\n" : "0\n"));
        }
        cr_assert(eq(u64, k, ROWS));
        fclose(f);
}

static void run(enum rec_backend b)
{
        struct rec_options o = { .backend = b, .buffer_size = 4096, .buffers = 4 };
        char *dir = tmpdir_new("recorder-bulk"), *path;
        struct rec_stats st;
        uint64_t s = 1;
        struct rec *r;
        int e;

        cr_assert(dir != NULL);
        cr_assert(asprintf(&path, "%s/bulk.csv", dir) > 0);
        e = rec_open(path, cols, NCOLS, &o, &r);
        if (e == -ENOSYS || e == -EPERM || e == -EOPNOTSUPP)
                cr_skip_test("io_uring unavailable: %s", strerror(-e));
        cr_assert(eq(int, e, 0));
        for (uint64_t k = 0; k < ROWS; k++) {
                union rec_value v[NCOLS];

                row_values(&s, k, v);
                cr_assert(eq(int, rec_sample(r, (double)k * 1e-3, v), 0));
        }
        cr_assert(eq(int, rec_close(r, &st), 0));
        cr_assert(eq(u64, st.rows, ROWS));
        cr_assert(eq(u64, st.dropped, 0));
        check_file(path);
        free(path);
        tmpdir_free(dir);
}

Test(recorder_bulk, io_uring_run_reads_back_bit_exactly)
{
        run(REC_BACKEND_URING);
}

Test(recorder_bulk, thread_run_reads_back_bit_exactly)
{
        run(REC_BACKEND_THREAD);
}
