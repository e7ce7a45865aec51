/*
 * sandbox_seccomp: the worker's system call allowlist (sandbox.h, layer
 * "seccomp"), built with libseccomp, and the log of what it refused.
 *
 * DESIGN
 * - Allowed: what a loaded FMU legitimately needs (memory, files (where
 *   they may be opened is Landlock's and the mount namespace's business),
 *   threads, time, futexes, signals to itself, socketpairs, pipes and
 *   event descriptors, the dynamic loader's calls) and what the worker
 *   itself needs (futex waits on the channel, sched_yield, getrusage,
 *   clocks, getppid). A few calls are allowed only with safe arguments:
 *   clone only with CLONE_THREAD, socketpair only for AF_UNIX, kill and
 *   tgkill only to our own pid, rt_sigaction of SIGSYS only to read it
 *   (the trap handler below must stay ours), setpriority,
 *   sched_setaffinity, sched_setscheduler, sched_setparam, sched_setattr
 *   and prlimit64 (reading only) only for the worker itself (pid 0 or
 *   its own: every worker runs as the same user, and one FMU must not
 *   renice or pin another's worker), prctl and ioctl only for a few
 *   harmless requests. Arguments the kernel reads as int are compared on
 *   their low 32 bits (rt_sigaction(SIGSYS | 1 << 32) is SIGSYS).
 * - No socket() at all: the worker itself needs none (the channel is
 *   shared memory, its log goes through it), and an AF_UNIX socket could
 *   connect by path to any socket of the host its user may write to (the
 *   system bus, journald, the user's own daemons); seccomp cannot read
 *   the path. socketpair() stays: its sockets have no name. glibc's
 *   attempts (nscd, syslog) fail with EPERM and fall back or give up.
 * - clone3 fails with ENOSYS, so glibc falls back to clone, whose flags a
 *   filter can see. A system call of another architecture (i386 int 0x80
 *   on x86_64) kills the process: its numbers mean other calls.
 * - Anything else is refused with EPERM through SECCOMP_RET_TRAP: the
 *   SIGSYS handler records the call number and first argument in a small
 *   lock-free array and sets the return register to -EPERM. It takes no
 *   lock and calls nothing (a clone sharing the worker's memory, as
 *   posix_spawn()'s with every signal blocked, gets a plain EPERM: the
 *   trap would kill there). The worker's thread sends the records as LOG
 *   events (category "sandbox", status Warning) after the FMU call
 *   returns, before its reply (sandbox_flush()), resolving names there.
 *   Records that find the array full, or are still being written when a
 *   flush passes, are counted as lost and reported as a number. A thread
 *   that blocks all signals would be killed by the trap instead: the
 *   worker's pthread_sigmask() and sigprocmask() never block SIGSYS
 *   (worker/sigmask.c), so the refusal is an EPERM there too.
 * - kill_on_violation: SECCOMP_RET_KILL_PROCESS instead of the trap; the
 *   daemon sees a worker killed by SIGSYS.
 * - The trap path exists for x86_64 and aarch64; elsewhere refusals are
 *   plain SECCOMP_RET_ERRNO(EPERM) and not logged.
 */
#include <errno.h>
#include <linux/audit.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <ucontext.h>
#include <unistd.h>

#include "worker/sandbox_int.h"
#include "worker/worker.h"

#if defined(__x86_64__)
#define TRAP_ARG0(uc)   ((uint64_t)(uc)->uc_mcontext.gregs[REG_RDI])
#define TRAP_RET(uc, v) ((uc)->uc_mcontext.gregs[REG_RAX] = (greg_t)(v))
#elif defined(__aarch64__)
#define TRAP_ARG0(uc)   ((uint64_t)(uc)->uc_mcontext.regs[0])
#define TRAP_RET(uc, v) ((uc)->uc_mcontext.regs[0] = (uint64_t)(v))
#endif

#ifndef SYS_SECCOMP
#define SYS_SECCOMP     1       /* siginfo si_code of a seccomp trap */
#endif

#define TRAP_SLOTS      64u     /* refusals between two flushes; more are counted */
#define LOW32           0xffffffffull   /* an int argument's bits */

enum { SLOT_EMPTY, SLOT_BUSY, SLOT_FULL };

/*
 * Written by the SIGSYS handler on any thread, read by the worker's
 * thread in sandbox_flush(). A writer claims a slot (EMPTY -> BUSY),
 * fills it and publishes it with a release store of FULL; the flusher's
 * acquire load of FULL pairs with it, and its release store of EMPTY
 * pairs with the writer's claiming compare-exchange.
 */
