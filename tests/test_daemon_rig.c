/*
 * daemon_rig: rig ports declared by a load's arguments against a real
 * fmud (daemon_fixture.h): status reports the session's rig (its state,
 * policy and counters), and a port the load may not declare, or a
 * policy or timeout out of range, refuses the load with the name and
 * the reason, leaving nothing behind. A rig that goes silent under the
 * pause policy pauses the session, which says why (status, event, log),
 * and a resume with the rig still silent pauses it again a point later.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon_fixture.h"

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

TestSuite(daemon_rig, .init = setup, .fini = teardown);

static struct proto_str ins[2], outs[1];

static struct proto_load feedthrough(void)
{
        ins[0] = daemon_str("Float64_input=-1");
        ins[1] = daemon_str("Int32_input");
        outs[0] = daemon_str("Float64_output");
        return (struct proto_load){ .path = daemon_str(FMUD_TEST_FMU_DIR "/Feedthrough.fmu"),
                                    .has_stop = true, .stop = 0.1, .has_step = true,
                                    .step = 0.01, .n_rig_in = 2, .rig_in = ins,
                                    .n_rig_out = 1, .rig_out = outs,
                                    .rig_policy = daemon_str("safe"), .has_rig_timeout = true,
                                    .rig_timeout_ms = 50 };
}

Test(daemon_rig, status_reports_the_rig_its_policy_and_counters)
{
        struct proto_load a = feedthrough();
        struct proto_session_status st;
        uint64_t s = daemon_load(c, &a, NULL);

        cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
        cr_assert(st.has_rig);
        cr_assert(daemon_str_eq(st.rig.state, "none"));
        cr_assert(daemon_str_eq(st.rig.policy, "safe"));
        cr_assert(st.rig.in_force == false);
        cr_assert(fmud_start(c, &(struct proto_target){ s, 0 }, NULL) == 0, "%s",
                  fmud_errmsg(c));
        daemon_wait_state(c, s, PROTO_STATE_FINISHED, &st);
        cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
        /* No rig attached: nothing applied, and no point counts as missing. */
        cr_assert(st.has_rig);
        cr_assert(st.rig.applied + st.rig.missing + st.rig.late + st.rig.bad == 0);
}

Test(daemon_rig, a_session_without_rig_ports_reports_no_rig)
{
        struct proto_load a = feedthrough();
        struct proto_session_status st;
        uint64_t s;

        a.n_rig_in = a.n_rig_out = 0;
        a.rig_policy = daemon_str("");
        a.has_rig_timeout = false;
        s = daemon_load(c, &a, NULL);
        cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
        cr_assert(st.has_rig == false);
}

static void refused(struct proto_load *a, int code, const char *text)
{
        pid_t kids[8];
        uint64_t s;
        int r = fmud_load(c, a, &s, NULL);

        daemon_assert_refused(c, r, code, text);
        cr_assert(strstr(fmud_errmsg(c), text) != NULL, "%s", fmud_errmsg(c));
        cr_assert(daemon_children(d.pid, kids, 8) == 0);
}

Test(daemon_rig, ports_policies_and_timeouts_out_of_bounds_refuse_the_load)
{
        struct proto_load a = feedthrough();

        ins[1] = daemon_str("nothing");
        refused(&a, PROTO_E_INVALID, "'nothing': rig input: no such variable");
        a = feedthrough();
        ins[1] = daemon_str("String_input");
        refused(&a, PROTO_E_INVALID, "String: only Float32, Float64, integer and Boolean "
                "scalars are rig ports");
        a = feedthrough();
        outs[0] = daemon_str("Float64_input");
        refused(&a, PROTO_E_INVALID, "not an output");
        a = feedthrough();
        a.rig_policy = daemon_str("later");
        refused(&a, PROTO_E_BAD_REQUEST, "args.rigPolicy: expected \"hold\", \"safe\" or "
                "\"pause\"");
        a = feedthrough();
        a.rig_timeout_ms = 0;
        refused(&a, PROTO_E_BAD_REQUEST, "args.rigTimeoutMs: expected 1 to 60000");
        /* The daemon is unharmed: the same load without the mistake goes through. */
        a = feedthrough();
        (void) daemon_load(c, &a, NULL);
}

