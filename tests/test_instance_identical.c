/*
 * instance: every test FMU driven through a worker gives results
 * bit-identical to the same call sequence made in-process, and two workers
 * keep process-global FMU state apart where two in-process instances
 * cannot.
 *
 * Each scenario is written once against test_instance_drv.h and run twice:
 * once on a drv_local() (dlopen, direct calls), once on a drv_remote()
 * (worker); the recorded values must match byte for byte.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_instance_drv.h"
#include "worker/call.h"

#define ok(expr) cr_assert(eq(int, (expr), INST_OK), "%s", #expr)

static struct drv *open_drv(const char *fmu, bool remote)
{
        struct drv *d = remote ? drv_remote(fmu) : drv_local(fmu);

        cr_assert(d != NULL, "opening %s %s", fmu, remote ? "in a worker" : "in-process");
        return d;
}

/* Run scenario on a local and a remote instance; compare what each recorded. */
static void compare(const char *fmu, size_t size, void (*scenario)(struct drv *, unsigned char *))
{
        unsigned char *a = calloc(1, size), *b = calloc(1, size);
        struct drv *d;

        d = open_drv(fmu, false);
        scenario(d, a);
        drv_free(d);
        d = open_drv(fmu, true);
        scenario(d, b);
        drv_free(d);
        cr_assert(eq(int, memcmp(a, b, size), 0), "%s: in-process and worker results differ", fmu);
        free(a);
        free(b);
        cr_assert(eq(int, drv_count_children(), 0));
}

/* ---- LinearOde (FMI 3.0) and LinearOde2 (FMI 2.0) ---------------------- */

#define LIN_STEPS 400

static void linear(struct drv *d, unsigned char *rec)
{
        static const uint32_t in_vrs[] = { 10, 11, 12, 13, 14, 15, 16, 17, 18, 19 };
        static const uint32_t out_vrs[] = { 1, 2, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29 };
        static const uint32_t k_vr = 3, x0_vr = 4;
        static const uint32_t der_vrs[] = { 1, 20 };
        static const int32_t orders[] = { 1, 2 };
        double *out = (double *)rec, u[10], x0 = 2.0, k = 0.5;
        const double h = 0.01;

        ok(drv_instantiate(d, false, false));
        ok(drv_enter_init(d, 0.0));
        ok(drv_set(d, MD_FLOAT64, &k_vr, 1, &k, 1));
        ok(drv_set(d, MD_FLOAT64, &x0_vr, 1, &x0, 1));
        ok(drv_exit_init(d));
        for (int i = 0; i < LIN_STEPS; i++) {
                struct inst_in in[2] = {
                        { MD_FLOAT64, in_vrs, 10, u, NULL, 10 },
                        { MD_FLOAT64, &k_vr, 1, &k, NULL, 1 },
                };
                struct inst_out o = { MD_FLOAT64, out_vrs, 12, out + 15 * i, NULL, 12 };
                struct inst_step_result res;

                for (int j = 0; j < 10; j++)
                        u[j] = sin(0.1 * i + j) * (j + 1);
                /* The tunable k changes at step 200, through the step's inputs. */
                k = i < 200 ? 0.5 : 1.25;
                ok(drv_step(d, i * h, h, in, 2, &o, 1, &res));
                cr_assert(eq(int, res.phase, INST_PHASE_DONE));
                out[15 * i + 12] = res.last_successful_time;
                ok(drv_output_derivatives(d, der_vrs, 2, orders, out + 15 * i + 13, 2));
        }
        ok(drv_terminate(d));
}

Test(instance, linear_ode_matches_in_process_bit_for_bit, .timeout = 120)
{
        compare("LinearOde", LIN_STEPS * 15 * sizeof(double), linear);
}

Test(instance, linear_ode2_fmi2_matches_in_process_bit_for_bit, .timeout = 120)
{
        compare("LinearOde2", LIN_STEPS * 15 * sizeof(double), linear);
}

/* ---- MsdMass1 + MsdMass2, coupled (Jacobi), stepped with post/wait ------- */

#define MSD_STEPS 300

