/*
 * libfmud_pub: subscriptions and the SUB socket (fmud.h).
 *
 * DESIGN: ZMQ filters by topic prefix ("s1" would also match "s12"), so
 * every message is checked here against the exact topics subscribed and
 * dropped otherwise. A subscription remembers its variables' names: the
 * daemon sends them only with a subscription's first sample, which a SUB
 * socket that joined late never sees.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libfmud_int.h"

#define EVENTS_TOPIC "events"

void fmud_pub_release(struct fmud *c)
{
        pv_doc_fini(&c->pub_doc);
        free(c->pub_mem);
        c->pub_mem = NULL;
        zmq_msg_close(&c->pub_msg);
        zmq_msg_init(&c->pub_msg);
        c->pub_topic[0] = '\0';
}

static void sub_fini(struct fmud_sub *s)
{
        free(s->topic);
        free(s->names);
        free(s->blob);
        *s = (struct fmud_sub){ 0 };
}

void fmud_pub_fini(struct fmud *c)
{
        fmud_pub_release(c);
        fmud_early_clear(c);
        c->n_gap = 0;
        c->pub_after_gap = false;
        for (size_t i = 0; i < c->n_subs; i++)
                sub_fini(&c->subs[i]);
        free(c->subs);
        c->subs = NULL;
        c->n_subs = 0;
        c->events_on = false;
        c->logs_topic[0] = '\0';
        c->telem_topic[0] = '\0';
        if (c->sub)
                zmq_close(c->sub);
        c->sub = NULL;
}

static int open_sub(struct fmud *c)
{
        int zero = 0, r;
        int64_t maxmsg = PROTO_MAX_MSG;

        if (c->sub)
                return 0;
        if (!c->pub_endpoint || !c->pub_endpoint[0])
                return fmud_fail(c, -ENOTSUP, "the daemon publishes no events");
        c->sub = zmq_socket(c->ctx, ZMQ_SUB);
        if (!c->sub)
                return fmud_fail(c, -errno, "zmq_socket: %s", zmq_strerror(errno));
        if (zmq_setsockopt(c->sub, ZMQ_LINGER, &zero, sizeof(zero)) < 0 ||
            zmq_setsockopt(c->sub, ZMQ_MAXMSGSIZE, &maxmsg, sizeof(maxmsg)) < 0)
                r = -errno;
        else
                r = fmud_socket_curve(c, c->sub);
        if (r == 0 && zmq_connect(c->sub, c->pub_endpoint) < 0)
                r = -errno;
        if (r < 0) {
                zmq_close(c->sub);
                c->sub = NULL;
                return fmud_fail(c, r, "cannot connect to '%s': %s", c->pub_endpoint,
                                 strerror(-r));
        }
        return 0;
}

/* Copy names into s (one blob). */
static int sub_set_names(struct fmud_sub *s, const struct proto_str *names, uint32_t n)
{
        size_t bytes = 0, at = 0;
        struct proto_str *v;
        char *blob;

        for (uint32_t i = 0; i < n; i++)
                bytes += names[i].len + 1;
        v = calloc(n ? n : 1, sizeof(*v));
        blob = malloc(bytes ? bytes : 1);
        if (!v || !blob) {
                free(v);
                free(blob);
                return -ENOMEM;
        }
        for (uint32_t i = 0; i < n; i++) {
                memcpy(blob + at, names[i].ptr, names[i].len);
                blob[at + names[i].len] = '\0';
                v[i] = (struct proto_str){ blob + at, names[i].len };
                at += names[i].len + 1;
        }
        free(s->names);
        free(s->blob);
        s->names = v;
        s->blob = blob;
        s->n = n;
        return 0;
}

static struct fmud_sub *find_sub(struct fmud *c, const char *topic)
{
        for (size_t i = 0; i < c->n_subs; i++)
                if (!strcmp(c->subs[i].topic, topic))
                        return &c->subs[i];
        return NULL;
}

