/*
 * host_session: the thread of one session. It loads the session
 * (host_load.c), then serves its command queue (each command: host_exec.c)
 * and, while the session is running, advances the master one point at a
 * time, taking commands between points, until it is unloaded or the host
 * is freed.
 *
 * DESIGN: the session's state (enum proto_state) is this thread's alone;
 * every transition goes through hsess_set_state(), which refreshes the
 * status snapshot and publishes an event. While running, the master is
 * stepped a chunk of grid points per call, sized so that a call lasts
 * about CHUNK_NS of wall time: a run as fast as possible keeps the
 * master's row overlap (a row is formatted while the next step runs,
 * master.h, and a call flushes its last row before it returns), and a
 * paced run (a point longer than CHUNK_NS) steps one point per call.
 * Pacing is unaffected (the master keeps its pace base across calls
 * while not paused), and a command queued meanwhile waits at most one
 * call, which returns at its next point for it, at once from a pacing
 * sleep (master_request_serve() when it is queued: host.c). Pause and stop requests are made by the control thread as
 * well (host.c); a pause request the master has not seen yet when this
 * thread pauses the session itself is seen at the next stepping call,
 * which then returns MASTER_PAUSED at once with nothing done: stepping
 * calls here simply call again in that case.
 *
 * Threads: touches the session's scenario, instances, master, recorder,
 * subscriptions and snapshots (this thread only), and hs->st, hs->m_pub
 * and the queue under hs->lock (host_int.h).
 */
#include "daemon/host_int.h"

#include <errno.h>
#include <float.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

const char *hsess_state_name(enum proto_state st)
{
        const char *n = proto_state_name(st);

        return n ? n : "?";
}

void hsess_set_state(struct hsess *hs, enum proto_state st, const char *message)
{
        bool changed = hs->state != st;
        struct hcmd *goal = st != PROTO_STATE_RUNNING ? hs->goal : NULL;
        enum proto_state from = hs->state;

        hs->state = st;
        /* Paused at a step's goal or on request: the run's clock and pace stop here too. */
        if (st == PROTO_STATE_PAUSED && hs->m)
                master_hold(hs->m);
        /* The log first: a client that sees the new state finds its line, and the
         * rate limit's last summary, already written. */
        hlog_state(hs, from, st, message);
        hstatus_set_state(hs, message);
        if (changed)
                hsub_event(hs, message);
        /* A step or run-until ends with the run: at its goal, paused, stopped, finished... */
        if (goal) {
                hs->goal = NULL;
                hsess_progress(hs, goal);
                hcmd_free(goal);
        }
}

#define REC_TICK_MS     100     /* an idle session's results file is looked after this often */

/* The next command; with wait, wait for one (with timed, at most REC_TICK_MS). */
static struct hcmd *pop(struct hsess *hs, bool wait, bool timed, bool *ret_quit)
{
        struct timespec until;
        struct hcmd *c;

        if (timed) {
                clock_gettime(CLOCK_REALTIME, &until);
                until.tv_nsec += REC_TICK_MS * 1000000L;
                until.tv_sec += until.tv_nsec / 1000000000L;
                until.tv_nsec %= 1000000000L;
        }
        pthread_mutex_lock(&hs->lock);
        while (wait && !hs->q_head && !hs->quit)
                if (timed ? pthread_cond_timedwait(&hs->cond, &hs->lock, &until) != 0 :
                            pthread_cond_wait(&hs->cond, &hs->lock) != 0)
                        break;
        c = hs->q_head;
        if (c) {
                hs->q_head = c->next;
                if (!hs->q_head)
                        hs->q_tail = NULL;
                c->next = NULL;
        }
        *ret_quit = hs->quit;
        pthread_mutex_unlock(&hs->lock);
        return c;
}

/* Answer every queued command with an error (unload, shutdown). */
static void drain(struct hsess *hs, enum proto_err code, const char *why)
{
        struct hcmd *c;
        bool quit;

        while ((c = pop(hs, false, false, &quit))) {
                hfmi_abandon(hs->h, c, code, "%s", why);
                hcmd_free(c);
        }
}

/*
 * A session's scenario and descriptions are freed: hand the heap's free
 * pages back to the system. A large description's parse (a 100 MB one
 * takes over a gigabyte) otherwise stays in the daemon's resident memory
 * after its session has gone. Not under AddressSanitizer or
 * ThreadSanitizer, whose allocators leave glibc's heap unused: there the
 * first malloc_trim() sets that heap up without a lock, and two sessions
 * unloaded at once (a SIGTERM) crashed in it.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GIVE_BACK 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define GIVE_BACK 0
#endif
#endif
#ifndef GIVE_BACK
#define GIVE_BACK 1
#endif

static void give_back(void)
{
        if (GIVE_BACK)
                (void) malloc_trim(0);
}

/*
 * After a load an unload cancelled: the unloads succeed, once the session
 * is off the registry; every other command queued gets NO_SESSION.
 */
