/*
 * fmuctl_watch: the real `fmuctl watch` against a real fmud: with
 * --every-point --json it prints one JSON object per communication point,
 * in order, with the point's wall clock and its flags (the points the
 * session does not record flagged unrecorded), without it one per recorded
 * sample, and ends when the session does. The session is stepped until
 * watch has joined, so no test depends on how fast fmuctl starts.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon_fixture.h"

static struct fmud_daemon d;
static struct fmud *c;

static void setup(void)
{
        daemon_start(&d, NULL);
        cr_assert(setenv("FMUD_ENDPOINT", d.endpoint, 1) == 0);
        c = daemon_connect(&d);
}

static void teardown(void)
{
        fmud_close(c);
        c = NULL;
        daemon_stop(&d);
}

struct out {
        char *buf;
        size_t len, cap;
};

/* Read what is there within ms; false at the end of the pipe. */
static bool read_some(int fd, struct out *o, int ms)
{
        struct pollfd p = { .fd = fd, .events = POLLIN };
        ssize_t n;

        if (poll(&p, 1, ms) <= 0)
                return true;
        if (o->len + 4096 + 1 > o->cap) {
                o->cap = o->cap ? 2 * o->cap : 65536;
                o->buf = realloc(o->buf, o->cap);
                cr_assert(o->buf);
        }
        n = read(fd, o->buf + o->len, o->cap - o->len - 1);
        if (n <= 0)
                return false;
        o->len += (size_t)n;
        o->buf[o->len] = '\0';
        return true;
}

static int64_t get_i64(struct json_object *o, const char *k)
{
        struct json_object *v;

        cr_assert(json_object_object_get_ex(o, k, &v), "no '%s'", k);
        return json_object_get_int64(v);
}

static bool has_flag(struct json_object *o, const char *name)
{
        struct json_object *f;

        cr_assert(json_object_object_get_ex(o, "flags", &f) &&
                  json_object_is_type(f, json_type_array));
        for (size_t i = 0; i < json_object_array_length(f); i++)
                if (!strcmp(json_object_get_string(json_object_array_get_idx(f, i)), name))
                        return true;
        return false;
}

/*
 * fmuctl watch SESSION mass1.x1 [EXTRA] --json against session t (loaded, a
 * long run), joined for sure: the session is stepped a point at a time until
 * watch prints its first line, then n points more and stopped; watch's
 * output when it ends with the session, and the session's progress in *p.
 * slow: its output is not read from then until the session has stopped and
 * more than a second has passed, as a slow consumer (a pipe into a logger)
 * does. ret_err (when not NULL): what watch wrote on stderr.
 */
static char *watch_joined_n(const struct proto_target *t, const char *extra, unsigned n,
                            bool slow, struct proto_progress *p, char **ret_err)
{
        struct out o = { 0 }, e = { 0 };
        char sid[32];
        int fds[2], efds[2], status;
        pid_t pid;

        snprintf(sid, sizeof(sid), "%" PRIu64, t->session);
        cr_assert(pipe(fds) == 0 && pipe(efds) == 0);
        pid = fork();
        cr_assert(pid >= 0);
        if (pid == 0) {
                dup2(fds[1], STDOUT_FILENO);
                if (ret_err)
                        dup2(efds[1], STDERR_FILENO);
                close(fds[0]);
                close(fds[1]);
                close(efds[0]);
                close(efds[1]);
                if (extra)
                        execl(FMUD_FMUCTL, FMUD_FMUCTL, "watch", sid, "mass1.x1", extra, "--json",
                              (char *)NULL);
                else
                        execl(FMUD_FMUCTL, FMUD_FMUCTL, "watch", sid, "mass1.x1", "--json",
                              (char *)NULL);
                _exit(127);
        }
        close(fds[1]);
        close(efds[1]);
        /* Step a point at a time until watch has joined (it prints a line). */
        for (int i = 0; i < 400 && !memchr(o.buf ? o.buf : "", '\n', o.len); i++) {
                cr_assert(fmud_step(c, t, 1, NULL) == 0, "%s", fmud_errmsg(c));
                read_some(fds[0], &o, 50);
        }
        cr_assert(o.len > 0, "fmuctl watch printed nothing");
        cr_assert(fmud_step(c, t, n, p) == 0, "%s", fmud_errmsg(c));
        /* Let the samples reach watch before the session ends; it leaves at the end. */
        for (int i = 0; i < 20 && !slow; i++)
                read_some(fds[0], &o, 50);
        cr_assert(fmud_stop(c, t, NULL) == 0, "%s", fmud_errmsg(c));
        if (slow)
                usleep(1500 * 1000);
        while (read_some(fds[0], &o, 10000) && waitpid(pid, &status, WNOHANG) == 0)
                ;
        while (read_some(fds[0], &o, 100))
                ;
        close(fds[0]);
        while (ret_err && read_some(efds[0], &e, 100))
                ;
        close(efds[0]);
        if (ret_err)
                *ret_err = e.buf ? e.buf : strdup("");
        if (waitpid(pid, &status, 0) != pid) {
                kill(pid, SIGKILL);
                cr_assert(0, "fmuctl watch did not end");
        }
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
        return o.buf;
}

static char *watch_joined(const struct proto_target *t, const char *extra,
                          struct proto_progress *p)
{
        return watch_joined_n(t, extra, 50, false, p, NULL);
}

