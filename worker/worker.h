/*
 * worker: the state of one fmud-worker process (one FMU instance) and the
 * functions its parts share. Private to worker/.
 *
 * DESIGN: a worker is single-threaded. The main thread waits for a
 * request, checks it against the FMI state machine (fsm.c) and the model
 * description (vars.c, access.c), calls the FMU, and replies; the only
 * re-entry is the FMU calling back: the logger (log.c), which only
 * queues an event, the intermediate update callback (step.c), which
 * serves nested get/set requests until the daemon answers, and a
 * Scheduled Execution FMU's callbacks (se.c), which count preemption
 * locks and read its output Clocks. Each nesting level has its own
 * request and reply buffers.
 *
 * Ownership: struct worker owns the channel, the description, the loaded
 * library, the FMU instance and every FMU state it hands out by handle.
 */
#ifndef FMUD_WORKER_WORKER_H
#define FMUD_WORKER_WORKER_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "fmi/fmi2FunctionTypes.h"
#include "fmi/fmi3FunctionTypes.h"
#include "fmi/loader.h"
#include "fmi/model_description.h"
#include "shm/channel.h"
#include "worker/call.h"

#define WORKER_DEPTHS   2       /* a request, and one nested in an intermediate update */
#define VRS_MEMO_MAX    64      /* longest value reference list vars_check() remembers */

/*
 * The last value reference list vars_check() passed for one direction (get
 * or set): a master sends the same lists with every step, and a list that
 * passed once passes again while nothing its checks read has changed.
 */
struct vrs_memo {
        bool valid;
        enum md_type type;
        enum call_state state;  /* the access rules depend on it */
        uint32_t n;
        uint32_t vrs[VRS_MEMO_MAX];
};

/* A private, growable byte buffer. */
struct wbuf {
        unsigned char *p;
        size_t cap;
};

/* Make b hold at least n bytes (contents kept). 0 or -ENOMEM. */
int wbuf_reserve(struct wbuf *b, size_t n);
void wbuf_fini(struct wbuf *b);

/* One FMU state handed out to the daemon. */
struct fmu_slot {
        void *state;            /* fmi3FMUState / fmi2FMUstate; NULL: free slot */
        uint32_t gen;           /* bumped when freed: stale handles do not match */
        enum call_state mode;   /* the worker's state when it was taken */
        uint64_t *sp;           /* structural parameter values then (n_sp) */
};

struct worker {
        /* The channel. */
        struct chan *chan;
        struct ring *tx, *rx;
        unsigned char *side;
        uint64_t side_size;
        uint32_t max_record;
        struct wait_policy wait;
        struct timespec idle_deadline;  /* next check that the daemon lives; 0: none yet */
        pid_t ppid;             /* the daemon; the worker exits when it goes */
        pthread_t main_thread;

        /* The FMU. */
        char *dir;              /* absolute path of the unpacked FMU */
        struct md *md;
        struct fmu_lib *lib;
        enum md_fmi_version fmi;
        void *inst;             /* fmi3Instance / fmi2Component, NULL before instantiation */
        fmi2CallbackFunctions *cb2;     /* must outlive the FMI 2.0 instance */

        /* The state machine and what the rules depend on. */
        enum call_state state;
        bool event_mode_used;
        bool early_return_allowed;
        bool set_since_step;    /* Step Mode: a set since the last doStep (4.2.1) */
        /* FMI 2.0: this doStep's Discard was a request to stop, replied OK (step.c) */
        bool discard_terminated;
        bool plain;             /* the last request was a DO_STEP that completed plainly */
        uint64_t step_ns;       /* the last DO_STEP's service time, UINT64_MAX: none */
        /*
         * The reply to send may hold the reply ring's tail (serve.c): another
         * chained step of the same request follows at once.
         */
        bool hold_reply;
        bool iu_enabled;        /* the daemon answers intermediate updates */
        bool iu_set_requested, iu_get_allowed, iu_did_set, iu_failed;
        bool iu_can_return_early;
        double step_t, step_h;  /* the doStep in progress */
        uint32_t *required;     /* requiredIntermediateVariables, sorted */
        size_t n_required;
        uint64_t max_string, max_binary;
        uint64_t *sp;           /* by variable index: current structural parameter values */
        size_t n_sp;            /* structural UInt64 parameters */
        size_t *sp_index;       /* their variable indices */
        uint32_t *stamp;        /* by variable index: duplicate detection in one set */
        uint32_t stamp_gen;
        uint32_t *vr_table;     /* [slot * vr_span + vr]: variable index + 1, 0: none; NULL: search */
        uint32_t vr_span;       /* the largest value reference + 1 */
        struct clocks *clk;     /* which Clocks are active (clocks.c); NULL: no Clocks */
        struct me *me;          /* the integrator of a Model Exchange FMU (me.h); NULL: CS */
        struct se *se;          /* the scheduler of a Scheduled Execution FMU (se.h); NULL: CS */
        struct vrs_memo memo[2];        /* [set]: see struct vrs_memo */

