/*
 * fmuctl_daemon: the real fmuctl against a real fmud: the session verbs,
 * their JSON, exit codes and one-line refusals; `fmuctl run` with no
 * daemon listening (it starts a private one and leaves nothing behind);
 * the FMU's warnings at load. Keys for remote access are tested in
 * test_fmuctl_keys.c.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zip.h>
#include <zmq.h>

#include "daemon_fixture.h"
#include "support/private_env.h"
#include "support/run.h"
#include "support/tmpdir.h"

static struct fmud_daemon d;

static void setup(void)
{
        daemon_start(&d, NULL);
        cr_assert(setenv("FMUD_ENDPOINT", d.endpoint, 1) == 0);
}

static void teardown(void)
{
        daemon_stop(&d);
}

/* fmuctl ARGS... (NULL-terminated); the caller frees with run_result_fini(). */
static struct run_result fmuctl(const char *const args[])
{
        char *argv[32] = { (char *)FMUD_FMUCTL };
        struct run_result r = { 0 };
        size_t n = 1;

        for (; args[n - 1] && n < 31; n++)
                argv[n] = (char *)args[n - 1];
        argv[n] = NULL;
        cr_assert(run_capture(argv, &r) == 0);
        return r;
}

/* fmuctl ARGS... that must succeed, its stdout parsed as JSON (caller puts). */
static struct json_object *fmuctl_json(const char *const args[])
{
        struct run_result r = fmuctl(args);
        struct json_object *o;

        cr_assert(r.exit_code == 0, "fmuctl %s: exit %d: %s", args[0], r.exit_code, r.err);
        o = json_tokener_parse(r.out);
        cr_assert(o != NULL, "fmuctl %s --json printed no JSON: '%s'", args[0], r.out);
        run_result_fini(&r);
        return o;
}

static struct json_object *key(struct json_object *o, const char *k)
{
        struct json_object *v = NULL;

        cr_assert(json_object_object_get_ex(o, k, &v), "no key '%s' in %s", k,
                  json_object_to_json_string(o));
        return v;
}

static size_t count_lines(const char *s)
{
        size_t n = 0;

        for (; *s; s++)
                n += *s == '\n';
        return n;
}

Test(fmuctl_daemon, session_verbs_with_json_and_exit_codes, .init = setup, .fini = teardown)
{
        struct json_object *o, *v;
        struct run_result r;
        char sid[32];

        o = fmuctl_json((const char *[]){ "load", FMUD_EXAMPLES "/msd.ssp", "--warp", "1",
                                          "--json", NULL });
        snprintf(sid, sizeof(sid), "%llu",
                 (unsigned long long)json_object_get_uint64(key(o, "session")));
        cr_assert(strcmp(sid, "1") == 0, "session %s", sid);
        json_object_put(o);

        o = fmuctl_json((const char *[]){ "status", sid, "--json", NULL });
        cr_assert(strcmp(json_object_get_string(key(o, "state")), "loaded") == 0);
        cr_assert(json_object_get_double(key(o, "time")) == 0.0);
        cr_assert(json_object_get_uint64(key(o, "points")) == 0);
        (void) key(o, "realTimeFactor");
        cr_assert(json_object_get_double(key(o, "lagMaxS")) == 0.0);
        cr_assert(json_object_get_double(key(key(o, "lateness"), "p50Us")) == 0.0);
        cr_assert(json_object_get_double(key(key(o, "lateness"), "p99Us")) == 0.0);
        cr_assert(json_object_get_double(key(key(o, "lateness"), "p999Us")) == 0.0);
        cr_assert(json_object_get_double(key(key(o, "lateness"), "maxUs")) == 0.0);
        cr_assert(json_object_get_double(key(key(o, "latenessWindow"), "maxUs")) == 0.0);
        cr_assert(json_object_get_uint64(key(o, "overruns")) == 0);
        cr_assert(strcmp(json_object_get_string(key(o, "overrun")), "none") == 0);
        json_object_put(o);

        /* Refused: one line on stderr naming the command, exit code 1. */
        r = fmuctl((const char *[]){ "pause", sid, NULL });
        cr_assert(r.exit_code == 1, "exit %d", r.exit_code);
        cr_assert(count_lines(r.err) == 1 && strncmp(r.err, "fmuctl: ", 8) == 0, "'%s'", r.err);
        cr_assert(strstr(r.err, "pause") != NULL, "%s", r.err);
        run_result_fini(&r);

        r = fmuctl((const char *[]){ "start", sid, NULL });
        cr_assert(r.exit_code == 0, "%s", r.err);
        run_result_fini(&r);
        o = fmuctl_json((const char *[]){ "pause", sid, "--json", NULL });
        cr_assert(strcmp(json_object_get_string(key(o, "state")), "paused") == 0);
        json_object_put(o);

        o = fmuctl_json((const char *[]){ "get", sid, "mass1.x1", "mass2.x2", "--json", NULL });
        v = key(o, "mass2.x2");
        cr_assert(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int));
        json_object_put(o);

        o = fmuctl_json((const char *[]){ "list", "--json", NULL });
        v = key(o, "sessions");
        cr_assert(json_object_is_type(v, json_type_array) && json_object_array_length(v) == 1,
                  "%s", json_object_to_json_string(o));
        v = json_object_array_get_idx(v, 0);
        cr_assert(json_object_get_uint64(key(v, "session")) == 1);
        cr_assert(strcmp(json_object_get_string(key(v, "state")), "paused") == 0);
        json_object_put(o);

        r = fmuctl((const char *[]){ "unload", sid, NULL });
        cr_assert(r.exit_code == 0, "%s", r.err);
        run_result_fini(&r);
        /* Now the session is unknown. */
        r = fmuctl((const char *[]){ "status", sid, NULL });
        cr_assert(r.exit_code == 1, "exit %d", r.exit_code);
        cr_assert(count_lines(r.err) == 1, "'%s'", r.err);
        run_result_fini(&r);
        /* Usage errors are 2. */
        r = fmuctl((const char *[]){ "start", NULL });
        cr_assert(r.exit_code == 2, "exit %d", r.exit_code);
        run_result_fini(&r);
}

