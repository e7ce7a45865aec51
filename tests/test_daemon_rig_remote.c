/*
 * daemon_rig_remote: a remote rig through a real fmud's bridge over tcp
 * with CURVE (rig_remote_fixture.h, daemon/rig_bridge.h): libfmud's rig
 * API works unchanged over tcp; a write applies at its point, once and
 * whole; every point's outputs arrive (or are counted as skipped); a
 * second remote rig for the session is refused; the token serves the
 * asker's key only, and a key the daemon does not admit gets nothing;
 * unloading the session ends the bridge; a bridge that ended by itself
 * lets its port go with nothing else asked; the example rig runs unchanged
 * against the daemon over tcp.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "rig_remote_fixture.h"
#include "support/tmpdir.h"

#define POINTS_MAX      100000  /* waits before giving up: a hang guard, not a measure */
#define SILENT_MS       1000    /* how long a refused key is listened to for an answer */

static struct rr t;

static void setup(void)
{
        rr_start(&t);
}

static void teardown(void)
{
        rr_stop(&t);
}

TestSuite(daemon_rig_remote, .init = setup, .fini = teardown);

/*
 * hello on a new bridge of session s: asserts the ports come back, then
 * the newest point (point 0 if the session is not started); the DEALER,
 * and the bridge's port in *ret_port (may be NULL).
 */
/* A rig request for session s, hello on its new bridge; asserts the ports come back into *m. */
static void *hello(uint64_t s, struct rigw_msg *m, unsigned *ret_port)
{
        char token[RIGW_TOKEN_LEN + 1], text[256];
        struct pw w;
        void *z;

        rr_ask(&t, s, token, ret_port);
        z = rr_bridge(&t, *ret_port, t.ok_pub, t.ok_sec);
        cr_assert(pw_init(&w) == 0);
        rigw_hello(&w, token);
        rr_send(z, pw_data(&w), pw_size(&w));
        pw_fini(&w);
        rr_recv(z, m, NULL, 0, text, sizeof(text));
        cr_assert(eq(int, m->kind, RIGW_PORTS), "%s", text);
        return z;
}

static void *attach(uint64_t s, bool started, unsigned *ret_port)
{
        char text[256];
        struct rigw_msg m;
        double out[2];
        unsigned port;
        void *z = hello(s, &m, &port);

        cr_assert(eq(u32, m.n_in, 2));
        cr_assert(eq(u32, m.n_out, 2));
        /* rigTimeoutMs 50: a silent rig beats every 10 ms, as a local rig does. */
        cr_assert(eq(u32, m.beat_ms, 10));
        /*
         * Then the newest point published before the hello, always, however
         * the hello and the bridge's point thread raced: before the start,
         * point 0 of the load (the outputs of the inputs' start values, 2.5
         * and -32).
         */
        rr_recv(z, &m, out, 2, text, sizeof(text));
        cr_assert(eq(int, m.kind, RIGW_POINT), "%s", text);
        cr_assert(eq(u32, m.n, 2));
        if (!started) {
                cr_assert(eq(u64, m.point, 0));
                cr_assert(eq(u64, m.skipped, 0));
                cr_assert(eq(dbl, out[0], 2.5));
                cr_assert(eq(dbl, out[1], -32));
        }
        if (ret_port)
                *ret_port = port;
        return z;
}

