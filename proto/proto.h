/*
 * proto: the control plane's messages and their one codec (PROTOCOL.md).
 *
 * DESIGN: a request is a msgpack map {id, op, args}, a reply a map
 * {id, ok, result} or {id, ok: false, error: {code, message}}. Events and
 * samples go out on the daemon's PUB socket as two frames: a topic string
 * and a msgpack map. Everyone (daemon, fmuctl, libfmud) encodes and
 * decodes through this module; nobody packs msgpack anywhere else.
 *
 * Decoding is bounded before anything is allocated: the message size, the
 * nesting depth, every container's count against the bytes left (each
 * element takes at least one byte) and every string's length against the
 * bytes left and the string limit. A decoded message is a tree of struct
 * pv nodes in one allocation owned by a struct pv_doc; strings and
 * binaries point into the caller's buffer, which must outlive the doc.
 *
 * Encoding goes through struct pw (msgpack-c's packer into a growing
 * buffer). The typed helpers below (proto_*_encode/_decode) are the only
 * place where an operation's keys are spelled.
 */
#ifndef FMUD_PROTO_PROTO_H
#define FMUD_PROTO_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROTO_VERSION           1
#define PROTO_MAX_MSG           (16u << 20)     /* bytes of one message (ZMQ_MAXMSGSIZE) */
#define PROTO_MAX_DEPTH         16              /* container nesting */
#define PROTO_MAX_STR           (1u << 20)      /* bytes of one string or binary */
#define PROTO_MAX_ITEMS         (1u << 20)      /* elements of one array or map */
#define PROTO_MAX_NODES         (4u << 20)      /* values in one message */
#define PROTO_MAX_NAMES         65536u          /* names of one get, set or subscribe */

/* ---- Operations and error codes ----------------------------------------- */

enum proto_op {
        PROTO_OP_HELLO,
        PROTO_OP_LOAD,
        PROTO_OP_UNLOAD,
        PROTO_OP_LIST,
        PROTO_OP_STATUS,
        PROTO_OP_START,
        PROTO_OP_PAUSE,
        PROTO_OP_RESUME,
        PROTO_OP_STOP,
        PROTO_OP_WARP,
        PROTO_OP_STEP,
        PROTO_OP_RUN_UNTIL,
        PROTO_OP_GET,
        PROTO_OP_SET,
        PROTO_OP_SUBSCRIBE,
        PROTO_OP_UNSUBSCRIBE,
        PROTO_OP_SNAPSHOT,
        PROTO_OP_RESTORE,
        PROTO_OP_LOGS,
        PROTO_OP_SHUTDOWN,
        PROTO_OP_VARS,
        PROTO_OP_RIG,
        PROTO_OP_PUT,
        PROTO_OP_RESULTS,
        PROTO_OP_SNAPSHOTS,
        PROTO_OP_SNAPSHOT_DELETE,
        PROTO_OP_INSTANTIATE,
        PROTO_OP_FMI,
        PROTO_OP_FREE,
        PROTO_OP_DETACH,
        PROTO_OP_SNAPSHOT_EXPORT,
        PROTO_OP_SNAPSHOT_IMPORT,
        PROTO_OP_COUNT,
};

/* "hello", "load", ..., "run-until", ...; NULL when out of range. */
const char *proto_op_name(enum proto_op op);
/* The op named by s[0..len), or -1. */
int proto_op_parse(const char *s, size_t len);

enum proto_err {
        PROTO_E_BAD_REQUEST,    /* "bad-request": not a request, or malformed arguments */
        PROTO_E_VERSION,        /* "version": protocol version not served */
        PROTO_E_UNKNOWN_OP,     /* "unknown-op" */
        PROTO_E_NO_SESSION,     /* "no-session": unknown session id */
        PROTO_E_STALE,          /* "stale": the request names an earlier generation */
        PROTO_E_STATE,          /* "state": not allowed in the session's state */
        PROTO_E_NO_VARIABLE,    /* "no-variable": unknown instance or variable */
        PROTO_E_TYPE,           /* "type": a value of the wrong type or shape */
        PROTO_E_DENIED,         /* "denied": path outside the allowed directories */
        PROTO_E_INVALID,        /* "invalid": the scenario or FMU was refused */
        PROTO_E_FAULT,          /* "fault": an FMU or worker failed */
        PROTO_E_LIMIT,          /* "limit": a configured limit was reached */
        PROTO_E_UNSUPPORTED,    /* "unsupported": e.g. snapshot of an FMU without state */
        PROTO_E_INTERNAL,       /* "internal": out of memory, I/O error */
        PROTO_E_TOO_LARGE,      /* "too-large": the reply would exceed the message limit */
        PROTO_E_COUNT,
};

const char *proto_err_name(enum proto_err e);
int proto_err_parse(const char *s, size_t len);        /* or -1 */