/* State events on: back once the subscription is in force (PROTOCOL.md "Joining"). */
static void events_on(void)
{
        cr_assert(fmud_events(c, true) == 0, "%s", fmud_errmsg(c));
}

/* Poll until session s is paused; its status in *st. */
static void until_paused(uint64_t s, struct proto_session_status *st)
{
        int i;

        for (i = 0; i < POLL_MAX; i++) {
                cr_assert(fmud_status(c, s, st) == 0, "%s", fmud_errmsg(c));
                cr_assert(st->state == PROTO_STATE_RUNNING || st->state == PROTO_STATE_PAUSED,
                          "state %d", (int)st->state);
                if (st->state == PROTO_STATE_PAUSED)
                        return;
                usleep(1000);
        }
        cr_fail("the session never paused");
}

/* The next paused event of session s, with its message. */
static void paused_event(uint64_t s, char *msg, size_t size)
{
        struct fmud_msg m;

        for (int i = 0; i < POLL_MAX; i++) {
                if (fmud_next(c, 10, &m) != 0)
                        continue;
                if (m.kind != FMUD_MSG_EVENT || m.event.session != s ||
                    m.event.state != PROTO_STATE_PAUSED)
                        continue;
                snprintf(msg, size, "%.*s", (int)m.event.message.len, m.event.message.ptr);
                return;
        }
        cr_fail("no paused event");
}

static size_t count(const char *text, const char *what)
{
        size_t n = 0;

        for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
                n++;
        return n;
}

Test(daemon_rig, a_silent_rig_under_pause_pauses_the_session_and_again_after_a_resume)
{
        struct proto_load a = feedthrough();
        struct proto_session_status st;
        struct fmud_rig *rig = NULL;
        struct fmud_rig_point pt;
        char msg[512];
        uint64_t s, points;
        char *log;
        int i;

        events_on();
        a.stop = 1e6;
        a.rig_policy = daemon_str("pause");
        s = daemon_load(c, &a, NULL);
        cr_assert(fmud_rig_open(c, s, &rig) == 0, "%s", fmud_errmsg(c));
        /* One write for point 0, beats until the master saw it attached, then silence. */
        cr_assert(fmud_rig_write(rig, (double[]){ 2.5, 7 }, 2) == 0);
        cr_assert(fmud_warp(c, &(struct proto_target){ s, 0 }, 1, NULL) == 0, "%s",
                  fmud_errmsg(c));
        cr_assert(fmud_start(c, &(struct proto_target){ s, 0 }, NULL) == 0, "%s",
                  fmud_errmsg(c));
        for (i = 0; i < POLL_MAX; i++) {
                cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
                if (!daemon_str_eq(st.rig.state, "none"))
                        break;
                (void) fmud_rig_wait(rig, 1, &pt);
        }
        cr_assert(i < POLL_MAX, "the rig never attached");
        until_paused(s, &st);
        cr_assert(eq(u64, st.rig.applied, 1));
        cr_assert(daemon_str_eq(st.rig.state, "vanished"));
        cr_assert(st.rig.in_force);
        snprintf(msg, sizeof(msg), "%.*s", (int)st.message.len, st.message.ptr);
        cr_assert(strstr(msg, "paused (rig policy pause)") != NULL, "%s", msg);
        paused_event(s, msg, sizeof(msg));
        cr_assert(strstr(msg, "rig vanished") && strstr(msg, "paused (rig policy pause)") != NULL, "%s",
                  msg);
        points = st.points;
        /* Resumed with the rig still silent: on by one point, then paused again. */
        cr_assert(fmud_resume(c, &(struct proto_target){ s, 0 }, NULL) == 0, "%s",
                  fmud_errmsg(c));
        until_paused(s, &st);
        cr_assert(eq(u64, st.points, points + 1));
        paused_event(s, msg, sizeof(msg));
        cr_assert(strstr(msg, "rig still silent") && strstr(msg, "paused (rig policy pause)") != NULL,
                  "%s", msg);
        log = daemon_log(&d);
        cr_assert(eq(sz, count(log, "paused (rig policy pause)"), 2), "%s", log);
        free(log);
        fmud_rig_close(rig);
}

/*
 * A rig that goes silent while the session is paused (an operator checks
 * the rig before resuming): status says vanished once its heartbeat is
 * older than the timeout, though no point has looked since. It said
 * attached until the next point.
 */
