/*
 * Escape: an FMI 3.0 Co-Simulation FMU that tries to leave its sandbox,
 * for the sandbox tests. Each doStep does what input attempt says and
 * puts the errno it saw in output result (0: it worked):
 *
 *   0  nothing
 *   1  open an AF_INET socket
 *   2  connect to 127.0.0.1, port arg
 *   3  create and write a file in directory target
 *   4  read the file target
 *   5  fork (the child exits at once)
 *   6  execve /bin/sh -c 'exit 0' (arg 1: in a forked child; result is
 *      then the child's exit status)
 *   7  kill(arg, SIGTERM) (arg 0: the parent, the daemon)
 *   8  create and write a file in $TMPDIR (or /tmp)
 *   9  read its own resources/data.txt
 *  10  set a SIGSYS handler (arg 1: with the raw system call and the
 *      signal number SIGSYS | 1 << 32; the old handler is put back
 *      when it worked)
 *  11  start a thread that opens an AF_INET socket, join it (result:
 *      pthread_create's error, else the thread's errno); arg 1: the
 *      thread blocks every signal first (pthread_sigmask), arg 2: with
 *      sigprocmask
 *  12  connect to the AF_UNIX stream socket at path target
 *  13  start up to arg threads (small stacks) that wait, then release
 *      and join them; result: how many could be started
 *  14  setpriority(PRIO_PROCESS, arg, 19) (arg 0: itself)
 *  15  sched_setaffinity(arg, {cpu 0}) (arg 0: itself)
 *  16  tmpfile() (glibc's: always in /tmp, whatever TMPDIR says), write,
 *      read back (what many libraries in FMUs do)
 *  17  posix_spawn /bin/sh -c 'exit 0' and wait for it, as system() and
 *      popen() do (glibc blocks every signal before its clone); arg 1:
 *      system() itself, result its exit status
 *
 * The constructor, when the FMU's directory holds resources/ctor-socket,
 * opens an AF_INET socket (a refused call before the FMU is loaded).
 *
 * Value references: time 0, attempt 1, arg 2, target 3, result 4,
 * steps 5.
 */
#define _GNU_SOURCE     /* dladdr */

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model.h"

#define RESOURCE        "escape resource\n"

struct model_data {
        int32_t attempt;
        int32_t arg;
        struct var_string target;
        int32_t result;
        int32_t steps;
};

static const struct var vars[] = {
        VAR_TIME(0),
        VAR_SCALAR(1, "attempt", VAR_INT32, VAR_INPUT, VAR_DISCRETE, VAR_EXACT, attempt),
        VAR_SCALAR(2, "arg", VAR_INT32, VAR_INPUT, VAR_DISCRETE, VAR_EXACT, arg),
        VAR_SCALAR(3, "target", VAR_STRING, VAR_INPUT, VAR_DISCRETE, VAR_EXACT, target),
        VAR_SCALAR(4, "result", VAR_INT32, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, result),
        VAR_SCALAR(5, "steps", VAR_INT32, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, steps),
};

static void start(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        d->attempt = 0;
        d->arg = 0;
        var_string_init(&d->target, "");
        d->result = -1;
        d->steps = 0;
}

static int calculate(struct inst *inst)
{
        (void) inst;
        return 0;
}

static int write_in(const char *dir)
{
        char path[PATH_MAX];
        int fd, e = 0;

        snprintf(path, sizeof(path), "%s/escape-%d.txt", dir, (int)getpid());
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return errno;
        if (write(fd, "escaped\n", 8) != 8)
                e = errno ? errno : EIO;
        close(fd);
        return e;
}

static int temp_file(void)
{
        FILE *f = tmpfile();
        char back[16] = { 0 };
        int e = 0;

        if (!f)
                return errno;
        if (fputs("escaped\n", f) == EOF || fflush(f) == EOF)
                e = errno ? errno : EIO;
        else {
                rewind(f);
                if (!fgets(back, sizeof(back), f) || strcmp(back, "escaped\n"))
                        e = EIO;
        }
        fclose(f);
        return e;
}

static int read_file(const char *path, char *buf, size_t size)
{
        ssize_t n;
        int fd;

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return errno;
        n = read(fd, buf, size - 1);
        close(fd);
        if (n < 0)
                return errno;
        buf[n] = '\0';
        return 0;
}

