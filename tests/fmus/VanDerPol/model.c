/*
 * VanDerPol: the van der Pol oscillator as a Model Exchange FMU,
 * x0' = x1, x1' = mu (1 - x0^2) x1 - x0, from x0 = 2, x1 = 0; mu is a
 * tunable parameter (stiff for large mu), which fmi3SetFloat64 takes in
 * Event Mode but not in Continuous-Time Mode (FMI 3.0 section 3.2.1), as
 * a strict FMU does. t_stop >= 0 is a time event that asks to terminate
 * the simulation there (terminateSimulation of fmi3UpdateDiscreteStates). h_max > 0 makes the derivatives
 * Discard at a point more than h_max after the last accepted time, as an
 * FMU whose equations hold only over short steps does (FMI 3.0 section
 * 3.2.1): the integrator must reduce its step and go on. h_nan > 0 does
 * the same with NaN derivatives and fmi3OK, as an export whose equations
 * overflow at a far trial point does.
 */
#include "me_model.h"

enum { TIME, X0, DER_X0, X1, DER_X1, MU, H_MAX, T_STOP, H_NAN, N_VARS };

static void start(double *v)
{
        v[X0] = 2.0;
        v[X1] = 0.0;
        v[MU] = 1.0;
        v[H_MAX] = 0.0;
        v[T_STOP] = -1.0;
        v[H_NAN] = 0.0;
}

static void init(double *v)
{
        (void) v;
}

static void derivatives(double *v)
{
        v[DER_X0] = v[X1];
        v[DER_X1] = v[MU] * (1.0 - v[X0] * v[X0]) * v[X1] - v[X0];
}

static bool discard(const double *v, double t_accepted)
{
        return v[H_MAX] > 0.0 && v[TIME] - t_accepted > v[H_MAX];
}

static bool overflow(const double *v, double t_accepted)
{
        return v[H_NAN] > 0.0 && v[TIME] - t_accepted > v[H_NAN];
}

static void event(double *v, bool *changed, bool *next_defined, double *next)
{
        *changed = false;
        *next_defined = v[T_STOP] > v[TIME];
        *next = v[T_STOP];
}

static bool terminate(const double *v)
{
        return v[T_STOP] >= 0.0 && v[TIME] >= v[T_STOP];
}

const struct me_model me_model = {
        .token = "{7d0c5f4e-2b1a-4c39-8e6d-5f4a3b2c1d0e}",
        .n_vars = N_VARS, .nx = 2, .nz = 0,
        .state_vr = { X0, X1 }, .der_vr = { DER_X0, DER_X1 },
        .set = { [MU] = ME_SET_EVENT },
        .start = start, .init = init, .derivatives = derivatives,
        .discard = discard, .overflow = overflow, .event = event, .terminate = terminate,
};
