/*
 * host_values: get and set by name ("instance.variable") on a session's
 * instances, between msgpack values and FMI types.
 *
 * DESIGN: names resolve to variables in host_vars.c. Arrays are got and
 * set whole, as msgpack arrays in row-major order; get also takes one
 * element ("v[2]", "m[1,2]"), answered as a scalar.
 *
 * get of a variable the master routes or records (an output, most of
 * the time) returns the value it published at the point the session is
 * at: what the instance's consumers see, and what the results hold. A
 * multirate instance's output between its points is its held value
 * (the FMU is already at its next point); after a fault, the value of
 * the point the session holds at, even where the instance completed the
 * failed step. Outputs depending on a value set change at the next
 * point, or at once where the set went in in an Event Mode (below), whose
 * outputs after the event are published at the point. Any other variable
 * is the instance's current value (inst_get() in its worker). Between a
 * set and the instance's next step FMI 3.0 forbids gets in Step Mode (section 4.2.1, which the worker enforces):
 * a variable set since then is answered from the value set (as get
 * would return it), any other get from that instance is refused
 * (PROTO_E_STATE, the worker's reason) until it steps.
 *
 * Types on the wire: Float32/Float64 as msgpack float; Int8..Int64 and
 * Enumeration as int; UInt8..UInt64 as uint (exact, never through a
 * double); Boolean as bool; String as str; Binary as bin. A set value
 * must fit: an integer into a Float only when exactly representable, never
 * a float into an integer type, every integer within its type's range;
 * otherwise PROTO_E_TYPE names the variable and both types. Every value of
 * a set is checked before the first is applied.
 *
 * While the session runs, both are served between two points (the
 * session thread is then out of the master, which returns at the next
 * point for them: master_request_serve()): get answers from the last
 * completed point, set applies every value of the request there, before
 * the next step, held until changed (zero-order hold); both replies carry
 * that point's time. Sets queued before one point are applied in order.
 * What set may change is the same as while paused: FMI's rules on
 * causality and variability (FMI 3.0 section 2.2.7.2), checked here for
 * every value of the request before the first goes out, and again by the
 * worker. An instance with Event Mode takes its discrete inputs and
 * tunable parameters of the request in an Event Mode of its own, which
 * ends before the reply (FMI 3.0 sections 2.4.7.4 and 4.3.1;
 * master_set_event_begin()).
 * Tunable structural parameters are set first, in Reconfiguration Mode
 * (host_reconf.c), so that the arrays they resize are checked and set at
 * their new size.
 *
 * Threads: the session thread (instances are used by one thread).
 */
#include "daemon/host_int.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/master/master_value.h"
#include "fmi/md_access.h"
#include "fmi/md_values.h"


char *hvalues_strdup(const struct proto_str *s)
{
        char *p;

        if (!s->ptr && s->len)
                return NULL;
        if (s->len && memchr(s->ptr, '\0', s->len))
                return NULL;
        p = malloc((size_t)s->len + 1);
        if (!p)
                return NULL;
        if (s->len)
                memcpy(p, s->ptr, s->len);
        p[s->len] = '\0';
        return p;
}

/* The reply code of an instance call that did not succeed, with its message. */
static int call_code(struct hvar *x, int r, const char *what, char *msg, size_t size)
{
        const char *why = inst_message(x->inst);

        if (r >= 0)
                snprintf(msg, size, "%s '%s' returned status %d%s%s", what, x->name, r,
                         why[0] ? ": " : "", why);
        else
                snprintf(msg, size, "%s '%s': %s", what, x->name, why[0] ? why : strerror(-r));
        switch (r) {
        case -EACCES:
        case -EPERM:
                return PROTO_E_STATE;
        case -EPROTOTYPE:
        case -E2BIG:
        case -ENODATA:
        case -EFBIG:
        case -EINVAL:
                return PROTO_E_TYPE;
        default:
                return PROTO_E_FAULT;
        }
}

