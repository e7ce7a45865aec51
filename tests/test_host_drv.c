/* Test driver for daemon/host.h (test_host_drv.h). */
#include "test_host_drv.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "daemon/pub_drops.h"
#include "support/tmpdir.h"

static void on_complete(void *ctx, uint64_t token, void *buf, size_t len)
{
        struct hdrv *d = ctx;

        pthread_mutex_lock(&d->lock);
        if (d->n_replies < sizeof(d->replies) / sizeof(d->replies[0]))
                d->replies[d->n_replies++] = (struct hmsg){ .token = token, .buf = buf, .len = len };
        else
                free(buf);
        pthread_cond_broadcast(&d->cond);
        pthread_mutex_unlock(&d->lock);
}

static void on_publish(void *ctx, const char *topic, void *body, size_t len,
                       struct pub_drops *drops)
{
        struct hdrv *d = ctx;

        pub_drops_unref(drops);         /* every message is kept: nothing is lost here */
        pthread_mutex_lock(&d->lock);
        if (d->n_pubs == d->pub_cap) {
                size_t cap = d->pub_cap ? 2 * d->pub_cap : 256;
                struct hmsg *p = realloc(d->pubs, cap * sizeof(*p));

                if (!p) {
                        free(body);
                        pthread_mutex_unlock(&d->lock);
                        return;
                }
                d->pubs = p;
                d->pub_cap = cap;
        }
        d->pubs[d->n_pubs++] = (struct hmsg){ .topic = strdup(topic), .buf = body, .len = len };
        pthread_cond_broadcast(&d->cond);
        pthread_mutex_unlock(&d->lock);
}

static void init(struct hdrv *d, const char *worker, const char *extra, enum host_sandbox mode)
{
        const char *allowed[4];
        struct host_opts o;
        char *msg = NULL;
        size_t n = 0;
        int r;

        memset(d, 0, sizeof(*d));
        pthread_mutex_init(&d->lock, NULL);
        pthread_cond_init(&d->cond, NULL);
        d->dir = tmpdir_new("host");
        cr_assert(d->dir != NULL);
        snprintf(d->cache, sizeof(d->cache), "%s/cache", d->dir);
        snprintf(d->scratch, sizeof(d->scratch), "%s/scratch", d->dir);
        snprintf(d->out, sizeof(d->out), "%s/out", d->dir);
        cr_assert(mkdir(d->cache, 0700) == 0 && mkdir(d->scratch, 0700) == 0 &&
                  mkdir(d->out, 0700) == 0);
        /* A root daemon's sandboxed worker runs as another user: it must reach the cache. */
        if (mode != HOST_SANDBOX_OFF)
                cr_assert(chmod(d->dir, 0755) == 0 && chmod(d->cache, 0755) == 0 &&
                          chmod(d->scratch, 0755) == 0);
        allowed[n++] = FMUD_EXAMPLES_DIR;
        allowed[n++] = FMUD_TEST_FMU_DIR;
        allowed[n++] = d->out;
        if (extra)
                allowed[n++] = extra;
        host_opts_default(&o);
        o.worker_path = worker;
        o.cache_dir = d->cache;
        o.scratch_dir = d->scratch;
        o.n_allowed = n;
        o.allowed = allowed;
        o.n_output = 1;
        o.output = &allowed[2];         /* d->out */
        o.sandbox = mode;
        o.complete = on_complete;
        o.complete_ctx = d;
        o.publish = on_publish;
        o.publish_ctx = d;
        r = host_new(&o, &d->h, &msg);
        cr_assert(r == 0, "host_new: %d %s", r, msg ? msg : "");
        d->next_id = 1;
}

void hdrv_init(struct hdrv *d, const char *extra_allowed)
{
        init(d, FMUD_WORKER, extra_allowed, HOST_SANDBOX_OFF);
}

void hdrv_init_sandbox(struct hdrv *d, enum host_sandbox mode)
{
        init(d, FMUD_WORKER, NULL, mode);
}

void hdrv_init_worker(struct hdrv *d, const char *worker)
{
        init(d, worker, NULL, HOST_SANDBOX_OFF);
}

void hdrv_fini(struct hdrv *d)
{
        host_free(d->h);
        for (size_t i = 0; i < d->n_replies; i++)
                free(d->replies[i].buf);
        for (size_t i = 0; i < d->n_pubs; i++) {
                free(d->pubs[i].buf);
                free(d->pubs[i].topic);
        }
        free(d->pubs);
        tmpdir_free(d->dir);
        pthread_cond_destroy(&d->cond);
        pthread_mutex_destroy(&d->lock);
}