/* The tolerance of each instance in `fmuctl status SID --json`, or NAN for null. */
static double status_tolerance(const char *sid, size_t i)
{
        struct json_object *o = fmuctl_json((const char *[]){ "status", sid, "--json", NULL });
        struct json_object *in = json_object_array_get_idx(key(o, "instances"), i), *t;
        double v;

        cr_assert(in != NULL);
        t = key(in, "tolerance");
        v = t ? json_object_get_double(t) : NAN;
        json_object_put(o);
        return v;
}

Test(fmuctl_daemon, load_passes_the_tolerance_and_status_shows_it, .init = setup,
     .fini = teardown)
{
        struct run_result r;

        /* LinearOde's DefaultExperiment says 1e-5; LinearOde2's says nothing. */
        r = fmuctl((const char *[]){ "load", FMUD_TEST_FMU_DIR "/LinearOde.fmu", NULL });
        cr_assert(r.exit_code == 0 && strcmp(r.out, "1\n") == 0, "%s%s", r.out, r.err);
        run_result_fini(&r);
        cr_assert(status_tolerance("1", 0) == 1e-5);
        r = fmuctl((const char *[]){ "load", FMUD_TEST_FMU_DIR "/LinearOde2.fmu", NULL });
        cr_assert(r.exit_code == 0, "%s", r.err);
        run_result_fini(&r);
        cr_assert(isnan(status_tolerance("2", 0)));
        r = fmuctl((const char *[]){ "load", FMUD_TEST_FMU_DIR "/LinearOde2.fmu", "--tolerance",
                                     "1e-7", NULL });
        cr_assert(r.exit_code == 0, "%s", r.err);
        run_result_fini(&r);
        cr_assert(status_tolerance("3", 0) == 1e-7);
        r = fmuctl((const char *[]){ "get", "3", "tolerance_seen", "tolerance_defined", NULL });
        cr_assert(r.exit_code == 0, "%s", r.err);
        cr_assert(strstr(r.out, "1e-07") != NULL && strstr(r.out, "true") != NULL, "%s", r.out);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "status", "3", NULL });
        cr_assert(r.exit_code == 0, "%s", r.err);
        cr_assert(strstr(r.out, "tolerance") != NULL && strstr(r.out, "1e-07") != NULL, "%s",
                  r.out);
        run_result_fini(&r);
        /* Refused by fmuctl before the daemon hears of it (a usage error); no session is left. */
        r = fmuctl((const char *[]){ "load", FMUD_TEST_FMU_DIR "/LinearOde2.fmu", "--tolerance",
                                     "1", NULL });
        cr_assert(r.exit_code == 2, "exit %d: %s", r.exit_code, r.err);
        cr_assert(strstr(r.err, "tolerance") != NULL && strstr(r.err, "above 0 and below 1"),
                  "%s", r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "status", "4", NULL });
        cr_assert(r.exit_code == 1, "exit %d", r.exit_code);
        run_result_fini(&r);
}

Test(fmuctl_daemon, load_transient_is_shown_by_list_and_status, .init = setup, .fini = teardown)
{
        struct json_object *o, *v;
        struct run_result r;

        r = fmuctl((const char *[]){ "load", FMUD_EXAMPLES "/msd.ssp", NULL });
        cr_assert(r.exit_code == 0 && strcmp(r.out, "1\n") == 0, "%s%s", r.out, r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "load", FMUD_EXAMPLES "/msd.ssp", "--transient", NULL });
        cr_assert(r.exit_code == 0 && strcmp(r.out, "2\n") == 0, "%s%s", r.out, r.err);
        run_result_fini(&r);
        /* Its owner (that fmuctl) is gone; the lease (10 s by default) still holds it. */
        o = fmuctl_json((const char *[]){ "list", "--json", NULL });
        v = key(o, "sessions");
        cr_assert(json_object_array_length(v) == 2, "%s", json_object_to_json_string(o));
        cr_assert(!json_object_get_boolean(key(json_object_array_get_idx(v, 0), "transient")));
        cr_assert(json_object_get_boolean(key(json_object_array_get_idx(v, 1), "transient")));
        cr_assert(strncmp(json_object_get_string(key(json_object_array_get_idx(v, 1), "owner")),
                          "ipc 0x", 6) == 0, "%s", json_object_to_json_string(o));
        json_object_put(o);
        r = fmuctl((const char *[]){ "list", NULL });
        cr_assert(r.exit_code == 0, "%s", r.err);
        cr_assert(strstr(r.out, "LEASE") && strstr(r.out, "transient") &&
                  strstr(r.out, "(owner ipc 0x"), "%s", r.out);
        run_result_fini(&r);
        o = fmuctl_json((const char *[]){ "status", "2", "--json", NULL });
        cr_assert(json_object_get_boolean(key(o, "transient")));
        json_object_put(o);
        r = fmuctl((const char *[]){ "status", "2", NULL });
        cr_assert(r.exit_code == 0 && strstr(r.out, "transient, owner ipc 0x"), "%s", r.out);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "status", "1", NULL });
        cr_assert(r.exit_code == 0 && strstr(r.out, "none (persistent)"), "%s", r.out);
        run_result_fini(&r);
}