static void msd_pair(bool remote, double *rec)
{
        struct drv *m1 = open_drv("MsdMass1", remote), *m2 = open_drv("MsdMass2", remote);
        static const uint32_t m1_out[] = { 1, 2 }, m1_in = 3, m2_out[] = { 1, 2, 3 }, m2_in[] = { 4, 5 };
        double x1v1[2], x2v2f[3];
        const double h = 0.01;

        ok(drv_instantiate(m1, false, false));
        ok(drv_instantiate(m2, false, false));
        ok(drv_enter_init(m1, 0.0));
        ok(drv_enter_init(m2, 0.0));
        ok(drv_get(m1, MD_FLOAT64, m1_out, 2, x1v1, 2));
        ok(drv_get(m2, MD_FLOAT64, m2_out, 3, x2v2f, 3));
        ok(drv_exit_init(m1));
        ok(drv_exit_init(m2));
        for (int i = 0; i < MSD_STEPS; i++) {
                double f = x2v2f[2], xv[2] = { x1v1[0], x1v1[1] };
                struct inst_in in1 = { MD_FLOAT64, &m1_in, 1, &f, NULL, 1 };
                struct inst_in in2 = { MD_FLOAT64, m2_in, 2, xv, NULL, 2 };
                struct inst_out o1 = { MD_FLOAT64, m1_out, 2, x1v1, NULL, 2 };
                struct inst_out o2 = { MD_FLOAT64, m2_out, 3, x2v2f, NULL, 3 };
                struct inst_step s1 = { .t = i * h, .h = h, .inputs = &in1, .n_inputs = 1,
                                        .outputs = &o1, .n_outputs = 1 };
                struct inst_step s2 = { .t = i * h, .h = h, .inputs = &in2, .n_inputs = 1,
                                        .outputs = &o2, .n_outputs = 1 };
                struct inst_step_result r1, r2;

                if (remote) {
                        /* Both run at once; then both are collected. */
                        ok(inst_post_step(drv_inst(m1), &s1));
                        ok(inst_post_step(drv_inst(m2), &s2));
                        ok(inst_wait_step(drv_inst(m1), &r1));
                        ok(inst_wait_step(drv_inst(m2), &r2));
                } else {
                        ok(drv_step(m1, s1.t, h, &in1, 1, &o1, 1, &r1));
                        ok(drv_step(m2, s2.t, h, &in2, 1, &o2, 1, &r2));
                }
                memcpy(rec + 5 * i, x1v1, sizeof(x1v1));
                memcpy(rec + 5 * i + 2, x2v2f, sizeof(x2v2f));
        }
        drv_free(m1);
        drv_free(m2);
}

Test(instance, coupled_msd_masses_match_in_process_with_post_and_wait, .timeout = 120)
{
        double *a = calloc(MSD_STEPS * 5, sizeof(double)), *b = calloc(MSD_STEPS * 5, sizeof(double));

        msd_pair(false, a);
        msd_pair(true, b);
        cr_assert(eq(int, memcmp(a, b, MSD_STEPS * 5 * sizeof(double)), 0));
        /* The coupling did something: mass 1 moved off its rest position. */
        cr_assert(a[5 * (MSD_STEPS - 1)] != 0.0);
        free(a);
        free(b);
}

/* ---- Feedthrough: every type, both arrays, resizing, String, Binary ----- */

struct ft_rec {
        float f32;
        double f64;
        int8_t i8;
        uint8_t u8;
        int16_t i16;
        uint16_t u16;
        int32_t i32;
        uint32_t u32;
        int64_t i64;
        uint64_t u64;
        bool b;
        int64_t e;
        double m[6];
        double v[16];
        char s[64];
        size_t bin_size;
        uint8_t bin[16];
};

