/*
 * call: the binary messages that carry FMI calls between the daemon and one
 * fmud-worker over their channel (shm/channel.h).
 *
 * DESIGN
 * - One ring record is one message: a struct call_hdr, an op-specific body
 *   (a fixed struct of call_ops.h, body_len bytes) and a payload. Requests go
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
#define CALL_VERSION    7u

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
        CALL_OP_EXIT_INIT,              /* - -> call_exit_init */
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
        CALL_EV_MLOCK,                  /* struct call_mlock: the memory lock, when asked */
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

/* The body of each op: events, requests and results (struct call_hello ... call_status_query). */
#include "worker/call_ops.h"

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
 * elem (alignment min(elem, 8)). Returns 0 and *ret (when empty, a valid
 * pointer to nothing, never NULL: it may be handed to an FMU), or
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
