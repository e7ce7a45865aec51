/*
 * libfmud: the C client library of fmud, for fmuctl and for remote masters.
 *
 * DESIGN: one struct fmud is one connection: a ZMQ DEALER socket to the
 * daemon's ROUTER (requests and replies, proto.h) and, once something is
 * subscribed, a SUB socket to the PUB endpoint the daemon names in its
 * hello reply (events and samples). fmud_connect() says hello and checks
 * the protocol version before it returns, so a connected handle is known
 * to talk to an fmud of the same protocol.
 *
 * Requests are synchronous: each call sends one request with a fresh id
 * and waits up to the timeout for the reply with that id. A reply to an
 * earlier request that timed out is read and dropped, never mistaken for
 * the current one. Every reply and every PUB message is untrusted and
 * decoded with proto's bounded decoder; a malformed one is -EPROTO.
 *
 * Return values: 0 on success, otherwise a negative value:
 *   FMUD_E_REFUSED (-EREMOTEIO)  the daemon refused the request;
 *                               fmud_errcode() gives the enum proto_err
 *                               and fmud_errmsg() the daemon's message
 *   -ETIMEDOUT                  no reply within the timeout (the
 *                               connection stays usable)
 *   -ECONNREFUSED               no daemon listens on an ipc:// endpoint
 *   -ECONNRESET                 the connection was lost while a request
 *                               was in flight (the daemon exited, or a
 *                               tcp peer stopped answering heartbeats)
 *   -EACCES                     the CURVE handshake failed on the keys:
 *                               the daemon does not list this client's
 *                               key, the server key is not the daemon's,
 *                               or one side has no CURVE (fmud_errmsg()
 *                               says which)
 *   -EPROTO                     a malformed reply or PUB message
 *   -EPROTONOSUPPORT            the daemon speaks another protocol version
 *   -EPROTOTYPE                 a value of another type than asked for
 *                               (fmud_get_f64)
 *   -EINVAL, -ENOMEM, -E2BIG, other -errno: local problems; a NULL
 *                               handle, or NULL where an argument is
 *                               needed, is -EINVAL before anything is
 *                               sent ("WHAT: ARG is missing")
 * fmud_errmsg() always describes the last failure: one line, except a
 * refusal whose message from the daemon has further lines (a scenario's
 * diagnostics), which follow after '\n'.
 *
 * Borrowed results: strings and values in results (struct proto_progress,
 * proto_session_status, proto_list_result, the pv values of fmud_get())
 * point into the last reply and stay valid until the next request on the
 * same handle. Those of fmud_next() (struct fmud_msg) stay valid until the
 * next fmud_next(); requests in between do not disturb them.
 *
 * Sessions: every session operation takes a struct proto_target {session,
 * generation}. Generation 0 means "whatever is current"; naming the
 * generation a load or restore returned makes the daemon refuse
 * (PROTO_E_STALE) a request meant for a run that has since been replaced.
 *
 * Security: ipc:// endpoints rely on the socket file's permissions. For
 * tcp://, give server_key (the daemon's Z85 public key) and secret_key
 * (this client's Z85 secret key; the public key is derived from it): the
 * connection then uses CURVE and the daemon admits only listed clients.
 *
 * Threads: a handle belongs to one thread at a time (ZMQ sockets are not
 * thread-safe). Separate handles are independent.
 */
#ifndef FMUD_CLIENT_FMUD_H
#define FMUD_CLIENT_FMUD_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FMUD_E_REFUSED          (-EREMOTEIO)
#define FMUD_TIMEOUT_DEFAULT    30000           /* ms per request */
#define FMUD_KEY_Z85_LEN        40              /* a CURVE key in Z85, without the NUL */
#define FMUD_MAX_TOPIC          256             /* bytes of a PUB topic, without the NUL */

struct fmud;

struct fmud_opts {
        int timeout_ms;                 /* per request; 0: FMUD_TIMEOUT_DEFAULT; < 0: forever */
        int connect_timeout_ms;         /* for hello; 0: timeout_ms */
        const char *client_name;        /* sent in hello, for the daemon's logs; NULL: "libfmud" */
        const char *server_key;         /* Z85 public key of the daemon: tcp with CURVE; NULL: none */
        const char *secret_key;         /* Z85 secret key of this client; required with server_key */
};

