/*
 * libfmud_rig_remote: a rig process's side of a remote rig (fmud.h): the
 * daemon's bridge over ZeroMQ with CURVE (proto/PROTOCOL.md "Remote
 * rigs", proto/rig_wire.h).
 *
 * DESIGN: the rig request over tcp answers a token and a port; a DEALER
 * with the connection's keys connects to that port on the host of the
 * control endpoint, sends {t:"hello", token} and takes the ports from the
 * answer. Then one message each way per point: fmud_rig_write() sends a
 * write, fmud_rig_wait() receives points (the newest of those queued;
 * the others count as skipped). Waiting longer than the beatMs of the
 * ports (a quarter of the session's rigTimeoutMs, at most 10 ms) sends a
 * beat each such slice, since the bridge beats the session's channel only
 * for messages that arrive. Every message is decoded with rig_wire's
 * bounded decoder; an error the bridge sends (a bad write, a full ring)
 * is counted, a bye ends the rig (-EPIPE).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "libfmud_rig_int.h"
#include "proto/rig_wire.h"

#define OPEN_TIMEOUT_MS 5000
#define LINGER_MS       100
#define BYE_WAIT_MS     1000    /* rig_remote_close() waits this long for the bridge's bye */

struct rig_remote {
        void *ctx, *s;
        struct pw w;
        char *names;                    /* the ports' names and types, NUL-terminated */
        int64_t sent_ms;                /* when the last message went out */
        int64_t beat_ms;                /* a beat after this long without a message */
        bool gone;
        double *buf;                    /* RIGW_MAX_PORTS values */
};

static int send_w(struct rig_remote *m)
{
        if (m->w.error)
                return -ENOMEM;
        if (zmq_send(m->s, pw_data(&m->w), pw_size(&m->w), ZMQ_DONTWAIT) < 0)
                return zmq_errno() == EAGAIN ? -ENOSPC : -EPIPE;
        m->sent_ms = fmud_now_ms();
        return 0;
}

/* The bridge's endpoint: the port it answered, on the host of c's tcp endpoint. */
static int bridge_endpoint(struct fmud *c, const struct pv *v, char *ep, size_t len)
{
        const char *colon = strrchr(c->endpoint, ':');
        uint64_t port;

        if (pv_u64(pv_get(v, "port"), &port) < 0 || port == 0 || port > 65535)
                return fmud_bad_result(c, "rig", "no 'port' from 1 to 65535");
        if (strncmp(c->endpoint, "tcp://", 6) || !colon || colon < c->endpoint + 6)
                return fmud_fail(c, -EPROTO, "rig: a remote rig's bridge answered on a "
                                 "connection that is not tcp");
        if ((size_t)snprintf(ep, len, "%.*s:%u", (int)(colon - c->endpoint), c->endpoint,
                             (unsigned)port) >= len)
                return fmud_fail(c, -ENAMETOOLONG, "rig: endpoint too long");
        return 0;
}

/* Copy the ports of a ports message into g. */
static int take_ports(struct fmud_rig *g, const struct rigw_port *p[2], const uint32_t n[2])
{
        size_t total = 0;
        char *at;

        for (int k = 0; k < 2; k++)
                for (uint32_t i = 0; i < n[k]; i++)
                        total += p[k][i].name.len + p[k][i].type.len + 2;
        g->remote->names = at = malloc(total + 1);
        for (int k = 0; k < 2 && at; k++) {
                g->n[k] = n[k];
                g->ports[k] = calloc(n[k] ? n[k] : 1, sizeof(*g->ports[k]));
                if (!g->ports[k])
                        return -ENOMEM;
                for (uint32_t i = 0; i < n[k]; i++) {
                        g->ports[k][i].name = at;
                        memcpy(at, p[k][i].name.ptr, p[k][i].name.len);
                        at += p[k][i].name.len;
                        *at++ = '\0';
                        g->ports[k][i].type = at;
                        memcpy(at, p[k][i].type.ptr, p[k][i].type.len);
                        at += p[k][i].type.len;
                        *at++ = '\0';
                }
        }
        g->vals = calloc(n[1] ? n[1] : 1, sizeof(double));
        return at && g->vals ? 0 : -ENOMEM;
}

