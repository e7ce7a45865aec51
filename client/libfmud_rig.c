/*
 * libfmud_rig: a rig process's side of a session's rig channel (fmud.h):
 * the rig request, the hand-over on the daemon's rig socket, and thin
 * wrappers of shm/rig.h.
 *
 * DESIGN: the daemon answers `rig` with a one-time token and the path of
 * its rig socket (proto/PROTOCOL.md "rig"); the token's characters are
 * sent there, and the answer is "ok" with the memfd (SCM_RIGHTS) or one
 * line saying why not, without any fd. Both are bounded: the answer is
 * read once into a small buffer, and the socket has send and receive
 * timeouts, so a daemon that does not answer cannot hold the caller.
 * Writes go to the point after the last one waited for: the master takes
 * them at the start of the step from that point (docs/scenarios.md).
 * Over tcp the daemon answers with a bridge's port instead of a socket
 * path, and the same calls go through libfmud_rig_remote.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "libfmud_rig_int.h"
#include "proto/rig_wire.h"
#include "shm/rig.h"

#define RIG_IO_TIMEOUT_S 5


/* The string at key of v, NUL-terminated into buf; false when missing, no string or too long. */
static bool str_at(const struct pv *v, const char *key, char *buf, size_t size)
{
        const struct pv *s = pv_get(v, key);

        if (!s || s->type != PV_STR || s->s.len >= size || memchr(s->s.ptr, 0, s->s.len))
                return false;
        memcpy(buf, s->s.ptr, s->s.len);
        buf[s->s.len] = '\0';
        return true;
}

#ifdef SO_PEERPIDFD
#define FMUD_SO_PEERPIDFD       SO_PEERPIDFD
#else
#define FMUD_SO_PEERPIDFD       77      /* asm-generic/socket.h, Linux 6.5 */
#endif

/*
 * A pidfd of the process at the other end of s (the daemon), so that a rig
 * sees it end even when it was killed before it could end the channel;
 * -1 where it cannot be had (a kernel before 6.5 and the daemon in
 * another pid namespace).
 */
static int peer_pidfd(int s)
{
        struct ucred cr;
        socklen_t len = sizeof(int);
        int fd = -1;

        /* Linux 6.5 on: the kernel's own pidfd of the peer, in any pid namespace. */
        if (getsockopt(s, SOL_SOCKET, FMUD_SO_PEERPIDFD, &fd, &len) == 0 && fd >= 0)
                return fd;
        len = sizeof(cr);
        if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || cr.pid <= 0)
                return -1;
        return (int)syscall(SYS_pidfd_open, cr.pid, 0);
}

/*
 * Present token on the socket at path; the channel's fd, or an error in c.
 * *ret_pidfd: the daemon's pidfd (peer_pidfd()) with the channel.
 */
static int fetch(struct fmud *c, const char *path, const char *token, int *ret_pidfd)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct timeval tv = { .tv_sec = RIG_IO_TIMEOUT_S };
        char msg[128];
        struct iovec iov = { .iov_base = msg, .iov_len = sizeof(msg) - 1 };
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int))];
        } u;
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                             .msg_controllen = sizeof(u.buf) };
        struct cmsghdr *cm;
        ssize_t n;
        int s, fd = -1, r;

        if (strlen(path) >= sizeof(sa.sun_path))
                return fmud_fail(c, -ENAMETOOLONG, "rig: socket path too long");
        strcpy(sa.sun_path, path);
        s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0)
                return fmud_fail(c, -errno, "rig: socket: %s", strerror(errno));
        (void)setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        (void)setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                r = fmud_fail(c, -errno, "rig: connecting to '%s': %s", path, strerror(errno));
                goto out;
        }
        if (send(s, token, RIGW_TOKEN_LEN, MSG_NOSIGNAL) != RIGW_TOKEN_LEN) {
                r = fmud_fail(c, -EPROTO, "rig: sending the token to '%s' failed", path);
                goto out;
        }
        memset(&u, 0, sizeof(u));
        n = recvmsg(s, &mh, MSG_CMSG_CLOEXEC);
        if (n < 0) {
                r = fmud_fail(c, -errno, "rig: no answer from '%s': %s", path, strerror(errno));
                goto out;
        }
        for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
                if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
                    cm->cmsg_len == CMSG_LEN(sizeof(int)) && fd < 0)
                        memcpy(&fd, CMSG_DATA(cm), sizeof(int));
        msg[n] = '\0';
        msg[strcspn(msg, "\n")] = '\0';
        for (char *p = msg; *p; p++)
                if (*p < 0x20 || *p > 0x7e)
                        *p = '?';
        if (fd >= 0 && !strcmp(msg, "ok") && !(mh.msg_flags & MSG_CTRUNC)) {
                r = fd;
                fd = -1;
                *ret_pidfd = peer_pidfd(s);
        } else {
                r = fmud_fail(c, FMUD_E_REFUSED, "rig: %s", n ? msg : "the daemon closed the "
                              "rig socket without an answer");
        }
