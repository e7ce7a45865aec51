/*
 * ops_fmi: instantiate, fmi, free and detach (proto_fmi.h, PROTOCOL.md).
 *
 * DESIGN: a call's keys are those of one table (decoded by fields_decode()
 * into struct proto_fmi_call), and each function admits only its own: a
 * key another function takes is refused by name, so a misspelt call never
 * runs with defaults. Arrays (vrs, values, knowns, seed) are checked here
 * element by element against the call's type and the bounds, and stay
 * borrowed from the request; the daemon copies them when it makes the call.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "proto/proto_int.h"

static const struct field inst_fields[] = {
        FIELD("fmu", FT_STR, FF_PATH | FF_OMIT, struct proto_instantiate, fmu),
        FIELD("content", FT_STR, FF_NAME | FF_OMIT, struct proto_instantiate, content),
        FIELD("instanceName", FT_STR, FF_NAME | FF_OMIT, struct proto_instantiate,
              instance_name),
        FIELD("interface", FT_STR, FF_NAME | FF_OMIT, struct proto_instantiate, interface),
        FIELD("sandbox", FT_STR, FF_NAME | FF_OMIT, struct proto_instantiate, sandbox),
        FIELD("visible", FT_BOOL, FF_OMIT, struct proto_instantiate, visible),
        FIELD("loggingOn", FT_BOOL, FF_OMIT, struct proto_instantiate, logging_on),
        FIELD("eventModeUsed", FT_BOOL, FF_OMIT, struct proto_instantiate, event_mode_used),
        FIELD("earlyReturnAllowed", FT_BOOL, FF_OMIT, struct proto_instantiate,
              early_return_allowed),
        FIELD("transient", FT_BOOL, FF_OMIT, struct proto_instantiate, transient),
};

void proto_instantiate_encode(struct pw *w, uint64_t id, const struct proto_instantiate *a)
{
        req_encode(w, id, PROTO_OP_INSTANTIATE, inst_fields, N_FIELDS(inst_fields), a, 0);
}

int proto_instantiate_decode(const struct pv *args, struct proto_instantiate *ret, char *err,
                             size_t errlen)
{
        struct proto_instantiate a = { 0 };
        int r;

        r = req_decode(args, inst_fields, N_FIELDS(inst_fields), &a, err, errlen);
        if (r < 0)
                return r;
        if (!a.fmu.len && !a.content.len)
                return proto_fail(err, errlen, "args.fmu: missing");
        if (a.fmu.len && a.content.len)
                return proto_fail(err, errlen, "args.content: not with args.fmu");
        if (a.content.len && !proto_sha256_valid(a.content))
                return proto_fail(err, errlen, "args.content: expected a SHA-256, 64 lowercase "
                                  "hex digits");
        if (a.instance_name.len > 255)
                return proto_fail(err, errlen, "args.instanceName: longer than 255 bytes");
        if (a.interface.len && !pstr_is(a.interface, "cs"))
                return proto_fail(err, errlen, "args.interface: expected \"cs\" (Co-Simulation)");
        if (a.sandbox.len && !pstr_is(a.sandbox, "strict") && !pstr_is(a.sandbox, "basic") &&
            !pstr_is(a.sandbox, "off"))
                return proto_fail(err, errlen,
                                  "args.sandbox: expected \"strict\", \"basic\" or \"off\"");
        *ret = a;
        return 0;
}

static const struct field free_fields[] = {
        FIELD("instance", FT_U64, FF_REQ, struct proto_instance_ref, instance),
};

void proto_free_encode(struct pw *w, uint64_t id, uint64_t instance)
{
        struct proto_instance_ref a = { instance };

        req_encode(w, id, PROTO_OP_FREE, free_fields, N_FIELDS(free_fields), &a, 0);
}

int proto_free_decode(const struct pv *args, struct proto_instance_ref *ret, char *err,
                      size_t errlen)
{
        struct proto_instance_ref a = { 0 };
        int r = req_decode(args, free_fields, N_FIELDS(free_fields), &a, err, errlen);

        if (r == 0)
                *ret = a;
        return r;
}

struct detach_args {
        bool has_session, has_instance;
        uint64_t session, instance;
};

static const struct field detach_fields[] = {
        FIELD_HAS("session", FT_U64, 0, struct detach_args, session, has_session),
        FIELD_HAS("instance", FT_U64, 0, struct detach_args, instance, has_instance),
};

void proto_detach_encode(struct pw *w, uint64_t id, uint64_t session)
{
        struct detach_args a = { .has_session = true, .session = session };

        req_encode(w, id, PROTO_OP_DETACH, detach_fields, N_FIELDS(detach_fields), &a, 0);
}

int proto_detach_decode(const struct pv *args, struct proto_instance_ref *ret, char *err,
                        size_t errlen)
{
        struct detach_args a = { 0 };
        int r = req_decode(args, detach_fields, N_FIELDS(detach_fields), &a, err, errlen);

        if (r < 0)
                return r;
        if (a.has_session == a.has_instance)
                return proto_fail(err, errlen, "args: expected session or instance (one of them)");
        ret->instance = a.has_session ? a.session : a.instance;
        return 0;
}

/* ---- fmi ------------------------------------------------------------------- */

