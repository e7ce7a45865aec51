/*
 * libfmud_call: one request's round trip (fmud.h): send, wait for the
 * reply with the request's id within the timeout, notice a lost
 * connection, and turn a refusal into the client's error.
 *
 * Wire framing: a request is one frame (the msgpack map) on the DEALER; a
 * reply is that frame too, possibly behind empty delimiter frames, which
 * are skipped (a ROUTER may keep REQ-style envelopes).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libfmud_int.h"

#define MAX_FRAMES 4

void fmud_release_reply(struct fmud *c)
{
        pv_doc_fini(&c->reply_doc);
        free(c->reply_mem);
        c->reply_mem = NULL;
        zmq_msg_close(&c->reply_msg);
        zmq_msg_init(&c->reply_msg);
}

uint64_t fmud_begin(struct fmud *c)
{
        fmud_release_reply(c);
        pw_reset(&c->w);
        c->errcode = -1;
        c->errmsg[0] = '\0';
        return ++c->next_id;
}

/* Receive one reply's body frame into c->reply_msg (skipping empty delimiters). */
static int recv_body(struct fmud *c)
{
        for (int i = 0; i < MAX_FRAMES; i++) {
                zmq_msg_close(&c->reply_msg);
                zmq_msg_init(&c->reply_msg);
                if (zmq_msg_recv(&c->reply_msg, c->dealer, ZMQ_DONTWAIT) < 0)
                        return -errno;
                if (zmq_msg_size(&c->reply_msg) > 0) {
                        if (zmq_msg_more(&c->reply_msg)) {
                                fmud_drain(c->dealer);
                                return -EPROTO;
                        }
                        return 0;
                }
                if (!zmq_msg_more(&c->reply_msg))
                        return -EPROTO;
        }
        fmud_drain(c->dealer);
        return -EPROTO;
}

/* Keep what a monitor event says of the handshake; true when the connection is gone. */
static bool handshake_event(struct fmud *c, uint16_t ev, uint32_t value)
{
        switch (ev) {
        case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
                c->shaken = true;
                c->hs_event = 0;
                return false;
        case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
        case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
        case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
                c->shaken = false;
                c->hs_event = ev;
                c->hs_value = value;
                return true;
        default:
                return ev == ZMQ_EVENT_DISCONNECTED;
        }
}

/*
 * Read the monitor's queued events; true when one says the connection to
 * the daemon was lost or its handshake failed (a request in flight then
 * has no reply coming).
 */
static bool lost(struct fmud *c)
{
        bool gone = false;
        zmq_msg_t m;

        for (;;) {
                zmq_msg_init(&m);
                if (zmq_msg_recv(&m, c->mon, ZMQ_DONTWAIT) < 0) {
                        zmq_msg_close(&m);
                        return gone;
                }
                /* Frame 1: uint16 event, uint32 value; frame 2: the endpoint. */
                if (zmq_msg_size(&m) >= 6) {
                        uint16_t ev;
                        uint32_t value;

                        memcpy(&ev, zmq_msg_data(&m), sizeof(ev));
                        memcpy(&value, (const char *)zmq_msg_data(&m) + 2, sizeof(value));
                        gone |= handshake_event(c, ev, value);
                }
                if (zmq_msg_more(&m))
                        fmud_drain(c->mon);
                zmq_msg_close(&m);
        }
}

/* Wait until the reply socket is readable, the connection is lost, or the deadline passes. */
static int wait_in(struct fmud *c, int64_t deadline)
{
        zmq_pollitem_t it[3] = { { .socket = c->dealer, .events = ZMQ_POLLIN } };
        int n_it = 1, mon = -1, sub = -1, n, r;
        long left;

        if (c->mon) {
                mon = n_it;
                it[n_it++] = (zmq_pollitem_t){ .socket = c->mon, .events = ZMQ_POLLIN };
        }
        /* A subscribe waits: the session's samples meanwhile are kept (libfmud_join.c). */
        if (c->keep_sub && c->sub) {
                sub = n_it;
                it[n_it++] = (zmq_pollitem_t){ .socket = c->sub, .events = ZMQ_POLLIN };
        }
        for (;;) {
                left = deadline < 0 ? -1 : (long)(deadline - fmud_now_ms());
                if (deadline >= 0 && left < 0)
                        left = 0;
                n = zmq_poll(it, n_it, left);
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return -ETIMEDOUT;
                if (it[0].revents & ZMQ_POLLIN)
                        return 0;
                if (sub >= 0 && (it[sub].revents & ZMQ_POLLIN)) {
                        r = fmud_keep_pending(c);
                        if (r < 0)
                                return r;
                }
                if (mon >= 0 && (it[mon].revents & ZMQ_POLLIN) && lost(c))
                        return -ECONNRESET;
        }
}

