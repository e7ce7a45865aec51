/*
 * spread: which worker to move so that compute-heavy workers stop sharing
 * a cpu while another allowed cpu runs none of them.
 *
 * DESIGN: a worker waiting for its next request yields instead of
 * sleeping while there are more busy threads than cpus, so it never
 * wakes up again and the kernel never re-places it. The first step of a
 * session wakes every worker from the master's cpu, and the kernel's
 * wake-affine placement may put two of them there; after that they are
 * always runnable and cache-hot, the load balancer leaves them together,
 * and they take turns on one cpu while the other idles (seen with
 * `perf sched timehist` on two workers of ~50 µs steps: whole runs at the
 * sequential loop's speed). The master corrects that by moving one of
 * them once (engine/master/master_spread.c); this file only decides.
 */
#ifndef FMUD_ENGINE_SPREAD_H
#define FMUD_ENGINE_SPREAD_H

#include <stdbool.h>
#include <stddef.h>

#define SPREAD_CPUS_MAX 1024

/*
 * cpu[i]: the cpu worker i last ran on (-1 or out of range: unknown, left
 * alone); allowed[c]: whether cpu c may be used, for c < ncpu. Picks the
 * highest-numbered worker on the lowest cpu that runs two or more, and
 * the lowest allowed cpu that runs none: true with *ret_idx and *ret_cpu,
 * false when there is nothing to do. Deterministic; any thread.
 */
bool spread_pick(const int *cpu, size_t n, const bool *allowed, unsigned ncpu, size_t *ret_idx,
                 int *ret_cpu);

#endif
