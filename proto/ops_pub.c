/*
 * ops_pub: the bodies published on the daemon's PUB socket (frame 2, after
 * the topic): a subscription's samples and the "events" of state changes.
 * Subscribers decode them like results: unknown keys are ignored.
 */
#include <errno.h>
#include <stdlib.h>

#include "proto/proto.h"
#include "proto/proto_int.h"

static const struct field sample_fields[] = {
        FIELD("session", FT_U64, FF_REQ, struct proto_sample, session),
        FIELD("generation", FT_U64, FF_REQ, struct proto_sample, generation),
        FIELD("time", FT_F64, FF_REQ, struct proto_sample, time),
        FIELD("point", FT_U64, FF_REQ, struct proto_sample, point),
        FIELD("flags", FT_U32, 0, struct proto_sample, flags),
        FIELD("monoNs", FT_U64, 0, struct proto_sample, mono_ns),
        FIELD("realNs", FT_U64, 0, struct proto_sample, real_ns),
        FIELD_EXT("names"),
        FIELD_EXT("values"),
};

void proto_sample_begin(struct pw *w, const struct proto_sample *s)
{
        res_encode(w, sample_fields, N_FIELDS(sample_fields), s, s->names ? 2 : 1);
        if (s->names)
                strs_encode(w, "names", s->names, s->n);
        pw_str(w, "values");
}

int proto_sample_decode(const struct pv *v, struct proto_sample *ret, void **mem, char *err,
                        size_t errlen)
{
        struct proto_sample s = { 0 };
        struct proto_str *names = NULL;
        const struct pv *vals, *nm;
        int n, r;

        *mem = NULL;
        r = res_decode(v, "sample", sample_fields, N_FIELDS(sample_fields), &s, err, errlen);
        if (r < 0)
                return r;
        vals = pv_get(v, "values");
        if (!vals)
                return proto_fail(err, errlen, "sample.values: missing");
        if (vals->type != PV_ARRAY)
                return proto_fail(err, errlen, "sample.values: expected an array");
        nm = pv_get(v, "names");
        n = strs_check(nm, "sample", "names", PROTO_MAX_ITEMS, err, errlen);
        if (n < 0)
                return n;
        if (nm && (uint32_t)n != vals->a.n)
                return proto_fail(err, errlen, "sample.names: %d names for %u values", n,
                                  vals->a.n);
        if (n) {
                names = malloc((size_t)n * sizeof(*names));
                if (!names) {
                        proto_fail(err, errlen, "out of memory");
                        return -ENOMEM;
                }
                strs_fill(nm, names);
        }
        s.n = vals->a.n;
        s.names = names;
        s.values = vals;
        *mem = names;
        *ret = s;
        return 0;
}

static const struct field event_fields[] = {
        FIELD("session", FT_U64, FF_REQ, struct proto_event, session),
        FIELD("generation", FT_U64, FF_REQ, struct proto_event, generation),
        FIELD("state", FT_STATE, FF_REQ, struct proto_event, state),
        FIELD("time", FT_F64, FF_REQ, struct proto_event, time),
        FIELD("message", FT_STR, 0, struct proto_event, message),
        FIELD("overruns", FT_U64, 0, struct proto_event, overruns),
        FIELD("latenessP99Us", FT_F64, FF_FINITE | FF_NONNEG, struct proto_event, lateness_p99_us),
        FIELD("latenessMaxUs", FT_F64, FF_FINITE | FF_NONNEG, struct proto_event, lateness_max_us),
};

void proto_event_encode(struct pw *w, const struct proto_event *e)
{
        res_encode(w, event_fields, N_FIELDS(event_fields), e, 0);
}

int proto_event_decode(const struct pv *v, struct proto_event *ret, char *err, size_t errlen)
{
        struct proto_event e = { 0 };
        int r;

        r = res_decode(v, "event", event_fields, N_FIELDS(event_fields), &e, err, errlen);
        if (r < 0)
                return r;
        *ret = e;
        return 0;
}
