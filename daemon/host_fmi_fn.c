/*
 * host_fmi_fn: one call of an fmi batch on an FMI-level instance's worker
 * (host_fmi_call.c makes the batch): its arguments copied from the request
 * into the C types of engine/instance/instance.h, the inst_* function, and
 * its result encoded, or why the batch ends there.
 *
 * DESIGN: the worker judges every call as it judges a session's (the FMI
 * state machine, each value reference's type, causality and variability,
 * the FMU's capabilities; FMI 3.0 sections 4.2 and 2.2.6), so nothing here
 * checks a rule of the standard again: its message, which names the
 * function and the rule, is the refusal's. What is checked here is only
 * what the wire adds: a serialized state bigger than PROTO_FMI_MAX_BIN.
 * Values were checked against their type's range by proto_fmi_decode().
 */
#include "daemon/host_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert((int)PROTO_FMI_FLOAT32 == (int)MD_FLOAT32 && (int)PROTO_FMI_BINARY == (int)MD_BINARY &&
               (int)PROTO_FMI_BOOLEAN == (int)MD_BOOLEAN && (int)PROTO_FMI_STRING == (int)MD_STRING,
               "proto_fmi_type follows md_type");

static const char *const fmi_suffix[PROTO_FMI_FN_COUNT] = {
        [PROTO_FMI_SET] = "Set", [PROTO_FMI_GET] = "Get", [PROTO_FMI_DO_STEP] = "DoStep",
        [PROTO_FMI_ENTER_INIT] = "EnterInitializationMode",
        [PROTO_FMI_EXIT_INIT] = "ExitInitializationMode",
        [PROTO_FMI_ENTER_EVENT] = "EnterEventMode", [PROTO_FMI_ENTER_STEP] = "EnterStepMode",
        [PROTO_FMI_UPDATE_DISCRETE] = "UpdateDiscreteStates",
        [PROTO_FMI_GET_STATE] = "GetFMUState", [PROTO_FMI_SET_STATE] = "SetFMUState",
        [PROTO_FMI_FREE_STATE] = "FreeFMUState", [PROTO_FMI_SERIALIZE] = "SerializeFMUState",
        [PROTO_FMI_DESERIALIZE] = "DeserializeFMUState",
        [PROTO_FMI_DIRECTIONAL] = "GetDirectionalDerivative",
        [PROTO_FMI_ADJOINT] = "GetAdjointDerivative", [PROTO_FMI_RESET] = "Reset",
        [PROTO_FMI_TERMINATE] = "Terminate",
        [PROTO_FMI_ENTER_CONFIG] = "EnterConfigurationMode",
        [PROTO_FMI_EXIT_CONFIG] = "ExitConfigurationMode",
};

/* FMI 2.0's spelling where it differs; NULL: the same, or no such function in FMI 2.0. */
static const char *const fmi2_suffix[PROTO_FMI_FN_COUNT] = {
        [PROTO_FMI_GET_STATE] = "GetFMUstate", [PROTO_FMI_SET_STATE] = "SetFMUstate",
        [PROTO_FMI_FREE_STATE] = "FreeFMUstate", [PROTO_FMI_SERIALIZE] = "SerializeFMUstate",
        [PROTO_FMI_DESERIALIZE] = "DeSerializeFMUstate",
};

/* Calls FMI 2.0 has no function for: named as in FMI 3.0, which has. */
static bool only_fmi3(enum proto_fmi_fn fn)
{
        return fn == PROTO_FMI_ENTER_EVENT || fn == PROTO_FMI_ENTER_STEP ||
               fn == PROTO_FMI_UPDATE_DISCRETE || fn == PROTO_FMI_ADJOINT ||
               fn == PROTO_FMI_ENTER_CONFIG || fn == PROTO_FMI_EXIT_CONFIG;
}

/* The FMI function a call stands for: "fmi3SetFloat64", "fmi2DoStep", "fmi2GetFMUstate", ... */
static void function_name(const struct inst *inst, const struct proto_fmi_call *c, char *buf,
                          size_t size)
{
        bool v2 = inst_fmi_version(inst) == 2 && !only_fmi3(c->fn);
        const char *t = "";

        if (c->fn == PROTO_FMI_SET || c->fn == PROTO_FMI_GET) {
                t = proto_fmi_type_name(c->type);
                if (v2 && c->type == PROTO_FMI_FLOAT64)
                        t = "Real";
                else if (v2 && c->type == PROTO_FMI_INT32)
                        t = "Integer";
        }
        snprintf(buf, size, "%s%s%s", v2 ? "fmi2" : "fmi3",
                 v2 && fmi2_suffix[c->fn] ? fmi2_suffix[c->fn] : fmi_suffix[c->fn], t);
}

