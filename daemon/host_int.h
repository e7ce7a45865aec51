/*
 * host_int: the inside of struct host, shared by daemon/host*.c.
 *
 *   host.c          registry of sessions, life cycle, replies
 *   host_request.c  host_request(): decode, check, answer or queue
 *   host_load_check.c  load: path and sandbox checks (caller)
 *   host_load.c     load: scenario, workers, master and results file
 *                   (session thread)
 *   host_session.c  the session thread: command queue, state machine,
 *                   running in chunks, unload
 *   host_exec.c     one command of the session's queue
 *   host_values.c   get/set: msgpack <-> FMI types
 *   host_vars.c     get/set: names (and array elements) to variables
 *   host_status.c   the status snapshot, status and list replies
 *   host_rt.c       a session's real-time options, applied at load and reported
 *   host_sub.c      the master's sink: results file and subscriptions
 *   host_rec.c      the results file's condition: flushes, failures, close
 *   host_results.c  results: pieces of the results file (control thread)
 *   host_mat.c      a .mat results file, converted from the rows at the end
 *   host_snap.c     snapshot, restore, the list of snapshots and their deletion
 *   host_snap_io.c  a snapshot exported as a file (snap_blob.h) and imported
 *   host_lease.c    transient sessions' leases, detach (control thread)
 *   host_fmi.c      FMI-level instances: a session without a master (instantiate, free)
 *   host_fmi_call.c fmi batches on FMI-level instances (session thread)
 *   host_fmi_fn.c   one call of a batch: arguments, inst_*, result
 *   host_log.c      the session's lines in the daemon's log, its FMUs' messages
 *
 * Threads and what protects what:
 * - The control thread (host_request(), host_counts(), host_set_allowed(),
 *   host_new(), host_free()) reads and writes the registry under h->lock.
 * - Each session has one thread (host_session.c). It alone touches its
 *   scenario, session, instances, master, recorder, subscriptions and
 *   snapshots ("session thread only" below).
 * - Between the two, per session, hs->lock protects the command queue,
 *   the status snapshot (hs->st, written by the session thread after each
 *   command and chunk of points, read by the control thread for status
 *   and list) and hs->m_pub (the master, for master_request_pause(),
 *   master_request_stop(), master_set_warp() and, for every command
 *   queued to a running session, master_request_serve() from the control
 *   thread;
 *   the session thread clears it before freeing the master).
 * - opts.complete and opts.publish are called from both kinds of thread
 *   (their contract: thread-safe, non-blocking).
 */
#ifndef FMUD_DAEMON_HOST_INT_H
#define FMUD_DAEMON_HOST_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "daemon/host.h"
#include "engine/master/master.h"
#include "engine/record/recorder.h"
#include "engine/scenario/open_as.h"
#include "engine/scenario/scenario.h"
#include "engine/master/session.h"

#define HOST_MSG_MAX            2048    /* as SESSION_MSG_MAX: a session's reason whole */
#define HOST_IDENT_MAX          64      /* "uid=N", "curve=Z85 key" (host_out.c) */
/* A remote (CURVE) client's files are opened with this user's rights: nobody (host_out.c). */
#define HOST_REMOTE_UID         65534
#define HOST_REMOTE_GID         65534
#define HOST_MAX_SNAPSHOTS      64      /* per session: each holds an FMU state per instance */
#define HOST_MAX_SUBS           64      /* per session */
#define HOST_MAX_SUBS_USER      16      /* per session and subscriber: others keep room */
#define HOST_DIAG_LINES         5       /* of a refused scenario, in the reply */

/* A queued request: its op and arguments re-encoded (the caller's buffer is gone by then). */
struct hcmd {
        struct hcmd *next;
        enum proto_op op;
        uint64_t token, id;
        void *args;                     /* msgpack of the request's args map */
        size_t len;
        /* Who asked (host_peer.user, "" unknown) and whether as an admin: subscriptions' owner. */
        char user[HOST_PEER_LABEL_MAX];
        bool admin;
        /* A stop asked of the session running: answered with how its run ended, whatever that was. */
        bool while_running;
        /* fmi: the next call to make and the results so far (host_fmi_call.c); NULL: none yet. */
        uint32_t fmi_next;
        struct pw *fmi_out;
        /* fmi: the batch, decoded once by the control thread from args (fmi_doc, fmi_mem). */
        struct proto_fmi fmi;
        struct pv_doc fmi_doc;
        void *fmi_mem;
};

#define HRT_STATE_MAX   96              /* a real-time option's state: "refused: REASON (task N)" */

struct hinst_status {
        char *name, *fmu;
        int64_t pid;
        uint32_t multirate;
        bool tolerance_defined;         /* the relative tolerance given at initialization */
        double tolerance;
        uint64_t steps;
        double step_us_mean, step_us_max, service_us_mean;
        char fault[HOST_MSG_MAX];
        char mlock[HRT_STATE_MAX];      /* the worker's memory lock (hrt_mlock_state()); "": none */
        const char *integrator;         /* Model Exchange: "bdf", "adams" (static); NULL: CS */
        char *partitions;               /* Scheduled Execution: "fast (priority 1), ..."; NULL: none */
        struct inst_me_stats me;
        uint32_t n_layers;              /* as the worker reported them at its start */
        struct hlayer {
                const char *name;       /* static */
                enum proto_layer_state state;
                char *detail;
        } layers[SANDBOX_LAYER_COUNT];
};

