/*
 * fmi3_state.c: the FMI 3.0 FMU state functions of a test FMU (section
 * 2.2.7.4): get, set and free a snapshot, and serialize it to bytes.
 *
 * DESIGN: thin wrappers around common/snapshot.c. They are refused when the
 * model's canGetAndSetFMUState / canSerializeFMUState flags are false, and
 * in Intermediate Update Mode; everywhere else they are allowed (super
 * state FMU State Settable), including in Terminated after an error, so
 * that fmi3SetFMUState can recover an instance.
 */
#include <errno.h>

#include "fmi3Functions.h"

#include "common.h"

static fmi3Status fail(struct inst *inst)
{
        inst_fail(inst);
        return fmi3Error;
}

/* Common checks of the FMU state functions; ptr is the pointer argument. */
static bool state_call_ok(struct inst *inst, const char *fn, bool serialize, const void *ptr)
{
        if (!inst_check_state(inst, fn, SETTLED_STATE))
                return false;
        if (!ptr) {
                inst_log(inst, FMU_ERROR, "%s: a pointer argument is NULL", fn);
                return false;
        }
        if (!(model.caps & MODEL_CAN_GET_SET_STATE)) {
                inst_log(inst, FMU_ERROR, "%s: canGetAndSetFMUState is false", fn);
                return false;
        }
        if (serialize && !(model.caps & MODEL_CAN_SERIALIZE_STATE)) {
                inst_log(inst, FMU_ERROR, "%s: canSerializeFMUState is false", fn);
                return false;
        }
        return true;
}

/* Log the failure of a snapshot operation and fail. */
static fmi3Status state_fail(struct inst *inst, const char *fn, int r)
{
        inst_log(inst, FMU_ERROR, "%s: %s", fn,
                 r == -ENOMEM ? "out of memory" : "not an FMU state of this model, or damaged");
        return fail(inst);
}

fmi3Status fmi3GetFMUState(fmi3Instance instance, fmi3FMUState *FMUState)
{
        struct inst *inst = instance;
        int r;

        if (!inst)
                return fmi3Error;
        if (!state_call_ok(inst, "fmi3GetFMUState", false, FMUState))
                return fail(inst);
        r = snapshot_get(inst, (struct snapshot **)FMUState);
        if (r < 0)
                return state_fail(inst, "fmi3GetFMUState", r);
        return fmi3OK;
}

fmi3Status fmi3SetFMUState(fmi3Instance instance, fmi3FMUState FMUState)
{
        struct inst *inst = instance;
        int r;

        if (!inst)
                return fmi3Error;
        if (!state_call_ok(inst, "fmi3SetFMUState", false, FMUState))
                return fail(inst);
        r = snapshot_set(inst, FMUState);
        if (r < 0)
                return state_fail(inst, "fmi3SetFMUState", r);
        return fmi3OK;
}

fmi3Status fmi3FreeFMUState(fmi3Instance instance, fmi3FMUState *FMUState)
{
        struct inst *inst = instance;
        int r;

        if (!inst)
                return fmi3Error;
        if (!FMUState)
                return fmi3OK;
        if (!state_call_ok(inst, "fmi3FreeFMUState", false, FMUState))
                return fail(inst);
        r = snapshot_free(inst, *FMUState);
        if (r < 0)
                return state_fail(inst, "fmi3FreeFMUState", r);
        *FMUState = NULL;
        return fmi3OK;
}

fmi3Status fmi3SerializedFMUStateSize(fmi3Instance instance, fmi3FMUState FMUState,
                                      size_t *size)
{
        struct inst *inst = instance;
        int r;

        if (!inst)
                return fmi3Error;
        if (!state_call_ok(inst, "fmi3SerializedFMUStateSize", true, size))
                return fail(inst);
        r = snapshot_serialized_size(inst, FMUState, size);
        if (r < 0)
                return state_fail(inst, "fmi3SerializedFMUStateSize", r);
        return fmi3OK;
}

fmi3Status fmi3SerializeFMUState(fmi3Instance instance, fmi3FMUState FMUState,
                                 fmi3Byte serializedState[], size_t size)
{
        struct inst *inst = instance;
        int r;

        if (!inst)
                return fmi3Error;
        if (!state_call_ok(inst, "fmi3SerializeFMUState", true, serializedState))
                return fail(inst);
        r = snapshot_serialize(inst, FMUState, serializedState, size);
        if (r < 0) {
                inst_log(inst, FMU_ERROR, "fmi3SerializeFMUState: bad FMU state or size %zu", size);
                return fail(inst);
        }
        return fmi3OK;
}

fmi3Status fmi3DeserializeFMUState(fmi3Instance instance, const fmi3Byte serializedState[],
                                   size_t size, fmi3FMUState *FMUState)
{
        struct inst *inst = instance;
        int r;

        if (!inst)
                return fmi3Error;
        if (!state_call_ok(inst, "fmi3DeserializeFMUState", true, FMUState))
                return fail(inst);
        r = snapshot_deserialize(inst, serializedState, size, (struct snapshot **)FMUState);
        if (r < 0) {
                inst_log(inst, FMU_ERROR, "fmi3DeserializeFMUState: %s",
                         r == -ENOMEM ? "out of memory" :
                         "not a serialized FMU state of this model (size, magic or checksum)");
                return fail(inst);
        }
        return fmi3OK;
}
