/*
 * libfmud: the connection, hello, and one request's round trip (fmud.h).
 *
 * Wire framing: a request is one frame (the msgpack map) on the DEALER; a
 * reply is that frame too, possibly behind empty delimiter frames, which
 * are skipped (a ROUTER may keep REQ-style envelopes).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "libfmud_int.h"

#define MAX_FRAMES 4

int fmud_fail(struct fmud *c, int r, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(c->errmsg, sizeof(c->errmsg), fmt, ap);
        va_end(ap);
        c->errcode = -1;
        return r;
}

const char *fmud_errmsg(const struct fmud *c)
{
        return c ? c->errmsg : "out of memory";
}

int fmud_errcode(const struct fmud *c)
{
        return c ? c->errcode : -1;
}

void fmud_set_timeout(struct fmud *c, int timeout_ms)
{
        c->timeout_ms = timeout_ms == 0 ? FMUD_TIMEOUT_DEFAULT : timeout_ms;
}

const char *fmud_server(const struct fmud *c)
{
        return c->server ? c->server : "";
}

const char *fmud_pub_endpoint(const struct fmud *c)
{
        return c->pub_endpoint ? c->pub_endpoint : "";
}

const char *fmud_str(struct proto_str s, char *buf, size_t len)
{
        size_t n;

        if (!len)
                return buf;
        n = s.len < len - 1 ? s.len : len - 1;
        if (n)
                memcpy(buf, s.ptr, n);
        buf[n] = '\0';
        return buf;
}

/* Copy untrusted text for a message: printable ASCII, the rest as '?'. */
static void clean_copy(char *dst, size_t len, const char *src, size_t n)
{
        size_t i;

        if (!len)
                return;
        for (i = 0; i < n && i < len - 1; i++)
                dst[i] = src[i] >= 0x20 && src[i] < 0x7f ? src[i] : '?';
        dst[i] = '\0';
}

static void release_reply(struct fmud *c)
{
        pv_doc_fini(&c->reply_doc);
        free(c->reply_mem);
        c->reply_mem = NULL;
        zmq_msg_close(&c->reply_msg);
        zmq_msg_init(&c->reply_msg);
}

uint64_t fmud_begin(struct fmud *c)
{
        release_reply(c);
        pw_reset(&c->w);
        c->errcode = -1;
        c->errmsg[0] = '\0';
        return ++c->next_id;
}

static int64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Drain the rest of a multipart message. */
static void drain(void *s)
{
        int more = 1;
        size_t len = sizeof(more);
        zmq_msg_t m;

        while (zmq_getsockopt(s, ZMQ_RCVMORE, &more, &len) == 0 && more) {
                zmq_msg_init(&m);
                if (zmq_msg_recv(&m, s, ZMQ_DONTWAIT) < 0) {
                        zmq_msg_close(&m);
                        return;
                }
                zmq_msg_close(&m);
                len = sizeof(more);
        }
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
                                drain(c->dealer);
                                return -EPROTO;
                        }
                        return 0;
                }
                if (!zmq_msg_more(&c->reply_msg))
                        return -EPROTO;
        }
        drain(c->dealer);
        return -EPROTO;
}

/*
 * Read the monitor's queued events; true when one says the connection to
 * the daemon was lost (a request in flight then has no reply coming).
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
                if (zmq_msg_size(&m) >= 2) {
                        uint16_t ev;

                        memcpy(&ev, zmq_msg_data(&m), sizeof(ev));
                        gone |= ev == ZMQ_EVENT_DISCONNECTED;
                }
                if (zmq_msg_more(&m))
                        drain(c->mon);
                zmq_msg_close(&m);
        }
}

/* Wait until the reply socket is readable, the connection is lost, or the deadline passes. */
static int wait_in(struct fmud *c, int64_t deadline)
{
        zmq_pollitem_t it[2] = {
                { .socket = c->dealer, .events = ZMQ_POLLIN },
                { .socket = c->mon, .events = ZMQ_POLLIN },
        };
        long left;
        int n;

        for (;;) {
                left = deadline < 0 ? -1 : (long)(deadline - now_ms());
                if (deadline >= 0 && left < 0)
                        left = 0;
                n = zmq_poll(it, c->mon ? 2 : 1, left);
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return -ETIMEDOUT;
                if (it[0].revents & ZMQ_POLLIN)
                        return 0;
                if (lost(c))
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

static int probe_ipc(struct fmud *c);

int fmud_call(struct fmud *c, uint64_t id, const char *what, const struct pv **ret_result)
{
        struct proto_limits lim;
        struct proto_reply rep;
        int64_t deadline = c->timeout_ms < 0 ? -1 : now_ms() + c->timeout_ms;
        char err[160];
        int r;

        if (c->w.error)
                return fmud_fail(c, c->w.error, "%s: cannot encode the request: %s", what,
                                 strerror(-c->w.error));
        /*
         * A loss before this request is no loss of it: ZMQ reconnects and
         * delivers it, unless nobody listens any more.
         */
        if (c->mon && lost(c) && probe_ipc(c) < 0)
                return -ECONNREFUSED;
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
                        return fmud_fail(c, r, "%s: the connection to %s was lost", what,
                                         c->endpoint);
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

int fmud_socket_curve(struct fmud *c, void *s)
{
        char pub[FMUD_KEY_Z85_LEN + 1];

        if (!c->curve)
                return 0;
        if (zmq_curve_public(pub, c->secret_key) < 0)
                return -EINVAL;
        if (zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, c->server_key, FMUD_KEY_Z85_LEN) < 0 ||
            zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, pub, FMUD_KEY_Z85_LEN) < 0 ||
            zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, c->secret_key, FMUD_KEY_Z85_LEN) < 0)
                return -errno;
        return 0;
}

