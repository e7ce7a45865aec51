/*
 * rig_bridge: a remote rig relayed onto its session's rig channel
 * (rig_bridge.h).
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "daemon/control_log.h"
#include "daemon/rig_bridge.h"
#include "daemon/zap.h"
#include "proto/rig_wire.h"
#include "shm/rig.h"
#include "shm/wait.h"

#define POINT_SLICE_NS  50000000        /* the point thread looks at its stop flag this often */
#define RELAY_SLICE_MS  50              /* the relay thread likewise */
#define BROKEN_LOG_NS   1000000000ull   /* a broken point ring is logged this often at most */
#define LINGER_MS       200             /* for the bye on the way out */

static _Atomic uint64_t inproc_next;    /* names the bridges' inproc pairs */

/* The wire's limits are the channel's (proto/ may not include shm/). */
static_assert(RIGW_MAX_PORTS == RIG_PORTS_MAX, "a remote rig has a channel's ports");
static_assert(RIGW_NAME_MAX == RIG_NAME_MAX, "a remote rig's port names are a channel's");

struct rig_bridge {
        struct rig *r;
        void *router, *pair_r, *pair_w;
        pthread_t relay, points;
        _Atomic bool stop, points_stop, done;
        uint64_t session;
        char key[ZAP_KEY_Z85_LEN + 1];
        char token[RIGW_TOKEN_LEN];
        int64_t expires_ms;
        uint32_t timeout_ms, n_in, n_out;
        /* The relay thread's. */
        bool hello;                     /* the token was presented: id is the remote rig */
        bool said_bye;                  /* the remote rig said bye (relay thread) */
        uint8_t id[256];
        size_t id_len;
        int64_t heard_ms;
        uint64_t bad, writes, refused;
        zmq_msg_t held;                 /* before the hello: the newest point, for after its ports */
        bool have_held;
        struct pw w;
        double *in;                     /* n_in + 1 values */
        /* The point thread's. */
        struct pw pw;
        double *out;
};

static int64_t now_ms(void)
{
        return (int64_t)(rig_now_ns() / 1000000u);
}

/* ---- The point thread ------------------------------------------------------------------ */

static void *points_main(void *arg)
{
        struct rig_bridge *b = arg;
        uint64_t point, skipped, lost = 0, broken = 0, said_ns = 0;
        struct timespec dl;
        double time;
        int r;

        while (!atomic_load(&b->points_stop)) {
                wait_deadline_in(&dl, POINT_SLICE_NS);
                r = rig_wait(b->r, &dl);
                if (r == -ETIMEDOUT)
                        continue;
                r = r < 0 ? r : rig_read(b->r, &point, &time, b->out, &skipped);
                if (r == -EAGAIN)
                        continue;
                /* Another rig took the channel, or the session is gone: the bridge ends. */
                if (r == -EOWNERDEAD || r == -EPIPE)
                        break;
                if (r < 0) {
                        /* A ring the remote rig cannot have broken: said once a second at most. */
                        broken++;
                        if (rig_now_ns() >= said_ns + BROKEN_LOG_NS) {
                                log_warn("rig bridge of session %llu: the point ring: %s "
                                         "(%llu times so far)", (unsigned long long)b->session,
                                         strerror(-r), (unsigned long long)broken);
                                said_ns = rig_now_ns();
                        }
                        nanosleep(&(struct timespec){ .tv_nsec = POINT_SLICE_NS }, NULL);
                        continue;
                }
                rigw_point(&b->pw, point, time, skipped + lost, b->out, b->n_out);
                /* The relay thread is behind: the point is skipped, as in the ring. */
                if (b->pw.error || zmq_send(b->pair_w, pw_data(&b->pw), pw_size(&b->pw),
                                            ZMQ_DONTWAIT) < 0)
                        lost += skipped + 1;
                else
                        lost = 0;
        }
        return NULL;
}

/* ---- The relay thread ------------------------------------------------------------------- */

