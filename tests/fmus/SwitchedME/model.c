/*
 * SwitchedME: x' = s + u - k x from x(0) = x0, as a Model Exchange FMU
 * (no Clocks) with a continuous input u and a discrete input s, which it
 * takes in Event Mode only
 * (FMI 3.0 section 3.2.1), as a tool's export of a plant with a switched
 * input does. Its Event Mode entries are counted in n_enter (the one
 * after initialization too), so a test sees whether an importer enters
 * Event Mode for a value of s (or u) that did not change. SwitchedME has a
 * discrete String input label too (not in the FMI 2.0 export), whose
 * changes fmi3UpdateDiscreteStates counts in n_label. Like a strict export,
 * it refuses a get of its inputs in Continuous-Time Mode (FMI 3.0
 * section 3.2.1 lists none), so an importer must know what it set.
 */
#include "me_model.h"

enum { TIME, X, DER_X, K, X0, S, N_ENTER, N_LABEL, U, N_VARS };
enum { LABEL = N_VARS };        /* a String: not in v */

static void start(double *v)
{
        v[K] = 1.0;
        v[X0] = 0.0;
}

static void init(double *v)
{
        v[X] = v[X0];
}

static void derivatives(double *v)
{
        v[DER_X] = v[S] + v[U] - v[K] * v[X];
}

static void entered(double *v, bool *active)
{
        (void) active;
        v[N_ENTER] += 1.0;
}

const struct me_model me_model = {
        .token = "{7c1d9e24-5a3b-4f60-8e17-2b9c4d6a0f13}",
        .n_vars = N_VARS, .nx = 1, .nz = 0,
        .state_vr = { X }, .der_vr = { DER_X },
        .set = { [S] = ME_SET_EVENT, [U] = ME_SET_CONTINUOUS },
        .no_input_get = true,
        .string_vr = LABEL, .string_changes = N_LABEL,
        .start = start, .init = init, .derivatives = derivatives, .entered = entered,
};
