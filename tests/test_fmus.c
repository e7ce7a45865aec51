/*
 * fmu_models: the project's own test FMUs (tests/fmus/), checked directly.
 *
 * Each test loads a staged binary as an importer does (fmu_direct.h) and
 * checks real behaviour against analytic or independently computed
 * results. This file: LinearOde (FMI 3.0 and 2.0), the coupled
 * mass-spring-damper, Feedthrough. test_fmus_description.c checks the
 * exported API and modelDescription.xml against the binaries;
 * test_fmus_events.c events, early return, intermediate update, FMU state,
 * global state and state machine refusals. Criterion runs every test in
 * its own process, so the process-global state of GlobalCounter and the
 * log buffer start fresh each time.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <inttypes.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmu_direct.h"

/* ---- LinearOde -------------------------------------------------------------- */

Test(fmus, linear_ode_matches_the_exact_solution_and_feeds_through)
{
        const double k = 0.7, x0 = 2.0, h = 0.01;
        struct fmi3 api;
        fmi3Instance inst;

        load3(&api, "LinearOde", NULL);
        inst = instantiate3(&api, "LinearOde", false, false, NULL, 0, NULL);
        set_f64(&api, inst, LO_K, k);
        set_f64(&api, inst, LO_X0, x0);
        initialize3(&api, inst, 0.0);
        cr_assert(eq(dbl, get_f64(&api, inst, LO_X), x0));

        for (int n = 0; n < 500; n++) {
                double t = n * h, u[10], y[10], x, exact;
                fmi3ValueReference uvr[10], yvr[10];

                for (int i = 0; i < 10; i++) {
                        uvr[i] = LO_U0 + i;
                        yvr[i] = LO_Y0 + i;
                        u[i] = 0.1 * i + t;
                }
                cr_assert(eq(int, api.SetFloat64(inst, uvr, 10, u, 10), fmi3OK));
                cr_assert(eq(int, step3(&api, inst, t, h, NULL, NULL), fmi3OK), "%s", last_log);
                x = get_f64(&api, inst, LO_X);
                exact = x0 * exp(-k * (n + 1) * h);
                cr_assert(epsilon_eq(dbl, x, exact, 1e-12 * exact), "t = %g", (n + 1) * h);
                cr_assert(eq(dbl, get_f64(&api, inst, LO_DER_X), -k * x));
                cr_assert(eq(int, api.GetFloat64(inst, yvr, 10, y, 10), fmi3OK));
                for (int i = 0; i < 10; i++)
                        cr_assert(eq(dbl, y[i], x + u[i]));
        }
        api.FreeInstance(inst);
}

Test(fmus, linear_ode_applies_a_tuned_k_and_gives_output_derivatives)
{
        fmi3ValueReference vrs[] = { LO_X, LO_X, LO_DER_X, LO_Y0 };
        fmi3Int32 orders[] = { 1, 2, 1, 1 };
        double d[4], x1, x, k2 = 3.0;
        struct fmi3 api;
        fmi3Instance inst;

        load3(&api, "LinearOde", NULL);
        inst = instantiate3(&api, "LinearOde", false, false, NULL, 0, NULL);
        initialize3(&api, inst, 0.0);
        for (int n = 0; n < 10; n++)
                cr_assert(eq(int, step3(&api, inst, n * 0.1, 0.1, NULL, NULL), fmi3OK));
        x1 = get_f64(&api, inst, LO_X);
        cr_assert(epsilon_eq(dbl, x1, exp(-1.0), 1e-12));
        set_f64(&api, inst, LO_K, k2);          /* tunable: allowed in Step Mode */
        cr_assert(eq(int, step3(&api, inst, 1.0, 0.5, NULL, NULL), fmi3OK));
        x = get_f64(&api, inst, LO_X);
        cr_assert(epsilon_eq(dbl, x, x1 * exp(-k2 * 0.5), 1e-15));

        cr_assert(eq(int, api.GetOutputDerivatives(inst, vrs, 4, orders, d, 4), fmi3OK));
        /* Exact up to the order of the multiplications. */
        cr_assert(ieee_ulp_eq(dbl, d[0], -k2 * x, 2));
        cr_assert(ieee_ulp_eq(dbl, d[1], k2 * k2 * x, 2));
        cr_assert(ieee_ulp_eq(dbl, d[2], k2 * k2 * x, 2));
        cr_assert(ieee_ulp_eq(dbl, d[3], -k2 * x, 2));
        orders[0] = 3;          /* above maxOutputDerivativeOrder */
        cr_assert(eq(int, api.GetOutputDerivatives(inst, vrs, 1, orders, d, 1), fmi3Error));
        api.FreeInstance(inst);
}