Test(daemon_rig_remote, a_write_applies_once_and_whole_at_its_point)
{
        struct proto_load a = rr_feedthrough(0.1, "hold");
        struct proto_session_status st;
        const struct pv *const *v;
        uint64_t s = daemon_load(t.c, &a, NULL);
        void *z = attach(s, false, NULL);
        char text[256];
        struct rigw_msg m;
        double f = 0, i = 0;
        struct pw w;

        cr_assert(pw_init(&w) == 0);
        /* For point 0, before the start: taken at the first step. */
        rigw_write(&w, 0, (double[]){ 2.5, 7 }, 2);
        rr_send(z, pw_data(&w), pw_size(&w));
        /* A bad message after it: its answer says the write went in before it. */
        rigw_write(&w, 0, (double[]){ 1 }, 1);
        rr_send(z, pw_data(&w), pw_size(&w));
        rr_recv(z, &m, NULL, 0, text, sizeof(text));
        cr_assert(eq(int, m.kind, RIGW_ERROR));
        cr_assert(eq(str, text, "bad: bad message, not applied: 1 values for 2 inputs"));
        cr_assert(eq(u64, m.bad, 1));
        cr_assert(eq(int, fmud_start(t.c, &(struct proto_target){ s, 0 }, NULL), 0), "%s",
                  fmud_errmsg(t.c));
        daemon_wait_state(t.c, s, PROTO_STATE_FINISHED, &st);
        cr_assert(eq(int, fmud_status(t.c, s, &st), 0), "%s", fmud_errmsg(t.c));
        cr_assert(eq(u64, st.rig.applied, 1));
        cr_assert(eq(u64, st.rig.late, 0));
        cr_assert(eq(u64, st.rig.bad, 1));
        cr_assert(eq(int, fmud_get(t.c, &(struct proto_target){ s, 0 },
                                   (const char *[]){ "Float64_output", "Int32_output" }, 2, &v),
                     0), "%s", fmud_errmsg(t.c));
        cr_assert(eq(int, pv_f64(v[0], &f), 0));
        cr_assert(eq(int, pv_f64(v[1], &i), 0));
        cr_assert(eq(dbl, f, 2.5));
        cr_assert(eq(dbl, i, 7));
        pw_fini(&w);
        rr_close(&t, z);
}

Test(daemon_rig_remote, libfmud_opens_over_tcp_and_every_point_arrives_whole)
{
        struct proto_load a = rr_feedthrough(0.5, "hold");
        struct proto_session_status st;
        const struct fmud_rig_port *p;
        struct fmud_rig *rig = NULL;
        struct fmud_rig_point pt = { 0 };
        uint64_t s, seen = 0, first = 0, last = 0;
        double out[2];
        size_t n;
        int i, r;

        /*
         * Paced, 50 points of 10 ms: unpaced, a loaded machine can end the
         * run before the rig's first write has crossed the bridge.
         */
        a.has_warp = true;
        a.warp = 1;
        s = daemon_load(t.c, &a, NULL);

        cr_assert(eq(int, fmud_rig_open(t.c, s, &rig), 0), "%s", fmud_errmsg(t.c));
        p = fmud_rig_ports(rig, false, &n);
        cr_assert(eq(sz, n, 2));
        cr_assert(eq(str, (char *)p[0].name, "Float64_input"));
        cr_assert(eq(str, (char *)p[0].type, "Float64"));
        cr_assert(eq(str, (char *)p[1].name, "Int32_input"));
        cr_assert(eq(str, (char *)p[1].type, "Int32"));
        p = fmud_rig_ports(rig, true, &n);
        cr_assert(eq(sz, n, 2));
        cr_assert(eq(str, (char *)p[1].name, "Int32_output"));
        cr_assert(eq(int, fmud_rig_write(rig, (double[]){ 1 }, 1), -EINVAL));
        cr_assert(eq(int, fmud_rig_read(rig, out, 2, NULL), -EAGAIN));
        cr_assert(eq(int, fmud_start(t.c, &(struct proto_target){ s, 0 }, NULL), 0), "%s",
                  fmud_errmsg(t.c));
        /* Each point's outputs, or a count of those skipped, until the last point (t = 0.5). */
        for (i = 0; i < POINTS_MAX && last < 50; i++) {
                r = fmud_rig_wait(rig, 30000, &pt);
                cr_assert(eq(int, r, 0), "no point after %llu: %s", (unsigned long long)last,
                          strerror(-r));
                cr_assert(eq(int, fmud_rig_read(rig, out, 2, NULL), 0));
                /*
                 * Whole: both outputs come from the same write, or, before
                 * the first write, from the inputs' start values in
                 * Feedthrough's modelDescription.xml (2.5 and -32; -1 and
                 * -2 are the safe values, which "hold" never applies).
                 */
                cr_assert(out[0] == out[1] || (out[0] == 2.5 && out[1] == -32),
                          "point %llu: %g and %g", (unsigned long long)pt.point, out[0], out[1]);
                cr_assert(pt.point > last || seen == 0);
                /* From point 0, which the bridge gives after the ports, on. */
                if (seen == 0)
                        first = pt.point - pt.skipped;
                seen += 1 + pt.skipped;
                last = pt.point;
                r = fmud_rig_write(rig, (double[]){ (double)pt.point, (double)pt.point }, 2);
                cr_assert(r == 0 || r == -ENOSPC, "%s", strerror(-r));
        }
        cr_assert(eq(u64, last, 50));
        cr_assert(eq(u64, first, 0));
        /* Every point published is accounted for: waited for or skipped. */
        cr_assert(eq(u64, seen, last - first + 1), "%llu points seen or skipped up to point %llu",
                  (unsigned long long)seen, (unsigned long long)last);
        daemon_wait_state(t.c, s, PROTO_STATE_FINISHED, &st);
        cr_assert(eq(int, fmud_status(t.c, s, &st), 0), "%s", fmud_errmsg(t.c));
        cr_assert(eq(u64, st.rig.bad, 0));
        cr_assert(st.rig.applied > 0);
        fmud_rig_close(rig);
}

