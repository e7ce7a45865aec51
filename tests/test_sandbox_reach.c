/*
 * What a sandboxed worker can reach besides files and networks: the
 * host's AF_UNIX sockets, the machine's pids, the other workers' (same
 * user's) scheduling, and its own SIGSYS handler; in basic and strict
 * mode, against the Escape test FMU.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "engine/instance/instance.h"
#include "support/tmpdir.h"
#include "sandbox_fixture.h"

/* A listening, non-blocking AF_UNIX socket at dir/name that anybody may connect to. */
static int open_listener(const char *dir, char *path, size_t size)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

        cr_assert(fd >= 0);
        cr_assert(snprintf(path, size, "%s/host.sock", dir) < (int)size);
        cr_assert(strlen(path) < sizeof(sa.sun_path));
        memcpy(sa.sun_path, path, strlen(path) + 1);
        cr_assert(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "bind: %s", strerror(errno));
        cr_assert(listen(fd, 4) == 0);
        cr_assert(chmod(path, 0777) == 0);
        return fd;
}

static void host_socket_refused(enum sandbox_mode mode)
{
        char *dir = tmpdir_new("fmud-sandbox-unix");
        const struct inst_layer *l;
        char path[512];
        struct esc e;
        int lfd, r;

        cr_assert(dir != NULL);
        /* World-writable, like /tmp or /run/dbus: only the sandbox stands in the way. */
        cr_assert(chmod(dir, 0777) == 0);
        lfd = open_listener(dir, path, sizeof(path));
        sbx_esc_start(&e, mode, false);
        l = inst_sandbox(e.inst);
        r = sbx_esc_try(&e, 12, 0, path);
        cr_assert(eq(int, r, EPERM), "connect: errno %d (%s)", r, strerror(r));
        cr_assert(sbx_logged(&e.log, "refused system call socket (AF_UNIX)") != NULL,
                  "no log of the refused socket (%d messages)", e.log.n);
        cr_assert(accept(lfd, NULL, NULL) < 0 && errno == EAGAIN, "the worker got through");
        cr_assert(strstr(l[SANDBOX_SECCOMP].detail, "no host socket reachable") != NULL, "%s",
                  l[SANDBOX_SECCOMP].detail);
        /* A socketpair is still fine: the FMU goes on working. */
        cr_assert(eq(int, sbx_esc_try(&e, 0, 0, NULL), 0));
        cr_assert(eq(int, inst_free(e.inst), 0));
        close(lfd);
        tmpdir_free(dir);
}

Test(sandbox_reach, strict_refuses_host_unix_sockets)
{
        host_socket_refused(SANDBOX_STRICT);
}

Test(sandbox_reach, basic_refuses_host_unix_sockets)
{
        host_socket_refused(SANDBOX_BASIC);
}

static unsigned long long proc_ulong(const char *path)
{
        char *s = sbx_slurp(path, NULL);

        return s ? strtoull(s, NULL, 10) : 0;
}

/*
 * The task limit starts from what the worker's user runs: five processes
 * of a user of the test's own, each one task, and a worker as that user
 * (which counts before it becomes it) gets 5 + SANDBOX_THREADS.
 */
Test(sandbox_reach, the_task_limit_counts_what_the_user_already_runs)
{
        const uid_t uid = 64124;
        pid_t kids[5];
        const struct inst_layer *l;
        struct inst_opts o;
        struct inst *inst;

        if (geteuid() != 0)
                cr_skip_test("needs root to run processes as another user");
        for (size_t i = 0; i < 5; i++) {
                kids[i] = fork();
                cr_assert(kids[i] >= 0);
                if (kids[i] == 0) {
                        pid_t parent = getppid();

                        /* Gone with the test, failed or not (a change of uid clears the signal). */
                        if (setresgid(uid, uid, uid) == 0 && setresuid(uid, uid, uid) == 0 &&
                            prctl(PR_SET_PDEATHSIG, SIGKILL) == 0 && getppid() == parent)
                                pause();
                        _exit(1);
                }
        }
        /* Each is counted once it runs as the user. */
        for (size_t i = 0; i < 5; i++) {
                char ids[64];

                for (int k = 0; k < 2000; k++) {
                        sbx_status_field(kids[i], "Uid", ids, sizeof(ids));
                        if (strtoul(ids, NULL, 10) == uid)
                                break;
                        usleep(1000);
                }
                cr_assert(eq(ulong, strtoul(ids, NULL, 10), uid));
        }
        sbx_opts_for(&o, "Escape", SANDBOX_BASIC);
        o.sandbox.uid = o.sandbox.gid = uid;
        inst = sbx_start(&o);
        l = inst_sandbox(inst);
        cr_assert(eq(ulong, (unsigned long)sbx_limit_of(inst_pid(inst), "Max processes"),
                     5 + SANDBOX_THREADS), "%s", l[SANDBOX_LIMITS].detail);
        cr_assert(eq(int, inst_free(inst), 0));
        for (size_t i = 0; i < 5; i++) {
                kill(kids[i], SIGKILL);
                waitpid(kids[i], NULL, 0);
        }
}

