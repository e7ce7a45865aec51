/*
 * host_exec: what the session thread (host_session.c) does with one
 * command of its queue: checks it against the session's state and
 * generation, and starts, pauses, stops, warps, steps or unloads the
 * session, or hands it to the values, subscriptions or snapshots.
 *
 * DESIGN: step and run-until run the session the same way (state running) up to
 * their goal and pause there; their reply comes then, or when a pause,
 * stop or fault ends the run first. Steps asked for while one runs wait
 * for it, in order (clients sharing a session take turns); other commands
 * are served between points meanwhile.
 *
 * Threads: the session thread only, like host_session.c.
 */
#include "daemon/host_int.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void hsess_progress(struct hsess *hs, const struct hcmd *c)
{
        struct master_stats st;
        char msg[HOST_MSG_MAX] = "";

        master_get_stats(hs->m, &st);
        /* The message the state was set with: the master's, or the results file's. */
        if (hs->state == PROTO_STATE_FAULTED || hs->state == PROTO_STATE_FINISHED) {
                pthread_mutex_lock(&hs->lock);
                memcpy(msg, hs->st.message, sizeof(msg));
                pthread_mutex_unlock(&hs->lock);
        }
        host_reply_progress(hs->h, c->token, c->id, hs->state, master_time(hs->m), st.points, msg);
}

static void refuse(struct hsess *hs, const struct hcmd *c)
{
        host_reply_error(hs->h, c->token, c->id, PROTO_E_STATE, "cannot %s: session %llu is %s",
                         proto_op_name(c->op), (unsigned long long)hs->id,
                         hsess_state_name(hs->state));
}

/* How close to a run-until's time a point counts as at it. */
static double goal_tol(const struct hsess *hs, double goal)
{
        return fmax(1e-9 * hs->sc->experiment.step, 16 * DBL_EPSILON * fabs(goal));
}

/*
 * Whether the step or run-until in progress has reached its goal: for
 * run-until, the last point at or before its time (the next grid point
 * would be after it).
 */
bool hsess_goal_reached(struct hsess *hs)
{
        const struct scenario_experiment *e = &hs->sc->experiment;
        uint64_t pt = master_point(hs->m);
        double next;

        if (!hs->goal_time)
                return pt >= hs->goal_point;
        /* The next grid point, as the master computes it (master.h: t_n = start + n * h). */
        next = fmin(e->start + (double)(pt + 1) * e->step, e->stop);
        return !(next <= hs->goal_t + goal_tol(hs, hs->goal_t));
}

/*
 * step and run-until: the session runs (state running, served between
 * points like any run) until the goal, then pauses; the reply comes then,
 * or when a pause, stop or fault ends the run first.
 */
void hsess_steps(struct hsess *hs, struct hcmd *c, const struct pv *args)
{
        enum proto_err code = PROTO_E_BAD_REQUEST;
        char err[256];
        int r;

        if (hs->state != PROTO_STATE_LOADED && hs->state != PROTO_STATE_PAUSED) {
                refuse(hs, c);
                hcmd_free(c);
                return;
        }
        if (c->op == PROTO_OP_STEP) {
                struct proto_step a;

                r = proto_step_decode(args, &a, err, sizeof(err));
                hs->goal_time = false;
                hs->goal_point = a.n > UINT64_MAX - master_point(hs->m) ? UINT64_MAX :
                                 master_point(hs->m) + a.n;
        } else {
                struct proto_run_until a;

                r = proto_run_until_decode(args, &a, err, sizeof(err));
                if (r == 0 && isnan(a.time)) {
                        snprintf(err, sizeof(err), "time: not a number");
                        r = -EINVAL;
                }
                /* A time behind the session's is a client that lost track (a restore?). */
                if (r == 0 && a.time < master_time(hs->m) - goal_tol(hs, a.time)) {
                        snprintf(err, sizeof(err), "time: %.17g is before session %llu's time "
                                 "%.17g", a.time, (unsigned long long)hs->id,
                                 master_time(hs->m));
                        code = PROTO_E_INVALID;
                        r = -EINVAL;
                }
                hs->goal_time = true;
                hs->goal_t = a.time;
        }
        if (r < 0) {
                host_reply_error(hs->h, c->token, c->id, code, "%s", err);
                hcmd_free(c);
                return;
        }
        hs->goal = c;
        if (hsess_goal_reached(hs)) {
                hs->goal = NULL;
                hsess_progress(hs, c);
                hcmd_free(c);
                return;
        }
        hsess_set_state(hs, PROTO_STATE_RUNNING, "");
}