static int add_sub(struct fmud *c, const char *topic, const char *const names[], size_t n)
{
        struct fmud_sub *v, s = { 0 };
        struct proto_str *tmp;
        int r;

        if (find_sub(c, topic))
                return 0;
        tmp = calloc(n ? n : 1, sizeof(*tmp));
        s.topic = strdup(topic);
        if (!tmp || !s.topic)
                goto out_nomem;
        for (size_t i = 0; i < n; i++)
                tmp[i] = (struct proto_str){ names[i], (uint32_t)strlen(names[i]) };
        r = sub_set_names(&s, tmp, (uint32_t)n);
        if (r < 0)
                goto out_nomem;
        v = realloc(c->subs, (c->n_subs + 1) * sizeof(*v));
        if (!v)
                goto out_nomem;
        c->subs = v;
        c->subs[c->n_subs++] = s;
        free(tmp);
        return 0;

out_nomem:
        free(tmp);
        sub_fini(&s);
        return fmud_fail(c, -ENOMEM, "out of memory");
}

int fmud_subscribe(struct fmud *c, const struct proto_target *t, const char *const names[],
                   size_t n, uint64_t decimation, char *ret_topic, size_t topic_len)
{
        return fmud_subscribe_every(c, t, names, n, decimation, false, ret_topic, topic_len);
}

/*
 * The subscribe request; its topic into topic. The subscription's samples
 * are caught by the session's prefix the caller subscribed to.
 */
static int subscribe_call(struct fmud *c, struct proto_subscribe *a, const char *prefix,
                          char *topic, size_t topic_len)
{
        struct proto_subscribe_result res;
        const struct pv *v;
        char err[160];
        uint64_t id;
        int r;

        id = fmud_begin(c);
        proto_subscribe_encode(&c->w, id, a);
        r = fmud_call(c, id, "subscribe", &v);
        if (r < 0)
                return r;
        if (proto_subscribe_result_decode(v, &res, err, sizeof(err)) < 0)
                return fmud_bad_result(c, "subscribe", err);
        if (res.topic.len <= strlen(prefix) || res.topic.len > FMUD_MAX_TOPIC ||
            memchr(res.topic.ptr, '\0', res.topic.len) ||
            memcmp(res.topic.ptr, prefix, strlen(prefix)))
                return fmud_bad_result(c, "subscribe", "invalid topic");
        fmud_str(res.topic, topic, topic_len);
        return 0;
}

int fmud_subscribe_every(struct fmud *c, const struct proto_target *t, const char *const names[],
                         size_t n, uint64_t decimation, bool every_point, char *ret_topic,
                         size_t topic_len)
{
        struct proto_subscribe a;
        struct proto_str *s;
        char prefix[32], topic[FMUD_MAX_TOPIC + 1];
        int r;

        if (!c || !t)
                return fmud_missing(c, "subscribe", "the target");
        a = (struct proto_subscribe){ .t = *t, .n = (uint32_t)n, .decimation = decimation,
                                      .every_point = every_point };
        r = fmud_names(c, names, n, &s);
        if (r < 0)
                return r;
        r = open_sub(c);
        if (r < 0) {
                free(s);
                return r;
        }
        /*
         * Samples start at the point after the reply: the session's prefix
         * is in force before the request, so none is lost while the exact
         * topic is not known yet (the others are dropped by fmud_next()).
         */
        snprintf(prefix, sizeof(prefix), "s%llu.", (unsigned long long)t->session);
        if (zmq_setsockopt(c->sub, ZMQ_SUBSCRIBE, prefix, strlen(prefix)) < 0) {
                free(s);
                return fmud_fail(c, -errno, "ZMQ_SUBSCRIBE: %s", zmq_strerror(errno));
        }
        a.names = s;
        r = fmud_sub_join(c);
        if (r == 0) {
                c->keep_sub = true;
                r = subscribe_call(c, &a, prefix, topic, sizeof(topic));
                c->keep_sub = false;
        }
        free(s);
        if (r == 0 && ret_topic && strlen(topic) >= topic_len) {
                /* Refused here: the daemon's subscription goes too, or it would publish on. */
                (void)fmud_unsubscribe(c, t, topic);
                r = fmud_fail(c, -ENAMETOOLONG, "subscribe: topic '%s' too long", topic);
        }
        if (r == 0)
                r = add_sub(c, topic, names, n);
        if (r == 0 && zmq_setsockopt(c->sub, ZMQ_SUBSCRIBE, topic, strlen(topic)) < 0)
                r = fmud_fail(c, -errno, "ZMQ_SUBSCRIBE: %s", zmq_strerror(errno));
        (void)zmq_setsockopt(c->sub, ZMQ_UNSUBSCRIBE, prefix, strlen(prefix));
        if (r == 0 && ret_topic)
                memcpy(ret_topic, topic, strlen(topic) + 1);
        return r;
}

