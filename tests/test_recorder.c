/*
 * recorder: the exact file contents (header, every value type, quoting,
 * decimation, intermediate rows, rows and headers larger than a buffer) on
 * every backend, and a large run read back value by value.
 * Backends, stalls and write errors: test_recorder_io.c.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/record/recorder.h"
#include "support/tmpdir.h"

static char *dir;

static void setup(void)
{
        dir = tmpdir_new("recorder");
        cr_assert(dir != NULL);
}

static void teardown(void)
{
        tmpdir_free(dir);
}

TestSuite(recorder, .init = setup, .fini = teardown);

static const enum rec_backend backends[] = { REC_BACKEND_URING, REC_BACKEND_THREAD, REC_BACKEND_SYNC };
#define NBACKENDS (sizeof backends / sizeof backends[0])

static char *path_for(const char *name, enum rec_backend b)
{
        char *p;

        cr_assert(asprintf(&p, "%s/%s-%s.csv", dir, name, rec_backend_name(b)) > 0);
        return p;
}

static char *slurp(const char *path)
{
        FILE *f = fopen(path, "rb");
        char *s;
        long n;

        cr_assert(f != NULL, "fopen %s", path);
        fseek(f, 0, SEEK_END);
        n = ftell(f);
        fseek(f, 0, SEEK_SET);
        s = malloc((size_t)n + 1);
        cr_assert(s != NULL);
        cr_assert(eq(sz, fread(s, 1, (size_t)n, f), (size_t)n));
        s[n] = '\0';
        fclose(f);
        return s;
}

/* Open on backend b, or skip the test when io_uring is refused here. */
static struct rec *open_on(const char *path, enum rec_backend b, const struct rec_column *cols,
                           size_t ncols, struct rec_options *o)
{
        struct rec *r = NULL;
        int e;

        o->backend = b;
        e = rec_open(path, cols, ncols, o, &r);
        if (b == REC_BACKEND_URING && (e == -ENOSYS || e == -EPERM || e == -EOPNOTSUPP))
                cr_skip_test("io_uring unavailable: %s", strerror(-e));
        cr_assert(eq(int, e, 0), "rec_open(%s): %s", path, strerror(-e));
        return r;
}

static void close_and_compare(struct rec *r, const char *path, const char *expected)
{
        char *got;

        cr_assert(eq(int, rec_close(r, NULL), 0));
        got = slurp(path);
        cr_assert(eq(str, got, (char *)expected), "%s", path);
        free(got);
}

Test(recorder, header_quotes_names_per_rfc4180)
{
        static const struct rec_column cols[] = {
                { "a", REC_FLOAT64 }, { "b,c", REC_FLOAT64 }, { "say \"x\"", REC_FLOAT64 },
                { "two\nlines", REC_FLOAT64 }, { "inst.var[2]", REC_FLOAT64 }, { "\xc3\xbc", REC_FLOAT64 },
        };

        for (size_t i = 0; i < NBACKENDS; i++) {
                struct rec_options o = { 0 };
                char *path = path_for("header", backends[i]);
                struct rec *r = open_on(path, backends[i], cols, 6, &o);

                close_and_compare(r, path,
                                  "time,a,\"b,c\",\"say \"\"x\"\"\",\"two\nlines\",inst.var[2],\xc3\xbc\n");
                free(path);
        }
}

