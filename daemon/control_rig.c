/*
 * control_rig: handing a session's rig channel (shm/rig.h) to a rig
 * process (control.h, proto/PROTOCOL.md "rig").
 *
 * DESIGN: a `rig` request, allowed as `set` is (access.h, and the
 * session's owner check of host_request.c), reaches the session thread,
 * which dups the channel's memfd (host_exec.c) and queues it here
 * (cq_push_rig()). The control thread then keeps it under a one-time
 * token: 128 random bits (getrandom), bound to the asker's uid (the
 * kernel's, peer_cred.h), good for RIG_TOKEN_MS and one presentation, and
 * answers {token, path}. The rig connects to the Unix stream socket at
 * path (rig.sock next to the control socket, same mode and group) and
 * sends the token's RIGW_TOKEN_LEN characters; the daemon compares
 * SO_PEERCRED's uid with the token's and sends the memfd with
 * SCM_RIGHTS and "ok", or a one-line refusal without any fd, and closes.
 * A token is consumed by its first presentation, whoever makes it.
 *
 * Bounds: RIG_MAX_TOKENS tokens (a request beyond is refused "limit"),
 * RIG_MAX_CONNS connections being read (the listener is not polled while
 * all are taken), each read bounded to the token's length and a peer
 * silent for RIG_PEER_MS dropped. One uid holds at most RIG_USER_TOKENS
 * tokens and RIG_USER_CONNS connections (one more is refused at once, at
 * most RIG_MAX_CONNS refusals a turn of the loop), so that no user can keep
 * another's rig from its channel. Every socket is non-blocking: the control
 * loop never waits for a rig.
 *
 * Threads: the control thread only (control_rig_fd() only queues).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "control_int.h"
#include "control_log.h"

int64_t ctl_now_ms(void)
{
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC, &t);
        return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

void control_rig_fd(void *ctx, uint64_t token, uint64_t id, uint64_t session, int fd)
{
        struct control *c = ctx;

        cq_push_rig(&c->q, token, id, session, fd);
}

void ctl_rig_init(struct control *c)
{
        c->rig.lfd = -1;
        for (int i = 0; i < RIG_MAX_CONNS; i++)
                c->rig.conn[i].fd = -1;
}

int ctl_rig_bind(struct control *c, char *err, size_t errlen)
{
        struct ctl_rig *g = &c->rig;
        const char *ep = c->cfg->endpoint, *slash;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        mode_t want = c->has_socket_gid ? 0660 : 0600, old;
        int r;

        if (!ep || strncmp(ep, "ipc://", 6) || !(slash = strrchr(ep + 6, '/')))
                return 0;
        r = snprintf(g->path, sizeof(g->path), "%.*s/rig.sock", (int)(slash - (ep + 6)), ep + 6);
        if (r < 0 || (size_t)r >= sizeof(g->path) || (size_t)r >= sizeof(sa.sun_path)) {
                snprintf(err, errlen, "rig socket next to '%s': path too long", ep);
                return -ENAMETOOLONG;
        }
        strcpy(sa.sun_path, g->path);
        g->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (g->lfd < 0)
                goto fail;
        /* The control socket's bind proved no other daemon serves in this directory. */
        (void)unlink(g->path);
        old = umask(c->has_socket_gid ? 0007 : 0077);
        r = bind(g->lfd, (struct sockaddr *)&sa, sizeof(sa));
        umask(old);
        if (r < 0)
                goto fail;
        g->bound = true;
        if ((c->has_socket_gid && chown(g->path, (uid_t)-1, c->socket_gid) < 0) ||
            chmod(g->path, want) < 0 || listen(g->lfd, RIG_MAX_CONNS) < 0)
                goto fail;
        return 0;
fail:
        r = -errno;
        snprintf(err, errlen, "rig socket '%s': %s", g->path, strerror(-r));
        return r;
}

static void drop_token(struct ctl_rig_token *t)
{
        if (!t->live)
                return;
        close(t->fd);
        explicit_bzero(t->hex, sizeof(t->hex));
        t->live = false;
}

static void drop_conn(struct ctl_rig_conn *k)
{
        if (k->fd >= 0)
                close(k->fd);
        k->fd = -1;
        k->got = 0;
}

void ctl_rig_fini(struct control *c)
{
        struct ctl_rig *g = &c->rig;

        for (int i = 0; i < RIG_MAX_TOKENS; i++)
                drop_token(&g->tok[i]);
        for (int i = 0; i < RIG_MAX_CONNS; i++)
                drop_conn(&g->conn[i]);
        if (g->lfd >= 0)
                close(g->lfd);
        g->lfd = -1;
        if (g->bound)
                (void)unlink(g->path);
        g->bound = false;
}

static void expire(struct ctl_rig *g, int64_t now)
{
        for (int i = 0; i < RIG_MAX_TOKENS; i++)
                if (g->tok[i].live && now >= g->tok[i].expires)
                        drop_token(&g->tok[i]);
        for (int i = 0; i < RIG_MAX_CONNS; i++)
                if (g->conn[i].fd >= 0 && now >= g->conn[i].deadline) {
                        log_notice("rig socket: a peer sent no token in %d ms, dropped",
                                   RIG_PEER_MS);
                        drop_conn(&g->conn[i]);
                }
}

