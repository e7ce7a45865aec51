/*
 * sandbox_limits: the worker's resource limits (sandbox.h, layer
 * "limits"): address space, CPU time, open files, file size, no core
 * dumps, threads.
 *
 * DESIGN: RLIMIT_AS bounds what an FMU can allocate: past it mmap and brk
 * fail with ENOMEM (malloc returns NULL) instead of the machine swapping.
 * RLIMIT_CPU is a backstop behind the daemon's deadlines: SIGXCPU at the
 * soft limit, SIGKILL one second later. RLIMIT_NPROC bounds threads (new
 * processes seccomp refuses anyway), so that one FMU cannot take every
 * pid of the machine. The kernel counts it per user, not per process:
 * every task of the worker's user (all the workers of a root daemon's
 * dedicated user, or all of a non-root daemon's user) counts, and a
 * clone fails with EAGAIN once the user has as many as the limit of the
 * process that asks. So the limit is what the user runs when the worker
 * starts plus SANDBOX_THREADS: this worker may add that many, and all the
 * workers of a user together never hold more than the last one's limit.
 * (The user's count is read from /proc; a user namespace made later
 * keeps it: its parent level is checked against the limit set here.)
 * Under AddressSanitizer the runtime has reserved terabytes of shadow
 * memory before main(), so the address space limit is counted on top of
 * what the worker has mapped when it is set.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <dirent.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "worker/sandbox_int.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif

static int set(int resource, uint64_t soft, uint64_t hard)
{
        struct rlimit rl = { .rlim_cur = (rlim_t)soft, .rlim_max = (rlim_t)hard };

        return setrlimit(resource, &rl) < 0 ? -errno : 0;
}

#ifdef SANITIZED
/* VmSize of this process in bytes, 0 when unknown. */
static uint64_t vm_size(void)
{
        char line[256];
        uint64_t kb = 0;
        FILE *f = fopen("/proc/self/status", "re");

        if (!f)
                return 0;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "VmSize: %" SCNu64 " kB", &kb) == 1)
                        break;
        fclose(f);
        return kb * 1024;
}
#endif

/*
 * The real uid and the threads of /proc/PID/status (at fd dir): 0, or -1
 * when unreadable. One read and two searches: the kernel's formatting of
 * the file is most of the cost of a process, and a machine may have
 * thousands (a line by line sscanf() took a third more).
 */
static int status_of(int dir, const char *pid, unsigned long *ruid, unsigned long *threads)
{
        char path[48], buf[8192];
        const char *u, *t;
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "%.20s/status", pid);
        fd = openat(dir, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return -1;
        buf[n] = '\0';
        u = strstr(buf, "\nUid:\t");
        t = strstr(buf, "\nThreads:\t");
        if (!u || !t)
                return -1;
        *ruid = strtoul(u + strlen("\nUid:\t"), NULL, 10);
        *threads = strtoul(t + strlen("\nThreads:\t"), NULL, 10);
        return 0;
}

/* Tasks (threads) of processes whose real uid is uid, from /proc/PID/status; 0 when unreadable. */
static uint64_t tasks_of(uid_t uid)
{
        struct dirent *de;
        uint64_t n = 0;
        DIR *d = opendir("/proc");

        if (!d)
                return 0;
        while ((de = readdir(d)) != NULL) {
                unsigned long ruid, threads;

                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                if (status_of(dirfd(d), de->d_name, &ruid, &threads) == 0 &&
                    ruid == (unsigned long)uid)
                        n += threads;
        }
        closedir(d);
        return n;
}

int sandbox_limits(const struct sandbox_args *a, char *buf, size_t size)
{
        uint64_t mem = a->opts.mem_limit ? a->opts.mem_limit : SANDBOX_MEM_DEFAULT;
        uint64_t as = mem;
        /* The user the worker runs as from the privileges layer on. */
        uid_t uid = a->opts.uid && geteuid() == 0 ? a->opts.uid : getuid();
        uint64_t user_tasks = tasks_of(uid), nproc = user_tasks + SANDBOX_THREADS;
        char cpu[32];
        int r;

#ifdef SANITIZED
        as += vm_size();
#endif
        r = set(RLIMIT_AS, as, as);
        if (r == 0 && a->opts.cpu_limit_s)
                r = set(RLIMIT_CPU, a->opts.cpu_limit_s, a->opts.cpu_limit_s + 1);
        if (r == 0)
                r = set(RLIMIT_NOFILE, SANDBOX_NOFILE, SANDBOX_NOFILE);
        if (r == 0)
                r = set(RLIMIT_FSIZE, SANDBOX_FSIZE, SANDBOX_FSIZE);
        if (r == 0)
                r = set(RLIMIT_CORE, 0, 0);
        if (r == 0)
                r = set(RLIMIT_NPROC, nproc, nproc);
        if (r < 0) {
                snprintf(buf, size, "setrlimit: %s", strerror(-r));
                return r;
        }
        if (a->opts.cpu_limit_s)
                snprintf(cpu, sizeof(cpu), "%" PRIu64 " s", a->opts.cpu_limit_s);
        else
                snprintf(cpu, sizeof(cpu), "unlimited");
        snprintf(buf, size, "address space %" PRIu64 " MiB%s, CPU %s, %u files, "
                 "file size %" PRIu64 " MiB, no core, %u more threads "
                 "(at most %" PRIu64 " tasks of uid %u)",
                 mem >> 20,
#ifdef SANITIZED
                 " beyond the sanitizer's",
#else
                 "",
#endif
                 cpu, SANDBOX_NOFILE, (uint64_t)SANDBOX_FSIZE >> 20, SANDBOX_THREADS,
                 nproc, (unsigned)uid);
        return 0;
}
