/*
 * mat4: the MAT v4 writer and its CSV converter (engine/record/mat4*.h) on
 * their own: parameters in data_1 with their values from the first row,
 * descriptions with units in brackets, rows streamed into data_2 in pieces
 * cut anywhere, and every bad CSV refused with its message and no file
 * claiming rows it does not hold.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/record/mat4_csv.h"

static FILE *f;
static char err[256];

static void setup(void)
{
        f = tmpfile();
        cr_assert(f != NULL);
        err[0] = '\0';
}

static void teardown(void)
{
        fclose(f);
}

TestSuite(mat4, .init = setup, .fini = teardown);

/* The whole file, *ret_len bytes and a NUL past them, so no name is read past the end (caller frees). */
static unsigned char *file_bytes(size_t *ret_len)
{
        long n;
        unsigned char *b;

        cr_assert(eq(int, fseek(f, 0, SEEK_END), 0));
        n = ftell(f);
        b = malloc((size_t)n + 1);
        cr_assert(b != NULL);
        cr_assert(eq(sz, (size_t)pread(fileno(f), b, (size_t)n, 0), (size_t)n));
        b[n] = '\0';
        *ret_len = (size_t)n;
        return b;
}

/* The matrix named name: its header (type, rows, cols) and data. */
static const unsigned char *find(const unsigned char *s, size_t len, const char *name,
                                 int32_t h[3])
{
        size_t off = 0;

        while (off + 20 <= len) {
                int32_t x[5];
                size_t el;

                memcpy(x, s + off, sizeof(x));
                el = x[0] == 0 ? 8 : x[0] == 20 ? 4 : 1;
                if (!strcmp((const char *)s + off + 20, name)) {
                        memcpy(h, x, 3 * sizeof(int32_t));
                        return s + off + 20 + (size_t)x[4];
                }
                off += 20 + (size_t)x[4] + el * (size_t)x[1] * (size_t)x[2];
        }
        cr_assert(0, "no matrix '%s'", name);
        return NULL;
}

static double f64(const unsigned char *p, size_t i)
{
        double v;

        memcpy(&v, p + 8 * i, sizeof(v));
        return v;
}

Test(mat4, parameters_go_to_data_1_and_descriptions_carry_units)
{
        static const struct mat4_var meta[] = {
                { .name = "m", .description = "Mass", .unit = "kg", .parameter = true },
                { .name = "x", .description = "Position", .unit = "m" },
                { .name = "v", .unit = "m/s" },
        };
        /* Cut in the middle of a number, of a quoted name and of a line end. */
        static const char *const pieces[] = { "time,\"x\",m,v", ",k\n0,0.5,2", ",1e-3,7\r\n0.1,0",
                                              ".25,2,-inf,8\n0.2,nan,2,3,9" };
        struct mat4_csv *c;
        unsigned char *s;
        const unsigned char *p;
        int32_t h[3], info[5][4];
        uint64_t rows;
        size_t len;
        char d[8];

        cr_assert(eq(int, mat4_csv_new(fileno(f), meta, 3, &c), 0));
        for (size_t i = 0; i < 4; i++)
                cr_assert(eq(int, mat4_csv_feed(c, pieces[i], strlen(pieces[i]), err, sizeof(err)),
                             0), "%s", err);
        /* The last row has no newline: taken at the end. */
        cr_assert(eq(int, mat4_csv_finish(c, &rows, err, sizeof(err)), 0), "%s", err);
        cr_assert(eq(u64, rows, 3));
        s = file_bytes(&len);
        p = find(s, len, "description", h);
        cr_assert(eq(i32, h[0], 51));
        cr_assert(eq(i32, h[2], 5));
        memset(d, 0, sizeof(d));
        memcpy(d, p + (size_t)h[1] * 1, 7 < h[1] ? 7 : (size_t)h[1]);
        cr_assert(eq(str, d, "Positio"));
        cr_assert(eq(int, memcmp(p + (size_t)h[1] * 2, "Mass [kg]", 9), 0));
        cr_assert(eq(int, memcmp(p + (size_t)h[1] * 3, "[m/s]", 5), 0));
        cr_assert(eq(chr, (char)p[(size_t)h[1] * 4], '\0'), "k has no description");
        p = find(s, len, "dataInfo", h);
        memcpy(info, p, sizeof(info));
        /* time, x (data_2 column 2), m (data_1 column 2), v (data_2 3), k (data_2 4) */
        cr_assert(eq(i32, info[1][0], 2));
        cr_assert(eq(i32, info[1][1], 2));
        cr_assert(eq(i32, info[2][0], 1));
        cr_assert(eq(i32, info[2][1], 2));
        cr_assert(eq(i32, info[2][3], 0));
        cr_assert(eq(i32, info[3][0], 2));
        cr_assert(eq(i32, info[3][1], 3));
        cr_assert(eq(i32, info[4][0], 2));
        cr_assert(eq(i32, info[4][1], 4));
        p = find(s, len, "data_1", h);
        cr_assert(eq(i32, h[1], 2));
        cr_assert(eq(i32, h[2], 2));
        cr_assert(eq(dbl, f64(p, 0), 0.0));
        cr_assert(eq(dbl, f64(p, 1), 2.0));
        cr_assert(eq(dbl, f64(p, 2), 0.2));
        cr_assert(eq(dbl, f64(p, 3), 2.0));
        p = find(s, len, "data_2", h);
        cr_assert(eq(i32, h[1], 4));
        cr_assert(eq(i32, h[2], 3));
        cr_assert(eq(dbl, f64(p, 0), 0.0));
        cr_assert(eq(dbl, f64(p, 1), 0.5));
        cr_assert(eq(dbl, f64(p, 2), 1e-3));
        cr_assert(eq(dbl, f64(p, 3), 7.0));
        cr_assert(eq(dbl, f64(p, 6), -INFINITY));
        cr_assert(f64(p, 9) != f64(p, 9), "nan");
        free(s);
}

