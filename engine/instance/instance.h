/*
 * instance: one FMU instance living in its own fmud-worker process,
 * called from the daemon as if it were local.
 *
 * DESIGN: inst_new() creates the channel (shm/channel.h), starts the
 * worker by fork+exec with the channel as descriptor 3, every other
 * descriptor closed and a clean environment, and waits for its HELLO.
 * Each inst_* call then sends one request (worker/call.h) and waits for
 * its reply: one round trip, a DO_STEP included (inputs, step, outputs).
 * The worker enforces the FMI state machine and checks every value
 * reference, type and count against the model description; a refused
 * call never reached the FMU.
 *
 * Return values of every FMI call:
 *   >= 0           the FMU's status: INST_OK .. INST_FATAL (INST_PENDING:
 *                  an FMI 2.0 asynchronous step). Out-values are written
 *                  only for INST_OK and INST_WARNING.
 *   refusals       (the worker did not call the FMU; inst_message() says
 *                  why, naming the function, the variable and the state)
 *       -EPERM         the function is not allowed in the current state
 *       -EACCES        a variable cannot be set/read in the current state
 *       -ENOENT        unknown value reference
 *       -EPROTOTYPE    a variable's declared type is not the call's
 *       -E2BIG         more values than the variables have
 *       -ENODATA       fewer values than the variables have
 *       -EFBIG         a String or Binary longer than the instance's limit
 *       -EBADF         not a live FMU state handle
 *       -EOPNOTSUPP    the FMU does not declare the capability, or the
 *                      function is not in its FMI version
 *       -EINVAL        an invalid argument
 *       -ENOTRECOVERABLE  the FMU returned Fatal before
 *       -ENOSPC        too many live FMU states
 *   local errors   (nothing was sent)
 *       -EMSGSIZE      the request or its reply cannot fit the channel
 *       -EBUSY         a posted step awaits inst_wait_step()
 *       -EINVAL        a NULL or inconsistent argument
 *   faults         (sticky: every later call returns the same; only
 *                  inst_free() is left to do)
 *       -ETIMEDOUT     the worker did not answer within the deadline
 *                      ("did not answer fmi3DoStep within 2 s"); it is
 *                      killed at once (SIGKILL to its process group)
 *       -ESRCH         the worker died (inst_exit_status() says how; the
 *                      message names the signal, "killed by SIGSEGV
 *                      (segmentation fault, signal 11) during
 *                      fmi3DoStep", or the exit status, and what the
 *                      worker said last: faulting address, out of memory)
 *       -EPROTO        the worker broke the protocol; it is killed at once
 *
 * Strings and binaries a call returns are borrowed from the instance and
 * valid until its next call.
 *
 * Threads: an instance is used by one thread at a time. Callbacks run on
 * that thread, inside the call that received the event; they must not
 * free the instance or post a step on it (other instances are fine). The
 * time a callback takes is not counted against the worker's deadline.
 *
 * The worker is started with SIGKILL as its parent-death signal, which
 * Linux ties to the thread that forks: create instances on a thread that
 * outlives them.
 */
#ifndef FMUD_ENGINE_INSTANCE_H
#define FMUD_ENGINE_INSTANCE_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fmi/model_description.h"
#include "shm/wait.h"
#include "worker/sandbox.h"

#define INST_SIDE_DEFAULT       (16ull << 20)           /* side buffer bytes */
#define INST_TIMEOUT_DEFAULT    (10ull * 1000000000u)   /* per call */
/*
 * Every call from instantiation to the end of Initialization Mode, and
 * Terminate, at least: where a large model loads and solves its initial
 * equations, or flushes what it kept, which may take minutes (FMI sets no
 * limit on any call).
 */
#define INST_INIT_TIMEOUT_MIN   (600ull * 1000000000u)
/* A Terminate of an abandoned instance (inst_abandon()) at most: a shutdown's grace. */
#define INST_ABANDON_TERMINATE_NS (5ull * 1000000000u)
/* A deadline that never comes (146 years): a step without a step budget. */
#define INST_TIMEOUT_NONE       (1ull << 62)

