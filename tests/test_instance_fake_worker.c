/*
 * A hostile stand-in for fmud-worker, for the failure tests of
 * test_instance_fault.c. It is started exactly as the real one
 * (--channel-fd 3 --fmu-dir X), and X names the misbehaviour instead of
 * an FMU:
 *   bad-hello      a HELLO of another protocol version
 *   no-hello       never a word
 *   exit-hello     exits at once
 *   event-flood    a proper HELLO, then log events without end, no reply
 *   <mode>         a proper HELLO, then the first reply is broken as named
 *                  in reply(); later requests get well-formed OK replies.
 *   repeat-short   every DO_STEP answered plainly, but a repeat
 *                  (call_do_step.repeat) only for its first step
 *   repeat-seq     the same, but a repeat's second reply carries the
 *                  first one's sequence number again
 *   compact-short  every DO_STEP answered plainly with zero outputs; a
 *                  compact one (call_do_step.compact) with its values
 *                  eight bytes short
 *   compact-outside  the same, with the values' range far outside
 *   mlock-none     started with --mlock, a proper HELLO without the memory
 *                  lock's report
 *   mlock-bad      the report with a positive error, then HELLO
 *   mlock-enomem   the report of a refused lock (-ENOMEM), then HELLO
 * (--mlock, last, is accepted with every mode.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shm/channel.h"
#include "worker/call.h"

static struct chan *chan;
static const char *mode;

static void push(const void *rec, size_t len)
{
        if (ring_push(chan_tx(chan), rec, len) < 0)
                exit(3);
}

static void hello(uint32_t version)
{
        unsigned char rec[sizeof(struct call_hdr) + sizeof(struct call_hello)];
        struct call_hdr h = { .magic = CALL_MAGIC, .kind = CALL_EVENT, .op = CALL_EV_HELLO,
                              .body_len = sizeof(struct call_hello) };
        struct call_hello b = { .version = version, .fmi = 3, .pid = (uint32_t)getpid() };

        memcpy(rec, &h, sizeof(h));
        memcpy(rec + sizeof(h), &b, sizeof(b));
        push(rec, sizeof(rec));
}

/* A reply to (op, seq) with result bytes and an inline payload. */
static void send_reply(uint16_t op, uint64_t seq, const struct call_reply *head, const void *result,
                       size_t result_len, const void *payload, size_t payload_len)
{
        unsigned char rec[4096];
        struct call_hdr h = { .magic = CALL_MAGIC, .kind = CALL_REPLY, .op = op, .seq = seq,
                              .body_len = (uint32_t)(sizeof(*head) + result_len),
                              .payload_len = payload_len };
        size_t off = 0;

        if (!strcmp(mode, "bad-magic"))
                h.magic ^= 1;
        if (!strcmp(mode, "wrong-seq"))
                h.seq++;
        if (!strcmp(mode, "wrong-op"))
                h.op = CALL_OP_RESET;
        if (!strcmp(mode, "side-range")) {
                h.flags = CALL_F_SIDE;
                h.payload_off = 1ull << 40;
                payload_len = 0;
        }
        memcpy(rec, &h, sizeof(h));
        off += sizeof(h);
        memcpy(rec + off, head, sizeof(*head));
        off += sizeof(*head);
        memcpy(rec + off, result, result_len);
        off += result_len;
        if (payload_len)
                memcpy(rec + off, payload, payload_len);
        push(rec, off + payload_len);
}

static void event(uint16_t op, uint64_t seq, const void *body, size_t len, const void *payload,
                  size_t plen)
{
        unsigned char rec[1024];
        struct call_hdr h = { .magic = CALL_MAGIC, .kind = CALL_EVENT, .op = op, .seq = seq,
                              .body_len = (uint32_t)len, .payload_len = plen };

        memcpy(rec, &h, sizeof(h));
        memcpy(rec + sizeof(h), body, len);
        if (plen)
                memcpy(rec + sizeof(h) + len, payload, plen);
        push(rec, sizeof(h) + len + plen);
}

/* A DO_STEP answered plainly: OK, every step of it at its end, no outputs. */
static void step_replies(const struct call_hdr *req, const unsigned char *body)
{
        struct call_step_result res = { .phase = CALL_PHASE_DONE };
        struct call_reply head = { 0 };
        struct call_do_step ds;
        uint32_t n;

        memcpy(&ds, body, sizeof(ds));
        n = ds.repeat > 1 ? ds.repeat : 1;
        res.last_successful_time = ds.current_communication_point + ds.communication_step_size;
        for (uint32_t i = 0; i < n; i++) {
                uint64_t seq = req->seq + i;

                if (i && !strcmp(mode, "repeat-short"))
                        return;
                if (i == 1 && !strcmp(mode, "repeat-seq"))
                        seq = req->seq;
                send_reply(req->op, seq, &head, &res, sizeof(res), NULL, 0);
        }
}

/*
 * A DO_STEP answered plainly with zero outputs: a full one with a block
 * per output block of the request, a compact one with the values of the
 * blocks that full one asked for, broken as the mode says.
 */
