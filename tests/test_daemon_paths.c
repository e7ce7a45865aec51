/*
 * daemon: paths a client names are opened once, beneath their allowed
 * directory, following no symbolic link (the input file and the results
 * file), and a refusal never quotes a file its client may not read.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon_fixture.h"
#include "support/tmpdir.h"

static const char good_csv[] = "time,Float64_input\n0,1\n1,2\n";

/* Load Feedthrough with input and out (either may be NULL); the load's result. */
static int load(struct fmud *c, const char *input, const char *out, uint64_t *ret_session)
{
        struct proto_load a = {
                .path = daemon_str(FMUD_TEST_FMU_DIR "/Feedthrough.fmu"),
                .input = daemon_str(input ? input : ""),
                .out = daemon_str(out ? out : ""),
        };

        return fmud_load(c, &a, ret_session, NULL);
}

Test(daemon_paths, an_input_file_behind_a_symbolic_link_is_refused)
{
        char *outside = tmpdir_new("fmud-paths-outside"), *target, *link, *in_link, *direct;
        struct fmud_daemon d;
        struct fmud *c;
        uint64_t s;
        int r;

        cr_assert(outside != NULL);
        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        cr_assert(tmpdir_write(outside, "in.csv", good_csv, sizeof(good_csv) - 1) == 0);
        cr_assert(tmpdir_write(d.dir, "in.csv", good_csv, sizeof(good_csv) - 1) == 0);
        /* A directory of the path that is a link to elsewhere, and a link as the file itself. */
        cr_assert(asprintf(&target, "%s", outside) > 0);
        link = daemon_path(&d, "elsewhere");
        cr_assert(symlink(target, link) == 0);
        cr_assert(asprintf(&in_link, "%s/in.csv", link) > 0);
        r = load(c, in_link, NULL, &s);
        daemon_assert_refused(c, r, PROTO_E_DENIED, "input through a linked directory");
        cr_assert(strstr(fmud_errmsg(c), "symbolic link") != NULL ||
                  strstr(fmud_errmsg(c), "not below") != NULL,
                  "%s", fmud_errmsg(c));
        free(in_link);
        in_link = daemon_path(&d, "alias.csv");
        direct = daemon_path(&d, "in.csv");
        cr_assert(symlink(direct, in_link) == 0);
        r = load(c, in_link, NULL, &s);
        daemon_assert_refused(c, r, PROTO_E_DENIED, "input that is a link, even inside");
        cr_assert(strstr(fmud_errmsg(c), "symbolic link") != NULL, "%s", fmud_errmsg(c));
        /* The file itself, named plainly, loads. */
        cr_assert(eq(int, load(c, direct, NULL, &s), 0), "%s", fmud_errmsg(c));
        fmud_close(c);
        free(in_link);
        free(direct);
        free(link);
        free(target);
        daemon_stop(&d);
        tmpdir_free(outside);
}

Test(daemon_paths, a_results_file_behind_a_symbolic_link_is_refused_and_nothing_is_written)
{
        char *outside = tmpdir_new("fmud-paths-outside"), *link, *out, *victim;
        struct fmud_daemon d;
        struct stat st;
        struct fmud *c;
        uint64_t s;
        int r;

        cr_assert(outside != NULL);
        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        cr_assert(tmpdir_write(outside, "victim", "keep", 4) == 0);
        link = daemon_path(&d, "results");
        cr_assert(symlink(outside, link) == 0);
        cr_assert(asprintf(&out, "%s/victim", link) > 0);
        r = load(c, NULL, out, &s);
        daemon_assert_refused(c, r, PROTO_E_DENIED, "results through a linked directory");
        cr_assert(asprintf(&victim, "%s/victim", outside) > 0);
        cr_assert(eq(int, stat(victim, &st), 0));
        cr_assert(eq(sz, (size_t)st.st_size, (size_t)4), "the file outside was touched");
        fmud_close(c);
        free(victim);
        free(out);
        free(link);
        daemon_stop(&d);
        tmpdir_free(outside);
}

/*
 * The input file is opened with the client's own rights, so a message
 * quotes only what the client could read itself: here its own 0600 file
 * (another user's is refused before it is read: test_daemon_as_peer.c).
 */
Test(daemon_paths, a_refusal_quotes_a_file_the_client_itself_may_read)
{
        static const char secret[] = "time,root:SECRETHASH:19000:0:99999\n0,1\n";
        struct fmud_daemon d;
        char *path;
        struct fmud *c;
        uint64_t s;
        int r;

        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        cr_assert(tmpdir_write(d.dir, "shadow.csv", secret, sizeof(secret) - 1) == 0);
        path = daemon_path(&d, "shadow.csv");
        cr_assert(eq(int, chmod(path, 0600), 0));
        r = load(c, path, NULL, &s);
        daemon_assert_refused(c, r, PROTO_E_INVALID, "a bad input file");
        cr_assert(strstr(fmud_errmsg(c), "shadow.csv:1:") != NULL, "%s", fmud_errmsg(c));
        cr_assert(strstr(fmud_errmsg(c), "SECRET") != NULL, "%s", fmud_errmsg(c));
        fmud_close(c);
        free(path);
        daemon_stop(&d);
}

Test(daemon_paths, a_root_daemons_cache_is_not_readable_by_every_user)
{
        struct fmud_daemon d;
        struct stat st;

        if (geteuid() != 0)
                cr_skip_test("the cache is made private by a root daemon only");
        daemon_start(&d, NULL);
        cr_assert(eq(int, stat(d.cache_dir, &st), 0));
        cr_assert(eq(int, (int)(st.st_mode & 07), 0), "mode %o", (unsigned)st.st_mode & 0777);
        cr_assert(eq(int, (int)st.st_uid, 0));
        daemon_stop(&d);
}
