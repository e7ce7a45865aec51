/*
 * host_request: host_request() (host.h): each request decoded and checked
 * on the caller's thread, then answered from the status snapshot or queued
 * to its session's thread (see host.c for the registry).
 */
#include "daemon/host_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Requests ---------------------------------------------------------------- */

void host_sess_create(struct host *h, uint64_t token, const struct proto_req *req,
                      const struct host_peer *peer, const struct proto_load *load, bool fmi)
{
        const struct proto_load a = *load;
        enum host_sandbox sandbox;
        struct open_as as;
        struct hsess *hs;
        char err[512];
        int code;

        /* The group database is read here, before the lock, once per load. */
        hout_as(peer, &as);
        pthread_mutex_lock(&h->lock);
        code = hload_check(h, &a, &as, &sandbox, err, sizeof(err));
        if (code < 0 && h->n_sessions >= h->opts.max_sessions) {
                code = PROTO_E_LIMIT;
                snprintf(err, sizeof(err), "%u sessions already loaded (the limit)",
                         (unsigned)h->n_sessions);
        }
        hs = code < 0 ? calloc(1, sizeof(*hs)) : NULL;
        if (hs) {
                pthread_mutex_init(&hs->lock, NULL);
                pthread_cond_init(&hs->cond, NULL);
                hs->res_fd = -1;
                hs->mat_fd = -1;
                hlog_init(hs);
                hs->h = h;
                hs->fmi = fmi;
                hs->sandbox = sandbox;
                hs->load = host_cmd_new(token, req);
                hs->allowed = calloc(h->n_allowed ? h->n_allowed : 1, sizeof(char *));
                for (size_t i = 0; hs->allowed && i < h->n_allowed; i++)
                        if ((hs->allowed[hs->n_allowed] = strdup(h->allowed[i])))
                                hs->n_allowed++;
                hs->output = calloc(h->n_output ? h->n_output : 1, sizeof(char *));
                for (size_t i = 0; hs->output && i < h->n_output; i++)
                        if ((hs->output[hs->n_output] = strdup(h->output[i])))
                                hs->n_output++;
                hout_ident(hs, peer, &as);
        }
        if (code < 0 && (!hs || !hs->load || !hs->allowed || !hs->output ||
                         hstatus_init(hs) < 0)) {
                code = PROTO_E_INTERNAL;
                snprintf(err, sizeof(err), "out of memory");
        }
        if (code < 0 && a.transient && hlease_own(hs, peer) < 0) {
                code = PROTO_E_INVALID;
                snprintf(err, sizeof(err), "transient: this request came from no connection "
                         "that could hold the lease");
        }
        /* Linked now, on the thread that puts: no upload it names is evicted before. */
        if (code < 0 && (a.content.len || a.input_content.len))
                code = hcontent_link(hs, &a, err, sizeof(err));
        if (code >= 0) {
                pthread_mutex_unlock(&h->lock);
                if (hs)
                        host_sess_destroy(hs);
                host_reply_error(h, token, req->id, (enum proto_err)code, "%s", err);
                return;
        }
        if (peer && peer->user)
                snprintf(hs->user, sizeof(hs->user), "%s", peer->user);
        if (h->next_id == 0) {
                /* Past the last uint64 (an id file edited near it): ids are never 0. */
                pthread_mutex_unlock(&h->lock);
                host_sess_destroy(hs);
                host_reply_error(h, token, req->id, PROTO_E_LIMIT, "session ids are exhausted "
                                 "(the state directory's last-session is at the last one)");
                return;
        }
        hs->id = h->next_id++;
        host_ids_taken(h, hs->id);
        atomic_init(&hs->cancel, false);
        atomic_init(&hs->calls_cancel, false);
        atomic_init(&hs->unload_asked, false);
        hs->state = PROTO_STATE_LOADING;
        hs->st.state = PROTO_STATE_LOADING;
        /* A load that succeeds answers generation 1: requests may name it already. */
        hs->st.generation = 1;
        if (pthread_create(&hs->thread, NULL, hsess_main, hs) != 0) {
                h->next_id--;
                pthread_mutex_unlock(&h->lock);
                host_sess_destroy(hs);
                host_reply_error(h, token, req->id, PROTO_E_INTERNAL, "cannot start a thread");
                return;
        }
        hs->next = h->sessions;
        h->sessions = hs;
        h->n_sessions++;
        if (hs->transient)
                atomic_fetch_add(&h->n_transient, 1);
        pthread_mutex_unlock(&h->lock);
}