static void drain_unloaded(struct hsess *hs)
{
        struct hcmd *c, *unloads = NULL;
        bool quit;

        while ((c = pop(hs, false, false, &quit))) {
                if (c->op == PROTO_OP_UNLOAD) {
                        c->next = unloads;
                        unloads = c;
                        continue;
                }
                hfmi_abandon(hs->h, c, PROTO_E_NO_SESSION, "the session was unloaded");
                hcmd_free(c);
        }
        host_retire(hs->h, hs);
        while ((c = unloads)) {
                struct pw w;

                unloads = c->next;
                if (pw_init(&w) == 0) {
                        proto_reply_ok_begin(&w, c->id);
                        pw_nil(&w);
                        host_reply_take(hs->h, c->token, c->id, &w);
                        pw_fini(&w);
                } else {
                        host_reply_error(hs->h, c->token, c->id, PROTO_E_INTERNAL,
                                         "out of memory");
                }
                hcmd_free(c);
        }
}

void hsess_follow(struct hsess *hs)
{
        switch (master_state(hs->m)) {
        case MASTER_FINISHED:
                /* The FMUs' terminal computations first: a failed one faults the session. */
                if (master_terminate(hs->m) < 0)
                        hrec_end(hs, PROTO_STATE_FAULTED, master_message(hs->m));
                else
                        hrec_end(hs, PROTO_STATE_FINISHED, master_message(hs->m));
                break;
        case MASTER_FAULTED:
                hrec_end(hs, PROTO_STATE_FAULTED, master_message(hs->m));
                break;
        case MASTER_STOPPED:
                if (master_terminate(hs->m) < 0)
                        hrec_end(hs, PROTO_STATE_FAULTED, master_message(hs->m));
                else
                        hrec_end(hs, PROTO_STATE_STOPPED, "stopped");
                break;
        default:
                break;
        }
}

void hsess_unload(struct hsess *hs, const struct hcmd *c)
{
        struct pw w;

        if (hs->m)
                master_request_stop(hs->m);
        if (hs->goal) {
                host_reply_error(hs->h, hs->goal->token, hs->goal->id, PROTO_E_NO_SESSION,
                                 "the session was unloaded");
                hcmd_free(hs->goal);
                hs->goal = NULL;
        }
        while (hs->deferred) {
                struct hcmd *d = hs->deferred;

                hs->deferred = d->next;
                host_reply_error(hs->h, d->token, d->id, PROTO_E_NO_SESSION,
                                 "the session was unloaded");
                hcmd_free(d);
        }
        hs->deferred_tail = NULL;
        hvalues_forget(hs);
        hsnap_free_all(hs);
        hsub_free_all(hs);
        hlog_flush(hs);
        htelem_free(hs);
        hload_free(hs);
        give_back();
        hlog_line(hs, LOG_NOTICE, "unloaded%s%s", hs->actor[0] ? " by " : "", hs->actor);
        drain(hs, PROTO_E_NO_SESSION, "the session was unloaded");
        /* Off the registry before the reply: a client that got it never sees the id. */
        host_retire(hs->h, hs);
        if (!c || pw_init(&w) < 0)
                return;
        proto_reply_ok_begin(&w, c->id);
        pw_nil(&w);
        host_reply_take(hs->h, c->token, c->id, &w);
        pw_fini(&w);
}

#define CHUNK_NS        1000000u        /* the wall time a stepping call aims at */
#define CHUNK_MAX       65536u

static uint64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * How many grid points the next stepping call may take: the adaptive
 * chunk, but never past a step's or run-until's goal. For a time goal the
 * points left are estimated from the grid and kept one short, so the last
 * points before the goal go one at a time through hsess_goal_reached().
 */
static uint64_t chunk_for_goal(struct hsess *hs)
{
        const struct scenario_experiment *e = &hs->sc->experiment;
        uint64_t pt = master_point(hs->m), n = hs->chunk;
        double left;

        if (!hs->goal)
                return n;
        if (!hs->goal_time)
                return hs->goal_point - pt < n ? hs->goal_point - pt : n;
        left = (hs->goal_t - (e->start + (double)pt * e->step)) / e->step;
        if (!(left >= 3.0))
                return 1;
        return left - 2.0 < (double)n ? (uint64_t)(left - 2.0) : n;
}

/* Grow the chunk while calls are short, shrink it when one was long. */
static void chunk_adapt(struct hsess *hs, uint64_t asked, uint64_t done, uint64_t ns)
{
        if (ns > 2 * CHUNK_NS)
                hs->chunk = hs->chunk > 1 ? hs->chunk / 2 : 1;
        else if (done == asked && asked == hs->chunk && ns < CHUNK_NS / 2 && hs->chunk < CHUNK_MAX)
                hs->chunk *= 2;
}

