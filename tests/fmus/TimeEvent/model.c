/*
 * TimeEvent: a counter that jumps at time events scheduled by parameters,
 * as an FMI 3.0 Co-Simulation FMU with Event Mode, and a calculated
 * parameter computed from a parameter.
 *
 *   time events at t_k = phase + k * period, k = 0, 1, ...  (period > 0)
 *   count := count + 1 at each t_k         (a discrete output; level = count)
 *   x' = count                             (a continuous state, exact)
 *   z' = u                                 (u: an input held over a step)
 *   gain = 2 * base                        (calculatedParameter)
 *   y = gain * (1 + count)                 (an output that shows gain)
 *   terminateSimulation once count reaches stop_count (> 0), from
 *   fmi3UpdateDiscreteStates in Event Mode, as counters that end a
 *   simulation do (FMI 3.0 section 3.2.2)
 *   bad_next 1 or 2: from the first event on, nextEventTime is NaN (1)
 *   or a second before the event (2), as a broken export gives it; 3:
 *   each time event is taken in the second Event Mode at its time, the
 *   first reporting nextEventTime = that time, which FMI 3.0 section 3.2.2
 *   allows (the importer enters Event Mode again at once); 4: from the
 *   first event on, nextEventTime is always the event's own time, as a
 *   broken export that would stop time gives it
 *
 * With eventModeUsed, the counter only moves in Event Mode: after each
 * fmi3UpdateDiscreteStates the FMU reports nextEventTime = t_k (FMI 3.0
 * section 3.2.2 and 4.3.3), and a DoStep that would go past t_k is an
 * error (the importer must stop there; the FMU does not set
 * eventHandlingNeeded for a time event the importer was told about).
 * Without Event Mode the events are handled inside DoStep.
 *
 * k is a discrete input (FMI 3.0 section 2.4.7.4: with Event Mode used it
 * may change only in Event Mode): k_events counts its changes seen in
 * fmi3UpdateDiscreteStates, k_in_step those first seen in fmi3DoStep,
 * i.e. set in Step Mode, which the importer must not do. stop_k > 0:
 * terminateSimulation from the Event Mode in which k reaches it. k_delay
 * > 0: a change of k taken in Event Mode at t also schedules a time event
 * at t + k_delay (a timer, as a debounce or a monostable does), counted in
 * k_fired when it comes; a step past it is an error, as for any time event.
 * label (String) and blob (Binary) are discrete inputs too, counted the
 * same way (label_events, label_in_step; blob_events, blob_in_step), by
 * their contents: an importer compares those, not where they are kept.
 * tag ("count=N") and raw (one byte, count) are discrete outputs of those
 * types that change at the time events, to drive them.
 * TimeEventKc (TIME_EVENT_KC) adds kc, an output Clock that ticks in the
 * Event Mode in which k changed (got before fmi3UpdateDiscreteStates takes
 * the change, FMI 3.0 section 2.2.8.3); with a Clock it needs Event Mode.
 *
 * Value references: time 0, period 1, phase 2, count 3, x 4, der_x 5,
 * base 6, gain 7, y 8, u 9, z 10, level 11, stop_count 12, bad_next 13,
 * k 14, k_events 15, k_in_step 16, stop_k 17, kc 18 (TimeEventKc),
 * k_delay 19, k_fired 20, tag 21, label 22, label_events 23,
 * label_in_step 24, raw 25, blob 26, blob_events 27, blob_in_step 28.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model.h"

struct model_data {
        double period;
        double phase;
        int32_t count;
        double x;
        double der_x;
        double base;
        double gain;
        double y;
        double u;
        double z;
        double level;
        int32_t stop_count;
        int32_t bad_next;
        int32_t k;
        int32_t k_events;
        int32_t k_in_step;
        int32_t k_seen;         /* k as the FMU last took it */
        int32_t stop_k;
        bool kc;
        double k_delay;
        int32_t k_fired;
        double timer;           /* the time event k_delay after k's change; INFINITY: none */
        uint64_t next_k;        /* index of the next time event */
        uint64_t deferred;      /* bad_next 3: next_k + 1 of the event put off once; 0: none */
        struct var_string tag, label, label_seen;
        int32_t label_events, label_in_step;
        struct var_binary raw, blob, blob_seen;
        int32_t blob_events, blob_in_step;
};

