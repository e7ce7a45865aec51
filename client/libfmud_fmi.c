/*
 * libfmud_fmi: FMI-level instances for remote masters (fmud.h,
 * PROTOCOL.md "instantiate", "fmi", "free", "detach").
 *
 * DESIGN: a batch is the calls already encoded (msgpack maps in a pw of
 * its own), so adding a call costs what encoding it costs and a submit
 * sends them behind the request's envelope as they are. The results of
 * the last submit stay in the handle's reply slot (borrowed until the next
 * request); the batch keeps pointers to them and its typed accessors
 * check each result's shape, which came from the daemon and is untrusted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libfmud_int.h"

struct fmud_batch {
        struct pw calls;                /* the encoded calls */
        uint32_t n;
        const struct pv *results;       /* the last submit's, borrowed; NULL: none */
        uint32_t n_results;
        long refused;                   /* the refused call's index; -1: none */
};

struct fmud_batch *fmud_fmi_batch_new(void)
{
        struct fmud_batch *b = calloc(1, sizeof(*b));

        if (!b || pw_init(&b->calls) < 0) {
                free(b);
                return NULL;
        }
        b->refused = -1;
        return b;
}

void fmud_fmi_batch_free(struct fmud_batch *b)
{
        if (!b)
                return;
        pw_fini(&b->calls);
        free(b);
}

void fmud_fmi_batch_clear(struct fmud_batch *b)
{
        if (!b)
                return;
        pw_reset(&b->calls);
        b->n = 0;
        b->results = NULL;
        b->n_results = 0;
        b->refused = -1;
}

/* A call's map header: instance, fn and n_more keys after them. */
static int call_begin(struct fmud_batch *b, uint64_t instance, const char *fn, uint32_t n_more)
{
        if (!b || !fn)
                return -EINVAL;
        if (b->n >= PROTO_FMI_MAX_CALLS)
                return -E2BIG;
        pw_map(&b->calls, 2 + n_more);
        pw_str(&b->calls, "instance");
        pw_u64(&b->calls, instance);
        pw_str(&b->calls, "fn");
        pw_str(&b->calls, fn);
        b->n++;
        return b->calls.error;
}

static void vrs(struct fmud_batch *b, const char *key, const uint32_t *v, size_t n)
{
        pw_str(&b->calls, key);
        pw_array(&b->calls, (uint32_t)n);
        for (size_t i = 0; i < n; i++)
                pw_u64(&b->calls, v[i]);
}

/* Whether fn is in list (NULL-terminated). */
static bool one_of(const char *fn, const char *const list[])
{
        for (size_t i = 0; fn && list[i]; i++)
                if (!strcmp(fn, list[i]))
                        return true;
        return false;
}

/* The calls fmud_fmi_add() and fmud_fmi_add_state() make whole (fmud.h). */
static const char *const bare[] = {
        "enterInitializationMode", "exitInitializationMode", "enterEventMode", "enterStepMode",
        "updateDiscreteStates", "getFMUState", "reset", "terminate", "enterConfigurationMode",
        "exitConfigurationMode", NULL,
};
static const char *const of_state[] = {
        "getFMUState", "setFMUState", "freeFMUState", "serializeFMUState", NULL,
};

int fmud_fmi_add(struct fmud_batch *b, uint64_t instance, const char *fn)
{
        /* A call that needs arguments (doStep's t and h, ...) has its own form. */
        if (!one_of(fn, bare))
                return -EINVAL;
        return call_begin(b, instance, fn, 0);
}

int fmud_fmi_add_state(struct fmud_batch *b, uint64_t instance, const char *fn, uint64_t state)
{
        int r;

        if (!one_of(fn, of_state))
                return -EINVAL;
        r = call_begin(b, instance, fn, 1);

        pw_str(&b->calls, "state");
        pw_u64(&b->calls, state);
        return r < 0 ? r : b->calls.error;
}

/*
 * A set's or get's head: type, vrs, and with n_key nValues; a set's caller
 * writes its values after it.
 */
static int values_begin(struct fmud_batch *b, uint64_t instance, const char *fn,
                        const char *type, const uint32_t vr[], size_t n_vr, size_t n_values,
                        bool n_key)
{
        bool set = !strcmp(fn, "set");
        int r;

        /* n_values below n_vr: arrays of no elements (FMI 3.0 section 2.4.7.2); the worker checks. */
        if (n_vr && !vr)
                return -EINVAL;
        if (n_vr > PROTO_FMI_MAX_VALUES || n_values > PROTO_FMI_MAX_ELEMENTS)
                return -E2BIG;
        r = call_begin(b, instance, fn, 2 + (n_key ? 1 : 0) + (set ? 1 : 0));
        if (r < 0)
                return r;
        pw_str(&b->calls, "type");
        pw_str(&b->calls, type);
        vrs(b, "vrs", vr, n_vr);
        if (n_key) {
                pw_str(&b->calls, "nValues");
                pw_u64(&b->calls, n_values);
        }
        return b->calls.error;
}

