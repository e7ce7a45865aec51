/*
 * fsm: the FMI state machine the worker enforces before any call reaches
 * the FMU: FMI 3.0 Co-Simulation (sections 2.3 and 4.2) and FMI 2.0
 * Co-Simulation (FMI 2.0 section 4.2.4), as tables of the states each
 * function is allowed in, and the transition each takes on success.
 *
 * DESIGN: where the standard leaves room we take the stricter reading:
 * - FMI 3.0: fmi3Get* is allowed in Instantiated (start values, 2.3.2),
 *   not in (Re)Configuration Mode, whose allowed calls list only sets.
 * - fmi3Get* in Step Mode after an fmi3Set* without fmi3DoStep in between
 *   is refused (4.2.1). A DO_STEP request sets, steps and gets in order.
 * - Any fmi3Error leads to Terminated (2.3.1, "Terminated after an
 *   error" here, with the same allowed calls: gets for diagnosis, FMU
 *   state functions, reset, free); fmi3Discard changes nothing.
 * - After Fatal nothing reaches the FMU, fmi3FreeInstance included (2.2.4).
 * - fmi3Terminate is allowed in Step and Event Mode; fmi3Reset, the FMU
 *   state functions and fmi3SetDebugLogging in every state of super state
 *   FMU State Settable but Intermediate Update Mode.
 * - Clock interval functions are allowed in Initialization and Event Mode,
 *   shift functions only in Initialization Mode (table 5: no Clock type
 *   has its shift got or set in Event Mode; 2.3.5 does not list them).
 * - Clock activation (clocks.c, FMI 3.0 only): in Event Mode a clocked
 *   variable is set or got only while one of its Clocks is active
 *   (2.2.7.2, 2.2.8.3); in Initialization Mode whatever the Clocks. An
 *   input Clock is active from fmi3SetClock(true) until fmi3SetClock(false),
 *   fmi3UpdateDiscreteStates, fmi3SetFMUState or the end of Event Mode; an
 *   output or local Clock once fmi3GetClock reported it active, until the
 *   same points or the deactivation of an input Clock it may depend on
 *   (2.3.5). A periodic Clock active at one fmi3UpdateDiscreteStates is
 *   not set active again in the same Event Mode (2.3.5).
 * - FMI 2.0: fmi2Get* is not allowed in instantiated; an fmi2Pending
 *   step is only inquired (fmi2GetStatus) or cancelled.
 */
#include <stdio.h>

#include "worker/worker.h"

#define B(s)            (1u << CALL_ST_##s)
#define ALL             ((1u << CALL_ST_COUNT) - 1)
#define SETTABLE3       (B(INSTANTIATED) | B(CONFIGURATION) | B(INITIALIZATION) | B(STEP) | \
                         B(EVENT) | B(RECONFIGURATION) | B(TERMINATED) | B(ERROR))
#define AFTER_INIT2     (B(STEP) | B(STEP_FAILED) | B(STEP_CANCELED) | B(TERMINATED) | B(ERROR))
#define SETTABLE2       (B(INSTANTIATED) | B(INITIALIZATION) | AFTER_INIT2)

