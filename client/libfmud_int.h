/*
 * libfmud internals shared by libfmud*.c: the connection, the last reply
 * (which borrowed results point into) and the PUB side.
 *
 * DESIGN: two borrow slots. The reply slot (reply_msg, reply_doc,
 * reply_mem) holds the last request's reply and is released when the next
 * request starts; the PUB slot (pub_*) holds the last fmud_next() message
 * and is released by the next fmud_next(). So a caller may read a sample
 * and query status in between without losing either.
 */
#ifndef FMUD_CLIENT_LIBFMUD_INT_H
#define FMUD_CLIENT_LIBFMUD_INT_H

#include <stdarg.h>
#include <stdint.h>
#include <time.h>
#include <zmq.h>

#include "fmud.h"

#define FMUD_MAX_ENDPOINT       1024

#define FMUD_GAP_TOPICS 16              /* topics with a dropped message, remembered */

struct fmud_sub {
        char *topic;
        uint32_t n;                     /* names known (0: none yet) */
        struct proto_str *names;        /* n of them, pointing into blob */
        char *blob;
};

struct fmud {
        void *ctx, *dealer, *sub;
        void *mon;                      /* PAIR: the dealer's disconnections and handshakes */
        /*
         * What the monitor said of the handshakes: one succeeded (since the
         * last failure), the last failure's event (0: none) and value.
         */
        bool shaken;
        uint16_t hs_event;
        uint32_t hs_value;
        int timeout_ms;
        uint64_t next_id;
        char endpoint[FMUD_MAX_ENDPOINT];
        char *server, *pub_endpoint;
        char server_key[FMUD_KEY_Z85_LEN + 1], secret_key[FMUD_KEY_Z85_LEN + 1];
        bool curve;
        struct pw w;

        zmq_msg_t reply_msg;            /* the reply slot */
        struct pv_doc reply_doc;
        void *reply_mem;

        zmq_msg_t pub_msg;              /* the PUB slot */
        struct pv_doc pub_doc;
        void *pub_mem;
        char pub_topic[FMUD_MAX_TOPIC + 1];
        const struct proto_str *pub_names;

        struct fmud_early *early;       /* published before a join's answer (libfmud_join.c) */
        size_t n_early, early_at, cap_early;    /* kept, taken of them, room */
        size_t early_bytes;             /* of the kept messages not taken */
        /*
         * Topics of which a message was dropped rather than kept: the
         * next one of the topic, kept or read, is flagged DROPPED
         * (libfmud_join.c); the oldest is forgotten past FMUD_GAP_TOPICS.
         */
        char gap[FMUD_GAP_TOPICS][FMUD_MAX_TOPIC + 1];
        unsigned n_gap;
        bool pub_after_gap;             /* the message in the PUB slot is such a next one */
        bool keep_sub;                  /* fmud_call() keeps what the SUB socket gets meanwhile */

        struct fmud_sub *subs;
        size_t n_subs;
        bool events_on;
        char logs_topic[32];            /* a followed session's FMU messages; "": none */
        char telem_topic[32];           /* "t<session>" followed (fmud_telemetry()); "": none */

        int errcode;
        char errmsg[4096];
        char *load_warnings;            /* the last load's warnings, a line each; NULL: none */
        char *load_out;                 /* the last load's results file; NULL: none */
};

/* Record the last failure; returns r. */
int fmud_fail(struct fmud *c, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/*
 * An argument the call needs is NULL (or c itself): -EINVAL, said as
 * "WHAT: ARG is missing" where there is a handle to say it in.
 */
int fmud_missing(struct fmud *c, const char *what, const char *arg);

/* Free the last reply (its document, memory and message). */
void fmud_release_reply(struct fmud *c);
/*
 * Begin a request: release the reply slot and return the id to encode it
 * with (into c->w, which is reset).
 */
uint64_t fmud_begin(struct fmud *c);
/*
 * Send c->w and wait for the reply with id. Returns 0 with *ret_result
 * (borrowed, the reply slot), FMUD_E_REFUSED, -ETIMEDOUT, -EPROTO, ...
 * what names the operation in messages ("load").
 */
int fmud_call(struct fmud *c, uint64_t id, const char *what, const struct pv **ret_result);
/*
 * names[] as proto_strs (caller frees *ret): -E2BIG over PROTO_MAX_ITEMS,
 * -EINVAL for a NULL, empty or over-long name.
 */
int fmud_names(struct fmud *c, const char *const names[], size_t n, struct proto_str **ret);
/* A decode failure of a result: -EPROTO with the decoder's message. */
int fmud_bad_result(struct fmud *c, const char *what, const char *err);

/*
 * An ipc endpoint nobody listens on: -ECONNREFUSED at once (ZMQ would keep
 * reconnecting until the timeout); 0 otherwise. libfmud.c.
 */
int fmud_probe_ipc(struct fmud *c);
/* Apply CURVE client options (when c->curve) to a socket. */
int fmud_socket_curve(struct fmud *c, void *s);
/* Release the PUB slot and forget every subscription; close the SUB socket. */
void fmud_pub_fini(struct fmud *c);
/* Drop the rest of a multipart message: the frames after the last one read. */
void fmud_drain(void *sock);

/* CLOCK_MONOTONIC in milliseconds: the deadlines of every wait here. */
static inline int64_t fmud_now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
/*
 * Wait until the daemon answers a join (libfmud_join.c): every
 * subscription made before is then in force. 0, or <0 and said.
 */
int fmud_sub_join(struct fmud *c);
/* Keep every message queued on the SUB socket (without waiting). 0, or <0 and said. */
int fmud_keep_pending(struct fmud *c);
/* Messages kept at most (FMUD_JOIN_KEEP); a test may lower it. Not exported (libfmud.map). */
extern size_t libfmud_keep_max;
/*
 * Move the oldest kept message's frames into topic and body, and whether
 * a message of its topic was dropped before it into *after_gap; -EAGAIN: none.
 */
int fmud_early_take(struct fmud *c, zmq_msg_t *topic, zmq_msg_t *body, bool *after_gap);
/* Whether a message of topic (len bytes) was dropped since the last of it; forgets it. */
bool fmud_gap_take(struct fmud *c, const char *topic, size_t len);
void fmud_early_clear(struct fmud *c);
void fmud_pub_release(struct fmud *c);

#endif
