/*
 * control_join: answers to join subscriptions (control_join.h).
 *
 * Thread: the control thread, which owns the XPUB sockets.
 */
#include "control_join.h"

#include <stdbool.h>
#include <string.h>
#include <zmq.h>

#include "proto/proto.h"

#define JOIN_BODY       "\x80"          /* msgpack: an empty map */

/* A subscribe message (first byte 1) to a join topic of a bounded size. */
static bool is_join(const unsigned char *m, size_t len)
{
        size_t plen = strlen(PROTO_JOIN_TOPIC_PREFIX);

        return len > 1 + plen && len - 1 <= PROTO_JOIN_TOPIC_MAX && m[0] == 1 &&
               !memcmp(m + 1, PROTO_JOIN_TOPIC_PREFIX, plen) && !memchr(m + 1, '\0', len - 1);
}

/* Lossy: a full subscriber does not make the answer refused for all (control_join.h). */
static void answer(void *xpub, const unsigned char *topic, size_t len)
{
        int off = 0, on = 1;

        (void)zmq_setsockopt(xpub, ZMQ_XPUB_NODROP, &off, sizeof(off));
        if (zmq_send(xpub, topic, len, ZMQ_SNDMORE | ZMQ_DONTWAIT) >= 0)
                (void)zmq_send(xpub, JOIN_BODY, 1, ZMQ_DONTWAIT);
        (void)zmq_setsockopt(xpub, ZMQ_XPUB_NODROP, &on, sizeof(on));
}

unsigned ctl_join_serve(void *xpub, unsigned max,
                        void (*other)(void *ctx, const unsigned char *m, size_t len), void *ctx)
{
        unsigned char m[PROTO_JOIN_TOPIC_MAX + 2];
        unsigned n_read = 0;
        int n;

        /* zmq_recv() truncates a longer message and returns its full size. */
        while (n_read < max && (n = zmq_recv(xpub, m, sizeof(m), ZMQ_DONTWAIT)) >= 0) {
                n_read++;
                if ((size_t)n > sizeof(m))
                        continue;
                if (is_join(m, (size_t)n))
                        answer(xpub, m + 1, (size_t)n - 1);
                else if (other)
                        other(ctx, m, (size_t)n);
        }
        return n_read;
}
