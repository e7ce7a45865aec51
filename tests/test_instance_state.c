/*
 * instance: FMU states kept by the worker and named by handle: save,
 * restore, serialize and deserialize round trips continue bit-identically
 * (and identically to the same sequence in-process); a state restores
 * the state machine and the array sizes it was taken with.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "test_instance_drv.h"
#include "worker/call.h"

#define ok(expr) cr_assert(eq(int, (expr), INST_OK), "%s", #expr)

#define LEG 40

/* LEG steps of BouncingBall from t; h, v, bounces and the time after each. */
static double ball_leg(struct drv *d, double t, double *rec)
{
        static const uint32_t hv[] = { 1, 3 }, b = 10;
        struct inst_step_result res;
        int32_t bounces;

        for (int i = 0; i < LEG; i++) {
                struct inst_out o[] = {
                        { MD_FLOAT64, hv, 2, rec + 4 * i, NULL, 2 },
                        { MD_INT32, &b, 1, &bounces, NULL, 1 },
                };

                ok(drv_step(d, t, 0.03, NULL, 0, o, 2, &res));
                t = res.last_successful_time;
                rec[4 * i + 2] = bounces;
                rec[4 * i + 3] = t;
        }
        return t;
}

/* Save, run, restore, run, round-trip through bytes, run: four legs. */
static void ball_scenario(struct drv *d, double *rec)
{
        uint64_t h = 0, h2 = 0;
        uint8_t *bytes;
        size_t n;
        double t0;

        ok(drv_instantiate(d, false, true));
        ok(drv_enter_init(d, 0.0));
        ok(drv_exit_init(d));
        t0 = ball_leg(d, 0.0, rec);
        ok(drv_get_state(d, &h));
        ball_leg(d, t0, rec + 4 * LEG);
        ok(drv_set_state(d, h));
        ball_leg(d, t0, rec + 8 * LEG);
        ok(drv_serialize(d, h, &bytes, &n));
        ok(drv_free_state(d, &h));
        ok(drv_deserialize(d, bytes, n, &h2));
        free(bytes);
        ok(drv_set_state(d, h2));
        ball_leg(d, t0, rec + 12 * LEG);
        ok(drv_free_state(d, &h2));
}

Test(instance_state, bouncing_ball_restore_and_serialize_continue_bit_identically, .timeout = 120)
{
        size_t size = 16 * LEG * sizeof(double);
        double *a = calloc(1, size), *b = calloc(1, size);
        struct drv *d;

        d = drv_remote("BouncingBall");
        cr_assert(d != NULL);
        ball_scenario(d, a);
        drv_free(d);
        /* After the restore and after the byte round trip, the same leg again. */
        cr_assert(eq(int, memcmp(a + 4 * LEG, a + 8 * LEG, 4 * LEG * sizeof(double)), 0));
        cr_assert(eq(int, memcmp(a + 4 * LEG, a + 12 * LEG, 4 * LEG * sizeof(double)), 0));
        cr_assert(gt(dbl, a[8 * LEG - 2], 0.0), "the ball bounced in the leg");
        d = drv_local("BouncingBall");
        cr_assert(d != NULL);
        ball_scenario(d, b);
        drv_free(d);
        cr_assert(eq(int, memcmp(a, b, size), 0), "worker and in-process differ");
        cr_assert(eq(int, drv_count_children(), 0));
        free(a);
        free(b);
}

static void linear_leg(struct drv *d, double t, double *rec)
{
        static const uint32_t u0 = 10, outs[] = { 1, 2, 20 };
        struct inst_step_result res;

        for (int i = 0; i < LEG; i++) {
                double u = 0.25 * i;
                struct inst_in in = { MD_FLOAT64, &u0, 1, &u, NULL, 1 };
                struct inst_out o = { MD_FLOAT64, outs, 3, rec + 3 * i, NULL, 3 };

                ok(drv_step(d, t + 0.05 * i, 0.05, &in, 1, &o, 1, &res));
        }
}

