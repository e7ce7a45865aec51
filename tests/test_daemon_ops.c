/*
 * daemon: every operation's success path, through libfmud against a real
 * fmud with real workers (daemon_fixture.h).
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon_fixture.h"

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

/* The msd example (stop 10, step 0.01, decimation 10) with its results in DIR/name. */
static uint64_t load_msd(const char *out_name, uint64_t *ret_gen, char **ret_out)
{
        char *out = out_name ? daemon_path(&d, out_name) : NULL;
        struct proto_load a = {
                .path = daemon_str(FMUD_EXAMPLES "/msd.ssp"),
                .out = daemon_str(out),
        };
        uint64_t s = daemon_load(c, &a, ret_gen);

        if (ret_out)
                *ret_out = out;
        else
                free(out);
        return s;
}

static size_t count_lines(const char *s)
{
        size_t n = 0;

        for (; *s; s++)
                n += *s == '\n';
        return n;
}

Test(daemon, hello_names_the_server_and_its_pub_endpoint, .init = setup, .fini = teardown)
{
        struct proto_daemon_status ds;

        cr_assert(strncmp(fmud_server(c), "fmud ", 5) == 0, "server '%s'", fmud_server(c));
        cr_assert(strcmp(fmud_pub_endpoint(c), d.pub_endpoint) == 0, "pub endpoint '%s'",
                  fmud_pub_endpoint(c));
        cr_assert(fmud_status_daemon(c, &ds) == 0, "%s", fmud_errmsg(c));
        cr_assert(ds.version == PROTO_VERSION);
        cr_assert(ds.sessions == 0 && ds.workers == 0, "%u sessions, %u workers", ds.sessions,
                  ds.workers);
        cr_assert(ds.uptime_s >= 0.0);
}

Test(daemon, load_list_status_and_unload, .init = setup, .fini = teardown)
{
        struct proto_session_status st;
        struct proto_list_result l;
        struct proto_daemon_status ds;
        pid_t pids[2], kids[8];
        uint64_t gen, s = load_msd(NULL, &gen, NULL);

        cr_assert(s == 1, "sessions are numbered from 1, got %" PRIu64, s);
        cr_assert(fmud_list(c, &l) == 0, "%s", fmud_errmsg(c));
        cr_assert(l.n == 1);
        cr_assert(l.sessions[0].session == s && l.sessions[0].generation == gen);
        cr_assert(daemon_str_eq(l.sessions[0].name, "msd"));
        cr_assert(l.sessions[0].state == PROTO_STATE_LOADED);
        cr_assert(l.sessions[0].time == 0.0);

        cr_assert(fmud_status(c, s, &st) == 0, "%s", fmud_errmsg(c));
        cr_assert(st.session == s && st.generation == gen);
        cr_assert(st.state == PROTO_STATE_LOADED);
        cr_assert(st.start == 0.0 && st.stop == 10.0 && st.step == 0.01, "%g %g %g", st.start,
                  st.stop, st.step);
        cr_assert(st.points == 0 && st.time == 0.0);
        cr_assert(st.n_insts == 2);
        cr_assert(daemon_str_eq(st.insts[0].name, "mass1"));
        cr_assert(daemon_str_eq(st.insts[1].name, "mass2"));
        /* Each instance is its own worker process, a child of the daemon. */
        for (int i = 0; i < 2; i++) {
                pids[i] = (pid_t)st.insts[i].pid;
                cr_assert(pids[i] > 0 && daemon_pid_alive(pids[i]));
        }
        cr_assert(pids[0] != pids[1]);
        cr_assert(daemon_children(d.pid, kids, 8) == 2);

        cr_assert(fmud_status_daemon(c, &ds) == 0);
        cr_assert(ds.sessions == 1 && ds.workers == 2, "%u sessions, %u workers", ds.sessions,
                  ds.workers);

        cr_assert(fmud_unload(c, &(struct proto_target){ s, gen }) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_list(c, &l) == 0);
        cr_assert(l.n == 0);
        /* The workers are reaped when unload answers. */
        cr_assert(!daemon_pid_alive(pids[0]) && !daemon_pid_alive(pids[1]));
        cr_assert(fmud_status_daemon(c, &ds) == 0);
        cr_assert(ds.sessions == 0 && ds.workers == 0);
        /* Numbers are never reused. */
        cr_assert(load_msd(NULL, NULL, NULL) == 2);
}

