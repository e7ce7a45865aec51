/*
 * inst.c: the test FMU instance, independent of the FMI version: life
 * cycle, logging, state bookkeeping, the variable table, and which
 * variable may be read or written in which state.
 *
 * DESIGN: the FMI 2.0 and 3.0 front ends translate their calls into these
 * services, so both versions share one set of rules. The rules follow the
 * FMI 3.0 standard (sections 2.3, 4.2, table 18 and 22); FMI 2.0's rules
 * are a subset for the variables our models declare.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

const char *const log_category_names[LOG_N_CATEGORIES] = {
        [LOG_EVENTS] = "logEvents",
        [LOG_STATUS_WARNING] = "logStatusWarning",
        [LOG_STATUS_DISCARD] = "logStatusDiscard",
        [LOG_STATUS_ERROR] = "logStatusError",
        [LOG_STATUS_FATAL] = "logStatusFatal",
};

static char *dup_string(const char *s)
{
        size_t n = strlen(s) + 1;
        char *d = malloc(n);

        if (d)
                memcpy(d, s, n);
        return d;
}

struct inst *inst_new(const char *name, const char *resource_path)
{
        struct inst *inst;

        inst = calloc(1, sizeof(*inst));
        if (!inst)
                return NULL;
        inst->model = &model;
        inst->name = dup_string(name);
        if (!inst->name)
                goto out_free;
        if (resource_path) {
                inst->resource_path = dup_string(resource_path);
                if (!inst->resource_path)
                        goto out_free;
        }
        inst->data = calloc(1, model.data_size);
        if (!inst->data)
                goto out_free;
        inst_reset(inst);
        return inst;

out_free:
        inst_free(inst);
        return NULL;
}

void inst_free(struct inst *inst)
{
        if (!inst)
                return;
        free(inst->data);
        free(inst->required_iu);
        free(inst->resource_path);
        free(inst->name);
        free(inst);
}

bool inst_name_blank(const char *s)
{
        for (; *s; s++)
                if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
                        return false;
        return true;
}

int inst_set_experiment(struct inst *inst, const char *fn, double start, bool stop_defined,
                        double stop)
{
        if (stop_defined && stop < start) {
                inst_log(inst, FMU_ERROR, "%s: stopTime %.17g < startTime %.17g", fn, stop, start);
                return -EINVAL;
        }
        inst->sim.start_time = start;
        inst->sim.time = start;
        inst->sim.stop_time_defined = stop_defined;
        inst->sim.stop_time = stop;
        return 0;
}

void inst_set_tolerance(struct inst *inst, bool defined, double tolerance)
{
        inst->sim.tolerance_defined = defined;
        inst->sim.tolerance = defined ? tolerance : 0.0;
}

bool inst_tolerance(const struct inst *inst, double *ret)
{
        *ret = inst->sim.tolerance;
        return inst->sim.tolerance_defined;
}

void inst_reset(struct inst *inst)
{
        inst->sim = (struct sim){ .state = ST_INSTANTIATED, .dirty = true };
        memset(inst->data, 0, inst->model->data_size);
        inst->model->start(inst);
}

const char *inst_name(const struct inst *inst)
{
        return inst->name;
}

void *inst_data(struct inst *inst)
{
        return inst->data;
}

double inst_time(const struct inst *inst)
{
        return inst->sim.time;
}

bool inst_initializing(const struct inst *inst)
{
        return inst->sim.state == ST_INSTANTIATED ||
               inst->sim.state == ST_INITIALIZATION;
}

bool inst_event_mode(const struct inst *inst)
{
        return inst->sim.state == ST_EVENT;
}

/*
 * Each message goes to its status's category (informational ones to
 * logEvents) and only when that category is enabled: with loggingOn false
 * and nothing enabled since, "any logging is disabled and the logMessage
 * callback function must not be called" (FMI 3.0 section 2.3.1), not even
 * for an Error's reason, as strict exports read it.
 */
