/*
 * daemon_rig_open: a rig process gets its session's rig channel from a
 * real fmud (the rig request, then the token on rig.sock; libfmud's
 * fmud_rig_open()): the channel it gets carries the ports and its writes
 * apply; a session without rig ports, a user not allowed to set the
 * session, a token presented twice or by another uid are refused and
 * nothing is passed; a rig killed with SIGKILL gets the session's policy.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon_fixture.h"
#include "support/as_other.h"

#define POLL_MAX        20000   /* status polls before giving up: a hang guard, not a measure */

static struct fmud_daemon d;
static struct fmud *c;

static void setup(void)
{
        daemon_start(&d, NULL);
        c = daemon_connect(&d);
}

static void teardown(void)
{
        fmud_close(c);
        c = NULL;
        daemon_stop(&d);
}

TestSuite(daemon_rig_open, .init = setup, .fini = teardown);

static struct proto_str ins[2], outs[1];

static struct proto_load feedthrough(double stop, const char *policy)
{
        ins[0] = daemon_str("Float64_input");
        ins[1] = daemon_str("Int32_input");
        outs[0] = daemon_str("Float64_output");
        return (struct proto_load){ .path = daemon_str(FMUD_TEST_FMU_DIR "/Feedthrough.fmu"),
                                    .has_stop = true, .stop = stop, .has_step = true,
                                    .step = 0.01, .n_rig_in = 2, .rig_in = ins,
                                    .n_rig_out = 1, .rig_out = outs,
                                    .rig_policy = daemon_str(policy), .has_rig_timeout = true,
                                    .rig_timeout_ms = 50 };
}

Test(daemon_rig_open, the_channel_carries_the_ports_and_a_write_applies_once)
{
        struct proto_load a = feedthrough(0.1, "hold");
        struct proto_session_status st;
        const struct fmud_rig_port *p;
        const struct pv *const *v;
        struct fmud_rig *rig = NULL;
        uint64_t s = daemon_load(c, &a, NULL);
        double f = 0;
        size_t n;

        cr_assert(eq(int, fmud_rig_open(c, s, &rig), 0), "%s", fmud_errmsg(c));
        p = fmud_rig_ports(rig, false, &n);
        cr_assert(eq(sz, n, 2));
        cr_assert(eq(str, (char *)p[0].name, "Float64_input"));
        cr_assert(eq(str, (char *)p[0].type, "Float64"));
        cr_assert(eq(str, (char *)p[1].name, "Int32_input"));
        cr_assert(eq(str, (char *)p[1].type, "Int32"));
        p = fmud_rig_ports(rig, true, &n);
        cr_assert(eq(sz, n, 1));
        cr_assert(eq(str, (char *)p[0].name, "Float64_output"));
        cr_assert(eq(int, fmud_rig_write(rig, (double[]){ 1 }, 1), -EINVAL));
        /* For point 0, before the start: taken at the first step, held after. */
        cr_assert(eq(int, fmud_rig_write(rig, (double[]){ 2.5, 7 }, 2), 0));
        cr_assert(eq(int, fmud_start(c, &(struct proto_target){ s, 0 }, NULL), 0), "%s",
                  fmud_errmsg(c));
        daemon_wait_state(c, s, PROTO_STATE_FINISHED, &st);
        cr_assert(eq(int, fmud_status(c, s, &st), 0), "%s", fmud_errmsg(c));
        cr_assert(eq(u64, st.rig.applied, 1));
        cr_assert(eq(u64, st.rig.bad, 0));
        cr_assert(eq(int, fmud_get(c, &(struct proto_target){ s, 0 },
                                   (const char *[]){ "Float64_output" }, 1, &v), 0), "%s",
                  fmud_errmsg(c));
        cr_assert(eq(int, pv_f64(v[0], &f), 0));
        cr_assert(eq(dbl, f, 2.5));
        fmud_rig_close(rig);
}

Test(daemon_rig_open, a_session_without_rig_ports_is_refused)
{
        struct proto_load a = feedthrough(0.1, "");
        struct fmud_rig *rig = NULL;
        uint64_t s;
        int r;

        a.n_rig_in = a.n_rig_out = 0;
        a.has_rig_timeout = false;
        s = daemon_load(c, &a, NULL);
        r = fmud_rig_open(c, s, &rig);
        daemon_assert_refused(c, r, PROTO_E_INVALID, "rig");
        cr_assert(strstr(fmud_errmsg(c), "has no rig ports") != NULL, "%s", fmud_errmsg(c));
        cr_assert(rig == NULL);
        r = fmud_rig_open(c, 77, &rig);
        daemon_assert_refused(c, r, PROTO_E_NO_SESSION, "rig");
}

