/*
 * host_status: what status and list say about a session, kept as a
 * snapshot (struct hstatus) that the session thread refreshes after each
 * command and, while running, at most every STATUS_PERIOD_NS, and that
 * the control thread encodes without waiting for the session thread.
 * While running, time and points are the master's live ones
 * (master_live()), not the snapshot's: the session thread refreshes the
 * snapshot only between stepping calls of many points, and while a step
 * hangs that would show the point the call began at, not the one the
 * session is at.
 *
 * DESIGN: the snapshot is written and read under hs->lock, held only to
 * copy numbers in (session thread) or to encode one reply (control
 * thread): microseconds either way. The sandbox layers are those each
 * worker reported when it started (inst_sandbox()); the service time is
 * the worker's own measure of the FMU's doStep (inst_service_stats()).
 */
#include "daemon/host_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fmi/fmu_se.h"

#define STATUS_PERIOD_NS        5000000ull      /* while running: every 5 ms at most */

static uint64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void insts_free(struct hinst_status *v, size_t n)
{
        for (size_t i = 0; v && i < n; i++) {
                free(v[i].name);
                free(v[i].fmu);
                free(v[i].partitions);
                for (size_t k = 0; k < v[i].n_layers; k++)
                        free(v[i].layers[k].detail);
        }
        free(v);
}

/* A Scheduled Execution FMU's partitions in activation order, as text; NULL otherwise or OOM. */
static char *partitions(const struct md *md)
{
        size_t part[64], n, len = 0;
        char buf[2048];

        if (!md->hosted_se)
                return NULL;
        n = fmu_se_partitions(md, part, 64);
        buf[0] = '\0';
        for (size_t i = 0; i < n && i < 64 && len < sizeof(buf); i++)
                len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s (priority %u)",
                                        i ? ", " : "", md->vars[part[i]].name,
                                        (unsigned)md->vars[part[i]].attrs.clock.priority);
        return strdup(buf);
}

static enum proto_layer_state layer_state(enum sandbox_layer_state s)
{
        return s == SANDBOX_ACTIVE ? PROTO_LAYER_ACTIVE :
               s == SANDBOX_UNAVAILABLE ? PROTO_LAYER_UNAVAILABLE : PROTO_LAYER_OFF;
}

static int layers(struct hinst_status *d, const struct inst *inst)
{
        const struct inst_layer *l = inst_sandbox(inst);

        for (size_t k = 0; l && k < SANDBOX_LAYER_COUNT; k++, d->n_layers++) {
                d->layers[k].name = sandbox_layer_name((enum sandbox_layer)k);
                d->layers[k].state = layer_state(l[k].state);
                d->layers[k].detail = strdup(l[k].detail ? l[k].detail : "");
                if (!d->layers[k].detail)
                        return -ENOMEM;
        }
        return 0;
}

void hstatus_fini(struct hstatus *st)
{
        insts_free(st->insts, st->n_insts);
        free(st->name);
        free(st->out);
        st->out = NULL;
        st->insts = NULL;
        st->n_insts = 0;
        st->name = NULL;
}