Test(mat4, bad_csv_is_refused_with_its_line)
{
        /* rows: data_2's columns, each there in full; -1: no file written at all. */
        static const struct { const char *csv, *msg; int rows; } bad[] = {
                { "x,y\n0,1\n", "line 1: not a results header (\"time,...\")", -1 },
                { "time,x\n0,1\n0.1\n", "line 3: not as many values as the header names", 1 },
                { "time,x\n0,abc\n", "line 2, column 2: 'abc' is not a number (a .mat file "
                                     "holds numbers only)", 0 },
                { "time,x\n0,\"1\n", "line 2: not a CSV row", 0 },
                { "", "no results header: the CSV is empty", -1 },
        };

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                struct mat4_csv *c;
                const unsigned char *d2;
                unsigned char *s;
                int32_t h[3];
                size_t len;
                int r;

                cr_assert(eq(int, ftruncate(fileno(f), 0), 0));
                cr_assert(eq(int, mat4_csv_new(fileno(f), NULL, 0, &c), 0));
                err[0] = '\0';
                r = mat4_csv_feed(c, bad[i].csv, strlen(bad[i].csv), err, sizeof(err));
                if (r == 0)
                        r = mat4_csv_finish(c, NULL, err, sizeof(err));
                else
                        cr_assert(eq(int, mat4_csv_finish(c, NULL, NULL, 0), r));
                cr_assert(eq(int, r, -EBADMSG), "%s", bad[i].csv);
                cr_assert(eq(str, err, (char *)bad[i].msg));
                s = file_bytes(&len);
                if (bad[i].rows < 0) {
                        cr_assert(eq(sz, len, 0), "%s", bad[i].csv);
                } else {
                        d2 = find(s, len, "data_2", h);
                        cr_assert(eq(i32, h[2], bad[i].rows), "%s", bad[i].csv);
                        cr_assert(eq(sz, (size_t)(d2 - s) + 8 * (size_t)h[1] * (size_t)h[2], len),
                                  "%s", bad[i].csv);
                }
                free(s);
        }
}

/*
 * Text columns (String, Binary) are left out, by the caller's list and
 * never by their values: "1234" here is a Binary's hex. An array's element
 * columns take the array's entry; a column of its own name comes first.
 */
Test(mat4, text_columns_are_left_out_and_elements_take_their_arrays_entry)
{
        static const struct mat4_var meta[] = {
                { .name = "s", .text = true },
                { .name = "b", .text = true },
                { .name = "x", .unit = "m" },
                { .name = "x[2]", .unit = "cm" },
        };
        static const char csv[] = "time,s,x[1],b,x[2],\"b[1,2]\",y[1]\n0,hello,1,1234,2,ab,3\n"
                                  "1,\"a,b\",4,cafe,5,,6\n";
        struct mat4_csv *c;
        unsigned char *s;
        const unsigned char *p;
        int32_t h[3];
        char names[64];
        size_t len;

        cr_assert(eq(int, mat4_csv_new(fileno(f), meta, 4, &c), 0));
        cr_assert(eq(int, mat4_csv_feed(c, csv, strlen(csv), err, sizeof(err)), 0), "%s", err);
        cr_assert(eq(sz, mat4_csv_left_out(c, names, sizeof(names)), 3));
        cr_assert(eq(str, names, "s, b, b[1,2]"));
        cr_assert(eq(int, mat4_csv_finish(c, NULL, err, sizeof(err)), 0), "%s", err);
        s = file_bytes(&len);
        p = find(s, len, "description", h);
        cr_assert(eq(i32, h[2], 4), "time, x[1], x[2], y[1]");
        cr_assert(eq(int, memcmp(p + (size_t)h[1] * 1, "[m]", 3), 0));
        cr_assert(eq(int, memcmp(p + (size_t)h[1] * 2, "[cm]", 4), 0));
        cr_assert(eq(chr, (char)p[(size_t)h[1] * 3], '\0'), "y has no entry");
        p = find(s, len, "data_2", h);
        cr_assert(eq(i32, h[1], 4));
        cr_assert(eq(i32, h[2], 2));
        cr_assert(eq(dbl, f64(p, 0), 0.0));
        cr_assert(eq(dbl, f64(p, 1), 1.0));
        cr_assert(eq(dbl, f64(p, 2), 2.0));
        cr_assert(eq(dbl, f64(p, 3), 3.0));
        cr_assert(eq(dbl, f64(p, 7), 6.0));
        free(s);
}

