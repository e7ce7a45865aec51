/*
 * archive: what a good archive gives (entries, hash, the unpacked cache
 * directory), concurrent unpacking, the name rules one by one, and the
 * replay of the fuzzer's regression inputs.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <zip.h>

#include "archive_fixture.h"
#include "fmi/archive.h"
#include "fmi/archive_path.h"
#include "fmi/cache_tree.h"
#include "fmi/sha256.h"
#include "support/tmpdir.h"

static char *dir, *cache, *fmu;
static struct diag_list diags;

#define SO_BYTES "\177ELF not really"
#define DATA_BYTES "1,2,3\n4,5,6\n"

static void setup(void)
{
        dir = tmpdir_new("fmud-unpack");
        cr_assert(ne(ptr, dir, NULL));
        cache = fx_path(dir, "cache/sub");
        fmu = fx_path(dir, "good.fmu");
        diag_list_init(&diags, 0);
}

static void teardown(void)
{
        diag_list_fini(&diags);
        free(fmu);
        free(cache);
        tmpdir_free(dir);
}

TestSuite(unpack, .init = setup, .fini = teardown, .timeout = 60);

static void write_good(void)
{
        struct fx_lzentry v[] = {
                { .name = "modelDescription.xml", .data = FX_MD, .len = strlen(FX_MD),
                  .method = ZIP_CM_DEFLATE },
                { .name = "binaries/", .mode = S_IFDIR | 0755 },
                { .name = "binaries/x86_64-linux/m.so", .data = SO_BYTES, .len = strlen(SO_BYTES) },
                { .name = "resources/sub/", .mode = S_IFDIR | 0755 },
                { .name = "resources/table.csv", .data = DATA_BYTES, .len = strlen(DATA_BYTES),
                  .method = ZIP_CM_DEFLATE },
                { .name = "documentation/index.html", .data = "<p/>", .len = 4 },
        };

        cr_assert(eq(int, fx_write_libzip(fmu, v, sizeof(v) / sizeof(v[0])), 0));
}

static struct fmu_archive *open_good(void)
{
        struct fmu_archive *ar = NULL;
        int r = fmu_archive_open(fmu, NULL, &diags, &ar);

        if (r != 0)
                fx_dump_diags(&diags);
        cr_assert(eq(int, r, 0));
        return ar;
}

/* The hash as sha256sum(1) prints it: independent of our EVP code. */
static void sha256sum(const char *path, char out[65])
{
        char *cmd;
        FILE *p;

        cr_assert(asprintf(&cmd, "sha256sum '%s'", path) > 0);
        p = popen(cmd, "r");
        free(cmd);
        if (!p)
                cr_skip_test("sha256sum not available");
        cr_assert(eq(int, fscanf(p, "%64s", out), 1));
        pclose(p);
}

static void expect_file(const char *root, const char *name, const char *content, mode_t mode)
{
        char *path = fx_path(root, name), buf[256] = "";
        struct stat st;
        FILE *f;

        cr_assert(eq(int, lstat(path, &st), 0), "%s missing", name);
        cr_assert(eq(u32, st.st_mode & S_IFMT, S_IFREG));
        cr_assert(eq(u32, st.st_mode & 07777, mode), "%s has mode 0%o", name, st.st_mode & 07777);
        f = fopen(path, "r");
        cr_assert(ne(ptr, f, NULL));
        cr_assert(eq(sz, fread(buf, 1, sizeof(buf) - 1, f), strlen(content)));
        fclose(f);
        cr_assert(eq(str, buf, (char *)content));
        free(path);
}

static void expect_dir(const char *root, const char *name)
{
        char *path = fx_path(root, name);
        struct stat st;

        cr_assert(eq(int, lstat(path, &st), 0), "%s missing", name);
        cr_assert(eq(u32, st.st_mode & S_IFMT, S_IFDIR));
        cr_assert(eq(u32, st.st_mode & 07777, 0555), "%s has mode 0%o", name, st.st_mode & 07777);
        free(path);
}