enum inst_status {
        INST_OK,
        INST_WARNING,
        INST_DISCARD,
        INST_ERROR,
        INST_FATAL,
        INST_PENDING,
};

struct inst;

/* A message the FMU logged (status is its fmi3Status). Strings are valid during the call. */
typedef void inst_log_fn(void *ctx, struct inst *inst, int status, const char *category,
                         const char *message);

/* The arguments of fmi3IntermediateUpdateCallback (FMI 3.0 section 4.2.2). */
struct inst_iu {
        double time;
        bool set_requested;
        bool get_allowed;
        bool step_finished;
        bool can_return_early;
};

/*
 * An intermediate update during a step. The callback may call inst_get(),
 * inst_get_output_derivatives() and then inst_set() on the instance's
 * required intermediate variables, and sets *ret_early_return (preset
 * false) and *ret_time (preset iu->time) to ask for an early return.
 */
typedef void inst_iu_fn(void *ctx, struct inst *inst, const struct inst_iu *iu,
                        bool *ret_early_return, double *ret_time);

struct inst_opts {
        const char *worker_path;        /* the fmud-worker binary; required */
        const char *fmu_dir;            /* the unpacked FMU; required */
        const char *name;               /* for messages and the memfd; NULL: "fmud-instance" */
        uint64_t side_size;             /* side buffer bytes; 0: INST_SIDE_DEFAULT */
        uint32_t ring_slots;            /* 64-byte slots per ring, power of two; 0: 1024 */
        uint64_t timeout_ns;            /* default deadline of a call; 0: INST_TIMEOUT_DEFAULT */
        uint64_t start_timeout_ns;      /* until the worker's HELLO; 0: INST_TIMEOUT_DEFAULT */
        char *const *envp;              /* the worker's environment; NULL: empty */
        struct wait_policy wait;        /* how to wait for replies */
        inst_log_fn *log;
        void *log_ctx;
        inst_iu_fn *iu;
        void *iu_ctx;
        /*
         * The worker's sandbox (worker/sandbox.h); zero: off. Not off: the
         * instance gets a scratch directory (its TMPDIR and working
         * directory), removed by inst_free(), and the worker must report
         * its layers before HELLO.
         */
        struct sandbox_opts sandbox;
        /*
         * Lock the worker's memory (mlockall MCL_CURRENT | MCL_FUTURE,
         * worker/mlock.c) before its sandbox; the worker reports the
         * outcome before HELLO: inst_mlock().
         */
        bool mlock;
        /*
         * The most it may lock (RLIMIT_MEMLOCK, without CAP_IPC_LOCK: the
         * kernel enforces it); 0: its address-space limit (worker/mlock.c).
         */
        uint64_t mlock_limit;
        /*
         * The FMU is hosted through its ModelExchange interface (md_host_me()):
         * fmud-worker --interface me --integrator NAME ("bdf", "adams").
         */
        bool model_exchange;
        /* fmud-worker --interface se: the FMU's partitions activated (md_host_se()). */
        bool scheduled_execution;
        const char *integrator;         /* NULL: the worker's default (bdf) */
        /*
         * The caller's cancel flag (borrowed; NULL: none; set from a
         * signal handler or another thread). Once true, a call in flight
         * other than FreeInstance is no longer waited for (a Terminate
         * for INST_ABANDON_TERMINATE_NS from its start at most):
         * the worker is killed within a wait slice (20 ms) and the call
         * fails with -ECANCELED, as after inst_abandon(). An interrupted
         * run, or a daemon's shutdown, ends also where an FMU never returns.
         */
        const atomic_bool *cancel;
};

/* Defaults: WAIT_ADAPTIVE, no callbacks, zero sizes (= defaults). */
void inst_opts_default(struct inst_opts *o);

/*
 * Raise this process's soft RLIMIT_NOFILE to its hard limit (at most
 * 2^20): a worker holds about three of its starter's descriptors
 * (fd_limit.c). *ret_before, *ret_now (may be NULL): the soft limit
 * before and after. 0 or -errno.
 */
int inst_fd_limit_raise(uint64_t *ret_before, uint64_t *ret_now);
/* In a worker between fork and exec: the soft limit back as it was before the raise. */
void inst_fd_limit_child(void);

