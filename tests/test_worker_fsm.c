/*
 * worker_fsm: the worker's state machine tables (worker/fsm.c) on their
 * own, with a real description and library but no channel: what each
 * state allows, the transitions on success, Error and Fatal, and that
 * after Fatal nothing reaches the FMU, not even fmi3FreeInstance. The
 * test FMUs never return Fatal, so this is where that path is checked.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker_fixture.h"

static struct worker w;
static struct reply rp;

static void load(const char *fmu)
{
        wfix_load(&w, fmu);
}

static void unload(void)
{
        wfix_unload(&w);
}

/* Does the current state allow op? The refusal code in *ret_error. */
static bool allows(enum call_op op, int *ret_error)
{
        memset(&rp, 0, sizeof(rp));
        if (fsm_allows(&w, op, MD_FLOAT64, &rp)) {
                *ret_error = 0;
                return true;
        }
        *ret_error = rp.head.error;
        return false;
}

Test(worker_fsm, step_mode_allows_what_section_4_2_1_lists)
{
        int e;

        load("LinearOde");
        w.state = CALL_ST_STEP;
        cr_assert(allows(CALL_OP_DO_STEP, &e));
        cr_assert(allows(CALL_OP_GET, &e));
        cr_assert(allows(CALL_OP_SET, &e));
        cr_assert(allows(CALL_OP_TERMINATE, &e));
        cr_assert(allows(CALL_OP_GET_FMU_STATE, &e));
        cr_assert(not(allows(CALL_OP_EXIT_INIT, &e)));
        cr_assert(eq(int, e, CALL_E_STATE));
        cr_assert(strstr(rp.msg, "fmi3ExitInitializationMode must not be called in Step Mode") != NULL);
        cr_assert(not(allows(CALL_OP_INSTANTIATE, &e)));
        cr_assert(not(allows(CALL_OP_IU_ANSWER, &e)));
        /* Get after set without a step in between (4.2.1). */
        w.set_since_step = true;
        cr_assert(not(allows(CALL_OP_GET, &e)));
        cr_assert(eq(int, e, CALL_E_STATE));
        fsm_after(&w, CALL_OP_DO_STEP, 0);
        cr_assert(allows(CALL_OP_GET, &e));
        unload();
}

Test(worker_fsm, transitions_on_success)
{
        load("LinearOde");
        w.state = CALL_ST_START;
        w.state = CALL_ST_INSTANTIATED;         /* set by the instantiate handler */
        fsm_after(&w, CALL_OP_ENTER_INIT, 0);
        cr_assert(eq(int, w.state, CALL_ST_INITIALIZATION));
        fsm_after(&w, CALL_OP_EXIT_INIT, 1);    /* Warning counts as success */
        cr_assert(eq(int, w.state, CALL_ST_STEP));
        fsm_after(&w, CALL_OP_DO_STEP, 2);      /* Discard: no change */
        cr_assert(eq(int, w.state, CALL_ST_STEP));
        fsm_after(&w, CALL_OP_TERMINATE, 0);
        cr_assert(eq(int, w.state, CALL_ST_TERMINATED));
        fsm_after(&w, CALL_OP_RESET, 0);
        cr_assert(eq(int, w.state, CALL_ST_INSTANTIATED));
        w.event_mode_used = true;
        fsm_after(&w, CALL_OP_ENTER_INIT, 0);
        fsm_after(&w, CALL_OP_EXIT_INIT, 0);
        cr_assert(eq(int, w.state, CALL_ST_EVENT));
        unload();
}

Test(worker_fsm, an_error_leads_to_terminated_with_recovery_only)
{
        int e;

        load("LinearOde");
        w.state = CALL_ST_STEP;
        fsm_after(&w, CALL_OP_DO_STEP, 3);
        cr_assert(eq(int, w.state, CALL_ST_ERROR));
        cr_assert(not(allows(CALL_OP_DO_STEP, &e)));
        cr_assert(not(allows(CALL_OP_SET, &e)));
        cr_assert(not(allows(CALL_OP_TERMINATE, &e)));
        cr_assert(allows(CALL_OP_GET, &e));
        cr_assert(allows(CALL_OP_RESET, &e));
        cr_assert(allows(CALL_OP_SET_FMU_STATE, &e));
        cr_assert(allows(CALL_OP_FREE, &e));
        /* Instantiation that fails leaves no instance and no state to leave. */
        w.state = CALL_ST_START;
        fsm_after(&w, CALL_OP_INSTANTIATE, 3);
        cr_assert(eq(int, w.state, CALL_ST_START));
        unload();
}

