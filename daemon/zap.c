/*
 * zap: the ZAP handler thread (zap.h).
 *
 * Thread: zap_thread() owns the REP socket on inproc://zeromq.zap.01 and
 * the PAIR end that tells it to stop. It reads keys/n_keys under
 * z->lock; zap_reload() swaps them under the same lock.
 */
#include "zap.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "access.h"
#include "control_log.h"

#define ZAP_ENDPOINT    "inproc://zeromq.zap.01"
#define ZAP_MAX_FRAMES  16
#define ZAP_MAX_FRAME   1024

struct zap {
        void *ctx;
        void *rep;              /* owner: the thread once started */
        void *stop_tx, *stop_rx;
        char stop_ep[64];
        pthread_t thread;
        pthread_mutex_t lock;
        uint8_t (*keys)[32];    /* protected by lock */
        uint8_t *roles;         /* enum access_role of each key; lock */
        size_t n_keys;
};

static bool admitted(struct zap *z, const uint8_t *key)
{
        bool ok = false;

        pthread_mutex_lock(&z->lock);
        for (size_t i = 0; i < z->n_keys && !ok; i++)   /* O(keys); fine below ~10k */
                ok = !memcmp(z->keys[i], key, 32);
        pthread_mutex_unlock(&z->lock);
        return ok;
}

/* Receive the rest of a multipart request into frames; returns the count or -1. */
static int recv_request(void *rep, zmq_msg_t *frames, int *ret_n)
{
        int n = 0, more = 1;
        size_t sz = sizeof(more);

        while (more) {
                zmq_msg_t m;

                zmq_msg_init(&m);
                if (zmq_msg_recv(&m, rep, 0) < 0) {
                        zmq_msg_close(&m);
                        break;
                }
                zmq_getsockopt(rep, ZMQ_RCVMORE, &more, &sz);
                if (n < ZAP_MAX_FRAMES)
                        frames[n++] = m;
                else
                        zmq_msg_close(&m);
        }
        *ret_n = n;
        return n;
}

static bool frame_is(zmq_msg_t *m, const char *s)
{
        return zmq_msg_size(m) == strlen(s) && !memcmp(zmq_msg_data(m), s, strlen(s));
}

static void reply(void *rep, zmq_msg_t *req_id, const char *code, const char *text,
                  const char *user)
{
        zmq_send(rep, "1.0", 3, ZMQ_SNDMORE);
        if (req_id)
                zmq_send(rep, zmq_msg_data(req_id), zmq_msg_size(req_id), ZMQ_SNDMORE);
        else
                zmq_send(rep, "", 0, ZMQ_SNDMORE);
        zmq_send(rep, code, strlen(code), ZMQ_SNDMORE);
        zmq_send(rep, text, strlen(text), ZMQ_SNDMORE);
        zmq_send(rep, user, strlen(user), ZMQ_SNDMORE);
        zmq_send(rep, "", 0, 0);
}

static void serve_one(struct zap *z)
{
        zmq_msg_t f[ZAP_MAX_FRAMES];
        char z85[ZAP_KEY_Z85_LEN + 1] = "", addr[64] = "";
        int n = 0;

        recv_request(z->rep, f, &n);
        /* version, request id, domain, address, identity, mechanism, credentials... */
        if (n < 6 || !frame_is(&f[0], "1.0")) {
                reply(z->rep, n >= 2 ? &f[1] : NULL, "500", "malformed ZAP request", "");
                goto out;
        }
        snprintf(addr, sizeof(addr), "%.*s", (int)(zmq_msg_size(&f[3]) < 63 ? zmq_msg_size(&f[3]) : 63),
                 (const char *)zmq_msg_data(&f[3]));
        if (!frame_is(&f[5], "CURVE") || n != 7 || zmq_msg_size(&f[6]) != 32) {
                log_warn("refused a connection from '%s': not a CURVE client", addr);
                reply(z->rep, &f[1], "400", "CURVE only", "");
                goto out;
        }
        zmq_z85_encode(z85, zmq_msg_data(&f[6]), 32);
        if (!admitted(z, zmq_msg_data(&f[6]))) {
                log_warn("refused CURVE client key '%s' from '%s': not in authorized_keys", z85,
                         addr);
                reply(z->rep, &f[1], "400", "key not authorized", "");
                goto out;
        }
        log_debug("admitted CURVE client key '%s' from '%s'", z85, addr);
        reply(z->rep, &f[1], "200", "OK", z85);
out:
        for (int i = 0; i < n; i++)
                zmq_msg_close(&f[i]);
}

static void *zap_thread(void *arg)
{
        struct zap *z = arg;

        for (;;) {
                zmq_pollitem_t items[] = {
                        { .socket = z->rep, .events = ZMQ_POLLIN },
                        { .socket = z->stop_rx, .events = ZMQ_POLLIN },
                };

                if (zmq_poll(items, 2, -1) < 0) {
                        if (zmq_errno() == EINTR)
                                continue;
                        break;
                }
                if (items[1].revents & ZMQ_POLLIN)
                        break;
                if (items[0].revents & ZMQ_POLLIN)
                        serve_one(z);
        }
        return NULL;
}

