/*
 * instance: every call the FMI state machine or the model description
 * does not allow is refused by the worker with its own error and a
 * message naming the function, the variable and the state; it never
 * reaches the FMU, and the instance stays usable.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <math.h>
#include <string.h>

#include "test_instance_drv.h"
#include "worker/call.h"

#define ok(expr) cr_assert(eq(int, (expr), INST_OK), "%s: %s", #expr, inst_message(in))

static struct inst *in;

static void start(const char *fmu)
{
        struct inst_opts o;
        char *why = NULL;

        drv_opts(&o, fmu);
        cr_assert(eq(int, inst_new(&o, &in, &why), 0), "%s", why ? why : "");
}

static void stop(void)
{
        cr_assert(eq(int, inst_free(in), 0));
        in = NULL;
        cr_assert(eq(int, drv_count_children(), 0));
}

static void instantiate(bool event_mode)
{
        struct inst_instantiate a = { .event_mode_used = event_mode, .early_return_allowed = true,
                                      .logging_on = true };

        ok(inst_instantiate(in, &a));
}

/* Instantiated, initialized, in Step Mode. */
static void to_step(const char *fmu)
{
        start(fmu);
        instantiate(false);
        ok(inst_enter_initialization_mode(in, NULL));
        ok(inst_exit_initialization_mode(in));
        cr_assert(eq(int, inst_state(in), CALL_ST_STEP));
}

/* The refusal, its message, and the state left as it was. */
static void refused(int r, int want, const char *text)
{
        int state = inst_state(in);

        cr_assert(eq(int, r, want), "got %d (%s), want %d", r, inst_message(in), want);
        cr_assert(strstr(inst_message(in), text) != NULL, "message '%s' lacks '%s'",
                  inst_message(in), text);
        cr_assert(eq(int, inst_fault(in), 0));
        cr_assert(eq(int, inst_state(in), state));
}

static int step(double t)
{
        struct inst_step s = { .t = t, .h = 0.1 };
        struct inst_step_result res;

        return inst_do_step(in, &s, &res);
}

Test(instance_refuse, do_step_before_exit_initialization_mode, .timeout = 120)
{
        start("LinearOde");
        instantiate(false);
        ok(inst_enter_initialization_mode(in, NULL));
        refused(step(0.0), -EPERM, "fmi3DoStep must not be called in Initialization Mode");
        ok(inst_exit_initialization_mode(in));
        ok(step(0.0));
        stop();
}

Test(instance_refuse, fixed_parameter_in_step_mode, .timeout = 120)
{
        static const uint32_t x0 = 4, u0 = 10, k = 3;
        double v = 3.0;

        to_step("LinearOde");
        refused(inst_set(in, MD_FLOAT64, &x0, 1, &v, 1), -EACCES,
                "fmi3SetFloat64: variable 'x0' (vr 4, parameter, fixed) is a fixed parameter");
        ok(inst_set(in, MD_FLOAT64, &u0, 1, &v, 1));
        ok(inst_set(in, MD_FLOAT64, &k, 1, &v, 1));     /* tunable: fine */
        stop();
}

/*
 * The worker remembers the last value reference list that passed, per
 * direction: the same list must still be refused in a state that does not
 * allow it, with another type, or with another count of values.
 */