/*
 * Start a worker for opts->fmu_dir and wait for it to be ready. Returns 0
 * and *ret, or -errno: -EINVAL (options), the worker's own reason when it
 * cannot load the FMU (-EINVAL bad description, -ENOENT, -ENOEXEC, -ENOSYS
 * ...; see *ret_message), -ESRCH (it died), -ETIMEDOUT, -EPROTO, or the
 * -errno of memfd/fork/exec. On failure nothing is left behind. When
 * ret_message is non-NULL it receives the reason (caller frees; may stay
 * NULL). Free the instance with inst_free().
 */
int inst_new(const struct inst_opts *opts, struct inst **ret, char **ret_message);
/*
 * inst_new() in two halves, so that several workers start at once:
 * inst_spawn() starts the worker and returns without waiting for it
 * (failures as inst_new()'s, but for the worker's own); inst_ready() waits
 * for its HELLO and returns 0, or fails as inst_new() does and then has
 * freed inst; its start timeout (opts->start_timeout_ns) runs from the
 * call. Between the two only inst_ready() or inst_abort() may be called
 * on it: inst_abort() kills the worker, reaps it and frees inst.
 */
int inst_spawn(const struct inst_opts *opts, struct inst **ret, char **ret_message);
int inst_ready(struct inst *inst, char **ret_message);
void inst_abort(struct inst *inst);

/*
 * Free the FMU instance in the worker (unless the FMU returned Fatal),
 * wait for the worker to exit (SIGKILL when it does not, or after a
 * fault), reap it, unmap and close the channel, free inst. Returns 0 when
 * the worker exited cleanly, else its fault or -ECHILD. NULL is a no-op.
 */
int inst_free(struct inst *inst);
/* inst_free() that also gives the worker's wait status (ret_wstatus; -1 when never reaped). */
int inst_free_status(struct inst *inst, int *ret_wstatus);

/* ---- Instance properties ---------------------------------------------- */

pid_t inst_pid(const struct inst *inst);
int inst_fmi_version(const struct inst *inst);          /* 2 or 3 */
uint64_t inst_caps(const struct inst *inst);            /* CALL_CAP_* of worker/call.h */
/* Why the last call was refused or failed; "" when it was not. Borrowed. */
const char *inst_message(const struct inst *inst);
/* The worker's state after the last reply (enum call_state of worker/call.h). */
int inst_state(const struct inst *inst);
/* 0, or the sticky fault. */
int inst_fault(const struct inst *inst);
/* The worker's wait status (waitpid) once it has been reaped: 0 and *ret, else -EAGAIN. */
int inst_exit_status(const struct inst *inst, int *ret);
/* Log messages of the FMU the worker could not forward. */
uint64_t inst_logs_dropped(const struct inst *inst);
/*
 * Any thread: 0 while the worker is believed alive, else a fault: the
 * sticky one, or -ESRCH as soon as the supervisor (engine/instance/supervisor.h)
 * saw the worker exit, even when no call is in flight. The instance's
 * owner then gets -ESRCH from its next call (inst_message() says how it
 * died).
 */
int inst_health(const struct inst *inst);
/*
 * The FMU's last few (up to 4) log messages, oldest first, as one line
 * "[Error] logStatusError: text; [Warning] ...", each cut to 255 bytes;
 * a message that skip (when not NULL) already contains is left out.
 * Returns how many went into buf. Owner thread.
 */
size_t inst_recent_logs(const struct inst *inst, const char *skip, char *buf, size_t size);
/*
 * The worker's own measure of the FMU's doStep: steps answered and the
 * nanoseconds spent inside the FMU's doStep in them (CLOCK_MONOTONIC in
 * the worker, intermediate updates included). 0, or -EINVAL. Owner thread.
 */
int inst_service_stats(const struct inst *inst, uint64_t *ret_steps, uint64_t *ret_ns_total);
/* A Model Exchange FMU's integrator in the worker (worker/me.h): its counts so far. */
struct inst_me_stats {
        uint64_t steps, rhs_evals, root_evals, jac_evals;
        uint64_t events, event_iterations;      /* Event Modes after initialization; their iterations */
};
/* As the last step reported them (zero before, or for Co-Simulation). 0, or -EINVAL. */
int inst_me_stats(const struct inst *inst, struct inst_me_stats *ret);
/*
 * Hints the worker leaves, for placing it (any value is harmless, none is
 * trusted): the cpu it last replied from (-1: not known yet), and how long
 * the FMU's last doStep took in ns. Owner thread.
 */
