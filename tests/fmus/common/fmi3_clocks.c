/*
 * fmi3_clocks.c: the FMI 3.0 Clock timing functions of a test FMU
 * (section 2.2.8.4): interval and shift, get and set, decimal and
 * fraction.
 *
 * DESIGN: the shared part checks what does not depend on the Clock's type:
 * the state (Initialization or Event Mode), NULL arrays, and that every
 * value reference names an input Clock. The model's clock_timing() hook
 * knows its Clocks' types and decides the rest (which quantity may be got
 * or set when, which values are valid). A model without the hook has no
 * time-based Clocks: every call is refused, as before the hook existed.
 * A call is checked for every value reference before the first one is
 * set.
 */
#include <stddef.h>

#include "fmi3Functions.h"

#include "common.h"

/* Check the call; false after logging why it is refused. */
static bool timing_ok(struct inst *inst, const char *fn, const fmi3ValueReference vrs[],
                      size_t n, bool arrays)
{
        if (!model.clock_timing) {
                inst_log(inst, FMU_ERROR, "%s: the model has no time-based Clocks", fn);
                return false;
        }
        if (!inst_check_state(inst, fn, STATE_BIT(ST_INITIALIZATION) | STATE_BIT(ST_EVENT)))
                return false;
        if (n > 0 && (!vrs || !arrays)) {
                inst_log(inst, FMU_ERROR, "%s: an array argument is NULL", fn);
                return false;
        }
        for (size_t i = 0; i < n; i++) {
                const struct var *v = inst_find_var(inst, vrs[i]);

                if (!v || v->type != VAR_CLOCK || v->causality != VAR_INPUT) {
                        inst_log(inst, FMU_ERROR, "%s: value reference %u is not an input Clock",
                                 fn, vrs[i]);
                        return false;
                }
        }
        return true;
}

static fmi3Status fail(struct inst *inst)
{
        inst_fail(inst);
        return fmi3Error;
}

/* Get what of every Clock into the arrays given (each may be NULL). */
static fmi3Status get(fmi3Instance instance, const char *fn, enum clock_quantity what,
                      const fmi3ValueReference vrs[], size_t n, fmi3Float64 decimals[],
                      fmi3UInt64 counters[], fmi3UInt64 resolutions[],
                      fmi3IntervalQualifier qualifiers[], bool arrays)
{
        struct inst *inst = instance;

        if (!inst)
                return fmi3Error;
        if (!timing_ok(inst, fn, vrs, n, arrays))
                return fail(inst);
        for (size_t i = 0; i < n; i++) {
                struct clock_time t = { .fraction = counters != NULL,
                                         .qualifier = fmi3IntervalUnchanged };

                if (model.clock_timing(inst, inst_find_var(inst, vrs[i]), what, false, &t) < 0)
                        return fail(inst);
                if (decimals)
                        decimals[i] = t.decimal;
                if (counters)
                        counters[i] = t.counter;
                if (resolutions)
                        resolutions[i] = t.resolution;
                if (qualifiers)
                        qualifiers[i] = (fmi3IntervalQualifier)t.qualifier;
        }
        return fmi3OK;
}

/*
 * Set what of every Clock in turn. A value the model refuses fails the
 * call after the Clocks before it were set; that is harmless, since the
 * error moves the instance to Terminated (section 2.3.1).
 */
static fmi3Status set(fmi3Instance instance, const char *fn, enum clock_quantity what,
                      const fmi3ValueReference vrs[], size_t n, const fmi3Float64 decimals[],
                      const fmi3UInt64 counters[], const fmi3UInt64 resolutions[], bool arrays)
{
        struct inst *inst = instance;

        if (!inst)
                return fmi3Error;
        if (!timing_ok(inst, fn, vrs, n, arrays))
                return fail(inst);
        for (size_t i = 0; i < n; i++) {
                struct clock_time t = { .fraction = decimals == NULL };

                if (decimals) {
                        t.decimal = decimals[i];
                } else {
                        t.counter = counters[i];
                        t.resolution = resolutions[i];
                }
                if (model.clock_timing(inst, inst_find_var(inst, vrs[i]), what, true, &t) < 0)
                        return fail(inst);
        }
        return fmi3OK;
}

fmi3Status fmi3GetIntervalDecimal(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                  size_t nValueReferences, fmi3Float64 intervals[],
                                  fmi3IntervalQualifier qualifiers[])
{
        return get(instance, "fmi3GetIntervalDecimal", CLOCK_INTERVAL, valueReferences,
                   nValueReferences, intervals, NULL, NULL, qualifiers, intervals && qualifiers);
}

fmi3Status fmi3GetIntervalFraction(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                   size_t nValueReferences, fmi3UInt64 counters[],
                                   fmi3UInt64 resolutions[], fmi3IntervalQualifier qualifiers[])
{
        return get(instance, "fmi3GetIntervalFraction", CLOCK_INTERVAL, valueReferences,
                   nValueReferences, NULL, counters, resolutions, qualifiers,
                   counters && resolutions && qualifiers);
}

fmi3Status fmi3GetShiftDecimal(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                               size_t nValueReferences, fmi3Float64 shifts[])
{
        return get(instance, "fmi3GetShiftDecimal", CLOCK_SHIFT, valueReferences, nValueReferences,
                   shifts, NULL, NULL, NULL, shifts != NULL);
}

fmi3Status fmi3GetShiftFraction(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                size_t nValueReferences, fmi3UInt64 counters[],
                                fmi3UInt64 resolutions[])
{
        return get(instance, "fmi3GetShiftFraction", CLOCK_SHIFT, valueReferences, nValueReferences,
                   NULL, counters, resolutions, NULL, counters && resolutions);
}

fmi3Status fmi3SetIntervalDecimal(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                  size_t nValueReferences, const fmi3Float64 intervals[])
{
        return set(instance, "fmi3SetIntervalDecimal", CLOCK_INTERVAL, valueReferences,
                   nValueReferences, intervals, NULL, NULL, intervals != NULL);
}

fmi3Status fmi3SetIntervalFraction(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                   size_t nValueReferences, const fmi3UInt64 counters[],
                                   const fmi3UInt64 resolutions[])
{
        return set(instance, "fmi3SetIntervalFraction", CLOCK_INTERVAL, valueReferences,
                   nValueReferences, NULL, counters, resolutions, counters && resolutions);
}

fmi3Status fmi3SetShiftDecimal(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                               size_t nValueReferences, const fmi3Float64 shifts[])
{
        return set(instance, "fmi3SetShiftDecimal", CLOCK_SHIFT, valueReferences, nValueReferences,
                   shifts, NULL, NULL, shifts != NULL);
}

fmi3Status fmi3SetShiftFraction(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                size_t nValueReferences, const fmi3UInt64 counters[],
                                const fmi3UInt64 resolutions[])
{
        return set(instance, "fmi3SetShiftFraction", CLOCK_SHIFT, valueReferences, nValueReferences,
                   NULL, counters, resolutions, counters && resolutions);
}
