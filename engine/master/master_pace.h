/*
 * master_pace: where a paced run (warp w > 0) should be on the wall clock.
 * The point at simulation time t is due at
 *
 *   wall(t) = wall0 + (t - sim0) / w            (CLOCK_MONOTONIC, ns)
 *
 * and the master sleeps (clock_nanosleep, TIMER_ABSTIME) until then. A
 * change of w, a start or a resume re-bases (wall0, sim0) to (now, the
 * current point), so simulated time never jumps and a pause is not made
 * up for afterwards. What a run that falls behind does is the overrun
 * policy's (master.h, enum master_overrun): catch up as fast as it can
 * (none), or re-base forward (soft), or fault (hard).
 *
 * DESIGN: the arithmetic is pure (pace_rebase(), pace_due_ns()) so it can
 * be tested without a clock; pace_sleep() is the only part that waits.
 * Master thread only.
 */
#ifndef FMUD_ENGINE_MASTER_PACE_H
#define FMUD_ENGINE_MASTER_PACE_H

#include <stdbool.h>
#include <stdint.h>

struct pace {
        uint64_t wall0_ns;
        double sim0;
        double warp;            /* 0: unpaced */
};

/* Re-base: simulation time sim is due now, and later times at warp w. */
void pace_rebase(struct pace *p, uint64_t now_ns, double sim, double warp);

/* Wall time (ns) at which simulation time t is due; 0 when unpaced. Saturates. */
uint64_t pace_due_ns(const struct pace *p, double t);

/* CLOCK_MONOTONIC now, in ns. */
uint64_t pace_now_ns(void);

/*
 * Sleep until due_ns (clock_nanosleep, TIMER_ABSTIME), in slices of at
 * most slice_ns, returning early (false) as soon as *stop() says so; the
 * last spin_ns before due_ns are spun on the clock rather than slept, so
 * the scheduler's wake-up latency does not delay the point. True when
 * due_ns was reached.
 */
bool pace_sleep(uint64_t due_ns, uint64_t slice_ns, uint64_t spin_ns, bool (*stop)(void *ctx),
                void *ctx);

#endif