int inst_worker_cpu(const struct inst *inst);
uint64_t inst_last_service_ns(const struct inst *inst);
/*
 * A step whose doStep takes at least this long is heavy: the master keeps
 * such workers on cpus of their own (master_spread.c) and chains only one
 * such step ahead (master_chain.c), and its caller waits for one longer
 * than its yield budget asleep when calls outnumber cpus (inst_call.c).
 */
#define INST_HEAVY_STEP_NS      20000ull
void inst_set_timeout(struct inst *inst, uint64_t ns);  /* default deadline of every call */
/* How the caller waits for replies from now on (inst_opts.wait at the start), and how it does. */
void inst_set_wait(struct inst *inst, const struct wait_policy *p);
const struct wait_policy *inst_wait(const struct inst *inst);
void inst_next_timeout(struct inst *inst, uint64_t ns); /* deadline of the next call only */
void inst_set_log(struct inst *inst, inst_log_fn *fn, void *ctx);

/* One sandbox layer as the worker reported it; detail says what it does or why it is missing. */
struct inst_layer {
        enum sandbox_layer_state state;
        const char *detail;
};
/*
 * The sandbox layers as the worker reported them before loading the FMU
 * (SANDBOX_LAYER_COUNT entries, by enum sandbox_layer); borrowed, valid
 * until inst_free(). A worker that reported nothing (sandbox off) has
 * every layer DISABLED.
 */
const struct inst_layer *inst_sandbox(const struct inst *inst);
/*
 * The worker's memory lock: 1 when it was not asked for (inst_opts.mlock),
 * 0 when the memory is locked, else the -errno the kernel refused it with.
 */
int inst_mlock(const struct inst *inst);
/* The instance's scratch directory (its TMPDIR); NULL when none. Borrowed. */
const char *inst_scratch_dir(const struct inst *inst);
void inst_set_iu(struct inst *inst, inst_iu_fn *fn, void *ctx);

/* ---- Life cycle --------------------------------------------------------- */

struct inst_instantiate {
        const char *name;               /* instanceName; NULL: the options' name */
        const char *token;              /* checked against the description's; NULL: use it */
        bool visible;
        bool logging_on;
        bool quiet_ok;                  /* the worker drops the FMU's messages of status OK */
        bool event_mode_used;           /* FMI 3.0 */
        bool early_return_allowed;      /* FMI 3.0 */
        const uint32_t *required;       /* requiredIntermediateVariables (FMI 3.0) */
        size_t n_required;
        uint64_t max_string;            /* bytes of one String value; 0: 1 MiB */
        uint64_t max_binary;            /* bytes of one Binary value; 0: 16 MiB */
};

struct inst_experiment {
        bool tolerance_defined;
        double tolerance;
        double start_time;
        bool stop_time_defined;
        double stop_time;
        /*
         * The importer's grid step h (0: none): it takes two times within
         * 1e-9 h as one point (engine/master/master.c, master_tol()), which
         * the worker of a Model Exchange FMU with Clocks must know to keep
         * the FMU's time at the master's (worker/me_events.c).
         */
        double grid_step;
};

/* Intermediate updates reach the callback set at instantiation (inst_set_iu()). */
int inst_instantiate(struct inst *inst, const struct inst_instantiate *args);
int inst_set_debug_logging(struct inst *inst, bool on, const char *const categories[], size_t n);
int inst_setup_experiment(struct inst *inst, const struct inst_experiment *e);  /* FMI 2.0 */
/* FMI 3.0: e, or NULL for no tolerance, start 0, no stop time. FMI 2.0: e must be NULL. */
int inst_enter_initialization_mode(struct inst *inst, const struct inst_experiment *e);
int inst_exit_initialization_mode(struct inst *inst);
/*
 * The same; *ret_terminate: a Model Exchange FMU hosted in the worker
 * asked to terminate in its first Event Mode, right after (its doStep
 * then only says so again). Always false for Co-Simulation.
 */
