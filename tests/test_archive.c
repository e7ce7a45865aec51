/*
 * archive: every entry-level refusal. Each test builds its archive at test
 * time, loads it (open, and unpack if open ever let it through), and checks
 * the return code, a diagnostic naming the entry and the rule, and that the
 * cache directory stayed empty.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zip.h>

#include "archive_fixture.h"
#include "fmi/archive.h"
#include "support/tmpdir.h"

static char *dir, *cache, *fmu;
static struct diag_list diags;
static struct fmu_limits lim;

static void setup(void)
{
        dir = tmpdir_new("fmud-archive");
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

/* Open, and unpack if open succeeds; the result of the first step that fails. */
static int load(void)
{
        struct fmu_archive *ar = NULL;
        char *out = NULL;
        int r;

        r = fmu_archive_open(fmu, &lim, &diags, &ar);
        if (r == 0) {
                r = fmu_archive_unpack(ar, cache, &diags, NULL, &out);
                free(out);
                fmu_archive_close(ar);
        }
        return r;
}

static void expect_refused(int rc, const char *entry, const char *rule)
{
        int r = load();

        if (r != rc || !fx_has_diag(&diags, entry, rule))
                fx_dump_diags(&diags);
        cr_assert(eq(int, r, rc));
        cr_assert(fx_has_diag(&diags, entry, rule), "no diagnostic with \"%s\" and \"%s\"", entry, rule);
        cr_assert(eq(int, fx_count_dir(cache), 0), "something was written into the cache");
}

/* modelDescription.xml plus one raw entry. */
static void write_with(const struct fx_entry *e)
{
        struct fx_entry v[2] = {
                { .name = "modelDescription.xml", .data = FX_MD, .len = strlen(FX_MD) },
                *e,
        };

        cr_assert(eq(int, fx_write_raw(fmu, v, 2, false), 0));
}

TestSuite(archive, .init = setup, .fini = teardown, .timeout = 60);

Test(archive, refuses_absolute_name)
{
        write_with(&(struct fx_entry){ .name = "/etc/cron.d/x", .data = "x", .len = 1 });
        expect_refused(-EINVAL, "'/etc/cron.d/x'", "absolute entry name");
}

Test(archive, refuses_drive_letter_name)
{
        write_with(&(struct fx_entry){ .name = "C:/Windows/x.dll", .data = "x", .len = 1 });
        expect_refused(-EINVAL, "'C:/Windows/x.dll'", "drive letter");
}

Test(archive, refuses_backslash_rooted_name)
{
        write_with(&(struct fx_entry){ .name = "\\evil", .data = "x", .len = 1 });
        expect_refused(-EINVAL, "'\\\\evil'", "absolute entry name");
}

Test(archive, refuses_dotdot_component)
{
        write_with(&(struct fx_entry){ .name = "../outside", .data = "x", .len = 1 });
        expect_refused(-EINVAL, "'../outside'", "'..' component");
}

Test(archive, refuses_name_escaping_after_normalisation)
{
        write_with(&(struct fx_entry){ .name = "a/../../x", .data = "x", .len = 1 });
        expect_refused(-EINVAL, "'a/../../x'", "escapes the archive root");
}

Test(archive, refuses_name_normalising_to_the_root)
{
        write_with(&(struct fx_entry){ .name = "./", .data = "", .len = 0 });
        expect_refused(-EINVAL, "'./'", "archive root itself");
}

Test(archive, refuses_empty_component)
{
        write_with(&(struct fx_entry){ .name = "resources//x", .data = "x", .len = 1 });
        expect_refused(-EINVAL, "'resources//x'", "empty component");
}

Test(archive, refuses_dot_component)
{
        write_with(&(struct fx_entry){ .name = "resources/./x", .data = "x", .len = 1 });
        expect_refused(-EINVAL, "'resources/./x'", "'.' component");
}

/*
 * A backslash is no separator in a ZIP entry name (FMI 3.0 section 2.5),
 * but archives made on Windows hold such names beside good ones (a
 * 'documentation\\notes.txt'), and extracting tools take them as they
 * are. The entry is left out, with a warning naming it; the FMU loads.
 */
