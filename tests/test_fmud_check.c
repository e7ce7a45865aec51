/*
 * fmud --check-config [FILE]: the shipped configuration passes; a file with
 * several problems has each one reported with its file:line and exits 1;
 * the paths a file names are checked on the disk; nothing is bound or
 * created while checking (daemon/config_check.c).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/run.h"
#include "support/tmpdir.h"

static char *dir;

static bool has(const char *s, const char *sub)
{
        return strstr(s, sub) != NULL;
}

static void setup(void)
{
        dir = tmpdir_new("fmud-check");
        cr_assert(dir != NULL);
}

static void teardown(void)
{
        tmpdir_free(dir);
}

/* Writes text to DIR/name and runs fmud with args, an arg's final "@" standing for that file. */
static void check(const char *name, const char *text, const char *const *args, struct run_result *r)
{
        char subst[8][600];
        char *argv[8] = { FMUD_BINARY };
        int n = 1;

        cr_assert(tmpdir_write(dir, name, text, strlen(text)) == 0);
        for (; *args && n < 7; args++, n++) {
                size_t len = strlen(*args);

                snprintf(subst[n], sizeof(subst[n]), "%.*s%s/%s", (int)len - 1, *args, dir, name);
                argv[n] = len && (*args)[len - 1] == '@' ? subst[n] : (char *)*args;
        }
        argv[n] = NULL;
        cr_assert(run_capture(argv, r) == 0);
}

static int count(const char *hay, const char *needle)
{
        int n = 0;

        for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
                n++;
        return n;
}

/* A hang fails its test by name, well inside ctest's limit for the file. */
TestSuite(fmud_check, .timeout = 120);

Test(fmud_check, the_shipped_configuration_is_good)
{
        char *argv[] = { FMUD_BINARY, "--check-config", FMUD_TEST_SRC_DIR "/../configs/fmud.conf",
                         NULL };
        struct run_result r;

        cr_assert(run_capture(argv, &r) == 0);
        cr_assert(eq(int, r.exit_code, 0), "stderr: %s", r.err);
        cr_assert(has(r.out, "fmud.conf: configuration OK"), "stdout: %s", r.out);
        cr_assert(eq(str, r.err, ""));
        run_result_fini(&r);
}

Test(fmud_check, every_problem_is_reported_with_its_line, .init = setup, .fini = teardown)
{
        char text[2048], secret[600], worker[600];
        const char *args[] = { "--check-config", "@", NULL };
        struct run_result r;

        /* A secret key others may read, and a worker that is not executable. */
        cr_assert(tmpdir_write(dir, "server.key", "x", 1) == 0);
        snprintf(secret, sizeof(secret), "%s/server.key", dir);
        cr_assert(chmod(secret, 0644) == 0);
        cr_assert(tmpdir_write(dir, "worker", "x", 1) == 0);
        snprintf(worker, sizeof(worker), "%s/worker", dir);
        cr_assert(chmod(worker, 0644) == 0);
        snprintf(text, sizeof(text),
                 "[limits]\n"                                   /* 1 */
                 "bogus = 1\n"                                  /* 2 */
                 "memory = lots\n"                              /* 3 */
                 "not a key line\n"                             /* 4 */
                 "[paths]\n"                                    /* 5 */
                 "allow = %s/absent\n"                          /* 6 */
                 "worker = %s\n"                                /* 7 */
                 "[control]\n"                                  /* 8 */
                 "server_secret_key = %s\n"                     /* 9 */
                 "socket_group = no-such-group-fmud\n"          /* 10 */
                 "[log]\n"                                      /* 11 */
                 "level = info\n",                              /* 12 */
                 dir, worker, secret);
        check("bad.conf", text, args, &r);
        cr_assert(eq(int, r.exit_code, 1), "stderr: %s", r.err);
        cr_assert(has(r.err, "bad.conf:2: unknown key 'bogus' in section [limits]"), "%s", r.err);
        cr_assert(has(r.err, "bad.conf:3: [limits] memory = 'lots'"), "%s", r.err);
        cr_assert(has(r.err, "bad.conf:4: not a section header"), "%s", r.err);
        cr_assert(has(r.err, "bad.conf:6: [paths] allow = ") &&
                  has(r.err, "absent': No such file or directory"), "%s", r.err);
        cr_assert(has(r.err, "bad.conf:7: [paths] worker = ") &&
                  has(r.err, "not executable"), "%s", r.err);
        cr_assert(has(r.err, "bad.conf:9: [control] server_secret_key = "), "%s", r.err);
        cr_assert(has(r.err, "bad.conf:10: [control] socket_group = 'no-such-group-fmud': "
                                "no such group"), "%s", r.err);
        cr_assert(has(r.err, "bad.conf: 7 problems"), "%s", r.err);
        cr_assert(eq(int, count(r.err, "\n"), 8), "%s", r.err);       /* 7 problems and the count */
        cr_assert(eq(str, r.out, ""));
        run_result_fini(&r);
}

