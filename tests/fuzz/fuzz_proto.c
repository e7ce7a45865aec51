/*
 * fuzz_proto: arbitrary bytes as a control request, through everything
 * the daemon does with one: pv_decode() with the default limits,
 * proto_req_decode(), and the typed decoder of the op it names. Whatever
 * decodes is re-encoded with pw_pv() and decoded again; the two must be
 * equal (pv_equal), and the re-encoding must decode as the same request.
 * The reply decoders get the same value too, as a client would.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int typed(const struct proto_req *req)
{
        char err[256];
        void *mem = NULL;
        int r = 0;
        union {
                struct proto_hello hello;
                struct proto_load load;
                struct proto_target target;
                struct proto_warp warp;
                struct proto_step step;
                struct proto_run_until run_until;
                struct proto_get get;
                struct proto_set set;
                struct proto_subscribe subscribe;
                struct proto_unsubscribe unsubscribe;
                struct proto_restore restore;
        } u;

        switch (req->op) {
        case PROTO_OP_HELLO:
                r = proto_hello_decode(req->args, &u.hello, err, sizeof(err));
                break;
        case PROTO_OP_LOAD:
                r = proto_load_decode(req->args, &u.load, &mem, err, sizeof(err));
                break;
        case PROTO_OP_WARP:
                r = proto_warp_decode(req->args, &u.warp, err, sizeof(err));
                break;
        case PROTO_OP_STEP:
                r = proto_step_decode(req->args, &u.step, err, sizeof(err));
                break;
        case PROTO_OP_RUN_UNTIL:
                r = proto_run_until_decode(req->args, &u.run_until, err, sizeof(err));
                break;
        case PROTO_OP_GET:
                r = proto_get_decode(req->args, &u.get, &mem, err, sizeof(err));
                break;
        case PROTO_OP_SET:
                r = proto_set_decode(req->args, &u.set, &mem, err, sizeof(err));
                break;
        case PROTO_OP_SUBSCRIBE:
                r = proto_subscribe_decode(req->args, &u.subscribe, &mem, err, sizeof(err));
                break;
        case PROTO_OP_UNSUBSCRIBE:
                r = proto_unsubscribe_decode(req->args, &u.unsubscribe, err, sizeof(err));
                break;
        case PROTO_OP_RESTORE:
        case PROTO_OP_SNAPSHOT_DELETE:
                r = proto_restore_decode(req->args, &u.restore, err, sizeof(err));
                break;
        default:
                r = proto_target_decode(req->args, &u.target, err, sizeof(err));
                break;
        }
        if (r != 0 && r != -EBADMSG && r != -ENOMEM)
                abort();
        if (r != 0 && mem)
                abort();        /* nothing is handed out on failure */
        free(mem);
        return r;
}

static void replies(const struct pv *root)
{
        struct proto_session_status st;
        struct proto_list_result ls;
        struct proto_sample sm;
        struct proto_reply rep;
        struct proto_event ev;
        char err[256];
        void *mem;

        if (proto_reply_decode(root, &rep, err, sizeof(err)) == 0 && rep.ok) {
                mem = NULL;
                (void)proto_session_status_decode(rep.result, &st, &mem, err, sizeof(err));
                free(mem);
                mem = NULL;
                (void)proto_list_result_decode(rep.result, &ls, &mem, err, sizeof(err));
                free(mem);
        }
        mem = NULL;
        (void)proto_sample_decode(root, &sm, &mem, err, sizeof(err));
        free(mem);
        (void)proto_event_decode(root, &ev, err, sizeof(err));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct proto_limits lim;
        struct pv_doc doc, again;
        struct proto_req req, req2;
        char err[256];
        void *buf;
        size_t len;
        struct pw w;
        int r, r2;

        r = pv_decode(data, size, NULL, &doc, err, sizeof(err));
        if (r < 0) {
                if (r != -EBADMSG && r != -EMSGSIZE && r != -ENOMEM)
                        abort();
                pv_doc_fini(&doc);
                return 0;
        }
        if (pw_init(&w) < 0)
                abort();
        pw_pv(&w, doc.root);
        buf = pw_take(&w, &len);
        pw_fini(&w);
        if (!buf)
                abort();
        /* float32 widens to float64: the re-encoding may outgrow the input. */
        proto_limits_default(&lim);
        lim.max_msg = SIZE_MAX;
        if (pv_decode(buf, len, &lim, &again, err, sizeof(err)) != 0)
                abort();
        if (!pv_equal(doc.root, again.root))
                abort();

        r = proto_req_decode(doc.root, &req, err, sizeof(err));
        r2 = proto_req_decode(again.root, &req2, err, sizeof(err));
        if (r != r2)
                abort();
        if (r == 0) {
                if (req.op != req2.op || req.id != req2.id)
                        abort();
                if (typed(&req) != typed(&req2))
                        abort();
        }
        replies(doc.root);
        pv_doc_fini(&again);
        free(buf);
        pv_doc_fini(&doc);
        return 0;
}