Test(archive, leaves_out_an_entry_with_a_backslash_saying_so)
{
        struct fmu_archive *ar = NULL;
        char *out = NULL, *md;

        write_with(&(struct fx_entry){ .name = "resources\\x.txt", .data = "x", .len = 1 });
        cr_assert(eq(int, fmu_archive_open(fmu, &lim, &diags, &ar), 0));
        cr_assert(fx_has_diag(&diags, "'resources\\\\x.txt'", "backslash"));
        cr_assert(fx_has_diag(&diags, "'resources\\\\x.txt'", "left out"));
        cr_assert(eq(sz, diag_errors(&diags), 0));
        cr_assert(eq(int, fmu_archive_unpack(ar, cache, &diags, NULL, &out), 0));
        fmu_archive_close(ar);
        md = fx_path(out, "modelDescription.xml");
        cr_assert(eq(int, access(md, F_OK), 0));
        cr_assert(eq(sz, (size_t)fx_count_dir(out), 1), "only modelDescription.xml");
        free(md);
        free(out);
}

Test(archive, refuses_nul_in_name_and_escapes_it)
{
        write_with(&(struct fx_entry){ .name = "a\0b.txt", .name_len = 7, .data = "x", .len = 1 });
        expect_refused(-EINVAL, "'a\\x00b.txt'", "NUL byte");
}

Test(archive, refuses_control_character_and_escapes_it)
{
        write_with(&(struct fx_entry){ .name = "a\033[2Jb", .data = "x", .len = 1 });
        expect_refused(-EINVAL, "'a\\x1b[2Jb'", "control character");
}

Test(archive, refuses_name_over_the_length_limit)
{
        lim.max_path_len = 16;
        write_with(&(struct fx_entry){ .name = "resources/0123456789", .data = "x", .len = 1 });
        expect_refused(-EINVAL, "'resources/0123456789'", "longer than the limit of 16");
}

Test(archive, refuses_symlink)
{
        struct fx_lzentry v[] = {
                { .name = "modelDescription.xml", .data = FX_MD, .len = strlen(FX_MD) },
                { .name = "resources/passwd", .data = "/etc/passwd", .len = 11, .mode = S_IFLNK | 0777 },
        };

        cr_assert(eq(int, fx_write_libzip(fmu, v, 2), 0));
        expect_refused(-EINVAL, "'resources/passwd'", "symbolic link");
}

Test(archive, refuses_character_device)
{
        struct fx_lzentry v[] = {
                { .name = "modelDescription.xml", .data = FX_MD, .len = strlen(FX_MD) },
                { .name = "resources/mem", .data = "", .len = 0, .mode = S_IFCHR | 0666 },
        };

        cr_assert(eq(int, fx_write_libzip(fmu, v, 2), 0));
        expect_refused(-EINVAL, "'resources/mem'", "character device entry");
}

Test(archive, refuses_fifo)
{
        write_with(&(struct fx_entry){ .name = "resources/pipe", .data = "", .len = 0,
                                       .mode = S_IFIFO | 0644 });
        expect_refused(-EINVAL, "'resources/pipe'", "FIFO entry");
}

Test(archive, refuses_directory_entry_carrying_data)
{
        write_with(&(struct fx_entry){ .name = "resources/", .data = "hidden", .len = 6 });
        expect_refused(-EINVAL, "'resources/'", "directory entry carries 6 bytes");
}

Test(archive, refuses_directory_type_on_a_file_name)
{
        write_with(&(struct fx_entry){ .name = "resources/x", .data = "", .len = 0,
                                       .mode = S_IFDIR | 0755 });
        expect_refused(-EINVAL, "'resources/x'", "does not end in '/'");
}

Test(archive, refuses_two_identical_central_directory_names)
{
        struct fx_entry v[] = {
                { .name = "modelDescription.xml", .data = FX_MD, .len = strlen(FX_MD) },
                { .name = "resources/a.txt", .data = "first", .len = 5 },
                { .name = "resources/a.txt", .data = "second", .len = 6 },
        };

        cr_assert(eq(int, fx_write_raw(fmu, v, 3, false), 0));
        expect_refused(-EINVAL, "'resources/a.txt'", "duplicate entry name");
}

Test(archive, refuses_duplicate_modeldescription)
{
        struct fx_entry v[] = {
                { .name = "modelDescription.xml", .data = FX_MD, .len = strlen(FX_MD) },
                { .name = "modelDescription.xml", .data = "<evil/>", .len = 7 },
        };

        cr_assert(eq(int, fx_write_raw(fmu, v, 2, false), 0));
        expect_refused(-EINVAL, "'modelDescription.xml'", "duplicate entry name");
}

