/*
 * fmi2: the handlers that only FMI 2.0 has or does its own way:
 * fmi2Instantiate (with the resource location as a file URI, FMI 2.0
 * section 2.1.5), fmi2SetupExperiment, fmi2EnterInitializationMode
 * (without arguments), fmi2CancelStep and the fmi2Get*Status inquiries.
 * A Model Exchange FMU (w->me) is instantiated as one and integrated by
 * me.c; it has no pending step, no fmi2CancelStep or fmi2Get*Status.
 *
 * DESIGN: the callback struct is allocated once and outlives the
 * instance, as FMI 2.0 allows the FMU to keep the pointer. The memory
 * functions are calloc/free; stepFinished is NULL (section 4.2.1 allows
 * it): a step an FMU that can run asynchronously leaves pending is waited
 * for with fmi2GetStatus (step.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker/me.h"
#include "worker/worker.h"

static bool hex_free(unsigned char c)
{
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '.' || c == '_' || c == '~' || c == '/';
}

char *resource_uri(const char *dir)
{
        static const char hex[] = "0123456789ABCDEF";
        static const char tail[] = "/resources/";
        size_t n = strlen(dir);
        char *uri, *p;

        /* "file://", each byte up to three, the tail and the NUL. */
        if (n > (SIZE_MAX - 32) / 3)
                return NULL;
        uri = malloc(7 + 3 * n + sizeof(tail));
        if (!uri)
                return NULL;
        memcpy(uri, "file://", 7);
        p = uri + 7;
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)dir[i];

                if (hex_free(c)) {
                        *p++ = (char)c;
                } else {
                        *p++ = '%';
                        *p++ = hex[c >> 4];
                        *p++ = hex[c & 15];
                }
        }
        memcpy(p, tail, sizeof(tail));
        return uri;
}

void h_instantiate2(struct worker *w, const struct call_in *in, struct reply *rp)
{
        const char *fn = "fmi2Instantiate";
        struct call_instantiate ci;
        char *name = NULL, *uri;

        memcpy(&ci, in->body, sizeof(ci));
        if (!instantiate_args(w, in, &ci, fn, &name, rp))
                return;
        /* Allowing early return is harmless: an FMI 2.0 FMU never returns early. */
        if (ci.event_mode_used || ci.n_required) {
                reply_refuse(rp, CALL_E_NOTSUP, "%s: FMI 2.0 Co-Simulation has no Event Mode or "
                             "intermediate update", fn);
                goto out;
        }
        if (!w->cb2) {
                const fmi2CallbackFunctions cb = {
                        .logger = log_fmi2,
                        .allocateMemory = calloc,
                        .freeMemory = free,
                        .stepFinished = NULL,
                        .componentEnvironment = w,
                };

                w->cb2 = malloc(sizeof(*w->cb2));
                if (!w->cb2) {
                        reply_refuse(rp, CALL_E_NOMEM, "out of memory");
                        goto out;
                }
                memcpy(w->cb2, &cb, sizeof(cb));
        }
        uri = resource_uri(w->dir);
        if (!uri) {
                reply_refuse(rp, CALL_E_NOMEM, "out of memory");
                goto out;
        }
        w->event_mode_used = false;
        w->early_return_allowed = false;
        w->iu_enabled = false;
        w->inst = w->lib->f2.fmi2Instantiate(name, w->me ? fmi2ModelExchange : fmi2CoSimulation,
                                             w->md->instantiation_token, uri, w->cb2, ci.visible,
                                             ci.logging_on);
        free(uri);
        if (!w->inst) {
                if (!w->last_error[0])
                        snprintf(w->last_error, sizeof(w->last_error), "%s returned NULL", fn);
                reply_status(rp, fmi2Error);
                goto out;
        }
        vars_reset(w);
        w->state = CALL_ST_INSTANTIATED;
out:
        free(name);
}

void h_setup_experiment(struct worker *w, const struct call_in *in, struct reply *rp)
{
        struct call_experiment e;

        memcpy(&e, in->body, sizeof(e));
        if (!experiment_ok(&e, "fmi2SetupExperiment", rp))
                return;
        if (w->me)
                me_experiment(w, e.tolerance_defined, e.tolerance, e.start_time, e.grid_step);
        reply_status(rp, w->lib->f2.fmi2SetupExperiment(w->inst, e.tolerance_defined, e.tolerance,
                                                        e.start_time, e.stop_time_defined,
                                                        e.stop_time));
}