static void send_to(struct rig_bridge *b, const uint8_t *id, size_t id_len, struct pw *w)
{
        if (w->error)
                return;
        /* A remote rig that does not read loses messages, never blocks the relay. */
        if (zmq_send(b->router, id, id_len, ZMQ_SNDMORE | ZMQ_DONTWAIT) == (int)id_len)
                (void)zmq_send(b->router, pw_data(w), pw_size(w), ZMQ_DONTWAIT);
}

static void answer_error(struct rig_bridge *b, const uint8_t *id, size_t id_len,
                         const char *code, const char *msg)
{
        rigw_error(&b->w, code, msg, b->bad);
        send_to(b, id, id_len, &b->w);
}

/* Whether the n-th of a kind of event is logged: the first and each power of two, so a flood costs a few lines. */
static bool log_nth(uint64_t n)
{
        return n == 1 || (n & (n - 1)) == 0;
}

/* A bad message: counted here and by the master (a write for a point beyond its horizon). */
static void bad(struct rig_bridge *b, const char *why)
{
        char msg[320];

        b->bad++;
        memset(b->in, 0, (b->n_in + 1) * sizeof(double));
        (void)rig_write(b->r, UINT64_MAX, b->in);
        snprintf(msg, sizeof(msg), "bad message, not applied: %s", why);
        if (log_nth(b->bad))
                log_notice("rig bridge of session %llu: %s (%llu so far)",
                           (unsigned long long)b->session, msg, (unsigned long long)b->bad);
        answer_error(b, b->id, b->id_len, "bad", msg);
}

/*
 * The ports, and how often the rig beats while silent: the channel's own
 * slice, a quarter of the session's rigTimeoutMs up to 10 ms (rig.h), so
 * that a waiting remote rig is never taken for one that vanished.
 */
static void send_ports(struct rig_bridge *b)
{
        struct rigw_port p[2][RIGW_MAX_PORTS];
        uint64_t beat_ms = rig_beat_slice_ns(b->r) / 1000000u;
        uint32_t n[2];

        for (int k = 0; k < 2; k++) {
                const struct rig_port *rp = rig_ports(b->r, k == 1, &n[k]);

                for (uint32_t i = 0; i < n[k]; i++) {
                        const char *t = rig_type_name((enum rig_type)rp[i].type);

                        p[k][i].name = (struct proto_str){ rp[i].name,
                                                           (uint32_t)strlen(rp[i].name) };
                        p[k][i].type = (struct proto_str){ t, (uint32_t)strlen(t) };
                }
        }
        rigw_ports(&b->w, p[0], n[0], p[1], n[1], beat_ms ? (uint32_t)beat_ms : 1u);
        send_to(b, b->id, b->id_len, &b->w);
}

/* The first message on a connection of the right key: the token, or nothing. */
static void on_hello(struct rig_bridge *b, const uint8_t *id, size_t id_len, const void *body,
                     size_t len)
{
        struct rigw_msg m;
        struct pv_doc doc = { 0 };
        char err[160];
        int r = rigw_decode(body, len, &m, b->in, 0, NULL, NULL, &doc, err, sizeof(err));

        if (r == 0 && m.kind == RIGW_HELLO && m.token.len == RIGW_TOKEN_LEN &&
            rigw_token_eq(m.token.ptr, b->token)) {
                b->hello = true;
                memcpy(b->id, id, id_len);
                b->id_len = id_len;
                b->heard_ms = now_ms();
                rig_beat_at(b->r, rig_now_ns());
                explicit_bzero(b->token, sizeof(b->token));
                log_info("rig bridge of session %llu: the remote rig of key %s is attached",
                         (unsigned long long)b->session, b->key);
                send_ports(b);
                /* The newest point published before the hello (point 0 of a loaded session). */
                if (b->have_held &&
                    zmq_send(b->router, b->id, b->id_len, ZMQ_SNDMORE | ZMQ_DONTWAIT) ==
                            (int)b->id_len)
                        (void)zmq_msg_send(&b->held, b->router, ZMQ_DONTWAIT);
                b->have_held = false;
        } else {
                if (log_nth(++b->refused))
                        log_notice("rig bridge of session %llu: a first message without the "
                                   "token, refused (%llu refusals so far)",
                                   (unsigned long long)b->session,
                                   (unsigned long long)b->refused);
                answer_error(b, id, id_len, "refused", "the first message is a hello with the "
                             "token the rig request gave");
        }
        pv_doc_fini(&doc);
}