Test(daemon, start_runs_to_the_stop_time_and_writes_results, .init = setup, .fini = teardown)
{
        struct proto_session_status st;
        struct proto_progress p;
        char *out, *csv;
        uint64_t s = load_msd("msd.csv", NULL, &out);

        cr_assert(fmud_start(c, &(struct proto_target){ s, 0 }, &p) == 0, "%s", fmud_errmsg(c));
        cr_assert(p.state == PROTO_STATE_RUNNING || p.state == PROTO_STATE_FINISHED, "%s",
                  proto_state_name(p.state));
        daemon_wait_state(c, s, PROTO_STATE_FINISHED, &st);
        cr_assert(st.time == 10.0 && st.points == 1000, "t %g, %" PRIu64 " points", st.time,
                  st.points);
        cr_assert(st.insts[0].steps == 1000 && st.insts[1].steps == 1000);
        cr_assert(st.real_time_factor > 0.0);
        cr_assert(fmud_unload(c, &(struct proto_target){ s, 0 }) == 0, "%s", fmud_errmsg(c));
        csv = daemon_slurp(out, NULL);
        cr_assert(strncmp(csv, "time,mass1.x1,mass1.v1,mass2.x2,mass2.v2,mass2.F\n", 49) == 0,
                  "%s", csv);
        cr_assert(count_lines(csv) == 102, "%zu lines", count_lines(csv));
        free(csv);
        free(out);
}

Test(daemon, step_and_run_until_advance_point_by_point, .init = setup, .fini = teardown)
{
        struct proto_target t = { load_msd(NULL, NULL, NULL), 0 };
        struct proto_session_status st;
        struct proto_progress p;

        cr_assert(fmud_step(c, &t, 1, &p) == 0, "%s", fmud_errmsg(c));
        cr_assert(p.points == 1 && p.time == 0.01, "%" PRIu64 " points, t %.17g", p.points, p.time);
        cr_assert(p.state == PROTO_STATE_PAUSED, "%s", proto_state_name(p.state));
        cr_assert(fmud_step(c, &t, 9, &p) == 0, "%s", fmud_errmsg(c));
        cr_assert(p.points == 10 && p.time == 10 * 0.01, "%" PRIu64 " points, t %.17g", p.points,
                  p.time);
        cr_assert(fmud_run_until(c, &t, 0.5, &p) == 0, "%s", fmud_errmsg(c));
        cr_assert(p.points == 50 && p.time == 50 * 0.01, "%" PRIu64 " points, t %.17g", p.points,
                  p.time);
        cr_assert(fmud_status(c, t.session, &st) == 0);
        cr_assert(st.points == 50 && st.time == p.time);
        cr_assert(st.insts[0].steps == 50 && st.insts[1].steps == 50);
        /* Far goals are stepped in chunks: neither may overshoot. */
        cr_assert(fmud_step(c, &t, 417, &p) == 0, "%s", fmud_errmsg(c));
        cr_assert(p.points == 467, "%" PRIu64 " points", p.points);
        cr_assert(fmud_run_until(c, &t, 7.005, &p) == 0, "%s", fmud_errmsg(c));
        cr_assert(p.points == 700 && p.time == 700 * 0.01, "%" PRIu64 " points, t %.17g",
                  p.points, p.time);
        /* And then free running to the end. */
        cr_assert(fmud_resume(c, &t, &p) == 0, "%s",
                  fmud_errmsg(c));
        daemon_wait_state(c, t.session, PROTO_STATE_FINISHED, &st);
        cr_assert(st.points == 1000);
}

Test(daemon, pause_resume_and_stop, .init = setup, .fini = teardown)
{
        struct proto_load a = { .path = daemon_str(FMUD_EXAMPLES "/msd.ssp"), .has_warp = true,
                                .warp = 1.0 };
        struct proto_target t = { daemon_load(c, &a, NULL), 0 };
        struct proto_session_status st;
        struct proto_progress p;

        cr_assert(fmud_start(c, &t, &p) == 0, "%s", fmud_errmsg(c));
        cr_assert(p.state == PROTO_STATE_RUNNING, "%s", proto_state_name(p.state));
        cr_assert(fmud_pause(c, &t, &p) == 0, "%s", fmud_errmsg(c));
        cr_assert(p.state == PROTO_STATE_PAUSED, "%s", proto_state_name(p.state));
        cr_assert(p.time < 10.0);
        cr_assert(fmud_status(c, t.session, &st) == 0);
        cr_assert(st.state == PROTO_STATE_PAUSED && st.time == p.time && st.points == p.points);
        cr_assert(fmud_resume(c, &t, &p) == 0, "%s", fmud_errmsg(c));
        cr_assert(p.state == PROTO_STATE_RUNNING, "%s", proto_state_name(p.state));
        cr_assert(fmud_stop(c, &t, &p) == 0, "%s", fmud_errmsg(c));
        cr_assert(p.state == PROTO_STATE_STOPPED, "%s", proto_state_name(p.state));
        cr_assert(p.time < 10.0);
        daemon_wait_state(c, t.session, PROTO_STATE_STOPPED, &st);
        cr_assert(st.points < 1000);
}

