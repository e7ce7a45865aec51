/*
 * call: parsing, range checks and payload writing for the call protocol
 * (call.h), shared by fmud-worker and the daemon.
 *
 * DESIGN: every length and offset is checked with arithmetic that cannot
 * overflow before any pointer is formed from it, and every value the
 * checks use is read once into a local.
 */
#include <errno.h>
#include <string.h>

#include "worker/call.h"

struct op_info {
        const char *name;
        uint16_t request;       /* request body bytes */
        uint16_t result;        /* reply body bytes after struct call_reply */
};

static const struct op_info ops[CALL_OP_COUNT] = {
        [CALL_OP_NONE] = { "NONE", 0, 0 },
        [CALL_EV_HELLO] = { "HELLO", sizeof(struct call_hello), 0 },
        [CALL_EV_LOG] = { "LOG", sizeof(struct call_log), 0 },
        [CALL_EV_IU] = { "INTERMEDIATE_UPDATE", sizeof(struct call_iu), 0 },
        [CALL_OP_INSTANTIATE] = { "INSTANTIATE", sizeof(struct call_instantiate), 0 },
        [CALL_OP_FREE] = { "FREE", 0, 0 },
        [CALL_OP_SET_DEBUG_LOGGING] = { "SET_DEBUG_LOGGING", sizeof(struct call_debug_logging), 0 },
        [CALL_OP_SETUP_EXPERIMENT] = { "SETUP_EXPERIMENT", sizeof(struct call_experiment), 0 },
        [CALL_OP_ENTER_INIT] = { "ENTER_INITIALIZATION_MODE", sizeof(struct call_experiment), 0 },
        [CALL_OP_EXIT_INIT] = { "EXIT_INITIALIZATION_MODE", 0, sizeof(struct call_exit_init) },
        [CALL_OP_ENTER_CONFIG] = { "ENTER_CONFIGURATION_MODE", 0, 0 },
        [CALL_OP_EXIT_CONFIG] = { "EXIT_CONFIGURATION_MODE", 0, 0 },
        [CALL_OP_ENTER_EVENT] = { "ENTER_EVENT_MODE", 0, 0 },
        [CALL_OP_ENTER_STEP] = { "ENTER_STEP_MODE", 0, 0 },
        [CALL_OP_EVALUATE_DISCRETE] = { "EVALUATE_DISCRETE_STATES", 0, 0 },
        [CALL_OP_UPDATE_DISCRETE] = { "UPDATE_DISCRETE_STATES", 0, sizeof(struct call_discrete) },
        [CALL_OP_TERMINATE] = { "TERMINATE", 0, 0 },
        [CALL_OP_RESET] = { "RESET", 0, 0 },
        [CALL_OP_GET] = { "GET", sizeof(struct call_values), sizeof(struct call_values) },
        [CALL_OP_SET] = { "SET", sizeof(struct call_values), 0 },
        [CALL_OP_GET_INTERVAL_DECIMAL] = { "GET_INTERVAL_DECIMAL", sizeof(struct call_clock_timing),
                                           sizeof(struct call_clock_timing) },
        [CALL_OP_GET_INTERVAL_FRACTION] = { "GET_INTERVAL_FRACTION", sizeof(struct call_clock_timing),
                                            sizeof(struct call_clock_timing) },
        [CALL_OP_GET_SHIFT_DECIMAL] = { "GET_SHIFT_DECIMAL", sizeof(struct call_clock_timing),
                                        sizeof(struct call_clock_timing) },
        [CALL_OP_GET_SHIFT_FRACTION] = { "GET_SHIFT_FRACTION", sizeof(struct call_clock_timing),
                                         sizeof(struct call_clock_timing) },
        [CALL_OP_SET_INTERVAL_DECIMAL] = { "SET_INTERVAL_DECIMAL", sizeof(struct call_clock_timing), 0 },
        [CALL_OP_SET_INTERVAL_FRACTION] = { "SET_INTERVAL_FRACTION", sizeof(struct call_clock_timing), 0 },
        [CALL_OP_SET_SHIFT_DECIMAL] = { "SET_SHIFT_DECIMAL", sizeof(struct call_clock_timing), 0 },
        [CALL_OP_SET_SHIFT_FRACTION] = { "SET_SHIFT_FRACTION", sizeof(struct call_clock_timing), 0 },
        [CALL_OP_DO_STEP] = { "DO_STEP", sizeof(struct call_do_step), sizeof(struct call_step_result) },
        [CALL_OP_CANCEL_STEP] = { "CANCEL_STEP", 0, 0 },
        [CALL_OP_GET_STATUS] = { "GET_STATUS", sizeof(struct call_status_query),
                                 sizeof(struct call_status_query) },
        [CALL_OP_GET_OUTPUT_DERIVATIVES] = { "GET_OUTPUT_DERIVATIVES", sizeof(struct call_derivatives),
                                             sizeof(struct call_derivatives) },
        [CALL_OP_SET_INPUT_DERIVATIVES] = { "SET_INPUT_DERIVATIVES", sizeof(struct call_derivatives), 0 },
        [CALL_OP_DIRECTIONAL_DERIVATIVE] = { "GET_DIRECTIONAL_DERIVATIVE", sizeof(struct call_partial),
                                             sizeof(struct call_partial) },
        [CALL_OP_ADJOINT_DERIVATIVE] = { "GET_ADJOINT_DERIVATIVE", sizeof(struct call_partial),
                                         sizeof(struct call_partial) },
        [CALL_OP_GET_FMU_STATE] = { "GET_FMU_STATE", sizeof(struct call_fmu_state),
                                    sizeof(struct call_fmu_state) },
        [CALL_OP_SET_FMU_STATE] = { "SET_FMU_STATE", sizeof(struct call_fmu_state),
                                    sizeof(struct call_fmu_state) },
        [CALL_OP_FREE_FMU_STATE] = { "FREE_FMU_STATE", sizeof(struct call_fmu_state),
                                     sizeof(struct call_fmu_state) },
        [CALL_OP_SERIALIZED_SIZE] = { "SERIALIZED_FMU_STATE_SIZE", sizeof(struct call_fmu_state),
                                      sizeof(struct call_fmu_state) },
        [CALL_OP_SERIALIZE] = { "SERIALIZE_FMU_STATE", sizeof(struct call_fmu_state),
                                sizeof(struct call_fmu_state) },
        [CALL_OP_DESERIALIZE] = { "DESERIALIZE_FMU_STATE", sizeof(struct call_fmu_state),
                                  sizeof(struct call_fmu_state) },
        [CALL_OP_NUM_DEPENDENCIES] = { "GET_NUMBER_OF_VARIABLE_DEPENDENCIES",
                                       sizeof(struct call_dependencies), sizeof(struct call_dependencies) },
        [CALL_OP_DEPENDENCIES] = { "GET_VARIABLE_DEPENDENCIES", sizeof(struct call_dependencies),
                                   sizeof(struct call_dependencies) },
        [CALL_OP_IU_ANSWER] = { "INTERMEDIATE_UPDATE_ANSWER", sizeof(struct call_iu_answer), 0 },
        [CALL_EV_SANDBOX] = { "SANDBOX", sizeof(struct call_sandbox), 0 },
        [CALL_EV_MLOCK] = { "MLOCK", sizeof(struct call_mlock), 0 },
};