Test(daemon_rig_remote, a_second_remote_rig_is_refused_while_the_first_lives)
{
        struct proto_load a = rr_feedthrough(0.1, "hold");
        uint64_t s = daemon_load(t.c, &a, NULL);
        struct fmud_rig *rig = NULL, *second = NULL;
        struct proto_session_status st;
        int r;

        cr_assert(eq(int, fmud_rig_open(t.c, s, &rig), 0), "%s", fmud_errmsg(t.c));
        r = fmud_rig_open(t.c, s, &second);
        daemon_assert_refused(t.c, r, PROTO_E_STATE, "rig");
        cr_assert(strstr(fmud_errmsg(t.c), "already has a remote rig") != NULL, "%s",
                  fmud_errmsg(t.c));
        cr_assert(second == NULL);
        /* The first is unharmed, and so is the session. */
        cr_assert(eq(int, fmud_rig_write(rig, (double[]){ 1, 2 }, 2), 0));
        cr_assert(eq(int, fmud_status(t.c, s, &st), 0), "%s", fmud_errmsg(t.c));
        cr_assert(eq(int, (int)st.state, PROTO_STATE_LOADED));
        fmud_rig_close(rig);
}

Test(daemon_rig_remote, the_token_serves_the_askers_key_only)
{
        struct proto_load a = rr_feedthrough(0.1, "hold");
        uint64_t s = daemon_load(t.c, &a, NULL);
        char token[RIGW_TOKEN_LEN + 1], text[256];
        zmq_pollitem_t it;
        struct rigw_msg m;
        unsigned port;
        void *other, *stranger, *ok;
        struct pw w;

        rr_ask(&t, s, token, &port);
        cr_assert(pw_init(&w) == 0);
        rigw_hello(&w, token);
        /* Another admitted key with the right token: refused, the token still good. */
        other = rr_bridge(&t, port, t.other_pub, t.other_sec);
        rr_send(other, pw_data(&w), pw_size(&w));
        rr_recv(other, &m, NULL, 0, text, sizeof(text));
        cr_assert(eq(int, m.kind, RIGW_ERROR));
        cr_assert(eq(str, text, "refused: this rig channel was given to another key"));
        /* A key the daemon does not admit: no answer at all (ZAP refuses the handshake). */
        stranger = rr_bridge(&t, port, t.str_pub, t.str_sec);
        (void)zmq_send(stranger, pw_data(&w), pw_size(&w), ZMQ_DONTWAIT);
        it = (zmq_pollitem_t){ .socket = stranger, .events = ZMQ_POLLIN };
        cr_assert(eq(int, zmq_poll(&it, 1, SILENT_MS), 0), "a key not admitted was answered");
        /* The asker's key: the ports. A wrong token first is refused. */
        ok = rr_bridge(&t, port, t.ok_pub, t.ok_sec);
        memset(token, 'a', RIGW_TOKEN_LEN);
        rigw_hello(&w, token);
        rr_send(ok, pw_data(&w), pw_size(&w));
        rr_recv(ok, &m, NULL, 0, text, sizeof(text));
        cr_assert(eq(int, m.kind, RIGW_ERROR));
        cr_assert(strstr(text, "refused: the first message is a hello with the token") == text,
                  "%s", text);
        pw_fini(&w);
        rr_close(&t, other);
        rr_close(&t, stranger);
        rr_close(&t, ok);
}

