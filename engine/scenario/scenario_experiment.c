/*
 * scenario_experiment: the experiment from the settings, with defaults
 * where nothing was given (docs/scenarios.md):
 *
 *   start  the SSD's DefaultExperiment startTime (a single FMU: its own), else 0
 *   stop   its stopTime, else start + 1 (as FMPy)
 *   step   the fmud stepSize; else the smallest stepSize among the
 *          components' DefaultExperiments; else the smallest
 *          fixedInternalStepSize among them; else (stop - start) / 500
 *   budget 10 s per coupled step; warp 0; decimation 1; algorithm Jacobi
 *   tolerance  the fmud tolerance for every component; else, per component,
 *          its own DefaultExperiment tolerance (as FMPy); else none
 *          (toleranceDefined = false)
 *
 * and the Gauss-Seidel order: which connections are sequential (the
 * consumer waits for the producer's step at the same point) and the order
 * in which the master steps components.
 */
#include "engine/scenario/scenario_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double component_step(const struct scenario *s)
{
        double h = INFINITY;

        for (size_t i = 0; i < s->n_components; i++) {
                const struct md *md = s->components[i].fmu->md;

                if (md->has_default_experiment && md->default_experiment.has_step &&
                    md->default_experiment.step > 0 && md->default_experiment.step < h)
                        h = md->default_experiment.step;
        }
        return h;
}

static void defaults(struct sc_load *l, const struct sc_settings *st, struct scenario_experiment *e)
{
        const struct md_default_experiment *de = NULL;
        bool has_start = false, has_stop = false;

        if (!l->has_doc && l->s->components[0].fmu->md->has_default_experiment)
                de = &l->s->components[0].fmu->md->default_experiment;
        if (l->has_doc) {
                has_start = l->doc.has_start;
                has_stop = l->doc.has_stop;
                e->start = l->doc.start;
                e->stop = l->doc.stop;
        } else if (de) {
                has_start = de->has_start;
                has_stop = de->has_stop;
                e->start = de->start;
                e->stop = de->stop;
        }
        if (st->has_start)
                e->start = st->start;
        else if (!has_start)
                e->start = 0;
        if (st->has_stop)
                e->stop = st->stop;
        else if (!has_stop)
                e->stop = e->start + SCENARIO_DEFAULT_DURATION;
        e->step = st->has_step ? st->step : component_step(l->s);
        if (isinf(e->step))
                e->step = sc_grid_default_step(l->s);
        if (isinf(e->step))
                e->step = (e->stop - e->start) / SCENARIO_DEFAULT_POINTS;
        e->budget = st->has_budget ? st->budget : SCENARIO_DEFAULT_BUDGET;
        e->budget_given = st->has_budget;
        e->warp = st->has_warp ? st->warp : 0;
        e->decimation = st->decimation ? (uint32_t)st->decimation : 1;
        e->rollback_on_fault = st->rollback_on_fault;
        e->tolerance_given = st->has_tolerance;
        e->tolerance = st->has_tolerance ? st->tolerance : 0;
        e->overrun_given = st->has_overrun;
        e->overrun = st->has_overrun ? st->overrun : SCENARIO_OVERRUN_NONE;
        e->overrun_margin_given = st->has_overrun_margin;
        e->overrun_margin_us = st->has_overrun_margin ? st->overrun_margin_us : 0;
        e->spin_given = st->has_spin;
        e->spin_us = st->has_spin ? st->spin_us : 0;
}

static const char *const overrun_names[] = {
        [SCENARIO_OVERRUN_NONE] = "none",
        [SCENARIO_OVERRUN_SOFT] = "soft",
        [SCENARIO_OVERRUN_HARD] = "hard",
};

const char *scenario_overrun_name(enum scenario_overrun o)
{
        return (unsigned)o <= SCENARIO_OVERRUN_HARD ? overrun_names[o] : "?";
}

int scenario_overrun_parse(const char *s, size_t len, enum scenario_overrun *ret)
{
        for (unsigned i = 0; i <= SCENARIO_OVERRUN_HARD; i++)
                if (s && len == strlen(overrun_names[i]) && !memcmp(s, overrun_names[i], len)) {
                        *ret = (enum scenario_overrun)i;
                        return 0;
                }
        return -EINVAL;
}

