/*
 * daemon_results: a session's results file when the disk fails it, end to
 * end: a daemon whose file size limit (RLIMIT_FSIZE, EFBIG) or a full
 * tmpfs (ENOSPC, in a private mount namespace, as root) cuts the file
 * short faults the session with the errno, the file and its last row, in
 * its status (state, message, "results": "failed") and in the daemon's
 * log; `fmuctl run`, through a daemon and --local, exits 3 saying so
 * (on a full tmpfs). A
 * paced session's rows reach the file while it runs, and a daemon killed
 * then leaves a file of complete rows.
 *
 * Scenario: the msd example (h = 0.01), to t = 300 with every point
 * recorded: 30 001 rows, about 2 MB, against a limit of 1 MB (the FMUs
 * unpacked at load stay below it). The paced test keeps its own stop
 * time (10) and decimation (10).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon_fixture.h"
#include "support/run.h"

#define MSD FMUD_EXAMPLES "/msd.ssp"
#define ROWS 30001u
#define LIMIT (1u << 20)

static struct fmud_daemon d;

static void teardown(void)
{
        daemon_kill(&d);
}

/* Complete lines in the file (the header included); asserts it ends on one. */
static size_t complete_lines(const char *path)
{
        size_t len, n = 0;
        char *s = daemon_slurp(path, &len);

        cr_assert(len == 0 || s[len - 1] == '\n', "'%s' ends mid-line: ...%s", path,
                  len > 40 ? s + len - 40 : s);
        for (size_t i = 0; i < len; i++)
                n += s[i] == '\n';
        free(s);
        return n;
}

static bool has(struct proto_str s, const char *what)
{
        return memmem(s.ptr, s.len, what, strlen(what)) != NULL;
}

/*
 * Load msd (as fast as possible) writing to out, start it, and check that
 * it faults with errno name ename (e.g. "EFBIG") and that the status, the
 * file and the log agree.
 */
static void run_to_write_fault(const char *out, const char *ename, const struct rlimit *limit)
{
        struct fmud *c = daemon_connect(&d);
        struct proto_load a = { .path = daemon_str(MSD), .out = daemon_str(out),
                                .has_stop = true, .stop = 300, .has_decimation = true,
                                .decimation = 1 };
        struct proto_session_status st;
        struct proto_target t = { 0 };
        size_t lines;
        char *log, want[64];

        t.session = daemon_load(c, &a, &t.generation);
        /* Once the FMUs are unpacked into the cache, which the limit would stop too. */
        if (limit)
                cr_assert(prlimit(d.pid, RLIMIT_FSIZE, limit, NULL) == 0);
        cr_assert(fmud_start(c, &t, NULL) == 0);
        daemon_wait_state(c, t.session, PROTO_STATE_FAULTED, &st);
        cr_assert(daemon_str_eq(st.results, "failed"), "results '%.*s'", (int)st.results.len,
                  st.results.ptr);
        snprintf(want, sizeof(want), "(%s)", ename);
        cr_assert(has(st.message, "writing '") && has(st.message, out) && has(st.message, want) &&
                  has(st.message, "the file holds"), "message '%.*s'", (int)st.message.len,
                  st.message.ptr);
        lines = complete_lines(out);
        cr_assert(lines >= 1 && st.rows_recorded == lines - 1, "%llu rows recorded, %zu lines",
                  (unsigned long long)st.rows_recorded, lines);
        cr_assert(st.rows_recorded < ROWS, "the file was cut short");
        cr_assert(st.time < 300, "faulted at once, not at the end: t = %g", st.time);
        log = daemon_log(&d);
        cr_assert(strstr(log, "writing '") && strstr(log, want), "log: %s", log);
        free(log);
        /* A faulted session stays faulted: no resume, and unload works. */
        cr_assert(fmud_resume(c, &t, NULL) < 0);
        cr_assert(fmud_unload(c, &t) == 0);
        fmud_close(c);
}

Test(daemon_results, file_size_limit_faults_the_session_with_efbig, .fini = teardown)
{
        struct rlimit rl = { LIMIT, LIMIT };
        char *out;

        daemon_start(&d, NULL);
        out = daemon_path(&d, "out.csv");
        run_to_write_fault(out, "EFBIG", &rl);
        free(out);
}

