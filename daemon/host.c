/*
 * host: the registry of sessions, their life cycle and the replies
 * (host.h); host_request.c dispatches the requests.
 *
 * DESIGN: host_request() decodes and checks a request's arguments on the
 * caller's thread (a decode error is answered at once), finds the session
 * and checks the generation, then either answers from the session's
 * status snapshot (status, list), or queues the request, re-encoded, to
 * the session's thread, which re-checks the generation and the state when
 * it takes the command (a restore may come between). Pause, stop, unload
 * and warp also reach into the running master (master_request_pause()
 * etc. are any-thread) so that a running or pacing master notices them at
 * its next point rather than at the end of a chunk.
 *
 * Sessions live in h->sessions from load to the end of their thread; a
 * thread that ends (unload, failed load) moves its session to h->zombies,
 * where the control thread joins and frees it at its next call.
 */
#include "daemon/host_int.h"
#include "daemon/upload.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

void host_opts_default(struct host_opts *o)
{
        *o = (struct host_opts){ .sandbox = HOST_SANDBOX_STRICT, .max_sessions = 64 };
}

/* Hand w's reply to opts.complete; resets w. Token 0: the daemon's own command, no one to answer. */
static void complete(struct host *h, uint64_t token, struct pw *w)
{
        size_t len = 0;
        void *buf;

        if (!token) {
                pw_reset(w);
                return;
        }
        buf = pw_take(w, &len);
        if (!buf) {
                /* Out of memory: a short error still has a chance. */
                pw_reset(w);
                return;
        }
        h->opts.complete(h->opts.complete_ctx, token, buf, len);
}

bool host_reply_fits(const struct host *h, const struct pw *w)
{
        return pw_size(w) <= h->opts.max_reply;
}

void host_reply_take(struct host *h, uint64_t token, uint64_t id, struct pw *w)
{
        /* The client would drop it (its connection with it): refuse instead. */
        if (!w->error && !host_reply_fits(h, w)) {
                size_t size = pw_size(w);

                pw_reset(w);
                host_reply_error(h, token, id, PROTO_E_TOO_LARGE, "the reply of %zu bytes "
                                 "exceeds the limit of %zu bytes", size, h->opts.max_reply);
                return;
        }
        complete(h, token, w);
}

void host_reply_error(struct host *h, uint64_t token, uint64_t id, enum proto_err code,
                      const char *fmt, ...)
{
        char msg[HOST_MSG_MAX];
        struct pw w;
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (pw_init(&w) < 0)
                return;
        proto_reply_error(&w, id, code, msg);
        /* Bounded by HOST_MSG_MAX: never too large. */
        complete(h, token, &w);
        pw_fini(&w);
}

void host_reply_progress(struct host *h, uint64_t token, uint64_t id, enum proto_state st,
                         double time, uint64_t points, const char *message)
{
        struct proto_progress p = {
                .state = st, .time = time, .points = points,
                .message = { message ? message : "", message ? (uint32_t)strlen(message) : 0 },
        };
        struct pw w;

        if (pw_init(&w) < 0)
                return;
        proto_reply_ok_begin(&w, id);
        proto_progress_encode(&w, &p);
        host_reply_take(h, token, id, &w);
        pw_fini(&w);
}

void hcmd_free(struct hcmd *c)
{
        if (!c)
                return;
        if (c->fmi_out) {
                pw_fini(c->fmi_out);
                free(c->fmi_out);
        }
        free(c->fmi_mem);
        pv_doc_fini(&c->fmi_doc);
        free(c->args);
        free(c);
}

int host_cmd_args(struct host *h, const struct hcmd *c, struct pv_doc *doc)
{
        struct proto_limits lim;
        char err[256];
        int r;

        proto_limits_default(&lim);
        /* A copy of a request taken within max_message, which may be above the default. */
        lim.max_msg = c->len;
        (void) h;
        r = pv_decode(c->args, c->len, &lim, doc, err, sizeof(err));
        return r;
}

struct hcmd *host_cmd_new(uint64_t token, const struct proto_req *req)
{
        struct hcmd *c = calloc(1, sizeof(*c));
        struct pw w;

        if (!c || pw_init(&w) < 0) {
                free(c);
                return NULL;
        }
        c->op = req->op;
        c->token = token;
        c->id = req->id;
        pw_pv(&w, req->args);
        c->args = pw_take(&w, &c->len);
        pw_fini(&w);
        if (!c->args) {
                free(c);
                return NULL;
        }
        return c;
}