int fmud_unsubscribe(struct fmud *c, const struct proto_target *t, const char *topic)
{
        struct proto_unsubscribe a;
        struct fmud_sub *s;
        const struct pv *v;
        uint64_t id;

        if (!c || !t || !topic)
                return fmud_missing(c, "unsubscribe", !t ? "the target" : "the topic");
        if (!*topic || strlen(topic) > FMUD_MAX_TOPIC)
                return fmud_fail(c, -EINVAL, "unsubscribe: the topic is empty or too long");
        a = (struct proto_unsubscribe){ .t = *t };
        s = find_sub(c, topic);
        if (s) {
                if (c->sub)
                        (void)zmq_setsockopt(c->sub, ZMQ_UNSUBSCRIBE, topic, strlen(topic));
                sub_fini(s);
                *s = c->subs[--c->n_subs];
        }
        a.topic = (struct proto_str){ topic, (uint32_t)strlen(topic) };
        id = fmud_begin(c);
        proto_unsubscribe_encode(&c->w, id, &a);
        return fmud_call(c, id, "unsubscribe", &v);
}

int fmud_events(struct fmud *c, bool on)
{
        int r;

        if (!c)
                return -EINVAL;
        if (on == c->events_on)
                return 0;
        r = open_sub(c);
        if (r < 0)
                return r;
        if (zmq_setsockopt(c->sub, on ? ZMQ_SUBSCRIBE : ZMQ_UNSUBSCRIBE, EVENTS_TOPIC,
                           strlen(EVENTS_TOPIC)) < 0)
                return fmud_fail(c, -errno, "ZMQ_SUBSCRIBE: %s", zmq_strerror(errno));
        c->events_on = on;
        r = on ? fmud_sub_join(c) : 0;
        if (r < 0) {
                (void)zmq_setsockopt(c->sub, ZMQ_UNSUBSCRIBE, EVENTS_TOPIC, strlen(EVENTS_TOPIC));
                c->events_on = false;
        }
        return r;
}

int fmud_logs_follow(struct fmud *c, uint64_t session, bool on)
{
        char topic[sizeof(c->logs_topic)];
        int r;

        if (!c)
                return -EINVAL;
        snprintf(topic, sizeof(topic), PROTO_LOG_TOPIC_PREFIX "%llu", (unsigned long long)session);
        if (on ? !strcmp(topic, c->logs_topic) : strcmp(topic, c->logs_topic) != 0)
                return 0;
        r = open_sub(c);
        if (r < 0)
                return r;
        if (on && c->logs_topic[0])
                (void)zmq_setsockopt(c->sub, ZMQ_UNSUBSCRIBE, c->logs_topic,
                                     strlen(c->logs_topic));
        if (zmq_setsockopt(c->sub, on ? ZMQ_SUBSCRIBE : ZMQ_UNSUBSCRIBE, topic,
                           strlen(topic)) < 0)
                return fmud_fail(c, -errno, "ZMQ_SUBSCRIBE: %s", zmq_strerror(errno));
        memcpy(c->logs_topic, on ? topic : "", on ? strlen(topic) + 1 : 1);
        r = on ? fmud_sub_join(c) : 0;
        if (r < 0) {
                (void)zmq_setsockopt(c->sub, ZMQ_UNSUBSCRIBE, topic, strlen(topic));
                c->logs_topic[0] = '\0';
        }
        return r;
}

