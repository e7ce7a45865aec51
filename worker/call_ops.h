/*
 * call_ops: the body of each message of the call protocol (worker/call.h),
 * by op: the events' and the requests' and their results'.
 *
 * DESIGN: worker/call.h is the one header of the protocol, for the worker
 * and the daemon alike; it includes this one where the bodies belong, after
 * the header, the reply and struct call_range, and nothing else includes it.
 * These layouts are ABI like the rest: bump CALL_VERSION when one changes,
 * and keep every body within CALL_BODY_MAX.
 */
#ifndef FMUD_WORKER_CALL_OPS_H
#define FMUD_WORKER_CALL_OPS_H

#ifndef FMUD_WORKER_CALL_H
#error "include worker/call.h, not worker/call_ops.h"
#endif

#include <assert.h>
#include <stdint.h>

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

/*
 * The worker's memory lock (mlockall, worker/mlock.c), sent once before
 * HELLO, after the sandbox report, when the daemon asked for it
 * (fmud-worker --mlock).
 */
struct call_mlock {
        int32_t error;          /* 0: locked; else -errno of mlockall (ENOMEM, EPERM, ...) */
        uint32_t reserved;      /* 0 */
};
static_assert(sizeof(struct call_mlock) == 8, "call_mlock is shared ABI");

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
        uint8_t quiet_ok;               /* messages of status OK are not forwarded */
        uint8_t reserved[1];
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
        double grid_step;       /* the importer's grid step (instance.h, inst_experiment) */
};
static_assert(sizeof(struct call_experiment) == 40, "call_experiment is shared ABI");

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

/*
 * The result of EXIT_INIT: a Model Exchange FMU hosted as Co-Simulation
 * asked to terminate in its first Event Mode (worker/me.c); 0 otherwise.
 */
struct call_exit_init {
        uint8_t terminate_simulation;
        uint8_t reserved[7];
};
static_assert(sizeof(struct call_exit_init) == 8, "call_exit_init is shared ABI");

/* One typed get or set: the request of GET and SET, the result of GET. */
struct call_values {
        uint32_t type;          /* enum md_type of the FMI function */
        uint32_t n_vrs;
        uint64_t n_values;      /* nValues */
        struct call_range vrs;  /* u32[n_vrs] */
        struct call_range data; /* the values (see call.h's file header); empty in a GET request */
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
        /* A Model Exchange FMU's integrator (worker/me.h), counts so far; 0 for Co-Simulation. */
        uint64_t me_steps, me_rhs_evals, me_root_evals, me_jac_evals;
        uint32_t me_events, me_event_iterations;
};
static_assert(sizeof(struct call_step_result) == 88, "call_step_result is shared ABI");

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

#endif