/* ---- Registry ------------------------------------------------------------- */

void host_sess_destroy(struct hsess *hs)
{
        struct hcmd *c;

        /* Found before the session retired, queued after its last look. */
        while ((c = hs->q_head)) {
                hs->q_head = c->next;
                hfmi_abandon(hs->h, c, PROTO_E_NO_SESSION, "no session %llu",
                             (unsigned long long)hs->id);
                hcmd_free(c);
        }
        hcmd_free(hs->load);
        hcontent_release(hs);
        for (size_t i = 0; i < hs->n_allowed; i++)
                free(hs->allowed[i]);
        free(hs->allowed);
        for (size_t i = 0; i < hs->n_output; i++)
                free(hs->output[i]);
        free(hs->output);
        hstatus_fini(&hs->st);
        if (hs->res_fd >= 0)
                close(hs->res_fd);
        hlog_fini(hs);
        pthread_cond_destroy(&hs->cond);
        pthread_mutex_destroy(&hs->lock);
        free(hs);
}

void host_join_zombies(struct host *h)
{
        struct hsess *z;

        pthread_mutex_lock(&h->lock);
        z = h->zombies;
        h->zombies = NULL;
        pthread_mutex_unlock(&h->lock);
        while (z) {
                struct hsess *next = z->next;

                pthread_join(z->thread, NULL);
                host_sess_destroy(z);
                z = next;
        }
}

void host_retire(struct host *h, struct hsess *hs)
{
        pthread_mutex_lock(&h->lock);
        for (struct hsess **p = &h->sessions; *p; p = &(*p)->next)
                if (*p == hs) {
                        *p = hs->next;
                        h->n_sessions--;
                        if (hs->transient)
                                atomic_fetch_sub(&h->n_transient, 1);
                        break;
                }
        hs->next = h->zombies;
        h->zombies = hs;
        pthread_mutex_unlock(&h->lock);
        if (h->opts.gone)
                h->opts.gone(h->opts.gone_ctx, hs->id);
}

struct hsess *host_find(struct host *h, uint64_t id)
{
        struct hsess *hs;

        pthread_mutex_lock(&h->lock);
        for (hs = h->sessions; hs && hs->id != id; hs = hs->next)
                ;
        pthread_mutex_unlock(&h->lock);
        return hs;
}

void host_enqueue(struct hsess *hs, struct hcmd *c)
{
        pthread_mutex_lock(&hs->lock);
        if (hs->q_tail)
                hs->q_tail->next = c;
        else
                hs->q_head = c;
        hs->q_tail = c;
        pthread_cond_signal(&hs->cond);
        /* A running master returns at its next point (at once from a paced wait) to serve it. */
        if (hs->m_pub && hs->st.state == PROTO_STATE_RUNNING)
                master_request_serve(hs->m_pub);
        pthread_mutex_unlock(&hs->lock);
}

/* ---- Life cycle ------------------------------------------------------------ */

static char **copy_allowed(size_t n, const char *const *allowed, size_t *ret_n)
{
        char **v = calloc(n ? n : 1, sizeof(*v));
        size_t k = 0;

        if (!v)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                /* Resolved once: a directory that does not exist allows nothing. */
                char *p = allowed[i] ? realpath(allowed[i], NULL) : NULL;

                if (p)
                        v[k++] = p;
        }
        *ret_n = k;
        return v;
}

static void free_allowed(char **v, size_t n)
{
        for (size_t i = 0; v && i < n; i++)
                free(v[i]);
        free(v);
}

#ifdef FMUD_TEST_HOOKS
/*
 * FMUD_TEST_SANDBOX_SKIP=LAYER[,LAYER...]: tests of sandbox.require run
 * workers without those layers, as on a kernel that lacks them. Unknown
 * names are ignored.
 */
static uint32_t skip_layers(const char *v)
{
        char name[32];
        uint32_t mask = 0;

        while (v && *v) {
                size_t n = strcspn(v, ",");
                int l;

                if (n < sizeof(name)) {
                        memcpy(name, v, n);
                        name[n] = '\0';
                        l = sandbox_layer_parse(name);
                        if (l >= 0)
                                mask |= 1u << l;
                }
                v += n;
                if (*v == ',')
                        v++;
        }
        return mask;
}
#endif

