/*
 * master_deadline: how long an FMU may take. FMI sets no time limit on
 * a call; fmud's per-call deadline (the daemon's call_timeout) guards the
 * cheap calls against a hung FMU, a step is bounded by the step budget
 * alone (INF: no deadline, as the budget's documentation says), and the
 * instantiation and initialization calls, where a large model solves its
 * initial equations, get at least INST_INIT_TIMEOUT_MIN, as does
 * fmi3Terminate, where an FMU flushes what it kept. Misbehave's slow step
 * (fault 19), slow initial equations (fault 22, also where the first get
 * in Initialization Mode computes them) and slow Terminate (fault 28)
 * against a call deadline of 1 s: they take 1.5 s.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdbool.h>

#include "test_master_sys.h"

#define CALL_NS (1000ull * 1000000u)

/* Misbehave (beside LinearOde, fed by it, when feed) with these bindings and no step budget. */
static void run_slow(const char *parameters, bool feed)
{
        struct msys_spec spec = {
                .elements = feed ? MSYS_COMP("m", "Misbehave") MSYS_COMP("lin", "LinearOde") :
                            MSYS_COMP("m", "Misbehave"),
                .connections = feed ? MSYS_CONN("m", "x", "lin", "u0") : NULL,
                .parameters = parameters,
                .stop = 0.2,
                .attrs = "stepSize=\"0.1\" stepBudget=\"INF\"",
        };
        struct msys x;

        msys_load(&x, &spec);
        x.so.timeout_ns = CALL_NS;
        msys_start(&x);
        cr_assert(eq(int, master_run(x.m), MASTER_FINISHED), "%s", master_message(x.m));
        cr_assert(eq(int, master_terminate(x.m), 0), "%s", master_message(x.m));
        msys_fini(&x);
}

Test(master_deadline, without_a_step_budget_a_step_has_no_deadline)
{
        run_slow(MSYS_INT("m.fault", "19") MSYS_INT("m.count", "1500") MSYS_REAL("m.at", "0.1"),
                 false);
}

Test(master_deadline, slow_initial_equations_are_not_held_to_the_call_deadline)
{
        run_slow(MSYS_INT("m.fault", "22") MSYS_INT("m.count", "1500"), false);
}

/* The first get of its output in Initialization Mode, for the connection, computes them. */
Test(master_deadline, initial_equations_solved_in_the_first_get_are_not_held_to_it)
{
        run_slow(MSYS_INT("m.fault", "22") MSYS_INT("m.count", "1500"), true);
}

Test(master_deadline, a_slow_terminate_is_not_held_to_the_call_deadline)
{
        run_slow(MSYS_INT("m.fault", "28") MSYS_INT("m.count", "1500"), false);
}