/* ---- Decoded values --------------------------------------------------------- */

enum pv_type { PV_NIL, PV_BOOL, PV_INT, PV_UINT, PV_FLOAT, PV_STR, PV_BIN, PV_ARRAY, PV_MAP };

struct pv;

struct pv_kv {
        const struct pv *key;
        const struct pv *val;
};

/*
 * One value. Non-negative integers decode as PV_UINT, negative ones as
 * PV_INT; float32 widens to PV_FLOAT. Strings are not NUL-terminated.
 */
struct pv {
        enum pv_type type;
        union {
                bool b;
                int64_t i;
                uint64_t u;
                double f;
                struct { const char *ptr; uint32_t len; } s;    /* PV_STR, PV_BIN */
                struct { const struct pv *items; uint32_t n; } a;
                struct { const struct pv_kv *kv; uint32_t n; } m;
        };
};

struct proto_limits {
        size_t max_msg;
        unsigned max_depth;
        uint32_t max_str;
        uint32_t max_items;
        size_t max_nodes;
};

void proto_limits_default(struct proto_limits *l);

struct pv_doc {
        const struct pv *root;
        void *mem;
};

/*
 * Decode exactly one msgpack value filling buf[0..len) (trailing bytes are
 * an error). Returns 0, or -EMSGSIZE (a limit), -EBADMSG (malformed,
 * truncated, an ext type, trailing bytes), -ENOMEM; err (may be NULL)
 * says what and at which byte. Free doc with pv_doc_fini() also on error.
 */
int pv_decode(const void *buf, size_t len, const struct proto_limits *lim, struct pv_doc *doc,
              char *err, size_t errlen);
void pv_doc_fini(struct pv_doc *doc);

/*
 * A total order on values (type first, then value; floats by bit pattern,
 * containers element by element in wire order) and its equality. The
 * decoder refuses a map with two keys that compare equal.
 */
int pv_cmp(const struct pv *a, const struct pv *b);
bool pv_equal(const struct pv *a, const struct pv *b);

/* The value of key in map m, or NULL (also when m is not a map). */
const struct pv *pv_get(const struct pv *m, const char *key);
bool pv_is_str(const struct pv *v, const char *s);
/* Conversions that never lose information; -EPROTOTYPE when they would. */
int pv_u64(const struct pv *v, uint64_t *ret);
int pv_i64(const struct pv *v, int64_t *ret);
int pv_f64(const struct pv *v, double *ret);            /* ints exactly representable too */
int pv_bool(const struct pv *v, bool *ret);
/* A copy of a PV_STR without embedded NULs, NUL-terminated (caller frees), or NULL. */
char *pv_strdup(const struct pv *v);

/* ---- Encoding ------------------------------------------------------------------ */

struct pw {
        void *priv;             /* msgpack_sbuffer + packer */
        int error;              /* sticky -ENOMEM */
};

int pw_init(struct pw *w);
void pw_fini(struct pw *w);
void pw_reset(struct pw *w);
const void *pw_data(const struct pw *w);
size_t pw_size(const struct pw *w);
/* Take the buffer (free() it); the writer is reset. NULL after an error. */
void *pw_take(struct pw *w, size_t *ret_len);

void pw_map(struct pw *w, uint32_t n);
void pw_array(struct pw *w, uint32_t n);
void pw_nil(struct pw *w);
void pw_bool(struct pw *w, bool v);
void pw_i64(struct pw *w, int64_t v);
void pw_u64(struct pw *w, uint64_t v);
void pw_f64(struct pw *w, double v);
void pw_str(struct pw *w, const char *s);               /* NULL: nil */
void pw_strn(struct pw *w, const char *s, size_t len);
void pw_bin(struct pw *w, const void *p, size_t len);
void pw_pv(struct pw *w, const struct pv *v);           /* a decoded value, re-encoded */
/* Bytes that are already msgpack (values another pw wrote), appended as they are. */
void pw_raw(struct pw *w, const void *p, size_t len);

/* ---- Envelopes ---------------------------------------------------------------- */

struct proto_req {
        uint64_t id;
        enum proto_op op;
        const struct pv *args;          /* a map (an empty map when absent) */
};

/*
 * root must be {id: uint, op: str, args?: map} (args nil reads as an empty
 * map) and nothing else; -EBADMSG with err otherwise, -EOPNOTSUPP when op
 * names no operation this side knows (reply "unknown-op"). *ret is written
 * only on success: reply to a refused request with proto_req_id(root).
 */
