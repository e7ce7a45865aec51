/*
 * lifecycle: the FMI 3.0 life cycle handlers (instantiation, modes,
 * termination, reset, free, debug logging), and those of them that FMI
 * 2.0 shares (exit initialization, terminate, reset, free, logging).
 *
 * DESIGN: each handler checks its arguments (the state was checked by
 * fsm_allows() before), calls the FMU once and records its status;
 * fsm_after() moves the state. Instantiation takes the token from the
 * description and checks a token the daemon gives against it; the
 * resource path is the absolute path of DIR/resources/ with a trailing
 * separator (FMI 3.0 section 2.3.1), or NULL when there is none.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "worker/me.h"
#include "worker/se.h"
#include "worker/worker.h"

#define NAME_MAX_BYTES  4096u

bool flag_ok(uint8_t b)
{
        return b <= 1;
}

static int cmp_u32(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

        return x < y ? -1 : x > y;
}

/* Copy a string range into a NUL-terminated heap string; NULL when malformed. */
char *copy_text(const struct call_in *in, const struct call_range *r, uint64_t max)
{
        const void *p;
        char *s;

        if (call_in_bytes(in, r, max, &p) < 0 || (r->len && memchr(p, '\0', r->len)))
                return NULL;
        s = malloc(r->len + 1);
        if (!s)
                return NULL;
        if (r->len)
                memcpy(s, p, r->len);
        s[r->len] = '\0';
        return s;
}

static bool blank(const char *s)
{
        for (; *s; s++)
                if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
                        return false;
        return true;
}

/* DIR/resources/ if it is a directory, else NULL. Caller frees. */
char *resource_path(const struct worker *w)
{
        struct stat st;
        char *p;
        size_t n = strlen(w->dir);

        p = malloc(n + sizeof("/resources/"));
        if (!p)
                return NULL;
        memcpy(p, w->dir, n);
        memcpy(p + n, "/resources/", sizeof("/resources/"));
        if (stat(p, &st) < 0 || !S_ISDIR(st.st_mode)) {
                free(p);
                return NULL;
        }
        return p;
}

/*
 * The checks both versions share: name, token, required intermediate
 * variables. On success *ret_name is the name (caller frees) and
 * w->required holds the sorted list.
 */
bool instantiate_args(struct worker *w, const struct call_in *in, const struct call_instantiate *ci,
                      const char *fn, char **ret_name, struct reply *rp)
{
        const char *want = w->md->instantiation_token;
        const uint32_t *req;
        char *name, *token;

        if (!flag_ok(ci->visible) || !flag_ok(ci->logging_on) || !flag_ok(ci->event_mode_used) ||
            !flag_ok(ci->early_return_allowed) || !flag_ok(ci->intermediate_update) ||
            !flag_ok(ci->has_token) || !flag_ok(ci->quiet_ok) ||
            call_in_range(in, &ci->required, sizeof(uint32_t), ci->n_required, (const void **)&req) < 0) {
                reply_refuse(rp, CALL_E_BADMSG, "%s: malformed arguments", fn);
                return false;
        }
        w->quiet_ok = ci->quiet_ok;
        name = copy_text(in, &ci->name, NAME_MAX_BYTES);
        if (!name || blank(name)) {
                reply_refuse(rp, CALL_E_INVAL, "%s: instanceName must be a non-empty string", fn);
                free(name);
                return false;
        }
        if (!want || !*want) {
                reply_refuse(rp, CALL_E_INVAL, "%s: the description has no instantiation token", fn);
                goto out_name;
        }
        if (ci->has_token) {
                token = copy_text(in, &ci->token, NAME_MAX_BYTES);
                if (!token || strcmp(token, want) != 0) {
                        reply_refuse(rp, CALL_E_INVAL, "%s: instantiation token '%s' does not match "
                                     "the description's '%s'", fn, token ? token : "?", want);
                        free(token);
                        goto out_name;
                }
                free(token);
        }
        if (ci->n_required && !ci->intermediate_update) {
                reply_refuse(rp, CALL_E_INVAL, "%s: requiredIntermediateVariables without an "
                             "intermediate update callback", fn);
                goto out_name;
        }
        for (uint32_t i = 0; i < ci->n_required; i++) {
                const struct md_variable *v = md_find_vr(w->md, req[i]);

                if (!v || !v->intermediate_update) {
                        reply_refuse(rp, v ? CALL_E_INVAL : CALL_E_NOVAR, "%s: requiredIntermediate"
                                     "Variables: value reference %" PRIu32 " is not a variable with "
                                     "intermediateUpdate=\"true\"", fn, req[i]);
                        goto out_name;
                }
        }
        free(w->required);
        w->required = NULL;
        w->n_required = 0;
        if (ci->n_required) {
                w->required = malloc(ci->n_required * sizeof(uint32_t));
                if (!w->required) {
                        reply_refuse(rp, CALL_E_NOMEM, "out of memory");
                        goto out_name;
                }
                memcpy(w->required, req, ci->n_required * sizeof(uint32_t));
                qsort(w->required, ci->n_required, sizeof(uint32_t), cmp_u32);
                w->n_required = ci->n_required;
        }
        w->max_string = ci->max_string ? ci->max_string : CALL_STRING_MAX_DEFAULT;
        w->max_binary = ci->max_binary ? ci->max_binary : CALL_BINARY_MAX_DEFAULT;
        *ret_name = name;
        return true;

out_name:
        free(name);
        return false;
}

