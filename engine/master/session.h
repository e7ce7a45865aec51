/*
 * session: a loaded scenario brought to life. One fmud-worker per
 * component (engine/instance/instance.h), each FMU instantiated for Co-Simulation
 * and taken through Initialization Mode together with the others, so that
 * the master (master.h) finds every instance in Step Mode at the start
 * time with consistent inputs and outputs (one with output Clocks still
 * in the Event Mode after initialization, session_in_init_event(), whose
 * iteration the master makes).
 *
 * DESIGN: session_new() does, in this order (FMI 3.0 sections 2.3.2 to
 * 2.3.5; FMI 2.0 section 4.2.4 for FMI 2.0 components):
 *   1. spawn a worker per component and instantiate it: eventModeUsed
 *      when the FMU has Event Mode, earlyReturnAllowed when it might
 *      return early, an intermediate update callback and the
 *      requiredIntermediateVariables when it provides intermediate
 *      update and has connected intermediate inputs (or recorded
 *      intermediate outputs, when asked);
 *   2. set the scenario's start values and parameter bindings (structural
 *      parameters in Configuration Mode), in the Instantiated state;
 *   3. FMI 2.0: fmi2SetupExperiment; then enter Initialization Mode at
 *      the experiment's start time, with its stop time;
 *   4. resolve connected inputs and calculatedParameter -> parameter
 *      bindings in Initialization Mode (init.h): topological order of the
 *      variable dependency graph, loops iterated to a fixed point;
 *   5. exit Initialization Mode; FMUs that use Event Mode are then in
 *      Event Mode: fmi3UpdateDiscreteStates until no more updates, then
 *      fmi3EnterStepMode.
 * Any failure names the component, the FMI call and the reason, and
 * nothing is left behind (every worker reaped).
 *
 * An input with no connection, no start value in the scenario and no
 * start attribute in its FMU holds admission: session_new() fails and
 * names it. Nothing is silently zero.
 *
 * Ownership: the session borrows the scenario (it must outlive the
 * session) and owns the instances.
 *
 * Threads: one thread at a time uses a session and its instances (the
 * master's thread once it runs). Log and intermediate update callbacks
 * run on that thread, inside the instance call that received them.
 */
#ifndef FMUD_ENGINE_SESSION_H
#define FMUD_ENGINE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/instance/instance.h"
#include "engine/scenario/scenario.h"

struct session;
struct input_table;

/* A message an instance's FMU logged; strings are valid during the call. */
typedef void session_log_fn(void *ctx, size_t comp, const char *comp_name, int status,
                            const char *category, const char *message);

/*
 * A worker's life, for the log: started (its pid and sandbox report, the
 * layers its mode wanted that are missing counted in n_missing), or ended
 * (reaped: wstatus in waitpid() form; fault: how the instance failed, ""
 * when it did not). Strings are valid during the call.
 */
enum session_worker_event { SESSION_WORKER_STARTED, SESSION_WORKER_ENDED };
struct session_worker_info {
        enum session_worker_event ev;
        size_t comp;
        const char *name;
        pid_t pid;
        int wstatus;                    /* ENDED */
        const char *fault;              /* ENDED */
        const struct inst_layer *layers;        /* STARTED: SANDBOX_LAYER_COUNT; else NULL */
};
typedef void session_worker_fn(void *ctx, const struct session_worker_info *w);

/*
 * An intermediate update of component comp (FMI 3.0 section 4.2.2), with
 * the arguments of inst_iu_fn. The master installs one (session_set_iu()).
 */
typedef void session_iu_fn(void *ctx, size_t comp, struct inst *inst, const struct inst_iu *iu,
                           bool *ret_early_return, double *ret_time);

struct session_opts {
        const char *worker_path;        /* the fmud-worker binary; required */
        uint64_t timeout_ns;            /* deadline of each FMI call; 0: INST_TIMEOUT_DEFAULT */
        uint64_t start_timeout_ns;      /* until a worker is ready; 0: INST_TIMEOUT_DEFAULT */
        struct wait_policy wait;        /* how to wait for replies */
        char *const *envp;              /* the workers' environment; NULL: empty */
        session_log_fn *log;            /* FMU log messages; NULL: dropped */
        void *log_ctx;
        session_worker_fn *worker;      /* workers started and reaped; NULL: not told */
        void *worker_ctx;
        /* loggingOn at instantiation (default true, narrowed to the status categories) */
        bool logging_on;
        bool no_event_mode;             /* never set eventModeUsed */
        bool no_early_return;           /* never set earlyReturnAllowed */
        /* An intermediate update callback for every FMU that provides intermediate update. */
        bool iu_always;
        /* Also ask for recorded intermediate outputs (master rows flagged intermediate). */
        bool record_intermediate;
        uint32_t init_max_iterations;   /* initialization loops; 0: 100 */
        double init_tolerance;          /* relative change that settles a loop; 0: 1e-10 */
        struct sandbox_opts sandbox;    /* every instance's worker sandbox; zero: off */
        bool mlock;                     /* every worker locks its memory (inst_opts.mlock) */
        uint64_t mlock_limit;           /* each at most this much (inst_opts.mlock_limit) */
        /*
         * Unconnected inputs driven from a file (input_table.h; NULL: none):
         * they count as having a value, and are set in Initialization Mode
         * at the start time. Borrowed; must outlive the session.
         */
        const struct input_table *inputs;
        const atomic_bool *cancel;              /* every instance's inst_opts.cancel */
};

