/*
 * host: sessions driven through host_request() as the control thread
 * drives them: load (and every reason to refuse one), the state machine
 * and its refusals, the generation fence, pause/resume giving the same
 * results file as an uninterrupted run, two sessions at once with a slow
 * one not delaying the other, and unload in every state leaving no worker
 * behind.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/tmpdir.h"
#include "test_host_drv.h"

#define MSD HDRV_EXAMPLE("msd.ssp")

/*
 * Children of this process not yet reaped, whichever thread started them:
 * every process whose parent is us. /proc/PID/task/TID/children would be
 * shorter, but it needs CONFIG_PROC_CHILDREN, and without it reads as none.
 */
static size_t children(void)
{
        DIR *dir = opendir("/proc");
        struct dirent *e;
        size_t n = 0;

        cr_assert(dir != NULL);
        while ((e = readdir(dir))) {
                char path[300], buf[512], *p;
                long ppid = -1;
                FILE *f;

                if (e->d_name[0] < '1' || e->d_name[0] > '9')
                        continue;
                snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
                f = fopen(path, "r");
                if (!f)
                        continue;       /* gone meanwhile */
                if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
                        (void) sscanf(p + 2, "%*c %ld", &ppid);
                fclose(f);
                n += ppid == (long)getpid();
        }
        closedir(dir);
        return n;
}

static void expect_err(struct hdrv *d, enum proto_op op, uint64_t s, uint64_t g,
                       enum proto_err code, const char *part)
{
        struct hrep rep;
        const char *msg;

        hdrv_target(d, op, s, g, &rep);
        msg = hrep_err(&rep, code);
        if (part)
                cr_assert(strstr(msg, part), "'%s' does not say '%s'", msg, part);
        hrep_fini(&rep);
}

static void expect_state(struct hdrv *d, enum proto_op op, uint64_t s, enum proto_state st)
{
        struct proto_progress p;
        struct hrep rep;

        hdrv_target(d, op, s, 0, &rep);
        hrep_progress(&rep, &p);
        cr_assert(p.state == st, "%s: state %s, not %s", proto_op_name(op),
                  proto_state_name(p.state), proto_state_name(st));
        hrep_fini(&rep);
}

static void expect_load_err(struct hdrv *d, const char *path, const char *out,
                            const struct proto_load *base, enum proto_err code)
{
        struct hrep rep;
        uint32_t n_sessions = 9, n_workers = 9;

        hdrv_wait(d, hdrv_load_send(d, path, out, base), &rep);
        /* The codec itself refuses relative paths: either answer is a refusal before any open. */
        if (code == PROTO_E_DENIED && rep.r.code == PROTO_E_BAD_REQUEST && path[0] == '/' &&
            out && out[0] != '/')
                code = PROTO_E_BAD_REQUEST;
        if (code == PROTO_E_DENIED && rep.r.code == PROTO_E_BAD_REQUEST && path[0] != '/')
                code = PROTO_E_BAD_REQUEST;
        (void) hrep_err(&rep, code);
        hrep_fini(&rep);
        host_counts(d->h, &n_sessions, &n_workers);
        cr_assert(n_sessions == 0 && n_workers == 0, "%u sessions, %u workers left",
                  n_sessions, n_workers);
}

static size_t list_count(struct hdrv *d)
{
        struct proto_list_result lr;
        struct hrep rep;
        struct pw w;
        void *mem = NULL;
        char err[256];
        size_t n;

        cr_assert(pw_init(&w) == 0);
        proto_req_begin(&w, hdrv_id(d), PROTO_OP_LIST, 0);
        hdrv_wait(d, hdrv_send(d, &w), &rep);
        pw_fini(&w);
        cr_assert(rep.r.ok);
        cr_assert(proto_list_result_decode(rep.r.result, &lr, &mem, err, sizeof(err)) == 0, "%s", err);
        n = lr.n;
        free(mem);
        hrep_fini(&rep);
        return n;
}