static void on_message(struct rig_bridge *b, const void *body, size_t len)
{
        struct rigw_msg m;
        struct pv_doc doc = { 0 };
        char err[200], why[240];
        int r;

        b->heard_ms = now_ms();
        r = rigw_decode(body, len, &m, b->in, b->n_in + 1, NULL, NULL, &doc, err, sizeof(err));
        if (r < 0) {
                bad(b, err);
        } else if (m.kind == RIGW_WRITE && m.n != b->n_in) {
                snprintf(why, sizeof(why), "%u values for %u inputs", m.n, b->n_in);
                bad(b, why);
        } else if (m.kind == RIGW_WRITE) {
                r = rig_write(b->r, m.point, b->in);
                if (r == -ENOSPC)
                        answer_error(b, b->id, b->id_len, "full", "the master is behind: "
                                     "the write was not taken");
                else if (r == -EOWNERDEAD)
                        answer_error(b, b->id, b->id_len, "refused", "another rig took the "
                                     "session's channel: the write was not taken");
                else if (r == -EPIPE)
                        answer_error(b, b->id, b->id_len, "refused", "the session is gone: "
                                     "the write was not taken");
                else if (r < 0)
                        answer_error(b, b->id, b->id_len, "internal", strerror(-r));
                else
                        b->writes++;
        } else if (m.kind == RIGW_BYE) {
                log_info("rig bridge of session %llu: the remote rig said bye",
                         (unsigned long long)b->session);
                /* Answered with a bye on the way out: the rig knows the session is free. */
                b->said_bye = true;
                atomic_store(&b->stop, true);
        } else if (m.kind != RIGW_BEAT) {
                bad(b, "a remote rig sends w, beat or bye once attached");
        }
        /* After the write: a beat the master sees comes with the write it announces. */
        if (!atomic_load(&b->stop))
                rig_beat_at(b->r, rig_now_ns());
        pv_doc_fini(&doc);
}

/* One message from the ROUTER: routing id and one body frame, checked before use. */
static void on_router(struct rig_bridge *b)
{
        zmq_msg_t f[2];
        int n = 0, more = 1;
        size_t sz = sizeof(more);
        const char *user;

        while (more) {
                zmq_msg_t m;

                zmq_msg_init(&m);
                if (zmq_msg_recv(&m, b->router, ZMQ_DONTWAIT) < 0) {
                        zmq_msg_close(&m);
                        break;
                }
                if (zmq_getsockopt(b->router, ZMQ_RCVMORE, &more, &sz) < 0)
                        more = 0;
                if (n < 2)
                        f[n++] = m;
                else {
                        n = 3;          /* too many: refused below */
                        zmq_msg_close(&m);
                }
        }
        if (n < 2 || zmq_msg_size(&f[0]) > sizeof(b->id))
                goto out;
        user = zmq_msg_gets(&f[1], "User-Id");
        if (n > 2) {
                if (b->hello && zmq_msg_size(&f[0]) == b->id_len &&
                    !memcmp(zmq_msg_data(&f[0]), b->id, b->id_len))
                        bad(b, "a message is one frame");
        } else if (!user || strcmp(user, b->key)) {
                if (log_nth(++b->refused))
                        log_notice("rig bridge of session %llu: key %.40s is not the asker's, "
                                   "refused (%llu refusals so far)",
                                   (unsigned long long)b->session, user ? user : "?",
                                   (unsigned long long)b->refused);
                answer_error(b, zmq_msg_data(&f[0]), zmq_msg_size(&f[0]), "refused",
                             "this rig channel was given to another key");
        } else if (!b->hello) {
                on_hello(b, zmq_msg_data(&f[0]), zmq_msg_size(&f[0]), zmq_msg_data(&f[1]),
                         zmq_msg_size(&f[1]));
        } else if (zmq_msg_size(&f[0]) != b->id_len ||
                   memcmp(zmq_msg_data(&f[0]), b->id, b->id_len)) {
                answer_error(b, zmq_msg_data(&f[0]), zmq_msg_size(&f[0]), "refused",
                             "the session's remote rig is attached on another connection");
        } else {
                on_message(b, zmq_msg_data(&f[1]), zmq_msg_size(&f[1]));
        }
out:
        for (int i = 0; i < (n > 2 ? 2 : n); i++)
                zmq_msg_close(&f[i]);
}

