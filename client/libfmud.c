/*
 * libfmud: the connection (DEALER, monitor, CURVE), hello and the
 * client's error state (fmud.h). One request's round trip is
 * libfmud_call.c.
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
#include "proto/endpoint.h"
#include "proto/utf8.h"

int fmud_fail(struct fmud *c, int r, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(c->errmsg, sizeof(c->errmsg), fmt, ap);
        va_end(ap);
        c->errcode = -1;
        return r;
}

int fmud_missing(struct fmud *c, const char *what, const char *arg)
{
        return c ? fmud_fail(c, -EINVAL, "%s: %s is missing", what, arg) : -EINVAL;
}

const char *fmud_errmsg(const struct fmud *c)
{
        return c ? c->errmsg : "no connection (a NULL handle)";
}

int fmud_errcode(const struct fmud *c)
{
        return c ? c->errcode : -1;
}

void fmud_set_timeout(struct fmud *c, int timeout_ms)
{
        if (!c)
                return;
        c->timeout_ms = timeout_ms == 0 ? FMUD_TIMEOUT_DEFAULT : timeout_ms;
}

const char *fmud_server(const struct fmud *c)
{
        return c && c->server ? c->server : "";
}

const char *fmud_pub_endpoint(const struct fmud *c)
{
        return c && c->pub_endpoint ? c->pub_endpoint : "";
}

const char *fmud_str(struct proto_str s, char *buf, size_t len)
{
        size_t n;

        if (!len || !buf)
                return buf;
        if (!s.ptr)
                s.len = 0;
        n = s.len < len - 1 ? s.len : len - 1;
        if (n)
                memcpy(buf, s.ptr, n);
        buf[n] = '\0';
        return buf;
}

/*
 * Copy untrusted text for a message: printable ASCII and well-formed UTF-8
 * (whole sequences only), controls and invalid bytes as '?'.
 */
static void clean_copy(char *dst, size_t len, const char *src, size_t n)
{
        size_t i = 0, j = 0, k;
        uint32_t cp;

        if (!len)
                return;
        for (; i < n && j < len - 1; i += k) {
                k = utf8_decode(src + i, n - i, &cp);
                if (k && !utf8_is_control(cp)) {
                        if (j + k > len - 1)
                                break;
                        memcpy(dst + j, src + i, k);
                        j += k;
                        continue;
                }
                k = k ? k : 1;
                dst[j++] = src[i] >= 0x20 && src[i] < 0x7f ? src[i] : '?';
        }
        dst[j] = '\0';
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
int fmud_probe_ipc(struct fmud *c)
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
 * Learn when the daemon goes away, or refuses the handshake (the keys:
 * libfmud_call.c), so a request in flight fails at once
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
            zmq_socket_monitor(c->dealer, name, ZMQ_EVENT_DISCONNECTED |
                               ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                               ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                               ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) < 0)
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
        if (!ret) {
                if (err && errlen)
                        snprintf(err, errlen, "fmud_connect: the handle's place is missing");
                return -EINVAL;
        }
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
        r = fmud_probe_ipc(c);
        if (r == 0)
                r = open_dealer(c, o);
        if (r == 0)
                r = hello(c, o->client_name ? o->client_name : "libfmud",
                          o->connect_timeout_ms ? o->connect_timeout_ms : c->timeout_ms);
        if (r < 0)
                goto out_close;
        fmud_release_reply(c);
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
        fmud_release_reply(c);
        zmq_msg_close(&c->reply_msg);
        zmq_msg_close(&c->pub_msg);
        /*
         * The monitor stops before its reader goes: libzmq sends an event
         * blocking, holding the monitor's lock, and with no reader left it
         * never returns (a failing handshake makes events until the end).
         */
        if (c->dealer)
                (void)zmq_socket_monitor(c->dealer, NULL, 0);
        if (c->mon)
                zmq_close(c->mon);
        if (c->dealer)
                zmq_close(c->dealer);
        if (c->ctx)
                zmq_ctx_term(c->ctx);
        pw_fini(&c->w);
        free(c->server);
        free(c->pub_endpoint);
        free(c->load_warnings);
        free(c->load_out);
        explicit_bzero(c->secret_key, sizeof(c->secret_key));
        free(c);
}

int fmud_endpoint_default(char *buf, size_t len)
{
        const char *env = getenv("FMUD_ENDPOINT");

        if (!buf || !len)
                return -EINVAL;
        if (env && *env) {
                if (strlen(env) >= len)
                        return -ENAMETOOLONG;
                memcpy(buf, env, strlen(env) + 1);
                return 0;
        }
        return fmud_client_endpoint(FMUD_SYSTEM_RUNDIR, buf, len);
}
