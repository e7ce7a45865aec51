/*
 * host_fmi_call: fmi batches (PROTOCOL.md "fmi") and free, for FMI-level
 * instances (host_fmi.c).
 *
 * DESIGN: the control thread checks the batch whole (proto_fmi_decode():
 * shape and bounds) and that every instance it names exists, is an
 * instance and is the caller's, then queues it to the thread of the first
 * call's instance, decoded: the calls are read from the command's own copy
 * of the arguments (hcmd.fmi), never decoded again on the way. That
 * thread makes the calls in order (each:
 * host_fmi_fn.c) while they name its instance, with the worker's state
 * machine and type checks unchanged (inst_*: a refused call never reaches
 * the FMU), and hands the command on to the next instance's queue when a
 * call names another (the results so far travel in the command,
 * hcmd.fmi_out); the last thread answers. An
 * instance is only ever called from its own thread, and the control thread
 * waits for none. The first refused call (or one the FMU answers Discard,
 * Error or Fatal) ends the batch: the reply carries the results of the
 * calls before it and, under "refused", its index, instance, the FMI
 * function and the worker's words, which name the rule (FMI 3.0 section
 * 4.2 for a state, 2.2.6 for a variable's type or causality). A batch
 * also ends, refused the same way, before a call when its instance is
 * ending (lease run out, shutdown), after the call whose results would
 * not fit in a reply (too-large), and when it waits in the queue of an
 * instance that ends (hfmi_abandon()).
 */
#include "daemon/host_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Control thread ------------------------------------------------------------ */

/* The instance call index names, checked; NULL after the refusal. */
static struct hsess *instance_of(struct host *h, uint64_t token, const struct proto_req *req,
                                 uint64_t id, uint32_t index, const struct host_peer *peer)
{
        struct hsess *hs = host_find(h, id);
        char where[48] = "";

        if (req->op == PROTO_OP_FMI)
                snprintf(where, sizeof(where), "calls[%u]: ", index);
        if (!hs) {
                host_reply_error(h, token, req->id, PROTO_E_NO_SESSION, "%sno instance %llu",
                                 where, (unsigned long long)id);
                return NULL;
        }
        if (!hs->fmi) {
                host_reply_error(h, token, req->id, PROTO_E_STATE, "%s%llu is a session, not an "
                                 "FMI-level instance%s", where, (unsigned long long)id,
                                 req->op == PROTO_OP_FREE ? ": unload it" : "");
                return NULL;
        }
        return host_owner_ok(h, token, req, hs, peer) ? hs : NULL;
}

/*
 * Decode c's batch from its copy of the request's arguments, into c, once
 * for every thread the batch reaches; the calls borrow from that copy.
 */
