/*
 * instance: Clocks (fmi3GetClock/SetClock, interval and shift get/set,
 * decimal and fraction), directional and adjoint derivatives and
 * per-element variable dependencies through a real worker, on the
 * ClockedDeriv test FMU: the worker's answers equal the known Jacobians,
 * the model description's dependencies and, call for call, the same FMU
 * called in-process; the worker refuses each of them in a state the
 * standard does not allow.
 *
 * The in-process side is a direct dlopen of the staged binary (one
 * struct side, either kind), so a scenario is written once.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi/loader.h"
#include "support/md_load.h"
#include "test_instance_drv.h"
#include "worker/call.h"

#define FMU "ClockedDeriv"

enum {
        VR_X1 = 1, VR_X2, VR_DER_X1, VR_DER_X2, VR_U1, VR_U2, VR_Y1, VR_Y2, VR_K,
        VR_TICK, VR_CU, VR_CY, VR_HI, VR_SLOW, VR_TRIG,
};

/* One instance: in a worker (in != NULL) or in-process (lib, c). */
struct side {
        struct inst *in;
        struct md *md;
        struct fmu_lib *lib;
        fmi3Instance c;
};

#define ok(s, expr) cr_assert(eq(int, (expr), INST_OK), "%s: %s", #expr, \
                              (s)->in ? inst_message((s)->in) : "in-process")

static void quiet(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category,
                  fmi3String message)
{
        (void) env;
        (void) status;
        (void) category;
        (void) message;
}

static void side_open(struct side *s, bool remote)
{
        char dir[1024];
        struct diag_list diags;
        struct inst_opts o;
        char *why = NULL;

        *s = (struct side){ 0 };
        snprintf(dir, sizeof(dir), "%s/%s", FMUD_TEST_FMU_DIR, FMU);
        s->md = md_load_dir(dir);
        cr_assert(s->md != NULL, "%s", dir);
        if (remote) {
                drv_opts(&o, FMU);
                cr_assert(eq(int, inst_new(&o, &s->in, &why), 0), "%s", why ? why : "");
                return;
        }
        diag_list_init(&diags, 0);
        cr_assert(eq(int, fmu_lib_open(dir, s->md, &diags, &s->lib), 0));
        diag_list_fini(&diags);
}

static void side_close(struct side *s)
{
        if (s->in) {
                cr_assert(eq(int, inst_free(s->in), 0));
                cr_assert(eq(int, drv_count_children(), 0));
        } else {
                if (s->c)
                        s->lib->f3.fmi3FreeInstance(s->c);
                fmu_lib_close(s->lib);
        }
        md_free(s->md);
}

static int instantiate(struct side *s, bool event_mode)
{
        struct inst_instantiate a = { .event_mode_used = event_mode };

        if (s->in)
                return inst_instantiate(s->in, &a);
        s->c = s->lib->f3.fmi3InstantiateCoSimulation("local", s->md->instantiation_token, NULL,
                                                      false, false, event_mode, false, NULL, 0,
                                                      NULL, quiet, NULL);
        return s->c ? INST_OK : INST_ERROR;
}

static int enter_init(struct side *s)
{
        return s->in ? inst_enter_initialization_mode(s->in, NULL) :
               (int)s->lib->f3.fmi3EnterInitializationMode(s->c, false, 0.0, 0.0, false, 0.0);
}

static int exit_init(struct side *s)
{
        return s->in ? inst_exit_initialization_mode(s->in) :
               (int)s->lib->f3.fmi3ExitInitializationMode(s->c);
}

static int enter_event(struct side *s)
{
        return s->in ? inst_enter_event_mode(s->in) : (int)s->lib->f3.fmi3EnterEventMode(s->c);
}

static int enter_step(struct side *s)
{
        return s->in ? inst_enter_step_mode(s->in) : (int)s->lib->f3.fmi3EnterStepMode(s->c);
}

