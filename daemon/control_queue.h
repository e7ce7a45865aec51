/*
 * control_queue: replies and publications handed to the control thread
 * from any thread (host's opts.complete and opts.publish).
 *
 * DESIGN: producers append under a mutex held for a pointer swap only and
 * poke an eventfd; they never wait for the control thread. Replies are
 * never dropped (their number is bounded by the requests in flight);
 * publications are bounded: past max_pubs queued ones a new one is
 * dropped and counted, so a flood of samples cannot grow memory without
 * limit. The consumer (the control thread) takes both lists at once when
 * the eventfd is readable.
 *
 * Threads: cq_push_* from any thread; cq_take() and cq_fd() from the
 * consumer only. Items taken belong to the consumer (cq_item_free()).
 */
#ifndef FMUD_DAEMON_CONTROL_QUEUE_H
#define FMUD_DAEMON_CONTROL_QUEUE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cq_item {
        struct cq_item *next;
        uint64_t token;         /* replies */
        char *topic;            /* publications */
        struct pub_drops *drops;        /* a reference (publications of a subscription) */
        void *buf;
        size_t len;
        /* A rig channel to hand out for request id of session (cq_push_rig()); owned. */
        bool has_fd;
        int fd;
        uint64_t id, session;
        bool gone;              /* session was freed (cq_push_gone()): no token, no buffer */
};

struct cq_list {
        struct cq_item *head, **tail;
        size_t n;
};

struct ctl_queue {
        pthread_mutex_t lock;
        struct cq_list replies, pubs;   /* protected by lock */
        size_t max_pubs;
        uint64_t dropped;               /* publications dropped; protected by lock */
        int efd;
};

int cq_init(struct ctl_queue *q, size_t max_pubs);
void cq_fini(struct ctl_queue *q);      /* frees what is still queued */
/* Take buf (free()). On out of memory the reply is lost and logged. */
void cq_push_reply(struct ctl_queue *q, uint64_t token, void *buf, size_t len);
/* Take fd, the rig channel of session asked for by request token (its id). */
void cq_push_rig(struct ctl_queue *q, uint64_t token, uint64_t id, uint64_t session, int fd);
/* Session is gone (host's opts.gone): queued with the replies, in order, never dropped. */
void cq_push_gone(struct ctl_queue *q, uint64_t session);
/*
 * Take body (free()) and the reference to drops (may be NULL); topic is
 * copied. Dropped, and counted in drops, when max_pubs are queued.
 */
void cq_push_pub(struct ctl_queue *q, const char *topic, void *body, size_t len,
                 struct pub_drops *drops);
/* Move everything queued into the caller's lists (FIFO); returns the drop count so far. */
uint64_t cq_take(struct ctl_queue *q, struct cq_item **ret_replies, struct cq_item **ret_pubs);
void cq_item_free(struct cq_item *it);       /* drops its reference to drops too */

#endif