static_assert(sizeof(struct call_reply) + sizeof(struct call_partial) <= CALL_BODY_MAX,
              "CALL_BODY_MAX holds every reply body");

/* FMI function names without their prefix (FMI 3.0 sections 2.2 to 4.2). */
static const char *const fmi_functions[CALL_OP_COUNT] = {
        [CALL_OP_INSTANTIATE] = "InstantiateCoSimulation",
        [CALL_OP_FREE] = "FreeInstance",
        [CALL_OP_SET_DEBUG_LOGGING] = "SetDebugLogging",
        [CALL_OP_SETUP_EXPERIMENT] = "SetupExperiment",
        [CALL_OP_ENTER_INIT] = "EnterInitializationMode",
        [CALL_OP_EXIT_INIT] = "ExitInitializationMode",
        [CALL_OP_ENTER_CONFIG] = "EnterConfigurationMode",
        [CALL_OP_EXIT_CONFIG] = "ExitConfigurationMode",
        [CALL_OP_ENTER_EVENT] = "EnterEventMode",
        [CALL_OP_ENTER_STEP] = "EnterStepMode",
        [CALL_OP_EVALUATE_DISCRETE] = "EvaluateDiscreteStates",
        [CALL_OP_UPDATE_DISCRETE] = "UpdateDiscreteStates",
        [CALL_OP_TERMINATE] = "Terminate",
        [CALL_OP_RESET] = "Reset",
        [CALL_OP_GET_INTERVAL_DECIMAL] = "GetIntervalDecimal",
        [CALL_OP_GET_INTERVAL_FRACTION] = "GetIntervalFraction",
        [CALL_OP_GET_SHIFT_DECIMAL] = "GetShiftDecimal",
        [CALL_OP_GET_SHIFT_FRACTION] = "GetShiftFraction",
        [CALL_OP_SET_INTERVAL_DECIMAL] = "SetIntervalDecimal",
        [CALL_OP_SET_INTERVAL_FRACTION] = "SetIntervalFraction",
        [CALL_OP_SET_SHIFT_DECIMAL] = "SetShiftDecimal",
        [CALL_OP_SET_SHIFT_FRACTION] = "SetShiftFraction",
        [CALL_OP_DO_STEP] = "DoStep",
        [CALL_OP_CANCEL_STEP] = "CancelStep",
        [CALL_OP_GET_STATUS] = "GetStatus",
        [CALL_OP_GET_OUTPUT_DERIVATIVES] = "GetOutputDerivatives",
        [CALL_OP_SET_INPUT_DERIVATIVES] = "SetRealInputDerivatives",
        [CALL_OP_DIRECTIONAL_DERIVATIVE] = "GetDirectionalDerivative",
        [CALL_OP_ADJOINT_DERIVATIVE] = "GetAdjointDerivative",
        [CALL_OP_GET_FMU_STATE] = "GetFMUState",
        [CALL_OP_SET_FMU_STATE] = "SetFMUState",
        [CALL_OP_FREE_FMU_STATE] = "FreeFMUState",
        [CALL_OP_SERIALIZED_SIZE] = "SerializedFMUStateSize",
        [CALL_OP_SERIALIZE] = "SerializeFMUState",
        [CALL_OP_DESERIALIZE] = "DeserializeFMUState",
        [CALL_OP_NUM_DEPENDENCIES] = "GetNumberOfVariableDependencies",
        [CALL_OP_DEPENDENCIES] = "GetVariableDependencies",
};
/* Where FMI 2.0 spells them otherwise. */
static const char *const fmi2_functions[CALL_OP_COUNT] = {
        [CALL_OP_INSTANTIATE] = "Instantiate",
        [CALL_OP_GET_OUTPUT_DERIVATIVES] = "GetRealOutputDerivatives",
        [CALL_OP_GET_FMU_STATE] = "GetFMUstate",
        [CALL_OP_SET_FMU_STATE] = "SetFMUstate",
        [CALL_OP_FREE_FMU_STATE] = "FreeFMUstate",
        [CALL_OP_SERIALIZED_SIZE] = "SerializedFMUstateSize",
        [CALL_OP_SERIALIZE] = "SerializeFMUstate",
        [CALL_OP_DESERIALIZE] = "DeSerializeFMUstate",
};