static void do_warp(struct hsess *hs, const struct hcmd *c, const struct pv *args)
{
        struct proto_warp a;
        char err[256];

        if (proto_warp_decode(args, &a, err, sizeof(err)) < 0 || master_set_warp(hs->m, a.factor) < 0) {
                host_reply_error(hs->h, c->token, c->id, PROTO_E_BAD_REQUEST, "factor: not a warp");
                return;
        }
        hs->warp = a.factor;
        if (hs->rec)
                rec_set_paced(hs->rec, a.factor > 0);
        hstatus_refresh(hs, true);
        hsess_progress(hs, c);
}

static bool generation_ok(struct hsess *hs, const struct hcmd *c, const struct pv *args)
{
        const struct pv *g = pv_get(args, "generation");
        uint64_t gen = 0;

        if (!g || pv_u64(g, &gen) < 0 || gen == 0 || gen == hs->generation)
                return true;
        host_reply_error(hs->h, c->token, c->id, PROTO_E_STALE,
                         "session %llu is at generation %llu, not %llu",
                         (unsigned long long)hs->id, (unsigned long long)hs->generation,
                         (unsigned long long)gen);
        return false;
}

/*
 * rig: a dup of the session's rig channel, handed to the control thread,
 * which gives it to the asker's rig process (control_rig.c). Here, on the
 * session thread, because the master is freed here only.
 */
static void rig_open(struct hsess *hs, const struct hcmd *c)
{
        int fd = master_rig_fd(hs->m);

        /* What an earlier rig wrote over the fixed parts keeps no later one out. */
        if (fd >= 0)
                master_rig_restore(hs->m);
        if (fd < 0) {
                host_reply_error(hs->h, c->token, c->id, PROTO_E_INVALID, "session %llu has no "
                                 "rig ports (load it with rigIn or rigOut)",
                                 (unsigned long long)hs->id);
                return;
        }
        if (!hs->h->opts.rig) {
                host_reply_error(hs->h, c->token, c->id, PROTO_E_UNSUPPORTED,
                                 "rig channels are not handed out here");
                return;
        }
        fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0) {
                host_reply_error(hs->h, c->token, c->id, PROTO_E_INTERNAL, "rig channel: %s",
                                 strerror(errno));
                return;
        }
        hs->h->opts.rig(hs->h->opts.rig_ctx, c->token, c->id, hs->id, fd);
}