static void do_load(struct host *h, uint64_t token, const struct proto_req *req,
                    const struct host_peer *peer)
{
        struct proto_load a;
        void *mem = NULL;
        char err[512];

        if (proto_load_decode(req->args, &a, &mem, err, sizeof(err)) < 0) {
                free(mem);
                host_reply_error(h, token, req->id, PROTO_E_BAD_REQUEST, "%s", err);
                return;
        }
        host_sess_create(h, token, req, peer, &a, false);
        free(mem);
}

static void do_list(struct host *h, uint64_t token, const struct proto_req *req,
                    const struct host_peer *peer)
{
        struct proto_session_brief *v;
        char **names;
        size_t n = 0, k = 0;
        char err[256];
        struct pw w;

        if (proto_noargs_decode(req->args, err, sizeof(err)) < 0) {
                host_reply_error(h, token, req->id, PROTO_E_BAD_REQUEST, "%s", err);
                return;
        }
        pthread_mutex_lock(&h->lock);
        for (struct hsess *hs = h->sessions; hs; hs = hs->next)
                n++;
        v = calloc(n ? n : 1, sizeof(*v));
        names = calloc(n ? n : 1, sizeof(*names));
        /* Oldest first: the list is kept newest first. */
        for (struct hsess *hs = h->sessions; v && names && hs; hs = hs->next, k++)
                hstatus_brief(hs, &v[n - 1 - k], &names[n - 1 - k], peer);
        pthread_mutex_unlock(&h->lock);
        if (!v || !names || pw_init(&w) < 0) {
                free(v);
                free(names);
                host_reply_error(h, token, req->id, PROTO_E_INTERNAL, "out of memory");
                return;
        }
        proto_reply_ok_begin(&w, req->id);
        proto_list_result_encode(&w, &(struct proto_list_result){ .n = (uint32_t)n,
                                                                   .sessions = v });
        host_reply_take(h, token, req->id, &w);
        pw_fini(&w);
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
        free(v);
}

/* Decode the op's arguments for their target; 0, or -EBADMSG after the reply. */
static int target_of(struct host *h, uint64_t token, const struct proto_req *req,
                     struct proto_target *t, double *ret_warp)
{
        char err[256] = "";
        void *mem = NULL;
        int r;