struct trap_slot {
        _Atomic uint32_t state;
        uint32_t nr;
        uint64_t arg0;
};

static struct trap_slot slots[TRAP_SLOTS];
static _Atomic uint64_t trap_head;      /* owner: writers (fetch_add) */
static _Atomic uint64_t trap_lost;      /* owner: writers; the flusher takes it */
static uint64_t trap_tail;              /* owner: the flusher */
static atomic_bool trapping;            /* set once the trapping filter is loaded */

static_assert(ATOMIC_LLONG_LOCK_FREE == 2 && ATOMIC_INT_LOCK_FREE == 2,
              "the SIGSYS handler needs lock-free atomics");

#ifdef TRAP_RET
static void on_sigsys(int sig, siginfo_t *si, void *ctx)
{
        ucontext_t *uc = ctx;
        struct trap_slot *s;
        uint32_t expect = SLOT_EMPTY;
        uint64_t i;

        (void) sig;
        /* A SIGSYS the FMU sent itself: no system call to fail. */
        if (si->si_code != SYS_SECCOMP)
                return;
        i = atomic_fetch_add_explicit(&trap_head, 1, memory_order_relaxed);
        s = &slots[i % TRAP_SLOTS];
        if (atomic_compare_exchange_strong_explicit(&s->state, &expect, SLOT_BUSY,
                                                    memory_order_acquire, memory_order_relaxed)) {
                s->nr = (uint32_t)si->si_syscall;
                s->arg0 = TRAP_ARG0(uc);
                atomic_store_explicit(&s->state, SLOT_FULL, memory_order_release);
        } else {
                atomic_fetch_add_explicit(&trap_lost, 1, memory_order_relaxed);
        }
        TRAP_RET(uc, -EPERM);
}
#endif

static const char *family_name(uint64_t f)
{
        switch (f) {
        case AF_UNIX:
                return "AF_UNIX";
        case AF_INET:
                return "AF_INET";
        case AF_INET6:
                return "AF_INET6";
        case AF_NETLINK:
                return "AF_NETLINK";
        case AF_PACKET:
                return "AF_PACKET";
        default:
                return NULL;
        }
}

/* "socket (AF_INET)", "kill (pid 123)", "clone (flags 0x1200011: a new process)". */
static void describe(uint32_t nr, uint64_t arg0, char *buf, size_t size)
{
        char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, (int)nr);
        const char *n = name ? name : "?";
        const char *fam;

        if (!strcmp(n, "socket") || !strcmp(n, "socketpair")) {
                fam = family_name(arg0);
                if (fam)
                        snprintf(buf, size, "%s (%s)", n, fam);
                else
                        snprintf(buf, size, "%s (family %llu)", n, (unsigned long long)arg0);
        } else if (!strcmp(n, "kill") || !strcmp(n, "tgkill")) {
                snprintf(buf, size, "%s (pid %d)", n, (int)arg0);
        } else if (!strcmp(n, "clone")) {
                snprintf(buf, size, "clone (flags %#llx: a new process)", (unsigned long long)arg0);
        } else if (!strcmp(n, "rt_sigaction")) {
                snprintf(buf, size, "rt_sigaction (signal %d)", (int)arg0);
        } else if (name) {
                snprintf(buf, size, "%s", n);
        } else {
                snprintf(buf, size, "number %u", nr);
        }
        free(name);
}

static void send_log(struct worker *w, const char *text)
{
        static const char category[] = "sandbox";
        unsigned char payload[8 + CALL_MSG_MAX];
        struct call_log ev = { .status = 1 /* fmi3Warning */ };
        size_t mlen = strnlen(text, CALL_MSG_MAX);

        if (w->logs_sent >= CALL_LOGS_PER_CALL) {
                w->logs_dropped++;
                return;
        }
        memset(payload, 0, 8);
        memcpy(payload, category, sizeof(category) - 1);
        memcpy(payload + 8, text, mlen);
        ev.category = (struct call_range){ 0, sizeof(category) - 1 };
        ev.message = (struct call_range){ 8, mlen };
        if (send_event(w, CALL_EV_LOG, &ev, sizeof(ev), payload, 8 + mlen, true) < 0)
                w->logs_dropped++;
        else
                w->logs_sent++;
}