static void feedthrough_step(struct drv *d, double t, uint64_t n, struct ft_rec *r, int seed)
{
        static const uint32_t vr[] = { 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 27, 29, 32, 23, 25 };
        float f32 = 0.1f * seed;
        double f64 = -1.0 / 3 * seed, m[6], v[16];
        int8_t i8 = (int8_t)-seed;
        uint8_t u8 = (uint8_t)(200 + seed);
        int16_t i16 = (int16_t)(-300 * seed);
        uint16_t u16 = (uint16_t)(60000 + seed);
        int32_t i32 = -70000 * seed;
        uint32_t u32 = 4000000000u + (uint32_t)seed;
        int64_t i64 = INT64_MIN + seed, e = 1 + seed % 3;
        uint64_t u64 = UINT64_MAX - (uint64_t)seed;
        bool b = seed % 2;
        char s[32];
        const char *sp = s;
        uint8_t bin[5] = { 0xde, 0xad, (uint8_t)seed, 0x00, 0xff };
        const uint8_t *bp = bin;
        size_t bsize = sizeof(bin);
        const char *out_s;
        const uint8_t *out_b;
        struct inst_in in[] = {
                { MD_FLOAT32, &vr[0], 1, &f32, NULL, 1 }, { MD_FLOAT64, &vr[1], 1, &f64, NULL, 1 },
                { MD_INT8, &vr[2], 1, &i8, NULL, 1 }, { MD_UINT8, &vr[3], 1, &u8, NULL, 1 },
                { MD_INT16, &vr[4], 1, &i16, NULL, 1 }, { MD_UINT16, &vr[5], 1, &u16, NULL, 1 },
                { MD_INT32, &vr[6], 1, &i32, NULL, 1 }, { MD_UINT32, &vr[7], 1, &u32, NULL, 1 },
                { MD_INT64, &vr[8], 1, &i64, NULL, 1 }, { MD_UINT64, &vr[9], 1, &u64, NULL, 1 },
                { MD_BOOLEAN, &vr[10], 1, &b, NULL, 1 }, { MD_INT64, &vr[11], 1, &e, NULL, 1 },
                { MD_FLOAT64, &vr[12], 1, m, NULL, 6 }, { MD_FLOAT64, &vr[13], 1, v, NULL, n },
                { MD_STRING, &vr[14], 1, &sp, NULL, 1 }, { MD_BINARY, &vr[15], 1, &bp, &bsize, 1 },
        };
        static const uint32_t ovr[] = { 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 28, 30, 33, 24, 26 };
        struct inst_out out[] = {
                { MD_FLOAT32, &ovr[0], 1, &r->f32, NULL, 1 }, { MD_FLOAT64, &ovr[1], 1, &r->f64, NULL, 1 },
                { MD_INT8, &ovr[2], 1, &r->i8, NULL, 1 }, { MD_UINT8, &ovr[3], 1, &r->u8, NULL, 1 },
                { MD_INT16, &ovr[4], 1, &r->i16, NULL, 1 }, { MD_UINT16, &ovr[5], 1, &r->u16, NULL, 1 },
                { MD_INT32, &ovr[6], 1, &r->i32, NULL, 1 }, { MD_UINT32, &ovr[7], 1, &r->u32, NULL, 1 },
                { MD_INT64, &ovr[8], 1, &r->i64, NULL, 1 }, { MD_UINT64, &ovr[9], 1, &r->u64, NULL, 1 },
                { MD_BOOLEAN, &ovr[10], 1, &r->b, NULL, 1 }, { MD_INT64, &ovr[11], 1, &r->e, NULL, 1 },
                { MD_FLOAT64, &ovr[12], 1, r->m, NULL, 6 }, { MD_FLOAT64, &ovr[13], 1, r->v, NULL, n },
                { MD_STRING, &ovr[14], 1, &out_s, NULL, 1 },
                { MD_BINARY, &ovr[15], 1, &out_b, &r->bin_size, 1 },
        };
        struct inst_step_result res;

        for (int i = 0; i < 6; i++)
                m[i] = seed + i / 2 + 0.1 * (i % 2);
        for (uint64_t i = 0; i < n; i++)
                v[i] = seed * 100.0 + (double)i;
        snprintf(s, sizeof(s), "value %d: \xc3\xa9t\xc3\xa9", seed);
        ok(drv_step(d, t, 0.1, in, 16, out, 16, &res));
        cr_assert(eq(int, res.phase, INST_PHASE_DONE));
        snprintf(r->s, sizeof(r->s), "%s", out_s);
        cr_assert(le(sz, r->bin_size, sizeof(r->bin)));
        memcpy(r->bin, out_b, r->bin_size);
}

static void feedthrough(struct drv *d, unsigned char *rec)
{
        static const uint32_t n_vr = 31;
        struct ft_rec *r = (struct ft_rec *)(void *)rec;
        uint64_t n = 7;

        ok(drv_instantiate(d, false, false));
        /* Resize the vectors in Configuration Mode, before initialization. */
        ok(drv_enter_config(d));
        ok(drv_set(d, MD_UINT64, &n_vr, 1, &n, 1));
        ok(drv_exit_config(d));
        ok(drv_enter_init(d, 0.0));
        ok(drv_exit_init(d));
        feedthrough_step(d, 0.0, 7, &r[0], 1);
        feedthrough_step(d, 0.1, 7, &r[1], 2);
        /* And again in Reconfiguration Mode, from Step Mode (n is tunable). */
        n = 3;
        ok(drv_enter_config(d));
        ok(drv_set(d, MD_UINT64, &n_vr, 1, &n, 1));
        ok(drv_exit_config(d));
        feedthrough_step(d, 0.2, 3, &r[2], 3);
        ok(drv_terminate(d));
}

Test(instance, feedthrough_every_type_array_string_binary_matches_in_process, .timeout = 120)
{
        struct ft_rec a[3], b[3];
        struct drv *d;

        memset(a, 0, sizeof(a));
        memset(b, 0, sizeof(b));
        d = open_drv("Feedthrough", false);
        feedthrough(d, (unsigned char *)a);
        drv_free(d);
        d = open_drv("Feedthrough", true);
        feedthrough(d, (unsigned char *)b);
        drv_free(d);
        cr_assert(eq(int, memcmp(a, b, sizeof(a)), 0));
        /* And they are the values that went in. */
        cr_assert(eq(u64, b[0].u64, UINT64_MAX - 1));
        cr_assert(eq(i64, b[1].i64, INT64_MIN + 2));
        cr_assert(eq(str, b[2].s, "value 3: \xc3\xa9t\xc3\xa9"));
        cr_assert(eq(sz, b[2].bin_size, 5));
        cr_assert(eq(u8, b[2].bin[2], 3));
        cr_assert(eq(dbl, b[0].v[6], 106.0));
        cr_assert(eq(dbl, b[2].v[2], 302.0));
        cr_assert(eq(dbl, b[2].m[5], 5.1));
}

