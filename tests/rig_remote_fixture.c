/*
 * rig_remote_fixture: fmud with remote rigs over tcp and CURVE
 * (rig_remote_fixture.h).
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "rig_remote_fixture.h"
#include "support/tmpdir.h"

int rr_free_port(void)
{
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(sa);
        int fd = socket(AF_INET, SOCK_STREAM, 0);

        cr_assert(fd >= 0);
        cr_assert(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
        cr_assert(getsockname(fd, (struct sockaddr *)&sa, &len) == 0);
        close(fd);
        return ntohs(sa.sin_port);
}

static void put(struct rr *t, const char *name, const char *text, mode_t mode)
{
        char path[512];

        cr_assert(tmpdir_write(t->keydir, name, text, strlen(text)) == 0);
        snprintf(path, sizeof(path), "%s/%s", t->keydir, name);
        cr_assert(chmod(path, mode) == 0);
}

void rr_start(struct rr *t)
{
        rr_start_ports(t, NULL);
}

void rr_start_ports(struct rr *t, const char *ports)
{
        char conf[2048], keys[256], line[64], path[512];
        int port, tries = 0;

        memset(t, 0, sizeof(*t));
        if (!zmq_has("curve"))
                cr_skip_test("libzmq without CURVE");
        cr_assert(zmq_curve_keypair(t->server_pub, t->server_sec) == 0);
        cr_assert(zmq_curve_keypair(t->ok_pub, t->ok_sec) == 0);
        cr_assert(zmq_curve_keypair(t->other_pub, t->other_sec) == 0);
        cr_assert(zmq_curve_keypair(t->str_pub, t->str_sec) == 0);
        t->keydir = tmpdir_new("fmud-rig-keys");
        cr_assert(t->keydir);
        snprintf(line, sizeof(line), "%s\n", t->server_sec);
        put(t, "server.key", line, 0600);
        snprintf(keys, sizeof(keys), "%s operator\n%s operator\n", t->ok_pub, t->other_pub);
        put(t, "authorized_keys", keys, 0644);
        /* Never the bridges' own port. */
        do
                port = rr_free_port();
        while (ports && atoi(ports) == port && ++tries < 100);
        snprintf(t->tcp_ep, sizeof(t->tcp_ep), "tcp://127.0.0.1:%d", port);
        snprintf(conf, sizeof(conf),
                 "[control]\ntcp_endpoint = %s\nserver_secret_key = %s/server.key\n"
                 "authorized_keys = %s/authorized_keys\n[rig]\n"
                 "remote_endpoint = tcp://127.0.0.1:%s\n[limits]\ntransient_grace = 1\n",
                 t->tcp_ep, t->keydir, t->keydir, ports ? ports : "*");
        put(t, "fmud.conf", conf, 0644);
        snprintf(path, sizeof(path), "%s/fmud.conf", t->keydir);
        daemon_start(&t->d, (const char *[]){ "--config", path, NULL });
        t->zctx = zmq_ctx_new();
        cr_assert(t->zctx);
        t->c = rr_connect(t, t->ok_sec);
}

void rr_stop(struct rr *t)
{
        fmud_close(t->c);
        t->c = NULL;
        while (t->n_socks)
                rr_close(t, t->socks[t->n_socks - 1]);
        if (t->zctx)
                zmq_ctx_term(t->zctx);
        t->zctx = NULL;
        daemon_stop(&t->d);
        if (t->keydir)
                tmpdir_free(t->keydir);
        t->keydir = NULL;
}

struct fmud *rr_connect(struct rr *t, const char *sec)
{
        struct fmud_opts o = { .server_key = t->server_pub, .secret_key = sec };
        struct fmud *c = NULL;
        char err[256];

        cr_assert(fmud_connect(t->tcp_ep, &o, &c, err, sizeof(err)) == 0, "%s", err);
        return c;
}

static struct proto_str ins[2], outs[2];

struct proto_load rr_feedthrough(double stop, const char *policy)
{
        ins[0] = daemon_str("Float64_input=-1");
        ins[1] = daemon_str("Int32_input=-2");
        outs[0] = daemon_str("Float64_output");
        outs[1] = daemon_str("Int32_output");
        return (struct proto_load){ .path = daemon_str(FMUD_TEST_FMU_DIR "/Feedthrough.fmu"),
                                    .has_stop = true, .stop = stop, .has_step = true,
                                    .step = 0.01, .n_rig_in = 2, .rig_in = ins,
                                    .n_rig_out = 2, .rig_out = outs,
                                    .rig_policy = daemon_str(policy), .has_rig_timeout = true,
                                    .rig_timeout_ms = 50 };
}