int zap_reload(struct zap *z, const char *keys_path, char *err, size_t errlen)
{
        uint8_t (*keys)[32], (*old)[32], *roles, *old_roles;
        size_t n;
        int r;

        r = zap_read_keys_roles(keys_path, &keys, &roles, &n, err, errlen);
        if (r < 0)
                return r;
        pthread_mutex_lock(&z->lock);
        old = z->keys;
        old_roles = z->roles;
        z->keys = keys;
        z->roles = roles;
        z->n_keys = n;
        pthread_mutex_unlock(&z->lock);
        free(old);
        free(old_roles);
        return 0;
}

int zap_role(struct zap *z, const char *z85)
{
        uint8_t key[32];
        int role = ACCESS_NONE;

        if (!z || !z85 || strlen(z85) != ZAP_KEY_Z85_LEN || !zmq_z85_decode(key, z85))
                return ACCESS_NONE;
        pthread_mutex_lock(&z->lock);
        for (size_t i = 0; i < z->n_keys && role == ACCESS_NONE; i++)
                if (!memcmp(z->keys[i], key, 32))
                        role = z->roles[i];
        pthread_mutex_unlock(&z->lock);
        return role;
}

size_t zap_count(struct zap *z)
{
        size_t n;

        pthread_mutex_lock(&z->lock);
        n = z->n_keys;
        pthread_mutex_unlock(&z->lock);
        return n;
}

static int sock_err(const char *what, char *err, size_t errlen)
{
        int r = -zmq_errno();

        snprintf(err, errlen, "%s: %s", what, zmq_strerror(-r));
        return r;
}

int zap_start(void *zctx, const char *keys_path, struct zap **ret, char *err, size_t errlen)
{
        int linger = 0, r;
        struct zap *z;

        z = calloc(1, sizeof(*z));
        if (!z) {
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        z->ctx = zctx;
        pthread_mutex_init(&z->lock, NULL);
        r = zap_reload(z, keys_path, err, errlen);
        if (r < 0)
                goto out_free;
        z->rep = zmq_socket(zctx, ZMQ_REP);
        z->stop_tx = zmq_socket(zctx, ZMQ_PAIR);
        z->stop_rx = zmq_socket(zctx, ZMQ_PAIR);
        if (!z->rep || !z->stop_tx || !z->stop_rx) {
                r = sock_err("zmq_socket", err, errlen);
                goto out_close;
        }
        zmq_setsockopt(z->rep, ZMQ_LINGER, &linger, sizeof(linger));
        zmq_setsockopt(z->stop_tx, ZMQ_LINGER, &linger, sizeof(linger));
        zmq_setsockopt(z->stop_rx, ZMQ_LINGER, &linger, sizeof(linger));
        snprintf(z->stop_ep, sizeof(z->stop_ep), "inproc://fmud-zap-stop-%p", (void *)z);
        if (zmq_bind(z->rep, ZAP_ENDPOINT) < 0) {
                r = sock_err("zmq_bind('" ZAP_ENDPOINT "')", err, errlen);
                goto out_close;
        }
        if (zmq_bind(z->stop_rx, z->stop_ep) < 0 || zmq_connect(z->stop_tx, z->stop_ep) < 0) {
                r = sock_err("the ZAP handler's stop pipe", err, errlen);
                goto out_close;
        }
        /* pthread_create() is the full barrier that hands rep and stop_rx to the thread. */
        r = -pthread_create(&z->thread, NULL, zap_thread, z);
        if (r < 0) {
                snprintf(err, errlen, "pthread_create: %s", strerror(-r));
                goto out_close;
        }
        *ret = z;
        return 0;
out_close:
        if (z->rep)
                zmq_close(z->rep);
        if (z->stop_tx)
                zmq_close(z->stop_tx);
        if (z->stop_rx)
                zmq_close(z->stop_rx);
out_free:
        free(z->keys);
        free(z->roles);
        pthread_mutex_destroy(&z->lock);
        free(z);
        return r;
}

void zap_stop(struct zap *z)
{
        if (!z)
                return;
        zmq_send(z->stop_tx, "", 0, 0);
        pthread_join(z->thread, NULL);
        zmq_close(z->rep);
        zmq_close(z->stop_rx);
        zmq_close(z->stop_tx);
        free(z->keys);
        free(z->roles);
        pthread_mutex_destroy(&z->lock);
        free(z);
}

int zap_curve_server(void *s, const char *secret_key_file, char *err, size_t errlen)
{
        char secret[ZAP_KEY_Z85_LEN + 1];
        int one = 1, r;

        r = zap_read_secret(secret_key_file, secret, err, errlen);
        if (r < 0)
                return r;
        r = zmq_setsockopt(s, ZMQ_CURVE_SERVER, &one, sizeof(one));
        if (r == 0)
                r = zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, secret, ZAP_KEY_Z85_LEN + 1);
        /* A domain makes libzmq consult the handler for every connection. */
        if (r == 0)
                r = zmq_setsockopt(s, ZMQ_ZAP_DOMAIN, "fmud", 4);
        explicit_bzero(secret, sizeof(secret));
        if (r < 0) {
                r = -zmq_errno();
                return r < 0 ? r : -EIO;
        }
        return 0;
}