/* Wait for the answer to hello: the ports, or why not. */
static int hello(struct fmud *c, struct fmud_rig *g, const char *token, const char *ep)
{
        struct rigw_port in[RIGW_MAX_PORTS], out[RIGW_MAX_PORTS];
        struct rig_remote *m = g->remote;
        struct rigw_msg msg;
        struct pv_doc doc = { 0 };
        zmq_msg_t z;
        char err[200];
        int r, tmo = OPEN_TIMEOUT_MS;

        rigw_hello(&m->w, token);
        if (send_w(m) < 0)
                return fmud_fail(c, -EPROTO, "rig: the hello to '%s' was not sent", ep);
        zmq_setsockopt(m->s, ZMQ_RCVTIMEO, &tmo, sizeof(tmo));
        zmq_msg_init(&z);
        if (zmq_msg_recv(&z, m->s, 0) < 0) {
                zmq_msg_close(&z);
                return fmud_fail(c, -ETIMEDOUT, "rig: no answer from the bridge at '%s' (a "
                                 "key it does not admit, or nothing listening)", ep);
        }
        r = rigw_decode(zmq_msg_data(&z), zmq_msg_size(&z), &msg, m->buf, 0, in, out, &doc, err,
                        sizeof(err));
        if (r < 0)
                r = fmud_fail(c, -EPROTO, "rig: the bridge's answer: %s", err);
        else if (msg.kind == RIGW_ERROR)
                r = fmud_fail(c, FMUD_E_REFUSED, "rig: %.*s", (int)msg.message.len,
                              msg.message.ptr);
        else if (msg.kind != RIGW_PORTS)
                r = fmud_fail(c, -EPROTO, "rig: the bridge answered hello without the ports");
        else if (take_ports(g, (const struct rigw_port *[2]){ in, out },
                            (const uint32_t[2]){ msg.n_in, msg.n_out }) < 0)
                r = fmud_fail(c, -ENOMEM, "out of memory");
        else
                m->beat_ms = msg.beat_ms;
        pv_doc_fini(&doc);
        zmq_msg_close(&z);
        return r;
}

int rig_remote_open(struct fmud *c, const struct pv *v, struct fmud_rig *g)
{
        const struct pv *t = pv_get(v, "token");
        char token[RIGW_TOKEN_LEN + 1], ep[FMUD_MAX_ENDPOINT + 16];
        int linger = LINGER_MS, r;
        struct rig_remote *m;

        if (!t || t->type != PV_STR || t->s.len != RIGW_TOKEN_LEN ||
            memchr(t->s.ptr, 0, t->s.len))
                return fmud_bad_result(c, "rig", "no 32-character 'token'");
        r = bridge_endpoint(c, v, ep, sizeof(ep));
        if (r < 0)
                return r;
        memcpy(token, t->s.ptr, RIGW_TOKEN_LEN);
        token[RIGW_TOKEN_LEN] = '\0';
        g->remote = m = calloc(1, sizeof(*m));
        if (!m || pw_init(&m->w) < 0 || !(m->buf = calloc(RIGW_MAX_PORTS, sizeof(double))) ||
            !(m->ctx = zmq_ctx_new())) {
                r = fmud_fail(c, -ENOMEM, "out of memory");
                goto out;
        }
        m->s = zmq_socket(m->ctx, ZMQ_DEALER);
        if (!m->s || zmq_setsockopt(m->s, ZMQ_LINGER, &linger, sizeof(linger)) < 0 ||
            fmud_socket_curve(c, m->s) < 0 || zmq_connect(m->s, ep) < 0) {
                r = fmud_fail(c, -EPROTO, "rig: connecting to the bridge at '%s': %s", ep,
                              zmq_strerror(zmq_errno()));
                goto out;
        }
        r = hello(c, g, token, ep);
out:
        explicit_bzero(token, sizeof(token));
        return r;
}

int rig_remote_write(struct fmud_rig *g, const double *in)
{
        if (g->remote->gone)
                return -EPIPE;
        rigw_write(&g->remote->w, g->next, in, g->n[0]);
        return send_w(g->remote);
}

