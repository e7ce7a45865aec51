/*
 * inst_int: the inside of struct inst, shared by engine/instance/inst_*.c.
 *
 * DESIGN: one request is in flight per instance, two when an intermediate
 * update callback calls back into the instance (depth 1) or when a step or
 * a repeat of steps is chained behind another (inst_step.c). Everything read
 * from the worker is checked here before use: the header and body are
 * copied into struct rep, payload ranges are resolved against the record
 * or the side buffer, and values are copied out of shared memory before
 * they are validated. Any violation is a sticky -EPROTO fault.
 *
 * Ownership: struct inst owns the channel, the worker process (until it
 * is reaped), its request scratch record and the arena of borrowed
 * strings and binaries (freed at the start of the next call).
 */
#ifndef FMUD_ENGINE_INST_INT_H
#define FMUD_ENGINE_INST_INT_H

#include <stdarg.h>
#include <stdatomic.h>
#include <time.h>

#include "engine/instance/instance.h"
#include "shm/channel.h"
#include "worker/call.h"

/* Monotonic nanoseconds and timespecs (the deadlines of inst_call.c and inst_events.c). */
static inline uint64_t ts_ns(const struct timespec *t)
{
        return (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec;
}

static inline void ns_ts(uint64_t ns, struct timespec *ret)
{
        ret->tv_sec = (time_t)(ns / 1000000000u);
        ret->tv_nsec = (long)(ns % 1000000000u);
}

static inline uint64_t now_ns(void)
{
        struct timespec t;

        (void) clock_gettime(CLOCK_MONOTONIC, &t);
        return ts_ns(&t);
}

#define INST_FD         3       /* the worker's channel descriptor */
#define INST_RECENT_LOGS        4       /* the FMU's last log messages kept for fault messages */
#define INST_RECENT_TEXT        256     /* bytes of each, NUL included */

struct arena_chunk;
struct inst_kept;
struct sup_watch;

/* One of the FMU's last log messages. */
struct inst_log_rec {
        int status;
        char category[32];
        char text[INST_RECENT_TEXT];
};

/* What a crashing worker said before it died (worker/crash.h); untrusted detail. */
struct inst_last_words {
        bool valid;
        bool near_limit;                /* the address space was at its limit */
        int sig;
        int code;
        uint64_t addr;
        uint64_t limit;                 /* RLIMIT_AS bytes, 0: unlimited */
};

struct inst {
        char *name;

        /* The worker process. */
        pid_t pid;
        bool reaped;
        int wstatus;

        /* The channel. */
        struct chan *chan;
        uint32_t hint;                  /* the spin hint last published on chan; 0: none yet */
        struct ring *tx, *rx;
        unsigned char *side;
        uint64_t side_size;
        uint32_t max_record;
        unsigned char *scratch;         /* a request record under construction */

        /* What HELLO and INSTANTIATE told us. */
        int fmi;
        uint64_t caps;
        uint64_t max_string, max_binary;
        bool iu_wanted;

        /* Calls. */
        struct wait_policy wait;
        uint64_t timeout_ns, next_timeout_ns;
        uint64_t start_timeout_ns;      /* until the HELLO (inst_ready()) */
        uint64_t seq;
        int fault;
        int state;
        unsigned depth;                 /* 1 inside the intermediate update callback */
        /*
         * DO_STEPs awaiting inst_wait_step(): one, and what was posted
         * chained behind it (struct inst_step.chained, repeat). A circle:
         * the oldest is posted[posted_head], the i-th after it
         * posted[(posted_head + i) % INST_CHAIN_MAX] (inst_step.c).
         */
        unsigned n_posted, posted_head;
        struct inst_posted {
                const struct inst_step *step;
                uint64_t seq;
                struct timespec deadline;
                uint64_t timeout_ns;
                bool deadline_at_wait;  /* a repeat's later step: timeout_ns from the wait */
                bool compact;           /* sent values only (inst_kept.c) */
        } posted[INST_CHAIN_MAX];
        const struct inst_step *step;   /* the one inst_wait_step() is collecting */
        bool step_compact;              /* it was sent values only */
        struct inst_kept *kept;         /* the step layout the worker keeps; NULL: none yet */
        uint64_t compact_steps;         /* steps sent values only */
        struct arena_chunk *arena;
        char msg[CALL_MSG_MAX + 256];
        uint64_t logs_dropped;

        /* Faults and what explains them (inst_fault.c). */
        struct sup_watch *watch;        /* NULL: no supervisor */
        _Atomic int fault_pub;          /* 'fault', for any thread (inst_health()) */
        enum call_op cur_op;            /* the call in flight; CALL_OP_NONE: between calls */
        atomic_bool abandoned;          /* inst_abandon(): a step in flight is not waited for */
        _Atomic(const char *) abandoned_why;    /* inst_abandon()'s why, set before abandoned */
        char unwanted[160];             /* the waiting thread's text of why (inst_call.c) */
        const atomic_bool *cancel;              /* inst_opts.cancel */
        enum md_type cur_type;          /* of a GET or SET in flight */
        uint64_t cur_timeout_ns;        /* its deadline, from its start */
        uint64_t last_timeout_ns;       /* what call_deadline() computed last */
        uint64_t last_start_ns;         /* the clock call_deadline() read last */
        uint64_t step_timeout_ns;       /* the step being collected */
        struct inst_last_words words;
        struct inst_log_rec recent[INST_RECENT_LOGS];
        unsigned n_recent, recent_next;

        /* Service time the worker measured inside doStep. */
        uint64_t svc_steps, svc_ns;
        uint64_t svc_last_ns;           /* the last step's: a wait hint, any value is safe */
        struct inst_me_stats me;        /* the worker's integrator, as the last step said */

        inst_log_fn *log;
        void *log_ctx;
        inst_iu_fn *iu;
        void *iu_ctx;

        /* The sandbox (sandbox_report.c, scratch.c). */
        enum sandbox_mode sandbox_mode;
        struct inst_layer layers[SANDBOX_LAYER_COUNT];
        char layer_text[SANDBOX_LAYER_COUNT][CALL_SANDBOX_DETAIL_MAX + 1];
        char *scratch_dir;              /* the scratch directory; NULL: none */
        char *scratch_base;             /* a directory made for it, removed with it; NULL: none */
        char *rec_path;                 /* the worker's record (leftovers.h); NULL: none */

        /* The memory lock (CALL_EV_MLOCK before HELLO). */
        bool mlock_asked;
        int mlock_error;                /* 0: locked; else the worker's -errno */
};

/* A request under construction. */
struct req {
        enum call_op op;
        unsigned char body[CALL_BODY_MAX];
        size_t body_len;
        struct call_out out;
};

/* A reply as received; the record stays held until call_end(). */
struct rep {
        struct call_in in;              /* header copy; payload in the record or side buffer */
        struct call_reply head;
        unsigned char result[CALL_BODY_MAX];
        bool held;
};

/* inst_call.c */
/*
 * Start a call: the fault, busy and depth checks, fresh message and arena
 * (a chained step's post keeps the arena). 0 or -errno.
 */
int call_begin(struct inst *inst, bool chained);
void req_init(struct inst *inst, struct req *rq, enum call_op op, size_t body_len);
/* Copy n bytes into the payload; -EMSGSIZE when they cannot fit. */
int req_put(struct req *rq, const void *p, uint64_t n, struct call_range *ret);
/* Send; *ret_seq is the request's number. 0 or a fault. */
int call_send(struct inst *inst, struct req *rq, const struct timespec *deadline, uint64_t *ret_seq);
/*
 * Wait for the reply to (op, seq), handling events on the way. Returns
 * the FMU status (>= 0), a refusal (< 0, inst->msg says why) or a fault.
 * When it returns >= 0 or a refusal the record is held: call call_end().
 */
int call_recv(struct inst *inst, enum call_op op, uint64_t seq, struct timespec *deadline,
              struct rep *rp);
void call_end(struct inst *inst, struct rep *rp);
/* Send rq and receive its reply with the call's deadline; the caller ends. */
int call_run(struct inst *inst, struct req *rq, struct rep *rp);
/*
 * Take a CALL_EV_LOG event (checked in full, released) and pass it to the
 * log callback, moving the deadline by the callback's time. 0 or a fault.
 */
int call_on_log(struct inst *inst, const struct call_in *in, struct timespec *deadline);
/*
 * Take a CALL_EV_IU event of the step op in flight (released), pass it to
 * the intermediate update callback and answer it, moving the deadline by
 * the callback's time. 0 or a fault.
 */
int call_on_iu(struct inst *inst, const struct call_in *in, enum call_op op,
               struct timespec *deadline);
/* Copy a text range of an event or reply into buf (NUL-terminated); -EPROTO when malformed. */
int call_take_text(struct inst *inst, const struct call_in *in, const struct call_range *r,
                   uint64_t max, char *buf);
/* Wait for the next record on the reply ring until the deadline; 0 or a fault. */
int call_next(struct inst *inst, const struct timespec *deadline, const void **rec, size_t *len);
/* Count a call in flight (+1) or done (-1): the spin hint of every channel. */
void call_active(int delta);
/* Count a posted step in flight: one the thread announced (inst_post_batch()), else +1. */
void call_post_active(void);
/* begin, send body (no payload), receive; the caller ends. */
int call_simple(struct inst *inst, enum call_op op, const void *body, size_t body_len,
                struct rep *rp);
/*
 * Deadline of the next call: now + its timeout (the one-shot one, else the
 * default); 'now' a CLOCK_MONOTONIC reading in ns, 0: read the clock.
 */
void call_deadline(struct inst *inst, uint64_t override_ns, uint64_t now, struct timespec *ret);
/* The same clock for a call already made (a repeat's later step): the one-shot is kept. */
void call_deadline_restart(struct inst *inst, uint64_t timeout_ns, uint64_t now, struct timespec *ret);
/* Record a sticky fault with a message; returns err. */
int inst_fault_set(struct inst *inst, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The worker broke the protocol: what, as the sticky -EPROTO fault. */
int inst_protocol(struct inst *inst, const char *what);
/* Memory valid until the next call; NULL for OOM. */
void *arena_alloc(struct inst *inst, size_t n);
void arena_reset(struct inst *inst);
/* Resolve a payload range of the reply (count elements of elem bytes) or fault with -EPROTO. */
int rep_range(struct inst *inst, const struct rep *rp, const struct call_range *r, uint64_t elem,
              uint64_t count, const void **ret);

/* inst_kept.c: step layouts (worker/call.h, call_do_step.compact) */
/* Whether s's blocks are those the worker keeps: s can be sent compact. */
bool kept_match(const struct inst *inst, const struct inst_step *s);
/* The layout number to send s's blocks under, 0 when no layout can hold them. */
uint32_t kept_next(struct inst *inst, const struct inst_step *s);
/* A full step with s's blocks was sent under id (0: none): what the worker keeps now. */
void kept_sent(struct inst *inst, const struct inst_step *s, uint32_t id);
/* The number of the layout last sent; 0: none. */
uint32_t kept_id(const struct inst *inst);
/* A step was refused: the worker may not keep the layout; the next step goes full. */
void kept_drop(struct inst *inst);
void kept_free(struct inst *inst);
/* A compact step's input values into rq's payload: 0 and *ret, -EMSGSIZE or -EINVAL. */
int kept_put_inputs(struct req *rq, const struct inst_step *s, struct call_range *ret);
/* The outputs of the compact step being collected, from its result; 0 or a fault. */
int kept_take_outputs(struct inst *inst, const struct rep *rp, const struct call_step_result *res);

/* inst_fault.c */
/* The worker died (it is reaped): the sticky -ESRCH with how, during which call. */
int fault_died(struct inst *inst);
/* The call in flight missed its deadline: the sticky -ETIMEDOUT (the worker is killed). */
int fault_timeout(struct inst *inst);
/* SIGKILL the worker (its process group when it leads one) and reap it. */
void fault_kill(struct inst *inst);
/* Before a call: a death the supervisor saw becomes the fault now. 0 or -ESRCH. */
int fault_check_idle(struct inst *inst);
/* A log event: true when it was the worker's last words (consumed), else kept as recent. */
bool fault_on_log(struct inst *inst, int status, const char *category, const char *message);
/*
 * Parse a crash handler's last words (worker/crash.c), strictly: false for
 * anything but exactly the form it writes, with every number in range.
 */
bool fault_parse_words(const char *m, struct inst_last_words *ret);
/* "fmi3DoStep", "fmi2GetReal", ...: the call in flight, for messages. */
const char *fault_call_name(const struct inst *inst, char *buf, size_t size);

/* inst_values.c */
/* Encode one block of value references (and values for a set) into rq; 0, -EINVAL, -EMSGSIZE. */
int values_put(struct req *rq, enum md_type type, const uint32_t *vrs, size_t nvr,
               const void *values, const size_t *sizes, size_t nvalues, bool set,
               struct call_values *ret);
/* Worst-case reply payload bytes of a get of nvalues of type (0 for String and Binary). */
uint64_t values_reply_need(enum md_type type, size_t nvalues);
/* Check a reply block against the request and copy its values out; 0 or a fault. */
int values_take(struct inst *inst, const struct rep *rp, const struct call_values *cv,
                enum md_type type, size_t nvr, void *values, size_t *sizes, size_t nvalues);

/* spawn.c */
struct spawn_req {
        const char *path;               /* fmud-worker */
        const char *fmu_dir;
        char *const *envp;              /* NULL: empty */
        int chan_fd;
        const struct sandbox_opts *sandbox;     /* NULL: off */
        const char *scratch;            /* the instance's scratch directory; NULL: none */
        uid_t uid;                      /* whom a root worker becomes (sandbox_user()) */
        gid_t gid;
        bool mlock;                     /* fmud-worker --mlock */
        uint64_t mlock_limit;           /* fmud-worker --mlock-limit; 0: none */
        bool model_exchange;            /* fmud-worker --interface me */
        bool scheduled_execution;       /* fmud-worker --interface se */
        const char *integrator;         /* fmud-worker --integrator; NULL: none */
};
/* fork+exec the worker with chan_fd as INST_FD. 0 and *ret_pid, or -errno. */
int spawn_worker(const struct spawn_req *rq, pid_t *ret_pid);
/* Reap the worker if it has exited (non-blocking). true when it has. */
bool spawn_poll(struct inst *inst);
/* Wait up to timeout_ns for the worker to exit, then SIGKILL it and reap. */
void spawn_reap(struct inst *inst, uint64_t timeout_ns);
/* "exited with status 2", "was killed by signal 9 (Killed)". */
void spawn_describe(int wstatus, char *buf, size_t size);

/* scratch.c (sandbox_user() is in instance.h) */
/*
 * Make the scratch directory of one instance (mode 0700, owned by uid/gid)
 * below o->scratch_root, or in a new private directory under $TMPDIR or
 * /tmp. Sets inst->scratch (and inst->scratch_base). 0 or -errno.
 */
int scratch_make(struct inst *inst, const struct sandbox_opts *o, uid_t uid, gid_t gid);
/* Remove the scratch directory with everything in it (the worker is gone). */
void scratch_remove(struct inst *inst);

/* sandbox_report.c */
/* Layers nobody reported: every one DISABLED, "not reported". */
void sandbox_report_none(struct inst *inst);
/* Take a CALL_EV_MLOCK event (checked). 0, or an -EPROTO fault. */
int mlock_report_take(struct inst *inst, const struct call_in *in);
/* Take a CALL_EV_SANDBOX event (checked in full). 0, or an -EPROTO fault. */
int sandbox_report_take(struct inst *inst, const struct call_in *in);

#endif
