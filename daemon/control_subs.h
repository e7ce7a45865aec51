/*
 * control_subs: which sample topics ("s<session>.<n>", host_sub.c) have a
 * subscriber on a publishing socket, from the subscribe and unsubscribe
 * messages the XPUB sockets hand up, so that a subscription whose
 * subscribers have all gone (a watch killed, a dashboard whose network
 * dropped) is removed instead of holding its place for the session's life.
 *
 * DESIGN: an XPUB hands up a topic's subscribe when its first subscriber
 * on that socket comes and its unsubscribe when the last one goes, a
 * connection's going included. A topic is gone when no socket has a
 * subscriber left: a peer on the other socket subscribing and leaving
 * cannot end a subscription someone still reads. A topic that never had a
 * subscriber (a client that died between the reply and its SUBSCRIBE) is
 * not seen here, and stays until unsubscribed or unloaded. The table is
 * bounded: topics past CTL_SUBS_MAX are not followed.
 *
 * Thread: the control thread only.
 */
#ifndef FMUD_DAEMON_CONTROL_SUBS_H
#define FMUD_DAEMON_CONTROL_SUBS_H

#include <stddef.h>
#include <stdint.h>

#define CTL_SUBS_MAX    8192
#define CTL_TOPIC_MAX   48

struct ctl_subs {
        struct ctl_sub_topic {
                char topic[CTL_TOPIC_MAX];
                unsigned socks;         /* bit i: a subscriber on publishing socket i */
        } *v;
        size_t n, cap;
};

void ctl_subs_fini(struct ctl_subs *s);
/*
 * A subscription message m (first byte 1: subscribe, 0: unsubscribe) read
 * from publishing socket sock. Returns 1 when it ended the last
 * subscriber of a sample topic: its session in *ret_session, the topic
 * (NUL-terminated) in ret_topic; else 0.
 */
int ctl_subs_note(struct ctl_subs *s, int sock, const unsigned char *m, size_t len,
                  uint64_t *ret_session, char ret_topic[CTL_TOPIC_MAX]);

#endif