static const struct var vars[] = {
        VAR_TIME(0),
        VAR_SCALAR(1, "period", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, period),
        VAR_SCALAR(2, "phase", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, phase),
        VAR_SCALAR(3, "count", VAR_INT32, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, count),
        VAR_SCALAR(4, "x", VAR_FLOAT64, VAR_OUTPUT, VAR_CONTINUOUS, VAR_CALCULATED, x),
        VAR_SCALAR(5, "der_x", VAR_FLOAT64, VAR_LOCAL, VAR_CONTINUOUS, VAR_CALCULATED, der_x),
        VAR_SCALAR(6, "base", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, base),
        VAR_SCALAR(7, "gain", VAR_FLOAT64, VAR_CALCULATED_PARAMETER, VAR_FIXED, VAR_CALCULATED,
                   gain),
        VAR_SCALAR(8, "y", VAR_FLOAT64, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, y),
        VAR_SCALAR(9, "u", VAR_FLOAT64, VAR_INPUT, VAR_CONTINUOUS, VAR_EXACT, u),
        VAR_SCALAR(10, "z", VAR_FLOAT64, VAR_OUTPUT, VAR_CONTINUOUS, VAR_CALCULATED, z),
        VAR_SCALAR(11, "level", VAR_FLOAT64, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, level),
        VAR_SCALAR(12, "stop_count", VAR_INT32, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, stop_count),
        VAR_SCALAR(13, "bad_next", VAR_INT32, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, bad_next),
        VAR_SCALAR(14, "k", VAR_INT32, VAR_INPUT, VAR_DISCRETE, VAR_EXACT, k),
        VAR_SCALAR(15, "k_events", VAR_INT32, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, k_events),
        VAR_SCALAR(16, "k_in_step", VAR_INT32, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED,
                   k_in_step),
        VAR_SCALAR(17, "stop_k", VAR_INT32, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, stop_k),
#ifdef TIME_EVENT_KC
        VAR_SCALAR(18, "kc", VAR_CLOCK, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, kc),
#endif
        VAR_SCALAR(19, "k_delay", VAR_FLOAT64, VAR_PARAMETER, VAR_FIXED, VAR_EXACT, k_delay),
        VAR_SCALAR(20, "k_fired", VAR_INT32, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, k_fired),
        VAR_SCALAR(21, "tag", VAR_STRING, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, tag),
        VAR_SCALAR(22, "label", VAR_STRING, VAR_INPUT, VAR_DISCRETE, VAR_EXACT, label),
        VAR_SCALAR(23, "label_events", VAR_INT32, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED,
                   label_events),
        VAR_SCALAR(24, "label_in_step", VAR_INT32, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED,
                   label_in_step),
        VAR_SCALAR(25, "raw", VAR_BINARY, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED, raw),
        VAR_SCALAR(26, "blob", VAR_BINARY, VAR_INPUT, VAR_DISCRETE, VAR_EXACT, blob),
        VAR_SCALAR(27, "blob_events", VAR_INT32, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED,
                   blob_events),
        VAR_SCALAR(28, "blob_in_step", VAR_INT32, VAR_OUTPUT, VAR_DISCRETE, VAR_CALCULATED,
                   blob_in_step),
};

static bool label_changed(const struct model_data *d)
{
        return strcmp(d->label.s, d->label_seen.s) != 0;
}

static bool blob_changed(const struct model_data *d)
{
        return d->blob.size != d->blob_seen.size ||
               memcmp(d->blob.bytes, d->blob_seen.bytes, d->blob.size) != 0;
}

static void start(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        d->period = 0.5;
        d->phase = 0.15;
        d->base = 1.5;
        d->u = 0.0;
        d->stop_count = 0;
        d->k = 0;
        d->stop_k = 0;
        var_string_init(&d->label, "");
        var_binary_init(&d->blob, NULL, 0);
}

/* How close to t_k counts as at t_k: rounding of t0 + n h against phase + k period. */
static double tol(double t)
{
        return 1e-9 * fmax(1.0, fabs(t));
}

static double event_time(const struct model_data *d)
{
        return d->period > 0.0 ? d->phase + (double)d->next_k * d->period : INFINITY;
}

/* The next time event of either kind: the counter's or the timer's. */
static double next_time(const struct model_data *d)
{
        return fmin(event_time(d), d->timer);
}

static int calculate(struct inst *inst)
{
        struct model_data *d = inst_data(inst);

        if (inst_initializing(inst)) {
                if (!(d->period >= 0.0) || !isfinite(d->phase)) {
                        inst_log(inst, FMU_ERROR, "period (%g) must be >= 0 (0: no events) and "
                                 "phase (%g) finite", d->period, d->phase);
                        return -EINVAL;
                }
                d->count = 0;
                d->x = 0.0;
                d->z = 0.0;
                d->next_k = 0;
                d->deferred = 0;
                d->k_seen = d->k;
                d->k_events = 0;
                d->k_in_step = 0;
                d->k_fired = 0;
                d->label_seen = d->label;
                d->label_events = 0;
                d->label_in_step = 0;
                d->blob_seen = d->blob;
                d->blob_events = 0;
                d->blob_in_step = 0;
                d->timer = INFINITY;
                /* Events before the start time are past: the first is the next one after it. */
                while (event_time(d) < inst_time(inst) - tol(inst_time(inst)))
                        d->next_k++;
        }
        d->gain = 2.0 * d->base;
        d->kc = inst_event_mode(inst) && d->k != d->k_seen;
        d->der_x = d->count;
        d->level = d->count;
        d->y = d->gain * (1.0 + d->count);
        snprintf(d->tag.s, sizeof(d->tag.s), "count=%d", (int)d->count);
        d->raw.bytes[0] = (uint8_t)d->count;
        d->raw.size = 1;
        return 0;
}

