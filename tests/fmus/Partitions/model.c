/*
 * Partitions: a Scheduled Execution FMU (FMI 3.0 section 5) with two model
 * partitions of different priority, for the worker that schedules them.
 *
 *   fast (Clock 1, 10 ms, priority 1):  lock; shared += step; unlock
 *   slow (Clock 2, 25 ms, priority 2):  lock; seen = shared; unlock;
 *                                       n_slow += 1; t_slow = activationTime;
 *                                       at an odd n_slow the output Clock
 *                                       odd ticks (clockUpdate)
 *
 * At 0 and 50 ms both tick: fast must run first (its priority value is
 * smaller, section 2.4.4), so slow sees fast's sum of that instant.
 *
 * DESIGN: the whole FMI 3.0 API in one file, as a Scheduled Execution
 * export has it: the states of section 5.2 (Instantiated, Initialization
 * Mode, Clock Activation Mode, Terminated) checked by every function, so
 * that an importer that calls fmi3SetClock, fmi3DoStep or Event Mode
 * functions, or activates a partition out of Clock Activation Mode, is
 * refused with a message. The preemption lock guards shared as a real
 * export guards data two partitions share (section 5.1.2). Parameter
 * fault = 1 makes slow's 3rd activation unlock once more than it locked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi3Functions.h"

#define TOKEN "{5e2b7c41-0d9a-4f63-a1c8-3b6e9d20f7a4}"

enum { VR_TIME, VR_FAST, VR_SLOW, VR_STEP, VR_SHARED, VR_SEEN, VR_N_SLOW, VR_T_SLOW, VR_ODD,
       VR_FAULT, N_VR };

enum mode { M_INSTANTIATED, M_INIT, M_ACTIVATION, M_TERMINATED };

struct inst {
        double v[N_VR];
        bool odd;               /* the output Clock ticked and was not read yet */
        enum mode mode;
        fmi3InstanceEnvironment env;
        fmi3LogMessageCallback log;
        fmi3ClockUpdateCallback clock_update;
        fmi3LockPreemptionCallback lock;
        fmi3UnlockPreemptionCallback unlock;
};

static fmi3Status fail(struct inst *in, const char *fn, const char *why)
{
        char msg[256];

        if (in && in->log) {
                snprintf(msg, sizeof(msg), "%s: %s", fn, why);
                in->log(in->env, fmi3Error, "logStatusError", msg);
        }
        return fmi3Error;
}

#define B(m) (1u << (m))
#define MODE_OK(in, fn, allowed) \
        do { \
                if (!(in)) \
                        return fmi3Error; \
                if (!((1u << (in)->mode) & (allowed))) \
                        return fail((in), (fn), "not allowed in this state (section 5.2)"); \
        } while (0)

static void start(struct inst *in)
{
        memset(in->v, 0, sizeof(in->v));
        in->v[VR_STEP] = 1.0;
        in->odd = false;
}

const char *fmi3GetVersion(void)
{
        return fmi3Version;
}

fmi3Status fmi3SetDebugLogging(fmi3Instance instance, fmi3Boolean loggingOn, size_t nCategories,
                               const fmi3String categories[])
{
        (void) loggingOn;
        (void) nCategories;
        (void) categories;
        return instance ? fmi3OK : fmi3Error;
}

fmi3Instance fmi3InstantiateScheduledExecution(fmi3String instanceName, fmi3String instantiationToken,
                                               fmi3String resourcePath, fmi3Boolean visible,
                                               fmi3Boolean loggingOn,
                                               fmi3InstanceEnvironment instanceEnvironment,
                                               fmi3LogMessageCallback logMessage,
                                               fmi3ClockUpdateCallback clockUpdate,
                                               fmi3LockPreemptionCallback lockPreemption,
                                               fmi3UnlockPreemptionCallback unlockPreemption)
{
        struct inst *in;

        (void) resourcePath;
        (void) visible;
        (void) loggingOn;
        if (!instanceName || !instantiationToken || strcmp(instantiationToken, TOKEN) ||
            !clockUpdate || !lockPreemption || !unlockPreemption)
                return NULL;
        in = calloc(1, sizeof(*in));
        if (!in)
                return NULL;
        in->env = instanceEnvironment;
        in->log = logMessage;
        in->clock_update = clockUpdate;
        in->lock = lockPreemption;
        in->unlock = unlockPreemption;
        start(in);
        return in;
}

void fmi3FreeInstance(fmi3Instance instance)
{
        free(instance);
}