static const char *const fn_names[PROTO_FMI_FN_COUNT] = {
        [PROTO_FMI_SET] = "set",
        [PROTO_FMI_GET] = "get",
        [PROTO_FMI_DO_STEP] = "doStep",
        [PROTO_FMI_ENTER_INIT] = "enterInitializationMode",
        [PROTO_FMI_EXIT_INIT] = "exitInitializationMode",
        [PROTO_FMI_ENTER_EVENT] = "enterEventMode",
        [PROTO_FMI_ENTER_STEP] = "enterStepMode",
        [PROTO_FMI_UPDATE_DISCRETE] = "updateDiscreteStates",
        [PROTO_FMI_GET_STATE] = "getFMUState",
        [PROTO_FMI_SET_STATE] = "setFMUState",
        [PROTO_FMI_FREE_STATE] = "freeFMUState",
        [PROTO_FMI_SERIALIZE] = "serializeFMUState",
        [PROTO_FMI_DESERIALIZE] = "deserializeFMUState",
        [PROTO_FMI_DIRECTIONAL] = "getDirectionalDerivative",
        [PROTO_FMI_ADJOINT] = "getAdjointDerivative",
        [PROTO_FMI_RESET] = "reset",
        [PROTO_FMI_TERMINATE] = "terminate",
        [PROTO_FMI_ENTER_CONFIG] = "enterConfigurationMode",
        [PROTO_FMI_EXIT_CONFIG] = "exitConfigurationMode",
};

static const char *const type_names[PROTO_FMI_TYPE_COUNT] = {
        [PROTO_FMI_FLOAT32] = "Float32", [PROTO_FMI_FLOAT64] = "Float64",
        [PROTO_FMI_INT8] = "Int8",       [PROTO_FMI_UINT8] = "UInt8",
        [PROTO_FMI_INT16] = "Int16",     [PROTO_FMI_UINT16] = "UInt16",
        [PROTO_FMI_INT32] = "Int32",     [PROTO_FMI_UINT32] = "UInt32",
        [PROTO_FMI_INT64] = "Int64",     [PROTO_FMI_UINT64] = "UInt64",
        [PROTO_FMI_BOOLEAN] = "Boolean", [PROTO_FMI_STRING] = "String",
        [PROTO_FMI_BINARY] = "Binary",
};

const char *proto_fmi_fn_name(enum proto_fmi_fn fn)
{
        return (unsigned)fn < PROTO_FMI_FN_COUNT ? fn_names[fn] : NULL;
}

const char *proto_fmi_type_name(enum proto_fmi_type t)
{
        return (unsigned)t < PROTO_FMI_TYPE_COUNT ? type_names[t] : NULL;
}

static const struct field call_fields[] = {
        FIELD("instance", FT_U64, FF_REQ, struct proto_fmi_call, instance),
        FIELD_EXT("fn"),
        FIELD_EXT("type"),
        FIELD_EXT("vrs"),
        FIELD_EXT("values"),
        FIELD_HAS("nValues", FT_U32, 0, struct proto_fmi_call, n_values, has_n_values),
        FIELD("t", FT_F64, FF_FINITE, struct proto_fmi_call, t),
        FIELD("h", FT_F64, FF_FINITE | FF_NONNEG, struct proto_fmi_call, h),
        FIELD("noSetFMUStatePriorToCurrentPoint", FT_BOOL, 0, struct proto_fmi_call,
              no_set_prior),
        FIELD_HAS("tolerance", FT_F64, FF_FINITE, struct proto_fmi_call, tolerance,
                  has_tolerance),
        FIELD_HAS("startTime", FT_F64, FF_FINITE, struct proto_fmi_call, start, has_start),
        FIELD_HAS("stopTime", FT_F64, FF_FINITE, struct proto_fmi_call, stop, has_stop),
        FIELD("state", FT_U64, 0, struct proto_fmi_call, state),
        FIELD_EXT("bytes"),
        FIELD_EXT("unknowns"),
        FIELD_EXT("knowns"),
        FIELD_EXT("seed"),
};