int proto_req_decode(const struct pv *root, struct proto_req *ret, char *err, size_t errlen);
/* The request's id when it has a readable one, else 0: for the error reply to a bad request. */
uint64_t proto_req_id(const struct pv *root);
/*
 * The same from a message pv_decode() refused (a duplicate key, a limit,
 * a bad value after the id): the uint value of the top-level map's key
 * "id" when the bytes up to it are readable and no other "id" key before
 * the damage disagrees; else 0. Reads nothing past buf[len), allocates
 * nothing.
 */
uint64_t proto_req_id_raw(const void *buf, size_t len);
/* {id, op, args: <map of n_args pairs the caller writes next>} */
void proto_req_begin(struct pw *w, uint64_t id, enum proto_op op, uint32_t n_args);

struct proto_reply {
        uint64_t id;
        bool ok;
        const struct pv *result;        /* ok: the result (nil when none) */
        int code;                       /* !ok: enum proto_err, -1 for a code this side does not know */
        const char *message;            /* !ok: not NUL-terminated */
        uint32_t message_len;
};

int proto_reply_decode(const struct pv *root, struct proto_reply *ret, char *err, size_t errlen);
/* {id, ok: true, result: <one value the caller writes next>} */
void proto_reply_ok_begin(struct pw *w, uint64_t id);
/* {id, ok: false, error: {code, message}} complete. */
void proto_reply_error(struct pw *w, uint64_t id, enum proto_err code, const char *message);

/* ---- Typed operations ------------------------------------------------------------
 * Each *_encode writes a whole request (envelope included) or a whole
 * result value; each *_decode checks keys, types and ranges and returns
 * 0 or -EBADMSG with err naming the key (-ENOMEM when out of memory).
 * Decoded strings point into the message (the pv_doc's buffer), never
 * NULL: an absent string reads as "" of length 0. Arrays of them are
 * allocated in one block returned in *mem (free() it; NULL when there is
 * none, and always NULL on failure) where noted.
 *
 * Request decoders refuse keys they do not know; result, event and sample
 * decoders ignore them (a newer daemon may add some). Names and paths
 * with an embedded NUL are refused. Integer keys take msgpack integers
 * only; number keys also take integers a double holds exactly.
 */

/* Every session operation names its session and the generation it saw; 0: any. */
struct proto_target {
        uint64_t session;
        uint64_t generation;
};

struct proto_str {
        const char *ptr;
        uint32_t len;
};

struct proto_hello {
        uint32_t version;
        struct proto_str client;        /* a free-form name, for logs */
};
struct proto_hello_result {
        uint32_t version;
        struct proto_str server;        /* "fmud 0.1.0" */
        struct proto_str pub_endpoint;  /* where events and samples are published */
        uint64_t max_msg;
};

struct proto_assign {                   /* name=value, both text (as scenario_overrides) */
        struct proto_str name, value;
};

struct proto_load {
        struct proto_str path;          /* a .ssp, .ssd, folder or .fmu, absolute */
        struct proto_str out;           /* results CSV (absolute), or empty: the daemon's choice */
        struct proto_str input;         /* input CSV (absolute), or empty: none */
        /* Instead of path and input: the SHA-256 (hex) of a file put into the upload store. */
        struct proto_str content, input_content;
        uint32_t n_files;               /* an .ssd's files: relative name -> SHA-256 */
        const struct proto_assign *files;
        /* Overrides; has_* false: the scenario's own. */
        bool has_start, has_stop, has_step, has_budget, has_warp, has_decimation;
        double start, stop, step, budget, warp;
        uint64_t decimation;
        bool has_tolerance;             /* relative, 0 < tolerance < 1: every instance's */
        double tolerance;
        struct proto_str algorithm;     /* "jacobi", "gauss-seidel" or empty */
        struct proto_str iface;         /* "interface": "cs", "me" or empty (docs/fmuctl.md) */
        struct proto_str integrator;    /* Model Exchange: "bdf", "adams" or empty (bdf) */
        struct proto_str sandbox;       /* "strict", "basic", "off" or empty: the daemon's mode */
        bool strict;                    /* FMU warnings refuse the load too */
        bool force;                     /* out may replace a file that is not this client's results */
        bool rollback_on_fault;         /* every state saved before each step (scenario.h) */
        bool transient;                 /* unloaded when its connection stops renewing the lease */
        /* Paced runs: "none", "soft", "hard" or empty (the scenario's); µs past a deadline; µs spun */
        struct proto_str overrun;
        bool has_overrun_margin, has_spin;
        double overrun_margin_us, spin_us;
        uint32_t n_multirate;           /* component=factor */
        const struct proto_assign *multirate;
        uint32_t n_starts;              /* component.variable=value */
        const struct proto_assign *starts;
        uint32_t n_record;
        const struct proto_str *record;
        /* Real time (docs/realtime.md); has_* false and empty: the scenario's, else the daemon's. */
        bool has_rt_priority, has_rt_worker_priority;
        uint32_t rt_priority;           /* SCHED_FIFO 1..99 for the master thread; 0: none */
        uint32_t rt_worker_priority;    /* SCHED_FIFO 1..99 for the workers; 0: none */
        struct proto_str rt_cpus;       /* the master thread's cpu list, "0-1,3" */
        struct proto_str rt_worker_cpus;        /* the workers' cpu list */
        bool rt_best_effort;            /* a refused real-time option does not refuse the load */
        bool rt_mlock;                  /* every worker locks its memory (mlockall) */
        /* Rig ports (docs/scenarios.md): each list replaces the scenario's when not empty. */
        uint32_t n_rig_in, n_rig_out;
        const struct proto_str *rig_in;         /* "NAME" or "NAME=SAFE" */
        const struct proto_str *rig_out;        /* "NAME" */
        struct proto_str rig_policy;            /* "hold", "safe", "pause" or empty */
        bool has_rig_timeout;
        uint32_t rig_timeout_ms;                /* 1 to 60000 */
};
/*
 * put: one chunk of a file into the daemon's upload store (PROTOCOL.md).
 * data empty: a probe, answered with the offset the daemon has.
 */