Test(sandbox_reach, threads_are_limited)
{
        const int want = 4 * SANDBOX_THREADS;
        unsigned long long pid_max = proc_ulong("/proc/sys/kernel/pid_max");
        unsigned long long threads_max = proc_ulong("/proc/sys/kernel/threads-max");
        const struct inst_layer *l;
        struct inst_opts o;
        struct esc e;
        int n, r;

        memset(&e, 0, sizeof(e));
        sbx_opts_for(&o, "Escape", SANDBOX_BASIC);
        /*
         * The limit counts every task of the worker's user: a user of its
         * own (when root may choose) keeps the flood away from the other
         * tests' workers.
         */
        if (geteuid() == 0)
                o.sandbox.uid = o.sandbox.gid = 64123;
        o.log = sbx_on_log;
        o.log_ctx = &e.log;
        e.inst = sbx_start(&o);
        l = inst_sandbox(e.inst);
        cr_assert(strstr(l[SANDBOX_LIMITS].detail, "512 more threads") != NULL, "%s",
                  l[SANDBOX_LIMITS].detail);
        cr_assert(sbx_limit_of(inst_pid(e.inst), "Max processes") != ~0ull);
        n = sbx_esc_try(&e, 13, want, NULL);
        cr_log_info("the FMU started %d of %d threads (pid_max %llu, threads-max %llu)", n, want,
                    pid_max, threads_max);
        cr_assert(n > 0, "not one thread");
        cr_assert(n <= (int)SANDBOX_THREADS, "%d threads", n);
        cr_assert(n * 4ull < pid_max && n * 4ull < threads_max);
        /* The instance, and this process, go on. */
        cr_assert(eq(int, sbx_esc_try(&e, 0, 0, NULL), 0));
        /* The exited threads leave the user's count when they are released: a few tries. */
        for (int i = 0; i < 1000 && (r = sbx_esc_try(&e, 11, 0, NULL)) == EAGAIN; i++)
                ;
        cr_assert(eq(int, r, EPERM), "a thread after the flood");
        cr_assert(eq(int, inst_free(e.inst), 0));
}

/* The nice value of pid (field 19 of /proc/PID/stat). */
static int nice_of(pid_t pid)
{
        char path[64], *s, *p;
        int nice = 0;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        s = sbx_slurp(path, NULL);
        cr_assert(s != NULL);
        p = strrchr(s, ')');
        cr_assert(p != NULL);
        /* ") S ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime priority nice" */
        cr_assert(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
                         "%*d %d", &nice) == 1);
        return nice;
}

static void others_untouched(enum sandbox_mode mode)
{
        cpu_set_t before, after;
        struct esc a, b;
        pid_t victim;
        int nice, r;

        sbx_esc_start(&a, mode, false);
        sbx_esc_start(&b, mode, false);
        victim = inst_pid(b.inst);
        nice = nice_of(victim);
        cr_assert(sched_getaffinity(victim, sizeof(before), &before) == 0);

        r = sbx_esc_try(&a, 14, (int)victim, NULL);
        cr_assert(eq(int, r, EPERM), "renice: errno %d (%s)", r, strerror(r));
        cr_assert(sbx_logged(&a.log, "refused system call setpriority") != NULL);
        r = sbx_esc_try(&a, 15, (int)victim, NULL);
        cr_assert(eq(int, r, EPERM), "pin: errno %d (%s)", r, strerror(r));
        cr_assert(sbx_logged(&a.log, "refused system call sched_setaffinity") != NULL);
        cr_assert(eq(int, nice_of(victim), nice));
        cr_assert(sched_getaffinity(victim, sizeof(after), &after) == 0);
        cr_assert(0 != CPU_EQUAL(&before, &after), "the other worker was pinned");

        /* Its own: allowed. */
        cr_assert(eq(int, sbx_esc_try(&a, 14, 0, NULL), 0));
        cr_assert(eq(int, nice_of(inst_pid(a.inst)), 19));
        cr_assert(eq(int, sbx_esc_try(&a, 15, 0, NULL), 0));
        cr_assert(eq(int, sbx_esc_try(&a, 15, (int)inst_pid(a.inst), NULL), 0));
        cr_assert(eq(int, nice_of(victim), nice));
        cr_assert(eq(int, inst_free(a.inst), 0));
        cr_assert(eq(int, inst_free(b.inst), 0));
}

Test(sandbox_reach, strict_workers_cannot_touch_each_other)
{
        others_untouched(SANDBOX_STRICT);
}

Test(sandbox_reach, basic_workers_cannot_touch_each_other)
{
        others_untouched(SANDBOX_BASIC);
}

static void sigsys_high_bits(enum sandbox_mode mode)
{
        struct esc e;
        int r;

        sbx_esc_start(&e, mode, false);
        r = sbx_esc_try(&e, 10, 1, NULL);
        cr_assert(eq(int, r, EPERM), "rt_sigaction(SIGSYS | 1 << 32): errno %d (%s)", r,
                  strerror(r));
        cr_assert(sbx_logged(&e.log, "refused system call rt_sigaction (signal 31)") != NULL,
                  "not logged (%d messages)", e.log.n);
        /* The handler is still ours: a refusal after it is still logged. */
        e.log.n = 0;
        cr_assert(eq(int, sbx_esc_try(&e, 1, 0, NULL), EPERM));
        cr_assert(sbx_logged(&e.log, "refused system call socket (AF_INET)") != NULL);
        cr_assert(eq(int, inst_free(e.inst), 0));
}

Test(sandbox_reach, strict_sigsys_handler_stays_with_high_bits)
{
        sigsys_high_bits(SANDBOX_STRICT);
}

Test(sandbox_reach, basic_sigsys_handler_stays_with_high_bits)
{
        sigsys_high_bits(SANDBOX_BASIC);
}
