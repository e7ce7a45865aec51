/*
 * spread: the choice of a worker to move off a crowded cpu (spread.h).
 */
#include "engine/master/spread.h"

bool spread_pick(const int *cpu, size_t n, const bool *allowed, unsigned ncpu, size_t *ret_idx,
                 int *ret_cpu)
{
        unsigned count[SPREAD_CPUS_MAX] = { 0 };
        int crowded = -1, free_cpu = -1;

        if (ncpu > SPREAD_CPUS_MAX)
                ncpu = SPREAD_CPUS_MAX;
        for (size_t i = 0; i < n; i++)
                if (cpu[i] >= 0 && (unsigned)cpu[i] < ncpu)
                        count[cpu[i]]++;
        for (unsigned c = 0; c < ncpu; c++) {
                if (crowded < 0 && count[c] >= 2)
                        crowded = (int)c;
                if (free_cpu < 0 && allowed[c] && count[c] == 0)
                        free_cpu = (int)c;
        }
        if (crowded < 0 || free_cpu < 0)
                return false;
        for (size_t i = n; i-- > 0;)
                if (cpu[i] == crowded) {
                        *ret_idx = i;
                        *ret_cpu = free_cpu;
                        return true;
                }
        return false;
}
