/*
 * crash: the crash handler and its last words; the address-space check
 * (see crash.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "worker/crash.h"
#include "worker/worker.h"

#define CRASH_MARGIN_MIN        (32ull << 20)
#define CRASH_MARGIN_MAX        (64ull << 20)
#define ALT_STACK_SIZE          (128u << 10)

static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };

/* Written by the main thread before any handler can run; read by handlers. */
static struct worker *volatile armed;
static bool installed;
static unsigned char alt_stack[ALT_STACK_SIZE] __attribute__((aligned(64)));

/*
 * An eighth of the limit, 32..64 MiB: more than one failed allocation of
 * a usual size, less than the distance of a healthy worker from its limit
 * (also where the sandbox adds a sanitizer's huge reservations to it).
 */
static uint64_t margin_of(uint64_t limit)
{
        uint64_t m = limit / 8;

        return m < CRASH_MARGIN_MIN ? CRASH_MARGIN_MIN : m > CRASH_MARGIN_MAX ? CRASH_MARGIN_MAX : m;
}

/* VmPeak of /proc/self/status in bytes, 0 when unknown. Async-signal-safe. */
static uint64_t vm_peak(void)
{
        static const char key[] = "VmPeak:";
        char buf[4096];
        uint64_t kb = 0;
        ssize_t n;
        size_t len = 0;
        int fd;
        char *p;

        fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        while (len < sizeof(buf) - 1) {
                n = read(fd, buf + len, sizeof(buf) - 1 - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                len += (size_t)n;
        }
        (void) close(fd);
        buf[len] = '\0';
        for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
                if (strncmp(p, key, sizeof(key) - 1))
                        continue;
                p += sizeof(key) - 1;
                while (*p == ' ' || *p == '\t')
                        p++;
                while (*p >= '0' && *p <= '9' && kb < (UINT64_MAX - 9) / 10 / 1024)
                        kb = kb * 10 + (uint64_t)(*p++ - '0');
                return kb * 1024;
        }
        return 0;
}

bool crash_near_limit(uint64_t *ret_limit)
{
        struct rlimit rl;
        uint64_t limit, margin, peak;
        void *p;

        *ret_limit = 0;
        if (getrlimit(RLIMIT_AS, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
                return false;
        limit = (uint64_t)rl.rlim_cur;
        *ret_limit = limit;
        margin = margin_of(limit);
        peak = vm_peak();
        if (peak && peak + margin >= limit)
                return true;
        /* Counts against RLIMIT_AS like any mapping, and costs no memory. */
        p = mmap(NULL, (size_t)margin, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED)
                return errno == ENOMEM;
        (void) munmap(p, (size_t)margin);
        return false;
}

void crash_format_limit(uint64_t bytes, char *buf, size_t size)
{
        if (bytes && bytes % (1ull << 30) == 0)
                snprintf(buf, size, "%llu GiB", (unsigned long long)(bytes >> 30));
        else if (bytes && bytes % (1ull << 20) == 0)
                snprintf(buf, size, "%llu MiB", (unsigned long long)(bytes >> 20));
        else
                snprintf(buf, size, "%llu bytes", (unsigned long long)bytes);
}

/* Append text; async-signal-safe. */
static size_t put_str(char *buf, size_t len, size_t cap, const char *s)
{
        while (*s && len + 1 < cap)
                buf[len++] = *s++;
        buf[len] = '\0';
        return len;
}

static size_t put_num(char *buf, size_t len, size_t cap, uint64_t v, unsigned base)
{
        char tmp[24];
        size_t n = 0;

        do {
                tmp[n++] = "0123456789abcdef"[v % base];
                v /= base;
        } while (v && n < sizeof(tmp));
        while (n && len + 1 < cap)
                buf[len++] = tmp[--n];
        buf[len] = '\0';
        return len;
}

static void on_crash(int sig, siginfo_t *si, void *uc)
{
        struct worker *w = armed;
        int saved = errno;
        struct sigaction dfl;

        (void) uc;
        /* The main thread's tid is the pid: only it may push (see crash.h). */
        if (w && syscall(SYS_gettid) == getpid()) {
                char msg[160];
                uint64_t limit;
                bool near = crash_near_limit(&limit);
                size_t n = 0;

                armed = NULL;
                n = put_str(msg, n, sizeof(msg), "signal ");
                n = put_num(msg, n, sizeof(msg), (uint64_t)sig, 10);
                n = put_str(msg, n, sizeof(msg), " code ");
                if (si->si_code < 0)
                        n = put_str(msg, n, sizeof(msg), "-");
                n = put_num(msg, n, sizeof(msg), si->si_code < 0 ? (uint64_t)-(int64_t)si->si_code :
                            (uint64_t)si->si_code, 10);
                n = put_str(msg, n, sizeof(msg), " address 0x");
                n = put_num(msg, n, sizeof(msg), (uint64_t)(uintptr_t)si->si_addr, 16);
                n = put_str(msg, n, sizeof(msg), " limit ");
                n = put_num(msg, n, sizeof(msg), limit, 10);
                n = put_str(msg, n, sizeof(msg), near ? " near 1" : " near 0");
                /* What the FMU printed up to the crash: often the best clue to it. */
                output_last(w);
                log_last_words(w, msg, n);
        }
        /* Die of the same signal: blocked here, it is delivered as the handler returns. */
        memset(&dfl, 0, sizeof(dfl));
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        (void) sigaction(sig, &dfl, NULL);
        (void) raise(sig);
        errno = saved;
}

void crash_install(struct worker *w)
{
        struct sigaction sa;
        stack_t ss;

        armed = w;
        if (installed)
                return;
        installed = true;
        ss = (stack_t){ .ss_sp = alt_stack, .ss_size = sizeof(alt_stack) };
        /* Without an alternate stack a stack overflow dies without last words; that is all. */
        (void) sigaltstack(&ss, NULL);
        memset(&sa, 0, sizeof(sa));
        sa.sa_sigaction = on_crash;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigfillset(&sa.sa_mask);
        for (size_t i = 0; i < sizeof(crash_signals) / sizeof(crash_signals[0]); i++)
                (void) sigaction(crash_signals[i], &sa, NULL);
}
