/*
 * daemon_logs: what an operator reads in the daemon's log (its stderr,
 * "<N>fmud: " lines, as journald takes them) about a session and its
 * workers, and what a session's FMUs logged: in the log at the priority
 * of their status, rate limited, without control characters, and through
 * `fmuctl logs` and `fmuctl run`. A real fmud (daemon_fixture.h), its
 * stderr captured.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon_fixture.h"
#include "support/run.h"

#define MISBEHAVE       FMUD_TEST_FMU_DIR "/Misbehave.fmu"

static struct fmud_daemon d;
static struct fmud *c;

static void setup(void)
{
        daemon_start(&d, NULL);
        c = daemon_connect(&d);
        cr_assert(setenv("FMUD_ENDPOINT", d.endpoint, 1) == 0);
}

static void teardown(void)
{
        fmud_close(c);
        c = NULL;
        daemon_stop(&d);
}

/* Load Misbehave with fault from t = 0 (count: fault 14's messages per step). */
static uint64_t load_misbehave(const char *fault, const char *count)
{
        struct proto_assign starts[] = {
                { daemon_str("fault"), daemon_str(fault) },
                { daemon_str("at"), daemon_str("0") },
                { daemon_str("count"), daemon_str(count) },
        };
        struct proto_load a = { .path = daemon_str(MISBEHAVE), .n_starts = 3, .starts = starts };

        return daemon_load(c, &a, NULL);
}

/* The daemon's log lines that contain all of a, b (NULL: any), in order, into v; their count. */
static size_t lines_with(const char *log, const char *a, const char *b, char **v, size_t max)
{
        size_t n = 0;

        for (const char *p = log; *p;) {
                const char *nl = strchr(p, '\n');
                size_t len = nl ? (size_t)(nl - p) : strlen(p);
                char *line = strndup(p, len);

                cr_assert(line != NULL);
                if (strstr(line, a) && (!b || strstr(line, b)) && n < max)
                        v[n++] = line;
                else
                        free(line);
                p += len + (nl ? 1 : 0);
        }
        return n;
}

static void free_lines(char **v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(v[i]);
}

/* fmuctl ARGS... (NULL-terminated), captured; the caller frees with run_result_fini(). */
static struct run_result fmuctl(const char *const args[])
{
        char *argv[16] = { (char *)FMUD_FMUCTL };
        struct run_result r = { 0 };
        size_t n = 1;

        for (; args[n - 1] && n < 15; n++)
                argv[n] = (char *)args[n - 1];
        argv[n] = NULL;
        cr_assert(run_capture(argv, &r) == 0);
        return r;
}

/*
 * A session's whole life, each line naming the session and who loaded
 * it, in order: the worker started with its pid, loaded (the file),
 * started, paused, resumed, finished (points, wall time, real-time
 * factor), the worker's exit, unloaded.
 */
Test(daemon_logs, a_session_life_is_logged_in_order, .init = setup, .fini = teardown)
{
        static const char *const want[] = {
                "worker ", "loaded '" MISBEHAVE "'", "started at t=0", "paused at t=",
                "resumed at t=", "finished at t=1: 10 points, wall time ", "ended, exited with status 0",
                "unloaded",
        };
        uint64_t s = load_misbehave("0", "0");
        struct proto_target t = { s, 0 };
        char prefix[64], *v[64], *log;
        size_t n, at = 0;

        cr_assert(fmud_step(c, &t, 1, NULL) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_resume(c, &t, NULL) == 0, "%s", fmud_errmsg(c));
        daemon_wait_state(c, s, PROTO_STATE_FINISHED, NULL);
        cr_assert(fmud_unload(c, &t) == 0, "%s", fmud_errmsg(c));

        snprintf(prefix, sizeof(prefix), "fmud: session %llu (uid %u): ", (unsigned long long)s,
                 (unsigned)getuid());
        log = daemon_log(&d);
        n = lines_with(log, prefix, NULL, v, 64);
        for (size_t i = 0; i < n && at < sizeof(want) / sizeof(want[0]); i++)
                if (strstr(v[i], want[at]))
                        at++;
        cr_assert(eq(sz, at, sizeof(want) / sizeof(want[0])),
                  "'%s' missing or out of order in:\n%s", at < 8 ? want[at] : "", log);
        free_lines(v, n);
        /* The end has its figures and the journal priorities: notice, the worker info. */
        n = lines_with(log, prefix, "finished at", v, 64);
        cr_assert(eq(sz, n, 1), "%s", log);
        cr_assert(strstr(v[0], "real-time factor ") != NULL, "%s", v[0]);
        cr_assert(strncmp(v[0], "<5>", 3) == 0, "%s", v[0]);
        free_lines(v, n);
        n = lines_with(log, prefix, "worker ", v, 64);
        cr_assert(n >= 2 && strstr(v[0], "started (sandbox ") && strncmp(v[0], "<6>", 3) == 0,
                  "%s", log);
        free_lines(v, n);
        free(log);
}

