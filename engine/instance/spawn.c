/*
 * spawn: the worker process: fork+exec, liveness, reaping.
 *
 * DESIGN: between fork and exec the child runs only async-signal-safe
 * calls (the daemon may have threads): reset the signal mask, ask for
 * SIGKILL when the daemon dies, a process group of its own (a group kill
 * reaches the worker and whatever it might have started, nothing of the
 * daemon's), stdin from /dev/null, the channel onto INST_FD, every
 * descriptor above it marked close-on-exec, execve with the given (by
 * default empty) environment. Everything else (argv, environment, the
 * user to become) is prepared before fork. Without a sandbox standard
 * output and error are inherited (a sandboxed worker's go to /dev/null
 * too, unless the daemon runs with FMUD_SANDBOX_DEBUG set); either way
 * the worker puts its own files on fds 1 and 2 for what the FMU prints
 * (worker/output.c), so they keep only what is written before that and
 * a sanitizer's report. The open-files limit the starter raised
 * (fd_limit.c) goes back to what it was: an FMU may use select(). An exec failure travels back through
 * a close-on-exec pipe, so the caller gets the errno instead of a worker
 * that never says HELLO.
 *
 * Reaping uses waitpid() on the worker's pid; the daemon must not reap
 * its workers anywhere else.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/instance/inst_int.h"

#define CHILD_FD_SCAN   65536   /* close-on-exec by hand when close_range is missing */

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif

/* Free what sandbox_env() made: the array and its TMPDIR and HOME entries. */
static void free_env(char **env, const char *scratch)
{
        if (!env)
                return;
        for (size_t i = 0; env[i] && scratch; i++)
                if (!strncmp(env[i], "TMPDIR=", 7) || !strncmp(env[i], "HOME=", 5))
                        free(env[i]);
        free(env);
}

static void child(const char *path, char *const argv[], char *const envp[], int chan_fd,
                  int err_fd, pid_t parent, bool quiet)
{
        sigset_t none;
        int e, fd;

        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        /* The daemon may have died before the line above: then nobody waits for us. */
        if (getppid() != parent)
                _exit(127);
        (void) setpgid(0, 0);
        fd = open("/dev/null", O_RDWR);
        if (fd >= 0) {
                if (fd != 0)
                        (void) dup2(fd, 0);
                if (quiet) {
                        (void) dup2(fd, 1);
                        (void) dup2(fd, 2);
                }
                if (fd > 2)
                        (void) close(fd);
        }
        if (chan_fd == INST_FD) {
                (void) fcntl(INST_FD, F_SETFD, 0);
        } else if (dup2(chan_fd, INST_FD) < 0) {
                e = errno;
                goto out_report;
        }
        if (syscall(SYS_close_range, INST_FD + 1, ~0u, CLOSE_RANGE_CLOEXEC) < 0)
                for (fd = INST_FD + 1; fd < CHILD_FD_SCAN; fd++)
                        (void) fcntl(fd, F_SETFD, FD_CLOEXEC);
        inst_fd_limit_child();
        execve(path, argv, envp);
        e = errno;
out_report:
        (void) !write(err_fd, &e, sizeof(e));
        _exit(127);
}

/*
 * The sandboxed worker's environment: the caller's but TMPDIR and HOME,
 * then both the scratch directory, the one place it may write (a home
 * elsewhere is out of its sight or read-only).
 */
static char **sandbox_env(char *const envp[], const char *scratch)
{
        size_t n = 0, k = 0;
        char **env;

        while (envp && envp[n])
                n++;
        env = calloc(n + 4, sizeof(*env));
        if (!env)
                return NULL;
        for (size_t i = 0; i < n; i++)
                if (strncmp(envp[i], "TMPDIR=", 7) != 0 && strncmp(envp[i], "HOME=", 5) != 0)
                        env[k++] = envp[i];
        if (scratch && asprintf(&env[k++], "TMPDIR=%s", scratch) < 0) {
                free(env);
                return NULL;
        }
        if (scratch && asprintf(&env[k++], "HOME=%s", scratch) < 0) {
                free(env[k - 2]);
                free(env);
                return NULL;
        }
#ifdef SANITIZED
        /* LeakSanitizer's exit check traces the process: seccomp refuses that. */
        env[k++] = (char *)"LSAN_OPTIONS=detect_leaks=0";
#endif
        env[k] = NULL;
        return env;
}

