/*
 * md_access: which variables an importer may set between two
 * communication points, in Step Mode (FMI 3.0 section 2.2.7.2 and table
 * 18; FMI 2.0 section 4.2.4, stepComplete): inputs and tunable
 * parameters. The worker enforces it on every set (worker/access.c); the
 * daemon checks a whole request against it before the first value goes
 * out, so that a request is applied all or nothing.
 */
#ifndef FMUD_FMI_MD_ACCESS_H
#define FMUD_FMI_MD_ACCESS_H

#include "fmi/model_description.h"

/*
 * Why v cannot be set in Step Mode, as a sentence completing "variable 'x'
 * ...", or NULL when it can. A structural parameter is refused: it is set
 * in Reconfiguration Mode (section 2.3.7).
 */
const char *md_step_set_refusal(const struct md_variable *v);

#endif