/* What an inst_* refusal or fault is on the wire (instance.h's list). */
static enum proto_err code_of(int r)
{
        switch (r) {
        case -EPERM:
        case -EACCES:
                return PROTO_E_STATE;
        case -ENOENT:
                return PROTO_E_NO_VARIABLE;
        case -EPROTOTYPE:
                return PROTO_E_TYPE;
        case -EOPNOTSUPP:
                return PROTO_E_UNSUPPORTED;
        case -ENOSPC:
                return PROTO_E_LIMIT;
        case -EMSGSIZE:
                return PROTO_E_TOO_LARGE;
        case -ENOMEM:
                return PROTO_E_INTERNAL;
        case -ETIMEDOUT:
        case -ESRCH:
        case -EPROTO:
        case -ENOTRECOVERABLE:
        case -ECANCELED:
                return PROTO_E_FAULT;
        default:
                return PROTO_E_INVALID;
        }
}

/* Judge r, an inst_* return: true when the batch goes on; else *ref says why. */
static bool judge(struct hsess *hs, int r, struct hfmi_refusal *ref)
{
        static const char *const status[] = { "OK", "Warning", "Discard", "Error", "Fatal",
                                              "Pending" };
        char logs[512] = "";

        if (r == INST_OK || r == INST_WARNING)
                return true;
        if (r < 0) {
                ref->code = code_of(r);
                snprintf(ref->message, sizeof(ref->message), "%s",
                         inst_message(hs->inst)[0] ? inst_message(hs->inst) : strerror(-r));
                /* A dead or hung worker takes no more calls: status says so from now on. */
                if (inst_fault(hs->inst) && hs->state != PROTO_STATE_FAULTED)
                        hsess_set_state(hs, PROTO_STATE_FAULTED, ref->message);
                return false;
        }
        ref->code = PROTO_E_FAULT;
        ref->status = (unsigned)r < sizeof(status) / sizeof(status[0]) ? status[r] : "?";
        inst_recent_logs(hs->inst, NULL, logs, sizeof(logs));
        snprintf(ref->message, sizeof(ref->message), "%s returned %s%s%s", ref->function,
                 ref->status, logs[0] ? ": " : "", logs);
        return false;
}

static uint32_t *vrs_of(const struct pv *a, uint32_t n)
{
        uint32_t *v = malloc((n ? n : 1) * sizeof(*v));

        for (uint32_t i = 0; v && i < n; i++) {
                uint64_t u = 0;

                (void) pv_u64(&a->a.items[i], &u);
                v[i] = (uint32_t)u;
        }
        return v;
}

static size_t type_size(enum proto_fmi_type t)
{
        static const size_t sz[PROTO_FMI_TYPE_COUNT] = {
                [PROTO_FMI_FLOAT32] = sizeof(float), [PROTO_FMI_FLOAT64] = sizeof(double),
                [PROTO_FMI_INT8] = 1, [PROTO_FMI_UINT8] = 1, [PROTO_FMI_INT16] = 2,
                [PROTO_FMI_UINT16] = 2, [PROTO_FMI_INT32] = 4, [PROTO_FMI_UINT32] = 4,
                [PROTO_FMI_INT64] = 8, [PROTO_FMI_UINT64] = 8, [PROTO_FMI_BOOLEAN] = sizeof(bool),
                [PROTO_FMI_STRING] = sizeof(char *), [PROTO_FMI_BINARY] = sizeof(uint8_t *),
        };

        return sz[t];
}