static void put(struct pw *w, enum md_type ct, const void *vals, const size_t *sizes, size_t i)
{
        switch (ct) {
        case MD_FLOAT32: pw_f64(w, ((const float *)vals)[i]); break;
        case MD_FLOAT64: pw_f64(w, ((const double *)vals)[i]); break;
        case MD_INT8: pw_i64(w, ((const int8_t *)vals)[i]); break;
        case MD_INT16: pw_i64(w, ((const int16_t *)vals)[i]); break;
        case MD_INT32: pw_i64(w, ((const int32_t *)vals)[i]); break;
        case MD_INT64: pw_i64(w, ((const int64_t *)vals)[i]); break;
        case MD_UINT8: pw_u64(w, ((const uint8_t *)vals)[i]); break;
        case MD_UINT16: pw_u64(w, ((const uint16_t *)vals)[i]); break;
        case MD_UINT32: pw_u64(w, ((const uint32_t *)vals)[i]); break;
        case MD_UINT64: pw_u64(w, ((const uint64_t *)vals)[i]); break;
        case MD_BOOLEAN: pw_bool(w, ((const bool *)vals)[i]); break;
        case MD_STRING: pw_str(w, ((const char *const *)vals)[i] ? ((const char *const *)vals)[i] : ""); break;
        case MD_BINARY: pw_bin(w, ((const uint8_t *const *)vals)[i], sizes[i]); break;
        default: pw_nil(w); break;
        }
}

/* The steps instance comp has done (changes whenever it leaves Step Mode's set phase). */
static uint64_t inst_steps(struct hsess *hs, size_t comp)
{
        struct master_stats st;

        master_get_stats(hs->m, &st);
        return comp < st.n_insts ? st.insts[comp].steps : 0;
}

/* Unlink and free the kept value *p points to. */
static void setv_unlink(struct hsetv **p)
{
        struct hsetv *v = *p;

        *p = v->next;
        free(v->bytes);
        free(v);
}

void hvalues_forget(struct hsess *hs)
{
        while (hs->setv)
                setv_unlink(&hs->setv);
}

/* The value of (comp, var) set since comp last stepped, or NULL; drops stale ones. */
static struct hsetv *setv_find(struct hsess *hs, size_t comp, size_t var)
{
        struct hsetv **p = &hs->setv, *found = NULL;

        while (*p) {
                struct hsetv *v = *p;

                if (v->steps != inst_steps(hs, v->comp)) {
                        setv_unlink(p);
                        continue;
                }
                if (v->comp == comp && v->var == var)
                        found = v;
                p = &v->next;
        }
        return found;
}

static void put(struct pw *w, enum md_type ct, const void *vals, const size_t *sizes, size_t i);

/* Remember x's value as get would return it. Best effort: without it, get asks the worker. */
static void setv_keep(struct hsess *hs, const struct hvar *x)
{
        size_t var = (size_t)(x->v - hs->sc->components[x->comp].fmu->md->vars);
        struct hsetv *v = setv_find(hs, x->comp, var);
        struct pw w;

        if (pw_init(&w) < 0)
                return;
        if (x->array)
                pw_array(&w, (uint32_t)x->n);
        for (size_t i = 0; i < x->n; i++)
                put(&w, x->ct, x->vals, x->sizes, i);
        if (!v && (v = calloc(1, sizeof(*v)))) {
                v->comp = x->comp;
                v->var = var;
                v->next = hs->setv;
                hs->setv = v;
        }
        if (v) {
                free(v->bytes);
                v->bytes = pw_take(&w, &v->len);
                v->steps = inst_steps(hs, x->comp);
        }
        pw_fini(&w);
}