Test(daemon_rig_remote, unloading_the_session_ends_the_bridge)
{
        struct proto_load a = rr_feedthrough(0.1, "hold");
        uint64_t s = daemon_load(t.c, &a, NULL);
        struct fmud_rig *rig = NULL;
        struct fmud_rig_point pt;
        int r;

        cr_assert(eq(int, fmud_rig_open(t.c, s, &rig), 0), "%s", fmud_errmsg(t.c));
        cr_assert(eq(int, fmud_unload(t.c, &(struct proto_target){ s, 0 }), 0), "%s",
                  fmud_errmsg(t.c));
        /* Point 0, sent after the ports (PROTOCOL.md), may come before the bye. */
        r = fmud_rig_wait(rig, 30000, &pt);
        if (r == 0) {
                cr_assert(eq(u64, pt.point, 0));
                r = fmud_rig_wait(rig, 30000, &pt);
        }
        cr_assert(eq(int, r, -EPIPE));
        cr_assert(eq(int, fmud_rig_write(rig, (double[]){ 1, 2 }, 2), -EPIPE));
        fmud_rig_close(rig);
}

/* Whether 127.0.0.1:port can be bound, as it can once no bridge listens there. */
static bool port_free(unsigned port)
{
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        bool ok;

        cr_assert(fd >= 0);
        cr_assert(eq(int, setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0));
        ok = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
        close(fd);
        return ok;
}

Test(daemon_rig_remote, a_bridge_that_ended_is_freed_without_another_request)
{
        struct proto_load a = rr_feedthrough(0.1, "hold");
        uint64_t s = daemon_load(t.c, &a, NULL);
        char token[RIGW_TOKEN_LEN + 1], text[256];
        struct fmud_rig *rig = NULL;
        struct rigw_msg m;
        unsigned port;
        struct pw w;
        void *z;
        int i;

        rr_ask(&t, s, token, &port);
        z = rr_bridge(&t, port, t.ok_pub, t.ok_sec);
        cr_assert(pw_init(&w) == 0);
        rigw_hello(&w, token);
        rr_send(z, pw_data(&w), pw_size(&w));
        rr_recv(z, &m, NULL, 0, text, sizeof(text));
        cr_assert(eq(int, m.kind, RIGW_PORTS), "%s", text);
        cr_assert(eq(int, port_free(port), false));
        /* The remote rig leaves; nothing else is asked of the daemon: its port is let go. */
        rigw_bye(&w, NULL);
        rr_send(z, pw_data(&w), pw_size(&w));
        pw_fini(&w);
        rr_close(&t, z);
        for (i = 0; i < RR_RECV_MS && !port_free(port); i++)
                usleep(1000);
        cr_assert(lt(int, i, RR_RECV_MS), "the ended bridge still holds port %u", port);
        /* The session is unharmed and takes a new remote rig. */
        cr_assert(eq(int, fmud_rig_open(t.c, s, &rig), 0), "%s", fmud_errmsg(t.c));
        fmud_rig_close(rig);
}

/*
 * A remote rig beats while silent as often as the session's rigTimeoutMs
 * needs, a quarter of it (1 ms at least), as rig_wait() does for a local
 * rig: with a fixed 10 ms beat, a waiting remote rig of a session with
 * rigTimeoutMs under about 15 was taken for one that vanished.
 */
Test(daemon_rig_remote, the_ports_tell_the_rig_to_beat_within_the_timeout)
{
        static const struct { uint32_t timeout_ms, beat_ms; } cases[] = {
                { 8, 2 }, { 3, 1 }, { 1, 1 }, { 60000, 10 },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct proto_load a = rr_feedthrough(0.1, "pause");
                struct rigw_msg m;
                unsigned port;
                uint64_t s;
                void *z;

                a.rig_timeout_ms = cases[i].timeout_ms;
                s = daemon_load(t.c, &a, NULL);
                z = hello(s, &m, &port);
                cr_assert(eq(u32, m.beat_ms, cases[i].beat_ms), "rigTimeoutMs %u",
                          cases[i].timeout_ms);
                rr_close(&t, z);
                cr_assert(eq(int, fmud_unload(t.c, &(struct proto_target){ s, 0 }), 0), "%s",
                          fmud_errmsg(t.c));
        }
}