/* fmuctl SESSION get NAME, one line: "NAME = VALUE\n" (caller frees). */
static char *get_line(const char *sid, const char *name)
{
        struct run_result r = fmuctl((const char *[]){ "get", sid, name, NULL });
        char *out = r.out;

        cr_assert(r.exit_code == 0, "get %s: exit %d: %s", name, r.exit_code, r.err);
        r.out = NULL;
        run_result_fini(&r);
        return out;
}

/*
 * Binary variables (Feedthrough's Binary_input echoes to Binary_output):
 * set as hex:HEX, printed so by get, and as the bare hex of the results
 * CSV by get --json.
 */
Test(fmuctl_daemon, binary_values_are_hex_in_set_get_and_json, .init = setup, .fini = teardown)
{
        struct json_object *o;
        struct run_result r;
        char sid[32], *line;

        o = fmuctl_json((const char *[]){ "load", FMUD_TEST_FMU_DIR "/Feedthrough.fmu", "--json",
                                          NULL });
        snprintf(sid, sizeof(sid), "%llu",
                 (unsigned long long)json_object_get_uint64(key(o, "session")));
        json_object_put(o);

        /* The start value. */
        line = get_line(sid, "Binary_input");
        cr_assert(strcmp(line, "Binary_input = hex:cafe\n") == 0, "'%s'", line);
        free(line);

        r = fmuctl((const char *[]){ "set", sid, "Binary_input=hex:0AFF10", NULL });
        cr_assert(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
        /* Where it was applied: the start time, the session is loaded. */
        cr_assert(strcmp(r.out, "applied at t = 0\n") == 0, "'%s'", r.out);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "step", sid, "1", NULL });
        cr_assert(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
        run_result_fini(&r);
        o = fmuctl_json((const char *[]){ "set", sid, "Binary_input=hex:0aff10", "--json", NULL });
        cr_assert(json_object_get_double(key(o, "time")) == 0.1, "%s",
                  json_object_to_json_string(o));
        json_object_put(o);
        line = get_line(sid, "Binary_output");
        cr_assert(strcmp(line, "Binary_output = hex:0aff10\n") == 0, "'%s'", line);
        free(line);
        o = fmuctl_json((const char *[]){ "get", sid, "Binary_input", "Binary_output", "--json",
                                          NULL });
        cr_assert(strcmp(json_object_get_string(key(o, "Binary_input")), "0aff10") == 0, "%s",
                  json_object_to_json_string(o));
        cr_assert(strcmp(json_object_get_string(key(o, "Binary_output")), "0aff10") == 0, "%s",
                  json_object_to_json_string(o));
        json_object_put(o);

        /* Bad hex is a usage error that sends nothing; the value stays. */
        r = fmuctl((const char *[]){ "set", sid, "Binary_input=hex:0af", NULL });
        cr_assert(r.exit_code == 2, "exit %d: %s", r.exit_code, r.err);
        cr_assert(strstr(r.err, "Binary_input") && strstr(r.err, "two hex digits per byte"), "%s",
                  r.err);
        run_result_fini(&r);
        /* 0x... is an integer, which a Binary variable refuses; hex: is no Int32. */
        r = fmuctl((const char *[]){ "set", sid, "Binary_input=0x0aff10", NULL });
        cr_assert(r.exit_code == 1, "exit %d: %s", r.exit_code, r.err);
        cr_assert(count_lines(r.err) == 1 && strstr(r.err, "Binary_input"), "%s", r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "set", sid, "Int32_input=hex:01", NULL });
        cr_assert(r.exit_code == 1, "exit %d: %s", r.exit_code, r.err);
        cr_assert(count_lines(r.err) == 1 && strstr(r.err, "Int32_input"), "%s", r.err);
        run_result_fini(&r);
        line = get_line(sid, "Binary_input");
        cr_assert(strcmp(line, "Binary_input = hex:0aff10\n") == 0, "'%s'", line);
        free(line);

        /* No bytes at all. */
        r = fmuctl((const char *[]){ "set", sid, "Binary_input=hex:", NULL });
        cr_assert(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
        run_result_fini(&r);
        o = fmuctl_json((const char *[]){ "get", sid, "Binary_input", "--json", NULL });
        cr_assert(strcmp(json_object_get_string(key(o, "Binary_input")), "") == 0, "%s",
                  json_object_to_json_string(o));
        json_object_put(o);
}

