/*
 * cmd_run_private: a daemon of fmuctl run's own, for when no daemon
 * answers at the endpoint (cmd_run.h).
 *
 * DESIGN: fork+exec fmud with command-line options only (--no-config:
 * not even the system's /etc/fmud/fmud.conf): ipc sockets and a scratch
 * directory in a new 0700 temporary directory (its state directory too),
 * read access below the scenario's and the output's directories, the
 * cache fmuctl run --local uses, and --ready-fd on a
 * pipe. "READY\n" on the pipe means it serves; end of file means it died.
 * Its stderr goes to a log file in the directory, shown after a failure.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <linux/capability.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd_run.h"
#include "commands.h"
#include "engine/engine.h"
#include "proto/paths.h"

#define READY_FD 3
#define READY_TIMEOUT_MS 60000
#define MAX_ARGS 64

static char *find_daemon(void)
{
        static const char *const rel[] = { "fmud", "../daemon/fmud", "../sbin/fmud" };

        return paths_program("FMUD_DAEMON", rel, sizeof(rel) / sizeof(rel[0]));
}

/* mkdir -p with mode for the directories it creates. */
static int mkdir_p(const char *path, mode_t mode)
{
        char buf[PATH_MAX];
        size_t len = strlen(path);

        if (len >= sizeof(buf))
                return -ENAMETOOLONG;
        memcpy(buf, path, len + 1);
        for (char *p = buf + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                if (mkdir(buf, mode) < 0 && errno != EEXIST)
                        return -errno;
                *p = '/';
        }
        if (mkdir(buf, mode) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

/* A short temporary directory: ipc socket paths must fit in sun_path (108 bytes). */
static char *make_dir(void)
{
        const char *tmp = getenv("TMPDIR");
        char *dir;

        if (!tmp || tmp[0] != '/' || strlen(tmp) > 60)
                tmp = "/tmp";
        if (asprintf(&dir, "%s/fmuctl-run-XXXXXX", tmp) < 0)
                return NULL;
        if (!mkdtemp(dir)) {
                free(dir);
                return NULL;
        }
        return dir;
}

static void child(const char *const *argv, int ready, int log)
{
        int nul;

        /* The log first: it may sit on READY_FD, which dup2() below replaces. */
        if (log >= 0 && (dup2(log, STDERR_FILENO) < 0 || dup2(log, STDOUT_FILENO) < 0))
                _exit(127);
        if (ready != READY_FD) {
                if (dup2(ready, READY_FD) < 0)
                        _exit(127);
        } else if (fcntl(READY_FD, F_SETFD, 0) < 0) {
                _exit(127);
        }
        nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (nul < 0 || dup2(nul, STDIN_FILENO) < 0)
                _exit(127);
        /* Not fmuctl's process group: Ctrl-C is fmuctl's to handle, then SIGTERM. */
        (void)setpgid(0, 0);
        /* But never outlive fmuctl, even when it is killed. */
        (void)prctl(PR_SET_PDEATHSIG, SIGTERM);
        execv(argv[0], (char *const *)argv);
        fprintf(stderr, "cannot execute '%s': %s\n", argv[0], strerror(errno));
        _exit(127);
}

/* Wait for "READY\n" on fd; 0, or -errno (-EPIPE: it exited, -ETIMEDOUT). */
static int wait_ready(int fd)
{
        char buf[16];
        size_t got = 0;
        struct pollfd p = { .fd = fd, .events = POLLIN };
        ssize_t n;
        int r;

        while (got < 6) {
                r = poll(&p, 1, READY_TIMEOUT_MS);
                if (r < 0 && errno == EINTR)
                        return -EINTR;
                if (r < 0)
                        return -errno;
                if (r == 0)
                        return -ETIMEDOUT;
                n = read(fd, buf + got, sizeof(buf) - 1 - got);
                if (n < 0 && errno == EINTR)
                        return -EINTR;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return -EPIPE;
                got += (size_t)n;
        }
        return strncmp(buf, "READY\n", 6) ? -EPROTO : 0;
}

/*
 * The cache --local uses, except for root: a root daemon runs its workers
 * as an unprivileged user, who cannot reach root's home; there, the
 * system daemon's default, unless FMUD_CACHE_DIR says otherwise.
 */
static char *cache_dir(void)
{
        const char *env = getenv("FMUD_CACHE_DIR");

        if (geteuid() == 0 && !(env && *env))
                return strdup("/var/cache/fmud");
        return paths_cache();
}

/*
 * Can a root daemon's workers walk down to path: x on every directory that
 * exists, for the class they fall in (owner, group or others; they have no
 * supplementary groups). A root daemon makes its cache 0750 root:GROUP
 * (daemon/dirs.c): that is how a cache it used before looks.
 */
static bool reachable(const char *path)
{
        char buf[PATH_MAX];
        size_t len = strlen(path);
        struct stat st;
        uid_t uid;
        gid_t gid;
        bool have_group = run_sandbox_user(&uid, &gid) == 0;

        if (len >= sizeof(buf) || path[0] != '/')
                return false;
        memcpy(buf, path, len + 1);
        for (char *p = buf + 1;; p++) {
                char c = *p;

                if (c != '/' && c != '\0')
                        continue;
                *p = '\0';
                if (stat(buf, &st) < 0)
                        return errno == ENOENT;         /* created 0755 below */
                /* One class decides, as the kernel checks: owner, else group, else others. */
                if (have_group && st.st_uid == uid ? !(st.st_mode & S_IXUSR) :
                    have_group && st.st_gid == gid ? !(st.st_mode & S_IXGRP) :
                    !(st.st_mode & S_IXOTH))
                        return false;
                *p = c;
                if (!c)
                        return true;
        }
}

/*
 * A root daemon's workers cannot use a cache they cannot reach: then one
 * for this run only, in the daemon's directory (opened to o+x).
 */
static char *usable_cache(struct private_daemon *d, char *cache)
{
        char *own;

        if (geteuid() != 0 || reachable(cache))
                return cache;
        if (asprintf(&own, "%s/cache", d->dir) < 0)
                return cache;
        if (chmod(d->dir, 0711) < 0 || mkdir(own, 0755) < 0) {
                free(own);
                return cache;
        }
        fprintf(stderr, "fmuctl run: the workers of a root daemon cannot reach the cache '%s'; "
                "using one for this run\n", cache);
        free(cache);
        return own;
}

/* Whether CAP_IPC_LOCK is in this process's effective set (locking past RLIMIT_MEMLOCK). */
static bool has_ipc_lock(void)
{
        struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
        struct __user_cap_data_struct cap[_LINUX_CAPABILITY_U32S_3];

        memset(cap, 0, sizeof(cap));
        if (syscall(SYS_capget, &h, cap) < 0)
                return false;
        return cap[CAP_TO_INDEX(CAP_IPC_LOCK)].effective & CAP_TO_MASK(CAP_IPC_LOCK);
}

int private_daemon_start(struct private_daemon *d, const char *const *allow, size_t n_allow,
                         const char *output)
{
        char *fmud = find_daemon(), *worker = paths_worker(), *cache = cache_dir();
        char pub[300], scratch[300], state[300], lock[24];
        const char *argv[MAX_ARGS];
        struct rlimit rl;
        int pipefd[2] = { -1, -1 }, log = -1, code = FMUCTL_EXIT_SYSTEM, r;
        size_t n = 0;

        *d = (struct private_daemon){ .pid = -1 };
        if (!fmud || !worker || !cache) {
                fprintf(stderr, "fmuctl run: no daemon answers and %s\n",
                        !fmud ? "fmud is not found to start one (set FMUD_DAEMON, or use --local)" :
                        !worker ? "fmud-worker is not found (set FMUD_WORKER)" : "out of memory");
                goto out;
        }
        d->dir = make_dir();
        if (!d->dir) {
                fprintf(stderr, "fmuctl run: cannot create a directory for a daemon: %s\n",
                        strerror(errno));
                goto out;
        }
        cache = usable_cache(d, cache);
        snprintf(d->endpoint, sizeof(d->endpoint), "ipc://%s/control.sock", d->dir);
        snprintf(pub, sizeof(pub), "ipc://%s/events.sock", d->dir);
        snprintf(scratch, sizeof(scratch), "%s/scratch", d->dir);
        /* Results of a load that names no file (fmuctl run --out -) stay in the directory too. */
        snprintf(state, sizeof(state), "%s/state", d->dir);
        snprintf(d->log, sizeof(d->log), "%s/fmud.log", d->dir);
        /* 0755: an unprivileged worker of a root daemon must reach the unpacked FMUs. */
        r = mkdir_p(cache, 0755);
        if (r == 0)
                r = mkdir(scratch, 0700) < 0 ? -errno : 0;
        if (r == 0)
                r = mkdir(state, 0700) < 0 ? -errno : 0;
        if (r < 0) {
                fprintf(stderr, "fmuctl run: cannot create a directory below '%s' or '%s': %s\n",
                        d->dir, cache, strerror(-r));
                goto out;
        }
        argv[n++] = fmud;
        /* Never the system's file: its socket_group or paths are not this user's to take. */
        argv[n++] = "--no-config";
        argv[n++] = "--endpoint";
        argv[n++] = d->endpoint;
        argv[n++] = "--pub-endpoint";
        argv[n++] = pub;
        /* Room for the pair and the 19 entries after the loop, NULL included. */
        for (size_t i = 0; i < n_allow && n + 2 + 19 <= MAX_ARGS; i++) {
                argv[n++] = "--allow";
                argv[n++] = allow[i];
        }
        if (output) {
                argv[n++] = "--output-dir";
                argv[n++] = output;
        }
        argv[n++] = "--cache-dir";
        argv[n++] = cache;
        argv[n++] = "--scratch-dir";
        argv[n++] = scratch;
        argv[n++] = "--state-dir";
        argv[n++] = state;
        argv[n++] = "--worker";
        argv[n++] = worker;
        /* Its workers get this user's environment, as an importer in this process would. */
        argv[n++] = "--pass-env";
        argv[n++] = "*";
        /*
         * What this user may lock is the budget of all the daemon's locking
         * workers together (rtMlock): what they could lock as this user
         * anyway (with CAP_IPC_LOCK, the limit binds nothing).
         */
        if (getrlimit(RLIMIT_MEMLOCK, &rl) < 0)
                rl.rlim_cur = 0;
        if (has_ipc_lock() || rl.rlim_cur == RLIM_INFINITY)
                snprintf(lock, sizeof(lock), "infinity");
        else
                snprintf(lock, sizeof(lock), "%llu", (unsigned long long)rl.rlim_cur);
        argv[n++] = "--worker-mlock-max";
        argv[n++] = lock;
        argv[n++] = "--ready-fd";
        argv[n++] = "3";
        argv[n] = NULL;
        log = open(d->log, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (pipe2(pipefd, O_CLOEXEC) < 0) {
                fprintf(stderr, "fmuctl run: pipe: %s\n", strerror(errno));
                goto out;
        }
        fflush(NULL);
        d->pid = fork();
        if (d->pid < 0) {
                fprintf(stderr, "fmuctl run: fork: %s\n", strerror(errno));
                goto out;
        }
        if (d->pid == 0) {
                close(pipefd[0]);
                child(argv, pipefd[1], log);
        }
        close(pipefd[1]);
        pipefd[1] = -1;
        r = wait_ready(pipefd[0]);
        if (r == -EINTR) {
                code = FMUCTL_EXIT_INTERRUPTED;
                goto out;
        }
        if (r < 0) {
                fprintf(stderr, "fmuctl run: the private daemon '%s' %s\n", fmud,
                        r == -EPIPE ? "exited before it served" :
                        r == -ETIMEDOUT ? "did not get ready in time" : "did not get ready");
                private_daemon_tail(d);
                goto out;
        }
        code = 0;
out:
        if (pipefd[0] >= 0)
                close(pipefd[0]);
        if (pipefd[1] >= 0)
                close(pipefd[1]);
        if (log >= 0)
                close(log);
        free(fmud);
        free(worker);
        free(cache);
        if (code)
                private_daemon_stop(d);
        return code;
}

/*
 * Reap child pid within ms: 0, or -ETIMEDOUT. A pidfd (Linux 5.3) wakes
 * this process as the daemon exits, where polling every 10 ms kept each
 * `fmuctl run --private` up to 10 ms longer than the daemon's shutdown;
 * without one, polls of 1 ms.
 */
static int wait_exit(pid_t pid, int ms)
{
        struct timespec ts = { 0, 1000 * 1000 };
        int fd = (int)syscall(SYS_pidfd_open, pid, 0);

        if (fd >= 0) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                struct timespec start;
                int r, left = ms;

                clock_gettime(CLOCK_MONOTONIC, &start);
                while ((r = poll(&p, 1, left)) < 0 && errno == EINTR) {
                        double rest = ms - cli_since(&start) * 1e3;

                        left = rest > 0 ? (int)rest : 0;
                }
                close(fd);
                if (r == 0)
                        return -ETIMEDOUT;
                /* Readable: it has exited (or poll failed: reap or time out below, in what is left). */
                ms = left;
        }
        for (int i = 0; i <= ms; i++) {
                pid_t r = waitpid(pid, NULL, WNOHANG);

                if (r == pid || (r < 0 && errno != EINTR))
                        return 0;
                nanosleep(&ts, NULL);
        }
        return -ETIMEDOUT;
}

static int make_writable(const char *path, const struct stat *st, int type, struct FTW *f)
{
        (void)f;
        if (type == FTW_D || type == FTW_DNR)
                (void)chmod(path, (st->st_mode & 07777) | S_IRWXU);
        return 0;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
        (void)st;
        (void)type;
        (void)f;
        (void)remove(path);
        return 0;
}

/* The directory fmuctl made, with what the daemon left in it (a per-run cache is read-only). */
static void remove_tree(const char *dir)
{
        (void)nftw(dir, make_writable, 16, FTW_PHYS);
        (void)nftw(dir, remove_one, 16, FTW_PHYS | FTW_DEPTH);
        if (access(dir, F_OK) == 0)
                fprintf(stderr, "fmuctl run: cannot remove '%s', ignoring\n", dir);
}

void private_daemon_stop(struct private_daemon *d)
{
        if (d->pid > 0) {
                (void)kill(d->pid, SIGTERM);
                if (wait_exit(d->pid, 10000) < 0) {
                        (void)kill(d->pid, SIGKILL);
                        (void)waitpid(d->pid, NULL, 0);
                }
                d->pid = -1;
        }
        if (d->dir)
                remove_tree(d->dir);
        free(d->dir);
        d->dir = NULL;
}

void private_daemon_tail(const struct private_daemon *d)
{
        char buf[4096];
        FILE *f;
        long size;
        size_t n;

        f = d->log[0] ? fopen(d->log, "re") : NULL;
        if (!f)
                return;
        if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > (long)sizeof(buf) - 1)
                (void)fseek(f, size - (long)sizeof(buf) + 1, SEEK_SET);
        else
                rewind(f);
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        if (!n)
                return;
        fprintf(stderr, "the private daemon said:\n");
        for (char *line = buf, *nl; *line; line = nl + 1) {
                nl = strchr(line, '\n');
                if (nl)
                        *nl = '\0';
                fprintf(stderr, "  %s\n", line);
                if (!nl)
                        break;
        }
}