int fmud_fmi_add_set_f64_n(struct fmud_batch *b, uint64_t instance, const uint32_t vr[],
                           size_t n_vr, const double values[], size_t n_values)
{
        int r;

        if (n_values && !values)
                return -EINVAL;
        r = values_begin(b, instance, "set", "Float64", vr, n_vr, n_values, false);
        if (r < 0)
                return r;
        pw_str(&b->calls, "values");
        pw_array(&b->calls, (uint32_t)n_values);
        for (size_t i = 0; i < n_values; i++)
                pw_f64(&b->calls, values[i]);
        return b->calls.error;
}

int fmud_fmi_add_set_f64(struct fmud_batch *b, uint64_t instance, const uint32_t vr[],
                         const double values[], size_t n)
{
        return fmud_fmi_add_set_f64_n(b, instance, vr, n, values, n);
}

int fmud_fmi_add_set_u64(struct fmud_batch *b, uint64_t instance, const uint32_t vr[],
                         const uint64_t values[], size_t n)
{
        int r;

        if (n && !values)
                return -EINVAL;
        r = values_begin(b, instance, "set", "UInt64", vr, n, n, false);
        if (r < 0)
                return r;
        pw_str(&b->calls, "values");
        pw_array(&b->calls, (uint32_t)n);
        for (size_t i = 0; i < n; i++)
                pw_u64(&b->calls, values[i]);
        return b->calls.error;
}

int fmud_fmi_add_get_f64_n(struct fmud_batch *b, uint64_t instance, const uint32_t vr[],
                           size_t n_vr, size_t n_values)
{
        return values_begin(b, instance, "get", "Float64", vr, n_vr, n_values, n_values != n_vr);
}

int fmud_fmi_add_get_f64(struct fmud_batch *b, uint64_t instance, const uint32_t vr[], size_t n)
{
        return fmud_fmi_add_get_f64_n(b, instance, vr, n, n);
}

int fmud_fmi_add_do_step(struct fmud_batch *b, uint64_t instance, double t, double h)
{
        int r = call_begin(b, instance, "doStep", 2);

        if (r < 0)
                return r;
        pw_str(&b->calls, "t");
        pw_f64(&b->calls, t);
        pw_str(&b->calls, "h");
        pw_f64(&b->calls, h);
        return b->calls.error;
}

/* The refusal's text: "calls[1] (instance 3): fmi3DoStep: ..." with its code. */
static int refused(struct fmud *c, struct fmud_batch *b, const struct pv *ref)
{
        const struct pv *m = pv_get(ref, "message"), *f = pv_get(ref, "function");
        const struct pv *code = pv_get(ref, "code");
        uint64_t index = 0, inst = 0;
        int r;

        if (pv_u64(pv_get(ref, "index"), &index) < 0 || index != b->n_results ||
            pv_u64(pv_get(ref, "instance"), &inst) < 0)
                return fmud_bad_result(c, "fmi", "result.refused: no index or instance");
        b->refused = (long)index;
        /* A message that starts with the function's name ("fmi3GetFloat64: ...") names it once. */
        if (f && f->type == PV_STR && m && m->type == PV_STR && m->s.len > f->s.len &&
            !memcmp(m->s.ptr, f->s.ptr, f->s.len) && m->s.ptr[f->s.len] == ':')
                f = NULL;
        r = fmud_fail(c, FMUD_E_REFUSED, "calls[%llu] (instance %llu): %.*s%s%.*s",
                      (unsigned long long)index, (unsigned long long)inst,
                      f && f->type == PV_STR ? (int)f->s.len : 0, f ? f->s.ptr : "",
                      f && f->type == PV_STR && f->s.len ? ": " : "",
                      m && m->type == PV_STR ? (int)m->s.len : 0, m ? m->s.ptr : "");
        c->errcode = code && code->type == PV_STR ?
                     proto_err_parse(code->s.ptr, code->s.len) : -1;
        return r;
}