/* A relative tolerance FMI can take: finite, above 0 and below 1. */
static bool tolerance_ok(double t)
{
        return isfinite(t) && t > 0 && t < 1;
}

/*
 * What each instance gets as its relative tolerance (FMI 3.0 section 2.3.2,
 * fmi3EnterInitializationMode; FMI 2.0 fmi2SetupExperiment). A component's
 * own DefaultExperiment tolerance (section 2.4.6) outside (0, 1) is not
 * passed on: a warning says so, and the FMU gets none.
 */
static void component_tolerances(struct sc_load *l, const struct scenario_experiment *e)
{
        for (size_t i = 0; i < l->s->n_components; i++) {
                struct scenario_component *c = &l->s->components[i];
                const struct md *md = c->fmu->md;
                double t = md->default_experiment.tolerance;

                c->tolerance_defined = e->tolerance_given;
                c->tolerance = e->tolerance;
                if (e->tolerance_given || !md->has_default_experiment ||
                    !md->default_experiment.has_tolerance)
                        continue;
                if (!tolerance_ok(t)) {
                        (void) diag_add(l->diags, DIAG_WARNING, c->source, 0, c->name,
                                        "its DefaultExperiment tolerance %g is not above 0 "
                                        "and below 1: the FMU gets no tolerance", t);
                        continue;
                }
                c->tolerance_defined = true;
                c->tolerance = t;
        }
}

/* Where a value came from: the override's flag, or the SSD at line. */
static void where(const struct sc_load *l, const char *from, int line, const char **ret_file,
                  int *ret_line)
{
        *ret_file = from ? from : l->label;
        *ret_line = from ? 0 : line;
}

static int check(struct sc_load *l, const struct sc_settings *st, const struct scenario_experiment *e)
{
        int settings = l->has_doc ? l->doc.settings_line : 0;
        int times = l->has_doc ? l->doc.experiment_line : 0;
        int bad = 0, line;
        const char *f;

        where(l, st->stop_from ? st->stop_from : st->start_from, times, &f, &line);
        if (!isfinite(e->start) || !isfinite(e->stop))
                bad |= sc_err(l, f, line, NULL, "start and stop time must be finite numbers") < 0;
        else if (!(e->stop > e->start))
                bad |= sc_err(l, f, line, NULL, "stop time %g is not after start time %g", e->stop,
                              e->start) < 0;
        where(l, st->step_from, settings, &f, &line);
        if (!isfinite(e->step) || !(e->step > 0))
                bad |= sc_err(l, f, line, NULL, "step size %g: must be a positive finite number",
                              e->step) < 0;
        where(l, st->budget_from, settings, &f, &line);
        if (isnan(e->budget) || !(e->budget > 0))
                bad |= sc_err(l, f, line, NULL, "step budget %g s: must be positive (INF: no budget)",
                              e->budget) < 0;
        where(l, st->warp_from, settings, &f, &line);
        if (!isfinite(e->warp) || e->warp < 0)
                bad |= sc_err(l, f, line, NULL, "warp %g: must be 0 (as fast as possible) or a "
                              "positive finite factor", e->warp) < 0;
        where(l, st->overrun_margin_from, settings, &f, &line);
        if (!isfinite(e->overrun_margin_us) || e->overrun_margin_us < 0 ||
            e->overrun_margin_us > 1e12)
                bad |= sc_err(l, f, line, NULL, "overrun margin %g us: must be 0 to 1e12 us",
                              e->overrun_margin_us) < 0;
        where(l, st->spin_from, settings, &f, &line);
        if (!isfinite(e->spin_us) || e->spin_us < 0 || e->spin_us > SCENARIO_SPIN_US_MAX)
                bad |= sc_err(l, f, line, NULL, "spin %g us: must be 0 to %g us", e->spin_us,
                              SCENARIO_SPIN_US_MAX) < 0;
        where(l, st->tolerance_from, settings, &f, &line);
        if (e->tolerance_given && !tolerance_ok(e->tolerance))
                bad |= sc_err(l, f, line, NULL, "tolerance %g: must be a relative tolerance above "
                              "0 and below 1", e->tolerance) < 0;
        if (bad)
                return -EINVAL;
        where(l, st->step_from, settings, &f, &line);
        return sc_grid(l, f, line);
}

