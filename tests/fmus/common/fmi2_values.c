/*
 * fmi2_values.c: fmi2Get/fmi2Set for Real, Integer, Boolean and String,
 * and fmi2GetRealOutputDerivatives, of a test FMU.
 *
 * DESIGN: FMI 2.0 types map onto the model's FMI 3.0 storage: Real is
 * Float64, Integer (and Enumeration) is Int32, String is String; values
 * are copied by values_get()/values_set() (common/values.c), which check
 * value references, types and the state machine. fmi2Boolean is an int,
 * unlike the stored bool, so Booleans go through a converted copy. FMI 2.0
 * variables are scalars: one value per value reference.
 */
#include <stdlib.h>

#include "fmi2Functions.h"

#include "common.h"

static fmi2Status done(struct inst *inst, int r)
{
        if (r < 0) {
                inst_fail(inst);
                return fmi2Error;
        }
        return fmi2OK;
}

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                       fmi2Real value[])
{
        struct inst *inst = c;

        if (!inst)
                return fmi2Error;
        return done(inst, values_get(inst, "fmi2GetReal", VAR_FLOAT64, vr, nvr, value, NULL, nvr));
}

fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                          fmi2Integer value[])
{
        struct inst *inst = c;

        if (!inst)
                return fmi2Error;
        return done(inst, values_get(inst, "fmi2GetInteger", VAR_INT32, vr, nvr, value, NULL, nvr));
}

fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                          fmi2Boolean value[])
{
        struct inst *inst = c;
        bool *b;
        int r;

        if (!inst)
                return fmi2Error;
        b = malloc(nvr ? nvr * sizeof(*b) : 1);
        if (!b) {
                inst_log(inst, FMU_ERROR, "fmi2GetBoolean: out of memory");
                return done(inst, -1);
        }
        r = values_get(inst, "fmi2GetBoolean", VAR_BOOLEAN, vr, nvr, b, NULL, nvr);
        if (r == 0 && nvr > 0 && !value)
                r = -1;
        for (size_t i = 0; r == 0 && i < nvr; i++)
                value[i] = b[i] ? fmi2True : fmi2False;
        free(b);
        return done(inst, r);
}

fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                         fmi2String value[])
{
        struct inst *inst = c;

        if (!inst)
                return fmi2Error;
        return done(inst, values_get(inst, "fmi2GetString", VAR_STRING, vr, nvr,
                                     (void *)value, NULL, nvr));
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                       const fmi2Real value[])
{
        struct inst *inst = c;

        if (!inst)
                return fmi2Error;
        return done(inst, values_set(inst, "fmi2SetReal", VAR_FLOAT64, vr, nvr, value, NULL, nvr));
}

fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                          const fmi2Integer value[])
{
        struct inst *inst = c;

        if (!inst)
                return fmi2Error;
        return done(inst, values_set(inst, "fmi2SetInteger", VAR_INT32, vr, nvr, value, NULL, nvr));
}

fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                          const fmi2Boolean value[])
{
        struct inst *inst = c;
        bool *b;
        int r;

        if (!inst)
                return fmi2Error;
        if (nvr > 0 && !value) {
                inst_log(inst, FMU_ERROR, "fmi2SetBoolean: value is NULL");
                return done(inst, -1);
        }
        b = malloc(nvr ? nvr * sizeof(*b) : 1);
        if (!b) {
                inst_log(inst, FMU_ERROR, "fmi2SetBoolean: out of memory");
                return done(inst, -1);
        }
        for (size_t i = 0; i < nvr; i++)
                b[i] = value[i] != fmi2False;
        r = values_set(inst, "fmi2SetBoolean", VAR_BOOLEAN, vr, nvr, b, NULL, nvr);
        free(b);
        return done(inst, r);
}

fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                         const fmi2String value[])
{
        struct inst *inst = c;

        if (!inst)
                return fmi2Error;
        return done(inst, values_set(inst, "fmi2SetString", VAR_STRING, vr, nvr,
                                     (const void *)value, NULL, nvr));
}

fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[],
                                        size_t nvr, const fmi2Integer order[],
                                        fmi2Real value[])
{
        struct inst *inst = c;

        if (!inst)
                return fmi2Error;
        if (!inst_check_state(inst, "fmi2GetRealOutputDerivatives",
                              STATE_BIT(ST_STEP) | STATE_BIT(ST_TERMINATED)))
                return done(inst, -1);
        if (!model.output_derivative || (nvr > 0 && (!vr || !order || !value))) {
                inst_log(inst, FMU_ERROR, "fmi2GetRealOutputDerivatives: %s",
                         model.output_derivative ? "an array argument is NULL"
                                                 : "maxOutputDerivativeOrder is 0");
                return done(inst, -1);
        }
        for (size_t i = 0; i < nvr; i++) {
                const struct var *v = inst_find_var(inst, vr[i]);

                if (!v || v->causality != VAR_OUTPUT || v->type != VAR_FLOAT64 ||
                    v->variability != VAR_CONTINUOUS || v->count != 1 || v->sized ||
                    order[i] < 1 || order[i] > model.max_output_derivative_order) {
                        inst_log(inst, FMU_ERROR,
                                 "fmi2GetRealOutputDerivatives: vr %u order %d: not a continuous "
                                 "Real output or order outside 1..%d", vr[i], order[i],
                                 model.max_output_derivative_order);
                        return done(inst, -1);
                }
        }
        for (size_t i = 0; i < nvr; i++)
                if (model.output_derivative(inst, inst_find_var(inst, vr[i]), order[i],
                                            &value[i]) < 0)
                        return done(inst, -1);
        return fmi2OK;
}
