/*
 * ops_put: one chunk of a file into the daemon's upload store, and the
 * offset the daemon has (PROTOCOL.md, put).
 *
 * DESIGN: data is a msgpack bin of at most PROTO_PUT_CHUNK bytes (the
 * decoder's limit for one binary); it is borrowed from the request, never
 * copied here. The shape is checked here (a SHA-256 of 64 lowercase hex
 * digits, a known kind, a chunk inside the file's size); whether the chunk
 * fits the upload the daemon has is the daemon's call.
 */
#include <errno.h>

#include "proto/proto.h"
#include "proto/proto_int.h"

static const struct field put_fields[] = {
        FIELD("sha256", FT_STR, FF_REQ | FF_NAME, struct proto_put, sha256),
        FIELD("size", FT_U64, FF_REQ, struct proto_put, size),
        FIELD("offset", FT_U64, FF_REQ, struct proto_put, offset),
        FIELD("kind", FT_STR, FF_NAME | FF_OMIT, struct proto_put, kind),
        FIELD_EXT("data"),
};

void proto_put_encode(struct pw *w, uint64_t id, const struct proto_put *a)
{
        req_encode(w, id, PROTO_OP_PUT, put_fields, N_FIELDS(put_fields), a, 1);
        pw_str(w, "data");
        pw_bin(w, a->len ? a->data : "", a->len);
}

bool proto_sha256_valid(struct proto_str s)
{
        if (s.len != 64)
                return false;
        for (uint32_t i = 0; i < s.len; i++)
                if (!((s.ptr[i] >= '0' && s.ptr[i] <= '9') || (s.ptr[i] >= 'a' && s.ptr[i] <= 'f')))
                        return false;
        return true;
}

int proto_put_decode(const struct pv *args, struct proto_put *ret, char *err, size_t errlen)
{
        const struct pv *d = pv_get(args, "data");
        struct proto_put a = { 0 };
        int r;

        r = req_decode(args, put_fields, N_FIELDS(put_fields), &a, err, errlen);
        if (r < 0)
                return r;
        if (!proto_sha256_valid(a.sha256))
                return proto_fail(err, errlen, "args.sha256: expected 64 lowercase hex digits");
        if (a.kind.len && !pstr_is(a.kind, "fmu") && !pstr_is(a.kind, "ssp") &&
            !pstr_is(a.kind, "ssd") && !pstr_is(a.kind, "csv"))
                return proto_fail(err, errlen,
                                  "args.kind: expected \"fmu\", \"ssp\", \"ssd\" or \"csv\"");
        if (d && d->type != PV_BIN)
                return proto_fail(err, errlen, "args.data: expected binary");
        if (d && d->s.len > PROTO_PUT_CHUNK)
                return proto_fail(err, errlen, "args.data: more than %u bytes", PROTO_PUT_CHUNK);
        a.data = d ? d->s.ptr : NULL;
        a.len = d ? d->s.len : 0;
        if (a.offset > a.size || a.len > a.size - a.offset)
                return proto_fail(err, errlen, "args.data: %u bytes at offset %llu go past the "
                                  "size, %llu bytes", a.len, (unsigned long long)a.offset,
                                  (unsigned long long)a.size);
        *ret = a;
        return 0;
}

static const struct field put_result_fields[] = {
        FIELD("offset", FT_U64, FF_REQ, struct proto_put_result, offset),
        FIELD("have", FT_BOOL, FF_REQ, struct proto_put_result, have),
};

void proto_put_result_encode(struct pw *w, const struct proto_put_result *r)
{
        res_encode(w, put_result_fields, N_FIELDS(put_result_fields), r, 0);
}

int proto_put_result_decode(const struct pv *v, struct proto_put_result *ret, char *err,
                            size_t errlen)
{
        struct proto_put_result a = { 0 };
        int r;

        r = res_decode(v, "result", put_result_fields, N_FIELDS(put_result_fields), &a, err,
                       errlen);
        if (r < 0)
                return r;
        *ret = a;
        return 0;
}
