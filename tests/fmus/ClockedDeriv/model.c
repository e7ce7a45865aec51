/*
 * ClockedDeriv: a linear system with known Jacobians and a clocked part,
 * as an FMI 3.0 Co-Simulation FMU with Event Mode, directional and adjoint
 * derivatives, per-element dependencies and Clocks.
 *
 * Continuous part (x = (x1, x2) states, u = (u1, u2) inputs, k tunable):
 *   der_x = F x + G u          F = [-1 0.5; 0 -2], G = [1 0; 0 3]
 *   y     = A x + k B u        A = [1 2; 0 4],     B = [5 0; 0 -6]
 * so every partial derivative is a known number: d y / d x = A,
 * d y / d u = k B, d y_i / d k = (B u)_i, d der_x / d x = F, d der_x / d u = G.
 * A step integrates der_x with ten explicit Euler substeps (deterministic,
 * not exact; only the Jacobians are checked against numbers).
 *
 * Clocked part: the input Clock tick (periodic, intervalVariability
 * tunable: interval and shift are set and got through the Clock timing
 * functions) clocks the input cu and the output cy = 2 cu. The output
 * Clock hi ticks in the Event Mode in which tick is active with cu > 1.
 * fmi3UpdateDiscreteStates deactivates both Clocks (section 2.2.7.2).
 *
 * The output hy = 10 cu is clocked by hi: it changes and may be accessed
 * only while hi ticks. The input cw is clocked by both tick and trig: it
 * may be set while either ticks.
 *
 * Three more input Clocks clock nothing and exist for their types: slow
 * (fixed periodic, interval 0.5, no fractions), trig (triggered, cannot
 * be deactivated) and sub (triggered, itself clocked by tick: it may be
 * set only while tick is active).
 *
 * Clock timing of tick and slow: interval and shift may be set and got in
 * Initialization Mode, the interval of tick also in Event Mode (table 5);
 * an interval must be > 0, a shift >= 0. Fractions are kept as given;
 * decimals as counter/resolution with resolution 1000. The qualifier of a
 * get is fmi3IntervalChanged once after each change, then
 * fmi3IntervalUnchanged.
 *
 * Value references: time 0, x1 1, x2 2, der_x1 3, der_x2 4, u1 5, u2 6,
 * y1 7, y2 8, k 9, tick 10, cu 11, cy 12, hi 13, slow 14, trig 15, hy 16,
 * sub 17, cw 18.
 */
#include <errno.h>
#include <math.h>

#include "model.h"

#define DECIMAL_RESOLUTION 1000
#define SUBSTEPS 10

enum {
        VR_X1 = 1, VR_X2, VR_DER_X1, VR_DER_X2, VR_U1, VR_U2, VR_Y1, VR_Y2, VR_K,
        VR_TICK, VR_CU, VR_CY, VR_HI, VR_SLOW, VR_TRIG, VR_HY, VR_SUB, VR_CW,
};

/* The time-based Clocks: tick and slow. */
#define N_TIMED 2

static const double A[2][2] = { { 1.0, 2.0 }, { 0.0, 4.0 } };
static const double B[2][2] = { { 5.0, 0.0 }, { 0.0, -6.0 } };
static const double F[2][2] = { { -1.0, 0.5 }, { 0.0, -2.0 } };
static const double G[2][2] = { { 1.0, 0.0 }, { 0.0, 3.0 } };

/* A Clock's interval or shift: counter / resolution. */
struct timing {
        uint64_t counter;
        uint64_t resolution;
};

struct model_data {
        double x[2];
        double der_x[2];
        double u[2];
        double y[2];
        double k;
        bool tick;
        double cu;
        double cy;
        bool hi;
        bool slow;
        bool trig;
        double hy;
        bool sub;
        double cw;
        struct timing interval[N_TIMED];        /* [0] tick, [1] slow */
        struct timing shift[N_TIMED];
        bool interval_changed[N_TIMED];         /* not yet reported by a get */
};