void sandbox_flush(struct worker *w)
{
        uint64_t head = atomic_load_explicit(&trap_head, memory_order_acquire);
        char what[128], text[192];
        uint64_t lost;

        /* The common case costs two loads per request. */
        if (head == trap_tail && !atomic_load_explicit(&trap_lost, memory_order_relaxed))
                return;
        lost = atomic_exchange_explicit(&trap_lost, 0, memory_order_relaxed);
        for (; trap_tail != head; trap_tail++) {
                struct trap_slot *s = &slots[trap_tail % TRAP_SLOTS];
                uint32_t nr;
                uint64_t arg0;

                if (atomic_load_explicit(&s->state, memory_order_acquire) != SLOT_FULL) {
                        lost++;
                        continue;
                }
                nr = s->nr;
                arg0 = s->arg0;
                atomic_store_explicit(&s->state, SLOT_EMPTY, memory_order_release);
                describe(nr, arg0, what, sizeof(what));
                snprintf(text, sizeof(text), "refused system call %s", what);
                send_log(w, text);
        }
        if (lost) {
                snprintf(text, sizeof(text), "refused %llu more system calls (not recorded)",
                         (unsigned long long)lost);
                send_log(w, text);
        }
}

/* The calls allowed whatever their arguments. */
static const int allowed[] = {
        /* memory */
        SCMP_SYS(brk), SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(mprotect),
        SCMP_SYS(madvise), SCMP_SYS(msync), SCMP_SYS(mincore), SCMP_SYS(membarrier),
        /* descriptors and files */
        SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(readv), SCMP_SYS(writev), SCMP_SYS(pread64),
        SCMP_SYS(pwrite64), SCMP_SYS(preadv), SCMP_SYS(pwritev), SCMP_SYS(preadv2),
        SCMP_SYS(pwritev2), SCMP_SYS(lseek), SCMP_SYS(close), SCMP_SYS(close_range),
        SCMP_SYS(dup), SCMP_SYS(dup2), SCMP_SYS(dup3), SCMP_SYS(fcntl), SCMP_SYS(open),
        SCMP_SYS(openat), SCMP_SYS(openat2), SCMP_SYS(creat), SCMP_SYS(stat), SCMP_SYS(fstat),
        SCMP_SYS(lstat), SCMP_SYS(newfstatat), SCMP_SYS(statx), SCMP_SYS(statfs),
        SCMP_SYS(fstatfs), SCMP_SYS(access), SCMP_SYS(faccessat), SCMP_SYS(faccessat2),
        SCMP_SYS(readlink), SCMP_SYS(readlinkat), SCMP_SYS(getdents64), SCMP_SYS(getcwd),
        SCMP_SYS(chdir), SCMP_SYS(fchdir), SCMP_SYS(mkdir), SCMP_SYS(mkdirat), SCMP_SYS(rmdir),
        SCMP_SYS(unlink), SCMP_SYS(unlinkat), SCMP_SYS(rename), SCMP_SYS(renameat),
        SCMP_SYS(renameat2), SCMP_SYS(link), SCMP_SYS(linkat), SCMP_SYS(symlink),
        SCMP_SYS(symlinkat), SCMP_SYS(truncate), SCMP_SYS(ftruncate), SCMP_SYS(fallocate),
        SCMP_SYS(fsync), SCMP_SYS(fdatasync), SCMP_SYS(chmod), SCMP_SYS(fchmod),
        SCMP_SYS(fchmodat), SCMP_SYS(utimensat), SCMP_SYS(flock), SCMP_SYS(fadvise64),
        SCMP_SYS(readahead), SCMP_SYS(sendfile), SCMP_SYS(copy_file_range), SCMP_SYS(splice),
        SCMP_SYS(tee), SCMP_SYS(umask), SCMP_SYS(pipe), SCMP_SYS(pipe2), SCMP_SYS(eventfd2),
        SCMP_SYS(memfd_create), SCMP_SYS(timerfd_create), SCMP_SYS(timerfd_settime),
        SCMP_SYS(timerfd_gettime), SCMP_SYS(signalfd4), SCMP_SYS(epoll_create1),
        SCMP_SYS(epoll_ctl), SCMP_SYS(epoll_wait), SCMP_SYS(epoll_pwait), SCMP_SYS(epoll_pwait2),
        SCMP_SYS(poll), SCMP_SYS(ppoll), SCMP_SYS(select), SCMP_SYS(pselect6),
        /* sockets: only socketpair's can exist (its rule below) */
        SCMP_SYS(connect), SCMP_SYS(bind), SCMP_SYS(listen), SCMP_SYS(accept), SCMP_SYS(accept4),
        SCMP_SYS(sendto), SCMP_SYS(recvfrom), SCMP_SYS(sendmsg), SCMP_SYS(recvmsg),
        SCMP_SYS(sendmmsg), SCMP_SYS(recvmmsg), SCMP_SYS(shutdown), SCMP_SYS(getsockname),
        SCMP_SYS(getpeername), SCMP_SYS(getsockopt), SCMP_SYS(setsockopt),
        /* threads, scheduling, futexes */
        SCMP_SYS(futex), SCMP_SYS(futex_waitv), SCMP_SYS(set_robust_list), SCMP_SYS(rseq),
        SCMP_SYS(set_tid_address), SCMP_SYS(gettid), SCMP_SYS(sched_yield),
        SCMP_SYS(sched_getaffinity), SCMP_SYS(sched_getparam), SCMP_SYS(sched_getscheduler),
        SCMP_SYS(sched_getattr), SCMP_SYS(sched_get_priority_max),
        SCMP_SYS(sched_get_priority_min), SCMP_SYS(getcpu), SCMP_SYS(getpriority),
        SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(wait4),
        SCMP_SYS(waitid), SCMP_SYS(restart_syscall),
        /* signals (to others: kill and tgkill below) */
        SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigreturn), SCMP_SYS(rt_sigpending),
        SCMP_SYS(rt_sigsuspend), SCMP_SYS(rt_sigtimedwait), SCMP_SYS(sigaltstack),
        SCMP_SYS(pause), SCMP_SYS(alarm), SCMP_SYS(setitimer), SCMP_SYS(getitimer),
        SCMP_SYS(timer_create), SCMP_SYS(timer_settime), SCMP_SYS(timer_gettime),
        SCMP_SYS(timer_getoverrun), SCMP_SYS(timer_delete),
        /* time */
        SCMP_SYS(clock_gettime), SCMP_SYS(clock_getres), SCMP_SYS(clock_nanosleep),
        SCMP_SYS(nanosleep), SCMP_SYS(gettimeofday), SCMP_SYS(time),
        /* identity and information */
        SCMP_SYS(getpid), SCMP_SYS(getppid), SCMP_SYS(getuid), SCMP_SYS(geteuid),
        SCMP_SYS(getgid), SCMP_SYS(getegid), SCMP_SYS(getresuid), SCMP_SYS(getresgid),
        SCMP_SYS(getgroups), SCMP_SYS(getpgid), SCMP_SYS(getpgrp), SCMP_SYS(getsid),
        SCMP_SYS(uname), SCMP_SYS(sysinfo), SCMP_SYS(getrusage), SCMP_SYS(times),
        SCMP_SYS(getrlimit), SCMP_SYS(getrandom),
};