int inst_exit_initialization(struct inst *inst, bool *ret_terminate);
int inst_enter_configuration_mode(struct inst *inst);
int inst_exit_configuration_mode(struct inst *inst);
int inst_enter_event_mode(struct inst *inst);
int inst_enter_step_mode(struct inst *inst);
int inst_evaluate_discrete_states(struct inst *inst);

struct inst_discrete {
        bool discrete_states_need_update;
        bool terminate_simulation;
        bool nominals_changed;
        bool values_changed;
        bool next_event_time_defined;
        double next_event_time;
};

int inst_update_discrete_states(struct inst *inst, struct inst_discrete *ret);
int inst_terminate(struct inst *inst);

/*
 * Before the last calls of an instance that is going away: a worker that
 * is stopped (SIGSTOP, a tracer) cannot answer them, so it is killed and
 * reaped at once rather than waited for until a call's deadline. Returns
 * the sticky fault set (-ECANCELED), or 0 when the worker was not stopped.
 * inst_free() does it too.
 */
int inst_kill_stopped(struct inst *inst);

/*
 * Any thread: the instance's session is going away (unload). A step in
 * flight, or posted later, is no longer waited for until its deadline:
 * the waiting thread kills the worker within a wait slice (20 ms) and the
 * step fails with -ECANCELED. A Terminate (whose deadline is as long as
 * initialization's) is waited for INST_ABANDON_TERMINATE_NS from its
 * start at most, then cut the same way; FreeInstance is made and waited
 * for as usual. why (a string that outlives the instance; NULL: "the
 * session was abandoned") ends the call's message.
 */
void inst_abandon(struct inst *inst, const char *why);
int inst_reset(struct inst *inst);

/* ---- Values --------------------------------------------------------------- */

/*
 * Get or set values with the FMI function of 'type' (fmi3Get<type>, or
 * fmi2GetReal/Integer/Boolean/String for MD_FLOAT64/MD_INT32/MD_BOOLEAN/
 * MD_STRING). values is an array of nvalues elements of the C type:
 * float, double, int8_t .. uint64_t, bool (MD_BOOLEAN, MD_CLOCK),
 * const char * (MD_STRING: borrowed on get). Enumeration variables use
 * MD_INT64 (FMI 3.0) or MD_INT32 (FMI 2.0). Binary: inst_get_binary().
 */
int inst_get(struct inst *inst, enum md_type type, const uint32_t vrs[], size_t nvr,
             void *values, size_t nvalues);
int inst_set(struct inst *inst, enum md_type type, const uint32_t vrs[], size_t nvr,
             const void *values, size_t nvalues);
int inst_get_binary(struct inst *inst, const uint32_t vrs[], size_t nvr, size_t sizes[],
                    const uint8_t *values[], size_t nvalues);
int inst_set_binary(struct inst *inst, const uint32_t vrs[], size_t nvr, const size_t sizes[],
                    const uint8_t *const values[], size_t nvalues);

/* Clock timing (FMI 3.0 section 2.2.8.4); qualifiers are fmi3IntervalQualifier. */
int inst_get_interval_decimal(struct inst *inst, const uint32_t vrs[], size_t n,
                              double intervals[], int qualifiers[]);
int inst_get_interval_fraction(struct inst *inst, const uint32_t vrs[], size_t n,
                               uint64_t counters[], uint64_t resolutions[], int qualifiers[]);
int inst_get_shift_decimal(struct inst *inst, const uint32_t vrs[], size_t n, double shifts[]);
int inst_get_shift_fraction(struct inst *inst, const uint32_t vrs[], size_t n,
                            uint64_t counters[], uint64_t resolutions[]);
int inst_set_interval_decimal(struct inst *inst, const uint32_t vrs[], size_t n,
                              const double intervals[]);
int inst_set_interval_fraction(struct inst *inst, const uint32_t vrs[], size_t n,
                               const uint64_t counters[], const uint64_t resolutions[]);
