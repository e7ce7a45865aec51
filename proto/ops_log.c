/*
 * ops_log: an FMU's log message as published on "l<session>" and as the
 * logs request returns the ones a session keeps (proto.h, PROTOCOL.md).
 *
 * DESIGN: the same table encodes a message on both paths, so a client
 * prints a followed message and a kept one alike. Decoding checks the
 * bounds the daemon promises (texts no longer than PROTO_LOG_*_MAX, a
 * status of FMI's five): a message outside them is malformed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "proto/proto.h"
#include "proto/proto_int.h"

static const struct field log_fields[] = {
        FIELD("session", FT_U64, FF_REQ, struct proto_log, session),
        FIELD("seq", FT_U64, FF_REQ, struct proto_log, seq),
        FIELD("time", FT_F64, 0, struct proto_log, time),
        FIELD("instance", FT_STR, FF_NAME, struct proto_log, instance),
        FIELD("category", FT_STR, FF_NAME, struct proto_log, category),
        FIELD("status", FT_U32, FF_REQ, struct proto_log, status),
        FIELD("message", FT_STR, FF_NAME, struct proto_log, message),
};

const char *proto_log_status_name(uint32_t status)
{
        static const char *const names[] = { "OK", "Warning", "Discard", "Error", "Fatal" };

        return status < sizeof(names) / sizeof(names[0]) ? names[status] : "?";
}

void proto_log_encode(struct pw *w, const struct proto_log *l)
{
        res_encode(w, log_fields, N_FIELDS(log_fields), l, 0);
}

int proto_log_decode(const struct pv *v, struct proto_log *ret, char *err, size_t errlen)
{
        struct proto_log l = { 0 };
        int r;

        r = res_decode(v, "log", log_fields, N_FIELDS(log_fields), &l, err, errlen);
        if (r < 0)
                return r;
        if (l.status > 4)
                return proto_fail(err, errlen, "log.status: %u is not an FMI status", l.status);
        if (l.message.len > PROTO_LOG_MESSAGE_MAX || l.category.len > PROTO_LOG_CATEGORY_MAX ||
            l.instance.len > PROTO_LOG_INSTANCE_MAX)
                return proto_fail(err, errlen, "log: a text longer than its bound");
        *ret = l;
        return 0;
}

void proto_logs_result_encode(struct pw *w, const struct proto_log *v, uint32_t n)
{
        pw_map(w, 1);
        pw_str(w, "messages");
        pw_array(w, n);
        for (uint32_t i = 0; i < n; i++)
                proto_log_encode(w, &v[i]);
}

int proto_logs_result_decode(const struct pv *v, struct proto_logs_result *ret, void **mem,
                             char *err, size_t errlen)
{
        struct proto_log *m = NULL;
        const struct pv *a;
        char what[160];
        int r;

        *mem = NULL;
        if (!v || v->type != PV_MAP)
                return proto_fail(err, errlen, "result: expected a map");
        a = pv_get(v, "messages");
        if (!a)
                return proto_fail(err, errlen, "result.messages: missing");
        if (a->type != PV_ARRAY)
                return proto_fail(err, errlen, "result.messages: expected an array");
        if (a->a.n > PROTO_MAX_ITEMS)
                return proto_fail(err, errlen, "result.messages: more than %u entries",
                                  PROTO_MAX_ITEMS);
        if (a->a.n) {
                m = calloc(a->a.n, sizeof(*m));
                if (!m) {
                        proto_fail(err, errlen, "out of memory");
                        return -ENOMEM;
                }
        }
        for (uint32_t i = 0; i < a->a.n; i++) {
                r = proto_log_decode(&a->a.items[i], &m[i], what, sizeof(what));
                if (r < 0) {
                        proto_fail(err, errlen, "result.messages[%u]: %s", i, what);
                        free(m);
                        return r;
                }
        }
        *ret = (struct proto_logs_result){ .n = a->a.n, .messages = m };
        *mem = m;
        return 0;
}
