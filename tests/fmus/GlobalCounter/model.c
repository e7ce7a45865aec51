/*
 * GlobalCounter: an FMI 3.0 Co-Simulation FMU with process-global state,
 * the kind that declares canBeInstantiatedOnlyOncePerProcess="true", for
 * tests that show why such FMUs need a process per instance.
 *
 * Every fmi3DoStep of any instance in the process increments one static
 * counter; the output `count` is that counter as read after the instance's
 * own last step (or at initialization), so two instances in one process
 * see each other's steps. `local_count` counts the instance's own steps.
 * The FMU does not refuse a second instantiation, so a test can show the
 * interference. The counter is not part of the FMU state, so
 * canGetAndSetFMUState is false.
 *
 * Value references: time 0, count 1, local_count 2.
 */
#include <stdatomic.h>

#include "model.h"

/* Shared by every instance in the process: the point of this model. */
static _Atomic int64_t global_count;

struct model_data {
        int64_t count;
        int64_t local_count;
};

static const struct var vars[] = {
        VAR_TIME(0),
        VAR_SCALAR(1, "count", VAR_INT64, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, count),
        VAR_SCALAR(2, "local_count", VAR_INT64, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED,
                   local_count),
};

static void start(struct inst *inst)
{
        (void) inst;    /* nothing to start: all outputs are calculated */
}

static int calculate(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        if (inst_initializing(inst))
                d->local_count = 0;
        d->count = atomic_load(&global_count);
        return 0;
}

static int do_step(struct inst *inst, struct step *step)
{
        struct model_data *d = inst_data(inst);

        (void) step;
        atomic_fetch_add(&global_count, 1);
        d->local_count++;
        return 0;
}

const struct model model = {
        .token = "{8f3c6a41-2d0e-4b7a-9c15-5e1f0a7d3b08}",
        .data_size = sizeof(struct model_data),
        .vars = vars,
        .n_vars = sizeof(vars) / sizeof(vars[0]),
        .caps = 0,
        .start = start,
        .calculate = calculate,
        .do_step = do_step,
};