Test(daemon, warp_changes_the_pace_of_a_running_session, .init = setup, .fini = teardown)
{
        /* At warp 1 this run would take 10 s; warp 0 lets it finish at once. */
        struct proto_load a = { .path = daemon_str(FMUD_EXAMPLES "/msd.ssp"), .has_warp = true,
                                .warp = 1.0 };
        struct proto_target t = { daemon_load(c, &a, NULL), 0 };
        struct proto_session_status st;
        struct proto_progress p;

        cr_assert(fmud_status(c, t.session, &st) == 0);
        cr_assert(st.warp == 1.0, "warp %g", st.warp);
        cr_assert(fmud_start(c, &t, NULL) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_warp(c, &t, 0.0, &p) == 0, "%s", fmud_errmsg(c));
        daemon_wait_state(c, t.session, PROTO_STATE_FINISHED, &st);
        cr_assert(st.warp == 0.0, "warp %g", st.warp);
        cr_assert(st.points == 1000);
}

Test(daemon, snapshot_and_restore_go_back_in_time, .init = setup, .fini = teardown)
{
        static const char *const names[] = { "mass1.x1", "mass2.x2" };
        uint64_t gen, gen2, snap;
        struct proto_target t = { load_msd(NULL, &gen, NULL), 0 };
        struct proto_session_status st;
        double at, x[2], y[2];

        cr_assert(fmud_step(c, &t, 100, NULL) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_snapshot(c, &t, &snap, &at) == 0, "%s", fmud_errmsg(c));
        cr_assert(at == 100 * 0.01, "snapshot at %.17g", at);
        cr_assert(fmud_get_f64(c, &t, names, 2, x) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_step(c, &t, 50, NULL) == 0, "%s", fmud_errmsg(c));
        cr_assert(fmud_get_f64(c, &t, names, 2, y) == 0);
        cr_assert(x[0] != y[0], "the system moved");
        cr_assert(fmud_restore(c, &t, snap, &gen2) == 0, "%s", fmud_errmsg(c));
        cr_assert(gen2 > gen, "generation %" PRIu64 " -> %" PRIu64, gen, gen2);
        cr_assert(fmud_status(c, t.session, &st) == 0);
        cr_assert(st.generation == gen2 && st.time == at && st.points == 100);
        cr_assert(fmud_get_f64(c, &t, names, 2, y) == 0);
        cr_assert(memcmp(x, y, sizeof(x)) == 0, "restored values equal the snapshot's");
}

Test(daemon, state_events_are_published, .init = setup, .fini = teardown)
{
        struct fmud_msg m;
        uint64_t s;

        /* Back once the subscription is in force (PROTOCOL.md "Joining"). */
        cr_assert(fmud_events(c, true) == 0, "%s", fmud_errmsg(c));
        s = load_msd(NULL, NULL, NULL);
        cr_assert(fmud_start(c, &(struct proto_target){ s, 0 }, NULL) == 0, "%s",
                  fmud_errmsg(c));
        for (;;) {
                int r = fmud_next(c, 60000, &m);

                cr_assert(r == 0, "no finished event: %d", r);
                if (m.kind == FMUD_MSG_EVENT && m.event.session == s &&
                    m.event.state == PROTO_STATE_FINISHED)
                        break;
        }
        cr_assert(m.event.time == 10.0, "t %g", m.event.time);
}

/*
 * A SIGTERM unloads every session at once, each on its own thread, each
 * handing its memory back as it goes (host_session.c); the exit status is
 * daemon_stop()'s to check.
 */
Test(daemon, a_stop_with_many_sessions_loaded_exits_cleanly, .init = setup, .fini = teardown)
{
        for (int i = 0; i < 8; i++)
                (void) load_msd(NULL, NULL, NULL);
}

Test(daemon, shutdown_stops_every_session_and_exits_cleanly, .init = setup)
{
        struct proto_load a = { .path = daemon_str(FMUD_EXAMPLES "/msd.ssp"), .has_warp = true,
                                .warp = 1.0 };
        uint64_t running = daemon_load(c, &a, NULL);

        (void) load_msd(NULL, NULL, NULL);
        cr_assert(fmud_start(c, &(struct proto_target){ running, 0 }, NULL) == 0);
        cr_assert(fmud_shutdown(c) == 0, "%s", fmud_errmsg(c));
        fmud_close(c);
        c = NULL;
        daemon_join(&d);
}
