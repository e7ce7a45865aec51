/*
 * daemon: a root daemon opens every file a local client names (the
 * scenario, its sources, the input file, the results file) with that
 * client's own filesystem identity, so it reads and writes only what the
 * client itself could. Another user's private files are refused with the
 * same answer as a file that is not there, and quote nothing; results
 * land where the client may write, also under the unit's capability
 * bounding set (no CAP_DAC_OVERRIDE, no CAP_FOWNER).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon_fixture.h"
#include "support/as_other.h"
#include "support/tmpdir.h"

#define VICTIM_UID      1000    /* the owner of the private files */
#define VICTIM_GID      1000

static const char roles[] = "[roles]\nuser = 65534 operator\n";
static const char secret[] = "time,the-victims-secret-column\n0,1\n";

struct ask {
        const char *path, *input, *out;
};

struct other_load {
        const struct fmud_daemon *d;
        const struct ask *q;
};

/* As the other user: load q; 0, or 4 with the daemon's message on report_fd. */
static int load_as_other(void *ctx, int report_fd)
{
        const struct other_load *o = ctx;
        struct proto_load a = {
                .path = daemon_str(o->q->path),
                .input = daemon_str(o->q->input ? o->q->input : ""),
                .out = daemon_str(o->q->out ? o->q->out : ""),
        };
        char err[512], line[4096];
        struct fmud *c = NULL;
        uint64_t s;
        int r;

        if (fmud_connect(o->d->endpoint, NULL, &c, err, sizeof(err)) < 0)
                return 3;
        r = fmud_load(c, &a, &s, NULL);
        snprintf(line, sizeof(line), "%s", r < 0 ? fmud_errmsg(c) :
                 fmud_load_out(c) ? fmud_load_out(c) : "");
        (void) !write(report_fd, line, strlen(line));
        if (r == 0)
                (void) fmud_unload(c, &(struct proto_target){ .session = s });
        fmud_close(c);
        return r < 0 ? 4 : 0;
}

/* Run load_as_other() as the other user; its exit status, line what it wrote. */
static int other_loads(const struct fmud_daemon *d, const struct ask *q, char *line, size_t size)
{
        struct other_load o = { d, q };
        int status = 0;
        ssize_t n;

        n = as_other(load_as_other, &o, line, size - 1, &status);
        cr_assert(n >= 0, "%s", strerror((int)-n));
        line[n] = '\0';
        if (status < 0)
                cr_fatal("the child did not exit");
        return status;
}

/* A daemon (bounded to caps) the other user may reach and load from as an operator. */
static void start(struct fmud_daemon *d, uint64_t caps, char **ret_conf_dir)
{
        char *conf, *sock;

        *ret_conf_dir = tmpdir_new("as-peer-conf");
        cr_assert(ret_conf_dir[0] != NULL);
        cr_assert(eq(int, tmpdir_write(*ret_conf_dir, "fmud.conf", roles, sizeof(roles) - 1),
                     0));
        cr_assert(asprintf(&conf, "%s/fmud.conf", *ret_conf_dir) > 0);
        daemon_start_bounded(d, caps, (const char *const[]){ "--config", conf, NULL });
        sock = daemon_path(d, "control.sock");
        cr_assert(eq(int, chmod(d->dir, 0777), 0));
        cr_assert(eq(int, chmod(sock, 0666), 0));
        free(sock);
        free(conf);
}

/* name in dir, mode, the victim's. */
static char *victims(const char *dir, const char *name, const void *data, size_t len,
                     mode_t mode)
{
        char *path;

        cr_assert(eq(int, tmpdir_write(dir, name, data, len), 0));
        cr_assert(asprintf(&path, "%s/%s", dir, name) > 0);
        cr_assert(eq(int, chmod(path, mode), 0));
        cr_assert(eq(int, chown(path, VICTIM_UID, VICTIM_GID), 0));
        return path;
}

/* msg with path cut out: what is left says nothing about the file. */
static void without(char *msg, const char *path)
{
        char *p = strstr(msg, path);

        cr_assert(p != NULL, "'%s' does not name '%s'", msg, path);
        memmove(p, p + strlen(path), strlen(p + strlen(path)) + 1);
}