#define PROTO_PUT_CHUNK         (1u << 20)      /* the largest data of one put */
struct proto_put {
        struct proto_str sha256;        /* 64 lowercase hex digits */
        uint64_t size;                  /* of the whole file */
        uint64_t offset;                /* where data starts */
        const void *data;               /* borrowed from the request */
        uint32_t len;
        struct proto_str kind;          /* "fmu", "ssp", "ssd", "csv" or empty ("fmu") */
};
struct proto_put_result {
        uint64_t offset;                /* bytes the daemon has: the next chunk starts here */
        bool have;                      /* the whole file is in the store, its SHA-256 checked */
};

struct proto_load_result {
        uint64_t session, generation;
        struct proto_str out;           /* the results file; empty: none */
        uint32_t n_warnings;            /* the FMUs' warnings, one formatted line each */
        const struct proto_str *warnings;
};

enum proto_state {
        PROTO_STATE_LOADING,
        PROTO_STATE_LOADED,
        PROTO_STATE_RUNNING,
        PROTO_STATE_PAUSED,
        PROTO_STATE_FINISHED,
        PROTO_STATE_FAULTED,
        PROTO_STATE_STOPPED,
        PROTO_STATE_COUNT,
};
const char *proto_state_name(enum proto_state s);      /* "loading", "loaded", ... */
int proto_state_parse(const char *s, size_t len);       /* or -1 */

struct proto_session_brief {            /* an entry of list */
        uint64_t session, generation;
        struct proto_str name;
        enum proto_state state;
        double time;
        bool transient;                 /* leased to the connection that loaded it */
        struct proto_str owner;         /* that connection, as the daemon names it; may be empty */
        struct proto_str user;          /* who loaded it: "uid 1000", "key <Z85>"; may be empty */
        struct proto_str kind;          /* "instance": an FMI-level instance; empty: a session */
};
struct proto_list_result {
        uint32_t n;
        const struct proto_session_brief *sessions;
};

