/*
 * ops_results: the results operation, a piece of a session's results file
 * by byte offset (PROTOCOL.md "results").
 *
 * DESIGN: the file travels as msgpack bin pieces of at most
 * PROTO_RESULTS_CHUNK bytes, the same bound and offsets as put's, so a
 * client streams any size through bounded messages and resumes at any
 * offset. The result decoder checks what a client then relies on: the
 * piece is no larger than asked, starts where asked and ends within size.
 */
#include <errno.h>
#include <string.h>

#include "proto/proto.h"
#include "proto/proto_int.h"

static const struct field results_fields[] = {
        FIELD("session", FT_U64, 0, struct proto_results, t.session),
        FIELD("generation", FT_U64, 0, struct proto_results, t.generation),
        FIELD("offset", FT_U64, FF_REQ, struct proto_results, offset),
        FIELD_HAS("max", FT_U64, 0, struct proto_results, max, has_max),
};

void proto_results_encode(struct pw *w, uint64_t id, const struct proto_results *a)
{
        req_encode(w, id, PROTO_OP_RESULTS, results_fields, N_FIELDS(results_fields), a, 0);
}

int proto_results_decode(const struct pv *args, struct proto_results *ret, char *err,
                         size_t errlen)
{
        struct proto_results a = { 0 };
        int r;

        r = req_decode(args, results_fields, N_FIELDS(results_fields), &a, err, errlen);
        if (r < 0)
                return r;
        if (a.has_max && (a.max < 1 || a.max > PROTO_RESULTS_CHUNK))
                return proto_fail(err, errlen, "args.max: %llu is not 1 to %u bytes",
                                  (unsigned long long)a.max, PROTO_RESULTS_CHUNK);
        *ret = a;
        return 0;
}

static const struct field result_fields[] = {
        FIELD_EXT("data"),
        FIELD("offset", FT_U64, FF_REQ, struct proto_results_result, offset),
        FIELD("size", FT_U64, FF_REQ, struct proto_results_result, size),
        FIELD("done", FT_BOOL, FF_REQ, struct proto_results_result, done),
        FIELD("format", FT_STR, FF_REQ | FF_NAME, struct proto_results_result, format),
};

void proto_results_result_encode(struct pw *w, const struct proto_results_result *r)
{
        res_encode(w, result_fields, N_FIELDS(result_fields), r, 1);
        pw_str(w, "data");
        pw_bin(w, r->data, r->len);
}

int proto_results_result_decode(const struct pv *v, uint64_t max,
                                struct proto_results_result *ret, char *err, size_t errlen)
{
        struct proto_results_result a = { 0 };
        const struct pv *d;
        int r;

        r = res_decode(v, "result", result_fields, N_FIELDS(result_fields), &a, err, errlen);
        if (r < 0)
                return r;
        d = pv_get(v, "data");
        if (!d || d->type != PV_BIN)
                return proto_fail(err, errlen, "result.data: missing, or not a bin");
        if (d->s.len > max || d->s.len > PROTO_RESULTS_CHUNK)
                return proto_fail(err, errlen, "result.data: %u bytes, more than the %llu asked",
                                  (unsigned)d->s.len, (unsigned long long)max);
        if (a.offset > a.size || d->s.len > a.size - a.offset)
                return proto_fail(err, errlen, "result: %u bytes at offset %llu pass the size "
                                  "%llu", (unsigned)d->s.len, (unsigned long long)a.offset,
                                  (unsigned long long)a.size);
        if (a.done && a.offset + d->s.len != a.size)
                return proto_fail(err, errlen, "result: done, but %u bytes at offset %llu do "
                                  "not reach the size %llu", (unsigned)d->s.len,
                                  (unsigned long long)a.offset, (unsigned long long)a.size);
        a.data = d->s.ptr;
        a.len = d->s.len;
        *ret = a;
        return 0;
}