int fmud_telemetry(struct fmud *c, uint64_t session, bool on)
{
        char topic[sizeof(c->telem_topic)];
        int r;

        if (!c)
                return -EINVAL;
        snprintf(topic, sizeof(topic), "t%llu", (unsigned long long)session);
        if (on ? !strcmp(topic, c->telem_topic) : strcmp(topic, c->telem_topic))
                return 0;
        r = open_sub(c);
        if (r < 0)
                return r;
        if (c->telem_topic[0] && zmq_setsockopt(c->sub, ZMQ_UNSUBSCRIBE, c->telem_topic,
                                                strlen(c->telem_topic)) < 0)
                return fmud_fail(c, -errno, "ZMQ_UNSUBSCRIBE: %s", zmq_strerror(errno));
        c->telem_topic[0] = '\0';
        if (!on)
                return 0;
        if (zmq_setsockopt(c->sub, ZMQ_SUBSCRIBE, topic, strlen(topic)) < 0)
                return fmud_fail(c, -errno, "ZMQ_SUBSCRIBE: %s", zmq_strerror(errno));
        memcpy(c->telem_topic, topic, sizeof(topic));
        r = fmud_sub_join(c);
        if (r < 0) {
                (void)zmq_setsockopt(c->sub, ZMQ_UNSUBSCRIBE, topic, strlen(topic));
                c->telem_topic[0] = '\0';
        }
        return r;
}

void fmud_drain(void *sock)
{
        int more = 1;
        size_t len = sizeof(more);
        zmq_msg_t m;

        while (zmq_getsockopt(sock, ZMQ_RCVMORE, &more, &len) == 0 && more) {
                zmq_msg_init(&m);
                if (zmq_msg_recv(&m, sock, ZMQ_DONTWAIT) < 0) {
                        zmq_msg_close(&m);
                        return;
                }
                zmq_msg_close(&m);
                len = sizeof(more);
        }
}

/* The topic frame m into the PUB slot's topic, closing m; -EPROTO when it is no topic. */
static int take_topic(struct fmud *c, zmq_msg_t *m)
{
        size_t len = zmq_msg_size(m);
        int r = -EPROTO;

        if (len <= FMUD_MAX_TOPIC && !memchr(zmq_msg_data(m), '\0', len)) {
                memcpy(c->pub_topic, zmq_msg_data(m), len);
                c->pub_topic[len] = '\0';
                r = 0;
        }
        zmq_msg_close(m);
        return r;
}

/*
 * Receive topic and body into the PUB slot (a message kept by a join
 * first); -EAGAIN when nothing is queued, -EPROTO when malformed (dropped).
 */
static int recv_pub(struct fmud *c)
{
        zmq_msg_t m;
        bool more;

        zmq_msg_init(&m);
        c->pub_after_gap = false;
        if (fmud_early_take(c, &m, &c->pub_msg, &c->pub_after_gap) == 0)
                return take_topic(c, &m);
        if (zmq_msg_recv(&m, c->sub, ZMQ_DONTWAIT) < 0) {
                zmq_msg_close(&m);
                return -errno;
        }
        more = zmq_msg_more(&m);
        if (more && c->n_gap)
                c->pub_after_gap = fmud_gap_take(c, zmq_msg_data(&m), zmq_msg_size(&m));
        if (!more || take_topic(c, &m) < 0) {
                if (!more)
                        zmq_msg_close(&m);
                else
                        fmud_drain(c->sub);
                return -EPROTO;
        }
        if (zmq_msg_recv(&c->pub_msg, c->sub, ZMQ_DONTWAIT) < 0)
                return -EPROTO;
        if (zmq_msg_more(&c->pub_msg)) {
                fmud_drain(c->sub);
                return -EPROTO;
        }
        return 0;
}