Test(instance_refuse, a_list_that_passed_is_checked_again)
{
        static const uint32_t x0 = 4, u0u1[] = { 10, 11 };
        double v[3] = { 3.0, 1.0, 2.0 };
        float f[2];

        start("LinearOde");
        instantiate(false);
        ok(inst_enter_initialization_mode(in, NULL));
        ok(inst_set(in, MD_FLOAT64, &x0, 1, v, 1));
        ok(inst_set(in, MD_FLOAT64, &x0, 1, v, 1));
        ok(inst_exit_initialization_mode(in));
        refused(inst_set(in, MD_FLOAT64, &x0, 1, v, 1), -EACCES,
                "fmi3SetFloat64: variable 'x0' (vr 4, parameter, fixed) is a fixed parameter");
        ok(inst_set(in, MD_FLOAT64, u0u1, 2, v, 2));
        refused(inst_set(in, MD_FLOAT32, u0u1, 2, f, 2), -EPROTOTYPE, "is of type Float64, not Float32");
        refused(inst_set(in, MD_FLOAT64, u0u1, 2, v, 3), -E2BIG, "nValues = 3");
        refused(inst_set(in, MD_FLOAT64, u0u1, 2, v, 1), -ENODATA, "nValues = 1");
        ok(inst_set(in, MD_FLOAT64, u0u1, 2, v, 2));
        ok(step(0.0));
        ok(inst_get(in, MD_FLOAT64, u0u1, 2, v, 2));
        ok(inst_terminate(in));
        refused(inst_set(in, MD_FLOAT64, u0u1, 2, v, 2), -EPERM, "must not be called in Terminated");
        stop();
}

Test(instance_refuse, enter_event_mode_without_event_mode, .timeout = 120)
{
        to_step("LinearOde");
        refused(inst_enter_event_mode(in), -EOPNOTSUPP, "fmi3EnterEventMode: hasEventMode is false");
        refused(inst_enter_step_mode(in), -EOPNOTSUPP, "hasEventMode is false");
        ok(step(0.0));
        stop();
        /* An FMU with Event Mode, instantiated without it. */
        to_step("BouncingBall");
        refused(inst_enter_event_mode(in), -EPERM, "eventModeUsed = false");
        ok(step(0.0));
        stop();
}

Test(instance_refuse, wrong_type, .timeout = 120)
{
        static const uint32_t f32 = 1, e = 27;
        double d;
        int64_t v;

        to_step("Feedthrough");
        refused(inst_get(in, MD_FLOAT64, &f32, 1, &d, 1), -EPROTOTYPE,
                "fmi3GetFloat64: variable 'Float32_input' (vr 1) is of type Float32, not Float64");
        refused(inst_get(in, MD_ENUMERATION, &e, 1, &v, 1), -EPROTOTYPE, "fmi3GetInt64");
        ok(inst_get(in, MD_INT64, &e, 1, &v, 1));
        cr_assert(eq(i64, v, 2));
        stop();
}

Test(instance_refuse, unknown_value_reference, .timeout = 120)
{
        static const uint32_t vrs[] = { 1, 999 };
        double d[2];

        to_step("LinearOde");
        refused(inst_get(in, MD_FLOAT64, vrs, 2, d, 2), -ENOENT,
                "fmi3GetFloat64: unknown value reference 999");
        ok(inst_get(in, MD_FLOAT64, vrs, 1, d, 1));
        stop();
}

Test(instance_refuse, too_many_and_too_few_values, .timeout = 120)
{
        static const uint32_t x = 1, m = 29;
        double d[8];

        to_step("Feedthrough");
        refused(inst_get(in, MD_FLOAT64, &x, 1, d, 1), -EPROTOTYPE, "is of type Float32");
        refused(inst_get(in, MD_FLOAT64, &m, 1, d, 7), -E2BIG,
                "nValues = 7, but the variable has 6 values");
        refused(inst_get(in, MD_FLOAT64, &m, 1, d, 5), -ENODATA,
                "nValues = 5, but the variable has 6 values");
        ok(inst_get(in, MD_FLOAT64, &m, 1, d, 6));
        cr_assert(eq(dbl, d[3], 1.1));
        stop();
}

Test(instance_refuse, string_and_binary_over_the_limit, .timeout = 120)
{
        struct inst_instantiate a = { .max_string = 8, .max_binary = 16 };
        static const uint32_t s = 23, b = 25;
        uint8_t bytes[17] = { 0 };
        const uint8_t *bp = bytes;
        const char *long_s = "123456789", *short_s = "12345678";
        size_t n = sizeof(bytes);

        start("Feedthrough");
        ok(inst_instantiate(in, &a));
        refused(inst_set(in, MD_STRING, &s, 1, &long_s, 1), -EFBIG,
                "fmi3SetString: String value 0 of 'String_input' is longer than the limit of 8 bytes");
        ok(inst_set(in, MD_STRING, &s, 1, &short_s, 1));
        refused(inst_set_binary(in, &b, 1, &n, &bp, 1), -EFBIG,
                "Binary value 0 of 'Binary_input' has 17 bytes, over the limit of 16");
        n = 16;
        ok(inst_set_binary(in, &b, 1, &n, &bp, 1));
        stop();
}