/* The keys each function takes beyond instance and fn (space separated, each with spaces around). */
static const char *const fn_keys[PROTO_FMI_FN_COUNT] = {
        [PROTO_FMI_SET] = " type vrs values ",
        [PROTO_FMI_GET] = " type vrs nValues ",
        [PROTO_FMI_DO_STEP] = " t h noSetFMUStatePriorToCurrentPoint ",
        [PROTO_FMI_ENTER_INIT] = " tolerance startTime stopTime ",
        [PROTO_FMI_GET_STATE] = " state ",
        [PROTO_FMI_SET_STATE] = " state ",
        [PROTO_FMI_FREE_STATE] = " state ",
        [PROTO_FMI_SERIALIZE] = " state ",
        [PROTO_FMI_DESERIALIZE] = " bytes ",
        [PROTO_FMI_DIRECTIONAL] = " unknowns knowns seed ",
        [PROTO_FMI_ADJOINT] = " unknowns knowns seed ",
};

static bool takes(enum proto_fmi_fn fn, const struct pv *key)
{
        const char *k = fn_keys[fn], *p;

        if (pv_is_str(key, "instance") || pv_is_str(key, "fn"))
                return true;
        for (p = k ? strchr(k, ' ') : NULL; p && p[1]; p = strchr(p + 1, ' '))
                if (!strncmp(p + 1, key->s.ptr, key->s.len) && p[1 + key->s.len] == ' ')
                        return true;
        return false;
}

/* A name of table (n entries) spelt by v: its index, or -1. */
static int name_of(const struct pv *v, const char *const *table, int n)
{
        for (int i = 0; v && v->type == PV_STR && i < n; i++)
                if (pv_is_str(v, table[i]))
                        return i;
        return -1;
}

/* An array of at most PROTO_FMI_MAX_VALUES value references under key: its count, or -EBADMSG. */
static int vrs_check(const struct pv *v, const char *what, const char *key, char *err,
                     size_t errlen)
{
        if (!v || v->type != PV_ARRAY)
                return proto_fail(err, errlen, "%s.%s: expected an array of value references",
                                  what, key);
        if (v->a.n > PROTO_FMI_MAX_VALUES)
                return proto_fail(err, errlen, "%s.%s: %u value references, more than %u",
                                  what, key, v->a.n, PROTO_FMI_MAX_VALUES);
        for (uint32_t i = 0; i < v->a.n; i++) {
                uint64_t u;

                if (pv_u64(&v->a.items[i], &u) < 0 || u > UINT32_MAX)
                        return proto_fail(err, errlen, "%s.%s[%u]: expected a value reference "
                                          "(0 to 4294967295)", what, key, i);
        }
        return (int)v->a.n;
}

/* Whether integer v fits type t. */
static bool int_fits(const struct pv *v, enum proto_fmi_type t)
{
        static const int64_t lo[] = { [PROTO_FMI_INT8] = INT8_MIN, [PROTO_FMI_INT16] = INT16_MIN,
                                      [PROTO_FMI_INT32] = INT32_MIN };
        static const int64_t hi[] = { [PROTO_FMI_INT8] = INT8_MAX, [PROTO_FMI_INT16] = INT16_MAX,
                                      [PROTO_FMI_INT32] = INT32_MAX };
        static const uint64_t uhi[] = { [PROTO_FMI_UINT8] = UINT8_MAX,
                                        [PROTO_FMI_UINT16] = UINT16_MAX,
                                        [PROTO_FMI_UINT32] = UINT32_MAX };
        int64_t i;
        uint64_t u;

        switch (t) {
        case PROTO_FMI_INT8:
        case PROTO_FMI_INT16:
        case PROTO_FMI_INT32:
                return pv_i64(v, &i) == 0 && i >= lo[t] && i <= hi[t];
        case PROTO_FMI_INT64:
                return pv_i64(v, &i) == 0;
        case PROTO_FMI_UINT8:
        case PROTO_FMI_UINT16:
        case PROTO_FMI_UINT32:
                return pv_u64(v, &u) == 0 && u <= uhi[t];
        case PROTO_FMI_UINT64:
                return pv_u64(v, &u) == 0;
        default:
                return false;
        }
}

