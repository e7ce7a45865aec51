/*
 * inst_life: the FMI life cycle calls of an instance (instantiate, debug
 * logging, experiment setup, the modes, discrete states, terminate and
 * reset), each one round trip with the worker (inst_call.c).
 *
 * DESIGN: each call checks its arguments (bounded names and categories),
 * then makes one request through call_simple() or call_run(); what the
 * worker replies is checked there and here before use (inst_int.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/instance/inst_int.h"

static int noarg(struct inst *inst, enum call_op op)
{
        struct rep rp;
        int r;

        r = call_simple(inst, op, NULL, 0, &rp);
        call_end(inst, &rp);
        return r;
}

int inst_instantiate(struct inst *inst, const struct inst_instantiate *a)
{
        const char *name = a && a->name ? a->name : inst->name;
        struct call_instantiate ci = { 0 };
        struct req rq;
        struct rep rp;
        int r;

        if (!a || (a->n_required && !a->required) || a->n_required > UINT32_MAX)
                return -EINVAL;
        r = call_begin(inst, false);
        if (r < 0)
                return r;
        req_init(inst, &rq, CALL_OP_INSTANTIATE, sizeof(ci));
        ci.visible = a->visible;
        ci.logging_on = a->logging_on;
        ci.quiet_ok = a->quiet_ok;
        ci.event_mode_used = a->event_mode_used;
        ci.early_return_allowed = a->early_return_allowed;
        ci.intermediate_update = inst->fmi == 3 && inst->iu;
        ci.has_token = a->token != NULL;
        ci.n_required = (uint32_t)a->n_required;
        ci.max_string = a->max_string;
        ci.max_binary = a->max_binary;
        if (req_put(&rq, name, strlen(name), &ci.name) < 0 ||
            (a->token && req_put(&rq, a->token, strlen(a->token), &ci.token) < 0) ||
            req_put(&rq, a->required, a->n_required * sizeof(uint32_t), &ci.required) < 0)
                return -EMSGSIZE;
        memcpy(rq.body, &ci, sizeof(ci));
        r = call_run(inst, &rq, &rp);
        if (r >= 0 && r <= INST_WARNING) {
                inst->iu_wanted = ci.intermediate_update;
                inst->max_string = a->max_string ? a->max_string : CALL_STRING_MAX_DEFAULT;
                inst->max_binary = a->max_binary ? a->max_binary : CALL_BINARY_MAX_DEFAULT;
        }
        call_end(inst, &rp);
        return r;
}

int inst_set_debug_logging(struct inst *inst, bool on, const char *const categories[], size_t n)
{
        struct call_debug_logging d = { .logging_on = on, .n_categories = (uint32_t)n };
        uint64_t total = 0, off;
        struct req rq;
        struct rep rp;
        char *p;
        int r;

        if ((n && !categories) || n > UINT32_MAX)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                if (!categories[i])
                        return -EINVAL;
                total += strlen(categories[i]) + 1;
        }
        r = call_begin(inst, false);
        if (r < 0)
                return r;
        req_init(inst, &rq, CALL_OP_SET_DEBUG_LOGGING, sizeof(d));
        if (total) {
                if (call_out_alloc(&rq.out, total, &off) < 0)
                        return -EMSGSIZE;
                p = call_out_ptr(&rq.out, off);
                for (size_t i = 0; i < n; i++) {
                        size_t len = strlen(categories[i]) + 1;

                        memcpy(p, categories[i], len);
                        p += len;
                }
                d.categories = (struct call_range){ off, total };
        }
        memcpy(rq.body, &d, sizeof(d));
        r = call_run(inst, &rq, &rp);
        call_end(inst, &rp);
        return r;
}

static int experiment(struct inst *inst, enum call_op op, const struct inst_experiment *e)
{
        struct call_experiment ce = { 0 };
        struct rep rp;
        int r;

        if (e) {
                ce.tolerance_defined = e->tolerance_defined;
                ce.tolerance = e->tolerance;
                ce.start_time = e->start_time;
                ce.stop_time_defined = e->stop_time_defined;
                ce.stop_time = e->stop_time;
                ce.grid_step = e->grid_step;
        }
        r = call_simple(inst, op, &ce, e ? sizeof(ce) : 0, &rp);
        call_end(inst, &rp);
        return r;
}

int inst_setup_experiment(struct inst *inst, const struct inst_experiment *e)
{
        if (!e)
                return -EINVAL;
        return experiment(inst, CALL_OP_SETUP_EXPERIMENT, e);
}

int inst_enter_initialization_mode(struct inst *inst, const struct inst_experiment *e)
{
        return experiment(inst, CALL_OP_ENTER_INIT, e);
}

int inst_exit_initialization(struct inst *inst, bool *ret_terminate)
{
        struct call_exit_init x;
        struct rep rp;
        int r;

        if (!ret_terminate)
                return -EINVAL;
        r = call_simple(inst, CALL_OP_EXIT_INIT, NULL, 0, &rp);
        if (r >= 0 && r <= INST_WARNING) {
                memcpy(&x, rp.result, sizeof(x));
                if (x.terminate_simulation > 1) {
                        call_end(inst, &rp);
                        return inst_fault_set(inst, -EPROTO, "worker %d broke the protocol: "
                                              "a Boolean that is neither 0 nor 1", (int)inst->pid);
                }
                *ret_terminate = x.terminate_simulation;
        }
        call_end(inst, &rp);
        return r;
}

int inst_exit_initialization_mode(struct inst *inst)
{
        bool term;

        return inst_exit_initialization(inst, &term);
}

int inst_enter_configuration_mode(struct inst *inst)
{
        return noarg(inst, CALL_OP_ENTER_CONFIG);
}

int inst_exit_configuration_mode(struct inst *inst)
{
        return noarg(inst, CALL_OP_EXIT_CONFIG);
}

int inst_enter_event_mode(struct inst *inst)
{
        return noarg(inst, CALL_OP_ENTER_EVENT);
}

int inst_enter_step_mode(struct inst *inst)
{
        return noarg(inst, CALL_OP_ENTER_STEP);
}

int inst_evaluate_discrete_states(struct inst *inst)
{
        return noarg(inst, CALL_OP_EVALUATE_DISCRETE);
}

int inst_update_discrete_states(struct inst *inst, struct inst_discrete *ret)
{
        struct call_discrete d;
        struct rep rp;
        int r;

        if (!ret)
                return -EINVAL;
        r = call_simple(inst, CALL_OP_UPDATE_DISCRETE, NULL, 0, &rp);
        if (r >= 0 && r <= INST_WARNING) {
                memcpy(&d, rp.result, sizeof(d));
                if (d.discrete_states_need_update > 1 || d.terminate_simulation > 1 ||
                    d.nominals_changed > 1 || d.values_changed > 1 || d.next_event_time_defined > 1) {
                        call_end(inst, &rp);
                        return inst_fault_set(inst, -EPROTO, "worker %d broke the protocol: "
                                              "a Boolean that is neither 0 nor 1", (int)inst->pid);
                }
                *ret = (struct inst_discrete){
                        .discrete_states_need_update = d.discrete_states_need_update,
                        .terminate_simulation = d.terminate_simulation,
                        .nominals_changed = d.nominals_changed,
                        .values_changed = d.values_changed,
                        .next_event_time_defined = d.next_event_time_defined,
                        .next_event_time = d.next_event_time,
                };
        }
        call_end(inst, &rp);
        return r;
}

int inst_terminate(struct inst *inst)
{
        return noarg(inst, CALL_OP_TERMINATE);
}

int inst_reset(struct inst *inst)
{
        return noarg(inst, CALL_OP_RESET);
}