void inst_vlog(struct inst *inst, enum fmu_status status, const char *fmt, va_list ap)
{
        static const enum log_category category_of[] = {
                [FMU_OK] = LOG_EVENTS,
                [FMU_WARNING] = LOG_STATUS_WARNING,
                [FMU_DISCARD] = LOG_STATUS_DISCARD,
                [FMU_ERROR] = LOG_STATUS_ERROR,
                [FMU_FATAL] = LOG_STATUS_FATAL,
        };
        enum log_category cat = category_of[status];
        char msg[1024];

        if (!inst->logger)
                return;
        if (!(inst->log_mask & (1u << cat)))
                return;
        (void) vsnprintf(msg, sizeof(msg), fmt, ap);
        inst->logger(inst, status, log_category_names[cat], msg);
}

void inst_log(struct inst *inst, enum fmu_status status, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        inst_vlog(inst, status, fmt, ap);
        va_end(ap);
}

int inst_set_debug_logging(struct inst *inst, bool on, size_t n, const char *const names[])
{
        unsigned mask = 0;

        if (n == 0) {
                mask = (1u << LOG_N_CATEGORIES) - 1;
        } else {
                if (!names)
                        return -EINVAL;
                for (size_t i = 0; i < n; i++) {
                        size_t c;

                        for (c = 0; c < LOG_N_CATEGORIES; c++)
                                if (names[i] && strcmp(names[i], log_category_names[c]) == 0)
                                        break;
                        if (c == LOG_N_CATEGORIES) {
                                inst_log(inst, FMU_ERROR, "unknown log category '%s'",
                                         names[i] ? names[i] : "(null)");
                                return -EINVAL;
                        }
                        mask |= 1u << c;
                }
        }
        if (on)
                inst->log_mask |= mask;
        else
                inst->log_mask &= ~mask;
        return 0;
}

const char *inst_state_name(enum inst_state state)
{
        static const char *const names[] = {
                [ST_INSTANTIATED] = "Instantiated",
                [ST_INITIALIZATION] = "Initialization Mode",
                [ST_STEP] = "Step Mode",
                [ST_EVENT] = "Event Mode",
                [ST_CONFIGURATION] = "Configuration Mode",
                [ST_RECONFIGURATION] = "Reconfiguration Mode",
                [ST_INTERMEDIATE_UPDATE] = "Intermediate Update Mode",
                [ST_TERMINATED] = "Terminated",
        };

        return names[state];
}

bool inst_check_state(struct inst *inst, const char *fn, unsigned mask)
{
        if (mask & STATE_BIT(inst->sim.state))
                return true;
        inst_log(inst, FMU_ERROR, "%s must not be called in %s", fn,
                 inst_state_name(inst->sim.state));
        return false;
}

/*
 * Section 2.3.1: an fmi3Error in super state FMU State Settable leads to
 * Terminated, from where only fmi3Reset, fmi3SetFMUState (recovery) and
 * fmi3FreeInstance lead on.
 */
void inst_fail(struct inst *inst)
{
        inst->sim.state = ST_TERMINATED;
}

const struct var *inst_find_var(const struct inst *inst, uint32_t vr)
{
        for (size_t i = 0; i < inst->model->n_vars; i++)
                if (inst->model->vars[i].vr == vr)
                        return &inst->model->vars[i];
        return NULL;
}

size_t inst_var_count(struct inst *inst, const struct var *v)
{
        const struct var *size_var;

        if (!v->sized)
                return v->count;
        size_var = inst_find_var(inst, v->size_vr);
        if (!size_var)
                return 0;
        return v->count * (size_t)*(const uint64_t *)inst_var_ptr(inst, size_var);
}

void *inst_var_ptr(struct inst *inst, const struct var *v)
{
        if (v->causality == VAR_INDEPENDENT)
                return &inst->sim.time;
        return (char *)inst->data + v->offset;
}