static int refused(struct fmud *c, const char *what, const struct proto_reply *rep)
{
        size_t i, n = rep->message_len < sizeof(c->errmsg) - 1 ? rep->message_len :
                      sizeof(c->errmsg) - 1;

        /* Keep the daemon's line breaks (diagnostics), nothing else unprintable. */
        for (i = 0; i < n; i++) {
                char ch = rep->message[i];

                c->errmsg[i] = ch == '\n' || (ch >= 0x20 && ch < 0x7f) ? ch : '?';
        }
        c->errmsg[i] = '\0';
        while (i > 0 && c->errmsg[i - 1] == '\n')
                c->errmsg[--i] = '\0';
        if (!i)
                snprintf(c->errmsg, sizeof(c->errmsg), "%s refused (%s)", what,
                         rep->code >= 0 ? proto_err_name(rep->code) : "unknown code");
        c->errcode = rep->code;
        return FMUD_E_REFUSED;
}

/*
 * The connection went: a key problem said as such (-EACCES) when the
 * handshake failed, else -ECONNRESET. The monitor's words: AUTH is the
 * daemon's ZAP handler refusing this client's public key; PROTOCOL with
 * a mechanism mismatch is CURVE on one side only; a CURVE connection
 * closed before any handshake succeeded is a server key that is not the
 * daemon's (the daemon cannot read the client's HELLO and hangs up).
 */
static int connection_lost(struct fmud *c, const char *what)
{
        if (c->hs_event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
                return fmud_fail(c, -EACCES, "%s: the daemon at %s does not accept this client's "
                                 "key (status %u): its public key is not in the daemon's "
                                 "authorized_keys", what, c->endpoint, c->hs_value);
        /* Whichever side saw the mismatch first: the daemon serves tcp with CURVE only. */
        if ((c->hs_event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL &&
             c->hs_value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH) ||
            (!c->curve && !c->shaken && !strncmp(c->endpoint, "tcp://", 6)))
                return c->curve ?
                       fmud_fail(c, -EACCES, "%s: the daemon at %s does not use CURVE keys",
                                 what, c->endpoint) :
                       fmud_fail(c, -EACCES, "%s: the daemon at %s requires CURVE: give its "
                                 "public key and this client's key", what, c->endpoint);
        if (c->curve && !c->shaken)
                return fmud_fail(c, -EACCES, "%s: the CURVE handshake with %s failed: the server "
                                 "key is not the daemon's public key", what, c->endpoint);
        return fmud_fail(c, -ECONNRESET, "%s: the connection to %s was lost", what, c->endpoint);
}

int fmud_call(struct fmud *c, uint64_t id, const char *what, const struct pv **ret_result)
{
        struct proto_limits lim;
        struct proto_reply rep;
        int64_t deadline = c->timeout_ms < 0 ? -1 : fmud_now_ms() + c->timeout_ms;
        char err[160];
        int r;

        if (c->w.error)
                return fmud_fail(c, c->w.error, "%s: cannot encode the request: %s", what,
                                 strerror(-c->w.error));
        /*
         * A loss before this request is no loss of it: ZMQ reconnects and
         * delivers it, unless nobody listens any more.
         */
        if (c->mon && lost(c) && fmud_probe_ipc(c) < 0)
                return -ECONNREFUSED;
        /* ZMQ ends a session whose handshake was refused: nothing would go out. */
        if (c->hs_event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH ||
            c->hs_event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL)
                return connection_lost(c, what);
        if (pw_size(&c->w) > PROTO_MAX_MSG)
                return fmud_fail(c, -E2BIG, "%s: the request is larger than %u bytes", what,
                                 PROTO_MAX_MSG);
        /* A full send queue only happens when the daemon is gone: do not block forever. */
        if (zmq_send(c->dealer, pw_data(&c->w), pw_size(&c->w), ZMQ_DONTWAIT) < 0)
                return fmud_fail(c, errno == EAGAIN ? -ETIMEDOUT : -errno, "%s: cannot send: %s",
                                 what, zmq_strerror(errno));
        proto_limits_default(&lim);
        for (;;) {
                r = wait_in(c, deadline);
                if (r == -ETIMEDOUT)
                        return fmud_fail(c, r, "%s: no reply from %s within %d ms", what,
                                         c->endpoint, c->timeout_ms);
                if (r == -ECONNRESET)
                        return connection_lost(c, what);
                if (r < 0)
                        return fmud_fail(c, r, "%s: %s", what, strerror(-r));
                r = recv_body(c);
                if (r == -EAGAIN)
                        continue;
                if (r < 0)
                        return fmud_fail(c, r, "%s: malformed reply framing", what);
                pv_doc_fini(&c->reply_doc);
                r = pv_decode(zmq_msg_data(&c->reply_msg), zmq_msg_size(&c->reply_msg), &lim,
                              &c->reply_doc, err, sizeof(err));
                if (r == 0)
                        r = proto_reply_decode(c->reply_doc.root, &rep, err, sizeof(err));
                if (r < 0)
                        return fmud_fail(c, -EPROTO, "%s: malformed reply: %s", what, err);
                if (rep.id != id)
                        continue;       /* a late reply to a request that timed out */
                if (!rep.ok)
                        return refused(c, what, &rep);
                *ret_result = rep.result;
                return 0;
        }
}

int fmud_bad_result(struct fmud *c, const char *what, const char *err)
{
        return fmud_fail(c, -EPROTO, "%s: malformed result: %s", what, err);
}