Test(archive, refuses_file_and_directory_of_one_name)
{
        struct fx_entry v[] = {
                { .name = "modelDescription.xml", .data = FX_MD, .len = strlen(FX_MD) },
                { .name = "resources/x", .data = "x", .len = 1 },
                { .name = "resources/x/", .data = "", .len = 0 },
        };

        cr_assert(eq(int, fx_write_raw(fmu, v, 3, false), 0));
        expect_refused(-EINVAL, "'resources/x'", "both a file and a directory");
}

Test(archive, refuses_file_that_is_also_a_parent_directory)
{
        struct fx_entry v[] = {
                { .name = "modelDescription.xml", .data = FX_MD, .len = strlen(FX_MD) },
                { .name = "resources/x", .data = "x", .len = 1 },
                { .name = "resources/x-y", .data = "x", .len = 1 },
                { .name = "resources/x/y", .data = "y", .len = 1 },
        };

        cr_assert(eq(int, fx_write_raw(fmu, v, 4, false), 0));
        expect_refused(-EINVAL, "'resources/x'", "a directory in 'resources/x/y'");
}

Test(archive, refuses_file_that_is_a_directory_beside_a_case_variant)
{
        struct fx_entry v[] = {
                { .name = "modelDescription.xml", .data = FX_MD, .len = strlen(FX_MD) },
                { .name = "resources/a", .data = "a", .len = 1 },
                { .name = "resources/A/x", .data = "x", .len = 1 },
                { .name = "resources/a/y", .data = "y", .len = 1 },
        };

        cr_assert(eq(int, fx_write_raw(fmu, v, 4, false), 0));
        expect_refused(-EINVAL, "'resources/a'", "a directory in 'resources/a/y'");
        cr_assert(not(fx_has_diag(&diags, "'resources/A/x'", NULL)));
}

Test(archive, refuses_encrypted_entry)
{
        struct fx_lzentry v[] = {
                { .name = "modelDescription.xml", .data = FX_MD, .len = strlen(FX_MD) },
                { .name = "resources/secret.txt", .data = "secret", .len = 6,
                  .encryption = ZIP_EM_AES_256 },
        };

        if (!zip_encryption_method_supported(ZIP_EM_AES_256, 1))
                cr_skip_test("this libzip cannot write AES (the flag-bit test covers encryption)");
        cr_assert(eq(int, fx_write_libzip(fmu, v, 2), 0));
        expect_refused(-EINVAL, "'resources/secret.txt'", "encrypted entry");
}

Test(archive, refuses_entry_with_the_encryption_flag_bit)
{
        write_with(&(struct fx_entry){ .name = "resources/secret.txt", .data = "xxxxxxxxxxxxsecret",
                                       .len = 18, .flags = 0x0001 });
        expect_refused(-EINVAL, "'resources/secret.txt'", "encrypted entry");
}

Test(archive, refuses_unsupported_compression_method)
{
        write_with(&(struct fx_entry){ .name = "resources/data.bz2", .data = "BZh9", .len = 4,
                                       .method = ZIP_CM_BZIP2 });
        expect_refused(-EINVAL, "'resources/data.bz2'", "unsupported compression method 12");
}

Test(archive, refuses_more_entries_than_the_limit)
{
        struct fx_entry v[5];

        for (int i = 0; i < 5; i++)
                v[i] = (struct fx_entry){ .name = i ? "resources/x" : "modelDescription.xml",
                                          .data = "x", .len = 1 };
        lim.max_entries = 4;
        cr_assert(eq(int, fx_write_raw(fmu, v, 5, false), 0));
        expect_refused(-EINVAL, "5 entries", "over the limit of 4");
}

/*
 * "resources/<i>/a/a/.../a/x", depth levels of "a": an empty file as deep as
 * a name under the length limit allows. Unpacking costs a directory per
 * level, so such names multiply an archive of no bytes into millions of
 * directories. malloc'ed.
 */
static char *deep_name(int i, int depth)
{
        char *s = malloc(32 + 2 * (size_t)depth);
        int n;

        cr_assert(ne(ptr, s, NULL));
        n = sprintf(s, "resources/%d", i);
        for (int k = 0; k < depth; k++)
                n += sprintf(s + n, "/a");
        strcpy(s + n, "/x");
        return s;
}