/* ---- Tokens presented by hand -------------------------------------------------------- */

struct grant {
        char token[33], path[108];
};

/* A rig request sent raw for session s: the token and the path it answers. */
static void ask(uint64_t s, struct grant *g)
{
        struct daemon_raw raw;
        struct daemon_raw_reply rep;
        const struct pv *t, *p, *e;
        uint64_t ms = 0;
        struct pw w;

        daemon_raw_open(&d, &raw);
        cr_assert(pw_init(&w) == 0);
        proto_target_encode(&w, 5, PROTO_OP_RIG, &(struct proto_target){ s, 0 });
        daemon_raw_send_pw(&raw, &w);
        daemon_raw_recv(&raw, &rep);
        cr_assert(rep.rep.ok, "%s", rep.message);
        t = pv_get(rep.rep.result, "token");
        p = pv_get(rep.rep.result, "path");
        e = pv_get(rep.rep.result, "expiresMs");
        cr_assert(t && t->type == PV_STR && t->s.len == 32);
        cr_assert(p && p->type == PV_STR && p->s.len < sizeof(g->path));
        cr_assert(e && pv_u64(e, &ms) == 0 && ms > 0);
        memcpy(g->token, t->s.ptr, 32);
        g->token[32] = '\0';
        memcpy(g->path, p->s.ptr, p->s.len);
        g->path[p->s.len] = '\0';
        daemon_raw_reply_fini(&rep);
        pw_fini(&w);
        daemon_raw_close(&raw);
}

/* Present g's token on its socket: the fd passed (-1: none) and the answer's text in msg. */
static int present(const struct grant *g, char *msg, size_t size)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct iovec iov = { .iov_base = msg, .iov_len = size - 1 };
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int))];
        } u = { 0 };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                             .msg_controllen = sizeof(u.buf) };
        struct cmsghdr *cm;
        int s, fd = -1;
        ssize_t n;

        strcpy(sa.sun_path, g->path);
        s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        msg[0] = '\0';
        /*
         * A connection refused at once may be closed before the token is
         * sent: no SIGPIPE, and the refusal is read all the same.
         */
        if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
            (send(s, g->token, 32, MSG_NOSIGNAL) != 32 && errno != EPIPE &&
             errno != ECONNRESET) || (n = recvmsg(s, &mh, 0)) < 0) {
                snprintf(msg, size, "no answer");
                if (s >= 0)
                        close(s);
                return -1;
        }
        msg[n] = '\0';
        for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
                if (cm->cmsg_type == SCM_RIGHTS)
                        memcpy(&fd, CMSG_DATA(cm), sizeof(int));
        close(s);
        return fd;
}

/* As the other user: present the token; the answer on report_fd, exit 5 when an fd came. */
static int present_as_other(void *ctx, int report_fd)
{
        char msg[128];
        int fd = present(ctx, msg, sizeof(msg));

        (void) !write(report_fd, msg, strlen(msg));
        return fd >= 0 ? 5 : 0;
}

static void open_to_others(void)
{
        char *rs = daemon_path(&d, "rig.sock"), *cs = daemon_path(&d, "control.sock");

        cr_assert(eq(int, chmod(d.dir, 0777), 0));
        cr_assert(eq(int, chmod(rs, 0666), 0));
        cr_assert(eq(int, chmod(cs, 0666), 0));
        free(rs);
        free(cs);
}