static const uint32_t allowed3[CALL_OP_COUNT] = {
        [CALL_OP_INSTANTIATE] = B(START),
        [CALL_OP_FREE] = ALL & ~B(INTERMEDIATE),
        [CALL_OP_SET_DEBUG_LOGGING] = SETTABLE3,
        [CALL_OP_ENTER_INIT] = B(INSTANTIATED),
        [CALL_OP_EXIT_INIT] = B(INITIALIZATION),
        [CALL_OP_ENTER_CONFIG] = B(INSTANTIATED) | B(STEP),
        [CALL_OP_EXIT_CONFIG] = B(CONFIGURATION) | B(RECONFIGURATION),
        [CALL_OP_ENTER_EVENT] = B(STEP),
        [CALL_OP_ENTER_STEP] = B(EVENT),
        [CALL_OP_EVALUATE_DISCRETE] = B(EVENT),
        [CALL_OP_UPDATE_DISCRETE] = B(EVENT),
        [CALL_OP_TERMINATE] = B(STEP) | B(EVENT),
        [CALL_OP_RESET] = SETTABLE3,
        [CALL_OP_GET] = B(INSTANTIATED) | B(INITIALIZATION) | B(STEP) | B(EVENT) |
                        B(INTERMEDIATE) | B(TERMINATED) | B(ERROR),
        [CALL_OP_SET] = B(INSTANTIATED) | B(CONFIGURATION) | B(INITIALIZATION) | B(STEP) |
                        B(EVENT) | B(RECONFIGURATION) | B(INTERMEDIATE),
        [CALL_OP_GET_INTERVAL_DECIMAL] = B(INITIALIZATION) | B(EVENT),
        [CALL_OP_GET_INTERVAL_FRACTION] = B(INITIALIZATION) | B(EVENT),
        [CALL_OP_GET_SHIFT_DECIMAL] = B(INITIALIZATION),
        [CALL_OP_GET_SHIFT_FRACTION] = B(INITIALIZATION),
        [CALL_OP_SET_INTERVAL_DECIMAL] = B(INITIALIZATION) | B(EVENT),
        [CALL_OP_SET_INTERVAL_FRACTION] = B(INITIALIZATION) | B(EVENT),
        [CALL_OP_SET_SHIFT_DECIMAL] = B(INITIALIZATION),
        [CALL_OP_SET_SHIFT_FRACTION] = B(INITIALIZATION),
        [CALL_OP_DO_STEP] = B(STEP),
        [CALL_OP_GET_OUTPUT_DERIVATIVES] = B(STEP) | B(INTERMEDIATE) | B(TERMINATED) | B(ERROR),
        [CALL_OP_DIRECTIONAL_DERIVATIVE] = B(INITIALIZATION) | B(STEP) | B(EVENT) |
                                           B(TERMINATED) | B(ERROR),
        [CALL_OP_ADJOINT_DERIVATIVE] = B(INITIALIZATION) | B(STEP) | B(EVENT) |
                                       B(TERMINATED) | B(ERROR),
        [CALL_OP_GET_FMU_STATE] = SETTABLE3,
        [CALL_OP_SET_FMU_STATE] = SETTABLE3,
        [CALL_OP_FREE_FMU_STATE] = SETTABLE3,
        [CALL_OP_SERIALIZED_SIZE] = SETTABLE3,
        [CALL_OP_SERIALIZE] = SETTABLE3,
        [CALL_OP_DESERIALIZE] = SETTABLE3,
        [CALL_OP_NUM_DEPENDENCIES] = SETTABLE3,
        [CALL_OP_DEPENDENCIES] = SETTABLE3,
};

static const uint32_t allowed2[CALL_OP_COUNT] = {
        [CALL_OP_INSTANTIATE] = B(START),
        [CALL_OP_FREE] = ALL,
        [CALL_OP_SET_DEBUG_LOGGING] = SETTABLE2 | B(STEP_PENDING),
        [CALL_OP_SETUP_EXPERIMENT] = B(INSTANTIATED),
        [CALL_OP_ENTER_INIT] = B(INSTANTIATED),
        [CALL_OP_EXIT_INIT] = B(INITIALIZATION),
        [CALL_OP_TERMINATE] = B(STEP) | B(STEP_FAILED),
        [CALL_OP_RESET] = SETTABLE2,
        [CALL_OP_GET] = B(INITIALIZATION) | AFTER_INIT2,
        [CALL_OP_SET] = B(INSTANTIATED) | B(INITIALIZATION) | B(STEP),
        [CALL_OP_DO_STEP] = B(STEP),
        [CALL_OP_CANCEL_STEP] = B(STEP_PENDING),
        [CALL_OP_GET_STATUS] = B(STEP) | B(STEP_PENDING) | B(STEP_FAILED) | B(STEP_CANCELED) |
                               B(TERMINATED),
        [CALL_OP_GET_OUTPUT_DERIVATIVES] = AFTER_INIT2,
        [CALL_OP_SET_INPUT_DERIVATIVES] = B(INSTANTIATED) | B(INITIALIZATION) | B(STEP),
        [CALL_OP_DIRECTIONAL_DERIVATIVE] = B(INITIALIZATION) | AFTER_INIT2,
        [CALL_OP_GET_FMU_STATE] = SETTABLE2,
        [CALL_OP_SET_FMU_STATE] = SETTABLE2,
        [CALL_OP_FREE_FMU_STATE] = SETTABLE2,
        [CALL_OP_SERIALIZED_SIZE] = SETTABLE2,
        [CALL_OP_SERIALIZE] = SETTABLE2,
        [CALL_OP_DESERIALIZE] = SETTABLE2,
};

