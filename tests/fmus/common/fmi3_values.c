/*
 * fmi3_values.c: fmi3Get{Type} and fmi3Set{Type} for every FMI 3.0 type,
 * and fmi3GetOutputDerivatives, of a test FMU.
 *
 * DESIGN: thin wrappers around values_get()/values_set() (common/values.c),
 * which check value references, types, the state machine and nValues.
 * Strings and binaries handed out point into the instance's own storage
 * and stay valid until the next call that sets or computes them.
 */
#include <errno.h>
#include <stdlib.h>

#include "fmi3Functions.h"

#include "common.h"

static fmi3Status get(fmi3Instance instance, const char *fn, enum var_type t,
                      const fmi3ValueReference vrs[], size_t nvr, void *values,
                      size_t *sizes, size_t n_values)
{
        struct inst *inst = instance;

        if (!inst)
                return fmi3Error;
        if (values_get(inst, fn, t, vrs, nvr, values, sizes, n_values) < 0) {
                inst_fail(inst);
                return fmi3Error;
        }
        return fmi3OK;
}

static fmi3Status set(fmi3Instance instance, const char *fn, enum var_type t,
                      const fmi3ValueReference vrs[], size_t nvr, const void *values,
                      const size_t *sizes, size_t n_values)
{
        struct inst *inst = instance;

        if (!inst)
                return fmi3Error;
        if (values_set(inst, fn, t, vrs, nvr, values, sizes, n_values) < 0) {
                inst_fail(inst);
                return fmi3Error;
        }
        return fmi3OK;
}

fmi3Status fmi3GetFloat32(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                          size_t nValueReferences, fmi3Float32 values[], size_t nValues)
{
        return get(instance, "fmi3GetFloat32", VAR_FLOAT32, valueReferences, nValueReferences,
                   (void *)values, NULL, nValues);
}

fmi3Status fmi3GetFloat64(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                          size_t nValueReferences, fmi3Float64 values[], size_t nValues)
{
        return get(instance, "fmi3GetFloat64", VAR_FLOAT64, valueReferences, nValueReferences,
                   (void *)values, NULL, nValues);
}

fmi3Status fmi3GetInt8(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                       size_t nValueReferences, fmi3Int8 values[], size_t nValues)
{
        return get(instance, "fmi3GetInt8", VAR_INT8, valueReferences, nValueReferences,
                   (void *)values, NULL, nValues);
}

fmi3Status fmi3GetUInt8(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                        size_t nValueReferences, fmi3UInt8 values[], size_t nValues)
{
        return get(instance, "fmi3GetUInt8", VAR_UINT8, valueReferences, nValueReferences,
                   (void *)values, NULL, nValues);
}

fmi3Status fmi3GetInt16(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                        size_t nValueReferences, fmi3Int16 values[], size_t nValues)
{
        return get(instance, "fmi3GetInt16", VAR_INT16, valueReferences, nValueReferences,
                   (void *)values, NULL, nValues);
}

fmi3Status fmi3GetUInt16(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                         size_t nValueReferences, fmi3UInt16 values[], size_t nValues)
{
        return get(instance, "fmi3GetUInt16", VAR_UINT16, valueReferences, nValueReferences,
                   (void *)values, NULL, nValues);
}

fmi3Status fmi3GetInt32(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                        size_t nValueReferences, fmi3Int32 values[], size_t nValues)
{
        return get(instance, "fmi3GetInt32", VAR_INT32, valueReferences, nValueReferences,
                   (void *)values, NULL, nValues);
}

fmi3Status fmi3GetUInt32(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                         size_t nValueReferences, fmi3UInt32 values[], size_t nValues)
{
        return get(instance, "fmi3GetUInt32", VAR_UINT32, valueReferences, nValueReferences,
                   (void *)values, NULL, nValues);
}

fmi3Status fmi3GetInt64(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                        size_t nValueReferences, fmi3Int64 values[], size_t nValues)
{
        return get(instance, "fmi3GetInt64", VAR_INT64, valueReferences, nValueReferences,
                   (void *)values, NULL, nValues);
}

fmi3Status fmi3GetUInt64(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                         size_t nValueReferences, fmi3UInt64 values[], size_t nValues)
{
        return get(instance, "fmi3GetUInt64", VAR_UINT64, valueReferences, nValueReferences,
                   (void *)values, NULL, nValues);
}

