/*
 * me_ball.h: BallME's closed form (tests/fmus/BallME/model.c), for the
 * Model Exchange tests of both FMI versions (test_me.c, test_me2.c,
 * test_me_events.c).
 */
#ifndef FMUD_TEST_ME_BALL_H
#define FMUD_TEST_ME_BALL_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#include "test_master_sys.h"

/*
 * BallME by hand: from h = 1, v = 0, free flight under g = 9.81 until
 * t = 1.5 and g = 3.71 after; an impact (h = 0 falling) reverses v with
 * e = 0.7; a rebound slower than 0.1 m/s rests.
 */
static inline void ball_exact(double t, double *ret_h, double *ret_v)
{
        double tc = 0.0, h = 1.0, v = 0.0, g = 9.81;
        bool switched = false;

        for (;;) {
                double impact = g > 0.0 ? tc + (v + sqrt(v * v + 2.0 * g * h)) / g : INFINITY;
                double next = switched ? impact : fmin(impact, 1.5), dt;

                dt = fmin(t, next) - tc;
                h += v * dt - 0.5 * g * dt * dt;
                v -= g * dt;
                tc += dt;
                if (t <= next) {
                        *ret_h = h;
                        *ret_v = v;
                        return;
                }
                if (next == impact) {
                        h = 0.0;
                        v = -0.7 * v;
                        if (v < 0.1)
                                v = g = 0.0;
                } else {
                        switched = true;
                        g = 3.71;
                }
        }
}

/*
 * Every grid row of x within tol of ball_exact() in columns h_col and
 * v_col (asserted); returns the number of impacts (v turning up).
 * me_ball.c.
 */
size_t me_ball_check(const struct msys *x, const char *h_col, const char *v_col, double tol);

#endif
