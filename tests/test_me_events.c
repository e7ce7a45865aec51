/*
 * State events of Model Exchange FMUs in the worker where an event
 * indicator is exactly 0, as hand-written exports' indicators are at a
 * threshold: FMI 3.0 section 3.1.1 defines a state event as an indicator
 * changing between the domains z > 0 and z <= 0, so an indicator that
 * reaches 0 from below has not changed domain yet, and one that leaves 0
 * upwards has. Threshold (above = (z > 0) as of the last event) and BallME
 * with zero_bounce (a bounce leaves h = 0; gravity is off while h <= 0 held
 * at the last event).
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <math.h>
#include <stdlib.h>

#include "me_ball.h"
#include "test_master_sys.h"

static double val(const struct msys *x, const struct mrow *row, const char *name)
{
        return row->v[msys_col(x, name)];
}

/* Threshold with these bindings to t = 1, h = 0.1: its 11 grid rows. */
static const struct mrow **threshold(struct msys *x, const char *parameters)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("th", "Threshold"),
                .parameters = parameters,
                .stop = 1.0,
                .attrs = "stepSize=\"0.1\"",
        };
        const struct mrow **g;
        size_t n;

        msys_load(x, &spec);
        x->so.sandbox.mode = SANDBOX_STRICT;
        msys_start(x);
        cr_assert(eq(int, master_run(x->m), MASTER_FINISHED), "%s", master_message(x->m));
        g = msys_grid(x, &n);
        cr_assert(eq(sz, n, (size_t)11));
        return g;
}

/* above switched once, at t_switch within 1e-9 after 'at', seen from the row at t = from on. */
static void switched_once(const struct msys *x, const struct mrow **g, double at, double from)
{
        for (size_t k = 0; k < 11; k++) {
                bool after = g[k]->t >= from - 1e-12;

                cr_assert(eq(dbl, val(x, g[k], "th.above"), after ? 1.0 : 0.0), "t = %g",
                          g[k]->t);
                cr_assert(eq(dbl, val(x, g[k], "th.switches"), after ? 1.0 : 0.0), "t = %g",
                          g[k]->t);
        }
        cr_assert(val(x, g[10], "th.t_switch") >= at &&
                  val(x, g[10], "th.t_switch") <= at + 1e-9, "t_switch %.17g",
                  val(x, g[10], "th.t_switch"));
}

/* z = time - 0.5 reaches 0 at a communication point and leaves it upwards. */
Test(me_events, an_indicator_that_leaves_zero_upwards_is_a_state_event)
{
        const struct mrow **g;
        struct msys x;

        g = threshold(&x, MSYS_REAL("th.on_time", "1"));
        switched_once(&x, g, 0.5, 0.6);
        free(g);
        msys_fini(&x);
}

/* z = x - c with x(0) = c: 0 at the start, then positive at once. */
Test(me_events, an_indicator_zero_at_the_start_that_rises_is_a_state_event)
{
        const struct mrow **g;
        struct msys x;

        g = threshold(&x, MSYS_REAL("th.c", "0"));
        switched_once(&x, g, 0.0, 0.1);
        free(g);
        msys_fini(&x);
}

/* Falling through 0: the domain changes where z reaches 0 (z <= 0), as before. */
Test(me_events, an_indicator_that_falls_to_zero_is_a_state_event_there)
{
        const struct mrow **g;
        struct msys x;

        g = threshold(&x, MSYS_REAL("th.x0", "1") MSYS_REAL("th.slope", "-1"));
        for (size_t k = 0; k < 11; k++) {
                bool after = g[k]->t >= 0.6 - 1e-12;

                cr_assert(eq(dbl, val(&x, g[k], "th.above"), after ? 0.0 : 1.0), "t = %g",
                          g[k]->t);
        }
        cr_assert(fabs(val(&x, g[10], "th.t_switch") - 0.5) < 1e-6, "%.17g",
                  val(&x, g[10], "th.t_switch"));
        free(g);
        msys_fini(&x);
}

/*
 * A ball whose bounce leaves h exactly 0: h = 0 is still the domain
 * h <= 0, so the bounce does not turn gravity back on; the state event
 * of h leaving 0 upwards does. It must fly as the ball of the closed form.
 */
Test(me_events, a_ball_left_exactly_on_the_ground_falls_again)
{
        struct msys_spec spec = {
                .elements = MSYS_COMP("ball", "BallME"),
                .parameters = MSYS_REAL("ball.zero_bounce", "1"),
                .stop = 3.0,
                .attrs = "stepSize=\"0.01\"",
                .settings = MSYS_RECORD("ball.h") MSYS_RECORD("ball.v"),
        };
        struct msys x;

        msys_load(&x, &spec);
        x.so.sandbox.mode = SANDBOX_STRICT;
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        cr_assert(eq(sz, me_ball_check(&x, "ball.h", "ball.v", 1e-5), (size_t)5));
        msys_fini(&x);
}

/* z = time - 0: 0 at the start time 0 itself, then positive (the bisection must end at t = 0). */
Test(me_events, an_indicator_of_time_zero_at_a_start_time_of_zero_is_a_state_event)
{
        const struct mrow **g;
        struct msys x;

        g = threshold(&x, MSYS_REAL("th.on_time", "1") MSYS_REAL("th.c", "0"));
        switched_once(&x, g, 0.0, 0.1);
        free(g);
        msys_fini(&x);
}