int inst_set_shift_decimal(struct inst *inst, const uint32_t vrs[], size_t n, const double shifts[]);
int inst_set_shift_fraction(struct inst *inst, const uint32_t vrs[], size_t n,
                            const uint64_t counters[], const uint64_t resolutions[]);

/* ---- Stepping -------------------------------------------------------------- */

/* Values to set before the step, as for inst_set(); sizes for Binary. */
struct inst_in {
        enum md_type type;
        const uint32_t *vrs;
        size_t nvr;
        const void *values;
        const size_t *sizes;
        size_t nvalues;
};

/* Values to get after the step, as for inst_get(); Binary: values is const uint8_t *[]. */
struct inst_out {
        enum md_type type;
        const uint32_t *vrs;
        size_t nvr;
        void *values;
        size_t *sizes;
        size_t nvalues;
};

/*
 * Steps in flight on one instance: a step and what is chained behind it
 * (single steps or repeats, struct inst_step.repeat, of up to
 * INST_REPEAT_MAX steps), INST_CHAIN_MAX in all.
 */
#define INST_REPEAT_MAX 16
#define INST_CHAIN_MAX  (1 + INST_REPEAT_MAX)

struct inst_step {
        double t;                       /* currentCommunicationPoint */
        double h;                       /* communicationStepSize */
        bool no_set_prior;              /* noSetFMUStatePriorToCurrentPoint */
        /*
         * Post behind the step in flight, before its reply is read. The
         * worker runs it only if that step completes plainly (status OK or
         * Warning, all outputs got, no event, no terminate, no early
         * return, lastSuccessfulTime the end of the step); otherwise the
         * FMU is not called and inst_wait_step() returns -ECANCELED for it.
         * So a caller may post the next step of a run it will make anyway
         * when the current one is plain, and the worker starts it without
         * waiting for the round trip. Behind exactly one step, its
         * deadline counts from its post, while the step before it may still
         * run: give it that one's time too; behind more, from when its
         * collection starts. Refused (-EAGAIN, nothing sent) with no step
         * in flight, with more than INST_CHAIN_MAX steps in flight after
         * it, with an intermediate update callback, or when the request or
         * its reply would not fit the ring (the side buffer has one owner
         * at a time).
         */
        bool chained;
        const struct inst_in *inputs;
        size_t n_inputs;
        const struct inst_out *outputs;
        size_t n_outputs;
        uint64_t timeout_ns;            /* 0: the instance's */
        /*
         * With chained: 2..INST_REPEAT_MAX steps in one request, step i
         * from times[i] to times[i + 1] (t and h unused), the same inputs
         * and outputs, each chained behind the one before and collected by
         * its own inst_wait_step(). Step i's deadline is timeout_ns from
         * when its collection starts: the worker ran the ones before it
         * until then. 0 or 1: one step.
         */
        uint32_t repeat;
        const double *times;
        /*
         * The caller's CLOCK_MONOTONIC reading, in ns, that the deadline
         * counts from (a master posting many steps at one point reads the
         * clock once); 0: read it at the post.
         */
        uint64_t now_ns;
};

/* How far a step got (struct inst_step_result.phase). */
enum inst_phase {
        INST_PHASE_INPUTS,              /* setting input block 'block' did not succeed */
        INST_PHASE_STEP,                /* the doStep did not succeed */
        INST_PHASE_OUTPUTS,             /* getting output block 'block' did not succeed */
        INST_PHASE_DONE,
};

struct inst_step_result {
        bool event_handling_needed;
        bool terminate_simulation;
        bool early_return;
        double last_successful_time;
        enum inst_phase phase;
        size_t block;
        uint64_t service_ns;            /* time the worker measured inside the FMU's doStep */
};

/*
 * Set the inputs, do the step, get the outputs: one round trip. Returns
 * the worst status met (or a refusal, local error or fault); *ret is
 * written whenever the worker answered, the outputs only when phase is
 * INST_PHASE_DONE.
 */
int inst_do_step(struct inst *inst, const struct inst_step *step, struct inst_step_result *ret);
/*
 * The same in two halves, so a master can start many instances' steps and
 * then collect them: inst_post_step() sends (step and the arrays it points
 * to must stay valid until inst_wait_step() returns); inst_wait_step()
 * waits, runs the callbacks, and fills the outputs. With a chained step
 * posted too, inst_wait_step() collects the oldest first.
 */