Test(instance_refuse, invalid_fmu_state_handle, .timeout = 120)
{
        uint64_t h = 0, stale;

        to_step("LinearOde");
        refused(inst_set_fmu_state(in, 0x1234), -EBADF, "is not a live FMU state of this instance");
        refused(inst_set_fmu_state(in, 0), -EBADF, "fmi3SetFMUState");
        ok(inst_get_fmu_state(in, &h));
        stale = h;
        ok(inst_free_fmu_state(in, &h));
        cr_assert(eq(u64, h, 0));
        refused(inst_set_fmu_state(in, stale), -EBADF, "not a live FMU state");
        refused(inst_free_fmu_state(in, &stale), -EBADF, "fmi3FreeFMUState");
        /* A new state in the same slot has a new handle: the stale one stays dead. */
        ok(inst_get_fmu_state(in, &h));
        cr_assert(ne(u64, h, stale));
        refused(inst_serialized_fmu_state_size(in, stale, &(size_t){ 0 }), -EBADF, "not a live");
        ok(inst_set_fmu_state(in, h));
        stop();
}

Test(instance_refuse, get_after_set_without_step, .timeout = 120)
{
        static const uint32_t u0 = 10, y0 = 20;
        double v = 1.0;

        to_step("LinearOde");
        ok(inst_set(in, MD_FLOAT64, &u0, 1, &v, 1));
        refused(inst_get(in, MD_FLOAT64, &y0, 1, &v, 1), -EPERM,
                "after a set without fmi3DoStep in between");
        ok(step(0.0));
        ok(inst_get(in, MD_FLOAT64, &y0, 1, &v, 1));
        stop();
}

Test(instance_refuse, constants_independent_and_calculated, .timeout = 120)
{
        static const uint32_t v_min = 7, time_vr = 0, h = 1;
        double v = 1.0;

        start("BouncingBall");
        instantiate(false);
        refused(inst_set(in, MD_FLOAT64, &v_min, 1, &v, 1), -EACCES, "'v_min' (vr 7, local, "
                "constant) is a constant");
        refused(inst_set(in, MD_FLOAT64, &time_vr, 1, &v, 1), -EACCES, "is the independent variable");
        refused(inst_set(in, MD_FLOAT64, &h, 1, &v, 1), -EACCES, "has initial=\"calculated\"");
        ok(inst_get(in, MD_FLOAT64, &h, 1, &v, 1));
        cr_assert(eq(dbl, v, 1.0));
        stop();
}

Test(instance_refuse, structural_parameter_outside_configuration_mode, .timeout = 120)
{
        static const uint32_t n_vr = 31;
        uint64_t n = 5;

        start("Feedthrough");
        instantiate(false);
        refused(inst_set(in, MD_UINT64, &n_vr, 1, &n, 1), -EACCES,
                "'n' (vr 31, structuralParameter, tunable) is a structural parameter: set it in "
                "Configuration Mode");
        ok(inst_enter_configuration_mode(in));
        n = 65;
        refused(inst_set(in, MD_UINT64, &n_vr, 1, &n, 1), -EINVAL, "outside its min/max");
        n = 5;
        ok(inst_set(in, MD_UINT64, &n_vr, 1, &n, 1));
        ok(inst_exit_configuration_mode(in));
        stop();
}