uint64_t hdrv_id(struct hdrv *d)
{
        return d->next_id;
}

uint64_t hdrv_send(struct hdrv *d, struct pw *w)
{
        struct proto_limits lim;
        struct pv_doc doc = { 0 };
        struct proto_req req;
        char err[256];
        size_t len;
        void *buf = pw_take(w, &len);
        int r;

        cr_assert(buf != NULL);
        proto_limits_default(&lim);
        r = pv_decode(buf, len, &lim, &doc, err, sizeof(err));
        cr_assert(r == 0, "pv_decode: %s", err);
        r = proto_req_decode(doc.root, &req, err, sizeof(err));
        cr_assert(r == 0, "proto_req_decode: %s", err);
        cr_assert(req.id == d->next_id, "encode with hdrv_id()");
        d->next_id++;
        host_request(d->h, req.id, &req);
        /* The host keeps nothing of the request: scribble over it. */
        memset(buf, 0xa5, len);
        pv_doc_fini(&doc);
        free(buf);
        return req.id;
}

static struct hmsg *find_reply(struct hdrv *d, uint64_t token)
{
        for (size_t i = 0; i < d->n_replies; i++)
                if (d->replies[i].token == token)
                        return &d->replies[i];
        return NULL;
}

bool hdrv_has(struct hdrv *d, uint64_t token)
{
        bool has;

        pthread_mutex_lock(&d->lock);
        has = find_reply(d, token) != NULL;
        pthread_mutex_unlock(&d->lock);
        return has;
}

void hdrv_wait(struct hdrv *d, uint64_t token, struct hrep *ret)
{
        struct proto_limits lim;
        struct hmsg *m;
        char err[256];
        int r;

        pthread_mutex_lock(&d->lock);
        while (!(m = find_reply(d, token)))
                pthread_cond_wait(&d->cond, &d->lock);
        memset(ret, 0, sizeof(*ret));
        ret->buf = malloc(m->len ? m->len : 1);
        cr_assert(ret->buf != NULL);
        memcpy(ret->buf, m->buf, m->len);
        proto_limits_default(&lim);
        r = pv_decode(ret->buf, m->len, &lim, &ret->doc, err, sizeof(err));
        /* Taken: its place is free for the next, however many requests a test sends. */
        free(m->buf);
        *m = d->replies[--d->n_replies];
        pthread_mutex_unlock(&d->lock);
        cr_assert(r == 0, "reply: %s", err);
        r = proto_reply_decode(ret->doc.root, &ret->r, err, sizeof(err));
        cr_assert(r == 0, "reply: %s", err);
        cr_assert(ret->r.id == token, "reply id %llu for token %llu",
                  (unsigned long long)ret->r.id, (unsigned long long)token);
}

void hrep_fini(struct hrep *r)
{
        pv_doc_fini(&r->doc);
        free(r->buf);
        memset(r, 0, sizeof(*r));
}

uint64_t hdrv_target_send(struct hdrv *d, enum proto_op op, uint64_t session, uint64_t gen)
{
        struct proto_target t = { .session = session, .generation = gen };
        struct pw w;

        cr_assert(pw_init(&w) == 0);
        proto_target_encode(&w, hdrv_id(d), op, &t);
        uint64_t tok = hdrv_send(d, &w);
        pw_fini(&w);
        return tok;
}

void hdrv_target(struct hdrv *d, enum proto_op op, uint64_t session, uint64_t gen, struct hrep *ret)
{
        hdrv_wait(d, hdrv_target_send(d, op, session, gen), ret);
}

uint64_t hdrv_load_send(struct hdrv *d, const char *path, const char *out,
                        const struct proto_load *base)
{
        struct proto_load a = { 0 };
        struct pw w;
        uint64_t tok;

        if (base)
                a = *base;
        a.path = (struct proto_str){ path, (uint32_t)strlen(path) };
        if (out)
                a.out = (struct proto_str){ out, (uint32_t)strlen(out) };
        cr_assert(pw_init(&w) == 0);
        proto_load_encode(&w, hdrv_id(d), &a);
        tok = hdrv_send(d, &w);
        pw_fini(&w);
        return tok;
}

