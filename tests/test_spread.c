/*
 * spread: which heavy worker moves where (engine/master/spread.h). The move
 * itself only changes wall time, so the choice is what is tested.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "engine/master/spread.h"

static const bool two[] = { true, true };

static void picks(const int *cpu, size_t n, const bool *allowed, unsigned ncpu, size_t want_idx,
                  int want_cpu)
{
        size_t idx = 999;
        int to = -9;

        cr_assert(spread_pick(cpu, n, allowed, ncpu, &idx, &to));
        cr_assert(eq(sz, idx, want_idx));
        cr_assert(eq(int, to, want_cpu));
}

static void leaves(const int *cpu, size_t n, const bool *allowed, unsigned ncpu)
{
        size_t idx = 999;
        int to = -9;

        cr_assert(not(spread_pick(cpu, n, allowed, ncpu, &idx, &to)));
        cr_assert(eq(sz, idx, (size_t)999), "nothing written when there is nothing to do");
        cr_assert(eq(int, to, -9));
}

Test(spread, two_on_one_cpu_and_one_idle_moves_the_last_of_them)
{
        picks((int[]){ 0, 0 }, 2, two, 2, 1, 1);
        picks((int[]){ 1, 1 }, 2, two, 2, 1, 0);
}

Test(spread, one_per_cpu_or_no_cpu_free_is_left_alone)
{
        leaves((int[]){ 0, 1 }, 2, two, 2);
        leaves((int[]){ 0, 0, 1 }, 3, two, 2);
        leaves((int[]){ 0 }, 1, two, 2);
        leaves(NULL, 0, two, 2);
}

Test(spread, unknown_and_out_of_range_cpus_are_left_alone)
{
        leaves((int[]){ -1, -1 }, 2, two, 2);
        leaves((int[]){ 0, 7 }, 2, two, 2);
        leaves((int[]){ 5, 5 }, 2, two, 2);
        picks((int[]){ 0, -1, 0 }, 3, two, 2, 2, 1);
}

Test(spread, only_an_allowed_cpu_is_a_destination)
{
        const bool some[] = { true, false, false, true };

        leaves((int[]){ 0, 0 }, 2, (const bool[]){ true, false }, 2);
        picks((int[]){ 0, 0 }, 2, some, 4, 1, 3);
        /* A crowded cpu the master may not use still gives up a worker. */
        picks((int[]){ 1, 1, 0 }, 3, some, 4, 1, 3);
}

Test(spread, the_lowest_crowded_cpu_goes_first)
{
        const bool four[] = { true, true, true, true };

        picks((int[]){ 2, 2, 1, 1 }, 4, four, 4, 3, 0);
        picks((int[]){ 2, 2, 1, 1, 0 }, 5, four, 4, 3, 3);
}