static int update(struct side *s, bool *ret_need)
{
        struct inst_discrete d;
        fmi3Boolean b[5];
        fmi3Float64 t;
        int r;

        if (s->in) {
                r = inst_update_discrete_states(s->in, &d);
                *ret_need = d.discrete_states_need_update;
                return r;
        }
        r = s->lib->f3.fmi3UpdateDiscreteStates(s->c, &b[0], &b[1], &b[2], &b[3], &b[4], &t);
        *ret_need = b[0];
        return r;
}

static int get_f64(struct side *s, const uint32_t *vrs, size_t n, double *v)
{
        return s->in ? inst_get(s->in, MD_FLOAT64, vrs, n, v, n) :
               (int)s->lib->f3.fmi3GetFloat64(s->c, vrs, n, v, n);
}

static int set_f64(struct side *s, const uint32_t *vrs, size_t n, const double *v)
{
        return s->in ? inst_set(s->in, MD_FLOAT64, vrs, n, v, n) :
               (int)s->lib->f3.fmi3SetFloat64(s->c, vrs, n, v, n);
}

static int get_clock(struct side *s, uint32_t vr, bool *v)
{
        return s->in ? inst_get(s->in, MD_CLOCK, &vr, 1, v, 1) :
               (int)s->lib->f3.fmi3GetClock(s->c, &vr, 1, v);
}

static int set_clock(struct side *s, uint32_t vr, bool v)
{
        return s->in ? inst_set(s->in, MD_CLOCK, &vr, 1, &v, 1) :
               (int)s->lib->f3.fmi3SetClock(s->c, &vr, 1, &v);
}

static int step(struct side *s, double t, double h)
{
        struct inst_step st = { .t = t, .h = h };
        struct inst_step_result res;
        fmi3Boolean ev, term, early;
        fmi3Float64 last;

        if (s->in)
                return inst_do_step(s->in, &st, &res);
        return s->lib->f3.fmi3DoStep(s->c, t, h, false, &ev, &term, &early, &last);
}

/* Directional (adjoint false) or adjoint derivative; n seeds and sensitivities per side. */
static int partial(struct side *s, bool adjoint, const uint32_t *unk, size_t nu,
                   const uint32_t *kn, size_t nk, const double *seed, double *sens)
{
        size_t n_seed = adjoint ? nu : nk, n_sens = adjoint ? nk : nu;

        if (s->in)
                return adjoint ? inst_get_adjoint_derivative(s->in, unk, nu, kn, nk, seed, n_seed,
                                                             sens, n_sens) :
                       inst_get_directional_derivative(s->in, unk, nu, kn, nk, seed, n_seed, sens,
                                                       n_sens);
        return adjoint ? s->lib->f3.fmi3GetAdjointDerivative(s->c, unk, nu, kn, nk, seed, n_seed,
                                                              sens, n_sens) :
               s->lib->f3.fmi3GetDirectionalDerivative(s->c, unk, nu, kn, nk, seed, n_seed, sens,
                                                       n_sens);
}

/* ---- Clock timing: one Clock per call, both forms ----------------------- */

/* What a timing call got: decimal, counter, resolution, qualifier. */
struct timing_rec {
        double decimal;
        uint64_t counter, resolution;
        int32_t qualifier;
};

static int get_interval(struct side *s, bool fraction, struct timing_rec *t)
{
        const uint32_t vr = VR_TICK;
        fmi3IntervalQualifier q = 0;
        int qi = 0, r;

        if (s->in) {
                r = fraction ? inst_get_interval_fraction(s->in, &vr, 1, &t->counter,
                                                          &t->resolution, &qi) :
                    inst_get_interval_decimal(s->in, &vr, 1, &t->decimal, &qi);
                t->qualifier = qi;
                return r;
        }
        r = fraction ? s->lib->f3.fmi3GetIntervalFraction(s->c, &vr, 1, &t->counter,
                                                          &t->resolution, &q) :
            s->lib->f3.fmi3GetIntervalDecimal(s->c, &vr, 1, &t->decimal, &q);
        t->qualifier = (int32_t)q;
        return r;
}

