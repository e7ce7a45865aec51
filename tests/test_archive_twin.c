/*
 * archive_twin: duplicate entry names whose copies hold the same bytes are
 * a warning and one copy is kept; copies that differ, even under one
 * declared CRC, are refused and nothing is written.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive_fixture.h"
#include "fmi/archive.h"
#include "support/tmpdir.h"

static char *dir, *cache, *fmu;
static struct diag_list diags;
static struct fmu_limits lim;

static void setup(void)
{
        dir = tmpdir_new("fmud-twin");
        cr_assert(ne(ptr, dir, NULL));
        cache = fx_path(dir, "cache");
        fmu = fx_path(dir, "test.fmu");
        diag_list_init(&diags, 0);
        fmu_limits_default(&lim);
}

static void teardown(void)
{
        diag_list_fini(&diags);
        free(fmu);
        free(cache);
        tmpdir_free(dir);
}

static void expect_refused(int rc, const char *entry, const char *rule)
{
        struct fmu_archive *ar = NULL;
        int r = fmu_archive_open(fmu, &lim, &diags, &ar);

        if (r != rc || !fx_has_diag(&diags, entry, rule))
                fx_dump_diags(&diags);
        fmu_archive_close(ar);
        cr_assert(eq(int, r, rc));
        cr_assert(eq(ptr, ar, NULL));
        cr_assert(fx_has_diag(&diags, entry, rule), "no diagnostic with \"%s\" and \"%s\"", entry, rule);
        cr_assert(eq(int, fx_count_dir(cache), 0), "something was written into the cache");
}

TestSuite(archive_twin, .init = setup, .fini = teardown, .timeout = 60);

/* Same declared size and CRC, other bytes: the CRC alone must not make them twins. */
Test(archive_twin, refuses_duplicates_that_only_declare_the_same_crc)
{
        struct fx_entry v[] = {
                { .name = "modelDescription.xml", .data = FX_MD, .len = strlen(FX_MD) },
                { .name = "resources/a.txt", .data = "first", .len = 5 },
                { .name = "resources/a.txt", .data = "fir5t", .len = 5, .plain = "first",
                  .plain_len = 5 },
        };

        cr_assert(eq(int, fx_write_raw(fmu, v, 3, false), 0));
        expect_refused(-EINVAL, "'resources/a.txt'", "duplicate entry name, with different data");
}

/* Identical copies look the same to every reader: a warning, and one copy is used. */
Test(archive_twin, accepts_duplicates_with_identical_data_with_a_warning)
{
        struct fx_entry v[] = {
                { .name = "modelDescription.xml", .data = FX_MD, .len = strlen(FX_MD) },
                { .name = "resources/a.txt", .data = "same", .len = 4 },
                { .name = "resources/b.txt", .data = "other", .len = 5 },
                { .name = "resources/a.txt", .data = "same", .len = 4 },
                { .name = "resources/a.txt", .data = "same", .len = 4 },
        };
        struct fmu_archive *ar = NULL;
        char *out = NULL, *path, buf[8] = "";
        void *data = NULL;
        size_t len = 0;
        FILE *f;

        cr_assert(eq(int, fx_write_raw(fmu, v, 5, false), 0));
        cr_assert(eq(int, fmu_archive_open(fmu, &lim, &diags, &ar), 0));
        cr_assert(eq(sz, diag_errors(&diags), 0));
        cr_assert(eq(sz, diags.n, 2));
        cr_assert(eq(int, diags.v[0].severity, DIAG_WARNING));
        cr_assert(fx_has_diag(&diags, "'resources/a.txt'",
                              "duplicate entry name; both copies hold the same 4 bytes, so one is used"));
        cr_assert(eq(int, fmu_archive_read(ar, "resources/a.txt", 64, &data, &len), 0));
        cr_assert(eq(sz, len, 4));
        cr_assert(eq(int, memcmp(data, "same", 4), 0));
        free(data);
        cr_assert(eq(int, fmu_archive_unpack(ar, cache, &diags, NULL, &out), 0));
        path = fx_path(out, "resources/a.txt");
        f = fopen(path, "r");
        cr_assert(ne(ptr, f, NULL));
        cr_assert(eq(sz, fread(buf, 1, sizeof(buf) - 1, f), 4));
        cr_assert(eq(str, buf, "same"));
        fclose(f);
        free(path);
        free(out);
        fmu_archive_close(ar);
}