/* set's values: one per element of the vrs' variables, each of the call's type. */
static int values_check(struct proto_fmi_call *c, const char *what, char *err,
                        size_t errlen)
{
        const struct pv *v = c->values;
        const char *tn = type_names[c->type];

        if (!v || v->type != PV_ARRAY)
                return proto_fail(err, errlen, "%s.values: expected an array", what);
        /*
         * As many as the variables have elements, which the worker checks;
         * an array a structural parameter sized 0 has none (FMI 3.0
         * section 2.4.7.2).
         */
        if (v->a.n > PROTO_FMI_MAX_ELEMENTS)
                return proto_fail(err, errlen, "%s.values: %u values for %u value references "
                                  "(one per element, at most %u)", what, v->a.n, c->n_vrs,
                                  PROTO_FMI_MAX_ELEMENTS);
        c->n_values = v->a.n;
        for (uint32_t i = 0; i < v->a.n; i++) {
                const struct pv *e = &v->a.items[i];
                double d;
                bool ok;

                switch (c->type) {
                case PROTO_FMI_FLOAT32:
                case PROTO_FMI_FLOAT64:
                        ok = pv_f64(e, &d) == 0;
                        break;
                case PROTO_FMI_BOOLEAN:
                        ok = e->type == PV_BOOL;
                        break;
                case PROTO_FMI_STRING:
                        ok = e->type == PV_STR && !has_nul(e->s.ptr, e->s.len);
                        break;
                case PROTO_FMI_BINARY:
                        ok = e->type == PV_BIN && e->s.len <= PROTO_FMI_MAX_BIN;
                        break;
                default:
                        ok = int_fits(e, c->type);
                        break;
                }
                if (!ok)
                        return proto_fail(err, errlen, "%s.values[%u]: not a value of type %s%s",
                                          what, i, tn,
                                          c->type == PROTO_FMI_BINARY ? " (bin)" : "");
        }
        return 0;
}

static int derivative_check(struct proto_fmi_call *c, const struct pv *m, const char *what,
                            char *err, size_t errlen)
{
        const struct pv *u = pv_get(m, "unknowns");
        int n;

        n = vrs_check(u, what, "unknowns", err, errlen);
        if (n < 0)
                return n;
        c->vrs = u;
        c->n_vrs = (uint32_t)n;
        c->knowns = pv_get(m, "knowns");
        n = vrs_check(c->knowns, what, "knowns", err, errlen);
        if (n < 0)
                return n;
        c->n_knowns = (uint32_t)n;
        c->seed = pv_get(m, "seed");
        if (!c->seed || c->seed->type != PV_ARRAY || c->seed->a.n != c->n_knowns)
                return proto_fail(err, errlen, "%s.seed: expected an array of %u numbers (one per "
                                  "known)", what, c->n_knowns);
        for (uint32_t i = 0; i < c->seed->a.n; i++) {
                double d;

                if (pv_f64(&c->seed->a.items[i], &d) < 0)
                        return proto_fail(err, errlen, "%s.seed[%u]: expected a number", what, i);
        }
        return 0;
}