/* Decode the message in the PUB slot; 1: not for us (dropped). */
static int decode_pub(struct fmud *c, struct fmud_msg *ret)
{
        struct proto_limits lim;
        struct fmud_sub *s;
        char err[160];
        int r;

        if (c->logs_topic[0] && !strcmp(c->pub_topic, c->logs_topic)) {
                proto_limits_default(&lim);
                r = pv_decode(zmq_msg_data(&c->pub_msg), zmq_msg_size(&c->pub_msg), &lim,
                              &c->pub_doc, err, sizeof(err));
                *ret = (struct fmud_msg){ .topic = c->pub_topic, .kind = FMUD_MSG_LOG };
                if (r == 0)
                        r = proto_log_decode(c->pub_doc.root, &ret->log, err, sizeof(err));
                if (r < 0)
                        return fmud_fail(c, -EPROTO, "malformed log message: %s", err);
                return 0;
        }
        bool telem = c->telem_topic[0] && !strcmp(c->pub_topic, c->telem_topic);

        if ((c->events_on && !strcmp(c->pub_topic, EVENTS_TOPIC)) || telem) {
                s = NULL;
        } else {
                s = find_sub(c, c->pub_topic);
                if (!s)
                        return 1;
        }
        proto_limits_default(&lim);
        r = pv_decode(zmq_msg_data(&c->pub_msg), zmq_msg_size(&c->pub_msg), &lim, &c->pub_doc,
                      err, sizeof(err));
        if (r < 0)
                return fmud_fail(c, -EPROTO, "malformed message on '%s': %s", c->pub_topic, err);
        *ret = (struct fmud_msg){ .topic = c->pub_topic };
        if (telem) {
                ret->kind = FMUD_MSG_TELEMETRY;
                if (proto_telemetry_decode(c->pub_doc.root, &ret->telemetry, &c->pub_mem, err,
                                           sizeof(err)) < 0)
                        return fmud_fail(c, -EPROTO, "malformed telemetry: %s", err);
                return 0;
        }
        if (!s) {
                ret->kind = FMUD_MSG_EVENT;
                if (proto_event_decode(c->pub_doc.root, &ret->event, err, sizeof(err)) < 0)
                        return fmud_fail(c, -EPROTO, "malformed event: %s", err);
                return 0;
        }
        ret->kind = FMUD_MSG_SAMPLE;
        if (proto_sample_decode(c->pub_doc.root, &ret->sample, &c->pub_mem, err, sizeof(err)) < 0)
                return fmud_fail(c, -EPROTO, "malformed sample on '%s': %s", c->pub_topic, err);
        if (ret->sample.names) {
                if (sub_set_names(s, ret->sample.names, ret->sample.n) < 0)
                        return fmud_fail(c, -ENOMEM, "out of memory");
        }
        ret->sample.names = s->n == ret->sample.n && s->n ? s->names : NULL;
        if (c->pub_after_gap)
                ret->sample.flags |= PROTO_SAMPLE_DROPPED;      /* one before it was dropped */
        return 0;
}

int fmud_next(struct fmud *c, int timeout_ms, struct fmud_msg *ret)
{
        int64_t deadline = timeout_ms < 0 ? -1 : fmud_now_ms() + timeout_ms;
        zmq_pollitem_t it;
        long left;
        int n, r;

        if (!c || !ret)
                return fmud_missing(c, "next", "the message's place");
        fmud_pub_release(c);
        if (!c->sub || (!c->n_subs && !c->events_on && !c->logs_topic[0] && !c->telem_topic[0]))
                return fmud_fail(c, -ENOTCONN, "nothing is subscribed");
        for (;;) {
                r = recv_pub(c);
                if (r == 0) {
                        r = decode_pub(c, ret);
                        if (r <= 0)
                                return r;
                        fmud_pub_release(c);
                        continue;
                }
                if (r == -EPROTO)
                        return fmud_fail(c, r, "malformed PUB message framing");
                if (r != -EAGAIN)
                        return fmud_fail(c, r, "receive: %s", zmq_strerror(-r));
                left = deadline < 0 ? -1 : (long)(deadline - fmud_now_ms());
                if (deadline >= 0 && left <= 0)
                        return -EAGAIN;
                it = (zmq_pollitem_t){ .socket = c->sub, .events = ZMQ_POLLIN };
                n = zmq_poll(&it, 1, left);
                if (n < 0)
                        return fmud_fail(c, -errno, "poll: %s", zmq_strerror(errno));
                if (n == 0)
                        return -EAGAIN;
        }
}
