/*
 * run: `fmuctl run` end to end: the real binary runs the example scenarios
 * and a single FMU in real workers, writes CSV, and fails clearly. Each
 * test's environment is private (support/private_env.h), so a daemon
 * already serving on this machine is never used.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/un.h>
#include <unistd.h>

#include "support/private_env.h"
#include "support/run.h"
#include "support/tmpdir.h"

extern char **environ;

static char *dir;

static void setup(void)
{
        dir = tmpdir_new("fmud-run");
        cr_assert(dir != NULL);
        /* Private endpoints and cache: never the machine's daemon, never the user's cache. */
        cr_assert(eq(int, private_env(dir), 0));
}

static void teardown(void)
{
        tmpdir_free(dir);
}

static struct run_result fmuctl(const char *const args[])
{
        char *argv[16] = { (char *)FMUD_FMUCTL };
        struct run_result r = { 0 };
        size_t n = 1;

        for (; args[n - 1] && n < 15; n++)
                argv[n] = (char *)args[n - 1];
        argv[n] = NULL;
        cr_assert(eq(int, run_capture(argv, &r), 0));
        return r;
}

static char *slurp(const char *path)
{
        FILE *f = fopen(path, "r");
        char *buf = NULL;
        size_t cap = 0;
        ssize_t n;

        cr_assert(f != NULL, "%s", path);
        n = getdelim(&buf, &cap, '\0', f);
        cr_assert(n >= 0);
        fclose(f);
        return buf;
}

static size_t lines(const char *s)
{
        size_t n = 0;

        for (; *s; s++)
                n += *s == '\n';
        return n;
}

/* The last line's first field. */
static double last_time(const char *csv)
{
        const char *end = csv + strlen(csv) - 1, *p = end;

        while (p > csv && p[-1] != '\n')
                p--;
        return strtod(p, NULL);
}