int ctl_rig_new_token(char *hex)
{
        static const char digits[] = "0123456789abcdef";
        uint8_t raw[RIGW_TOKEN_LEN / 2];

        if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
                return -EIO;
        for (size_t i = 0; i < sizeof(raw); i++) {
                hex[2 * i] = digits[raw[i] >> 4];
                hex[2 * i + 1] = digits[raw[i] & 15];
        }
        explicit_bzero(raw, sizeof(raw));
        return 0;
}

void ctl_rig_refuse(struct control *c, const struct ctl_peer *p, uint64_t id, enum proto_err code,
                    const char *msg)
{
        struct pw w;

        if (pw_init(&w) < 0)
                return;
        proto_reply_error(&w, id, code, msg);
        if (!w.error) {
                ctl_log_outcome(p, pw_data(&w), pw_size(&w));
                ctl_send(c, p, pw_data(&w), pw_size(&w));
        }
        pw_fini(&w);
}

void ctl_rig_grant(struct control *c, const struct ctl_peer *p, struct cq_item *it)
{
        struct ctl_rig *g = &c->rig;
        struct ctl_rig_token *t = NULL;
        unsigned mine = 0;
        char msg[160];
        struct pw w;

        expire(g, ctl_now_ms());
        if (!p->has_cred || g->lfd < 0) {
                ctl_rig_refuse(c, p, it->id, PROTO_E_UNSUPPORTED, "rig: the channel is handed to "
                            "local peers the daemon can identify only");
                return;
        }
        for (int i = 0; i < RIG_MAX_TOKENS; i++)
                mine += g->tok[i].live && g->tok[i].uid == p->uid;
        if (mine >= RIG_USER_TOKENS) {
                snprintf(msg, sizeof(msg), "rig: %u channels wait for your rigs already (at "
                         "most %d per user, each until presented or for %d ms)", mine,
                         RIG_USER_TOKENS, RIG_TOKEN_MS);
                ctl_rig_refuse(c, p, it->id, PROTO_E_LIMIT, msg);
                return;
        }
        for (int i = 0; i < RIG_MAX_TOKENS && !t; i++)
                if (!g->tok[i].live)
                        t = &g->tok[i];
        if (!t) {
                ctl_rig_refuse(c, p, it->id, PROTO_E_LIMIT, "rig: too many channels waiting for "
                            "their rig");
                return;
        }
        if (ctl_rig_new_token(t->hex) < 0) {
                ctl_rig_refuse(c, p, it->id, PROTO_E_INTERNAL, "rig: no random token");
                return;
        }
        if (pw_init(&w) < 0) {
                explicit_bzero(t->hex, sizeof(t->hex));
                return;
        }
        proto_reply_ok_begin(&w, it->id);
        pw_map(&w, 3);
        pw_str(&w, "token");
        pw_strn(&w, t->hex, RIGW_TOKEN_LEN);
        pw_str(&w, "path");
        pw_str(&w, g->path);
        pw_str(&w, "expiresMs");
        pw_u64(&w, RIG_TOKEN_MS);
        if (w.error) {
                pw_fini(&w);
                ctl_rig_refuse(c, p, it->id, PROTO_E_INTERNAL, "out of memory");
                return;
        }
        t->live = true;
        t->fd = it->fd;
        it->has_fd = false;             /* the token owns it now */
        t->uid = p->uid;
        t->session = it->session;
        t->expires = ctl_now_ms() + RIG_TOKEN_MS;
        ctl_log_outcome(p, pw_data(&w), pw_size(&w));
        ctl_send(c, p, pw_data(&w), pw_size(&w));
        pw_fini(&w);
}

static void answer(int fd, const char *msg, int pass)
{
        struct iovec iov = { .iov_base = (void *)msg, .iov_len = strlen(msg) };
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int))];
        } u;
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

        if (pass >= 0) {
                memset(&u, 0, sizeof(u));
                mh.msg_control = u.buf;
                mh.msg_controllen = sizeof(u.buf);
                CMSG_FIRSTHDR(&mh)->cmsg_level = SOL_SOCKET;
                CMSG_FIRSTHDR(&mh)->cmsg_type = SCM_RIGHTS;
                CMSG_FIRSTHDR(&mh)->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(CMSG_FIRSTHDR(&mh)), &pass, sizeof(int));
        }
        /* Short and on a fresh socket: it fits its buffer; a peer that went away gets nothing. */
        if (sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
                log_notice("rig socket: answer not sent: %s", strerror(errno));
}

