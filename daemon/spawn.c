/*
 * spawn: the worker process: fork+exec, liveness, reaping.
 *
 * DESIGN: between fork and exec the child runs only async-signal-safe
 * calls (the daemon may have threads): reset the signal mask, ask for
 * SIGKILL when the daemon dies, stdin from /dev/null, the channel onto
 * INST_FD, every descriptor above it marked close-on-exec, execve with
 * the given (by default empty) environment. Standard output and error
 * are inherited so that a crashing worker's report is not lost. An exec
 * failure travels back through a close-on-exec pipe, so the caller gets
 * the errno instead of a worker that never says HELLO.
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
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/inst_int.h"

#define CHILD_FD_SCAN   65536   /* close-on-exec by hand when close_range is missing */

static void child(const char *path, char *const argv[], char *const envp[], int chan_fd,
                  int err_fd, pid_t parent)
{
        sigset_t none;
        int e, fd;

        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        /* The daemon may have died before the line above: then nobody waits for us. */
        if (getppid() != parent)
                _exit(127);
        fd = open("/dev/null", O_RDONLY);
        if (fd >= 0 && fd != 0) {
                (void) dup2(fd, 0);
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
        execve(path, argv, envp);
        e = errno;
out_report:
        (void) !write(err_fd, &e, sizeof(e));
        _exit(127);
}

int spawn_worker(const char *path, const char *fmu_dir, char *const envp[], int chan_fd,
                 pid_t *ret_pid)
{
        static char *const empty_env[] = { NULL };
        char fd_arg[16];
        char *const argv[] = {
                (char *)path, (char *)"--channel-fd", fd_arg, (char *)"--fmu-dir",
                (char *)fmu_dir, NULL,
        };
        pid_t parent = getpid(), pid;
        int pfd[2], wfd, e = 0, r;
        ssize_t n;

        snprintf(fd_arg, sizeof(fd_arg), "%d", INST_FD);
        if (pipe2(pfd, O_CLOEXEC) < 0)
                return -errno;
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
                child(path, argv, envp ? envp : empty_env, chan_fd, wfd, parent);
        (void) close(wfd);
        (void) close(pfd[1]);
        pfd[1] = -1;
        do
                n = read(pfd[0], &e, sizeof(e));
        while (n < 0 && errno == EINTR);
        (void) close(pfd[0]);
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