/*
 * Connect to endpoint ("ipc:///run/fmud/control.sock", "tcp://host:port"),
 * say hello and check the protocol version. o may be NULL (defaults).
 * Returns 0 with *ret set (free with fmud_close()), or a negative value as
 * above with *ret untouched and, when err is not NULL, the reason in
 * err[0..errlen) (one line).
 */
int fmud_connect(const char *endpoint, const struct fmud_opts *o, struct fmud **ret, char *err,
                 size_t errlen);
/*
 * The control endpoint fmuctl uses when given none, into buf:
 * $FMUD_ENDPOINT, else this user's own daemon's socket or the system
 * daemon's (docs/fmuctl.md, --endpoint). 0, or -EINVAL (no buf),
 * -ENAMETOOLONG when it does not fit in len bytes.
 */
int fmud_endpoint_default(char *buf, size_t len);
/* Close both sockets without waiting for unsent messages. NULL is a no-op. */
void fmud_close(struct fmud *c);

/* The last failure ("" when none; see above). Borrowed until the next call. */
const char *fmud_errmsg(const struct fmud *c);
/* The enum proto_err of the last refusal, or -1 (no refusal, or a code this side does not know). */
int fmud_errcode(const struct fmud *c);
/* Change the per-request timeout (as fmud_opts.timeout_ms). */
void fmud_set_timeout(struct fmud *c, int timeout_ms);
/* What the daemon said in hello: "fmud 0.1.0", and its PUB endpoint. Borrowed until fmud_close(). */
const char *fmud_server(const struct fmud *c);
const char *fmud_pub_endpoint(const struct fmud *c);

/* ---- Sessions ----------------------------------------------------------------- */

/* Load a scenario (paths absolute). The reply comes once the session is loaded. */
int fmud_load(struct fmud *c, const struct proto_load *args, uint64_t *ret_session,
              uint64_t *ret_generation);
/*
 * The warnings of the last successful fmud_load() (FMUs the daemon accepted
 * with warnings), one per line; NULL when there were none. Borrowed until
 * the next fmud_load() or fmud_close().
 */
const char *fmud_load_warnings(const struct fmud *c);
/* The last load's results file, as the daemon named it; NULL: none. Lives as the warnings. */
const char *fmud_load_out(const struct fmud *c);
int fmud_unload(struct fmud *c, const struct proto_target *t);

#define FMUD_SHA256_HEX         64              /* hex digits of a SHA-256 */
/*
 * Put the regular file at path into the daemon's upload store (the put
 * operation, PROTOCOL.md), for a load by content (proto_load.content,
 * .input_content, .files). kind: "fmu", "ssp", "ssd", "csv", or NULL: sent
 * as a hint the daemon does not rely on (it reads the content's kind from
 * its bytes). Hashes the file, asks the daemon what it has and sends the rest
 * in chunks of at most PROTO_PUT_CHUNK bytes: content the daemon already
 * has is not sent again, and an upload that broke off resumes where the
 * daemon's partial file ends. One request per chunk, each with the
 * handle's timeout. ret_sha256 (may be NULL): the file's SHA-256, 64
 * lowercase hex digits and a NUL; ret_sent (may be NULL): the bytes sent
 * (0: the daemon had the file). A refusal (FMUD_E_REFUSED) is the daemon's:
 * PROTO_E_LIMIT over the per-file size or the client's quota,
 * PROTO_E_INVALID for a file that changed while it was sent.
 */
int fmud_put_file(struct fmud *c, const char *path, const char *kind,
                  char ret_sha256[FMUD_SHA256_HEX + 1], uint64_t *ret_sent);

/* ret (may be NULL): the session's state after the operation; borrowed. */
int fmud_start(struct fmud *c, const struct proto_target *t, struct proto_progress *ret);
int fmud_pause(struct fmud *c, const struct proto_target *t, struct proto_progress *ret);
int fmud_resume(struct fmud *c, const struct proto_target *t, struct proto_progress *ret);
int fmud_stop(struct fmud *c, const struct proto_target *t, struct proto_progress *ret);
/* Warp w: w times real time; 0: as fast as possible. */
int fmud_warp(struct fmud *c, const struct proto_target *t, double w, struct proto_progress *ret);
/* Advance n communication points (a remote master drives time); the reply comes when done. */
int fmud_step(struct fmud *c, const struct proto_target *t, uint64_t n, struct proto_progress *ret);
/* Advance to the last communication point at or before time. */
int fmud_run_until(struct fmud *c, const struct proto_target *t, double time,
                   struct proto_progress *ret);