out:
        if (fd >= 0)
                close(fd);
        close(s);
        return r;
}

static int ports_of(struct fmud_rig *g)
{
        for (int k = 0; k < 2; k++) {
                const struct rig_port *p = rig_ports(g->r, k == 1, &g->n[k]);

                g->ports[k] = calloc(g->n[k] ? g->n[k] : 1, sizeof(*g->ports[k]));
                if (!g->ports[k])
                        return -ENOMEM;
                for (uint32_t i = 0; i < g->n[k]; i++)
                        g->ports[k][i] = (struct fmud_rig_port){
                                .name = p[i].name,
                                .type = rig_type_name((enum rig_type)p[i].type) };
        }
        g->vals = calloc(g->n[1] ? g->n[1] : 1, sizeof(double));
        return g->vals ? 0 : -ENOMEM;
}

int fmud_rig_open(struct fmud *c, uint64_t session, struct fmud_rig **ret)
{
        char token[RIGW_TOKEN_LEN + 1], path[108];
        struct fmud_rig *g;
        const struct pv *v;
        struct rig_holder holder = { 0 };
        uint64_t id;
        int r, fd, pidfd = -1;

        if (!c || !ret)
                return fmud_missing(c, "rig", "the rig's place");
        id = fmud_begin(c);
        proto_target_encode(&c->w, id, PROTO_OP_RIG, &(struct proto_target){ session, 0 });
        r = fmud_call(c, id, "rig", &v);
        if (r < 0)
                return r;
        if (pv_get(v, "port")) {
                g = calloc(1, sizeof(*g));
                if (!g)
                        return fmud_fail(c, -ENOMEM, "out of memory");
                r = rig_remote_open(c, v, g);
                if (r < 0) {
                        fmud_rig_close(g);
                        return r;
                }
                *ret = g;
                return 0;
        }
        if (!str_at(v, "token", token, sizeof(token)) || strlen(token) != RIGW_TOKEN_LEN ||
            !str_at(v, "path", path, sizeof(path)) || path[0] != '/')
                return fmud_bad_result(c, "rig", "no 32-character 'token' and absolute 'path'");
        fd = fetch(c, path, token, &pidfd);
        explicit_bzero(token, sizeof(token));
        if (fd < 0)
                return fd;
        g = calloc(1, sizeof(*g));
        if (!g) {
                close(fd);
                if (pidfd >= 0)
                        close(pidfd);
                return fmud_fail(c, -ENOMEM, "out of memory");
        }
        r = rig_attach(fd, &g->r);
        if (r >= 0 && pidfd >= 0)
                rig_watch_peer(g->r, pidfd);
        else if (pidfd >= 0)
                close(pidfd);
        if (r < 0) {
                close(fd);
                free(g);
                return fmud_fail(c, r, "rig: the channel of session %llu is not one: %s",
                                 (unsigned long long)session, strerror(-r));
        }
        /* One rig at a time: its rings have one writer and one reader each. */
        r = rig_claim(g->r, false, &holder);
        if (r < 0 && r != -EBUSY) {
                fmud_rig_close(g);
                return fmud_fail(c, r, "rig: the channel of session %llu is broken (a rig "
                                 "rewrote its rings): %s", (unsigned long long)session,
                                 strerror(-r));
        }
        if (r < 0) {
                fmud_rig_close(g);
                if (holder.relay)
                        return fmud_fail(c, FMUD_E_REFUSED, "rig: session %llu already has a rig "
                                         "(a remote one, through the daemon's bridge); a session "
                                         "has one rig at a time, and another may attach once the "
                                         "remote rig has left, or been silent for rigTimeoutMs "
                                         "and 1 s more (a bridge whose token was never presented "
                                         "ends after 5 s)", (unsigned long long)session);
                return fmud_fail(c, FMUD_E_REFUSED, "rig: session %llu already has a rig (a local "
                                 "one, heard from %llu ms ago); a session has one rig at a time, "
                                 "and another may attach once it has closed, or been silent for "
                                 "the session's rigTimeoutMs and 1 s after it opened",
                                 (unsigned long long)session,
                                 (unsigned long long)holder.quiet_ms);
        }
        if (ports_of(g) < 0) {
                fmud_rig_close(g);
                return fmud_fail(c, -ENOMEM, "out of memory");
        }
        *ret = g;
        return 0;
}