static int key_copy(char dst[FMUD_KEY_Z85_LEN + 1], const char *src)
{
        uint8_t bin[32];

        if (!src || strlen(src) != FMUD_KEY_Z85_LEN || !zmq_z85_decode(bin, src))
                return -EINVAL;
        memcpy(dst, src, FMUD_KEY_Z85_LEN + 1);
        return 0;
}

/*
 * ZMQ keeps reconnecting to an ipc socket nobody listens on; ask the
 * kernel first so a missing daemon is refused at once, not after a timeout.
 */
static int probe_ipc(struct fmud *c)
{
        const char *path = c->endpoint + 6;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd, r = 0;

        if (strncmp(c->endpoint, "ipc://", 6) || path[0] == '@')
                return 0;
        if (strlen(path) >= sizeof(sa.sun_path))
                return fmud_fail(c, -ENAMETOOLONG, "endpoint '%s': path too long", c->endpoint);
        memcpy(sa.sun_path, path, strlen(path) + 1);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return 0;       /* let ZMQ try */
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 &&
            (errno == ENOENT || errno == ECONNREFUSED || errno == ENOTSOCK))
                r = fmud_fail(c, -ECONNREFUSED, "no daemon listens there (%s)", strerror(errno));
        close(fd);
        return r;
}

static int set_common(void *s)
{
        int zero = 0;
        int64_t maxmsg = PROTO_MAX_MSG;

        if (zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof(zero)) < 0 ||
            zmq_setsockopt(s, ZMQ_MAXMSGSIZE, &maxmsg, sizeof(maxmsg)) < 0)
                return -errno;
        return 0;
}

/* A bind address (tcp, host "*") names no host: use the control endpoint's. */
static char *pub_address(struct fmud *c, const char *pub)
{
        const char *host_end, *p;
        char *out;

        if (strncmp(pub, "tcp://*:", 8) && strncmp(pub, "tcp://0.0.0.0:", 14))
                return strdup(pub);
        if (strncmp(c->endpoint, "tcp://", 6))
                return strdup(pub);
        host_end = strrchr(c->endpoint + 6, ':');
        p = strrchr(pub + 6, ':');
        if (!host_end || !p)
                return strdup(pub);
        if (asprintf(&out, "tcp://%.*s%s", (int)(host_end - c->endpoint - 6), c->endpoint + 6, p) < 0)
                return NULL;
        return out;
}

static bool endpoint_ok(struct proto_str s)
{
        if (s.len == 0 || s.len >= FMUD_MAX_ENDPOINT)
                return false;
        for (uint32_t i = 0; i < s.len; i++)
                if (s.ptr[i] <= 0x20 || s.ptr[i] >= 0x7f)
                        return false;
        return !strncmp(s.ptr, "ipc://", s.len < 6 ? s.len : 6) ||
               !strncmp(s.ptr, "tcp://", s.len < 6 ? s.len : 6);
}

static int hello(struct fmud *c, const char *name, int timeout_ms)
{
        struct proto_hello h = { .version = PROTO_VERSION };
        struct proto_hello_result res;
        const struct pv *v;
        char err[160], buf[FMUD_MAX_ENDPOINT], srv[128];
        int saved = c->timeout_ms, r;
        uint64_t id;

        h.client = (struct proto_str){ name, (uint32_t)strlen(name) };
        id = fmud_begin(c);
        proto_hello_encode(&c->w, id, &h);
        c->timeout_ms = timeout_ms;
        r = fmud_call(c, id, "hello", &v);
        c->timeout_ms = saved;
        if (r == FMUD_E_REFUSED && c->errcode == PROTO_E_VERSION)
                return fmud_fail(c, -EPROTONOSUPPORT, "the daemon at '%s' does not serve protocol "
                                 "version %d", c->endpoint, PROTO_VERSION);
        if (r < 0)
                return r;
        if (proto_hello_result_decode(v, &res, err, sizeof(err)) < 0)
                return fmud_bad_result(c, "hello", err);
        if (res.version != PROTO_VERSION)
                return fmud_fail(c, -EPROTONOSUPPORT, "the daemon at '%s' speaks protocol version %u, "
                                 "this client %d", c->endpoint, res.version, PROTO_VERSION);
        clean_copy(srv, sizeof(srv), res.server.ptr, res.server.len);
        c->server = strdup(srv);
        if (res.pub_endpoint.len && !endpoint_ok(res.pub_endpoint))
                return fmud_fail(c, -EPROTO, "hello: the daemon names an invalid PUB endpoint");
        fmud_str(res.pub_endpoint, buf, sizeof(buf));
        c->pub_endpoint = pub_address(c, buf);
        if (!c->server || !c->pub_endpoint)
                return fmud_fail(c, -ENOMEM, "out of memory");
        return 0;
}