/* One session's status (session != 0); borrowed. */
int fmud_status(struct fmud *c, uint64_t session, struct proto_session_status *ret);
/* The daemon's own status; borrowed. */
int fmud_status_daemon(struct fmud *c, struct proto_daemon_status *ret);
/* Every session, briefly; borrowed. */
int fmud_list(struct fmud *c, struct proto_list_result *ret);

/* ---- Values -------------------------------------------------------------------- */

/*
 * Read n variables ("instance.variable"; the bare name in a one-FMU
 * session). *ret_values: n values in the order asked (arrays as PV_ARRAY);
 * borrowed.
 */
int fmud_get(struct fmud *c, const struct proto_target *t, const char *const names[], size_t n,
             const struct pv *const **ret_values);
/* One variable of a session (fmud_vars()); borrowed as the values of fmud_get(). */
struct fmud_var {
        struct proto_str name;          /* as get and set take it */
        struct proto_str type;          /* "Float64", "Int32", ..., "Clock" */
        struct proto_str causality;     /* "input", "output", "parameter", ... */
        struct proto_str variability;   /* "continuous", "discrete", "fixed", ... */
        struct proto_str unit;          /* empty: none */
        const struct pv *value;         /* as fmud_get() gives it; NULL: not readable now */
};
/*
 * Every variable of the session, in component order then each model
 * description's; *ret_time: the point the values are from. Borrowed.
 */
int fmud_vars(struct fmud *c, const struct proto_target *t, const struct fmud_var **ret_vars,
              size_t *ret_n, double *ret_time);
/*
 * Write n values at once, in a loaded, paused or running session (running:
 * all of them at the next communication point, before the step from it).
 */
int fmud_set(struct fmud *c, const struct proto_target *t, const struct proto_named_value *v,
             size_t n);
/*
 * fmud_set() that also gives the simulated time of the point at which the
 * values were applied (NaN from a daemon that does not say).
 */
int fmud_set_at(struct fmud *c, const struct proto_target *t, const struct proto_named_value *v,
                size_t n, double *ret_time);
/*
 * fmud_get() that also gives the time of the point the values are from:
 * while running, the last completed point (NaN from a daemon that does not say).
 */
int fmud_get_at(struct fmud *c, const struct proto_target *t, const char *const names[],
                size_t n, const struct pv *const **ret_values, double *ret_time);
/*
 * Typed conveniences. fmud_get_f64() reads numbers of every type (and
 * booleans as 0/1) as doubles, out[] written only on success;
 * fmud_set_f64() sets Float32 and Float64 variables (the daemon refuses a
 * float for an Int or Boolean one with PROTO_E_TYPE: set those with
 * fmud_set() and a PV_INT, PV_UINT or PV_BOOL value).
 */
int fmud_get_f64(struct fmud *c, const struct proto_target *t, const char *const names[], size_t n,
                 double out[]);
int fmud_set_f64(struct fmud *c, const struct proto_target *t, const char *const names[],
                 const double v[], size_t n);

/* ---- Snapshots ----------------------------------------------------------------- */

/* Save every instance's FMU state at the current point (PROTO_E_UNSUPPORTED when one cannot). */
int fmud_snapshot(struct fmud *c, const struct proto_target *t, uint64_t *ret_snapshot,
                  double *ret_time);
/* Go back to a snapshot; the session's generation grows: *ret_generation (may be NULL). */
int fmud_restore(struct fmud *c, const struct proto_target *t, uint64_t snapshot,
                 uint64_t *ret_generation);
/* The session's snapshots, oldest first; borrowed. */
int fmud_snapshots(struct fmud *c, const struct proto_target *t,
                   struct proto_snapshots_result *ret);
/* Free a snapshot (the workers' FMU states with it); its id is unknown from then on. */
int fmud_snapshot_delete(struct fmud *c, const struct proto_target *t, uint64_t snapshot);
/*
 * Export a snapshot to the file path (made whole beside it, then renamed
 * over it): every instance's serialized FMU state and the master's state,
 * in the daemon's snapshot format. PROTO_E_UNSUPPORTED when an FMU cannot
 * serialize its state (the message names it). fmud_snapshot_export_read()
 * reads one piece of it instead, as fmud_results_read() does (format
 * "fmudsnap").
 */