        /* Messages, by nesting depth. */
        struct wbuf req[WORKER_DEPTHS];
        struct wbuf scratch[WORKER_DEPTHS];
        struct wbuf tmp;        /* FMI-typed temporaries of one call */
        struct wbuf tmp2;       /* DO_STEP: output descriptors */
        struct wbuf tmp_me;     /* a Model Exchange FMU's inputs left out or answered (values.c) */
        struct wbuf blocks;     /* DO_STEP: checked input and output blocks */
        struct step_layout *layout;     /* the kept step layout (layout.c); NULL: none yet */
        unsigned depth;
        uint64_t seq;           /* of the request being served */
        bool in_call;           /* inside our fmi3DoStep: an intermediate update may come */
        /*
         * The FMU has our intermediate update callback, which any of its
         * threads may call: in_call is changed, and an update served, under
         * iu_lock (step.c), and the channel is the updating thread's then.
         */
        bool iu_on;
        pthread_mutex_t iu_lock;
        bool stepping;          /* inside our fmi3DoStep; the worker's thread alone writes it */

        /* Logging, per request. */
        uint32_t logs_sent, logs_dropped;
        uint32_t out_sent;              /* output.c's lines this call (a budget of their own) */
        uint32_t out_dropped;           /* and those past it, said by a line of their own */
        bool quiet_ok;          /* call_instantiate.quiet_ok: OK messages are dropped */
        char last_error[CALL_MSG_MAX + 1];      /* last Error/Fatal message of this call */

        /* FMU states. */
        struct fmu_slot *slots;
        size_t n_slots;

        bool quit;
};

/* A reply under construction. */
struct reply {
        enum call_op op;
        struct call_reply head;
        unsigned char result[CALL_BODY_MAX];    /* the op's result struct */
        size_t result_len;
        struct call_out out;
        char msg[CALL_MSG_MAX + 1];
        size_t msg_len;
};

typedef void handler_fn(struct worker *w, const struct call_in *in, struct reply *rp);

/* worker.c */
/*
 * Attach the channel on fd, load the FMU in dir and say HELLO (or why
 * not). 0 and *ret; else -errno, reported in HELLO when the channel works.
 * On success the worker owns fd.
 */
int worker_open(int fd, const char *dir, struct worker **ret);
/* Free the FMU instance if still there (unless Fatal), unload, unmap. NULL is a no-op. */
void worker_close(struct worker *w);
/* Serve requests until FREE or the daemon goes away. Returns the exit code. */
int worker_run(struct worker *w);