/* Write a kept value (element >= 0: that element of it) to w; false when it cannot be read back. */
static bool setv_put(const struct hsetv *v, int64_t element, struct pw *w)
{
        struct proto_limits lim;
        struct pv_doc doc = { 0 };
        bool ok;

        proto_limits_default(&lim);
        ok = v->bytes && pv_decode(v->bytes, v->len, &lim, &doc, NULL, 0) == 0;
        if (ok && element >= 0)
                ok = doc.root->type == PV_ARRAY && (uint64_t)element < doc.root->a.n;
        if (ok)
                pw_pv(w, element >= 0 ? &doc.root->a.items[element] : doc.root);
        pv_doc_fini(&doc);
        return ok;
}

/* Write the master's published values of x to w; false when it publishes none of x. */
static bool put_published(struct hsess *hs, const struct hvar *x, size_t var, struct pw *w)
{
        struct master_pub p;

        if (!hs->m || master_published(hs->m, x->comp, var, &p) < 0 || p.type != x->ct ||
            p.n != x->n)
                return false;
        if (x->element) {
                put(w, x->ct, p.vals, p.sizes, p.off + (size_t)x->index);
                return true;
        }
        if (x->array)
                pw_array(w, (uint32_t)x->n);
        for (size_t i = 0; i < x->n; i++)
                put(w, x->ct, p.vals, p.sizes, p.off + i);
        return true;
}

bool hvalues_peek_one(struct hsess *hs, const struct hvar *x, struct pw *w)
{
        size_t var = (size_t)(x->v - hs->sc->components[x->comp].fmu->md->vars);
        const struct hsetv *kept = setv_find(hs, x->comp, var);

        if (kept && setv_put(kept, x->element ? (int64_t)x->index : -1, w))
                return true;
        return put_published(hs, x, var, w);
}

int hvalues_get_one(struct hsess *hs, struct hvar *x, struct pw *w, char *msg, size_t size)
{
        size_t var = (size_t)(x->v - hs->sc->components[x->comp].fmu->md->vars);
        const struct hsetv *kept = setv_find(hs, x->comp, var);
        void *vals;
        size_t *sizes;
        int r;

        if (kept && setv_put(kept, x->element ? (int64_t)x->index : -1, w))
                return -1;
        if (put_published(hs, x, var, w))
                return -1;
        if (hvar_empty(x)) {
                pw_array(w, 0);
                return -1;
        }
        vals = calloc(x->n ? x->n : 1, mv_size(x->ct));
        sizes = calloc(x->n ? x->n : 1, sizeof(*sizes));
        if (!vals || !sizes) {
                free(vals);
                free(sizes);
                snprintf(msg, size, "out of memory");
                return PROTO_E_INTERNAL;
        }
        if (x->ct == MD_BINARY)
                r = inst_get_binary(x->inst, &x->v->vr, 1, sizes, (const uint8_t **)vals, x->n);
        else
                r = inst_get(x->inst, x->ct, &x->v->vr, 1, vals, x->n);
        if (r == INST_OK || r == INST_WARNING) {
                if (x->element) {
                        put(w, x->ct, vals, sizes, (size_t)x->index);
                } else {
                        if (x->array)
                                pw_array(w, (uint32_t)x->n);
                        for (size_t i = 0; i < x->n; i++)
                                put(w, x->ct, vals, sizes, i);
                }
                r = -1;
        } else {
                r = call_code(x, r, "get", msg, size);
        }
        free(vals);
        free(sizes);
        return r;
}