Test(fmus, linear_ode2_runs_through_the_fmi2_api)
{
        fmi2CallbackFunctions cb = { .logger = logger2 };
        const double k = 0.5, h = 0.02;
        fmi2ValueReference vk = LO_K, vx = LO_X, vu = LO_U0 + 3, vy = LO_Y0 + 3;
        fmi2FMUstate state = NULL;
        double x, y, status_t, u = 4.0;
        fmi2Boolean terminated = fmi2True;
        struct fmi2 api;
        fmi2Component c;

        load2(&api, "LinearOde2");
        cr_assert(eq(ptr, api.Instantiate("m", fmi2ModelExchange, token_of("LinearOde2"), NULL,
                                          &cb, fmi2False, fmi2False), NULL));
        cr_assert(eq(ptr, api.Instantiate("m", fmi2CoSimulation, "{wrong}", NULL, &cb,
                                          fmi2False, fmi2False), NULL));
        cr_assert(ne(ptr, strstr(last_log, "GUID"), NULL), "%s", last_log);
        c = api.Instantiate("m", fmi2CoSimulation, token_of("LinearOde2"),
                            "file:///nonexistent/resources", &cb, fmi2False, fmi2False);
        cr_assert(ne(ptr, c, NULL));
        cr_assert(eq(int, api.SetReal(c, &vk, 1, &k), fmi2OK));
        cr_assert(eq(int, api.SetupExperiment(c, fmi2False, 0.0, 0.0, fmi2True, 10.0), fmi2OK));
        cr_assert(eq(int, api.EnterInitializationMode(c), fmi2OK));
        cr_assert(eq(int, api.SetReal(c, &vu, 1, &u), fmi2OK));
        cr_assert(eq(int, api.ExitInitializationMode(c), fmi2OK));
        for (int n = 0; n < 100; n++) {
                cr_assert(eq(int, api.DoStep(c, n * h, h, fmi2True), fmi2OK), "%s", last_log);
                cr_assert(eq(int, api.GetReal(c, &vx, 1, &x), fmi2OK));
                cr_assert(eq(int, api.GetReal(c, &vy, 1, &y), fmi2OK));
                cr_assert(epsilon_eq(dbl, x, exp(-k * (n + 1) * h), 1e-12));
                cr_assert(eq(dbl, y, x + u));
                if (n == 49)
                        cr_assert(eq(int, api.GetFMUstate(c, &state), fmi2OK));
        }
        cr_assert(eq(int, api.GetRealStatus(c, fmi2LastSuccessfulTime, &status_t), fmi2OK));
        cr_assert(epsilon_eq(dbl, status_t, 2.0, 1e-12));
        cr_assert(eq(int, api.GetBooleanStatus(c, fmi2Terminated, &terminated), fmi2OK));
        cr_assert(eq(int, terminated, fmi2False));
        /* Back to t = 1 and the same result again. */
        cr_assert(eq(int, api.SetFMUstate(c, state), fmi2OK));
        cr_assert(eq(int, api.DoStep(c, 1.0, 1.0, fmi2True), fmi2OK), "%s", last_log);
        cr_assert(eq(int, api.GetReal(c, &vx, 1, &x), fmi2OK));
        cr_assert(epsilon_eq(dbl, x, exp(-k * 2.0), 1e-12));
        cr_assert(eq(int, api.FreeFMUstate(c, &state), fmi2OK));
        cr_assert(eq(int, api.DoStep(c, 2.0, 9.0, fmi2True), fmi2Error), "passes stopTime");
        cr_assert(eq(int, api.Reset(c), fmi2OK));
        cr_assert(eq(int, api.GetReal(c, &vk, 1, &x), fmi2OK));
        cr_assert(eq(dbl, x, 1.0));
        api.FreeInstance(c);
}