/* A stream socket of family sa->sa_family connected to sa: the errno, 0 when it connected. */
static int try_connect(const struct sockaddr *sa, socklen_t len)
{
        int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0), e = 0;

        if (fd < 0)
                return errno;
        if (connect(fd, sa, len) < 0)
                e = errno;
        close(fd);
        return e;
}

static int tcp_connect(int port)
{
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };

        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        return try_connect((struct sockaddr *)&sa, sizeof(sa));
}

static int unix_connect(const char *path)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };

        if (!path || strlen(path) >= sizeof(sa.sun_path))
                return ENAMETOOLONG;
        memcpy(sa.sun_path, path, strlen(path) + 1);
        return try_connect((struct sockaddr *)&sa, sizeof(sa));
}

static int run_shell(bool in_child)
{
        char *const argv[] = { (char *)"sh", (char *)"-c", (char *)"exit 0", NULL };
        char *const envp[] = { NULL };
        pid_t pid;
        int st;

        if (!in_child) {
                execve("/bin/sh", argv, envp);
                return errno;
        }
        pid = fork();
        if (pid < 0)
                return errno;
        if (pid == 0) {
                execve("/bin/sh", argv, envp);
                _exit(errno);
        }
        if (waitpid(pid, &st, 0) < 0)
                return errno;
        return WIFEXITED(st) ? WEXITSTATUS(st) : EINTR;
}

static int spawn_shell(bool via_system)
{
        char *const argv[] = { (char *)"sh", (char *)"-c", (char *)"exit 0", NULL };
        char *const envp[] = { NULL };
        pid_t pid;
        int r, st;

        if (via_system) {
                st = system("exit 0");
                return st < 0 ? errno : WIFEXITED(st) ? WEXITSTATUS(st) : EINTR;
        }
        r = posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, envp);
        if (r != 0)
                return r;
        if (waitpid(pid, &st, 0) < 0)
                return errno;
        return WIFEXITED(st) ? WEXITSTATUS(st) : EINTR;
}

static int own_resource(void)
{
        char path[PATH_MAX], buf[64];
        Dl_info info;
        char *slash;
        int e;

        /* DIR/binaries/<platform>/Escape.so -> DIR/resources/data.txt */
        if (!dladdr(&model, &info) || !info.dli_fname)
                return ENOENT;
        snprintf(path, sizeof(path), "%s", info.dli_fname);
        for (int i = 0; i < 3; i++) {
                slash = strrchr(path, '/');
                if (!slash)
                        return ENOENT;
                *slash = '\0';
        }
        strncat(path, "/resources/data.txt", sizeof(path) - strlen(path) - 1);
        e = read_file(path, buf, sizeof(buf));
        if (e == 0 && strcmp(buf, RESOURCE) != 0)
                e = EILSEQ;
        return e;
}

struct thread_try {
        int block;      /* 0 nothing, 1 pthread_sigmask, 2 sigprocmask */
        int err;
};

static void *socket_thread(void *arg)
{
        struct thread_try *t = arg;
        sigset_t all;
        int fd;

        sigfillset(&all);
        if (t->block == 1)
                (void) pthread_sigmask(SIG_BLOCK, &all, NULL);
        else if (t->block == 2)
                (void) sigprocmask(SIG_BLOCK, &all, NULL);
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        t->err = fd < 0 ? errno : 0;
        if (fd >= 0)
                close(fd);
        return NULL;
}

static int in_thread(int block)
{
        struct thread_try a = { .block = block, .err = -1 };
        pthread_t t;
        int r;

        r = pthread_create(&t, NULL, socket_thread, &a);
        if (r != 0)
                return r;
        r = pthread_join(t, NULL);
        return r ? r : a.err;
}

/* attempt 13: the threads wait on gate until it is opened. */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static bool gate_open;

static void *waiter(void *arg)
{
        (void) arg;
        pthread_mutex_lock(&gate_lock);
        while (!gate_open)
                pthread_cond_wait(&gate_cond, &gate_lock);
        pthread_mutex_unlock(&gate_lock);
        return NULL;
}