/* ---- BouncingBall: early return and Event Mode --------------------------- */

#define BB_POINTS 200

static void bouncing(struct drv *d, unsigned char *rec, bool event_mode)
{
        static const uint32_t vrs[] = { 1, 3 }, bounces_vr = 10;
        double *r = (double *)rec, t = 0.0, hv[2];
        int32_t bounces;
        int events = 0;

        ok(drv_instantiate(d, event_mode, true));
        ok(drv_enter_init(d, 0.0));
        ok(drv_exit_init(d));
        if (event_mode)
                ok(drv_enter_step(d));
        for (int i = 0; i < BB_POINTS && t < 2.5; i++) {
                struct inst_out o[] = {
                        { MD_FLOAT64, vrs, 2, hv, NULL, 2 },
                        { MD_INT32, &bounces_vr, 1, &bounces, NULL, 1 },
                };
                struct inst_step_result res;

                ok(drv_step(d, t, 0.05, NULL, 0, o, 2, &res));
                t = res.last_successful_time;
                r[5 * i] = t;
                r[5 * i + 1] = hv[0];
                r[5 * i + 2] = hv[1];
                r[5 * i + 3] = bounces;
                r[5 * i + 4] = res.early_return + 2 * res.event_handling_needed;
                if (res.event_handling_needed) {
                        struct inst_discrete dis;

                        events++;
                        ok(drv_enter_event(d));
                        do
                                ok(drv_update_discrete(d, &dis));
                        while (dis.discrete_states_need_update);
                        ok(drv_enter_step(d));
                }
        }
        cr_assert(event_mode ? events > 2 : events == 0);
}

static void bouncing_events(struct drv *d, unsigned char *rec)
{
        bouncing(d, rec, true);
}

static void bouncing_early(struct drv *d, unsigned char *rec)
{
        bouncing(d, rec, false);
}

Test(instance, bouncing_ball_event_mode_sequence_matches_in_process, .timeout = 120)
{
        compare("BouncingBall", BB_POINTS * 5 * sizeof(double), bouncing_events);
}

Test(instance, bouncing_ball_early_return_matches_in_process, .timeout = 120)
{
        compare("BouncingBall", BB_POINTS * 5 * sizeof(double), bouncing_early);
}

/* ---- GlobalCounter: one process per instance ------------------------------ */

static void count_steps(struct drv *a, struct drv *b, int64_t ret[4])
{
        static const uint32_t vrs[] = { 1, 2 };
        struct inst_step_result res;

        ok(drv_instantiate(a, false, false));
        ok(drv_instantiate(b, false, false));
        ok(drv_enter_init(a, 0.0));
        ok(drv_enter_init(b, 0.0));
        ok(drv_exit_init(a));
        ok(drv_exit_init(b));
        for (int i = 0; i < 5; i++) {
                struct inst_out oa = { MD_INT64, vrs, 2, ret, NULL, 2 };
                struct inst_out ob = { MD_INT64, vrs, 2, ret + 2, NULL, 2 };

                if (i < 3)
                        ok(drv_step(a, i * 0.1, 0.1, NULL, 0, &oa, 1, &res));
                ok(drv_step(b, i * 0.1, 0.1, NULL, 0, &ob, 1, &res));
        }
}

Test(instance, global_counter_workers_do_not_interfere, .timeout = 120)
{
        struct drv *a = open_drv("GlobalCounter", true), *b = open_drv("GlobalCounter", true);
        int64_t c[4];

        count_steps(a, b, c);
        cr_assert(eq(i64, c[0], 3), "count of the first worker's instance");
        cr_assert(eq(i64, c[1], 3));
        cr_assert(eq(i64, c[2], 5), "count of the second worker's instance");
        cr_assert(eq(i64, c[3], 5));
        cr_assert(ne(int, inst_pid(drv_inst(a)), inst_pid(drv_inst(b))));
        drv_free(a);
        drv_free(b);
}

Test(instance, global_counter_in_process_instances_do_interfere, .timeout = 120)
{
        struct drv *a = open_drv("GlobalCounter", false), *b = open_drv("GlobalCounter", false);
        int64_t c[4];

        count_steps(a, b, c);
        /* One static counter for both: each sees the other's steps. */
        cr_assert(eq(i64, c[1], 3));
        cr_assert(eq(i64, c[3], 5));
        cr_assert(eq(i64, c[0], 5), "after a's third step, b had stepped three times too");
        cr_assert(eq(i64, c[2], 8));
        drv_free(a);
        drv_free(b);
}
