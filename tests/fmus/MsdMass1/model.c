/*
 * MsdMass1: mass 1 of a mass-spring-damper chain split into two FMI 3.0
 * Co-Simulation FMUs (MsdMass1, MsdMass2), for co-simulation master tests.
 *
 * Mass 1 hangs on a wall by spring k1 and damper d1; MsdMass2 pulls it
 * with the coupling force F (an input here, an output there):
 *
 *   m1 x1'' = -k1 x1 - d1 x1' + F
 *   m2 x2'' = -F
 *   F       = kc (x2 - x1) + dc (x2' - x1')
 *
 * The coupled system is linear, z' = A z with z = (x1, v1, x2, v2):
 *
 *       [      0             1             0         0     ]
 *   A = [ -(k1+kc)/m1   -(d1+dc)/m1      kc/m1     dc/m1   ]
 *       [      0             0             0         1     ]
 *       [    kc/m2         dc/m2        -kc/m2    -dc/m2   ]
 *
 * so a test computes the monolithic reference as z(t) = exp(A t) z(0).
 * Defaults (m1 = 1, k1 = 10, d1 = 0.5, m2 = 1, kc = 10, dc = 0.2,
 * x1(0) = 0, v1(0) = 0, x2(0) = 1, v2(0) = 0) oscillate visibly and decay
 * over about 10 s.
 *
 * Each fmi3DoStep holds the input F constant (zero-order hold) and
 * integrates with `substeps` classical RK4 steps of h / substeps.
 *
 * Value references: time 0, x1 1, v1 2, F 3, m1 4, k1 5, d1 6, x1_0 7,
 * v1_0 8, substeps 9.
 */
#include <errno.h>

#include "model.h"
#include "rk4.h"

struct model_data {
        double x1;
        double v1;
        double F;
        double m1;
        double k1;
        double d1;
        double x1_0;
        double v1_0;
        int32_t substeps;
};

static const struct var vars[] = {
        VAR_TIME(0),
        VAR_SCALAR(1, "x1", VAR_FLOAT64, VAR_OUTPUT, VAR_CONTINUOUS, VAR_CALCULATED, x1),
        VAR_SCALAR(2, "v1", VAR_FLOAT64, VAR_OUTPUT, VAR_CONTINUOUS, VAR_CALCULATED, v1),
        VAR_SCALAR(3, "F", VAR_FLOAT64, VAR_INPUT, VAR_CONTINUOUS, VAR_EXACT, F),
        VAR_SCALAR(4, "m1", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, m1),
        VAR_SCALAR(5, "k1", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, k1),
        VAR_SCALAR(6, "d1", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, d1),
        VAR_SCALAR(7, "x1_0", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, x1_0),
        VAR_SCALAR(8, "v1_0", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, v1_0),
        VAR_SCALAR(9, "substeps", VAR_INT32, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, substeps),
};

static void start(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        d->F = 0.0;
        d->m1 = 1.0;
        d->k1 = 10.0;
        d->d1 = 0.5;
        d->x1_0 = 0.0;
        d->v1_0 = 0.0;
        d->substeps = 10;
        d->x1 = d->x1_0;
        d->v1 = d->v1_0;
}

static int calculate(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        if (inst_initializing(inst)) {
                d->x1 = d->x1_0;
                d->v1 = d->v1_0;
        }
        return 0;
}

/* Acceleration of mass 1 with the coupling force held at F. */
static double accel(const void *ctx, double x, double v)
{
        const struct model_data *d = ctx;

        return (-d->k1 * x - d->d1 * v + d->F) / d->m1;
}

static int do_step(struct inst *inst, struct step *step)
{
        struct model_data *d = inst_data(inst);

        if (d->substeps < 1 || !(d->m1 > 0.0)) {
                inst_log(inst, FMU_ERROR, "substeps (%d) must be >= 1 and m1 (%g) > 0",
                         (int)d->substeps, d->m1);
                return -EINVAL;
        }
        rk4_steps(&d->x1, &d->v1, step->h / d->substeps, d->substeps, accel, d);
        return 0;
}

const struct model model = {
        .token = "{8f3c6a41-2d0e-4b7a-9c15-5e1f0a7d3b03}",
        .data_size = sizeof(struct model_data),
        .vars = vars,
        .n_vars = sizeof(vars) / sizeof(vars[0]),
        .caps = MODEL_CAN_GET_SET_STATE | MODEL_CAN_SERIALIZE_STATE,
        .start = start,
        .calculate = calculate,
        .do_step = do_step,
};
