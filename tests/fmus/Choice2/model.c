/*
 * Choice2: an FMI 2.0 Co-Simulation FMU with an Enumeration input and
 * output, which FMI 2.0 gets and sets as Integers (section 2.2.7,
 * fmi2GetInteger), for connections to FMI 3.0 Enumerations, which travel
 * as Int64.
 *
 * choice_out = choice_in, and choice_real = choice_in as a Real, computed
 * at initialization and after every step.
 *
 * Value references: Integer choice_in 1, choice_out 2; Real choice_real 3.
 */
#include "model.h"

struct model_data {
        int32_t in, out;
        double real;
};

static const struct var vars[] = {
        VAR_SCALAR(1, "choice_in", VAR_INT32, VAR_INPUT, VAR_DISCRETE, VAR_EXACT, in),
        VAR_SCALAR(2, "choice_out", VAR_INT32, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, out),
        VAR_SCALAR(3, "choice_real", VAR_FLOAT64, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, real),
};

static void start(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        d->in = 2;
}

static int calculate(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        d->out = d->in;
        d->real = d->in;
        return 0;
}

static int do_step(struct inst *inst, struct step *step)
{
        (void) inst;
        (void) step;
        return 0;
}

const struct model model = {
        .token = "{8f3c6a41-2d0e-4b7a-9c15-5e1f0a7d3b31}",
        .data_size = sizeof(struct model_data),
        .vars = vars,
        .n_vars = sizeof(vars) / sizeof(vars[0]),
        .caps = 0,
        .start = start,
        .calculate = calculate,
        .do_step = do_step,
};