Test(daemon_results, full_tmpfs_faults_the_session_with_enospc, .fini = teardown)
{
        char *small;

        /* The daemon inherits the namespace, and sees mounts made here afterwards. */
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                cr_skip_test("no private mount namespace here: %s", strerror(errno));
        daemon_start(&d, NULL);
        small = daemon_path(&d, "small");
        cr_assert(mkdir(small, 0755) == 0);
        cr_assert(mount("tmpfs", small, "tmpfs", 0, "size=4k") == 0, "%s", strerror(errno));
        {
                char *out;

                cr_assert(asprintf(&out, "%s/out.csv", small) > 0);
                run_to_write_fault(out, "ENOSPC", NULL);
                free(out);
        }
        cr_assert(umount2(small, MNT_DETACH) == 0);
        free(small);
}

#define RUN "run", MSD, "--stop", "300", "--decimation", "1"

/* fmuctl ARGS... with FMUD_ENDPOINT set to the fixture's daemon. */
static struct run_result fmuctl(const char *const args[])
{
        char *argv[16] = { (char *)FMUD_FMUCTL };
        struct run_result r = { 0 };
        size_t n = 1;

        for (; args[n - 1] && n < 15; n++)
                argv[n] = (char *)args[n - 1];
        argv[n] = NULL;
        cr_assert(setenv("FMUD_ENDPOINT", d.endpoint, 1) == 0);
        cr_assert(run_capture(argv, &r) == 0);
        return r;
}

static void expect_exit_3(const struct run_result *r, const char *how)
{
        cr_assert(r->exit_code == 3, "%s: exit %d: %s", how, r->exit_code, r->err);
        cr_assert(strstr(r->err, "writing '") && strstr(r->err, "(ENOSPC)") &&
                  strstr(r->err, "the file holds"), "%s: %s", how, r->err);
}

/*
 * On a full tmpfs (the workers' shared memory is a file too, so a file
 * size limit would stop them before the results file).
 */
Test(daemon_results, fmuctl_run_exits_3_when_the_results_cannot_be_written, .fini = teardown)
{
        struct run_result r;
        char *small, *out, *local;

        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                cr_skip_test("no private mount namespace here: %s", strerror(errno));
        daemon_start(&d, NULL);
        small = daemon_path(&d, "small");
        cr_assert(mkdir(small, 0755) == 0);
        cr_assert(mount("tmpfs", small, "tmpfs", 0, "size=1m") == 0, "%s", strerror(errno));
        cr_assert(asprintf(&out, "%s/run.csv", small) > 0);
        cr_assert(asprintf(&local, "%s/local.csv", small) > 0);
        cr_assert(setenv("FMUD_CACHE_DIR", d.cache_dir, 1) == 0);

        r = fmuctl((const char *[]){ RUN, "--out", out, "--quiet", NULL });
        expect_exit_3(&r, "through the daemon");
        run_result_fini(&r);
        cr_assert(complete_lines(out) <= ROWS);
        cr_assert(unlink(out) == 0);

        r = fmuctl((const char *[]){ RUN, "--local", "--out", local, "--quiet", NULL });
        expect_exit_3(&r, "--local");
        run_result_fini(&r);
        cr_assert(complete_lines(local) <= ROWS);
        cr_assert(unlink(local) == 0);
        cr_assert(umount2(small, MNT_DETACH) == 0);
        free(local);
        free(out);
        free(small);
}

/*
 * warp 1: a row every 0.1 s of wall time, far less than a buffer in the
 * whole run. The rows reach the file while the session runs; SIGKILL then
 * leaves complete rows only.
 */
Test(daemon_results, paced_rows_reach_the_file_while_running, .fini = teardown)
{
        struct proto_load a = { .has_warp = true, .warp = 1 };
        struct proto_session_status st;
        struct proto_target t = { 0 };
        struct fmud *c;
        char *out;
        size_t lines = 0;

        daemon_start(&d, NULL);
        out = daemon_path(&d, "paced.csv");
        c = daemon_connect(&d);
        a.path = daemon_str(MSD);
        a.out = daemon_str(out);
        t.session = daemon_load(c, &a, &t.generation);
        cr_assert(fmud_start(c, &t, NULL) == 0);
        do {
                usleep(20000);
                cr_assert(fmud_status(c, t.session, &st) == 0);
        } while (st.rows_recorded < 3 && st.state == PROTO_STATE_RUNNING);
        cr_assert(st.state == PROTO_STATE_RUNNING, "rows on disk only once the session ended");
        cr_assert(daemon_str_eq(st.results, "writing"));
        lines = complete_lines(out);
        cr_assert(lines >= st.rows_recorded + 1, "%zu lines, %llu rows recorded", lines,
                  (unsigned long long)st.rows_recorded);
        fmud_close(c);
        cr_assert(kill(d.pid, SIGKILL) == 0);
        cr_assert(waitpid(d.pid, NULL, 0) == d.pid);
        d.pid = 0;
        cr_assert(complete_lines(out) >= lines);
        free(out);
}