Test(recorder, every_type_is_written_exactly)
{
        static const struct rec_column cols[] = {
                { "f32", REC_FLOAT32 }, { "f64", REC_FLOAT64 }, { "i8", REC_INT8 }, { "u8", REC_UINT8 },
                { "i16", REC_INT16 }, { "u16", REC_UINT16 }, { "i32", REC_INT32 }, { "u32", REC_UINT32 },
                { "i64", REC_INT64 }, { "u64", REC_UINT64 }, { "bool", REC_BOOLEAN }, { "str", REC_STRING },
                { "bin", REC_BINARY },
        };
        static const uint8_t bin[] = { 0x00, 0xff, 0x1a }, lf[] = { 0x0a };
        const union rec_value rows[3][13] = {
                { { .f32 = 0.1f }, { .f64 = 0.1 }, { .i8 = INT8_MIN }, { .u8 = UINT8_MAX },
                  { .i16 = INT16_MIN }, { .u16 = UINT16_MAX }, { .i32 = INT32_MIN }, { .u32 = UINT32_MAX },
                  { .i64 = INT64_MIN }, { .u64 = UINT64_MAX }, { .b = true }, { .s = "plain" },
                  { .bin = { bin, 3 } } },
                { { .f32 = -1e-45f }, { .f64 = -2.5e-300 }, { .i8 = INT8_MAX }, { .u8 = 0 },
                  { .i16 = INT16_MAX }, { .u16 = 0 }, { .i32 = INT32_MAX }, { .u32 = 0 },
                  { .i64 = INT64_MAX }, { .u64 = 0 }, { .b = false }, { .s = "say \"hi\", then\nleave" },
                  { .bin = { NULL, 0 } } },
                { { .f32 = FLT_MAX }, { .f64 = INFINITY }, { .i8 = -1 }, { .u8 = 1 }, { .i16 = -1 },
                  { .u16 = 1 }, { .i32 = -1 }, { .u32 = 1 }, { .i64 = -1 }, { .u64 = 1 }, { .b = true },
                  { .s = NULL }, { .bin = { lf, 1 } } },
        };
        static const double times[3] = { 0, 0.001, 1e16 };

        for (size_t i = 0; i < NBACKENDS; i++) {
                struct rec_options o = { 0 };
                char *path = path_for("types", backends[i]);
                struct rec *r = open_on(path, backends[i], cols, 13, &o);

                for (int k = 0; k < 3; k++)
                        cr_assert(eq(int, rec_sample(r, times[k], rows[k]), 0));
                close_and_compare(r, path,
                        "time,f32,f64,i8,u8,i16,u16,i32,u32,i64,u64,bool,str,bin\n"
                        "0,0.1,0.1,-128,255,-32768,65535,-2147483648,4294967295,"
                        "-9223372036854775808,18446744073709551615,1,plain,00ff1a\n"
                        "0.001,-1e-45,-2.5e-300,127,0,32767,0,2147483647,0,9223372036854775807,0,0,"
                        "\"say \"\"hi\"\", then\nleave\",\n"
                        "1e+16,3.4028235e+38,inf,-1,1,-1,1,-1,1,-1,1,1,,0a\n");
                free(path);
        }
}

Test(recorder, float_values_shortest_and_non_finite_like_python)
{
        static const struct rec_column cols[] = { { "x", REC_FLOAT64 }, { "y", REC_FLOAT32 } };
        const union rec_value v[][2] = {
                { { .f64 = 1.0 / 3 }, { .f32 = 1.0f / 3 } },
                { { .f64 = -0.0 }, { .f32 = -0.0f } },
                { { .f64 = -INFINITY }, { .f32 = INFINITY } },
                { { .f64 = NAN }, { .f32 = -NAN } },
                { { .f64 = 5e-324 }, { .f32 = 16777217.0f } },
        };
        struct rec_options o = { 0 };
        char *path = path_for("floats", REC_BACKEND_SYNC);
        struct rec *r = open_on(path, REC_BACKEND_SYNC, cols, 2, &o);

        for (int k = 0; k < 5; k++)
                cr_assert(eq(int, rec_sample(r, k * 0.1, v[k]), 0));
        close_and_compare(r, path, "time,x,y\n0,0.3333333333333333,0.33333334\n0.1,-0,-0\n"
                                   "0.2,-inf,inf\n0.30000000000000004,nan,nan\n0.4,5e-324,16777216\n");
        free(path);
}

/*
 * rec_sample_f64() writes what rec_sample() writes for the same doubles
 * (decimation included), on every backend; and only for all-Float64 columns.
 */