void h_instantiate3(struct worker *w, const struct call_in *in, struct reply *rp)
{
        const char *fn = w->me ? "fmi3InstantiateModelExchange" : w->se
                         ? "fmi3InstantiateScheduledExecution" : "fmi3InstantiateCoSimulation";
        struct call_instantiate ci;
        char *name = NULL, *res;
        bool iu;

        memcpy(&ci, in->body, sizeof(ci));
        if (!instantiate_args(w, in, &ci, fn, &name, rp))
                return;
        if (ci.event_mode_used && !w->md->cs.has_event_mode) {
                reply_refuse(rp, CALL_E_NOTSUP, "%s: eventModeUsed = true, but hasEventMode is false", fn);
                goto out;
        }
        if (w->me && md_has_clocks(w->md) && !ci.early_return_allowed) {
                reply_refuse(rp, CALL_E_NOTSUP, "%s: a Model Exchange FMU with Clocks is hosted "
                             "ending its steps at its events: earlyReturnAllowed must be true", fn);
                goto out;
        }
        if (!ci.event_mode_used && md_has_clocks(w->md)) {
                reply_refuse(rp, CALL_E_INVAL, "%s: the model has Clocks: eventModeUsed must be true "
                             "(section 2.3.1)", fn);
                goto out;
        }
        res = resource_path(w);
        iu = ci.intermediate_update && w->md->cs.provides_intermediate_update;
        w->iu_on = iu;
        w->event_mode_used = ci.event_mode_used;
        w->early_return_allowed = ci.early_return_allowed;
        w->iu_enabled = iu;
        if (w->me)
                w->inst = w->lib->f3.fmi3InstantiateModelExchange(name, w->md->instantiation_token,
                                                                  res, ci.visible, ci.logging_on,
                                                                  w, log_fmi3);
        else if (w->se)
                w->inst = se_instantiate(w, name, res, ci.visible, ci.logging_on);
        else
                w->inst = w->lib->f3.fmi3InstantiateCoSimulation(name, w->md->instantiation_token,
                                                                 res, ci.visible, ci.logging_on,
                                                                 ci.event_mode_used,
                                                                 ci.early_return_allowed,
                                                                 w->required, w->n_required, w,
                                                                 log_fmi3, iu ? iu_callback : NULL);
        free(res);
        if (!w->inst) {
                if (!w->last_error[0])
                        snprintf(w->last_error, sizeof(w->last_error), "%s returned NULL", fn);
                reply_status(rp, fmi3Error);
                goto out;
        }
        vars_reset(w);
        w->state = CALL_ST_INSTANTIATED;
out:
        free(name);
}