Test(daemon_rig_open, a_token_is_good_once_and_for_its_user_only)
{
        struct proto_load a = feedthrough(0.1, "hold");
        uint64_t s = daemon_load(c, &a, NULL);
        struct proto_session_status st;
        struct grant g;
        char msg[128], other[128];
        int fd, status = -1;
        ssize_t n;

        open_to_others();
        /* Another uid presents it: refused, nothing passed, and the token is spent. */
        ask(s, &g);
        n = as_other(present_as_other, &g, other, sizeof(other) - 1, &status);
        cr_assert(n >= 0);
        other[n] = '\0';
        cr_assert(eq(int, status, 0), "an fd was passed to another uid: %s", other);
        cr_assert(eq(str, other, "refused: the token was given to another user\n"));
        cr_assert(eq(int, present(&g, msg, sizeof(msg)), -1));
        cr_assert(eq(str, msg, "refused: unknown, used or expired token\n"));
        /* Its own user: the channel once, then nothing. */
        ask(s, &g);
        fd = present(&g, msg, sizeof(msg));
        cr_assert(fd >= 0, "%s", msg);
        cr_assert(eq(str, msg, "ok\n"));
        close(fd);
        cr_assert(eq(int, present(&g, msg, sizeof(msg)), -1));
        cr_assert(eq(str, msg, "refused: unknown, used or expired token\n"));
        /* A made-up token too; the daemon and the session are unharmed. */
        memset(g.token, 'a', 32);
        cr_assert(eq(int, present(&g, msg, sizeof(msg)), -1));
        cr_assert(eq(str, msg, "refused: unknown, used or expired token\n"));
        cr_assert(eq(int, fmud_status(c, s, &st), 0), "%s", fmud_errmsg(c));
        cr_assert(st.state == PROTO_STATE_LOADED);
}

struct other_open {
        const char *endpoint;
        uint64_t session;
};

/* As the other user: fmud_rig_open(); its message on report_fd, exit 5 when it opened. */
static int open_as_other(void *ctx, int report_fd)
{
        const struct other_open *o = ctx;
        struct fmud_rig *rig = NULL;
        struct fmud *oc = NULL;
        char err[256];
        int r;

        if (fmud_connect(o->endpoint, NULL, &oc, err, sizeof(err)) < 0)
                return 3;
        r = fmud_rig_open(oc, o->session, &rig);
        (void) !write(report_fd, fmud_errmsg(oc), strlen(fmud_errmsg(oc)));
        fmud_rig_close(rig);
        fmud_close(oc);
        return r == 0 ? 5 : 0;
}

Test(daemon_rig_open, a_user_who_may_not_set_the_session_is_refused)
{
        struct proto_load a = feedthrough(0.1, "hold");
        uint64_t s = daemon_load(c, &a, NULL);
        struct other_open o = { d.endpoint, s };
        char line[256];
        int status = -1;
        ssize_t n;

        open_to_others();
        n = as_other(open_as_other, &o, line, sizeof(line) - 1, &status);
        cr_assert(n >= 0);
        line[n] = '\0';
        cr_assert(eq(int, status, 0), "the other user opened the rig: %s", line);
        cr_assert(strstr(line, "rig needs the operator role") != NULL, "%s", line);
}

Test(daemon_rig_open, a_rig_killed_gets_the_sessions_policy)
{
        struct proto_load a = feedthrough(1e6, "hold");
        uint64_t s = daemon_load(c, &a, NULL);
        struct proto_session_status st;
        int ready[2], status, i;
        char b;
        pid_t kid;

        cr_assert(eq(int, pipe(ready), 0));
        kid = fork();
        cr_assert(kid >= 0);
        if (kid == 0) {
                /* The rig: its own connection, writing at every point until killed. */
                struct fmud_rig *rig = NULL;
                struct fmud_rig_point pt;
                struct fmud *kc = NULL;
                char err[256];

                close(ready[0]);
                if (fmud_connect(d.endpoint, NULL, &kc, err, sizeof(err)) < 0 ||
                    fmud_rig_open(kc, s, &rig) < 0)
                        _exit(3);
                (void) !write(ready[1], "r", 1);
                for (;;) {
                        (void) fmud_rig_write(rig, (double[]){ 4, 2 }, 2);
                        (void) fmud_rig_wait(rig, 10, &pt);
                }
        }
        close(ready[1]);
        cr_assert(eq(int, (int)read(ready[0], &b, 1), 1), "the rig could not open");
        close(ready[0]);
        cr_assert(eq(int, fmud_warp(c, &(struct proto_target){ s, 0 }, 1, NULL), 0), "%s",
                  fmud_errmsg(c));
        cr_assert(eq(int, fmud_start(c, &(struct proto_target){ s, 0 }, NULL), 0), "%s",
                  fmud_errmsg(c));
        for (i = 0; i < POLL_MAX; i++) {
                cr_assert(eq(int, fmud_status(c, s, &st), 0), "%s", fmud_errmsg(c));
                if (daemon_str_eq(st.rig.state, "attached") && st.rig.applied > 0)
                        break;
                usleep(1000);
        }
        cr_assert(i < POLL_MAX, "the rig never attached");
        cr_assert(st.rig.in_force == false);
        cr_assert(eq(int, kill(kid, SIGKILL), 0));
        cr_assert(eq(int, (int)waitpid(kid, &status, 0), (int)kid));
        for (i = 0; i < POLL_MAX; i++) {
                cr_assert(eq(int, fmud_status(c, s, &st), 0), "%s", fmud_errmsg(c));
                if (st.rig.in_force)
                        break;
                usleep(1000);
        }
        cr_assert(i < POLL_MAX, "the policy never applied");
        cr_assert(daemon_str_eq(st.rig.state, "vanished"));
        cr_assert(daemon_str_eq(st.rig.policy, "hold"));
        cr_assert(st.state == PROTO_STATE_RUNNING);
}