void h_enter_init2(struct worker *w, const struct call_in *in, struct reply *rp)
{
        if (in->hdr.body_len) {
                reply_refuse(rp, CALL_E_INVAL, "fmi2EnterInitializationMode takes no arguments: "
                             "start, stop and tolerance go to fmi2SetupExperiment");
                return;
        }
        reply_status(rp, w->lib->f2.fmi2EnterInitializationMode(w->inst));
}

/* Model Exchange: the FMU has no Co-Simulation status functions to call. */
static bool refuse_me(struct worker *w, const char *fn, struct reply *rp)
{
        if (!w->me)
                return false;
        reply_refuse(rp, CALL_E_NOTSUP, "%s: the FMU is hosted as Model Exchange, integrated in "
                     "its worker, whose steps are never pending", fn);
        return true;
}

void h_cancel_step(struct worker *w, const struct call_in *in, struct reply *rp)
{
        (void) in;
        if (refuse_me(w, "fmi2CancelStep", rp))
                return;
        reply_status(rp, w->lib->f2.fmi2CancelStep(w->inst));
}

/* A pending step's status, once known, moves the state (FMI 2.0 section 4.2.4). */
static void settle_pending(struct worker *w, int value)
{
        if (w->state != CALL_ST_STEP_PENDING || value == fmi2Pending)
                return;
        if (value <= fmi2Warning)
                w->state = CALL_ST_STEP;
        else if (value == fmi2Discard)
                w->state = CALL_ST_STEP_FAILED;
        else if (value == fmi2Error)
                w->state = CALL_ST_ERROR;
        else
                w->state = CALL_ST_FATAL;
}

void h_get_status(struct worker *w, const struct call_in *in, struct reply *rp)
{
        const struct fmi2_api *f = &w->lib->f2;
        struct call_status_query q;
        fmi2Status st = fmi2OK;
        fmi2Real real = 0.0;
        fmi2Integer integer = 0;
        fmi2Boolean boolean = fmi2False;
        fmi2String str = NULL;
        int s;

        memcpy(&q, in->body, sizeof(q));
        if (refuse_me(w, "fmi2GetStatus", rp))
                return;
        if (q.which >= CALL_STATUS_COUNT || q.kind < fmi2DoStepStatus || q.kind > fmi2Terminated) {
                reply_refuse(rp, CALL_E_INVAL, "fmi2GetStatus: unknown status function or kind %d",
                             (int)q.kind);
                return;
        }
        switch (q.which) {
        case CALL_STATUS_STATUS:
                s = f->fmi2GetStatus(w->inst, q.kind, &st);
                q.i = st;
                if (status_norm(w, s) <= fmi2Warning && q.kind == fmi2DoStepStatus)
                        settle_pending(w, status_norm(w, st));
                break;
        case CALL_STATUS_REAL:
                s = f->fmi2GetRealStatus(w->inst, q.kind, &real);
                q.f = real;
                break;
        case CALL_STATUS_INTEGER:
                s = f->fmi2GetIntegerStatus(w->inst, q.kind, &integer);
                q.i = integer;
                break;
        case CALL_STATUS_BOOLEAN:
                s = f->fmi2GetBooleanStatus(w->inst, q.kind, &boolean);
                q.i = boolean != fmi2False;
                break;
        default:
                s = f->fmi2GetStringStatus(w->inst, q.kind, &str);
                if (status_norm(w, s) <= fmi2Warning && str &&
                    call_out_put(&rp->out, str, strnlen(str, CALL_MSG_MAX), &q.str) < 0)
                        q.str = (struct call_range){ 0, 0 };
                break;
        }
        if (q.which == CALL_STATUS_STATUS && (q.i < fmi2OK || q.i > fmi2Pending))
                q.i = fmi2Fatal;
        reply_status(rp, s);
        memcpy(rp->result, &q, sizeof(q));
}
