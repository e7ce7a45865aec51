/*
 * realtime: the real-time options of a session, applied by the daemon to
 * the session's master thread and to every task of its workers, each one
 * remembered as active or refused with the kernel's errno:
 *
 *   master-priority  SCHED_FIFO at this priority (1..99) for the master thread
 *   worker-priority  SCHED_FIFO for every thread of every worker
 *   master-cpus      the master thread's cpu set (sched_setaffinity)
 *   worker-cpus      every worker thread's cpu set
 *   timer-slack      1 ns timer slack (PR_SET_TIMERSLACK) for the master, and
 *                    /proc/PID/task/TID/timerslack_ns for the workers' threads
 *   dma-latency      /dev/cpu_dma_latency held open with 0 while a real-time
 *                    session is loaded, counted across sessions (the kernel
 *                    keeps the cpus out of deep idle states until the last
 *                    holder closes it)
 *
 * timer-slack and dma-latency are asked for whenever a priority is.
 * worker-mlock, one per instance, is the worker's own doing (worker_mlock
 * below): the daemon only reports it.
 *
 * DESIGN: the daemon changes the workers' scheduling from the outside
 * (sched_setscheduler and sched_setaffinity on each task id, after the
 * worker started and its FMU was instantiated), never the worker itself:
 * the seccomp allowlist (worker/sandbox_seccomp.c) lets a worker change
 * only its own threads and no FMU gets a say. Threads a worker starts
 * later inherit the policy, the priority and the cpu set (no
 * SCHED_RESET_ON_FORK). The master thread applies its own options on
 * itself (rt_apply_self()), which also covers every thread it starts.
 * Nothing is undone: the master thread ends with its session, the workers
 * are reaped; only dma-latency is released (rt_release()).
 */
#ifndef FMUD_ENGINE_REALTIME_H
#define FMUD_ENGINE_REALTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define RT_PRIORITY_MAX         99      /* SCHED_FIFO's range on Linux: 1..99 */
#define RT_CPUS_MAX             256     /* the length of a cpu list */

enum rt_opt {
        RT_MASTER_PRIORITY,
        RT_WORKER_PRIORITY,
        RT_MASTER_CPUS,
        RT_WORKER_CPUS,
        RT_TIMER_SLACK,
        RT_DMA_LATENCY,
        RT_OPT_COUNT
};

struct rt_opts {
        int master_priority;            /* 1..99; 0: not asked */
        int worker_priority;            /* 1..99; 0: not asked */
        char master_cpus[RT_CPUS_MAX];  /* "0-1,3"; empty: not asked */
        char worker_cpus[RT_CPUS_MAX];
        bool best_effort;               /* a refused option does not refuse the session */
        /*
         * Every worker locks its memory (mlockall, worker/mlock.c) before
         * its sandbox: asked at the workers' start (inst_opts.mlock), each
         * worker's outcome reported per instance ("worker-mlock").
         */
        bool worker_mlock;
};

struct rt_state {
        bool asked[RT_OPT_COUNT];
        int err[RT_OPT_COUNT];          /* 0: active; else the errno that refused it */
        char why[RT_OPT_COUNT][64];     /* a refusal's context ("cpu 7" ...); may be empty */
        bool dma_held;                  /* a reference on the shared dma-latency holder */
};

/* "master-priority", ..., "dma-latency"; "?" out of range. */
const char *rt_opt_name(enum rt_opt o);

/* Whether o asks for anything at all. */
bool rt_any(const struct rt_opts *o);

/*
 * Check a cpu list ("0", "0-3", "1,3-5"; every cpu below CPU_SETSIZE):
 * 0, or -EINVAL with the reason in msg. Whether the cpus exist is the
 * kernel's call, when the list is applied.
 */
int rt_cpus_check(const char *list, char *msg, size_t size);

/* Apply o's master options, timer slack and dma-latency to the calling thread. */
void rt_apply_self(const struct rt_opts *o, struct rt_state *st);

/* Apply o's worker options to every thread of process pid (a worker). */
void rt_apply_worker(const struct rt_opts *o, pid_t pid, struct rt_state *st);

/*
 * The first refused option, or -1. With one, msg says "realtime NAME:
 * REASON" (strerror of the errno, and its context).
 */
int rt_refused(const struct rt_state *st, char *msg, size_t size);

/* "active", or "refused: REASON" for option o; empty when o was not asked. */
void rt_describe(const struct rt_state *st, enum rt_opt o, char *buf, size_t size);

struct session;

/*
 * How the calling thread, s's master, waits for each worker of s, decided
 * once the options are applied, from the kernel's view of the master and
 * of each worker (policy, priority, cpu set): when the master runs at
 * SCHED_FIFO or SCHED_RR, a worker that can run on one of its cpus at its
 * priority or below is waited for asleep (WAIT_FUTEX: neither a spin nor a
 * yield, which would keep that worker off the cpu); the others keep their
 * policy. Returns how many workers were changed; desc gets the status
 * text: "adaptive" (not real time), "adaptive: no worker shares the
 * master's cpus", or "futex: N of M workers share the master's cpus
 * (SCHED_FIFO P)" (sharing: may run on one of them, at its priority or
 * below).
 */
size_t rt_wait_choose(struct session *s, char *desc, size_t size);

/* Release what st holds (dma-latency's reference). Idempotent. */
void rt_release(struct rt_state *st);

/*
 * mlockall(MCL_CURRENT | MCL_FUTURE) for the calling process: 0 or
 * -errno (the daemon's [realtime] mlock).
 */
int rt_lock_memory(void);

#endif
