/*
 * Threshold: a Model Exchange FMU whose one event indicator z = x - c may
 * be exactly 0 where it matters, as hand-written exports' indicators are
 * (a comparison of time or a state with a threshold): x' = slope from
 * x(0) = x0, and the relation above = (z > 0), frozen between events
 * (FMI 3.0 section 3.1.1: a state event is z changing between the
 * domains z > 0 and z <= 0); on_time = 1 makes it z = time - c. switches counts the changes of above, t_switch
 * is the time of the last one. With the defaults z rises through 0 at
 * t = 0.5, a communication point; with c = 0 it starts at 0.
 */
#include "me_model.h"

enum { TIME, X, DER_X, X0, C, SLOPE, ABOVE, SWITCHES, T_SWITCH, Z, ON_TIME, N_VARS };

/* The indicator: of x, or of time with on_time = 1 (exactly 0 at t = c). */
static double zof(const double *v)
{
        return (v[ON_TIME] != 0.0 ? v[TIME] : v[X]) - v[C];
}

static void start(double *v)
{
        v[X0] = 0.0;
        v[C] = 0.5;
        v[SLOPE] = 1.0;
        v[T_SWITCH] = -1.0;
}

static void init(double *v)
{
        v[X] = v[X0];
        v[ABOVE] = zof(v) > 0.0;
}

static void derivatives(double *v)
{
        v[DER_X] = v[SLOPE];
        v[Z] = zof(v);
}

static void indicators(const double *v, double *z)
{
        z[0] = zof(v);
}

static void event(double *v, bool *changed, bool *next_defined, double *next)
{
        double above = zof(v) > 0.0;

        (void) changed;
        (void) next;
        if (above != v[ABOVE]) {
                v[ABOVE] = above;
                v[SWITCHES] += 1.0;
                v[T_SWITCH] = v[TIME];
        }
        *next_defined = false;
}

const struct me_model me_model = {
        .token = "{5a0e7c1d-3b2f-4e6a-8d9c-0f1e2d3c4b5a}",
        .n_vars = N_VARS, .nx = 1, .nz = 1,
        .state_vr = { X }, .der_vr = { DER_X },
        .start = start, .init = init, .derivatives = derivatives, .indicators = indicators,
        .event = event,
};