Test(fmuctl_watch, every_point_json_prints_each_point_with_stamps_and_flags, .init = setup,
     .fini = teardown)
{
        struct proto_load a = {
                .path = daemon_str(FMUD_EXAMPLES "/msd.ssp"), .has_stop = true, .stop = 1e6,
                .has_decimation = true, .decimation = 10,
        };
        struct proto_target t = { daemon_load(c, &a, NULL), 0 };
        struct proto_progress p;
        char *buf = watch_joined(&t, "--every-point", &p);
        int64_t prev = -1;
        size_t lines = 0, unrecorded = 0;

        for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
                struct json_object *j = json_tokener_parse(line), *v, *x;
                int64_t pt;

                cr_assert(j, "not JSON: %s", line);
                pt = get_i64(j, "point");
                cr_assert(prev < 0 || pt == prev + 1, "point %" PRId64 " after %" PRId64, pt, prev);
                cr_assert(get_i64(j, "session") == (int64_t)t.session);
                cr_assert(get_i64(j, "monoNs") > 0 && get_i64(j, "realNs") > 0, "%s", line);
                cr_assert_eq(has_flag(j, "unrecorded"), pt % 10 != 0, "%s", line);
                unrecorded += has_flag(j, "unrecorded");
                cr_assert(json_object_object_get_ex(j, "values", &v) &&
                          json_object_object_get_ex(v, "mass1.x1", &x), "%s", line);
                prev = pt;
                lines++;
                json_object_put(j);
        }
        /* The 50 points stepped after watch joined are all there, the last at the session's. */
        cr_assert(lines >= 50, "%zu lines", lines);
        cr_assert_eq(prev, (int64_t)p.points, "last point %" PRId64 ", session at %" PRIu64, prev,
                     p.points);
        cr_assert(unrecorded >= 45, "%zu unrecorded of %zu", unrecorded, lines);
        free(buf);
}

/* Without --every-point: the recorded samples only, one JSON object per line, in time order. */
Test(fmuctl_watch, json_prints_one_object_per_recorded_sample, .init = setup, .fini = teardown)
{
        struct proto_load a = {
                .path = daemon_str(FMUD_EXAMPLES "/msd.ssp"), .has_stop = true, .stop = 1e6,
                .has_decimation = true, .decimation = 10,
        };
        struct proto_target t = { daemon_load(c, &a, NULL), 0 };
        struct proto_progress p;
        char *buf = watch_joined(&t, NULL, &p);
        int64_t prev = -1;
        double last = -1;
        size_t lines = 0;

        for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
                struct json_object *j = json_tokener_parse(line), *v, *x;
                int64_t pt;

                cr_assert(j, "not JSON: %s", line);
                pt = get_i64(j, "point");
                cr_assert(pt % 10 == 0 && pt > prev, "point %" PRId64 " after %" PRId64, pt,
                          prev);
                cr_assert(!has_flag(j, "unrecorded"), "%s", line);
                cr_assert(json_object_object_get_ex(j, "time", &x) &&
                          json_object_get_double(x) > last, "%s", line);
                last = json_object_get_double(x);
                cr_assert(json_object_object_get_ex(j, "values", &v) &&
                          json_object_object_get_ex(v, "mass1.x1", &x), "%s", line);
                prev = pt;
                lines++;
                json_object_put(j);
        }
        /* The 50 points stepped after watch joined hold 5 recorded ones. */
        cr_assert(lines >= 5, "%zu lines", lines);
        free(buf);
}

/*
 * A consumer slower than the session (watch piped into a logger): the
 * samples that reached watch before the session ended are all printed.
 * watch left at its next status poll and dropped the rest unread: a
 * consumer that read nothing until the end got a pipe's worth (64 KiB).
 */
Test(fmuctl_watch, a_slow_consumer_gets_every_sample_that_arrived_before_the_end, .init = setup,
     .fini = teardown)
{
        struct proto_load a = {
                .path = daemon_str(FMUD_EXAMPLES "/msd.ssp"), .has_stop = true, .stop = 1e6,
        };
        struct proto_target t = { daemon_load(c, &a, NULL), 0 };
        struct proto_progress p;
        char *buf = watch_joined_n(&t, "--every-point", 2000, true, &p, NULL);
        int64_t prev = -1;
        size_t lines = 0;

        for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
                struct json_object *j = json_tokener_parse(line);
                int64_t pt;

                cr_assert(j, "not JSON: %s", line);
                pt = get_i64(j, "point");
                cr_assert(prev < 0 || pt == prev + 1, "point %" PRId64 " after %" PRId64, pt, prev);
                cr_assert(!has_flag(j, "dropped"), "%s", line);
                prev = pt;
                lines++;
                json_object_put(j);
        }
        cr_assert(lines >= 2000, "%zu lines", lines);
        cr_assert_eq(prev, (int64_t)p.points, "last point %" PRId64 ", session at %" PRIu64, prev,
                     p.points);
        free(buf);
}

/*
 * A consumer far slower than the session: more samples than the queues
 * hold are dropped on the way, the last of them with no later sample to
 * carry the dropped flag. watch says so when the session ends, with how
 * many; it ended as if nothing were missing.
 */
Test(fmuctl_watch, samples_dropped_at_the_end_are_said, .init = setup, .fini = teardown)
{
        struct proto_load a = {
                .path = daemon_str(FMUD_EXAMPLES "/msd.ssp"), .has_stop = true, .stop = 1e6,
        };
        struct proto_target t = { daemon_load(c, &a, NULL), 0 };
        struct proto_session_status st;
        struct proto_progress p;
        char *err = NULL, *buf = watch_joined_n(&t, "--every-point", 50000, true, &p, &err);

        cr_assert(fmud_status(c, t.session, &st) == 0, "%s", fmud_errmsg(c));
        cr_assert(st.samples_dropped > 0, "nothing dropped: the test proves nothing");
        cr_assert(strstr(err, "were dropped while watching") != NULL, "%s", err);
        free(err);
        free(buf);
}