static void compact_replies(const struct call_hdr *req, const unsigned char *body,
                            const unsigned char *payload, size_t plen)
{
        static uint64_t lens[CALL_LAYOUT_BLOCKS_MAX];
        static uint32_t n_lens;
        struct call_step_result res = { .phase = CALL_PHASE_DONE };
        uint64_t offs[CALL_LAYOUT_BLOCKS_MAX], off;
        unsigned char out[2048] = { 0 };
        struct call_reply head = { 0 };
        struct call_do_step ds;
        struct call_values cv;

        memcpy(&ds, body, sizeof(ds));
        res.last_successful_time = ds.current_communication_point + ds.communication_step_size;
        res.n_outputs = ds.n_outputs;
        if (ds.n_outputs > CALL_LAYOUT_BLOCKS_MAX)
                exit(4);
        if (ds.compact) {
                uint64_t total = call_layout_place(lens, n_lens, offs);

                if (total > sizeof(out))
                        exit(4);
                res.outputs = (struct call_range){ 0, total };
                if (!strcmp(mode, "compact-short"))
                        res.outputs.len -= 8;
                if (!strcmp(mode, "compact-outside"))
                        res.outputs.off = 1ull << 40;
                send_reply(req->op, req->seq, &head, &res, sizeof(res), out, total);
                return;
        }
        off = (uint64_t)ds.n_outputs * sizeof(cv);
        if (ds.outputs.off > plen || off > plen - ds.outputs.off || off > sizeof(out))
                exit(4);
        n_lens = ds.n_outputs;
        for (uint32_t i = 0; i < ds.n_outputs; i++) {
                memcpy(&cv, payload + ds.outputs.off + i * sizeof(cv), sizeof(cv));
                lens[i] = cv.n_values * call_elem_size(cv.type);
                off = (off + 7) & ~(uint64_t)7;
                if (lens[i] > sizeof(out) - off)
                        exit(4);
                cv.vrs = (struct call_range){ 0, 0 };
                cv.data = (struct call_range){ off, lens[i] };
                memcpy(out + i * sizeof(cv), &cv, sizeof(cv));
                off += lens[i];
        }
        res.outputs = (struct call_range){ 0, (uint64_t)ds.n_outputs * sizeof(cv) };
        send_reply(req->op, req->seq, &head, &res, sizeof(res), out, off);
}

/* Answer one request, broken as the mode says the first time. */
static void reply(const struct call_hdr *req, const unsigned char *body, bool first)
{
        unsigned char result[CALL_BODY_MAX] = { 0 }, payload[64] = { 0 };
        struct call_reply head = { 0 };
        size_t rlen = call_result_body((enum call_op)req->op), plen = 0;
        struct call_values cv;

        if (!first) {
                send_reply(req->op, req->seq, &head, result, rlen, NULL, 0);
                return;
        }
        if (req->op == CALL_OP_GET) {
                memcpy(&cv, body, sizeof(cv));
                cv.vrs = (struct call_range){ 0, 0 };
                cv.data = (struct call_range){ 0, cv.n_values * call_elem_size(cv.type) };
                plen = 16;
                if (!strcmp(mode, "huge-range"))
                        cv.data.off = 1ull << 40;
                if (!strcmp(mode, "count-mismatch"))
                        cv.n_values++;
                if (!strcmp(mode, "bad-bool"))
                        payload[0] = 7;
                if (!strcmp(mode, "unterminated-string")) {
                        memset(payload, 'x', sizeof(payload));
                        cv.data.len = 16;
                }
                memcpy(result, &cv, sizeof(cv));
        }
        if (!strcmp(mode, "bad-status"))
                head.status = 9;
        if (!strcmp(mode, "bad-error"))
                head.error = 999;
        if (!strcmp(mode, "long-message")) {
                head.error = CALL_E_INVAL;
                head.msg = (struct call_range){ 0, CALL_MSG_MAX + 1 };
        }
        if (!strcmp(mode, "log-outside")) {
                struct call_log l = { .status = 0, .message = { 1ull << 32, 10 } };

                event(CALL_EV_LOG, req->seq, &l, sizeof(l), NULL, 0);
        }
        if (!strcmp(mode, "iu-unasked")) {
                struct call_iu iu = { .time = 0.5 };

                event(CALL_EV_IU, req->seq, &iu, sizeof(iu), NULL, 0);
        }
        if (!strcmp(mode, "event-flood")) {
                static const char text[] = "flood";
                struct call_log l = { .status = 0, .message = { 0, sizeof(text) - 1 } };
                unsigned char rec[sizeof(struct call_hdr) + sizeof(l) + 8];
                struct call_hdr h = { .magic = CALL_MAGIC, .kind = CALL_EVENT, .op = CALL_EV_LOG,
                                      .seq = req->seq, .body_len = sizeof(l), .payload_len = 8 };

                memcpy(rec, &h, sizeof(h));
                memcpy(rec + sizeof(h), &l, sizeof(l));
                memcpy(rec + sizeof(h) + sizeof(l), text, sizeof(text));
                for (;;) {
                        struct timespec dl;

                        if (ring_push(chan_tx(chan), rec, sizeof(rec)) == 0)
                                continue;
                        wait_deadline_in(&dl, 1000000000u);
                        (void) ring_wait_writable(chan_tx(chan), &(struct wait_policy){ 0 }, &dl);
                }
        }
        if (!strcmp(mode, "garbage")) {
                unsigned char junk[200];

                for (size_t i = 0; i < sizeof(junk); i++)
                        junk[i] = (unsigned char)(i * 37 + 11);
                push(junk, sizeof(junk));
                return;
        }
        if (!strcmp(mode, "ring-index")) {
                /*
                 * Move the reply ring's tail far beyond anything published,
                 * waking a consumer asleep as a publish does: a store alone
                 * may find it asleep, and it then sees nothing until its
                 * call's timeout kills the worker (safe, but not the test).
                 */
                struct ring *tx = chan_tx(chan);

                wait_publish(&tx->hdr->tail, tx->mine + 1000000, &tx->hdr->data);
                return;
        }
        if (!strcmp(mode, "ring-rewound")) {
                /*
                 * A log event, then tail published back before it (woken,
                 * as in ring-index). A consumer that took every record on
                 * its stamp may never have read tail, and tail back at the
                 * value it last read is a tail held (ring_commit_held()),
                 * not a fault; so the rewind waits until the consumer has
                 * released the event and looked for the reply, reading
                 * tail past it.
                 */
                static const char text[8] = "rewound";
                struct call_log l = { .status = 0, .message = { 0, sizeof(text) - 1 } };
                struct ring *tx = chan_tx(chan);
                const struct timespec ms = { 0, 1000000 }, settle = { 0, 100000000 };

                event(CALL_EV_LOG, req->seq, &l, sizeof(l), text, sizeof(text));
                for (int i = 0; i < 5000 && atomic_load(&tx->hdr->head) < tx->mine; i++)
                        nanosleep(&ms, NULL);
                nanosleep(&settle, NULL);
                wait_publish(&tx->hdr->tail, 0, &tx->hdr->data);
                return;
        }
        send_reply(req->op, req->seq, &head, result, rlen, payload, plen);
}