/* Value i of a set (checked by proto_fmi_decode()) into p, an array of the C type. */
static void store(const struct proto_fmi_call *c, uint32_t i, void *p)
{
        const struct pv *e = &c->values->a.items[i];
        double d = 0;
        int64_t s = 0;
        uint64_t u = 0;

        (void) pv_f64(e, &d);
        (void) pv_i64(e, &s);
        (void) pv_u64(e, &u);
        switch (c->type) {
        case PROTO_FMI_FLOAT32: ((float *)p)[i] = (float)d; break;
        case PROTO_FMI_FLOAT64: ((double *)p)[i] = d; break;
        case PROTO_FMI_INT8: ((int8_t *)p)[i] = (int8_t)s; break;
        case PROTO_FMI_UINT8: ((uint8_t *)p)[i] = (uint8_t)u; break;
        case PROTO_FMI_INT16: ((int16_t *)p)[i] = (int16_t)s; break;
        case PROTO_FMI_UINT16: ((uint16_t *)p)[i] = (uint16_t)u; break;
        case PROTO_FMI_INT32: ((int32_t *)p)[i] = (int32_t)s; break;
        case PROTO_FMI_UINT32: ((uint32_t *)p)[i] = (uint32_t)u; break;
        case PROTO_FMI_INT64: ((int64_t *)p)[i] = s; break;
        case PROTO_FMI_UINT64: ((uint64_t *)p)[i] = u; break;
        case PROTO_FMI_BOOLEAN: ((bool *)p)[i] = e->b; break;
        default: break;
        }
}

/* Value i of a get into w. */
static void emit(struct pw *w, enum proto_fmi_type t, const void *p, const size_t *sizes,
                 uint32_t i)
{
        switch (t) {
        case PROTO_FMI_FLOAT32: pw_f64(w, ((const float *)p)[i]); break;
        case PROTO_FMI_FLOAT64: pw_f64(w, ((const double *)p)[i]); break;
        case PROTO_FMI_INT8: pw_i64(w, ((const int8_t *)p)[i]); break;
        case PROTO_FMI_UINT8: pw_u64(w, ((const uint8_t *)p)[i]); break;
        case PROTO_FMI_INT16: pw_i64(w, ((const int16_t *)p)[i]); break;
        case PROTO_FMI_UINT16: pw_u64(w, ((const uint16_t *)p)[i]); break;
        case PROTO_FMI_INT32: pw_i64(w, ((const int32_t *)p)[i]); break;
        case PROTO_FMI_UINT32: pw_u64(w, ((const uint32_t *)p)[i]); break;
        case PROTO_FMI_INT64: pw_i64(w, ((const int64_t *)p)[i]); break;
        case PROTO_FMI_UINT64: pw_u64(w, ((const uint64_t *)p)[i]); break;
        case PROTO_FMI_BOOLEAN: pw_bool(w, ((const bool *)p)[i]); break;
        case PROTO_FMI_STRING: pw_str(w, ((const char *const *)p)[i]); break;
        case PROTO_FMI_BINARY: pw_bin(w, ((const uint8_t *const *)p)[i], sizes[i]); break;
        default: pw_nil(w); break;
        }
}

/* set or get: one fmi3Set<type>/fmi3Get<type> of the call's value references. */
static int values(struct hsess *hs, const struct proto_fmi_call *c, struct pw *w)
{
        /* n values for the n_vrs value references: one per element (proto_fmi_call). */
        uint32_t n = c->n_values, *vrs = vrs_of(c->vrs, c->n_vrs);
        void *vals = calloc(n ? n : 1, type_size(c->type));
        size_t *sizes = calloc(n ? n : 1, sizeof(*sizes));
        enum md_type t = (enum md_type)c->type;
        int r = -ENOMEM;

        if (!vrs || !vals || !sizes)
                goto out;
        if (c->fn == PROTO_FMI_SET) {
                for (uint32_t i = 0; i < n; i++) {
                        const struct pv *e = &c->values->a.items[i];

                        if (c->type == PROTO_FMI_STRING) {
                                char *s = strndup(e->s.ptr, e->s.len);

                                if (!s)
                                        goto out;
                                ((char **)vals)[i] = s;
                        } else if (c->type == PROTO_FMI_BINARY) {
                                ((const uint8_t **)vals)[i] = (const uint8_t *)e->s.ptr;
                                sizes[i] = e->s.len;
                        } else {
                                store(c, i, vals);
                        }
                }
                r = c->type == PROTO_FMI_BINARY ?
                    inst_set_binary(hs->inst, vrs, c->n_vrs, sizes, vals, n) :
                    inst_set(hs->inst, t, vrs, c->n_vrs, vals, n);
                if (r == INST_OK || r == INST_WARNING)
                        pw_nil(w);
        } else {
                r = c->type == PROTO_FMI_BINARY ?
                    inst_get_binary(hs->inst, vrs, c->n_vrs, sizes, vals, n) :
                    inst_get(hs->inst, t, vrs, c->n_vrs, vals, n);
                if (r == INST_OK || r == INST_WARNING) {
                        pw_array(w, n);
                        for (uint32_t i = 0; i < n; i++)
                                emit(w, c->type, vals, sizes, i);
                }
        }
out:
        if (c->fn == PROTO_FMI_SET && c->type == PROTO_FMI_STRING && vals)
                for (uint32_t i = 0; i < n; i++)
                        free(((char **)vals)[i]);
        free(vrs);
        free(vals);
        free(sizes);
        return r;
}