Test(daemon_as_peer, another_users_private_files_are_refused_as_if_they_were_not_there)
{
        char line[4096], missing_line[4096], *conf_dir, *dir, *fmu, *csv, *open_csv, *missing;
        char *bytes;
        struct fmud_daemon d;
        struct ask q = { 0 };
        size_t len;

        if (geteuid() != 0)
                cr_skip_test("needs root: a daemon of one user reads only that user's files");
        start(&d, ~(uint64_t)0, &conf_dir);
        /* The victim's folder, 0700, with its FMU (0600), an input file and a world-readable one. */
        dir = daemon_path(&d, "victim");
        cr_assert(eq(int, mkdir(dir, 0700), 0));
        bytes = daemon_slurp(FMUD_TEST_FMU_DIR "/Feedthrough.fmu", &len);
        fmu = victims(dir, "model.fmu", bytes, len, 0600);
        csv = victims(dir, "in.csv", secret, sizeof(secret) - 1, 0600);
        open_csv = victims(dir, "open.csv", secret, sizeof(secret) - 1, 0644);
        cr_assert(eq(int, chown(dir, VICTIM_UID, VICTIM_GID), 0));
        missing = daemon_path(&d, "victim/not-there.fmu");

        q.path = fmu;
        cr_assert(eq(int, other_loads(&d, &q, line, sizeof(line)), 4), "loaded: %s", line);
        cr_assert(strstr(line, "may not reach it") != NULL, "%s", line);
        without(line, fmu);
        q.path = missing;
        cr_assert(eq(int, other_loads(&d, &q, missing_line, sizeof(missing_line)), 4));
        without(missing_line, missing);
        cr_assert(eq(str, line, missing_line), "a file that is there answers otherwise");
        /* Input files of the victim's: refused, whatever their own mode; nothing quoted. */
        q.path = FMUD_TEST_FMU_DIR "/Feedthrough.fmu";
        q.input = csv;
        cr_assert(eq(int, other_loads(&d, &q, line, sizeof(line)), 4), "loaded: %s", line);
        cr_assert(strstr(line, "may not reach it") != NULL, "%s", line);
        q.input = open_csv;
        cr_assert(eq(int, other_loads(&d, &q, line, sizeof(line)), 4), "loaded: %s", line);
        cr_assert(strstr(line, "may not reach it") != NULL, "%s", line);
        cr_assert(strstr(line, "secret") == NULL, "quoted: %s", line);
        /* The same FMU where the client may read it loads. */
        q.input = NULL;
        cr_assert(eq(int, other_loads(&d, &q, line, sizeof(line)), 0), "%s", line);
        daemon_stop(&d);
        free(missing);
        free(open_csv);
        free(csv);
        free(fmu);
        free(bytes);
        free(dir);
        tmpdir_free(conf_dir);
}

/* The capabilities systemd/fmud.service(.in) leaves in its CapabilityBoundingSet=. */
static uint64_t unit_caps(void)
{
        static const struct { const char *name; int cap; } known[] = {
                { "CAP_CHOWN", CAP_CHOWN },             { "CAP_DAC_OVERRIDE", CAP_DAC_OVERRIDE },
                { "CAP_DAC_READ_SEARCH", CAP_DAC_READ_SEARCH }, { "CAP_FOWNER", CAP_FOWNER },
                { "CAP_KILL", CAP_KILL },               { "CAP_SETGID", CAP_SETGID },
                { "CAP_SETUID", CAP_SETUID },           { "CAP_SETPCAP", CAP_SETPCAP },
                { "CAP_SYS_ADMIN", CAP_SYS_ADMIN },     { "CAP_SYS_NICE", CAP_SYS_NICE },
                { "CAP_SYS_PTRACE", CAP_SYS_PTRACE },   { "CAP_SYS_RESOURCE", CAP_SYS_RESOURCE },
                { "CAP_IPC_LOCK", CAP_IPC_LOCK },
        };
        char *unit = daemon_slurp(FMUD_TEST_SRC_DIR "/../systemd/fmud.service.in", &(size_t){ 0 });
        char *line = strstr(unit, "\nCapabilityBoundingSet="), *save = NULL, *w;
        uint64_t caps = 0;
        bool found;

        cr_assert(line != NULL, "the unit sets no CapabilityBoundingSet=");
        line += strlen("\nCapabilityBoundingSet=");
        line[strcspn(line, "\n")] = '\0';
        for (w = strtok_r(line, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
                found = false;
                for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
                        if (!strcmp(w, known[i].name)) {
                                caps |= (uint64_t)1 << known[i].cap;
                                found = true;
                        }
                cr_assert(found, "the unit names %s, which this test does not know", w);
        }
        free(unit);
        cr_assert(eq(u64, caps & ((uint64_t)1 << CAP_DAC_OVERRIDE), 0));
        return caps;
}

Test(daemon_as_peer, results_land_under_the_units_capabilities_with_and_without_out)
{
        char line[4096], *conf_dir, *out;
        struct fmud_daemon d;
        struct ask q = { .path = FMUD_TEST_FMU_DIR "/Feedthrough.fmu" };
        struct stat st;
        size_t len;
        char *got;

        if (geteuid() != 0)
                cr_skip_test("needs root: the unit's daemon runs as root");
        start(&d, unit_caps(), &conf_dir);
        out = daemon_path(&d, "theirs.csv");
        q.out = out;
        cr_assert(eq(int, other_loads(&d, &q, line, sizeof(line)), 0), "%s", line);
        cr_assert(eq(int, stat(out, &st), 0));
        cr_assert(eq(u32, (uint32_t)st.st_uid, AS_OTHER_UID));
        /* Again: the client's own results, replaced. */
        cr_assert(eq(int, other_loads(&d, &q, line, sizeof(line)), 0), "%s", line);
        got = daemon_slurp(out, &len);
        cr_assert(eq(int, strncmp(got, "time,", 5), 0), "%s", got);
        free(got);
        /* No file named: below the state directory, the client's. */
        q.out = NULL;
        cr_assert(eq(int, other_loads(&d, &q, line, sizeof(line)), 0), "%s", line);
        cr_assert(eq(int, stat(line, &st), 0), "%s", line);
        cr_assert(eq(u32, (uint32_t)st.st_uid, AS_OTHER_UID));
        got = daemon_slurp(line, &len);
        cr_assert(eq(int, strncmp(got, "time,", 5), 0), "%s", got);
        free(got);
        daemon_stop(&d);
        free(out);
        tmpdir_free(conf_dir);
}
