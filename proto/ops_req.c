/*
 * ops_req: the session operations' requests (hello and load are in their
 * own files): their keys, types and checks. Every decoder here is strict:
 * an unknown key in args is refused.
 */
#include <errno.h>
#include <stdlib.h>

#include "proto/proto.h"
#include "proto/proto_int.h"

#define TARGET_FIELDS(st)                                               \
        FIELD("session", FT_U64, 0, st, t.session),                     \
        FIELD("generation", FT_U64, 0, st, t.generation)

void req_encode(struct pw *w, uint64_t id, enum proto_op op, const struct field *f, size_t n,
                const void *base, uint32_t n_ext)
{
        proto_req_begin(w, id, op, fields_count(f, n, base) + n_ext);
        fields_encode(w, f, n, base);
}

int req_decode(const struct pv *args, const struct field *f, size_t n, void *base, char *err,
               size_t errlen)
{
        return fields_decode(args, "args", f, n, base, true, err, errlen);
}

/* ---- list, shutdown: no arguments ---- */

int proto_noargs_decode(const struct pv *args, char *err, size_t errlen)
{
        return req_decode(args, NULL, 0, NULL, err, errlen);
}

/* ---- target: unload, start, pause, resume, stop, snapshot, status ---- */

static const struct field target_fields[] = {
        FIELD("session", FT_U64, 0, struct proto_target, session),
        FIELD("generation", FT_U64, 0, struct proto_target, generation),
};

void proto_target_encode(struct pw *w, uint64_t id, enum proto_op op, const struct proto_target *t)
{
        req_encode(w, id, op, target_fields, N_FIELDS(target_fields), t, 0);
}

int proto_target_decode(const struct pv *args, struct proto_target *ret, char *err, size_t errlen)
{
        struct proto_target t = { 0 };
        int r;

        r = req_decode(args, target_fields, N_FIELDS(target_fields), &t, err, errlen);
        if (r < 0)
                return r;
        *ret = t;
        return 0;
}

/* ---- warp, step, run-until ---- */

static const struct field warp_fields[] = {
        TARGET_FIELDS(struct proto_warp),
        FIELD("factor", FT_F64, FF_REQ | FF_FINITE | FF_NONNEG, struct proto_warp, factor),
};

void proto_warp_encode(struct pw *w, uint64_t id, const struct proto_warp *a)
{
        req_encode(w, id, PROTO_OP_WARP, warp_fields, N_FIELDS(warp_fields), a, 0);
}

int proto_warp_decode(const struct pv *args, struct proto_warp *ret, char *err, size_t errlen)
{
        struct proto_warp a = { 0 };
        int r;

        r = req_decode(args, warp_fields, N_FIELDS(warp_fields), &a, err, errlen);
        if (r < 0)
                return r;
        *ret = a;
        return 0;
}

static const struct field step_fields[] = {
        TARGET_FIELDS(struct proto_step),
        FIELD("n", FT_U64, 0, struct proto_step, n),
};

void proto_step_encode(struct pw *w, uint64_t id, const struct proto_step *a)
{
        req_encode(w, id, PROTO_OP_STEP, step_fields, N_FIELDS(step_fields), a, 0);
}

int proto_step_decode(const struct pv *args, struct proto_step *ret, char *err, size_t errlen)
{
        struct proto_step a = { .n = 1 };
        int r;

        r = req_decode(args, step_fields, N_FIELDS(step_fields), &a, err, errlen);
        if (r < 0)
                return r;
        if (!a.n)
                return proto_fail(err, errlen, "args.n: must be at least 1");
        *ret = a;
        return 0;
}

static const struct field run_until_fields[] = {
        TARGET_FIELDS(struct proto_run_until),
        FIELD("time", FT_F64, FF_REQ | FF_FINITE, struct proto_run_until, time),
};

void proto_run_until_encode(struct pw *w, uint64_t id, const struct proto_run_until *a)
{
        req_encode(w, id, PROTO_OP_RUN_UNTIL, run_until_fields, N_FIELDS(run_until_fields), a, 0);
}

