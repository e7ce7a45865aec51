/*
 * control_req: one message from a ROUTER socket, decoded and answered or
 * handed to the host (control.h). Everything read here is untrusted: the
 * frame count, each frame's size and the body are checked before use.
 *
 * Who asks (access.h): on ipc the uid and gid the kernel gave libzmq when
 * the peer connected ("Peer-Address" property, peer_cred.h), on tcp the
 * CURVE key ZAP admitted ("User-Id"). A request above the asker's role is
 * refused "denied" naming the role it needs; a request that changes
 * something is logged with who asked and, when its reply goes out, how it
 * ended (ctl_log_outcome()).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "control_int.h"
#include "control_log.h"
#include "daemon/access.h"
#include "daemon/host.h"
#include "daemon/peer_cred.h"

#ifndef FMUD_VERSION
#define FMUD_VERSION "unknown"
#endif

#define SERVER_NAME     "fmud " FMUD_VERSION
#define MAX_FRAMES      3       /* identity, delimiter, body */

/* Who sent a request, and what they may do. */
struct ctl_who {
        enum access_role role;
        char user[HOST_PEER_LABEL_MAX];         /* "uid 1000", "key <Z85>": owns what it loads */
        char label[80];                         /* for the log: "uid 1000 (alice)" */
        char key[CTL_KEY_MAX];                  /* a tcp peer's CURVE key; "": none */
};