Test(unpack, opens_a_good_archive_and_reads_entries)
{
        struct fmu_archive *ar;
        void *buf;
        size_t len;

        write_good();
        ar = open_good();
        cr_assert(eq(sz, diags.n, 0));
        cr_assert(fmu_archive_has(ar, "modelDescription.xml"));
        cr_assert(fmu_archive_has(ar, "binaries/x86_64-linux/m.so"));
        cr_assert(not(fmu_archive_has(ar, "binaries")));
        cr_assert(not(fmu_archive_has(ar, "binaries/x86_64-linux/other.so")));
        cr_assert(eq(int, fmu_archive_read(ar, "resources/table.csv", 1024, &buf, &len), 0));
        cr_assert(eq(sz, len, strlen(DATA_BYTES)));
        cr_assert(eq(str, (char *)buf, DATA_BYTES));
        free(buf);
        cr_assert(eq(int, fmu_archive_read(ar, "resources/table.csv", 4, &buf, &len), -EFBIG));
        cr_assert(eq(int, fmu_archive_read(ar, "resources/none", 1024, &buf, &len), -ENOENT));
        cr_assert(eq(int, fmu_archive_read(ar, "resources/sub", 1024, &buf, &len), -EISDIR));
        fmu_archive_close(ar);
}

Test(unpack, hashes_like_sha256sum)
{
        struct fmu_archive *ar;
        char want[65];

        write_good();
        sha256sum(fmu, want);
        ar = open_good();
        cr_assert(eq(str, (char *)fmu_archive_sha256(ar), want));
        fmu_archive_close(ar);
}

