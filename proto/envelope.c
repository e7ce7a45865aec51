/*
 * envelope: a request {id, op, args} and its reply {id, ok, result | error}.
 *
 * DESIGN: the request side is strict (an unknown key is refused, so that
 * a misspelt key never silently does nothing); the reply side ignores
 * keys it does not know, so that a newer daemon can add some.
 */
#include <errno.h>
#include <string.h>

#include "proto/proto.h"
#include "proto/proto_int.h"

/* args absent or nil: this empty map. */
static const struct pv empty_map = { .type = PV_MAP };

static int req_check_keys(const struct pv *root, char *err, size_t errlen)
{
        char q[300];

        for (uint32_t i = 0; i < root->m.n; i++) {
                const struct pv *k = root->m.kv[i].key;

                if (k->type != PV_STR)
                        return proto_fail(err, errlen, "request: a key that is not a string");
                if (!pv_is_str(k, "id") && !pv_is_str(k, "op") && !pv_is_str(k, "args")) {
                        proto_quote(q, sizeof(q), k->s.ptr, k->s.len);
                        return proto_fail(err, errlen, "request: unknown key '%s'", q);
                }
        }
        return 0;
}

uint64_t proto_req_id(const struct pv *root)
{
        uint64_t id;

        if (pv_u64(pv_get(root, "id"), &id) < 0)
                return 0;
        return id;
}

int proto_req_decode(const struct pv *root, struct proto_req *ret, char *err, size_t errlen)
{
        const struct pv *op, *args;
        char q[300];
        uint64_t id;
        int r;

        if (!root || root->type != PV_MAP)
                return proto_fail(err, errlen, "request: expected a map");
        r = req_check_keys(root, err, errlen);
        if (r < 0)
                return r;
        if (!pv_get(root, "id"))
                return proto_fail(err, errlen, "request.id: missing");
        if (pv_u64(pv_get(root, "id"), &id) < 0)
                return proto_fail(err, errlen, "request.id: expected a non-negative integer");
        op = pv_get(root, "op");
        if (!op)
                return proto_fail(err, errlen, "request.op: missing");
        if (op->type != PV_STR)
                return proto_fail(err, errlen, "request.op: expected a string");
        args = pv_get(root, "args");
        if (!args || args->type == PV_NIL)
                args = &empty_map;
        if (args->type != PV_MAP)
                return proto_fail(err, errlen, "request.args: expected a map");
        r = proto_op_parse(op->s.ptr, op->s.len);
        if (r < 0) {
                proto_quote(q, sizeof(q), op->s.ptr, op->s.len);
                proto_fail(err, errlen, "unknown op '%s'", q);
                return -EOPNOTSUPP;
        }
        *ret = (struct proto_req){ .id = id, .op = (enum proto_op)r, .args = args };
        return 0;
}

void proto_req_begin(struct pw *w, uint64_t id, enum proto_op op, uint32_t n_args)
{
        pw_map(w, 3);
        pw_str(w, "id");
        pw_u64(w, id);
        pw_str(w, "op");
        pw_str(w, proto_op_name(op));
        pw_str(w, "args");
        pw_map(w, n_args);
}

static int reply_error(const struct pv *e, struct proto_reply *out, char *err, size_t errlen)
{
        const struct pv *code, *msg;

        if (!e)
                return proto_fail(err, errlen, "reply.error: missing");
        if (e->type != PV_MAP)
                return proto_fail(err, errlen, "reply.error: expected a map");
        code = pv_get(e, "code");
        if (!code || code->type != PV_STR)
                return proto_fail(err, errlen, "reply.error.code: expected a string");
        msg = pv_get(e, "message");
        if (msg && msg->type != PV_STR && msg->type != PV_NIL)
                return proto_fail(err, errlen, "reply.error.message: expected a string");
        out->code = proto_err_parse(code->s.ptr, code->s.len);
        out->message = "";
        out->message_len = 0;
        if (msg && msg->type == PV_STR) {
                out->message = msg->s.ptr;
                out->message_len = msg->s.len;
        }
        return 0;
}

int proto_reply_decode(const struct pv *root, struct proto_reply *ret, char *err, size_t errlen)
{
        static const struct pv nil = { .type = PV_NIL };
        struct proto_reply out = { .result = &nil, .code = -1, .message = "" };
        int r;

        if (!root || root->type != PV_MAP)
                return proto_fail(err, errlen, "reply: expected a map");
        if (!pv_get(root, "id"))
                return proto_fail(err, errlen, "reply.id: missing");
        if (pv_u64(pv_get(root, "id"), &out.id) < 0)
                return proto_fail(err, errlen, "reply.id: expected a non-negative integer");
        if (pv_bool(pv_get(root, "ok"), &out.ok) < 0)
                return proto_fail(err, errlen, "reply.ok: expected a boolean");
        if (out.ok) {
                if (pv_get(root, "result"))
                        out.result = pv_get(root, "result");
        } else {
                r = reply_error(pv_get(root, "error"), &out, err, errlen);
                if (r < 0)
                        return r;
        }
        *ret = out;
        return 0;
}

void proto_reply_ok_begin(struct pw *w, uint64_t id)
{
        pw_map(w, 3);
        pw_str(w, "id");
        pw_u64(w, id);
        pw_str(w, "ok");
        pw_bool(w, true);
        pw_str(w, "result");
}

void proto_reply_error(struct pw *w, uint64_t id, enum proto_err code, const char *message)
{
        pw_map(w, 3);
        pw_str(w, "id");
        pw_u64(w, id);
        pw_str(w, "ok");
        pw_bool(w, false);
        pw_str(w, "error");
        pw_map(w, 2);
        pw_str(w, "code");
        pw_str(w, proto_err_name(code) ? proto_err_name(code) : "internal");
        pw_str(w, "message");
        pw_str(w, message ? message : "");
}