Test(instance_state, linear_ode_state_survives_terminate_and_reset, .timeout = 120)
{
        double first[3 * LEG], again[3 * LEG], derivs[4];
        static const uint32_t x = 1, y0 = 20;
        static const int32_t orders[] = { 1, 2 };
        struct drv *d = drv_remote("LinearOde");
        struct inst *in;
        uint64_t h = 0, same;
        uint8_t *bytes;
        size_t n;

        cr_assert(d != NULL);
        in = drv_inst(d);
        ok(drv_instantiate(d, false, false));
        ok(drv_enter_init(d, 0.0));
        ok(drv_exit_init(d));
        linear_leg(d, 0.0, first);
        ok(drv_get_state(d, &h));
        /* Saving into a live handle overwrites it in place: still one state. */
        same = h;
        ok(drv_get_state(d, &h));
        cr_assert(eq(u64, h, same));
        linear_leg(d, 2.0, first);
        ok(drv_terminate(d));
        cr_assert(eq(int, inst_state(in), CALL_ST_TERMINATED));
        /* Restoring brings back Step Mode with the state. */
        ok(drv_set_state(d, h));
        cr_assert(eq(int, inst_state(in), CALL_ST_STEP));
        linear_leg(d, 2.0, again);
        cr_assert(eq(int, memcmp(first, again, sizeof(first)), 0));
        ok(drv_output_derivatives(d, (uint32_t[]){ x, y0 }, 2, orders, derivs, 2));
        cr_assert(eq(dbl, derivs[1], first[3 * LEG - 3] * 1.0), "d2x/dt2 = k^2 x with k = 1");
        /* A reset leaves the state valid too. */
        ok(drv_reset(d));
        cr_assert(eq(int, inst_state(in), CALL_ST_INSTANTIATED));
        ok(drv_serialize(d, h, &bytes, &n));
        ok(drv_set_state(d, h));
        linear_leg(d, 2.0, again);
        cr_assert(eq(int, memcmp(first, again, sizeof(first)), 0));
        /* From bytes, after the original is gone. */
        ok(drv_free_state(d, &h));
        ok(drv_deserialize(d, bytes, n, &h));
        ok(drv_set_state(d, h));
        memset(again, 0, sizeof(again));
        linear_leg(d, 2.0, again);
        cr_assert(eq(int, memcmp(first, again, sizeof(first)), 0));
        /* Bytes that are not a serialized state of this FMU are refused. */
        bytes[0] ^= 0xff;
        cr_assert(eq(int, inst_deserialize_fmu_state(in, bytes, n, &h), -EINVAL));
        cr_assert(strstr(inst_message(in), "not a serialized FMU state of this FMU") != NULL);
        free(bytes);
        drv_free(d);
}

Test(instance_state, a_state_restores_the_array_sizes_it_was_taken_with, .timeout = 120)
{
        static const uint32_t n_vr = 31, vec = 33;
        struct drv *d = drv_remote("Feedthrough"), *other = drv_remote("Feedthrough");
        struct inst *in;
        uint64_t n = 7, h = 0, h2 = 0;
        double v[8];
        uint8_t *bytes;
        size_t size;

        cr_assert(d && other);
        in = drv_inst(d);
        ok(drv_instantiate(d, false, false));
        ok(drv_enter_config(d));
        ok(drv_set(d, MD_UINT64, &n_vr, 1, &n, 1));
        ok(drv_exit_config(d));
        ok(drv_enter_init(d, 0.0));
        ok(drv_exit_init(d));
        ok(drv_get_state(d, &h));
        n = 3;
        ok(drv_enter_config(d));
        ok(drv_set(d, MD_UINT64, &n_vr, 1, &n, 1));
        ok(drv_exit_config(d));
        ok(drv_get(d, MD_FLOAT64, &vec, 1, v, 3));
        ok(drv_set_state(d, h));
        cr_assert(eq(int, drv_get(d, MD_FLOAT64, &vec, 1, v, 3), -ENODATA));
        ok(drv_get(d, MD_FLOAT64, &vec, 1, v, 7));
        /* A fresh instance in another worker learns the sizes from the bytes. */
        ok(drv_serialize(d, h, &bytes, &size));
        ok(drv_instantiate(other, false, false));
        ok(drv_deserialize(other, bytes, size, &h2));
        ok(drv_set_state(other, h2));
        cr_assert(eq(int, inst_state(drv_inst(other)), CALL_ST_STEP));
        ok(drv_get(other, MD_FLOAT64, &vec, 1, v, 7));
        cr_assert(eq(dbl, v[6], 0.0));
        cr_assert(eq(dbl, v[3], 4.0));
        free(bytes);
        drv_free(d);
        drv_free(other);
        (void) in;
}

Test(instance_state, live_states_are_bounded, .timeout = 120)
{
        struct drv *d = drv_remote("LinearOde");
        struct inst *in;
        uint64_t h;

        cr_assert(d != NULL);
        in = drv_inst(d);
        ok(drv_instantiate(d, false, false));
        for (unsigned i = 0; i < CALL_STATES_MAX; i++) {
                h = 0;
                ok(inst_get_fmu_state(in, &h));
        }
        h = 0;
        cr_assert(eq(int, inst_get_fmu_state(in, &h), -ENOSPC));
        cr_assert(strstr(inst_message(in), "FMU states are live") != NULL);
        /* Freeing the instance frees every state (the worker would report a leak). */
        drv_free(d);
        cr_assert(eq(int, drv_count_children(), 0));
}
