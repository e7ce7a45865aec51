/*
 * pace_util: the parts of bench/pace.c that measure: a bare
 * clock_nanosleep loop and a paced master to the same deadlines, each
 * with or without the real-time options, and the two cpu-bound processes
 * that load the machine beside them.
 *
 * DESIGN: the real-time options are the daemon's own (engine/master/
 * realtime.h): SCHED_FIFO and a cpu set for the measuring thread (the bare
 * loop, or the master, which runs on the calling thread) and for every
 * thread of every worker, timer slack, /dev/cpu_dma_latency, mlockall for
 * this process and (session_opts.mlock) for the workers, and the wait the
 * daemon then chooses (rt_wait_choose()). They are taken
 * for one measurement and given back after it, so that the next
 * measurement without them runs as an ordinary process again. A refused
 * option is reported and the measurement goes on (best effort).
 */
#ifndef FMUD_BENCH_PACE_UTIL_H
#define FMUD_BENCH_PACE_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "engine/master/realtime.h"

#define PACE_HOGS       2       /* cpu-bound processes beside a loaded measurement */

struct pace_rt {
        bool on;
        int priority;                   /* SCHED_FIFO 1..99: the master's; the workers' one less */
        char cpus[RT_CPUS_MAX];         /* the cpu list of everything measured */
};

/* Percentiles of one lateness, µs after the deadline. */
struct pace_pct {
        double p50_us, p99_us, p999_us, max_us;
};

/* One measurement: lateness per point, and the drift. */
struct pace_cell {
        double points;
        double waits;                   /* wake-ups measured (the master: points done on time) */
        struct pace_pct wake;           /* woken after the deadline (master: waits run to it) */
        struct pace_pct done;           /* the master: the point completed after its deadline */
        double drift_us;                /* how late the last point was done */
        double overruns;
        bool refused;                   /* a real-time option was refused (reported on stderr) */
};

struct pace_job {
        double h;                       /* the step: seconds between deadlines */
        double seconds;                 /* the run's length */
        double spin_us;                 /* spun before each deadline, both loops */
        const struct pace_rt *rt;
};

/* clock_nanosleep(TIMER_ABSTIME) to each deadline, doing nothing else. */
void pace_bare(const struct pace_job *j, struct pace_cell *ret);
/* The scenario at path at warp 1, steps of h, for j->seconds, on this thread. */
void pace_master(const char *path, const struct pace_job *j, struct pace_cell *ret);

/* Start PACE_HOGS processes spinning on the cpu; stop (SIGKILL and reap) them. */
void pace_hogs_start(pid_t hogs[PACE_HOGS]);
void pace_hogs_stop(pid_t hogs[PACE_HOGS]);

#endif