int fmud_fmi_submit(struct fmud *c, struct fmud_batch *b)
{
        const struct pv *v, *res, *ref;
        uint64_t id;
        int r;

        if (!c || !b)
                return !c ? -EINVAL : fmud_missing(c, "fmi", "the batch");
        if (b->calls.error)
                return fmud_fail(c, b->calls.error, "fmi: the batch could not be built");
        if (!b->n)
                return fmud_fail(c, -EINVAL, "fmi: the batch has no calls");
        b->results = NULL;
        b->n_results = 0;
        b->refused = -1;
        id = fmud_begin(c);
        proto_req_begin(&c->w, id, PROTO_OP_FMI, 1);
        pw_str(&c->w, "calls");
        pw_array(&c->w, b->n);
        pw_raw(&c->w, pw_data(&b->calls), pw_size(&b->calls));
        r = fmud_call(c, id, "fmi", &v);
        if (r < 0)
                return r;
        res = pv_get(v, "results");
        if (!res || res->type != PV_ARRAY || res->a.n > b->n)
                return fmud_bad_result(c, "fmi", "result.results: expected an array, one per call");
        b->results = res->a.items;
        b->n_results = res->a.n;
        ref = pv_get(v, "refused");
        if (ref)
                return refused(c, b, ref);
        if (b->n_results != b->n)
                return fmud_bad_result(c, "fmi", "result.results: fewer than the calls");
        return 0;
}

size_t fmud_fmi_count(const struct fmud_batch *b)
{
        return b ? b->n_results : 0;
}

long fmud_fmi_refused(const struct fmud_batch *b)
{
        return b ? b->refused : -1;
}

const struct pv *fmud_fmi_result(const struct fmud_batch *b, size_t i)
{
        return b && i < b->n_results ? &b->results[i] : NULL;
}

int fmud_fmi_f64(const struct fmud_batch *b, size_t i, double out[], size_t n)
{
        const struct pv *v = fmud_fmi_result(b, i);

        /* out may be NULL for no values (an array sized 0). */
        if (!v || (!out && n))
                return -EINVAL;
        if (v->type != PV_ARRAY || v->a.n != n)
                return -EPROTO;
        for (size_t k = 0; k < n; k++)
                if (pv_f64(&v->a.items[k], &out[k]) < 0)
                        return -EPROTOTYPE;
        return 0;
}

int fmud_fmi_step(const struct fmud_batch *b, size_t i, struct fmud_step_result *ret)
{
        const struct pv *v = fmud_fmi_result(b, i);

        if (!v || !ret)
                return -EINVAL;
        if (v->type != PV_MAP || pv_bool(pv_get(v, "eventHandlingNeeded"),
                                         &ret->event_handling_needed) < 0 ||
            pv_bool(pv_get(v, "terminateSimulation"), &ret->terminate_simulation) < 0 ||
            pv_bool(pv_get(v, "earlyReturn"), &ret->early_return) < 0 ||
            pv_f64(pv_get(v, "lastSuccessfulTime"), &ret->last_successful_time) < 0)
                return -EPROTO;
        return 0;
}

int fmud_fmi_state(const struct fmud_batch *b, size_t i, uint64_t *ret)
{
        const struct pv *v = fmud_fmi_result(b, i);

        if (!v || !ret)
                return -EINVAL;
        return v->type == PV_MAP && pv_u64(pv_get(v, "state"), ret) == 0 ? 0 : -EPROTO;
}

int fmud_instantiate(struct fmud *c, const struct proto_instantiate *a, uint64_t *ret_instance)
{
        const struct pv *v;
        uint64_t id;
        int r;

        if (!a || !ret_instance)
                return fmud_missing(c, "instantiate", !a ? "the arguments" : "ret_instance");
        if (!c)
                return -EINVAL;
        id = fmud_begin(c);
        proto_instantiate_encode(&c->w, id, a);
        r = fmud_call(c, id, "instantiate", &v);
        if (r < 0)
                return r;
        if (pv_u64(pv_get(v, "instance"), ret_instance) < 0 || *ret_instance == 0)
                return fmud_bad_result(c, "instantiate", "result.instance: expected a number");
        return 0;
}

int fmud_free_instance(struct fmud *c, uint64_t instance)
{
        const struct pv *v;
        uint64_t id;

        if (!c)
                return -EINVAL;
        id = fmud_begin(c);
        proto_free_encode(&c->w, id, instance);
        return fmud_call(c, id, "free", &v);
}

int fmud_detach(struct fmud *c, uint64_t session)
{
        const struct pv *v;
        uint64_t id;

        if (!c)
                return -EINVAL;
        id = fmud_begin(c);
        proto_detach_encode(&c->w, id, session);
        return fmud_call(c, id, "detach", &v);
}