Test(host, load_status_list_unload)
{
        struct proto_session_status st;
        struct hdrv d;
        struct hrep rep;
        void *mem = NULL;
        int64_t pids[2];
        uint64_t s;

        hdrv_init(&d, NULL);
        s = hdrv_load(&d, MSD, NULL, NULL);
        cr_assert(s == 1);
        cr_assert(list_count(&d) == 1);
        hdrv_status(&d, s, &rep, &st, &mem);
        cr_assert(st.state == PROTO_STATE_LOADED);
        cr_assert(st.n_insts == 2 && st.generation == 1);
        cr_assert(st.time == 0 && st.stop == 10 && st.step == 0.01);
        cr_assert(st.insts[0].name.len == 5 && !memcmp(st.insts[0].name.ptr, "mass1", 5));
        for (int i = 0; i < 2; i++) {
                pids[i] = st.insts[i].pid;
                cr_assert(pids[i] > 0 && !hdrv_gone(pids[i]));
        }
        free(mem);
        hrep_fini(&rep);
        hdrv_target(&d, PROTO_OP_UNLOAD, s, 1, &rep);
        cr_assert(rep.r.ok);
        hrep_fini(&rep);
        cr_assert(list_count(&d) == 0);
        cr_assert(hdrv_gone(pids[0]) && hdrv_gone(pids[1]));
        expect_err(&d, PROTO_OP_STATUS, s, 0, PROTO_E_NO_SESSION, "no session 1");
        /* Ids are never reused. */
        cr_assert(hdrv_load(&d, MSD, NULL, NULL) == 2);
        hdrv_fini(&d);
        cr_assert(children() == 0);
}

Test(host, load_refuses_paths_outside_the_allowed_directories)
{
        char link[600], dots[600], out[600], bad[600];
        struct hdrv d;
        char *other = tmpdir_new("host-other");

        cr_assert(other != NULL);
        hdrv_init(&d, NULL);
        expect_load_err(&d, "configs/examples/msd.ssp", NULL, NULL, PROTO_E_DENIED);
        expect_load_err(&d, "/etc/passwd", NULL, NULL, PROTO_E_DENIED);
        /* A symlink inside an allowed directory pointing outside it. */
        snprintf(link, sizeof(link), "%s/escape.ssd", d.out);
        cr_assert(symlink("/etc/hostname", link) == 0);
        expect_load_err(&d, link, NULL, NULL, PROTO_E_DENIED);
        snprintf(dots, sizeof(dots), "%s/../cache/../../", d.out);
        expect_load_err(&d, dots, NULL, NULL, PROTO_E_DENIED);
        /* The results file: its directory must be allowed too, and it no symlink. */
        snprintf(out, sizeof(out), "%s/results.csv", other);
        expect_load_err(&d, MSD, out, NULL, PROTO_E_DENIED);
        snprintf(out, sizeof(out), "%s/../results.csv", d.out);
        expect_load_err(&d, MSD, out, NULL, PROTO_E_DENIED);
        expect_load_err(&d, MSD, "results.csv", NULL, PROTO_E_DENIED);
        snprintf(out, sizeof(out), "%s/link.csv", d.out);
        snprintf(bad, sizeof(bad), "%s/x.csv", other);
        cr_assert(symlink(bad, out) == 0);
        expect_load_err(&d, MSD, out, NULL, PROTO_E_DENIED);
        cr_assert(access(bad, F_OK) != 0, "nothing was written outside");
        hdrv_fini(&d);
        tmpdir_free(other);
}

Test(host, load_refuses_invalid_scenarios_and_failing_workers)
{
        struct proto_assign mr = { { "nobody", 6 }, { "2", 1 } };
        struct proto_load bad = { .n_multirate = 1, .multirate = &mr };
        char path[600];
        struct hdrv d;
        struct hrep rep;
        const char *msg;

        hdrv_init(&d, NULL);
        snprintf(path, sizeof(path), "%s/SystemStructure.ssd", d.out);
        cr_assert(tmpdir_write(d.out, "SystemStructure.ssd", "<nonsense/>", 11) == 0);
        hdrv_wait(&d, hdrv_load_send(&d, path, NULL, NULL), &rep);
        msg = hrep_err(&rep, PROTO_E_INVALID);
        cr_assert(msg[0] != '\0');
        hrep_fini(&rep);
        expect_load_err(&d, MSD, NULL, &bad, PROTO_E_INVALID);
        cr_assert(list_count(&d) == 0);
        hdrv_fini(&d);

        /* A worker that cannot start: a fault, and nothing left behind. */
        hdrv_init_worker(&d, "/bin/false");
        expect_load_err(&d, MSD, NULL, NULL, PROTO_E_FAULT);
        cr_assert(list_count(&d) == 0);
        hdrv_fini(&d);
        cr_assert(children() == 0);
}