Test(daemon_rig_open, a_silent_peer_holds_nothing_up_and_is_dropped)
{
        struct proto_load a = feedthrough(0.1, "hold");
        uint64_t s = daemon_load(c, &a, NULL);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct timeval guard = { .tv_sec = 60 };       /* a hang guard, not a measure */
        struct grant g;
        char msg[128], b;
        int silent, fd;

        ask(s, &g);
        strcpy(sa.sun_path, g.path);
        silent = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        cr_assert(silent >= 0);
        cr_assert(eq(int, connect(silent, (struct sockaddr *)&sa, sizeof(sa)), 0));
        cr_assert(eq(int, (int)write(silent, g.token, 5), 5));
        /* Meanwhile the control plane and the rig socket serve others. */
        fd = present(&g, msg, sizeof(msg));
        cr_assert(fd >= 0, "%s", msg);
        close(fd);
        cr_assert(eq(int, fmud_status(c, s, &(struct proto_session_status){ 0 }), 0), "%s",
                  fmud_errmsg(c));
        /* Then it is closed without an answer. */
        cr_assert(eq(int, setsockopt(silent, SOL_SOCKET, SO_RCVTIMEO, &guard, sizeof(guard)), 0));
        cr_assert(eq(int, (int)read(silent, &b, 1), 0));
        close(silent);
}

/*
 * No user keeps another's rig from its channel: one uid holds at most 8
 * waiting tokens (a 9th request is refused `limit`, saying so) and 4
 * connections being read on the rig socket (a 5th is refused at once with
 * a line, not held); a token presented frees its place.
 */
Test(daemon_rig_open, one_user_holds_at_most_8_tokens_and_4_connections)
{
        struct proto_load a = feedthrough(0.1, "hold");
        uint64_t s = daemon_load(c, &a, NULL);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct fmud_rig *rig = NULL;
        struct grant g[8];
        int silent[4], fd, r;
        char msg[128];

        for (int i = 0; i < 8; i++)
                ask(s, &g[i]);
        r = fmud_rig_open(c, s, &rig);
        daemon_assert_refused(c, r, PROTO_E_LIMIT, "rig");
        cr_assert(strstr(fmud_errmsg(c), "at most 8 per user") != NULL, "%s", fmud_errmsg(c));
        /* Four silent connections: a fifth is answered at once, and nothing is spent. */
        strcpy(sa.sun_path, g[0].path);
        for (int i = 0; i < 4; i++) {
                silent[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                cr_assert(silent[i] >= 0);
                cr_assert(eq(int, connect(silent[i], (struct sockaddr *)&sa, sizeof(sa)), 0));
        }
        cr_assert(eq(int, present(&g[0], msg, sizeof(msg)), -1));
        cr_assert(eq(str, msg, "refused: too many connections of this user at once\n"));
        close(silent[0]);
        /* The daemon sees the close at its next poll: the token is good once it does. */
        for (int i = 0; i < 1000 && (fd = present(&g[0], msg, sizeof(msg))) < 0; i++) {
                cr_assert(eq(str, msg, "refused: too many connections of this user at once\n"));
                usleep(1000);
        }
        cr_assert(fd >= 0, "%s", msg);
        close(fd);
        for (int i = 1; i < 4; i++)
                close(silent[i]);
        /* The token presented freed a place: a rig opens again. */
        cr_assert(eq(int, fmud_rig_open(c, s, &rig), 0), "%s", fmud_errmsg(c));
        fmud_rig_close(rig);
}