int proto_run_until_decode(const struct pv *args, struct proto_run_until *ret, char *err,
                           size_t errlen)
{
        struct proto_run_until a = { 0 };
        int r;

        r = req_decode(args, run_until_fields, N_FIELDS(run_until_fields), &a, err, errlen);
        if (r < 0)
                return r;
        *ret = a;
        return 0;
}

/* ---- get, subscribe, unsubscribe ---- */

static const struct field get_fields[] = {
        TARGET_FIELDS(struct proto_get),
        FIELD_EXT("names"),
};

void proto_get_encode(struct pw *w, uint64_t id, const struct proto_get *a)
{
        req_encode(w, id, PROTO_OP_GET, get_fields, N_FIELDS(get_fields), a, 1);
        strs_encode(w, "names", a->names, a->n);
}

/* names: an array of at most PROTO_MAX_NAMES strings, in a new block (*ret_mem). */
static int names_decode(const struct pv *v, bool required, uint32_t *ret_n,
                        const struct proto_str **ret_names, void **ret_mem, char *err,
                        size_t errlen)
{
        struct proto_str *names = NULL;
        int n;

        if (!v && required)
                return proto_fail(err, errlen, "args.names: missing");
        n = strs_check(v, "args", "names", PROTO_MAX_NAMES, err, errlen);
        if (n < 0)
                return n;
        if (n) {
                names = malloc((size_t)n * sizeof(*names));
                if (!names) {
                        proto_fail(err, errlen, "out of memory");
                        return -ENOMEM;
                }
                strs_fill(v, names);
        }
        *ret_n = (uint32_t)n;
        *ret_names = names;
        *ret_mem = names;
        return 0;
}

int proto_get_decode(const struct pv *args, struct proto_get *ret, void **mem, char *err,
                     size_t errlen)
{
        struct proto_get a = { 0 };
        int r;

        *mem = NULL;
        r = req_decode(args, get_fields, N_FIELDS(get_fields), &a, err, errlen);
        if (r < 0)
                return r;
        r = names_decode(pv_get(args, "names"), true, &a.n, &a.names, mem, err, errlen);
        if (r < 0)
                return r;
        *ret = a;
        return 0;
}

static const struct field subscribe_fields[] = {
        TARGET_FIELDS(struct proto_subscribe),
        FIELD("decimation", FT_U64, 0, struct proto_subscribe, decimation),
        FIELD("everyPoint", FT_BOOL, FF_OMIT, struct proto_subscribe, every_point),
        FIELD_EXT("names"),
};

void proto_subscribe_encode(struct pw *w, uint64_t id, const struct proto_subscribe *a)
{
        req_encode(w, id, PROTO_OP_SUBSCRIBE, subscribe_fields, N_FIELDS(subscribe_fields), a,
                   a->n ? 1 : 0);
        if (a->n)
                strs_encode(w, "names", a->names, a->n);
}

int proto_subscribe_decode(const struct pv *args, struct proto_subscribe *ret, void **mem,
                           char *err, size_t errlen)
{
        struct proto_subscribe a = { 0 };
        int r;

        *mem = NULL;
        r = req_decode(args, subscribe_fields, N_FIELDS(subscribe_fields), &a, err, errlen);
        if (r < 0)
                return r;
        r = names_decode(pv_get(args, "names"), false, &a.n, &a.names, mem, err, errlen);
        if (r < 0)
                return r;
        *ret = a;
        return 0;
}

static const struct field unsubscribe_fields[] = {
        TARGET_FIELDS(struct proto_unsubscribe),
        FIELD("topic", FT_STR, FF_REQ | FF_NAME, struct proto_unsubscribe, topic),
};

void proto_unsubscribe_encode(struct pw *w, uint64_t id, const struct proto_unsubscribe *a)
{
        req_encode(w, id, PROTO_OP_UNSUBSCRIBE, unsubscribe_fields, N_FIELDS(unsubscribe_fields),
                   a, 0);
}