/* The upload store, "<cache_dir>/upload" (upload.h). 0, or -errno with *ret_message. */
static int open_upload(struct host *h, const struct host_opts *opts, char **ret_message)
{
        char dir[4096], msg[512];
        int r;

        snprintf(dir, sizeof(dir), "%s/upload", h->cache_dir);
        r = upload_new(&(struct upload_opts){ .dir = dir, .max_file = opts->upload_max_file,
                                              .quota = opts->upload_quota,
                                              .store_bytes = opts->upload_store_bytes },
                       &h->upload, msg, sizeof(msg));
        if (r < 0 && ret_message)
                *ret_message = strdup(msg);
        return r;
}

int host_new(const struct host_opts *opts, struct host **ret, char **ret_message)
{
        struct host *h;
        int r;

        if (ret_message)
                *ret_message = NULL;
        if (!opts || !ret || !opts->worker_path || !opts->cache_dir || !opts->scratch_dir ||
            !opts->complete) {
                if (ret_message)
                        *ret_message = strdup("worker_path, cache_dir, scratch_dir and "
                                              "complete are required");
                return -EINVAL;
        }
        h = calloc(1, sizeof(*h));
        if (!h)
                return -ENOMEM;
        h->ids_fd = -1;
        h->opts = *opts;
        h->worker_path = strdup(opts->worker_path);
        h->cache_dir = strdup(opts->cache_dir);
        h->scratch_dir = strdup(opts->scratch_dir);
        h->hide_dir = opts->hide_dir ? strdup(opts->hide_dir) : NULL;
        h->allowed = copy_allowed(opts->n_allowed, opts->allowed, &h->n_allowed);
        h->output = copy_allowed(opts->n_output, opts->output, &h->n_output);
        h->state_dir = opts->state_dir ? strdup(opts->state_dir) : NULL;
        if (!h->worker_path || !h->cache_dir || !h->scratch_dir || !h->allowed || !h->output ||
            (opts->hide_dir && !h->hide_dir) || (opts->state_dir && !h->state_dir)) {
                free_allowed(h->allowed, h->n_allowed);
                free_allowed(h->output, h->n_output);
                free(h->state_dir);
                free(h->worker_path);
                free(h->cache_dir);
                free(h->scratch_dir);
                free(h->hide_dir);
                free(h);
                return -ENOMEM;
        }
        h->opts.worker_path = h->worker_path;
        h->opts.cache_dir = h->cache_dir;
        h->opts.scratch_dir = h->scratch_dir;
        h->opts.hide_dir = h->hide_dir;
        h->opts.allowed = NULL;
        h->opts.n_allowed = 0;
        h->opts.output = NULL;
        h->opts.n_output = 0;
        h->opts.state_dir = h->state_dir;
        h->mark = hout_mark_name();
        if (!h->opts.max_sessions)
                h->opts.max_sessions = 64;
        if (!h->opts.max_reply)
                h->opts.max_reply = PROTO_MAX_MSG;
        pthread_mutex_init(&h->lock, NULL);
        if (host_ids_open(h) == -EBUSY) {
                if (ret_message && asprintf(ret_message, "state directory '%s' is in use by "
                                            "another fmud (its last-session is locked)",
                                            h->state_dir) < 0)
                        *ret_message = NULL;
                host_free(h);
                return -EBUSY;
        }
        atomic_init(&h->workers, 0);
#ifdef FMUD_TEST_HOOKS
        /*
         * Test hooks, in a build made for the tests alone (FMUD_TEST_HOOKS:
         * never a packaged daemon, whose environment an operator's drop-in
         * sets): honoured, and said at warning, never silently.
         */
        h->hold_loads = getenv("FMUD_TEST_HOLD_LOADS") != NULL;
        h->skip_layers = skip_layers(getenv("FMUD_TEST_SANDBOX_SKIP"));
        if (h->opts.log && h->hold_loads)
                h->opts.log(h->opts.log_ctx, LOG_WARNING,
                            "test hook FMUD_TEST_HOLD_LOADS set: loads are held until cancelled");
        if (h->opts.log && h->skip_layers)
                h->opts.log(h->opts.log_ctx, LOG_WARNING,
                            "test hook FMUD_TEST_SANDBOX_SKIP set: workers skip sandbox "
                            "layers");
#endif
        atomic_init(&h->n_transient, 0);
        atomic_init(&h->n_stopping, 0);
        r = open_upload(h, opts, ret_message);
        if (r < 0) {
                host_free(h);
                return r;
        }
        *ret = h;
        return 0;
}

