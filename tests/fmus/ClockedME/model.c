/*
 * ClockedME: a Model Exchange FMU with Clocks, as a modelling tool exports
 * a continuous plant with a sampled controller partition: x' = u - k x from
 * x(0) = x0; an input Clock sample (periodic, interval 0.1 in the
 * description) whose partition holds xs = x and counts its ticks in
 * n_sample; an output Clock cross that ticks at the state event where x
 * falls to level + u (indicator x - level - u), with t_cross = time there
 * and its ticks in n_cross; a discrete input d it takes in Event Mode only,
 * and its Event Mode entries counted in n_enter (the one after
 * initialization too). A time event at t_ev sets n_tev to 1, one at
 * t_stop asks to terminate, and one at t_dis is discarded (none where
 * negative). With the defaults (u = 0)
 * x = exp(-t) and cross ticks once, at t = ln 2.
 */
#include <math.h>

#include "me_model.h"

enum { TIME, X, DER_X, K, X0, LEVEL, XS, N_SAMPLE, T_CROSS, N_CROSS, ABOVE, Z, U, D, N_ENTER, T_EV, N_TEV, T_STOP,
       T_DIS, N_VARS };
enum { SAMPLE = 100, CROSS = 101 };

static void start(double *v)
{
        v[K] = 1.0;
        v[X0] = 1.0;
        v[LEVEL] = 0.5;
        v[T_CROSS] = -1.0;
        v[T_EV] = -1.0;
        v[T_STOP] = -1.0;
        v[T_DIS] = -1.0;
}

static void init(double *v)
{
        v[X] = v[X0];
        v[ABOVE] = v[X] - v[LEVEL] > 0.0;
}

static void derivatives(double *v)
{
        v[DER_X] = v[U] - v[K] * v[X];
        v[Z] = v[X] - v[LEVEL] - v[U];
}

static void indicators(const double *v, double *z)
{
        z[0] = v[X] - v[LEVEL] - v[U];
}

/* The partition of sample (the only input Clock, 0). */
static void tick(double *v, size_t i)
{
        (void) i;
        v[XS] = v[X];
        v[N_SAMPLE] += 1.0;
}

/*
 * x fell to level + u since the last look (a state event, or u set in
 * Event Mode): cross (active[1]) ticks. Whether it did.
 */
static bool crossed(double *v, bool *active)
{
        bool above = v[X] - v[LEVEL] - v[U] > 0.0, fell = v[ABOVE] != 0.0 && !above;

        if (fell) {
                active[1] = true;
                v[T_CROSS] = v[TIME];
                v[N_CROSS] += 1.0;
        }
        v[ABOVE] = above;
        return fell;
}

static void entered(double *v, bool *active)
{
        v[N_ENTER] += 1.0;
        (void) crossed(v, active);
}

/* The time events of t_ev and t_stop: the next one after now. */
static void event(double *v, bool *changed, bool *next_defined, double *next)
{
        double t = v[TIME], n = INFINITY;

        *changed = false;
        if (v[T_EV] >= 0.0 && t >= v[T_EV])
                v[N_TEV] = 1.0;
        if (v[T_EV] > t)
                n = v[T_EV];
        if (v[T_STOP] > t && v[T_STOP] < n)
                n = v[T_STOP];
        if (v[T_DIS] > t && v[T_DIS] < n)
                n = v[T_DIS];
        *next_defined = n < INFINITY;
        *next = n;
}

static bool terminate(const double *v)
{
        return v[T_STOP] >= 0.0 && v[TIME] >= v[T_STOP];
}

static bool discard_event(const double *v)
{
        return v[T_DIS] >= 0.0 && v[TIME] >= v[T_DIS];
}

const struct me_model me_model = {
        .token = "{3f6e2a1c-8d4b-4e7a-9c05-b1d2e3f4a5c6}",
        .n_vars = N_VARS, .nx = 1, .nz = 1,
        .state_vr = { X }, .der_vr = { DER_X },
        .set = { [U] = ME_SET_CONTINUOUS, [D] = ME_SET_EVENT },
        .start = start, .init = init, .derivatives = derivatives, .indicators = indicators,
        .n_clocks = 2,
        .clocks = { { SAMPLE, false }, { CROSS, true } },
        .clocked_by = { [XS] = 1, [T_CROSS] = 2 },
        .event = event, .terminate = terminate, .discard_event = discard_event,
        .tick = tick, .entered = entered, .updated = crossed,
};