/* An FMU that aborts: the fault's line names the signal (err), so does the worker's end. */
Test(daemon_logs, a_worker_crash_is_logged_with_its_signal, .init = setup, .fini = teardown)
{
        uint64_t s = load_misbehave("2", "0");
        struct proto_target t = { s, 0 };
        char prefix[64], *v[8], *log;
        size_t n;

        cr_assert(fmud_start(c, &t, NULL) == 0, "%s", fmud_errmsg(c));
        daemon_wait_state(c, s, PROTO_STATE_FAULTED, NULL);
        cr_assert(fmud_unload(c, &t) == 0, "%s", fmud_errmsg(c));
        snprintf(prefix, sizeof(prefix), "<3>fmud: session %llu (", (unsigned long long)s);
        log = daemon_log(&d);
        n = lines_with(log, prefix, "faulted at t=0", v, 8);
        cr_assert(eq(sz, n, 1), "%s", log);
        cr_assert(strstr(v[0], "SIGABRT") != NULL, "%s", v[0]);
        free_lines(v, n);
        /* The instance's fault when it happened, the worker's end at the unload. */
        n = lines_with(log, prefix, "instance 'Misbehave': worker ", v, 8);
        cr_assert(eq(sz, n, 2), "%s", log);
        cr_assert(strstr(v[0], "was killed by SIGABRT (aborted, signal 6) during fmi3DoStep") !=
                  NULL, "%s", v[0]);
        cr_assert(strstr(v[1], "ended, killed by SIGABRT (Aborted, signal 6)") != NULL, "%s", v[1]);
        free_lines(v, n);
        free(log);
}

/* A SIGSEGV: the instance's line has the faulting address its crash handler saw. */
Test(daemon_logs, a_segfault_is_logged_with_its_address, .init = setup, .fini = teardown)
{
        uint64_t s = load_misbehave("1", "0");
        struct proto_target t = { s, 0 };
        char prefix[64], *v[8], *log;
        size_t n;

        cr_assert(fmud_start(c, &t, NULL) == 0, "%s", fmud_errmsg(c));
        daemon_wait_state(c, s, PROTO_STATE_FAULTED, NULL);
        snprintf(prefix, sizeof(prefix), "<3>fmud: session %llu (", (unsigned long long)s);
        log = daemon_log(&d);
        n = lines_with(log, prefix, "instance 'Misbehave': worker ", v, 8);
        cr_assert(eq(sz, n, 1), "%s", log);
        cr_assert(strstr(v[0], "was killed by SIGSEGV (segmentation fault, signal 11) during "
                               "fmi3DoStep; faulting address 0x0") != NULL, "%s", v[0]);
        free_lines(v, n);
        free(log);
}

/* The count in "N log messages dropped by the rate limit", summed over lines. */
static unsigned long long dropped_in(char **v, size_t n)
{
        unsigned long long sum = 0;

        for (size_t i = 0; i < n; i++) {
                const char *p = strstr(v[i], "[fmud] Warning: ");

                cr_assert(p != NULL, "%s", v[i]);
                sum += strtoull(p + strlen("[fmud] Warning: "), NULL, 10);
        }
        return sum;
}

/*
 * 10 steps of 60 Warning messages each, far faster than the limit lets
 * through (100 at once, then 20 a second): every message is either in
 * the log at warning priority or counted in a summary line.
 */
