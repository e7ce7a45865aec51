/*
 * libfmud_join: waiting until the SUB socket's subscriptions are in force.
 *
 * DESIGN: the daemon's XPUB applies a subscription some time after the
 * SUB socket makes it, and loses what it publishes meanwhile. A join
 * (PROTOCOL.md section 1) subscribes to a topic of its own, "j" and a
 * random token, and waits for the daemon's answer on it: the daemon gets a
 * connection's subscriptions in order, so once the answer is here every
 * earlier one is in force. The daemon sends the answer lossy (a full
 * subscriber loses it), so a join asks again with a new token every
 * JOIN_RETRY_MS until its deadline. What arrives before the answer was
 * published after the subscriptions it matches and is kept, in order,
 * for fmud_next(); so is what arrives while a subscribe request waits for
 * its reply (fmud_keep_pending()), so that the session's samples, caught
 * by the session's prefix meanwhile, neither fill the socket's queue nor
 * are lost. Past FMUD_JOIN_KEEP kept messages (more than the daemon
 * queues for a subscriber) or FMUD_JOIN_KEEP_BYTES of them, a message is
 * dropped, as the daemon would have dropped it, and as the daemon does,
 * the next sample of its topic, kept or read, is flagged
 * PROTO_SAMPLE_DROPPED.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "libfmud_int.h"
#include "proto/proto.h"

#define FMUD_JOIN_KEEP  65536
#define FMUD_JOIN_KEEP_BYTES    ((size_t)256 << 20)     /* of topics and bodies kept */
#define JOIN_RETRY_MS   250

/* The count bound; a variable only so that a test can reach it (libfmud_int.h). */
size_t libfmud_keep_max = FMUD_JOIN_KEEP;

struct fmud_early {
        zmq_msg_t topic, body;
        bool after_gap;                 /* a message of its topic was dropped before it */
};

/* Remember that a message of topic was dropped (the oldest topic goes past FMUD_GAP_TOPICS). */
static void gap_add(struct fmud *c, const char *topic, size_t len)
{
        if (len > FMUD_MAX_TOPIC)
                return;
        (void) fmud_gap_take(c, topic, len);    /* put back as the newest */
        if (c->n_gap == FMUD_GAP_TOPICS) {
                memmove(c->gap[0], c->gap[1], (FMUD_GAP_TOPICS - 1) * sizeof(c->gap[0]));
                c->n_gap--;
        }
        memcpy(c->gap[c->n_gap], topic, len);
        c->gap[c->n_gap++][len] = '\0';
}

bool fmud_gap_take(struct fmud *c, const char *topic, size_t len)
{
        for (unsigned i = 0; i < c->n_gap; i++)
                if (strlen(c->gap[i]) == len && !memcmp(c->gap[i], topic, len)) {
                        memmove(c->gap[i], c->gap[i + 1], (c->n_gap - i - 1) * sizeof(c->gap[0]));
                        c->n_gap--;
                        return true;
                }
        return false;
}

void fmud_early_clear(struct fmud *c)
{
        for (size_t i = c->early_at; i < c->n_early; i++) {
                zmq_msg_close(&c->early[i].topic);
                zmq_msg_close(&c->early[i].body);
        }
        free(c->early);
        c->early = NULL;
        c->n_early = c->early_at = c->cap_early = 0;
        c->early_bytes = 0;
}

int fmud_early_take(struct fmud *c, zmq_msg_t *topic, zmq_msg_t *body, bool *after_gap)
{
        struct fmud_early *e;

        if (c->early_at == c->n_early)
                return -EAGAIN;
        e = &c->early[c->early_at++];
        *after_gap = e->after_gap;
        c->early_bytes -= zmq_msg_size(&e->topic) + zmq_msg_size(&e->body);
        zmq_msg_move(topic, &e->topic);
        zmq_msg_move(body, &e->body);
        zmq_msg_close(&e->topic);
        zmq_msg_close(&e->body);
        if (c->early_at == c->n_early)
                fmud_early_clear(c);
        return 0;
}