Test(daemon_rig, status_of_a_paused_session_says_a_silent_rig_vanished)
{
        struct proto_load a = feedthrough();
        struct proto_session_status st;
        struct fmud_rig *rig = NULL;
        struct fmud_rig_point pt;
        uint64_t s;
        int i;

        a.stop = 1e6;
        a.rig_policy = daemon_str("hold");
        s = daemon_load(c, &a, NULL);
        cr_assert(fmud_rig_open(c, s, &rig) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_rig_write(rig, (double[]){ 2.5, 7 }, 2) == 0);
        cr_assert(fmud_warp(c, &(struct proto_target){ s, 0 }, 1, NULL) == 0, "%s",
                  fmud_errmsg(c));
        cr_assert(fmud_start(c, &(struct proto_target){ s, 0 }, NULL) == 0, "%s",
                  fmud_errmsg(c));
        for (i = 0; i < POLL_MAX; i++) {
                cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
                if (daemon_str_eq(st.rig.state, "attached"))
                        break;
                (void) fmud_rig_wait(rig, 1, &pt);
        }
        cr_assert(i < POLL_MAX, "the rig never attached");
        cr_assert(fmud_pause(c, &(struct proto_target){ s, 0 }, NULL) == 0, "%s",
                  fmud_errmsg(c));
        until_paused(s, &st);
        /* Silent from here: the heartbeat ages past the 50 ms timeout. */
        for (i = 0; i < POLL_MAX; i++) {
                cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
                if (!daemon_str_eq(st.rig.state, "attached"))
                        break;
                usleep(1000);
        }
        cr_assert(daemon_str_eq(st.rig.state, "vanished"), "%.*s", (int)st.rig.state.len,
                  st.rig.state.ptr);
        cr_assert(eq(int, (int)st.state, (int)PROTO_STATE_PAUSED));
        fmud_rig_close(rig);
}

/*
 * One rig at a time: the channel's rings have one writer and one reader,
 * so a second rig is refused while the first is attached, saying why, and
 * the first's write stands; once it closed, the next one attaches.
 */
Test(daemon_rig, a_second_rig_is_refused_while_the_first_is_attached)
{
        struct proto_load a = feedthrough();
        struct fmud_rig *first = NULL, *second = NULL;
        struct proto_session_status st;
        uint64_t s = daemon_load(c, &a, NULL);

        cr_assert(fmud_rig_open(c, s, &first) == 0, "%s", fmud_errmsg(c));
        cr_assert(eq(int, fmud_rig_open(c, s, &second), FMUD_E_REFUSED));
        cr_assert(second == NULL);
        cr_assert(strstr(fmud_errmsg(c), "already has a rig") != NULL, "%s", fmud_errmsg(c));
        cr_assert(eq(int, fmud_rig_write(first, (double[]){ 2.5, 7 }, 2), 0));
        fmud_rig_close(first);
        cr_assert(fmud_rig_open(c, s, &second) == 0, "%s", fmud_errmsg(c));
        cr_assert(eq(int, fmud_start(c, &(struct proto_target){ s, 0 }, NULL), 0), "%s",
                  fmud_errmsg(c));
        daemon_wait_state(c, s, PROTO_STATE_FINISHED, &st);
        cr_assert(eq(u64, st.rig.applied, 1));
        cr_assert(eq(u64, st.rig.bad, 0));
        fmud_rig_close(second);
}

/* A Feedthrough session (its number in *ret_session, if not NULL) with a local rig at point 0. */
static struct fmud_rig *rig_at_start(uint64_t *ret_session)
{
        struct proto_load a = feedthrough();
        struct fmud_rig *rig = NULL;
        struct fmud_rig_point pt;
        uint64_t s = daemon_load(c, &a, NULL);

        cr_assert(fmud_rig_open(c, s, &rig) == 0, "%s", fmud_errmsg(c));
        cr_assert(eq(int, fmud_rig_wait(rig, 30000, &pt), 0));
        cr_assert(eq(u64, pt.point, 0));
        if (ret_session)
                *ret_session = s;
        return rig;
}

/*
 * A local rig whose session is unloaded is told so, as a remote one is:
 * its wait ends with -EPIPE within a heartbeat's slice instead of running
 * to its timeout, and a write afterwards is refused the same way.
 */
