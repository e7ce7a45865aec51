/*
 * me_ball: a run of BallME (or its FMI 2.0 twins) against its closed form
 * (me_ball.h).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "me_ball.h"

size_t me_ball_check(const struct msys *x, const char *h_col, const char *v_col, double tol)
{
        size_t n, bounces = 0, hc = msys_col(x, h_col), vc = msys_col(x, v_col);
        const struct mrow **g = msys_grid(x, &n);

        for (size_t k = 0; k < n; k++) {
                double h, v;

                ball_exact(g[k]->t, &h, &v);
                cr_assert(fabs(g[k]->v[hc] - h) < tol, "h at t = %g: %.9g, by hand %.9g", g[k]->t,
                          g[k]->v[hc], h);
                cr_assert(fabs(g[k]->v[vc] - v) < tol, "v at t = %g: %.9g, by hand %.9g", g[k]->t,
                          g[k]->v[vc], v);
                bounces += k && g[k - 1]->v[vc] < 0.0 && g[k]->v[vc] > 0.0;
        }
        free(g);
        return bounces;
}
