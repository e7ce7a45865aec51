/*
 * sandbox_limits: the worker's resource limits (sandbox.h, layer
 * "limits"): address space, CPU time, open files, file size, no core
 * dumps.
 *
 * DESIGN: RLIMIT_AS bounds what an FMU can allocate: past it mmap and brk
 * fail with ENOMEM (malloc returns NULL) instead of the machine swapping.
 * RLIMIT_CPU is a backstop behind the daemon's deadlines: SIGXCPU at the
 * soft limit, SIGKILL one second later. No RLIMIT_NPROC: it counts every
 * process of the user, not this worker's; seccomp refuses new processes.
 * Under AddressSanitizer the runtime has reserved terabytes of shadow
 * memory before main(), so the address space limit is counted on top of
 * what the worker has mapped when it is set.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

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

int sandbox_limits(const struct sandbox_args *a, char *buf, size_t size)
{
        uint64_t mem = a->opts.mem_limit ? a->opts.mem_limit : SANDBOX_MEM_DEFAULT;
        uint64_t as = mem;
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
        if (r < 0) {
                snprintf(buf, size, "setrlimit: %s", strerror(-r));
                return r;
        }
        if (a->opts.cpu_limit_s)
                snprintf(cpu, sizeof(cpu), "%" PRIu64 " s", a->opts.cpu_limit_s);
        else
                snprintf(cpu, sizeof(cpu), "unlimited");
        snprintf(buf, size, "address space %" PRIu64 " MiB%s, CPU %s, %u files, "
                 "file size %" PRIu64 " MiB, no core", mem >> 20,
#ifdef SANITIZED
                 " beyond the sanitizer's",
#else
                 "",
#endif
                 cpu, SANDBOX_NOFILE, (uint64_t)SANDBOX_FSIZE >> 20);
        return 0;
}
