/*
 * call: the binary messages that carry FMI calls between the daemon and one
 * fmud-worker over their channel (shm/channel.h).
 *
 * DESIGN
 * - One ring record is one message: a struct call_hdr, an op-specific body
 *   (a fixed struct below, body_len bytes) and a payload. Requests go
 *   daemon -> worker; replies and events worker -> daemon. Every request
 *   gets exactly one reply with the same op and seq, except
 *   CALL_OP_IU_ANSWER, which ends an intermediate update and is answered
 *   by the reply to the DO_STEP in progress. Events (HELLO, LOG, IU) carry
 *   the seq of the request being served (0 for HELLO).
 * - Variable-size data (value references, values, strings, binaries, FMU
 *   states, message texts) lives in the payload and is named by a struct
 *   call_range {off, len} relative to the payload's start. The payload
 *   follows the body inside the record when it fits, else it is the side
 *   buffer from payload_off (CALL_F_SIDE); one message uses one or the
 *   other. A payload belongs to its reader until the reader sends its next
 *   message on the channel (the side buffer's turn, see channel.h), so each
 *   side copies what it keeps before answering.
 * - No pointers, fixed little-endian layouts with explicit padding; every
 *   struct is a multiple of 8 bytes and every range the writers produce is
 *   8-aligned, so fixed-width values can be handed to FMI functions in
 *   place after the reader's private copy.
 * - Whoever reads a message validates all of it before use: magic, kind,
 *   op, body and payload lengths (call_parse), each range against the
 *   payload and against the count it must hold (call_in_range), every enum,
 *   Boolean, string length and NUL termination. The daemon treats a worker
 *   as hostile (it runs FMU code); the worker checks the daemon's requests
 *   too. A message that breaks these rules is never partly used.
 *
 * Value encoding per enum md_type: Float32 float, Float64 double, IntN /
 * UIntN the fixed-width integers, Boolean and Clock one byte 0 or 1;
 * Enumeration is read and written as Int64 (FMI 3.0) or Int32 (FMI 2.0
 * Integer); String: the values as NUL-terminated strings back to back;
 * Binary: sizes (u64 per value) and the bytes back to back.
 */
#ifndef FMUD_WORKER_CALL_H
#define FMUD_WORKER_CALL_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fmi/model_description.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the call protocol is little-endian");
static_assert(sizeof(bool) == 1, "Booleans travel as one byte");
static_assert(sizeof(float) == 4 && sizeof(double) == 8, "IEEE 754 binary32 and binary64");

#define CALL_MAGIC      0x4c4c4143u     /* "CALL" little-endian */
#define CALL_VERSION    5u

/* Bounds both sides enforce. */
#define CALL_MSG_MAX            1024u   /* refusal and log message bytes */
#define CALL_CATEGORY_MAX       128u    /* log category bytes */
#define CALL_LOGS_PER_CALL      64u     /* log events per request; more are counted */
#define CALL_REPEAT_MAX         16u     /* steps of one DO_STEP request (call_do_step.repeat) */
#define CALL_STATES_MAX         4096u   /* live FMU states per instance */
#define CALL_STRING_MAX_DEFAULT (1u << 20)      /* bytes of one String value */
#define CALL_BINARY_MAX_DEFAULT (16u << 20)     /* bytes of one Binary value */
#define CALL_BODY_MAX           128u    /* largest body, reply status included */

enum call_kind {
        CALL_REQUEST = 1,
        CALL_REPLY = 2,
        CALL_EVENT = 3,
};