int fmud_snapshot_export(struct fmud *c, const struct proto_target *t, uint64_t snapshot,
                         const char *path);
struct fmud_results;
int fmud_snapshot_export_read(struct fmud *c, const struct proto_target *t, uint64_t snapshot,
                              uint64_t offset, void *buf, size_t max, struct fmud_results *ret);
/*
 * Import the snapshot file at path (fmud_put_file(), then snapshot-import)
 * into a session of the same scenario: a new snapshot, for fmud_restore().
 * *ret_snapshot, *ret_time (may be NULL): its id and simulated time.
 */
int fmud_snapshot_import(struct fmud *c, const struct proto_target *t, const char *path,
                         uint64_t *ret_snapshot, double *ret_time);

/* Ask the daemon to stop every session and exit. */
int fmud_shutdown(struct fmud *c);

/* ---- Results file ---------------------------------------------------------------- */

/* What fmud_results_read() read. */
struct fmud_results {
        size_t len;                     /* bytes copied to buf */
        uint64_t offset;                /* where they start in the file (the offset asked) */
        uint64_t size;                  /* the file's bytes complete so far */
        bool done;                      /* recording has ended and offset + len == size */
        char format[16];                /* "csv", "fmudsnap" */
};

/*
 * Read up to max bytes (at most PROTO_RESULTS_CHUNK, 1 MiB; 0: that) of
 * the session's results file from offset into buf (max bytes), through
 * the daemon (results: it reads the file it writes, so this works over
 * tcp too). Works while the session runs (fewer bytes than max when no
 * more are complete yet: read again later, or on the session's next
 * sample or event) and after it ended, until it is unloaded. Only the
 * session's owner or an admin may read it (PROTO_E_DENIED). An offset past
 * size is refused (PROTO_E_INVALID). Returns 0 and *ret, or as
 * fmud_call(). A whole file: read from offset 0, add len each time, until
 * done.
 */
int fmud_results_read(struct fmud *c, const struct proto_target *t, uint64_t offset, void *buf,
                      size_t max, struct fmud_results *ret);

/* ---- Events and samples (PUB) ------------------------------------------------------ */

/*
 * Subscribe to samples of n variables (none: every recorded column), every
 * decimation-th point (0: each). The SUB socket is connected on first use
 * and subscribed to the returned topic, which is copied to ret_topic
 * (NUL-terminated; -ENAMETOOLONG when it does not fit; may be NULL).
 * Samples then arrive through fmud_next(). PUB is lossy by nature: a
 * sample published before the subscription reached the daemon is missed.
 */
int fmud_subscribe(struct fmud *c, const struct proto_target *t, const char *const names[],
                   size_t n, uint64_t decimation, char *ret_topic, size_t topic_len);
/*
 * fmud_subscribe() with every_point: a sample at every communication
 * point (every decimation-th), not only at the points the session records
 * (those not recorded carry PROTO_SAMPLE_UNRECORDED).
 */
int fmud_subscribe_every(struct fmud *c, const struct proto_target *t, const char *const names[],
                         size_t n, uint64_t decimation, bool every_point, char *ret_topic,
                         size_t topic_len);
int fmud_unsubscribe(struct fmud *c, const struct proto_target *t, const char *topic);
/* Receive (on) or stop receiving (off) every session's state events (topic "events"). */
int fmud_events(struct fmud *c, bool on);
/*
 * Receive (on) or stop receiving (off) what session's FMUs log (topic
 * "l<session>", FMUD_MSG_LOG); one session at a time. Lossy like samples:
 * fmud_logs() has what came before.
 */
int fmud_logs_follow(struct fmud *c, uint64_t session, bool on);
/*
 * The messages session's FMUs logged that the daemon keeps, oldest first
 * (ret borrowed until the next call on c).
 */
int fmud_logs(struct fmud *c, const struct proto_target *t, struct proto_logs_result *ret);

/*
 * Receive (on) or stop receiving (off) the telemetry of a paced session
 * (topic "t<session>", about once a second while it runs paced): one
 * session at a time, a call with on for another replaces it.
 */
int fmud_telemetry(struct fmud *c, uint64_t session, bool on);