/*
 * One stepping call of a running session. A MASTER_PAUSED return is a pause
 * request: the PAUSE command that comes with it (host.c) pauses the
 * session; without one (a request the session had already honoured) the
 * run simply goes on. A pause the master made itself (a rig's pause
 * policy, master_paused_itself()) has no command: it pauses the session
 * here, with the master's message saying why. A stopped master is a stop request made by the
 * control thread, whose STOP or UNLOAD command is queued right after it:
 * that command ends the session (and answers), so the session stays
 * running until it comes, and hsess_main() waits for it.
 */
static void run_chunk(struct hsess *hs)
{
        uint64_t n, pt, t0;
        int r;

        if (hs->goal && hsess_goal_reached(hs)) {
                hsess_set_state(hs, PROTO_STATE_PAUSED, "");
                return;
        }
        if (!hs->chunk)
                hs->chunk = 1;
        n = chunk_for_goal(hs);
        pt = master_point(hs->m);
        t0 = now_ns();
        r = master_step(hs->m, n);
        chunk_adapt(hs, n, master_point(hs->m) - pt, now_ns() - t0);
        if (hs->rec_error && master_state(hs->m) != MASTER_FAULTED) {
                hrec_fault(hs);
                return;
        }
        if (master_state(hs->m) == MASTER_STOPPED)
                return;
        /* Paused by the master itself (a rig's pause policy): no command comes for it. */
        if (master_paused_itself(hs->m)) {
                if (hs->rec)
                        (void) rec_flush(hs->rec);
                htelem_tick(hs);
                hsess_set_state(hs, PROTO_STATE_PAUSED, master_message(hs->m));
                return;
        }
        if (r == -EPERM || master_state(hs->m) != MASTER_PAUSED)
                hsess_follow(hs);
        htelem_tick(hs);
        if (hs->state == PROTO_STATE_RUNNING && hs->goal && hsess_goal_reached(hs))
                hsess_set_state(hs, PROTO_STATE_PAUSED, "");
        else
                hstatus_refresh(hs, false);
}

void *hsess_main(void *arg)
{
        struct hsess *hs = arg;
        char msg[HOST_MSG_MAX];
        struct hcmd *c;
        bool quit;
        int code;

        if ((hs->fmi ? hfmi_load : hload_run)(hs, &code, msg, sizeof(msg)) < 0) {
                struct hcmd *load = hs->load;

                hs->load = NULL;
                hload_free(hs);
                give_back();
                /* Off the registry first: a client told of the failure never sees the id. */
                if (atomic_load(&hs->unload_asked)) {
                        hlog_line(hs, LOG_NOTICE, "unloaded while loading");
                        drain_unloaded(hs);
                } else {
                        drain(hs, PROTO_E_NO_SESSION, "the session failed to load");
                        host_retire(hs->h, hs);
                }
                host_reply_error(hs->h, load->token, load->id, (enum proto_err)code, "%s", msg);
                hcmd_free(load);
                return NULL;
        }
        /*
         * Loaded although an unload came meanwhile (after the load's last
         * poll): the unload queued runs next as for any session, whose
         * calls are waited for again (not during a shutdown).
         */
        if (atomic_load(&hs->unload_asked) && !atomic_load(&hs->cancel))
                atomic_store(&hs->calls_cancel, false);
        for (;;) {
                /* The next deferred step once the one before it is done. */
                if (!hs->goal && hs->deferred) {
                        struct pv_doc doc = { 0 };

                        c = hs->deferred;
                        hs->deferred = c->next;
                        if (!hs->deferred)
                                hs->deferred_tail = NULL;
                        c->next = NULL;
                        if (host_cmd_args(hs->h, c, &doc) == 0) {
                                hsess_steps(hs, c, doc.root);
                        } else {
                                host_reply_error(hs->h, c->token, c->id, PROTO_E_INTERNAL,
                                                 "out of memory");
                                hcmd_free(c);
                        }
                        pv_doc_fini(&doc);
                        continue;
                }
                /* The results file between chunks, and while paused or loaded. */
                hrec_idle(hs);
                if (hs->rec_error)
                        hrec_fault(hs);
                c = pop(hs, hs->state != PROTO_STATE_RUNNING || master_state(hs->m) == MASTER_STOPPED,
                        hs->rec && !rec_idle(hs->rec), &quit);
                if (quit) {
                        /* hs->expired was set with quit, under the lock pop() took. */
                        const char *why = hs->expired ? "the session's lease ran out (transient)" :
                                                        "the daemon is shutting down";

                        if (c)
                                hfmi_abandon(hs->h, c, PROTO_E_STATE,
                                             "session %llu is shutting down: %s",
                                             (unsigned long long)hs->id, why);
                        hcmd_free(c);
                        drain(hs, PROTO_E_STATE, why);
                        hsess_unload(hs, NULL);
                        return NULL;
                }
                if (c) {
                        int r = hsess_exec(hs, c);

                        if (r != HSESS_TAKEN)
                                hcmd_free(c);
                        if (r == HSESS_UNLOADED)
                                return NULL;
                        continue;
                }
                if (hs->state == PROTO_STATE_RUNNING)
                        run_chunk(hs);
        }
}