Test(instance_refuse, terminated_allows_gets_only, .timeout = 120)
{
        static const uint32_t u0 = 10, x = 1;
        double v = 0.0;

        to_step("LinearOde");
        ok(inst_terminate(in));
        cr_assert(eq(int, inst_state(in), CALL_ST_TERMINATED));
        refused(step(0.0), -EPERM, "fmi3DoStep must not be called in Terminated");
        refused(inst_set(in, MD_FLOAT64, &u0, 1, &v, 1), -EPERM, "fmi3SetFloat64 must not be called in Terminated");
        refused(inst_set(in, MD_FLOAT64, &u0, 0, &v, 0), -EPERM, "must not be called in Terminated");
        refused(inst_enter_initialization_mode(in, NULL), -EPERM, "in Terminated");
        ok(inst_get(in, MD_FLOAT64, &x, 1, &v, 1));
        ok(inst_reset(in));
        cr_assert(eq(int, inst_state(in), CALL_ST_INSTANTIATED));
        ok(inst_enter_initialization_mode(in, NULL));
        stop();
}

Test(instance_refuse, after_an_fmu_error_only_recovery_and_diagnosis, .timeout = 120)
{
        static const uint32_t u0 = 10, x = 1;
        double v = 0.0;

        to_step("LinearOde");
        /* The FMU refuses a step that does not start at its time: fmi3Error. */
        cr_assert(eq(int, step(5.0), INST_ERROR));
        cr_assert(strstr(inst_message(in), "differs from the FMU's time") != NULL, "%s",
                  inst_message(in));
        cr_assert(eq(int, inst_state(in), CALL_ST_ERROR));
        refused(step(0.0), -EPERM, "fmi3DoStep must not be called in Terminated after an error");
        refused(inst_set(in, MD_FLOAT64, &u0, 1, &v, 1), -EPERM, "after an error");
        refused(inst_terminate(in), -EPERM, "fmi3Terminate must not be called");
        ok(inst_get(in, MD_FLOAT64, &x, 1, &v, 1));
        ok(inst_reset(in));
        ok(inst_enter_initialization_mode(in, NULL));
        ok(inst_exit_initialization_mode(in));
        ok(step(0.0));
        stop();
}

Test(instance_refuse, duplicate_value_reference_in_a_set, .timeout = 120)
{
        static const uint32_t vrs[] = { 10, 11, 10 };
        double v[3] = { 1, 2, 3 };

        to_step("LinearOde");
        refused(inst_set(in, MD_FLOAT64, vrs, 3, v, 3), -EINVAL, "value reference 10 appears twice");
        ok(inst_set(in, MD_FLOAT64, vrs, 2, v, 2));
        stop();
}

Test(instance_refuse, instantiation_arguments, .timeout = 120)
{
        struct inst_instantiate a = { .token = "{not-the-token}" };
        static const uint32_t req[] = { 1 };

        start("LinearOde");
        refused(inst_instantiate(in, &a), -EINVAL, "instantiation token '{not-the-token}' does not match");
        a = (struct inst_instantiate){ .token = "" };
        refused(inst_instantiate(in, &a), -EINVAL, "does not match");
        a = (struct inst_instantiate){ .name = " \t" };
        refused(inst_instantiate(in, &a), -EINVAL, "instanceName must be a non-empty string");
        a = (struct inst_instantiate){ .event_mode_used = true };
        refused(inst_instantiate(in, &a), -EOPNOTSUPP, "hasEventMode is false");
        a = (struct inst_instantiate){ .required = req, .n_required = 1 };
        refused(inst_instantiate(in, &a), -EINVAL, "requiredIntermediateVariables");
        a = (struct inst_instantiate){ .token = "{8f3c6a41-2d0e-4b7a-9c15-5e1f0a7d3b01}" };
        ok(inst_instantiate(in, &a));
        refused(inst_instantiate(in, &a), -EPERM, "fmi3InstantiateCoSimulation must not be called in "
                "Instantiated");
        stop();
}