int spawn_worker(const struct spawn_req *rq, pid_t *ret_pid)
{
        static char *const empty_env[] = { NULL };
        const struct sandbox_opts *sb = rq->sandbox;
        bool sandboxed = sb && sb->mode != SANDBOX_OFF;
        char fd_arg[16], mem_arg[24], cpu_arg[24], uid_arg[16], gid_arg[16], lock_arg[24];
        char *argv[30 + 2 * SANDBOX_LAYER_COUNT];
        char **env = NULL;
        size_t a = 0;
        pid_t parent = getpid(), pid;
        int pfd[2], wfd, e = 0, r;
        bool quiet;
        ssize_t n;

        snprintf(fd_arg, sizeof(fd_arg), "%d", INST_FD);
        argv[a++] = (char *)rq->path;
        argv[a++] = (char *)"--channel-fd";
        argv[a++] = fd_arg;
        argv[a++] = (char *)"--fmu-dir";
        argv[a++] = (char *)rq->fmu_dir;
        if (sandboxed) {
                snprintf(mem_arg, sizeof(mem_arg), "%llu", (unsigned long long)sb->mem_limit);
                snprintf(cpu_arg, sizeof(cpu_arg), "%llu", (unsigned long long)sb->cpu_limit_s);
                snprintf(uid_arg, sizeof(uid_arg), "%u", (unsigned)rq->uid);
                snprintf(gid_arg, sizeof(gid_arg), "%u", (unsigned)rq->gid);
                argv[a++] = (char *)"--sandbox";
                argv[a++] = (char *)sandbox_mode_name(sb->mode);
                if (rq->scratch) {
                        argv[a++] = (char *)"--scratch";
                        argv[a++] = (char *)rq->scratch;
                }
                if (sb->hide) {
                        argv[a++] = (char *)"--hide";
                        argv[a++] = (char *)sb->hide;
                }
                argv[a++] = (char *)"--mem-limit";
                argv[a++] = mem_arg;
                argv[a++] = (char *)"--cpu-limit";
                argv[a++] = cpu_arg;
                argv[a++] = (char *)"--on-violation";
                argv[a++] = (char *)(sb->kill_on_violation ? "kill" : "errno");
                argv[a++] = (char *)"--uid";
                argv[a++] = uid_arg;
                argv[a++] = (char *)"--gid";
                argv[a++] = gid_arg;
                if (sb->require_all)
                        argv[a++] = (char *)"--require-all";
                for (unsigned l = 0; l < SANDBOX_LAYER_COUNT; l++)
                        if (sb->skip_layers & (1u << l)) {
                                argv[a++] = (char *)"--skip-layer";
                                argv[a++] = (char *)sandbox_layer_name((enum sandbox_layer)l);
                        }
                env = sandbox_env(rq->envp, rq->scratch);
                if (!env)
                        return -ENOMEM;
        }
        if (rq->mlock)
                argv[a++] = (char *)"--mlock";
        if (rq->mlock && rq->mlock_limit) {
                snprintf(lock_arg, sizeof(lock_arg), "%llu", (unsigned long long)rq->mlock_limit);
                argv[a++] = (char *)"--mlock-limit";
                argv[a++] = lock_arg;
        }
        if (rq->model_exchange || rq->scheduled_execution) {
                argv[a++] = (char *)"--interface";
                argv[a++] = (char *)(rq->model_exchange ? "me" : "se");
        }
        if (rq->integrator) {
                argv[a++] = (char *)"--integrator";
                argv[a++] = (char *)rq->integrator;
        }
        argv[a] = NULL;
        quiet = sandboxed && !getenv("FMUD_SANDBOX_DEBUG");
        if (pipe2(pfd, O_CLOEXEC) < 0) {
                r = -errno;
                goto out_env;
        }
        /* Keep the write end clear of the descriptors the child rearranges. */
        wfd = fcntl(pfd[1], F_DUPFD_CLOEXEC, INST_FD + 1);
        if (wfd < 0) {
                r = -errno;
                goto out_close;
        }
        pid = fork();
        if (pid < 0) {
                r = -errno;
                (void) close(wfd);
                goto out_close;
        }
        if (pid == 0)
                child(rq->path, argv, env ? env : rq->envp ? rq->envp : empty_env, rq->chan_fd, wfd,
                      parent, quiet);
        (void) close(wfd);
        (void) close(pfd[1]);
        pfd[1] = -1;
        do
                n = read(pfd[0], &e, sizeof(e));
        while (n < 0 && errno == EINTR);
        (void) close(pfd[0]);
        free_env(env, rq->scratch);
        if (n == (ssize_t)sizeof(e)) {
                /* exec failed: the child has exited already. */
                while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                        ;
                return e ? -e : -ENOEXEC;
        }
        *ret_pid = pid;
        return 0;

out_close:
        (void) close(pfd[0]);
        if (pfd[1] >= 0)
                (void) close(pfd[1]);
out_env:
        free_env(env, rq->scratch);
        return r;
}