const char *call_fmi_function(enum call_op op, int fmi)
{
        if ((unsigned)op >= CALL_OP_COUNT)
                return NULL;
        if (fmi == 2 && fmi2_functions[op])
                return fmi2_functions[op];
        return fmi_functions[op];
}

const char *call_op_name(enum call_op op)
{
        return (unsigned)op < CALL_OP_COUNT ? ops[op].name : "?";
}

size_t call_request_body(enum call_op op)
{
        return (unsigned)op < CALL_OP_COUNT ? ops[op].request : 0;
}

size_t call_result_body(enum call_op op)
{
        return (unsigned)op < CALL_OP_COUNT ? ops[op].result : 0;
}

const char *call_state_name(enum call_state s)
{
        static const char *const names[CALL_ST_COUNT] = {
                [CALL_ST_START] = "no instance",
                [CALL_ST_INSTANTIATED] = "Instantiated",
                [CALL_ST_CONFIGURATION] = "Configuration Mode",
                [CALL_ST_INITIALIZATION] = "Initialization Mode",
                [CALL_ST_STEP] = "Step Mode",
                [CALL_ST_EVENT] = "Event Mode",
                [CALL_ST_RECONFIGURATION] = "Reconfiguration Mode",
                [CALL_ST_INTERMEDIATE] = "Intermediate Update Mode",
                [CALL_ST_TERMINATED] = "Terminated",
                [CALL_ST_ERROR] = "Terminated after an error",
                [CALL_ST_STEP_FAILED] = "stepFailed",
                [CALL_ST_STEP_PENDING] = "stepInProgress",
                [CALL_ST_STEP_CANCELED] = "stepCanceled",
                [CALL_ST_FATAL] = "Fatal",
        };

        return (unsigned)s < CALL_ST_COUNT ? names[s] : "?";
}