/* ---- MsdMass1 + MsdMass2 ---------------------------------------------------- */

enum { M1_X1 = 1, M1_V1 = 2, M1_F = 3 };
enum { M2_X2 = 1, M2_V2 = 2, M2_F = 3, M2_X1 = 4, M2_V1 = 5 };

/* The coupled system with the FMUs' default parameters (see their model.c). */
static void msd_rhs(const double z[4], double dz[4])
{
        const double m1 = 1.0, k1 = 10.0, d1 = 0.5, m2 = 1.0, kc = 10.0, dc = 0.2;
        double F = kc * (z[2] - z[0]) + dc * (z[3] - z[1]);

        dz[0] = z[1];
        dz[1] = (-k1 * z[0] - d1 * z[1] + F) / m1;
        dz[2] = z[3];
        dz[3] = -F / m2;
}

#define MSD_T 5.0
#define MSD_SAMPLE 0.0025                       /* reference sampled here */
#define MSD_SAMPLES 2001                        /* MSD_T / MSD_SAMPLE + 1 */
#define MSD_RK4_PER_SAMPLE 25                   /* monolithic RK4 step 1e-4 */

/* Monolithic reference: RK4 with a step of 1e-4, far below the FMUs' error. */
static void msd_reference(double ref[MSD_SAMPLES][4])
{
        double z[4] = { 0.0, 0.0, 1.0, 0.0 }, dt = MSD_SAMPLE / MSD_RK4_PER_SAMPLE;

        memcpy(ref[0], z, sizeof(z));
        for (int s = 1; s < MSD_SAMPLES; s++) {
                for (int j = 0; j < MSD_RK4_PER_SAMPLE; j++) {
                        double k1[4], k2[4], k3[4], k4[4], w[4];

                        msd_rhs(z, k1);
                        for (int i = 0; i < 4; i++)
                                w[i] = z[i] + 0.5 * dt * k1[i];
                        msd_rhs(w, k2);
                        for (int i = 0; i < 4; i++)
                                w[i] = z[i] + 0.5 * dt * k2[i];
                        msd_rhs(w, k3);
                        for (int i = 0; i < 4; i++)
                                w[i] = z[i] + dt * k3[i];
                        msd_rhs(w, k4);
                        for (int i = 0; i < 4; i++)
                                z[i] += dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
                }
                memcpy(ref[s], z, sizeof(z));
        }
}

/*
 * Couple the two FMUs with a Jacobi loop of step h (zero-order hold of the
 * exchanged values) up to MSD_T; return the largest position error against
 * the reference at the communication points.
 */