size_t var_type_size(enum var_type t)
{
        static const size_t sizes[] = {
                [VAR_FLOAT32] = sizeof(float),
                [VAR_FLOAT64] = sizeof(double),
                [VAR_INT8] = sizeof(int8_t),
                [VAR_UINT8] = sizeof(uint8_t),
                [VAR_INT16] = sizeof(int16_t),
                [VAR_UINT16] = sizeof(uint16_t),
                [VAR_INT32] = sizeof(int32_t),
                [VAR_UINT32] = sizeof(uint32_t),
                [VAR_INT64] = sizeof(int64_t),
                [VAR_UINT64] = sizeof(uint64_t),
                [VAR_BOOLEAN] = sizeof(bool),
                [VAR_STRING] = sizeof(struct var_string),
                [VAR_BINARY] = sizeof(struct var_binary),
                [VAR_CLOCK] = sizeof(bool),
        };

        return sizes[t];
}

const char *var_type_name(enum var_type t)
{
        static const char *const names[] = {
                [VAR_FLOAT32] = "Float32", [VAR_FLOAT64] = "Float64",
                [VAR_INT8] = "Int8", [VAR_UINT8] = "UInt8",
                [VAR_INT16] = "Int16", [VAR_UINT16] = "UInt16",
                [VAR_INT32] = "Int32", [VAR_UINT32] = "UInt32",
                [VAR_INT64] = "Int64", [VAR_UINT64] = "UInt64",
                [VAR_BOOLEAN] = "Boolean", [VAR_STRING] = "String",
                [VAR_BINARY] = "Binary", [VAR_CLOCK] = "Clock",
        };

        return names[t];
}

static bool is_required_iu(const struct inst *inst, uint32_t vr)
{
        for (size_t i = 0; i < inst->n_required_iu; i++)
                if (inst->required_iu[i] == vr)
                        return true;
        return false;
}

static const char *intermediate_set_refusal(const struct inst *inst, const struct var *v)
{
        if (!inst->iu_set_requested)
                return "cannot be set: the FMU did not request intermediate inputs";
        if (v->causality != VAR_INPUT || !v->intermediate)
                return "is not an intermediate input (intermediateUpdate=\"true\")";
        if (v->variability != VAR_CONTINUOUS)
                return "is a discrete input and must not be set in Intermediate Update Mode";
        if (!is_required_iu(inst, v->vr))
                return "is not in requiredIntermediateVariables";
        return NULL;
}

const char *inst_set_refusal(const struct inst *inst, const struct var *v)
{
        bool structural = v->causality == VAR_STRUCTURAL_PARAMETER;

        if (v->causality == VAR_INDEPENDENT)
                return "is the independent variable and cannot be set";
        if (v->variability == VAR_CONSTANT)
                return "is a constant and cannot be set";
        if (v->type == VAR_CLOCK && inst->sim.state != ST_EVENT)
                return "is a Clock and can only be set in Event Mode";

        switch (inst->sim.state) {
        case ST_INSTANTIATED:
                if (structural)
                        return "is a structural parameter; set it in Configuration Mode";
                if (v->initial != VAR_EXACT && v->initial != VAR_APPROX)
                        return "has initial=\"calculated\" and cannot be set in Instantiated";
                return NULL;
        case ST_INITIALIZATION:
                if (structural)
                        return "is a structural parameter; set it in Configuration Mode";
                if (v->initial != VAR_EXACT)
                        return "has no initial=\"exact\" and cannot be set in Initialization Mode";
                return NULL;
        case ST_STEP:
        case ST_EVENT:
                if (v->causality == VAR_INPUT)
                        return NULL;
                if (v->causality == VAR_PARAMETER && v->variability == VAR_TUNABLE)
                        return NULL;
                if (v->causality == VAR_PARAMETER)
                        return "is a fixed parameter and can only be set before Initialization Mode ends";
                if (structural)
                        return "is a structural parameter; set it in (Re)Configuration Mode";
                return "is neither an input nor a tunable parameter";
        case ST_CONFIGURATION:
                if (!structural)
                        return "is not a structural parameter and cannot be set in Configuration Mode";
                return NULL;
        case ST_RECONFIGURATION:
                if (!structural || v->variability != VAR_TUNABLE)
                        return "is not a tunable structural parameter and cannot be set in Reconfiguration Mode";
                return NULL;
        case ST_INTERMEDIATE_UPDATE:
                return intermediate_set_refusal(inst, v);
        case ST_TERMINATED:
        case ST_N_STATES:
                break;
        }
        return "cannot be set in this state";
}