static const struct var vars[] = {
        VAR_TIME(0),
        VAR_SCALAR(VR_X1, "x1", VAR_FLOAT64, VAR_LOCAL, VAR_CONTINUOUS, VAR_EXACT, x[0]),
        VAR_SCALAR(VR_X2, "x2", VAR_FLOAT64, VAR_LOCAL, VAR_CONTINUOUS, VAR_EXACT, x[1]),
        VAR_SCALAR(VR_DER_X1, "der_x1", VAR_FLOAT64, VAR_LOCAL, VAR_CONTINUOUS, VAR_CALCULATED, der_x[0]),
        VAR_SCALAR(VR_DER_X2, "der_x2", VAR_FLOAT64, VAR_LOCAL, VAR_CONTINUOUS, VAR_CALCULATED, der_x[1]),
        VAR_SCALAR(VR_U1, "u1", VAR_FLOAT64, VAR_INPUT, VAR_CONTINUOUS, VAR_EXACT, u[0]),
        VAR_SCALAR(VR_U2, "u2", VAR_FLOAT64, VAR_INPUT, VAR_CONTINUOUS, VAR_EXACT, u[1]),
        VAR_SCALAR(VR_Y1, "y1", VAR_FLOAT64, VAR_OUTPUT, VAR_CONTINUOUS, VAR_CALCULATED, y[0]),
        VAR_SCALAR(VR_Y2, "y2", VAR_FLOAT64, VAR_OUTPUT, VAR_CONTINUOUS, VAR_CALCULATED, y[1]),
        VAR_SCALAR(VR_K, "k", VAR_FLOAT64, VAR_PARAMETER, VAR_TUNABLE, VAR_EXACT, k),
        VAR_SCALAR(VR_TICK, "tick", VAR_CLOCK, VAR_INPUT, VAR_DISCRETE, VAR_EXACT, tick),
        VAR_SCALAR(VR_CU, "cu", VAR_FLOAT64, VAR_INPUT, VAR_DISCRETE, VAR_EXACT, cu),
        VAR_SCALAR(VR_CY, "cy", VAR_FLOAT64, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, cy),
        VAR_SCALAR(VR_HI, "hi", VAR_CLOCK, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, hi),
        VAR_SCALAR(VR_SLOW, "slow", VAR_CLOCK, VAR_INPUT, VAR_DISCRETE, VAR_EXACT, slow),
        VAR_SCALAR(VR_TRIG, "trig", VAR_CLOCK, VAR_INPUT, VAR_DISCRETE, VAR_EXACT, trig),
        VAR_SCALAR(VR_HY, "hy", VAR_FLOAT64, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, hy),
        VAR_SCALAR(VR_SUB, "sub", VAR_CLOCK, VAR_INPUT, VAR_DISCRETE, VAR_EXACT, sub),
        VAR_SCALAR(VR_CW, "cw", VAR_FLOAT64, VAR_INPUT, VAR_DISCRETE, VAR_EXACT, cw),
};

/* As modelDescription.xml's <ModelStructure>, entry for entry. */
static const struct dependency dependencies[] = {
        /* <Output> and <ContinuousStateDerivative> */
        { VR_Y1, VR_X1, DEP_CONSTANT, false },
        { VR_Y1, VR_X2, DEP_CONSTANT, false },
        { VR_Y1, VR_U1, DEP_TUNABLE, false },
        { VR_Y2, VR_X2, DEP_CONSTANT, false },
        { VR_Y2, VR_U2, DEP_TUNABLE, false },
        { VR_CY, VR_CU, DEP_CONSTANT, false },
        { VR_HI, VR_TICK, DEP_DEPENDENT, false },
        { VR_HI, VR_CU, DEP_DEPENDENT, false },
        { VR_HY, VR_CU, DEP_CONSTANT, false },
        { VR_DER_X1, VR_X1, DEP_CONSTANT, false },
        { VR_DER_X1, VR_X2, DEP_CONSTANT, false },
        { VR_DER_X1, VR_U1, DEP_CONSTANT, false },
        { VR_DER_X2, VR_X2, DEP_CONSTANT, false },
        { VR_DER_X2, VR_U2, DEP_CONSTANT, false },
        /* <InitialUnknown> */
        { VR_DER_X1, VR_X1, DEP_CONSTANT, true },
        { VR_DER_X1, VR_X2, DEP_CONSTANT, true },
        { VR_DER_X1, VR_U1, DEP_CONSTANT, true },
        { VR_DER_X2, VR_X2, DEP_CONSTANT, true },
        { VR_DER_X2, VR_U2, DEP_CONSTANT, true },
        { VR_Y1, VR_X1, DEP_CONSTANT, true },
        { VR_Y1, VR_X2, DEP_CONSTANT, true },
        { VR_Y1, VR_U1, DEP_DEPENDENT, true },
        { VR_Y1, VR_K, DEP_DEPENDENT, true },
        { VR_Y2, VR_X2, DEP_CONSTANT, true },
        { VR_Y2, VR_U2, DEP_DEPENDENT, true },
        { VR_Y2, VR_K, DEP_DEPENDENT, true },
        { VR_CY, VR_CU, DEP_CONSTANT, true },
};