/* The order attribute: listed components first, the rest after in document order. */
static int parse_order(struct sc_load *l, const struct sc_settings *st, size_t *order)
{
        const struct scenario *s = l->s;
        bool flag = st->order_origin && !strcmp(st->order_origin, "--order");
        const char *file = flag ? "--order" : l->label;
        int line = flag || !l->has_doc ? 0 : l->doc.settings_line;
        bool *seen = calloc(s->n_components + 1, sizeof(*seen));
        const char *p = st->order;
        size_t n = 0;
        int bad = 0;

        if (!seen)
                return -ENOMEM;
        while (*p) {
                size_t len = strcspn(p, " \t\r\n");
                char name[512];
                int i;

                if (len > 0 && len < sizeof(name)) {
                        memcpy(name, p, len);
                        name[len] = '\0';
                        i = scenario_find_component(s, name);
                        if (i < 0)
                                bad |= sc_err(l, file, line, name, "unknown component in the "
                                              "Gauss-Seidel order") < 0;
                        else if (seen[i])
                                bad |= sc_err(l, file, line, name, "listed twice in the Gauss-Seidel "
                                              "order") < 0;
                        else
                                order[n++] = (size_t)i;
                        if (i >= 0)
                                seen[i] = true;
                }
                p += len;
                p += strspn(p, " \t\r\n");
        }
        for (size_t i = 0; i < s->n_components; i++)
                if (!seen[i])
                        order[n++] = i;
        free(seen);
        return bad ? -EINVAL : 0;
}

/* Mark the connection into input name sequential. */
static int mark(struct sc_load *l, const char *name, int line)
{
        struct scenario *s = l->s;
        size_t comp, var;

        if (scenario_find_variable(s, name, &comp, &var) < 0)
                return sc_err(l, l->label, line, name, "unknown variable (GaussSeidel input)");
        for (size_t i = 0; i < s->n_connections; i++) {
                struct scenario_connection *c = &s->connections[i];

                if (c->to_comp == comp && c->to_var == var && !c->parameter) {
                        c->sequential = c->from_comp != c->to_comp;
                        return 0;
                }
        }
        return sc_err(l, l->label, line, name, "no connection feeds this input (GaussSeidel)");
}

/* A connection the stepping order follows: sequential ones, or (flow) every value's. */
static bool follows(const struct scenario_connection *c, bool flow)
{
        return flow ? !c->parameter && c->from_comp != c->to_comp : c->sequential;
}

/*
 * Whether a path of connections the order follows leads from 'from' back
 * to it through components not placed yet (seen and stack: scratch).
 */
static bool on_loop(const struct scenario *s, size_t from, const bool *done, bool *seen,
                    size_t *stack)
{
        size_t n = s->n_components, top = 0;

        memset(seen, 0, n * sizeof(*seen));
        stack[top++] = from;
        while (top) {
                size_t at = stack[--top];

                for (size_t j = 0; j < s->n_connections; j++) {
                        const struct scenario_connection *c = &s->connections[j];

                        if (!follows(c, true) || c->from_comp != at || done[c->to_comp])
                                continue;
                        if (c->to_comp == from)
                                return true;
                        if (!seen[c->to_comp]) {
                                seen[c->to_comp] = true;
                                stack[top++] = c->to_comp;
                        }
                }
        }
        return false;
}

/*
 * Kahn's algorithm over sequential connections (flow: over every
 * connection of values between components, a loop entered at its first
 * component in document order, never at one only fed by it); ties in
 * document order. O(n^2 c) at worst.
 */
