/*
 * BouncingBall: a ball dropped from h0 that bounces with restitution e,
 * as an FMI 3.0 Co-Simulation FMU with Event Mode and early return.
 *
 *   h' = v,  v' = -g                     while flying
 *   h = 0 and v < 0  =>  v := -e v       (a bounce, a state event)
 *   -e v < v_min     =>  the ball rests: h = 0, v = 0 from then on
 *
 * Flight is integrated exactly (h(t + s) = h + v s - g s^2 / 2) and the
 * impact time is the root of that quadratic, so the first bounce of a ball
 * dropped at rest is at sqrt(2 h0 / g) up to rounding.
 *
 * What fmi3DoStep does at an impact inside the step depends on what the
 * importer allowed at instantiation:
 *   - earlyReturnAllowed and eventModeUsed: return at the impact time with
 *     earlyReturn, eventHandlingNeeded and lastSuccessfulTime = t_impact;
 *     the bounce happens in fmi3UpdateDiscreteStates (Event Mode).
 *   - earlyReturnAllowed only: bounce internally, return early at the
 *     impact time so the importer gets a communication point there.
 *   - otherwise: bounce internally and go on to the end of the step.
 * An impact exactly at the end of the step is reported without earlyReturn.
 *
 * Value references: time 0, h 1, der_h 2, v 3, der_v 4, g 5, e 6,
 * v_min 7, h0 8, v0 9, bounces 10.
 */
#include <errno.h>
#include <math.h>

#include "model.h"

/* A step with more bounces than this is Zeno: the ball rests. */
#define MAX_BOUNCES_PER_STEP 1000

struct model_data {
        double h;
        double der_h;
        double v;
        double der_v;
        double g;
        double e;
        double v_min;
        double h0;
        double v0;
        int32_t bounces;
        bool resting;
        bool impact_pending;    /* returned early at an impact; bounce in Event Mode */
};

static const struct var vars[] = {
        VAR_TIME(0),
        VAR_SCALAR(1, "h", VAR_FLOAT64, VAR_OUTPUT, VAR_CONTINUOUS, VAR_CALCULATED, h),
        VAR_SCALAR(2, "der_h", VAR_FLOAT64, VAR_LOCAL, VAR_CONTINUOUS, VAR_CALCULATED, der_h),
        VAR_SCALAR(3, "v", VAR_FLOAT64, VAR_OUTPUT, VAR_CONTINUOUS, VAR_CALCULATED, v),
        VAR_SCALAR(4, "der_v", VAR_FLOAT64, VAR_LOCAL, VAR_CONTINUOUS, VAR_CALCULATED, der_v),
        VAR_SCALAR(5, "g", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, g),
        VAR_SCALAR(6, "e", VAR_FLOAT64, VAR_PARAMETER, VAR_TUNABLE, VAR_EXACT, e),
        VAR_SCALAR(7, "v_min", VAR_FLOAT64, VAR_LOCAL, VAR_CONSTANT, VAR_EXACT, v_min),
        VAR_SCALAR(8, "h0", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, h0),
        VAR_SCALAR(9, "v0", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, v0),
        VAR_SCALAR(10, "bounces", VAR_INT32, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, bounces),
};

static void start(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        d->g = 9.81;
        d->e = 0.7;
        d->v_min = 0.1;
        d->h0 = 1.0;
        d->v0 = 0.0;
        d->h = d->h0;
        d->v = d->v0;
}

static int calculate(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        if (inst_initializing(inst)) {
                if (!(d->g > 0.0) || d->h0 < 0.0) {
                        inst_log(inst, FMU_ERROR, "g (%g) must be > 0 and h0 (%g) >= 0", d->g, d->h0);
                        return -EINVAL;
                }
                d->h = d->h0;
                d->v = d->v0;
                d->bounces = 0;
                d->resting = false;
                d->impact_pending = false;
        }
        d->der_h = d->v;
        d->der_v = d->resting ? 0.0 : -d->g;
        return 0;
}

/*
 * Time until h reaches 0 in free flight, from h >= 0: the positive root of
 * h + v s - g s^2 / 2, in the form that avoids cancellation for v < 0.
 */
static double impact_time(const struct model_data *d)
{
        double s;

        if (d->h <= 0.0 && d->v <= 0.0)
                return 0.0;
        s = sqrt(d->v * d->v + 2.0 * d->g * fmax(d->h, 0.0));
        if (d->v < 0.0)
                return 2.0 * d->h / (s - d->v);
        return (d->v + s) / d->g;
}

static void fly(struct model_data *d, double dt)
{
        d->h = fmax(d->h + d->v * dt - 0.5 * d->g * dt * dt, 0.0);
        d->v -= d->g * dt;
}

static void bounce(struct inst *inst, struct model_data *d, double t)
{
        d->v = -d->e * d->v;
        d->h = 0.0;
        d->bounces++;
        if (d->v < d->v_min) {
                d->v = 0.0;
                d->resting = true;
        }
        inst_log(inst, FMU_OK, "bounce %d at t = %.17g, v = %g%s", (int)d->bounces, t, d->v,
                 d->resting ? " (at rest)" : "");
}

static int do_step(struct inst *inst, struct step *step)
{
        struct model_data *d = inst_data(inst);
        double t = step->t, t_end = step->t + step->h;

        for (int n = 0; !d->resting && t < t_end; n++) {
                double tau = impact_time(d);

                if (t + tau > t_end) {
                        fly(d, t_end - t);
                        break;
                }
                fly(d, tau);
                d->h = 0.0;
                t += tau;
                if (step->early_return_allowed && step->event_mode_used) {
                        d->impact_pending = true;
                        step->t_end = t;
                        step->early_return = t < t_end;
                        step->event_needed = true;
                        return 0;
                }
                bounce(inst, d, t);
                if (n >= MAX_BOUNCES_PER_STEP) {
                        d->v = 0.0;
                        d->resting = true;
                }
                if (step->early_return_allowed && t < t_end) {
                        step->t_end = t;
                        step->early_return = true;
                        return 0;
                }
        }
        return 0;
}

static int update_discrete(struct inst *inst, struct discrete *ret)
{
        struct model_data *d = inst_data(inst);

        if (d->impact_pending) {
                bounce(inst, d, inst_time(inst));
                d->impact_pending = false;
        }
        ret->need_update = false;
        return 0;
}

const struct model model = {
        .token = "{8f3c6a41-2d0e-4b7a-9c15-5e1f0a7d3b06}",
        .data_size = sizeof(struct model_data),
        .vars = vars,
        .n_vars = sizeof(vars) / sizeof(vars[0]),
        .caps = MODEL_HAS_EVENT_MODE | MODEL_MIGHT_RETURN_EARLY |
                MODEL_CAN_GET_SET_STATE | MODEL_CAN_SERIALIZE_STATE,
        .start = start,
        .calculate = calculate,
        .do_step = do_step,
        .update_discrete = update_discrete,
};