void h_free(struct worker *w, const struct call_in *in, struct reply *rp)
{
        (void) in;
        (void) rp;
        /* After Fatal the FMU is not called again, not even to free it (2.2.4). */
        if (w->state != CALL_ST_FATAL && w->inst) {
                states_free_all(w);
                if (w->fmi == MD_FMI3)
                        w->lib->f3.fmi3FreeInstance(w->inst);
                else
                        w->lib->f2.fmi2FreeInstance(w->inst);
        }
        w->inst = NULL;
}

void h_debug_logging(struct worker *w, const struct call_in *in, struct reply *rp)
{
        const char *fn = fsm_fmi_name(w, CALL_OP_SET_DEBUG_LOGGING, MD_TYPE_COUNT);
        struct call_debug_logging d;
        const char **cats, *p;
        const void *data;
        uint64_t bad = 0;

        memcpy(&d, in->body, sizeof(d));
        if (!flag_ok(d.logging_on) || call_in_bytes(in, &d.categories, UINT64_MAX, &data) < 0 ||
            call_check_strings(data, d.categories.len, d.n_categories, CALL_CATEGORY_MAX, &bad) < 0 ||
            wbuf_reserve(&w->tmp, (d.n_categories + 1) * sizeof(*cats)) < 0) {
                reply_refuse(rp, CALL_E_BADMSG, "%s: malformed categories", fn);
                return;
        }
        cats = (const char **)(void *)w->tmp.p;
        p = data;
        for (uint32_t i = 0; i < d.n_categories; i++) {
                size_t k;

                for (k = 0; k < w->md->n_log_categories; k++)
                        if (strcmp(w->md->log_categories[k].name, p) == 0)
                                break;
                if (k == w->md->n_log_categories) {
                        reply_refuse(rp, CALL_E_INVAL, "%s: unknown log category '%s'", fn, p);
                        return;
                }
                cats[i] = p;
                p += strlen(p) + 1;
        }
        if (w->fmi == MD_FMI3)
                reply_status(rp, w->lib->f3.fmi3SetDebugLogging(w->inst, d.logging_on, d.n_categories,
                                                                d.n_categories ? cats : NULL));
        else
                reply_status(rp, w->lib->f2.fmi2SetDebugLogging(w->inst, d.logging_on, d.n_categories,
                                                                d.n_categories ? cats : NULL));
}

/* Check an experiment's times; false after refusing. */
bool experiment_ok(const struct call_experiment *e, const char *fn, struct reply *rp)
{
        if (!flag_ok(e->tolerance_defined) || !flag_ok(e->stop_time_defined)) {
                reply_refuse(rp, CALL_E_BADMSG, "%s: malformed arguments", fn);
                return false;
        }
        if (!isfinite(e->start_time) || (e->tolerance_defined && !(e->tolerance > 0.0)) ||
            (e->stop_time_defined && !(isfinite(e->stop_time) && e->stop_time >= e->start_time))) {
                reply_refuse(rp, CALL_E_INVAL, "%s: startTime must be finite, tolerance > 0 and "
                             "stopTime >= startTime when defined", fn);
                return false;
        }
        return true;
}

void h_enter_init3(struct worker *w, const struct call_in *in, struct reply *rp)
{
        struct call_experiment e = { 0 };

        if (in->hdr.body_len) {
                memcpy(&e, in->body, sizeof(e));
                if (!experiment_ok(&e, "fmi3EnterInitializationMode", rp))
                        return;
        }
        if (w->me)
                me_experiment(w, e.tolerance_defined, e.tolerance, e.start_time, e.grid_step);
        se_set_time(w, e.start_time);
        reply_status(rp, w->lib->f3.fmi3EnterInitializationMode(w->inst, e.tolerance_defined,
                                                                e.tolerance, e.start_time,
                                                                e.stop_time_defined, e.stop_time));
}

void h_exit_init(struct worker *w, const struct call_in *in, struct reply *rp)
{
        bool term = false;
        int s;

        (void) in;
        if (w->fmi == MD_FMI2)
                s = status_norm(w, w->lib->f2.fmi2ExitInitializationMode(w->inst));
        else
                s = status_norm(w, w->lib->f3.fmi3ExitInitializationMode(w->inst));
        reply_status(rp, s);
        /* An FMU with Clocks: the master's Event Mode comes first (me_events.c). */
        if (!w->me || s > fmi3Warning || w->event_mode_used)
                return;
        /*
         * Model Exchange: the first Event Mode (FMI 3.0 section 3.2.1; FMI 2.0
         * section 3.2.3: after fmi2ExitInitializationMode too), then the
         * integrator (me.h). A terminate request there is the FMU's right
         * as at any event: the reply carries it, and the session ends at
         * the start time.
         */
        s = me_start(w, &term);
        reply_status(rp, s);
        if (s <= fmi3Warning) {
                struct call_exit_init x = { .terminate_simulation = term };

                memcpy(rp->result, &x, sizeof(x));
        }
}

