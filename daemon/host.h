/*
 * host: the sessions a daemon hosts, each with its own master thread.
 *
 * DESIGN: the control thread hands every decoded request (proto.h) to
 * host_request() and goes on; it never waits for a worker or a master.
 * Requests that need the session's thread (load's workers, start, step,
 * get, set, snapshot, ...) are queued to that thread, which encodes the
 * reply and hands it to opts.complete; requests that only read (list,
 * status) are answered on the caller's thread from state the master
 * thread publishes (atomics, or a snapshot under a short mutex), so a
 * slow session never delays another client's status.
 *
 * Load: the path must lie below one of the allowed directories (after
 * realpath(); anything else is refused with PROTO_E_DENIED before a file
 * is opened), a results file the client names below one of the output
 * directories (writing is not reading: the allowed ones do not count);
 * an existing file there is replaced only when it is this client's
 * results file from an earlier run (host_out.c) or the load says force; the scenario is parsed and checked (PROTO_E_INVALID with the
 * diagnostics), then the session's thread starts the workers and
 * initializes them; the load reply comes when the session is LOADED (or
 * the load failed).
 *
 * Sessions are numbered from 1, never reused. Each has a generation,
 * which grows whenever the session's run is replaced (restore); a request
 * naming another generation than the current (other than 0) is refused
 * with PROTO_E_STALE and never applied.
 *
 * Replies (proto.h shapes): load {session, generation}; start, pause,
 * resume, stop, warp, step, run-until a progress {state, time, points
 * (done since load), message}; get {values}; subscribe {topic};
 * snapshot {snapshot, time}; restore a progress with {session,
 * generation} (the new generation); snapshot-export a piece of the
 * snapshot's file as results answers one; snapshot-import {snapshot,
 * time} of the new snapshot; unload, set and unsubscribe nil. step
 * and run-until run the session (state running) to their goal and pause
 * there (run-until: the last point at or before its time; a time before
 * the session's is PROTO_E_INVALID); steps asked for meanwhile take turns.
 * warp and subscribe, like step, only while the session can run (loaded,
 * running, paused; else PROTO_E_STATE). A set value is what get answers for that
 * variable until its instance steps (FMI 3.0 forbids other gets from it
 * meanwhile: refused with PROTO_E_STATE). After a restore the results file
 * goes on from the restored point (rows are appended, not rewound).
 * Unknown snapshot or topic: PROTO_E_INVALID.
 *
 * Every reply is bounded by opts.max_reply where it is built: a bigger
 * one is refused PROTO_E_TOO_LARGE (get stops at the value that crosses
 * the limit). list takes no arguments (any key: PROTO_E_BAD_REQUEST).
 *
 * Results file: rows reach it within opts.results_flush_ms, also while a
 * session is paced, paused or loaded; it is synced when the session ends.
 * A failed write (or sync, or close) faults the session at once: state
 * faulted, the message naming the file, the errno and the last row on
 * disk, status "results" failed, and the same line in the daemon's log
 * (LOG_ERR); rowsRecorded counts only rows the kernel confirmed written.
 *
 * Threads: host_request() and host_status_daemon() from one thread (the
 * control thread); opts.complete and opts.publish are called from any
 * thread (session threads and the caller's) and must be thread-safe and
 * must not block.
 */
#ifndef FMUD_DAEMON_HOST_H
#define FMUD_DAEMON_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "engine/master/realtime.h"
#include "engine/scenario/scenario.h"
#include "proto/proto.h"

struct host;

/* A reply to request token: one encoded msgpack reply (proto_reply_*); the callee takes buf (free()). */
typedef void host_complete_fn(void *ctx, uint64_t token, void *buf, size_t len);
/*
 * A PUB message: topic and one encoded body; the callee takes body
 * (free()) and a reference to drops (pub_drops.h; NULL for events): when
 * the message is lost on its way (a full queue, a subscriber that does not
 * keep up) it counts it there, and it drops the reference in any case.
 */
struct pub_drops;
typedef void host_publish_fn(void *ctx, const char *topic, void *body, size_t len,
                             struct pub_drops *drops);
/*
 * The answer to a rig request: fd is the session's rig channel (a dup the
 * callee owns and closes), to be handed to the asker (control_rig.c),
 * whose reply the callee sends for request id. From a session thread.
 */