uint64_t hdrv_load(struct hdrv *d, const char *path, const char *out, const struct proto_load *base)
{
        struct proto_load_result lr;
        struct hrep rep;
        char err[256];

        hdrv_wait(d, hdrv_load_send(d, path, out, base), &rep);
        cr_assert(rep.r.ok, "load '%s': %.*s", path, (int)rep.r.message_len, rep.r.message);
        cr_assert(proto_load_result_decode(rep.r.result, &lr, err, sizeof(err)) == 0, "%s", err);
        cr_assert(lr.generation == 1);
        hrep_fini(&rep);
        return lr.session;
}

const char *hrep_err(const struct hrep *r, enum proto_err code)
{
        static char msg[2048];

        cr_assert(!r->r.ok, "expected error %s, got ok", proto_err_name(code));
        snprintf(msg, sizeof(msg), "%.*s", (int)r->r.message_len, r->r.message);
        cr_assert(r->r.code == (int)code, "expected %s, got %s: %s", proto_err_name(code),
                  proto_err_name((enum proto_err)r->r.code), msg);
        return msg;
}

void hrep_progress(const struct hrep *r, struct proto_progress *ret)
{
        char err[256];

        cr_assert(r->r.ok, "expected ok: %.*s", (int)r->r.message_len, r->r.message);
        cr_assert(proto_progress_decode(r->r.result, ret, err, sizeof(err)) == 0, "%s", err);
}

void hdrv_status(struct hdrv *d, uint64_t session, struct hrep *rep, struct proto_session_status *st,
                 void **mem)
{
        char err[256];

        hdrv_target(d, PROTO_OP_STATUS, session, 0, rep);
        cr_assert(rep->r.ok, "status: %.*s", (int)rep->r.message_len, rep->r.message);
        cr_assert(proto_session_status_decode(rep->r.result, st, mem, err, sizeof(err)) == 0,
                  "%s", err);
}

enum proto_state hdrv_state(struct hdrv *d, uint64_t session)
{
        struct proto_session_status st;
        struct hrep rep;
        void *mem = NULL;

        hdrv_status(d, session, &rep, &st, &mem);
        free(mem);
        hrep_fini(&rep);
        return st.state;
}

void hdrv_wait_state(struct hdrv *d, uint64_t session, enum proto_state want)
{
        struct timespec ts = { 0, 1000000 };

        while (hdrv_state(d, session) != want)
                nanosleep(&ts, NULL);
}

size_t hdrv_pub_count(struct hdrv *d, const char *topic)
{
        size_t n = 0;

        pthread_mutex_lock(&d->lock);
        for (size_t i = 0; i < d->n_pubs; i++)
                n += !topic || !strcmp(d->pubs[i].topic, topic);
        pthread_mutex_unlock(&d->lock);
        return n;
}

const struct pv *hdrv_pub(struct hdrv *d, const char *topic, size_t k, struct pv_doc *doc)
{
        struct proto_limits lim;
        struct hmsg m = { 0 };
        char err[256];
        size_t n = 0;
        int r;

        pthread_mutex_lock(&d->lock);
        for (size_t i = 0; i < d->n_pubs && !m.buf; i++)
                if (!topic || !strcmp(d->pubs[i].topic, topic)) {
                        if (n++ == k)
                                m = d->pubs[i];
                }
        pthread_mutex_unlock(&d->lock);
        cr_assert(m.buf != NULL, "no message %zu on '%s'", k, topic ? topic : "*");
        proto_limits_default(&lim);
        /* The buffer itself stays until hdrv_fini(), and outlives the doc. */
        r = pv_decode(m.buf, m.len, &lim, doc, err, sizeof(err));
        cr_assert(r == 0, "%s", err);
        return doc->root;
}

char *hdrv_slurp(const char *path, size_t *ret_len)
{
        FILE *f = fopen(path, "rb");
        char *buf = NULL;
        size_t cap = 0, len = 0, k;

        cr_assert(f != NULL, "open '%s': %s", path, strerror(errno));
        do {
                if (len + 65536 > cap) {
                        cap = cap ? 2 * cap : 65536;
                        buf = realloc(buf, cap + 65536);
                        cr_assert(buf != NULL);
                }
                k = fread(buf + len, 1, 65536, f);
                len += k;
        } while (k > 0);
        fclose(f);
        *ret_len = len;
        return buf;
}

bool hdrv_gone(int64_t pid)
{
        return pid > 0 && kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}