int inst_post_step(struct inst *inst, const struct inst_step *step);
int inst_wait_step(struct inst *inst, struct inst_step_result *ret);
/*
 * Announce that this thread is about to post n steps before it waits for
 * any: they count as running from now on, so the workers posted first do
 * not spin for a cpu that the ones posted after them need. The next n
 * inst_post_step() calls of this thread take the announced places;
 * inst_post_batch_end(), after the last post, gives back those not taken.
 * Optional; any thread, each pair on one thread.
 */
void inst_post_batch(size_t n);
void inst_post_batch_end(void);
/*
 * Count (delta +1) or stop counting (-1) a waiter outside the instances
 * that polls for a cpu beside them, such as an attached rig yielding in
 * rig_wait(), in the spin hint this process's calls give their workers:
 * a worker then does not spin for its next request on a cpu that waiter
 * needs. Any thread; each +1 has its -1.
 */
void inst_count_waiter(int delta);
int inst_cancel_step(struct inst *inst);                                        /* FMI 2.0 */

/* fmi2Get*Status; kind is an fmi2StatusKind. */
int inst_get_status(struct inst *inst, int kind, int *ret);
int inst_get_real_status(struct inst *inst, int kind, double *ret);
int inst_get_integer_status(struct inst *inst, int kind, int32_t *ret);
int inst_get_boolean_status(struct inst *inst, int kind, bool *ret);
int inst_get_string_status(struct inst *inst, int kind, const char **ret);

/* ---- Derivatives ------------------------------------------------------------- */

int inst_get_output_derivatives(struct inst *inst, const uint32_t vrs[], size_t nvr,
                                const int32_t orders[], double values[], size_t nvalues);
int inst_set_input_derivatives(struct inst *inst, const uint32_t vrs[], size_t nvr,
                               const int32_t orders[], const double values[], size_t nvalues);
int inst_get_directional_derivative(struct inst *inst, const uint32_t unknowns[], size_t n_unknowns,
                                    const uint32_t knowns[], size_t n_knowns, const double seed[],
                                    size_t n_seed, double sensitivity[], size_t n_sensitivity);
int inst_get_adjoint_derivative(struct inst *inst, const uint32_t unknowns[], size_t n_unknowns,
                                const uint32_t knowns[], size_t n_knowns, const double seed[],
                                size_t n_seed, double sensitivity[], size_t n_sensitivity);
int inst_get_number_of_variable_dependencies(struct inst *inst, uint32_t vr, size_t *ret);
/* kinds are fmi3DependencyKind values. */
int inst_get_variable_dependencies(struct inst *inst, uint32_t vr, size_t elem_dependent[],
                                   uint32_t independents[], size_t elem_independents[],
                                   int kinds[], size_t n);

/* ---- FMU states ---------------------------------------------------------------- */

/*
 * The worker owns FMU states; a handle names one. inst_get_fmu_state()
 * saves into *handle: 0 takes a new state, a live handle is overwritten
 * (the standard's reuse). Freeing the instance frees every state.
 */
int inst_get_fmu_state(struct inst *inst, uint64_t *handle);
int inst_set_fmu_state(struct inst *inst, uint64_t handle);
int inst_free_fmu_state(struct inst *inst, uint64_t *handle);  /* sets *handle to 0 */
int inst_serialized_fmu_state_size(struct inst *inst, uint64_t handle, size_t *ret);
/* size must be the serialized size; the bytes are the worker's format (see worker/states.c). */
int inst_serialize_fmu_state(struct inst *inst, uint64_t handle, uint8_t buf[], size_t size);
int inst_deserialize_fmu_state(struct inst *inst, const uint8_t buf[], size_t size,
                               uint64_t *ret_handle);

/*
 * Whom a sandboxed worker of a root daemon becomes: o->uid/gid, else the
 * user "fmud", else "nobody". 0/0 when the daemon is not root. 0 or -errno.
 */
int sandbox_user(const struct sandbox_opts *o, uid_t *ret_uid, gid_t *ret_gid);

#endif
