/*
 * rig_remote_fixture: a real fmud (daemon_fixture.h) that serves tcp with
 * CURVE and remote rigs ([rig] remote_endpoint on 127.0.0.1, a port the
 * kernel picks per bridge; transient_grace 1 s), two admitted client keys (ok and other) and
 * one it does not admit (stranger); a libfmud connection over tcp with
 * the ok key; and raw DEALERs for what libfmud would never send.
 */
#ifndef FMUD_TESTS_RIG_REMOTE_FIXTURE_H
#define FMUD_TESTS_RIG_REMOTE_FIXTURE_H

#include <stdint.h>

#include "daemon_fixture.h"
#include "proto/rig_wire.h"

#define RR_RECV_MS      30000   /* a message that must come: a hang guard, not a measure */
#define RR_SOCKS_MAX    8       /* raw sockets open at once in one test */

struct rr {
        struct fmud_daemon d;
        char *keydir;
        char tcp_ep[64];
        char server_pub[41], server_sec[41];
        char ok_pub[41], ok_sec[41], other_pub[41], other_sec[41], str_pub[41], str_sec[41];
        struct fmud *c;                 /* over tcp with the ok key */
        void *zctx;
        /* The raw sockets still open: rr_stop() closes them, or zmq_ctx_term() waits forever. */
        void *socks[RR_SOCKS_MAX];
        unsigned n_socks;
};

/* Start (skips the test without CURVE); stop checks the daemon as daemon_stop() does. */
void rr_start(struct rr *t);
/* The same with the bridges' ports ("5560-5569"; NULL: "*", any the kernel picks). */
void rr_start_ports(struct rr *t, const char *ports);
/* A tcp port free on 127.0.0.1 now. */
int rr_free_port(void);
void rr_stop(struct rr *t);
/* A libfmud connection over tcp with the key pub/sec (aborts on failure). */
struct fmud *rr_connect(struct rr *t, const char *sec);

/* Feedthrough with rig inputs Float64_input, Int32_input and outputs of both. */
struct proto_load rr_feedthrough(double stop, const char *policy);

/* The rig request for session s over tcp with the ok key: token and port. */
void rr_ask(struct rr *t, uint64_t s, char token[RIGW_TOKEN_LEN + 1], unsigned *port);
/* A raw DEALER on the bridge at port with the key sec (receive timeout RR_RECV_MS). */
void *rr_bridge(struct rr *t, unsigned port, const char *pub, const char *sec);
/* Close a socket rr_bridge() gave (one a failed assertion left open is rr_stop()'s). */
void rr_close(struct rr *t, void *s);
/* Send one frame. */
void rr_send(void *s, const void *buf, size_t len);
/* The next message, decoded (values into vals, max; "code: message" of an error, a bye's message into text); asserts it comes. */
void rr_recv(void *s, struct rigw_msg *m, double *vals, uint32_t max, char *text, size_t textlen);

#endif
