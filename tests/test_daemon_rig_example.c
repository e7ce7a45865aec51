/*
 * daemon_rig_example: the example rig (client/examples/rig.c) against a
 * real fmud at 1 kHz (warp 1, h = 1 ms, 1 s of mass 1 of the
 * mass-spring-damper, its force F a rig input, its position x1 a rig
 * output). From the results file, the force at every point is one the
 * rig wrote, sin(2 pi t) of the point it was written for, and each write
 * applied once; the rig's counts agree with status's counters. A loaded
 * machine may miss points: they are counted, never timed.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon_fixture.h"

#define POLL_MAX        20000   /* status polls before giving up: a hang guard, not a measure */
#define H               0.001
#define POINTS          1000

static struct fmud_daemon d;
static struct fmud *c;

static void setup(void)
{
        daemon_start(&d, NULL);
        c = daemon_connect(&d);
}

static void teardown(void)
{
        fmud_close(c);
        c = NULL;
        daemon_stop(&d);
}

TestSuite(daemon_rig_example, .init = setup, .fini = teardown);

/* Start the example rig on session s, its stdout into *ret_fd. */
static pid_t spawn_rig(uint64_t s, int *ret_fd)
{
        char session[32], points[32];
        int p[2];
        pid_t kid;

        snprintf(session, sizeof(session), "%llu", (unsigned long long)s);
        snprintf(points, sizeof(points), "%d", POINTS);
        cr_assert(eq(int, pipe(p), 0));
        kid = fork();
        cr_assert(kid >= 0);
        if (kid == 0) {
                dup2(p[1], 1);
                close(p[0]);
                close(p[1]);
                execl(FMUD_RIG_EXAMPLE, "rig", "--endpoint", d.endpoint, "--step", "0.001",
                      "--points", points, "--idle-ms", "600000", session, (char *)NULL);
                _exit(127);
        }
        close(p[1]);
        *ret_fd = p[0];
        return kid;
}

/* The column named name of the CSV header line hdr; -1: none. */
static int column(const char *hdr, const char *name)
{
        int col = 0;
        size_t len = strlen(name);

        for (const char *p = hdr; *p && *p != '\n'; col++) {
                if (!strncmp(p, name, len) && (p[len] == ',' || p[len] == '\n'))
                        return col;
                p += strcspn(p, ",\n");
                if (*p == ',')
                        p++;
        }
        return -1;
}