fmi3Status fmi3EnterInitializationMode(fmi3Instance instance, fmi3Boolean toleranceDefined,
                                       fmi3Float64 tolerance, fmi3Float64 startTime,
                                       fmi3Boolean stopTimeDefined, fmi3Float64 stopTime)
{
        struct inst *in = instance;

        (void) toleranceDefined;
        (void) tolerance;
        (void) stopTimeDefined;
        (void) stopTime;
        MODE_OK(in, "fmi3EnterInitializationMode", B(M_INSTANTIATED));
        in->v[VR_TIME] = startTime;
        in->mode = M_INIT;
        return fmi3OK;
}

fmi3Status fmi3ExitInitializationMode(fmi3Instance instance)
{
        struct inst *in = instance;

        MODE_OK(in, "fmi3ExitInitializationMode", B(M_INIT));
        in->mode = M_ACTIVATION;        /* section 5.2: Clock Activation Mode next */
        return fmi3OK;
}

static void fast(struct inst *in)
{
        in->lock();
        in->v[VR_SHARED] += in->v[VR_STEP];
        in->unlock();
}

static void slow(struct inst *in, double t)
{
        in->lock();
        in->v[VR_SEEN] = in->v[VR_SHARED];
        in->unlock();
        in->v[VR_N_SLOW] += 1;
        in->v[VR_T_SLOW] = t;
        if (in->v[VR_FAULT] == 1 && in->v[VR_N_SLOW] == 3)
                in->unlock();
        if ((int)in->v[VR_N_SLOW] % 2 == 1) {
                in->odd = true;
                in->clock_update(in->env);      /* Clock Update Mode: the importer reads odd */
                in->odd = false;
        }
}

fmi3Status fmi3ActivateModelPartition(fmi3Instance instance, fmi3ValueReference clockReference,
                                      fmi3Float64 activationTime)
{
        struct inst *in = instance;

        MODE_OK(in, "fmi3ActivateModelPartition", B(M_ACTIVATION));
        if (activationTime < in->v[VR_TIME])
                return fail(in, "fmi3ActivateModelPartition", "activationTime went backwards");
        in->v[VR_TIME] = activationTime;
        if (clockReference == VR_FAST)
                fast(in);
        else if (clockReference == VR_SLOW)
                slow(in, activationTime);
        else
                return fail(in, "fmi3ActivateModelPartition", "not an input Clock");
        return fmi3OK;
}

fmi3Status fmi3GetClock(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                        fmi3Clock values[])
{
        struct inst *in = instance;

        if (!in)
                return fmi3Error;
        for (size_t i = 0; i < nvr; i++) {
                if (vr[i] != VR_ODD)
                        return fail(in, "fmi3GetClock", "not an output Clock");
                /* Reported once (section 5.2.2). */
                values[i] = in->odd;
                in->odd = false;
        }
        return fmi3OK;
}

fmi3Status fmi3SetClock(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                        const fmi3Clock values[])
{
        (void) vr;
        (void) nvr;
        (void) values;
        return fail(instance, "fmi3SetClock", "must not be called in Scheduled Execution "
                    "(section 2.2.8.1)");
}

fmi3Status fmi3Terminate(fmi3Instance instance)
{
        struct inst *in = instance;

        MODE_OK(in, "fmi3Terminate", B(M_ACTIVATION));
        in->mode = M_TERMINATED;
        return fmi3OK;
}

fmi3Status fmi3Reset(fmi3Instance instance)
{
        struct inst *in = instance;

        if (!in)
                return fmi3Error;
        start(in);
        in->mode = M_INSTANTIATED;
        return fmi3OK;
}

fmi3Status fmi3GetFloat64(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                          fmi3Float64 values[], size_t nValues)
{
        struct inst *in = instance;

        if (!in || nvr != nValues)
                return fmi3Error;
        for (size_t i = 0; i < nvr; i++) {
                if (vr[i] >= N_VR || vr[i] == VR_FAST || vr[i] == VR_SLOW || vr[i] == VR_ODD)
                        return fail(in, "fmi3GetFloat64", "unknown value reference");
                values[i] = in->v[vr[i]];
        }
        return fmi3OK;
}

fmi3Status fmi3SetFloat64(fmi3Instance instance, const fmi3ValueReference vr[], size_t nvr,
                          const fmi3Float64 values[], size_t nValues)
{
        struct inst *in = instance;

        if (!in || nvr != nValues)
                return fmi3Error;
        for (size_t i = 0; i < nvr; i++) {
                if (vr[i] == VR_STEP)
                        MODE_OK(in, "fmi3SetFloat64", B(M_INIT) | B(M_ACTIVATION));
                else if (vr[i] == VR_FAULT)
                        MODE_OK(in, "fmi3SetFloat64", B(M_INSTANTIATED) | B(M_INIT));
                else
                        return fail(in, "fmi3SetFloat64", "not settable");
                in->v[vr[i]] = values[i];
        }
        return fmi3OK;
}

/* The types this model does not have. */
#include "fmi3_absent.h"