static void *relay_main(void *arg)
{
        struct rig_bridge *b = arg;
        zmq_pollitem_t items[2] = { { .socket = b->router, .events = ZMQ_POLLIN },
                                    { .socket = b->pair_r, .events = ZMQ_POLLIN } };
        const char *why = "stopped";
        zmq_msg_t m;

        zmq_msg_init(&b->held);
        while (!atomic_load(&b->stop)) {
                int64_t now = now_ms();
                int64_t end = b->hello ? b->heard_ms + b->timeout_ms + RIG_BRIDGE_GONE_MS :
                                         b->expires_ms;

                if (now >= end) {
                        why = b->hello ? "the remote rig went silent" :
                                         "no remote rig presented the token in time";
                        break;
                }
                /* The bridge keeps the channel for its life, beating or not (rig.h). */
                if (rig_claim_renew(b->r) < 0) {
                        why = "another rig took the session's channel";
                        break;
                }
                if (zmq_poll(items, 2, end - now < RELAY_SLICE_MS ? end - now : RELAY_SLICE_MS) < 0)
                        continue;
                if (items[0].revents & ZMQ_POLLIN)
                        for (int i = 0; i < 64; i++) {
                                int ev = 0;
                                size_t sz = sizeof(ev);

                                on_router(b);
                                if (zmq_getsockopt(b->router, ZMQ_EVENTS, &ev, &sz) < 0 ||
                                    !(ev & ZMQ_POLLIN))
                                        break;
                        }
                zmq_msg_init(&m);
                while (zmq_msg_recv(&m, b->pair_r, ZMQ_DONTWAIT) >= 0) {
                        if (!b->hello) {
                                /* Held, replacing an older one: a rig sees where it joins. */
                                zmq_msg_move(&b->held, &m);
                                b->have_held = true;
                        } else if (zmq_send(b->router, b->id, b->id_len,
                                            ZMQ_SNDMORE | ZMQ_DONTWAIT) == (int)b->id_len) {
                                (void)zmq_msg_send(&m, b->router, ZMQ_DONTWAIT);
                        }
                        zmq_msg_close(&m);
                        zmq_msg_init(&m);
                }
                zmq_msg_close(&m);
        }
        zmq_msg_close(&b->held);
        if (b->said_bye)
                why = "the remote rig said bye";
        log_info("rig bridge of session %llu ends: %s (%llu writes, %llu bad messages)",
                 (unsigned long long)b->session, why, (unsigned long long)b->writes,
                 (unsigned long long)b->bad);
        if (b->hello) {
                rigw_bye(&b->w, why);
                send_to(b, b->id, b->id_len, &b->w);
        }
        atomic_store(&b->points_stop, true);
        pthread_join(b->points, NULL);
        /* Nothing touches the rings now: the channel is free for a local rig at once. */
        rig_claim_release(b->r);
        atomic_store(&b->done, true);
        return NULL;
}

/* ---- Start and stop ---------------------------------------------------------------------- */

static int zfail(char *err, size_t errlen, const char *what, const char *ep)
{
        int e = zmq_errno();

        snprintf(err, errlen, "rig bridge: %s '%s': %s", what, ep, zmq_strerror(e));
        return e > 0 ? -e : -EIO;
}

