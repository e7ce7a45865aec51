/*
 * LinearOde: x' = -k x, solved exactly, with ten direct-feedthrough
 * channels, as an FMI 3.0 Co-Simulation FMU (and, with the same code, the
 * FMI 2.0 LinearOde2 and the MissingSymbol FMU).
 *
 *   x(t_start) = x0
 *   x(t + h)   = x(t) exp(-k h)        exact: x(t) = x0 exp(-k (t - t_start))
 *   der_x      = -k x                  (k tunable: a change applies from the
 *   y_i        = x + u_i, i = 0..9      next step on)
 *
 * Tests compare x with x0 exp(-k t) to rounding, and use the ten inputs
 * and outputs as a 10-in/10-out benchmark. Output derivatives up to order
 * 2 are exact: d^n x/dt^n = (-k)^n x, d^n y_i/dt^n = (-k)^n x (inputs held
 * constant during a step), d^n der_x/dt^n = (-k)^(n+1) x.
 *
 * The locals tolerance_seen and tolerance_defined show the relative
 * tolerance the importer gave in fmi3EnterInitializationMode (LinearOde2:
 * fmi2SetupExperiment); tolerance_seen is 0 when none was given.
 * LinearOde's DefaultExperiment suggests tolerance 1e-5; LinearOde2's none.
 *
 * Value references: time 0, x 1, der_x 2, k 3, x0 4, tolerance_seen 5,
 * tolerance_defined 6, u0..u9 10..19, y0..y9 20..29; LinearOde2 also
 * band 30 = 1 + (x < 0.5) + (x < 0.25), an Enumeration (high, middle, low),
 * and t_stop 31: a step past it (when not negative) ends there and asks to
 * stop the simulation.
 */
#include <math.h>

#include "model.h"

/* LinearOde2 includes this file with its own token. */
#ifndef LINEAR_ODE_TOKEN
#define LINEAR_ODE_TOKEN "{8f3c6a41-2d0e-4b7a-9c15-5e1f0a7d3b01}"
#endif

#define N_CHANNELS 10

struct model_data {
        double x;
        double der_x;
        double k;
        double x0;
        double tolerance_seen;
        bool tolerance_defined;
        double u[N_CHANNELS];
        double y[N_CHANNELS];
        int32_t band;
        double t_stop;
};

#define U(i) VAR_SCALAR(10 + (i), "u" #i, VAR_FLOAT64, VAR_INPUT, VAR_CONTINUOUS, VAR_EXACT, u[i])
#define Y(i) VAR_SCALAR(20 + (i), "y" #i, VAR_FLOAT64, VAR_OUTPUT, VAR_CONTINUOUS, VAR_CALCULATED, y[i])

static const struct var vars[] = {
        VAR_TIME(0),
        VAR_SCALAR(1, "x", VAR_FLOAT64, VAR_OUTPUT, VAR_CONTINUOUS, VAR_CALCULATED, x),
        VAR_SCALAR(2, "der_x", VAR_FLOAT64, VAR_OUTPUT, VAR_CONTINUOUS, VAR_CALCULATED, der_x),
        VAR_SCALAR(3, "k", VAR_FLOAT64, VAR_PARAMETER, VAR_TUNABLE, VAR_EXACT, k),
        VAR_SCALAR(4, "x0", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, x0),
        VAR_SCALAR(5, "tolerance_seen", VAR_FLOAT64, VAR_LOCAL, VAR_FIXED, VAR_CALCULATED,
                   tolerance_seen),
        VAR_SCALAR(6, "tolerance_defined", VAR_BOOLEAN, VAR_LOCAL, VAR_FIXED, VAR_CALCULATED,
                   tolerance_defined),
        U(0), U(1), U(2), U(3), U(4), U(5), U(6), U(7), U(8), U(9),
        Y(0), Y(1), Y(2), Y(3), Y(4), Y(5), Y(6), Y(7), Y(8), Y(9),
#ifdef LINEAR_ODE_FMI2
        /* LinearOde2: an Enumeration, which FMI 2.0 gets and sets as an Integer. */
        VAR_SCALAR(30, "band", VAR_INT32, VAR_LOCAL, VAR_DISCRETE, VAR_CALCULATED, band),
        /* LinearOde2: a step past t_stop >= 0 ends there and asks to stop. */
        VAR_SCALAR(31, "t_stop", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, t_stop),
#endif
};

static void start(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        d->k = 1.0;
        d->x0 = 1.0;
        d->x = d->x0;
        d->t_stop = -1.0;
        for (int i = 0; i < N_CHANNELS; i++)
                d->u[i] = 0.0;
}

static int calculate(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        if (inst_initializing(inst)) {
                d->x = d->x0;
                d->tolerance_defined = inst_tolerance(inst, &d->tolerance_seen);
        }
        d->der_x = -d->k * d->x;
        for (int i = 0; i < N_CHANNELS; i++)
                d->y[i] = d->x + d->u[i];
        d->band = 1 + (d->x < 0.5) + (d->x < 0.25);
        return 0;
}

static int do_step(struct inst *inst, struct step *step)
{
        struct model_data *d = inst_data(inst);
        double h = step->h;

        if (d->t_stop >= 0.0 && step->t + h > d->t_stop && d->t_stop >= step->t) {
                h = d->t_stop - step->t;
                step->t_end = d->t_stop;
                step->terminate = true;
        }
        d->x *= exp(-d->k * h);
        return 0;
}

static int output_derivative(struct inst *inst, const struct var *v, int order, double *values)
{
        struct model_data *d = inst_data(inst);
        double dn = pow(-d->k, order) * d->x;   /* d^n x / dt^n */

        *values = v->vr == 2 ? -d->k * dn : dn;
        return 0;
}

const struct model model = {
        .token = LINEAR_ODE_TOKEN,
        .data_size = sizeof(struct model_data),
        .vars = vars,
        .n_vars = sizeof(vars) / sizeof(vars[0]),
        .caps = MODEL_CAN_GET_SET_STATE | MODEL_CAN_SERIALIZE_STATE,
        .max_output_derivative_order = 2,
        .start = start,
        .calculate = calculate,
        .do_step = do_step,
        .output_derivative = output_derivative,
};