/* What status and list report; written by the session thread under hs->lock. */
struct hstatus {
        enum proto_state state;
        uint64_t generation;
        char *name;
        double time, start, stop, step;
        double budget;                  /* the effective step budget; INFINITY: none */
        uint64_t points, extra_points, events;
        uint64_t chained, moves;        /* master_stats' */
        double rtf, warp;
        double lag_s, lag_max_s;        /* master_stats' */
        struct lat_summary lateness, lateness_window;   /* master_stats' */
        uint64_t overruns;
        struct master_rig_stats rig;    /* master_rig_stats(); rig.ports false: none */
        char message[HOST_MSG_MAX];
        const char *recorder;           /* static: rec_backend_name(); NULL: no results file */
        const char *results;            /* static: "writing", "complete", "failed"; NULL: none */
        char *out;                      /* the results file's path; NULL: none */
        uint64_t rows, dropped;
        /* For results (host_results.c): the file's bytes complete so far; closed, all of it. */
        uint64_t res_bytes;
        bool res_done;
        uint64_t samples_dropped;       /* subscriptions' samples lost on the way */
        size_t n_insts;
        struct hinst_status *insts;
};

/*
 * A value set since its instance last stepped, as get returns it: FMI 3.0
 * forbids getting from an instance between a set and its next step.
 */
struct hsetv {
        struct hsetv *next;
        size_t comp, var;
        uint64_t steps;                 /* the instance's steps when it was set */
        void *bytes;                    /* the value, msgpack */
        size_t len;
};

/* An FMU's message kept for logs (host_log.c). */
struct hlog_kept {
        uint64_t seq;
        double time;
        uint32_t status;
        char instance[PROTO_LOG_INSTANCE_MAX + 1];
        char category[PROTO_LOG_CATEGORY_MAX + 1];
        char message[PROTO_LOG_MESSAGE_MAX + 1];
};

/* An instance's rate limit: a bucket of HLOG_BURST messages refilled at HLOG_RATE per second. */
struct hlog_rate {
        double tokens;
        uint64_t last_ns;
        uint64_t dropped;               /* since the last summary line */
};

/* A session's FMU messages: the last HLOG_KEEP kept, each instance rate limited (under lock). */
struct hlog {
        pthread_mutex_t lock;
        struct hlog_kept *kept;         /* HLOG_KEEP slots, allocated with the first message */
        uint32_t head, n;               /* the oldest kept, and how many */
        uint64_t seq;                   /* the last message's */
        size_t n_rates;
        struct hlog_rate *rates;        /* per component, allocated at load */
        struct hlog_rate *out_rates;    /* the same for the lines it prints (stdout, stderr) */
};

/* A subscription (session thread only). */
struct hsub {
        uint64_t n;                     /* topic "s<session>.<n>" */
        char topic[48];
        uint64_t decimation, seen;
        bool every_point;               /* every point's row, not only the recorded ones */
        bool named;                     /* the first sample carries names */
        bool restored;                  /* the next sample is the first after a restore */
        struct pub_drops *drops;        /* its samples lost on the way (a reference) */
        uint64_t drops_seen;            /* drops when the last sample was built */
        char user[HOST_PEER_LABEL_MAX]; /* who subscribed (host_peer.user); "" unknown */
        size_t n_items;
        struct hsub_item {
                char *name;
                size_t col;             /* a recorded column, or SIZE_MAX */
                size_t comp, var;       /* else a variable the master publishes */
                uint64_t elements;
                bool array;             /* sent as an array, as get answers it, even of 1 */
                enum md_type type;
        } *items;
};

struct hsnapshot {
        uint64_t id;
        double time;
        enum proto_state state;         /* loaded or paused */
        uint64_t generation;            /* the session's when taken */
        double taken;                   /* the wall clock then: Unix seconds */
        uint64_t *handles;              /* an FMU state per instance */
        struct master_saved *saved;
        uint8_t *blob;                  /* its file, made by the first export (host_snap_io.c) */
        size_t blob_len;
};

struct hsess {
        struct host *h;
        uint64_t id;
        struct hsess *next;             /* h->sessions or h->zombies; under h->lock */
        pthread_t thread;

        pthread_mutex_t lock;
        pthread_cond_t cond;
        struct hcmd *q_head, *q_tail;   /* under lock */
        bool quit;                      /* under lock: host_free() */
        /* Set by host_free() too: a load in progress stops at its next poll. */
        atomic_bool cancel;
        /*
         * Set by host_free() past its grace: no call of the session's
         * workers is waited for any longer but Terminate and FreeInstance
         * (session_opts.cancel), a load's as well as a step's.
         */
        atomic_bool calls_cancel;
        /* Set by an unload while loading: the load stops (as cancel), its calls as calls_cancel. */
        atomic_bool unload_asked;
        struct hstatus st;              /* under lock */
        struct master *m_pub;           /* under lock */
        int res_fd;                     /* under lock: the results file, readable; -1: none */