enum call_op {
        CALL_OP_NONE,
        /* events, worker -> daemon */
        CALL_EV_HELLO,                  /* struct call_hello: the worker is ready (or why not) */
        CALL_EV_LOG,                    /* struct call_log: the FMU logged a message */
        CALL_EV_IU,                     /* struct call_iu: intermediate update, await IU_ANSWER */
        /* requests, daemon -> worker; reply body: struct call_reply + result */
        CALL_OP_INSTANTIATE,            /* call_instantiate -> - */
        CALL_OP_FREE,                   /* - -> -; the worker exits after the reply */
        CALL_OP_SET_DEBUG_LOGGING,      /* call_debug_logging -> - */
        CALL_OP_SETUP_EXPERIMENT,       /* call_experiment -> -  (FMI 2.0) */
        CALL_OP_ENTER_INIT,             /* call_experiment or empty (FMI 2.0: empty) -> - */
        CALL_OP_EXIT_INIT,
        CALL_OP_ENTER_CONFIG,
        CALL_OP_EXIT_CONFIG,
        CALL_OP_ENTER_EVENT,
        CALL_OP_ENTER_STEP,
        CALL_OP_EVALUATE_DISCRETE,
        CALL_OP_UPDATE_DISCRETE,        /* - -> call_discrete */
        CALL_OP_TERMINATE,
        CALL_OP_RESET,
        CALL_OP_GET,                    /* call_values -> call_values (MD_CLOCK: fmi3GetClock) */
        CALL_OP_SET,                    /* call_values -> - */
        CALL_OP_GET_INTERVAL_DECIMAL,   /* call_clock_timing -> call_clock_timing */
        CALL_OP_GET_INTERVAL_FRACTION,
        CALL_OP_GET_SHIFT_DECIMAL,
        CALL_OP_GET_SHIFT_FRACTION,
        CALL_OP_SET_INTERVAL_DECIMAL,   /* call_clock_timing -> - */
        CALL_OP_SET_INTERVAL_FRACTION,
        CALL_OP_SET_SHIFT_DECIMAL,
        CALL_OP_SET_SHIFT_FRACTION,
        CALL_OP_DO_STEP,                /* call_do_step -> call_step_result */
        CALL_OP_CANCEL_STEP,            /* FMI 2.0 */
        CALL_OP_GET_STATUS,             /* call_status_query -> call_status_query (FMI 2.0) */
        CALL_OP_GET_OUTPUT_DERIVATIVES, /* call_derivatives -> call_derivatives */
        CALL_OP_SET_INPUT_DERIVATIVES,  /* call_derivatives -> -  (FMI 2.0) */
        CALL_OP_DIRECTIONAL_DERIVATIVE, /* call_partial -> call_partial */
        CALL_OP_ADJOINT_DERIVATIVE,
        CALL_OP_GET_FMU_STATE,          /* call_fmu_state -> call_fmu_state */
        CALL_OP_SET_FMU_STATE,
        CALL_OP_FREE_FMU_STATE,
        CALL_OP_SERIALIZED_SIZE,
        CALL_OP_SERIALIZE,
        CALL_OP_DESERIALIZE,
        CALL_OP_NUM_DEPENDENCIES,       /* call_dependencies -> call_dependencies */
        CALL_OP_DEPENDENCIES,
        CALL_OP_IU_ANSWER,              /* call_iu_answer, no reply of its own */
        /* event, worker -> daemon, before HELLO */
        CALL_EV_SANDBOX,                /* struct call_sandbox: the sandbox layers as applied */
        CALL_OP_COUNT,
};

/*
 * Why the worker refused a request (struct call_reply.error). A refused
 * call never reached the FMU. call_error_errno() gives the -errno the
 * daemon API returns for each.
 */
enum call_error {
        CALL_E_NONE,
        CALL_E_STATE,           /* -EPERM: the function is not allowed in this state */
        CALL_E_ACCESS,          /* -EACCES: the variable cannot be set/get in this state */
        CALL_E_NOVAR,           /* -ENOENT: unknown value reference */
        CALL_E_TYPE,            /* -EPROTOTYPE: the variable's declared type differs */
        CALL_E_TOO_MANY,        /* -E2BIG: more values than the variables have */
        CALL_E_TOO_FEW,         /* -ENODATA: fewer values than the variables have */
        CALL_E_TOO_LONG,        /* -EFBIG: a String or Binary over its limit */
        CALL_E_HANDLE,          /* -EBADF: not a live FMU state handle */
        CALL_E_NOTSUP,          /* -EOPNOTSUPP: not declared by the FMU or not in its FMI version */
        CALL_E_INVAL,           /* -EINVAL: an invalid argument */
        CALL_E_FATAL,           /* -ENOTRECOVERABLE: the FMU returned Fatal before */
        CALL_E_MSGSIZE,         /* -EMSGSIZE: the reply would not fit the channel */
        CALL_E_NOMEM,           /* -ENOMEM */
        CALL_E_LIMIT,           /* -ENOSPC: too many live FMU states */
        CALL_E_BADMSG,          /* -EBADMSG: the request itself was malformed */
        CALL_E_SKIPPED,         /* -ECANCELED: a chained step after one that was not plain */
        CALL_E_COUNT,
};