Test(instance_refuse, functions_the_fmu_does_not_declare, .timeout = 120)
{
        static const uint32_t x = 1, u0 = 10;
        double d[1], seed = 1.0;
        int q[1];

        to_step("LinearOde");
        refused(inst_get_interval_decimal(in, &x, 1, d, q), -EOPNOTSUPP, "fmi3GetIntervalDecimal");
        refused(inst_get(in, MD_CLOCK, &x, 1, (bool[1]){ 0 }, 1), -EOPNOTSUPP, "the model has no Clocks");
        refused(inst_get_directional_derivative(in, &x, 1, &u0, 1, &seed, 1, d, 1), -EOPNOTSUPP,
                "providesDirectionalDerivatives is false");
        refused(inst_enter_configuration_mode(in), -EOPNOTSUPP, "no structural parameters");
        refused(inst_get_number_of_variable_dependencies(in, 1, &(size_t){ 0 }), -EOPNOTSUPP,
                "providesPerElementDependencies is false");
        refused(inst_cancel_step(in), -EOPNOTSUPP,
                "fmi2CancelStep is not a Co-Simulation function of FMI 3.0");
        refused(inst_set_debug_logging(in, true, (const char *[]){ "logNothing" }, 1), -EINVAL,
                "unknown log category 'logNothing'");
        ok(inst_set_debug_logging(in, true, (const char *[]){ "logEvents" }, 1));
        stop();
        to_step("GlobalCounter");
        refused(inst_get_fmu_state(in, &(uint64_t){ 0 }), -EOPNOTSUPP, "canGetAndSetFMUState is false");
        ok(step(0.0));
        stop();
}

Test(instance_refuse, fmi2_rules, .timeout = 120)
{
        static const uint32_t x = 1, x0 = 4;
        struct inst_experiment e = { .start_time = 0.0 };
        double v = 0.0;
        float f;

        start("LinearOde2");
        cr_assert(eq(int, inst_fmi_version(in), 2));
        instantiate(false);
        refused(inst_get(in, MD_FLOAT64, &x, 1, &v, 1), -EPERM, "fmi2GetReal must not be called in "
                "instantiated");
        refused(inst_enter_initialization_mode(in, &e), -EINVAL, "fmi2EnterInitializationMode takes no arguments");
        ok(inst_setup_experiment(in, &e));
        ok(inst_enter_initialization_mode(in, NULL));
        ok(inst_exit_initialization_mode(in));
        refused(inst_get(in, MD_FLOAT32, &x, 1, &f, 1), -EPROTOTYPE, "FMI 2.0 has only Real, Integer");
        refused(inst_set(in, MD_FLOAT64, &x0, 1, &v, 1), -EACCES, "fixed parameter");
        refused(inst_enter_event_mode(in), -EOPNOTSUPP, "not a Co-Simulation function of FMI 2.0");
        refused(inst_cancel_step(in), -EPERM, "fmi2CancelStep must not be called in stepComplete");
        refused(inst_set_input_derivatives(in, &x, 1, (int32_t[]){ 1 }, &v, 1), -EOPNOTSUPP,
                "canInterpolateInputs is false");
        ok(step(0.0));
        ok(inst_get(in, MD_FLOAT64, &x, 1, &v, 1));
        cr_assert(eq(dbl, v, exp(-0.1)));
        ok(inst_get_real_status(in, 2 /* fmi2LastSuccessfulTime */, &v));
        cr_assert(eq(dbl, v, 0.1));
        cr_assert(eq(int, inst_get_status(in, 0 /* fmi2DoStepStatus */, &(int){ 0 }), INST_DISCARD));
        refused(inst_get_status(in, 7, &(int){ 0 }), -EINVAL, "unknown status function or kind 7");
        stop();
}

/*
 * FMI 2.0 Model Exchange, integrated in the worker: set up, initialized and
 * stepped as an FMI 2.0 Co-Simulation FMU is; the Co-Simulation status
 * inquiries, which its binary need not export, and FMU states are refused,
 * saying why.
 */