enum fmud_msg_kind {
        FMUD_MSG_SAMPLE = 1, FMUD_MSG_EVENT = 2, FMUD_MSG_LOG = 3, FMUD_MSG_TELEMETRY = 4
};

struct fmud_msg {
        enum fmud_msg_kind kind;
        const char *topic;              /* NUL-terminated */
        /*
         * FMUD_MSG_SAMPLE: time, point, flags (PROTO_SAMPLE_*: first, dropped,
         * restored, extra, eventLeft, unrecorded), the wall clock when the
         * point was done (mono_ns: the daemon host's CLOCK_MONOTONIC,
         * real_ns: its CLOCK_REALTIME; 0 from a daemon that does not send
         * them) and the values; names filled in from the subscription when
         * this sample carries none (NULL when unknown).
         */
        struct proto_sample sample;
        struct proto_event event;       /* FMUD_MSG_EVENT */
        struct proto_log log;           /* FMUD_MSG_LOG */
        struct proto_telemetry telemetry;       /* FMUD_MSG_TELEMETRY */
};

/*
 * Wait up to timeout_ms (< 0: forever, 0: do not wait) for the next event
 * or sample. Returns 0 with *ret filled (borrowed until the next
 * fmud_next()), -EAGAIN when nothing came in time, -EPROTO for a malformed
 * message (it is dropped; call again), -ENOTCONN when nothing is
 * subscribed.
 */
int fmud_next(struct fmud *c, int timeout_ms, struct fmud_msg *ret);

/* ---- Helpers --------------------------------------------------------------------- */

/* A NUL-terminated copy of a proto_str into buf (truncated to len - 1); returns buf. */
const char *fmud_str(struct proto_str s, char *buf, size_t len);

/*
 * Parse a value as written on a command line (surrounding blanks ignored):
 *   true, false                   PV_BOOL
 *   -12                           PV_INT (negative integers)
 *   12, 0x1f                      PV_UINT
 *   1.5, -2e-3, inf, nan          PV_FLOAT
 *   "text" (escapes \" \\ \n \t)  PV_STR of the text between the quotes
 *   hex:0aff10, hex:              PV_BIN of the bytes, two hex digits (any case) each
 *   [1, 2.5, "a", [true]]         PV_ARRAY of such values (nested up to PROTO_MAX_DEPTH)
 *   anything else                 PV_STR of the text as given
 * Returns 0 with *ret (free with fmud_value_free()), -EINVAL with err
 * (may be NULL) for an unterminated quote, a malformed array, an
 * integer out of range or bad hex after "hex:", -ENOMEM.
 */
int fmud_value_parse(const char *text, struct pv **ret, char *err, size_t errlen);
void fmud_value_free(struct pv *v);
/*
 * Format a value as fmud_value_parse() reads it back (strings quoted,
 * floats in the shortest form that round-trips, Binary as hex: and
 * lowercase hex). Returns the length it
 * needed (as snprintf); buf is NUL-terminated when len > 0.
 */
size_t fmud_value_format(const struct pv *v, char *buf, size_t len);

/*
 * Rig ports (docs/scenarios.md "Rig ports"): a rig process exchanges a
 * session's rig inputs and outputs with its master at every point through
 * a shared-memory channel the daemon hands over (proto/PROTOCOL.md "rig").
 * The connection's endpoint chooses the transport: over ipc the channel
 * itself is mapped; over tcp the same calls go through a bridge the daemon
 * starts for the rig (proto/PROTOCOL.md "Remote rigs"), one message each
 * way per point with the connection's CURVE keys, so a rig program runs
 * unchanged against a remote daemon (it needs [rig] remote_endpoint). The
 * caller must be allowed to set the session. A struct fmud_rig is used by
 * one thread; it outlives c.
 */
struct fmud_rig;
/* A rig port: its name ("component.variable") and type ("Float64", "Int32", "Boolean", ...). */
struct fmud_rig_port {
        const char *name;
        const char *type;
};
/* A point whose outputs the master published. */
struct fmud_rig_point {
        uint64_t point;                 /* its index on the grid, 0 at the start time */
        double time;
        uint64_t skipped;               /* points published before it and never read */
};
/*
 * Open session's rig channel: a rig request, then the token presented on
 * the daemon's rig socket, which passes the channel (over tcp: on the
 * bridge's port, which answers the ports). 0 and *ret, or FMUD_E_REFUSED
 * (fmud_errmsg(): why; a session without rig ports, a user not allowed to
 * set it, a daemon that serves no remote rigs, a session that already
 * has a rig: one rig at a time, local or remote; a local rig holds the
 * channel while heard from within the session's rigTimeoutMs or for 1 s
 * after it opened, a remote rig's bridge for its whole life),
 * -ETIMEDOUT (no bridge answered) or -errno.
 */