Test(fmud_check, existing_paths_and_users_pass, .init = setup, .fini = teardown)
{
        char text[2048];
        const char *args[] = { "--check-config=@", NULL };
        struct run_result r;

        /* The cache directory does not exist yet: fmud makes it below an existing parent. */
        snprintf(text, sizeof(text),
                 "[paths]\nallow = %s\noutput_dir = %s\ncache_dir = %s/cache\nstate_dir = %s\n"
                 "[sandbox]\nuser = root\n[roles]\nuser = root admin\ngroup = 0 operator\n",
                 dir, dir, dir, dir);
        check("good.conf", text, args, &r);
        cr_assert(eq(int, r.exit_code, 0), "stderr: %s", r.err);
        cr_assert(has(r.out, "good.conf: configuration OK"), "%s", r.out);
        run_result_fini(&r);
}

Test(fmud_check, a_cross_key_rule_is_reported_without_a_line, .init = setup, .fini = teardown)
{
        const char *args[] = { "--config", "@", "--check-config", NULL };
        struct run_result r;

        check("tcp.conf", "[control]\ntcp_endpoint = tcp://127.0.0.1:5555\n", args, &r);
        cr_assert(eq(int, r.exit_code, 1), "stderr: %s", r.err);
        cr_assert(has(r.err, "tcp.conf: tcp_endpoint 'tcp://127.0.0.1:5555' needs "
                                "server_secret_key"), "%s", r.err);
        cr_assert(has(r.err, "tcp.conf: 1 problem\n"), "%s", r.err);
        run_result_fini(&r);
}

Test(fmud_check, a_missing_file_is_a_problem, .init = setup, .fini = teardown)
{
        char path[512];
        char *argv[] = { FMUD_BINARY, "--check-config", path, NULL };
        struct run_result r;

        snprintf(path, sizeof(path), "%s/absent.conf", dir);
        cr_assert(run_capture(argv, &r) == 0);
        cr_assert(eq(int, r.exit_code, 1));
        cr_assert(has(r.err, "absent.conf: No such file or directory"), "%s", r.err);
        run_result_fini(&r);
}

Test(fmud_check, nothing_is_bound_or_created, .init = setup, .fini = teardown)
{
        char text[2048], sock[600], scratch[600], cache[600];
        const char *args[] = { "--check-config", "@", NULL };
        struct run_result r;

        snprintf(sock, sizeof(sock), "%s/control.sock", dir);
        snprintf(scratch, sizeof(scratch), "%s/scratch", dir);
        snprintf(cache, sizeof(cache), "%s/cache", dir);
        snprintf(text, sizeof(text),
                 "[control]\nendpoint = ipc://%s\npub_endpoint = ipc://%s/events.sock\n"
                 "[paths]\nscratch_dir = %s\ncache_dir = %s\n", sock, dir, scratch, cache);
        check("quiet.conf", text, args, &r);
        cr_assert(eq(int, r.exit_code, 0), "stderr: %s", r.err);
        cr_assert(eq(int, access(sock, F_OK), -1));
        cr_assert(eq(int, access(scratch, F_OK), -1));
        cr_assert(eq(int, access(cache, F_OK), -1));
        run_result_fini(&r);
}

Test(fmud_check, the_daemon_still_stops_at_the_first_problem, .init = setup, .fini = teardown)
{
        const char *args[] = { "--config", "@", "--endpoint", "ipc:///nonexistent/x.sock", NULL };
        struct run_result r;

        check("bad.conf", "[limits]\nbogus = 1\nmemory = lots\n", args, &r);
        cr_assert(eq(int, r.exit_code, 1));
        cr_assert(has(r.err, "bad.conf:2:"), "%s", r.err);
        cr_assert(has(r.err, "bad.conf:3:") == false, "%s", r.err);
        run_result_fini(&r);
}
