/*
 * rig_bridge: a remote rig's way into its session's rig channel. The
 * daemon attaches to the channel exactly as a local rig does (rig_attach()
 * on a dup of the memfd) and relays it over ZeroMQ with CURVE
 * (proto/rig_wire.h, proto/PROTOCOL.md "Remote rigs"): each write message
 * from the remote rig becomes one rig_write(), each point the master
 * publishes one message to the remote rig.
 *
 * DESIGN: one bridge per remote rig, with its own ROUTER socket bound on
 * [rig] remote_endpoint (a port of its range, or one the kernel picks),
 * so the per-point traffic never passes the control socket, its queue or
 * the session's thread. The socket takes the control socket's server key
 * and ZAP domain (the same authorized_keys); beyond that it serves one
 * key, the asker's, and one connection: the first to present the token
 * (RIGW_TOKEN_LEN hex characters, good until the token's deadline).
 *
 * Two threads per bridge, each the only user of its sockets: the relay
 * thread polls the ROUTER and an inproc PAIR and does the writes; the
 * point thread waits on the point ring (rig_wait()), reads the newest
 * point and hands it, encoded, to the relay thread over the PAIR. Until
 * the hello the relay thread holds the newest of those points and sends
 * it after the ports, so a point read from the ring before the
 * hello (point 0 of a session not yet started, unless an earlier rig read
 * it) reaches the remote rig as it would a local rig reading the ring,
 * whichever of the hello and the point thread came first.
 * rig_write() and rig_read() use disjoint parts of struct rig, so the two
 * threads share it safely.
 *
 * Heartbeat: the bridge beats the channel (rig_beat_at()) only when a
 * message from the remote rig arrives; its own waiting does not beat
 * (rig_beat_by_caller()). A remote rig that goes silent is seen as a
 * local rig that vanished: the session's policy applies after its
 * timeout. A silence of RIG_BRIDGE_GONE_MS beyond that timeout, a bye,
 * the token's deadline passing unpresented, or rig_bridge_stop() ends
 * the bridge.
 *
 * Untrusted: every message (bounded by libzmq at RIG_BRIDGE_MAX_MSG, by
 * the decoder at RIGW_MAX_MSG). A message that does not decode, has the
 * wrong number of values or the wrong kind is bad: counted, answered
 * {t:"err", code:"bad"} and passed on to the master as a write it refuses
 * (for a point beyond its horizon), so the session's rig status counts it
 * with the other bad writes; a value of the wrong type for its port is
 * passed on as it is and refused by the master's own check.
 *
 * Threads: rig_bridge_start(), _done() and _stop() from one thread (the
 * control thread).
 */
#ifndef FMUD_DAEMON_RIG_BRIDGE_H
#define FMUD_DAEMON_RIG_BRIDGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RIG_BRIDGE_GONE_MS      1000    /* silence beyond the session's timeout that ends a bridge */
#define RIG_BRIDGE_MAX_MSG      (1 << 20)       /* libzmq drops the peer beyond this */

struct rig_bridge_params {
        void *zctx;                     /* the control thread's context (ZAP handler bound) */
        const char *endpoint;           /* tcp://ADDR:PORT, tcp://ADDR:LO-HI or tcp://ADDR:* */
        const char *secret_key_file;    /* the control socket's server key */
        int fd;                         /* the channel's memfd (a dup): taken, also on failure */
        uint64_t session;
        const char *key;                /* Z85: the only key served */
        const char *token;              /* RIGW_TOKEN_LEN hex characters */
        uint32_t token_ms;              /* the token's life, from the start */
};

struct rig_bridge;

/*
 * Attach to the channel, bind the socket and start the threads. 0 with
 * *ret and the bound endpoint in ep ("tcp://0.0.0.0:40123") and its port
 * in *ret_port, or -errno with err.
 */
int rig_bridge_start(const struct rig_bridge_params *p, struct rig_bridge **ret, char *ep,
                     size_t eplen, unsigned *ret_port, char *err, size_t errlen);
uint64_t rig_bridge_session(const struct rig_bridge *b);
/* Whether the bridge has ended by itself (rig_bridge_stop() still frees it). */
bool rig_bridge_done(const struct rig_bridge *b);
/*
 * Whether it is ending (its rig said bye, went silent or let its token
 * expire): rig_bridge_stop() then returns within a point slice (50 ms).
 */
bool rig_bridge_leaving(const struct rig_bridge *b);
/* End it (a bye to a connected remote rig), join its threads and free it. NULL: no-op. */
void rig_bridge_stop(struct rig_bridge *b);

#endif