Test(host, a_transient_load_without_a_connection_is_refused)
{
        struct proto_load tr = { .transient = true };
        struct hdrv d;
        struct hrep rep;
        const char *msg;

        /* host_request() names no peer: no connection could renew the lease. */
        hdrv_init(&d, NULL);
        hdrv_wait(&d, hdrv_load_send(&d, MSD, NULL, &tr), &rep);
        msg = hrep_err(&rep, PROTO_E_INVALID);
        cr_assert(strstr(msg, "transient") != NULL, "%s", msg);
        hrep_fini(&rep);
        cr_assert(list_count(&d) == 0);
        hdrv_fini(&d);
        cr_assert(children() == 0);
}

Test(host, state_machine_refuses_what_the_state_does_not_allow)
{
        struct hdrv d;
        uint64_t s;

        hdrv_init(&d, NULL);
        s = hdrv_load(&d, MSD, NULL, &(struct proto_load){ .has_warp = true, .warp = 1 });
        expect_err(&d, PROTO_OP_PAUSE, s, 0, PROTO_E_STATE, "cannot pause: session 1 is loaded");
        expect_err(&d, PROTO_OP_RESUME, s, 0, PROTO_E_STATE, "cannot resume: session 1 is loaded");
        expect_err(&d, PROTO_OP_START, 7, 0, PROTO_E_NO_SESSION, "no session 7");
        expect_err(&d, PROTO_OP_START, s, 2, PROTO_E_STALE, "generation 1");
        expect_state(&d, PROTO_OP_START, s, PROTO_STATE_RUNNING);
        expect_err(&d, PROTO_OP_START, s, 0, PROTO_E_STATE, "cannot start: session 1 is running");
        expect_err(&d, PROTO_OP_RESUME, s, 0, PROTO_E_STATE, "cannot resume: session 1 is running");
        expect_err(&d, PROTO_OP_SNAPSHOT, s, 0, PROTO_E_STATE, "is running");
        {
                struct proto_step a = { .t = { s, 0 }, .n = 1 };
                struct hrep rep;
                struct pw w;

                cr_assert(pw_init(&w) == 0);
                proto_step_encode(&w, hdrv_id(&d), &a);
                hdrv_wait(&d, hdrv_send(&d, &w), &rep);
                pw_fini(&w);
                (void) hrep_err(&rep, PROTO_E_STATE);
                hrep_fini(&rep);
        }
        expect_state(&d, PROTO_OP_PAUSE, s, PROTO_STATE_PAUSED);
        expect_err(&d, PROTO_OP_PAUSE, s, 0, PROTO_E_STATE, "cannot pause: session 1 is paused");
        expect_state(&d, PROTO_OP_RESUME, s, PROTO_STATE_RUNNING);
        expect_state(&d, PROTO_OP_STOP, s, PROTO_STATE_STOPPED);
        expect_err(&d, PROTO_OP_RESUME, s, 0, PROTO_E_STATE, "is stopped");
        expect_err(&d, PROTO_OP_STOP, s, 0, PROTO_E_STATE, "is stopped");
        expect_err(&d, PROTO_OP_START, s, 1, PROTO_E_STATE, "is stopped");
        /* Every state change was published, in order. */
        {
                enum proto_state want[] = { PROTO_STATE_LOADED, PROTO_STATE_RUNNING,
                                            PROTO_STATE_PAUSED, PROTO_STATE_RUNNING,
                                            PROTO_STATE_STOPPED };
                struct proto_event e;
                struct pv_doc doc;
                char err[256];

                cr_assert(hdrv_pub_count(&d, "events") == 5);
                for (size_t i = 0; i < 5; i++) {
                        cr_assert(proto_event_decode(hdrv_pub(&d, "events", i, &doc), &e, err,
                                                     sizeof(err)) == 0, "%s", err);
                        cr_assert(e.state == want[i] && e.session == s);
                        pv_doc_fini(&doc);
                }
        }
        hdrv_fini(&d);
}

