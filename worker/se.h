/*
 * se: a Scheduled Execution FMU (FMI 3.0 section 5) hosted as a
 * Co-Simulation instance with Event Mode (md_host_se()).
 *
 * The worker is the FMU's scheduler. The master's Event Mode at a tick
 * stands for Clock Activation Mode: fmi3SetClock(true) on input Clocks
 * marks their model partitions to run (an SE FMU is never given
 * fmi3SetClock, section 2.2.8.1), the clocked inputs are set, and the first
 * get (or fmi3UpdateDiscreteStates) activates the marked partitions with
 * fmi3ActivateModelPartition(clock, time), highest priority first
 * (fmu_se.h). doStep, fmi3EnterEventMode and fmi3EnterStepMode call
 * nothing: between ticks an SE FMU is not called. The partitions run one
 * at a time, so nothing preempts them: the lockPreemption and
 * unlockPreemption callbacks are counted and must balance within each
 * partition (an unlock without a lock fails it with a message). The
 * clockUpdate callback (Clock Update Mode, section 5.2.2) polls the
 * output Clocks with fmi3GetClock there; the master then reads them as it
 * reads a Co-Simulation FMU's.
 */
#ifndef FMUD_WORKER_SE_H
#define FMUD_WORKER_SE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fmi/fmi3FunctionTypes.h"
#include "worker/call.h"

struct worker;

/* w->se for an FMU hosted as Scheduled Execution. 0 or -ENOMEM. */
int se_open(struct worker *w);
void se_close(struct worker *w);
/* fmi3InstantiateScheduledExecution with the worker's callbacks. */
fmi3Instance se_instantiate(struct worker *w, const char *name, const char *resources,
                            bool visible, bool logging_on);
/* The start time (fmi3EnterInitializationMode), or a step's end: the next activation time. */
void se_set_time(struct worker *w, double t);
/* fmi3Reset: nothing marked, no Clock reported. */
void se_reset(struct worker *w);

/* In place of fmi3SetClock: mark (or unmark) the partitions of input Clocks. FMI status. */
int se_set_clocks(struct worker *w, const uint32_t *vrs, size_t n, const bool *v);
/* Activate the marked partitions in priority order. FMI status (Error: w->last_error says why). */
int se_activate(struct worker *w);
/* In place of fmi3GetClock: the partitions run, then what clockUpdate reported. FMI status. */
int se_get_clocks(struct worker *w, const uint32_t *vrs, size_t n, bool *v);
/* In place of fmi3UpdateDiscreteStates: the partitions run; the instant is over. */
int se_update_discrete(struct worker *w, struct call_discrete *d);

#endif
