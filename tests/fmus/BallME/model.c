/*
 * BallME: a bouncing ball as a Model Exchange FMU: state event on h = 0
 * (restitution e; the ball rests once it rebounds slower than v_min), and a
 * time event at t_switch, where gravity changes from g to g_after. Both
 * come from the FMU the way a tool's export gives them: an event
 * indicator, and nextEventTime from fmi3UpdateDiscreteStates. t_stuck >= 0
 * makes it misbehave from then on: its next time event is always now.
 * t_close >= 0: at the first event from then on, the next time event is
 * one ulp later (FMI allows any later nextEventTime). t_nan >= 0 makes it
 * give NaN from then on, as a broken export does, where nan_what says:
 * 1 the event indicator, 2 der(v), 3 nextEventTime at each event, 4 the
 * state h after each event. t_again >= 0: at the first event from then
 * on, the next time event is that event's own time, once (FMI 3.0
 * section 3.3: the importer handles it at once). zero_bounce = 1 makes it
 * a hand-written export's ball: a bounce leaves h exactly 0, and gravity is
 * switched by the relation contact = (h <= 0), frozen between events, so
 * the ball falls again only once a state event says h left 0 upwards
 * (FMI 3.0 section 3.1.1).
 */
#include <float.h>
#include <math.h>

#include "me_model.h"

enum { TIME, H, DER_H, V, DER_V, G, E, H0, G_AFTER, T_SWITCH, G_NOW, V_MIN, T_STUCK, T_CLOSE, CLOSE_DONE,
       T_NAN, NAN_WHAT, T_AGAIN, AGAIN_DONE, ZERO_BOUNCE, CONTACT, N_VARS };

static void start(double *v)
{
        v[G] = 9.81;
        v[E] = 0.7;
        v[H0] = 1.0;
        v[G_AFTER] = 3.71;
        v[T_SWITCH] = 1.5;
        v[V_MIN] = 0.1;
        v[T_STUCK] = -1.0;
        v[T_CLOSE] = -1.0;
        v[T_NAN] = -1.0;
        v[NAN_WHAT] = 0.0;
        v[T_AGAIN] = -1.0;
}

/* From t_nan on, NaN where nan_what says. */
static bool nan_now(const double *v, double what)
{
        return v[T_NAN] >= 0.0 && v[TIME] >= v[T_NAN] && v[NAN_WHAT] == what;
}

static void init(double *v)
{
        v[H] = v[H0];
        v[V] = 0.0;
        v[G_NOW] = v[TIME] >= v[T_SWITCH] ? v[G_AFTER] : v[G];
        v[CONTACT] = v[ZERO_BOUNCE] != 0.0 && v[H] <= 0.0;
}

static void derivatives(double *v)
{
        v[DER_H] = v[V];
        v[DER_V] = nan_now(v, 2.0) ? NAN : v[CONTACT] != 0.0 ? 0.0 : -v[G_NOW];
}

static void indicators(const double *v, double *z)
{
        z[0] = nan_now(v, 1.0) ? NAN : v[H];
}

static void event(double *v, bool *changed, bool *next_defined, double *next)
{
        /* A broken export: from t_stuck on, the next time event is always now. */
        if (v[T_STUCK] >= 0.0 && v[TIME] >= v[T_STUCK]) {
                *next_defined = true;
                *next = v[TIME];
                return;
        }
        if (v[TIME] >= v[T_SWITCH] && v[G_NOW] != 0.0)
                v[G_NOW] = v[G_AFTER];
        if (v[ZERO_BOUNCE] != 0.0)
                v[CONTACT] = v[H] <= 0.0;
        if (v[H] <= 0.0 && v[V] < 0.0) {
                /* Just above the ground, no new crossing at once; or on it, as many exports do. */
                v[H] = v[ZERO_BOUNCE] != 0.0 ? 0.0 : DBL_MIN;
                v[V] = -v[E] * v[V];
                if (v[V] < v[V_MIN]) {
                        v[V] = 0.0;     /* at rest */
                        v[G_NOW] = 0.0;
                }
                *changed = true;
        }
        *next_defined = v[TIME] < v[T_SWITCH];
        *next = v[T_SWITCH];
        if (v[T_CLOSE] >= 0.0 && v[TIME] >= v[T_CLOSE] && v[CLOSE_DONE] == 0.0) {
                v[CLOSE_DONE] = 1.0;
                *next_defined = true;
                *next = nextafter(v[TIME], INFINITY);
        }
        if (nan_now(v, 3.0)) {
                *next_defined = true;
                *next = NAN;
        }
        if (nan_now(v, 4.0))
                v[H] = NAN;
        if (v[T_AGAIN] >= 0.0 && v[TIME] >= v[T_AGAIN] && v[AGAIN_DONE] == 0.0) {
                v[AGAIN_DONE] = 1.0;
                *next_defined = true;
                *next = v[TIME];
        }
}

const struct me_model me_model = {
        .token = "{b4a1e2f0-6c3d-4e58-9a7b-1d2c3e4f5a60}",
        .n_vars = N_VARS, .nx = 2, .nz = 1,
        .state_vr = { H, V }, .der_vr = { DER_H, DER_V },
        .start = start, .init = init, .derivatives = derivatives, .indicators = indicators,
        .event = event,
};