typedef void host_rig_fn(void *ctx, uint64_t token, uint64_t id, uint64_t session, int fd);
/*
 * Session session is gone: off the registry, its workers on their way out
 * (unload, the lease of a transient session ran out, a failed load, the
 * host's end). From the session's thread, which must not wait: the callee
 * only queues (control.c stops the session's remote rig bridge).
 */
typedef void host_gone_fn(void *ctx, uint64_t session);
/* A line for the daemon's log at a syslog level (LOG_WARNING, ...); any session thread. */
typedef void host_log_fn(void *ctx, int level, const char *message);

enum host_sandbox { HOST_SANDBOX_STRICT, HOST_SANDBOX_BASIC, HOST_SANDBOX_OFF };

struct host_opts {
        const char *worker_path;        /* fmud-worker; required */
        char *const *worker_envp;       /* the workers' environment (daemon/worker_env.h); NULL: empty */
        const char *cache_dir;          /* FMU cache; required */
        const char *scratch_dir;        /* per-instance scratch directories go below; required */
        /* Strict workers do not see it: the run directory (worker/sandbox.h, hide); NULL: none. */
        const char *hide_dir;
        size_t n_allowed;               /* scenarios and FMUs only from below these */
        const char *const *allowed;
        size_t n_output;                /* results files a client names only below these */
        const char *const *output;
        /*
         * A load that names no results file writes STATE/results/session-ID-XXXXXX/
         * results.csv (host_out.c); NULL: such a load writes none.
         */
        const char *state_dir;
        enum host_sandbox sandbox;
        uint64_t mem_limit;             /* bytes of address space per worker; 0: default */
        uint64_t cpu_limit_s;           /* CPU seconds per worker; 0: none */
        bool kill_on_violation;         /* a refused system call kills the worker */
        /* A worker that lacks a layer its mode wants is refused (sandbox.require = all). */
        bool sandbox_require_all;
        /* A root daemon's workers run as these; 0: user "fmud", else nobody. */
        uid_t worker_uid;
        gid_t worker_gid;
        /*
         * The step budget of a scenario that sets none and is given none:
         * 0 (not set): the scenario default (SCENARIO_DEFAULT_BUDGET);
         * INFINITY: no budget; else seconds.
         */
        double default_budget_s;
        /* The same for the overrun policy, its margin and the spin (scenario.h): [master]. */
        enum scenario_overrun overrun;
        double overrun_margin_us, spin_us;
        /* Rows wait at most this long to be written (recorder.h, flush_ms); 0: 1000. */
        uint32_t results_flush_ms;
        uint64_t call_timeout_ns;       /* deadline of an FMI call; 0: default */
        /* Every session's real-time options unless its load or scenario says (host_rt.c). */
        struct rt_opts realtime;
        /*
         * What each locking worker may lock (its RLIMIT_MEMLOCK, 0: its
         * address-space limit) and the sum every locking worker of the host
         * may hold ([realtime] worker_mlock_bytes, worker_mlock_max_bytes;
         * 0: no worker locks).
         */
        uint64_t mlock_bytes, mlock_max_bytes;
        uint32_t max_sessions;          /* 0: 64 */
        /* The upload store (upload.h), CACHE/upload: [upload]'s limits; 0: the defaults. */
        uint64_t upload_max_file, upload_quota, upload_store_bytes;
        /* Bytes of one reply; a bigger one is refused PROTO_E_TOO_LARGE. 0: PROTO_MAX_MSG. */
        size_t max_reply;
        host_complete_fn *complete;
        void *complete_ctx;
        host_publish_fn *publish;
        void *publish_ctx;
        host_rig_fn *rig;               /* NULL: rig requests are refused */
        void *rig_ctx;
        host_gone_fn *gone;             /* NULL: nobody is told */
        void *gone_ctx;
        host_log_fn *log;               /* NULL: nothing is logged */
        void *log_ctx;
};

void host_opts_default(struct host_opts *o);

int host_new(const struct host_opts *opts, struct host **ret, char **ret_message);
/*
 * Stop every session at its next point, flush its results, free its
 * instances (workers reaped, scratch directories removed), join its
 * thread. Replies to queued requests are still completed (state error).
 */