/* modelDescription.xml and n deep names; returns the names for the caller to free. */
static char **write_deep(int n, int depth)
{
        struct fx_entry *v = calloc((size_t)n + 1, sizeof(*v));
        char **names = calloc((size_t)n, sizeof(*names));

        cr_assert(ne(ptr, v, NULL));
        cr_assert(ne(ptr, names, NULL));
        v[0] = (struct fx_entry){ .name = "modelDescription.xml", .data = FX_MD, .len = strlen(FX_MD) };
        for (int i = 0; i < n; i++) {
                names[i] = deep_name(i, depth);
                v[i + 1] = (struct fx_entry){ .name = names[i], .data = "", .len = 0 };
        }
        cr_assert(eq(int, fx_write_raw(fmu, v, (size_t)n + 1, false), 0));
        free(v);
        return names;
}

static void free_names(char **names, int n)
{
        for (int i = 0; i < n; i++)
                free(names[i]);
        free(names);
}

Test(archive, refuses_entry_name_deeper_than_the_limit)
{
        char **names = write_deep(1, 500);

        cr_assert(lt(sz, strlen(names[0]), lim.max_path_len));
        expect_refused(-EINVAL, "'resources/0/a/a/a/", "503 components, over the limit of 64");
        free_names(names, 1);
}

Test(archive, accepts_entry_name_at_the_depth_limit)
{
        /* resources, 0, 61 levels and x: 64 components. */
        char **names = write_deep(1, 61);

        cr_assert(eq(int, load(), 0));
        cr_assert(eq(sz, diag_errors(&diags), 0));
        free_names(names, 1);
}

Test(archive, refuses_names_implying_more_directories_than_the_limit)
{
        /* 200 names of 60 levels each, every one within the depth limit: 12,201 directories. */
        char **names = write_deep(200, 60);

        lim.max_dirs = 10000;
        expect_refused(-EINVAL, "12201 directories", "over the limit of 10000");
        free_names(names, 200);
}

Test(archive, counts_shared_directories_once)
{
        struct fx_entry v[] = {
                { .name = "modelDescription.xml", .data = FX_MD, .len = strlen(FX_MD) },
                { .name = "resources/a/b/x", .data = "x", .len = 1 },
                { .name = "resources/a/b/y", .data = "y", .len = 1 },
                { .name = "resources/a/b/", .data = "", .len = 0 },
                { .name = "resources/a!/z", .data = "z", .len = 1 },
                { .name = "resources/a/c/", .data = "", .len = 0 },
        };

        /* resources, resources/a, resources/a/b, resources/a!, resources/a/c. */
        lim.max_dirs = 5;
        cr_assert(eq(int, fx_write_raw(fmu, v, 6, false), 0));
        cr_assert(eq(int, load(), 0));
        lim.max_dirs = 4;
        diag_list_fini(&diags);
        diag_list_init(&diags, 0);
        cr_assert(eq(int, fmu_archive_open(fmu, &lim, &diags, &(struct fmu_archive *){ NULL }), -EINVAL));
        cr_assert(fx_has_diag(&diags, "5 directories", "over the limit of 4"));
}

Test(archive, refuses_total_size_over_the_limit)
{
        static char data[1000];
        struct fx_entry v[] = {
                { .name = "modelDescription.xml", .data = FX_MD, .len = strlen(FX_MD) },
                { .name = "resources/a", .data = data, .len = sizeof(data) },
                { .name = "resources/b", .data = data, .len = sizeof(data) },
        };

        lim.max_total_size = 1500;
        cr_assert(eq(int, fx_write_raw(fmu, v, 3, false), 0));
        expect_refused(-EINVAL, "uncompressed", "over the limit of 1500 bytes");
}

Test(archive, refuses_entry_over_the_size_limit)
{
        static char data[1000];

        lim.max_entry_size = 999;
        write_with(&(struct fx_entry){ .name = "resources/big", .data = data, .len = sizeof(data) });
        expect_refused(-EINVAL, "'resources/big'", "over the limit of 999 bytes");
}

/*
 * Real FMUs ship data that compresses far better than 200:1 (an erased
 * flash image of a virtual ECU, a table of constant rows): an 8 MiB
 * entry of zeros is taken, and a resources tree of 20,000 files (an
 * embedded Python or Java runtime) too. Both were refused.
 */