static double msd_jacobi_error(double h, double ref[MSD_SAMPLES][4])
{
        fmi3ValueReference m1_out[] = { M1_X1, M1_V1 }, m2_in[] = { M2_X1, M2_V1 };
        fmi3ValueReference m1_in = M1_F, m2_out = M2_F, m2_pos = M2_X2;
        int steps = (int)lround(MSD_T / h), stride = (int)lround(h / MSD_SAMPLE);
        double xv1[2], F, x2, err = 0.0;
        struct fmi3 a1, a2;
        fmi3Instance i1, i2;

        load3(&a1, "MsdMass1", NULL);
        load3(&a2, "MsdMass2", NULL);
        i1 = instantiate3(&a1, "MsdMass1", false, false, NULL, 0, NULL);
        i2 = instantiate3(&a2, "MsdMass2", false, false, NULL, 0, NULL);

        /* Initialization: resolve x1, v1 -> mass 2 -> F -> mass 1. */
        cr_assert(eq(int, a1.EnterInitializationMode(i1, fmi3False, 0, 0, fmi3False, 0), fmi3OK));
        cr_assert(eq(int, a2.EnterInitializationMode(i2, fmi3False, 0, 0, fmi3False, 0), fmi3OK));
        cr_assert(eq(int, a1.GetFloat64(i1, m1_out, 2, xv1, 2), fmi3OK));
        cr_assert(eq(int, a2.SetFloat64(i2, m2_in, 2, xv1, 2), fmi3OK));
        cr_assert(eq(int, a2.GetFloat64(i2, &m2_out, 1, &F, 1), fmi3OK));
        cr_assert(eq(int, a1.SetFloat64(i1, &m1_in, 1, &F, 1), fmi3OK));
        cr_assert(eq(int, a1.ExitInitializationMode(i1), fmi3OK));
        cr_assert(eq(int, a2.ExitInitializationMode(i2), fmi3OK));

        for (int n = 0; n < steps; n++) {
                /* Both step with the outputs of the previous point (Jacobi). */
                cr_assert(eq(int, a1.GetFloat64(i1, m1_out, 2, xv1, 2), fmi3OK));
                cr_assert(eq(int, a2.GetFloat64(i2, &m2_out, 1, &F, 1), fmi3OK));
                cr_assert(eq(int, a1.SetFloat64(i1, &m1_in, 1, &F, 1), fmi3OK));
                cr_assert(eq(int, a2.SetFloat64(i2, m2_in, 2, xv1, 2), fmi3OK));
                cr_assert(eq(int, step3(&a1, i1, n * h, h, NULL, NULL), fmi3OK), "%s", last_log);
                cr_assert(eq(int, step3(&a2, i2, n * h, h, NULL, NULL), fmi3OK), "%s", last_log);

                cr_assert(eq(int, a1.GetFloat64(i1, m1_out, 2, xv1, 2), fmi3OK));
                cr_assert(eq(int, a2.GetFloat64(i2, &m2_pos, 1, &x2, 1), fmi3OK));
                err = fmax(err, fabs(xv1[0] - ref[(n + 1) * stride][0]));
                err = fmax(err, fabs(x2 - ref[(n + 1) * stride][2]));
        }
        a1.FreeInstance(i1);
        a2.FreeInstance(i2);
        return err;
}

/*
 * Bound: with the default parameters the Jacobi coupling with zero-order
 * hold has a global error of first order in h. Over 5 s the largest
 * position error is 0.042 m at h = 0.01 (positions are of order 1 m) and
 * 0.020 m at h = 0.005; the test allows 0.06 m and asks that halving h
 * cuts the error to at most 0.6 of it.
 */
Test(fmus, msd_jacobi_coupling_converges_to_the_monolithic_solution, .timeout = 120)
{
        static double ref[MSD_SAMPLES][4];
        double e1, e2, e3;

        msd_reference(ref);
        e1 = msd_jacobi_error(0.01, ref);
        e2 = msd_jacobi_error(0.005, ref);
        e3 = msd_jacobi_error(0.0025, ref);
        cr_assert(lt(dbl, e1, 0.06), "error at h = 0.01: %g", e1);
        cr_assert(lt(dbl, e2, 0.6 * e1), "errors %g (h = 0.01), %g (h = 0.005)", e1, e2);
        cr_assert(lt(dbl, e3, 0.6 * e2), "errors %g (h = 0.005), %g (h = 0.0025)", e2, e3);
}

/* ---- Feedthrough ------------------------------------------------------------ */

enum {
        FT_F32 = 1, FT_F64 = 3, FT_I8 = 5, FT_U8 = 7, FT_I16 = 9, FT_U16 = 11, FT_I32 = 13,
        FT_U32 = 15, FT_I64 = 17, FT_U64 = 19, FT_BOOL = 21, FT_STR = 23, FT_BIN = 25,
        FT_ENUM = 27, FT_MATRIX = 29, FT_N = 31, FT_VECTOR = 32, FT_LENGTH = 34,
};