/* Defaults: zero timeouts (= INST_TIMEOUT_DEFAULT), WAIT_ADAPTIVE, no log. */
void session_opts_default(struct session_opts *o);

/*
 * Bring scenario sc to life (see DESIGN above). Returns 0 and *ret, or
 * -errno: -EINVAL (options, an input without a value, an unsupported
 * connection), -ELOOP (an initialization loop that does not settle), the
 * error of the instance call that failed (-ESRCH, -ETIMEDOUT, ... or -EIO
 * for an FMI Error or Fatal status), -ENOMEM. *ret_message, when
 * ret_message is not NULL, receives the reason on failure (caller frees).
 * Call from one thread; it blocks until every instance is initialized.
 */
int session_new(const struct scenario *sc, const struct session_opts *opts,
                struct session **ret, char **ret_message);

/*
 * Terminate every instance that may be terminated (not after Error or
 * Fatal, not after a fault), free the instances and reap every worker.
 * NULL is a no-op.
 */
void session_free(struct session *s);

const struct scenario *session_scenario(const struct session *s);
size_t session_count(const struct session *s);
/* The instance of component comp; borrowed, valid until session_free(). */
struct inst *session_inst(const struct session *s, size_t comp);
const char *session_name(const struct session *s, size_t comp);
bool session_event_mode_used(const struct session *s, size_t comp);
bool session_early_return_allowed(const struct session *s, size_t comp);
/* Whether comp has an intermediate update callback, and its required variables. */
bool session_iu_enabled(const struct session *s, size_t comp);
size_t session_required(const struct session *s, size_t comp, const uint32_t **ret_vrs);
/* fmi3UpdateDiscreteStates' nextEventTime after initialization; INFINITY when undefined. */
double session_next_event_time(const struct session *s, size_t comp);
/*
 * Whether comp is still in the Event Mode fmi3ExitInitializationMode left
 * it in, its event iteration left to the master: an FMU with output
 * Clocks, which may tick there (FMI 3.0 section 2.3.3), whose ticks and
 * clocked outputs only the master can route. session_init_event_done()
 * once the master has iterated it and entered Step Mode.
 */
bool session_in_init_event(const struct session *s, size_t comp);
void session_init_event_done(struct session *s, size_t comp);
/*
 * Whether an instance asked to terminate the simulation during
 * initialization (its event iteration, where the session made it; the
 * master's is the master's, mevent_start()); *ret_comp is the first one.
 */
bool session_terminate_requested(const struct session *s, size_t *ret_comp);

/*
 * The event iteration of component comp, which is in Event Mode at t
 * (FMI 3.0 section 2.3.5): fmi3UpdateDiscreteStates until
 * discreteStatesNeedUpdate is false (at most max_iterations times; 0:
 * 1000); Event Mode is kept. Where an update asks for another, a new
 * super-dense time instant starts: between(ctx), when given, runs before
 * that next update (what ticks in it is read there), and its result < 0
 * ends the iteration with it. *ret_terminate: an update asked to
 * terminate the simulation; *ret_next_event: its nextEventTime, INFINITY
 * when undefined (or +inf); one that is NaN or before t is the FMU's
 * fault (-EPROTO). Returns 0 or -errno, with session_message() saying
 * which call failed and why.
 */
int session_event_update(struct session *s, size_t comp, double t, uint32_t max_iterations,
                         int (*between)(void *ctx), void *ctx, bool *ret_terminate,
                         double *ret_next_event);
/* fmi3EnterStepMode, after the iteration. */
int session_enter_step_mode(struct session *s, size_t comp);

/* Why the last session call failed. Borrowed, valid until the next call. */
const char *session_message(const struct session *s);

/* Route intermediate updates of every instance to fn (NULL: answer nothing). */
void session_set_iu(struct session *s, session_iu_fn *fn, void *ctx);

/*
 * fmi3Terminate (fmi2Terminate) on every healthy, initialized instance
 * not terminated yet, in index order, each once (FMI 3.0 section 2.3.8:
 * its terminal computations; session_free() then only frees it). Returns
 * 0 (OK or Warning everywhere), or the first failure: its status
 * (INST_DISCARD or worse) or -errno, *ret_comp that instance, which is
 * marked failed. The others are terminated all the same.
 */
int session_terminate(struct session *s, size_t *ret_comp);

/*
 * Mark comp as not to be terminated by session_free() (after an FMI
 * Error or Fatal status, FMI 3.0 section 2.2.4). The master calls it.
 */
void session_mark_failed(struct session *s, size_t comp);

#endif