/*
 * The worker's view of the FMI state machine (FMI 3.0 sections 2.3 and
 * 4.2; the FMI 2.0 Co-Simulation states map onto it), reported after
 * every call.
 */
enum call_state {
        CALL_ST_START,                  /* no instance yet */
        CALL_ST_INSTANTIATED,
        CALL_ST_CONFIGURATION,
        CALL_ST_INITIALIZATION,
        CALL_ST_STEP,                   /* FMI 2.0: slaveInitialized, stepComplete */
        CALL_ST_EVENT,
        CALL_ST_RECONFIGURATION,
        CALL_ST_INTERMEDIATE,           /* Intermediate Update Mode */
        CALL_ST_TERMINATED,
        CALL_ST_ERROR,                  /* FMI 3.0: Terminated after fmi3Error; FMI 2.0: error */
        CALL_ST_STEP_FAILED,            /* FMI 2.0: fmi2DoStep returned fmi2Discard */
        CALL_ST_STEP_PENDING,           /* FMI 2.0: fmi2DoStep returned fmi2Pending */
        CALL_ST_STEP_CANCELED,          /* FMI 2.0 */
        CALL_ST_FATAL,                  /* the FMU returned Fatal: nothing more is called */
        CALL_ST_COUNT,
};

/* Capability flags in struct call_hello, from modelDescription.xml. */
#define CALL_CAP_EVENT_MODE     (1u << 0)
#define CALL_CAP_FMU_STATE      (1u << 1)
#define CALL_CAP_SERIALIZE      (1u << 2)
#define CALL_CAP_DIRECTIONAL    (1u << 3)
#define CALL_CAP_ADJOINT        (1u << 4)
#define CALL_CAP_INTERMEDIATE   (1u << 5)
#define CALL_CAP_EARLY_RETURN   (1u << 6)
#define CALL_CAP_EVALUATE       (1u << 7)
#define CALL_CAP_OUTPUT_DER     (1u << 8)
#define CALL_CAP_INPUT_DER      (1u << 9)
#define CALL_CAP_DEPENDENCIES   (1u << 10)
#define CALL_CAP_CONFIGURATION  (1u << 11)

/* struct call_hdr.flags */
#define CALL_F_SIDE     (1u << 0)       /* the payload is in the side buffer */
#define CALL_F_ALL      CALL_F_SIDE

/* A byte range of the payload. */
struct call_range {
        uint64_t off;
        uint64_t len;
};
static_assert(sizeof(struct call_range) == 16, "call_range is shared ABI");

/*
 * Shared: the start of every record on both rings. Written by the sender
 * before it commits the record, read once (copied) by the receiver after
 * ring_peek(). This layout is ABI: bump CALL_VERSION when it changes.
 */
struct call_hdr {
        uint32_t magic;         /* CALL_MAGIC */
        uint16_t kind;          /* enum call_kind */
        uint16_t op;            /* enum call_op */
        uint64_t seq;           /* request number, echoed by its reply and events */
        uint32_t body_len;      /* bytes of the op's body after this header, 8-aligned */
        uint32_t flags;         /* CALL_F_* */
        uint64_t payload_off;   /* CALL_F_SIDE: offset in the side buffer; else 0 */
        uint64_t payload_len;   /* inline: the record's bytes after the body */
};
static_assert(sizeof(struct call_hdr) == 40, "call_hdr is shared ABI");

/* The start of every reply body; the op's result follows. */
struct call_reply {
        int32_t status;         /* fmi3Status / fmi2Status of the FMU, when error == 0 */
        int32_t error;          /* enum call_error; non-zero: refused, status meaningless */
        uint32_t state;         /* enum call_state after the call */
        uint32_t logs_dropped;  /* log messages of this call that were not forwarded */
        struct call_range msg;  /* why it was refused, at most CALL_MSG_MAX bytes, no NUL */
};
static_assert(sizeof(struct call_reply) == 32, "call_reply is shared ABI");

/* ---- Events ---------------------------------------------------------- */

struct call_hello {
        uint32_t version;       /* CALL_VERSION */
        uint32_t fmi;           /* 2 or 3 */
        int32_t error;          /* 0: ready; else -errno, and the worker exits */
        uint32_t pid;
        uint64_t caps;          /* CALL_CAP_* */
        struct call_range msg;  /* why it is not ready */
};
static_assert(sizeof(struct call_hello) == 40, "call_hello is shared ABI");

