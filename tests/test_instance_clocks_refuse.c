/*
 * instance: the worker refuses Clock access, Clock timing, partial
 * derivatives and variable dependencies in the states and for the Clock
 * types the standard does not allow them (sections 2.2.8, 2.2.9, 2.2.12,
 * 2.3 and table 5), on the ClockedDeriv test FMU, with its own error and a
 * message naming the function, the variable and the state; the call never
 * reaches the FMU and the instance stays usable.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <string.h>

#include "fmi/fmi3FunctionTypes.h"
#include "test_instance_drv.h"
#include "worker/call.h"

#define ok(expr) cr_assert(eq(int, (expr), INST_OK), "%s: %s", #expr, inst_message(in))

enum {
        VR_X1 = 1, VR_X2, VR_DER_X1, VR_DER_X2, VR_U1, VR_U2, VR_Y1, VR_Y2, VR_K,
        VR_TICK, VR_CU, VR_CY, VR_HI, VR_SLOW, VR_TRIG,
};

static const uint32_t unknowns[] = { VR_Y1, VR_Y2, VR_DER_X1, VR_DER_X2 };
static const uint32_t knowns[] = { VR_X1, VR_X2, VR_U1, VR_U2 };
static const double zero[4];

static struct inst *start(void)
{
        struct inst_opts o;
        struct inst *in;
        char *why = NULL;

        drv_opts(&o, "ClockedDeriv");
        cr_assert(eq(int, inst_new(&o, &in, &why), 0), "%s", why ? why : "");
        return in;
}

/* The worker refused with want and a message containing text; nothing changed. */
static void refused(struct inst *in, int r, int want, const char *text)
{
        int state = inst_state(in);

        cr_assert(eq(int, r, want), "got %d (%s), want %d", r, inst_message(in), want);
        cr_assert(strstr(inst_message(in), text) != NULL, "message '%s' lacks '%s'",
                  inst_message(in), text);
        cr_assert(eq(int, inst_fault(in), 0));
        cr_assert(eq(int, inst_state(in), state));
}