/*
 * Calls that name a process: allowed for the worker itself only (pid 0,
 * or its own pid), so that one FMU cannot renice, pin or reschedule
 * another instance's worker running as the same user. Pids are ints to
 * the kernel: the low 32 bits are compared.
 */
static int own_only(scmp_filter_ctx ctx, scmp_datum_t pid)
{
        static const int by_pid[] = {
                SCMP_SYS(sched_setaffinity), SCMP_SYS(sched_setscheduler),
                SCMP_SYS(sched_setparam), SCMP_SYS(sched_setattr),
        };
        const scmp_datum_t self[] = { 0, pid };
        int r = 0;

        for (size_t s = 0; s < 2 && r == 0; s++) {
                for (size_t i = 0; i < sizeof(by_pid) / sizeof(by_pid[0]) && r == 0; i++)
                        r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, by_pid[i], 1,
                                             SCMP_A0(SCMP_CMP_MASKED_EQ, LOW32, self[s]));
                /* nice(): which PRIO_PROCESS, who itself. */
                if (r == 0)
                        r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(setpriority), 2,
                                             SCMP_A0(SCMP_CMP_MASKED_EQ, LOW32, PRIO_PROCESS),
                                             SCMP_A1(SCMP_CMP_MASKED_EQ, LOW32, self[s]));
                /* Read its own limits, never change them. */
                if (r == 0)
                        r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 2,
                                             SCMP_A0(SCMP_CMP_MASKED_EQ, LOW32, self[s]),
                                             SCMP_A2(SCMP_CMP_EQ, 0));
        }
        return r;
}