Test(archive, takes_highly_compressible_data_and_many_files_by_default)
{
        size_t n = 8u << 20, m = 20000;
        char *zeros = calloc(1, n);
        struct fx_lzentry *v = calloc(m + 2, sizeof(*v));
        char (*names)[32] = calloc(m, sizeof(*names));

        cr_assert(zeros && v && names);
        v[0] = (struct fx_lzentry){ .name = "modelDescription.xml", .data = FX_MD,
                                    .len = strlen(FX_MD) };
        v[1] = (struct fx_lzentry){ .name = "resources/rom.bin", .data = zeros, .len = n,
                                    .method = ZIP_CM_DEFLATE };
        for (size_t i = 0; i < m; i++) {
                snprintf(names[i], sizeof(names[i]), "resources/lib/%02zu/m%zu.py", i % 100, i);
                v[i + 2] = (struct fx_lzentry){ .name = names[i], .data = "x = 1\n", .len = 6 };
        }
        cr_assert(eq(int, fx_write_libzip(fmu, v, m + 2), 0));
        free(zeros);
        free(names);
        free(v);
        cr_assert(eq(int, load(), 0), "refused");
}

Test(archive, refuses_zip_bomb_by_compression_ratio)
{
        size_t n = 100u << 20;
        char *zeros = calloc(1, n);
        struct fx_lzentry v[] = {
                { .name = "modelDescription.xml", .data = FX_MD, .len = strlen(FX_MD) },
                { .name = "resources/zeros", .data = zeros, .len = n, .method = ZIP_CM_DEFLATE },
        };

        /* The ratio counts past a size (the default is far above this test's 100 MiB). */
        lim.ratio_min_size = 1u << 20;
        cr_assert(ne(ptr, zeros, NULL));
        cr_assert(eq(int, fx_write_libzip(fmu, v, 2), 0));
        free(zeros);
        expect_refused(-EINVAL, "'resources/zeros'", "compression ratio over the limit of 200:1");
}

Test(archive, refuses_archive_whose_total_ratio_is_over_the_limit)
{
        static char zeros[60 * 1024];
        struct fx_lzentry v[41] = {
                { .name = "modelDescription.xml", .data = FX_MD, .len = strlen(FX_MD) },
        };
        char names[40][32];

        /* Each entry stays under ratio_min_size; only the archive as a whole is a bomb. */
        lim.ratio_min_size = sizeof(zeros) + 1;
        for (int i = 0; i < 40; i++) {
                snprintf(names[i], sizeof(names[i]), "resources/z%02d", i);
                v[i + 1] = (struct fx_lzentry){ .name = names[i], .data = zeros,
                                                .len = sizeof(zeros), .method = ZIP_CM_DEFLATE };
        }
        cr_assert(eq(int, fx_write_libzip(fmu, v, 41), 0));
        expect_refused(-EINVAL, "archive compression ratio", "over the limit of 200:1");
        cr_assert(not(fx_has_diag(&diags, "'resources/z00'", NULL)));
}

Test(archive, refuses_overlapping_entries)
{
        struct fx_entry v[] = {
                { .name = "modelDescription.xml", .data = FX_MD, .len = strlen(FX_MD) },
                { .name = "resources/outer", .quotes_next = true },
                { .name = "resources/inner", .data = "inner", .len = 5 },
        };

        cr_assert(eq(int, fx_write_raw(fmu, v, 3, false), 0));
        expect_refused(-EINVAL, "'resources/inner'", "data overlaps entry 'resources/outer'");
}

Test(archive, refuses_local_header_naming_another_entry)
{
        write_with(&(struct fx_entry){ .name = "resources/a.txt", .local_name = "../../a.txt",
                                       .data = "x", .len = 1 });
        expect_refused(-EINVAL, "'resources/a.txt'", "local header names a different entry");
}

Test(archive, refuses_local_header_with_other_sizes)
{
        write_with(&(struct fx_entry){ .name = "resources/a.txt", .data = "hello", .len = 5,
                                       .local_size = 3 });
        expect_refused(-EINVAL, "'resources/a.txt'", "local header disagrees on CRC or sizes");
}

Test(archive, refuses_missing_modeldescription)
{
        struct fx_entry v[] = {
                { .name = "sub/modelDescription.xml", .data = FX_MD, .len = strlen(FX_MD) },
                { .name = "modelDescription.xml/", .data = "", .len = 0 },
        };

        cr_assert(eq(int, fx_write_raw(fmu, v, 2, false), 0));
        expect_refused(-EINVAL, "no modelDescription.xml", "archive root");
}