fmi3Status fmi3GetBoolean(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                          size_t nValueReferences, fmi3Boolean values[], size_t nValues)
{
        return get(instance, "fmi3GetBoolean", VAR_BOOLEAN, valueReferences, nValueReferences,
                   (void *)values, NULL, nValues);
}

fmi3Status fmi3GetString(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                         size_t nValueReferences, fmi3String values[], size_t nValues)
{
        return get(instance, "fmi3GetString", VAR_STRING, valueReferences, nValueReferences,
                   (void *)values, NULL, nValues);
}

fmi3Status fmi3GetBinary(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                         size_t nValueReferences, size_t valueSizes[], fmi3Binary values[],
                         size_t nValues)
{
        return get(instance, "fmi3GetBinary", VAR_BINARY, valueReferences, nValueReferences,
                   (void *)values, valueSizes, nValues);
}

/* Clocks are scalar: one value per value reference. */
fmi3Status fmi3GetClock(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                        size_t nValueReferences, fmi3Clock values[])
{
        return get(instance, "fmi3GetClock", VAR_CLOCK, valueReferences, nValueReferences,
                   values, NULL, nValueReferences);
}

fmi3Status fmi3SetFloat32(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                          size_t nValueReferences, const fmi3Float32 values[], size_t nValues)
{
        return set(instance, "fmi3SetFloat32", VAR_FLOAT32, valueReferences, nValueReferences,
                   (const void *)values, NULL, nValues);
}

fmi3Status fmi3SetFloat64(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                          size_t nValueReferences, const fmi3Float64 values[], size_t nValues)
{
        return set(instance, "fmi3SetFloat64", VAR_FLOAT64, valueReferences, nValueReferences,
                   (const void *)values, NULL, nValues);
}

fmi3Status fmi3SetInt8(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                       size_t nValueReferences, const fmi3Int8 values[], size_t nValues)
{
        return set(instance, "fmi3SetInt8", VAR_INT8, valueReferences, nValueReferences,
                   (const void *)values, NULL, nValues);
}

fmi3Status fmi3SetUInt8(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                        size_t nValueReferences, const fmi3UInt8 values[], size_t nValues)
{
        return set(instance, "fmi3SetUInt8", VAR_UINT8, valueReferences, nValueReferences,
                   (const void *)values, NULL, nValues);
}

fmi3Status fmi3SetInt16(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                        size_t nValueReferences, const fmi3Int16 values[], size_t nValues)
{
        return set(instance, "fmi3SetInt16", VAR_INT16, valueReferences, nValueReferences,
                   (const void *)values, NULL, nValues);
}

fmi3Status fmi3SetUInt16(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                         size_t nValueReferences, const fmi3UInt16 values[], size_t nValues)
{
        return set(instance, "fmi3SetUInt16", VAR_UINT16, valueReferences, nValueReferences,
                   (const void *)values, NULL, nValues);
}

fmi3Status fmi3SetInt32(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                        size_t nValueReferences, const fmi3Int32 values[], size_t nValues)
{
        return set(instance, "fmi3SetInt32", VAR_INT32, valueReferences, nValueReferences,
                   (const void *)values, NULL, nValues);
}

fmi3Status fmi3SetUInt32(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                         size_t nValueReferences, const fmi3UInt32 values[], size_t nValues)
{
        return set(instance, "fmi3SetUInt32", VAR_UINT32, valueReferences, nValueReferences,
                   (const void *)values, NULL, nValues);
}

fmi3Status fmi3SetInt64(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                        size_t nValueReferences, const fmi3Int64 values[], size_t nValues)
{
        return set(instance, "fmi3SetInt64", VAR_INT64, valueReferences, nValueReferences,
                   (const void *)values, NULL, nValues);
}

fmi3Status fmi3SetUInt64(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                         size_t nValueReferences, const fmi3UInt64 values[], size_t nValues)
{
        return set(instance, "fmi3SetUInt64", VAR_UINT64, valueReferences, nValueReferences,
                   (const void *)values, NULL, nValues);
}