static int derivative(struct hsess *hs, const struct proto_fmi_call *c, struct pw *w)
{
        uint32_t *unk = vrs_of(c->vrs, c->n_vrs), *kn = vrs_of(c->knowns, c->n_knowns);
        double *seed = calloc(c->n_knowns ? c->n_knowns : 1, sizeof(double));
        double *sens = NULL;
        /* Directional: one sensitivity per unknown; adjoint: one per known (FMI 3.0 3.2.10). */
        uint32_t n_sens = c->fn == PROTO_FMI_DIRECTIONAL ? c->n_vrs : c->n_knowns;
        int r = -ENOMEM;

        sens = calloc(n_sens ? n_sens : 1, sizeof(double));
        if (!unk || !kn || !seed || !sens)
                goto out;
        for (uint32_t i = 0; i < c->n_knowns; i++)
                (void) pv_f64(&c->seed->a.items[i], &seed[i]);
        r = (c->fn == PROTO_FMI_DIRECTIONAL ? inst_get_directional_derivative :
                                              inst_get_adjoint_derivative)(
                hs->inst, unk, c->n_vrs, kn, c->n_knowns, seed, c->n_knowns, sens, n_sens);
        if (r == INST_OK || r == INST_WARNING) {
                pw_array(w, n_sens);
                for (uint32_t i = 0; i < n_sens; i++)
                        pw_f64(w, sens[i]);
        }
out:
        free(unk);
        free(kn);
        free(seed);
        free(sens);
        return r;
}

static void state_result(struct pw *w, uint64_t handle)
{
        pw_map(w, 1);
        pw_str(w, "state");
        pw_u64(w, handle);
}

/* serializeFMUState: the bytes, at most PROTO_FMI_MAX_BIN of them. */
static int serialize(struct hsess *hs, const struct proto_fmi_call *c, struct pw *w,
                     struct hfmi_refusal *ref)
{
        uint8_t *buf;
        size_t size = 0;
        int r;

        r = inst_serialized_fmu_state_size(hs->inst, c->state, &size);
        if (r != INST_OK && r != INST_WARNING)
                return r;
        if (size > PROTO_FMI_MAX_BIN) {
                ref->code = PROTO_E_TOO_LARGE;
                snprintf(ref->message, sizeof(ref->message), "%s: the state is %zu bytes, more "
                         "than %u", ref->function, size, PROTO_FMI_MAX_BIN);
                return -E2BIG;
        }
        buf = malloc(size ? size : 1);
        if (!buf)
                return -ENOMEM;
        r = inst_serialize_fmu_state(hs->inst, c->state, buf, size);
        if (r == INST_OK || r == INST_WARNING)
                pw_bin(w, buf, size);
        free(buf);
        return r;
}

static int step(struct hsess *hs, const struct proto_fmi_call *c, struct pw *w)
{
        struct inst_step s = { .t = c->t, .h = c->h, .no_set_prior = c->no_set_prior };
        struct inst_step_result res;
        int r = inst_do_step(hs->inst, &s, &res);

        if (r != INST_OK && r != INST_WARNING)
                return r;
        pw_map(w, 4);
        pw_str(w, "eventHandlingNeeded");
        pw_bool(w, res.event_handling_needed);
        pw_str(w, "terminateSimulation");
        pw_bool(w, res.terminate_simulation);
        pw_str(w, "earlyReturn");
        pw_bool(w, res.early_return);
        pw_str(w, "lastSuccessfulTime");
        pw_f64(w, res.last_successful_time);
        return r;
}

static int discrete(struct hsess *hs, struct pw *w)
{
        struct inst_discrete d;
        int r = inst_update_discrete_states(hs->inst, &d);

        if (r != INST_OK && r != INST_WARNING)
                return r;
        pw_map(w, 5 + d.next_event_time_defined);
        pw_str(w, "discreteStatesNeedUpdate");
        pw_bool(w, d.discrete_states_need_update);
        pw_str(w, "terminateSimulation");
        pw_bool(w, d.terminate_simulation);
        pw_str(w, "nominalsOfContinuousStatesChanged");
        pw_bool(w, d.nominals_changed);
        pw_str(w, "valuesOfContinuousStatesChanged");
        pw_bool(w, d.values_changed);
        pw_str(w, "nextEventTimeDefined");
        pw_bool(w, d.next_event_time_defined);
        if (d.next_event_time_defined) {
                pw_str(w, "nextEventTime");
                pw_f64(w, d.next_event_time);
        }
        return r;
}

