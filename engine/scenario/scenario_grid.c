/*
 * scenario_grid: the time grid against what the components and the time
 * representation allow, checked at load so that nothing is discovered
 * mid-run (docs/scenarios.md, "Fixed steps").
 *
 *   resolution  at the largest time of the run, doubles are spaced
 *               ulp(t) apart; the master tells points apart within
 *               16 ulp (master_tol()), so the step must be far above
 *               that: at t0 = 1e9 a step of 1e-7 is below one ulp.
 *   rigid steps a component with canHandleVariableCommunicationStepSize
 *               = false (FMI 3.0 section 4.4; FMI 2.0 section 4.3.1)
 *               is sent multirate * h at every step and nothing else:
 *               that must be a whole multiple of its
 *               fixedInternalStepSize where it gives one ("the importer
 *               should use an integer multiple of this value"), and the
 *               run ends at the last point that is a whole step of every
 *               such component, with a warning when that is before the
 *               stop time (a shorter last step is what it cannot take).
 *
 * Components that can vary their step are free: one with a fixed
 * internal step larger than the communication step lags and says so
 * through lastSuccessfulTime, which the master accepts (master_step.c).
 */
#include "engine/scenario/scenario_int.h"

#include <errno.h>
#include <float.h>
#include <math.h>

/* The master's tolerance is 16 ulp; the step must exceed it a thousandfold. */
#define GRID_RESOLUTION     (16.0 * 1000.0 * DBL_EPSILON)
/* A step is a multiple of the internal step within this relative error. */
#define GRID_MULTIPLE_TOL   1e-9
/* Least common multiples of multirate factors above this are not searched. */
#define GRID_LCM_MAX        (UINT64_C(1) << 32)

static bool rigid(const struct scenario_component *c)
{
        return !c->fmu->md->cs.can_handle_variable_communication_step_size;
}

double sc_grid_default_step(const struct scenario *s)
{
        double h = INFINITY, h_rigid = INFINITY;

        /*
         * The FMUs' DefaultExperiment step (scenario_experiment.c) comes
         * first. A component that cannot vary its step decides, since any
         * other step may be refused for it (sc_grid()); the others' internal
         * steps only where no such component gives one.
         */
        for (size_t i = 0; i < s->n_components; i++) {
                const struct md_cosim *cs = &s->components[i].fmu->md->cs;

                if (!cs->has_fixed_internal_step_size)
                        continue;
                if (cs->fixed_internal_step_size < h)
                        h = cs->fixed_internal_step_size;
                if (rigid(&s->components[i]) && cs->fixed_internal_step_size < h_rigid)
                        h_rigid = cs->fixed_internal_step_size;
        }
        return isinf(h_rigid) ? h : h_rigid;
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
        while (b) {
                uint64_t t = a % b;

                a = b;
                b = t;
        }
        return a;
}

/* Points of h from start to stop: whole ones (within rounding) and all, as the master counts. */
static double points(const struct scenario_experiment *e)
{
        return (e->stop - e->start) / e->step;
}

static int check_resolution(struct sc_load *l, const char *file, int line,
                            const struct scenario_experiment *e)
{
        double t = fmax(fabs(e->start), fabs(e->stop));

        if (e->step >= GRID_RESOLUTION * t)
                return 0;
        return sc_err(l, file, line, NULL, "step size %g cannot be told apart at t = %g: doubles "
                      "there are %g apart, so points of the grid would not be where n * h puts "
                      "them (the step must be at least %g, or the times smaller)", e->step, t,
                      nextafter(t, INFINITY) - t, GRID_RESOLUTION * t);
}

static int check_multiple(struct sc_load *l, const char *file, int line,
                          const struct scenario_experiment *e, const struct scenario_component *c)
{
        double own = (double)c->multirate * e->step, dt, k;

        if (!c->fmu->md->cs.has_fixed_internal_step_size)
                return 0;
        dt = c->fmu->md->cs.fixed_internal_step_size;
        k = nearbyint(own / dt);
        if (k >= 1 && fabs(k * dt - own) <= GRID_MULTIPLE_TOL * own)
                return 0;
        return sc_err(l, file, line, c->name, "its step %g (step size %g x multirate %u) is not a "
                      "whole multiple of its fixedInternalStepSize %g, and "
                      "canHandleVariableCommunicationStepSize is false: use a step size that makes "
                      "it one (FMI 3.0 section 4.4)", own, e->step, (unsigned)c->multirate, dt);
}

uint64_t scenario_grid_end(const struct scenario_experiment *e)
{
        double q = points(e), r = nearbyint(q);

        if (q > 9007199254740992.0)
                return 0;
        if (!(q >= 1.0))
                return 1;
        return (uint64_t)(fabs(q - r) <= 1e-9 * fmax(1.0, q) ? r : ceil(q));
}

double scenario_stop_for(const struct scenario *s, size_t comp)
{
        const struct scenario_experiment *e = &s->experiment;
        const struct scenario_component *c = &s->components[comp];
        uint64_t rate = c->multirate ? c->multirate : 1, n;
        double fixed, from, end;

        if (!rigid(c) || !isfinite(e->stop))
                return e->stop;
        /* The master's grid; sc_grid() made it whole steps of this component. */
        n = scenario_grid_end(e);
        if (n < rate)
                return e->stop;
        /* As the FMU gets them (step_size() of master_step.c): each rounded, then added. */
        fixed = (double)rate * e->step;
        from = e->start + (double)(n - rate) * e->step;
        end = from + fixed;
        return end > e->stop ? end : e->stop;
}

int sc_grid(struct sc_load *l, const char *file, int line)
{
        struct scenario *s = l->s;
        struct scenario_experiment *e = &s->experiment;
        uint64_t lcm = 1, whole;
        const char *first = NULL;
        double q, r;
        int bad;

        bad = check_resolution(l, file, line, e) < 0;
        for (size_t i = 0; i < s->n_components; i++) {
                const struct scenario_component *c = &s->components[i];

                if (!rigid(c))
                        continue;
                bad |= check_multiple(l, file, line, e, c) < 0;
                if (!first)
                        first = c->name;
                if (lcm <= GRID_LCM_MAX)
                        lcm = lcm / gcd(lcm, c->multirate) * c->multirate;
        }
        if (bad || !first)
                return bad ? -EINVAL : 0;
        /* The grid's points as the master counts them; whole steps of every rigid component. */
        q = points(e);
        r = nearbyint(q);
        whole = (uint64_t)(fabs(q - r) <= 1e-9 * fmax(1.0, q) ? r : floor(q));
        if (lcm > GRID_LCM_MAX || whole < lcm)
                return sc_err(l, file, line, first, "not one whole step of every component that "
                              "cannot vary its step (canHandleVariableCommunicationStepSize is "
                              "false) fits between the start time %g and the stop time %g",
                              e->start, e->stop);
        whole -= whole % lcm;
        if ((double)whole == r && fabs(q - r) <= 1e-9 * fmax(1.0, q))
                return 0;
        sc_warn(l, file, line, first, "the run ends at the last whole step, t = %.17g, not at the "
                "stop time %g: a component that cannot vary its step "
                "(canHandleVariableCommunicationStepSize is false) cannot take a shorter last step",
                e->start + (double)whole * e->step, e->stop);
        e->stop = e->start + (double)whole * e->step;
        return 0;
}