Test(archive, a_container_needs_no_modeldescription)
{
        struct fx_entry v[] = {
                { .name = "SystemStructure.ssd", .data = FX_MD, .len = strlen(FX_MD) },
                { .name = "resources/", .data = "", .len = 0 },
        };

        cr_assert(eq(int, fx_write_raw(fmu, v, 2, false), 0));
        lim.container = true;
        cr_assert(eq(int, load(), 0));
        cr_assert(eq(sz, diag_errors(&diags), 0));
}

Test(archive, refuses_a_file_that_is_not_a_zip)
{
        cr_assert(eq(int, tmpdir_write(dir, "test.fmu", "just some text, no zip here\n", 28), 0));
        expect_refused(-EBADMSG, "test.fmu", "not a zip archive");
}

Test(archive, refuses_an_empty_file)
{
        cr_assert(eq(int, tmpdir_write(dir, "test.fmu", "", 0), 0));
        expect_refused(-EBADMSG, "test.fmu", "not a zip archive");
}

Test(archive, refuses_a_path_that_is_not_a_regular_file)
{
        cr_assert(eq(int, mkfifo(fmu, 0600), 0));
        expect_refused(-EBADMSG, "test.fmu", "not a regular file");
}

Test(archive, refuses_a_directory_path)
{
        cr_assert(eq(int, mkdir(fmu, 0700), 0));
        cr_assert(eq(int, load(), -EISDIR));
}

Test(archive, refuses_a_truncated_zip)
{
        struct stat st;

        write_with(&(struct fx_entry){ .name = "resources/a.txt", .data = "aaaa", .len = 4 });
        cr_assert(eq(int, stat(fmu, &st), 0));
        cr_assert(eq(int, truncate(fmu, st.st_size - 30), 0));
        expect_refused(-EBADMSG, "test.fmu", "not a zip archive");
}

Test(archive, reports_every_broken_rule_not_just_the_first)
{
        struct fx_entry v[] = {
                { .name = "../a", .data = "x", .len = 1 },
                { .name = "b\\c", .data = "x", .len = 1 },
                { .name = "d", .data = "x", .len = 1, .mode = S_IFLNK | 0777 },
        };

        cr_assert(eq(int, fx_write_raw(fmu, v, 3, false), 0));
        cr_assert(eq(int, load(), -EINVAL));
        cr_assert(fx_has_diag(&diags, "'../a'", "'..' component"));
        cr_assert(fx_has_diag(&diags, "'b\\\\c'", "backslash"));
        cr_assert(fx_has_diag(&diags, "'d'", "symbolic link"));
        cr_assert(fx_has_diag(&diags, "no modelDescription.xml", NULL));
}

/* A header that lies about the size: open accepts it, reading and unpacking do not. */
static void expect_lie_refused(void)
{
        struct fmu_archive *ar;
        char *out = NULL;
        void *buf;
        size_t len;

        cr_assert(eq(int, fmu_archive_open(fmu, &lim, &diags, &ar), 0));
        cr_assert(eq(int, fmu_archive_read(ar, "resources/lie", 1 << 20, &buf, &len), -EBADMSG));
        cr_assert(eq(int, fmu_archive_unpack(ar, cache, &diags, NULL, &out), -EBADMSG));
        cr_assert(eq(ptr, out, NULL));
        fmu_archive_close(ar);
        cr_assert(fx_has_diag(&diags, "'resources/lie'", "does not match its header"));
        cr_assert(eq(int, fx_count_dir(cache), 0), "a partial directory was left in the cache");
}

Test(archive, refuses_stored_data_longer_than_declared)
{
        write_with(&(struct fx_entry){ .name = "resources/lie", .data = "hello world", .len = 11,
                                       .lie = true, .lie_size = 5 });
        expect_lie_refused();
}

Test(archive, refuses_stored_data_shorter_than_declared)
{
        write_with(&(struct fx_entry){ .name = "resources/lie", .data = "hello world", .len = 11,
                                       .lie = true, .lie_size = 20 });
        expect_lie_refused();
}

Test(archive, refuses_deflated_data_longer_than_declared)
{
        static char plain[4096];
        void *z;
        size_t zlen;

        memset(plain, 'a', sizeof(plain));
        cr_assert(eq(int, fx_deflate(plain, sizeof(plain), &z, &zlen), 0));
        write_with(&(struct fx_entry){ .name = "resources/lie", .data = z, .len = zlen,
                                       .plain = plain, .plain_len = sizeof(plain),
                                       .method = ZIP_CM_DEFLATE, .lie = true, .lie_size = 100 });
        free(z);
        expect_lie_refused();
}