static int batch_decode(struct host *h, struct hcmd *c, char *err, size_t errlen)
{
        if (host_cmd_args(h, c, &c->fmi_doc) < 0) {
                /* Encoded by host.c from a decoded request: only memory can fail here. */
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        return proto_fmi_decode(c->fmi_doc.root, &c->fmi, &c->fmi_mem, err, errlen);
}

void hfmi_request(struct host *h, uint64_t token, const struct proto_req *req,
                  const struct host_peer *peer)
{
        struct proto_instance_ref f;
        struct hsess *first = NULL;
        struct hcmd *c;
        char err[256];
        int r;

        c = host_cmd_new(token, req);
        if (!c) {
                host_reply_error(h, token, req->id, PROTO_E_INTERNAL, "out of memory");
                return;
        }
        r = req->op == PROTO_OP_FREE ? proto_free_decode(req->args, &f, err, sizeof(err)) :
                                       batch_decode(h, c, err, sizeof(err));
        if (r < 0) {
                host_reply_error(h, token, req->id, r == -ENOMEM ? PROTO_E_INTERNAL :
                                 PROTO_E_BAD_REQUEST, "%s", err);
                goto out;
        }
        if (req->op == PROTO_OP_FREE) {
                first = instance_of(h, token, req, f.instance, 0, peer);
        } else {
                const struct proto_fmi_call *calls = c->fmi.calls;

                for (uint32_t i = 0; i < c->fmi.n; i++) {
                        struct hsess *hs;

                        /* Each instance once: a batch of one instance's calls asks once. */
                        if (i && calls[i].instance == calls[i - 1].instance)
                                continue;
                        hs = instance_of(h, token, req, calls[i].instance, i, peer);
                        if (!hs) {
                                first = NULL;
                                break;
                        }
                        if (!first)
                                first = hs;
                }
        }
        if (!first)
                goto out;
        if (peer && peer->user)
                snprintf(c->user, sizeof(c->user), "%s", peer->user);
        host_enqueue(first, c);
        return;
out:
        hcmd_free(c);
}

/* ---- Session thread: the batch ------------------------------------------------------ */

/*
 * Answer c: the results so far (the first len bytes of c->fmi_out) and,
 * with ref, the call that ended the batch.
 */
static void answer(struct host *h, struct hcmd *c, const struct proto_fmi_call *calls,
                   uint32_t done, size_t len, const struct hfmi_refusal *ref)
{
        struct pw w;

        if (c->fmi_out && c->fmi_out->error) {
                host_reply_error(h, c->token, c->id, PROTO_E_INTERNAL, "out of memory");
                return;
        }
        if (pw_init(&w) < 0) {
                host_reply_error(h, c->token, c->id, PROTO_E_INTERNAL, "out of memory");
                return;
        }
        proto_reply_ok_begin(&w, c->id);
        pw_map(&w, ref ? 2 : 1);
        pw_str(&w, "results");
        pw_array(&w, done);
        if (c->fmi_out)
                pw_raw(&w, pw_data(c->fmi_out), len);
        if (ref) {
                const char *code = proto_err_name(ref->code);

                pw_str(&w, "refused");
                pw_map(&w, ref->status ? 7 : 6);
                pw_str(&w, "index");
                pw_u64(&w, done);
                pw_str(&w, "instance");
                pw_u64(&w, calls[done].instance);
                pw_str(&w, "fn");
                pw_str(&w, proto_fmi_fn_name(calls[done].fn));
                pw_str(&w, "function");
                pw_str(&w, ref->function);
                pw_str(&w, "code");
                pw_str(&w, code ? code : "internal");
                pw_str(&w, "message");
                pw_str(&w, ref->message);
                if (ref->status) {
                        pw_str(&w, "status");
                        pw_str(&w, ref->status);
                }
        }
        host_reply_take(h, c->token, c->id, &w);
        pw_fini(&w);
}

/* Queue c to instance id's thread: true, or false when it is gone. */
static bool hand_on(struct host *h, uint64_t id, struct hcmd *c)
{
        bool found = false;

        /* Under the registry's lock: the instance cannot be retired and freed meanwhile. */
        pthread_mutex_lock(&h->lock);
        for (struct hsess *hs = h->sessions; hs; hs = hs->next)
                if (hs->id == id && hs->fmi) {
                        host_enqueue(hs, c);
                        found = true;
                        break;
                }
        pthread_mutex_unlock(&h->lock);
        return found;
}

/*
 * Room kept in a reply for its envelope and a refusal (index, instance,
 * names and a message of up to HOST_MSG_MAX bytes) beside the results.
 */
#define REPLY_SLACK     (HOST_MSG_MAX + 512u)

/*
 * Whether results of size bytes still leave room in a reply: checked after
 * each call, so that a batch whose results could never be sent stops at
 * the call that overflows instead of growing the daemon's memory.
 */
static bool results_fit(const struct host *h, size_t size)
{
        size_t max = h->opts.max_reply;
        size_t slack = REPLY_SLACK < max / 2 ? REPLY_SLACK : max / 2;

        return size <= max - slack;
}

void hfmi_abandon(struct host *h, struct hcmd *c, enum proto_err code, const char *fmt, ...)
{
        struct hfmi_refusal ref = { .code = code };
        char why[HOST_MSG_MAX - 64];    /* room for the call's index and instance */
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(why, sizeof(why), fmt, ap);
        va_end(ap);
        if (c->op != PROTO_OP_FMI || c->fmi_next >= c->fmi.n) {
                host_reply_error(h, c->token, c->id, code, "%s", why);
                return;
        }
        snprintf(ref.message, sizeof(ref.message), "calls[%u]: instance %llu: %s", c->fmi_next,
                 (unsigned long long)c->fmi.calls[c->fmi_next].instance, why);
        /* A batch not yet begun has no results: refused at its first call all the same. */
        answer(h, c, c->fmi.calls, c->fmi_next, c->fmi_out ? pw_size(c->fmi_out) : 0, &ref);
}

/*
 * Whether hs is ending (its lease ran out, the daemon shuts down): true
 * with the refusal of call i, which is not made. Checked before each call,
 * so a long batch does not hold the instance's end back.
 */
static bool ending(struct hsess *hs, uint32_t i, struct hfmi_refusal *ref)
{
        bool quit, expired;

        pthread_mutex_lock(&hs->lock);
        quit = hs->quit;
        expired = hs->expired;
        pthread_mutex_unlock(&hs->lock);
        if (!quit && !atomic_load(&hs->cancel))
                return false;
        *ref = (struct hfmi_refusal){ .code = PROTO_E_STATE };
        snprintf(ref->message, sizeof(ref->message), "calls[%u]: instance %llu is being freed: %s",
                 i, (unsigned long long)hs->id, expired ? "its lease ran out (transient)" :
                 "the daemon is shutting down");
        return true;
}

int hfmi_exec(struct hsess *hs, struct hcmd *c)
{
        struct hfmi_refusal ref = { .code = PROTO_E_INTERNAL };
        const struct proto_fmi *b = &c->fmi;
        uint32_t i;

        if (!c->fmi_out) {
                c->fmi_out = calloc(1, sizeof(*c->fmi_out));
                if (!c->fmi_out || pw_init(c->fmi_out) < 0) {
                        free(c->fmi_out);
                        c->fmi_out = NULL;
                        host_reply_error(hs->h, c->token, c->id, PROTO_E_INTERNAL,
                                         "out of memory");
                        return HSESS_DONE;
                }
        }
        for (i = c->fmi_next; i < b->n && b->calls[i].instance == hs->id; i++) {
                size_t before = pw_size(c->fmi_out);

                if (ending(hs, i, &ref) || !hfmi_call(hs, &b->calls[i], c->fmi_out, &ref)) {
                        answer(hs->h, c, b->calls, i, before, &ref);
                        return HSESS_DONE;
                }
                if (!results_fit(hs->h, pw_size(c->fmi_out))) {
                        /* Its result goes: the reply carries those before it. */
                        ref = (struct hfmi_refusal){ .code = PROTO_E_TOO_LARGE };
                        snprintf(ref.message, sizeof(ref.message), "calls[%u]: the results "
                                 "would exceed the reply limit of %zu bytes: %zu bytes with "
                                 "this call's; ask for fewer values in one batch", i,
                                 hs->h->opts.max_reply, pw_size(c->fmi_out));
                        answer(hs->h, c, b->calls, i, before, &ref);
                        return HSESS_DONE;
                }
        }
        if (i == b->n) {
                answer(hs->h, c, b->calls, i, pw_size(c->fmi_out), NULL);
                return HSESS_DONE;
        }
        c->fmi_next = i;
        if (hand_on(hs->h, b->calls[i].instance, c))
                return HSESS_TAKEN;
        ref.code = PROTO_E_NO_SESSION;
        snprintf(ref.function, sizeof(ref.function), "%s", "");
        snprintf(ref.message, sizeof(ref.message), "calls[%u]: instance %llu was freed", i,
                 (unsigned long long)b->calls[i].instance);
        answer(hs->h, c, b->calls, i, pw_size(c->fmi_out), &ref);
        return HSESS_DONE;
}
