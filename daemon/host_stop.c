/*
 * host_stop: the grace a stop gives a running session's step (host.h,
 * HOST_STOP_GRACE_S). A stop is answered at the session's next point; a
 * step that never returns (an FMU hung, with no step budget) would hold
 * it for ever, and the client would see no answer. After the grace (the
 * step budget where that is longer: a step may take that long) the
 * steps in flight are abandoned, as unload and a daemon shutdown do: the
 * workers are killed, the session faults and the stop is answered.
 *
 * DESIGN: the stop's time is kept per session on the control thread under
 * h->lock, as a lease's renewal (host_lease.c); with no stop waited for,
 * the check costs one atomic load.
 */
#include "daemon/host_int.h"

#include <math.h>
#include <stdio.h>
#include <syslog.h>

#include "engine/master/master_pace.h"

void host_stop_asked(struct host *h, struct hsess *hs)
{
        pthread_mutex_lock(&h->lock);
        if (!hs->stop_asked_ns) {
                hs->stop_asked_ns = pace_now_ns();
                atomic_fetch_add(&h->n_stopping, 1);
        }
        pthread_mutex_unlock(&h->lock);
}

/* The grace of hs's steps: HOST_STOP_GRACE_S, or its step budget when longer. */
static double grace_s(const struct hsess *hs)
{
        double b = hs->sc ? hs->sc->experiment.budget : INFINITY;

        return isfinite(b) && b > HOST_STOP_GRACE_S ? b : HOST_STOP_GRACE_S;
}

/* Past the grace: its steps in flight are no longer waited for. */
static void abandon(struct host *h, struct hsess *hs, double grace)
{
        char line[HOST_MSG_MAX];

        snprintf(hs->stop_why, sizeof(hs->stop_why), "it did not come back within %g s of the "
                 "stop", grace);
        if (hs->m_pub)
                master_request_abandon(hs->m_pub, hs->stop_why);
        if (h->opts.log) {
                snprintf(line, sizeof(line), "session %llu: a step did not come back within %g s "
                         "of the stop: its workers are killed and the session faults",
                         (unsigned long long)hs->id, grace);
                h->opts.log(h->opts.log_ctx, LOG_WARNING, line);
        }
}

long host_stop_check(struct host *h)
{
        uint64_t now, next = UINT64_MAX;
        uint32_t waiting = 0;

        if (atomic_load(&h->n_stopping) == 0)
                return -1;
        now = pace_now_ns();
        pthread_mutex_lock(&h->lock);
        for (struct hsess *hs = h->sessions; hs; hs = hs->next) {
                double grace;
                uint64_t end;
                bool running;

                if (!hs->stop_asked_ns)
                        continue;
                grace = grace_s(hs);
                end = hs->stop_asked_ns + (uint64_t)(grace * 1e9);
                pthread_mutex_lock(&hs->lock);
                running = hs->st.state == PROTO_STATE_RUNNING;
                if (running && now >= end) {
                        abandon(h, hs, grace);
                        running = false;
                }
                pthread_mutex_unlock(&hs->lock);
                if (!running) {
                        hs->stop_asked_ns = 0;
                        continue;
                }
                waiting++;
                if (end < next)
                        next = end;
        }
        /* Recounted: a session unloaded meanwhile took its stop with it. */
        atomic_store(&h->n_stopping, waiting);
        pthread_mutex_unlock(&h->lock);
        if (next == UINT64_MAX)
                return -1;
        return next <= now ? 1 : (long)((next - now) / 1000000u) + 1;
}