/* A whole token from k: hand its channel or refuse, and close. */
static void present(struct ctl_rig *g, struct ctl_rig_conn *k)
{
        struct ucred cred;
        socklen_t len = sizeof(cred);
        struct ctl_rig_token *t = NULL;

        for (int i = 0; i < RIG_MAX_TOKENS; i++)
                if (g->tok[i].live && rigw_token_eq(g->tok[i].hex, k->buf))
                        t = &g->tok[i];
        if (!t) {
                log_notice("rig socket: an unknown, used or expired token, refused");
                answer(k->fd, "refused: unknown, used or expired token\n", -1);
        } else if (getsockopt(k->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
                   cred.uid != t->uid) {
                log_notice("rig socket: the token of session %llu presented by uid %ld, not "
                           "uid %lu, refused", (unsigned long long)t->session,
                           len == sizeof(cred) ? (long)cred.uid : -1L, (unsigned long)t->uid);
                answer(k->fd, "refused: the token was given to another user\n", -1);
        } else {
                log_info("rig socket: session %llu's rig channel handed to uid %lu",
                         (unsigned long long)t->session, (unsigned long)t->uid);
                answer(k->fd, "ok\n", t->fd);
        }
        /* Single use: consumed by its first presentation, whoever makes it. */
        if (t)
                drop_token(t);
        drop_conn(k);
}

/* Connections of uid being read now. */
static unsigned user_conns(const struct ctl_rig *g, uid_t uid)
{
        unsigned n = 0;

        for (int i = 0; i < RIG_MAX_CONNS; i++)
                n += g->conn[i].fd >= 0 && g->conn[i].uid == uid;
        return n;
}

static void on_accept(struct ctl_rig *g, int64_t now)
{
        int refused = 0;

        /* Refusals take no slot: bounded per call, so a flood cannot hold the loop. */
        for (int i = 0; i < RIG_MAX_CONNS && refused < RIG_MAX_CONNS; i++) {
                struct ctl_rig_conn *k = &g->conn[i];
                struct ucred cred;
                socklen_t len = sizeof(cred);
                int fd;

                if (k->fd >= 0)
                        continue;
                fd = accept4(g->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0)
                        return;
                if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
                    len != sizeof(cred)) {
                        close(fd);
                        continue;
                }
                if (user_conns(g, cred.uid) >= RIG_USER_CONNS) {
                        /* The first and each power of two: a flood costs a few lines. */
                        g->refused++;
                        if (g->refused == 1 || (g->refused & (g->refused - 1)) == 0)
                                log_notice("rig socket: uid %lu has %d connections waiting "
                                           "already, one more refused (%llu refusals so far)",
                                           (unsigned long)cred.uid, RIG_USER_CONNS,
                                           (unsigned long long)g->refused);
                        refused++;
                        answer(fd, "refused: too many connections of this user at once\n", -1);
                        close(fd);
                        i--;            /* the slot is still free */
                        continue;
                }
                k->fd = fd;
                k->uid = cred.uid;
                k->got = 0;
                k->deadline = now + RIG_PEER_MS;
        }
}

static void on_read(struct ctl_rig *g, struct ctl_rig_conn *k)
{
        ssize_t n = read(k->fd, k->buf + k->got, RIGW_TOKEN_LEN - k->got);

        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (n <= 0) {
                drop_conn(k);           /* closed before a whole token */
                return;
        }
        k->got += (size_t)n;
        if (k->got == RIGW_TOKEN_LEN)
                present(g, k);
}

int ctl_rig_poll_items(struct control *c, zmq_pollitem_t *items, int max, long *timeout)
{
        struct ctl_rig *g = &c->rig;
        int64_t now = ctl_now_ms(), next = INT64_MAX;
        int n = 0;
        bool full = true;

        ctl_rig_remote_reap(c, timeout);
        if (g->lfd < 0)
                return 0;
        expire(g, now);
        for (int i = 0; i < RIG_MAX_CONNS && n < max; i++) {
                if (g->conn[i].fd < 0) {
                        full = false;
                        continue;
                }
                items[n++] = (zmq_pollitem_t){ .fd = g->conn[i].fd, .events = ZMQ_POLLIN };
                if (g->conn[i].deadline < next)
                        next = g->conn[i].deadline;
        }
        if (!full && n < max)
                items[n++] = (zmq_pollitem_t){ .fd = g->lfd, .events = ZMQ_POLLIN };
        for (int i = 0; i < RIG_MAX_TOKENS; i++)
                if (g->tok[i].live && g->tok[i].expires < next)
                        next = g->tok[i].expires;
        if (next != INT64_MAX) {
                long ms = next > now ? (long)(next - now) + 1 : 1;

                if (*timeout < 0 || ms < *timeout)
                        *timeout = ms;
        }
        return n;
}

void ctl_rig_serve(struct control *c, const zmq_pollitem_t *items, int n)
{
        struct ctl_rig *g = &c->rig;

        for (int i = 0; i < n; i++) {
                if (!(items[i].revents & (ZMQ_POLLIN | ZMQ_POLLERR)))
                        continue;
                if (items[i].fd == g->lfd) {
                        on_accept(g, ctl_now_ms());
                        continue;
                }
                for (int k = 0; k < RIG_MAX_CONNS; k++)
                        if (g->conn[k].fd == items[i].fd)
                                on_read(g, &g->conn[k]);
        }
}