static int get_shift(struct side *s, bool fraction, struct timing_rec *t)
{
        const uint32_t vr = VR_TICK;

        if (s->in)
                return fraction ? inst_get_shift_fraction(s->in, &vr, 1, &t->counter, &t->resolution) :
                       inst_get_shift_decimal(s->in, &vr, 1, &t->decimal);
        return fraction ? s->lib->f3.fmi3GetShiftFraction(s->c, &vr, 1, &t->counter, &t->resolution) :
               s->lib->f3.fmi3GetShiftDecimal(s->c, &vr, 1, &t->decimal);
}

/* Set the interval (shift false) or shift: decimal d, or counter/res when res != 0. */
static int set_timing(struct side *s, bool shift, double d, uint64_t counter, uint64_t res)
{
        const struct fmi3_api *f = s->lib ? &s->lib->f3 : NULL;
        const uint32_t vr = VR_TICK;

        if (s->in && res)
                return shift ? inst_set_shift_fraction(s->in, &vr, 1, &counter, &res) :
                       inst_set_interval_fraction(s->in, &vr, 1, &counter, &res);
        if (s->in)
                return shift ? inst_set_shift_decimal(s->in, &vr, 1, &d) :
                       inst_set_interval_decimal(s->in, &vr, 1, &d);
        if (res)
                return shift ? f->fmi3SetShiftFraction(s->c, &vr, 1, &counter, &res) :
                       f->fmi3SetIntervalFraction(s->c, &vr, 1, &counter, &res);
        return shift ? f->fmi3SetShiftDecimal(s->c, &vr, 1, &d) :
               f->fmi3SetIntervalDecimal(s->c, &vr, 1, &d);
}

#define N_POINTS 24
#define N_TIMING 12

/* Everything the clock scenario observed, compared byte for byte. */
struct clock_rec {
        struct timing_rec timing[N_TIMING];
        double cy[N_POINTS];
        bool tick[N_POINTS], hi[N_POINTS], hi_after[N_POINTS];
        double y[N_POINTS][2];
};

/*
 * Initialization Mode: read the description's timing, set and read back
 * interval and shift in both forms; Event Mode: retune the interval. Then
 * step with h = 0.05 and let tick tick where the importer computes it,
 * from shift 1/20 and interval 0.2: at the points i = 1 + 4 n.
 */