int call_error_errno(int32_t error)
{
        static const int map[CALL_E_COUNT] = {
                [CALL_E_NONE] = 0,
                [CALL_E_STATE] = -EPERM,
                [CALL_E_ACCESS] = -EACCES,
                [CALL_E_NOVAR] = -ENOENT,
                [CALL_E_TYPE] = -EPROTOTYPE,
                [CALL_E_TOO_MANY] = -E2BIG,
                [CALL_E_TOO_FEW] = -ENODATA,
                [CALL_E_TOO_LONG] = -EFBIG,
                [CALL_E_HANDLE] = -EBADF,
                [CALL_E_NOTSUP] = -EOPNOTSUPP,
                [CALL_E_INVAL] = -EINVAL,
                [CALL_E_FATAL] = -ENOTRECOVERABLE,
                [CALL_E_MSGSIZE] = -EMSGSIZE,
                [CALL_E_NOMEM] = -ENOMEM,
                [CALL_E_LIMIT] = -ENOSPC,
                [CALL_E_BADMSG] = -EBADMSG,
                [CALL_E_SKIPPED] = -ECANCELED,
        };

        if (error <= 0 || error >= CALL_E_COUNT)
                return -EPROTO;
        return map[error];
}

size_t call_elem_size(enum md_type t)
{
        switch (t) {
        case MD_FLOAT32:
        case MD_INT32:
        case MD_UINT32:
                return 4;
        case MD_FLOAT64:
        case MD_INT64:
        case MD_UINT64:
        case MD_ENUMERATION:
                return 8;
        case MD_INT8:
        case MD_UINT8:
        case MD_BOOLEAN:
        case MD_CLOCK:
                return 1;
        case MD_INT16:
        case MD_UINT16:
                return 2;
        case MD_STRING:
        case MD_BINARY:
        case MD_TYPE_COUNT:
                break;
        }
        return 0;
}

bool call_layout_block_fits(enum md_type t, uint64_t n_values)
{
        return call_elem_size(t) != 0 && n_values <= CALL_LAYOUT_VALUES_MAX;
}

int call_parse(const void *rec, size_t rec_len, struct call_in *ret, bool *ret_side)
{
        const unsigned char *p = rec;
        struct call_hdr h;
        uint64_t rest;

        if (rec_len < sizeof(h))
                return -EBADMSG;
        memcpy(&h, p, sizeof(h));
        if (h.magic != CALL_MAGIC || h.kind < CALL_REQUEST || h.kind > CALL_EVENT ||
            h.op == CALL_OP_NONE || h.op >= CALL_OP_COUNT || (h.flags & ~CALL_F_ALL) ||
            h.body_len % 8 || h.body_len > CALL_BODY_MAX)
                return -EBADMSG;
        rest = rec_len - sizeof(h);
        if (h.body_len > rest)
                return -EBADMSG;
        rest -= h.body_len;
        if (h.flags & CALL_F_SIDE) {
                if (rest != 0 || h.payload_off % 8)
                        return -EBADMSG;
        } else if (h.payload_off != 0 || h.payload_len != rest) {
                return -EBADMSG;
        }
        ret->hdr = h;
        ret->body = p + sizeof(h);
        ret->payload = (h.flags & CALL_F_SIDE) ? NULL : p + sizeof(h) + h.body_len;
        ret->payload_len = (h.flags & CALL_F_SIDE) ? 0 : h.payload_len;
        *ret_side = (h.flags & CALL_F_SIDE) != 0;
        return 0;
}