int fmud_rig_open(struct fmud *c, uint64_t session, struct fmud_rig **ret);
/* The inputs (out false) or outputs (true), in the order values are written and read. Borrowed. */
const struct fmud_rig_port *fmud_rig_ports(const struct fmud_rig *rig, bool out, size_t *ret_n);
/*
 * Write the n inputs (n must be the number of inputs) for the point after
 * the last one fmud_rig_wait() gave (point 0 before any): applied whole,
 * once, at the start of the step from that point. 0, -EINVAL (n),
 * -ENOSPC (the master is behind: nothing written), -EPROTO, or
 * -EOWNERDEAD: this rig was silent longer than the session's rigTimeoutMs
 * and another rig has taken the channel (this one is done). Over tcp the
 * write is sent, and a write the master has no room for is answered by
 * the bridge, not reported here; -ENOSPC is a full send queue, -EPIPE a
 * bridge that has ended. -EPIPE too, locally, once the session is unloaded
 * (or its daemon stops, or was killed: seen where fmud_rig_wait() waits).
 */
int fmud_rig_write(struct fmud_rig *rig, const double *in, size_t n);
/*
 * Wait up to timeout_ms (< 0: for ever) for a point newer than the last
 * one given, into *pt (the newest published; the ones it passed over are
 * counted in pt->skipped). 0, -ETIMEDOUT, -EPROTO (a broken channel) or
 * -EOWNERDEAD (as fmud_rig_write()); -EPIPE once the session is unloaded
 * or its daemon stops, after the points it published have been given
 * (locally within a heartbeat's slice, see below), and over tcp when the
 * bridge has ended for another reason (the rig was silent too long). A wait
 * beats every quarter of the session's rigTimeoutMs, 10 ms at most. Locally,
 * while it waits it gives the cpu to whatever else is runnable there
 * (sched_yield), then sleeps: it never spins, so a rig may share a cpu with
 * the session's workers.
 */
int fmud_rig_wait(struct fmud_rig *rig, int timeout_ms, struct fmud_rig_point *pt);
/*
 * The outputs (n must be their number) of the point fmud_rig_wait() gave
 * last, and that point in *pt (may be NULL). 0, -EINVAL or -EAGAIN (none yet).
 */
int fmud_rig_read(struct fmud_rig *rig, double *out, size_t n, struct fmud_rig_point *pt);
/* Unmap and close the channel (over tcp: say bye, ending the bridge): the rig stops beating, and the session's rigPolicy applies. NULL: no-op. */
void fmud_rig_close(struct fmud_rig *rig);

/*
 * Create a CURVE key pair: NAME.key (the secret key, mode 0600) and
 * NAME.pub (the public key), each one Z85 line. Never overwrites: -EEXIST
 * when either exists. Returns 0 or -errno with err (may be NULL).
 */
int fmud_keygen(const char *name, char *err, size_t errlen);
/* Read a key file (one Z85 key, blanks around it ignored) into ret. 0 or -errno with err. */
int fmud_key_read(const char *path, char ret[FMUD_KEY_Z85_LEN + 1], char *err, size_t errlen);

/* ---- FMI-level instances: remote masters (PROTOCOL.md "instantiate", "fmi") ---------------- */

/*
 * A new instance of a Co-Simulation FMU in its own sandboxed worker in the
 * daemon (a->fmu or a->content; a->transient: leased to this connection).
 * *ret_instance: its number, which fmi calls, status, logs and free take.
 */
int fmud_instantiate(struct fmud *c, const struct proto_instantiate *a, uint64_t *ret_instance);
/* Free the instance and its worker (its FMU states with it). */
int fmud_free_instance(struct fmud *c, uint64_t instance);
/* Make this connection's transient session or instance permanent (no lease). */
int fmud_detach(struct fmud *c, uint64_t session);

