/*
 * daemon_fixture: a real `fmud` for end-to-end tests. Each test gets its
 * own daemon on private ipc endpoints in a fresh temporary folder, with
 * its own FMU cache and scratch folder, started from the built binary and
 * stopped with SIGTERM.
 *
 * DESIGN: the daemon is forked and exec'd with --ready-fd; the fixture
 * waits (bounded) for its "READY\n" line, so a test never races the
 * daemon's bind. Stopping checks the daemon's whole promise about
 * shutdown: exit status 0, both socket files removed, no process left
 * that the daemon started (the test process becomes a child subreaper, so
 * an orphaned fmud-worker would be re-parented to it and found) and an
 * empty scratch folder. The daemon's stderr goes to DIR/fmud.log, printed
 * when a check fails.
 *
 * Starting one makes the test process's environment private
 * (support/private_env.h, below DIR/env): what the test starts afterwards
 * (fmuctl, the daemon itself) sees no other daemon's endpoint, key or cache.
 *
 * The daemon may read scenarios and FMUs below the test FMUs' folder, the
 * example scenarios, the master's test FMU folder and DIR itself (plus
 * the folders a test adds); results are written below DIR (its output
 * directory), those of a load that names no file below DIR/state.
 *
 * Threads: start and stop from the test's main thread (the daemon gets
 * PR_SET_PDEATHSIG from the forking thread).
 */
#ifndef FMUD_TESTS_DAEMON_FIXTURE_H
#define FMUD_TESTS_DAEMON_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "client/fmud.h"
#include "proto/proto.h"

struct fmud_daemon {
        char *dir;                      /* the temporary folder */
        char *endpoint;                 /* ipc://DIR/control.sock */
        char *pub_endpoint;             /* ipc://DIR/events.sock */
        char *control_sock, *events_sock;       /* the socket files */
        char *cache_dir, *scratch_dir;
        char *state_dir;                /* DIR/state: results of loads that name no file */
        char *log_path;                 /* the daemon's stderr */
        char *conf_dir;                 /* daemon_start_conf()'s config file's folder, or NULL */
        pid_t pid;                      /* 0 when not running */
};

/*
 * Start fmud with the fixture's arguments followed by extra (NULL or a
 * NULL-terminated list; a later --endpoint overrides the fixture's).
 * Waits for READY; aborts the test (with the daemon's log) on failure.
 */
void daemon_start(struct fmud_daemon *d, const char *const *extra);

/*
 * daemon_start() with --config naming a file of its own that holds conf
 * (in a folder freed with the daemon's).
 */
void daemon_start_conf(struct fmud_daemon *d, const char *conf);

/*
 * daemon_start() with the daemon's capability bounding set cut down to
 * caps (bit c: capability c), as systemd's CapabilityBoundingSet= does:
 * a root daemon then has only those. Needs CAP_SETPCAP.
 */
void daemon_start_bounded(struct fmud_daemon *d, uint64_t caps, const char *const *extra);

/*
 * SIGTERM, then assert: exit status 0, socket files gone, no process the
 * daemon started left, scratch folder empty. Frees the folder. A no-op on
 * a zeroed struct.
 */
void daemon_stop(struct fmud_daemon *d);

/*
 * Wait for a daemon that was asked to exit (shutdown) to end, then check
 * as daemon_stop() does. Frees the folder.
 */
void daemon_join(struct fmud_daemon *d);

/* For a failing test's teardown: SIGKILL, reap, free the folder, no checks. */
void daemon_kill(struct fmud_daemon *d);

/* dir/name, malloc'ed (aborts on OOM). */
char *daemon_path(const struct fmud_daemon *d, const char *name);

/* The daemon's log so far (caller frees), or an empty string. */
char *daemon_log(const struct fmud_daemon *d);

/* The pids whose parent is ppid, at most max of them; returns the count. */
size_t daemon_children(pid_t ppid, pid_t *ret, size_t max);

/* Whether process pid exists (a zombie counts). */
bool daemon_pid_alive(pid_t pid);

/* A whole file, NUL-terminated (caller frees), *ret_len its length; aborts on failure. */
char *daemon_slurp(const char *path, size_t *ret_len);

/* ---- Client side: libfmud against the fixture's daemon ----------------------- */

/* A connection to d's control endpoint (aborts on failure). */
struct fmud *daemon_connect(const struct fmud_daemon *d);

/* A proto_str over a C string (borrowed). */
struct proto_str daemon_str(const char *s);
/* Whether s holds exactly the C string c. */
bool daemon_str_eq(struct proto_str s, const char *c);

/* Load a (aborts with the daemon's message on failure); returns the session. */
uint64_t daemon_load(struct fmud *c, const struct proto_load *a, uint64_t *ret_generation);

/*
 * Poll session's status until its state is want (aborts after a
 * generous bound, or when it reaches another final state). *ret_status
 * (may be NULL) is borrowed as fmud_status()'s.
 */
void daemon_wait_state(struct fmud *c, uint64_t session, enum proto_state want,
                       struct proto_session_status *ret_status);

/* Assert the last call was refused with code; r is its return value. */
void daemon_assert_refused(struct fmud *c, int r, enum proto_err code, const char *what);

/* ---- Raw messages: what libfmud would never send, and replies read whole --------------- */

#define DAEMON_RAW_RECV_MS      30000   /* a reply that must come: a hang guard, not a measure */

struct daemon_raw {
        void *ctx, *s;                  /* a DEALER on the control endpoint */
};

struct daemon_raw_reply {
        void *buf;                      /* the reply's bytes */
        struct pv_doc doc;
        struct proto_reply rep;
        char message[1100];             /* rep.message, NUL-terminated (cut) */
};

void daemon_raw_open(const struct fmud_daemon *d, struct daemon_raw *r);
void daemon_raw_close(struct daemon_raw *r);
/* Send one frame (more: another follows). */
void daemon_raw_send(struct daemon_raw *r, const void *buf, size_t len, bool more);
/* Send w's bytes as one frame, then reset w. */
void daemon_raw_send_pw(struct daemon_raw *r, struct pw *w);
/* The next reply, decoded; asserts it comes and is well formed. Free with _fini. */
void daemon_raw_recv(struct daemon_raw *r, struct daemon_raw_reply *ret);
void daemon_raw_reply_fini(struct daemon_raw_reply *r);

#endif
