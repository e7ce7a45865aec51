/*
 * rig_wire: the messages between a remote rig and the daemon's rig bridge
 * (proto/PROTOCOL.md "Remote rigs"), one msgpack map per ZeroMQ message.
 *
 * DESIGN: a remote rig exchanges exactly what a local rig exchanges
 * through the shared-memory channel (shm/rig.h), one message each way per
 * point: a write {t:"w", p, v} becomes one rig_write(), a published point
 * one {t:"pt", p, time, skipped, v}. Around them: {t:"hello", token}
 * (the first message, answered {t:"ports", in, out, beatMs}), {t:"beat"}
 * (alive, while waiting longer than beatMs), {t:"bye"} and {t:"err", code, message, bad}.
 *
 * Decoding is bounded before use: a message above RIGW_MAX_MSG, a kind
 * not listed, a missing or mistyped field, more than RIGW_MAX_PORTS
 * values or ports, a port name of RIGW_NAME_MAX bytes or more, or a
 * non-number value is -EBADMSG (or -EMSGSIZE) with the reason in err.
 * Strings are borrowed from the caller's buffer (and the pv_doc).
 */
#ifndef FMUD_PROTO_RIG_WIRE_H
#define FMUD_PROTO_RIG_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

#define RIGW_MAX_PORTS  256u            /* values of a write or point, ports of each side: RIG_PORTS_MAX */
#define RIGW_NAME_MAX   128u            /* a port's name, NUL included: RIG_NAME_MAX */
#define RIGW_TYPE_MAX   16u             /* a port's type name, NUL included */
#define RIGW_TOKEN_LEN  32u             /* hex characters */
#define RIGW_MAX_MSG    (96u << 10)     /* bytes: 512 ports' names and types fit */

enum rigw_kind {
        RIGW_HELLO = 1,         /* rig: token */
        RIGW_WRITE,             /* rig: point, values */
        RIGW_BEAT,              /* rig: nothing */
        RIGW_BYE,               /* either: message (daemon) */
        RIGW_PORTS,             /* daemon: the ports */
        RIGW_POINT,             /* daemon: point, time, skipped, values */
        RIGW_ERROR,             /* daemon: code, message, bad */
};

struct rigw_port {
        struct proto_str name, type;    /* "Float64_input", "Float64" */
};

struct rigw_msg {
        enum rigw_kind kind;
        struct proto_str token;         /* hello */
        uint64_t point;                 /* write, point */
        double time;                    /* point */
        uint64_t skipped;               /* point */
        uint32_t n;                     /* values in vals (write, point) */
        struct proto_str code, message; /* error, bye */
        uint64_t bad;                   /* error: the bridge's bad messages so far */
        uint32_t n_in, n_out;           /* ports */
        uint32_t beat_ms;               /* ports: a silent rig beats this often; absent: 10 */
};

void rigw_hello(struct pw *w, const char *token);
void rigw_write(struct pw *w, uint64_t point, const double *vals, uint32_t n);
void rigw_beat(struct pw *w);
void rigw_bye(struct pw *w, const char *message);
#define RIGW_BEAT_MS_DEFAULT    10u
#define RIGW_BEAT_MS_MAX        60000u  /* a session's rigTimeoutMs is at most this */
void rigw_ports(struct pw *w, const struct rigw_port *in, uint32_t n_in,
                const struct rigw_port *out, uint32_t n_out, uint32_t beat_ms);
void rigw_point(struct pw *w, uint64_t point, double time, uint64_t skipped, const double *vals,
                uint32_t n);
void rigw_error(struct pw *w, const char *code, const char *message, uint64_t bad);

/*
 * Decode buf[0..len) into *m; the values of a write or point into vals
 * (max of them), a ports message's ports into in and out (RIGW_MAX_PORTS
 * each; may be NULL for a side that expects none). doc holds the tree the
 * strings point into (free it with pv_doc_fini(), also on error).
 * 0, -EMSGSIZE, -EBADMSG or -ENOMEM, with err.
 */
/* Whether tokens a and b (RIGW_TOKEN_LEN bytes each) are equal, in a time that does not tell where they differ. */
bool rigw_token_eq(const char *a, const char *b);

int rigw_decode(const void *buf, size_t len, struct rigw_msg *m, double *vals, uint32_t max,
                struct rigw_port *in, struct rigw_port *out, struct pv_doc *doc, char *err,
                size_t errlen);

#endif