/*
 * A batch of FMI calls on one or many instances, sent as one request by
 * fmud_fmi_submit() and made in order: typically set inputs, doStep and
 * get outputs of every instance of a master's step. fmud_fmi_add() takes
 * the calls without arguments ("enterInitializationMode" with no
 * experiment, "exitInitializationMode", "enterEventMode", "enterStepMode",
 * "updateDiscreteStates", "getFMUState" (a new state), "reset",
 * "terminate", "enterConfigurationMode", "exitConfigurationMode");
 * fmud_fmi_add_state() those of a state ("getFMUState" to overwrite,
 * "setFMUState", "freeFMUState", "serializeFMUState"). The _n forms take
 * n_values values for n_vr value references: an array variable has one
 * value per element (FMI 3.0 section 2.2.7.1), counted with the
 * structural parameters as set, and none where they size it 0 (section
 * 2.4.7.2; values may then be NULL): the worker refuses another count.
 * Adding returns 0, -E2BIG past PROTO_FMI_MAX_CALLS calls,
 * PROTO_FMI_MAX_VALUES value references or PROTO_FMI_MAX_ELEMENTS values,
 * -EINVAL for a missing argument (a call not in the form's list above:
 * "doStep" has fmud_fmi_add_do_step(), and so on). Clear a batch to reuse it.
 */
struct fmud_batch;
struct fmud_batch *fmud_fmi_batch_new(void);
void fmud_fmi_batch_free(struct fmud_batch *b);
void fmud_fmi_batch_clear(struct fmud_batch *b);
int fmud_fmi_add(struct fmud_batch *b, uint64_t instance, const char *fn);
int fmud_fmi_add_state(struct fmud_batch *b, uint64_t instance, const char *fn, uint64_t state);
int fmud_fmi_add_set_f64(struct fmud_batch *b, uint64_t instance, const uint32_t vr[],
                         const double values[], size_t n);
int fmud_fmi_add_get_f64(struct fmud_batch *b, uint64_t instance, const uint32_t vr[], size_t n);
int fmud_fmi_add_set_f64_n(struct fmud_batch *b, uint64_t instance, const uint32_t vr[],
                           size_t n_vr, const double values[], size_t n_values);
int fmud_fmi_add_get_f64_n(struct fmud_batch *b, uint64_t instance, const uint32_t vr[],
                           size_t n_vr, size_t n_values);
int fmud_fmi_add_set_u64(struct fmud_batch *b, uint64_t instance, const uint32_t vr[],
                         const uint64_t values[], size_t n);
int fmud_fmi_add_do_step(struct fmud_batch *b, uint64_t instance, double t, double h);
/*
 * Send the batch and wait for its results. 0: every call was made. A call
 * refused (by the worker's state machine or checks) or answered Discard,
 * Error or Fatal ends the batch: FMUD_E_REFUSED, fmud_errcode() the code
 * (PROTO_E_STATE, PROTO_E_TYPE, ...), fmud_errmsg() "calls[1] (instance
 * 3): fmi3DoStep: fmi3DoStep must not be called in Instantiated",
 * fmud_fmi_refused() its index, and the results of the calls before it
 * stay readable. A batch refused whole (an unknown instance, another
 * user's) is FMUD_E_REFUSED with fmud_fmi_refused() -1.
 */
int fmud_fmi_submit(struct fmud *c, struct fmud_batch *b);
/* The last submit's results (borrowed from the handle's last reply). */
size_t fmud_fmi_count(const struct fmud_batch *b);
long fmud_fmi_refused(const struct fmud_batch *b);
const struct pv *fmud_fmi_result(const struct fmud_batch *b, size_t i);
/* Call i's values (a get of n Float64; out may be NULL for 0): 0, -EINVAL, -EPROTO (another count), -EPROTOTYPE. */
int fmud_fmi_f64(const struct fmud_batch *b, size_t i, double out[], size_t n);
struct fmud_step_result {
        bool event_handling_needed, terminate_simulation, early_return;
        double last_successful_time;
};
/* Call i's doStep outcome: 0, -EINVAL, -EPROTO. */
int fmud_fmi_step(const struct fmud_batch *b, size_t i, struct fmud_step_result *ret);
/* Call i's FMU state handle (getFMUState, deserializeFMUState): 0, -EINVAL, -EPROTO. */
int fmud_fmi_state(const struct fmud_batch *b, size_t i, uint64_t *ret);

#ifdef __cplusplus
}
#endif

#endif