Test(daemon_logs, a_flooding_fmu_is_rate_limited_with_the_count_dropped, .init = setup,
     .fini = teardown)
{
        uint64_t s = load_misbehave("14", "60");
        struct proto_target t = { s, 0 };
        char prefix[64], **v, *log;
        size_t passed, summaries;
        unsigned long long dropped;

        v = calloc(1024, sizeof(*v));
        cr_assert(v != NULL);
        cr_assert(fmud_start(c, &t, NULL) == 0, "%s", fmud_errmsg(c));
        daemon_wait_state(c, s, PROTO_STATE_FINISHED, NULL);
        snprintf(prefix, sizeof(prefix), "fmud: session %llu (", (unsigned long long)s);
        log = daemon_log(&d);
        passed = lines_with(log, prefix, "] Warning: misbehave: flood message ", v, 1024);
        for (size_t i = 0; i < passed; i++)
                cr_assert(strncmp(v[i], "<4>", 3) == 0, "%s", v[i]);
        free_lines(v, passed);
        summaries = lines_with(log, prefix, "log messages dropped by the rate limit", v, 1024);
        cr_assert(summaries >= 1, "no summary line in:\n%.4000s", log);
        dropped = dropped_in(v, summaries);
        free_lines(v, summaries);
        cr_assert(eq(u64, passed + dropped, 600), "%zu passed, %llu dropped", passed, dropped);
        cr_assert(passed < 600);
        free(v);
        free(log);
}

