/*
 * ops_result: the small results: progress (start, pause, resume, stop,
 * warp, step, run-until), restore's (progress and the new generation),
 * get, subscribe and snapshot. Result decoders
 * read a possibly hostile daemon's reply: as strict as the request side
 * except that keys they do not know are ignored.
 */
#include <errno.h>
#include <stdlib.h>

#include "proto/proto.h"
#include "proto/proto_int.h"

static const struct field progress_fields[] = {
        FIELD("state", FT_STATE, FF_REQ, struct proto_progress, state),
        FIELD("time", FT_F64, FF_REQ, struct proto_progress, time),
        FIELD("points", FT_U64, FF_REQ, struct proto_progress, points),
        FIELD("message", FT_STR, FF_OMIT, struct proto_progress, message),
};

void proto_progress_encode(struct pw *w, const struct proto_progress *r)
{
        res_encode(w, progress_fields, N_FIELDS(progress_fields), r, 0);
}

int proto_progress_decode(const struct pv *v, struct proto_progress *ret, char *err, size_t errlen)
{
        struct proto_progress a = { 0 };
        int r;

        r = res_decode(v, "result", progress_fields, N_FIELDS(progress_fields), &a, err, errlen);
        if (r < 0)
                return r;
        *ret = a;
        return 0;
}

static const struct field restore_result_fields[] = {
        FIELD("state", FT_STATE, FF_REQ, struct proto_restore_result, p.state),
        FIELD("time", FT_F64, FF_REQ, struct proto_restore_result, p.time),
        FIELD("points", FT_U64, FF_REQ, struct proto_restore_result, p.points),
        FIELD("message", FT_STR, FF_OMIT, struct proto_restore_result, p.message),
        FIELD("session", FT_U64, FF_REQ, struct proto_restore_result, session),
        FIELD("generation", FT_U64, FF_REQ, struct proto_restore_result, generation),
};

void proto_restore_result_encode(struct pw *w, const struct proto_restore_result *r)
{
        res_encode(w, restore_result_fields, N_FIELDS(restore_result_fields), r, 0);
}

int proto_restore_result_decode(const struct pv *v, struct proto_restore_result *ret, char *err,
                                size_t errlen)
{
        struct proto_restore_result a = { 0 };
        int r;

        r = res_decode(v, "result", restore_result_fields, N_FIELDS(restore_result_fields), &a,
                       err, errlen);
        if (r < 0)
                return r;
        *ret = a;
        return 0;
}

void proto_get_result_begin(struct pw *w, uint32_t n)
{
        pw_map(w, 1);
        pw_str(w, "values");
        pw_array(w, n);
}

int proto_get_result_decode(const struct pv *v, struct proto_get_result *ret, void **mem,
                            char *err, size_t errlen)
{
        const struct pv **values = NULL;
        const struct pv *a;

        *mem = NULL;
        if (!v || v->type != PV_MAP)
                return proto_fail(err, errlen, "result: expected a map");
        a = pv_get(v, "values");
        if (!a)
                return proto_fail(err, errlen, "result.values: missing");
        if (a->type != PV_ARRAY)
                return proto_fail(err, errlen, "result.values: expected an array");
        if (a->a.n > PROTO_MAX_NAMES)
                return proto_fail(err, errlen, "result.values: more than %u entries",
                                  PROTO_MAX_NAMES);
        if (a->a.n) {
                values = malloc(a->a.n * sizeof(*values));
                if (!values) {
                        proto_fail(err, errlen, "out of memory");
                        return -ENOMEM;
                }
                for (uint32_t i = 0; i < a->a.n; i++)
                        values[i] = &a->a.items[i];
        }
        *mem = values;
        *ret = (struct proto_get_result){ .n = a->a.n, .values = values };
        return 0;
}

static const struct field subscribe_result_fields[] = {
        FIELD("topic", FT_STR, FF_REQ | FF_NAME, struct proto_subscribe_result, topic),
};

void proto_subscribe_result_encode(struct pw *w, const struct proto_subscribe_result *r)
{
        res_encode(w, subscribe_result_fields, N_FIELDS(subscribe_result_fields), r, 0);
}

int proto_subscribe_result_decode(const struct pv *v, struct proto_subscribe_result *ret,
                                  char *err, size_t errlen)
{
        struct proto_subscribe_result a = { 0 };
        int r;

        r = res_decode(v, "result", subscribe_result_fields, N_FIELDS(subscribe_result_fields), &a,
                       err, errlen);
        if (r < 0)
                return r;
        *ret = a;
        return 0;
}

static const struct field snapshot_result_fields[] = {
        FIELD("snapshot", FT_U64, FF_REQ, struct proto_snapshot_result, snapshot),
        FIELD("time", FT_F64, FF_REQ, struct proto_snapshot_result, time),
};

void proto_snapshot_result_encode(struct pw *w, const struct proto_snapshot_result *r)
{
        res_encode(w, snapshot_result_fields, N_FIELDS(snapshot_result_fields), r, 0);
}

int proto_snapshot_result_decode(const struct pv *v, struct proto_snapshot_result *ret, char *err,
                                 size_t errlen)
{
        struct proto_snapshot_result a = { 0 };
        int r;

        r = res_decode(v, "result", snapshot_result_fields, N_FIELDS(snapshot_result_fields), &a,
                       err, errlen);
        if (r < 0)
                return r;
        *ret = a;
        return 0;
}