static void start(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        d->x[0] = 1.0;
        d->x[1] = -0.5;
        d->k = 1.0;
        /* tick: intervalCounter="1" resolution="10", shiftCounter="0" */
        d->interval[0] = (struct timing){ 1, 10 };
        d->shift[0] = (struct timing){ 0, 10 };
        /* slow: intervalDecimal="0.5" */
        d->interval[1] = (struct timing){ 500, DECIMAL_RESOLUTION };
        d->shift[1] = (struct timing){ 0, DECIMAL_RESOLUTION };
        d->interval_changed[0] = d->interval_changed[1] = true;
}

static void derivatives(const struct model_data *d, const double x[2], double ret[2])
{
        for (int i = 0; i < 2; i++)
                ret[i] = F[i][0] * x[0] + F[i][1] * x[1] + G[i][0] * d->u[0] + G[i][1] * d->u[1];
}

static int calculate(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        derivatives(d, d->x, d->der_x);
        for (int i = 0; i < 2; i++)
                d->y[i] = A[i][0] * d->x[0] + A[i][1] * d->x[1] +
                          d->k * (B[i][0] * d->u[0] + B[i][1] * d->u[1]);
        /* Clocked variables change only while their Clock ticks (or initially). */
        if (d->tick || inst_initializing(inst))
                d->cy = 2.0 * d->cu;
        d->hi = d->tick && d->cu > 1.0;
        if (d->hi)
                d->hy = 10.0 * d->cu;
        return 0;
}

static int do_step(struct inst *inst, struct step *step)
{
        struct model_data *d = inst_data(inst);
        double dt = step->h / SUBSTEPS, dx[2];

        for (int n = 0; n < SUBSTEPS; n++) {
                derivatives(d, d->x, dx);
                d->x[0] += dt * dx[0];
                d->x[1] += dt * dx[1];
        }
        return 0;
}

static int update_discrete(struct inst *inst, struct discrete *ret)
{
        struct model_data *d = inst_data(inst);

        (void) ret;
        d->tick = false;
        d->hi = false;
        d->slow = false;
        d->trig = false;
        d->sub = false;
        return 0;
}

/* Row of an unknown, column of a known in the Jacobians; -1 when none. */
static int index_of(uint32_t vr, uint32_t first)
{
        return vr == first ? 0 : vr == first + 1 ? 1 : -1;
}

static int partial(struct inst *inst, const struct var *unknown, const struct var *known, double *ret)
{
        const struct model_data *d = inst_data(inst);
        int iy = index_of(unknown->vr, VR_Y1), id = index_of(unknown->vr, VR_DER_X1);
        int jx = index_of(known->vr, VR_X1), ju = index_of(known->vr, VR_U1);

        *ret = 0.0;
        if (iy >= 0 && jx >= 0)
                *ret = A[iy][jx];
        else if (iy >= 0 && ju >= 0)
                *ret = d->k * B[iy][ju];
        else if (iy >= 0 && known->vr == VR_K)
                *ret = B[iy][0] * d->u[0] + B[iy][1] * d->u[1];
        else if (id >= 0 && jx >= 0)
                *ret = F[id][jx];
        else if (id >= 0 && ju >= 0)
                *ret = G[id][ju];
        else if (unknown->vr == VR_CY && known->vr == VR_CU)
                *ret = 2.0;
        return 0;
}

