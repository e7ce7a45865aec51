/*
 * control: the daemon's control thread. ZeroMQ ROUTER sockets receive
 * requests (ipc always; tcp only with CURVE and the ZAP handler, zap.h),
 * PUB sockets send events and samples, and one zmq_poll loop serves
 * them together with an eventfd (replies and publications queued by
 * other threads, control_queue.h) and a signalfd.
 *
 * DESIGN: a request is [identity, (empty delimiter), body]; the body is
 * decoded with the configured limits (proto.h). hello, shutdown and the
 * daemon's own status (session 0) are answered here; every other request
 * goes to host_request() with a token that maps back to the peer
 * (control_peers.h). Before that, the asker's role (access.h) must allow
 * the request (else "denied" naming the role needed), and a request that
 * changes something is logged with who asked when its reply goes out. The loop never waits for a worker or a master: the
 * host answers through control_complete(), which only queues. A message
 * that is not a request gets a "bad-request" reply (with the id whenever
 * the bytes up to it can be read, proto_req_id_raw(); else 0) and one log
 * line; a message above max_message
 * never reaches us (ZMQ_MAXMSGSIZE drops the peer's connection).
 *
 * Socket files: ipc sockets are bound under umask 0077 (0007 with
 * socket_group), their mode is checked after bind (0600, or 0660 and the
 * group), and their parent directory is created (0700, or 0750 with the
 * group) when missing. control_free() unlinks the socket files and
 * removes the directories it created.
 *
 * The control and session threads never spin before they sleep: spinning
 * up to 100 µs (with requests in flight, after a command) halved remote
 * stepping on 2 cpus (bench/control -k: 1 475 to 1 822 points/s against
 * 2 976 to 3 423), as the spinners took the cpus the workers needed.
 *
 * Threads: everything here runs on the thread that calls control_run()
 * (the main thread), except control_complete() and control_publish(),
 * which any thread may call. Signals must be blocked in every thread
 * before control_new() (its sockets start ZeroMQ's I/O threads).
 */
#ifndef FMUD_DAEMON_CONTROL_H
#define FMUD_DAEMON_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/config.h"

struct control;
struct host;

/* Called on SIGHUP from control_run()'s thread. */
typedef void control_reload_fn(void *ctx, struct control *c);

/*
 * Create the ZeroMQ context, start the ZAP handler when tcp is
 * configured (refusing tcp when it cannot), bind every socket. cfg must
 * outlive c. Returns 0 or -errno with err.
 */
int control_new(const struct fmud_config *cfg, struct control **ret, char *err, size_t errlen);
/* The host that serves session requests (NULL: they are refused "internal"). */
void control_set_host(struct control *c, struct host *h);
void control_set_reload(struct control *c, control_reload_fn *fn, void *ctx);
/* host_opts.rig with ctx = the struct control: queues fd for the control thread. Any thread. */
void control_rig_fd(void *ctx, uint64_t token, uint64_t id, uint64_t session, int fd);
/* host_opts.complete / .publish with ctx = the struct control. Any thread. */
void control_complete(void *ctx, uint64_t token, void *buf, size_t len);
/* host's opts.gone: a session was freed; its remote rig's bridge is stopped by the loop. */
void control_gone(void *ctx, uint64_t session);
struct pub_drops;
void control_publish(void *ctx, const char *topic, void *body, size_t len,
                     struct pub_drops *drops);

/*
 * Serve until SIGTERM, SIGINT or a shutdown request. sigfd is a signalfd
 * for SIGTERM, SIGINT, SIGHUP and SIGPIPE. Writes "READY\n" to ready_fd
 * (then closes it) and notifies READY=1 first. Returns 0 or -errno.
 */
int control_run(struct control *c, int sigfd, int ready_fd);
/* Send the replies queued since control_run() returned (after host_free()). */
void control_flush(struct control *c);
/* Re-read the authorized keys (SIGHUP). 0 or -errno with err; no-op without tcp. */
int control_reload_keys(struct control *c, const char *path, char *err, size_t errlen);
/* Close the sockets (sending what is queued), stop ZAP, remove the socket files. NULL: no-op. */
void control_free(struct control *c);

#endif
