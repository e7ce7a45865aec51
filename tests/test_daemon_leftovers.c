/*
 * daemon: what a daemon killed with SIGKILL leaves below its scratch root
 * (workers, scratch directories) is gone once the next daemon on the same
 * root has started; what is not fmud's own stays (leftovers.h).
 *
 * The old daemon's workers are re-parented to the test process (a child
 * subreaper, daemon_fixture.h), so "gone" is checked by reaping them: a
 * worker still running is not reapable.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon_fixture.h"

#define MAX_PIDS 64

static struct fmud_daemon old, next;

static void teardown(void)
{
        daemon_stop(&next);
        daemon_kill(&old);
}

/* A second daemon on old's scratch root (its own endpoints and folder otherwise). */
static void start_next(void)
{
        const char *extra[] = { "--scratch-dir", old.scratch_dir, NULL };

        daemon_start(&next, extra);
}

static void kill_old(void)
{
        cr_assert(kill(old.pid, SIGKILL) == 0);
        cr_assert(waitpid(old.pid, NULL, 0) == old.pid);
        old.pid = 0;
}

/* Entries of dir other than "." and "..", listed into names (NULL: just counted). */
static size_t entries(const char *dir, char *names, size_t size)
{
        DIR *d = opendir(dir);
        struct dirent *e;
        size_t n = 0;

        cr_assert(d != NULL, "opendir('%s'): %s", dir, strerror(errno));
        if (names && size)
                names[0] = '\0';
        while ((e = readdir(d))) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                        continue;
                if (names && strlen(names) + strlen(e->d_name) + 2 < size) {
                        strcat(names, e->d_name);
                        strcat(names, " ");
                }
                n++;
        }
        closedir(d);
        return n;
}

/* Reap pid (our child or adopted); false when it still runs. */
static bool reaped(pid_t pid, int *ret_status)
{
        int st = 0;
        pid_t r = waitpid(pid, &st, WNOHANG);

        if (r == 0)
                return false;
        if (ret_status)
                *ret_status = st;
        return r == pid || !daemon_pid_alive(pid);
}

static unsigned long long start_time(pid_t pid)
{
        char path[64], buf[1024], *p;
        unsigned long long start = 0;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        f = fopen(path, "r");
        cr_assert(f != NULL, "%s: %s", path, strerror(errno));
        cr_assert(fgets(buf, sizeof(buf), f) != NULL);
        fclose(f);
        p = strrchr(buf, ')');
        cr_assert(p && sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d "
                                     "%*d %*d %*d %*d %*d %llu", &start) == 1);
        return start;
}

/* Write the record a daemon keeps for a worker (leftovers.h). */
static void write_record(const char *root, pid_t pid, unsigned long long start, const char *name)
{
        char *dir = NULL, *path = NULL;
        FILE *f;

        cr_assert(asprintf(&dir, "%s/.workers", root) > 0);
        cr_assert(mkdir(dir, 0700) == 0 || errno == EEXIST);
        cr_assert(asprintf(&path, "%s/%d", dir, (int)pid) > 0);
        f = fopen(path, "w");
        cr_assert(f != NULL);
        fprintf(f, "%llu %s\n", start, name);
        fclose(f);
        free(path);
        free(dir);
}

/* A process of its own group that waits to be killed, as a stray worker would. */
static pid_t stray(void)
{
        pid_t pid = fork();

        cr_assert(pid >= 0);
        if (pid == 0) {
                (void) setpgid(0, 0);
                for (;;)
                        pause();
        }
        (void) setpgid(pid, pid);
        return pid;
}

static uint64_t load_msd(struct fmud *c)
{
        struct proto_load a = { .path = daemon_str(FMUD_EXAMPLES "/msd.ssp") };

        return daemon_load(c, &a, NULL);
}

Test(daemon_leftovers, a_killed_daemons_workers_and_scratch_are_gone_after_the_next_start,
     .fini = teardown)
{
        pid_t workers[MAX_PIDS];
        char left[1024];
        struct fmud *c;
        size_t n;

        daemon_start(&old, NULL);
        c = daemon_connect(&old);
        (void) load_msd(c);
        (void) load_msd(c);
        fmud_close(c);
        n = daemon_children(old.pid, workers, MAX_PIDS);
        cr_assert(eq(sz, n, 4), "the two sessions' workers");
        cr_assert(entries(old.scratch_dir, NULL, 0) >= 4, "their scratch directories");

        kill_old();
        start_next();

        for (size_t i = 0; i < n; i++)
                cr_expect(reaped(workers[i], NULL), "worker %d of the killed daemon still runs",
                          (int)workers[i]);
        cr_expect(eq(sz, entries(old.scratch_dir, left, sizeof(left)), 0),
                  "left below the scratch root: %s", left);
}

