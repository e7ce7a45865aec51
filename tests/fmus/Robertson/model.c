/*
 * Robertson: Robertson's chemical kinetics as a Model Exchange FMU, the
 * classic stiff system: y1' = -k1 y1 + k3 y2 y3, y2' = k1 y1 - k3 y2 y3 -
 * k2 y2^2, y3' = k2 y2^2, from y = (1, 0, 0), k1 = 0.04, k2 = 3e7,
 * k3 = 1e4. y2 stays near 1e-5: its nominal says so.
 */
#include "me_model.h"

enum { TIME, Y1, DER_Y1, Y2, DER_Y2, Y3, DER_Y3, K1, K2, K3, N_VARS };

static void start(double *v)
{
        v[Y1] = 1.0;
        v[K1] = 0.04;
        v[K2] = 3e7;
        v[K3] = 1e4;
}

static void init(double *v)
{
        (void) v;
}

static void derivatives(double *v)
{
        double r1 = v[K1] * v[Y1], r2 = v[K2] * v[Y2] * v[Y2], r3 = v[K3] * v[Y2] * v[Y3];

        v[DER_Y1] = -r1 + r3;
        v[DER_Y2] = r1 - r3 - r2;
        v[DER_Y3] = r2;
}

const struct me_model me_model = {
        .token = "{3e9d8c7b-6a5f-4e4d-9c3b-2a1f0e9d8c7b}",
        .n_vars = N_VARS, .nx = 3, .nz = 0,
        .state_vr = { Y1, Y2, Y3 }, .der_vr = { DER_Y1, DER_Y2, DER_Y3 },
        .nominal = { 1.0, 1e-5, 1.0 },
        .start = start, .init = init, .derivatives = derivatives,
};
