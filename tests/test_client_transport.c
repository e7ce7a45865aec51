/*
 * libfmud's request transport against a scripted stand-in for the daemon
 * (a ROUTER thread speaking proto): replies matched by id, late replies of
 * timed-out requests dropped, malformed replies, refusals, the version
 * check and a missing daemon.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "client/fmud.h"
#include "support/tmpdir.h"

static char *dir;
static char endpoint[256];
static void *zctx;
static pthread_t server;
static atomic_int hello_version = PROTO_VERSION;
static atomic_bool stop_server;

/* Send one reply body to the peer. */
static void reply(void *s, zmq_msg_t *peer, struct pw *w)
{
        zmq_msg_t copy;

        zmq_msg_init(&copy);
        zmq_msg_copy(&copy, peer);
        cr_assert(zmq_msg_send(&copy, s, ZMQ_SNDMORE) >= 0);
        cr_assert(zmq_send(s, pw_data(w), pw_size(w), 0) >= 0);
}

static void progress_reply(void *s, zmq_msg_t *peer, uint64_t id, uint64_t points)
{
        struct proto_progress p = { .state = PROTO_STATE_PAUSED, .time = 1, .points = points };
        struct pw w;

        pw_init(&w);
        proto_reply_ok_begin(&w, id);
        proto_progress_encode(&w, &p);
        reply(s, peer, &w);
        pw_fini(&w);
}

/*
 * The script, by operation: hello answers (with hello_version); step
 * first answers another id, then its own; pause gets garbage;
 * resume gets no answer until the next request, which is preceded by the
 * late answer; stop is refused; shutdown closes the socket without an
 * answer; start answers normally.
 */
static void *serve(void *arg)
{
        void *s = arg;
        uint64_t late_id = 0;
        bool late = false;

        while (!atomic_load(&stop_server)) {
                zmq_pollitem_t it = { .socket = s, .events = ZMQ_POLLIN };
                struct proto_limits lim;
                struct proto_req req;
                struct pv_doc doc = { 0 };
                zmq_msg_t peer, body;
                struct pw w;

                if (zmq_poll(&it, 1, 50) <= 0)
                        continue;
                zmq_msg_init(&peer);
                zmq_msg_init(&body);
                zmq_msg_recv(&peer, s, 0);
                zmq_msg_recv(&body, s, 0);
                proto_limits_default(&lim);
                cr_assert(pv_decode(zmq_msg_data(&body), zmq_msg_size(&body), &lim, &doc, NULL, 0) == 0);
                cr_assert(proto_req_decode(doc.root, &req, NULL, 0) == 0);
                pw_init(&w);
                if (late) {
                        progress_reply(s, &peer, late_id, 999);
                        late = false;
                }
                switch (req.op) {
                case PROTO_OP_HELLO: {
                        struct proto_hello_result h = {
                                .version = (uint32_t)atomic_load(&hello_version),
                                .server = { "fake 1", 6 },
                                .pub_endpoint = { "ipc:///nonexistent/pub", 22 },
                                .max_msg = PROTO_MAX_MSG,
                        };

                        proto_reply_ok_begin(&w, req.id);
                        proto_hello_result_encode(&w, &h);
                        reply(s, &peer, &w);
                        break;
                }
                case PROTO_OP_STEP:
                        progress_reply(s, &peer, req.id + 1000, 111);
                        progress_reply(s, &peer, req.id, 222);
                        break;
                case PROTO_OP_PAUSE: {
                        static const unsigned char junk[] = { 0xc1, 0x00, 0xff };
                        zmq_msg_t copy;

                        zmq_msg_init(&copy);
                        zmq_msg_copy(&copy, &peer);
                        zmq_msg_send(&copy, s, ZMQ_SNDMORE);
                        zmq_send(s, junk, sizeof(junk), 0);
                        break;
                }
                case PROTO_OP_RESUME:
                        late_id = req.id;
                        late = true;
                        break;
                case PROTO_OP_SHUTDOWN:
                        /* Gone without a word, as a crashed daemon. */
                        pw_fini(&w);
                        pv_doc_fini(&doc);
                        zmq_msg_close(&peer);
                        zmq_msg_close(&body);
                        zmq_close(s);
                        return NULL;
                case PROTO_OP_STOP:
                        proto_reply_error(&w, req.id, PROTO_E_STATE, "session 3 is finished\nsecond line");
                        reply(s, &peer, &w);
                        break;
                default:
                        progress_reply(s, &peer, req.id, 7);
                        break;
                }
                pw_fini(&w);
                pv_doc_fini(&doc);
                zmq_msg_close(&peer);
                zmq_msg_close(&body);
        }
        zmq_close(s);
        return NULL;
}

static void setup(void)
{
        void *s;
        int zero = 0;

        dir = tmpdir_new("client_transport");
        cr_assert(dir != NULL);
        snprintf(endpoint, sizeof(endpoint), "ipc://%s/c.sock", dir);
        zctx = zmq_ctx_new();
        s = zmq_socket(zctx, ZMQ_ROUTER);
        zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof(zero));
        cr_assert(zmq_bind(s, endpoint) == 0, "bind %s: %s", endpoint, zmq_strerror(errno));
        cr_assert(pthread_create(&server, NULL, serve, s) == 0);
}