static void clock_scenario(struct side *s, struct clock_rec *rec)
{
        static const uint32_t y_vrs[] = { VR_Y1, VR_Y2 }, cu_vr = VR_CU, cy_vr = VR_CY;
        struct timing_rec *t = rec->timing;
        const double h = 0.05;
        bool need;

        ok(s, instantiate(s, true));
        ok(s, enter_init(s));
        ok(s, get_interval(s, false, &t[0]));                   /* 0.1, Changed */
        ok(s, get_interval(s, true, &t[1]));                    /* 1/10, Unchanged */
        ok(s, get_shift(s, false, &t[2]));                      /* 0 */
        ok(s, set_timing(s, false, 0.25, 0, 0));
        ok(s, get_interval(s, true, &t[3]));                    /* 250/1000, Changed */
        ok(s, set_timing(s, false, 0.0, 1, 4));
        ok(s, get_interval(s, false, &t[4]));                   /* 0.25, Changed */
        ok(s, set_timing(s, true, 0.03, 0, 0));
        ok(s, get_shift(s, true, &t[5]));                       /* 30/1000 */
        ok(s, set_timing(s, true, 0.0, 1, 20));
        ok(s, get_shift(s, false, &t[6]));                      /* 0.05 */
        ok(s, get_shift(s, true, &t[7]));                       /* 1/20 */
        ok(s, exit_init(s));

        /* Event Mode (eventModeUsed): a tunable periodic Clock's interval may change. */
        ok(s, set_timing(s, false, 0.2, 0, 0));
        ok(s, get_interval(s, false, &t[8]));                   /* 0.2, Changed */
        ok(s, get_interval(s, true, &t[9]));                    /* 200/1000, Unchanged */
        ok(s, update(s, &need));
        ok(s, enter_step(s));

        for (int i = 0; i < N_POINTS; i++) {
                double u[2] = { 0.1 * i, -0.2 * i }, cu = 0.5 * (i / 4 + 1);
                static const uint32_t u_vrs[] = { VR_U1, VR_U2 };

                ok(s, set_f64(s, u_vrs, 2, u));
                ok(s, step(s, i * h, h));
                ok(s, get_f64(s, y_vrs, 2, rec->y[i]));
                /* Point i + 1 is a tick when it is at 0.05 + n 0.2. */
                if (i % 4 != 0)
                        continue;
                ok(s, enter_event(s));
                ok(s, set_clock(s, VR_TICK, true));
                ok(s, set_f64(s, &cu_vr, 1, &cu));
                ok(s, get_f64(s, &cy_vr, 1, &rec->cy[i]));
                ok(s, get_clock(s, VR_TICK, &rec->tick[i]));
                ok(s, get_clock(s, VR_HI, &rec->hi[i]));
                ok(s, update(s, &need));
                ok(s, get_clock(s, VR_HI, &rec->hi_after[i]));
                ok(s, enter_step(s));
        }
        ok(s, enter_event(s));
        ok(s, get_interval(s, false, &t[10]));                  /* 0.2, Unchanged */
        ok(s, set_clock(s, VR_TICK, false));                    /* canBeDeactivated */
        ok(s, get_clock(s, VR_TICK, &rec->tick[N_POINTS - 1]));
        ok(s, update(s, &need));
        ok(s, enter_step(s));
}

Test(instance_clocks, clock_timing_and_ticks_match_in_process)
{
        struct clock_rec *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
        struct side s;

        side_open(&s, false);
        clock_scenario(&s, a);
        side_close(&s);
        side_open(&s, true);
        clock_scenario(&s, b);
        side_close(&s);
        cr_assert(eq(int, memcmp(a, b, sizeof(*a)), 0), "in-process and worker results differ");

        /* And the values are the ones the model defines. */
        cr_assert(a->timing[0].decimal == 0.1 && a->timing[0].qualifier == fmi3IntervalChanged);
        cr_assert(a->timing[1].counter == 1 && a->timing[1].resolution == 10 &&
                  a->timing[1].qualifier == fmi3IntervalUnchanged);
        cr_assert(a->timing[2].decimal == 0.0);
        cr_assert(a->timing[3].counter == 250 && a->timing[3].resolution == 1000 &&
                  a->timing[3].qualifier == fmi3IntervalChanged);
        cr_assert(a->timing[4].decimal == 0.25 && a->timing[4].qualifier == fmi3IntervalChanged);
        cr_assert(a->timing[5].counter == 30 && a->timing[5].resolution == 1000);
        cr_assert(a->timing[6].decimal == 0.05);
        cr_assert(a->timing[7].counter == 1 && a->timing[7].resolution == 20);
        cr_assert(a->timing[8].decimal == 0.2 && a->timing[8].qualifier == fmi3IntervalChanged);
        cr_assert(a->timing[9].counter == 200 && a->timing[9].qualifier == fmi3IntervalUnchanged);
        cr_assert(a->timing[10].decimal == 0.2 && a->timing[10].qualifier == fmi3IntervalUnchanged);
        for (int i = 0; i < N_POINTS - 1; i++) {
                bool ticks = i % 4 == 0;
                double cu = 0.5 * (i / 4 + 1);

                cr_assert(eq(int, a->tick[i], ticks), "point %d", i);
                cr_assert(a->cy[i] == (ticks ? 2.0 * cu : 0.0), "point %d: cy %g", i, a->cy[i]);
                cr_assert(eq(int, a->hi[i], ticks && cu > 1.0), "point %d", i);
                cr_assert(a->hi_after[i] == false, "point %d: hi still ticks after the update", i);
        }
        cr_assert(a->tick[N_POINTS - 1] == false, "tick deactivated");
        free(a);
        free(b);
}