Test(daemon_rig_example, the_rig_writes_the_force_of_every_point_applied_once_at_1khz)
{
        struct proto_str in = daemon_str("F"), out = daemon_str("x1");
        struct proto_str rec[] = { daemon_str("F"), daemon_str("x1") };
        struct proto_load a = { .path = daemon_str(FMUD_TEST_FMU_DIR "/MsdMass1.fmu"),
                                .has_stop = true, .stop = POINTS * H, .has_step = true,
                                .step = H, .has_warp = true, .warp = 1,
                                .n_rig_in = 1, .rig_in = &in, .n_rig_out = 1, .rig_out = &out,
                                .n_record = 2, .record = rec };
        unsigned long long last = 0, read_n = 0, skipped = 0, writes = 0, last_for = 0, full = 0;
        struct proto_session_status st;
        char buf[512] = "", *csv, *line;
        uint64_t s = daemon_load(c, &a, NULL);
        int fd, status, i, fcol, rows = 0, on_time = 0, changes = 0;
        double x = 0, prev = 0;
        bool seen = false, changed;
        ssize_t n;
        pid_t kid = spawn_rig(s, &fd);
        const char *path;

        /* Its first line says it has the channel: it waits, beating, before the first point. */
        for (n = 0; n < (ssize_t)sizeof(buf) - 1 && read(fd, buf + n, 1) == 1 && buf[n] != '\n';)
                n++;
        buf[n] = '\0';
        cr_assert(eq(str, buf, "in F out x1"));
        cr_assert(eq(int, fmud_start(c, &(struct proto_target){ s, 0 }, NULL), 0), "%s",
                  fmud_errmsg(c));
        daemon_wait_state(c, s, PROTO_STATE_FINISHED, &st);
        cr_assert(eq(int, (int)waitpid(kid, &status, 0), (int)kid));
        n = read(fd, buf, sizeof(buf) - 1);     /* one line, written whole at the end */
        close(fd);
        cr_assert(eq(int, WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0), "the rig: status %d",
                  status);
        cr_assert(n > 0);
        buf[n] = '\0';
        cr_assert(eq(int, sscanf(buf, "points=%llu read=%llu skipped=%llu writes=%llu last=%llu "
                                 "full=%llu x=%lf", &last, &read_n, &skipped, &writes,
                                 &last_for, &full, &x), 7),
                  "%s", buf);
        cr_assert(eq(int, fmud_status(c, s, &st), 0), "%s", fmud_errmsg(c));
        /*
         * Every point published was read or skipped; every write was taken, late or not,
         * but one for the stop point, from which there is no step to take it. Writes
         * taken at one point apply once, the newest (docs/scenarios.md "Rig ports"):
         * that happens only to a rig behind its points, so every write an applied one
         * superseded was late.
         */
        cr_assert(eq(u64, (uint64_t)last, POINTS), "%s", buf);
        cr_assert(eq(u64, (uint64_t)(read_n + skipped), POINTS + 1), "%s", buf);
        cr_assert(eq(u64, st.rig.bad, 0));
        cr_assert(st.rig.applied <= (uint64_t)(writes - (last_for >= POINTS)) &&
                  st.rig.applied + st.rig.late >= (uint64_t)(writes - (last_for >= POINTS)),
                  "%s applied %llu late %llu", buf, (unsigned long long)st.rig.applied,
                  (unsigned long long)st.rig.late);
        cr_assert(st.rig.late <= st.rig.applied);
        /*
         * The results: row t_k holds the force of the step into it, the one from point
         * k - 1, which the write for k - 1 sets: sin(2 pi t_(k-1)) when on time, else an
         * earlier write's, held (sin(2 pi t_j), j < k - 1).
         */
        path = fmud_load_out(c);
        cr_assert(path != NULL);
        csv = daemon_slurp(path, NULL);
        cr_assert(csv != NULL, "%s", path);
        fcol = column(csv, "F");
        cr_assert(fcol > 0, "no column F: %.200s", csv);
        for (line = strchr(csv, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
                char *p = line + 1;
                double t = strtod(p, NULL), f;
                long k = lround(t / H), j;

                for (i = 0; i < fcol; i++)
                        p = strchr(p, ',') + 1;
                f = strtod(p, NULL);
                changed = rows > 0 && f != prev;
                changes += changed;
                prev = f;
                rows++;
                if (f == 0 && !seen)
                        continue;       /* the start value, before the first write */
                seen = true;
                /*
                 * On time: a new value, the one written for the point before.
                 * A value held can match too, by the sine's symmetry (the
                 * write for 0.249 held until the row of 0.252, which expects
                 * sin(2 pi 0.251), the same): not a write landing.
                 */
                if (fabs(sin(2 * M_PI * (k - 1) * H) - f) < 1e-9) {
                        on_time += changed;
                        continue;
                }
                for (j = k - 1; j >= 0; j--)
                        if (fabs(sin(2 * M_PI * j * H) - f) < 1e-9)
                                break;
                cr_assert(j >= 0, "t %g: force %.17g was written for no point up to it", t, f);
        }
        cr_assert(eq(int, rows, POINTS + 1));
        /* Each write applied shows once as a new value; a write never applies twice. */
        cr_assert(changes <= (int)st.rig.applied, "%d changes, %llu applied", changes,
                  (unsigned long long)st.rig.applied);
        /* How many land on time is the machine's business; that some land is the rig's. */
        cr_assert(st.rig.applied > 0, "%.400s", csv);
        cr_assert(on_time <= (int)st.rig.applied, "%d rows on time, %llu applied (%llu late); "
                  "rig: %s", on_time, (unsigned long long)st.rig.applied,
                  (unsigned long long)st.rig.late, buf);
        free(csv);
}