        switch (req->op) {
        case PROTO_OP_WARP: {
                struct proto_warp a;

                r = proto_warp_decode(req->args, &a, err, sizeof(err));
                *t = a.t;
                *ret_warp = a.factor;
                if (r == 0 && (!(a.factor >= 0) || !isfinite(a.factor))) {
                        snprintf(err, sizeof(err), "factor: %g is not a warp (>= 0)", a.factor);
                        r = -EBADMSG;
                }
                break;
        }
        case PROTO_OP_STEP: {
                struct proto_step a;

                r = proto_step_decode(req->args, &a, err, sizeof(err));
                *t = a.t;
                break;
        }
        case PROTO_OP_RUN_UNTIL: {
                struct proto_run_until a;

                r = proto_run_until_decode(req->args, &a, err, sizeof(err));
                *t = a.t;
                break;
        }
        case PROTO_OP_GET: {
                struct proto_get a;

                r = proto_get_decode(req->args, &a, &mem, err, sizeof(err));
                *t = a.t;
                break;
        }
        case PROTO_OP_SET: {
                struct proto_set a;

                r = proto_set_decode(req->args, &a, &mem, err, sizeof(err));
                *t = a.t;
                break;
        }
        case PROTO_OP_SUBSCRIBE: {
                struct proto_subscribe a;

                r = proto_subscribe_decode(req->args, &a, &mem, err, sizeof(err));
                *t = a.t;
                break;
        }
        case PROTO_OP_UNSUBSCRIBE: {
                struct proto_unsubscribe a;

                r = proto_unsubscribe_decode(req->args, &a, err, sizeof(err));
                *t = a.t;
                break;
        }
        case PROTO_OP_RESULTS: {
                struct proto_results a;

                r = proto_results_decode(req->args, &a, err, sizeof(err));
                *t = a.t;
                break;
        }
        case PROTO_OP_RESTORE:
        case PROTO_OP_SNAPSHOT_DELETE: {
                struct proto_restore a;

                r = proto_restore_decode(req->args, &a, err, sizeof(err));
                *t = a.t;
                break;
        }
        case PROTO_OP_SNAPSHOT_EXPORT: {
                struct proto_snapshot_export a;

                r = proto_snapshot_export_decode(req->args, &a, err, sizeof(err));
                *t = a.t;
                break;
        }
        case PROTO_OP_SNAPSHOT_IMPORT: {
                struct proto_snapshot_import a;

                r = proto_snapshot_import_decode(req->args, &a, err, sizeof(err));
                *t = a.t;
                break;
        }
        default:
                r = proto_target_decode(req->args, t, err, sizeof(err));
                break;
        }
        free(mem);
        if (r < 0)
                host_reply_error(h, token, req->id, PROTO_E_BAD_REQUEST, "%s",
                                 err[0] ? err : "malformed arguments");
        return r < 0 ? -EBADMSG : 0;
}

bool host_owner_ok(struct host *h, uint64_t token, const struct proto_req *req,
                   const struct hsess *hs, const struct host_peer *peer)
{
        /* hs->user is written before the session is registered and never after. */
        if (peer && peer->user && !peer->any_session && hs->user[0] &&
            strcmp(hs->user, peer->user)) {
                host_reply_error(h, token, req->id, PROTO_E_DENIED, "%s of %s %llu needs "
                                 "its owner (%s) or the admin role; you are %s (%s)",
                                 proto_op_name(req->op), hs->fmi ? "instance" : "session",
                                 (unsigned long long)hs->id, hs->user,
                                 peer->role ? peer->role : "not admin", peer->user);
                return false;
        }
        return true;
}