int hstatus_init(struct hsess *hs)
{
        const struct scenario *sc = hs->sc;
        struct hinst_status *v = NULL;
        char *name;
        size_t n = sc ? sc->n_components : 0;

        name = strdup(sc && sc->name ? sc->name : "");
        if (sc)
                v = calloc(n ? n : 1, sizeof(*v));
        if (!name || (sc && !v)) {
                free(name);
                free(v);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                const struct scenario_component *c = &sc->components[i];
                const char *model = c->fmu->md->model_name;

                v[i].name = strdup(c->name);
                v[i].fmu = strdup(model ? model : "");
                v[i].multirate = c->multirate;
                v[i].tolerance_defined = c->tolerance_defined;
                v[i].tolerance = c->tolerance;
                v[i].integrator = c->fmu->md->hosted_me ? fmu_integrator_name(c->fmu->integrator)
                                                         : NULL;
                v[i].partitions = partitions(c->fmu->md);
                v[i].pid = hs->s ? (int64_t)inst_pid(session_inst(hs->s, i)) : 0;
                if (hs->s)
                        hrt_mlock_state(session_inst(hs->s, i), v[i].mlock, sizeof(v[i].mlock));
                if (!v[i].name || !v[i].fmu ||
                    (hs->s && layers(&v[i], session_inst(hs->s, i)) < 0)) {
                        insts_free(v, n);
                        free(name);
                        return -ENOMEM;
                }
        }
        pthread_mutex_lock(&hs->lock);
        hstatus_fini(&hs->st);
        hs->st.name = name;
        hs->st.insts = v;
        hs->st.n_insts = n;
        if (sc) {
                hs->st.start = sc->experiment.start;
                hs->st.stop = sc->experiment.stop;
                hs->st.step = sc->experiment.step;
                hs->st.budget = sc->experiment.budget;
                hs->st.time = sc->experiment.start;
                hs->st.warp = hs->warp;
        }
        pthread_mutex_unlock(&hs->lock);
        return 0;
}

/* Under hs->lock: the master's figures at their last point. */
static void fill(struct hsess *hs, const struct master_stats *ms)
{
        hs->st.generation = hs->generation;
        hs->st.time = master_time(hs->m);
        hs->st.points = ms->points;
        hs->st.extra_points = ms->extra_points;
        hs->st.events = ms->events;
        hs->st.chained = ms->chained;
        hs->st.moves = ms->moves;
        hs->st.rtf = ms->rtf;
        hs->st.lag_s = ms->lag_s;
        hs->st.lag_max_s = ms->lag_max_s;
        hs->st.lateness = ms->lateness;
        hs->st.lateness_window = ms->lateness_window;
        hs->st.overruns = ms->overruns;
        master_rig_stats(hs->m, &hs->st.rig);
        if (hs->rec) {
                struct rec_stats rs;

                rec_get_stats(hs->rec, &rs);
                hs->st.recorder = rec_backend_name(rec_backend(hs->rec));
                hs->st.results = "writing";
                hs->st.rows = rs.rows_written;
                hs->st.dropped = rs.dropped;
                hs->st.res_bytes = rs.bytes_complete;
        } else if (hs->rec_name) {
                hs->st.recorder = hs->rec_name;
                hs->st.results = hs->rec_failed ? "failed" : "complete";
                hs->st.rows = hs->rec_final.rows_written;
                hs->st.dropped = hs->rec_final.dropped;
        }
        hs->st.warp = hs->warp;
        hs->st.samples_dropped = hsub_dropped(hs);
        for (size_t i = 0; i < hs->st.n_insts && i < ms->n_insts; i++) {
                const struct master_inst_stats *is = &ms->insts[i];
                struct hinst_status *d = &hs->st.insts[i];
                struct inst *inst = session_inst(hs->s, i);
                int f = inst_fault(inst);
                uint64_t steps = 0, ns = 0;

                d->steps = is->steps;
                d->step_us_mean = is->steps ? (double)is->ns_total / (double)is->steps / 1e3 : 0;
                d->step_us_max = (double)is->ns_max / 1e3;
                d->service_us_mean = inst_service_stats(inst, &steps, &ns) == 0 && steps ?
                                     (double)ns / (double)steps / 1e3 : 0;
                (void) inst_me_stats(inst, &d->me);
                /* The instance's own text names the cause (inst_fault.c); errno only without one. */
                if (f)
                        snprintf(d->fault, sizeof(d->fault), "%s",
                                 inst_message(inst)[0] ? inst_message(inst) : strerror(-f));
                else
                        d->fault[0] = '\0';
        }
}