enum proto_layer_state {
        PROTO_LAYER_ACTIVE,
        PROTO_LAYER_UNAVAILABLE,
        PROTO_LAYER_OFF,
        PROTO_LAYER_STATE_COUNT,
};
/* "active", "unavailable", "off"; NULL out of range. */
const char *proto_layer_state_name(enum proto_layer_state s);
int proto_layer_state_parse(const char *s, size_t len);         /* or -1 */
struct proto_layer {
        struct proto_str name;          /* "environment", "limits", "privileges", "namespaces", "landlock", "seccomp" */
        enum proto_layer_state state;   /* "active", "unavailable", "off" on the wire */
        struct proto_str detail;        /* the reason when unavailable; what holds when active */
};
struct proto_lateness {
        double p50_us, p99_us, p999_us, max_us;
};
struct proto_inst_status {
        struct proto_str name, fmu;
        int64_t pid;
        uint32_t multirate;
        uint64_t steps;
        double step_us_mean, step_us_max;       /* doStep round trip */
        double service_us_mean;                 /* the worker's own time per doStep */
        struct proto_str fault;                 /* empty when none */
        uint32_t n_layers;
        const struct proto_layer *layers;
        bool has_tolerance;                     /* given at initialization; false: none */
        double tolerance;
        /* A Model Exchange FMU integrated in its worker: has_integrator, and its counts. */
        bool has_integrator;
        struct proto_str integrator;            /* "bdf", "adams" */
        uint64_t me_steps, me_rhs_evals, me_root_evals, me_jac_evals;
        uint64_t me_events, me_event_iterations;
        /* A Scheduled Execution FMU: its partitions in activation order; empty: none. */
        struct proto_str partitions;
};
struct proto_rt_option {                /* a real-time option of a session (realtime.h) */
        struct proto_str name;          /* "master-priority", "worker-cpus", "dma-latency", ... */
        struct proto_str state;         /* "active" or "refused: REASON" (strerror) */
        struct proto_str instance;      /* "worker-mlock": whose worker; empty for the others */
};
struct proto_session_status {
        uint64_t session, generation;
        struct proto_str name;
        enum proto_state state;
        double time, start, stop, step;
        double budget;                          /* seconds per coupled step; INFINITY: none */
        uint64_t points;
        uint64_t extra_points;                  /* of points: extra (early return, time event) */
        uint64_t events;                        /* Event Modes run */
        uint64_t chained_steps;                 /* steps posted behind the one in flight */
        uint64_t worker_moves;                  /* heavy workers moved off a shared cpu */
        double real_time_factor, warp;
        double lag_s, lag_max_s;                /* paced: how late the last point was; the worst */
        /*
         * Paced: every point's lateness (µs after its deadline) over the
         * run and over the last 10 s, and the points later than the margin.
         */
        struct proto_lateness lateness, lateness_window;
        uint64_t overruns;
        struct proto_str overrun;               /* the policy: "none", "soft", "hard" */
        struct proto_str message;               /* the fault, or why it ended */
        struct proto_str recorder;              /* the results backend; empty: no results file */
        uint64_t rows_recorded, rows_dropped;   /* rows in the results file; rows lost (paced) */
        uint64_t samples_dropped;               /* subscriptions' samples lost on the way */
        /*
         * The results file: "writing", "complete" (closed, every row on disk),
         * "failed" (a write, its sync or close failed: see the log; the file
         * holds rows_recorded rows); empty: no results file.
         */
        struct proto_str results;
        struct proto_str out;                   /* the results file's path; empty: none */
        struct proto_str sandbox;               /* "strict", "basic", "off" */
        bool transient;                         /* leased to the connection that loaded it */
        struct proto_str owner;                 /* that connection; may be empty */
        struct proto_str user;                  /* who loaded it (as in the brief); may be empty */
        uint32_t n_insts;
        const struct proto_inst_status *insts;
        uint32_t n_realtime;                    /* the real-time options asked for */
        const struct proto_rt_option *realtime;
        /* Rig ports (shm/rig.h): has_rig false when the session declares none. */
        bool has_rig;
        struct proto_rig_status {
                struct proto_str state;         /* "none" (no rig yet), "attached", "vanished" */
                struct proto_str policy;        /* "hold", "safe", "pause" */
                bool in_force;                  /* the policy applies: the rig vanished */
                uint64_t applied, late, missing, dropped, bad;
        } rig;
};
struct proto_daemon_status {
        uint32_t version;
        struct proto_str server;
        double uptime_s;
        uint32_t sessions, workers;
        struct proto_str sandbox;
        struct proto_str mlock;         /* [realtime] mlock: "active", "refused: REASON"; empty: off */
        /* [realtime] worker_mlock_max_bytes (UINT64_MAX: no bound), and the locking workers' shares */
        uint64_t mlock_budget, mlock_used;
};

struct proto_warp { struct proto_target t; double factor; };
struct proto_step { struct proto_target t; uint64_t n; };
struct proto_run_until { struct proto_target t; double time; };
/* The result of start, pause, resume, stop, warp, step, run-until. */
struct proto_progress {
        enum proto_state state;
        double time;
        uint64_t points;
        struct proto_str message;
};

struct proto_get { struct proto_target t; uint32_t n; const struct proto_str *names; };
/* get's result: {values: [pv...]} in the order asked; arrays as msgpack arrays. */
struct proto_get_result { uint32_t n; const struct pv *const *values; };
struct proto_named_value { struct proto_str name; const struct pv *value; };
struct proto_set { struct proto_target t; uint32_t n; const struct proto_named_value *values; };

struct proto_subscribe {
        struct proto_target t;
        uint32_t n;
        const struct proto_str *names;  /* instance.variable; none: every recorded column */
        uint64_t decimation;            /* every n-th point; 0: 1 */
        /* Every communication point, not only the recorded ones (optional; false: recorded). */
        bool every_point;
};
struct proto_subscribe_result { struct proto_str topic; };
struct proto_unsubscribe { struct proto_target t; struct proto_str topic; };
struct proto_snapshot_result { uint64_t snapshot; double time; };
/*
 * snapshots (ops_snaps.c): the session's snapshots, oldest first. Each
 * with its id, the simulated time and the session generation it was taken
 * at, and the wall clock when it was taken (Unix seconds).
 */