static int rules(scmp_filter_ctx ctx, uint32_t deny)
{
        static const int prctl_ok[] = {
                PR_SET_NAME, PR_GET_NAME, PR_GET_DUMPABLE, PR_GET_PDEATHSIG, PR_GET_NO_NEW_PRIVS,
                PR_GET_SECCOMP, PR_CAPBSET_READ, PR_GET_TIMERSLACK, PR_SET_TIMERSLACK,
                PR_GET_THP_DISABLE,
        };
        static const unsigned long ioctl_ok[] = {
                TCGETS, TIOCGWINSZ, FIONREAD, FIONBIO, FIOCLEX, FIONCLEX,
        };
        scmp_datum_t pid = (scmp_datum_t)getpid();
        int r = 0;

        /* A negative number is a call this architecture does not have (open on aarch64). */
        for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]) && r == 0; i++)
                if (allowed[i] >= 0)
                        r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0);
        for (size_t i = 0; i < sizeof(prctl_ok) / sizeof(prctl_ok[0]) && r == 0; i++)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
                                     SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)prctl_ok[i]));
        for (size_t i = 0; i < sizeof(ioctl_ok) / sizeof(ioctl_ok[0]) && r == 0; i++)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
                                     SCMP_A1(SCMP_CMP_EQ, (scmp_datum_t)ioctl_ok[i]));
        if (r == 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                                     SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
        /*
         * A process sharing our memory (posix_spawn(), so system() and
         * popen(), vfork-style): glibc blocks every signal with a raw
         * rt_sigprocmask first, so the trap's SIGSYS would kill the worker.
         * A plain EPERM (not logged) instead: the FMU sees the call fail.
         * (Killing or plain EPERM already: the default.)
         */
        if (r == 0 && deny == SCMP_ACT_TRAP)
                r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                                     SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_VM | CLONE_THREAD,
                                             CLONE_VM));
        if (r == 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
        /* No socket(): a socket with a name could reach the host's (see DESIGN). */
        if (r == 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socketpair), 1,
                                     SCMP_A0(SCMP_CMP_EQ, AF_UNIX));
        if (r == 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(kill), 1,
                                     SCMP_A0(SCMP_CMP_EQ, pid));
        if (r == 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1,
                                     SCMP_A0(SCMP_CMP_EQ, pid));
        if (r == 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(rt_tgsigqueueinfo), 1,
                                     SCMP_A0(SCMP_CMP_EQ, pid));
        /*
         * Any signal but SIGSYS; SIGSYS only read (act == NULL). The kernel
         * reads the signal as an int: only the low 32 bits are compared,
         * so SIGSYS | 1 << 32 is SIGSYS too.
         */
        for (int sig = 1; sig < _NSIG && r == 0; sig++)
                if (sig != SIGSYS)
                        r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(rt_sigaction), 1,
                                             SCMP_A0(SCMP_CMP_MASKED_EQ, LOW32, (scmp_datum_t)sig));
        if (r == 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(rt_sigaction), 1,
                                     SCMP_A1(SCMP_CMP_EQ, 0));
        if (r == 0)
                r = own_only(ctx, pid);
        return r;
}

bool sandbox_traps(void)
{
        return atomic_load_explicit(&trapping, memory_order_acquire);
}

int sandbox_seccomp(const struct sandbox_args *a, char *buf, size_t size)
{
        uint32_t deny = SCMP_ACT_ERRNO(EPERM);
        scmp_filter_ctx ctx;
        const char *how;
        int r;

#ifdef TRAP_RET
        struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO };
        sigset_t sys;

        deny = SCMP_ACT_TRAP;
        if (!a->opts.kill_on_violation) {
                sigemptyset(&sa.sa_mask);
                sigemptyset(&sys);
                sigaddset(&sys, SIGSYS);
                if (sigaction(SIGSYS, &sa, NULL) < 0 ||
                    sigprocmask(SIG_UNBLOCK, &sys, NULL) < 0) {
                        r = -errno;
                        snprintf(buf, size, "sigaction(SIGSYS): %s", strerror(-r));
                        return r;
                }
        }
#endif
        if (a->opts.kill_on_violation)
                deny = SCMP_ACT_KILL_PROCESS;
        ctx = seccomp_init(deny);
        if (!ctx) {
                snprintf(buf, size, "seccomp_init failed");
                return -ENOMEM;
        }
        r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
        if (r == 0)
                r = rules(ctx, deny);
        if (r < 0) {
                snprintf(buf, size, "building the filter: %s", strerror(-r));
                goto out_release;
        }
        r = seccomp_load(ctx);
        if (r < 0) {
                snprintf(buf, size, "seccomp_load: %s", strerror(-r));
                goto out_release;
        }
        atomic_store_explicit(&trapping, deny == SCMP_ACT_TRAP, memory_order_release);
        how = a->opts.kill_on_violation ? "kill the worker" :
              deny == SCMP_ACT_TRAP ? "EPERM, logged" : "EPERM, not logged on this architecture";
        snprintf(buf, size, "%zu calls + threads, socketpair, own signals and scheduling; "
                 "no socket (no host socket reachable); others: %s",
                 sizeof(allowed) / sizeof(allowed[0]), how);
out_release:
        seccomp_release(ctx);
        return r;
}
