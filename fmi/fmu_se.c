/*
 * fmu_se: the load-time checks of a Scheduled Execution FMU and the order
 * of its model partitions (fmu_se.h). FMI 3.0 sections 2.4.4 and 5.1.1.
 */
#include "fmu_se.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

static bool is_partition(const struct md_variable *v)
{
        return v->type == MD_CLOCK && v->causality == MD_CAUSALITY_INPUT;
}

int fmu_se_check(const struct md *md, char *why, size_t size)
{
        for (size_t i = 0; i < md->n_vars; i++) {
                const struct md_variable *v = &md->vars[i];
                enum md_interval_variability iv = v->attrs.clock.interval_variability;

                if (!is_partition(v))
                        continue;
                if (!v->attrs.clock.has_priority) {
                        snprintf(why, size, "ScheduledExecution: input Clock '%s' has no priority: "
                                 "every input Clock of a Scheduled Execution FMU orders its model "
                                 "partition by one (FMI 3.0 sections 2.4.4 and 5.1.1)", v->name);
                        return -EINVAL;
                }
                if (iv == MD_INTERVAL_CHANGING || iv == MD_INTERVAL_COUNTDOWN) {
                        snprintf(why, size, "ScheduledExecution: input Clock '%s' is %s: fmud "
                                 "activates the partitions of periodic and triggered input Clocks "
                                 "only", v->name, iv == MD_INTERVAL_CHANGING ? "changing" : "countdown");
                        return -EINVAL;
                }
        }
        return 0;
}

/* Whether partition a comes before b: higher priority (smaller value), then document order. */
static bool before(const struct md *md, size_t a, size_t b)
{
        uint32_t pa = md->vars[a].attrs.clock.priority, pb = md->vars[b].attrs.clock.priority;

        return pa < pb || (pa == pb && a < b);
}

size_t fmu_se_partitions(const struct md *md, size_t *ret, size_t n)
{
        size_t k = 0;

        for (size_t i = 0; i < md->n_vars; i++) {
                size_t j;

                if (!is_partition(&md->vars[i]))
                        continue;
                /* Insertion sort: a description has few partitions. */
                j = k < n ? k : n;
                while (j > 0 && before(md, i, ret[j - 1])) {
                        if (j < n)
                                ret[j] = ret[j - 1];
                        j--;
                }
                if (j < n)
                        ret[j] = i;
                k++;
        }
        return k;
}