Test(recorder, all_float64_rows_from_plain_doubles_match_typed_rows)
{
        static const struct rec_column cols[] = { { "a", REC_FLOAT64 }, { "b", REC_FLOAT64 },
                                                  { "c", REC_FLOAT64 } };
        static const struct rec_column mixed[] = { { "a", REC_FLOAT64 }, { "b", REC_FLOAT32 } };

        for (size_t i = 0; i < NBACKENDS; i++) {
                struct rec_options o = { .decimation = 2 };
                char *p1 = path_for("f64-plain", backends[i]), *p2 = path_for("f64-typed", backends[i]);
                struct rec *r1 = open_on(p1, backends[i], cols, 3, &o);
                struct rec *r2 = open_on(p2, backends[i], cols, 3, &o);
                char *want;

                cr_assert(rec_all_f64(r1));
                for (int k = 0; k < 2000; k++) {
                        double d[3] = { sin(k * 1e-3) * 9.81, k * 0.1, k % 7 ? 1.0 / (k + 1) : -0.0 };
                        union rec_value v[3] = { { .f64 = d[0] }, { .f64 = d[1] }, { .f64 = d[2] } };

                        if (k == 5)
                                d[1] = v[1].f64 = NAN;
                        cr_assert(eq(int, rec_sample_f64(r1, k * 1e-3, d), 0));
                        cr_assert(eq(int, rec_sample(r2, k * 1e-3, v), 0));
                }
                cr_assert(eq(int, rec_close(r2, NULL), 0));
                want = slurp(p2);
                /* Every second sample: the times 0, 0.002, ...; and the NaN of k = 5 is not one. */
                cr_assert(strstr(want, "\n0.001,") == NULL, "%s", p2);
                cr_assert(strstr(want, "\n0.002,0.019619986920002615,0.2,") != NULL, "%s", p2);
                close_and_compare(r1, p1, want);
                free(want);
                free(p1);
                free(p2);
        }
        {
                struct rec_options o = { 0 };
                char *path = path_for("f64-mixed", REC_BACKEND_SYNC);
                struct rec *r = open_on(path, REC_BACKEND_SYNC, mixed, 2, &o);
                double d[2] = { 1, 2 };

                cr_assert(rec_all_f64(r) == false);
                cr_assert(eq(int, rec_sample_f64(r, 0, d), -EINVAL));
                close_and_compare(r, path, "time,a,b\n");
                free(path);
        }
}

Test(recorder, decimation_records_every_kth_sample)
{
        static const struct rec_column cols[] = { { "n", REC_INT64 } };
        struct rec_options o = { .decimation = 3 };
        char *path = path_for("decimation", REC_BACKEND_URING);
        struct rec *r = open_on(path, REC_BACKEND_URING, cols, 1, &o);
        struct rec_stats st;

        for (int k = 0; k < 10; k++) {
                union rec_value v = { .i64 = k };

                cr_assert(eq(int, rec_sample(r, k, &v), 0));
        }
        rec_get_stats(r, &st);
        cr_assert(eq(u64, st.samples, 10));
        cr_assert(eq(u64, st.rows, 4));
        close_and_compare(r, path, "time,n\n0,0\n3,3\n6,6\n9,9\n");
        free(path);
}

Test(recorder, intermediate_rows_are_marked_and_never_decimated)
{
        static const struct rec_column cols[] = { { "h", REC_FLOAT64 } };
        struct rec_options o = { .decimation = 2, .intermediate_column = "intermediate" };
        char *path = path_for("intermediate", REC_BACKEND_THREAD);
        struct rec *r = open_on(path, REC_BACKEND_THREAD, cols, 1, &o);
        struct rec_stats st;
        union rec_value v[] = { { .f64 = 1 }, { .f64 = 0.5 }, { .f64 = 2 }, { .f64 = 1.5 }, { .f64 = 3 } };

        cr_assert(eq(int, rec_sample(r, 0, &v[0]), 0));
        cr_assert(eq(int, rec_sample_intermediate(r, 0.5, &v[1]), 0));
        cr_assert(eq(int, rec_sample(r, 1, &v[2]), 0));        /* decimated */
        cr_assert(eq(int, rec_sample_intermediate(r, 1.5, &v[3]), 0));
        cr_assert(eq(int, rec_sample(r, 2, &v[4]), 0));
        rec_get_stats(r, &st);
        cr_assert(eq(u64, st.rows, 4));
        cr_assert(eq(u64, st.intermediate, 2));
        close_and_compare(r, path, "time,h,intermediate\n0,1,0\n0.5,0.5,1\n1.5,1.5,1\n2,3,0\n");
        free(path);
}

