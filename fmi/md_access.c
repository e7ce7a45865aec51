/* md_access: what may be set in Step Mode (md_access.h). */
#include "fmi/md_access.h"

const char *md_step_set_refusal(const struct md_variable *v)
{
        if (v->causality == MD_CAUSALITY_INDEPENDENT)
                return "is the independent variable: it is never set (its value comes from the "
                       "start time and the steps)";
        if (v->variability == MD_VARIABILITY_CONSTANT)
                return "is a constant: it cannot be set";
        if (v->causality == MD_CAUSALITY_INPUT ||
            (v->causality == MD_CAUSALITY_PARAMETER && v->variability == MD_VARIABILITY_TUNABLE))
                return NULL;
        switch (v->causality) {
        case MD_CAUSALITY_PARAMETER:
                return "is a fixed parameter: it can only be set before Initialization Mode ends";
        case MD_CAUSALITY_STRUCTURAL_PARAMETER:
                return "is a structural parameter: set it in Reconfiguration Mode";
        case MD_CAUSALITY_OUTPUT:
                return "is an output: only inputs and tunable parameters can be set now";
        case MD_CAUSALITY_CALCULATED_PARAMETER:
                return "is a calculated parameter: only inputs and tunable parameters can be set now";
        default:
                return "is a local variable: only inputs and tunable parameters can be set now";
        }
}
