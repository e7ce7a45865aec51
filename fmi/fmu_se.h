/*
 * fmu_se: which Scheduled Execution FMUs (FMI 3.0 section 5) fmud hosts,
 * and their model partitions in activation order.
 *
 * DESIGN: a worker activates an SE FMU's model partitions at the ticks of
 * their input Clocks, which the master plans as it plans a Co-Simulation
 * instance's (periodic Clocks from their intervals, triggered Clocks from
 * the output Clocks connected to them). Countdown and changing input
 * Clocks would need the FMU's clockUpdate to reschedule them at run time,
 * so they are refused at load, as is an input Clock without the priority
 * that section 2.4.4 makes mandatory in Scheduled Execution.
 */
#ifndef FMUD_FMI_FMU_SE_H
#define FMUD_FMI_FMU_SE_H

#include <stddef.h>

#include "model_description.h"

/* 0 when a worker can host md's ScheduledExecution; else -EINVAL and why. */
int fmu_se_check(const struct md *md, char *why, size_t size);

/*
 * The model partitions (the input Clocks) of md in activation order:
 * priority first (smaller values are higher priorities, section 2.4.4),
 * then document order. Fills up to n indices into md->vars into ret and
 * returns how many there are.
 */
size_t fmu_se_partitions(const struct md *md, size_t *ret, size_t n);

#endif