Test(instance_refuse, fmi2_model_exchange_has_no_step_status, .timeout = 120)
{
        static const uint32_t h = 1;
        struct inst_experiment e = { .start_time = 0.0 };
        double v = 0.0;

        start("BallME2");
        cr_assert(eq(int, inst_fmi_version(in), 2));
        instantiate(false);
        ok(inst_setup_experiment(in, &e));
        ok(inst_enter_initialization_mode(in, NULL));
        ok(inst_exit_initialization_mode(in));
        ok(step(0.0));
        ok(inst_get(in, MD_FLOAT64, &h, 1, &v, 1));
        /* Free fall from h = 1 for 0.1 s, to the DefaultExperiment's tolerance 1e-8. */
        cr_assert(fabs(v - (1.0 - 0.5 * 9.81 * 0.01)) < 1e-6, "%.17g", v);
        refused(inst_get_status(in, 0 /* fmi2DoStepStatus */, &(int){ 0 }), -EOPNOTSUPP,
                "fmi2GetStatus: the FMU is hosted as Model Exchange, integrated in its worker");
        refused(inst_get_real_status(in, 2 /* fmi2LastSuccessfulTime */, &v), -EOPNOTSUPP,
                "fmi2GetStatus: the FMU is hosted as Model Exchange");
        /* As for FMI 3.0 Model Exchange: the integrator's own state is not in an FMU state. */
        refused(inst_get_fmu_state(in, &(uint64_t){ 0 }), -EOPNOTSUPP,
                "fmi2GetFMUstate: canGetAndSetFMUState is false");
        ok(step(0.1));
        stop();
}

Test(instance_refuse, a_request_larger_than_the_channel_is_not_sent, .timeout = 120)
{
        struct inst_opts o;
        static const uint32_t b = 25, m = 29;
        size_t n = 1u << 20;
        uint8_t *big = calloc(1, n);
        const uint8_t *bp = big;
        double d[6];

        drv_opts(&o, "Feedthrough");
        o.side_size = 64 * 1024;
        cr_assert(eq(int, inst_new(&o, &in, NULL), 0));
        instantiate(false);
        cr_assert(eq(int, inst_set_binary(in, &b, 1, &n, &bp, 1), -EMSGSIZE));
        cr_assert(eq(int, inst_fault(in), 0));
        ok(inst_get(in, MD_FLOAT64, &m, 1, d, 6));
        free(big);
        stop();
}

/*
 * The environment pointer an FMU passes back to its callbacks is the FMU's
 * to get wrong: NULL (LogEnvNull2, FMI 2.0) or its own instance
 * (LogEnvSelf, FMI 3.0). A worker hosts one instance, so its message
 * still arrives, and the worker neither drops it nor reads the FMU's
 * memory as its own.
 */
Test(instance_refuse, messages_of_an_fmu_passing_a_wrong_environment_arrive, .timeout = 120)
{
        static const char *const fmus[] = { "LogEnvSelf", "LogEnvNull2" };

        for (size_t i = 0; i < sizeof(fmus) / sizeof(fmus[0]); i++) {
                start(fmus[i]);
                instantiate(false);
                if (inst_fmi_version(in) == 2)
                        ok(inst_setup_experiment(in, &(struct inst_experiment){ .start_time = 0.0 }));
                ok(inst_enter_initialization_mode(in, NULL));
                ok(inst_exit_initialization_mode(in));
                /* The FMU's own refusal: a step that does not start at its time. */
                cr_assert(eq(int, step(5.0), INST_ERROR), "%s", fmus[i]);
                cr_assert(strstr(inst_message(in), "the FMU's time") != NULL, "%s: '%s'",
                          fmus[i], inst_message(in));
                stop();
        }
}

/* Hosted with Clocks, a Model Exchange FMU ends its steps at its events: it needs early return. */
Test(instance_refuse, a_model_exchange_fmu_with_clocks_without_early_return, .timeout = 120)
{
        struct inst_instantiate a = { .event_mode_used = true };

        start("ClockedME");
        refused(inst_instantiate(in, &a), -EOPNOTSUPP, "fmi3InstantiateModelExchange: a Model "
                "Exchange FMU with Clocks is hosted ending its steps at its events: "
                "earlyReturnAllowed must be true");
        a.early_return_allowed = true;
        ok(inst_instantiate(in, &a));
        stop();
}