void hvalues_get(struct hsess *hs, const struct hcmd *c, const struct pv *args)
{
        char msg[HOST_MSG_MAX], err[256];
        struct proto_get a;
        void *mem = NULL;
        struct pw w;
        int code = -1;

        if (proto_get_decode(args, &a, &mem, err, sizeof(err)) < 0) {
                free(mem);
                host_reply_error(hs->h, c->token, c->id, PROTO_E_BAD_REQUEST, "%s", err);
                return;
        }
        if (pw_init(&w) < 0) {
                free(mem);
                host_reply_error(hs->h, c->token, c->id, PROTO_E_INTERNAL, "out of memory");
                return;
        }
        proto_reply_ok_begin(&w, c->id);
        /* Between points: the last completed one, also while running. */
        proto_get_result_begin_at(&w, a.n, hs->m ? master_time(hs->m) : hs->sc->experiment.start);
        for (uint32_t i = 0; i < a.n && code < 0; i++) {
                struct hvar x = { 0 };

                code = hvar_resolve(hs, &a.names[i], &x, msg, sizeof(msg));
                if (code < 0)
                        code = hvalues_get_one(hs, &x, &w, msg, sizeof(msg));
                hvar_fini(&x);
                /* Stop building as soon as the reply cannot be sent. */
                if (code < 0 && !host_reply_fits(hs->h, &w)) {
                        snprintf(msg, sizeof(msg), "the reply exceeds the limit of %zu bytes: "
                                 "%zu bytes with %u of the %u values asked for; ask for fewer",
                                 hs->h->opts.max_reply, pw_size(&w), i + 1, a.n);
                        code = PROTO_E_TOO_LARGE;
                }
        }
        free(mem);
        if (code < 0)
                host_reply_take(hs->h, c->token, c->id, &w);
        else
                host_reply_error(hs->h, c->token, c->id, (enum proto_err)code, "%s", msg);
        pw_fini(&w);
}

static const char *pv_type_name(const struct pv *v)
{
        static const char *const names[] = { "nil", "bool", "int", "uint", "float", "str", "bin",
                                             "array", "map" };

        return (unsigned)v->type < sizeof(names) / sizeof(names[0]) ? names[v->type] : "?";
}

/* Integer range of call type ct. */
static bool int_fits(enum md_type ct, int64_t i)
{
        switch (ct) {
        case MD_INT8: return i >= INT8_MIN && i <= INT8_MAX;
        case MD_INT16: return i >= INT16_MIN && i <= INT16_MAX;
        case MD_INT32: return i >= INT32_MIN && i <= INT32_MAX;
        default: return true;
        }
}

static bool uint_fits(enum md_type ct, uint64_t u)
{
        switch (ct) {
        case MD_UINT8: return u <= UINT8_MAX;
        case MD_UINT16: return u <= UINT16_MAX;
        case MD_UINT32: return u <= UINT32_MAX;
        default: return true;
        }
}

/* Element i of x from v; false when it does not fit. */
static bool take(struct hvar *x, size_t i, const struct pv *v)
{
        void *d = x->vals;
        double f;
        int64_t s;
        uint64_t u;

        switch (x->ct) {
        case MD_FLOAT32:
                if (v->type == PV_BOOL || pv_f64(v, &f) < 0 ||
                    (isfinite(f) && fabs(f) > FLT_MAX))
                        return false;
                if (v->type != PV_FLOAT && (double)(float)f != f)
                        return false;   /* an integer must be exact */
                ((float *)d)[i] = (float)f;
                return true;
        case MD_FLOAT64:
                if (v->type == PV_BOOL || pv_f64(v, &f) < 0)
                        return false;
                ((double *)d)[i] = f;
                return true;
        case MD_INT8: case MD_INT16: case MD_INT32: case MD_INT64:
                if ((v->type != PV_INT && v->type != PV_UINT) || pv_i64(v, &s) < 0 ||
                    !int_fits(x->ct, s))
                        return false;
                if (x->ct == MD_INT8) ((int8_t *)d)[i] = (int8_t)s;
                else if (x->ct == MD_INT16) ((int16_t *)d)[i] = (int16_t)s;
                else if (x->ct == MD_INT32) ((int32_t *)d)[i] = (int32_t)s;
                else ((int64_t *)d)[i] = s;
                return true;
        case MD_UINT8: case MD_UINT16: case MD_UINT32: case MD_UINT64:
                if ((v->type != PV_INT && v->type != PV_UINT) || pv_u64(v, &u) < 0 ||
                    !uint_fits(x->ct, u))
                        return false;
                if (x->ct == MD_UINT8) ((uint8_t *)d)[i] = (uint8_t)u;
                else if (x->ct == MD_UINT16) ((uint16_t *)d)[i] = (uint16_t)u;
                else if (x->ct == MD_UINT32) ((uint32_t *)d)[i] = (uint32_t)u;
                else ((uint64_t *)d)[i] = u;
                return true;
        case MD_BOOLEAN:
                if (v->type != PV_BOOL)
                        return false;
                ((bool *)d)[i] = v->b;
                return true;
        case MD_STRING:
                if (v->type != PV_STR)
                        return false;
                return (((char **)d)[i] = pv_strdup(v)) != NULL;
        case MD_BINARY:
                if (v->type != PV_BIN)
                        return false;
                ((void **)d)[i] = malloc(v->s.len ? v->s.len : 1);
                if (!((void **)d)[i])
                        return false;
                if (v->s.len)
                        memcpy(((void **)d)[i], v->s.ptr, v->s.len);
                x->sizes[i] = v->s.len;
                return true;
        default:
                return false;
        }
}