struct call_log {
        int32_t status;         /* fmi3Status of the message */
        uint32_t truncated;     /* the message was cut to CALL_MSG_MAX */
        struct call_range category;     /* at most CALL_CATEGORY_MAX bytes, no NUL */
        struct call_range message;      /* at most CALL_MSG_MAX bytes, no NUL */
};
static_assert(sizeof(struct call_log) == 40, "call_log is shared ABI");

/*
 * The worker's sandbox (worker/sandbox.h), sent once before HELLO when the
 * daemon asked for a sandbox. state[i] is enum sandbox_layer_state of
 * layer i; details holds n_layers NUL-terminated strings back to back,
 * each at most CALL_SANDBOX_DETAIL_MAX bytes: what the layer does, or why
 * it is unavailable.
 */
#define CALL_SANDBOX_LAYERS_MAX 8u
#define CALL_SANDBOX_DETAIL_MAX 150u

struct call_sandbox {
        uint32_t mode;          /* enum sandbox_mode */
        uint32_t n_layers;      /* SANDBOX_LAYER_COUNT */
        uint8_t state[CALL_SANDBOX_LAYERS_MAX];
        struct call_range details;
};
static_assert(sizeof(struct call_sandbox) == 32, "call_sandbox is shared ABI");

/* fmi3IntermediateUpdateCallback's arguments (FMI 3.0 section 4.2.2). */
struct call_iu {
        double time;
        uint8_t set_requested;
        uint8_t get_allowed;
        uint8_t step_finished;
        uint8_t can_return_early;
        uint8_t reserved[4];
};
static_assert(sizeof(struct call_iu) == 16, "call_iu is shared ABI");

/* The daemon's answer: the callback's out-arguments. */
struct call_iu_answer {
        uint8_t early_return_requested;
        uint8_t reserved[7];
        double early_return_time;
};
static_assert(sizeof(struct call_iu_answer) == 16, "call_iu_answer is shared ABI");

/* ---- Request and result bodies ---------------------------------------- */

struct call_instantiate {
        uint8_t visible;
        uint8_t logging_on;
        uint8_t event_mode_used;
        uint8_t early_return_allowed;
        uint8_t intermediate_update;    /* the daemon answers CALL_EV_IU */
        uint8_t has_token;              /* else: the description's token */
        uint8_t reserved[2];
        uint32_t n_required;            /* requiredIntermediateVariables */
        uint32_t reserved2;
        uint64_t max_string;            /* bytes of one String value; 0: default */
        uint64_t max_binary;            /* bytes of one Binary value; 0: default */
        struct call_range name;         /* instanceName, no NUL */
        struct call_range token;        /* instantiationToken, no NUL */
        struct call_range required;     /* u32[n_required] */
};
static_assert(sizeof(struct call_instantiate) == 80, "call_instantiate is shared ABI");

struct call_debug_logging {
        uint8_t logging_on;
        uint8_t reserved[3];
        uint32_t n_categories;
        struct call_range categories;   /* NUL-terminated strings back to back */
};
static_assert(sizeof(struct call_debug_logging) == 24, "call_debug_logging is shared ABI");

struct call_experiment {
        uint8_t tolerance_defined;
        uint8_t stop_time_defined;
        uint8_t reserved[6];
        double tolerance;
        double start_time;
        double stop_time;
};
static_assert(sizeof(struct call_experiment) == 32, "call_experiment is shared ABI");

struct call_discrete {
        uint8_t discrete_states_need_update;
        uint8_t terminate_simulation;
        uint8_t nominals_changed;
        uint8_t values_changed;
        uint8_t next_event_time_defined;
        uint8_t reserved[3];
        double next_event_time;
};
static_assert(sizeof(struct call_discrete) == 16, "call_discrete is shared ABI");

/* One typed get or set: the request of GET and SET, the result of GET. */
struct call_values {
        uint32_t type;          /* enum md_type of the FMI function */
        uint32_t n_vrs;
        uint64_t n_values;      /* nValues */
        struct call_range vrs;  /* u32[n_vrs] */
        struct call_range data; /* the values (see the file header); empty in a GET request */
        struct call_range sizes;        /* Binary: u64[n_values] */
};
static_assert(sizeof(struct call_values) == 64, "call_values is shared ABI");