struct proto_snapshot_info {
        uint64_t snapshot, generation;
        double time, taken;
};
struct proto_snapshots_result {
        uint32_t n;
        const struct proto_snapshot_info *snapshots;
};
/*
 * results (ops_results.c): a piece of the session's results file. The
 * request's max is 1 to PROTO_RESULTS_CHUNK bytes (has_max false:
 * PROTO_RESULTS_CHUNK); the result's data starts at offset, size is the
 * bytes of the file complete so far, done says the session has finished
 * recording and data reaches the end.
 */
#define PROTO_RESULTS_CHUNK     (1u << 20)
struct proto_results {
        struct proto_target t;
        uint64_t offset;
        bool has_max;
        uint64_t max;
};
struct proto_results_result {
        const void *data;               /* decode: points into the reply */
        uint32_t len;
        uint64_t offset, size;
        bool done;
        struct proto_str format;        /* "csv" */
};
struct proto_restore { struct proto_target t; uint64_t snapshot; };
/*
 * snapshot-export (ops_snapio.c): a piece of a snapshot's file by offset,
 * answered as results' pieces are (struct proto_results_result, format
 * "fmudsnap"); snapshot-import: a complete upload (put) of such a file,
 * answered as snapshot is (struct proto_snapshot_result).
 */
#define PROTO_SNAPSHOT_FORMAT   "fmudsnap"
struct proto_snapshot_export {
        struct proto_target t;
        uint64_t snapshot, offset;
        bool has_max;
        uint64_t max;
};
struct proto_snapshot_import { struct proto_target t; struct proto_str content; };
/* restore's result: progress, and the session with its new generation. */
struct proto_restore_result {
        struct proto_progress p;
        uint64_t session, generation;
};

/*
 * A sample on PUB, frame 2 after the topic: {session, generation, time,
 * point, flags, values: [...]}; the first sample of a subscription also
 * carries names: [...]. An event (topic "events"): {session, generation,
 * state, time, message}.
 */
#define PROTO_SAMPLE_FIRST      (1u << 0)       /* a subscription's first sample, with names */
#define PROTO_SAMPLE_DROPPED    (1u << 1)       /* samples were dropped before this one */
#define PROTO_SAMPLE_RESTORED   (1u << 2)       /* the first sample after a restore */
#define PROTO_SAMPLE_EXTRA      (1u << 3)       /* an extra point (early return), off the grid */
#define PROTO_SAMPLE_EVENT_LEFT (1u << 4)       /* the values before Event Mode at this time */
#define PROTO_SAMPLE_UNRECORDED (1u << 5)       /* an every-point sample of a point not recorded */
struct proto_sample {
        uint64_t session, generation;
        double time;
        uint64_t point;
        uint32_t flags;
        /*
         * When the point was done: CLOCK_MONOTONIC and CLOCK_REALTIME of the
         * daemon's host, ns (optional on the wire: 0 when absent).
         */
        uint64_t mono_ns, real_ns;
        uint32_t n;
        const struct proto_str *names;  /* n of them, or NULL */
        const struct pv *values;        /* decode: the values array */
};
struct proto_event {
        uint64_t session, generation;
        enum proto_state state;
        double time;
        struct proto_str message;
        /* Paced runs, as status has them then (0 otherwise; optional on the wire). */
        uint64_t overruns;
        double lateness_p99_us, lateness_max_us;
};

/*
 * Telemetry of a paced run, topic "t<session>", about once a second of
 * wall time while it runs: its pacing figures as status has them (the
 * same keys; instances with name, steps, stepUsMean, stepUsMax and
 * serviceUsMean only) and how many telemetry messages of the session were
 * lost before this one.
 */
struct proto_telemetry {
        uint64_t session, generation;
        double time;
        uint64_t points;
        double real_time_factor, warp;
        struct proto_lateness lateness, lateness_window;
        uint64_t overruns;
        uint64_t dropped;               /* this session's telemetry messages lost so far */
        uint32_t n_insts;
        const struct proto_inst_status *insts;
};

/* Requests. */
void proto_hello_encode(struct pw *w, uint64_t id, const struct proto_hello *a);
int proto_hello_decode(const struct pv *args, struct proto_hello *ret, char *err, size_t errlen);
void proto_load_encode(struct pw *w, uint64_t id, const struct proto_load *a);
int proto_load_decode(const struct pv *args, struct proto_load *ret, void **mem, char *err,
                      size_t errlen);
/* unload, start, pause, resume, stop, snapshot, status (session 0: the daemon's). */
void proto_target_encode(struct pw *w, uint64_t id, enum proto_op op, const struct proto_target *t);
int proto_target_decode(const struct pv *args, struct proto_target *ret, char *err, size_t errlen);
void proto_warp_encode(struct pw *w, uint64_t id, const struct proto_warp *a);
int proto_warp_decode(const struct pv *args, struct proto_warp *ret, char *err, size_t errlen);
void proto_step_encode(struct pw *w, uint64_t id, const struct proto_step *a);
int proto_step_decode(const struct pv *args, struct proto_step *ret, char *err, size_t errlen);
void proto_run_until_encode(struct pw *w, uint64_t id, const struct proto_run_until *a);
int proto_run_until_decode(const struct pv *args, struct proto_run_until *ret, char *err,
                           size_t errlen);