int call_in_bytes(const struct call_in *in, const struct call_range *r, uint64_t max,
                  const void **ret)
{
        uint64_t off = r->off, len = r->len;

        if (len > max || off > in->payload_len || len > in->payload_len - off)
                return -EBADMSG;
        *ret = len ? in->payload + off : NULL;
        return 0;
}

static const uint64_t no_values[1];

int call_in_range(const struct call_in *in, const struct call_range *r, uint64_t elem,
                  uint64_t count, const void **ret)
{
        uint64_t off = r->off, len = r->len;
        uint64_t align = elem < 8 ? elem : 8;

        if (elem == 0 || count > UINT64_MAX / elem || len != count * elem)
                return -EBADMSG;
        if (len && off % align)
                return -EBADMSG;
        if (off > in->payload_len || len > in->payload_len - off)
                return -EBADMSG;
        /*
         * No values (an array sized 0): a valid pointer all the same. FMUs
         * copy nValues values with memcpy(), which is undefined for NULL
         * even of 0 bytes, and sanitized FMUs abort on it.
         */
        *ret = len ? in->payload + off : (const void *)no_values;
        return 0;
}

void call_out_init(struct call_out *o, void *inl, uint64_t inl_cap, void *side, uint64_t side_cap)
{
        *o = (struct call_out){
                .inl = inl, .inl_cap = inl_cap,
                .side = side, .side_cap = side ? side_cap : 0,
                .base = inl,
        };
}

uint64_t call_out_need(uint64_t n, uint64_t k)
{
        if (k > UINT64_MAX / 8 || n > UINT64_MAX - 8 * k)
                return UINT64_MAX;
        return n + 8 * k;
}

void call_out_expect(struct call_out *o, uint64_t total)
{
        if (o->len == 0 && total > o->inl_cap && o->side) {
                o->base = o->side;
                o->in_side = true;
        }
}

int call_out_alloc(struct call_out *o, uint64_t n, uint64_t *ret_off)
{
        uint64_t off = (o->len + 7) & ~(uint64_t)7;
        uint64_t cap = o->in_side ? o->side_cap : o->inl_cap;

        if (off > cap || n > cap - off) {
                if (o->in_side || !o->side || off > o->side_cap || n > o->side_cap - off)
                        return -EMSGSIZE;
                /* Move what is there so far: one payload lives in one place. */
                if (o->len)
                        memcpy(o->side, o->inl, o->len);
                o->base = o->side;
                o->in_side = true;
        }
        /* Zero the alignment gap: nothing private leaks through padding. */
        if (off > o->len)
                memset(o->base + o->len, 0, off - o->len);
        o->len = off + n;
        *ret_off = off;
        return 0;
}

void *call_out_ptr(const struct call_out *o, uint64_t off)
{
        return o->base + off;
}

int call_out_put(struct call_out *o, const void *p, uint64_t n, struct call_range *ret)
{
        uint64_t off;
        int r;

        if (n == 0) {
                *ret = (struct call_range){ 0, 0 };
                return 0;
        }
        r = call_out_alloc(o, n, &off);
        if (r < 0)
                return r;
        memcpy(o->base + off, p, n);
        *ret = (struct call_range){ off, n };
        return 0;
}

int call_check_strings(const void *data, uint64_t len, uint64_t n, uint64_t max,
                       uint64_t *ret_index)
{
        const char *p = data, *end = p + len;

        for (uint64_t i = 0; i < n; i++) {
                const char *nul;

                if (p >= end)
                        return -EBADMSG;
                nul = memchr(p, '\0', (size_t)(end - p));
                if (!nul)
                        return -EBADMSG;
                if ((uint64_t)(nul - p) > max) {
                        *ret_index = i;
                        return -EFBIG;
                }
                p = nul + 1;
        }
        return p == end ? 0 : -EBADMSG;
}

int call_sum_sizes(const uint64_t *sizes, uint64_t n, uint64_t *ret_sum)
{
        uint64_t sum = 0;

        for (uint64_t i = 0; i < n; i++) {
                uint64_t s;

                memcpy(&s, &sizes[i], sizeof(s));
                if (s > UINT64_MAX - sum)
                        return -EOVERFLOW;
                sum += s;
        }
        *ret_sum = sum;
        return 0;
}