/* ---- Directional and adjoint derivatives -------------------------------- */

#define K 1.5

static const uint32_t unknowns[] = { VR_Y1, VR_Y2, VR_DER_X1, VR_DER_X2 };
static const uint32_t knowns[] = { VR_X1, VR_X2, VR_U1, VR_U2 };

/* The Jacobian d(y, der_x) / d(x, u) of model.c at k = K. */
static const double J[4][4] = {
        { 1.0, 2.0, 5.0 * K, 0.0 },
        { 0.0, 4.0, 0.0, -6.0 * K },
        { -1.0, 0.5, 1.0, 0.0 },
        { 0.0, -2.0, 0.0, 3.0 },
};

/* Every product here is exact in binary: the comparisons can be exact. */
static void check_products(struct side *s, double *rec)
{
        static const double seed[4] = { 0.5, -2.0, 3.0, 0.25 };

        for (int j = 0; j < 4; j++) {
                /* Column j, one known at a time. */
                double one = 1.0, col[4];

                ok(s, partial(s, false, unknowns, 4, &knowns[j], 1, &one, col));
                for (int i = 0; i < 4; i++)
                        cr_assert(col[i] == J[i][j], "J[%d][%d] = %g, want %g", i, j, col[i], J[i][j]);
                memcpy(rec + 4 * j, col, sizeof(col));
        }
        ok(s, partial(s, false, unknowns, 4, knowns, 4, seed, rec + 16));
        ok(s, partial(s, true, unknowns, 4, knowns, 4, seed, rec + 20));
        for (int i = 0; i < 4; i++) {
                double jv = 0.0, vj = 0.0;

                for (int j = 0; j < 4; j++) {
                        jv += J[i][j] * seed[j];
                        vj += seed[j] * J[j][i];
                }
                cr_assert(rec[16 + i] == jv, "(J seed)[%d] = %g, want %g", i, rec[16 + i], jv);
                cr_assert(rec[20 + i] == vj, "(seed^T J)[%d] = %g, want %g", i, rec[20 + i], vj);
        }
}

/* Initialization Mode (with d y / d k = B u), then Step and Event Mode. */
static void derivative_scenario(struct side *s, double *rec)
{
        static const uint32_t k_vr = VR_K, u_vrs[] = { VR_U1, VR_U2 }, y_vrs[] = { VR_Y1, VR_Y2 };
        const double k = K, u[2] = { 2.0, -1.0 }, seed2[2] = { 1.0, -0.5 };
        double dk[2], adj;

        ok(s, instantiate(s, true));
        ok(s, enter_init(s));
        ok(s, set_f64(s, &k_vr, 1, &k));
        ok(s, set_f64(s, u_vrs, 2, u));
        ok(s, partial(s, false, y_vrs, 2, &k_vr, 1, &(double){ 1.0 }, dk));
        cr_assert(dk[0] == 5.0 * 2.0 && dk[1] == -6.0 * -1.0, "d y / d k = (%g, %g)", dk[0], dk[1]);
        ok(s, partial(s, true, y_vrs, 2, &k_vr, 1, seed2, &adj));
        cr_assert(adj == 1.0 * 10.0 - 0.5 * 6.0, "seed^T d y / d k = %g", adj);
        rec[0] = dk[0];
        rec[1] = dk[1];
        rec[2] = adj;
        check_products(s, rec + 3);
        ok(s, exit_init(s));
        check_products(s, rec + 27);                    /* Event Mode */
        ok(s, enter_step(s));
        ok(s, step(s, 0.0, 0.1));
        check_products(s, rec + 51);                    /* Step Mode */
}