void proto_get_encode(struct pw *w, uint64_t id, const struct proto_get *a);
int proto_get_decode(const struct pv *args, struct proto_get *ret, void **mem, char *err,
                     size_t errlen);
void proto_set_encode(struct pw *w, uint64_t id, const struct proto_set *a);
int proto_set_decode(const struct pv *args, struct proto_set *ret, void **mem, char *err,
                     size_t errlen);
void proto_subscribe_encode(struct pw *w, uint64_t id, const struct proto_subscribe *a);
int proto_subscribe_decode(const struct pv *args, struct proto_subscribe *ret, void **mem,
                           char *err, size_t errlen);
void proto_unsubscribe_encode(struct pw *w, uint64_t id, const struct proto_unsubscribe *a);
int proto_unsubscribe_decode(const struct pv *args, struct proto_unsubscribe *ret, char *err,
                             size_t errlen);
void proto_restore_encode(struct pw *w, uint64_t id, const struct proto_restore *a);
/* snapshot-delete takes restore's arguments: decoded by proto_restore_decode(). */
void proto_snapshot_delete_encode(struct pw *w, uint64_t id, const struct proto_restore *a);
int proto_restore_decode(const struct pv *args, struct proto_restore *ret, char *err,
                         size_t errlen);
void proto_snapshot_export_encode(struct pw *w, uint64_t id, const struct proto_snapshot_export *a);
int proto_snapshot_export_decode(const struct pv *args, struct proto_snapshot_export *ret,
                                 char *err, size_t errlen);
void proto_snapshot_import_encode(struct pw *w, uint64_t id, const struct proto_snapshot_import *a);
int proto_snapshot_import_decode(const struct pv *args, struct proto_snapshot_import *ret,
                                 char *err, size_t errlen);
/* Whether s is a SHA-256 as the protocol spells it: 64 lowercase hex digits. */
bool proto_sha256_valid(struct proto_str s);
void proto_put_encode(struct pw *w, uint64_t id, const struct proto_put *a);
int proto_put_decode(const struct pv *args, struct proto_put *ret, char *err, size_t errlen);
void proto_results_encode(struct pw *w, uint64_t id, const struct proto_results *a);
int proto_results_decode(const struct pv *args, struct proto_results *ret, char *err,
                         size_t errlen);
/* list and shutdown have no arguments: proto_req_begin(w, id, op, 0). Any key is refused. */
int proto_noargs_decode(const struct pv *args, char *err, size_t errlen);

/* Results (the value after proto_reply_ok_begin()). */
void proto_hello_result_encode(struct pw *w, const struct proto_hello_result *r);
int proto_hello_result_decode(const struct pv *v, struct proto_hello_result *ret, char *err,
                              size_t errlen);
void proto_put_result_encode(struct pw *w, const struct proto_put_result *r);
int proto_put_result_decode(const struct pv *v, struct proto_put_result *ret, char *err,
                            size_t errlen);
void proto_load_result_encode(struct pw *w, const struct proto_load_result *r);
/*
 * The load result's warnings into out[0..max): returns how many there are
 * (0 when absent; at most PROTO_MAX_NAMES), or -EBADMSG. Strings point into v.
 */
int proto_load_result_warnings(const struct pv *v, struct proto_str *out, uint32_t max, char *err,
                               size_t errlen);
int proto_load_result_decode(const struct pv *v, struct proto_load_result *ret, char *err,
                             size_t errlen);
void proto_list_result_encode(struct pw *w, const struct proto_list_result *r);
int proto_list_result_decode(const struct pv *v, struct proto_list_result *ret, void **mem,
                             char *err, size_t errlen);
void proto_session_status_encode(struct pw *w, const struct proto_session_status *r);
int proto_session_status_decode(const struct pv *v, struct proto_session_status *ret, void **mem,
                                char *err, size_t errlen);
void proto_daemon_status_encode(struct pw *w, const struct proto_daemon_status *r);
int proto_daemon_status_decode(const struct pv *v, struct proto_daemon_status *ret, char *err,
                               size_t errlen);
void proto_progress_encode(struct pw *w, const struct proto_progress *r);
int proto_progress_decode(const struct pv *v, struct proto_progress *ret, char *err, size_t errlen);
/* get's result: the caller writes {values: [...]}: pw_map(w,1); pw_str(w,"values"); pw_array(w,n); ... */
void proto_get_result_begin(struct pw *w, uint32_t n);
/*
 * get's result with the time of the point its values are from, and set's
 * result {"time"}: where set's values were applied (ops_live.c).
 * proto_result_time() reads either's time: 0 with *ret_has false when the
 * reply has none, -EINVAL when it is not a finite number.
 */
