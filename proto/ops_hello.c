/*
 * ops_hello: version negotiation. hello is optional (the daemon serves
 * requests without it); a client that sends it learns the daemon's
 * version, name, PUB endpoint and message limit.
 */
#include "proto/proto.h"
#include "proto/proto_int.h"

static const struct field hello_fields[] = {
        FIELD("version", FT_U32, FF_REQ, struct proto_hello, version),
        FIELD("client", FT_STR, FF_OMIT, struct proto_hello, client),
};

void proto_hello_encode(struct pw *w, uint64_t id, const struct proto_hello *a)
{
        req_encode(w, id, PROTO_OP_HELLO, hello_fields, N_FIELDS(hello_fields), a, 0);
}

int proto_hello_decode(const struct pv *args, struct proto_hello *ret, char *err, size_t errlen)
{
        struct proto_hello a = { 0 };
        int r;

        r = req_decode(args, hello_fields, N_FIELDS(hello_fields), &a, err, errlen);
        if (r < 0)
                return r;
        *ret = a;
        return 0;
}

static const struct field hello_result_fields[] = {
        FIELD("version", FT_U32, FF_REQ, struct proto_hello_result, version),
        FIELD("server", FT_STR, 0, struct proto_hello_result, server),
        FIELD("pubEndpoint", FT_STR, 0, struct proto_hello_result, pub_endpoint),
        FIELD("maxMsg", FT_U64, 0, struct proto_hello_result, max_msg),
};

void proto_hello_result_encode(struct pw *w, const struct proto_hello_result *r)
{
        res_encode(w, hello_result_fields, N_FIELDS(hello_result_fields), r, 0);
}

int proto_hello_result_decode(const struct pv *v, struct proto_hello_result *ret, char *err,
                              size_t errlen)
{
        struct proto_hello_result a = { 0 };
        int r;

        r = res_decode(v, "result", hello_result_fields, N_FIELDS(hello_result_fields), &a, err,
                       errlen);
        if (r < 0)
                return r;
        *ret = a;
        return 0;
}