/* Bind s on ep: tcp://ADDR:PORT, tcp://ADDR:* or tcp://ADDR:LO-HI (the first free port). */
static int bind_ep(void *s, const char *ep, char *err, size_t errlen)
{
        const char *colon = strrchr(ep, ':');
        unsigned lo, hi;
        char one[300];
        int used;

        if (!colon || strncmp(ep, "tcp://", 6) || colon < ep + 6) {
                snprintf(err, errlen, "rig bridge: remote_endpoint '%s' is not tcp://ADDR:PORTS",
                         ep);
                return -EINVAL;
        }
        if (sscanf(colon + 1, "%u-%u%n", &lo, &hi, &used) != 2 || colon[1 + used])
                return zmq_bind(s, ep) < 0 ? zfail(err, errlen, "bind", ep) : 0;
        for (unsigned p = lo; p <= hi && p <= 65535; p++) {
                snprintf(one, sizeof(one), "%.*s:%u", (int)(colon - ep), ep, p);
                if (zmq_bind(s, one) == 0)
                        return 0;
                if (zmq_errno() != EADDRINUSE)
                        return zfail(err, errlen, "bind", one);
        }
        snprintf(err, errlen, "rig: every port of the remote rigs' range '%s' is taken", ep);
        return -EADDRINUSE;
}

static int sockets(struct rig_bridge *b, const struct rig_bridge_params *p, char *ep,
                   size_t eplen, unsigned *ret_port, char *err, size_t errlen)
{
        char inproc[64];
        int linger = LINGER_MS, zero = 0, hwm = 64;
        int64_t max = RIG_BRIDGE_MAX_MSG;
        size_t len = eplen;
        const char *colon;
        int r;

        b->router = zmq_socket(p->zctx, ZMQ_ROUTER);
        b->pair_r = zmq_socket(p->zctx, ZMQ_PAIR);
        b->pair_w = zmq_socket(p->zctx, ZMQ_PAIR);
        if (!b->router || !b->pair_r || !b->pair_w)
                return zfail(err, errlen, "socket", p->endpoint);
        zmq_setsockopt(b->router, ZMQ_LINGER, &linger, sizeof(linger));
        zmq_setsockopt(b->pair_r, ZMQ_LINGER, &zero, sizeof(zero));
        zmq_setsockopt(b->pair_w, ZMQ_LINGER, &zero, sizeof(zero));
        zmq_setsockopt(b->router, ZMQ_MAXMSGSIZE, &max, sizeof(max));
        zmq_setsockopt(b->pair_w, ZMQ_SNDHWM, &hwm, sizeof(hwm));
        zmq_setsockopt(b->pair_r, ZMQ_RCVHWM, &hwm, sizeof(hwm));
        /* The control socket's domain: the same handler, the same authorized_keys. */
        err[0] = '\0';
        r = zap_curve_server(b->router, p->secret_key_file, err, errlen);
        if (r < 0 && !err[0])
                return zfail(err, errlen, "CURVE server options", p->endpoint);
        if (r < 0)
                return r;
        r = bind_ep(b->router, p->endpoint, err, errlen);
        if (r < 0)
                return r;
        if (zmq_getsockopt(b->router, ZMQ_LAST_ENDPOINT, ep, &len) < 0)
                return zfail(err, errlen, "its endpoint", p->endpoint);
        colon = strrchr(ep, ':');
        if (!colon || sscanf(colon + 1, "%u", ret_port) != 1) {
                snprintf(err, errlen, "rig bridge: no port in '%s'", ep);
                return -EPROTO;
        }
        /*
         * A number never used before: a freed bridge's address may come
         * back before libzmq has let its name go.
         */
        snprintf(inproc, sizeof(inproc), "inproc://fmud-rig-bridge-%llu",
                 (unsigned long long)atomic_fetch_add(&inproc_next, 1));
        if (zmq_bind(b->pair_r, inproc) < 0 || zmq_connect(b->pair_w, inproc) < 0)
                return zfail(err, errlen, "bind", inproc);
        return 0;
}

