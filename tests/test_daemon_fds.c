/*
 * daemon_fds: a daemon started with a low soft limit of open files (a
 * shell's or a service's default) raises it to its hard limit, so that a
 * system of more instances than that soft limit allows (a worker holds
 * about three of the daemon's descriptors) loads. It failed with "Too
 * many open files" from about a third of the soft limit on. Its workers
 * get the soft limit back as it was.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon_fixture.h"

#define N_INST  40      /* 120 descriptors and more: past a soft limit of 64 */

static void copy(const char *from, const char *to)
{
        char buf[65536];
        int in = open(from, O_RDONLY | O_CLOEXEC), out;
        ssize_t n;

        cr_assert(in >= 0, "%s: %s", from, strerror(errno));
        out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        cr_assert(out >= 0, "%s: %s", to, strerror(errno));
        while ((n = read(in, buf, sizeof(buf))) > 0)
                cr_assert(write(out, buf, (size_t)n) == n);
        close(in);
        close(out);
}

/* The soft "Max open files" of process pid, from /proc (0: unreadable). */
static unsigned long long soft_nofile(pid_t pid)
{
        char path[64], line[256];
        unsigned long long soft = 0;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
        f = fopen(path, "r");
        cr_assert(f != NULL, "%s: %s", path, strerror(errno));
        while (fgets(line, sizeof(line), f))
                if (!strncmp(line, "Max open files", 14))
                        soft = strtoull(line + 14, NULL, 10);
        fclose(f);
        return soft;
}

Test(daemon_fds, a_low_soft_limit_of_open_files_does_not_cap_the_instances, .timeout = 240)
{
        struct fmud_daemon d = { 0 };
        struct rlimit saved, low;
        char *sys, *res, *ssd_path;
        struct proto_load a = { 0 };
        struct fmud *c;
        uint64_t s;
        FILE *f;

        cr_assert(getrlimit(RLIMIT_NOFILE, &saved) == 0);
        cr_assert(saved.rlim_max > 256, "the hard limit %llu leaves nothing to test",
                  (unsigned long long)saved.rlim_max);
        low = (struct rlimit){ 64, saved.rlim_max };
        cr_assert(setrlimit(RLIMIT_NOFILE, &low) == 0);
        /* Unsandboxed: a worker keeps the limit it is started with, as an FMU sees it. */
        daemon_start(&d, (const char *const[]){ "--sandbox", "off", NULL });
        cr_assert(setrlimit(RLIMIT_NOFILE, &saved) == 0);

        sys = daemon_path(&d, "many");
        res = daemon_path(&d, "many/resources");
        cr_assert(mkdir(sys, 0755) == 0 && mkdir(res, 0755) == 0);
        ssd_path = daemon_path(&d, "many/resources/LinearOde.fmu");
        copy(FMUD_TEST_FMU_DIR "/LinearOde.fmu", ssd_path);
        free(ssd_path);
        ssd_path = daemon_path(&d, "many/SystemStructure.ssd");
        f = fopen(ssd_path, "w");
        cr_assert(f != NULL);
        fputs("<?xml version=\"1.0\"?>\n<ssd:SystemStructureDescription version=\"1.0\" "
              "name=\"many\" xmlns:ssd=\"http://ssp-standard.org/SSP1/SystemStructureDescription\">"
              "\n<ssd:System name=\"many\"><ssd:Elements>\n", f);
        for (int i = 0; i < N_INST; i++)
                fprintf(f, "<ssd:Component name=\"c%d\" source=\"resources/LinearOde.fmu\"/>\n", i);
        fputs("</ssd:Elements></ssd:System></ssd:SystemStructureDescription>\n", f);
        cr_assert(fclose(f) == 0);

        c = daemon_connect(&d);
        a.path = daemon_str(sys);
        cr_assert(eq(int, fmud_load(c, &a, &s, NULL), 0), "%s", fmud_errmsg(c));
        /* The workers got the soft limit back as it was: an FMU may use select(). */
        {
                pid_t kids[64];
                size_t n = daemon_children(d.pid, kids, 64);

                cr_assert(n >= N_INST, "%zu workers", n);
                cr_assert(eq(u64, soft_nofile(kids[0]), 64));
        }
        cr_assert(eq(int, fmud_unload(c, &(struct proto_target){ s, 0 }), 0), "%s",
                  fmud_errmsg(c));
        fmud_close(c);
        free(ssd_path);
        free(res);
        free(sys);
        daemon_stop(&d);
}