void hstatus_refresh(struct hsess *hs, bool force)
{
        struct master_stats ms;
        uint64_t now = now_ns();

        if (!hs->m || (!force && now - hs->status_ns < STATUS_PERIOD_NS))
                return;
        hs->status_ns = now;
        master_get_stats(hs->m, &ms);
        pthread_mutex_lock(&hs->lock);
        hs->st.state = hs->state;
        fill(hs, &ms);
        pthread_mutex_unlock(&hs->lock);
}

/*
 * The state goes into the status with the time, points and results it was
 * reached with, under one lock: a client that sees 'finished' sees the
 * final time and a complete results file, never the figures of a refresh
 * before the last point.
 */
void hstatus_set_state(struct hsess *hs, const char *message)
{
        struct master_stats ms;

        if (hs->m) {
                hs->status_ns = now_ns();
                master_get_stats(hs->m, &ms);
        }
        pthread_mutex_lock(&hs->lock);
        hs->st.state = hs->state;
        if (message)
                snprintf(hs->st.message, sizeof(hs->st.message), "%s", message);
        if (hs->m)
                fill(hs, &ms);
        pthread_mutex_unlock(&hs->lock);
}

/* Under hs->lock: the time and points to report (live while running). */
static void live(struct hsess *hs, double *time, uint64_t *points)
{
        *time = hs->st.time;
        *points = hs->st.points;
        if (hs->m_pub && hs->st.state == PROTO_STATE_RUNNING)
                master_live(hs->m_pub, time, points);
}

static struct proto_str str(const char *s)
{
        return (struct proto_str){ s ? s : "", s ? (uint32_t)strlen(s) : 0 };
}

static const char *sandbox_name(enum host_sandbox s)
{
        return s == HOST_SANDBOX_STRICT ? "strict" : s == HOST_SANDBOX_BASIC ? "basic" : "off";
}

static struct proto_lateness lateness(const struct lat_summary *l)
{
        return (struct proto_lateness){ .p50_us = (double)l->p50_us, .p99_us = (double)l->p99_us,
                                        .p999_us = (double)l->p999_us, .max_us = (double)l->max_us };
}

/*
 * A transient session's owner as viewer may see it: whole (the routing id
 * that holds the lease) for the session's user, an admin or an in-process
 * caller; without the routing id (" 0x...") for others, who could claim it.
 */
static struct proto_str owner_for(const struct hsess *hs, const struct host_peer *viewer)
{
        const char *cut;
        size_t len;

        if (!hs->transient)
                return str(NULL);
        len = strlen(hs->owner);
        if (viewer && !viewer->admin && viewer->user &&
            !(hs->user[0] && !strcmp(hs->user, viewer->user)) &&
            (cut = strstr(hs->owner, " 0x")))
                len = (size_t)(cut - hs->owner);
        return (struct proto_str){ hs->owner, (uint32_t)len };
}