static void free_bridge(struct rig_bridge *b)
{
        void *s[] = { b->router, b->pair_r, b->pair_w };

        for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
                if (s[i])
                        zmq_close(s[i]);
        rig_close(b->r);
        pw_fini(&b->w);
        pw_fini(&b->pw);
        free(b->in);
        free(b->out);
        explicit_bzero(b->token, sizeof(b->token));
        free(b);
}

int rig_bridge_start(const struct rig_bridge_params *p, struct rig_bridge **ret, char *ep,
                     size_t eplen, unsigned *ret_port, char *err, size_t errlen)
{
        struct rig_bridge *b = calloc(1, sizeof(*b));
        bool points_started = false;
        struct rig_holder holder = { 0 };
        int r;

        err[0] = '\0';
        if (!b || pw_init(&b->w) < 0 || pw_init(&b->pw) < 0) {
                close(p->fd);
                if (b)
                        free_bridge(b);
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        b->session = p->session;
        snprintf(b->key, sizeof(b->key), "%s", p->key);
        memcpy(b->token, p->token, RIGW_TOKEN_LEN);
        b->expires_ms = now_ms() + p->token_ms;
        r = rig_attach(p->fd, &b->r);
        if (r < 0) {
                snprintf(err, errlen, "rig bridge: the channel of session %llu: %s",
                         (unsigned long long)p->session, strerror(-r));
                close(p->fd);
                free_bridge(b);
                return r;
        }
        /* One rig at a time: a local rig attached now refuses the remote one. */
        r = rig_claim(b->r, true, &holder);
        if (r == -EBUSY)
                snprintf(err, errlen, "rig: session %llu already has a rig (%s, heard from %llu "
                         "ms ago)", (unsigned long long)p->session, holder.relay ? "a remote one "
                         "whose bridge is ending" : "a local one",
                         (unsigned long long)holder.quiet_ms);
        else if (r < 0)
                snprintf(err, errlen, "rig bridge: the channel of session %llu is broken (a rig "
                         "rewrote its rings): %s", (unsigned long long)p->session, strerror(-r));
        if (r < 0) {
                free_bridge(b);         /* closes the fd with the channel */
                return r;
        }
        rig_beat_by_caller(b->r);
        b->timeout_ms = rig_timeout_ms(b->r);
        rig_ports(b->r, false, &b->n_in);
        rig_ports(b->r, true, &b->n_out);
        b->in = calloc(b->n_in + 1, sizeof(double));
        b->out = calloc(b->n_out + 1, sizeof(double));
        r = b->in && b->out ? sockets(b, p, ep, eplen, ret_port, err, errlen) : -ENOMEM;
        if (r == -ENOMEM && (!b->in || !b->out))
                snprintf(err, errlen, "out of memory");
        if (r == 0) {
                r = -pthread_create(&b->points, NULL, points_main, b);
                points_started = r == 0;
        }
        if (r == 0)
                r = -pthread_create(&b->relay, NULL, relay_main, b);
        if (r < 0) {
                if (!err[0] || r == -EAGAIN)
                        snprintf(err, errlen, "rig bridge: %s", strerror(-r));
                if (points_started) {
                        atomic_store(&b->points_stop, true);
                        pthread_join(b->points, NULL);
                }
                free_bridge(b);         /* closes the fd with the channel */
                return r;
        }
        *ret = b;
        return 0;
}

uint64_t rig_bridge_session(const struct rig_bridge *b)
{
        return b->session;
}

bool rig_bridge_leaving(const struct rig_bridge *b)
{
        struct rig_bridge *m = (struct rig_bridge *)b;

        return atomic_load(&m->stop) || atomic_load(&m->points_stop) || atomic_load(&m->done);
}

bool rig_bridge_done(const struct rig_bridge *b)
{
        return atomic_load(&((struct rig_bridge *)b)->done);
}

void rig_bridge_stop(struct rig_bridge *b)
{
        if (!b)
                return;
        atomic_store(&b->stop, true);
        pthread_join(b->relay, NULL);
        free_bridge(b);
}