static void do_session_op(struct host *h, uint64_t token, const struct proto_req *req,
                          const struct host_peer *peer)
{
        struct proto_target t = { 0 };
        bool stopping = false;
        double warp = 0;
        struct hsess *hs;
        struct hcmd *c;
        struct pw w;

        if (target_of(h, token, req, &t, &warp) < 0)
                return;
        if (req->op == PROTO_OP_STATUS && t.session == 0) {
                host_reply_error(h, token, req->id, PROTO_E_BAD_REQUEST,
                                 "the daemon's status (session 0) is not a session's");
                return;
        }
        /*
         * Found under h->lock, used after: only this thread frees sessions
         * (host_join_zombies()), so hs stays valid until this call returns.
         */
        hs = host_find(h, t.session);
        if (!hs) {
                host_reply_error(h, token, req->id, PROTO_E_NO_SESSION, "no session %llu",
                                 (unsigned long long)t.session);
                return;
        }
        if (!host_owner_ok(h, token, req, hs, peer))
                return;
        /* An FMI-level instance has no master: its calls are fmi's, its end free's. */
        if (hs->fmi && req->op != PROTO_OP_STATUS && req->op != PROTO_OP_LOGS &&
            req->op != PROTO_OP_UNLOAD) {
                host_reply_error(h, token, req->id, PROTO_E_STATE, "%s: %llu is an FMI-level "
                                 "instance, not a session: call it with fmi", proto_op_name(req->op),
                                 (unsigned long long)t.session);
                return;
        }
        pthread_mutex_lock(&hs->lock);
        if (t.generation && t.generation != hs->st.generation) {
                uint64_t g = hs->st.generation;

                pthread_mutex_unlock(&hs->lock);
                host_reply_error(h, token, req->id, PROTO_E_STALE, "session %llu is at generation "
                                 "%llu, not %llu", (unsigned long long)t.session,
                                 (unsigned long long)g, (unsigned long long)t.generation);
                return;
        }
        if (req->op == PROTO_OP_LOGS) {
                pthread_mutex_unlock(&hs->lock);
                if (pw_init(&w) == 0) {
                        proto_reply_ok_begin(&w, req->id);
                        hlog_encode(hs, &w);
                        host_reply_take(h, token, req->id, &w);
                        pw_fini(&w);
                        return;
                }
                host_reply_error(h, token, req->id, PROTO_E_INTERNAL, "out of memory");
                return;
        }
        if (req->op == PROTO_OP_RESULTS) {
                pthread_mutex_unlock(&hs->lock);
                hres_reply(h, token, req, hs);
                return;
        }
        if (req->op == PROTO_OP_STATUS) {
                if (pw_init(&w) == 0) {
                        proto_reply_ok_begin(&w, req->id);
                        hstatus_encode(hs, &w, peer);
                        pthread_mutex_unlock(&hs->lock);
                        host_reply_take(h, token, req->id, &w);
                        pw_fini(&w);
                        return;
                }
                pthread_mutex_unlock(&hs->lock);
                host_reply_error(h, token, req->id, PROTO_E_INTERNAL, "out of memory");
                return;
        }
        /*
         * An unload of a session still loading: the load stops at its next
         * poll, and an FMU call in flight (an instantiation or initialization
         * that never ends) is not waited for; the unload is answered when
         * the load has failed (hsess_main()).
         */
        if (req->op == PROTO_OP_UNLOAD && hs->st.state == PROTO_STATE_LOADING) {
                atomic_store(&hs->unload_asked, true);
                atomic_store(&hs->calls_cancel, true);
        }
        /* Reach into a running master now; the session thread answers when it is done. */
        if (hs->m_pub && hs->st.state == PROTO_STATE_RUNNING) {
                if (req->op == PROTO_OP_PAUSE)
                        master_request_pause(hs->m_pub);
                else if (req->op == PROTO_OP_STOP)
                        master_request_stop(hs->m_pub);
                else if (req->op == PROTO_OP_UNLOAD)
                        master_request_abandon(hs->m_pub, "the session was unloaded");
                stopping = req->op == PROTO_OP_STOP;
        } else if (hs->m_pub && req->op == PROTO_OP_UNLOAD) {
                /*
                 * Not running, but maybe in a Terminate (a stop's, which may
                 * take as long as initialization): it gets a few seconds,
                 * then its worker is killed (inst_abandon()).
                 */
                master_request_abandon(hs->m_pub, "the session was unloaded");
        }
        if (req->op == PROTO_OP_WARP && hs->m_pub && (hs->st.state == PROTO_STATE_LOADED ||
                                                     hs->st.state == PROTO_STATE_RUNNING ||
                                                     hs->st.state == PROTO_STATE_PAUSED))
                (void) master_set_warp(hs->m_pub, warp);
        pthread_mutex_unlock(&hs->lock);
        /* Its step gets a grace (host_stop.c); h->lock is taken before a session's, never after. */
        if (stopping)
                host_stop_asked(h, hs);
        c = host_cmd_new(token, req);
        if (!c) {
                host_reply_error(h, token, req->id, PROTO_E_INTERNAL, "out of memory");
                return;
        }
        /* Who asked, for what a subscription records and who may remove it. */
        if (peer && peer->user)
                snprintf(c->user, sizeof(c->user), "%s", peer->user);
        c->admin = !peer || !peer->user || peer->admin;
        c->while_running = stopping;
        host_enqueue(hs, c);
}