static int call_decode(const struct pv *m, uint32_t index, struct proto_fmi_call *c, char *err,
                       size_t errlen)
{
        char what[48];
        int fn, n, r;

        snprintf(what, sizeof(what), "args.calls[%u]", index);
        if (m->type != PV_MAP)
                return proto_fail(err, errlen, "%s: expected a map", what);
        fn = name_of(pv_get(m, "fn"), fn_names, PROTO_FMI_FN_COUNT);
        if (fn < 0)
                return proto_fail(err, errlen, "%s.fn: expected an FMI function: \"set\", \"get\", "
                                  "\"doStep\", \"enterInitializationMode\", ... (PROTOCOL.md)",
                                  what);
        *c = (struct proto_fmi_call){ .fn = (enum proto_fmi_fn)fn };
        r = fields_decode(m, what, call_fields, N_FIELDS(call_fields), c, true, err, errlen);
        if (r < 0)
                return r;
        for (uint32_t i = 0; i < m->m.n; i++)
                if (!takes(c->fn, m->m.kv[i].key))
                        return proto_fail(err, errlen, "%s.%.*s: %s takes no such argument", what,
                                          (int)m->m.kv[i].key->s.len, m->m.kv[i].key->s.ptr,
                                          fn_names[fn]);
        switch (c->fn) {
        case PROTO_FMI_SET:
        case PROTO_FMI_GET: {
                int t = name_of(pv_get(m, "type"), type_names, PROTO_FMI_TYPE_COUNT);

                if (t < 0)
                        return proto_fail(err, errlen, "%s.type: expected Float32, Float64, Int8, "
                                          "UInt8, Int16, UInt16, Int32, UInt32, Int64, UInt64, "
                                          "Boolean, String or Binary", what);
                c->type = (enum proto_fmi_type)t;
                c->vrs = pv_get(m, "vrs");
                n = vrs_check(c->vrs, what, "vrs", err, errlen);
                if (n < 0)
                        return n;
                c->n_vrs = (uint32_t)n;
                if (c->fn == PROTO_FMI_SET) {
                        c->values = pv_get(m, "values");
                        return values_check(c, what, err, errlen);
                }
                if (!c->has_n_values)
                        c->n_values = c->n_vrs;
                if (c->n_values > PROTO_FMI_MAX_ELEMENTS)
                        return proto_fail(err, errlen, "%s.nValues: %u for %u value references "
                                          "(one per element, at most %u)", what, c->n_values,
                                          c->n_vrs, PROTO_FMI_MAX_ELEMENTS);
                return 0;
        }
        case PROTO_FMI_DO_STEP:
                if (!pv_get(m, "t") || !pv_get(m, "h"))
                        return proto_fail(err, errlen, "%s: doStep needs t and h", what);
                return 0;
        case PROTO_FMI_SET_STATE:
        case PROTO_FMI_FREE_STATE:
        case PROTO_FMI_SERIALIZE:
                if (!pv_get(m, "state"))
                        return proto_fail(err, errlen, "%s.state: missing", what);
                return 0;
        case PROTO_FMI_DESERIALIZE: {
                const struct pv *b = pv_get(m, "bytes");

                if (!b || b->type != PV_BIN)
                        return proto_fail(err, errlen, "%s.bytes: expected binary", what);
                if (b->s.len > PROTO_FMI_MAX_BIN)
                        return proto_fail(err, errlen, "%s.bytes: more than %u bytes", what,
                                          PROTO_FMI_MAX_BIN);
                c->bytes = (struct proto_str){ b->s.ptr, b->s.len };
                return 0;
        }
        case PROTO_FMI_DIRECTIONAL:
        case PROTO_FMI_ADJOINT:
                return derivative_check(c, m, what, err, errlen);
        default:
                return 0;
        }
}

int proto_fmi_decode(const struct pv *args, struct proto_fmi *ret, void **mem, char *err,
                     size_t errlen)
{
        const struct pv *calls;
        struct proto_fmi_call *v;

        *mem = NULL;
        if (!args || args->type != PV_MAP)
                return proto_fail(err, errlen, "args: expected a map");
        for (uint32_t i = 0; i < args->m.n; i++) {
                const struct pv *k = args->m.kv[i].key;
                char q[80];

                if (pv_is_str(k, "calls"))
                        continue;
                if (k->type != PV_STR)
                        return proto_fail(err, errlen, "args: a key that is not a string");
                proto_quote(q, sizeof(q), k->s.ptr, k->s.len);
                return proto_fail(err, errlen, "args: unknown key '%s' (fmi takes calls)", q);
        }
        calls = pv_get(args, "calls");
        if (!calls || calls->type != PV_ARRAY || calls->a.n == 0)
                return proto_fail(err, errlen, "args.calls: expected an array of calls");
        if (calls->a.n > PROTO_FMI_MAX_CALLS)
                return proto_fail(err, errlen, "args.calls: %u calls, more than %u in one batch",
                                  calls->a.n, PROTO_FMI_MAX_CALLS);
        v = calloc(calls->a.n, sizeof(*v));
        if (!v) {
                proto_fail(err, errlen, "out of memory");
                return -ENOMEM;
        }
        for (uint32_t i = 0; i < calls->a.n; i++) {
                int r = call_decode(&calls->a.items[i], i, &v[i], err, errlen);

                if (r < 0) {
                        free(v);
                        return r;
                }
        }
        ret->n = calls->a.n;
        ret->calls = v;
        *mem = v;
        return 0;
}
