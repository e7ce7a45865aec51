/*
 * IntermediateProbe: an FMI 3.0 Co-Simulation FMU that exercises
 * Intermediate Update Mode (section 4.2.2) and records what the importer
 * did in it, for tests of an importer's intermediate update callback.
 *
 *   y' = u          y(t_start) = 0, integrated with `substeps` equal
 *                   internal steps per fmi3DoStep, u held over each one
 *
 * After each internal step, at t_j = t + j h / substeps (j = 1..substeps),
 * the FMU calls the intermediateUpdate callback, if the importer gave one,
 * with intermediateVariableSetRequested, intermediateVariableGetAllowed
 * and intermediateStepFinished true, and canReturnEarly = earlyReturnAllowed.
 * In the callback the importer may read y (intermediateUpdate="true") and
 * then set u (intermediateUpdate="true"); the new u drives the next
 * internal step. Per fmi3DoStep it records:
 *
 *   n_updates   number of callback invocations
 *   sum_u       sum of the value of u after each invocation
 *   last_u      value of u after the last invocation
 *   last_t      intermediateUpdateTime of the last invocation
 *
 * If the callback requests an early return (and canReturnEarly was true)
 * before the last internal step, fmi3DoStep returns at that t_j with
 * earlyReturn = true and lastSuccessfulTime = t_j.
 *
 * With threaded = 1 the internal steps, and so the callbacks, run on a
 * thread of the FMU's own, joined within fmi3DoStep, as a solver thread
 * of an export's does (section 4.2.2 does not say which thread calls).
 *
 * Value references: time 0, u 1, y 2, n_updates 3, last_u 4, sum_u 5,
 * last_t 6, substeps 7, threaded 8.
 */
#include <errno.h>
#include <pthread.h>

#include "model.h"

struct model_data {
        double u;
        double y;
        int32_t n_updates;
        double last_u;
        double sum_u;
        double last_t;
        int32_t substeps;
        int32_t threaded;
};

static const struct var vars[] = {
        VAR_TIME(0),
        VAR_SCALAR_IU(1, "u", VAR_FLOAT64, VAR_INPUT, VAR_CONTINUOUS, VAR_EXACT, u),
        VAR_SCALAR_IU(2, "y", VAR_FLOAT64, VAR_OUTPUT, VAR_CONTINUOUS, VAR_CALCULATED, y),
        VAR_SCALAR(3, "n_updates", VAR_INT32, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, n_updates),
        VAR_SCALAR(4, "last_u", VAR_FLOAT64, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, last_u),
        VAR_SCALAR(5, "sum_u", VAR_FLOAT64, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, sum_u),
        VAR_SCALAR(6, "last_t", VAR_FLOAT64, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, last_t),
        VAR_SCALAR(7, "substeps", VAR_INT32, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, substeps),
        VAR_SCALAR(8, "threaded", VAR_INT32, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, threaded),
};

static void start(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        d->u = 0.0;
        d->substeps = 4;
        d->threaded = 0;
}

static int calculate(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        if (inst_initializing(inst)) {
                d->y = 0.0;
                d->n_updates = 0;
                d->last_u = 0.0;
                d->sum_u = 0.0;
                d->last_t = inst_time(inst);
        }
        return 0;
}

static int substeps(struct inst *inst, struct step *step)
{
        struct model_data *d = inst_data(inst);
        double t_prev = step->t;

        d->n_updates = 0;
        d->sum_u = 0.0;
        for (int32_t j = 1; j <= d->substeps; j++) {
                /* The last internal step ends exactly at t + h. */
                double tj = j == d->substeps ? step->t + step->h :
                            step->t + step->h * j / d->substeps;
                struct intermediate iu = {
                        .t = tj,
                        .set_requested = true,
                        .get_allowed = true,
                        .step_finished = true,
                        .can_return_early = step->early_return_allowed,
                };
                int r;

                d->y += d->u * (tj - t_prev);
                t_prev = tj;
                if (!inst_has_intermediate_update(inst))
                        continue;
                r = inst_intermediate_update(inst, &iu);
                if (r < 0)
                        return r;
                d->n_updates++;
                d->sum_u += d->u;
                d->last_u = d->u;
                d->last_t = tj;
                if (iu.early_return_requested && j < d->substeps) {
                        step->t_end = tj;
                        step->early_return = true;
                        return 0;
                }
        }
        return 0;
}

struct solver {
        struct inst *inst;
        struct step *step;
        int r;
};

static void *solve(void *arg)
{
        struct solver *s = arg;

        s->r = substeps(s->inst, s->step);
        return NULL;
}

static int do_step(struct inst *inst, struct step *step)
{
        struct model_data *d = inst_data(inst);
        struct solver s = { inst, step, 0 };
        pthread_t t;

        if (d->substeps < 1) {
                inst_log(inst, FMU_ERROR, "substeps (%d) must be >= 1", (int)d->substeps);
                return -EINVAL;
        }
        if (!d->threaded)
                return substeps(inst, step);
        if (pthread_create(&t, NULL, solve, &s) != 0) {
                inst_log(inst, FMU_ERROR, "cannot start the solver thread");
                return -EAGAIN;
        }
        pthread_join(t, NULL);
        return s.r;
}

const struct model model = {
        .token = "{8f3c6a41-2d0e-4b7a-9c15-5e1f0a7d3b07}",
        .data_size = sizeof(struct model_data),
        .vars = vars,
        .n_vars = sizeof(vars) / sizeof(vars[0]),
        .caps = MODEL_CAN_GET_SET_STATE | MODEL_CAN_SERIALIZE_STATE |
                MODEL_PROVIDES_INTERMEDIATE | MODEL_MIGHT_RETURN_EARLY |
                MODEL_EARLY_RETURN_AFTER_IU,
        .start = start,
        .calculate = calculate,
        .do_step = do_step,
};