        /* Session thread only. */
        struct hcmd *load;              /* the load request, until answered */
        bool held;                      /* FMUD_TEST_HOLD_LOADS: the load was held once */
        enum host_sandbox sandbox;      /* the session's workers' mode */
        size_t n_allowed;
        char **allowed;                 /* copied at load */
        size_t n_output;
        char **output;                  /* copied at load */
        /* Who loaded it (host_out.c): a new results file is theirs and marked so. */
        bool peer_cred;                 /* peer_uid and peer_gid are the kernel's word */
        uid_t peer_uid;
        gid_t peer_gid;
        char peer_ident[HOST_IDENT_MAX];
        struct open_as as;              /* whose rights the client's files are opened with */
        char *content_dir;              /* a load by content's directory (host_content.c); NULL */
        enum proto_state state;
        uint64_t generation;
        struct scenario *sc;
        struct input_table *inputs;     /* the load's input file; NULL: none */
        struct session *s;
        struct master *m;
        struct rec *rec;
        char *rec_path;                 /* the results file's, as the load named it */
        int mat_fd;                     /* a .mat results file, written at the end; -1: none */
        uint64_t res_seen;              /* bytes_complete last put in st.res_bytes */
        struct rec_stats rec_final;     /* the results file's figures once it is closed */
        const char *rec_name;           /* and its backend; NULL: none was closed */
        enum rec_type *col_types;
        union rec_value *rec_vals;
        int rec_error;                  /* the first write error; the session faults with it */
        bool rec_failed;                /* the file could not be finished (rec_msg says why) */
        char rec_msg[HOST_MSG_MAX];
        double warp;
        struct hsub *subs[HOST_MAX_SUBS];
        /* subs[i]'s topic number, 0: none; under lock, for host_sub_live() on the control thread. */
        uint64_t sub_live[HOST_MAX_SUBS];
        uint64_t next_sub;
        uint64_t samples_dropped;       /* of subscriptions removed since */
        uint64_t telem_ns;              /* when telemetry was last sent (host_telem.c) */
        struct pub_drops *telem_drops;  /* telemetry lost on the way; NULL: none sent yet */
        struct hsnapshot *snaps[HOST_MAX_SNAPSHOTS];
        uint64_t next_snap;
        uint64_t status_ns;             /* when st was last refreshed */
        uint64_t chunk;                 /* grid points per stepping call while running */
        /* A step or run-until in progress: the session runs until its goal, then pauses. */
        struct hcmd *goal;
        struct hcmd *deferred, *deferred_tail;  /* steps asked for meanwhile, in order */
        bool goal_time;
        uint64_t goal_point;
        double goal_t;
        struct hsetv *setv;             /* values set since their instance's last step */
        uint32_t n_workers;             /* counted in h->workers */
        uint64_t mlock_reserved;        /* under h->lock: counted in h->mlock_used */
        struct rt_state rt;             /* written by the session thread under lock (host_rt.c) */
        char rt_wait[HRT_STATE_MAX];    /* how the master waits for workers; "": not real time */
        struct hlog log;                /* its FMUs' messages (host_log.c; its own lock) */
        /* Who asked for the command being served (hcmd.user), for the log; "" none. */
        char actor[HOST_PEER_LABEL_MAX];

        /*
         * A transient session's lease (host_lease.c); set at load, then read-only
         * (transient: but for detach, on the control thread under h->lock)...
         */
        bool transient;
        uint8_t owner_sock, owner_len;
        uint8_t owner_id[HOST_PEER_ID_MAX];
        char owner[HOST_PEER_LABEL_MAX];
        /* Who loaded it (host_peer.user); set at load, then read-only. Empty: anyone may change it. */
        char user[HOST_PEER_LABEL_MAX];
        uint64_t renewed_ns;            /* ...but this: under h->lock */
        bool expired;                   /* written under h->lock and lock, with quit */
        /*
         * When a stop of it running was asked, until it is no longer
         * running (host_stop.c); control thread, under h->lock. 0: none.
         */
        uint64_t stop_asked_ns;
        char stop_why[96];              /* the abandoned step's why; lives as long as hs */

        /* An FMI-level instance (host_fmi.c): set before it is registered, then read-only. */
        bool fmi;
        struct inst *inst;              /* session thread only; NULL until instantiated */
};

struct host {
        struct host_opts opts;          /* strings copied */
        char *worker_path, *cache_dir, *scratch_dir, *hide_dir;
        pthread_mutex_t lock;
        size_t n_allowed;               /* under lock */
        char **allowed;                 /* under lock; resolved with realpath() */
        size_t n_output;                /* under lock */
        char **output;                  /* under lock; resolved with realpath() */
        char *state_dir;                /* NULL: none */
        const char *mark;               /* the results files' extended attribute (host_out.c) */
        struct hsess *sessions;         /* under lock; newest first */
        struct hsess *zombies;          /* under lock: threads that ended, to join */
        uint64_t next_id;               /* under lock */
        int ids_fd;                     /* STATE_DIR/last-session (host_ids.c); -1: none */
        bool ids_broken;                /* a write failed: kept (locked), not written */
        uint32_t n_sessions;            /* under lock */
        _Atomic uint32_t workers;
        uint64_t mlock_used;            /* under lock: the sessions' locked-memory shares */
        /*
         * FMUD_TEST_HOLD_LOADS was set: every load waits at its first
         * cancellation poll until the host is freed (tests of shutdown
         * during a load).
         */
        bool hold_loads;
        /* FMUD_TEST_SANDBOX_SKIP: layers every worker skips (sandbox_opts.skip_layers). */
        uint32_t skip_layers;
        _Atomic uint32_t n_transient;   /* transient sessions in sessions */
        _Atomic uint32_t n_stopping;    /* sessions with stop_asked_ns, at most */
        struct upload *upload;          /* the upload store (upload.h; its own lock) */
};