/* Keep a message that came before the join's answer; its frames are moved. */
static int keep(struct fmud *c, zmq_msg_t *topic, zmq_msg_t *body)
{
        size_t bytes = zmq_msg_size(topic) + zmq_msg_size(body);
        struct fmud_early *v;

        if (c->n_early - c->early_at >= libfmud_keep_max ||
            bytes > FMUD_JOIN_KEEP_BYTES - c->early_bytes) {
                gap_add(c, zmq_msg_data(topic), zmq_msg_size(topic));
                return 0;
        }
        /* The ones taken already make room first: the array holds those not taken. */
        if (c->n_early == c->cap_early && c->early_at) {
                memmove(c->early, c->early + c->early_at,
                        (c->n_early - c->early_at) * sizeof(*c->early));
                c->n_early -= c->early_at;
                c->early_at = 0;
        }
        if (c->n_early == c->cap_early) {
                size_t cap = c->cap_early ? 2 * c->cap_early : 64;

                v = realloc(c->early, cap * sizeof(*v));
                if (!v)
                        return fmud_fail(c, -ENOMEM, "out of memory");
                c->early = v;
                c->cap_early = cap;
        }
        v = &c->early[c->n_early];
        v->after_gap = fmud_gap_take(c, zmq_msg_data(topic), zmq_msg_size(topic));
        zmq_msg_init(&v->topic);
        zmq_msg_init(&v->body);
        zmq_msg_move(&v->topic, topic);
        zmq_msg_move(&v->body, body);
        c->n_early++;
        c->early_bytes += bytes;
        return 0;
}

/*
 * Receive one message: 1 when it is the join's answer (join: NULL for
 * none), 0 when kept (or malformed: dropped, as fmud_next() would),
 * -EAGAIN when none is queued, other <0 on failure.
 */
static int recv_one(struct fmud *c, const char *join)
{
        zmq_msg_t topic, body;
        int r = 0;

        zmq_msg_init(&topic);
        zmq_msg_init(&body);
        if (zmq_msg_recv(&topic, c->sub, ZMQ_DONTWAIT) < 0) {
                r = errno == EAGAIN ? -EAGAIN : fmud_fail(c, -errno, "receive: %s",
                                                          zmq_strerror(errno));
                goto out;
        }
        if (!zmq_msg_more(&topic))
                goto out;
        if (zmq_msg_recv(&body, c->sub, ZMQ_DONTWAIT) < 0)
                goto out;
        if (zmq_msg_more(&body)) {
                fmud_drain(c->sub);
                goto out;
        }
        if (join && zmq_msg_size(&topic) == strlen(join) &&
            !memcmp(zmq_msg_data(&topic), join, strlen(join)))
                r = 1;
        else
                r = keep(c, &topic, &body);
out:
        zmq_msg_close(&topic);
        zmq_msg_close(&body);
        return r;
}

int fmud_keep_pending(struct fmud *c)
{
        int r;

        while ((r = recv_one(c, NULL)) == 0)
                ;
        return r == -EAGAIN ? 0 : r;
}

/* Subscribe to a new join topic (into join), unsubscribing the last one. */
static int ask(struct fmud *c, char *join, size_t len)
{
        unsigned char token[8];

        if (join[0])
                (void)zmq_setsockopt(c->sub, ZMQ_UNSUBSCRIBE, join, strlen(join));
        join[0] = '\0';
        if (getrandom(token, sizeof(token), 0) != (ssize_t)sizeof(token))
                return fmud_fail(c, -errno, "getrandom: %s", strerror(errno));
        snprintf(join, len, PROTO_JOIN_TOPIC_PREFIX "%02x%02x%02x%02x%02x%02x%02x%02x",
                 token[0], token[1], token[2], token[3], token[4], token[5], token[6], token[7]);
        if (zmq_setsockopt(c->sub, ZMQ_SUBSCRIBE, join, strlen(join)) < 0)
                return fmud_fail(c, -errno, "ZMQ_SUBSCRIBE: %s", zmq_strerror(errno));
        return 0;
}

int fmud_sub_join(struct fmud *c)
{
        int64_t deadline = c->timeout_ms < 0 ? -1 : fmud_now_ms() + c->timeout_ms, retry = 0;
        char join[PROTO_JOIN_TOPIC_MAX + 1] = "";
        int r = 0;

        while (r == 0 || r == -EAGAIN) {
                zmq_pollitem_t it = { .socket = c->sub, .events = ZMQ_POLLIN };
                int64_t now = fmud_now_ms();
                long left;
                int n;

                if (now >= retry) {
                        r = ask(c, join, sizeof(join));
                        if (r < 0)
                                break;
                        retry = now + JOIN_RETRY_MS;
                }
                if (deadline >= 0 && now >= deadline) {
                        r = fmud_fail(c, -ETIMEDOUT, "the daemon did not answer a join on '%s' "
                                      "within %d ms: its subscriptions may not be in force",
                                      c->pub_endpoint, c->timeout_ms);
                        break;
                }
                left = (long)(retry - now);
                if (deadline >= 0 && deadline - now < left)
                        left = (long)(deadline - now);
                n = zmq_poll(&it, 1, left);
                if (n < 0)
                        r = fmud_fail(c, -errno, "poll: %s", zmq_strerror(errno));
                else if (n > 0)
                        r = recv_one(c, join);
        }
        if (join[0])
                (void)zmq_setsockopt(c->sub, ZMQ_UNSUBSCRIBE, join, strlen(join));
        return r < 0 ? r : 0;
}