/*
 * One communication point in one round trip: set the inputs, fmi3DoStep,
 * get the outputs. inputs and outputs are arrays of struct call_values in
 * the payload; output blocks carry no data in the request.
 */
struct call_do_step {
        double current_communication_point;
        double communication_step_size;
        uint8_t no_set_prior;           /* noSetFMUStatePriorToCurrentPoint */
        /*
         * 1: posted behind another DO_STEP before its reply was read. Run
         * only if the request served just before this one was a DO_STEP
         * that completed plainly: status OK or Warning, every output got,
         * no event, no terminate, no early return (lastSuccessfulTime may
         * deviate from its end without one: the FMU is at the end all the
         * same, FMI 3.0 section 4.2.1). Else it is refused with CALL_E_SKIPPED and the FMU
         * is not called, so the daemon can post the next step of a run
         * before the reply of the current one without ever getting ahead
         * of what it decides from that reply.
         */
        uint8_t chained;
        /*
         * 0: the blocks are in this request (inputs and outputs below);
         * with layout != 0 the worker keeps them, when they pass its
         * checks and are within the bounds below, as the layout with that
         * number, replacing the one it kept before. 1: a compact step: the
         * blocks are those of the kept layout numbered layout (n_inputs and
         * n_outputs must match it); inputs is the input values only, block
         * after block, each starting at the next 8-aligned offset from the
         * range's start (call_layout_place()); outputs is empty; and the
         * result's outputs are the output values only, laid out the same
         * way. A compact step whose layout the worker does not hold is
         * refused (CALL_E_BADMSG) and the daemon sends the blocks again.
         */
        uint8_t compact;
        uint8_t reserved;
        uint32_t n_inputs;
        uint32_t n_outputs;
        /*
         * 0 or 1: one step. 2..CALL_REPEAT_MAX: that many steps, one after
         * the other, each answered by its own reply with seq, seq + 1, ...:
         * step i goes from times[i] to times[i + 1] (its size is their
         * difference; the two doubles above are not used) with the same
         * inputs and outputs, and every step after the first is chained
         * (see above), so the worker stops calling the FMU at the first
         * step that is not plain and refuses the rest with CALL_E_SKIPPED.
         * One request then carries the next steps of a run, which its
         * requester would have sent one by one after plain replies.
         */
        uint32_t repeat;
        struct call_range inputs;       /* struct call_values[n_inputs] */
        struct call_range outputs;      /* struct call_values[n_outputs] */
        struct call_range times;        /* double[repeat + 1] when repeat > 1; else empty */
        uint32_t layout;                /* see compact; 0: none */
        uint32_t reserved2;
};
static_assert(sizeof(struct call_do_step) == 88, "call_do_step is shared ABI");

/*
 * A step layout (call_do_step.compact): the blocks of a DO_STEP that the
 * worker keeps, so that a run's later steps carry values only. Kept only
 * when every block has a fixed-size type (no String, no Binary) and the
 * counts are within these bounds; both sides apply the same test.
 */
#define CALL_LAYOUT_BLOCKS_MAX  64u     /* input and output blocks together */
#define CALL_LAYOUT_VRS_MAX     4096u   /* value references of all blocks together */
#define CALL_LAYOUT_VALUES_MAX  (1u << 24)      /* values of one block */

/*
 * Where the values of a compact step's blocks go, from the start of their
 * range: offs[i] for block i of lens[i] bytes, each at the next 8-aligned
 * offset after the block before. Returns the range's length (the end of
 * the last block), UINT64_MAX when it would overflow.
 */
static inline uint64_t call_layout_place(const uint64_t *lens, uint32_t n, uint64_t *offs)
{
        uint64_t end = 0;

        for (uint32_t i = 0; i < n; i++) {
                uint64_t off = (end + 7) & ~(uint64_t)7;

                if (end > UINT64_MAX - 7 || lens[i] > UINT64_MAX - off)
                        return UINT64_MAX;
                offs[i] = off;
                end = off + lens[i];
        }
        return end;
}

/* Where a DO_STEP stopped (struct call_step_result.phase). */
enum call_step_phase {
        CALL_PHASE_INPUTS,      /* setting input block 'block' failed */
        CALL_PHASE_STEP,        /* fmi3DoStep did not succeed */
        CALL_PHASE_OUTPUTS,     /* getting output block 'block' failed */
        CALL_PHASE_DONE,
};