void hstatus_encode(struct hsess *hs, struct pw *w, const struct host_peer *viewer)
{
        const struct hstatus *st = &hs->st;
        double time;
        uint64_t points;
        struct proto_inst_status *v = calloc(st->n_insts ? st->n_insts : 1, sizeof(*v));
        struct proto_layer *lv = calloc(st->n_insts * SANDBOX_LAYER_COUNT + 1, sizeof(*lv));
        /* The options, master-wait, and each worker's memory lock. */
        struct proto_rt_option *rt = calloc(RT_OPT_COUNT + 1 + st->n_insts, sizeof(*rt));
        char rt_states[RT_OPT_COUNT][HRT_STATE_MAX];
        struct proto_session_status r;
        struct master_rig_stats rig = st->rig;

        live(hs, &time, &points);
        /* Read now, not at the last refresh: a paused session refreshes nothing, and a rig may die. */
        if (hs->m_pub && rig.ports)
                master_rig_stats(hs->m_pub, &rig);
        r = (struct proto_session_status){
                .session = hs->id, .generation = st->generation, .name = str(st->name),
                .state = st->state, .time = time, .start = st->start, .stop = st->stop,
                .step = st->step, .budget = st->budget, .points = points, .extra_points = st->extra_points,
                .events = st->events, .chained_steps = st->chained, .worker_moves = st->moves,
                .real_time_factor = st->rtf, .lag_s = st->lag_s, .lag_max_s = st->lag_max_s,
                .lateness = lateness(&st->lateness), .lateness_window = lateness(&st->lateness_window),
                .overruns = st->overruns,
                .overrun = str(hs->sc ? scenario_overrun_name(hs->sc->experiment.overrun) : NULL),
                .warp = st->warp, .message = str(st->message), .recorder = str(st->recorder),
                .rows_recorded = st->rows, .rows_dropped = st->dropped,
                .samples_dropped = st->samples_dropped,
                .results = str(st->results),
                .out = str(st->out),
                .sandbox = str(sandbox_name(hs->sandbox)),
                .transient = hs->transient, .owner = owner_for(hs, viewer),
                .user = str(hs->user),
                .n_insts = v && lv ? (uint32_t)st->n_insts : 0, .insts = v,
                .n_realtime = rt ? hrt_status(hs, rt, rt_states) : 0, .realtime = rt,
                .has_rig = rig.ports,
                .rig = {
                        .state = str(master_rig_state_name(rig.state)),
                        .policy = str(rig_policy_name(rig.policy)),
                        .in_force = rig.in_force,
                        .applied = rig.applied, .late = rig.late,
                        .missing = rig.missing, .dropped = rig.dropped,
                        .bad = rig.bad,
                },
        };

        for (size_t i = 0; v && lv && i < st->n_insts; i++) {
                const struct hinst_status *s = &st->insts[i];
                struct proto_layer *l = lv + i * SANDBOX_LAYER_COUNT;

                for (size_t k = 0; k < s->n_layers; k++)
                        l[k] = (struct proto_layer){ .name = str(s->layers[k].name),
                                                     .state = s->layers[k].state,
                                                     .detail = str(s->layers[k].detail) };
                v[i] = (struct proto_inst_status){
                        .name = str(s->name), .fmu = str(s->fmu), .pid = s->pid,
                        .multirate = s->multirate, .steps = s->steps,
                        .step_us_mean = s->step_us_mean, .step_us_max = s->step_us_max,
                        .service_us_mean = s->service_us_mean, .fault = str(s->fault),
                        .has_tolerance = s->tolerance_defined, .tolerance = s->tolerance,
                        .has_integrator = s->integrator != NULL,
                        .integrator = str(s->integrator ? s->integrator : ""),
                        .partitions = str(s->partitions ? s->partitions : ""),
                        .me_steps = s->me.steps, .me_rhs_evals = s->me.rhs_evals,
                        .me_root_evals = s->me.root_evals, .me_jac_evals = s->me.jac_evals,
                        .me_events = s->me.events, .me_event_iterations = s->me.event_iterations,
                        .n_layers = s->n_layers, .layers = l,
                };
        }
        proto_session_status_encode(w, &r);
        free(rt);
        free(lv);
        free(v);
}

void hstatus_brief(struct hsess *hs, struct proto_session_brief *ret, char **ret_name,
                   const struct host_peer *viewer)
{
        double time;
        uint64_t points;

        pthread_mutex_lock(&hs->lock);
        live(hs, &time, &points);
        *ret_name = strdup(hs->st.name ? hs->st.name : "");
        *ret = (struct proto_session_brief){
                .session = hs->id, .generation = hs->st.generation,
                .name = str(*ret_name), .state = hs->st.state, .time = time,
                .transient = hs->transient, .owner = owner_for(hs, viewer),
                .user = str(hs->user), .kind = str(hs->fmi ? "instance" : ""),
        };
        pthread_mutex_unlock(&hs->lock);
}