Test(host, step_and_run_until_drive_time)
{
        struct proto_progress p;
        struct hdrv d;
        struct hrep rep;
        struct pw w;
        uint64_t s;

        hdrv_init(&d, NULL);
        s = hdrv_load(&d, MSD, NULL, NULL);
        cr_assert(pw_init(&w) == 0);
        proto_step_encode(&w, hdrv_id(&d), &(struct proto_step){ .t = { s, 1 }, .n = 5 });
        hdrv_wait(&d, hdrv_send(&d, &w), &rep);
        hrep_progress(&rep, &p);
        cr_assert(p.state == PROTO_STATE_PAUSED && p.points == 5 && p.time == 0.05,
                  "%s %llu %g", proto_state_name(p.state), (unsigned long long)p.points, p.time);
        hrep_fini(&rep);
        proto_run_until_encode(&w, hdrv_id(&d), &(struct proto_run_until){ .t = { s, 0 }, .time = 0.2 });
        hdrv_wait(&d, hdrv_send(&d, &w), &rep);
        hrep_progress(&rep, &p);
        cr_assert(p.state == PROTO_STATE_PAUSED && p.points == 20 && p.time == 0.2);
        hrep_fini(&rep);
        proto_run_until_encode(&w, hdrv_id(&d), &(struct proto_run_until){ .t = { s, 0 }, .time = 99 });
        hdrv_wait(&d, hdrv_send(&d, &w), &rep);
        hrep_progress(&rep, &p);
        cr_assert(p.state == PROTO_STATE_FINISHED && p.time == 10);
        hrep_fini(&rep);
        proto_step_encode(&w, hdrv_id(&d), &(struct proto_step){ .t = { s, 0 }, .n = 1 });
        hdrv_wait(&d, hdrv_send(&d, &w), &rep);
        (void) hrep_err(&rep, PROTO_E_STATE);
        hrep_fini(&rep);
        pw_fini(&w);
        hdrv_fini(&d);
}

static void run_to_end(struct hdrv *d, const char *out, bool pause, struct proto_load *base)
{
        struct proto_warp wa;
        struct hrep rep;
        struct pw w;
        uint64_t s = hdrv_load(d, MSD, out, base);

        expect_state(d, PROTO_OP_START, s, PROTO_STATE_RUNNING);
        if (pause) {
                /* Paced at warp 5: the pause lands well before the end. */
                expect_state(d, PROTO_OP_PAUSE, s, PROTO_STATE_PAUSED);
                cr_assert(pw_init(&w) == 0);
                wa = (struct proto_warp){ .t = { s, 0 }, .factor = 0 };
                proto_warp_encode(&w, hdrv_id(d), &wa);
                hdrv_wait(d, hdrv_send(d, &w), &rep);
                cr_assert(rep.r.ok);
                hrep_fini(&rep);
                pw_fini(&w);
                expect_state(d, PROTO_OP_RESUME, s, PROTO_STATE_RUNNING);
        }
        hdrv_wait_state(d, s, PROTO_STATE_FINISHED);
        hdrv_target(d, PROTO_OP_UNLOAD, s, 0, &rep);
        cr_assert(rep.r.ok);
        hrep_fini(&rep);
}

Test(host, pause_and_resume_give_the_same_results_file)
{
        struct proto_load fast = { .has_stop = true, .stop = 2, .has_decimation = true,
                                   .decimation = 1 };
        struct proto_load paced = fast;
        char a[600], b[600];
        char *ba, *bb;
        size_t la, lb;
        struct hdrv d;

        paced.has_warp = true;
        paced.warp = 5;
        hdrv_init(&d, NULL);
        snprintf(a, sizeof(a), "%s/a.csv", d.out);
        snprintf(b, sizeof(b), "%s/b.csv", d.out);
        run_to_end(&d, a, false, &fast);
        run_to_end(&d, b, true, &paced);
        ba = hdrv_slurp(a, &la);
        bb = hdrv_slurp(b, &lb);
        cr_assert(la > 1000 && la == lb && !memcmp(ba, bb, la), "the files differ");
        free(ba);
        free(bb);
        hdrv_fini(&d);
}