int main(int argc, char *argv[])
{
        bool first = true;

        if ((argc != 5 && (argc != 6 || strcmp(argv[5], "--mlock"))) || chan_attach(3, &chan) < 0)
                return 64;
        mode = argv[4];
        if (!strcmp(mode, "mlock-bad") || !strcmp(mode, "mlock-enomem")) {
                struct call_mlock m = { .error = !strcmp(mode, "mlock-bad") ? EIO : -ENOMEM };

                event(CALL_EV_MLOCK, 0, &m, sizeof(m), NULL, 0);
        }
        if (!strcmp(mode, "exit-hello"))
                return 5;
        if (!strcmp(mode, "no-hello")) {
                pause();
                return 0;
        }
        hello(!strcmp(mode, "bad-hello") ? 99 : CALL_VERSION);
        for (;;) {
                struct timespec dl;
                unsigned char body[CALL_BODY_MAX], payload[1024];
                const void *rec;
                struct call_hdr h;
                size_t len, plen = 0;

                wait_deadline_in(&dl, 30ull * 1000000000u);
                if (chan_wait_rx(chan, &(struct wait_policy){ .strategy = WAIT_FUTEX }, &dl) < 0)
                        return 2;
                if (ring_peek(chan_rx(chan), &rec, &len) < 0)
                        continue;
                memcpy(&h, rec, sizeof(h));
                memcpy(body, (const unsigned char *)rec + sizeof(h),
                       h.body_len < sizeof(body) ? h.body_len : sizeof(body));
                /* The inline payload, as far as it fits. */
                if (!(h.flags & CALL_F_SIDE) && h.body_len <= len - sizeof(h)) {
                        plen = len - sizeof(h) - h.body_len;
                        plen = plen < sizeof(payload) ? plen : sizeof(payload);
                        memcpy(payload, (const unsigned char *)rec + sizeof(h) + h.body_len, plen);
                }
                ring_release(chan_rx(chan));
                if (h.op == CALL_OP_IU_ANSWER)
                        continue;
                if (!strncmp(mode, "repeat-", 7) && h.op == CALL_OP_DO_STEP &&
                    h.body_len == sizeof(struct call_do_step))
                        step_replies(&h, body);
                else if (!strncmp(mode, "compact-", 8) && h.op == CALL_OP_DO_STEP &&
                         h.body_len == sizeof(struct call_do_step))
                        compact_replies(&h, body, payload, plen);
                else
                        reply(&h, body, first && strncmp(mode, "repeat-", 7) != 0 &&
                                        strncmp(mode, "compact-", 8) != 0);
                first = false;
                if (h.op == CALL_OP_FREE)
                        return 0;
        }
}
