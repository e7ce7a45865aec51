/*
 * init: a session's instances taken together through Initialization
 * Mode (FMI 3.0 section 2.3.3; FMI 2.0 section 4.2.4), from Instantiated
 * to Step Mode at the experiment's start time. Internal to the session.
 *
 * DESIGN: init.c runs the sequence (start values, enter, inputs, exit,
 * event iteration); init_inputs.c resolves connected inputs. Connected
 * inputs form a graph over variables, not components: an edge from each
 * producer output (or calculatedParameter) to the input (or parameter) it
 * feeds, and an edge from an input to each output of the same FMU whose
 * initial value depends on it (ModelStructure/InitialUnknown, else
 * Output, else "depends on every input"). Two FMUs that feed each other
 * are then often acyclic (MsdMass1.x1 -> MsdMass2.F -> MsdMass1.F): the
 * strongly connected components (Tarjan) are visited in topological
 * order; a single variable is got or set once, a real loop is iterated
 * in Gauss-Seidel sweeps (its inputs in the order values flow around it,
 * each set from its producer's output got just before) until no input
 * changes by more than the tolerance, or fails with -ELOOP naming its
 * variables (init_loop.c).
 */
#ifndef FMUD_ENGINE_INIT_H
#define FMUD_ENGINE_INIT_H

#include "engine/master/session_int.h"

/*
 * Every instance from Instantiated to Step Mode, or to the Event Mode
 * after initialization for one with output Clocks (see DESIGN). Returns 0,
 * or -errno with s->msg naming the component, the call and the reason.
 */
int init_system(struct session *s);

/* Resolve connected inputs; every instance is in Initialization Mode. 0 or -errno (s->msg). */
int init_inputs(struct session *s);

/*
 * Check that every input of every component has a value: a connection,
 * a start value in the scenario, or a start attribute. Returns 0, or
 * -EINVAL with s->msg naming every input without one.
 */
int init_check_inputs(struct session *s);

/* Set the inputs s->opts.inputs drives, at the start time (input_init.c). 0 or -errno (s->msg). */
int init_file_inputs(struct session *s);

/* Set one variable of component comp from a start value (scenario or model description). */
int init_set_start(struct session *s, struct session_inst *si, const struct md_variable *v,
                   const struct md_values *value, const char *origin);

#endif
