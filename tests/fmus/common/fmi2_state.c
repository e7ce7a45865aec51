/*
 * fmi2_state.c: the FMI 2.0 FMU state functions of a test FMU (FMI 2.0
 * section 2.1.8): get, set and free a snapshot, and serialize it to bytes.
 *
 * DESIGN: thin wrappers around common/snapshot.c, refused when the model's
 * canGetAndSetFMUstate / canSerializeFMUstate flags are false; allowed in
 * every state, including the error state, so that fmi2SetFMUstate can
 * recover an instance.
 */
#include <errno.h>

#include "fmi2Functions.h"

#include "common.h"

static fmi2Status fail(struct inst *inst)
{
        inst_fail(inst);
        return fmi2Error;
}

/* Common checks of the FMU state functions. */
static bool state_call_ok(struct inst *inst, const char *fn, bool serialize, const void *ptr)
{
        if (!(model.caps & MODEL_CAN_GET_SET_STATE)) {
                inst_log(inst, FMU_ERROR, "%s: canGetAndSetFMUstate is false", fn);
                return false;
        }
        if (serialize && !(model.caps & MODEL_CAN_SERIALIZE_STATE)) {
                inst_log(inst, FMU_ERROR, "%s: canSerializeFMUstate is false", fn);
                return false;
        }
        if (!ptr) {
                inst_log(inst, FMU_ERROR, "%s: a pointer argument is NULL", fn);
                return false;
        }
        return true;
}

static fmi2Status state_fail(struct inst *inst, const char *fn, int r)
{
        inst_log(inst, FMU_ERROR, "%s: %s", fn,
                 r == -ENOMEM ? "out of memory" : "not an FMU state of this model, or damaged");
        return fail(inst);
}

fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *FMUstate)
{
        struct inst *inst = c;
        int r;

        if (!inst)
                return fmi2Error;
        if (!state_call_ok(inst, "fmi2GetFMUstate", false, FMUstate))
                return fail(inst);
        r = snapshot_get(inst, (struct snapshot **)FMUstate);
        if (r < 0)
                return state_fail(inst, "fmi2GetFMUstate", r);
        return fmi2OK;
}

fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate FMUstate)
{
        struct inst *inst = c;
        int r;

        if (!inst)
                return fmi2Error;
        if (!state_call_ok(inst, "fmi2SetFMUstate", false, FMUstate))
                return fail(inst);
        r = snapshot_set(inst, FMUstate);
        if (r < 0)
                return state_fail(inst, "fmi2SetFMUstate", r);
        return fmi2OK;
}

fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *FMUstate)
{
        struct inst *inst = c;
        int r;

        if (!inst)
                return fmi2Error;
        if (!FMUstate)
                return fmi2OK;
        if (!state_call_ok(inst, "fmi2FreeFMUstate", false, FMUstate))
                return fail(inst);
        r = snapshot_free(inst, *FMUstate);
        if (r < 0)
                return state_fail(inst, "fmi2FreeFMUstate", r);
        *FMUstate = NULL;
        return fmi2OK;
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate FMUstate, size_t *size)
{
        struct inst *inst = c;
        int r;

        if (!inst)
                return fmi2Error;
        if (!state_call_ok(inst, "fmi2SerializedFMUstateSize", true, size))
                return fail(inst);
        r = snapshot_serialized_size(inst, FMUstate, size);
        if (r < 0)
                return state_fail(inst, "fmi2SerializedFMUstateSize", r);
        return fmi2OK;
}

fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate FMUstate,
                                 fmi2Byte serializedState[], size_t size)
{
        struct inst *inst = c;

        if (!inst)
                return fmi2Error;
        if (!state_call_ok(inst, "fmi2SerializeFMUstate", true, serializedState))
                return fail(inst);
        if (snapshot_serialize(inst, FMUstate, (uint8_t *)serializedState, size) < 0) {
                inst_log(inst, FMU_ERROR, "fmi2SerializeFMUstate: bad FMU state or size %zu", size);
                return fail(inst);
        }
        return fmi2OK;
}

fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte serializedState[],
                                   size_t size, fmi2FMUstate *FMUstate)
{
        struct inst *inst = c;
        int r;

        if (!inst)
                return fmi2Error;
        if (!state_call_ok(inst, "fmi2DeSerializeFMUstate", true, FMUstate))
                return fail(inst);
        r = snapshot_deserialize(inst, (const uint8_t *)serializedState, size,
                                 (struct snapshot **)FMUstate);
        if (r < 0) {
                inst_log(inst, FMU_ERROR, "fmi2DeSerializeFMUstate: %s",
                         r == -ENOMEM ? "out of memory" :
                         "not a serialized FMU state of this model (size, magic or checksum)");
                return fail(inst);
        }
        return fmi2OK;
}