bool fsm_settable(enum call_state s)
{
        return (SETTABLE3 | SETTABLE2) & (1u << s);
}

static const char *state_name(const struct worker *w, enum call_state s)
{
        static const char *const names2[CALL_ST_COUNT] = {
                [CALL_ST_START] = "no instance",
                [CALL_ST_INSTANTIATED] = "instantiated",
                [CALL_ST_INITIALIZATION] = "initializationMode",
                [CALL_ST_STEP] = "stepComplete",
                [CALL_ST_TERMINATED] = "terminated",
                [CALL_ST_ERROR] = "error",
                [CALL_ST_STEP_FAILED] = "stepFailed",
                [CALL_ST_STEP_PENDING] = "stepInProgress",
                [CALL_ST_STEP_CANCELED] = "stepCanceled",
                [CALL_ST_FATAL] = "fatal",
        };

        if (w->fmi == MD_FMI2 && (unsigned)s < CALL_ST_COUNT && names2[s])
                return names2[s];
        return call_state_name(s);
}

static const char *type_part(const struct worker *w, enum md_type t)
{
        if (w->fmi == MD_FMI2) {
                switch (t) {
                case MD_FLOAT64:
                        return "Real";
                case MD_INT32:
                        return "Integer";
                case MD_BOOLEAN:
                        return "Boolean";
                case MD_STRING:
                        return "String";
                default:
                        break;
                }
        }
        return md_type_name(t);
}

/* Format the name of op (type for GET and SET) into buf, as the standard spells it. */
static void format_name(const struct worker *w, enum call_op op, enum md_type type, char *buf,
                        size_t size)
{
        const char *p = w->fmi == MD_FMI2 ? "fmi2" : "fmi3";
        const char *f = call_fmi_function(op, w->fmi == MD_FMI2 ? 2 : 3);

        if (op == CALL_OP_GET || op == CALL_OP_SET)
                snprintf(buf, size, "%s%s%s", p, op == CALL_OP_GET ? "Get" : "Set",
                         (unsigned)type < MD_TYPE_COUNT ? type_part(w, type) : "?");
        else if (f)
                snprintf(buf, size, "%s%s", p, f);
        else
                snprintf(buf, size, "%s", call_op_name(op));
}

/*
 * Every name, formatted once per FMI version on first use: a request only
 * needs its name when it is refused, and formatting one on every request
 * was about a fifth of the worker's own time. Single-threaded, like the
 * worker.
 */
struct fmi_names {
        bool built;
        char op[CALL_OP_COUNT][64];
        char get[MD_TYPE_COUNT + 1][64];        /* [MD_TYPE_COUNT]: an unknown type */
        char set[MD_TYPE_COUNT + 1][64];
};

static void build_names(const struct worker *w, struct fmi_names *n)
{
        for (unsigned op = 0; op < CALL_OP_COUNT; op++)
                format_name(w, (enum call_op)op, MD_TYPE_COUNT, n->op[op], sizeof(n->op[op]));
        for (unsigned t = 0; t <= MD_TYPE_COUNT; t++) {
                format_name(w, CALL_OP_GET, (enum md_type)t, n->get[t], sizeof(n->get[t]));
                format_name(w, CALL_OP_SET, (enum md_type)t, n->set[t], sizeof(n->set[t]));
        }
        n->built = true;
}