/*
 * A transient session whose owner vanishes is unloaded after the grace;
 * its remote rig's bridge ends with it, though the remote rig goes on
 * beating (which alone would keep the bridge alive), and the daemon then
 * stops cleanly.
 */
Test(daemon_rig_remote, the_bridge_ends_with_a_transient_session_whose_owner_vanished)
{
        struct proto_load a = rr_feedthrough(0.1, "hold");
        struct fmud *owner = rr_connect(&t, t.ok_sec);
        struct proto_session_status st;
        unsigned port;
        struct pw w;
        uint64_t s;
        void *z;
        int i;

        a.transient = true;
        s = daemon_load(owner, &a, NULL);
        z = attach(s, false, &port);
        cr_assert(eq(int, port_free(port), false));
        fmud_close(owner);
        cr_assert(pw_init(&w) == 0);
        rigw_beat(&w);
        for (i = 0; i < RR_RECV_MS && !port_free(port); i++) {
                if (i % 10 == 0)
                        (void) zmq_send(z, pw_data(&w), pw_size(&w), ZMQ_DONTWAIT);
                usleep(1000);
        }
        pw_fini(&w);
        cr_assert(lt(int, i, RR_RECV_MS), "the bridge of gone session %llu still holds port %u",
                  (unsigned long long)s, port);
        cr_assert(eq(int, fmud_status(t.c, s, &st), FMUD_E_REFUSED));
        cr_assert(eq(int, fmud_errcode(t.c), PROTO_E_NO_SESSION), "%s", fmud_errmsg(t.c));
        rr_close(&t, z);
        rr_stop(&t);
}

/* SIGTERM with a bridge serving a remote rig: the daemon ends it and exits (rr_stop checks). */
Test(daemon_rig_remote, the_daemon_stops_with_a_bridge_running)
{
        struct proto_load a = rr_feedthrough(1000, "hold");
        uint64_t s = daemon_load(t.c, &a, NULL);
        unsigned port;
        void *z;

        cr_assert(eq(int, fmud_start(t.c, &(struct proto_target){ s, 0 }, NULL), 0), "%s",
                  fmud_errmsg(t.c));
        z = attach(s, true, &port);
        cr_assert(eq(int, port_free(port), false));
        rr_close(&t, z);
        rr_stop(&t);
}

