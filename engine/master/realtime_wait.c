/*
 * realtime_wait: how a real-time master waits for its workers (see
 * realtime.h, rt_wait_choose()).
 *
 * DESIGN: a waiting master spins (shm/wait.h, WAIT_ADAPTIVE) while its
 * worker last replied from another cpu. Under SCHED_FIFO or SCHED_RR that
 * is wrong whenever the worker can only run where the master is spinning:
 * the scheduler never preempts a real-time task for one of equal or lower
 * priority, and sched_yield() hands the cpu only to a task of the same
 * priority, so the worker that owes the reply waits out the whole spin and
 * yield budget of every wait (docs/BENCHMARKS.md, "Pacing": 10 kHz on one
 * cpu fell ever further behind). So such a worker is waited for on the
 * futex alone, which puts the master to sleep at once. The decision is
 * taken once, when the options have been applied, from what the kernel
 * says now (the master thread's policy and cpu set, each worker's main
 * thread's, which replies), not from what was asked: a refused option or
 * a cpu set from outside (taskset, a cgroup) counts as it is.
 */
#include "engine/master/realtime.h"

#include <sched.h>
#include <stdio.h>

#include "engine/instance/instance.h"
#include "engine/master/session.h"

static bool realtime(int policy)
{
        return policy == SCHED_FIFO || policy == SCHED_RR;
}

/*
 * Whether the worker pid can hold up a master of priority prio on the cpus
 * in mine: it may run on one of them and does not outrank the master (a
 * higher real-time priority preempts the spinning master anyway).
 */
static bool shares(pid_t pid, const cpu_set_t *mine, int prio)
{
        struct sched_param sp = { 0 };
        cpu_set_t theirs, both;
        int policy;

        if (sched_getaffinity(pid, sizeof(theirs), &theirs) < 0)
                return true;            /* unknown: the safe answer */
        CPU_AND(&both, &theirs, mine);
        if (!CPU_COUNT(&both))
                return false;
        policy = sched_getscheduler(pid);
        if (policy < 0 || sched_getparam(pid, &sp) < 0)
                return true;
        return !realtime(policy) || sp.sched_priority <= prio;
}

size_t rt_wait_choose(struct session *s, char *desc, size_t size)
{
        struct sched_param sp = { 0 };
        size_t n = session_count(s), shared = 0;
        cpu_set_t mine;
        int policy = sched_getscheduler(0);

        if (!realtime(policy) || sched_getparam(0, &sp) < 0 ||
            sched_getaffinity(0, sizeof(mine), &mine) < 0) {
                snprintf(desc, size, "adaptive");
                return 0;
        }
        for (size_t i = 0; i < n; i++) {
                struct inst *inst = session_inst(s, i);
                struct wait_policy p = *inst_wait(inst);

                if (!shares(inst_pid(inst), &mine, sp.sched_priority))
                        continue;
                p.strategy = WAIT_FUTEX;
                inst_set_wait(inst, &p);
                shared++;
        }
        if (shared)
                snprintf(desc, size, "futex: %zu of %zu workers share the master's cpus (%s %d)",
                         shared, n,
                         policy == SCHED_FIFO ? "SCHED_FIFO" : "SCHED_RR", sp.sched_priority);
        else
                snprintf(desc, size, "adaptive: no worker shares the master's cpus");
        return shared;
}