/* One message from the bridge: 1 a point (into g->vals), 0 another, -EPIPE a bye. */
static int take(struct fmud_rig *g, zmq_msg_t *z, uint64_t *ret_point, double *ret_time,
                uint64_t *ret_skipped)
{
        struct rig_remote *m = g->remote;
        struct rigw_msg msg;
        struct pv_doc doc = { 0 };
        char err[200];
        int r = rigw_decode(zmq_msg_data(z), zmq_msg_size(z), &msg, m->buf, RIGW_MAX_PORTS,
                            NULL, NULL, &doc, err, sizeof(err));

        if (r < 0 || (msg.kind == RIGW_POINT && msg.n != g->n[1])) {
                r = 0;          /* not the bridge's: dropped */
        } else if (msg.kind == RIGW_POINT) {
                memcpy(g->vals, m->buf, g->n[1] * sizeof(double));
                *ret_point = msg.point;
                *ret_time = msg.time;
                *ret_skipped = msg.skipped;
                r = 1;
        } else {
                /* An error message from the bridge is not an end: only a bye is. */
                r = msg.kind == RIGW_BYE ? -EPIPE : 0;
        }
        pv_doc_fini(&doc);
        return r;
}

int rig_remote_wait(struct fmud_rig *g, int timeout_ms, uint64_t *ret_point, double *ret_time,
                    uint64_t *ret_skipped)
{
        struct rig_remote *m = g->remote;
        int64_t end = timeout_ms >= 0 ? fmud_now_ms() + timeout_ms : INT64_MAX;
        uint64_t skipped = 0, s = 0;
        bool got = false;
        zmq_msg_t z;
        int r;

        if (m->gone)
                return -EPIPE;
        for (;;) {
                zmq_pollitem_t it = { .socket = m->s, .events = ZMQ_POLLIN };
                int64_t now = fmud_now_ms(), slice;

                /* Everything queued: the newest point counts, the ones before it are skipped. */
                zmq_msg_init(&z);
                while (zmq_msg_recv(&z, m->s, ZMQ_DONTWAIT) >= 0) {
                        r = take(g, &z, ret_point, ret_time, &s);
                        if (r < 0) {
                                zmq_msg_close(&z);
                                m->gone = true;
                                return r;
                        }
                        if (r == 1) {
                                skipped += got ? 1 + s : s;
                                got = true;
                        }
                        zmq_msg_close(&z);
                        zmq_msg_init(&z);
                }
                zmq_msg_close(&z);
                if (got) {
                        *ret_skipped = skipped;
                        return 0;
                }
                if (now >= end)
                        return -ETIMEDOUT;
                /* Alive while waiting: a beat once a slice has passed without a message. */
                if (now - m->sent_ms >= m->beat_ms) {
                        rigw_beat(&m->w);
                        (void)send_w(m);
                }
                slice = m->sent_ms + m->beat_ms - fmud_now_ms();
                if (slice > end - now)
                        slice = end - now;
                if (slice < 1)
                        slice = 1;
                (void)zmq_poll(&it, 1, (long)slice);
        }
}

/*
 * The bridge's bye answering ours (at most BYE_WAIT_MS): once it came, the
 * bridge is ending and the session takes another rig at once.
 */
static void await_bye(struct rig_remote *m)
{
        int64_t end = fmud_now_ms() + BYE_WAIT_MS, now;
        zmq_pollitem_t it = { .socket = m->s, .events = ZMQ_POLLIN };

        while ((now = fmud_now_ms()) < end && zmq_poll(&it, 1, (long)(end - now)) > 0) {
                struct rigw_msg msg;
                struct pv_doc doc = { 0 };
                char err[64];
                zmq_msg_t z;
                bool bye;

                zmq_msg_init(&z);
                if (zmq_msg_recv(&z, m->s, ZMQ_DONTWAIT) < 0) {
                        zmq_msg_close(&z);
                        return;
                }
                bye = rigw_decode(zmq_msg_data(&z), zmq_msg_size(&z), &msg, m->buf,
                                  RIGW_MAX_PORTS, NULL, NULL, &doc, err, sizeof(err)) == 0 &&
                      msg.kind == RIGW_BYE;
                pv_doc_fini(&doc);
                zmq_msg_close(&z);
                if (bye)
                        return;
        }
}

void rig_remote_close(struct fmud_rig *g)
{
        struct rig_remote *m = g->remote;

        if (!m)
                return;
        if (m->s) {
                if (!m->gone) {
                        rigw_bye(&m->w, NULL);
                        if (send_w(m) == 0)
                                await_bye(m);
                }
                zmq_close(m->s);
        }
        if (m->ctx)
                zmq_ctx_term(m->ctx);
        pw_fini(&m->w);
        free(m->names);
        free(m->buf);
        free(m);
        g->remote = NULL;
}