static void *dealer(struct rr *t, const char *ep, const char *pub, const char *sec)
{
        int tmo = RR_RECV_MS, linger = 0;
        void *s;

        /* Checked before the socket exists: one left unregistered would hang rr_stop(). */
        cr_assert(t->n_socks < RR_SOCKS_MAX, "more than %u raw sockets open", RR_SOCKS_MAX);
        s = zmq_socket(t->zctx, ZMQ_DEALER);
        cr_assert(s);
        t->socks[t->n_socks++] = s;
        cr_assert(zmq_setsockopt(s, ZMQ_RCVTIMEO, &tmo, sizeof(tmo)) == 0);
        cr_assert(zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof(linger)) == 0);
        cr_assert(zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, t->server_pub, 41) == 0);
        cr_assert(zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, pub, 41) == 0);
        cr_assert(zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, sec, 41) == 0);
        cr_assert(zmq_connect(s, ep) == 0);
        return s;
}

void rr_ask(struct rr *t, uint64_t s, char token[RIGW_TOKEN_LEN + 1], unsigned *port)
{
        void *z = dealer(t, t->tcp_ep, t->ok_pub, t->ok_sec);
        const struct pv *tok, *p;
        struct proto_limits lim;
        struct pv_doc doc = { 0 };
        struct proto_reply rep;
        uint64_t u = 0;
        char buf[4096];
        struct pw w;
        int n;

        cr_assert(pw_init(&w) == 0);
        proto_target_encode(&w, 9, PROTO_OP_RIG, &(struct proto_target){ s, 0 });
        rr_send(z, pw_data(&w), pw_size(&w));
        pw_fini(&w);
        n = zmq_recv(z, buf, sizeof(buf), 0);
        cr_assert(n > 0 && n < (int)sizeof(buf), "no answer to the rig request");
        proto_limits_default(&lim);
        cr_assert(pv_decode(buf, (size_t)n, &lim, &doc, NULL, 0) == 0);
        cr_assert(proto_reply_decode(doc.root, &rep, NULL, 0) == 0);
        cr_assert(rep.ok, "%.*s", (int)rep.message_len, rep.message);
        tok = pv_get(rep.result, "token");
        p = pv_get(rep.result, "port");
        cr_assert(tok && tok->type == PV_STR && tok->s.len == RIGW_TOKEN_LEN);
        cr_assert(p && pv_u64(p, &u) == 0 && u > 0 && u < 65536);
        cr_assert(pv_get(rep.result, "endpoint") != NULL);
        memcpy(token, tok->s.ptr, RIGW_TOKEN_LEN);
        token[RIGW_TOKEN_LEN] = '\0';
        *port = (unsigned)u;
        pv_doc_fini(&doc);
        rr_close(t, z);
}

void *rr_bridge(struct rr *t, unsigned port, const char *pub, const char *sec)
{
        char ep[64];

        snprintf(ep, sizeof(ep), "tcp://127.0.0.1:%u", port);
        return dealer(t, ep, pub, sec);
}

void rr_close(struct rr *t, void *s)
{
        for (unsigned i = 0; i < t->n_socks; i++)
                if (t->socks[i] == s) {
                        t->socks[i] = t->socks[--t->n_socks];
                        zmq_close(s);
                        return;
                }
        cr_assert_fail("a socket the fixture did not open");
}

void rr_send(void *s, const void *buf, size_t len)
{
        cr_assert(zmq_send(s, buf, len, 0) == (int)len);
}

void rr_recv(void *s, struct rigw_msg *m, double *vals, uint32_t max, char *text, size_t textlen)
{
        static struct rigw_port in[RIGW_MAX_PORTS], out[RIGW_MAX_PORTS];
        struct pv_doc doc = { 0 };
        char buf[RIGW_MAX_MSG], err[200];
        int n = zmq_recv(s, buf, sizeof(buf), 0);

        cr_assert(n > 0 && n <= (int)sizeof(buf), "no message from the bridge");
        cr_assert(rigw_decode(buf, (size_t)n, m, vals, max, in, out, &doc, err, sizeof(err)) == 0,
                  "%s", err);
        text[0] = '\0';
        if (m->kind == RIGW_ERROR)
                snprintf(text, textlen, "%.*s: %.*s", (int)m->code.len, m->code.ptr,
                         (int)m->message.len, m->message.ptr);
        else if (m->kind == RIGW_BYE)
                snprintf(text, textlen, "%.*s", (int)m->message.len, m->message.ptr);
        /* The strings pointed into buf: gone with it. */
        m->token = m->code = m->message = (struct proto_str){ 0 };
        pv_doc_fini(&doc);
}
