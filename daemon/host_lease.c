/*
 * host_lease: transient sessions' leases (host.h): renewed by every
 * request of the owning connection that the control thread has decoded and
 * whose sender is the session's user, expired by the control thread's loop.
 *
 * DESIGN: a client that dies (kill -9) cannot say so, and ZeroMQ does not
 * tell which routing id went away, so a transient session is kept only
 * while its owner keeps talking. Renewal and the check run on the control
 * thread under h->lock (the registry's own lock): neither touches a
 * session's thread, and with no transient session both cost one atomic
 * load. An expired session is stopped and unloaded the way host_free()
 * does it: quit set, its master asked to stop, its thread unloads.
 */
#include "daemon/host_int.h"

#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

static uint64_t mono_ns(void)
{
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC, &t);
        return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The routing id alone is the client's to choose: the session's user must also match. */
static bool owned_by(const struct hsess *hs, const struct host_peer *p)
{
        return hs->transient && hs->owner_sock == p->sock && hs->owner_len == p->id_len &&
               !memcmp(hs->owner_id, p->id, p->id_len) &&
               (!p->user || !hs->user[0] || !strcmp(hs->user, p->user));
}

int hlease_own(struct hsess *hs, const struct host_peer *p)
{
        if (!p || !p->id || p->id_len == 0 || p->id_len > HOST_PEER_ID_MAX)
                return -1;
        hs->transient = true;
        hs->owner_sock = p->sock;
        hs->owner_len = (uint8_t)p->id_len;
        memcpy(hs->owner_id, p->id, p->id_len);
        snprintf(hs->owner, sizeof(hs->owner), "%s", p->label ? p->label : "");
        hs->renewed_ns = mono_ns();
        return 0;
}

void host_renew(struct host *h, const struct host_peer *peer)
{
        uint64_t now;

        if (!peer || atomic_load(&h->n_transient) == 0)
                return;
        now = mono_ns();
        pthread_mutex_lock(&h->lock);
        for (struct hsess *hs = h->sessions; hs; hs = hs->next)
                if (owned_by(hs, peer))
                        hs->renewed_ns = now;
        pthread_mutex_unlock(&h->lock);
}

static void expire(struct host *h, struct hsess *hs, uint64_t idle_ns)
{
        char line[HOST_MSG_MAX];

        pthread_mutex_lock(&hs->lock);
        hs->expired = true;
        hs->quit = true;
        /* Nobody wants a step in flight: one that never returns must not keep it (as unload). */
        if (hs->m_pub)
                master_request_abandon(hs->m_pub, "the session's lease ran out");
        pthread_cond_signal(&hs->cond);
        pthread_mutex_unlock(&hs->lock);
        if (h->opts.log) {
                snprintf(line, sizeof(line), "session %llu: transient, its owner (%s) sent "
                         "nothing for %.1f s (the lease ran out): stopping and unloading it",
                         (unsigned long long)hs->id, hs->owner, (double)idle_ns * 1e-9);
                h->opts.log(h->opts.log_ctx, LOG_NOTICE, line);
        }
}

long host_lease_check(struct host *h, uint64_t grace_ns)
{
        uint64_t now, next = UINT64_MAX;

        if (atomic_load(&h->n_transient) == 0)
                return -1;
        now = mono_ns();
        pthread_mutex_lock(&h->lock);
        for (struct hsess *hs = h->sessions; hs; hs = hs->next) {
                bool loading;

                if (!hs->transient || hs->expired)
                        continue;
                if (now - hs->renewed_ns < grace_ns) {
                        if (hs->renewed_ns + grace_ns < next)
                                next = hs->renewed_ns + grace_ns;
                        continue;
                }
                pthread_mutex_lock(&hs->lock);
                loading = hs->st.state == PROTO_STATE_LOADING;
                pthread_mutex_unlock(&hs->lock);
                if (loading) {
                        /* Its owner waits for the load's reply: the lease runs from then. */
                        hs->renewed_ns = now;
                        if (now + grace_ns < next)
                                next = now + grace_ns;
                        continue;
                }
                expire(h, hs, now - hs->renewed_ns);
        }
        pthread_mutex_unlock(&h->lock);
        if (next == UINT64_MAX)
                return -1;
        return next <= now ? 1 : (long)((next - now) / 1000000u) + 1;
}

void hlease_detach(struct host *h, uint64_t token, const struct proto_req *req,
                   const struct host_peer *peer)
{
        struct proto_instance_ref a;
        const char *what = "session";
        char err[256];
        struct hsess *hs;
        struct pw w;

        if (proto_detach_decode(req->args, &a, err, sizeof(err)) < 0) {
                host_reply_error(h, token, req->id, PROTO_E_BAD_REQUEST, "%s", err);
                return;
        }
        pthread_mutex_lock(&h->lock);
        for (hs = h->sessions; hs && hs->id != a.instance; hs = hs->next)
                ;
        if (hs && hs->fmi)
                what = "instance";
        if (!hs) {
                pthread_mutex_unlock(&h->lock);
                host_reply_error(h, token, req->id, PROTO_E_NO_SESSION, "no session or instance "
                                 "%llu", (unsigned long long)a.instance);
                return;
        }
        /* Only the lease's holder lets it go: its connection and its user, as renewal. */
        if (!hs->transient || hs->expired || !peer || !owned_by(hs, peer)) {
                bool transient = hs->transient && !hs->expired;

                pthread_mutex_unlock(&h->lock);
                host_reply_error(h, token, req->id, transient ? PROTO_E_DENIED : PROTO_E_STATE,
                                 "%s %llu %s", what, (unsigned long long)a.instance,
                                 transient ? "is leased to another connection: only its owner "
                                 "may detach it" : "is not transient: nothing to detach");
                return;
        }
        hs->transient = false;
        atomic_fetch_sub(&h->n_transient, 1);
        pthread_mutex_unlock(&h->lock);
        if (h->opts.log) {
                char line[HOST_MSG_MAX];

                snprintf(line, sizeof(line), "%s %llu: detached by its owner (%s): kept without "
                         "a lease", what, (unsigned long long)a.instance, hs->owner);
                h->opts.log(h->opts.log_ctx, LOG_NOTICE, line);
        }
        if (pw_init(&w) < 0) {
                host_reply_error(h, token, req->id, PROTO_E_INTERNAL, "out of memory");
                return;
        }
        proto_reply_ok_begin(&w, req->id);
        pw_nil(&w);
        host_reply_take(h, token, req->id, &w);
        pw_fini(&w);
}