static void teardown(void)
{
        atomic_store(&stop_server, true);
        pthread_join(server, NULL);
        zmq_ctx_term(zctx);
        tmpdir_free(dir);
}

static struct fmud *connect_ok(int timeout_ms)
{
        struct fmud_opts o = { .timeout_ms = timeout_ms };
        struct fmud *c = NULL;
        char err[256] = "";
        int r = fmud_connect(endpoint, &o, &c, err, sizeof(err));

        cr_assert(r == 0, "connect: %d %s", r, err);
        return c;
}

TestSuite(client_transport, .init = setup, .fini = teardown);

Test(client_transport, hello_names_the_server_and_its_pub_endpoint)
{
        struct fmud *c = connect_ok(0);

        cr_assert(strcmp(fmud_server(c), "fake 1") == 0, "'%s'", fmud_server(c));
        cr_assert(strcmp(fmud_pub_endpoint(c), "ipc:///nonexistent/pub") == 0);
        fmud_close(c);
}

Test(client_transport, a_reply_to_another_id_is_not_taken)
{
        struct fmud *c = connect_ok(0);
        struct proto_target t = { 3, 0 };
        struct proto_progress p;

        cr_assert(fmud_step(c, &t, 1, &p) == 0, "%s", fmud_errmsg(c));
        cr_assert(p.points == 222, "took the reply with %llu points", (unsigned long long)p.points);
        fmud_close(c);
}

Test(client_transport, a_late_reply_after_a_timeout_is_dropped)
{
        struct fmud *c = connect_ok(0);
        struct proto_target t = { 3, 0 };
        struct proto_progress p;

        fmud_set_timeout(c, 200);
        cr_assert(fmud_resume(c, &t, &p) == -ETIMEDOUT);
        cr_assert(strstr(fmud_errmsg(c), "no reply") != NULL, "'%s'", fmud_errmsg(c));
        fmud_set_timeout(c, 0);
        /* The server now answers the resume (999 points), then this start (7). */
        cr_assert(fmud_start(c, &t, &p) == 0, "%s", fmud_errmsg(c));
        cr_assert(p.points == 7, "took the late reply (%llu points)", (unsigned long long)p.points);
        fmud_close(c);
}

Test(client_transport, a_malformed_reply_is_eproto_and_the_connection_survives)
{
        struct fmud *c = connect_ok(0);
        struct proto_target t = { 3, 0 };
        struct proto_progress p;

        cr_assert(fmud_pause(c, &t, &p) == -EPROTO);
        cr_assert(strstr(fmud_errmsg(c), "malformed") != NULL, "'%s'", fmud_errmsg(c));
        cr_assert(fmud_errcode(c) == -1);
        cr_assert(fmud_start(c, &t, &p) == 0, "%s", fmud_errmsg(c));
        cr_assert(p.points == 7);
        fmud_close(c);
}

Test(client_transport, a_refusal_gives_the_code_and_the_message)
{
        struct fmud *c = connect_ok(0);
        struct proto_target t = { 3, 0 };

        cr_assert(fmud_stop(c, &t, NULL) == FMUD_E_REFUSED);
        cr_assert(fmud_errcode(c) == PROTO_E_STATE, "code %d", fmud_errcode(c));
        cr_assert(strcmp(fmud_errmsg(c), "session 3 is finished\nsecond line") == 0, "'%s'",
                  fmud_errmsg(c));
        fmud_close(c);
}

Test(client_transport, another_protocol_version_is_refused)
{
        struct fmud *c = NULL;
        char err[256] = "";

        atomic_store(&hello_version, PROTO_VERSION + 1);
        cr_assert(fmud_connect(endpoint, NULL, &c, err, sizeof(err)) == -EPROTONOSUPPORT);
        cr_assert(c == NULL);
        cr_assert(strstr(err, "protocol version") != NULL, "'%s'", err);
}

Test(client_transport, no_daemon_on_an_ipc_path_is_econnrefused)
{
        struct fmud *c = NULL;
        char ep[300], err[256] = "";

        snprintf(ep, sizeof(ep), "ipc://%s/nobody.sock", dir);
        cr_assert(fmud_connect(ep, NULL, &c, err, sizeof(err)) == -ECONNREFUSED);
        cr_assert(c == NULL);
        cr_assert(strstr(err, "no daemon") != NULL, "'%s'", err);
}

Test(client_transport, curve_keys_must_be_z85)
{
        struct fmud_opts o = { .server_key = "short", .secret_key = "short" };
        struct fmud *c = NULL;
        char err[256] = "";

        cr_assert(fmud_connect(endpoint, &o, &c, err, sizeof(err)) == -EINVAL);
        cr_assert(strstr(err, "Z85") != NULL, "'%s'", err);
}

Test(client_transport, next_without_a_subscription_is_enotconn)
{
        struct fmud *c = connect_ok(0);
        struct fmud_msg m;

        cr_assert(fmud_next(c, 0, &m) == -ENOTCONN);
        fmud_close(c);
}

Test(client_transport, a_daemon_gone_mid_request_is_econnreset)
{
        struct fmud *c = connect_ok(0);

        cr_assert(fmud_shutdown(c) == -ECONNRESET, "%s", fmud_errmsg(c));
        cr_assert(strstr(fmud_errmsg(c), "lost") != NULL, "'%s'", fmud_errmsg(c));
        fmud_close(c);
}