struct call_step_result {
        uint8_t event_handling_needed;
        uint8_t terminate_simulation;
        uint8_t early_return;
        uint8_t reserved;
        uint32_t phase;         /* enum call_step_phase */
        uint32_t block;
        uint32_t n_outputs;     /* the request's n_outputs when phase is DONE, else 0 */
        double last_successful_time;
        struct call_range outputs;      /* struct call_values[n_outputs] with data */
        uint64_t service_ns;    /* time inside the FMU's doStep (CLOCK_MONOTONIC), 0: not called */
};
static_assert(sizeof(struct call_step_result) == 48, "call_step_result is shared ABI");

/* Output derivatives (both versions) and FMI 2.0 input derivatives. */
struct call_derivatives {
        uint32_t n_vrs;
        uint32_t reserved;
        uint64_t n_values;
        struct call_range vrs;          /* u32[n_vrs] */
        struct call_range orders;       /* i32[n_vrs] */
        struct call_range data;         /* f64[n_values] */
};
static_assert(sizeof(struct call_derivatives) == 64, "call_derivatives is shared ABI");

/* Directional and adjoint derivatives. */
struct call_partial {
        uint32_t n_unknowns;
        uint32_t n_knowns;
        uint64_t n_seed;
        uint64_t n_sensitivity;
        uint64_t reserved;
        struct call_range unknowns;     /* u32[n_unknowns] */
        struct call_range knowns;       /* u32[n_knowns] */
        struct call_range seed;         /* f64[n_seed] */
        struct call_range sensitivity;  /* f64[n_sensitivity], in the result */
};
static_assert(sizeof(struct call_partial) == 96, "call_partial is shared ABI");

/*
 * FMU states are the worker's; the daemon names them by handle (0: none).
 * SERIALIZE: size is the caller's buffer size, which must equal the
 * serialized size; the bytes come back in data. DESERIALIZE: data holds
 * the bytes; the new handle comes back.
 */
struct call_fmu_state {
        uint64_t handle;
        uint64_t size;
        struct call_range data;
};
static_assert(sizeof(struct call_fmu_state) == 32, "call_fmu_state is shared ABI");

/*
 * Clock timing, by op:
 *   GET/SET_INTERVAL_DECIMAL   a = f64 intervals, c = i32 qualifiers (get)
 *   GET/SET_INTERVAL_FRACTION  a = u64 counters, b = u64 resolutions, c = qualifiers (get)
 *   GET/SET_SHIFT_DECIMAL      a = f64 shifts
 *   GET/SET_SHIFT_FRACTION     a = u64 counters, b = u64 resolutions
 * each with n_vrs elements.
 */
struct call_clock_timing {
        uint32_t n_vrs;
        uint32_t reserved;
        struct call_range vrs;
        struct call_range a;
        struct call_range b;
        struct call_range c;
};
static_assert(sizeof(struct call_clock_timing) == 72, "call_clock_timing is shared ABI");

/* Variable dependencies (FMI 3.0 section 2.2.9); n in the result of NUM. */
struct call_dependencies {
        uint32_t vr;
        uint32_t reserved;
        uint64_t n;
        struct call_range elem_dependent;       /* u64[n] */
        struct call_range independents;         /* u32[n] */
        struct call_range elem_independents;    /* u64[n] */
        struct call_range kinds;                /* u32[n], fmi3DependencyKind */
};
static_assert(sizeof(struct call_dependencies) == 80, "call_dependencies is shared ABI");

/* fmi2Get*Status: which function, the fmi2StatusKind, and the value. */
enum call_status_which {
        CALL_STATUS_STATUS,     /* value in i (an fmi2Status) */
        CALL_STATUS_REAL,       /* f */
        CALL_STATUS_INTEGER,    /* i */
        CALL_STATUS_BOOLEAN,    /* i, 0 or 1 */
        CALL_STATUS_STRING,     /* str */
        CALL_STATUS_COUNT,
};

struct call_status_query {
        uint32_t which;         /* enum call_status_which */
        int32_t kind;           /* fmi2StatusKind */
        int64_t i;
        double f;
        uint64_t reserved;
        struct call_range str;  /* at most CALL_MSG_MAX bytes, no NUL */
};
static_assert(sizeof(struct call_status_query) == 48, "call_status_query is shared ABI");

/* ---- Helpers ---------------------------------------------------------- */