/* Set input vr_in of a scalar type, step, and read back output vr_in + 1. */
#define ROUND_TRIP(Type, ctype, tag, value) do { \
                fmi3ValueReference in = FT_##tag, out = FT_##tag + 1; \
                ctype v = (value), r = 0; \
                cr_assert(eq(int, api.Set##Type(inst, &in, 1, &v, 1), fmi3OK), "%s", last_log); \
                cr_assert(eq(int, step3(&api, inst, t, 0.1, NULL, NULL), fmi3OK)); \
                t += 0.1; \
                cr_assert(eq(int, api.Get##Type(inst, &out, 1, &r, 1), fmi3OK)); \
                cr_assert(v == r, #Type " did not round-trip"); \
        } while (0)

Test(fmus, feedthrough_round_trips_every_type)
{
        fmi3ValueReference str_in = FT_STR, str_out = FT_STR + 1;
        fmi3ValueReference bin_in = FT_BIN, bin_out = FT_BIN + 1;
        fmi3ValueReference m_in = FT_MATRIX, m_out = FT_MATRIX + 1;
        const uint8_t bytes[] = { 0x00, 0xff, 0x10, 0x00, 0x7f };
        double m[6] = { 1, 2, 3, 4, 5, 6 }, mr[6];
        fmi3String s = "Grüße, \"world\"", sr = NULL;
        fmi3Binary b = bytes, br = NULL;
        size_t size = sizeof(bytes), sizer = 0;
        struct fmi3 api;
        fmi3Instance inst;
        double t = 0.0;

        load3(&api, "Feedthrough", NULL);
        inst = instantiate3(&api, "Feedthrough", false, false, NULL, 0, NULL);
        initialize3(&api, inst, 0.0);

        ROUND_TRIP(Float32, float, F32, -3.25e-7f);
        ROUND_TRIP(Float64, double, F64, 1.0 / 3.0);
        ROUND_TRIP(Int8, int8_t, I8, INT8_MIN);
        ROUND_TRIP(UInt8, uint8_t, U8, UINT8_MAX);
        ROUND_TRIP(Int16, int16_t, I16, INT16_MIN);
        ROUND_TRIP(UInt16, uint16_t, U16, UINT16_MAX);
        ROUND_TRIP(Int32, int32_t, I32, INT32_MIN);
        ROUND_TRIP(UInt32, uint32_t, U32, UINT32_MAX);
        ROUND_TRIP(Int64, int64_t, I64, INT64_MIN);
        ROUND_TRIP(UInt64, uint64_t, U64, UINT64_MAX);
        ROUND_TRIP(Boolean, bool, BOOL, false);
        ROUND_TRIP(Int64, int64_t, ENUM, 3);

        cr_assert(eq(int, api.SetString(inst, &str_in, 1, &s, 1), fmi3OK));
        cr_assert(eq(int, api.SetBinary(inst, &bin_in, 1, &size, &b, 1), fmi3OK));
        cr_assert(eq(int, api.SetFloat64(inst, &m_in, 1, m, 6), fmi3OK));
        cr_assert(eq(int, step3(&api, inst, t, 0.1, NULL, NULL), fmi3OK));
        cr_assert(eq(int, api.GetString(inst, &str_out, 1, &sr, 1), fmi3OK));
        cr_assert(eq(str, (char *)sr, (char *)s));
        cr_assert(ne(ptr, (void *)sr, (void *)s), "the FMU keeps its own copy");
        cr_assert(eq(int, api.GetBinary(inst, &bin_out, 1, &sizer, &br, 1), fmi3OK));
        cr_assert(eq(sz, sizer, sizeof(bytes)));
        cr_assert(eq(int, memcmp(br, bytes, sizeof(bytes)), 0));
        cr_assert(eq(int, api.GetFloat64(inst, &m_out, 1, mr, 6), fmi3OK));
        for (int i = 0; i < 6; i++)
                cr_assert(eq(dbl, mr[i], m[i]));
        api.FreeInstance(inst);
}

Test(fmus, feedthrough_outputs_follow_inputs_in_initialization_mode)
{
        fmi3ValueReference in = FT_I32, out = FT_I32 + 1;
        int32_t v = 12345, r = 0;
        struct fmi3 api;
        fmi3Instance inst;

        load3(&api, "Feedthrough", NULL);
        inst = instantiate3(&api, "Feedthrough", false, false, NULL, 0, NULL);
        cr_assert(eq(int, api.EnterInitializationMode(inst, fmi3False, 0, 0, fmi3False, 0), fmi3OK));
        cr_assert(eq(int, api.SetInt32(inst, &in, 1, &v, 1), fmi3OK));
        cr_assert(eq(int, api.GetInt32(inst, &out, 1, &r, 1), fmi3OK));
        cr_assert(eq(i32, r, v));
        api.FreeInstance(inst);
}

Test(fmus, feedthrough_resizes_the_vector_in_configuration_modes)
{
        fmi3ValueReference n = FT_N, vin = FT_VECTOR, vout = FT_VECTOR + 1;
        uint64_t seven = 7, two = 2, too_many = 65;
        double v[7] = { 10, 11, 12, 13, 14, 15, 16 }, r[7];
        struct fmi3 api;
        fmi3Instance inst;

        load3(&api, "Feedthrough", NULL);
        inst = instantiate3(&api, "Feedthrough", false, false, NULL, 0, NULL);
        /* n is a structural parameter: not settable outside Configuration Mode. */
        cr_assert(eq(int, api.SetUInt64(inst, &n, 1, &seven, 1), fmi3Error));
        cr_assert(eq(int, api.Reset(inst), fmi3OK));

        cr_assert(eq(int, api.EnterConfigurationMode(inst), fmi3OK));
        cr_assert(eq(int, api.SetUInt64(inst, &n, 1, &seven, 1), fmi3OK));
        cr_assert(eq(int, api.ExitConfigurationMode(inst), fmi3OK));
        cr_assert(eq(int, api.SetFloat64(inst, &vin, 1, v, 7), fmi3OK), "%s", last_log);
        initialize3(&api, inst, 0.0);
        cr_assert(eq(int, step3(&api, inst, 0.0, 0.1, NULL, NULL), fmi3OK));
        cr_assert(eq(int, api.GetFloat64(inst, &vout, 1, r, 7), fmi3OK));
        for (int i = 0; i < 7; i++)
                cr_assert(eq(dbl, r[i], v[i]));

        /* Reconfiguration Mode from Step Mode: shrink to 2, keep the prefix. */
        cr_assert(eq(int, api.EnterConfigurationMode(inst), fmi3OK));
        cr_assert(eq(int, api.SetUInt64(inst, &n, 1, &two, 1), fmi3OK));
        cr_assert(eq(int, api.ExitConfigurationMode(inst), fmi3OK));
        cr_assert(eq(int, api.GetFloat64(inst, &vout, 1, r, 2), fmi3OK));
        cr_assert(eq(dbl, r[0], 10.0));
        cr_assert(eq(dbl, r[1], 11.0));
        cr_assert(eq(int, step3(&api, inst, 0.1, 0.1, NULL, NULL), fmi3OK), "%s", last_log);

        /* More than the 64 elements the FMU holds is refused. */
        cr_assert(eq(int, api.EnterConfigurationMode(inst), fmi3OK));
        cr_assert(eq(int, api.SetUInt64(inst, &n, 1, &too_many, 1), fmi3Error));
        cr_assert(ne(ptr, strstr(last_log, "at most 64"), NULL), "%s", last_log);
        api.FreeInstance(inst);
}

Test(fmus, feedthrough_refuses_a_wrong_number_of_values)
{
        fmi3ValueReference vrs[] = { FT_MATRIX, FT_F64 };
        double v[8] = { 0 };
        struct fmi3 api;
        fmi3Instance inst;

        load3(&api, "Feedthrough", NULL);
        inst = instantiate3(&api, "Feedthrough", false, false, NULL, 0, NULL);
        cr_assert(eq(int, api.GetFloat64(inst, vrs, 2, v, 7), fmi3OK), "6 + 1 values");
        cr_assert(eq(dbl, v[3], 1.1), "row-major: A[1][1] is the 4th value");
        cr_assert(eq(int, api.GetFloat64(inst, vrs, 2, v, 6), fmi3Error));
        cr_assert(ne(ptr, strstr(last_log, "nValues = 6"), NULL), "%s", last_log);
        /* The error moved the FMU to Terminated (FMI 3.0 section 2.3.1). */
        cr_assert(eq(int, api.EnterInitializationMode(inst, fmi3False, 0, 0, fmi3False, 0),
                     fmi3Error));
        cr_assert(ne(ptr, strstr(last_log, "Terminated"), NULL), "%s", last_log);
        api.FreeInstance(inst);
}
