/*
 * host_rt: a session's real-time options (engine/master/realtime.h): the
 * daemon's [realtime] defaults, overridden by the scenario's settings
 * (docs/scenarios.md), overridden by the load's rtPriority,
 * rtWorkerPriority, rtCpus, rtWorkerCpus, rtBestEffort and rtMlock;
 * applied once the workers are up, on the session's thread (which is its
 * master thread) and on every thread of every worker; reported in status,
 * with how the master then waits for its workers ("master-wait",
 * rt_wait_choose()).
 * The workers' memory lock is asked for when they start (hrt_mlock()) and
 * each worker reports its own outcome, kept per instance.
 *
 * DESIGN: an option the kernel refuses refuses the load ("invalid", the
 * option and strerror named) unless the session said best-effort; then it
 * runs and status says "refused: REASON". The options are applied before
 * the session is loaded, so a refusal never leaves a session half real
 * time: the load fails and everything it started is reaped.
 */
#include "daemon/host_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

static void rt_log(struct hsess *hs, const char *message)
{
        hlog_line(hs, LOG_WARNING, "%s (best effort)", message);
}

static void copy_cpus(char *dst, size_t size, const struct proto_str *s)
{
        if (s->len)
                snprintf(dst, size, "%.*s", (int)s->len, s->ptr);
}

/* The daemon's defaults, overridden by the scenario's settings, overridden by the load's. */
static void merge(const struct hsess *hs, const struct proto_load *a, struct rt_opts *ret)
{
        const struct scenario_realtime *sr = &hs->sc->experiment.realtime;
        struct rt_opts o = hs->h->opts.realtime;

        if (sr->has_priority)
                o.master_priority = (int)sr->priority;
        if (sr->has_worker_priority)
                o.worker_priority = (int)sr->worker_priority;
        if (sr->cpus[0])
                snprintf(o.master_cpus, sizeof(o.master_cpus), "%s", sr->cpus);
        if (sr->worker_cpus[0])
                snprintf(o.worker_cpus, sizeof(o.worker_cpus), "%s", sr->worker_cpus);
        o.best_effort |= sr->best_effort;

        if (a->has_rt_priority)
                o.master_priority = (int)a->rt_priority;
        if (a->has_rt_worker_priority)
                o.worker_priority = (int)a->rt_worker_priority;
        copy_cpus(o.master_cpus, sizeof(o.master_cpus), &a->rt_cpus);
        copy_cpus(o.worker_cpus, sizeof(o.worker_cpus), &a->rt_worker_cpus);
        o.best_effort |= a->rt_best_effort;
        if (sr->has_mlock)
                o.worker_mlock = sr->mlock;
        o.worker_mlock |= a->rt_mlock;
        *ret = o;
}

bool hrt_mlock(const struct hsess *hs, const struct proto_load *a)
{
        struct rt_opts o;

        merge(hs, a, &o);
        return o.worker_mlock;
}

/* The first worker that could not lock: "realtime worker-mlock: REASON (instance NAME)". */
static bool mlock_refused(const struct hsess *hs, char *msg, size_t size)
{
        for (size_t i = 0; i < session_count(hs->s); i++) {
                int r = inst_mlock(session_inst(hs->s, i));

                if (r < 0) {
                        snprintf(msg, size, "realtime worker-mlock: %s (instance %s)",
                                 strerror(-r), hs->sc->components[i].name);
                        return true;
                }
        }
        return false;
}

int hrt_apply(struct hsess *hs, const struct proto_load *a, char *msg, size_t size, int *code)
{
        struct rt_state st = { 0 };
        char why[HOST_MSG_MAX];
        struct rt_opts o;
        bool refused;

        merge(hs, a, &o);
        if (o.master_cpus[0] && rt_cpus_check(o.master_cpus, why, sizeof(why)) < 0) {
                *code = PROTO_E_BAD_REQUEST;
                snprintf(msg, size, "rtCpus: %s", why);
                return -EINVAL;
        }
        if (o.worker_cpus[0] && rt_cpus_check(o.worker_cpus, why, sizeof(why)) < 0) {
                *code = PROTO_E_BAD_REQUEST;
                snprintf(msg, size, "rtWorkerCpus: %s", why);
                return -EINVAL;
        }
        if (rt_any(&o)) {
                char wait[HRT_STATE_MAX];

                rt_apply_self(&o, &st);
                for (size_t i = 0; i < session_count(hs->s); i++)
                        rt_apply_worker(&o, inst_pid(session_inst(hs->s, i)), &st);
                /* From what the kernel now says, refusals included: this is the master thread. */
                (void) rt_wait_choose(hs->s, wait, sizeof(wait));
                pthread_mutex_lock(&hs->lock);
                hs->rt = st;
                snprintf(hs->rt_wait, sizeof(hs->rt_wait), "%s", wait);
                pthread_mutex_unlock(&hs->lock);
        }
        /* The session's own options first, then the workers' memory locks. */
        refused = rt_refused(&st, why, sizeof(why)) >= 0 || mlock_refused(hs, why, sizeof(why));
        if (!refused)
                return 0;
        if (o.best_effort) {
                rt_log(hs, why);
                return 0;
        }
        *code = PROTO_E_INVALID;
        snprintf(msg, size, "%s (rtBestEffort: load anyway)", why);
        return -EPERM;
}

void hrt_release(struct hsess *hs)
{
        pthread_mutex_lock(&hs->lock);
        rt_release(&hs->rt);
        pthread_mutex_unlock(&hs->lock);
}

void hrt_mlock_state(const struct inst *inst, char *buf, size_t size)
{
        int r = inst_mlock(inst);

        if (r > 0)
                snprintf(buf, size, "%s", "");
        else if (r == 0)
                snprintf(buf, size, "active");
        else
                snprintf(buf, size, "refused: %s", strerror(-r));
}

uint32_t hrt_status(const struct hsess *hs, struct proto_rt_option *out,
                    char (*states)[HRT_STATE_MAX])
{
        const struct hstatus *st = &hs->st;
        uint32_t n = 0;

        for (int o = 0; o < RT_OPT_COUNT; o++) {
                if (!hs->rt.asked[o])
                        continue;
                rt_describe(&hs->rt, (enum rt_opt)o, states[n], HRT_STATE_MAX);
                out[n].name = (struct proto_str){ rt_opt_name((enum rt_opt)o),
                                                  (uint32_t)strlen(rt_opt_name((enum rt_opt)o)) };
                out[n].state = (struct proto_str){ states[n], (uint32_t)strlen(states[n]) };
                n++;
        }
        if (hs->rt_wait[0]) {
                out[n].name = (struct proto_str){ "master-wait", (uint32_t)strlen("master-wait") };
                out[n].state = (struct proto_str){ hs->rt_wait, (uint32_t)strlen(hs->rt_wait) };
                n++;
        }
        for (size_t i = 0; i < st->n_insts; i++) {
                const struct hinst_status *s = &st->insts[i];

                if (!s->mlock[0])
                        continue;
                out[n] = (struct proto_rt_option){
                        .name = { "worker-mlock", (uint32_t)strlen("worker-mlock") },
                        .state = { s->mlock, (uint32_t)strlen(s->mlock) },
                        .instance = { s->name, (uint32_t)strlen(s->name) },
                };
                n++;
        }
        return n;
}