void host_request(struct host *h, uint64_t token, const struct proto_req *req)
{
        host_request_from(h, token, req, NULL);
}

void host_request_from(struct host *h, uint64_t token, const struct proto_req *req,
                       const struct host_peer *peer)
{
        host_join_zombies(h);
        switch (req->op) {
        case PROTO_OP_LOAD:
                do_load(h, token, req, peer);
                break;
        case PROTO_OP_LIST:
                do_list(h, token, req, peer);
                break;
        case PROTO_OP_PUT:
                hcontent_put(h, token, req, peer);
                break;
        case PROTO_OP_INSTANTIATE:
                hfmi_instantiate(h, token, req, peer);
                break;
        case PROTO_OP_FMI:
        case PROTO_OP_FREE:
                hfmi_request(h, token, req, peer);
                break;
        case PROTO_OP_DETACH:
                hlease_detach(h, token, req, peer);
                break;
        case PROTO_OP_UNLOAD:
        case PROTO_OP_STATUS:
        case PROTO_OP_START:
        case PROTO_OP_PAUSE:
        case PROTO_OP_RESUME:
        case PROTO_OP_STOP:
        case PROTO_OP_WARP:
        case PROTO_OP_STEP:
        case PROTO_OP_RUN_UNTIL:
        case PROTO_OP_GET:
        case PROTO_OP_VARS:
        case PROTO_OP_SET:
        case PROTO_OP_SUBSCRIBE:
        case PROTO_OP_UNSUBSCRIBE:
        case PROTO_OP_SNAPSHOT:
        case PROTO_OP_RESTORE:
        case PROTO_OP_LOGS:
        case PROTO_OP_RIG:
        case PROTO_OP_RESULTS:
        case PROTO_OP_SNAPSHOTS:
        case PROTO_OP_SNAPSHOT_DELETE:
        case PROTO_OP_SNAPSHOT_EXPORT:
        case PROTO_OP_SNAPSHOT_IMPORT:
                do_session_op(h, token, req, peer);
                break;
        default:
                host_reply_error(h, token, req->id, PROTO_E_UNKNOWN_OP,
                                 "'%s' is not a session operation",
                                 proto_op_name(req->op) ? proto_op_name(req->op) : "?");
                break;
        }
}

bool host_sub_live(struct host *h, uint64_t session, uint64_t n)
{
        /* Control thread: only it frees sessions, so hs stays valid here (do_session_op()). */
        struct hsess *hs = host_find(h, session);
        bool live = false;

        if (!hs || hs->fmi || n == 0)
                return false;
        pthread_mutex_lock(&hs->lock);
        for (size_t i = 0; i < HOST_MAX_SUBS && !live; i++)
                live = hs->sub_live[i] == n;
        pthread_mutex_unlock(&hs->lock);
        return live;
}

void host_sub_gone(struct host *h, uint64_t session, uint64_t n)
{
        char topic[48];
        struct hsess *hs;
        struct hcmd *c;
        struct pw w;

        /* Only a subscription that still exists: nothing queued, no master woken, for others. */
        if (!host_sub_live(h, session, n) || !(hs = host_find(h, session)) || pw_init(&w) < 0)
                return;
        snprintf(topic, sizeof(topic), "s%llu.%llu", (unsigned long long)session,
                 (unsigned long long)n);
        pw_map(&w, 1);
        pw_str(&w, "topic");
        pw_str(&w, topic);
        c = calloc(1, sizeof(*c));
        if (c)
                c->args = pw_take(&w, &c->len);
        pw_fini(&w);
        if (!c || !c->args) {
                free(c);
                return;
        }
        /* Token 0: nobody asked, nobody is answered (hsub_unsubscribe()). */
        c->op = PROTO_OP_UNSUBSCRIBE;
        c->admin = true;
        host_enqueue(hs, c);
}