/* Convert value into x; -1 or the reply code with msg. */
static int convert(struct hvar *x, const struct pv *value, char *msg, size_t size)
{
        const struct pv *items = value;
        size_t n = 1;

        x->vals = calloc(x->n ? x->n : 1, mv_size(x->ct));
        x->sizes = calloc(x->n ? x->n : 1, sizeof(*x->sizes));
        if (!x->vals || !x->sizes) {
                snprintf(msg, size, "out of memory");
                return PROTO_E_INTERNAL;
        }
        if (x->array) {
                if (value->type != PV_ARRAY || value->a.n != x->n) {
                        snprintf(msg, size, "'%s' is an array of %zu %s values; got %s%s", x->name,
                                 x->n, md_type_name(x->v->type), pv_type_name(value),
                                 value->type == PV_ARRAY ? " of another length" : "");
                        return PROTO_E_TYPE;
                }
                items = value->a.items;
                n = x->n;
        }
        for (size_t i = 0; i < n; i++) {
                const char *why;
                double f;

                if ((x->ct == MD_FLOAT32 || x->ct == MD_FLOAT64) && items[i].type != PV_BOOL &&
                    pv_f64(&items[i], &f) == 0 && (why = mv_float_refusal(x->ct, f))) {
                        snprintf(msg, size, "'%s' (%s): %g is refused: %s", x->name,
                                 md_type_name(x->v->type), f, why);
                        return PROTO_E_TYPE;
                }
                if (!take(x, i, &items[i])) {
                        snprintf(msg, size, "'%s' is %s; %s %s does not fit", x->name,
                                 md_type_name(x->v->type),
                                 items[i].type == PV_INT || items[i].type == PV_UINT ?
                                 "the value of type" : "a value of type", pv_type_name(&items[i]));
                        return PROTO_E_TYPE;
                }
        }
        return -1;
}

/*
 * FMI's rule for a set between points (fmi/md_access.h), checked here for
 * the whole request before the first value goes out: the worker would
 * refuse the value too, but only after the values before it were made.
 * Structural parameters go through Reconfiguration Mode (host_reconf.c);
 * a Scheduled Execution FMU has its own modes, which its worker checks.
 */
static int set_allowed(struct hsess *hs, const struct hvar *x, char *msg, size_t size)
{
        const struct md *md = hs->sc->components[x->comp].fmu->md;
        const char *why;

        if (md->hosted_se || x->v->causality == MD_CAUSALITY_STRUCTURAL_PARAMETER)
                return -1;
        why = md_step_set_refusal(x->v);
        /* Between points no Clock is active: clocked variables wait for Event Mode (2.2.8). */
        if (!why && x->v->n_clocks > 0)
                why = "is clocked: it can only be set in Event Mode and Initialization Mode";
        if (!why)
                return -1;
        snprintf(msg, size, "'%s' %s (FMI %s section %s)", x->name, why,
                 md->fmi == MD_FMI2 ? "2.0" : "3.0", md->fmi == MD_FMI2 ? "4.2.4" : "2.2.7.2");
        return PROTO_E_INVALID;
}