void ctl_send(struct control *c, const struct ctl_peer *p, const void *body, size_t len)
{
        void *s = c->router[p->sock];

        /* ROUTER drops a message to a peer it no longer knows (ROUTER_MANDATORY off). */
        if (zmq_send(s, p->id, p->id_len, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0)
                goto fail;
        if (p->delim && zmq_send(s, "", 0, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0)
                goto fail;
        if (zmq_send(s, body, len, ZMQ_DONTWAIT) < 0)
                goto fail;
        return;
fail:
        log_warn("reply of %zu bytes not sent: %s, ignoring", len, zmq_strerror(zmq_errno()));
}

static void send_pw(struct control *c, const struct ctl_peer *p, struct pw *w)
{
        if (w->error) {
                static const char oom[] = "";

                log_err("out of memory encoding a reply");
                ctl_send(c, p, oom, 0);
                return;
        }
        ctl_send(c, p, pw_data(w), pw_size(w));
}

static void reply_error(struct control *c, const struct ctl_peer *p, uint64_t id,
                        enum proto_err code, const char *msg)
{
        struct pw w;

        if (pw_init(&w) < 0)
                return;
        proto_reply_error(&w, id, code, msg);
        send_pw(c, p, &w);
        pw_fini(&w);
}

/* Refuse and log one line. */
static void refuse(struct control *c, const struct ctl_peer *p, uint64_t id, enum proto_err code,
                   const char *msg)
{
        log_notice("refused request %llu from %s peer: %s: %s", (unsigned long long)id,
                   p->sock == CTL_SOCK_TCP ? "a tcp" : "an ipc", proto_err_name(code), msg);
        reply_error(c, p, id, code, msg);
}

/* Untrusted text for a log line: at most size - 1 bytes, and none that could start a new line. */
static const char *log_text(char *buf, size_t size, struct proto_str s)
{
        size_t i;

        for (i = 0; i < s.len && i < size - 1; i++)
                buf[i] = s.ptr[i] >= 0x20 && s.ptr[i] < 0x7f ? s.ptr[i] : '?';
        buf[i] = '\0';
        return buf;
}

static void do_hello(struct control *c, const struct ctl_peer *p, const struct proto_req *req)
{
        const char *pub = p->sock == CTL_SOCK_TCP ? c->cfg->tcp_pub_endpoint : c->cfg->pub_endpoint;
        struct proto_hello_result r = {
                .version = PROTO_VERSION,
                .server = { SERVER_NAME, (uint32_t)strlen(SERVER_NAME) },
                .pub_endpoint = { pub ? pub : "", pub ? (uint32_t)strlen(pub) : 0 },
                .max_msg = c->cfg->max_message,
        };
        struct proto_hello h;
        char err[256], msg[320], client[65];
        struct pw w;

        if (proto_hello_decode(req->args, &h, err, sizeof(err)) < 0) {
                refuse(c, p, req->id, PROTO_E_BAD_REQUEST, err);
                return;
        }
        if (h.version != PROTO_VERSION) {
                snprintf(msg, sizeof(msg), "protocol version %u is not served (this daemon "
                                           "speaks %u)", h.version, PROTO_VERSION);
                refuse(c, p, req->id, PROTO_E_VERSION, msg);
                return;
        }
        log_debug("hello from '%s'", log_text(client, sizeof(client), h.client));
        if (pw_init(&w) < 0)
                return;
        proto_reply_ok_begin(&w, req->id);
        proto_hello_result_encode(&w, &r);
        send_pw(c, p, &w);
        pw_fini(&w);
}

static void do_daemon_status(struct control *c, const struct ctl_peer *p, uint64_t id)
{
        const char *sb = config_sandbox_name(c->cfg->sandbox);
        struct proto_daemon_status s = {
                .version = PROTO_VERSION,
                .server = { SERVER_NAME, (uint32_t)strlen(SERVER_NAME) },
                .sandbox = { sb, (uint32_t)strlen(sb) },
                .mlock = { c->cfg->rt_mlock_state, (uint32_t)strlen(c->cfg->rt_mlock_state) },
        };
        struct timespec now;
        struct pw w;

        clock_gettime(CLOCK_MONOTONIC, &now);
        s.uptime_s = (double)(now.tv_sec - c->started.tv_sec) +
                     (double)(now.tv_nsec - c->started.tv_nsec) * 1e-9;
        if (c->host) {
                host_counts(c->host, &s.sessions, &s.workers);
                host_mlock_counts(c->host, &s.mlock_budget, &s.mlock_used);
        }
        if (pw_init(&w) < 0)
                return;
        proto_reply_ok_begin(&w, id);
        proto_daemon_status_encode(&w, &s);
        send_pw(c, p, &w);
        pw_fini(&w);
}

static void do_shutdown(struct control *c, const struct ctl_peer *p, const struct proto_req *req,
                        const struct ctl_who *who)
{
        uint64_t id = req->id;
        char err[256];
        struct pw w;

        /* A misspelt argument must not stop the daemon. */
        if (proto_noargs_decode(req->args, err, sizeof(err)) < 0) {
                refuse(c, p, id, PROTO_E_BAD_REQUEST, err);
                return;
        }
        log_notice("request: shutdown by %s as %s: ok", who->label, access_role_name(who->role));
        if (pw_init(&w) == 0) {
                proto_reply_ok_begin(&w, id);
                pw_nil(&w);
                send_pw(c, p, &w);
                pw_fini(&w);
        }
        c->stop = true;
}

/* How a transient session names its owner: the socket, a CURVE key, the routing id. */
static void owner_label(const struct ctl_peer *p, const char *user, char *buf, size_t size)
{
        int n = snprintf(buf, size, "%s%s%s 0x", p->sock == CTL_SOCK_TCP ? "tcp" : "ipc",
                         user && *user ? " " : "", user && *user ? user : "");

        for (size_t i = 0; n > 0 && (size_t)n + 2 < size && i < p->id_len; i++, n += 2)
                snprintf(buf + n, size - (size_t)n, "%02x", p->id[i]);
}

/* The session a request names, for the log; 0: none. */
static uint64_t session_of(const struct proto_req *req)
{
        const struct pv *s = pv_get(req->args, "session");
        uint64_t v;

        return s && pv_u64(s, &v) == 0 ? v : 0;
}

/* " session N" for a log line, "" for none (0). */
static const char *session_text(uint64_t session, char *buf, size_t size)
{
        if (!session)
                return "";
        snprintf(buf, size, " session %llu", (unsigned long long)session);
        return buf;
}

static void to_host(struct control *c, const struct ctl_peer *p, const struct proto_req *req,
                    const char *user, const struct ctl_who *who)
{
        char label[HOST_PEER_LABEL_MAX];
        struct host_peer hp = { .sock = p->sock, .id = p->id, .id_len = p->id_len,
                                .label = label, .user = who->user,
                                .any_session = who->role == ACCESS_ADMIN ||
                                               !access_owner_only(req->op),
                                .admin = who->role == ACCESS_ADMIN,
                                .role = access_role_name(who->role),
                                .has_cred = p->has_cred, .uid = p->uid, .gid = p->gid };
        struct ctl_peer e = *p;
        uint64_t token;

        if (!c->host) {
                refuse(c, p, req->id, PROTO_E_INTERNAL, "no sessions are served");
                return;
        }
        /* A remote master's fmi batches come at its own rate: not a log line each. */
        e.log = access_changes(req->op) && req->op != PROTO_OP_FMI;
        e.op = (uint8_t)req->op;
        e.session = session_of(req);
        snprintf(e.who, sizeof(e.who), "%.80s as %.12s", who->label, access_role_name(who->role));
        memcpy(e.key, who->key, sizeof(e.key));
        token = peers_add(&c->peers, &e);
        if (!token) {
                refuse(c, p, req->id, PROTO_E_LIMIT, "too many requests in flight");
                return;
        }
        label[0] = '\0';
        if (req->op == PROTO_OP_LOAD || req->op == PROTO_OP_INSTANTIATE)
                owner_label(p, user, label, sizeof(label));
        host_request_from(c->host, token, req, &hp);
}

/* The id of a map that has one, for the error reply to a request we could not take. */
static uint64_t salvage_id(const struct pv *root)
{
        const struct pv *id = root ? pv_get(root, "id") : NULL;
        uint64_t v;

        return id && pv_u64(id, &v) == 0 ? v : 0;
}

/* Who is at the other end of p, from the frame's properties (user: the CURVE User-Id). */
static void identify(struct control *c, const struct ctl_peer *p, const char *user,
                     const char *addr, struct ctl_who *who)
{
        struct access_rules rules = {
                .users = c->cfg->role_users, .n_users = c->cfg->n_role_users,
                .groups = c->cfg->role_groups, .n_groups = c->cfg->n_role_groups,
                .default_role = c->cfg->default_role,
                .has_socket_gid = c->has_socket_gid, .socket_gid = c->socket_gid,
                .self = geteuid(),
        };
        uid_t uid;
        gid_t gid;

        who->user[0] = '\0';
        who->key[0] = '\0';
        if (p->sock == CTL_SOCK_TCP) {
                /* ZAP admitted the key; a reload may have removed it since (ACCESS_NONE). */
                who->role = (enum access_role)zap_role(c->zap, user);
                snprintf(who->user, sizeof(who->user), "key %.40s", user ? user : "?");
                snprintf(who->label, sizeof(who->label), "key %.40s", user ? user : "?");
                snprintf(who->key, sizeof(who->key), "%s",
                         user && strlen(user) == CTL_KEY_MAX - 1 ? user : "");
        } else if (peer_cred_parse(addr, &uid, &gid) == 0) {
                /* From the cache: NSS (perhaps LDAP) is asked once per user every few seconds. */
                who->role = access_cached(&c->roles, &rules, uid, gid, who->label,
                                          sizeof(who->label));
                snprintf(who->user, sizeof(who->user), "uid %lu", (unsigned long)uid);
        } else {
                /*
                 * libzmq gives every ipc peer its credentials on Linux; be
                 * safe if not: such peers cannot be told apart, so they may
                 * read (default_role at most observer) but change nothing.
                 */
                who->role = access_unidentified(c->cfg->default_role);
                snprintf(who->label, sizeof(who->label), "an unidentified local peer");
                snprintf(who->user, sizeof(who->user), "%s", who->label);
        }
}

/* Refuse a request above the asker's role; true when refused. */
static bool refuse_role(struct control *c, const struct ctl_peer *p, const struct proto_req *req,
                        const struct ctl_who *who)
{
        char msg[160];

        if (who->role >= access_needed(req->op) && who->role != ACCESS_NONE)
                return false;
        if (who->role == ACCESS_NONE)
                snprintf(msg, sizeof(msg), "%s: this key is no longer authorized",
                         proto_op_name(req->op));
        else
                access_denied_message(req->op, who->role, msg, sizeof(msg));
        if (access_changes(req->op) || who->role == ACCESS_NONE)
                log_notice("request: %s%s by %s as %s: denied: %s", proto_op_name(req->op),
                           session_text(session_of(req), (char[32]){ 0 }, 32), who->label,
                           access_role_name(who->role), msg);
        reply_error(c, p, req->id, PROTO_E_DENIED, msg);
        return true;
}

static void dispatch(struct control *c, const struct ctl_peer *p, const void *body, size_t len,
                     const char *user, const char *addr)
{
        struct ctl_who who;
        char err[256];
        struct pv_doc doc = { 0 };
        struct proto_req req;
        struct proto_target t;
        int r;

        r = pv_decode(body, len, &c->lim, &doc, err, sizeof(err));
        if (r < 0) {
                /* The id as far as the bytes can be read: the client waits for it. */
                uint64_t id = proto_req_id_raw(body, len);

                if (r == -ENOMEM)
                        refuse(c, p, id, PROTO_E_INTERNAL, "out of memory");
                else
                        refuse(c, p, id, PROTO_E_BAD_REQUEST, err);
                goto out;
        }
        r = proto_req_decode(doc.root, &req, err, sizeof(err));
        if (r < 0) {
                refuse(c, p, salvage_id(doc.root),
                       r == -EOPNOTSUPP ? PROTO_E_UNKNOWN_OP : PROTO_E_BAD_REQUEST, err);
                goto out;
        }
        identify(c, p, user, addr, &who);
        if (refuse_role(c, p, &req, &who))
                goto out;
        if (req.op == PROTO_OP_RIG && p->sock == CTL_SOCK_TCP && !c->cfg->rig_remote_endpoint) {
                /* Over tcp a rig gets a bridge (control_rig_remote.c), when one may bind. */
                refuse(c, p, req.id, PROTO_E_UNSUPPORTED, "rig: remote rigs are not served "
                       "here (the daemon's [rig] remote_endpoint is not set)");
                goto out;
        }
        /*
         * A request read and allowed: the leases of the transient sessions
         * this connection holds for this user start again. Not before: the
         * routing id is the client's to choose, and anyone may send bytes.
         */
        if (c->host)
                host_renew(c->host, &(struct host_peer){ .sock = p->sock, .id = p->id,
                                                         .id_len = p->id_len, .user = who.user });
        switch (req.op) {
        case PROTO_OP_HELLO:
                do_hello(c, p, &req);
                break;
        case PROTO_OP_SHUTDOWN:
                do_shutdown(c, p, &req, &who);
                break;
        case PROTO_OP_STATUS:
                if (proto_target_decode(req.args, &t, err, sizeof(err)) < 0)
                        refuse(c, p, req.id, PROTO_E_BAD_REQUEST, err);
                else if (t.session == 0)
                        do_daemon_status(c, p, req.id);
                else
                        to_host(c, p, &req, user, &who);
                break;
        default:
                to_host(c, p, &req, user, &who);
                break;
        }
out:
        pv_doc_fini(&doc);
}

void ctl_serve(struct control *c, int sock)
{
        zmq_msg_t f[MAX_FRAMES];
        struct ctl_peer p = { .sock = (uint8_t)sock };
        int n = 0, more = 1, extra = 0;
        size_t total = 0, sz = sizeof(more);
        void *s = c->router[sock];

        while (more) {
                zmq_msg_t m;

                zmq_msg_init(&m);
                if (zmq_msg_recv(&m, s, ZMQ_DONTWAIT) < 0) {
                        zmq_msg_close(&m);
                        break;
                }
                if (zmq_getsockopt(s, ZMQ_RCVMORE, &more, &sz) < 0)
                        more = 0;
                total += zmq_msg_size(&m);
                if (n < MAX_FRAMES)
                        f[n++] = m;
                else {
                        extra++;
                        zmq_msg_close(&m);
                }
        }
        if (n == 0)
                return;
        /* Frame 0 is the routing id ROUTER prepends; it names the peer for the reply. */
        if (zmq_msg_size(&f[0]) > CTL_MAX_IDENTITY) {
                log_warn("a routing id of %zu bytes, dropped", zmq_msg_size(&f[0]));
                goto out;
        }
        p.id_len = (uint8_t)zmq_msg_size(&f[0]);
        memcpy(p.id, zmq_msg_data(&f[0]), p.id_len);
        if (n == 3 && zmq_msg_size(&f[1]) == 0 && !extra)
                p.delim = true;
        /* A refusal carries the id of the last frame when it reads as a request's. */
        if (n < 2 || extra || (n == 3 && !p.delim)) {
                refuse(c, &p, n < 2 ? 0 : proto_req_id_raw(zmq_msg_data(&f[n - 1]),
                                                           zmq_msg_size(&f[n - 1])),
                       PROTO_E_BAD_REQUEST,
                       "a request is one frame (after an empty delimiter from REQ sockets)");
                goto out;
        }
        if (total > c->cfg->max_message) {
                refuse(c, &p, proto_req_id_raw(zmq_msg_data(&f[n - 1]), zmq_msg_size(&f[n - 1])),
                       PROTO_E_BAD_REQUEST, "message above max_message");
                goto out;
        }
        /* An ipc peer's uid and gid (peer_cred.h); tcp peers have none. */
        if (sock == CTL_SOCK_IPC)
                p.has_cred = peer_cred_parse(zmq_msg_gets(&f[n - 1], "Peer-Address"), &p.uid,
                                             &p.gid) == 0;
        /* The CURVE client's key as ZAP admitted it (NULL on ipc); ipc: ":uid:gid:pid". */
        dispatch(c, &p, zmq_msg_data(&f[n - 1]), zmq_msg_size(&f[n - 1]),
                 zmq_msg_gets(&f[n - 1], "User-Id"), zmq_msg_gets(&f[n - 1], "Peer-Address"));
out:
        for (int i = 0; i < n; i++)
                zmq_msg_close(&f[i]);
}

void ctl_log_outcome(const struct ctl_peer *p, const void *body, size_t len)
{
        struct proto_limits lim;
        struct pv_doc doc = { 0 };
        struct proto_reply r;
        const struct pv *sid;
        char msg[200] = "ok";
        uint64_t session = p->session;

        if (!p->log)
                return;
        proto_limits_default(&lim);
        if (pv_decode(body, len, &lim, &doc, NULL, 0) < 0 ||
            proto_reply_decode(doc.root, &r, NULL, 0) < 0) {
                snprintf(msg, sizeof(msg), "no reply could be read");
        } else if (!r.ok) {
                const char *code = r.code >= 0 ? proto_err_name((enum proto_err)r.code) : NULL;

                snprintf(msg, sizeof(msg), "%s: %s", code ? code : "error",
                         log_text((char[160]){ 0 }, 160,
                                  (struct proto_str){ r.message, r.message_len }));
        } else if ((p->op == PROTO_OP_LOAD && (sid = pv_get(r.result, "session"))) ||
                   (p->op == PROTO_OP_INSTANTIATE && (sid = pv_get(r.result, "instance")))) {
                (void)pv_u64(sid, &session);
        }
        log_notice("request: %s%s by %s: %s", proto_op_name((enum proto_op)p->op),
                   session_text(session, (char[32]){ 0 }, 32), p->who, msg);
        pv_doc_fini(&doc);
}
