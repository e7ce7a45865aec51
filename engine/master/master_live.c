/*
 * master_live: a paced run's wait for wall time, cut short at once when
 * the master's owner has something to serve (master_request_serve()).
 *
 * DESIGN: a paced run sleeps after each point until the point is due
 * (master_pace.h). A request served between points (a get answered from
 * the last completed point, a set applied at the next one) should not
 * wait for that sleep: master_request_serve() sets MASTER_REQ_SERVE and
 * wakes the wait, the stepping call returns at the point it is at, and
 * the sleep it owes is taken first by the next stepping call, so pacing
 * is the same as without the interruption. The wait is a condition
 * variable on CLOCK_MONOTONIC (the pace's clock) with the master's
 * requests checked under its mutex, so a request made just before the
 * wait is never missed. The last spinUs before the deadline are spun on the
 * clock instead (master_overrun.c measures the lateness this leaves).
 *
 * Threads: master_request_serve() from any thread; mlive_sleep() on the
 * master's thread.
 */
#include "engine/master/master_int.h"

#include <errno.h>
#include <time.h>

#define IDLE_SLICE_NS   50000000ull     /* opts.idle at least this often while waiting */

int mlive_init(struct master *m)
{
        pthread_condattr_t a;
        int r;

        if (pthread_condattr_init(&a) != 0)
                return -ENOMEM;
        r = pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
        if (r == 0)
                r = pthread_cond_init(&m->wake_cond, &a);
        pthread_condattr_destroy(&a);
        if (r != 0)
                return -r;
        r = pthread_mutex_init(&m->wake_lock, NULL);
        if (r != 0) {
                pthread_cond_destroy(&m->wake_cond);
                return -r;
        }
        m->wake_ok = true;
        return 0;
}

void mlive_fini(struct master *m)
{
        if (!m->wake_ok)
                return;
        pthread_cond_destroy(&m->wake_cond);
        pthread_mutex_destroy(&m->wake_lock);
        m->wake_ok = false;
}

void master_request_serve(struct master *m)
{
        atomic_fetch_or_explicit(&m->requests, MASTER_REQ_SERVE, memory_order_relaxed);
        pthread_mutex_lock(&m->wake_lock);
        pthread_cond_broadcast(&m->wake_cond);
        pthread_mutex_unlock(&m->wake_lock);
}

bool mlive_serve_pending(struct master *m)
{
        /* Asked at every point: a plain load, and the locked clear only when the bit is up. */
        if (!(atomic_load_explicit(&m->requests, memory_order_relaxed) & MASTER_REQ_SERVE))
                return false;
        return atomic_fetch_and_explicit(&m->requests, ~MASTER_REQ_SERVE,
                                         memory_order_relaxed) & MASTER_REQ_SERVE;
}

/* A request to serve, or a warp other than the one the wait was for. */
static bool wanted(struct master *m, uint64_t warp_bits)
{
        return atomic_load_explicit(&m->requests, memory_order_relaxed) != 0 ||
               atomic_load_explicit(&m->warp_bits, memory_order_relaxed) != warp_bits;
}

bool mlive_sleep(struct master *m, uint64_t due_ns, uint64_t warp_bits)
{
        /* The last stretch before the deadline is spun on the clock (the scenario's spinUs). */
        uint64_t spin_ns = (uint64_t)(m->sc->experiment.spin_us * 1e3);

        for (;;) {
                uint64_t now = pace_now_ns(), until;
                struct timespec ts;
                bool stop;

                if (now >= due_ns)
                        return true;
                if (spin_ns && due_ns - now <= spin_ns) {
                        if (wanted(m, warp_bits))
                                return false;
                        continue;
                }
                if (m->opts.idle)
                        m->opts.idle(m->opts.idle_ctx);
                until = due_ns - spin_ns;
                if (until - now > IDLE_SLICE_NS)
                        until = now + IDLE_SLICE_NS;
                ts.tv_sec = (time_t)(until / 1000000000u);
                ts.tv_nsec = (long)(until % 1000000000u);
                pthread_mutex_lock(&m->wake_lock);
                stop = wanted(m, warp_bits);
                if (!stop)
                        (void) pthread_cond_timedwait(&m->wake_cond, &m->wake_lock, &ts);
                pthread_mutex_unlock(&m->wake_lock);
                if (stop)
                        return false;
        }
}