fmi3Status fmi3SetBoolean(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                          size_t nValueReferences, const fmi3Boolean values[], size_t nValues)
{
        return set(instance, "fmi3SetBoolean", VAR_BOOLEAN, valueReferences, nValueReferences,
                   (const void *)values, NULL, nValues);
}

fmi3Status fmi3SetString(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                         size_t nValueReferences, const fmi3String values[], size_t nValues)
{
        return set(instance, "fmi3SetString", VAR_STRING, valueReferences, nValueReferences,
                   (const void *)values, NULL, nValues);
}

fmi3Status fmi3SetBinary(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                         size_t nValueReferences, const size_t valueSizes[],
                         const fmi3Binary values[], size_t nValues)
{
        return set(instance, "fmi3SetBinary", VAR_BINARY, valueReferences, nValueReferences,
                   (const void *)values, valueSizes, nValues);
}

fmi3Status fmi3SetClock(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                        size_t nValueReferences, const fmi3Clock values[])
{
        return set(instance, "fmi3SetClock", VAR_CLOCK, valueReferences, nValueReferences,
                   values, NULL, nValueReferences);
}

/* Check one (value reference, order) pair; returns the variable or NULL. */
static const struct var *derivative_var(struct inst *inst, fmi3ValueReference vr, fmi3Int32 order)
{
        const struct var *v = inst_find_var(inst, vr);
        const char *why;

        if (!v || v->causality != VAR_OUTPUT || v->variability != VAR_CONTINUOUS ||
            (v->type != VAR_FLOAT64 && v->type != VAR_FLOAT32)) {
                inst_log(inst, FMU_ERROR,
                         "fmi3GetOutputDerivatives: value reference %u is not a continuous float output", vr);
                return NULL;
        }
        if (order < 1 || order > model.max_output_derivative_order) {
                inst_log(inst, FMU_ERROR,
                         "fmi3GetOutputDerivatives: order %d of '%s' is outside 1..maxOutputDerivativeOrder (%d)",
                         (int)order, v->name, model.max_output_derivative_order);
                return NULL;
        }
        why = inst_get_refusal(inst, v);
        if (why) {
                inst_log(inst, FMU_ERROR, "fmi3GetOutputDerivatives: variable '%s' (vr %u) %s",
                         v->name, vr, why);
                return NULL;
        }
        return v;
}

fmi3Status fmi3GetOutputDerivatives(fmi3Instance instance,
                                    const fmi3ValueReference valueReferences[],
                                    size_t nValueReferences, const fmi3Int32 orders[],
                                    fmi3Float64 values[], size_t nValues)
{
        struct inst *inst = instance;
        size_t total = 0, k = 0;

        if (!inst)
                return fmi3Error;
        if (!inst_check_state(inst, "fmi3GetOutputDerivatives",
                              STATE_BIT(ST_STEP) | STATE_BIT(ST_INTERMEDIATE_UPDATE) |
                              STATE_BIT(ST_TERMINATED)))
                goto out_fail;
        if (!model.output_derivative || model.max_output_derivative_order < 1) {
                inst_log(inst, FMU_ERROR, "fmi3GetOutputDerivatives: maxOutputDerivativeOrder is 0");
                goto out_fail;
        }
        if (nValueReferences > 0 && (!valueReferences || !orders || !values)) {
                inst_log(inst, FMU_ERROR, "fmi3GetOutputDerivatives: an array argument is NULL");
                goto out_fail;
        }
        for (size_t i = 0; i < nValueReferences; i++) {
                const struct var *v = derivative_var(inst, valueReferences[i], orders[i]);

                if (!v)
                        goto out_fail;
                total += inst_var_count(inst, v);
        }
        if (total != nValues) {
                inst_log(inst, FMU_ERROR,
                         "fmi3GetOutputDerivatives: nValues = %zu, but the value references have %zu values",
                         nValues, total);
                goto out_fail;
        }
        for (size_t i = 0; i < nValueReferences; i++) {
                const struct var *v = inst_find_var(inst, valueReferences[i]);

                if (model.output_derivative(inst, v, orders[i], &values[k]) < 0)
                        goto out_fail;
                k += inst_var_count(inst, v);
        }
        return fmi3OK;

out_fail:
        inst_fail(inst);
        return fmi3Error;
}