Test(unpack, sha256_matches_the_standard_vector)
{
        char hex[65];

        cr_assert(eq(int, sha256_buf("abc", 3, hex), 0));
        cr_assert(eq(str, hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
}

Test(unpack, unpacks_into_the_hash_directory_with_read_only_modes)
{
        struct fmu_archive *ar;
        char *out = NULL, *want;

        write_good();
        ar = open_good();
        cr_assert(eq(int, fmu_archive_unpack(ar, cache, &diags, NULL, &out), 0));
        want = fx_path(cache, fmu_archive_sha256(ar));
        cr_assert(eq(str, out, want));
        expect_dir(out, ".");
        expect_dir(out, "binaries");
        expect_dir(out, "binaries/x86_64-linux");
        expect_dir(out, "resources/sub");
        expect_file(out, "modelDescription.xml", FX_MD, 0444);
        expect_file(out, "binaries/x86_64-linux/m.so", SO_BYTES, 0555);
        expect_file(out, "resources/table.csv", DATA_BYTES, 0444);
        expect_file(out, "documentation/index.html", "<p/>", 0444);
        cr_assert(eq(int, fx_count_dir(cache), 1), "temporary directory left behind");
        free(want);
        free(out);
        fmu_archive_close(ar);
}

/* Neither FMI nor zip forbids it, and the cache is case-sensitive: both are kept. */
Test(unpack, unpacks_names_differing_only_in_letter_case)
{
        struct fx_entry v[] = {
                { .name = "modelDescription.xml", .data = FX_MD, .len = strlen(FX_MD) },
                { .name = "resources/Data.txt", .data = "upper", .len = 5 },
                { .name = "resources/Dz", .data = "z", .len = 1 },
                { .name = "resources/data.txt", .data = "lower", .len = 5 },
                { .name = "resources/Sub/x", .data = "x", .len = 1 },
                { .name = "resources/sub/x", .data = "y", .len = 1 },
        };
        struct fmu_archive *ar;
        char *out = NULL;

        cr_assert(eq(int, fx_write_raw(fmu, v, sizeof(v) / sizeof(v[0]), false), 0));
        ar = open_good();
        cr_assert(eq(sz, diag_errors(&diags), 0));
        cr_assert(fx_has_diag(&diags, "'resources/data.txt'", "only in letter case"));
        cr_assert(eq(int, fmu_archive_unpack(ar, cache, &diags, NULL, &out), 0));
        expect_file(out, "resources/Data.txt", "upper", 0444);
        expect_file(out, "resources/data.txt", "lower", 0444);
        expect_file(out, "resources/Sub/x", "x", 0444);
        expect_file(out, "resources/sub/x", "y", 0444);
        free(out);
        fmu_archive_close(ar);
}

Test(unpack, second_unpack_reuses_the_directory)
{
        struct fmu_archive *ar;
        char *out1 = NULL, *out2 = NULL, *md;
        struct stat a, b, fa, fb;

        write_good();
        ar = open_good();
        cr_assert(eq(int, fmu_archive_unpack(ar, cache, &diags, NULL, &out1), 0));
        fmu_archive_close(ar);
        md = fx_path(out1, "modelDescription.xml");
        cr_assert(eq(int, stat(out1, &a), 0));
        cr_assert(eq(int, stat(md, &fa), 0));

        ar = open_good();
        cr_assert(eq(int, fmu_archive_unpack(ar, cache, &diags, NULL, &out2), 0));
        fmu_archive_close(ar);
        cr_assert(eq(str, out1, out2));
        cr_assert(eq(int, stat(out2, &b), 0));
        cr_assert(eq(int, stat(md, &fb), 0));
        cr_assert(eq(u64, a.st_ino, b.st_ino));
        cr_assert(eq(u64, fa.st_ino, fb.st_ino));
        cr_assert(eq(i64, fa.st_mtim.tv_sec, fb.st_mtim.tv_sec));
        cr_assert(eq(i64, fa.st_mtim.tv_nsec, fb.st_mtim.tv_nsec));
        cr_assert(eq(i64, fa.st_ctim.tv_nsec, fb.st_ctim.tv_nsec));
        free(md);
        free(out1);
        free(out2);
}

/*
 * An FMU that runs unsandboxed may write into its own unpacked tree (a
 * counter, a log, a cache in resources/; root ignores the read-only
 * modes). The next unpack of the same archive notices any change, and
 * every run starts from the archive's contents again, as a fresh
 * extraction (FMPy's) does.
 */
Test(unpack, a_cached_tree_changed_after_its_unpack_is_unpacked_again)
{
        static const char *const how[] = { "rewritten", "added", "removed", "mode" };
        char *out = NULL, *table, *extra;
        struct fmu_archive *ar;
        FILE *f;

        write_good();
        for (size_t i = 0; i < sizeof(how) / sizeof(how[0]); i++) {
                ar = open_good();
                cr_assert(eq(int, fmu_archive_unpack(ar, cache, &diags, NULL, &out), 0));
                fmu_archive_close(ar);
                table = fx_path(out, "resources/table.csv");
                extra = fx_path(out, "resources/state.bin");
                /* What the FMU's owner may do to its own files, each alone. */
                if (i == 0) {
                        cr_assert(eq(int, chmod(table, 0644), 0));
                        f = fopen(table, "w");
                        cr_assert(ne(ptr, f, NULL));
                        fputs("changed\n", f);
                        fclose(f);
                        cr_assert(eq(int, chmod(table, 0444), 0));
                } else if (i == 3) {
                        cr_assert(eq(int, chmod(table, 0644), 0));
                } else if (i == 1) {
                        /* resources/ is no entry: only the way to one (dirs_ok()). */
                        char *res = fx_path(out, "resources");

                        cr_assert(eq(int, chmod(res, 0755), 0));
                        f = fopen(extra, "w");
                        cr_assert(ne(ptr, f, NULL));
                        fclose(f);
                        cr_assert(eq(int, chmod(res, 0555), 0));
                        free(res);
                } else if (i == 2) {
                        char *res = fx_path(out, "resources");

                        cr_assert(eq(int, chmod(res, 0755), 0));
                        cr_assert(eq(int, unlink(table), 0));
                        cr_assert(eq(int, chmod(res, 0555), 0));
                        free(res);
                }
                free(out);
                out = NULL;
                ar = open_good();
                cr_assert(eq(int, fmu_archive_unpack(ar, cache, &diags, NULL, &out), 0), "%s",
                          how[i]);
                fmu_archive_close(ar);
                expect_file(out, "resources/table.csv", DATA_BYTES, 0444);
                cr_assert(eq(int, access(extra, F_OK), -1), "%s", how[i]);
                free(table);
                free(extra);
                free(out);
                out = NULL;
        }
}

/* Whether the cache holds a hidden tree a discard left behind. */
static bool stale_left(void)
{
        struct dirent *e;
        bool found = false;
        DIR *d = opendir(cache);

        cr_assert(ne(ptr, d, NULL));
        while ((e = readdir(d)))
                found |= strstr(e->d_name, ".stale.") != NULL;
        closedir(d);
        return found;
}

/*
 * A changed tree that another user still holds (its FMU running) is not
 * removed under it: the name takes a fresh tree, the old one stays whole
 * for its user, and is removed by a later discard once let go.
 */
Test(unpack, a_changed_tree_in_use_stays_for_its_user)
{
        struct fmu_archive *ar;
        char *out = NULL, *res, *log;
        int hold = -1;
        FILE *f;

        write_good();
        ar = open_good();
        cr_assert(eq(int, fmu_archive_unpack_held(ar, cache, &diags, NULL, &out, &hold), 0));
        fmu_archive_close(ar);
        cr_assert(ge(int, hold, 0));
        /* The user's FMU writes into its resources. */
        res = fx_path(out, "resources");
        cr_assert(eq(int, chmod(res, 0755), 0));
        log = fx_path(out, "resources/log.txt");
        f = fopen(log, "w");
        cr_assert(ne(ptr, f, NULL));
        fclose(f);
        free(out);
        out = NULL;
        /* Another load: a fresh tree; the held one is whole. */
        ar = open_good();
        cr_assert(eq(int, fmu_archive_unpack(ar, cache, &diags, NULL, &out), 0));
        fmu_archive_close(ar);
        cr_assert(eq(int, access(log, F_OK), -1));
        cr_assert(eq(int, faccessat(hold, "resources/table.csv", F_OK, 0), 0));
        cr_assert(eq(int, faccessat(hold, "resources/log.txt", F_OK, 0), 0));
        cr_assert(stale_left());
        /* Let go: the next discard of the same archive removes it. */
        close(hold);
        cr_assert(eq(int, chmod(res, 0755), 0));
        cr_assert(eq(int, chmod(res, 0555), 0));
        free(out);
        out = NULL;
        ar = open_good();
        cr_assert(eq(int, fmu_archive_unpack(ar, cache, &diags, NULL, &out), 0));
        fmu_archive_close(ar);
        cr_assert(not(stale_left()));
        expect_file(out, "resources/table.csv", DATA_BYTES, 0444);
        free(log);
        free(res);
        free(out);
}

Test(unpack, opens_from_memory_like_from_a_file)
{
        struct fmu_archive *af, *am;
        char *bytes = NULL;
        size_t len = 0;
        FILE *f;
        void *buf;

        write_good();
        f = fopen(fmu, "rb");
        cr_assert(ne(ptr, f, NULL));
        bytes = malloc(1 << 16);
        len = fread(bytes, 1, 1 << 16, f);
        fclose(f);
        af = open_good();
        cr_assert(eq(int, fmu_archive_open_buffer(bytes, len, "mem.fmu", NULL, &diags, &am), 0));
        cr_assert(eq(str, (char *)fmu_archive_sha256(am), (char *)fmu_archive_sha256(af)));
        cr_assert(eq(int, fmu_archive_read(am, "modelDescription.xml", 1 << 20, &buf, &len), 0));
        cr_assert(eq(str, (char *)buf, FX_MD));
        free(buf);
        fmu_archive_close(am);
        fmu_archive_close(af);
        free(bytes);
}

Test(unpack, reads_zip64_records)
{
        struct fx_entry v[] = {
                { .name = "modelDescription.xml", .data = FX_MD, .len = strlen(FX_MD) },
                { .name = "resources/", .data = "", .len = 0 },
                { .name = "resources/a.txt", .data = "zip64", .len = 5 },
        };
        struct fmu_archive *ar;
        void *buf;
        size_t len;

        cr_assert(eq(int, fx_write_raw(fmu, v, 3, true), 0));
        ar = open_good();
        cr_assert(eq(int, fmu_archive_read(ar, "resources/a.txt", 64, &buf, &len), 0));
        cr_assert(eq(str, (char *)buf, "zip64"));
        free(buf);
        fmu_archive_close(ar);
}

/* libarchive (cmake -E tar --format=zip, bsdtar) writes sizes libzip's ZIP_CHECKCONS refuses. */
Test(unpack, accepts_data_descriptors_as_libarchive_writes_them)
{
        struct fx_entry v[] = {
                { .name = "modelDescription.xml", .data = FX_MD, .len = strlen(FX_MD),
                  .descriptor = true },
                { .name = "binaries/", .data = "", .len = 0 },
                { .name = "binaries/x86_64-linux/m.so", .data = SO_BYTES, .len = strlen(SO_BYTES),
                  .descriptor = true },
        };
        struct fmu_archive *ar;
        char *out = NULL;

        cr_assert(eq(int, fx_write_raw(fmu, v, 3, false), 0));
        ar = open_good();
        cr_assert(eq(int, fmu_archive_unpack(ar, cache, &diags, NULL, &out), 0));
        expect_file(out, "binaries/x86_64-linux/m.so", SO_BYTES, 0555);
        free(out);
        fmu_archive_close(ar);
}

Test(unpack, refuses_an_archive_changed_after_open)
{
        struct fmu_archive *ar;
        char *out = NULL;
        FILE *f;

        write_good();
        ar = open_good();
        f = fopen(fmu, "ab");
        cr_assert(ne(ptr, f, NULL));
        fputc('x', f);
        fclose(f);
        cr_assert(eq(int, fmu_archive_unpack(ar, cache, &diags, NULL, &out), -ESTALE));
        cr_assert(fx_has_diag(&diags, "good.fmu", "changed since it was opened"));
        cr_assert(eq(int, fx_count_dir(cache), 0));
        fmu_archive_close(ar);
}

/* Both processes start unpacking at once; the loser must discard its copy and use the winner's. */
static int unpack_in_child(int go_fd)
{
        struct fmu_archive *ar = NULL;
        char *out = NULL, c;
        int r;

        if (read(go_fd, &c, 1) != 1)
                return 2;
        r = fmu_archive_open(fmu, NULL, NULL, &ar);
        if (r == 0)
                r = fmu_archive_unpack(ar, cache, NULL, NULL, &out);
        fmu_archive_close(ar);
        free(out);
        return r == 0 ? 0 : 1;
}

Test(unpack, two_processes_unpacking_at_once_both_succeed)
{
        char *base = fx_path(dir, "cache");

        write_good();
        for (int round = 0; round < 8; round++) {
                int go[2], status;
                pid_t pid[2];

                tmpdir_free(cache);     /* frees the string too */
                cache = fx_path(base, "sub");
                cr_assert(eq(int, pipe(go), 0));
                for (int k = 0; k < 2; k++) {
                        pid[k] = fork();
                        cr_assert(ge(int, pid[k], 0));
                        if (pid[k] == 0) {
                                close(go[1]);
                                _exit(unpack_in_child(go[0]));
                        }
                }
                close(go[0]);
                cr_assert(eq(int, (int)write(go[1], "gg", 2), 2));
                close(go[1]);
                for (int k = 0; k < 2; k++) {
                        cr_assert(eq(int, waitpid(pid[k], &status, 0), pid[k]));
                        cr_assert(eq(int, status, 0), "round %d: child %d failed", round, k);
                }
                cr_assert(eq(int, fx_count_dir(cache), 1), "round %d: leftovers in the cache", round);
        }
        free(base);
}

Test(unpack, tree_remove_takes_away_a_sealed_tree)
{
        char *root = fx_path(dir, "tree");
        struct tree t;
        int root_fd, fd;

        cr_assert(eq(int, mkdir(root, 0700), 0));
        root_fd = open(root, O_RDONLY | O_DIRECTORY);
        cr_assert(ge(int, root_fd, 0));
        tree_init(&t, root_fd);
        fd = tree_create_file(&t, "a/b/c/file");
        cr_assert(ge(int, fd, 0));
        close(fd);
        cr_assert(eq(int, tree_create_dir(&t, "a/d/e"), 0));
        fd = tree_create_file(&t, "top");
        cr_assert(ge(int, fd, 0));
        close(fd);
        cr_assert(eq(int, tree_create_file(&t, "top"), -EEXIST));
        cr_assert(eq(int, tree_seal(&t, 0555), 0));
        cr_assert(eq(int, tree_remove(&t), 0));
        cr_assert(eq(int, fx_count_dir(root), 0));
        tree_fini(&t);
        close(root_fd);
        free(root);
}

struct name_case {
        const char *name;
        size_t len;
        unsigned bad;
        const char *norm;
};

Test(unpack, entry_name_rules)
{
        static const struct name_case cases[] = {
                { "modelDescription.xml", 0, 0, "modelDescription.xml" },
                { "resources/", 0, 0, "resources" },
                { "a/b/c.txt", 0, 0, "a/b/c.txt" },
                { "", 0, ARPATH_EMPTY, NULL },
                { "/", 0, ARPATH_ABSOLUTE | ARPATH_ROOT, NULL },
                { "/a", 0, ARPATH_ABSOLUTE, NULL },
                { "c:x", 0, ARPATH_DRIVE, NULL },
                { "C:\\x", 0, ARPATH_DRIVE | ARPATH_BACKSLASH, NULL },
                { "\\\\server\\share", 0, ARPATH_ABSOLUTE | ARPATH_BACKSLASH, NULL },
                { "..", 0, ARPATH_DOTDOT | ARPATH_ESCAPES | ARPATH_ROOT, NULL },
                { "a/..", 0, ARPATH_DOTDOT | ARPATH_ROOT, NULL },
                { "a/../b", 0, ARPATH_DOTDOT, NULL },
                { "././y/x/../../..", 0, ARPATH_DOT | ARPATH_DOTDOT | ARPATH_ESCAPES | ARPATH_ROOT, NULL },
                { "./", 0, ARPATH_DOT | ARPATH_ROOT, NULL },
                { "a//b", 0, ARPATH_EMPTY_COMPONENT, NULL },
                { "a//", 0, ARPATH_EMPTY_COMPONENT, NULL },
                { "a\0b", 3, ARPATH_NUL, NULL },
                { "a\tb", 0, ARPATH_CONTROL, NULL },
                { "a\177", 0, ARPATH_CONTROL, NULL },
                { "..a/b..", 0, 0, "..a/b.." },
                { "r\xc3\xa9sum\xc3\xa9.txt", 0, 0, "r\xc3\xa9sum\xc3\xa9.txt" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const struct name_case *c = &cases[i];
                size_t len = c->len ? c->len : strlen(c->name);
                char *norm = NULL;
                bool is_dir;
                int r = arpath_check(c->name, len, 1024, &is_dir, &norm);

                cr_assert(eq(int, r, (int)c->bad), "case %zu ('%s')", i, c->name);
                if (c->norm)
                        cr_assert(eq(str, norm, (char *)c->norm), "case %zu", i);
                else
                        cr_assert(eq(ptr, norm, NULL), "case %zu", i);
                free(norm);
        }
}

Test(unpack, entry_name_component_and_length_limits)
{
        char name[300];
        bool is_dir;

        memset(name, 'x', sizeof(name));
        cr_assert(eq(int, arpath_check(name, 256, 1024, &is_dir, NULL), ARPATH_COMPONENT_LONG));
        cr_assert(eq(int, arpath_check(name, 255, 1024, &is_dir, NULL), 0));
        cr_assert(eq(int, arpath_check(name, 20, 19, &is_dir, NULL), ARPATH_TOO_LONG));
}

Test(unpack, escapes_names_for_messages)
{
        char *s = arpath_escape("a\0'\\\x01\xff", 6);

        cr_assert(eq(str, s, "a\\x00\\'\\\\\\x01\\xff"));
        free(s);
}

/* The fuzzer's regression inputs, through the normal open/read path. */
Test(unpack, replays_the_fuzz_regression_inputs)
{
        const char *seeds = FMUD_TEST_SRC_DIR "/fuzz/archive";
        struct fmu_limits lim;
        struct dirent *de;
        DIR *d = opendir(seeds);
        int n = 0;

        cr_assert(ne(ptr, d, NULL), "%s missing", seeds);
        fmu_limits_default(&lim);
        lim.max_total_size = 1 << 20;
        lim.max_entry_size = 256 << 10;
        while ((de = readdir(d))) {
                struct fmu_archive *ar = NULL;
                char *path;
                void *buf;
                size_t len;
                int r;

                if (de->d_name[0] == '.')
                        continue;
                path = fx_path(seeds, de->d_name);
                r = fmu_archive_open(path, &lim, &diags, &ar);
                cr_assert(r == 0 || r == -EINVAL || r == -EBADMSG, "%s: %d", de->d_name, r);
                if (r == 0 && fmu_archive_read(ar, "modelDescription.xml", 1 << 16, &buf, &len) == 0)
                        free(buf);
                fmu_archive_close(ar);
                diag_list_fini(&diags);
                diag_list_init(&diags, 0);
                free(path);
                n++;
        }
        closedir(d);
        cr_assert(ge(int, n, 1), "no inputs in %s", seeds);
}