Test(daemon_rig, unloading_the_session_ends_the_local_rig)
{
        struct fmud_rig_point pt;
        uint64_t s;
        struct fmud_rig *rig = rig_at_start(&s);

        cr_assert(eq(int, fmud_unload(c, &(struct proto_target){ s, 0 }), 0), "%s",
                  fmud_errmsg(c));
        cr_assert(eq(int, fmud_rig_wait(rig, 30000, &pt), -EPIPE));
        cr_assert(eq(int, fmud_rig_write(rig, (double[]){ 1, 2 }, 2), -EPIPE));
        cr_assert(eq(int, fmud_rig_read(rig, (double[1]){ 0 }, 1, &pt), 0),
                  "the last point read stays readable");
        fmud_rig_close(rig);
}

/*
 * A daemon killed (SIGKILL, a crash) cannot end its rig channels: the
 * rig sees it gone all the same, its wait ending with -EPIPE within a
 * heartbeat's slice instead of timing out, and its writes refused, never
 * taken for a master that no longer exists.
 */
Test(daemon_rig, a_killed_daemon_ends_the_local_rig)
{
        struct fmud_rig_point pt;
        struct fmud_rig *rig = rig_at_start(NULL);

        fmud_close(c);
        c = NULL;
        daemon_kill(&d);
        cr_assert(eq(int, fmud_rig_wait(rig, 20000, &pt), -EPIPE));
        cr_assert(eq(int, fmud_rig_write(rig, (double[]){ 1, 2 }, 2), -EPIPE));
        fmud_rig_close(rig);
}

/*
 * The same for a rig in a pid namespace of its own (a container), where
 * the daemon has no pid it could name: it is watched through the pidfd
 * the socket hands over (SO_PEERPIDFD). Needs root for the namespace.
 */
Test(daemon_rig, a_rig_in_another_pid_namespace_sees_its_daemon_killed)
{
        struct proto_load a = feedthrough();
        uint64_t s = daemon_load(c, &a, NULL);
        int ready[2], status;
        bool ended;
        ssize_t got;
        char b;
        pid_t kid;

        if (geteuid() != 0)
                cr_skip_test("a pid namespace needs root");
        {
                /* SO_PEERPIDFD is Linux 6.5's: before it, such a rig has nothing to watch. */
                int sp[2], pfd = -1;
                socklen_t len = sizeof(pfd);
                bool has;

                cr_assert(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == 0);
                has = getsockopt(sp[0], SOL_SOCKET, 77 /* SO_PEERPIDFD */, &pfd, &len) == 0;
                if (pfd >= 0)
                        close(pfd);
                close(sp[0]);
                close(sp[1]);
                if (!has)
                        cr_skip_test("the kernel has no SO_PEERPIDFD (Linux 6.5)");
        }
        cr_assert(pipe(ready) == 0);
        kid = fork();
        cr_assert(kid >= 0);
        if (kid == 0) {
                pid_t g;

                close(ready[0]);
                if (unshare(CLONE_NEWPID) < 0)
                        _exit(10);
                g = fork();
                if (g == 0) {
                        struct fmud *rc;
                        struct fmud_rig *rig;
                        struct fmud_rig_point pt;

                        if (fmud_connect(d.endpoint, NULL, &rc, NULL, 0) < 0 ||
                            fmud_rig_open(rc, s, &rig) < 0)
                                _exit(11);
                        (void) !write(ready[1], "r", 1);
                        if (fmud_rig_wait(rig, 30000, &pt) != 0)
                                _exit(12);
                        _exit(fmud_rig_wait(rig, 20000, &pt) == -EPIPE ? 0 : 13);
                }
                if (g < 0 || waitpid(g, &status, 0) != g)
                        _exit(14);
                _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 15);
        }
        close(ready[1]);
        got = read(ready[0], &b, 1);
        close(ready[0]);
        if (got != 1) {
                cr_assert(eq(int, (int)waitpid(kid, &status, 0), (int)kid));
                if (WIFEXITED(status) && WEXITSTATUS(status) == 10)
                        cr_skip_test("no pid namespace here (unshare refused)");
                cr_fatal("the rig could not open (status %#x)", status);
        }
        fmud_close(c);
        c = NULL;
        daemon_kill(&d);
        cr_assert(eq(int, (int)waitpid(kid, &status, 0), (int)kid));
        ended = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        cr_assert(ended, "the rig's wait did not end with -EPIPE (status %#x)", status);
}