/* ---- host_stop.c ---- */
/* A stop of hs running was asked (control thread): from when, for host_stop_check(). */
void host_stop_asked(struct host *h, struct hsess *hs);

/* ---- host.c: replies and the registry ---- */
void host_reply_error(struct host *h, uint64_t token, uint64_t id, enum proto_err code,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/*
 * Complete with a writer that holds a whole reply to request id; resets w.
 * A reply over opts.max_reply goes out as a PROTO_E_TOO_LARGE refusal.
 */
void host_reply_take(struct host *h, uint64_t token, uint64_t id, struct pw *w);
/* Whether w's bytes so far are within opts.max_reply (a reply being built can stop early). */
bool host_reply_fits(const struct host *h, const struct pw *w);
void host_reply_progress(struct host *h, uint64_t token, uint64_t id, enum proto_state st,
                         double time, uint64_t points, const char *message);
/* A queued copy of req (its args re-encoded), or NULL. */
struct hcmd *host_cmd_new(uint64_t token, const struct proto_req *req);
/* The live session id, or NULL; valid until this (the control) thread joins zombies. */
struct hsess *host_find(struct host *h, uint64_t id);
void host_enqueue(struct hsess *hs, struct hcmd *c);
/* Control thread: join and free the sessions whose threads ended. */
void host_join_zombies(struct host *h);
/* Free a session whose thread ended (or never started); queued commands get NO_SESSION. */
void host_sess_destroy(struct hsess *hs);
/* The session thread is done: move hs from the sessions to the zombies. */
void host_retire(struct host *h, struct hsess *hs);
/* Decode a command's copied args; 0 or -errno. Free doc with pv_doc_fini() in any case. */
int host_cmd_args(struct host *h, const struct hcmd *c, struct pv_doc *doc);
void hcmd_free(struct hcmd *c);

/* ---- host_content.c: put, and loads by content ---- */
void hcontent_put(struct host *h, uint64_t token, const struct proto_req *req,
                  const struct host_peer *peer);
/* Caller thread: whether a load's files are within bounds and plainly named; -1 or a code. */
int hcontent_check(const struct proto_load *a, char *msg, size_t size);
/*
 * Caller thread, right after hcontent_check() under the host's lock (puts
 * come on the same thread, so nothing is evicted between): the load's
 * uploads linked into a new hs->content_dir, the content as "model" until
 * its kind is known. -1, or the refusal's code with msg.
 */
int hcontent_link(struct hsess *hs, const struct proto_load *a, char *msg, size_t size);
/*
 * Session thread: the content's kind read from its bytes (a put's kind is
 * not trusted: SHA-256 does not cover it), its link named model.<kind>;
 * *ret_path the model's, *ret_input the input's (NULL: none), malloc'ed.
 * -1, or the refusal's code with msg.
 */
int hcontent_prepare(struct hsess *hs, const struct proto_load *a, char **ret_path,
                     char **ret_input, char *msg, size_t size);
/*
 * Where a load's file is opened beneath, and as whom (open_as.h): an
 * uploaded one beneath hs->content_dir only, as the daemon (NULL: its files
 * are the daemon's own); else the allowed directories, as the client.
 */
const struct open_as *hcontent_dirs(struct hsess *hs, bool uploaded, char *const **ret_dirs,
                                    size_t *ret_n);
/* Cut "CONTENT_DIR/" out of msg: a load by content's messages name its files relatively. */
void hcontent_unprefix(struct hsess *hs, char *msg);
/* Remove hs->content_dir (none: nothing). */
void hcontent_release(struct hsess *hs);

/* ---- host_load_check.c ---- */
/* Caller thread: check load's paths; -1 when they are fine, else the reply code with msg. */
/*
 * Check a load's paths and sandbox mode before a session exists: -1, or
 * the refusal's code with msg. *ret_sandbox: the session's mode (the
 * daemon's, or a stricter one the load asked for).
 */
int hload_check(struct host *h, const struct proto_load *a, const struct open_as *as,
                enum host_sandbox *ret_sandbox, char *msg, size_t size);

/* ---- host_load.c ---- */
/*
 * Session thread: load, start, build; on success replies to the load and
 * returns 0. On failure returns -errno with the reply's code and message,
 * hs->load kept: the caller frees what is left, retires, then replies.
 */
int hload_run(struct hsess *hs, int *ret_code, char *ret_msg, size_t ret_size);
/* Follow the master into a final state (after a stepping call, a set). */
void hsess_follow(struct hsess *hs);
/* Session thread: free everything the session holds (master, recorder, session, scenario). */
void hload_free(struct hsess *hs);
/* The reply code for a load scenario_load() refused with -errno r and diagnostics. */
int hload_refusal_code(int r);
/* The first few error diagnostics of a refused load into msg, one a line. */
void hload_diag_text(const struct diag_list *d, char *msg, size_t size);
/* The daemon's sandbox options for hs's workers (its mode). */
void hload_sandbox(const struct hsess *hs, struct sandbox_opts *ret);
/* host_pace.c: a load's overrun policy, margin and spin over the scenario's, into o. */
int hpace_overrides(const struct proto_load *a, struct scenario_overrides *o, char *msg,
                    size_t size);
/* The daemon's defaults where neither the scenario nor the load set them. */
void hpace_defaults(struct scenario_experiment *e, const struct host_opts *opts);

/* ---- host_session.c ---- */
void *hsess_main(void *arg);
void hsess_set_state(struct hsess *hs, enum proto_state st, const char *message);
const char *hsess_state_name(enum proto_state st);
/* Session thread: unload the session, replying to c (NULL: no reply). */
void hsess_unload(struct hsess *hs, const struct hcmd *c);

/* ---- host_exec.c ---- */
/* What hsess_exec() did with its command: done with it, unloaded the session, or kept it. */
enum { HSESS_DONE, HSESS_UNLOADED, HSESS_TAKEN };
/* Session thread: serve one command of the queue; HSESS_TAKEN: c is the session's now. */
int hsess_exec(struct hsess *hs, struct hcmd *c);
/* Session thread: start a step or run-until (takes c). */
void hsess_steps(struct hsess *hs, struct hcmd *c, const struct pv *args);
/* Whether the step or run-until in progress has reached its goal. */
bool hsess_goal_reached(struct hsess *hs);
/* Reply to c with the session's state, time and points. */
void hsess_progress(struct hsess *hs, const struct hcmd *c);

/* ---- host_rt.c ---- */
/*
 * Apply the session's real-time options (the daemon's, overridden by load
 * a) to this thread and every worker: 0, or -errno with *code and msg
 * when an option is refused and the session did not say best-effort.
 */
int hrt_apply(struct hsess *hs, const struct proto_load *a, char *msg, size_t size, int *code);
/* Whether the session's workers are to lock their memory (session_opts.mlock). */
bool hrt_mlock(const struct hsess *hs, const struct proto_load *a);
/* inst's memory lock for status: "active", "refused: REASON"; "" when not asked. */
void hrt_mlock_state(const struct inst *inst, char *buf, size_t size);
void hrt_release(struct hsess *hs);
/*
 * The options asked for, as status reports them (states: RT_OPT_COUNT
 * buffers), then master-wait, then each instance's worker-mlock: out has
 * room for RT_OPT_COUNT + 1 + hs->st.n_insts. Their count.
 */
uint32_t hrt_status(const struct hsess *hs, struct proto_rt_option *out,
                    char (*states)[HRT_STATE_MAX]);

/* ---- host_mlock.c ---- */
/*
 * Reserve n_workers shares of the locked-memory budget for hs: 0, or
 * -ENOMEM with msg naming the budget, the use and the ask.
 */
int hmlock_reserve(struct hsess *hs, size_t n_workers, char *msg, size_t size);
/* Give hs's reservation back (none: nothing). */
void hmlock_release(struct hsess *hs);

/* ---- host_status.c ---- */
int hstatus_init(struct hsess *hs);
void hstatus_fini(struct hstatus *st);
/* Session thread: refresh hs->st from the master (force: now, else at most every few ms). */
void hstatus_refresh(struct hsess *hs, bool force);
/* hs->state and message into the status, with the figures it was reached with. */
void hstatus_set_state(struct hsess *hs, const char *message);
/* Caller thread: encode the session's status / brief under hs->lock. */
/* viewer: who asks (NULL: in-process, sees all); a transient owner's routing id only to its user or an admin. */
void hstatus_encode(struct hsess *hs, struct pw *w, const struct host_peer *viewer);
void hstatus_brief(struct hsess *hs, struct proto_session_brief *ret, char **ret_name,
                   const struct host_peer *viewer);

/* ---- host_lease.c ---- */
/* Make hs (not yet in the registry) transient, owned by p; -1 without a usable p. */
int hlease_own(struct hsess *hs, const struct host_peer *p);
/* detach: the owner makes its transient session or instance permanent (control thread). */
void hlease_detach(struct host *h, uint64_t token, const struct proto_req *req,
                   const struct host_peer *peer);

/* ---- host_request.c ---- */
/*
 * A new session (fmi: an FMI-level instance) for request req, checked
 * and registered, its thread started; a refusal is answered here.
 */
void host_sess_create(struct host *h, uint64_t token, const struct proto_req *req,
                      const struct host_peer *peer, const struct proto_load *a, bool fmi);
/* Whether peer may change hs (its user's, or an admin's); else the refusal is answered. */
bool host_owner_ok(struct host *h, uint64_t token, const struct proto_req *req,
                   const struct hsess *hs, const struct host_peer *peer);

/* ---- host_fmi.c: FMI-level instances ---- */
/* Control thread: instantiate (decoded, checked, the session created). */
void hfmi_instantiate(struct host *h, uint64_t token, const struct proto_req *req,
                      const struct host_peer *peer);
/* Session thread: start the worker and instantiate; as hload_run(). */
int hfmi_load(struct hsess *hs, int *ret_code, char *ret_msg, size_t ret_size);
/* Session thread: free the instance and its worker (none: nothing). */
void hfmi_free(struct hsess *hs);

/* ---- host_fmi_call.c: fmi batches ---- */
/* Control thread: fmi, checked (every instance the caller's), queued to the first instance. */
void hfmi_request(struct host *h, uint64_t token, const struct proto_req *req,
                  const struct host_peer *peer);
/* Session thread: make c's calls on hs from c->fmi_next; HSESS_TAKEN when c went on to another. */
int hfmi_exec(struct hsess *hs, struct hcmd *c);
/*
 * Answer c, queued to an instance (or session) that ended before serving
 * it, with code and the formatted reason: an fmi batch is refused at its
 * next call, keeping the results of the calls made on the instances
 * before; anything else is a bare error.
 */
void hfmi_abandon(struct host *h, struct hcmd *c, enum proto_err code, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* ---- host_fmi_fn.c: one call of a batch (session thread) ---- */
/* Why a batch ended at a call. */
struct hfmi_refusal {
        enum proto_err code;
        const char *status;             /* the FMU's status when it answered so; NULL: refused */
        char function[64];              /* "fmi3DoStep" */
        char message[HOST_MSG_MAX];
};
/* Make call c on hs's instance, its result into w: true, or false with *ref. */
bool hfmi_call(struct hsess *hs, const struct proto_fmi_call *c, struct pw *w,
               struct hfmi_refusal *ref);

/* ---- host_values.c (session thread) ---- */
void hvalues_get(struct hsess *hs, const struct hcmd *c, const struct pv *args);
void hvalues_set(struct hsess *hs, const struct hcmd *c, const struct pv *args);

/* ---- host_varlist.c (session thread) ---- */
/* vars: every variable of the session with its type, causality, unit and value. */
void hvarlist_reply(struct hsess *hs, const struct hcmd *c, const struct pv *args);
/* Forget every value set (a restore; unload). */
void hvalues_forget(struct hsess *hs);
/* A copy of a proto string as a C string without NULs, or NULL. */
char *hvalues_strdup(const struct proto_str *s);

/* ---- host_vars.c (session thread) ---- */
#define HVAR_MAX_ELEMENTS (1u << 20)    /* of one variable got or set */
#define HVAR_MAX_DIMS   32              /* of an array's shape */
/* A variable resolved for a call. */
struct hvar {
        char *name;
        size_t comp;
        struct inst *inst;
        const struct md_variable *v;
        enum md_type ct;                /* the call's type */
        size_t n;                       /* elements */
        bool array;
        bool element;                   /* get one element: index */
        uint64_t index;                 /* row-major */
        void *vals;                     /* set: n values of ct */
        size_t *sizes;                  /* Binary */
};
void hvar_fini(struct hvar *x);
/* Resolve name into x (element: get only); -1, or the reply code with msg. */
int hvar_resolve(struct hsess *hs, const struct proto_str *name, struct hvar *x, char *msg,
                 size_t size);
/* A variable set twice among xs[0..n) (under two names, say): -1, or the reply code with msg. */
int hvar_set_twice(const struct hvar *xs, uint32_t n, char *msg, size_t size);
/* The connection that feeds input var of component comp, or NULL. */
const struct scenario_connection *hvar_connection(const struct hsess *hs, size_t comp, size_t var);
/* x is a whole array its structural parameters size 0 (FMI 3.0 section 2.4.7.2): no FMU call. */
static inline bool hvar_empty(const struct hvar *x)
{
        return x->array && x->n == 0 && !x->element;
}
/* Set x's converted values in its instance (none when hvar_empty()): the inst_set*() result. */
int hvar_apply(const struct hvar *x);
/*
 * x is an input the master sets before every step (fed by a connection, a
 * rig port, an input file's column), so a set would not last: -1, or the
 * reply code with msg naming what sets it.
 */
int hvar_set_by_master(const struct hsess *hs, const struct hvar *x, char *msg, size_t size);
/* host_values.c: */
/* Get x (resolved) and write its value to w (nothing on failure); -1 or the reply code with msg. */
int hvalues_get_one(struct hsess *hs, struct hvar *x, struct pw *w, char *msg, size_t size);
/*
 * x's value without asking its worker (a value set but not yet applied,
 * else the last completed point's published one) written to w; false,
 * nothing written, when there is none.
 */
bool hvalues_peek_one(struct hsess *hs, const struct hvar *x, struct pw *w);

/* ---- host_reconf.c (session thread): structural parameters set in Reconfiguration Mode ---- */
struct hreconf {
        size_t n;
        struct hreconf_sp {             /* a UInt64 one: it may size arrays */
                size_t comp;
                uint32_t vr;
                uint64_t old, now;
                bool done;              /* its instance was reconfigured */
        } *sp;
        size_t n_resized;
        struct hreconf_var {
                size_t comp, var;
        } *resized;                     /* the arrays whose size changes */
        bool installed;                 /* the scenario sizes arrays with the new values */
};
/* Some of xs[0..n) are structural parameters. */
bool hreconf_any(const struct hvar *xs, size_t n);
/*
 * Check the structural parameters among xs (resolved and converted) and
 * the resizes they make; put the new sizes in place for the rest of the
 * set's checks. -1, or the reply code with msg (nothing in place).
 */
int hreconf_plan(struct hsess *hs, const struct hvar *xs, size_t n, struct hreconf *rc,
                 char *msg, size_t size);
/* Take rc's sizes back (the set was refused after hreconf_plan()). */
void hreconf_undo(struct hsess *hs, struct hreconf *rc);
/*
 * Reconfigure each instance with its structural parameters among xs:
 * -1, or the reply code with msg (every parameter set before the failure
 * keeps its new value and sizes, hreconf_done(); msg names the instances
 * reconfigured before the failing one).
 */
int hreconf_apply(struct hsess *hs, const struct hvar *xs, size_t n, struct hreconf *rc,
                  char *msg, size_t size);
/* x, a UInt64 structural parameter of rc, was set by hreconf_apply(). */
bool hreconf_done(const struct hreconf *rc, const struct hvar *x);
void hreconf_fini(struct hreconf *rc);
/* The sizes from the structural parameters the instances hold (after a restore). */
void hreconf_refresh(struct hsess *hs);

/* ---- host_sub.c (session thread) ---- */
void hsub_sink(void *ctx, const struct master_row *row);

/* ---- host_rec.c (session thread): the results file's condition ---- */
/* A write failed (err): nothing more is recorded, the master stops at its next point. */
void hrec_failed(struct hsess *hs, int err);
/*
 * The results file between points and while idle (also master_idle_fn):
 * rows to the file on time (rec_tick()); a failed write goes to
 * hrec_failed(), for the session thread to fault the session (hrec_fault()).
 */
void hrec_idle(void *ctx);
/*
 * Close the results file, if open: its figures in hs->rec_final. When it
 * could not be finished, hs->rec_failed, hs->rec_msg and a line in the
 * daemon's log say so. Returns 0 or the error (-errno).
 */
int hrec_close(struct hsess *hs);
/* The results file fd (open for reading) is the session's too, for results (session thread). */
void hrec_share(struct hsess *hs, int fd);

/* ---- host_mat.c (session thread): a .mat results file ---- */

/* The unnamed CSV the rows wait in: -1 and *ret_fd, or a PROTO_E_* code with msg. */
int hmat_csv_open(struct hsess *hs, int *ret_fd, char *msg, size_t size);
/* Recording ended: convert the rows into hs->mat_fd and close it. 0, or -errno with msg. */
int hmat_finish(struct hsess *hs, char *msg, size_t size);

/* ---- host_results.c (control thread): the results operation ---- */

/* Answer results for hs, found and checked (owner, generation) by the caller, unlocked. */
void hres_reply(struct host *h, uint64_t token, const struct proto_req *req, struct hsess *hs);
/*
 * The session ends (st, message), and with it the results file; if the
 * file could not be finished, the session faults with its message instead
 * (unless it faulted already: the log has the file's).
 */
void hrec_end(struct hsess *hs, enum proto_state st, const char *message);
/* After a failed write (hs->rec_error): the session faults now, unless it ended already. */
void hrec_fault(struct hsess *hs);
void hsub_subscribe(struct hsess *hs, const struct hcmd *c, const struct pv *args);
void hsub_unsubscribe(struct hsess *hs, const struct hcmd *c, const struct pv *args);
void hsub_free_all(struct hsess *hs);
/* Samples of the session's subscriptions lost on the way so far (those removed too). */
uint64_t hsub_dropped(const struct hsess *hs);
/* The session was restored: every subscription's next sample says so. */
void hsub_restored(struct hsess *hs);
/* Publish a state change on "events". */
void hsub_event(struct hsess *hs, const char *message);

/* ---- host_log.c: the session's lines in the daemon's log, its FMUs' messages ---- */
#define HLOG_KEEP       256     /* messages a session keeps for logs */
#define HLOG_BURST      100     /* messages an instance may log at once ... */
#define HLOG_RATE       20      /* ... and per second after that */
void hlog_init(struct hsess *hs);
void hlog_fini(struct hsess *hs);
/* Session thread: one line about the session, "session N (USER): ...". */
void hlog_line(struct hsess *hs, int level, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* Session thread: the line of a state change (hsess_set_state()); LOADED is hload_run()'s. */
void hlog_state(struct hsess *hs, enum proto_state from, enum proto_state to,
                const char *message);
/* Session thread: the session's instances are known (the rate limits); 0 or -ENOMEM. */
int hlog_start(struct hsess *hs);
/* session_log_fn and session_worker_fn, ctx the session (session thread). */
void hlog_fmu(void *ctx, size_t comp, const char *comp_name, int status, const char *category,
              const char *message);
void hlog_worker(void *ctx, const struct session_worker_info *w);
/* Session thread: the summary lines of messages the rate limits dropped, if any. */
void hlog_flush(struct hsess *hs);
/* Caller thread: logs' reply (the kept messages) into w. */
void hlog_encode(struct hsess *hs, struct pw *w);
/* Copy src into dst (size > 0) without control characters, cut to fit; its length. */
size_t hlog_clean(char *dst, size_t size, const char *src);
/* ---- host_telem.c (session thread) ---- */
/* Between stepping calls: a paced running session's telemetry, once a second. */
void htelem_tick(struct hsess *hs);
void htelem_free(struct hsess *hs);

/* ---- host_snap.c (session thread) ---- */
void hsnap_snapshot(struct hsess *hs, const struct hcmd *c);
void hsnap_restore(struct hsess *hs, const struct hcmd *c, const struct pv *args);
/* snapshots: the list, in every state; snapshot-delete: loaded or paused. */
void hsnap_list(struct hsess *hs, const struct hcmd *c);
void hsnap_delete(struct hsess *hs, const struct hcmd *c, const struct pv *args);
void hsnap_free_all(struct hsess *hs);
/* A free slot of hs->snaps, or HOST_MAX_SNAPSHOTS; its snapshot's slot, or HOST_MAX_SNAPSHOTS. */
size_t hsnap_free_slot(const struct hsess *hs);
size_t hsnap_find(const struct hsess *hs, uint64_t id);
/* Free sn (the workers' FMU states with it when release). NULL: nothing. */
void hsnap_free(struct hsess *hs, struct hsnapshot *sn, bool release);
/* The wall clock: Unix seconds. */
double hsnap_wall_now(void);

/* ---- host_snap_io.c (session thread; loaded or paused) ---- */
/* snapshot-export: a piece of a snapshot's file (snap_blob.h), made on the first ask. */
void hsnap_export(struct hsess *hs, const struct hcmd *c, const struct pv *args);
/* snapshot-import: an uploaded snapshot file checked, and a new snapshot of it. */
void hsnap_import(struct hsess *hs, const struct hcmd *c, const struct pv *args);

/* host_beneath.c */
/*
 * Open path (absolute) with flags and mode, beneath the allowed directory
 * it lies in, following no symbolic link and never leaving it. -1 and
 * *ret_fd, or the reply code with msg: denied (not below an allowed
 * directory, a link on the way, a file that is not there or may not be
 * read), invalid (another error).
 */
int hpath_open(const struct open_as *as, char *const *allowed, size_t n, const char *path,
               int flags, mode_t mode, int *ret_fd, char *msg, size_t size);
/* hpath_open() that says which directories (what: "allowed", "output") and the open's errno. */
int hpath_open_in(const struct open_as *as, char *const *dirs, size_t n, const char *what,
                  const char *path, int flags, mode_t mode, int *ret_fd, int *ret_err, char *msg,
                  size_t size);

/* host_paths.c */
/*
 * -1 when path may be read (below an allowed directory), else the reply
 * code with msg. *ret_real: the resolved path (caller frees).
 */
int hpath_check_in(char *const *allowed, size_t n, const char *path, char **ret_real,
                   char *msg, size_t size);
/*
 * -1 when out may be written: absolute, naming a file, its directory below
 * an allowed one, itself not a symbolic link or a folder; else the reply
 * code with msg.
 */
int hpath_check_out(char *const *output, size_t n, const char *out, char *msg, size_t size);

/* host_out.c (session thread; hout_mark_name() at host_new()) */
/* The extended attribute that marks a results file: trusted.* with CAP_SYS_ADMIN, else user.*. */
const char *hout_mark_name(void);
/* hs->peer_ident for peer (NULL: none); hs->as: as. */
void hout_ident(struct hsess *hs, const struct host_peer *peer, const struct open_as *as);
/*
 * Whose rights the files peer names are opened with (open_as.h): a local
 * peer's own (its uid, gid and groups), a remote one's those of the
 * unprivileged user HOST_REMOTE_UID; NULL (an in-process caller): the
 * daemon's.
 */
void hout_as(const struct host_peer *peer, struct open_as *ret);
/* Whether hs's files are opened with its client's own rights (hs->as, or the daemon's are). */
bool hout_as_client(const struct hsess *hs);
/*
 * Open the session's results file, for writing from its start: out (the
 * load's, checked by hpath_check_out()) beneath its output directory, or,
 * out NULL, a new file in a new directory of the state directory. An
 * existing file is replaced only when it is marked as this client's
 * results or force. A new file (and directory) is the client's, where
 * the daemon may chown it, and is marked. -1 and *ret_fd and *ret_path
 * (malloc'ed), or the reply code with msg.
 */
int hout_open(struct hsess *hs, const char *out, bool force, int *ret_fd, char **ret_path,
              char *msg, size_t size);

/* host_ids.c: session ids kept across restarts. */
int host_ids_open(struct host *h);              /* sets next_id; -EBUSY: locked */
void host_ids_taken(struct host *h, uint64_t id);       /* under h->lock */
void host_ids_close(struct host *h);

#endif