static int many_threads(int want)
{
        pthread_attr_t attr;
        pthread_t *t;
        int n = 0;

        if (want <= 0 || !(t = calloc((size_t)want, sizeof(*t))))
                return 0;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 64 * 1024);
        gate_open = false;
        while (n < want && pthread_create(&t[n], &attr, waiter, NULL) == 0)
                n++;
        pthread_mutex_lock(&gate_lock);
        gate_open = true;
        pthread_cond_broadcast(&gate_cond);
        pthread_mutex_unlock(&gate_lock);
        for (int i = 0; i < n; i++)
                pthread_join(t[i], NULL);
        pthread_attr_destroy(&attr);
        free(t);
        return n;
}

/* The kernel's struct sigaction on x86_64 and aarch64. */
struct ksigaction {
        void *handler;
        unsigned long flags;
        void *restorer;
        uint64_t mask;
};

/* attempt 10, arg 1: rt_sigaction with the signal's upper 32 bits set. */
static int sigsys_raw(void)
{
        struct ksigaction sa = { .handler = SIG_IGN }, old;
        long nr = (long)SIGSYS | (1l << 32);

        if (syscall(SYS_rt_sigaction, nr, &sa, &old, 8) < 0)
                return errno;
        (void) syscall(SYS_rt_sigaction, nr, &old, NULL, 8);
        return 0;
}

static int pin_cpu0(pid_t pid)
{
        cpu_set_t set;

        CPU_ZERO(&set);
        CPU_SET(0, &set);
        return sched_setaffinity(pid, sizeof(set), &set) < 0 ? errno : 0;
}

/* The FMU's directory holds resources/ctor-socket: try a refused call while loading. */
__attribute__((constructor)) static void ctor_socket(void)
{
        char path[PATH_MAX];
        Dl_info info;
        char *slash;
        int fd;

        if (!dladdr((void *)ctor_socket, &info) || !info.dli_fname)
                return;
        snprintf(path, sizeof(path), "%s", info.dli_fname);
        for (int i = 0; i < 3; i++) {
                slash = strrchr(path, '/');
                if (!slash)
                        return;
                *slash = '\0';
        }
        strncat(path, "/resources/ctor-socket", sizeof(path) - strlen(path) - 1);
        if (access(path, F_OK) < 0)
                return;
        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0)
                close(fd);
}

static void on_sigsys(int sig)
{
        (void) sig;
}

static int attempt(struct model_data *d)
{
        const char *tmp;
        char buf[256];
        pid_t pid;

        switch (d->attempt) {
        case 0:
                return 0;
        case 1: {
                int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

                if (fd < 0)
                        return errno;
                close(fd);
                return 0;
        }
        case 2:
                return tcp_connect(d->arg);
        case 3:
                return write_in(d->target.s);
        case 4:
                return read_file(d->target.s, buf, sizeof(buf));
        case 5:
                pid = fork();
                if (pid < 0)
                        return errno;
                if (pid == 0)
                        _exit(0);
                return waitpid(pid, NULL, 0) < 0 ? errno : 0;
        case 6:
                return run_shell(d->arg == 1);
        case 7:
                return kill(d->arg ? (pid_t)d->arg : getppid(), SIGTERM) < 0 ? errno : 0;
        case 8:
                tmp = getenv("TMPDIR");
                return write_in(tmp && *tmp ? tmp : "/tmp");
        case 9:
                return own_resource();
        case 10: {
                struct sigaction sa = { .sa_handler = on_sigsys };

                if (d->arg == 1)
                        return sigsys_raw();
                return sigaction(SIGSYS, &sa, NULL) < 0 ? errno : 0;
        }
        case 11:
                return in_thread(d->arg);
        case 12:
                return unix_connect(d->target.s);
        case 13:
                return many_threads(d->arg);
        case 14:
                return setpriority(PRIO_PROCESS, (id_t)d->arg, 19) < 0 ? errno : 0;
        case 15:
                return pin_cpu0((pid_t)d->arg);
        case 16:
                return temp_file();
        case 17:
                return spawn_shell(d->arg == 1);
        default:
                return EINVAL;
        }
}

static int do_step(struct inst *inst, struct step *step)
{
        struct model_data *d = inst_data(inst);

        (void) step;
        errno = 0;
        d->result = attempt(d);
        d->steps++;
        return 0;
}

const struct model model = {
        .token = "{5d0c1e7a-93b4-4f62-8a1d-2c7e6b90f3a4}",
        .data_size = sizeof(struct model_data),
        .vars = vars,
        .n_vars = sizeof(vars) / sizeof(vars[0]),
        .start = start,
        .calculate = calculate,
        .do_step = do_step,
};