const char *fsm_fmi_name(const struct worker *w, enum call_op op, enum md_type type)
{
        static struct fmi_names names[2];       /* [0]: FMI 2.0, [1]: FMI 3.0 */
        struct fmi_names *n = &names[w->fmi == MD_FMI2 ? 0 : 1];
        unsigned t = (unsigned)type < MD_TYPE_COUNT ? (unsigned)type : MD_TYPE_COUNT;

        if ((unsigned)op >= CALL_OP_COUNT)
                return "?";
        if (!n->built)
                build_names(w, n);
        if (op == CALL_OP_GET)
                return n->get[t];
        if (op == CALL_OP_SET)
                return n->set[t];
        return n->op[op];
}

static bool has_structural(const struct md *md, bool tunable_only)
{
        for (size_t i = 0; i < md->n_vars; i++)
                if (md->vars[i].causality == MD_CAUSALITY_STRUCTURAL_PARAMETER &&
                    (!tunable_only || md->vars[i].variability == MD_VARIABILITY_TUNABLE))
                        return true;
        return false;
}

/* What the FMU must declare for op; NULL when it does. */
static const char *missing_capability(const struct worker *w, enum call_op op, enum md_type type)
{
        const struct md_cosim *cs = &w->md->cs;
        const struct fmi3_api *f3 = &w->lib->f3;

        switch (op) {
        case CALL_OP_ENTER_CONFIG:
        case CALL_OP_EXIT_CONFIG:
                if (!has_structural(w->md, false))
                        return "the model has no structural parameters";
                if (op == CALL_OP_ENTER_CONFIG && w->state == CALL_ST_STEP &&
                    !has_structural(w->md, true))
                        return "the model has no tunable structural parameters";
                return NULL;
        case CALL_OP_ENTER_EVENT:
        case CALL_OP_ENTER_STEP:
        case CALL_OP_UPDATE_DISCRETE:
                return cs->has_event_mode ? NULL : "hasEventMode is false";
        case CALL_OP_EVALUATE_DISCRETE:
                if (!cs->has_event_mode)
                        return "hasEventMode is false";
                return cs->provides_evaluate_discrete_states && f3->fmi3EvaluateDiscreteStates ?
                       NULL : "providesEvaluateDiscreteStates is false";
        case CALL_OP_GET_FMU_STATE:
        case CALL_OP_SET_FMU_STATE:
        case CALL_OP_FREE_FMU_STATE:
                return cs->can_get_and_set_fmu_state ? NULL : "canGetAndSetFMUState is false";
        case CALL_OP_SERIALIZED_SIZE:
        case CALL_OP_SERIALIZE:
        case CALL_OP_DESERIALIZE:
                if (!cs->can_get_and_set_fmu_state)
                        return "canGetAndSetFMUState is false";
                return cs->can_serialize_fmu_state ? NULL : "canSerializeFMUState is false";
        case CALL_OP_DIRECTIONAL_DERIVATIVE:
                return cs->provides_directional_derivatives ? NULL :
                       "providesDirectionalDerivatives is false";
        case CALL_OP_ADJOINT_DERIVATIVE:
                return cs->provides_adjoint_derivatives ? NULL : "providesAdjointDerivatives is false";
        case CALL_OP_GET_OUTPUT_DERIVATIVES:
                return cs->max_output_derivative_order > 0 ? NULL : "maxOutputDerivativeOrder is 0";
        case CALL_OP_SET_INPUT_DERIVATIVES:
                return cs->can_interpolate_inputs ? NULL : "canInterpolateInputs is false";
        case CALL_OP_NUM_DEPENDENCIES:
        case CALL_OP_DEPENDENCIES:
                return cs->provides_per_element_dependencies && f3->fmi3GetVariableDependencies &&
                       f3->fmi3GetNumberOfVariableDependencies ? NULL :
                       "providesPerElementDependencies is false";
        case CALL_OP_GET_INTERVAL_DECIMAL:
                if (!md_has_clocks(w->md))
                        return "the model has no Clocks";
                return f3->fmi3GetIntervalDecimal ? NULL : "the FMU does not export it";
        case CALL_OP_GET_INTERVAL_FRACTION:
                if (!md_has_clocks(w->md))
                        return "the model has no Clocks";
                return f3->fmi3GetIntervalFraction ? NULL : "the FMU does not export it";
        case CALL_OP_GET_SHIFT_DECIMAL:
                if (!md_has_clocks(w->md))
                        return "the model has no Clocks";
                return f3->fmi3GetShiftDecimal ? NULL : "the FMU does not export it";
        case CALL_OP_GET_SHIFT_FRACTION:
                if (!md_has_clocks(w->md))
                        return "the model has no Clocks";
                return f3->fmi3GetShiftFraction ? NULL : "the FMU does not export it";
        case CALL_OP_SET_INTERVAL_DECIMAL:
                if (!md_has_clocks(w->md))
                        return "the model has no Clocks";
                return f3->fmi3SetIntervalDecimal ? NULL : "the FMU does not export it";
        case CALL_OP_SET_INTERVAL_FRACTION:
                if (!md_has_clocks(w->md))
                        return "the model has no Clocks";
                return f3->fmi3SetIntervalFraction ? NULL : "the FMU does not export it";
        case CALL_OP_SET_SHIFT_DECIMAL:
                if (!md_has_clocks(w->md))
                        return "the model has no Clocks";
                return f3->fmi3SetShiftDecimal ? NULL : "the FMU does not export it";
        case CALL_OP_SET_SHIFT_FRACTION:
                if (!md_has_clocks(w->md))
                        return "the model has no Clocks";
                return f3->fmi3SetShiftFraction ? NULL : "the FMU does not export it";
        case CALL_OP_GET:
        case CALL_OP_SET:
                if (type == MD_CLOCK && w->fmi == MD_FMI3 &&
                    (!md_has_clocks(w->md) || !f3->fmi3GetClock || !f3->fmi3SetClock))
                        return "the model has no Clocks";
                return NULL;
        default:
                return NULL;
        }
}