const struct fmud_rig_port *fmud_rig_ports(const struct fmud_rig *rig, bool out, size_t *ret_n)
{
        if (!rig || !ret_n) {
                if (ret_n)
                        *ret_n = 0;
                return NULL;
        }
        *ret_n = rig->n[out];
        return rig->ports[out];
}

int fmud_rig_write(struct fmud_rig *rig, const double *in, size_t n)
{
        if (!rig || n != rig->n[0] || (n && !in))
                return -EINVAL;
        if (rig->remote)
                return rig_remote_write(rig, in);
        return rig_write(rig->r, rig->next, in);
}

int fmud_rig_wait(struct fmud_rig *rig, int timeout_ms, struct fmud_rig_point *pt)
{
        struct timespec dl;
        uint64_t point, skipped;
        double time;
        int r;

        if (!rig)
                return -EINVAL;
        if (rig->remote) {
                r = rig_remote_wait(rig, timeout_ms, &point, &time, &skipped);
                if (r < 0)
                        return r;
        } else {
                clock_gettime(CLOCK_MONOTONIC, &dl);
                if (timeout_ms >= 0) {
                        dl.tv_sec += timeout_ms / 1000;
                        dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
                        if (dl.tv_nsec >= 1000000000L) {
                                dl.tv_sec++;
                                dl.tv_nsec -= 1000000000L;
                        }
                }
                for (;;) {
                        r = rig_read(rig->r, &point, &time, rig->vals, &skipped);
                        if (r == 0)
                                break;
                        if (r != -EAGAIN)
                                return r;
                        r = rig_wait(rig->r, timeout_ms >= 0 ? &dl : NULL);
                        if (r < 0)
                                return r;
                }
        }
        rig->last = (struct fmud_rig_point){ .point = point, .time = time, .skipped = skipped };
        rig->have = true;
        rig->next = point + 1;
        if (pt)
                *pt = rig->last;
        return 0;
}

int fmud_rig_read(struct fmud_rig *rig, double *out, size_t n, struct fmud_rig_point *pt)
{
        if (!rig || n != rig->n[1] || (n && !out))
                return -EINVAL;
        if (!rig->have)
                return -EAGAIN;
        if (n)
                memcpy(out, rig->vals, n * sizeof(double));     /* out may be NULL for none */
        if (pt)
                *pt = rig->last;
        return 0;
}

void fmud_rig_close(struct fmud_rig *rig)
{
        if (!rig)
                return;
        if (rig->remote)
                rig_remote_close(rig);
        rig_close(rig->r);
        free(rig->ports[0]);
        free(rig->ports[1]);
        free(rig->vals);
        free(rig);
}