/* Names past what a warning's line holds end in "...", once; the count is every column's. */
Test(mat4, many_left_out_columns_are_counted_and_their_names_cut_short)
{
        static const struct mat4_var meta[] = { { .name = "s", .text = true } };
        char *csv = malloc(1 << 20), names[MAT4_LIST_MAX], small[24];
        size_t n = 0, k = 2000;
        struct mat4_csv *c;
        bool cut = false;

        cr_assert(csv != NULL);
        n += (size_t)sprintf(csv, "time");
        for (size_t i = 0; i < k; i++)
                n += (size_t)sprintf(csv + n, ",s[%zu]", i + 1);
        n += (size_t)sprintf(csv + n, ",x\n0");
        for (size_t i = 0; i < k; i++)
                n += (size_t)sprintf(csv + n, ",t");
        n += (size_t)sprintf(csv + n, ",1\n");
        cr_assert(eq(int, mat4_csv_new(fileno(f), meta, 1, &c), 0));
        cr_assert(eq(int, mat4_csv_feed(c, csv, n, err, sizeof(err)), 0), "%s", err);
        cr_assert(eq(sz, mat4_csv_left_out(c, names, sizeof(names)), k));
        cr_assert(eq(int, strncmp(names, "s[1], s[2], ", 12), 0), "%s", names);
        cr_assert(eq(str, names + strlen(names) - 5, ", ..."), "%s", names);
        cr_assert(eq(ptr, strstr(names, "...") + 3, names + strlen(names)), "one \"...\"");
        cr_assert(eq(int, mat4_csv_finish(c, NULL, err, sizeof(err)), 0), "%s", err);
        free(csv);
        /* Cut at a name, whatever the size: never half a name. */
        small[0] = '\0';
        for (int i = 0; i < 5; i++)
                cut = mat4_list_add(small, sizeof(small), cut, i % 2 ? "bb" : "aaaa");
        cr_assert(cut);
        cr_assert(eq(str, small, "aaaa, bb, aaaa, bb, ..."), "23 bytes and the NUL");
        small[0] = '\0';
        cr_assert(mat4_list_add(small, sizeof(small), false, "a_name_longer_than_the_line"));
        cr_assert(eq(str, small, "..."));
}

/*
 * A String may hold newlines and quotes: its quoted field spans lines of
 * the CSV, also where the pieces are cut inside it. Only text columns
 * are left out: a header of nothing else is refused, as nothing to write.
 */
Test(mat4, a_quoted_field_may_span_lines_and_all_text_is_nothing_to_write)
{
        static const struct mat4_var meta[] = { { .name = "s", .text = true },
                                                { .name = "b", .text = true } };
        static const char *const pieces[] = { "time,s,x\n0,\"one\n", "two \"\"q\"\"\r\n\",1\n1,",
                                              "\"\n\",2\n" };
        struct mat4_csv *c;
        unsigned char *s;
        const unsigned char *p;
        int32_t h[3];
        uint64_t rows;
        size_t len;

        cr_assert(eq(int, mat4_csv_new(fileno(f), meta, 2, &c), 0));
        for (size_t i = 0; i < 3; i++)
                cr_assert(eq(int, mat4_csv_feed(c, pieces[i], strlen(pieces[i]), err, sizeof(err)),
                             0), "%s", err);
        cr_assert(eq(int, mat4_csv_finish(c, &rows, err, sizeof(err)), 0), "%s", err);
        cr_assert(eq(u64, rows, 2));
        s = file_bytes(&len);
        p = find(s, len, "data_2", h);
        cr_assert(eq(i32, h[1], 2));
        cr_assert(eq(i32, h[2], 2));
        cr_assert(eq(dbl, f64(p, 1), 1.0));
        cr_assert(eq(dbl, f64(p, 2), 1.0));
        cr_assert(eq(dbl, f64(p, 3), 2.0));
        free(s);

        cr_assert(eq(int, ftruncate(fileno(f), 0), 0));
        cr_assert(eq(int, mat4_csv_new(fileno(f), meta, 2, &c), 0));
        cr_assert(eq(int, mat4_csv_feed(c, "time,s,b[2]\n0,a,00\n", 20, err, sizeof(err)), -ENODATA));
        cr_assert(eq(str, err, MAT4_ALL_TEXT));
        cr_assert(eq(int, mat4_csv_finish(c, NULL, NULL, 0), -ENODATA));
        s = file_bytes(&len);
        cr_assert(eq(sz, len, 0), "no file at all");
        free(s);
}