void host_free(struct host *h);

/*
 * Serve one request (any op but hello, shutdown and the daemon's own
 * status (session 0), which the control thread answers). The reply goes to opts.complete, perhaps before this
 * returns. req and its pv_doc may be freed when this returns.
 */
void host_request(struct host *h, uint64_t token, const struct proto_req *req);

/*
 * Transient sessions (a load with transient = true) are leased to the
 * connection that loaded them: host_request_from() records peer as the
 * owner, host_renew() is called for every request a connection sends once
 * its sender is known and allowed to ask (only the session's user on the
 * owning connection renews a lease), and host_lease_check() stops and unloads (with a log line) each transient
 * session whose owner has sent nothing for grace_ns. A session still
 * loading is not expired (its owner waits for the load's reply).
 */
struct host_peer {
        uint8_t sock;                   /* which of the daemon's sockets */
        const void *id;                 /* the connection's routing id */
        size_t id_len;                  /* <= HOST_PEER_ID_MAX */
        const char *label;              /* how list, status and the log name it */
        /*
         * Who asks: "uid 1000" or "key <Z85>" (the daemon's access.h);
         * NULL: not known, nothing is checked. A load records it as the
         * session's user; a request on a session whose user is another is
         * refused PROTO_E_DENIED unless any_session is set (the caller
         * sets it for an admin and for requests that only read).
         */
        const char *user;
        bool any_session;
        /*
         * An admin: list and status show it a transient session's owner with
         * its routing id (others see that of their own sessions only), and it
         * may remove anyone's subscription.
         */
        bool admin;
        const char *role;               /* the asker's role, for the refusal's message */
        bool has_cred;                  /* a local peer: uid and gid are the kernel's word */
        uid_t uid;
        gid_t gid;
};
#define HOST_PEER_ID_MAX        255
#define HOST_PEER_LABEL_MAX     96

/* host_request() for a request from peer (NULL: none; a transient load is then refused). */
void host_request_from(struct host *h, uint64_t token, const struct proto_req *req,
                       const struct host_peer *peer);
/*
 * A request came from peer: the leases of the transient sessions it owns
 * (same socket and routing id, and, when peer->user is set, the session's
 * user) start again. Cheap without any.
 */
void host_renew(struct host *h, const struct host_peer *peer);
/*
 * Whether session has subscription n (topic "s<session>.<n>"), now.
 * Control thread.
 */
bool host_sub_live(struct host *h, uint64_t session, uint64_t n);
/*
 * The last subscriber of subscription n of session went away
 * (control_subs.h): the subscription is removed on the session's thread,
 * answered to no one and logged. Nothing when either no longer exists.
 * Control thread.
 */
void host_sub_gone(struct host *h, uint64_t session, uint64_t n);
/*
 * Expire the leases older than grace_ns. Returns the milliseconds until
 * the next lease could run out (>= 1), or -1 when no session is transient.
 */
long host_lease_check(struct host *h, uint64_t grace_ns);
/*
 * A stop of a running session is answered at its next point; one whose
 * step does not come back within HOST_STOP_GRACE_S of the stop (or its
 * step budget, when that is longer) has its steps in flight abandoned
 * (their workers killed, the session faulted, with a log line), as Ctrl-C
 * does to fmuctl run --local. Returns the
 * milliseconds until the next such grace runs out (>= 1), or -1 when no
 * stop is waited for. Control thread.
 */
#define HOST_STOP_GRACE_S 5
long host_stop_check(struct host *h);

/* For the daemon's status: sessions and live workers now. */
void host_counts(struct host *h, uint32_t *ret_sessions, uint32_t *ret_workers);
/* For the daemon's status: the locked-memory budget and the sessions' shares of it (host_mlock.c). */
void host_mlock_counts(struct host *h, uint64_t *ret_budget, uint64_t *ret_used);

/* Replace the allowed directories (SIGHUP); sessions already loaded keep running. */
int host_set_allowed(struct host *h, size_t n, const char *const *allowed);
/* Replace the output directories (SIGHUP), as host_set_allowed(). */
int host_set_output(struct host *h, size_t n, const char *const *output);

#endif