Test(daemon_leftovers, a_recorded_worker_that_outlived_its_daemon_is_killed_at_start,
     .fini = teardown)
{
        bool gone, by_kill;
        pid_t pid;
        int st = 0;

        daemon_start(&old, NULL);
        kill_old();
        pid = stray();
        write_record(old.scratch_dir, pid, start_time(pid), "fmud-Ab12Cd");

        start_next();

        gone = reaped(pid, &st);
        if (!gone) {
                (void) kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
        }
        cr_assert(gone, "the recorded worker %d still runs", (int)pid);
        by_kill = WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
        cr_assert(by_kill, "status %#x", st);
        cr_assert(eq(sz, entries(old.scratch_dir, NULL, 0), 0), "the record is removed");
}

Test(daemon_leftovers, a_record_whose_pid_is_another_process_now_kills_nothing,
     .fini = teardown)
{
        pid_t pid;
        bool alive;

        daemon_start(&old, NULL);
        kill_old();
        pid = stray();
        /* Same pid, another start time: the recorded worker is gone, the pid reused. */
        write_record(old.scratch_dir, pid, start_time(pid) + 1, "fmud-Ab12Cd");

        start_next();

        alive = !reaped(pid, NULL);
        (void) kill(pid, SIGKILL);
        (void) waitpid(pid, NULL, 0);
        cr_assert(alive, "process %d was killed", (int)pid);
        cr_assert(eq(sz, entries(old.scratch_dir, NULL, 0), 0), "the stale record is removed");
}

static char *path_in(const char *dir, const char *name)
{
        char *p = NULL;

        cr_assert(asprintf(&p, "%s/%s", dir, name) > 0);
        return p;
}

static void touch(const char *path)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

        cr_assert(fd >= 0, "%s: %s", path, strerror(errno));
        cr_assert(write(fd, "x", 1) == 1);
        close(fd);
}

Test(daemon_leftovers, the_sweep_follows_no_link_and_removes_only_scratch_directories,
     .fini = teardown)
{
        char *outside, *outside_file, *dead, *dead_sub, *dead_file, *link_in, *link_root, *other;
        char left[1024];
        struct stat st;

        daemon_start(&old, NULL);
        kill_old();
        /* Somebody's data, outside the scratch root. */
        outside = daemon_path(&old, "precious");
        outside_file = path_in(outside, "data");
        cr_assert(mkdir(outside, 0700) == 0);
        touch(outside_file);
        /* A dead worker's directory with files, a subdirectory and links out. */
        dead = path_in(old.scratch_dir, "fmud-Zz9Yy8");
        dead_sub = path_in(dead, "deep");
        cr_assert(mkdir(dead, 0700) == 0 && mkdir(dead_sub, 0700) == 0);
        dead_file = path_in(dead_sub, "file");
        touch(dead_file);
        link_in = path_in(dead, "out");
        cr_assert(symlink(outside, link_in) == 0);
        /* A link with a scratch directory's name, and a directory that is not fmud's. */
        link_root = path_in(old.scratch_dir, "fmud-Qq7Ww6");
        cr_assert(symlink(outside, link_root) == 0);
        other = path_in(old.scratch_dir, "not-fmud");
        cr_assert(mkdir(other, 0700) == 0);

        start_next();

        cr_expect(access(dead, F_OK) != 0, "the dead worker's directory stays");
        cr_expect(access(outside_file, F_OK) == 0, "a file behind a link was removed");
        cr_expect(lstat(link_root, &st) == 0 && S_ISLNK(st.st_mode), "the link was removed");
        cr_expect(access(other, F_OK) == 0, "a directory not fmud's was removed");
        (void) entries(old.scratch_dir, left, sizeof(left));
        cr_log_info("left: %s", left);
        /* So that the folder can go. */
        (void) unlink(link_root);
        (void) rmdir(other);
        free(outside);
        free(outside_file);
        free(dead);
        free(dead_sub);
        free(dead_file);
        free(link_in);
        free(link_root);
        free(other);
}