Test(recorder, intermediate_rows_need_a_marker_column)
{
        static const struct rec_column cols[] = { { "h", REC_FLOAT64 } };
        struct rec_options o = { 0 };
        char *path = path_for("no-marker", REC_BACKEND_SYNC);
        struct rec *r = open_on(path, REC_BACKEND_SYNC, cols, 1, &o);
        union rec_value v = { .f64 = 1 };

        cr_assert(eq(int, rec_sample_intermediate(r, 0.5, &v), -EINVAL));
        cr_assert(eq(int, rec_sample(r, 1, &v), 0));
        close_and_compare(r, path, "time,h\n1,1\n");
        free(path);
}

Test(recorder, no_columns_is_a_time_only_file)
{
        struct rec_options o = { 0 };
        char *path = path_for("time-only", REC_BACKEND_URING);
        struct rec *r = open_on(path, REC_BACKEND_URING, NULL, 0, &o);

        cr_assert(eq(int, rec_sample(r, 0, NULL), 0));
        cr_assert(eq(int, rec_sample(r, 0.25, NULL), 0));
        close_and_compare(r, path, "time\n0\n0.25\n");
        free(path);
}

/* A string and a binary far larger than the buffers, and a header larger than the pool. */
Test(recorder, rows_and_header_larger_than_buffers_span_buffers)
{
        struct rec_column cols[301];
        char names[300][24], *big = malloc(10001), *expected, *p;
        uint8_t *blob = malloc(5000);

        cr_assert(big != NULL && blob != NULL);
        for (int i = 0; i < 10000; i++)
                big[i] = i % 100 == 99 ? ',' : (char)('a' + i % 26);
        big[10000] = '\0';
        for (int i = 0; i < 5000; i++)
                blob[i] = (uint8_t)i;
        for (int i = 0; i < 299; i++) {
                snprintf(names[i], sizeof names[i], "instance.signal_%03d", i);
                cols[i] = (struct rec_column){ names[i], REC_UINT8 };
        }
        cols[299] = (struct rec_column){ "s", REC_STRING };
        cols[300] = (struct rec_column){ "b", REC_BINARY };
        expected = p = malloc(100000);
        cr_assert(expected != NULL);
        p += sprintf(p, "time");
        for (int i = 0; i < 299; i++)
                p += sprintf(p, ",%s", names[i]);
        p += sprintf(p, ",s,b\n");
        for (int row = 0; row < 2; row++) {
                p += sprintf(p, "%d", row);
                for (int i = 0; i < 299; i++)
                        p += sprintf(p, ",%d", (i + row) & 255);
                p += sprintf(p, ",\"%s\",", big);
                for (int i = 0; i < 5000; i++)
                        p += sprintf(p, "%02x", blob[i]);
                p += sprintf(p, "\n");
        }
        for (size_t b = 0; b < NBACKENDS; b++) {
                struct rec_options o = { .buffer_size = 256, .buffers = 2 };
                char *path = path_for("large", backends[b]);
                struct rec *r = open_on(path, backends[b], cols, 301, &o);
                union rec_value v[301];

                for (int row = 0; row < 2; row++) {
                        for (int i = 0; i < 299; i++)
                                v[i].u8 = (uint8_t)((i + row) & 255);
                        v[299].s = big;
                        v[300].bin.data = blob;
                        v[300].bin.size = 5000;
                        cr_assert(eq(int, rec_sample(r, row, v), 0));
                }
                close_and_compare(r, path, expected);
                free(path);
        }
        free(expected);
        free(blob);
        free(big);
}

Test(recorder, flush_keeps_rows_in_order)
{
        static const struct rec_column cols[] = { { "n", REC_UINT32 } };

        for (size_t b = 0; b < NBACKENDS; b++) {
                struct rec_options o = { 0 };
                char *path = path_for("flush", backends[b]);
                struct rec *r = open_on(path, backends[b], cols, 1, &o);

                for (unsigned k = 0; k < 6; k++) {
                        union rec_value v = { .u32 = k };

                        cr_assert(eq(int, rec_sample(r, k, &v), 0));
                        if (k % 2)
                                cr_assert(eq(int, rec_flush(r), 0));
                }
                close_and_compare(r, path, "time,n\n0,0\n1,1\n2,2\n3,3\n4,4\n5,5\n");
                free(path);
        }
}