/* serve.c */
/* Serve one request at w->depth; false when the worker must stop. */
bool serve_one(struct worker *w, enum call_op *ret_op);
/* Wait for the next request and copy it into w->req[w->depth]; < 0: stop. */
int recv_request(struct worker *w, struct call_in *in);
/* Check, run and answer one request. */
void dispatch(struct worker *w, const struct call_in *in);
void reply_refuse(struct reply *rp, enum call_error e, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* Record an FMU status; keeps the worst. */
void reply_status(struct reply *rp, int status);
/* Send an event record (header + body + inline payload already built). */
int send_event(struct worker *w, enum call_op op, const void *body, size_t body_len,
               const void *payload, size_t payload_len, bool may_drop);
/* Block until tx can take len bytes; false when the daemon went away. */
bool wait_writable(struct worker *w);

/* fsm.c */
/* Refuse op in the current state (CALL_E_STATE / NOTSUP / FATAL); true when allowed. */
bool fsm_allows(struct worker *w, enum call_op op, enum md_type type, struct reply *rp);
/* Apply the transition of op after the FMU returned status. */
void fsm_after(struct worker *w, enum call_op op, int status);
/* "fmi3GetFloat64", "fmi2DoStep", ...; a static string, valid for the process's life. */
const char *fsm_fmi_name(const struct worker *w, enum call_op op, enum md_type type);
bool fsm_settable(enum call_state s);

/* access.c */
/* Why v cannot be set / read now (completes "variable 'x' ..."), or NULL. */
const char *access_set_refusal(const struct worker *w, const struct md_variable *v);
const char *access_get_refusal(const struct worker *w, const struct md_variable *v);

/* clocks.c: Clock activation (FMI 3.0 sections 2.2.7.2, 2.2.8.3, 2.3.5) */
/* Track the Clocks of an FMI 3.0 model that has any (else w->clk stays NULL). 0 or -ENOMEM. */
int clocks_init(struct worker *w);
void clocks_fini(struct worker *w);
/* In Event Mode: why clocked v cannot be accessed (none of its Clocks active), or NULL. */
const char *clocks_access_refusal(const struct worker *w, const struct md_variable *v);
struct vblock;
/* Before an fmi3SetClock: refuse reactivating a periodic Clock (section 2.3.5). */
bool clocks_set_ok(struct worker *w, const struct vblock *b, const char *fn, struct reply *rp);
/* After a successful fmi3SetClock / fmi3GetClock: what it says about activation. */
void clocks_note_set(struct worker *w, const struct vblock *b);
void clocks_note_get(struct worker *w, const struct vblock *b, const struct reply *rp,
                     const struct call_values *out);
/* After any call the state machine let through: deactivations. */
void clocks_after(struct worker *w, enum call_op op, int status);

/* vars_table.c: value reference -> variable */
/*
 * Build the direct table from value reference to variable that
 * vars_find() uses when the value references are dense; without it (sparse
 * references, or no memory for it) vars_find() searches. 0 or -ENOMEM.
 * Freed by vars_table_fini().
 */
int vars_table_init(struct worker *w);
void vars_table_fini(struct worker *w);
const struct md_variable *vars_find(const struct worker *w, enum md_type type, uint32_t vr);
/* The variable index of v. */
size_t vars_index(const struct worker *w, const struct md_variable *v);

/* vars.c */
/* One typed block of value references and values, checked against the description. */
struct vblock {
        enum md_type type;              /* of the FMI function */
        const uint32_t *vrs;
        uint32_t n_vrs;
        uint64_t n_values;
        const void *data;               /* set: the values */
        uint64_t data_len;
        const uint64_t *sizes;          /* set Binary */
};
/* Elements a variable has now (structural parameters as set); 0 when unresolvable. */
uint64_t vars_elements(const struct worker *w, const struct md_variable *v);
/*
 * Parse and check one call_values block of in for a get (set = false) or
 * a set: types, value references, access in the current state, counts,
 * and for a set the values (Booleans, strings, binaries, duplicates).
 * fn names the FMI function in messages. true when it passes, else rp is
 * refused.
 */
bool vars_check(struct worker *w, const struct call_in *in, const struct call_values *cv,
                bool set, const char *fn, struct vblock *ret, struct reply *rp);
/*
 * The same checks for a block of a fixed-size type whose value references
 * (and for a set, values of data_len bytes) are already in place: a block
 * of a kept step layout (layout.c).
 */
bool vars_check_block(struct worker *w, struct vblock *b, bool set, const char *fn,
                      struct reply *rp);
/* After a successful set of structural parameters: remember the values. */
void vars_note_set(struct worker *w, const struct vblock *b);
/* Reset the structural parameters to their start values. */
void vars_reset(struct worker *w);

/* values.c: FMI 3.0 and 2.0 get/set of a checked block */
int values_get(struct worker *w, const struct vblock *b, struct reply *rp, struct call_values *ret);
/* A get of a fixed-size block into p (n_values values): the status, < 0 when rp is refused. */
int values_get_into(struct worker *w, const struct vblock *b, void *p, struct reply *rp);
int values_set(struct worker *w, const struct vblock *b, struct reply *rp);

/* lifecycle.c, fmi2.c: helpers both versions' handlers use */
bool flag_ok(uint8_t b);
/* A range of in's payload as a NUL-terminated heap string; NULL when malformed or OOM. */
char *copy_text(const struct call_in *in, const struct call_range *r, uint64_t max);
/* DIR/resources/ when it is a directory, else NULL (FMI 3.0 section 2.3.1). Caller frees. */
char *resource_path(const struct worker *w);
/* "file://" + the percent-encoded DIR + "/resources/" (FMI 2.0). Caller frees; NULL for OOM. */
char *resource_uri(const char *dir);
bool instantiate_args(struct worker *w, const struct call_in *in, const struct call_instantiate *ci,
                      const char *fn, char **ret_name, struct reply *rp);
bool experiment_ok(const struct call_experiment *e, const char *fn, struct reply *rp);

/*
 * The worker of this process, for the FMU's callbacks: the environment
 * pointer the FMU passes back is its own to get wrong (exports pass NULL or
 * their instance), and a worker hosts one instance. env where none is set
 * (a test driving the handlers directly).
 */
struct worker *worker_of(void *env);

/* log.c */
void log_fmi3(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category,
              fmi3String message);
void log_fmi2(fmi2ComponentEnvironment env, fmi2String name, fmi2Status status,
              fmi2String category, fmi2String message, ...);
/*
 * Add the messages dropped since the last call because a thread the FMU
 * started sent them to w->logs_dropped (the reply's count, saturating).
 */
void log_count_foreign(struct worker *w);
/*
 * Send the messages threads the FMU started logged since the last drain,
 * as if logged now on the worker's thread (the last Error among them
 * becomes w->last_error). The worker's thread only.
 */
void log_drain_foreign(struct worker *w);
/* Add n to w->logs_dropped (saturating). */
void log_add_dropped(struct worker *w, uint64_t n);
/* A line the FMU wrote to its standard output or error (output.c). The worker's thread only. */
void log_output(struct worker *w, const char *category, const char *line);
/* fmud's own line among them ("stdout"), past their budget: what the budget dropped. */
void log_output_note(struct worker *w, const char *line);

/* output.c */
/*
 * Make fds 1 and 2 files whose lines output_drain() sends as LOG events
 * of the category "stdout" or "stderr". Before the FMU is loaded.
 */
int output_capture(void);
/* Send the whole lines written since the last drain. The worker's thread, between calls. */
void output_drain(struct worker *w);
/* At Terminate and FREE: send everything, a partial last line too. */
void output_finish(struct worker *w);
/* output_finish() in a crash handler: async-signal-safe, says nothing of its own. */
void output_last(struct worker *w);

/* This thread is in an intermediate update and holds iu_lock: it may use the channel. */
extern _Thread_local bool worker_speaking;
/* A message of the worker itself, as a log event. */
void log_worker(struct worker *w, int status, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* The checked blocks of one DO_STEP, in w->blocks. */
struct step_blocks {
        struct vblock *in, *out;
        uint32_t n_in, n_out;
};

/* step.c: room for n_in + n_out blocks in w->blocks, out after in; false when rp is refused. */
bool step_blocks_init(struct worker *w, uint32_t n_in, uint32_t n_out, struct step_blocks *ret,
                      struct reply *rp);

/*
 * step.c: the status of output block i's get (< 0: rp is refused) into rp;
 * false when the outputs stop there (res says where).
 */
bool step_output_ok(int status, uint32_t i, struct call_step_result *res, struct reply *rp);

/* layout.c: step layouts (call_ops.h, call_do_step.compact) */
/* Keep bl, just checked, as layout id when a layout can hold it; else keep none. */
void layout_keep(struct worker *w, uint32_t id, const struct step_blocks *bl);
/*
 * A compact step's blocks: the kept layout's, with the input values of in,
 * checked as vars_check() checks a request's. false when rp is refused.
 */
bool layout_blocks(struct worker *w, const struct call_in *in, const struct call_do_step *ds,
                   struct step_blocks *ret, const char *fn, struct reply *rp);
/* Get the outputs of a compact step into rp: values only; the result says how far it got. */
void layout_get_outputs(struct worker *w, const struct step_blocks *bl,
                        struct call_step_result *res, struct reply *rp);
void layout_free(struct worker *w);

/* step.c */
void iu_callback(fmi3InstanceEnvironment env, fmi3Float64 t, fmi3Boolean set_requested,
                 fmi3Boolean get_allowed, fmi3Boolean step_finished, fmi3Boolean can_return_early,
                 fmi3Boolean *early_return_requested, fmi3Float64 *early_return_time);

/* mlock.c */
struct sandbox_opts;
/*
 * fmud-worker --mlock: RLIMIT_MEMLOCK set to limit (0: raised to the
 * address-space limit where allowed), then mlockall(MCL_CURRENT |
 * MCL_FUTURE); before the sandbox. 0 or -errno, remembered for the report.
 */
int worker_lock_memory(const struct sandbox_opts *o, uint64_t limit);
/* Send the outcome as CALL_EV_MLOCK (when the lock was asked for). 0 or -errno. */
int mlock_send_report(struct worker *w);

/* states.c */
void states_free_all(struct worker *w);

/* Normalize an FMU status: out of range counts as Fatal. */
int status_norm(const struct worker *w, int status);

/* Handlers, by op (lifecycle.c, get_set.c, step.c, deriv.c, states.c, fmi2.c). */
handler_fn h_instantiate3, h_free, h_debug_logging, h_enter_init3, h_exit_init,
        h_enter_config, h_exit_config, h_enter_event, h_enter_step, h_evaluate, h_update_discrete,
        h_terminate, h_reset, h_get, h_set, h_clock_timing, h_do_step, h_output_derivatives,
        h_input_derivatives, h_partial, h_dependencies, h_fmu_state, h_instantiate2,
        h_setup_experiment, h_enter_init2, h_cancel_step, h_get_status;

#endif
