/*
 * master_pace: wall-clock pacing of a warped run (see master_pace.h).
 */
#include "engine/master/master_pace.h"

#include <errno.h>
#include <math.h>
#include <time.h>

void pace_rebase(struct pace *p, uint64_t now_ns, double sim, double warp)
{
        p->wall0_ns = now_ns;
        p->sim0 = sim;
        p->warp = warp > 0 && isfinite(warp) ? warp : 0.0;
}

uint64_t pace_due_ns(const struct pace *p, double t)
{
        double dt;

        if (!(p->warp > 0))
                return 0;
        dt = (t - p->sim0) / p->warp * 1e9;
        if (!(dt > 0))
                return p->wall0_ns;
        if (dt >= (double)(UINT64_MAX - p->wall0_ns))
                return UINT64_MAX;
        return p->wall0_ns + (uint64_t)dt;
}

uint64_t pace_now_ns(void)
{
        struct timespec t;

        (void) clock_gettime(CLOCK_MONOTONIC, &t);
        return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

bool pace_sleep(uint64_t due_ns, uint64_t slice_ns, uint64_t spin_ns, bool (*stop)(void *ctx),
                void *ctx)
{
        uint64_t wake = due_ns > spin_ns ? due_ns - spin_ns : 0;

        for (;;) {
                uint64_t now = pace_now_ns(), until;
                struct timespec ts;

                if (now >= due_ns)
                        return true;
                if (stop && stop(ctx))
                        return false;
                if (now >= wake) {
                        /* The last stretch: on the clock, not the scheduler's wake-up. */
                        while (pace_now_ns() < due_ns)
                                ;
                        return true;
                }
                until = wake - now > slice_ns ? now + slice_ns : wake;
                ts.tv_sec = (time_t)(until / 1000000000u);
                ts.tv_nsec = (long)(until % 1000000000u);
                /* EINTR: go round again; the loop re-reads the clock. */
                (void) clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
        }
}