Test(host, slow_session_does_not_delay_another)
{
        struct proto_session_status st;
        struct proto_progress p;
        struct hdrv d;
        struct hrep rep;
        struct pw w;
        void *mem = NULL;
        uint64_t slow, fast, tok;

        hdrv_init(&d, NULL);
        slow = hdrv_load(&d, MSD, NULL, &(struct proto_load){ .has_warp = true, .warp = 1,
                                                              .has_stop = true, .stop = 1000 });
        fast = hdrv_load(&d, HDRV_FMU("Feedthrough"), NULL, NULL);
        expect_state(&d, PROTO_OP_START, slow, PROTO_STATE_RUNNING);
        /* The other session steps, gets and reports while the slow one runs. */
        cr_assert(pw_init(&w) == 0);
        proto_step_encode(&w, hdrv_id(&d), &(struct proto_step){ .t = { fast, 0 }, .n = 3 });
        hdrv_wait(&d, hdrv_send(&d, &w), &rep);
        hrep_progress(&rep, &p);
        cr_assert(p.points == 3);
        hrep_fini(&rep);
        {
                struct proto_str names[] = { { "Float64_output", 14 } };

                proto_get_encode(&w, hdrv_id(&d), &(struct proto_get){ .t = { fast, 0 }, .n = 1,
                                                                      .names = names });
                hdrv_wait(&d, hdrv_send(&d, &w), &rep);
                cr_assert(rep.r.ok);
                hrep_fini(&rep);
        }
        /* A get queued to the slow session waits at most a point; status does not wait at all. */
        {
                struct proto_str names[] = { { "mass1.x1", 8 } };

                proto_get_encode(&w, hdrv_id(&d), &(struct proto_get){ .t = { slow, 0 }, .n = 1,
                                                                      .names = names });
                tok = hdrv_send(&d, &w);
        }
        hdrv_status(&d, slow, &rep, &st, &mem);
        cr_assert(st.state == PROTO_STATE_RUNNING && st.time < 1000);
        free(mem);
        hrep_fini(&rep);
        hdrv_wait(&d, tok, &rep);
        cr_assert(rep.r.ok);
        hrep_fini(&rep);
        pw_fini(&w);
        /* All of it came while the slow session still runs. */
        cr_assert(hdrv_state(&d, slow) == PROTO_STATE_RUNNING);
        cr_assert(list_count(&d) == 2);
        hdrv_fini(&d);
        cr_assert(children() == 0);
}

/* Bring a fresh session to st, unload it, check its workers are gone. */
static void unload_in(struct hdrv *d, enum proto_state want)
{
        struct proto_load base = { .has_warp = true, .warp = 1, .has_stop = true, .stop = 1000 };
        struct proto_session_status st;
        struct hrep rep;
        void *mem = NULL;
        int64_t pids[2];
        uint64_t s;

        if (want == PROTO_STATE_FINISHED)
                base = (struct proto_load){ .has_stop = true, .stop = 0.05 };
        if (want == PROTO_STATE_FAULTED) {
                base.has_budget = true;
                base.budget = 1e-9;
        }
        s = hdrv_load(d, MSD, NULL, &base);
        if (want != PROTO_STATE_LOADED)
                expect_state(d, PROTO_OP_START, s, PROTO_STATE_RUNNING);
        if (want == PROTO_STATE_PAUSED)
                expect_state(d, PROTO_OP_PAUSE, s, PROTO_STATE_PAUSED);
        if (want == PROTO_STATE_STOPPED)
                expect_state(d, PROTO_OP_STOP, s, PROTO_STATE_STOPPED);
        if (want == PROTO_STATE_FINISHED || want == PROTO_STATE_FAULTED)
                hdrv_wait_state(d, s, want);
        hdrv_status(d, s, &rep, &st, &mem);
        cr_assert(st.state == want, "%s, not %s", proto_state_name(st.state), proto_state_name(want));
        if (want == PROTO_STATE_FAULTED)
                cr_assert(st.message.len > 0);
        cr_assert(st.n_insts == 2, "%u instances", st.n_insts);
        pids[0] = st.insts[0].pid;
        pids[1] = st.insts[1].pid;
        free(mem);
        hrep_fini(&rep);
        hdrv_target(d, PROTO_OP_UNLOAD, s, 0, &rep);
        cr_assert(rep.r.ok);
        hrep_fini(&rep);
        cr_assert(hdrv_gone(pids[0]) && hdrv_gone(pids[1]), "in %s", proto_state_name(want));
        cr_assert(children() == 0, "in %s", proto_state_name(want));
}