bool fsm_allows(struct worker *w, enum call_op op, enum md_type type, struct reply *rp)
{
        const uint32_t *allowed = w->fmi == MD_FMI3 ? allowed3 : allowed2;
        const char *fn = fsm_fmi_name(w, op, type);
        const char *missing;

        if (w->state == CALL_ST_FATAL && op != CALL_OP_FREE) {
                reply_refuse(rp, CALL_E_FATAL, "%s: the FMU returned Fatal before; nothing more "
                             "may be called (section 2.2.4)", fn);
                return false;
        }
        missing = missing_capability(w, op, type);
        if (missing) {
                reply_refuse(rp, CALL_E_NOTSUP, "%s: %s", fn, missing);
                return false;
        }
        if (!(allowed[op] & (1u << w->state))) {
                reply_refuse(rp, CALL_E_STATE, "%s must not be called in %s", fn,
                             state_name(w, w->state));
                return false;
        }
        if (op == CALL_OP_ENTER_EVENT && !w->event_mode_used) {
                reply_refuse(rp, CALL_E_STATE, "%s must not be called: the instance was created "
                             "with eventModeUsed = false (section 4.2.1)", fn);
                return false;
        }
        if ((op == CALL_OP_GET || op == CALL_OP_GET_OUTPUT_DERIVATIVES) &&
            w->state == CALL_ST_STEP && w->set_since_step && w->fmi == MD_FMI3) {
                reply_refuse(rp, CALL_E_STATE, "%s must not be called in Step Mode after a set "
                             "without fmi3DoStep in between (section 4.2.1)", fn);
                return false;
        }
        if (w->state == CALL_ST_INTERMEDIATE) {
                if ((op == CALL_OP_GET || op == CALL_OP_GET_OUTPUT_DERIVATIVES) &&
                    !w->iu_get_allowed) {
                        reply_refuse(rp, CALL_E_STATE, "%s must not be called in this intermediate "
                                     "update: intermediateVariableGetAllowed is false", fn);
                        return false;
                }
                if ((op == CALL_OP_GET || op == CALL_OP_GET_OUTPUT_DERIVATIVES) && w->iu_did_set) {
                        reply_refuse(rp, CALL_E_STATE, "%s must not be called after a set in the "
                                     "same intermediate update: all gets come first (section 4.2.2)",
                                     fn);
                        return false;
                }
                if (op == CALL_OP_SET && !w->iu_set_requested) {
                        reply_refuse(rp, CALL_E_STATE, "%s must not be called in this intermediate "
                                     "update: intermediateVariableSetRequested is false", fn);
                        return false;
                }
        }
        return true;
}