/*
 * Shutting down: a session whose step has not come back within
 * HOST_QUIT_GRACE_S has its steps in flight abandoned (their workers
 * killed, as by unload), and one still loading its calls in flight
 * (an instantiation or initialization), so that an FMU that never
 * returns cannot hold the daemon past its service manager's stop
 * timeout.
 */
#define HOST_QUIT_GRACE_S       5

static void abandon_all(struct host *h)
{
        pthread_mutex_lock(&h->lock);
        for (struct hsess *hs = h->sessions; hs; hs = hs->next) {
                pthread_mutex_lock(&hs->lock);
                atomic_store(&hs->calls_cancel, true);
                if (hs->m_pub)
                        master_request_abandon(hs->m_pub, "the daemon is shutting down");
                pthread_mutex_unlock(&hs->lock);
        }
        pthread_mutex_unlock(&h->lock);
}

void host_free(struct host *h)
{
        struct timespec grace;
        bool abandoned = false;

        if (!h)
                return;
        pthread_mutex_lock(&h->lock);
        for (struct hsess *hs = h->sessions; hs; hs = hs->next) {
                pthread_mutex_lock(&hs->lock);
                hs->quit = true;
                atomic_store(&hs->cancel, true);
                if (hs->m_pub)
                        master_request_stop(hs->m_pub);
                pthread_cond_signal(&hs->cond);
                pthread_mutex_unlock(&hs->lock);
        }
        pthread_mutex_unlock(&h->lock);
        clock_gettime(CLOCK_MONOTONIC, &grace);
        grace.tv_sec += HOST_QUIT_GRACE_S;
        /* Each thread retires itself when it has stopped and freed its session. */
        for (;;) {
                bool live;

                host_join_zombies(h);
                pthread_mutex_lock(&h->lock);
                live = h->sessions != NULL;
                pthread_mutex_unlock(&h->lock);
                if (!live)
                        break;
                /* The threads only need the CPU to finish: wait for the first one. */
                pthread_mutex_lock(&h->lock);
                struct hsess *first = h->sessions;
                pthread_t t = first ? first->thread : pthread_self();
                pthread_mutex_unlock(&h->lock);
                if (first) {
                        /* Past the grace, also a session whose master started since. */
                        if (abandoned ||
                            pthread_clockjoin_np(t, NULL, CLOCK_MONOTONIC, &grace) != 0) {
                                abandon_all(h);
                                abandoned = true;
                                pthread_join(t, NULL);
                        }
                        pthread_mutex_lock(&h->lock);
                        /* Now retired: take it off the zombies without joining again. */
                        for (struct hsess **p = &h->zombies; *p; p = &(*p)->next)
                                if (*p == first) {
                                        *p = first->next;
                                        break;
                                }
                        pthread_mutex_unlock(&h->lock);
                        host_sess_destroy(first);
                }
        }
        /* A thread that retired after the last look at the zombies, once none was live. */
        host_join_zombies(h);
        upload_free(h->upload);
        host_ids_close(h);
        free_allowed(h->allowed, h->n_allowed);
        free_allowed(h->output, h->n_output);
        free(h->state_dir);
        free(h->worker_path);
        free(h->cache_dir);
        free(h->scratch_dir);
        free(h->hide_dir);
        pthread_mutex_destroy(&h->lock);
        free(h);
}

void host_counts(struct host *h, uint32_t *ret_sessions, uint32_t *ret_workers)
{
        pthread_mutex_lock(&h->lock);
        if (ret_sessions)
                *ret_sessions = h->n_sessions;
        pthread_mutex_unlock(&h->lock);
        if (ret_workers)
                *ret_workers = atomic_load(&h->workers);
}

int host_set_allowed(struct host *h, size_t n, const char *const *allowed)
{
        size_t k = 0;
        char **v = copy_allowed(n, allowed, &k);

        if (!v)
                return -ENOMEM;
        pthread_mutex_lock(&h->lock);
        free_allowed(h->allowed, h->n_allowed);
        h->allowed = v;
        h->n_allowed = k;
        pthread_mutex_unlock(&h->lock);
        return 0;
}


int host_set_output(struct host *h, size_t n, const char *const *output)
{
        size_t k = 0;
        char **v = copy_allowed(n, output, &k);

        if (!v)
                return -ENOMEM;
        pthread_mutex_lock(&h->lock);
        free_allowed(h->output, h->n_output);
        h->output = v;
        h->n_output = k;
        pthread_mutex_unlock(&h->lock);
        return 0;
}
