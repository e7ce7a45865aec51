/*
 * Scripted: an FMI 3.0 Co-Simulation FMU for master tests and benchmarks
 * whose misbehaviour its parameters script:
 *
 *   x' = u              integrated exactly over each step (u held)
 *   steps               number of completed steps
 *   fail_at             a step starting at t >= fail_at returns fmi3Error
 *   stop_at             a step ending at t + h >= stop_at returns
 *                       terminateSimulation = true
 *   spin                iterations of busy arithmetic per step, so a step
 *                       costs a known amount of CPU time
 *   sleep_at, sleep_ms  the first step starting at t >= sleep_at sleeps
 *                       sleep_ms milliseconds, once: a stall of known length
 *
 * Value references: time 0, u 1, x 2, steps 3, fail_at 4, stop_at 5,
 * spin 6, sleep_at 7, sleep_ms 8.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <time.h>

#include "model.h"

struct model_data {
        double u;
        double x;
        int32_t steps;
        double fail_at;
        double stop_at;
        int32_t spin;
        double sleep_at;
        int32_t sleep_ms;
        bool slept;
};

static const struct var vars[] = {
        VAR_TIME(0),
        VAR_SCALAR(1, "u", VAR_FLOAT64, VAR_INPUT, VAR_CONTINUOUS, VAR_EXACT, u),
        VAR_SCALAR(2, "x", VAR_FLOAT64, VAR_OUTPUT, VAR_CONTINUOUS, VAR_CALCULATED, x),
        VAR_SCALAR(3, "steps", VAR_INT32, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, steps),
        VAR_SCALAR(4, "fail_at", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, fail_at),
        VAR_SCALAR(5, "stop_at", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, stop_at),
        VAR_SCALAR(6, "spin", VAR_INT32, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, spin),
        VAR_SCALAR(7, "sleep_at", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, sleep_at),
        VAR_SCALAR(8, "sleep_ms", VAR_INT32, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, sleep_ms),
};

static void start(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        d->u = 0.0;
        d->fail_at = 1e300;
        d->stop_at = 1e300;
        d->spin = 0;
        d->sleep_at = 1e300;
        d->sleep_ms = 0;
        d->slept = false;
}

static int calculate(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        if (inst_initializing(inst)) {
                d->x = 0.0;
                d->steps = 0;
        }
        return 0;
}

/* Work the compiler cannot drop: a dependent chain of multiply-adds. */
static double busy(int32_t n)
{
        volatile double acc = 1.0;

        for (int32_t i = 0; i < n; i++)
                acc = acc * 0.999999 + 1e-9;
        return acc;
}

static int do_step(struct inst *inst, struct step *step)
{
        struct model_data *d = inst_data(inst);

        if (step->t >= d->fail_at) {
                inst_log(inst, FMU_ERROR, "scripted failure at t = %.17g (fail_at = %g)", step->t,
                         d->fail_at);
                return -EIO;
        }
        if (d->spin > 0)
                (void) busy(d->spin);
        if (!d->slept && d->sleep_ms > 0 && step->t >= d->sleep_at) {
                struct timespec ts = { d->sleep_ms / 1000, (long)(d->sleep_ms % 1000) * 1000000L };

                d->slept = true;
                while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                        ;
        }
        d->x += d->u * step->h;
        d->steps++;
        step->terminate = step->t + step->h >= d->stop_at;
        return 0;
}

const struct model model = {
        .token = "{5c1a7e02-9b3d-4f6e-8a21-0d4c6b9e7f13}",
        .data_size = sizeof(struct model_data),
        .vars = vars,
        .n_vars = sizeof(vars) / sizeof(vars[0]),
        .caps = MODEL_CAN_GET_SET_STATE | MODEL_CAN_SERIALIZE_STATE,
        .start = start,
        .calculate = calculate,
        .do_step = do_step,
};