Test(instance_clocks, worker_refuses_clocks_and_derivatives_in_the_wrong_state)
{
        const uint32_t tick = VR_TICK, hi = VR_HI, cu = VR_CU, slow = VR_SLOW, trig = VR_TRIG;
        uint64_t c = 1, res = 10;
        double d = 0.1, sens[4];
        struct inst *in;
        bool b = true;
        int q;
        size_t n;

        in = start();
        refused(in, inst_get_number_of_variable_dependencies(in, VR_Y1, &n), -EPERM,
                "fmi3GetNumberOfVariableDependencies must not be called");
        refused(in, inst_get_variable_dependencies(in, VR_Y1, NULL, NULL, NULL, NULL, 0),
                -EPERM, "fmi3GetVariableDependencies must not be called");
        ok(inst_instantiate(in, &(struct inst_instantiate){ .event_mode_used = true }));
        refused(in, inst_get_directional_derivative(in, unknowns, 4, knowns, 4, zero, 4, sens, 4),
                -EPERM, "fmi3GetDirectionalDerivative must not be called in Instantiated");
        refused(in, inst_get_adjoint_derivative(in, unknowns, 4, knowns, 4, zero, 4, sens, 4),
                -EPERM, "fmi3GetAdjointDerivative must not be called in Instantiated");
        refused(in, inst_get_interval_decimal(in, &tick, 1, &d, &q), -EPERM,
                "fmi3GetIntervalDecimal must not be called in Instantiated");
        ok(inst_enter_initialization_mode(in, NULL));
        /* Table 5, by Clock type: a triggered Clock has no timing; slow has no fractions. */
        refused(in, inst_get_interval_decimal(in, &trig, 1, &d, &q), -EINVAL,
                "Clock 'trig' (vr 15) is a triggered Clock");
        refused(in, inst_set_interval_fraction(in, &slow, 1, &c, &res), -EOPNOTSUPP,
                "supportsFraction=false");
        d = 0.25;
        ok(inst_set_interval_decimal(in, &slow, 1, &d));
        ok(inst_exit_initialization_mode(in));
        /* Event Mode: a fixed periodic Clock's interval is fixed now. */
        refused(in, inst_set_interval_decimal(in, &slow, 1, &d), -EACCES,
                "is a fixed periodic Clock: its interval can only be set in Initialization Mode");
        ok(inst_get_interval_decimal(in, &slow, 1, &d, &q));
        cr_assert(d == 0.25 && q == fmi3IntervalChanged, "slow: %g, qualifier %d", d, q);
        refused(in, inst_set(in, MD_CLOCK, &trig, 1, &(bool){ false }, 1), -EINVAL,
                "cannot be deactivated");
        ok(inst_enter_step_mode(in));
        /* Step Mode: no Clock access, no Clock timing, no clocked variable. */
        refused(in, inst_get(in, MD_CLOCK, &tick, 1, &b, 1), -EACCES,
                "can only be read in Event Mode");
        refused(in, inst_set(in, MD_CLOCK, &tick, 1, &b, 1), -EACCES,
                "can only be set in Event Mode");
        refused(in, inst_get(in, MD_FLOAT64, &cu, 1, &d, 1), -EACCES, "is clocked");
        refused(in, inst_set(in, MD_FLOAT64, &cu, 1, &d, 1), -EACCES, "is clocked");
        refused(in, inst_get_interval_decimal(in, &tick, 1, &d, &q), -EPERM,
                "fmi3GetIntervalDecimal must not be called in Step Mode");
        refused(in, inst_get_interval_fraction(in, &tick, 1, &c, &res, &q), -EPERM,
                "fmi3GetIntervalFraction must not be called in Step Mode");
        refused(in, inst_get_shift_decimal(in, &tick, 1, &d), -EPERM,
                "fmi3GetShiftDecimal must not be called in Step Mode");
        refused(in, inst_get_shift_fraction(in, &tick, 1, &c, &res), -EPERM,
                "fmi3GetShiftFraction must not be called in Step Mode");
        refused(in, inst_set_interval_decimal(in, &tick, 1, &d), -EPERM,
                "fmi3SetIntervalDecimal must not be called in Step Mode");
        refused(in, inst_set_interval_fraction(in, &tick, 1, &c, &res), -EPERM,
                "fmi3SetIntervalFraction must not be called in Step Mode");
        refused(in, inst_set_shift_decimal(in, &tick, 1, &d), -EPERM,
                "fmi3SetShiftDecimal must not be called in Step Mode");
        refused(in, inst_set_shift_fraction(in, &tick, 1, &c, &res), -EPERM,
                "fmi3SetShiftFraction must not be called in Step Mode");
        /* Event Mode: an output Clock is the FMU's to set; timing of a non-Clock. */
        ok(inst_enter_event_mode(in));
        refused(in, inst_set(in, MD_CLOCK, &hi, 1, &b, 1), -EACCES, "is not an input Clock");
        refused(in, inst_set_interval_decimal(in, &cu, 1, &d), -EPROTOTYPE, "not Clock");
        refused(in, inst_get_interval_decimal(in, &hi, 1, &d, &q), -EINVAL,
                "Clock 'hi' (vr 13) is not an input Clock");
        /* Table 5: a shift only in Initialization Mode, whatever the Clock. */
        refused(in, inst_get_shift_decimal(in, &tick, 1, &d), -EPERM,
                "fmi3GetShiftDecimal must not be called in Event Mode");
        refused(in, inst_set_shift_fraction(in, &tick, 1, &c, &res), -EPERM,
                "fmi3SetShiftFraction must not be called in Event Mode");
        /* Still usable: the same calls succeed where they are allowed. */
        ok(inst_set(in, MD_CLOCK, &tick, 1, &b, 1));
        ok(inst_set(in, MD_FLOAT64, &cu, 1, &d, 1));
        ok(inst_get_interval_decimal(in, &tick, 1, &d, &q));
        cr_assert(d == 0.1, "interval %g", d);
        ok(inst_get_directional_derivative(in, unknowns, 4, knowns, 4, zero, 4, sens, 4));
        ok(inst_get_number_of_variable_dependencies(in, VR_Y1, &n));
        cr_assert(eq(sz, n, 3));
        cr_assert(eq(int, inst_free(in), 0));
        cr_assert(eq(int, drv_count_children(), 0));
}