void fsm_after(struct worker *w, enum call_op op, int status)
{
        enum call_state s = w->state;

        status = status_norm(w, status);
        if (status == fmi2Pending && !(w->fmi == MD_FMI2 && op == CALL_OP_DO_STEP))
                status = fmi3Error;     /* only an asynchronous doStep may be pending */
        if (s == CALL_ST_INTERMEDIATE) {
                /* The doStep in progress decides; remember that a call inside failed. */
                if (status == fmi3Fatal)
                        w->state = CALL_ST_FATAL;
                else if (status == fmi3Error)
                        w->iu_failed = true;
                return;
        }
        if (status == fmi3Fatal) {
                w->state = CALL_ST_FATAL;
                return;
        }
        if (status == fmi3Error) {
                /* No instance, no state; after free nothing matters. */
                if (s != CALL_ST_START && op != CALL_OP_FREE)
                        w->state = CALL_ST_ERROR;
                return;
        }
        if (op == CALL_OP_DO_STEP && w->fmi == MD_FMI2) {
                w->set_since_step = false;
                /* The FMU is in stepFailed either way: no more steps or sets, gets allowed. */
                if (status == fmi2Discard || w->discard_terminated)
                        w->state = CALL_ST_STEP_FAILED;
                else if (status == fmi2Pending)
                        w->state = CALL_ST_STEP_PENDING;
                w->discard_terminated = false;
                return;
        }
        if (status == fmi3Discard)
                return;
        switch (op) {
        case CALL_OP_ENTER_INIT:
                w->state = CALL_ST_INITIALIZATION;
                break;
        case CALL_OP_EXIT_INIT:
                w->state = w->fmi == MD_FMI3 && w->event_mode_used ? CALL_ST_EVENT : CALL_ST_STEP;
                break;
        case CALL_OP_ENTER_CONFIG:
                w->state = s == CALL_ST_STEP ? CALL_ST_RECONFIGURATION : CALL_ST_CONFIGURATION;
                break;
        case CALL_OP_EXIT_CONFIG:
                w->state = s == CALL_ST_RECONFIGURATION ? CALL_ST_STEP : CALL_ST_INSTANTIATED;
                break;
        case CALL_OP_ENTER_EVENT:
                w->state = CALL_ST_EVENT;
                break;
        case CALL_OP_ENTER_STEP:
                w->state = CALL_ST_STEP;
                w->set_since_step = false;
                break;
        case CALL_OP_TERMINATE:
                w->state = CALL_ST_TERMINATED;
                break;
        case CALL_OP_RESET:
                w->state = CALL_ST_INSTANTIATED;
                w->set_since_step = false;
                break;
        case CALL_OP_DO_STEP:
                w->set_since_step = false;
                break;
        case CALL_OP_SET:
        case CALL_OP_SET_INPUT_DERIVATIVES:
                if (s == CALL_ST_STEP)
                        w->set_since_step = true;
                break;
        case CALL_OP_CANCEL_STEP:
                w->state = CALL_ST_STEP_CANCELED;
                break;
        default:
                /* INSTANTIATE, SET_FMU_STATE and GET_STATUS set the state in their handlers. */
                break;
        }
}