void h_enter_config(struct worker *w, const struct call_in *in, struct reply *rp)
{
        (void) in;
        reply_status(rp, w->lib->f3.fmi3EnterConfigurationMode(w->inst));
}

void h_exit_config(struct worker *w, const struct call_in *in, struct reply *rp)
{
        (void) in;
        reply_status(rp, w->lib->f3.fmi3ExitConfigurationMode(w->inst));
        /* A changed dimension makes the variable's value invalid (FMI 3.0 section 2.4.7.2). */
        me_inputs_forget(w);
}

/*
 * Scheduled Execution: the FMU stays in Clock Activation Mode (se.h).
 * Model Exchange: Event Mode and Continuous-Time Mode (me_events.c).
 */
void h_enter_event(struct worker *w, const struct call_in *in, struct reply *rp)
{
        (void) in;
        reply_status(rp, w->se ? fmi3OK : w->me ? me_event_mode(w)
                         : (int)w->lib->f3.fmi3EnterEventMode(w->inst));
}

void h_enter_step(struct worker *w, const struct call_in *in, struct reply *rp)
{
        (void) in;
        reply_status(rp, w->se ? fmi3OK : w->me ? me_step_mode(w)
                         : (int)w->lib->f3.fmi3EnterStepMode(w->inst));
}

void h_evaluate(struct worker *w, const struct call_in *in, struct reply *rp)
{
        (void) in;
        reply_status(rp, w->lib->f3.fmi3EvaluateDiscreteStates(w->inst));
}

void h_update_discrete(struct worker *w, const struct call_in *in, struct reply *rp)
{
        /* Bytes, not bool: a value the FMU leaves other than 0 or 1 is read as true. */
        union { fmi3Boolean b; uint8_t u; } need = { 0 }, term = { 0 }, nom = { 0 }, val = { 0 },
                                            def = { 0 };
        fmi3Float64 next = 0.0;
        struct call_discrete d = { 0 };
        int s;

        (void) in;
        if (w->se) {
                reply_status(rp, se_update_discrete(w, &d));
                memcpy(rp->result, &d, sizeof(d));
                return;
        }
        s = w->lib->f3.fmi3UpdateDiscreteStates(w->inst, &need.b, &term.b, &nom.b, &val.b, &def.b,
                                                &next);
        reply_status(rp, s);
        d.discrete_states_need_update = need.u != 0;
        d.terminate_simulation = term.u != 0;
        d.nominals_changed = nom.u != 0;
        d.values_changed = val.u != 0;
        d.next_event_time_defined = def.u != 0;
        d.next_event_time = next;
        if (w->me)
                me_discrete_updated(w, status_norm(w, s), &d);
        memcpy(rp->result, &d, sizeof(d));
}

void h_terminate(struct worker *w, const struct call_in *in, struct reply *rp)
{
        (void) in;
        if (w->fmi == MD_FMI3)
                reply_status(rp, w->lib->f3.fmi3Terminate(w->inst));
        else
                reply_status(rp, w->lib->f2.fmi2Terminate(w->inst));
}

void h_reset(struct worker *w, const struct call_in *in, struct reply *rp)
{
        int s;

        (void) in;
        if (w->fmi == MD_FMI3)
                s = w->lib->f3.fmi3Reset(w->inst);
        else
                s = w->lib->f2.fmi2Reset(w->inst);
        reply_status(rp, s);
        /* FMU states stay valid across a reset; the structural parameters start again. */
        if (status_norm(w, s) <= fmi3Warning)
                vars_reset(w);
        if (w->me)
                me_reset(w);
        if (w->se)
                se_reset(w);
}