/* The example rig, unchanged, against the daemon over tcp: its keys from the environment. */
Test(daemon_rig_remote, the_example_rig_runs_against_a_remote_daemon)
{
        struct proto_load a = rr_feedthrough(0.3, "hold");
        uint64_t s = daemon_load(t.c, &a, NULL);
        struct proto_session_status st;
        char session[32], sk[512], ck[512], out[1024] = "", line[64];
        unsigned long long points = 0, writes = 0;
        size_t got = 0;
        int p[2], status;
        ssize_t n;
        pid_t kid;

        snprintf(session, sizeof(session), "%llu", (unsigned long long)s);
        snprintf(line, sizeof(line), "%s\n", t.server_pub);
        cr_assert(eq(int, tmpdir_write(t.keydir, "server.pub", line, strlen(line)), 0));
        snprintf(line, sizeof(line), "%s\n", t.ok_sec);
        cr_assert(eq(int, tmpdir_write(t.keydir, "ok.key", line, strlen(line)), 0));
        snprintf(sk, sizeof(sk), "%s/server.pub", t.keydir);
        snprintf(ck, sizeof(ck), "%s/ok.key", t.keydir);
        cr_assert(eq(int, chmod(ck, 0600), 0));
        cr_assert(eq(int, fmud_warp(t.c, &(struct proto_target){ s, 0 }, 1, NULL), 0), "%s",
                  fmud_errmsg(t.c));
        cr_assert(eq(int, pipe(p), 0));
        kid = fork();
        cr_assert(kid >= 0);
        if (kid == 0) {
                dup2(p[1], 1);
                close(p[0]);
                close(p[1]);
                setenv("FMUD_SERVER_KEY", sk, 1);
                setenv("FMUD_KEY", ck, 1);
                execl(FMUD_RIG_EXAMPLE, "rig", "--endpoint", t.tcp_ep, "--step", "0.01",
                      "--points", "25", "--idle-ms", "600000", session, (char *)NULL);
                _exit(127);
        }
        close(p[1]);
        /* The rig prints its ports once it has the channel: then the session starts. */
        while (!memchr(out, '\n', got) && (n = read(p[0], out + got, sizeof(out) - 1 - got)) > 0)
                got += (size_t)n;
        out[got] = '\0';
        cr_assert(strncmp(out, "in Float64_input Int32_input out Float64_output Int32_output\n",
                          61) == 0, "%s", out);
        cr_assert(eq(int, fmud_start(t.c, &(struct proto_target){ s, 0 }, NULL), 0), "%s",
                  fmud_errmsg(t.c));
        while ((n = read(p[0], out + got, sizeof(out) - 1 - got)) > 0)
                got += (size_t)n;
        out[got] = '\0';
        close(p[0]);
        cr_assert(eq(int, (int)waitpid(kid, &status, 0), (int)kid));
        cr_assert(eq(int, WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0), "the rig failed: %s", out);
        cr_assert(sscanf(strchr(out, '\n') + 1, "points=%llu read=%*u skipped=%*u writes=%llu",
                         &points, &writes) == 2, "%s", out);
        cr_assert(points >= 25, "%s", out);
        cr_assert(writes > 0, "%s", out);
        daemon_wait_state(t.c, s, PROTO_STATE_FINISHED, &st);
        cr_assert(eq(int, fmud_status(t.c, s, &st), 0), "%s", fmud_errmsg(t.c));
        cr_assert(st.rig.applied > 0);
        cr_assert(eq(u64, st.rig.bad, 0));
}

/*
 * A session has one rig at a time, local or remote: the bridge holds the
 * channel for its life, so a local rig is refused while it lives, and a
 * remote rig is refused while a local one is attached, each saying why.
 */
Test(daemon_rig_remote, a_local_and_a_remote_rig_never_share_the_channel)
{
        struct proto_load a = rr_feedthrough(0.1, "hold");
        struct fmud *local = daemon_connect(&t.d);
        struct fmud_rig *remote = NULL, *rig = NULL;
        uint64_t s = daemon_load(t.c, &a, NULL);

        cr_assert(eq(int, fmud_rig_open(t.c, s, &remote), 0), "%s", fmud_errmsg(t.c));
        cr_assert(eq(int, fmud_rig_open(local, s, &rig), FMUD_E_REFUSED));
        cr_assert(strstr(fmud_errmsg(local), "already has a rig") != NULL, "%s",
                  fmud_errmsg(local));
        fmud_rig_close(remote);
        /* The bridge ends on the rig's bye and gives the channel back. */
        for (int i = 0; i < RR_RECV_MS && fmud_rig_open(local, s, &rig) != 0; i++)
                usleep(1000);
        cr_assert(rig != NULL, "%s", fmud_errmsg(local));
        daemon_assert_refused(t.c, fmud_rig_open(t.c, s, &remote), PROTO_E_STATE, "rig");
        cr_assert(strstr(fmud_errmsg(t.c), "already has a rig (a local one") != NULL, "%s",
                  fmud_errmsg(t.c));
        fmud_rig_close(rig);
        fmud_close(local);
}

/*
 * A remote rig that said bye and asks again at once gets in: the ended
 * bridge is let go then, not at the next reap, and the new one's
 * internal names never meet the old one's.
 */
Test(daemon_rig_remote, a_rig_that_left_is_let_in_again_at_once)
{
        struct proto_load a = rr_feedthrough(0.1, "hold");
        uint64_t s = daemon_load(t.c, &a, NULL);

        for (int i = 0; i < 20; i++) {
                struct fmud_rig *rig = NULL;

                cr_assert(eq(int, fmud_rig_open(t.c, s, &rig), 0), "round %d: %s", i,
                          fmud_errmsg(t.c));
                fmud_rig_close(rig);
        }
}