/* Every time event due at t: count it. */
static void take_events(struct inst *inst, struct model_data *d, double t)
{
        while (event_time(d) <= t + tol(t)) {
                d->count++;
                d->next_k++;
                inst_log(inst, FMU_OK, "time event %d at t = %.17g", (int)d->count, t);
        }
}

static int do_step(struct inst *inst, struct step *step)
{
        struct model_data *d = inst_data(inst);
        double t = step->t, t_end = step->t + step->h;

        if (d->k != d->k_seen && step->event_mode_used) {
                d->k_in_step++;
                inst_log(inst, FMU_WARNING, "discrete input k changed from %d to %d in Step Mode "
                         "(t = %.17g)", (int)d->k_seen, (int)d->k, t);
        }
        d->k_seen = d->k;
        if (label_changed(d) && step->event_mode_used) {
                d->label_in_step++;
                inst_log(inst, FMU_WARNING, "discrete input label changed from \"%s\" to \"%s\" "
                         "in Step Mode (t = %.17g)", d->label_seen.s, d->label.s, t);
        }
        d->label_seen = d->label;
        if (blob_changed(d) && step->event_mode_used) {
                d->blob_in_step++;
                inst_log(inst, FMU_WARNING, "discrete input blob changed in Step Mode (t = %.17g)", t);
        }
        d->blob_seen = d->blob;
        d->z += d->u * step->h;
        if (step->event_mode_used) {
                double te = next_time(d);

                if (t_end > te + tol(te)) {
                        inst_log(inst, FMU_ERROR, "fmi3DoStep from t = %.17g to %.17g goes past "
                                 "the time event at t = %.17g", t, t_end, te);
                        return -EINVAL;
                }
                d->x += d->count * step->h;
                return 0;
        }
        /* No Event Mode: the counter jumps inside the step. */
        while (event_time(d) < t_end - tol(t_end)) {
                double te = event_time(d);

                d->x += d->count * (te - t);
                t = te;
                take_events(inst, d, te);
        }
        d->x += d->count * (t_end - t);
        take_events(inst, d, t_end);
        return 0;
}

static int update_discrete(struct inst *inst, struct discrete *ret)
{
        struct model_data *d = inst_data(inst);
        double t = inst_time(inst);

        if (d->timer <= t + tol(t)) {
                d->k_fired++;
                d->timer = INFINITY;
        }
        if (d->k != d->k_seen) {
                d->k_events++;
                d->k_seen = d->k;
                if (d->k_delay > 0.0)
                        d->timer = t + d->k_delay;
        }
        if (label_changed(d)) {
                d->label_events++;
                d->label_seen = d->label;
        }
        if (blob_changed(d)) {
                d->blob_events++;
                d->blob_seen = d->blob;
        }
        d->kc = false;
        if (d->bad_next == 3 && event_time(d) <= t + tol(t) && d->deferred != d->next_k + 1) {
                d->deferred = d->next_k + 1;
                ret->need_update = false;
                ret->terminate = false;
                ret->next_event_time_defined = true;
                ret->next_event_time = t;
                return 0;
        }
        take_events(inst, d, t);
        ret->terminate = (d->stop_count > 0 && d->count >= d->stop_count) ||
                         (d->stop_k > 0 && d->k >= d->stop_k);
        ret->need_update = false;
        ret->next_event_time_defined = d->period > 0.0 || isfinite(d->timer);
        ret->next_event_time = next_time(d);
        if (d->count > 0 && d->bad_next == 1)
                ret->next_event_time = NAN;
        else if (d->count > 0 && d->bad_next == 2)
                ret->next_event_time = inst_time(inst) - 1.0;
        else if (d->count > 0 && d->bad_next == 4)
                ret->next_event_time = t;
        return 0;
}

const struct model model = {
        .token = "{5b7e2c90-1f4d-4e8a-b6a3-0c9d8e7f6a51}",
        .data_size = sizeof(struct model_data),
        .vars = vars,
        .n_vars = sizeof(vars) / sizeof(vars[0]),
        .caps = MODEL_HAS_EVENT_MODE | MODEL_CAN_GET_SET_STATE | MODEL_CAN_SERIALIZE_STATE,
        .start = start,
        .calculate = calculate,
        .do_step = do_step,
        .update_discrete = update_discrete,
};