const char *inst_get_refusal(const struct inst *inst, const struct var *v)
{
        if (v->type == VAR_CLOCK && inst->sim.state != ST_EVENT)
                return "is a Clock and can only be read in Event Mode";
        if (inst->sim.state != ST_INTERMEDIATE_UPDATE)
                return NULL;
        if (!inst->iu_get_allowed)
                return "cannot be read: the FMU did not allow getting intermediate values";
        if (inst->iu_did_set)
                return "cannot be read after a set in the same intermediate update (4.2.2: all gets first)";
        if (!v->intermediate)
                return "is not an intermediate variable (intermediateUpdate=\"true\")";
        if (!is_required_iu(inst, v->vr))
                return "is not in requiredIntermediateVariables";
        return NULL;
}

int inst_calculate(struct inst *inst)
{
        int r;

        r = inst->model->calculate(inst);
        if (r < 0)
                return r;
        inst->sim.dirty = false;
        return 0;
}

/*
 * Getting values triggers computation in Instantiated (start values and
 * what follows from them), Initialization Mode and Event Mode. In Step
 * Mode, fmi3Get returns the values of the last fmi3DoStep (section 4.2.1:
 * it "does not trigger an evaluation of f_doStep").
 */
int inst_refresh(struct inst *inst)
{
        unsigned computing = STATE_BIT(ST_INSTANTIATED) |
                             STATE_BIT(ST_INITIALIZATION) | STATE_BIT(ST_EVENT);

        if (!inst->sim.dirty || !(computing & STATE_BIT(inst->sim.state)))
                return 0;
        return inst_calculate(inst);
}

int inst_check_size(struct inst *inst, const struct var *v, uint64_t value)
{
        for (size_t i = 0; i < inst->model->n_vars; i++) {
                const struct var *a = &inst->model->vars[i];

                if (!a->sized || a->size_vr != v->vr)
                        continue;
                if (value > a->capacity / a->count) {
                        inst_log(inst, FMU_ERROR,
                                 "structural parameter '%s' = %llu: array '%s' holds at most %zu elements",
                                 v->name, (unsigned long long)value, a->name, a->capacity);
                        return -ERANGE;
                }
        }
        return 0;
}

bool inst_has_intermediate_update(const struct inst *inst)
{
        return inst->iu != NULL;
}

int inst_intermediate_update(struct inst *inst, struct intermediate *iu)
{
        iu->early_return_requested = false;
        iu->early_return_time = iu->t;
        if (!inst->iu)
                return 0;

        inst->sim.state = ST_INTERMEDIATE_UPDATE;
        inst->iu_set_requested = iu->set_requested;
        inst->iu_get_allowed = iu->get_allowed;
        inst->iu_did_set = false;
        inst->iu(inst, iu);
        if (inst->sim.state != ST_INTERMEDIATE_UPDATE) {
                /* A call inside the callback failed and moved us on. */
                inst_log(inst, FMU_ERROR,
                         "a call in the intermediate update callback at t = %.17g failed", iu->t);
                return -EIO;
        }
        inst->sim.state = ST_STEP;
        if (!iu->can_return_early)
                iu->early_return_requested = false;
        return 0;
}

void var_string_init(struct var_string *s, const char *value)
{
        size_t n = strlen(value);

        if (n >= sizeof(s->s))
                n = sizeof(s->s) - 1;
        /* memmove: the value may be our own storage, handed back. */
        memmove(s->s, value, n);
        s->s[n] = '\0';
}

void var_binary_init(struct var_binary *b, const void *bytes, size_t size)
{
        if (size > sizeof(b->bytes))
                size = sizeof(b->bytes);
        if (size > 0)
                memmove(b->bytes, bytes, size);
        b->size = size;
}