Test(host, unload_in_every_state_leaves_no_worker)
{
        enum proto_state states[] = { PROTO_STATE_LOADED, PROTO_STATE_RUNNING, PROTO_STATE_PAUSED,
                                      PROTO_STATE_FINISHED, PROTO_STATE_STOPPED,
                                      PROTO_STATE_FAULTED };
        struct hrep rep;
        struct hdrv d;
        uint64_t load, unload;
        uint32_t n_sessions, n_workers;

        hdrv_init(&d, NULL);
        for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
                unload_in(&d, states[i]);
        /*
         * Loading: the unload cancels the load (refused, saying so), or,
         * where the load was done first, undoes it.
         */
        load = hdrv_load_send(&d, MSD, NULL, NULL);
        unload = hdrv_target_send(&d, PROTO_OP_UNLOAD, 7, 0);
        hdrv_wait(&d, load, &rep);
        cr_assert(rep.r.ok || (rep.r.code == PROTO_E_STATE &&
                               memmem(rep.r.message, rep.r.message_len,
                                      "the session was unloaded", 24)),
                  "%.*s", (int)rep.r.message_len, rep.r.message);
        hrep_fini(&rep);
        hdrv_wait(&d, unload, &rep);
        cr_assert(rep.r.ok, "%.*s", (int)rep.r.message_len, rep.r.message);
        hrep_fini(&rep);
        cr_assert(children() == 0);
        host_counts(d.h, &n_sessions, &n_workers);
        cr_assert(n_sessions == 0 && n_workers == 0);
        hdrv_fini(&d);
}

Test(host, free_stops_running_sessions)
{
        struct hdrv d;
        uint64_t s;

        hdrv_init(&d, NULL);
        s = hdrv_load(&d, MSD, NULL, &(struct proto_load){ .has_warp = true, .warp = 1,
                                                           .has_stop = true, .stop = 1000 });
        expect_state(&d, PROTO_OP_START, s, PROTO_STATE_RUNNING);
        (void) hdrv_load(&d, MSD, NULL, NULL);
        hdrv_fini(&d);
        cr_assert(children() == 0);
}

Test(host, steps_take_turns_and_other_requests_are_served_meanwhile)
{
        struct proto_str names[] = { { "mass1.x1", 8 } };
        struct proto_progress p;
        struct hdrv d;
        struct hrep rep;
        struct pw w;
        uint64_t s, t1, t2, t3;

        hdrv_init(&d, NULL);
        /* Paced: 50 points of 10 ms take half a second of wall time. */
        s = hdrv_load(&d, MSD, NULL, &(struct proto_load){ .has_warp = true, .warp = 1 });
        cr_assert(pw_init(&w) == 0);
        proto_step_encode(&w, hdrv_id(&d), &(struct proto_step){ .t = { s, 0 }, .n = 50 });
        t1 = hdrv_send(&d, &w);
        proto_step_encode(&w, hdrv_id(&d), &(struct proto_step){ .t = { s, 0 }, .n = 5 });
        t2 = hdrv_send(&d, &w);
        proto_get_encode(&w, hdrv_id(&d), &(struct proto_get){ .t = { s, 0 }, .n = 1, .names = names });
        t3 = hdrv_send(&d, &w);
        pw_fini(&w);
        hdrv_wait(&d, t3, &rep);
        cr_assert(rep.r.ok);
        hrep_fini(&rep);
        /* The get came back between two points of the first step, which still runs. */
        cr_assert(!hdrv_has(&d, t1), "the step was answered before the get");
        cr_assert(hdrv_state(&d, s) == PROTO_STATE_RUNNING);
        hdrv_wait(&d, t1, &rep);
        hrep_progress(&rep, &p);
        cr_assert(p.state == PROTO_STATE_PAUSED && p.points == 50, "%llu", (unsigned long long)p.points);
        hrep_fini(&rep);
        hdrv_wait(&d, t2, &rep);
        hrep_progress(&rep, &p);
        cr_assert(p.state == PROTO_STATE_PAUSED && p.points == 55 && p.time == 0.55);
        hrep_fini(&rep);
        hdrv_fini(&d);
}