/* A message as read: header and body copied, payload where it lies. */
struct call_in {
        struct call_hdr hdr;
        const unsigned char *body;      /* hdr.body_len bytes */
        const unsigned char *payload;   /* hdr.payload_len bytes */
        uint64_t payload_len;
};

/*
 * Parse a record of rec_len bytes at rec: check the header (magic, kind,
 * op, flags, body length, inline payload length). For a CALL_F_SIDE
 * payload, *ret_side is set to true and the caller resolves it with
 * chan_side_ref() and sets ret->payload and payload_len; else
 * ret->payload points into rec. ret->hdr is a copy; body points into rec.
 * Returns 0 or -EBADMSG.
 */
int call_parse(const void *rec, size_t rec_len, struct call_in *ret, bool *ret_side);

/*
 * Resolve a range of in's payload that must hold count elements of size
 * elem (alignment min(elem, 8)). Returns 0 and *ret (NULL when empty), or
 * -EBADMSG for a range outside the payload, of another length, misaligned,
 * or whose size overflows.
 */
int call_in_range(const struct call_in *in, const struct call_range *r, uint64_t elem,
                  uint64_t count, const void **ret);

/* Same, for a range of any length up to max bytes. */
int call_in_bytes(const struct call_in *in, const struct call_range *r, uint64_t max,
                  const void **ret);

/*
 * Writing a payload: inline in a record buffer while it fits, else in the
 * side buffer (what was written so far moves there). Pointers from
 * call_out_ptr() are valid only until the next call_out_alloc().
 */
struct call_out {
        unsigned char *inl;     /* inline area: after header and body */
        uint64_t inl_cap;
        unsigned char *side;    /* NULL when there is no side buffer */
        uint64_t side_cap;
        unsigned char *base;    /* inl or side */
        uint64_t len;
        bool in_side;
};

void call_out_init(struct call_out *o, void *inl, uint64_t inl_cap, void *side, uint64_t side_cap);
/* Start in the side buffer at once when the payload will exceed the inline area. */
void call_out_expect(struct call_out *o, uint64_t total);
/* Reserve n bytes, 8-aligned; 0 and *ret_off, or -EMSGSIZE when nothing can hold them. */
int call_out_alloc(struct call_out *o, uint64_t n, uint64_t *ret_off);
void *call_out_ptr(const struct call_out *o, uint64_t off);
/* Reserve and copy n bytes; 0 and *ret, or -EMSGSIZE. */
int call_out_put(struct call_out *o, const void *p, uint64_t n, struct call_range *ret);
/*
 * Worst-case payload bytes for n bytes written in k pieces (each piece is
 * 8-aligned). Saturates at UINT64_MAX.
 */
uint64_t call_out_need(uint64_t n, uint64_t k);

/* Bytes of one value of type t on the wire; 0 for String and Binary (and invalid types). */
size_t call_elem_size(enum md_type t);
/* A block a step layout can hold (call_do_step.compact): fixed-size values, not too many. */
bool call_layout_block_fits(enum md_type t, uint64_t n_values);

/*
 * Check a String payload: exactly n NUL-terminated strings filling len
 * bytes, each at most max bytes long. On success *ret_longest holds the
 * longest. 0, -EBADMSG (malformed) or -EFBIG (one is longer than max; the
 * index of the first in *ret_index).
 */
int call_check_strings(const void *data, uint64_t len, uint64_t n, uint64_t max,
                       uint64_t *ret_index);

/* Sum of n u64 sizes; -EOVERFLOW when it overflows. */
int call_sum_sizes(const uint64_t *sizes, uint64_t n, uint64_t *ret_sum);

/* The -errno the daemon API returns for a refusal; -EPROTO for an unknown code. */
int call_error_errno(int32_t error);

/* Names for messages: "DO_STEP", "Step Mode". */
const char *call_op_name(enum call_op op);
const char *call_state_name(enum call_state s);
/*
 * The FMI function op calls, without its "fmi2"/"fmi3" prefix, as FMI
 * version fmi spells it ("DoStep", "GetFMUstate" in 2.0); NULL for the
 * typed GET and SET and for ops that are no FMI call.
 */
const char *call_fmi_function(enum call_op op, int fmi);

/* Body bytes of a request and of a reply result (after struct call_reply) for op. */
size_t call_request_body(enum call_op op);
size_t call_result_body(enum call_op op);

#endif