/*
 * Learn when the daemon goes away, so a request in flight fails at once
 * (-ECONNRESET) instead of waiting out its timeout, or forever. A peer
 * that vanishes without closing (tcp) is caught by ZMTP heartbeats.
 */
static int open_monitor(struct fmud *c)
{
        int ivl = 2000, ttl = 10000;
        char name[64];

        snprintf(name, sizeof(name), "inproc://fmud-monitor-%p", (void *)c);
        if (zmq_setsockopt(c->dealer, ZMQ_HEARTBEAT_IVL, &ivl, sizeof(ivl)) < 0 ||
            zmq_setsockopt(c->dealer, ZMQ_HEARTBEAT_TIMEOUT, &ttl, sizeof(ttl)) < 0 ||
            zmq_socket_monitor(c->dealer, name, ZMQ_EVENT_DISCONNECTED) < 0)
                return -errno;
        c->mon = zmq_socket(c->ctx, ZMQ_PAIR);
        if (!c->mon)
                return -errno;
        if (set_common(c->mon) < 0 || zmq_connect(c->mon, name) < 0) {
                zmq_close(c->mon);
                c->mon = NULL;
                return -errno;
        }
        return 0;
}

static int open_dealer(struct fmud *c, const struct fmud_opts *o)
{
        int r;

        if (o->server_key || o->secret_key) {
                if (key_copy(c->server_key, o->server_key) < 0 ||
                    key_copy(c->secret_key, o->secret_key) < 0)
                        return fmud_fail(c, -EINVAL, "CURVE needs the server's public key and this "
                                         "client's secret key, each %d Z85 characters",
                                         FMUD_KEY_Z85_LEN);
                c->curve = true;
        }
        c->ctx = zmq_ctx_new();
        if (!c->ctx)
                return fmud_fail(c, -errno, "zmq_ctx_new: %s", zmq_strerror(errno));
        c->dealer = zmq_socket(c->ctx, ZMQ_DEALER);
        if (!c->dealer)
                return fmud_fail(c, -errno, "zmq_socket: %s", zmq_strerror(errno));
        r = set_common(c->dealer);
        if (r == 0)
                r = fmud_socket_curve(c, c->dealer);
        if (r == 0)
                r = open_monitor(c);
        if (r < 0)
                return fmud_fail(c, r, "socket options: %s", strerror(-r));
        if (zmq_connect(c->dealer, c->endpoint) < 0)
                return fmud_fail(c, -EINVAL, "cannot connect to '%s': %s", c->endpoint,
                                 zmq_strerror(errno));
        return 0;
}

int fmud_connect(const char *endpoint, const struct fmud_opts *o, struct fmud **ret, char *err,
                 size_t errlen)
{
        static const struct fmud_opts defaults = { 0 };
        struct fmud *c;
        int r;

        if (!o)
                o = &defaults;
        c = calloc(1, sizeof(*c));
        if (!c || pw_init(&c->w) < 0) {
                free(c);
                if (err && errlen)
                        snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        zmq_msg_init(&c->reply_msg);
        zmq_msg_init(&c->pub_msg);
        c->errcode = -1;
        fmud_set_timeout(c, o->timeout_ms);
        if (!endpoint || strlen(endpoint) >= sizeof(c->endpoint)) {
                r = fmud_fail(c, -EINVAL, "invalid endpoint");
                goto out_close;
        }
        memcpy(c->endpoint, endpoint, strlen(endpoint) + 1);
        r = probe_ipc(c);
        if (r == 0)
                r = open_dealer(c, o);
        if (r == 0)
                r = hello(c, o->client_name ? o->client_name : "libfmud",
                          o->connect_timeout_ms ? o->connect_timeout_ms : c->timeout_ms);
        if (r < 0)
                goto out_close;
        release_reply(c);
        *ret = c;
        return 0;

out_close:
        if (err && errlen)
                snprintf(err, errlen, "%s", c->errmsg);
        fmud_close(c);
        return r;
}

void fmud_close(struct fmud *c)
{
        if (!c)
                return;
        fmud_pub_fini(c);
        release_reply(c);
        zmq_msg_close(&c->reply_msg);
        zmq_msg_close(&c->pub_msg);
        if (c->mon)
                zmq_close(c->mon);
        if (c->dealer) {
                (void)zmq_socket_monitor(c->dealer, NULL, 0);
                zmq_close(c->dealer);
        }
        if (c->ctx)
                zmq_ctx_term(c->ctx);
        pw_fini(&c->w);
        free(c->server);
        free(c->pub_endpoint);
        explicit_bzero(c->secret_key, sizeof(c->secret_key));
        free(c);
}