/* Control characters never reach the log or the terminal: not even a forged line break. */
Test(daemon_logs, control_characters_are_stripped, .init = setup, .fini = teardown)
{
        uint64_t s = load_misbehave("18", "0");
        struct proto_target t = { s, 0 };
        char prefix[64], sid[24], *v[16], *log;
        struct run_result r;
        size_t n;

        cr_assert(fmud_start(c, &t, NULL) == 0, "%s", fmud_errmsg(c));
        daemon_wait_state(c, s, PROTO_STATE_FINISHED, NULL);
        snprintf(prefix, sizeof(prefix), "<4>fmud: session %llu (", (unsigned long long)s);
        log = daemon_log(&d);
        n = lines_with(log, prefix, "misbehave: ", v, 16);
        cr_assert(eq(sz, n, 10), "%s", log);
        cr_assert(strstr(v[0], "[31mred[0m fmud: forged line 2J end") != NULL, "%s", v[0]);
        for (size_t i = 0; i < n; i++)
                for (const unsigned char *p = (const unsigned char *)v[i]; *p; p++)
                        cr_assert(p[0] >= 0x20 && p[0] != 0x7f && p[0] != 0xc2, "%s", v[i]);
        free_lines(v, n);
        /* No line of the log starts with the forged text. */
        cr_assert(strstr(log, "\nfmud: forged") == NULL, "%s", log);
        free(log);

        snprintf(sid, sizeof(sid), "%llu", (unsigned long long)s);
        r = fmuctl((const char *[]){ "logs", sid, NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(strstr(r.out, ": warning [") != NULL, "%s", r.out);
        cr_assert(strstr(r.out, "]: misbehave: [31mred[0m fmud: forged line 2J end\n") != NULL,
                  "%s", r.out);
        for (const unsigned char *p = (const unsigned char *)r.out; *p; p++)
                cr_assert(p[0] == '\n' || (p[0] >= 0x20 && p[0] < 0x7f), "%s", r.out);
        run_result_fini(&r);
}

/* Text beyond ASCII, well-formed UTF-8, reaches fmuctl logs as it was logged. */
Test(daemon_logs, fmuctl_logs_keeps_utf8, .init = setup, .fini = teardown)
{
        uint64_t s = load_misbehave("24", "0");
        struct proto_target t = { s, 0 };
        struct run_result r;
        char sid[24];

        cr_assert(fmud_start(c, &t, NULL) == 0, "%s", fmud_errmsg(c));
        daemon_wait_state(c, s, PROTO_STATE_FINISHED, NULL);
        snprintf(sid, sizeof(sid), "%llu", (unsigned long long)s);
        r = fmuctl((const char *[]){ "logs", sid, NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(strstr(r.out, "]: misbehave: Gr\xc3\xbc\xc3\x9f\xc3\xa4 \xe2\x84\x83 "
                                "\xf0\x9f\x8c\xa1 end\n") != NULL, "%s", r.out);
        run_result_fini(&r);
}

/* fmuctl logs prints what the daemon kept, oldest first, one line each. */
Test(daemon_logs, fmuctl_logs_prints_the_kept_messages, .init = setup, .fini = teardown)
{
        uint64_t s = load_misbehave("11", "0");
        struct proto_target t = { s, 0 };
        struct proto_logs_result l;
        struct run_result r;
        char sid[24];
        const char *first, *second;

        cr_assert(fmud_start(c, &t, NULL) == 0, "%s", fmud_errmsg(c));
        daemon_wait_state(c, s, PROTO_STATE_FAULTED, NULL);
        cr_assert(fmud_logs(c, &t, &l) == 0, "%s", fmud_errmsg(c));
        cr_assert(l.n >= 2);
        cr_assert(eq(u64, l.messages[0].session, s));
        cr_assert(eq(u32, l.messages[0].status, 1));
        cr_assert(eq(u32, l.messages[1].status, 3));
        cr_assert(eq(u64, l.messages[1].seq, l.messages[0].seq + 1));

        snprintf(sid, sizeof(sid), "%llu", (unsigned long long)s);
        r = fmuctl((const char *[]){ "logs", sid, NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        first = strstr(r.out, ": warning [");
        second = strstr(r.out, ": error [");
        cr_assert(first && second && first < second, "%s", r.out);
        cr_assert(strstr(first, "misbehave: the first of two messages at t = 0") != NULL, "%s",
                  r.out);
        cr_assert(strstr(second, "misbehave: the second of two messages at t = 0") != NULL, "%s",
                  r.out);
        run_result_fini(&r);

        /* No such session: refused in one line. */
        r = fmuctl((const char *[]){ "logs", "999", NULL });
        cr_assert(eq(int, r.exit_code, 1), "%s", r.err);
        cr_assert(strstr(r.err, "no session 999") != NULL, "%s", r.err);
        run_result_fini(&r);
}

/*
 * fmuctl logs --follow, started before the session runs, prints its
 * messages as they come and returns when the session ends; fmuctl run
 * prints them on stderr as --local does.
 */
Test(daemon_logs, fmuctl_logs_follow_follows_until_the_end, .init = setup, .fini = teardown)
{
        uint64_t s = load_misbehave("18", "0");
        struct proto_target t = { s, 0 };
        char sid[24], cmd[512], out[8192];
        size_t n = 0, k;
        FILE *f;
        int lines = 0;

        snprintf(sid, sizeof(sid), "%llu", (unsigned long long)s);
        snprintf(cmd, sizeof(cmd), "'%s' logs %s --follow", FMUD_FMUCTL, sid);
        f = popen(cmd, "r");
        cr_assert(f != NULL);
        cr_assert(fmud_start(c, &t, NULL) == 0, "%s", fmud_errmsg(c));
        while (n < sizeof(out) - 1 && (k = fread(out + n, 1, sizeof(out) - 1 - n, f)) > 0)
                n += k;
        out[n] = '\0';
        cr_assert(eq(int, pclose(f), 0), "%s", out);
        for (const char *p = out; (p = strstr(p, ": warning [")); p++)
                lines++;
        cr_assert(eq(int, lines, 10), "%s", out);
        cr_assert(strstr(out, "fmud: forged line") != NULL, "%s", out);
}

Test(daemon_logs, fmuctl_run_prints_the_fmus_messages, .init = setup, .fini = teardown)
{
        char out[4096];
        struct run_result r;

        snprintf(out, sizeof(out), "%s/r.csv", d.dir);
        r = fmuctl((const char *[]){ "run", MISBEHAVE, "--set", "fault=11", "--set", "at=0.5",
                                     "--out", out, NULL });
        cr_assert(strstr(r.err, ": warning [") && strstr(r.err, "the first of two messages"),
                  "exit %d: %s", r.exit_code, r.err);
        cr_assert(strstr(r.err, ": error [") && strstr(r.err, "the second of two messages"),
                  "%s", r.err);
        /* In order, each once, even when PUB lost some (the kept ones fill the gap). */
        cr_assert(strstr(r.err, "the first of two messages") <
                  strstr(r.err, "the second of two messages"), "%s", r.err);
        cr_assert(strstr(strstr(r.err, "first of two messages") + 1, ": warning [") == NULL,
                  "%s", r.err);
        run_result_fini(&r);
}

/* An FMU's Fatal is logged at err: an FMU never pages an operator at crit. */
Test(daemon_logs, an_fmus_fatal_is_logged_at_err, .init = setup, .fini = teardown)
{
        uint64_t s = load_misbehave("12", "0");
        struct proto_target t = { s, 0 };
        char *v[4], *log;
        size_t n;

        cr_assert(fmud_start(c, &t, NULL) == 0, "%s", fmud_errmsg(c));
        daemon_wait_state(c, s, PROTO_STATE_FAULTED, NULL);
        log = daemon_log(&d);
        n = lines_with(log, "] Fatal: misbehave: fatal at t = ", NULL, v, 4);
        cr_assert(eq(sz, n, 1), "%s", log);
        cr_assert(eq(int, strncmp(v[0], "<3>fmud: session ", 17), 0), "%s", v[0]);
        free_lines(v, n);
        free(log);
}
