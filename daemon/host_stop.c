/*
 * host_stop: the grace a stop gives a running session's step (host.h,
 * HOST_STOP_GRACE_S). A stop is answered at the session's next point; a
 * step that never returns (an FMU hung, with no step budget) would hold
 * it for ever, and the client would see no answer. After the grace the
 * steps in flight are abandoned, as unload and a daemon shutdown do: the
 * workers are killed, the session faults and the stop is answered.
 *
 * DESIGN: the stop's time is kept per session on the control thread under
 * h->lock, as a lease's renewal (host_lease.c); with no stop waited for,
 * the check costs one atomic load.
 */
#include "daemon/host_int.h"

#include <stdio.h>
#include <syslog.h>
#include <time.h>

static uint64_t mono_ns(void)
{
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC, &t);
        return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void host_stop_asked(struct host *h, struct hsess *hs)
{
        pthread_mutex_lock(&h->lock);
        if (!hs->stop_asked_ns) {
                hs->stop_asked_ns = mono_ns();
                atomic_fetch_add(&h->n_stopping, 1);
        }
        pthread_mutex_unlock(&h->lock);
}

/* Past the grace: its steps in flight are no longer waited for. */
static void abandon(struct host *h, struct hsess *hs)
{
        char line[HOST_MSG_MAX];

        if (hs->m_pub)
                master_request_abandon(hs->m_pub, "it did not come back within "
                                       HOST_STOP_GRACE_TEXT " of the stop");
        if (h->opts.log) {
                snprintf(line, sizeof(line), "session %llu: a step did not come back within %d s "
                         "of the stop: its workers are killed and the session faults",
                         (unsigned long long)hs->id, HOST_STOP_GRACE_S);
                h->opts.log(h->opts.log_ctx, LOG_WARNING, line);
        }
}

long host_stop_check(struct host *h)
{
        const uint64_t grace = (uint64_t)HOST_STOP_GRACE_S * 1000000000u;
        uint64_t now, next = UINT64_MAX;
        uint32_t waiting = 0;

        if (atomic_load(&h->n_stopping) == 0)
                return -1;
        now = mono_ns();
        pthread_mutex_lock(&h->lock);
        for (struct hsess *hs = h->sessions; hs; hs = hs->next) {
                bool running;

                if (!hs->stop_asked_ns)
                        continue;
                pthread_mutex_lock(&hs->lock);
                running = hs->st.state == PROTO_STATE_RUNNING;
                if (running && now - hs->stop_asked_ns >= grace) {
                        abandon(h, hs);
                        running = false;
                }
                pthread_mutex_unlock(&hs->lock);
                if (!running) {
                        hs->stop_asked_ns = 0;
                        continue;
                }
                waiting++;
                if (hs->stop_asked_ns + grace < next)
                        next = hs->stop_asked_ns + grace;
        }
        /* Recounted: a session unloaded meanwhile took its stop with it. */
        atomic_store(&h->n_stopping, waiting);
        pthread_mutex_unlock(&h->lock);
        if (next == UINT64_MAX)
                return -1;
        return next <= now ? 1 : (long)((next - now) / 1000000u) + 1;
}