#define N_DERIV 75

Test(instance_clocks, directional_and_adjoint_derivatives_are_the_jacobian_products)
{
        double a[N_DERIV] = { 0 }, b[N_DERIV] = { 0 };
        struct side s;

        side_open(&s, false);
        derivative_scenario(&s, a);
        side_close(&s);
        side_open(&s, true);
        derivative_scenario(&s, b);
        side_close(&s);
        cr_assert(eq(int, memcmp(a, b, sizeof(a)), 0), "in-process and worker results differ");
}

/* ---- Per-element dependencies ------------------------------------------- */

/* fmi3DependencyKind of a dependenciesKind entry. */
static int fmi_kind(enum md_dep_kind k)
{
        return k == MD_DEP_DEPENDENT ? fmi3Dependent : (int)k;
}

/* Each unknown's dependencies from the worker equal the description's and the in-process ones. */
static void check_dependencies(struct side *r, struct side *l, const struct md_unknowns *us)
{
        cr_assert(us->n > 0, "the model structure lists no unknowns here");
        for (size_t i = 0; i < us->n; i++) {
                const struct md_unknown *u = &us->v[i];
                uint32_t vr = r->md->vars[u->var].vr, ind[8], ind_l[8];
                size_t n, n_l, ed[8], ei[8], ed_l[8], ei_l[8];
                fmi3DependencyKind kinds_l[8];
                int kinds[8];

                ok(r, inst_get_number_of_variable_dependencies(r->in, vr, &n));
                cr_assert(eq(sz, n, u->n_deps), "vr %u", vr);
                cr_assert(n <= 8);
                ok(r, inst_get_variable_dependencies(r->in, vr, ed, ind, ei, kinds, n));
                ok(l, l->lib->f3.fmi3GetNumberOfVariableDependencies(l->c, vr, &n_l));
                cr_assert(eq(sz, n_l, n));
                ok(l, l->lib->f3.fmi3GetVariableDependencies(l->c, vr, ed_l, ind_l, ei_l, kinds_l, n));
                for (size_t j = 0; j < n; j++) {
                        cr_assert(eq(u32, ind[j], r->md->vars[u->deps[j]].vr), "vr %u dep %zu", vr, j);
                        cr_assert(eq(int, kinds[j], fmi_kind(u->dep_kinds[j])), "vr %u dep %zu", vr, j);
                        cr_assert(ed[j] == 0 && ei[j] == 0, "scalars: element index 0");
                        cr_assert(ind_l[j] == ind[j] && (int)kinds_l[j] == kinds[j] &&
                                  ed_l[j] == ed[j] && ei_l[j] == ei[j]);
                }
        }
}

Test(instance_clocks, variable_dependencies_match_the_model_structure)
{
        struct side r, l;
        size_t n = 1;

        side_open(&r, true);
        side_open(&l, false);
        ok(&r, instantiate(&r, true));
        ok(&l, instantiate(&l, true));
        ok(&r, enter_init(&r));
        ok(&l, enter_init(&l));
        /* Before fmi3ExitInitializationMode: the initial dependencies. */
        check_dependencies(&r, &l, &r.md->structure.initial_unknowns);
        ok(&r, inst_get_number_of_variable_dependencies(r.in, VR_U1, &n));
        cr_assert(eq(sz, n, 0), "an input depends on nothing");
        ok(&r, exit_init(&r));
        ok(&l, exit_init(&l));
        /* After: the runtime ones. */
        check_dependencies(&r, &l, &r.md->structure.outputs);
        check_dependencies(&r, &l, &r.md->structure.derivatives);
        side_close(&l);
        side_close(&r);
}
