/*
 * control_join: the publishing sockets' inbound side, subscriptions.
 *
 * DESIGN: a PUB socket loses what it sends before a subscription is in
 * force, and a subscriber cannot see when that is: its handshake is done
 * before the daemon's XPUB applies what it subscribed. An XPUB hands each
 * new subscription up only after applying it, and a connection's
 * subscriptions in the order they were made, so answering a subscription
 * to a join topic (PROTO_JOIN_TOPIC_PREFIX) on that very topic tells the
 * subscriber that everything it subscribed before is in force. (After a
 * reconnection a SUB socket sends its subscriptions again in an order of
 * its own: a join pending then proves nothing, and the client's next join
 * does.) The answer is sent lossy: a full subscriber, whether the joiner
 * or anyone else whose subscription matches the join topic, loses it
 * rather than refusing it for everyone, and the joiner asks again with a
 * new token.
 */
#ifndef FMUD_DAEMON_CONTROL_JOIN_H
#define FMUD_DAEMON_CONTROL_JOIN_H

#include <stddef.h>

/*
 * Read at most max subscription messages queued on an XPUB socket
 * (without waiting) and answer each join; the others (ZMQ keeps its own
 * table) go to other(ctx, m, len) when given, a message of at most
 * PROTO_JOIN_TOPIC_MAX + 1 bytes. Returns how many were read: max when
 * more may be queued.
 */
unsigned ctl_join_serve(void *xpub, unsigned max,
                        void (*other)(void *ctx, const unsigned char *m, size_t len), void *ctx);

#endif