/* Resolve and convert value k of a set into x: -1, or the reply code with msg. */
static int set_prepare(struct hsess *hs, const struct proto_named_value *nv, struct hvar *x,
                       char *msg, size_t size)
{
        int code = hvar_resolve(hs, &nv->name, x, msg, size);

        if (code < 0 && x->element) {
                /* FMI sets whole variables: one element would need a read first. */
                snprintf(msg, size, "'%s' is an element: set takes the whole array (%zu values)",
                         x->name, x->n);
                code = PROTO_E_TYPE;
        }
        if (code < 0)
                code = hvar_set_by_master(hs, x, msg, size);
        if (code < 0)
                code = set_allowed(hs, x, msg, size);
        if (code < 0)
                code = convert(x, nv->value, msg, size);
        return code;
}

/* nv names a structural parameter. */
static bool is_structural(struct hsess *hs, const struct proto_named_value *nv)
{
        char msg[64];
        struct hvar x = { 0 };
        bool yes = hvar_resolve(hs, &nv->name, &x, msg, sizeof(msg)) < 0 &&
                   x.v->causality == MD_CAUSALITY_STRUCTURAL_PARAMETER;

        hvar_fini(&x);
        return yes;
}

/* Forget the values kept of the arrays rc resized: they are no longer the FMU's (2.4.7.3). */
static void setv_drop_resized(struct hsess *hs, const struct hreconf *rc)
{
        for (size_t i = 0; i < rc->n_resized; i++) {
                struct hsetv **p = &hs->setv;

                while (*p) {
                        if ((*p)->comp == rc->resized[i].comp && (*p)->var == rc->resized[i].var)
                                setv_unlink(p);
                        else
                                p = &(*p)->next;
                }
        }
}

/* What may change only in Event Mode where the FMU uses it (FMI 3.0 section 2.4.7.4). */
static bool event_only(const struct hvar *x)
{
        return (x->v->causality == MD_CAUSALITY_INPUT &&
                x->v->variability == MD_VARIABILITY_DISCRETE) ||
               (x->v->causality == MD_CAUSALITY_PARAMETER &&
                x->v->variability == MD_VARIABILITY_TUNABLE);
}

/*
 * An Event Mode for each instance whose values of the set may change only
 * there (master_set_event_begin()); *ret_opened: which (NULL: none). -1,
 * or the reply code with msg: the session faulted.
 */
static int open_events(struct hsess *hs, const struct hvar *xs, size_t n, bool **ret_opened,
                       char *msg, size_t size)
{
        bool *opened = NULL;

        *ret_opened = NULL;
        for (size_t i = 0; hs->m && i < n; i++) {
                const struct hvar *x = &xs[i];
                int r;

                if (!event_only(x) || (opened && opened[x->comp]))
                        continue;
                if (!opened && !(opened = calloc(hs->sc->n_components, sizeof(*opened)))) {
                        snprintf(msg, size, "out of memory");
                        return PROTO_E_INTERNAL;
                }
                *ret_opened = opened;
                r = master_set_event_begin(hs->m, x->comp);
                if (r < 0) {
                        snprintf(msg, size, "%s", master_message(hs->m));
                        return PROTO_E_FAULT;
                }
                opened[x->comp] = r > 0;
        }
        return -1;
}

/* Back to Step Mode where open_events() entered Event Mode; frees opened. */
static void close_events(struct hsess *hs, bool *opened, int *code, char *msg, size_t size)
{
        for (size_t i = 0; opened && i < hs->sc->n_components; i++) {
                int r;

                if (!opened[i] || master_state(hs->m) == MASTER_FAULTED)
                        continue;
                r = master_set_event_end(hs->m, i);
                if (r < 0 && *code < 0) {
                        *code = PROTO_E_FAULT;
                        snprintf(msg, size, "%s", master_message(hs->m));
                }
        }
        free(opened);
}