void proto_get_result_begin_at(struct pw *w, uint32_t n, double time);
void proto_set_result_encode(struct pw *w, double time);
int proto_result_time(const struct pv *v, double *ret_time, bool *ret_has, char *err,
                      size_t errlen);
int proto_get_result_decode(const struct pv *v, struct proto_get_result *ret, void **mem,
                            char *err, size_t errlen);
void proto_subscribe_result_encode(struct pw *w, const struct proto_subscribe_result *r);
int proto_subscribe_result_decode(const struct pv *v, struct proto_subscribe_result *ret,
                                  char *err, size_t errlen);
void proto_restore_result_encode(struct pw *w, const struct proto_restore_result *r);
int proto_restore_result_decode(const struct pv *v, struct proto_restore_result *ret, char *err,
                                size_t errlen);
void proto_results_result_encode(struct pw *w, const struct proto_results_result *r);
/* Checks data's length against max (the request's) and offset + len against size. */
int proto_results_result_decode(const struct pv *v, uint64_t max,
                                struct proto_results_result *ret, char *err, size_t errlen);
void proto_snapshot_result_encode(struct pw *w, const struct proto_snapshot_result *r);
void proto_snapshots_result_encode(struct pw *w, const struct proto_snapshots_result *r);
/* *mem (free it) holds the entries, at most PROTO_MAX_ITEMS. */
int proto_snapshots_result_decode(const struct pv *v, struct proto_snapshots_result *ret,
                                  void **mem, char *err, size_t errlen);
int proto_snapshot_result_decode(const struct pv *v, struct proto_snapshot_result *ret, char *err,
                                 size_t errlen);

/* PUB bodies. proto_sample_begin writes all but the values, then pw_array(w, n) and n values follow. */
void proto_sample_begin(struct pw *w, const struct proto_sample *s);
int proto_sample_decode(const struct pv *v, struct proto_sample *ret, void **mem, char *err,
                        size_t errlen);
void proto_event_encode(struct pw *w, const struct proto_event *e);
int proto_event_decode(const struct pv *v, struct proto_event *ret, char *err, size_t errlen);
void proto_telemetry_encode(struct pw *w, const struct proto_telemetry *t);
/* *mem: the instances (free it); their strings point into v. */
int proto_telemetry_decode(const struct pv *v, struct proto_telemetry *ret, void **mem, char *err,
                           size_t errlen);

/*
 * A message an FMU logged (fmi3 logMessage, fmi2 logger), as published on
 * topic "l<session>" and kept for logs: seq counts the session's messages
 * from 1 (a gap: messages the rate limit dropped); status is the FMI status
 * (0 OK, 1 Warning, 2 Discard, 3 Error, 4 Fatal). The daemon bounds the
 * texts (PROTO_LOG_*_MAX) and strips control characters from them.
 */
#define PROTO_LOG_MESSAGE_MAX   1024    /* bytes of a message */
#define PROTO_LOG_CATEGORY_MAX  64      /* bytes of a category */
#define PROTO_LOG_INSTANCE_MAX  64      /* bytes of an instance name */
#define PROTO_LOG_TOPIC_PREFIX  "l"
/*
 * A join topic (PROTOCOL.md section 1): a subscriber's subscription to
 * "j<token>" is answered on that topic with an empty map, so a SUB socket
 * that receives it knows every subscription it made before is in force.
 */
#define PROTO_JOIN_TOPIC_PREFIX "j"
#define PROTO_JOIN_TOPIC_MAX    64      /* bytes of a join topic, prefix included */
struct proto_log {
        uint64_t session, seq;
        double time;                    /* the session's time when it was logged */
        struct proto_str instance, category, message;
        uint32_t status;
};
void proto_log_encode(struct pw *w, const struct proto_log *l);
int proto_log_decode(const struct pv *v, struct proto_log *ret, char *err, size_t errlen);
/* logs' result: {messages: [log...]}, oldest first. */
struct proto_logs_result { uint32_t n; struct proto_log *messages; };
void proto_logs_result_encode(struct pw *w, const struct proto_log *v, uint32_t n);
/* *mem (free()) holds ret->messages. */
int proto_logs_result_decode(const struct pv *v, struct proto_logs_result *ret, void **mem,
                             char *err, size_t errlen);
/* "OK", "Warning", "Discard", "Error", "Fatal"; "?" else. */
const char *proto_log_status_name(uint32_t status);

/* FMI-level instances: instantiate, fmi, free, detach (proto_fmi.h). */
#include "proto/proto_fmi.h"

#endif