Test(run, runs_the_mass_spring_damper_example_to_csv, .init = setup, .fini = teardown)
{
        char *out = NULL, *csv;
        struct run_result r;

        cr_assert(asprintf(&out, "%s/msd.csv", dir) > 0);
        r = fmuctl((const char *[]){ "run", FMUD_EXAMPLES "/msd.ssp", "--out", out, NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(strstr(r.out, "mass1") != NULL && strstr(r.out, "finished") != NULL, "%s", r.out);
        csv = slurp(out);
        cr_assert(eq(int, strncmp(csv, "time,mass1.x1,mass1.v1,mass2.x2,mass2.v2,mass2.F\n", 49), 0), "%s", csv);
        /* stop 10, step 0.01, decimation 10: t = 0, 0.1, ..., 10. */
        cr_assert(eq(sz, lines(csv), 102));
        cr_assert(eq(dbl, last_time(csv), 10.0));
        free(csv);
        free(out);
        run_result_fini(&r);
}

Test(run, a_single_fmu_is_a_scenario_with_bare_column_names, .init = setup, .fini = teardown)
{
        char *out = NULL, *csv;
        struct run_result r;

        cr_assert(asprintf(&out, "%s/ball.csv", dir) > 0);
        r = fmuctl((const char *[]){ "run", FMUD_TEST_FMU_DIR "/BouncingBall.fmu", "--out", out,
                                     "--stop-time", "1", "--quiet", NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(eq(str, r.out, ""), "--quiet prints nothing");
        csv = slurp(out);
        cr_assert(eq(int, strncmp(csv, "time,h,v,bounces\n0,1,0,0\n", 25), 0), "%s", csv);
        cr_assert(eq(dbl, last_time(csv), 1.0));
        free(csv);
        free(out);
        run_result_fini(&r);
}

Test(run, start_values_change_the_result, .init = setup, .fini = teardown)
{
        char *out = NULL, *csv;
        struct run_result r;

        cr_assert(asprintf(&out, "%s/ball.csv", dir) > 0);
        r = fmuctl((const char *[]){ "run", FMUD_TEST_FMU_DIR "/BouncingBall.fmu", "--out", out,
                                     "--stop-time", "0.1", "--start", "h0=2", "--quiet", NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        csv = slurp(out);
        cr_assert(strstr(csv, "\n0,2,0,0\n") != NULL, "%s", csv);
        free(csv);
        free(out);
        run_result_fini(&r);
}

Test(run, int64_columns_are_written_exactly, .init = setup, .fini = teardown)
{
        char *out = NULL, *csv;
        struct run_result r;

        /* 2^53 + 1 and 2^64 - 1: a double would round both. */
        cr_assert(asprintf(&out, "%s/ft.csv", dir) > 0);
        r = fmuctl((const char *[]){ "run", FMUD_TEST_FMU_DIR "/Feedthrough.fmu", "--out", out,
                                     "--stop-time", "0.1", "--start", "Int64_input=-9007199254740993",
                                     "--start", "UInt64_input=18446744073709551615",
                                     "--record", "Int64_output", "--record", "UInt64_output",
                                     "--quiet", NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        csv = slurp(out);
        cr_assert(strstr(csv, "\n0,-9007199254740993,18446744073709551615\n") != NULL, "%s", csv);
        free(csv);
        free(out);
        run_result_fini(&r);
}

Test(run, refuses_an_unknown_start_variable_naming_it, .init = setup, .fini = teardown)
{
        struct run_result r = fmuctl((const char *[]){ "run", FMUD_TEST_FMU_DIR "/BouncingBall.fmu",
                                                       "--start", "nosuch=1", "--quiet", NULL });

        cr_assert(eq(int, r.exit_code, 1), "%s", r.err);
        cr_assert(strstr(r.err, "nosuch") != NULL, "%s", r.err);
        run_result_fini(&r);
}

/* --budget inf: no budget, in this process as through a daemon. */
Test(run, an_infinite_budget_runs_to_the_end, .init = setup, .fini = teardown)
{
        char *out = NULL, *csv;
        struct run_result r;

        cr_assert(asprintf(&out, "%s/ball.csv", dir) > 0);
        for (int local = 0; local < 2; local++) {
                r = fmuctl((const char *[]){ "run", FMUD_TEST_FMU_DIR "/BouncingBall.fmu", "--out",
                                             out, "--stop-time", "0.5", "--budget", "inf",
                                             "--quiet", local ? "--local" : NULL, NULL });
                cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
                csv = slurp(out);
                cr_assert(eq(dbl, last_time(csv), 0.5));
                free(csv);
                run_result_fini(&r);
        }
        free(out);
}

Test(run, exit_codes_for_usage_and_missing_files, .init = setup, .fini = teardown)
{
        struct run_result r = fmuctl((const char *[]){ "run", NULL });

        cr_assert(eq(int, r.exit_code, 2));
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "run", "x.fmu", "--step", "fast", NULL });
        cr_assert(eq(int, r.exit_code, 2));
        cr_assert(strstr(r.err, "--step") != NULL, "%s", r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "run", "/nonexistent/x.ssp", "--quiet", NULL });
        cr_assert(eq(int, r.exit_code, 3), "%s", r.err);
        cr_assert(strstr(r.err, "/nonexistent/x.ssp") != NULL, "%s", r.err);
        run_result_fini(&r);
}

Test(run, runs_the_time_event_example_with_extra_points, .init = setup, .fini = teardown)
{
        char *out = NULL, *csv, *p;
        struct run_result r;

        cr_assert(asprintf(&out, "%s/te.csv", dir) > 0);
        r = fmuctl((const char *[]){ "run", FMUD_EXAMPLES "/timeevent.ssp", "--out", out,
                                     "--quiet", NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        csv = slurp(out);
        /* scaled.y = 2 * clock.gain = 6 from the start: set in Initialization Mode. */
        cr_assert(eq(int, strncmp(csv, "time,clock.count,clock.x,lin.x,lin.u0,scaled.y\n"
                                       "0,0,0,1,0,6\n", 59), 0), "%s", csv);
        /* 21 grid rows and two per event (0.15, 0.65, 1.15, 1.65), after the header. */
        cr_assert(eq(sz, lines(csv), 1 + 21 + 4 * 2));
        /* Before and after Event Mode at 0.15; lin steps on with the new level. */
        p = strstr(csv, "\n0.15,0,0,");
        cr_assert(p != NULL, "%s", csv);
        p = strchr(p + 1, '\n');
        cr_assert(eq(int, strncmp(p, "\n0.15,1,0,", strlen("\n0.15,1,0,")), 0), "%s", csv);
        p = strchr(p + 1, '\n');
        cr_assert(eq(int, strncmp(p, "\n0.2,1,0.05000000000000002,",
                                  strlen("\n0.2,1,0.05000000000000002,")), 0), "%s", csv);
        p = strchr(p + 1, '\n');
        cr_assert(eq(int, strncmp(p - 4, ",1,6\n", 5), 0), "lin.u0 at 0.2: %s", csv);
        /*
         * The grid after the events is 0.1 n, not accumulated from 0.15: printed as the
         * step was written only where the time is 0 + n * 0.1 to the bit.
         */
        cr_assert(strstr(csv, "\n0.3,1,") != NULL, "%s", csv);
        cr_assert(strstr(csv, "\n1.65,4,") != NULL && strstr(csv, "\n1.7,4,"), "%s", csv);
        cr_assert(eq(dbl, last_time(csv), 2.0));
        free(csv);
        free(out);
        run_result_fini(&r);
}

/* fmuctl run FMU [--local] [--tolerance TOL], recording what the FMU was given. */
static char *tolerance_csv(const char *fmu, bool local, const char *tolerance)
{
        const char *args[16] = { "run", fmu, "--stop-time", "0.02", "--record", "tolerance_seen",
                                 "--record", "tolerance_defined", "--quiet", "--out" };
        size_t n = 10;
        char *out = NULL, *csv;
        struct run_result r;

        cr_assert(asprintf(&out, "%s/tol.csv", dir) > 0);
        args[n++] = out;
        if (local)
                args[n++] = "--local";
        if (tolerance) {
                args[n++] = "--tolerance";
                args[n++] = tolerance;
        }
        args[n] = NULL;
        r = fmuctl(args);
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        csv = slurp(out);
        free(out);
        run_result_fini(&r);
        return csv;
}

Test(run, the_tolerance_reaches_the_fmu_locally_and_through_the_daemon, .init = setup,
     .fini = teardown)
{
        static const char *const fmus[] = { FMUD_TEST_FMU_DIR "/LinearOde.fmu",
                                            FMUD_TEST_FMU_DIR "/LinearOde2.fmu" };

        for (int local = 0; local < 2; local++) {
                /* Without --tolerance: LinearOde's DefaultExperiment gives 1e-5; LinearOde2 none. */
                char *csv = tolerance_csv(fmus[0], local, NULL);

                cr_assert(strstr(csv, "\n0,1e-05,1\n") != NULL, "local %d: %s", local, csv);
                free(csv);
                csv = tolerance_csv(fmus[1], local, NULL);
                cr_assert(strstr(csv, "\n0,0,0\n") != NULL, "local %d: %s", local, csv);
                free(csv);
                for (size_t i = 0; i < 2; i++) {
                        csv = tolerance_csv(fmus[i], local, "1e-7");
                        cr_assert(strstr(csv, "\n0,1e-07,1\n") != NULL, "local %d: %s", local,
                                  csv);
                        free(csv);
                }
        }
}

Test(run, refuses_a_tolerance_outside_zero_to_one, .init = setup, .fini = teardown)
{
        static const char *const bad[] = { "0", "1", "-0.001", "3" };
        struct run_result r;

        for (int local = 0; local < 2; local++)
                for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                        r = fmuctl((const char *[]){
                                "run", FMUD_TEST_FMU_DIR "/LinearOde.fmu", "--tolerance", bad[i],
                                "--quiet", local ? "--local" : NULL, NULL });

                        /* A command line fmuctl can check is a usage error, both ways. */
                        cr_assert(eq(int, r.exit_code, 2), "%s: %s", bad[i], r.err);
                        cr_assert(strstr(r.err, "tolerance") != NULL &&
                                  strstr(r.err, "above 0 and below 1") != NULL, "%s", r.err);
                        run_result_fini(&r);
                }
        r = fmuctl((const char *[]){ "run", "x.fmu", "--tolerance", "tight", NULL });
        cr_assert(eq(int, r.exit_code, 2));
        cr_assert(strstr(r.err, "--tolerance") != NULL, "%s", r.err);
        run_result_fini(&r);
}

/* A listener at path that never answers (non-blocking): the stand-in for another daemon. */
static int decoy_listen(const char *path)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

        cr_assert(fd >= 0);
        cr_assert(strlen(path) < sizeof(sa.sun_path), "%s", path);
        strcpy(sa.sun_path, path);
        cr_assert(eq(int, bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0), "%s", strerror(errno));
        cr_assert(eq(int, listen(fd, 16), 0));
        return fd;
}

/* How many clients connected to the decoy so far (each stays queued until accepted). */
static int decoy_contacts(int fd)
{
        int c, e, n = 0;

        while ((c = accept4(fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
                close(c);
                n++;
        }
        e = errno;
        cr_assert(e == EAGAIN || e == EWOULDBLOCK, "%s", strerror(e));
        return n;
}

/*
 * A daemon of the machine's at the default endpoint (RUNTIME_DIRECTORY
 * decides it for root and for other users alike; here a folder of the
 * test's own, so the decoy disturbs nobody): plain `fmuctl run` asks it
 * first; under this suite's private environment, fmuctl never does.
 */
Test(run, never_asks_a_daemon_at_the_machines_default_endpoint)
{
        char *machine = tmpdir_new("fmud-machine"), *sock = NULL, *cache = NULL, *out = NULL;
        struct run_result r;
        int decoy;

        cr_assert(machine != NULL);
        cr_assert(asprintf(&sock, "%s/control.sock", machine) > 0);
        cr_assert(asprintf(&cache, "%s/cache", machine) > 0);
        cr_assert(eq(int, setenv("RUNTIME_DIRECTORY", machine, 1), 0));
        cr_assert(eq(int, setenv("XDG_RUNTIME_DIR", machine, 1), 0));
        cr_assert(eq(int, setenv("FMUD_CACHE_DIR", cache, 1), 0));
        cr_assert(eq(int, unsetenv("FMUD_ENDPOINT"), 0));
        decoy = decoy_listen(sock);

        /* Without the private environment: the decoy is asked (unanswered, fmuctl runs alone). */
        cr_assert(asprintf(&out, "%s/first.csv", machine) > 0);
        r = fmuctl((const char *[]){ "run", FMUD_TEST_FMU_DIR "/BouncingBall.fmu", "--out", out,
                                     "--stop-time", "0.1", "--quiet", NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(decoy_contacts(decoy) > 0, "the decoy is not at the default endpoint");
        run_result_fini(&r);
        free(out);

        /* With it, as every other test here runs. */
        setup();
        cr_assert(asprintf(&out, "%s/second.csv", dir) > 0);
        r = fmuctl((const char *[]){ "run", FMUD_TEST_FMU_DIR "/BouncingBall.fmu", "--out", out,
                                     "--stop-time", "0.1", "--quiet", NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(eq(int, decoy_contacts(decoy), 0), "fmuctl asked the machine's daemon");
        run_result_fini(&r);
        free(out);

        close(decoy);
        teardown();
        tmpdir_free(machine);
        free(sock);
        free(cache);
}

/*
 * An FMU that asks to terminate in initialization (VanDerPol's t_stop at
 * the start, in its first Event Mode) finishes the run there: exit 0 and
 * the one row, locally as through the daemon (fmuctl run exits alike both
 * ways), and a Co-Simulation FMU's request from its Event Mode at the
 * start (TimeEvent's first event at t = 0 reaching stop_count 1) too.
 */
Test(run, a_terminate_request_in_initialization_exits_0_locally_and_through_the_daemon,
     .init = setup, .fini = teardown)
{
        static const char *const fmus[][4] = {
                { FMUD_TEST_FMU_DIR "/VanDerPol.fmu", "t_stop=0", "mu=1", "time,x0,x1\n0,2,0\n" },
                { FMUD_TEST_FMU_DIR "/TimeEvent.fmu", "stop_count=1", "phase=0", "time," },
        };

        for (size_t i = 0; i < 2; i++) {
                for (int local = 0; local < 2; local++) {
                        char *out = NULL, *csv;
                        struct run_result r;

                        cr_assert(asprintf(&out, "%s/t%zu%d.csv", dir, i, local) > 0);
                        r = fmuctl((const char *[]){ "run", fmus[i][0], "--start", fmus[i][1],
                                                     "--start", fmus[i][2],
                                                     "--out", out, "--quiet",
                                                     local ? "--local" : NULL, NULL });
                        cr_assert(eq(int, r.exit_code, 0), "%s local %d: %s", fmus[i][0], local,
                                  r.err);
                        csv = slurp(out);
                        cr_assert(eq(int, strncmp(csv, fmus[i][3], strlen(fmus[i][3])), 0),
                                  "%s", csv);
                        cr_assert(eq(sz, lines(csv), (size_t)2), "%s", csv);
                        free(csv);
                        free(out);
                        run_result_fini(&r);
                }
        }
}

/*
 * What an FMU prints to stdout (printf in an export) goes to stderr as its
 * instance's lines, never into the results on stdout (--out -), locally as
 * through the daemon.
 */
Test(run, an_fmu_printing_to_stdout_leaves_the_results_on_stdout_alone, .init = setup,
     .fini = teardown)
{
        for (int local = 0; local < 2; local++) {
                struct run_result r = fmuctl((const char *[]){
                        "run", FMUD_TEST_FMU_DIR "/Misbehave.fmu", "--start", "fault=20",
                        "--start", "at=0", "--stop-time", "0.03", "--step", "0.01", "--out", "-",
                        "--quiet", local ? "--local" : NULL, NULL });

                cr_assert(eq(int, r.exit_code, 0), "local %d: %s", local, r.err);
                cr_assert(strstr(r.out, "misbehave") == NULL, "local %d: %s", local, r.out);
                cr_assert(eq(int, strncmp(r.out, "time,", 5), 0), "%s", r.out);
                cr_assert(eq(sz, lines(r.out), (size_t)5), "local %d: %s", local, r.out);
                cr_assert(strstr(r.err, "Misbehave: info [stdout]: misbehave: printed to stdout "
                                 "at t = 0.02\n") != NULL, "local %d: %s", local, r.err);
                run_result_fini(&r);
        }
}

/* How often needle is in s. */
static size_t count_of(const char *s, const char *needle)
{
        size_t n = 0;

        for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
                n++;
        return n;
}

/*
 * Everything an FMU prints, to stdout and to stderr, reaches the user once,
 * under its instance's name, in the order written on each stream: a line
 * longer than a message in parts, the lines of the last step, and a last
 * line without its newline printed in fmi3Terminate. Locally and through
 * the daemon, whose run reads the session's log.
 */
Test(run, what_an_fmu_prints_is_shown_once_as_its_instances_lines, .init = setup,
     .fini = teardown)
{
        for (int local = 0; local < 2; local++) {
                struct run_result r = fmuctl((const char *[]){
                        "run", FMUD_TEST_FMU_DIR "/Misbehave.fmu", "--start", "fault=29",
                        "--start", "at=0", "--stop-time", "0.03", "--step", "0.01", "--out", "-",
                        "--quiet", local ? "--local" : NULL, NULL });
                const char *prev = r.err;

                cr_assert(eq(int, r.exit_code, 0), "local %d: %s", local, r.err);
                cr_assert(eq(sz, lines(r.out), (size_t)5), "local %d: %s", local, r.out);
                for (int i = 0; i < 3; i++) {
                        char out[64], err[64];
                        const char *at;

                        snprintf(out, sizeof(out), "Misbehave: info [stdout]: misbehave: out at "
                                 "t = %g\n", i * 0.01);
                        snprintf(err, sizeof(err), "Misbehave: info [stderr]: misbehave: err at "
                                 "t = %g\n", i * 0.01);
                        cr_assert(eq(sz, count_of(r.err, out), (size_t)1), "local %d, %s: %s",
                                  local, out, r.err);
                        cr_assert(eq(sz, count_of(r.err, err), (size_t)1), "local %d, %s: %s",
                                  local, err, r.err);
                        at = strstr(r.err, out);
                        cr_assert(at > prev, "local %d: %s before the line before: %s", local,
                                  out, r.err);
                        prev = at;
                }
                cr_assert(eq(sz, count_of(r.err, "[stdout]: misbehave: the last words, without "
                                          "a newline (nor a flush)\n"), (size_t)1),
                          "local %d: %s", local, r.err);
                /* 3000 characters: 1024, 1024 and 952, each part a line of its own. */
                cr_assert(eq(sz, count_of(r.err, "[stdout]: abcdefghij"), (size_t)1), "%s", r.err);
                cr_assert(eq(sz, count_of(r.err, "[stdout]: klmnopqrst"), (size_t)1), "%s", r.err);
                cr_assert(eq(sz, count_of(r.err, "[stdout]: uvwxyzabcd"), (size_t)1), "%s", r.err);
                cr_assert(eq(sz, count_of(r.err, "\n"), (size_t)10), "local %d: %s", local,
                          r.err);
                run_result_fini(&r);
        }
}

/* fmuctl run of Misbehave with fault and at, 0.01 steps to stop; locally or not. */
static struct run_result misbehave_run(const char *fault, const char *at, const char *stop,
                                       bool local)
{
        return fmuctl((const char *[]){ "run", FMUD_TEST_FMU_DIR "/Misbehave.fmu", "--start",
                                        fault, "--start", at, "--stop-time", stop, "--step",
                                        "0.01", "--out", "-", "--quiet",
                                        local ? "--local" : NULL, NULL });
}

/*
 * NUL bytes in what an FMU prints are dropped; what follows them still
 * comes. The first NUL stopped the stream for the rest of the run.
 */
Test(run, nul_bytes_an_fmu_prints_do_not_end_its_output, .init = setup, .fini = teardown)
{
        for (int local = 0; local < 2; local++) {
                struct run_result r = misbehave_run("fault=30", "at=0", "0.03", local);

                cr_assert(eq(int, r.exit_code, 0), "local %d: %s", local, r.err);
                cr_assert(strstr(r.err, "[stdout]: beforeafter\n") != NULL, "%s", r.err);
                cr_assert(strstr(r.err, "[stdout]: tail\n") != NULL, "%s", r.err);
                cr_assert(strstr(r.err, "[stdout]: misbehave: out at t = 0.02\n") != NULL,
                          "local %d: %s", local, r.err);
                run_result_fini(&r);
        }
}

/*
 * An FMU that reopens its stdout on a file of its own (freopen, after
 * half a megabyte of output) keeps that file as it wrote it: fmud's
 * rewinding of its output file reached the FMU's file through fd 1.
 */
Test(run, an_fmu_that_reopens_its_stdout_on_a_file_keeps_that_file, .init = setup,
     .fini = teardown)
{
        /* Its file lands in its working directory: this test's, unsandboxed. */
        cr_assert(eq(int, chdir(dir), 0));
        for (int local = 0; local < 2; local++) {
                struct run_result r = misbehave_run("fault=31", "at=0.01", "0.04", local);

                cr_assert(eq(int, r.exit_code, 0), "local %d: %s", local, r.err);
                cr_assert(strstr(r.err, "no longer starts with HEADER") == NULL, "%s", r.err);
                run_result_fini(&r);
        }
}

/*
 * An FMU that prints 70 lines a step still has its Warning shown after
 * 110 steps: printed lines have budgets of their own, in the worker and
 * the daemon, and what theirs drops is said by a printed line. They used
 * up the FMU's (each step's drop was said as the FMU's Warning), and past
 * the daemon's burst of 100 the real Warning was dropped. Through a
 * daemon: fmuctl run --local has no rate limit.
 */
Test(run, printed_chatter_does_not_crowd_out_an_fmus_warning, .init = setup, .fini = teardown)
{
        struct run_result r = misbehave_run("fault=32", "at=1.1", "1.12", false);

        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(strstr(r.err, "Misbehave: warning [logStatusWarning]: misbehave: the warning "
                         "that matters at t = 1.1\n") != NULL, "%s",
                  strlen(r.err) > 2000 ? r.err + strlen(r.err) - 2000 : r.err);
        /* What the lines' own budget dropped is said among them, not as the FMU's. */
        cr_assert(strstr(r.err, "log messages of the FMU were not forwarded") == NULL);
        run_result_fini(&r);
}

/* The line an FMU printed just before it crashed is shown, with the crash. */
Test(run, the_line_printed_before_a_crash_is_shown, .init = setup, .fini = teardown)
{
        for (int local = 0; local < 2; local++) {
                struct run_result r = misbehave_run("fault=33", "at=0.01", "0.03", local);

                cr_assert(not(eq(int, r.exit_code, 0)), "local %d: %s", local, r.err);
                cr_assert(strstr(r.err, "misbehave: the last line before the crash at t = "
                                 "0.01") != NULL, "local %d: %s", local, r.err);
                run_result_fini(&r);
        }
}

/*
 * --out - into a file that has content already, written between two other
 * writers to the same file (and its summary too, with stderr there): each
 * lands in the order written, as from any program printing to stdout.
 */
Test(run, results_on_stdout_land_between_what_is_written_before_and_after, .init = setup,
     .fini = teardown)
{
        /* Local, quiet and not; through the daemon (whose summary comes first), quiet. */
        for (int i = 0; i < 3; i++) {
                bool local = i < 2, quiet = i != 1;
                char *cmd, *path, *got, *rows, *footer, *after;
                struct run_result r;

                cr_assert(asprintf(&path, "%s/stdout-%d.txt", dir, i) > 0);
                cr_assert(asprintf(&cmd, "{ echo HEADER; '%s' run '%s' %s %s --stop-time 0.3 "
                                   "--out -; echo FOOTER; } > '%s' 2>&1", FMUD_FMUCTL,
                                   FMUD_TEST_FMU_DIR "/LinearOde.fmu", local ? "--local" : "",
                                   quiet ? "--quiet" : "", path) > 0);
                cr_assert(eq(int, run_capture((char *[]){ "/bin/sh", "-c", cmd, NULL }, &r), 0));
                cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
                got = slurp(path);
                cr_assert(eq(int, strncmp(got, "HEADER\ntime,", 12), 0), "%d: %s", i, got);
                rows = strstr(got, "\n0.3,");
                footer = strstr(got, "FOOTER\n");
                cr_assert(rows != NULL && footer != NULL, "%d: %s", i, got);
                cr_assert(eq(sz, strlen(footer), (size_t)7), "%d: %s", i, got);
                /* HEADER, the header and 30 rows before the last row; then the summary. */
                *rows = '\0';
                cr_assert(eq(sz, lines(got), (size_t)31), "%d: %s", i, got);
                after = strchr(rows + 1, '\n') + 1;
                if (quiet)
                        cr_assert(eq(ptr, after, footer), "%d: %s", i, rows + 1);
                else
                        cr_assert(eq(int, strncmp(after, "scenario ", 9), 0), "%d: %s", i, rows + 1);
                free(got);
                free(cmd);
                free(path);
                run_result_fini(&r);
        }
}

/*
 * --local gives its workers the sandbox --sandbox names, as a daemon's
 * session does: the Escape FMU's AF_INET socket is refused (result EPERM)
 * in basic and strict mode, and opens with the sandbox off.
 */
Test(run, local_workers_get_the_sandbox_asked_for, .init = setup, .fini = teardown)
{
        static const char *const modes[] = { "off", "basic", "strict" };

        for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
                struct run_result r = fmuctl((const char *[]){
                        "run", FMUD_TEST_FMU_DIR "/Escape.fmu", "--local", "--sandbox", modes[i],
                        "--start", "attempt=1", "--stop-time", "0.2", "--step", "0.1",
                        "--out", "-", "--quiet", NULL });
                char expected[32];

                snprintf(expected, sizeof(expected), "\n0.2,%d,2\n", i ? EPERM : 0);
                cr_assert(eq(int, r.exit_code, 0), "%s: %s", modes[i], r.err);
                cr_assert(eq(str, r.out + strlen(r.out) - strlen(expected), expected),
                          "%s: %s", modes[i], r.out);
                run_result_fini(&r);
        }
}

/*
 * An FMI 2.0 Enumeration (LinearOde2's band: high, middle, low as x
 * decays), which FMI 2.0 gets as an Integer, is recorded as its value,
 * locally as through the daemon; it was recorded as 0.
 */
Test(run, an_fmi2_enumeration_is_recorded_as_its_value, .init = setup, .fini = teardown)
{
        for (int local = 0; local < 2; local++) {
                struct run_result r = fmuctl((const char *[]){
                        "run", FMUD_TEST_FMU_DIR "/LinearOde2.fmu", "--record", "band",
                        "--stop-time", "2", "--step", "0.5", "--out", "-", "--quiet",
                        local ? "--local" : NULL, NULL });

                cr_assert(eq(int, r.exit_code, 0), "local %d: %s", local, r.err);
                cr_assert(eq(str, r.out, "time,band\n0,1\n0.5,1\n1,2\n1.5,3\n2,3\n"), "local %d",
                          local);
                run_result_fini(&r);
        }
}

/*
 * Infinity as people write it on a command line (inf, -Infinity, any
 * case) is a start value's INF (XML Schema's double, which start values
 * use). LinearOde2 stops at neither t_stop = +INF nor -INF (< 0: no stop).
 * -Infinity and inf were refused as not a value of the variable's type.
 */
Test(run, a_start_value_takes_infinity_in_any_spelling, .init = setup, .fini = teardown)
{
        static const char *const spellings[] = { "t_stop=inf", "t_stop=Infinity", "t_stop=+INF",
                                                 "t_stop=-infinity" };

        for (size_t i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++) {
                struct run_result r = fmuctl((const char *[]){
                        "run", FMUD_TEST_FMU_DIR "/LinearOde2.fmu", "--record", "x", "--start",
                        spellings[i], "--stop-time", "0.3", "--step", "0.1", "--out", "-",
                        "--quiet", "--local", NULL });

                cr_assert(eq(int, r.exit_code, 0), "%s: %s", spellings[i], r.err);
                cr_assert(eq(dbl, last_time(r.out), 0.3), "%s: %s", spellings[i], r.out);
                run_result_fini(&r);
        }
}

/*
 * An FMI 2.0 FMU that runs asynchronously (canRunAsynchronuously, section
 * 4.3.1) returns fmi2Pending from fmi2DoStep; the importer asks
 * fmi2GetStatus(fmi2DoStepStatus) until the step is done (section 4.2.3,
 * with no stepFinished callback given). Async2's results are LinearOde2's.
 * A pending step was a fault.
 */
Test(run, an_fmi2_step_that_is_pending_is_waited_for, .init = setup, .fini = teardown)
{
        for (int local = 0; local < 2; local++) {
                struct run_result r = fmuctl((const char *[]){
                        "run", FMUD_TEST_FMU_DIR "/Async2.fmu", "--record", "x", "--stop-time",
                        "1", "--step", "0.1", "--out", "-", "--quiet", local ? "--local" : NULL,
                        NULL });

                cr_assert(eq(int, r.exit_code, 0), "local %d: %s", local, r.err);
                cr_assert(eq(sz, lines(r.out), (size_t)12), "local %d: %s", local, r.out);
                cr_assert(eq(dbl, last_time(r.out), 1.0), "local %d: %s", local, r.out);
                cr_assert(strstr(r.out, "\n1,0.36787944117144") != NULL, "local %d: %s", local,
                          r.out);
                run_result_fini(&r);
        }
}

/*
 * An FMI 2.0 FMU asks to stop as FMI 2.0 says it (section 4.2.3): fmi2DoStep
 * returns fmi2Discard, fmi2Terminated is true, and fmi2LastSuccessfulTime is
 * where it stopped (LinearOde2's t_stop = 0.55, inside the step from 0.5).
 * The run finishes there, exit 0, its last row the state at 0.55; it
 * faulted as a discarded step.
 */
Test(run, an_fmi2_discard_with_terminated_finishes_at_the_last_successful_time, .init = setup,
     .fini = teardown)
{
        for (int local = 0; local < 2; local++) {
                struct run_result r = fmuctl((const char *[]){
                        "run", FMUD_TEST_FMU_DIR "/LinearOde2.fmu", "--record", "x", "--start",
                        "t_stop=0.55", "--stop-time", "2", "--step", "0.1", "--out", "-",
                        "--quiet", local ? "--local" : NULL, NULL });

                cr_assert(eq(int, r.exit_code, 0), "local %d: %s", local, r.err);
                cr_assert(eq(sz, lines(r.out), (size_t)8), "local %d: %s", local, r.out);
                cr_assert(eq(dbl, last_time(r.out), 0.55), "local %d: %s", local, r.out);
                cr_assert(strstr(r.out, "\n0.55,0.5769498103804866") != NULL, "local %d: %s",
                          local, r.out);
                run_result_fini(&r);
        }
}

/*
 * A component that cannot vary its step is sent rate * h from each point and
 * adds it itself: from 0.6000000000000001, its last step ends at
 * 0.7000000000000001, past a stopTime of 0.7, which FixedStepRigid (as
 * strict exports do, FMI 3.0 section 2.3.2) refuses. Its stopTime is where
 * that step ends, so the run finishes; it faulted at its last step.
 */
Test(run, a_fixed_step_fmus_last_step_is_never_past_its_stop_time, .init = setup,
     .fini = teardown)
{
        for (int local = 0; local < 2; local++) {
                struct run_result r = fmuctl((const char *[]){
                        "run", FMUD_TEST_FMU_DIR "/FixedStepRigid.fmu", "--stop-time", "0.7",
                        "--step", "0.1", "--out", "-", "--quiet", local ? "--local" : NULL,
                        NULL });

                cr_assert(eq(int, r.exit_code, 0), "local %d: %s", local, r.err);
                cr_assert(eq(dbl, last_time(r.out), 0.7), "local %d: %s", local, r.out);
                run_result_fini(&r);
        }
}

/*
 * Messages an FMU logs from a thread of its own (Misbehave's fault 21,
 * three a step) cannot go out on the worker's single-producer ring from
 * there: the worker's thread sends them when the call returns, locally as
 * through the daemon; they were only counted.
 */
Test(run, log_messages_from_an_fmus_own_thread_are_forwarded, .init = setup, .fini = teardown)
{
        for (int local = 0; local < 2; local++) {
                struct run_result r = fmuctl((const char *[]){
                        "run", FMUD_TEST_FMU_DIR "/Misbehave.fmu", "--start", "fault=21",
                        "--start", "at=0", "--stop-time", "0.01", "--step", "0.01", "--out",
                        "-", "--quiet", local ? "--local" : NULL, NULL });

                cr_assert(eq(int, r.exit_code, 0), "local %d: %s", local, r.err);
                for (int i = 0; i < 3; i++) {
                        char want[64];

                        snprintf(want, sizeof(want), "misbehave: message %d from a thread", i);
                        cr_assert(strstr(r.err, want) != NULL, "local %d: %s", local, r.err);
                }
                cr_assert(strstr(r.err, "not forwarded") == NULL, "local %d: %s", local, r.err);
                run_result_fini(&r);
        }
}

/* Past the 16 a call may queue, they are counted, and said. */
Test(run, log_messages_from_an_fmus_own_thread_past_the_queue_are_counted, .init = setup,
     .fini = teardown)
{
        struct run_result r = fmuctl((const char *[]){
                "run", FMUD_TEST_FMU_DIR "/Misbehave.fmu", "--start", "fault=21", "--start",
                "count=20", "--start", "at=0", "--stop-time", "0.01", "--step", "0.01", "--out",
                "-", "--quiet", "--local", NULL });

        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(strstr(r.err, "misbehave: message 15 from a thread") != NULL, "%s", r.err);
        cr_assert(strstr(r.err, "misbehave: message 16 from a thread") == NULL, "%s", r.err);
        cr_assert(strstr(r.err, "4 log messages of the FMU were not forwarded") != NULL, "%s",
                  r.err);
        run_result_fini(&r);
}

/* An Error's reason logged by a thread of the FMU, joined within the step, says why it failed. */
Test(run, an_error_logged_from_an_fmus_own_thread_says_why_the_step_failed, .init = setup,
     .fini = teardown)
{
        struct run_result r = fmuctl((const char *[]){
                "run", FMUD_TEST_FMU_DIR "/Misbehave.fmu", "--start", "fault=25", "--start",
                "at=0", "--stop-time", "0.01", "--step", "0.01", "--out", "-", "--quiet",
                "--local", NULL });

        cr_assert(r.exit_code != 0);
        cr_assert(strstr(r.err, "returned Error: misbehave: the solver thread diverged") != NULL,
                  "%s", r.err);
        run_result_fini(&r);
}

/*
 * An FMU that checks a licence in its environment (Misbehave fault 23,
 * as commercial exports do) runs with the user's environment, locally as
 * through fmuctl's private daemon, as in an importer's own process; and
 * without the variable it says why it refused.
 */
Test(run, an_fmu_gets_the_users_environment, .init = setup, .fini = teardown)
{
        for (int set = 0; set < 2; set++) {
                if (set)
                        cr_assert(eq(int, setenv("FMUD_MISBEHAVE_ENV", "2.5", 1), 0));
                for (int local = 0; local < 2; local++) {
                        struct run_result r = fmuctl((const char *[]){
                                "run", FMUD_TEST_FMU_DIR "/Misbehave.fmu", "--start",
                                "fault=23", "--record", "x", "--stop-time", "0.01", "--step",
                                "0.01", "--out", "-", "--quiet", local ? "--local" : NULL,
                                NULL });

                        if (set) {
                                cr_assert(eq(int, r.exit_code, 0), "local %d: %s", local, r.err);
                                cr_assert(eq(str, r.out, "time,x\n0,2.5\n0.01,2.5\n"),
                                          "local %d", local);
                        } else {
                                cr_assert(r.exit_code != 0, "local %d", local);
                                cr_assert(strstr(r.err, "FMUD_MISBEHAVE_ENV is not set") != NULL,
                                          "local %d: %s", local, r.err);
                        }
                        run_result_fini(&r);
                }
        }
}

/*
 * Ctrl-C while an FMU never comes back from its step (Misbehave's fault
 * 26, --budget inf: no deadline of its own): once the run ends anyway,
 * locally after a few seconds' grace or at a second Ctrl-C, through the
 * daemon by its unload; the rows before the step are kept, exit 130, and
 * no worker (nor private daemon) is left.
 */
Test(run, ctrl_c_ends_a_run_whose_fmu_never_returns, .init = setup, .fini = teardown,
     .timeout = 240)
{
        char *out = NULL, *csv;

        cr_assert(asprintf(&out, "%s/hang.csv", dir) > 0);
        for (int local = 0; local < 2; local++) {
                for (int signals = 1; signals <= 1 + local; signals++) {
                        char *argv[] = { (char *)FMUD_FMUCTL, (char *)"run",
                                         (char *)FMUD_TEST_FMU_DIR "/Misbehave.fmu", (char *)"--start",
                                         (char *)"fault=26", (char *)"--start", (char *)"at=0.3",
                                         (char *)"--budget", (char *)"inf", (char *)"--out", out,
                                         (char *)"--quiet", local ? (char *)"--local" : NULL, NULL };
                        struct run_result r;

                        (void) unlink(out);
                        cr_assert(eq(int, run_interrupt(argv, "hanging in the step", SIGINT, signals, &r), 0),
                                  "local %d, %d signals", local, signals);
                        cr_assert(eq(int, r.exit_code, 130), "local %d, %d signals: %s", local,
                                  signals, r.err);
                        cr_assert(strstr(r.err, "interrupted") != NULL, "%s", r.err);
                        csv = slurp(out);
                        cr_assert(eq(dbl, last_time(csv), 0.3), "local %d, %d signals: %s", local,
                                  signals, csv);
                        free(csv);
                        /* 50 ms polls for a minute: a bound against a hang, not a measurement. */
                        for (int i = 0; i < 1200 && run_any_process_names(dir) > 0; i++)
                                usleep(50000);
                        cr_assert(eq(int, run_any_process_names(dir), 0), "local %d, %d signals",
                                  local, signals);
                        run_result_fini(&r);
                }
        }
        free(out);
}

/*
 * An FMU that declares needsExecutionTool and fails to instantiate where
 * its tool is not (NeedsTool): the error says the FMU needs its tool, and
 * which, beside the FMU's own reason, and that a sandboxed worker cannot
 * start it; where the tool is, it runs.
 */
Test(run, an_fmu_that_needs_its_tool_says_so_when_it_fails, .init = setup, .fini = teardown)
{
        for (int tool = 0; tool < 2; tool++) {
                if (tool)
                        cr_assert(eq(int, setenv("FMUD_TEST_TOOL", "1", 1), 0));
                for (int local = 0; local < 2; local++) {
                        struct run_result r = fmuctl((const char *[]){
                                "run", FMUD_TEST_FMU_DIR "/NeedsTool.fmu", "--stop-time", "0.1",
                                "--out", "-", "--quiet", local ? "--local" : NULL, NULL });

                        if (tool) {
                                cr_assert(eq(int, r.exit_code, 0), "local %d: %s", local, r.err);
                        } else {
                                cr_assert(r.exit_code != 0, "local %d", local);
                                cr_assert(strstr(r.err, "cannot find the execution tool") != NULL,
                                          "local %d: %s", local, r.err);
                                cr_assert(strstr(r.err, "needsExecutionTool") != NULL,
                                          "local %d: %s", local, r.err);
                                cr_assert(strstr(r.err, "fmud test FMUs") != NULL, "local %d: %s",
                                              local, r.err);
                                /* A daemon's worker is sandboxed (strict); --local's is not. */
                                cr_assert(eq(int, strstr(r.err, "needs --sandbox off") != NULL,
                                             !local), "local %d: %s", local, r.err);
                        }
                        run_result_fini(&r);
                }
        }
}

/*
 * fmuctl killed (SIGKILL: no cleanup of its own) while a sandboxed FMU
 * hangs in its step: the worker, which dropped to another user and so
 * lost the death signal it had set before, still dies with its parent.
 */
Test(run, a_sandboxed_worker_hung_in_its_step_dies_with_a_killed_fmuctl, .init = setup,
     .fini = teardown, .timeout = 240)
{
        char *out = NULL;

        cr_assert(asprintf(&out, "%s/hang.csv", dir) > 0);
        for (int strict = 0; strict < 2; strict++) {
                char *argv[] = { (char *)FMUD_FMUCTL, (char *)"run",
                                 (char *)FMUD_TEST_FMU_DIR "/Misbehave.fmu", (char *)"--start",
                                 (char *)"fault=26", (char *)"--start", (char *)"at=0.3",
                                 (char *)"--budget", (char *)"inf",
                                 (char *)"--out", out, (char *)"--quiet", (char *)"--local",
                                 (char *)"--sandbox", strict ? (char *)"strict" : (char *)"basic",
                                 NULL };
                struct run_result r;
                int left = 1;

                cr_assert(eq(int, run_interrupt(argv, "hanging in the step", SIGKILL, 1, &r), 0));
                cr_assert(eq(int, r.exit_code, -1), "%s", r.err);
                /* 50 ms polls for a minute: a bound against a hang, not a measurement. */
                for (int i = 0; i < 1200 && left > 0; i++) {
                        left = run_any_process_names(dir);
                        if (left > 0)
                                usleep(50000);
                }
                cr_assert(eq(int, left, 0), "strict %d: a worker outlived fmuctl", strict);
                run_result_fini(&r);
        }
        free(out);
}

/*
 * `fmuctl run --out - | head -1` through a daemon: the reader leaves
 * before the rows are copied. fmuctl says so and exits 3, and neither
 * the daemon's results file nor the private daemon's directory is left;
 * it died of SIGPIPE with both left behind.
 */
Test(run, results_on_stdout_to_a_reader_that_left_leave_nothing_behind, .init = setup,
     .fini = teardown)
{
        char *tmp = NULL, *argv[] = { (char *)FMUD_FMUCTL, (char *)"run",
                                      (char *)FMUD_TEST_FMU_DIR "/BouncingBall.fmu", (char *)"--out",
                                      (char *)"-", (char *)"--quiet", NULL };
        posix_spawn_file_actions_t fa;
        int fds[2], status;
        struct dirent *e;
        size_t left = 0;
        pid_t pid;
        DIR *d;

        cr_assert(asprintf(&tmp, "%s/tmp", dir) > 0);
        cr_assert(eq(int, mkdir(tmp, 0700), 0));
        cr_assert(eq(int, setenv("TMPDIR", tmp, 1), 0));
        cr_assert(eq(int, pipe(fds), 0));
        /* The reader has left before anything comes. */
        close(fds[0]);
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
        cr_assert(eq(int, posix_spawn(&pid, argv[0], &fa, NULL, argv, environ), 0));
        posix_spawn_file_actions_destroy(&fa);
        close(fds[1]);
        cr_assert(eq(int, (int)waitpid(pid, &status, 0), (int)pid));
        cr_assert(eq(int, WIFEXITED(status) ? 0 : WTERMSIG(status), 0), "fmuctl died of a signal");
        cr_assert(eq(int, WEXITSTATUS(status), 3));
        d = opendir(tmp);
        cr_assert(d != NULL);
        while ((e = readdir(d)))
                left += e->d_name[0] != '.';
        closedir(d);
        cr_assert(eq(sz, left, 0), "the private daemon's directory is left in %s", tmp);
        free(tmp);
}

/*
 * A cache that cannot take the FMU (full, or read-only): the error says
 * so and exits 3, a system error, in this process and through the
 * daemon; it said the scenario was invalid (exit 1), which a script that
 * retries system errors takes for a broken model.
 */
Test(run, a_full_or_read_only_cache_is_a_system_error, .init = setup, .fini = teardown)
{
        char *cache = NULL;

        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                cr_skip_test("no private mount namespace here: %s", strerror(errno));
        cr_assert(asprintf(&cache, "%s/small", dir) > 0);
        cr_assert(eq(int, mkdir(cache, 0755), 0));
        cr_assert(eq(int, setenv("FMUD_CACHE_DIR", cache, 1), 0));
        cr_assert(eq(int, setenv("XDG_CACHE_HOME", cache, 1), 0));
        for (int ro = 0; ro < 2; ro++) {
                cr_assert(eq(int, mount("tmpfs", cache, "tmpfs", ro ? MS_RDONLY : 0,
                                        "size=16k,mode=0755"), 0), "%s", strerror(errno));
                for (int local = 0; local < 2; local++) {
                        struct run_result r = fmuctl((const char *[]){
                                "run", FMUD_TEST_FMU_DIR "/BouncingBall.fmu", "--out", "-",
                                "--quiet", local ? "--local" : NULL, NULL });

                        cr_assert(eq(int, r.exit_code, 3), "ro %d, local %d: %s", ro, local, r.err);
                        cr_assert(strstr(r.err, ro ? "Read-only file system" :
                                         "No space left on device") != NULL, "ro %d, local %d: %s",
                                  ro, local, r.err);
                        cr_assert(strstr(r.err, "invalid") == NULL, "ro %d, local %d: %s", ro,
                                  local, r.err);
                        run_result_fini(&r);
                }
                cr_assert(eq(int, umount(cache), 0));
        }
        free(cache);
}

/* A binary file whole (caller frees), its length in *ret_len. */
static char *read_all(const char *path, size_t *ret_len)
{
        FILE *f = fopen(path, "rb");
        char *buf = malloc(1 << 20);

        cr_assert(f != NULL && buf != NULL, "%s", path);
        *ret_len = fread(buf, 1, 1 << 20, f);
        fclose(f);
        return buf;
}

/*
 * A .mat out whose disk fills during the run: the error says so (exit 3)
 * and a .mat of that name from an earlier run is as it was; the rows were
 * converted into it in place, and it was left empty.
 */
Test(run, a_mat_out_on_a_full_disk_leaves_the_earlier_file_as_it_was, .init = setup,
     .fini = teardown)
{
        char *small = NULL, *mat = NULL, *before, *after;
        size_t len_before = 0, len_after = 0;
        struct run_result r;

        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                cr_skip_test("no private mount namespace here: %s", strerror(errno));
        cr_assert(asprintf(&small, "%s/small", dir) > 0);
        cr_assert(eq(int, mkdir(small, 0755), 0));
        cr_assert(eq(int, mount("tmpfs", small, "tmpfs", 0, "size=64k,mode=0755"), 0), "%s",
                  strerror(errno));
        cr_assert(asprintf(&mat, "%s/r.mat", small) > 0);
        r = fmuctl((const char *[]){ "run", FMUD_TEST_FMU_DIR "/BouncingBall.fmu", "--out", mat,
                                     "--stop-time", "0.5", "--quiet", "--local", NULL });
        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        run_result_fini(&r);
        before = read_all(mat, &len_before);
        cr_assert(len_before > 0);
        /* Far more rows than 64 KiB hold. */
        r = fmuctl((const char *[]){ "run", FMUD_TEST_FMU_DIR "/BouncingBall.fmu", "--out", mat,
                                     "--stop-time", "100", "--step", "0.001", "--quiet",
                                     "--local", NULL });
        cr_assert(eq(int, r.exit_code, 3), "%s", r.err);
        cr_assert(strstr(r.err, "No space left on device") != NULL, "%s", r.err);
        run_result_fini(&r);
        after = read_all(mat, &len_after);
        cr_assert(eq(sz, len_after, len_before));
        cr_assert(eq(int, memcmp(before, after, len_before), 0));
        free(before);
        free(after);
        /* And the new file it was written to is gone. */
        {
                DIR *d = opendir(small);
                struct dirent *e;
                size_t n = 0;

                cr_assert(d != NULL);
                while ((e = readdir(d)))
                        n += e->d_name[0] != '.';
                closedir(d);
                cr_assert(eq(sz, n, 1));
        }
        cr_assert(eq(int, umount2(small, MNT_DETACH), 0));
        free(mat);
        free(small);
}

/*
 * An FMU whose fmi3Terminate fails (Misbehave fault 27: a terminal
 * assertion, as a Modelica model's) ends the run as a fault naming the call
 * and the FMU's message, its results complete, locally as through the
 * daemon. The run exited 0, and through the daemon the message reached
 * nobody: Terminate came only at the unload, after fmuctl had stopped
 * listening.
 */
Test(run, an_fmu_whose_terminate_fails_faults_the_run_with_its_message, .init = setup,
     .fini = teardown)
{
        for (int local = 0; local < 2; local++) {
                char *out = NULL, *csv;
                struct run_result r;

                cr_assert(asprintf(&out, "%s/term%d.csv", dir, local) > 0);
                r = fmuctl((const char *[]){ "run", FMUD_TEST_FMU_DIR "/Misbehave.fmu", "--start",
                                             "fault=27", "--stop-time", "0.1", "--step", "0.01",
                                             "--out", out, "--quiet",
                                             local ? "--local" : NULL, NULL });
                cr_assert(eq(int, r.exit_code, 4), "local %d: %s", local, r.err);
                cr_assert(not(eq(ptr, strstr(r.err, "fmi3Terminate"), NULL)), "local %d: %s",
                          local, r.err);
                cr_assert(not(eq(ptr, strstr(r.err, "terminal assertion failed: x = "), NULL)),
                          "local %d: %s", local, r.err);
                csv = slurp(out);
                cr_assert(eq(sz, lines(csv), (size_t)12), "%s", csv);
                cr_assert(fabs(last_time(csv) - 0.1) < 1e-12, "%s", csv);
                free(csv);
                free(out);
                run_result_fini(&r);
        }
}

/*
 * An FMU whose log categories name no status (only logAll and logVerbose)
 * says why its step failed: every category is turned on and its messages
 * of a status other than OK are kept. It was instantiated with loggingOn
 * false, so the fault said only "returned Error".
 */
Test(run, an_fmu_whose_log_categories_name_no_status_says_why_it_failed, .init = setup,
     .fini = teardown)
{
        struct run_result r = fmuctl((const char *[]){
                "run", FMUD_TEST_FMU_DIR "/MisbehaveLogAll.fmu", "--start", "fault=11", "--start",
                "at=0.05", "--stop-time", "0.1", "--step", "0.01", "--out", "-", "--local", NULL });

        cr_assert(eq(int, r.exit_code, 4), "%s", r.err);
        cr_assert(not(eq(ptr, strstr(r.err, "misbehave: the second of two messages"), NULL)), "%s",
                  r.err);
        run_result_fini(&r);
}

/*
 * --record of the FMU's independent variable (time, as users ask for it)
 * gives one time column, with a warning saying it is always there; it gave
 * two columns named time.
 */
Test(run, recording_the_independent_variable_gives_one_time_column, .init = setup,
     .fini = teardown)
{
        struct run_result r = fmuctl((const char *[]){
                "run", FMUD_TEST_FMU_DIR "/TimeEvent.fmu", "--stop-time", "0.2", "--step", "0.1",
                "--record", "time", "--record", "count", "--out", "-", "--quiet", "--local", NULL });

        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(eq(int, strncmp(r.out, "time,count\n", 11), 0), "%s", r.out);
        cr_assert(not(eq(ptr, strstr(r.err, "the time column"), NULL)), "%s", r.err);
        run_result_fini(&r);
}

/*
 * Interrupted, and then the FMU's Terminate fails: exit 130 for the
 * interrupt, and the Terminate's message said, locally as through the
 * daemon. Locally it was exit 4; through the daemon the message was lost.
 */
Test(run, an_interrupted_run_whose_terminate_fails_says_so_and_exits_130, .init = setup,
     .fini = teardown, .timeout = 120)
{
        char *out = NULL;

        cr_assert(asprintf(&out, "%s/int27.csv", dir) > 0);
        for (int local = 0; local < 2; local++) {
                char *argv[] = { (char *)FMUD_FMUCTL, (char *)"run",
                                 (char *)FMUD_TEST_FMU_DIR "/Misbehave.fmu", (char *)"--start",
                                 (char *)"fault=27", (char *)"--start", (char *)"at=0.2",
                                 (char *)"--warp", (char *)"1", (char *)"--stop-time",
                                 (char *)"60", (char *)"--out", out, (char *)"--quiet",
                                 local ? (char *)"--local" : NULL, NULL };
                struct run_result r;

                (void) unlink(out);
                cr_assert(eq(int, run_interrupt(argv, "terminal assertion is armed", SIGINT, 1,
                                                &r), 0), "local %d", local);
                cr_assert(eq(int, r.exit_code, 130), "local %d: %s", local, r.err);
                cr_assert(not(eq(ptr, strstr(r.err, "interrupted"), NULL)), "%s", r.err);
                cr_assert(not(eq(ptr, strstr(r.err, "terminal assertion failed"), NULL)),
                          "local %d: %s", local, r.err);
                run_result_fini(&r);
        }
        free(out);
}

/*
 * An FMU's log message full of controls (an escape sequence, a bell, a
 * line break that would forge a line of fmuctl's own, a C1 CSI): --local
 * prints it as a daemon's client does, one line, no control reaching the
 * terminal. It was written byte for byte.
 */
Test(run, local_prints_an_fmus_messages_without_their_control_characters, .init = setup,
     .fini = teardown)
{
        struct run_result r = fmuctl((const char *[]){
                "run", FMUD_TEST_FMU_DIR "/Misbehave.fmu", "--start", "fault=18", "--start", "at=0",
                "--stop-time",
                "0.02", "--step", "0.01", "--out", "-", "--quiet", "--local", NULL });
        const char *line = strstr(r.err, "misbehave: ");

        cr_assert(eq(int, r.exit_code, 0), "%s", r.err);
        cr_assert(line != NULL, "%s", r.err);
        cr_assert(strstr(r.err, "forged line") != NULL, "%s", r.err);
        cr_assert(strstr(r.err, "\nfmud: forged") == NULL, "%s", r.err);
        for (const char *p = r.err; *p; p++) {
                bool printable = (unsigned char)*p >= 0x20 || *p == '\n';

                cr_assert(printable, "control %#x in: %s", (unsigned char)*p, r.err);
        }
        cr_assert(strstr(r.err, "\x7f") == NULL && strstr(r.err, "\xc2\x9b") == NULL, "%s",
                  r.err);
        run_result_fini(&r);
}

/*
 * Ctrl-C while the run's end is in a Terminate that takes a minute
 * (Misbehave fault 28, --local): the Terminate gets a few seconds, then
 * its worker is killed, and the run says it was interrupted (exit 130).
 * Terminate was exempt from the interruption: the run waited the minute
 * and exited 0.
 */
Test(run, an_interrupt_during_a_long_terminate_cuts_it, .init = setup, .fini = teardown,
     .timeout = 120)
{
        char *out = NULL;
        char *argv[] = { (char *)FMUD_FMUCTL, (char *)"run",
                         (char *)FMUD_TEST_FMU_DIR "/Misbehave.fmu", (char *)"--start",
                         (char *)"fault=28", (char *)"--start", (char *)"count=60000",
                         (char *)"--stop-time", (char *)"0.02", (char *)"--step", (char *)"0.01",
                         (char *)"--out", NULL, (char *)"--quiet", (char *)"--local", NULL };
        struct run_result r;

        cr_assert(asprintf(&out, "%s/int28.csv", dir) > 0);
        argv[12] = out;
        cr_assert(eq(int, run_interrupt(argv, "terminating slowly", SIGINT, 1, &r), 0));
        cr_assert(eq(int, r.exit_code, 130), "%s", r.err);
        cr_assert(not(eq(ptr, strstr(r.err, "interrupted"), NULL)), "%s", r.err);
        cr_assert(not(eq(ptr, strstr(r.err, "terminate"), NULL)), "%s", r.err);
        run_result_fini(&r);
        free(out);
}