/* --budget: seconds, or inf (infinity) for none, which the protocol sends as +inf. */
Test(fmuctl_daemon, budget_takes_inf_and_refuses_what_is_no_budget, .init = setup,
     .fini = teardown)
{
        static const char *const good[] = { "inf", "infinity", "INF", "2.5" };
        static const char *const bad[] = { "-inf", "nan", "0", "-1", "soon", "" };
        struct json_object *o, *v;
        struct run_result r;
        char *out = NULL;

        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
                r = fmuctl((const char *[]){ "load", FMUD_EXAMPLES "/msd.ssp", "--budget", good[i],
                                             NULL });
                cr_assert(r.exit_code == 0, "--budget %s: exit %d: %s", good[i], r.exit_code, r.err);
                run_result_fini(&r);
        }
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                r = fmuctl((const char *[]){ "load", FMUD_EXAMPLES "/msd.ssp", "--budget", bad[i],
                                             NULL });
                cr_assert(r.exit_code == 2, "--budget '%s': exit %d", bad[i], r.exit_code);
                cr_assert(count_lines(r.err) >= 1 && strstr(r.err, "--budget") != NULL &&
                          strstr(r.err, "inf") != NULL, "--budget '%s': %s", bad[i], r.err);
                run_result_fini(&r);
        }
        /* The refused ones loaded nothing. */
        o = fmuctl_json((const char *[]){ "list", "--json", NULL });
        v = key(o, "sessions");
        cr_assert(json_object_array_length(v) == sizeof(good) / sizeof(good[0]), "%s",
                  json_object_to_json_string(o));
        json_object_put(o);

        /* A run with no budget goes to its end. */
        cr_assert(asprintf(&out, "%s/inf.csv", d.dir) > 0);
        r = fmuctl((const char *[]){ "run", FMUD_EXAMPLES "/msd.ssp", "--budget", "infinity",
                                     "--out", out, NULL });
        cr_assert(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
        cr_assert(strstr(r.out, "finished") != NULL, "%s", r.out);
        run_result_fini(&r);
        free(out);
}

Test(fmuctl_daemon, no_daemon_is_exit_code_3, .init = setup, .fini = teardown)
{
        char *ep = NULL;
        struct run_result r;

        cr_assert(asprintf(&ep, "ipc://%s/nobody.sock", d.dir) > 0);
        r = fmuctl((const char *[]){ "list", "--endpoint", ep, NULL });
        cr_assert(r.exit_code == 3, "exit %d: %s", r.exit_code, r.err);
        cr_assert(count_lines(r.err) == 1, "'%s'", r.err);
        run_result_fini(&r);
        free(ep);
}

/*
 * A results file whose folder does not exist cannot be written: exit 3
 * through a daemon, as with --local (the exit code table); it was 1.
 */
Test(fmuctl_daemon, an_out_in_a_missing_folder_is_exit_code_3, .init = setup, .fini = teardown)
{
        char *out = NULL;
        struct run_result r;

        cr_assert(asprintf(&out, "%s/no-such-folder/r.csv", d.dir) > 0);
        r = fmuctl((const char *[]){ "load", FMUD_EXAMPLES "/msd.ssp", "--out", out, NULL });
        cr_assert(r.exit_code == 3, "exit %d: %s", r.exit_code, r.err);
        cr_assert(strstr(r.err, "cannot write") != NULL, "%s", r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "run", FMUD_EXAMPLES "/msd.ssp", "--out", out, NULL });
        cr_assert(r.exit_code == 3, "exit %d: %s", r.exit_code, r.err);
        run_result_fini(&r);
        free(out);
}

/* ---- fmuctl run, no daemon ----------------------------------------------------- */