bool hfmi_call(struct hsess *hs, const struct proto_fmi_call *c, struct pw *w,
                 struct hfmi_refusal *ref)
{
        uint64_t handle = c->state;
        int r;

        function_name(hs->inst, c, ref->function, sizeof(ref->function));
        switch (c->fn) {
        case PROTO_FMI_SET:
        case PROTO_FMI_GET:
                r = values(hs, c, w);
                break;
        case PROTO_FMI_DO_STEP:
                r = step(hs, c, w);
                break;
        case PROTO_FMI_ENTER_INIT: {
                struct inst_experiment e = {
                        .tolerance_defined = c->has_tolerance, .tolerance = c->tolerance,
                        .start_time = c->has_start ? c->start : 0,
                        .stop_time_defined = c->has_stop, .stop_time = c->stop };

                /* FMI 2.0 has the experiment in fmi2SetupExperiment, before. */
                r = inst_fmi_version(hs->inst) == 2 ? inst_setup_experiment(hs->inst, &e) : 0;
                if (r == INST_OK || r == INST_WARNING)
                        r = inst_enter_initialization_mode(hs->inst,
                                                           inst_fmi_version(hs->inst) == 2 ?
                                                           NULL : &e);
                break;
        }
        case PROTO_FMI_EXIT_INIT:
                r = inst_exit_initialization_mode(hs->inst);
                break;
        case PROTO_FMI_ENTER_EVENT:
                r = inst_enter_event_mode(hs->inst);
                break;
        case PROTO_FMI_ENTER_STEP:
                r = inst_enter_step_mode(hs->inst);
                break;
        case PROTO_FMI_UPDATE_DISCRETE:
                r = discrete(hs, w);
                break;
        case PROTO_FMI_GET_STATE:
                r = inst_get_fmu_state(hs->inst, &handle);
                if (r == INST_OK || r == INST_WARNING)
                        state_result(w, handle);
                break;
        case PROTO_FMI_SET_STATE:
                r = inst_set_fmu_state(hs->inst, handle);
                break;
        case PROTO_FMI_FREE_STATE:
                r = inst_free_fmu_state(hs->inst, &handle);
                break;
        case PROTO_FMI_SERIALIZE:
                r = serialize(hs, c, w, ref);
                if (r == -E2BIG && ref->code == PROTO_E_TOO_LARGE)
                        return false;
                break;
        case PROTO_FMI_DESERIALIZE:
                handle = 0;
                r = inst_deserialize_fmu_state(hs->inst, (const uint8_t *)c->bytes.ptr,
                                               c->bytes.len, &handle);
                if (r == INST_OK || r == INST_WARNING)
                        state_result(w, handle);
                break;
        case PROTO_FMI_DIRECTIONAL:
        case PROTO_FMI_ADJOINT:
                r = derivative(hs, c, w);
                break;
        case PROTO_FMI_RESET:
                r = inst_reset(hs->inst);
                break;
        case PROTO_FMI_TERMINATE:
                r = inst_terminate(hs->inst);
                break;
        case PROTO_FMI_ENTER_CONFIG:
                r = inst_enter_configuration_mode(hs->inst);
                break;
        case PROTO_FMI_EXIT_CONFIG:
                r = inst_exit_configuration_mode(hs->inst);
                break;
        default:
                r = -EINVAL;
                break;
        }
        if (!judge(hs, r, ref))
                return false;
        /* Calls without a result of their own answer nil. */
        switch (c->fn) {
        case PROTO_FMI_ENTER_INIT: case PROTO_FMI_EXIT_INIT: case PROTO_FMI_ENTER_EVENT:
        case PROTO_FMI_ENTER_STEP: case PROTO_FMI_SET_STATE: case PROTO_FMI_FREE_STATE:
        case PROTO_FMI_RESET: case PROTO_FMI_TERMINATE: case PROTO_FMI_ENTER_CONFIG:
        case PROTO_FMI_EXIT_CONFIG:
                pw_nil(w);
                break;
        default:
                break;
        }
        return true;
}