bool spawn_poll(struct inst *inst)
{
        int st;
        pid_t r;

        if (inst->reaped)
                return true;
        do
                r = waitpid(inst->pid, &st, WNOHANG);
        while (r < 0 && errno == EINTR);
        if (r == inst->pid) {
                inst->reaped = true;
                inst->wstatus = st;
        } else if (r < 0 && errno == ECHILD) {
                /* Someone else reaped it: it is gone all the same. */
                inst->reaped = true;
                inst->wstatus = 0;
        }
        return inst->reaped;
}

static void kill_and_reap(struct inst *inst)
{
        int st;

        (void) kill(inst->pid, SIGKILL);
        while (waitpid(inst->pid, &st, 0) < 0)
                if (errno != EINTR) {
                        st = 0;
                        break;
                }
        inst->reaped = true;
        inst->wstatus = st;
}

void spawn_reap(struct inst *inst, uint64_t timeout_ns)
{
        struct timespec end, now;
        int pidfd;

        if (spawn_poll(inst))
                return;
        /* A pidfd turns "wait for exit" into poll() with a timeout. */
        pidfd = (int)syscall(SYS_pidfd_open, inst->pid, 0);
        (void) clock_gettime(CLOCK_MONOTONIC, &end);
        end.tv_sec += (time_t)(timeout_ns / 1000000000u);
        end.tv_nsec += (long)(timeout_ns % 1000000000u);
        if (end.tv_nsec >= 1000000000L) {
                end.tv_sec++;
                end.tv_nsec -= 1000000000L;
        }
        for (;;) {
                long ms;

                if (spawn_poll(inst))
                        break;
                (void) clock_gettime(CLOCK_MONOTONIC, &now);
                ms = (long)(end.tv_sec - now.tv_sec) * 1000 + (end.tv_nsec - now.tv_nsec) / 1000000;
                if (ms <= 0) {
                        kill_and_reap(inst);
                        break;
                }
                if (pidfd >= 0) {
                        struct pollfd p = { .fd = pidfd, .events = POLLIN };

                        (void) poll(&p, 1, (int)(ms > 100 ? 100 : ms));
                } else {
                        struct timespec d = { 0, 1000000 };

                        (void) nanosleep(&d, NULL);
                }
        }
        if (pidfd >= 0)
                (void) close(pidfd);
}

void spawn_describe(int wstatus, char *buf, size_t size)
{
        if (WIFEXITED(wstatus))
                snprintf(buf, size, "exited with status %d", WEXITSTATUS(wstatus));
        else if (WIFSIGNALED(wstatus))
                snprintf(buf, size, "was killed by signal %d (%s)", WTERMSIG(wstatus),
                         strsignal(WTERMSIG(wstatus)));
        else
                snprintf(buf, size, "ended with wait status %#x", (unsigned)wstatus);
}
