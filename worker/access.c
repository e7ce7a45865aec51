/*
 * access: which variable may be set or read in which state, from its
 * causality, variability, initial attribute, clocks and intermediate
 * update flags: FMI 3.0 sections 2.2.7.2, 2.3.2 to 2.3.7, 4.2.1, 4.2.2
 * and table 18; FMI 2.0 section 4.2.4 for FMI 2.0 FMUs. In Event Mode a
 * clocked variable also needs one of its Clocks active (clocks.c).
 *
 * DESIGN: one function per direction, one case per state, each refusal a
 * sentence that completes "variable 'x' (vr n) ..." and names the rule.
 * Where the standard is ambiguous we refuse: a structural parameter is set
 * only in (Re)Configuration Mode (its causality's definition), although
 * the table of Instantiated would admit it.
 */
#include <stdlib.h>

#include "fmi/md_access.h"
#include "worker/worker.h"

static int cmp_u32(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

        return x < y ? -1 : x > y;
}

static bool is_required(const struct worker *w, uint32_t vr)
{
        return w->n_required &&
               bsearch(&vr, w->required, w->n_required, sizeof(vr), cmp_u32) != NULL;
}

static bool is_input(const struct md_variable *v)
{
        return v->causality == MD_CAUSALITY_INPUT;
}

static const char *intermediate_set_refusal(const struct worker *w, const struct md_variable *v)
{
        if (!is_input(v) || !v->intermediate_update)
                return "is not an input with intermediateUpdate=\"true\" (section 4.2.2)";
        if (v->variability != MD_VARIABILITY_CONTINUOUS)
                return "is a discrete input: it must not be set in Intermediate Update Mode";
        if (!is_required(w, v->vr))
                return "is not in requiredIntermediateVariables";
        return NULL;
}

static const char *set_refusal3(const struct worker *w, const struct md_variable *v)
{
        bool structural = v->causality == MD_CAUSALITY_STRUCTURAL_PARAMETER;
        bool clocked = v->n_clocks > 0;
        const char *why;

        if (v->type == MD_CLOCK) {
                if (w->state != CALL_ST_EVENT)
                        return "is a Clock: it can only be set in Event Mode";
                if (!is_input(v))
                        return "is not an input Clock";
                return clocks_access_refusal(w, v);
        }
        if (clocked && w->state != CALL_ST_EVENT && w->state != CALL_ST_INITIALIZATION)
                return "is clocked: it can only be set in Event Mode and Initialization Mode";
        switch (w->state) {
        case CALL_ST_INSTANTIATED:
                if (structural)
                        return "is a structural parameter: set it in Configuration Mode";
                if (!is_input(v) && v->initial != MD_INITIAL_EXACT && v->initial != MD_INITIAL_APPROX)
                        return "has initial=\"calculated\": it cannot be set in Instantiated";
                return NULL;
        case CALL_ST_INITIALIZATION:
                if (structural)
                        return "is a structural parameter: set it in Configuration Mode";
                if (!is_input(v) && v->initial != MD_INITIAL_EXACT)
                        return "has no initial=\"exact\": it cannot be set in Initialization Mode";
                return NULL;
        case CALL_ST_CONFIGURATION:
                if (!structural)
                        return "is not a structural parameter: only those can be set in "
                               "Configuration Mode";
                return NULL;
        case CALL_ST_RECONFIGURATION:
                if (!structural || v->variability != MD_VARIABILITY_TUNABLE)
                        return "is not a tunable structural parameter: only those can be set in "
                               "Reconfiguration Mode";
                return NULL;
        case CALL_ST_STEP:
                return md_step_set_refusal(v);
        case CALL_ST_EVENT:
                why = md_step_set_refusal(v);
                return why ? why : clocks_access_refusal(w, v);
        case CALL_ST_INTERMEDIATE:
                return intermediate_set_refusal(w, v);
        default:
                return "cannot be set in this state";
        }
}

/* FMI 2.0 section 4.2.4, the table of fmi2SetXXX. */
static const char *set_refusal2(const struct worker *w, const struct md_variable *v)
{
        switch (w->state) {
        case CALL_ST_INSTANTIATED:
                if (!is_input(v) && v->initial != MD_INITIAL_EXACT && v->initial != MD_INITIAL_APPROX)
                        return "has initial=\"calculated\": it cannot be set in instantiated";
                return NULL;
        case CALL_ST_INITIALIZATION:
                if (!is_input(v) && v->initial != MD_INITIAL_EXACT)
                        return "is neither an input nor initial=\"exact\": it cannot be set in "
                               "initializationMode";
                return NULL;
        case CALL_ST_STEP:
                return md_step_set_refusal(v);
        default:
                return "cannot be set in this state";
        }
}

const char *access_set_refusal(const struct worker *w, const struct md_variable *v)
{
        if (v->causality == MD_CAUSALITY_INDEPENDENT)
                return "is the independent variable: it is never set (its value comes from the "
                       "start time and the steps)";
        if (v->variability == MD_VARIABILITY_CONSTANT)
                return "is a constant: it cannot be set";
        return w->fmi == MD_FMI3 ? set_refusal3(w, v) : set_refusal2(w, v);
}

const char *access_get_refusal(const struct worker *w, const struct md_variable *v)
{
        if (w->fmi == MD_FMI2)
                return NULL;
        if (v->type == MD_CLOCK && w->state != CALL_ST_EVENT)
                return "is a Clock: it can only be read in Event Mode";
        if (v->n_clocks > 0 && w->state != CALL_ST_EVENT && w->state != CALL_ST_INITIALIZATION)
                return "is clocked: it can only be read in Event Mode and Initialization Mode";
        if (w->state == CALL_ST_EVENT)
                return clocks_access_refusal(w, v);
        if (w->state != CALL_ST_INTERMEDIATE)
                return NULL;
        if (!v->intermediate_update)
                return "is not an intermediate variable (intermediateUpdate=\"true\", section 4.2.2)";
        if (!is_required(w, v->vr))
                return "is not in requiredIntermediateVariables";
        return NULL;
}