/* A descriptor positioned after existing content, plain and O_APPEND. */
Test(recorder, writes_from_the_descriptors_offset)
{
        static const struct rec_column cols[] = { { "x", REC_BOOLEAN } };

        for (size_t b = 0; b < 2 * NBACKENDS; b++) {
                char *path = path_for(b < NBACKENDS ? "offset" : "append", backends[b % NBACKENDS]);
                int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | (b < NBACKENDS ? 0 : O_APPEND), 0644);
                struct rec_options o = { .backend = backends[b % NBACKENDS], .fsync = true };
                union rec_value v = { .b = true };
                struct rec *r;
                int e;

                cr_assert(fd >= 0);
                cr_assert(eq(sz, (size_t)write(fd, "# run 1\n", 8), 8));
                e = rec_open_fd(fd, cols, 1, &o, &r);
                if (e == -ENOSYS || e == -EPERM)
                        cr_skip_test("io_uring unavailable");
                cr_assert(eq(int, e, 0));
                cr_assert(eq(int, rec_sample(r, 1, &v), 0));
                close_and_compare(r, path, "# run 1\ntime,x\n1,1\n");
                free(path);
        }
}

/*
 * A descriptor whose offset others write through too (a standard output
 * redirected to a file): the rows go where it stands and it ends past
 * them, so what is written before and after lands before and after.
 */
Test(recorder, a_shared_offset_moves_past_the_rows)
{
        static const struct rec_column cols[] = { { "x", REC_BOOLEAN } };

        for (size_t b = 0; b < NBACKENDS; b++) {
                char *path = path_for("shared", backends[b]);
                int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), other;
                struct rec_options o = { .backend = backends[b], .shared_offset = true };
                union rec_value v = { .b = true };
                struct rec *r;
                char *got;
                int e;

                cr_assert(fd >= 0);
                other = dup(fd);
                cr_assert(other >= 0);
                cr_assert(eq(sz, (size_t)write(other, "before\n", 7), 7));
                e = rec_open_fd(fd, cols, 1, &o, &r);
                if (e == -ENOSYS || e == -EPERM || e == -EOPNOTSUPP)
                        cr_skip_test("io_uring unavailable");
                cr_assert(eq(int, e, 0));
                cr_assert(eq(int, rec_sample(r, 1, &v), 0));
                cr_assert(eq(int, rec_flush(r), 0));
                cr_assert(eq(int, rec_sample(r, 2, &v), 0));
                cr_assert(eq(int, rec_close(r, NULL), 0));
                cr_assert(eq(sz, (size_t)write(other, "after\n", 6), 6));
                close(other);
                got = slurp(path);
                cr_assert(eq(str, got, "before\ntime,x\n1,1\n2,1\nafter\n"), "%s", path);
                free(got);
                free(path);
        }
}

Test(recorder, open_rejects_bad_arguments)
{
        struct rec_column good = { "x", REC_FLOAT64 }, noname = { NULL, REC_FLOAT64 },
                          badtype = { "x", REC_TYPE_COUNT };
        struct rec_options one_buffer = { .buffers = 1 }, tiny = { .buffer_size = 16 };
        struct rec *r = NULL;
        char *path = path_for("bad", REC_BACKEND_SYNC);

        cr_assert(eq(int, rec_open(path, &noname, 1, NULL, &r), -EINVAL));
        cr_assert(eq(int, rec_open(path, &badtype, 1, NULL, &r), -EINVAL));
        cr_assert(eq(int, rec_open(path, NULL, 1, NULL, &r), -EINVAL));
        cr_assert(eq(int, rec_open(path, &good, 1, &one_buffer, &r), -EINVAL));
        cr_assert(eq(int, rec_open(path, &good, 1, &tiny, &r), -EINVAL));
        cr_assert(eq(int, rec_open("/nonexistent/dir/x.csv", &good, 1, NULL, &r), -ENOENT));
        cr_assert(eq(ptr, r, NULL));
        cr_assert(eq(int, rec_close(NULL, NULL), 0));
        free(path);
}
