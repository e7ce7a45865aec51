/*
 * run_out_take() (client/run_out.c): fmuctl run --out - through a daemon
 * copies and deletes only the per-load results file the daemon makes for
 * the session; any other file a daemon names survives, untouched.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/run_out.h"
#include "support/tmpdir.h"

#define ROWS "time,x\n0,1\n"
#define SECRET "the user's own file\n"

static char *dir;
static FILE *to;
static char err[1024];

static void setup(void)
{
        dir = tmpdir_new("run_out");
        cr_assert(dir != NULL);
        cr_assert(tmpdir_write(dir, "canary.txt", SECRET, strlen(SECRET)) == 0);
        to = tmpfile();
        cr_assert(to != NULL);
}

static void teardown(void)
{
        fclose(to);
        tmpdir_free(dir);
}

static char *path(const char *name)
{
        char *p;

        cr_assert(asprintf(&p, "%s/%s", dir, name) > 0);
        return p;
}

/* What the stream got. */
static char *written(void)
{
        static char buf[256];
        size_t n;

        rewind(to);
        n = fread(buf, 1, sizeof(buf) - 1, to);
        buf[n] = '\0';
        return buf;
}

static void assert_canary(void)
{
        char *p = path("canary.txt"), buf[64] = { 0 };
        FILE *f = fopen(p, "r");

        cr_assert(f != NULL, "the canary was deleted");
        cr_assert(fread(buf, 1, sizeof(buf) - 1, f) > 0);
        fclose(f);
        cr_assert_str_eq(buf, SECRET);
        free(p);
}

TestSuite(run_out, .init = setup, .fini = teardown);

Test(run_out, takes_the_load_file_and_removes_it_and_its_directory)
{
        char *p = path("results/session-7-aB3xYz/results.csv");
        char *d = path("results/session-7-aB3xYz");
        struct stat st;

        cr_assert(tmpdir_write(dir, "results/session-7-aB3xYz/results.csv", ROWS,
                               strlen(ROWS)) == 0);
        cr_assert(chmod(d, 0700) == 0);
        cr_assert_eq(run_out_take(p, 7, to, err, sizeof(err)), 0, "%s", err);
        cr_assert_str_eq(written(), ROWS);
        cr_assert_eq(stat(p, &st), -1);
        cr_assert_eq(stat(d, &st), -1);
        free(p);
        free(d);
}

Test(run_out, any_other_file_is_refused_and_left)
{
        char *p = path("canary.txt");

        cr_assert_eq(run_out_take(p, 7, to, err, sizeof(err)), -EPERM);
        cr_assert(strstr(err, "refusing the daemon's results file") != NULL, "%s", err);
        cr_assert(strstr(err, "it is left as it is") != NULL, "%s", err);
        cr_assert_str_eq(written(), "");
        assert_canary();
        free(p);
}

Test(run_out, another_sessions_directory_is_refused)
{
        char *p = path("results/session-8-aB3xYz/results.csv");
        struct stat st;

        cr_assert(tmpdir_write(dir, "results/session-8-aB3xYz/results.csv", ROWS,
                               strlen(ROWS)) == 0);
        cr_assert_eq(run_out_take(p, 7, to, err, sizeof(err)), -EPERM);
        cr_assert_str_eq(written(), "");
        cr_assert_eq(stat(p, &st), 0);
        free(p);
}

Test(run_out, a_link_to_the_users_file_is_refused_and_both_left)
{
        char *p = path("results/session-7-aB3xYz/results.csv"), *c = path("canary.txt");
        struct stat st;

        cr_assert(tmpdir_write(dir, "results/session-7-aB3xYz/x", "", 0) == 0);
        cr_assert(symlink(c, p) == 0);
        cr_assert_eq(run_out_take(p, 7, to, err, sizeof(err)), -EPERM);
        cr_assert_str_eq(written(), "");
        cr_assert_eq(lstat(p, &st), 0);
        assert_canary();
        free(p);
        free(c);
}

Test(run_out, a_hard_link_to_the_users_file_is_refused)
{
        char *p = path("results/session-7-aB3xYz/results.csv"), *c = path("canary.txt");

        cr_assert(tmpdir_write(dir, "results/session-7-aB3xYz/x", "", 0) == 0);
        cr_assert(link(c, p) == 0);
        cr_assert_eq(run_out_take(p, 7, to, err, sizeof(err)), -EPERM);
        cr_assert_str_eq(written(), "");
        assert_canary();
        free(p);
        free(c);
}

Test(run_out, a_directory_others_may_write_is_refused)
{
        char *p = path("results/session-7-aB3xYz/results.csv");
        char *d = path("results/session-7-aB3xYz");
        struct stat st;

        cr_assert(tmpdir_write(dir, "results/session-7-aB3xYz/results.csv", ROWS,
                               strlen(ROWS)) == 0);
        cr_assert(chmod(d, 0777) == 0);
        cr_assert_eq(run_out_take(p, 7, to, err, sizeof(err)), -EPERM);
        cr_assert_eq(stat(p, &st), 0);
        free(p);
        free(d);
}

Test(run_out, a_relative_path_is_refused)
{
        cr_assert_eq(run_out_take("results/session-7-aB3xYz/results.csv", 7, to, err,
                                  sizeof(err)), -EPERM);
}