Test(worker_fsm, after_fatal_nothing_reaches_the_fmu)
{
        int e;

        load("LinearOde");
        w.state = CALL_ST_STEP;
        fsm_after(&w, CALL_OP_DO_STEP, 4);
        cr_assert(eq(int, w.state, CALL_ST_FATAL));
        for (int op = CALL_OP_INSTANTIATE; op < CALL_OP_IU_ANSWER; op++) {
                if (op == CALL_OP_FREE)
                        continue;
                cr_assert(not(allows(op, &e)), "%s", call_op_name(op));
                cr_assert(eq(int, e, CALL_E_FATAL), "%s", call_op_name(op));
        }
        cr_assert(allows(CALL_OP_FREE, &e));
        /* FREE skips fmi3FreeInstance: a bogus instance pointer is never touched. */
        w.inst = (void *)0x1;
        h_free(&w, NULL, &rp);
        cr_assert(eq(ptr, w.inst, NULL));
        /* An out-of-range status counts as Fatal too. */
        w.state = CALL_ST_STEP;
        fsm_after(&w, CALL_OP_GET, 17);
        cr_assert(eq(int, w.state, CALL_ST_FATAL));
        unload();
}

Test(worker_fsm, capabilities_come_before_states)
{
        int e;

        load("LinearOde");
        w.state = CALL_ST_INSTANTIATED;
        cr_assert(not(allows(CALL_OP_ENTER_EVENT, &e)));
        cr_assert(eq(int, e, CALL_E_NOTSUP));
        cr_assert(not(allows(CALL_OP_DIRECTIONAL_DERIVATIVE, &e)));
        cr_assert(eq(int, e, CALL_E_NOTSUP));
        cr_assert(not(allows(CALL_OP_NUM_DEPENDENCIES, &e)));
        cr_assert(eq(int, e, CALL_E_NOTSUP));
        cr_assert(strstr(rp.msg, "providesPerElementDependencies is false") != NULL);
        unload();
        load("Feedthrough");
        w.state = CALL_ST_STEP;
        cr_assert(allows(CALL_OP_ENTER_CONFIG, &e), "n is a tunable structural parameter");
        fsm_after(&w, CALL_OP_ENTER_CONFIG, 0);
        cr_assert(eq(int, w.state, CALL_ST_RECONFIGURATION));
        fsm_after(&w, CALL_OP_EXIT_CONFIG, 0);
        cr_assert(eq(int, w.state, CALL_ST_STEP));
        unload();
}

Test(worker_fsm, fmi2_states)
{
        int e;

        load("LinearOde2");
        w.state = CALL_ST_INSTANTIATED;
        cr_assert(not(allows(CALL_OP_GET, &e)));
        cr_assert(strstr(rp.msg, "fmi2GetReal must not be called in instantiated") != NULL);
        cr_assert(allows(CALL_OP_SETUP_EXPERIMENT, &e));
        w.state = CALL_ST_STEP;
        fsm_after(&w, CALL_OP_DO_STEP, 2);
        cr_assert(eq(int, w.state, CALL_ST_STEP_FAILED));
        cr_assert(not(allows(CALL_OP_DO_STEP, &e)));
        cr_assert(allows(CALL_OP_TERMINATE, &e));
        w.state = CALL_ST_STEP;
        fsm_after(&w, CALL_OP_DO_STEP, 5);
        cr_assert(eq(int, w.state, CALL_ST_STEP_PENDING));
        cr_assert(allows(CALL_OP_CANCEL_STEP, &e));
        cr_assert(allows(CALL_OP_GET_STATUS, &e));
        fsm_after(&w, CALL_OP_CANCEL_STEP, 0);
        cr_assert(eq(int, w.state, CALL_ST_STEP_CANCELED));
        /* Pending from anything but a step is an error. */
        w.state = CALL_ST_STEP;
        fsm_after(&w, CALL_OP_GET, 5);
        cr_assert(eq(int, w.state, CALL_ST_ERROR));
        unload();
}
