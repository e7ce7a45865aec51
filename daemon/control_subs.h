/*
 * control_subs: which sample topics ("s<session>.<n>", host_sub.c) have a
 * subscriber on a publishing socket, from the subscribe and unsubscribe
 * messages the XPUB sockets hand up, so that a subscription whose
 * subscribers have all gone (a watch killed, a dashboard whose network
 * dropped for good) is removed instead of holding its place for the
 * session's life.
 *
 * DESIGN: an XPUB hands up a topic's subscribe when its first subscriber
 * on that socket comes and its unsubscribe when the last one goes, a
 * connection's going included. A topic with no subscriber left on any
 * socket is gone once a grace has passed without one coming back: a SUB
 * socket that reconnects after a network blip subscribes again, and a
 * client that unsubscribes its socket just before it sends its unsubscribe
 * request finds its subscription still there. A peer on the other socket
 * subscribing and leaving cannot end a subscription someone still reads.
 * Only topics of subscriptions that exist when their first subscriber
 * comes are followed (live()), so a peer subscribing to made-up topics
 * fills nothing and wakes no session. A topic that never had a subscriber
 * (a client that died between the reply and its SUBSCRIBE) is not seen
 * here, and stays until unsubscribed or unloaded. The table is bounded:
 * topics past CTL_SUBS_MAX are not followed.
 *
 * Thread: the control thread only.
 */
#ifndef FMUD_DAEMON_CONTROL_SUBS_H
#define FMUD_DAEMON_CONTROL_SUBS_H

#include <stddef.h>
#include <stdint.h>

#include <stdbool.h>

#define CTL_SUBS_MAX    8192    /* above the daemon's sessions times their subscriptions */
#define CTL_TOPIC_MAX   48

struct ctl_subs {
        struct ctl_sub_topic {
                char topic[CTL_TOPIC_MAX];
                uint64_t session, n;
                unsigned socks;         /* bit i: a subscriber on publishing socket i */
                int64_t gone_ms;        /* CLOCK_MONOTONIC ms when socks became 0; 0: live */
        } *v;
        size_t n, cap;
};

void ctl_subs_fini(struct ctl_subs *s);
/*
 * A subscription message m (first byte 1: subscribe, 0: unsubscribe) read
 * from socket sock at now_ms. A topic not followed yet is followed only
 * when live(ctx, session, n) says subscription n of session exists.
 */
void ctl_subs_note(struct ctl_subs *s, int sock, const unsigned char *m, size_t len,
                   int64_t now_ms, bool (*live)(void *ctx, uint64_t session, uint64_t n),
                   void *ctx);
/*
 * Each topic without a subscriber for grace_ms or more at now_ms goes to
 * gone(ctx, session, n) and is forgotten. Returns the milliseconds until
 * the next one could (>= 1), or -1 when none is pending.
 */
long ctl_subs_expire(struct ctl_subs *s, int64_t now_ms, int64_t grace_ms,
                     void (*gone)(void *ctx, uint64_t session, uint64_t n), void *ctx);

#endif