static int topo(struct sc_load *l, size_t *order, bool flow)
{
        const struct scenario *s = l->s;
        size_t n = s->n_components, k = 0, *indeg = calloc(n, sizeof(*indeg));
        size_t *stack = calloc(n + 1, sizeof(*stack));
        bool *done = calloc(n, sizeof(*done)), *seen = calloc(n + 1, sizeof(*seen));
        int r = 0;

        if (!indeg || !done || !stack || !seen) {
                r = -ENOMEM;
                goto out;
        }
        for (size_t i = 0; i < s->n_connections; i++)
                if (follows(&s->connections[i], flow))
                        indeg[s->connections[i].to_comp]++;
        while (k < n) {
                size_t i = 0;

                while (i < n && (done[i] || indeg[i] > 0))
                        i++;
                /* A loop: the first of it in document order steps first, as it would anyway. */
                for (size_t j = 0; i == n && flow && j < n; j++)
                        if (!done[j] && on_loop(s, j, done, seen, stack))
                                i = j;
                if (i == n) {
                        r = sc_err(l, l->label, l->has_doc ? l->doc.settings_line : 0, NULL,
                                   "the Gauss-Seidel connections form a loop: no component can "
                                   "step first");
                        goto out;
                }
                done[i] = true;
                order[k++] = i;
                for (size_t j = 0; j < s->n_connections; j++)
                        if (follows(&s->connections[j], flow) && s->connections[j].from_comp == i &&
                            !done[s->connections[j].to_comp])
                                indeg[s->connections[j].to_comp]--;
        }
out:
        free(indeg);
        free(done);
        free(stack);
        free(seen);
        return r;
}

static int gauss_seidel(struct sc_load *l, const struct sc_settings *st, size_t *order)
{
        struct scenario *s = l->s;
        size_t *pos;
        int bad = 0, r;

        for (size_t i = 0; i < st->n_sequential; i++)
                bad |= mark(l, st->sequential[i], st->sequential_lines[i]) < 0;
        if (bad)
                return -EINVAL;
        if (!st->order && st->n_sequential)
                return topo(l, order, false);
        /*
         * No order given: the order values flow in (producers before their
         * consumers, as OMSimulator sorts), so that a chain written from its
         * end does not lag a step per link.
         */
        r = st->order ? parse_order(l, st, order) : topo(l, order, true);
        pos = calloc(s->n_components, sizeof(*pos));
        if (r < 0 || !pos) {
                free(pos);
                return r < 0 ? r : -ENOMEM;
        }
        for (size_t i = 0; i < s->n_components; i++)
                pos[order[i]] = i;
        for (size_t i = 0; i < s->n_connections; i++) {
                struct scenario_connection *c = &s->connections[i];
                bool forward = pos[c->from_comp] < pos[c->to_comp];

                if (st->n_sequential == 0)
                        c->sequential = forward && !c->parameter;
                else if (c->sequential && !forward)
                        bad |= sc_err(l, l->label, l->has_doc ? l->doc.settings_line : 0,
                                      s->components[c->to_comp].name,
                                      "a GaussSeidel input whose producer '%s' comes later in "
                                      "the order", s->components[c->from_comp].name) < 0;
        }
        free(pos);
        return bad ? -EINVAL : 0;
}

/* What rollback on fault cannot do: components whose state cannot be restored. */
static void rollback_warnings(struct sc_load *l, const struct scenario_experiment *e)
{
        for (size_t i = 0; e->rollback_on_fault && i < l->s->n_components; i++)
                if (!l->s->components[i].fmu->md->cs.can_get_and_set_fmu_state)
                        sc_warn(l, l->label, 0, l->s->components[i].name, "cannot be rolled back "
                                "after a fault (canGetAndSetFMUState is false): it stays where "
                                "the failed step left it");
}

int sc_experiment(struct sc_load *l, const struct sc_settings *st)
{
        struct scenario_experiment *e = &l->s->experiment;
        bool gs_asked = st->order || st->n_sequential;
        int r, rg;

        defaults(l, st, e);
        rollback_warnings(l, e);
        r = check(l, st, e);
        if (r == 0)
                component_tolerances(l, e);
        e->algorithm = st->has_algorithm ? st->algorithm
                     : gs_asked ? SCENARIO_GAUSS_SEIDEL : SCENARIO_JACOBI;
        e->order = calloc(l->s->n_components + 1, sizeof(*e->order));
        if (!e->order)
                return -ENOMEM;
        if (e->algorithm == SCENARIO_JACOBI) {
                for (size_t i = 0; i < l->s->n_components; i++)
                        e->order[i] = i;
                if (gs_asked)
                        return sc_err(l, l->label, l->has_doc ? l->doc.settings_line : 0, NULL,
                                      "a Gauss-Seidel order or <GaussSeidel> "
                                      "inputs need algorithm=\"gauss-seidel\", not jacobi");
                return r;
        }
        rg = gauss_seidel(l, st, e->order);
        return rg < 0 ? rg : r;
}