int proto_unsubscribe_decode(const struct pv *args, struct proto_unsubscribe *ret, char *err,
                             size_t errlen)
{
        struct proto_unsubscribe a = { 0 };
        int r;

        r = req_decode(args, unsubscribe_fields, N_FIELDS(unsubscribe_fields), &a, err, errlen);
        if (r < 0)
                return r;
        *ret = a;
        return 0;
}

/* ---- set ---- */

static const struct field set_fields[] = {
        TARGET_FIELDS(struct proto_set),
        FIELD_EXT("values"),
};

void proto_set_encode(struct pw *w, uint64_t id, const struct proto_set *a)
{
        req_encode(w, id, PROTO_OP_SET, set_fields, N_FIELDS(set_fields), a, 1);
        pw_str(w, "values");
        pw_map(w, a->n);
        for (uint32_t i = 0; i < a->n; i++) {
                pw_pstr(w, a->values[i].name);
                if (a->values[i].value)
                        pw_pv(w, a->values[i].value);
                else
                        pw_nil(w);
        }
}

int proto_set_decode(const struct pv *args, struct proto_set *ret, void **mem, char *err,
                     size_t errlen)
{
        struct proto_named_value *nv = NULL;
        struct proto_set a = { 0 };
        const struct pv *v;
        int r;

        *mem = NULL;
        r = req_decode(args, set_fields, N_FIELDS(set_fields), &a, err, errlen);
        if (r < 0)
                return r;
        v = pv_get(args, "values");
        if (!v)
                return proto_fail(err, errlen, "args.values: missing");
        if (v->type != PV_MAP)
                return proto_fail(err, errlen, "args.values: expected a map of name to value");
        if (v->m.n > PROTO_MAX_NAMES)
                return proto_fail(err, errlen, "args.values: more than %u entries",
                                  PROTO_MAX_NAMES);
        for (uint32_t i = 0; i < v->m.n; i++) {
                const struct pv *k = v->m.kv[i].key;

                if (k->type != PV_STR)
                        return proto_fail(err, errlen, "args.values: a name that is not a string");
                if (has_nul(k->s.ptr, k->s.len))
                        return proto_fail(err, errlen, "args.values: a name with an embedded NUL");
        }
        if (v->m.n) {
                nv = malloc(v->m.n * sizeof(*nv));
                if (!nv) {
                        proto_fail(err, errlen, "out of memory");
                        return -ENOMEM;
                }
                for (uint32_t i = 0; i < v->m.n; i++)
                        nv[i] = (struct proto_named_value){ proto_str_of(v->m.kv[i].key),
                                                            v->m.kv[i].val };
        }
        a.n = v->m.n;
        a.values = nv;
        *mem = nv;
        *ret = a;
        return 0;
}

/* ---- restore ---- */

static const struct field restore_fields[] = {
        TARGET_FIELDS(struct proto_restore),
        FIELD("snapshot", FT_U64, FF_REQ, struct proto_restore, snapshot),
};

void proto_restore_encode(struct pw *w, uint64_t id, const struct proto_restore *a)
{
        req_encode(w, id, PROTO_OP_RESTORE, restore_fields, N_FIELDS(restore_fields), a, 0);
}

void proto_snapshot_delete_encode(struct pw *w, uint64_t id, const struct proto_restore *a)
{
        req_encode(w, id, PROTO_OP_SNAPSHOT_DELETE, restore_fields, N_FIELDS(restore_fields), a,
                   0);
}

int proto_restore_decode(const struct pv *args, struct proto_restore *ret, char *err,
                         size_t errlen)
{
        struct proto_restore a = { 0 };
        int r;

        r = req_decode(args, restore_fields, N_FIELDS(restore_fields), &a, err, errlen);
        if (r < 0)
                return r;
        *ret = a;
        return 0;
}