Test(fmuctl_daemon, run_without_a_daemon_starts_a_private_one_and_leaves_none)
{
        char *dir = tmpdir_new("fmud-run"), *ep = NULL, *out = NULL, *csv;
        pid_t left[8];
        struct run_result r;

        cr_assert(dir != NULL);
        cr_assert(private_env(dir) == 0);
        /* The cache: the private daemon's workers run as an unprivileged user. */
        cr_assert(chmod(dir, 0755) == 0);
        /* Nobody listens there; orphans of fmuctl would come to us. */
        cr_assert(asprintf(&ep, "ipc://%s/control.sock", dir) > 0);
        cr_assert(asprintf(&out, "%s/msd.csv", dir) > 0);
        cr_assert(setenv("FMUD_ENDPOINT", ep, 1) == 0);
        cr_assert(setenv("FMUD_CACHE_DIR", dir, 1) == 0);
        cr_assert(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
        /* A file of an earlier --local run: the private daemon replaces it, as --local would. */
        cr_assert(tmpdir_write(dir, "msd.csv", "old\n", 4) == 0);
        r = fmuctl((const char *[]){ "run", FMUD_EXAMPLES "/msd.ssp", "--out", out, NULL });
        cr_assert(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
        cr_assert(strstr(r.out, "finished") != NULL, "%s", r.out);
        csv = daemon_slurp(out, NULL);
        cr_assert(strncmp(csv, "time,mass1.x1,mass1.v1,mass2.x2,mass2.v2,mass2.F\n", 49) == 0,
                  "%s", csv);
        cr_assert(count_lines(csv) == 102);
        /* The summary counts what the daemon recorded: the file's rows, its columns. */
        cr_assert(strstr(r.out, "msd.csv: 101 rows, 5 columns (") != NULL, "%s", r.out);
        /* Nothing of the private daemon is left: no process, no socket. */
        cr_assert(daemon_children(getpid(), left, 8) == 0, "a process outlived fmuctl run");
        cr_assert(access(ep + 6, F_OK) < 0, "the private daemon's socket is left");
        free(csv);
        run_result_fini(&r);
        tmpdir_free(dir);
        free(ep);
        free(out);
}

/* Entries of a directory, "." and ".." aside. */
static int entries(const char *dir)
{
        struct dirent *e;
        DIR *dp = opendir(dir);
        int n = 0;

        cr_assert(dp, "%s: %s", dir, strerror(errno));
        while ((e = readdir(dp)))
                n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
        closedir(dp);
        return n;
}

Test(fmuctl_daemon, a_second_run_as_root_reuses_the_cache_its_private_daemon_kept)
{
        char *dir = tmpdir_new("fmud-run"), *ep = NULL, *out = NULL, *cache = NULL;
        struct run_result r;
        struct stat st;
        int n = 0;

        if (geteuid() != 0)
                cr_skip_test("only a root daemon's workers are another user");
        cr_assert(dir != NULL);
        cr_assert(private_env(dir) == 0);
        cr_assert(asprintf(&ep, "ipc://%s/control.sock", dir) > 0);
        cr_assert(asprintf(&out, "%s/msd.csv", dir) > 0);
        cr_assert(asprintf(&cache, "%s/env/cache", dir) > 0);
        cr_assert(setenv("FMUD_ENDPOINT", ep, 1) == 0);
        for (int i = 0; i < 2; i++) {
                r = fmuctl((const char *[]){ "run", FMUD_EXAMPLES "/msd.ssp", "--out", out,
                                             "--force", "-q", NULL });
                cr_assert(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
                /* The daemon keeps it 0750 root:<the workers' group>: still theirs to read. */
                cr_assert(strstr(r.err, "cannot reach the cache") == NULL, "run %d: %s", i + 1,
                          r.err);
                run_result_fini(&r);
                if (i == 0) {
                        n = entries(cache);
                        /* What the daemon made of it: the case under test. */
                        cr_assert(stat(cache, &st) == 0 && (st.st_mode & 07777) == 0750 &&
                                  st.st_gid != 0, "cache mode %o, group %u",
                                  (unsigned)st.st_mode & 07777, (unsigned)st.st_gid);
                }
        }
        /* The second run unpacked nothing new. */
        cr_assert_eq(entries(cache), n);
        tmpdir_free(dir);
        free(ep);
        free(out);
        free(cache);
}

Test(fmuctl_daemon, run_counts_quoted_matrix_columns_once, .init = setup, .fini = teardown)
{
        char *out = NULL, *csv;
        struct run_result r;

        /* Results go below the daemon's folder. */
        cr_assert(asprintf(&out, "%s/ft.csv", d.dir) > 0);
        r = fmuctl((const char *[]){ "run", FMUD_TEST_FMU_DIR "/Feedthrough.fmu", "--out", out, NULL });
        cr_assert(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
        csv = daemon_slurp(out, NULL);
        /* A 3 x 2 matrix: six quoted names with a comma each. */
        cr_assert(strstr(csv, ",\"Float64_matrix_output[1,1]\",") != NULL, "%.400s", csv);
        /* 14 scalars, the matrix's 6 elements and the vector's 4. */
        cr_assert(strstr(r.out, "ft.csv: 11 rows, 24 columns (") != NULL, "%s", r.out);
        free(csv);
        run_result_fini(&r);
        free(out);
}

/*
 * fmuctl run through a shared daemon without --out: the default file here
 * is outside the daemon's output directory, so the daemon chooses (its
 * state directory) and the summary names that file.
 */
Test(fmuctl_daemon, run_without_out_lets_a_shared_daemon_choose_the_file, .init = setup,
     .fini = teardown)
{
        char *here = get_current_dir_name(), *line, *path;
        struct run_result r;

        cr_assert(here != NULL);
        cr_assert(strncmp(here, d.dir, strlen(d.dir)) != 0);
        r = fmuctl((const char *[]){ "run", FMUD_TEST_FMU_DIR "/Feedthrough.fmu", NULL });
        cr_assert(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
        cr_assert(access("Feedthrough_out.csv", F_OK) == -1);
        line = strstr(r.out, "results       ");
        cr_assert(line != NULL, "%s", r.out);
        path = line + strlen("results       ");
        cr_assert(strncmp(path, d.state_dir, strlen(d.state_dir)) == 0, "%s", r.out);
        cr_assert(strstr(path, "/results.csv: 11 rows, 24 columns (") != NULL, "%s", r.out);
        run_result_fini(&r);
        free(here);
}

/* ---- Warnings of the FMU at load ----------------------------------------------- */

/*
 * A copy of LinearOde2 named name in dir, its modelDescription.xml with
 * text inserted at anchor (the first place it occurs). Caller frees.
 */
static char *edited_fmu(const char *dir, const char *name, const char *anchor,
                        const char *text)
{
        char *src, *dst, *md, *at, cmd[2048];
        size_t len = strlen(text);
        zip_source_t *zs;
        zip_stat_t st;
        zip_file_t *f;
        zip_t *za;

        cr_assert(asprintf(&src, "%s/LinearOde2.fmu", FMUD_TEST_FMU_DIR) > 0);
        cr_assert(asprintf(&dst, "%s/%s", dir, name) > 0);
        snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", src, dst);
        cr_assert(system(cmd) == 0);
        za = zip_open(dst, 0, NULL);
        cr_assert(za != NULL);
        cr_assert(zip_stat(za, "modelDescription.xml", 0, &st) == 0);
        md = calloc(1, st.size + len + 1);
        f = zip_fopen(za, "modelDescription.xml", 0);
        cr_assert(md != NULL && f != NULL);
        cr_assert(zip_fread(f, md, st.size) == (zip_int64_t)st.size);
        zip_fclose(f);
        at = strstr(md, anchor);
        cr_assert(at != NULL, "LinearOde2's description changed; update this test");
        memmove(at + len, at, strlen(at) + 1);
        memcpy(at, text, len);
        zs = zip_source_buffer(za, md, strlen(md), 1);
        cr_assert(zs != NULL);
        cr_assert(zip_file_replace(za, (zip_uint64_t)zip_name_locate(za, "modelDescription.xml", 0),
                                   zs, 0) == 0);
        cr_assert(zip_close(za) == 0);
        free(src);
        return dst;
}

/* LinearOde2 with a unit that UnitDefinitions lacks: an FMI 2.0 warning. */
static char *warned_fmu(const char *dir)
{
        return edited_fmu(dir, "warned.fmu", "start=\"1\"/>", "unit=\"furlong\" ");
}

/* LinearOde2 with n more variables, each with a unit UnitDefinitions lacks: n warnings. */
static char *many_warned_fmu(const char *dir, unsigned n)
{
        size_t len = 0, cap = (size_t)n * 160 + 1;
        char *vars = malloc(cap), *dst;

        cr_assert(vars != NULL);
        for (unsigned i = 0; i < n; i++)
                len += (size_t)snprintf(vars + len, cap - len, "<ScalarVariable name=\"w%u\" "
                                        "valueReference=\"%u\" causality=\"local\"><Real "
                                        "unit=\"furlong\"/></ScalarVariable>\n", i, 100000 + i);
        dst = edited_fmu(dir, "many.fmu", "</ModelVariables>", vars);
        free(vars);
        return dst;
}

/*
 * An FMU with more warnings than are kept (1200 against 1000): every count
 * is the true one, and fmuctl run shows the first few with how many more.
 */
Test(fmuctl_daemon, many_warnings_are_counted_and_not_all_shown, .init = setup, .fini = teardown)
{
        char *fmu = many_warned_fmu(d.dir, 1200), *out, *want;
        struct json_object *o, *w;
        struct run_result r;
        size_t n;

        r = fmuctl((const char *[]){ "inspect", fmu, NULL });
        cr_assert(strstr(r.err, "valid, with 1200 warnings") != NULL, "%s", r.err);
        cr_assert(strstr(r.err, "warning: 200 more not shown") != NULL, "%s", r.err);
        run_result_fini(&r);
        o = fmuctl_json((const char *[]){ "inspect", fmu, "--json", NULL });
        cr_assert(json_object_get_int64(key(o, "unlistedWarnings")) == 200, "%s",
                  json_object_to_json_string(o));
        json_object_put(o);

        o = fmuctl_json((const char *[]){ "load", fmu, "--json", NULL });
        w = key(o, "warnings");
        n = json_object_array_length(w);
        cr_assert(asprintf(&want, "%zu more warnings not listed", 1200 - (n - 1)) > 0);
        cr_assert(strstr(json_object_get_string(json_object_array_get_idx(w, n - 1)), want) != NULL,
                  "%zu: %s", n, json_object_get_string(json_object_array_get_idx(w, n - 1)));
        json_object_put(o);
        free(want);

        cr_assert(asprintf(&out, "%s/many.csv", d.dir) > 0);
        r = fmuctl((const char *[]){ "run", fmu, "--local", "--quiet", "--stop", "0.1", "--out",
                                     out, NULL });
        cr_assert(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
        cr_assert(strstr(r.err, "1180 more warnings not shown") != NULL, "%s", r.err);
        /* Twenty lines before it, not 1200. */
        cr_assert(strstr(r.err, "w19") != NULL && strstr(r.err, "w20\"") == NULL, "%s", r.err);
        run_result_fini(&r);
        free(out);
        free(fmu);
}

/* Warnings reach the user through the load reply; --strict makes them a refusal. */
Test(fmuctl_daemon, load_reports_fmu_warnings_and_strict_refuses_them, .init = setup,
     .fini = teardown)
{
        char *fmu = warned_fmu(d.dir), *out;
        struct json_object *o, *w;
        struct run_result r;

        r = fmuctl((const char *[]){ "load", fmu, NULL });
        cr_assert(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
        cr_assert(strstr(r.err, "warning: ") != NULL, "'%s'", r.err);
        cr_assert(strstr(r.err, "unit=\"furlong\" is not defined in UnitDefinitions") != NULL,
                  "'%s'", r.err);
        cr_assert(strcmp(r.out, "1\n") == 0, "'%s'", r.out);
        run_result_fini(&r);
        o = fmuctl_json((const char *[]){ "load", fmu, "--json", NULL });
        w = key(o, "warnings");
        cr_assert(json_object_array_length(w) == 1, "%s", json_object_to_json_string(o));
        cr_assert(strstr(json_object_get_string(json_object_array_get_idx(w, 0)),
                         "unit=\"furlong\"") != NULL);
        json_object_put(o);

        r = fmuctl((const char *[]){ "load", fmu, "--strict", NULL });
        cr_assert(r.exit_code == 1, "exit %d: %s", r.exit_code, r.err);
        cr_assert(strstr(r.err, "unit=\"furlong\" is not defined in UnitDefinitions (FMI 2.0 section "
                                "2.2.7); refused under strict validation") != NULL, "'%s'", r.err);
        run_result_fini(&r);

        /* fmuctl run through the daemon shows them too. */
        cr_assert(asprintf(&out, "%s/warned.csv", d.dir) > 0);
        r = fmuctl((const char *[]){ "run", fmu, "--quiet", "--stop", "0.1", "--out", out, NULL });
        cr_assert(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
        cr_assert(strstr(r.err, "warning: ") != NULL && strstr(r.err, "furlong") != NULL, "'%s'",
                  r.err);
        run_result_fini(&r);

        /* The same in this process: warnings shown, --strict refuses. */
        r = fmuctl((const char *[]){ "run", fmu, "--local", "--quiet", "--stop", "0.1", "--out",
                                     out, NULL });
        cr_assert(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
        cr_assert(strstr(r.err, "warning: ") != NULL && strstr(r.err, "furlong") != NULL, "'%s'",
                  r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "run", fmu, "--local", "--quiet", "--strict", "--stop", "0.1",
                                     "--out", out, NULL });
        cr_assert(r.exit_code == 1, "exit %d: %s", r.exit_code, r.err);
        cr_assert(strstr(r.err, "refused under strict validation") != NULL, "'%s'", r.err);
        run_result_fini(&r);
        free(out);
        free(fmu);
}

/* `fmuctl status SID --json` once the session is finished (ctest's timeout catches a hang). */
static struct json_object *finished_status(const char *sid)
{
        for (;;) {
                struct json_object *o = fmuctl_json((const char *[]){ "status", sid, "--json", NULL });

                if (!strcmp(json_object_get_string(key(o, "state")), "finished"))
                        return o;
                json_object_put(o);
                usleep(20000);
        }
}

/*
 * FMI 2.0 Model Exchange through the daemon: status shows the integrator;
 * BallME2 asks for a second fmi2NewDiscreteStates pass at each of its six
 * events (five impacts and the gravity change by t = 3), so the iterations
 * are the first Event Mode's one and two per event. BallBoth2 has both
 * interfaces: --interface me integrates it, --interface cs steps it itself.
 */
Test(fmuctl_daemon, status_shows_the_integrator_of_an_fmi2_model_exchange_instance, .init = setup,
     .fini = teardown)
{
        struct json_object *o, *in;
        struct run_result r;

        r = fmuctl((const char *[]){ "load", FMUD_TEST_FMU_DIR "/BallME2.fmu", NULL });
        cr_assert(r.exit_code == 0 && strcmp(r.out, "1\n") == 0, "%s%s", r.out, r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "start", "1", NULL });
        cr_assert(r.exit_code == 0, "%s", r.err);
        run_result_fini(&r);
        o = finished_status("1");
        in = json_object_array_get_idx(key(o, "instances"), 0);
        cr_assert(strcmp(json_object_get_string(key(in, "integrator")), "bdf") == 0);
        cr_assert(json_object_get_uint64(key(in, "integratorSteps")) > 0);
        cr_assert(json_object_get_uint64(key(in, "rootEvaluations")) > 0);
        cr_assert(json_object_get_uint64(key(in, "integratorEvents")) == 6,
                  "%s", json_object_to_json_string(in));
        cr_assert(json_object_get_uint64(key(in, "eventIterations")) == 13,
                  "%s", json_object_to_json_string(in));
        json_object_put(o);

        r = fmuctl((const char *[]){ "load", FMUD_TEST_FMU_DIR "/BallBoth2.fmu", "--interface", "me",
                                     NULL });
        cr_assert(r.exit_code == 0 && strcmp(r.out, "2\n") == 0, "%s%s", r.out, r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "start", "2", NULL });
        cr_assert(r.exit_code == 0, "%s", r.err);
        run_result_fini(&r);
        o = finished_status("2");
        in = json_object_array_get_idx(key(o, "instances"), 0);
        cr_assert(strcmp(json_object_get_string(key(in, "integrator")), "bdf") == 0);
        cr_assert(json_object_get_uint64(key(in, "integratorEvents")) == 6,
                  "%s", json_object_to_json_string(in));
        json_object_put(o);
        r = fmuctl((const char *[]){ "status", "2", NULL });
        cr_assert(r.exit_code == 0, "%s", r.err);
        cr_assert(strstr(r.out, "integrator bdf (CVODE, Model Exchange): ") != NULL, "%s", r.out);
        run_result_fini(&r);

        r = fmuctl((const char *[]){ "load", FMUD_TEST_FMU_DIR "/BallBoth2.fmu", "--interface", "cs",
                                     NULL });
        cr_assert(r.exit_code == 0 && strcmp(r.out, "3\n") == 0, "%s%s", r.out, r.err);
        run_result_fini(&r);
        o = fmuctl_json((const char *[]){ "status", "3", "--json", NULL });
        in = json_object_array_get_idx(key(o, "instances"), 0);
        cr_assert(!json_object_object_get_ex(in, "integrator", NULL));
        json_object_put(o);
}

/*
 * A Model Exchange FMU through the daemon: --integrator reaches its worker,
 * and status shows the integrator and its counts (BallME bounces: root
 * finding and events); a Co-Simulation instance shows none.
 */
Test(fmuctl_daemon, status_shows_the_integrator_of_a_model_exchange_instance, .init = setup,
     .fini = teardown)
{
        struct json_object *o, *in;
        struct run_result r;

        r = fmuctl((const char *[]){ "load", FMUD_TEST_FMU_DIR "/BallME.fmu", "--integrator",
                                     "adams", NULL });
        cr_assert(r.exit_code == 0 && strcmp(r.out, "1\n") == 0, "%s%s", r.out, r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "start", "1", NULL });
        cr_assert(r.exit_code == 0, "%s", r.err);
        run_result_fini(&r);
        o = finished_status("1");
        in = json_object_array_get_idx(key(o, "instances"), 0);
        cr_assert(strcmp(json_object_get_string(key(in, "integrator")), "adams") == 0);
        cr_assert(json_object_get_uint64(key(in, "integratorSteps")) > 0);
        cr_assert(json_object_get_uint64(key(in, "rhsEvaluations")) >=
                  json_object_get_uint64(key(in, "integratorSteps")));
        cr_assert(json_object_get_uint64(key(in, "rootEvaluations")) > 0);
        /* Adams iterates to a fixed point: no Jacobian. */
        cr_assert(json_object_get_uint64(key(in, "jacobianEvaluations")) == 0);
        /* Five impacts and the gravity change by t = 3, each one Event Mode. */
        cr_assert(json_object_get_uint64(key(in, "integratorEvents")) == 6,
                  "%s", json_object_to_json_string(in));
        cr_assert(json_object_get_uint64(key(in, "eventIterations")) >= 7);
        json_object_put(o);
        r = fmuctl((const char *[]){ "status", "1", NULL });
        cr_assert(r.exit_code == 0, "%s", r.err);
        cr_assert(strstr(r.out, "integrator adams (CVODE, Model Exchange): ") != NULL, "%s", r.out);
        run_result_fini(&r);

        /* BDF by default: it evaluates Jacobians. */
        r = fmuctl((const char *[]){ "load", FMUD_TEST_FMU_DIR "/VanDerPol.fmu", NULL });
        cr_assert(r.exit_code == 0 && strcmp(r.out, "2\n") == 0, "%s%s", r.out, r.err);
        run_result_fini(&r);
        r = fmuctl((const char *[]){ "start", "2", NULL });
        cr_assert(r.exit_code == 0, "%s", r.err);
        run_result_fini(&r);
        o = finished_status("2");
        in = json_object_array_get_idx(key(o, "instances"), 0);
        cr_assert(strcmp(json_object_get_string(key(in, "integrator")), "bdf") == 0);
        cr_assert(json_object_get_uint64(key(in, "jacobianEvaluations")) > 0);
        cr_assert(json_object_get_uint64(key(in, "rootEvaluations")) == 0);
        json_object_put(o);

        /* Co-Simulation: no integrator. */
        r = fmuctl((const char *[]){ "load", FMUD_TEST_FMU_DIR "/LinearOde.fmu", NULL });
        cr_assert(r.exit_code == 0, "%s", r.err);
        run_result_fini(&r);
        o = fmuctl_json((const char *[]){ "status", "3", "--json", NULL });
        in = json_object_array_get_idx(key(o, "instances"), 0);
        cr_assert(!json_object_object_get_ex(in, "integrator", NULL));
        json_object_put(o);

        /* A bad integrator or interface is a usage error; no session is made. */
        r = fmuctl((const char *[]){ "load", FMUD_TEST_FMU_DIR "/BallME.fmu", "--integrator",
                                     "euler", NULL });
        cr_assert(r.exit_code == 2, "exit %d: %s", r.exit_code, r.err);
        cr_assert(strstr(r.err, "--integrator needs bdf or adams, not 'euler'") != NULL, "%s", r.err);
        run_result_fini(&r);
        /* An interface the FMU lacks: the load is refused, saying so. */
        r = fmuctl((const char *[]){ "load", FMUD_TEST_FMU_DIR "/BallME.fmu", "--interface", "cs",
                                     NULL });
        cr_assert(r.exit_code == 1, "exit %d: %s", r.exit_code, r.err);
        cr_assert(strstr(r.err, "CoSimulation asked for, but the FMU has no CoSimulation "
                                "interface (it has ModelExchange)") != NULL, "%s", r.err);
        run_result_fini(&r);
        o = fmuctl_json((const char *[]){ "list", "--json", NULL });
        cr_assert(json_object_array_length(key(o, "sessions")) == 3, "%s",
                  json_object_to_json_string(o));
        json_object_put(o);
}