static int get_timing(struct model_data *d, int c, enum clock_quantity what, struct clock_time *t)
{
        const struct timing *s = what == CLOCK_INTERVAL ? &d->interval[c] : &d->shift[c];

        t->counter = s->counter;
        t->resolution = s->resolution;
        t->decimal = (double)s->counter / (double)s->resolution;
        if (what == CLOCK_INTERVAL) {
                t->qualifier = d->interval_changed[c] ? 2 /* fmi3IntervalChanged */ :
                               1 /* fmi3IntervalUnchanged */;
                d->interval_changed[c] = false;
        }
        return 0;
}

static int set_timing(struct inst *inst, struct model_data *d, const struct var *clock, int c,
                      enum clock_quantity what, const struct clock_time *t)
{
        const char *name = what == CLOCK_INTERVAL ? "interval" : "shift";
        struct timing s;

        if (t->fraction) {
                s = (struct timing){ t->counter, t->resolution };
        } else {
                if (!(t->decimal >= 0.0 && t->decimal <= 1e9)) {
                        inst_log(inst, FMU_ERROR, "Clock '%s': %s %.17g is out of range",
                                 clock->name, name, t->decimal);
                        return -ERANGE;
                }
                s = (struct timing){ (uint64_t)llround(t->decimal * DECIMAL_RESOLUTION),
                                     DECIMAL_RESOLUTION };
        }
        if (s.resolution == 0 || (what == CLOCK_INTERVAL && s.counter == 0)) {
                inst_log(inst, FMU_ERROR, "Clock '%s': %s %llu/%llu must be %s", clock->name,
                         name, (unsigned long long)s.counter, (unsigned long long)s.resolution,
                         what == CLOCK_INTERVAL ? "> 0" : ">= 0");
                return -ERANGE;
        }
        if (what == CLOCK_INTERVAL) {
                d->interval[c] = s;
                d->interval_changed[c] = true;
        } else {
                d->shift[c] = s;
        }
        return 0;
}

static int clock_timing(struct inst *inst, const struct var *clock, enum clock_quantity what,
                        bool set, struct clock_time *t)
{
        struct model_data *d = inst_data(inst);
        int c = clock->vr == VR_TICK ? 0 : clock->vr == VR_SLOW ? 1 : -1;

        if (c < 0) {
                inst_log(inst, FMU_ERROR, "Clock '%s' is not time-based", clock->name);
                return -EINVAL;
        }
        if (c == 1 && t->fraction) {
                inst_log(inst, FMU_ERROR, "Clock 'slow' does not support fractions");
                return -EINVAL;
        }
        /*
         * Table 5: the shift in Initialization Mode only; the interval of
         * the fixed Clock slow set in Initialization Mode only.
         */
        if ((what == CLOCK_SHIFT || (c == 1 && set)) && !inst_initializing(inst)) {
                inst_log(inst, FMU_ERROR, "the %s of Clock '%s' can only be %s in "
                         "Initialization Mode", what == CLOCK_SHIFT ? "shift" : "interval",
                         clock->name, set ? "set" : "got");
                return -EPERM;
        }
        return set ? set_timing(inst, d, clock, c, what, t) : get_timing(d, c, what, t);
}

const struct model model = {
        .token = "{8f3c6a41-2d0e-4b7a-9c15-5e1f0a7d3b0c}",
        .data_size = sizeof(struct model_data),
        .vars = vars,
        .n_vars = sizeof(vars) / sizeof(vars[0]),
        .caps = MODEL_HAS_EVENT_MODE | MODEL_CAN_GET_SET_STATE | MODEL_CAN_SERIALIZE_STATE |
                MODEL_PROVIDES_DIRECTIONAL | MODEL_PROVIDES_ADJOINT |
                MODEL_PER_ELEMENT_DEPENDENCIES,
        .start = start,
        .calculate = calculate,
        .do_step = do_step,
        .update_discrete = update_discrete,
        .partial = partial,
        .dependencies = dependencies,
        .n_dependencies = sizeof(dependencies) / sizeof(dependencies[0]),
        .clock_timing = clock_timing,
};