int hsess_exec(struct hsess *hs, struct hcmd *c)
{
        enum proto_state s = hs->state;
        struct pv_doc doc = { 0 };
        int ret = HSESS_DONE;

        /* A batch of FMI calls comes decoded (host_fmi_call.c). */
        if (c->op == PROTO_OP_FMI)
                return hfmi_exec(hs, c);
        /* Who asked, for the log lines this command causes. */
        snprintf(hs->actor, sizeof(hs->actor), "%s", c->user);
        if (host_cmd_args(hs->h, c, &doc) < 0) {
                /* Encoded by host.c from a decoded request: only memory can fail here. */
                host_reply_error(hs->h, c->token, c->id, PROTO_E_INTERNAL, "out of memory");
                goto out;
        }
        if (c->op != PROTO_OP_UNLOAD && c->op != PROTO_OP_FREE && !generation_ok(hs, c, doc.root))
                goto out;
        switch (c->op) {
        case PROTO_OP_FREE:
        case PROTO_OP_UNLOAD:
                hsess_unload(hs, c);
                ret = HSESS_UNLOADED;
                break;
        case PROTO_OP_START:
        case PROTO_OP_RESUME:
                if (s != (c->op == PROTO_OP_START ? PROTO_STATE_LOADED : PROTO_STATE_PAUSED)) {
                        refuse(hs, c);
                        break;
                }
                hsess_set_state(hs, PROTO_STATE_RUNNING, "");
                hsess_progress(hs, c);
                break;
        case PROTO_OP_PAUSE:
                if (s != PROTO_STATE_RUNNING) {
                        refuse(hs, c);
                        break;
                }
                /* Between points already: the request, if not yet seen, is harmless. */
                if (hs->rec)
                        (void) rec_flush(hs->rec);
                hsess_set_state(hs, PROTO_STATE_PAUSED, "");
                hsess_progress(hs, c);
                break;
        case PROTO_OP_STOP:
                /*
                 * Asked while it ran, it ended before the stop was seen (it
                 * finished, faulted, or its step was abandoned after the
                 * stop's grace, host_stop.c): the answer is how it ended.
                 */
                if (c->while_running && (s == PROTO_STATE_FINISHED || s == PROTO_STATE_FAULTED ||
                                         s == PROTO_STATE_STOPPED)) {
                        hsess_progress(hs, c);
                        break;
                }
                if (s != PROTO_STATE_LOADED && s != PROTO_STATE_RUNNING && s != PROTO_STATE_PAUSED) {
                        refuse(hs, c);
                        break;
                }
                master_request_stop(hs->m);
                if (master_terminate(hs->m) < 0)
                        hrec_end(hs, PROTO_STATE_FAULTED, master_message(hs->m));
                else
                        hrec_end(hs, PROTO_STATE_STOPPED, "stopped");
                hsess_progress(hs, c);
                break;
        case PROTO_OP_WARP:
        case PROTO_OP_SUBSCRIBE:
                /* A final session neither paces nor samples any more: say so. */
                if (s != PROTO_STATE_LOADED && s != PROTO_STATE_RUNNING && s != PROTO_STATE_PAUSED)
                        refuse(hs, c);
                else if (c->op == PROTO_OP_WARP)
                        do_warp(hs, c, doc.root);
                else
                        hsub_subscribe(hs, c, doc.root);
                break;
        case PROTO_OP_STEP:
        case PROTO_OP_RUN_UNTIL:
                ret = HSESS_TAKEN;
                /* Steps from several clients go one after the other. */
                if (hs->goal) {
                        if (hs->deferred_tail)
                                hs->deferred_tail->next = c;
                        else
                                hs->deferred = c;
                        hs->deferred_tail = c;
                        break;
                }
                hsess_steps(hs, c, doc.root);      /* takes c */
                break;
        case PROTO_OP_GET:
                hvalues_get(hs, c, doc.root);
                break;
        case PROTO_OP_VARS:
                hvarlist_reply(hs, c, doc.root);
                break;
        case PROTO_OP_SET:
                /* Running: between two points, applied before the next step (host_values.c). */
                if (s != PROTO_STATE_LOADED && s != PROTO_STATE_PAUSED && s != PROTO_STATE_RUNNING)
                        refuse(hs, c);
                else
                        hvalues_set(hs, c, doc.root);
                break;
        case PROTO_OP_UNSUBSCRIBE:
                hsub_unsubscribe(hs, c, doc.root);
                break;
        case PROTO_OP_SNAPSHOT:
        case PROTO_OP_RESTORE:
                if (s != PROTO_STATE_LOADED && s != PROTO_STATE_PAUSED)
                        refuse(hs, c);
                else if (c->op == PROTO_OP_SNAPSHOT)
                        hsnap_snapshot(hs, c);
                else
                        hsnap_restore(hs, c, doc.root);
                break;
        case PROTO_OP_SNAPSHOTS:
                hsnap_list(hs, c);
                break;
        case PROTO_OP_SNAPSHOT_DELETE:
                if (s != PROTO_STATE_LOADED && s != PROTO_STATE_PAUSED)
                        refuse(hs, c);
                else
                        hsnap_delete(hs, c, doc.root);
                break;
        case PROTO_OP_SNAPSHOT_EXPORT:
        case PROTO_OP_SNAPSHOT_IMPORT:
                /* The workers serialize and deserialize states only between points. */
                if (s != PROTO_STATE_LOADED && s != PROTO_STATE_PAUSED)
                        refuse(hs, c);
                else if (c->op == PROTO_OP_SNAPSHOT_EXPORT)
                        hsnap_export(hs, c, doc.root);
                else
                        hsnap_import(hs, c, doc.root);
                break;
        case PROTO_OP_RIG:
                if (s != PROTO_STATE_LOADED && s != PROTO_STATE_PAUSED && s != PROTO_STATE_RUNNING)
                        refuse(hs, c);
                else
                        rig_open(hs, c);
                break;
        default:
                host_reply_error(hs->h, c->token, c->id, PROTO_E_UNKNOWN_OP, "not a session operation");
                break;
        }
out:
        pv_doc_fini(&doc);
        if (ret != HSESS_UNLOADED)
                hs->actor[0] = '\0';
        return ret;
}
