/*
 * FixedStep: a model integrated with a fixed internal step, as FMUs
 * exported with a fixed-step solver are (FMI 3.0 section 4.4,
 * fixedInternalStepSize; section 4.2.1, lastSuccessfulTime).
 *
 *   x' = u - x, explicit Euler with the internal step dt:
 *   x_{k+1} = x_k + dt (u - x_k),  tau_k = t_start + k dt
 *
 * fmi3DoStep(t, h) takes every whole internal step that ends at or
 * before t + h and returns lastSuccessfulTime = tau (where it got), with
 * earlyReturn = false: "Even if the FMU returns from fmi3DoStep with
 * fmi3OK and earlyReturn = fmi3False, it is allowed that
 * lastSuccessfulTime deviates from the expected currentCommunicationPoint
 * + communicationStepSize" (section 4.2.1). With a communication step
 * smaller than dt, most steps do not advance at all: lastSuccessfulTime is
 * currentCommunicationPoint, and the next call is still expected at
 * currentCommunicationPoint + communicationStepSize.
 *
 * Built twice from this file:
 *   FixedStep       canHandleVariableCommunicationStepSize = true: any
 *                   step is accepted (it lags, as above);
 *   FixedStepRigid  (FIXED_STEP_RIGID) canHandleVariableCommunication-
 *                   StepSize = false: every step must have the size of the
 *                   first, an integer multiple of dt; any other is an
 *                   error, as such FMUs refuse it.
 * Neither can get or set its FMU state.
 *
 * Value references: time 0, x 1, u 2, tau 3, steps 4, dt 5.
 */
#include <errno.h>
#include <math.h>

#include "model.h"

#ifdef FIXED_STEP_RIGID
#define FIXED_STEP_TOKEN "{3d1f9e52-77a0-4c1b-8e2d-6b5a4c3f2e11}"
#else
#define FIXED_STEP_TOKEN "{a4c2e8f1-5b3d-4e6a-9f7c-1d2e3f4a5b60}"
#endif

struct model_data {
        double x;
        double u;
        double tau;
        int32_t steps;
        double dt;
        double t_start;
        double h_first;         /* FixedStepRigid: the step every call must have; 0: none yet */
};

static const struct var vars[] = {
        VAR_TIME(0),
        VAR_SCALAR(1, "x", VAR_FLOAT64, VAR_OUTPUT, VAR_CONTINUOUS, VAR_CALCULATED, x),
        VAR_SCALAR(2, "u", VAR_FLOAT64, VAR_INPUT, VAR_CONTINUOUS, VAR_EXACT, u),
        VAR_SCALAR(3, "tau", VAR_FLOAT64, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, tau),
        VAR_SCALAR(4, "steps", VAR_INT32, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, steps),
        VAR_SCALAR(5, "dt", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, dt),
};

static void start(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        d->u = 1.0;
        d->dt = 0.1;
}

static int calculate(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        if (inst_initializing(inst)) {
                if (!(d->dt > 0) || !isfinite(d->dt)) {
                        inst_log(inst, FMU_ERROR, "dt = %g: must be a positive number", d->dt);
                        return -EINVAL;
                }
                d->x = 0.0;
                d->steps = 0;
                d->t_start = inst_time(inst);
                d->tau = d->t_start;
                d->h_first = 0.0;
        }
        return 0;
}

#ifdef FIXED_STEP_RIGID
static int check_step(struct inst *inst, struct model_data *d, double h)
{
        double k = nearbyint(h / d->dt);

        if (d->h_first == 0.0) {
                if (k < 1 || fabs(k * d->dt - h) > 1e-9 * h) {
                        inst_log(inst, FMU_ERROR, "communicationStepSize %.17g is not an integer "
                                 "multiple of the fixed step %.17g", h, d->dt);
                        return -EINVAL;
                }
                d->h_first = h;
        } else if (h != d->h_first) {
                inst_log(inst, FMU_ERROR, "communicationStepSize %.17g differs from %.17g: "
                         "canHandleVariableCommunicationStepSize is false", h, d->h_first);
                return -EINVAL;
        }
        return 0;
}
#endif

static int do_step(struct inst *inst, struct step *step)
{
        struct model_data *d = inst_data(inst);
        double end = step->t + step->h, tol = 1e-9 * d->dt;

#ifdef FIXED_STEP_RIGID
        if (check_step(inst, d, step->h) < 0)
                return -EINVAL;
#endif
        /* Whole internal steps only; tau from the integer count, never accumulated. */
        while (d->t_start + (double)(d->steps + 1) * d->dt <= end + tol) {
                d->x += d->dt * (d->u - d->x);
                d->steps++;
                d->tau = d->t_start + (double)d->steps * d->dt;
        }
        step->t_end = d->tau;
        return 0;
}

const struct model model = {
        .token = FIXED_STEP_TOKEN,
        .data_size = sizeof(struct model_data),
        .vars = vars,
        .n_vars = sizeof(vars) / sizeof(vars[0]),
        .caps = 0,
        .start = start,
        .calculate = calculate,
        .do_step = do_step,
};
