/*
 * fmud started by hand: only --endpoint given (the PUB socket next to it),
 * directories that do not exist yet (made with their modes before the
 * daemon says it is ready), and a directory that cannot be made (the
 * daemon exits before readiness, naming the path and the reason).
 *
 * Each daemon here is started by this file, not daemon_fixture.c, whose
 * daemons are always given both endpoints and existing directories.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client/fmud.h"
#include "support/tmpdir.h"

#define READY_MS 60000          /* a hang guard, not a measure */

struct started {
        pid_t pid;
        bool ready;             /* "READY\n" came; false: it exited first */
        char log[512];
};

/*
 * fmud with args (NULL-ended) and --ready-fd 3, its stderr to dir/name.log;
 * env: "NAME=VALUE" strings for it alone (NULL-ended, may be NULL).
 */
static void start(const char *dir, const char *name, const char *const *args,
                  const char *const *env, struct started *ret)
{
        const char *argv[40];
        char buf[16] = "";
        struct pollfd p;
        int pfd[2], n = 0;
        ssize_t got = -1;

        snprintf(ret->log, sizeof(ret->log), "%s/%s.log", dir, name);
        argv[n++] = FMUD_BINARY;
        for (int i = 0; args[i] && n < 36; i++)
                argv[n++] = args[i];
        argv[n++] = "--ready-fd";
        argv[n++] = "3";
        argv[n] = NULL;
        cr_assert(eq(int, pipe2(pfd, O_CLOEXEC), 0));
        ret->pid = fork();
        cr_assert(ret->pid >= 0);
        if (ret->pid == 0) {
                int lfd = open(ret->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

                if (lfd < 0 || dup2(lfd, 2) < 0 || dup2(pfd[1], 3) < 0)
                        _exit(127);
                unsetenv("NOTIFY_SOCKET");
                for (int i = 0; env && env[i]; i++)
                        putenv((char *)env[i]);
                execv(argv[0], (char *const *)argv);
                _exit(127);
        }
        close(pfd[1]);
        p = (struct pollfd){ .fd = pfd[0], .events = POLLIN };
        if (poll(&p, 1, READY_MS) > 0)
                got = read(pfd[0], buf, sizeof(buf) - 1);
        close(pfd[0]);
        cr_assert(got >= 0, "fmud neither got ready nor exited: see %s", ret->log);
        ret->ready = got == 6 && !strcmp(buf, "READY\n");
}

/* SIGTERM (sig 0: none, it exits by itself) and the exit code; -1 for death by a signal. */
static int stop(struct started *s, int sig)
{
        int status;

        if (sig)
                kill(s->pid, sig);
        cr_assert(eq(int, waitpid(s->pid, &status, 0), s->pid));
        s->pid = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static char *slurp(const char *path)
{
        static char buf[8192];
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

        if (fd >= 0)
                close(fd);
        buf[n > 0 ? n : 0] = '\0';
        return buf;
}

static unsigned mode_of(const char *path)
{
        struct stat st;

        cr_assert(eq(int, stat(path, &st), 0), "stat('%s'): %s", path, strerror(errno));
        bool dir = S_ISDIR(st.st_mode);

        cr_assert(dir, "'%s' is not a directory", path);
        return (unsigned)(st.st_mode & 07777);
}

static bool exists(const char *path)
{
        struct stat st;

        return lstat(path, &st) == 0;
}

/* Load Scripted.fmu and unload it: the session of the first state event c's subscriber gets. */
static uint64_t event_reaches(struct fmud *c)
{
        struct proto_load one = { .path = { FMUD_MASTER_FMU_DIR "/Scripted.fmu",
                                            sizeof(FMUD_MASTER_FMU_DIR "/Scripted.fmu") - 1 } };
        struct fmud_msg m;
        uint64_t s, gen;

        /* Back once the subscription is in force (PROTOCOL.md "Joining"). */
        cr_assert(eq(int, fmud_events(c, true), 0), "%s", fmud_errmsg(c));
        cr_assert(eq(int, fmud_load(c, &one, &s, &gen), 0), "%s", fmud_errmsg(c));
        cr_assert(eq(int, fmud_unload(c, &(struct proto_target){ s, 0 }), 0));
        for (;;) {
                cr_assert(eq(int, fmud_next(c, 30000, &m), 0), "no state event");
                if (m.kind == FMUD_MSG_EVENT && !strcmp(m.topic, "events"))
                        return m.event.session;
        }
}

Test(daemon_start, two_daemons_given_only_their_endpoints_publish_beside_them)
{
        char *dir = tmpdir_new("fmud-st");
        char ep[2][256], cache[2][256], scratch[2][256], state[2][256], want[256];
        struct started s[2];
        struct fmud *c[2];
        char err[512];

        cr_assert(dir != NULL);
        for (int i = 0; i < 2; i++) {
                const char *args[] = { "--config", "/dev/null", "--endpoint", ep[i],
                                       "--cache-dir", cache[i], "--scratch-dir", scratch[i],
                                       "--state-dir", state[i], "--allow", FMUD_MASTER_FMU_DIR,
                                       NULL };
                char name[8];

                snprintf(ep[i], sizeof(ep[i]), "ipc://%s/d%d/control.sock", dir, i);
                snprintf(cache[i], sizeof(cache[i]), "%s/cache%d", dir, i);
                snprintf(scratch[i], sizeof(scratch[i]), "%s/d%d/scratch", dir, i);
                snprintf(state[i], sizeof(state[i]), "%s/state%d", dir, i);
                snprintf(name, sizeof(name), "d%d", i);
                start(dir, name, args, NULL, &s[i]);
                cr_assert(s[i].ready, "daemon %d did not serve:\n%s", i, slurp(s[i].log));
        }
        for (int i = 0; i < 2; i++) {
                cr_assert(eq(int, fmud_connect(ep[i], NULL, &c[i], err, sizeof(err)), 0), "%s",
                          err);
                snprintf(want, sizeof(want), "ipc://%s/d%d/events.sock", dir, i);
                cr_assert(eq(str, (char *)fmud_pub_endpoint(c[i]), want));
        }
        /* Each one's events on its own socket; the other subscriber hears none of them. */
        for (int i = 0; i < 2; i++) {
                struct fmud_msg m;

                cr_assert(eq(u64, event_reaches(c[i]), 1));
                cr_assert(eq(int, fmud_next(c[1 - i], 0, &m), i == 0 ? -ENOTCONN : -EAGAIN));
        }
        for (int i = 0; i < 2; i++) {
                fmud_close(c[i]);
                cr_assert(eq(int, stop(&s[i], SIGTERM), 0), "%s", slurp(s[i].log));
        }
        tmpdir_free(dir);
}

Test(daemon_start, missing_run_state_and_cache_directories_are_made_before_ready)
{
        char *dir = tmpdir_new("fmud-st");
        char rt[200], env_rt[300], run[200], scratch[256], sock[256], state[200], results[256];
        char cache[256], state_arg[256];
        const char *args[] = { "--config", "/dev/null", "--state-dir", state_arg,
                               "--cache-dir", cache, NULL };
        const char *env[] = { env_rt, NULL };
        struct started s;

        cr_assert(dir != NULL);
        /* Two levels missing each: the run directory's parent too. */
        snprintf(rt, sizeof(rt), "%s/r", dir);
        snprintf(run, sizeof(run), "%s/r/fmud", dir);
        snprintf(env_rt, sizeof(env_rt), "RUNTIME_DIRECTORY=%s", run);
        snprintf(scratch, sizeof(scratch), "%s/scratch", run);
        snprintf(sock, sizeof(sock), "%s/control.sock", run);
        snprintf(state_arg, sizeof(state_arg), "%s/s/lib", dir);
        snprintf(state, sizeof(state), "%s/s/lib", dir);
        snprintf(results, sizeof(results), "%s/results", state);
        snprintf(cache, sizeof(cache), "%s/c/cache", dir);
        umask(0);       /* the modes must not come from the umask */
        start(dir, "fmud", args, env, &s);
        umask(022);
        cr_assert(s.ready, "did not serve:\n%s", slurp(s.log));
        cr_assert(eq(u32, mode_of(run), 0700));
        cr_assert(eq(u32, mode_of(scratch), 0700));
        cr_assert(eq(u32, mode_of(state), 0755));
        cr_assert(eq(u32, mode_of(results), 0755));
        cr_assert(eq(u32, mode_of(cache), 0750));
        cr_assert(exists(sock), "no control socket at '%s'", sock);
        cr_assert(eq(int, stop(&s, SIGTERM), 0), "%s", slurp(s.log));
        /* This run's directories go with it; the cache and the state stay. */
        cr_assert(not(exists(run)), "run directory left behind");
        cr_assert(not(exists(rt)), "the run directory's parent left behind");
        cr_assert(exists(results) && exists(cache));
        tmpdir_free(dir);
}

Test(daemon_start, a_directory_that_cannot_be_made_stops_it_before_ready)
{
        char *dir = tmpdir_new("fmud-st");
        char ep[256], sock[256], file[200], state[200], cache[256], scratch[256], want[512];
        const char *args[] = { "--config", "/dev/null", "--endpoint", ep, "--state-dir", state,
                               "--cache-dir", cache, "--scratch-dir", scratch, NULL };
        struct started s;

        cr_assert(dir != NULL);
        snprintf(ep, sizeof(ep), "ipc://%s/run/control.sock", dir);
        snprintf(sock, sizeof(sock), "%s/run/control.sock", dir);
        snprintf(file, sizeof(file), "%s/file", dir);
        snprintf(state, sizeof(state), "%s/file/state", dir);
        snprintf(cache, sizeof(cache), "%s/cache", dir);
        snprintf(scratch, sizeof(scratch), "%s/scratch", dir);
        cr_assert(eq(int, tmpdir_write(dir, "file", "x", 1), 0));
        start(dir, "fmud", args, NULL, &s);
        cr_assert(not(s.ready), "it served with a state directory under a file");
        cr_assert(eq(int, stop(&s, 0), 1));
        snprintf(want, sizeof(want), "'%s': mkdir('%s'): Not a directory", state, file);
        cr_assert(strstr(slurp(s.log), want) != NULL, "log:\n%s", slurp(s.log));
        cr_assert(strstr(slurp(s.log), "serving") == NULL, "log:\n%s", slurp(s.log));
        /* Nothing bound, nothing else touched. */
        cr_assert(not(exists(sock)), "a socket was bound");
        cr_assert(eq(str, slurp(file), "x"));
        tmpdir_free(dir);
}
