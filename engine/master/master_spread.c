/*
 * master_spread: keeps compute-heavy workers of a session off a shared cpu
 * while another allowed cpu runs none of them (why it happens: spread.h).
 *
 * DESIGN: every MSPREAD_EVERY points, the due instances whose last doStep
 * took INST_HEAVY_STEP_NS or more are looked at through the cpu each worker
 * last replied from (a hint it leaves in its channel). When spread_pick()
 * finds two on one cpu and an allowed cpu with none, that worker's
 * affinity is set to the free cpu, which moves it there at once, and then
 * back to every cpu the master may use, so the kernel stays free to place
 * it later. Light workers are left alone: for them a wake-up costs more
 * than sharing a cpu. Results do not depend on where workers run; only
 * the wall time does.
 */
#include "engine/master/master_int.h"

#include <sched.h>

#include "engine/master/spread.h"

#define MSPREAD_EVERY           64u
#define MSPREAD_MAX             256u    /* instances looked at */

void mspread_init(struct master *m)
{
        cpu_set_t set;

        m->spread_ok = false;
        m->ncpu = 0;
        if (m->n < 2 || sched_getaffinity(0, sizeof(set), &set) < 0 || CPU_COUNT(&set) < 2)
                return;
        for (unsigned c = 0; c < CPU_SETSIZE && c < SPREAD_CPUS_MAX; c++) {
                m->cpu_allowed[c] = CPU_ISSET(c, &set);
                if (m->cpu_allowed[c])
                        m->ncpu = c + 1;
        }
        m->spread_ok = true;
}

static void move(struct master *m, struct mi *mi, int to)
{
        pid_t pid = inst_pid(mi->inst);
        cpu_set_t one, all;

        if (pid <= 0 || inst_health(mi->inst) != 0)
                return;
        CPU_ZERO(&one);
        CPU_SET(to, &one);
        CPU_ZERO(&all);
        for (unsigned c = 0; c < m->ncpu; c++)
                if (m->cpu_allowed[c])
                        CPU_SET(c, &all);
        /* A hint: a worker that cannot be moved (EPERM, gone) stays where it is. */
        if (sched_setaffinity(pid, sizeof(one), &one) < 0)
                return;
        (void) sched_setaffinity(pid, sizeof(all), &all);
        m->moves++;
}

void mspread_check(struct master *m)
{
        int cpu[MSPREAD_MAX];
        size_t who[MSPREAD_MAX], n = 0, k;
        int to;

        if (!m->spread_ok || m->points % MSPREAD_EVERY)
                return;
        for (size_t i = 0; i < m->n && n < MSPREAD_MAX; i++) {
                struct mi *mi = &m->mi[i];

                if (!mi->due || inst_fault(mi->inst) ||
                    inst_last_service_ns(mi->inst) < INST_HEAVY_STEP_NS)
                        continue;
                cpu[n] = inst_worker_cpu(mi->inst);
                who[n++] = i;
        }
        if (n >= 2 && spread_pick(cpu, n, m->cpu_allowed, m->ncpu, &k, &to))
                move(m, &m->mi[who[k]], to);
}
