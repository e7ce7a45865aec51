/*
 * MsdMass2: mass 2 of the mass-spring-damper chain split into MsdMass1 and
 * MsdMass2 (FMI 3.0 Co-Simulation). Mass 2 is free but for the coupling
 * spring kc and damper dc to mass 1, whose position and velocity are
 * inputs here; the coupling force F is an output that MsdMass1 takes as
 * its input:
 *
 *   m1 x1'' = -k1 x1 - d1 x1' + F      (in MsdMass1)
 *   m2 x2'' = -F
 *   F       = kc (x2 - x1) + dc (x2' - x1')    (direct feedthrough of x1, v1)
 *
 * The coupled system is linear, z' = A z with z = (x1, v1, x2, v2):
 *
 *       [      0             1             0         0     ]
 *   A = [ -(k1+kc)/m1   -(d1+dc)/m1      kc/m1     dc/m1   ]
 *       [      0             0             0         1     ]
 *       [    kc/m2         dc/m2        -kc/m2    -dc/m2   ]
 *
 * so a test computes the monolithic reference as z(t) = exp(A t) z(0).
 * Defaults: m2 = 1, kc = 10, dc = 0.2, x2(0) = 1, v2(0) = 0 (see MsdMass1
 * for the rest).
 *
 * Each fmi3DoStep holds the inputs x1, v1 constant (zero-order hold) and
 * integrates with `substeps` classical RK4 steps of h / substeps; F is
 * then computed from the new x2, v2 and the held inputs.
 *
 * Value references: time 0, x2 1, v2 2, F 3, x1 4, v1 5, m2 6, kc 7,
 * dc 8, x2_0 9, v2_0 10, substeps 11.
 */
#include <errno.h>

#include "model.h"
#include "rk4.h"

struct model_data {
        double x2;
        double v2;
        double F;
        double x1;
        double v1;
        double m2;
        double kc;
        double dc;
        double x2_0;
        double v2_0;
        int32_t substeps;
};

static const struct var vars[] = {
        VAR_TIME(0),
        VAR_SCALAR(1, "x2", VAR_FLOAT64, VAR_OUTPUT, VAR_CONTINUOUS, VAR_CALCULATED, x2),
        VAR_SCALAR(2, "v2", VAR_FLOAT64, VAR_OUTPUT, VAR_CONTINUOUS, VAR_CALCULATED, v2),
        VAR_SCALAR(3, "F", VAR_FLOAT64, VAR_OUTPUT, VAR_CONTINUOUS, VAR_CALCULATED, F),
        VAR_SCALAR(4, "x1", VAR_FLOAT64, VAR_INPUT, VAR_CONTINUOUS, VAR_EXACT, x1),
        VAR_SCALAR(5, "v1", VAR_FLOAT64, VAR_INPUT, VAR_CONTINUOUS, VAR_EXACT, v1),
        VAR_SCALAR(6, "m2", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, m2),
        VAR_SCALAR(7, "kc", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, kc),
        VAR_SCALAR(8, "dc", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, dc),
        VAR_SCALAR(9, "x2_0", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, x2_0),
        VAR_SCALAR(10, "v2_0", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, v2_0),
        VAR_SCALAR(11, "substeps", VAR_INT32, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, substeps),
};

static void start(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        d->x1 = 0.0;
        d->v1 = 0.0;
        d->m2 = 1.0;
        d->kc = 10.0;
        d->dc = 0.2;
        d->x2_0 = 1.0;
        d->v2_0 = 0.0;
        d->substeps = 10;
        d->x2 = d->x2_0;
        d->v2 = d->v2_0;
}

static double force(const struct model_data *d, double x2, double v2)
{
        return d->kc * (x2 - d->x1) + d->dc * (v2 - d->v1);
}

static int calculate(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        if (inst_initializing(inst)) {
                d->x2 = d->x2_0;
                d->v2 = d->v2_0;
        }
        d->F = force(d, d->x2, d->v2);
        return 0;
}

static double accel(const void *ctx, double x, double v)
{
        const struct model_data *d = ctx;

        return -force(d, x, v) / d->m2;
}

static int do_step(struct inst *inst, struct step *step)
{
        struct model_data *d = inst_data(inst);

        if (d->substeps < 1 || !(d->m2 > 0.0)) {
                inst_log(inst, FMU_ERROR, "substeps (%d) must be >= 1 and m2 (%g) > 0",
                         (int)d->substeps, d->m2);
                return -EINVAL;
        }
        rk4_steps(&d->x2, &d->v2, step->h / d->substeps, d->substeps, accel, d);
        return 0;
}

const struct model model = {
        .token = "{8f3c6a41-2d0e-4b7a-9c15-5e1f0a7d3b04}",
        .data_size = sizeof(struct model_data),
        .vars = vars,
        .n_vars = sizeof(vars) / sizeof(vars[0]),
        .caps = MODEL_CAN_GET_SET_STATE | MODEL_CAN_SERIALIZE_STATE,
        .start = start,
        .calculate = calculate,
        .do_step = do_step,
};
