/*
 * VectorGain: a gain on a vector whose length is a structural parameter,
 * as a tool exports a model with an array size left to the importer
 * (FMI 3.0 sections 2.4.7.2 and 2.3.3), for tests of structural
 * parameters set at load.
 *
 *   y[i] = k * u[i]     for i = 1..n
 *
 * n is a fixed structural parameter (start 3, min 1, max 16): set only in
 * Configuration Mode, before initialization. u starts at 1 in every
 * element; k is a tunable parameter (start 2).
 *
 * Value references: time 0, n 1, k 2, u 3, y 4.
 */
#include "model.h"

#define CAP 16

struct model_data {
        uint64_t n;
        double k;
        double u[CAP], y[CAP];
};

static const struct var vars[] = {
        VAR_TIME(0),
        VAR_SCALAR(1, "n", VAR_UINT64, VAR_STRUCTURAL_PARAMETER, VAR_FIXED, VAR_EXACT, n),
        VAR_SCALAR(2, "k", VAR_FLOAT64, VAR_PARAMETER, VAR_TUNABLE, VAR_EXACT, k),
        VAR_SIZED(3, "u", VAR_FLOAT64, VAR_INPUT, VAR_CONTINUOUS, VAR_EXACT, u, 1, CAP),
        VAR_SIZED(4, "y", VAR_FLOAT64, VAR_OUTPUT, VAR_CONTINUOUS, VAR_CALCULATED, y, 1, CAP),
};

static void start(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        d->n = 3;
        d->k = 2;
        for (int i = 0; i < CAP; i++)
                d->u[i] = 1;
}

static int calculate(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        for (uint64_t i = 0; i < d->n && i < CAP; i++)
                d->y[i] = d->k * d->u[i];
        return 0;
}

static int do_step(struct inst *inst, struct step *step)
{
        (void) inst;
        (void) step;    /* the outputs follow in calculate() */
        return 0;
}

/* n set in Configuration Mode: the elements past the old length start at 1 as the first did. */
static int configure(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        for (uint64_t i = 0; i < d->n && i < CAP; i++)
                d->u[i] = 1;
        return 0;
}

const struct model model = {
        .token = "{5b0e7c2a-93d4-4f61-8a2e-1c7d9e3f6b40}",
        .data_size = sizeof(struct model_data),
        .vars = vars,
        .n_vars = sizeof(vars) / sizeof(vars[0]),
        .start = start,
        .calculate = calculate,
        .do_step = do_step,
        .configure = configure,
};
