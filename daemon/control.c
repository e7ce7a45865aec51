/*
 * control: the control thread's loop (control.h).
 *
 * Thread: control_run() owns every socket and the peer table. Other
 * threads touch only c->q (control_complete(), control_publish()).
 */
#include "control.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>
#include <zmq.h>

#include "control_int.h"
#include "control_join.h"
#include "control_log.h"
#include "daemon/host.h"
#include "daemon/notify.h"
#include "daemon/pub_drops.h"

#define SERVE_BATCH     64      /* messages per socket per turn, so no socket starves another */

int control_new(const struct fmud_config *cfg, struct control **ret, char *err, size_t errlen)
{
        struct control *c;
        int r;

        c = calloc(1, sizeof(*c));
        if (!c) {
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        c->cfg = cfg;
        c->q.efd = -1;
        ctl_rig_init(c);
        access_cache_init(&c->roles, NULL);
        peers_init(&c->peers);
        proto_limits_default(&c->lim);
        c->lim.max_msg = cfg->max_message;
        clock_gettime(CLOCK_MONOTONIC, &c->started);
        r = cq_init(&c->q, CTL_MAX_PUBS);
        if (r < 0) {
                snprintf(err, errlen, "eventfd: %s", strerror(-r));
                goto out_free;
        }
        c->zctx = zmq_ctx_new();
        if (!c->zctx) {
                r = -errno;
                snprintf(err, errlen, "zmq_ctx_new: %s", zmq_strerror(errno));
                goto out_free;
        }
        r = ctl_bind_all(c, err, errlen);
        if (r == 0)
                r = ctl_rig_bind(c, err, errlen);
        if (r < 0)
                goto out_free;
        *ret = c;
        return 0;
out_free:
        control_free(c);
        return r;
}

void control_set_host(struct control *c, struct host *h)
{
        c->host = h;
}

void control_set_reload(struct control *c, control_reload_fn *fn, void *ctx)
{
        c->reload = fn;
        c->reload_ctx = ctx;
}

void control_complete(void *ctx, uint64_t token, void *buf, size_t len)
{
        struct control *c = ctx;

        cq_push_reply(&c->q, token, buf, len);
}

void control_gone(void *ctx, uint64_t session)
{
        struct control *c = ctx;

        cq_push_gone(&c->q, session);
}

void control_publish(void *ctx, const char *topic, void *body, size_t len,
                     struct pub_drops *drops)
{
        struct control *c = ctx;

        cq_push_pub(&c->q, topic, body, len, drops);
}

int control_reload_keys(struct control *c, const char *path, char *err, size_t errlen)
{
        if (!c->zap)
                return 0;
        return zap_reload(c->zap, path, err, errlen);
}

/*
 * The publishing sockets are XPUB with ZMQ_XPUB_NODROP (control_sock.c):
 * never blocking, a send that would pass a matching subscriber's
 * ZMQ_SNDHWM fails with EAGAIN instead of vanishing, so the loss is
 * known: counted in the subscription's drops (the session flags its next
 * sample) and logged as it doubles. The subscribe messages an XPUB hands
 * up are read in control_run(), which polls the XPUBs, and joins answered
 * there (ZMQ keeps its own table of the subscriptions): not here, once per
 * publication.
 */
static void publish(struct control *c, const struct cq_item *it)
{
        bool lost = false;

        for (int i = 0; i < CTL_MAX_SOCKS; i++) {
                if (!c->pub[i])
                        continue;
                if (zmq_send(c->pub[i], it->topic, strlen(it->topic), ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0)
                        lost = true;
                else
                        zmq_send(c->pub[i], it->buf, it->len, ZMQ_DONTWAIT);
        }
        if (!lost)
                return;
        pub_drops_add(it->drops);
        c->pub_lost++;
        if (c->pub_lost >= 2 * c->pub_lost_logged) {
                log_warn("'%s': a subscriber does not keep up; %llu messages not sent so far",
                         it->topic, (unsigned long long)c->pub_lost);
                c->pub_lost_logged = c->pub_lost;
        }
}

static void drain(struct control *c)
{
        struct cq_item *replies, *pubs, *next;
        struct ctl_peer p;
        uint64_t dropped;

        dropped = cq_take(&c->q, &replies, &pubs);
        for (; replies; replies = next) {
                next = replies->next;
                if (replies->gone) {
                        ctl_rig_remote_gone(c, replies->session);
                } else if (replies->has_fd) {
                        /*
                         * A rig channel: answered with its token (control_rig.c),
                         * over tcp with a bridge (control_rig_remote.c).
                         */
                        if (peers_take(&c->peers, replies->token, &p) < 0)
                                log_warn("a rig channel for unknown request token %llu, dropped",
                                         (unsigned long long)replies->token);
                        else if (p.sock == CTL_SOCK_TCP)
                                ctl_rig_remote_grant(c, &p, replies);
                        else
                                ctl_rig_grant(c, &p, replies);
                } else if (peers_take(&c->peers, replies->token, &p) == 0) {
                        ctl_log_outcome(&p, replies->buf, replies->len);
                        ctl_send(c, &p, replies->buf, replies->len);
                } else
                        log_warn("a reply to unknown request token %llu, dropped",
                                 (unsigned long long)replies->token);
                cq_item_free(replies);
        }
        for (; pubs; pubs = next) {
                next = pubs->next;
                publish(c, pubs);
                cq_item_free(pubs);
        }
        /* Log growth by factors of two, so a flood costs a few lines only. */
        if (dropped > c->dropped_logged && dropped >= 2 * c->dropped_logged) {
                log_warn("%llu publications dropped so far (queue full: subscribers or the "
                         "loop are slower than the sessions)", (unsigned long long)dropped);
                c->dropped_logged = dropped;
        }
}

static void on_signal(struct control *c, int sigfd)
{
        struct signalfd_siginfo si;

        while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
                switch (si.ssi_signo) {
                case SIGTERM:
                case SIGINT:
                        log_notice("%s received, stopping", si.ssi_signo == SIGTERM ? "SIGTERM" :
                                                                                     "SIGINT");
                        c->stop = true;
                        break;
                case SIGHUP:
                        if (c->reload)
                                c->reload(c->reload_ctx, c);
                        /* The [roles] may have changed: every user's role is looked up again. */
                        access_cache_clear(&c->roles);
                        break;
                default:        /* SIGPIPE: a peer went away; the write that caused it says so */
                        break;
                }
        }
}

/* Everything is up (directories, sockets, host): only now say so, in every way asked. */
static void announce_ready(const struct control *c, int ready_fd)
{
        const struct fmud_config *cfg = c->cfg;
        int r;

        log_info("serving requests on '%s', publishing on '%s'", cfg->endpoint,
                 cfg->pub_endpoint);
        if (cfg->tcp_endpoint)
                log_info("serving requests on '%s', publishing on '%s'", cfg->tcp_endpoint,
                         cfg->tcp_pub_endpoint ? cfg->tcp_pub_endpoint : "(none)");
        if (ready_fd >= 0) {
                if (write(ready_fd, "READY\n", 6) != 6)
                        log_warn("--ready-fd %d: %s, ignoring", ready_fd, strerror(errno));
                close(ready_fd);
        }
        r = notify_send("READY=1\nSTATUS=serving");
        if (r < 0)
                log_warn("sd_notify READY=1: %s, ignoring", strerror(-r));
}

struct sub_ctx {
        struct control *c;
        int sock;
};

static bool sub_live(void *ctx, uint64_t session, uint64_t n)
{
        struct control *c = ctx;

        return c->host && host_sub_live(c->host, session, n);
}

/* A subscription message other than a join: who subscribes to sample topics (control_subs.h). */
static void on_sub_msg(void *ctx, const unsigned char *m, size_t len)
{
        struct sub_ctx *x = ctx;

        ctl_subs_note(&x->c->subs, x->sock, m, len, ctl_now_ms(), sub_live, x->c);
}

static void sub_gone(void *ctx, uint64_t session, uint64_t n)
{
        struct control *c = ctx;

        if (c->host)
                host_sub_gone(c->host, session, n);
}

int control_run(struct control *c, int sigfd, int ready_fd)
{
        uint64_t wd_us = notify_watchdog_period_us();
        struct timespec next_wd = { 0 }, now;
        zmq_pollitem_t items[2 * CTL_MAX_SOCKS + 2 + RIG_MAX_CONNS + 1];
        int n = 0, n_routers, n_rig, sock_of[2 * CTL_MAX_SOCKS + 2];

        for (int i = 0; i < CTL_MAX_SOCKS; i++)
                if (c->router[i]) {
                        sock_of[n] = i;
                        items[n++] = (zmq_pollitem_t){ .socket = c->router[i], .events = ZMQ_POLLIN };
                }
        n_routers = n;
        /* Subscriptions: a join is answered at once, not at the next publication. */
        for (int i = 0; i < CTL_MAX_SOCKS; i++)
                if (c->pub[i]) {
                        sock_of[n] = i;
                        items[n++] = (zmq_pollitem_t){ .socket = c->pub[i], .events = ZMQ_POLLIN };
                }
        items[n++] = (zmq_pollitem_t){ .fd = c->q.efd, .events = ZMQ_POLLIN };
        items[n++] = (zmq_pollitem_t){ .fd = sigfd, .events = ZMQ_POLLIN };
        announce_ready(c, ready_fd);
        while (!c->stop) {
                long timeout = -1;

                if (wd_us) {
                        clock_gettime(CLOCK_MONOTONIC, &now);
                        if (now.tv_sec > next_wd.tv_sec ||
                            (now.tv_sec == next_wd.tv_sec && now.tv_nsec >= next_wd.tv_nsec)) {
                                (void)notify_send("WATCHDOG=1");
                                next_wd.tv_sec = now.tv_sec + (time_t)(wd_us / 1000000);
                                next_wd.tv_nsec = now.tv_nsec + (long)(wd_us % 1000000) * 1000;
                                if (next_wd.tv_nsec >= 1000000000L) {
                                        next_wd.tv_sec++;
                                        next_wd.tv_nsec -= 1000000000L;
                                }
                        }
                        timeout = (long)(next_wd.tv_sec - now.tv_sec) * 1000 +
                                  (next_wd.tv_nsec - now.tv_nsec) / 1000000 + 1;
                        if (timeout < 1)
                                timeout = 1;
                }
                if (c->host) {
                        /* Only while a session is transient: an idle daemon sleeps. */
                        long lease = host_lease_check(c->host,
                                                      (uint64_t)(c->cfg->transient_grace * 1e9));

                        long stop = host_stop_check(c->host);

                        if (lease >= 0 && (timeout < 0 || lease < timeout))
                                timeout = lease;
                        if (stop >= 0 && (timeout < 0 || stop < timeout))
                                timeout = stop;
                }
                /* Subscriptions whose subscribers left, after the grace a transient session gets. */
                if (c->subs.n) {
                        long gone = ctl_subs_expire(&c->subs, ctl_now_ms(),
                                                    (int64_t)(c->cfg->transient_grace * 1000),
                                                    sub_gone, c);

                        if (gone >= 0 && (timeout < 0 || gone < timeout))
                                timeout = gone;
                }
                /* The rig socket's connections come and go: after the fixed items. */
                n_rig = ctl_rig_poll_items(c, items + n, RIG_MAX_CONNS + 1, &timeout);
                if (zmq_poll(items, n + n_rig, timeout) < 0) {
                        if (zmq_errno() == EINTR)
                                continue;
                        log_err("zmq_poll: %s", zmq_strerror(zmq_errno()));
                        return -zmq_errno();
                }
                for (int i = n_routers; i < n - 2; i++) {
                        struct sub_ctx x = { c, sock_of[i] };

                        if (items[i].revents & ZMQ_POLLIN)
                                (void)ctl_join_serve(c->pub[sock_of[i]], SERVE_BATCH, on_sub_msg,
                                                     &x);
                }
                for (int i = 0; i < n_routers; i++) {
                        for (int k = 0; k < SERVE_BATCH && !c->stop; k++) {
                                int ev = 0;
                                size_t sz = sizeof(ev);

                                if (zmq_getsockopt(items[i].socket, ZMQ_EVENTS, &ev, &sz) < 0 ||
                                    !(ev & ZMQ_POLLIN))
                                        break;
                                ctl_serve(c, sock_of[i]);
                        }
                }
                if (items[n - 2].revents & ZMQ_POLLIN)
                        drain(c);
                if (items[n - 1].revents & ZMQ_POLLIN)
                        on_signal(c, sigfd);
                ctl_rig_serve(c, items + n, n_rig);
        }
        (void)notify_send("STOPPING=1");
        drain(c);
        return 0;
}

void control_flush(struct control *c)
{
        drain(c);
}

void control_free(struct control *c)
{
        if (!c)
                return;
        for (int i = 0; i < CTL_MAX_SOCKS; i++) {
                if (c->router[i])
                        zmq_close(c->router[i]);
                if (c->pub[i])
                        zmq_close(c->pub[i]);
        }
        ctl_rig_remote_fini(c);         /* their sockets, before the context ends */
        zap_stop(c->zap);
        if (c->zctx)
                zmq_ctx_term(c->zctx);  /* waits up to CTL_LINGER_MS for the last replies */
        ctl_rig_fini(c);
        ctl_remove_files(c);
        cq_fini(&c->q);
        peers_fini(&c->peers);
        ctl_subs_fini(&c->subs);
        free(c);
}