void hvalues_set(struct hsess *hs, const struct hcmd *c, const struct pv *args)
{
        char msg[HOST_MSG_MAX], err[256];
        struct hreconf rc = { 0 };
        struct hvar *xs = NULL;
        bool *opened = NULL;
        enum master_state before = hs->m ? master_state(hs->m) : MASTER_LOADED;
        struct proto_set a;
        void *mem = NULL;
        uint32_t k = 0;
        int code = -1;
        struct pw w;

        if (proto_set_decode(args, &a, &mem, err, sizeof(err)) < 0) {
                free(mem);
                host_reply_error(hs->h, c->token, c->id, PROTO_E_BAD_REQUEST, "%s", err);
                return;
        }
        xs = calloc(a.n ? a.n : 1, sizeof(*xs));
        if (!xs) {
                code = PROTO_E_INTERNAL;
                snprintf(msg, sizeof(msg), "out of memory");
        }
        /*
         * Every value checked before the first is applied: structural
         * parameters first, so that arrays they resize are checked at
         * their new size (host_reconf.c).
         */
        for (uint32_t j = 0; xs && j < a.n && code < 0; j++)
                if (is_structural(hs, &a.values[j]))
                        code = set_prepare(hs, &a.values[j], &xs[j], msg, sizeof(msg));
        if (xs && code < 0 && hreconf_any(xs, a.n))
                code = hreconf_plan(hs, xs, a.n, &rc, msg, sizeof(msg));
        for (; xs && k < a.n && code < 0; k++)
                if (!xs[k].name)
                        code = set_prepare(hs, &a.values[k], &xs[k], msg, sizeof(msg));
        if (xs && code < 0)
                code = hvar_set_twice(xs, a.n, msg, sizeof(msg));
        if (code >= 0) {
                hreconf_undo(hs, &rc);
        } else if (hreconf_any(xs, a.n)) {
                code = hreconf_apply(hs, xs, a.n, &rc, msg, sizeof(msg));
                setv_drop_resized(hs, &rc);
                /* Gets after the Step Mode sets below answer the parameters from here too. */
                for (uint32_t i = 0; i < a.n; i++)
                        if (xs[i].v->causality == MD_CAUSALITY_STRUCTURAL_PARAMETER &&
                            (code < 0 || hreconf_done(&rc, &xs[i])))
                                setv_keep(hs, &xs[i]);
        }
        if (xs && code < 0)
                code = open_events(hs, xs, a.n, &opened, msg, sizeof(msg));
        for (uint32_t i = 0; xs && i < a.n && code < 0; i++) {
                struct hvar *x = &xs[i];
                int r;

                if (x->v->causality == MD_CAUSALITY_STRUCTURAL_PARAMETER)
                        continue;       /* set in Reconfiguration Mode */
                r = hvar_apply(x);
                if (r != INST_OK && r != INST_WARNING)
                        code = call_code(x, r, "set", msg, sizeof(msg));
                else
                        setv_keep(hs, x);
        }
        close_events(hs, opened, &code, msg, sizeof(msg));
        hreconf_fini(&rc);
        for (uint32_t i = 0; xs && i < a.n; i++)
                hvar_fini(&xs[i]);
        free(xs);
        free(mem);
        /* The set's Event Mode faulted, or an FMU asked to terminate there (not a stop). */
        if (hs->m && master_state(hs->m) != before)
                hsess_follow(hs);
        if (code >= 0) {
                host_reply_error(hs->h, c->token, c->id, (enum proto_err)code, "%s", msg);
                return;
        }
        if (pw_init(&w) < 0)
                return;
        proto_reply_ok_begin(&w, c->id);
        proto_set_result_encode(&w, hs->m ? master_time(hs->m) : hs->sc->experiment.start);
        host_reply_take(hs->h, c->token, c->id, &w);
        pw_fini(&w);
}
