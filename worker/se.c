/*
 * se: the worker as the scheduler of a Scheduled Execution FMU (se.h).
 * FMI 3.0 sections 5.1 (activation, preemption) and 5.2 (state machine).
 *
 * DESIGN: the lock callbacks have no instance argument (section 5.1.2),
 * so the one instance of this worker process is found through a static;
 * a worker hosts one instance. A fault found in a callback (an unlock
 * without a lock, an fmi3GetClock that failed) is kept and makes the
 * activation that ran it fail once the FMU returns: the FMU's own call is
 * not cut short.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi/fmu_se.h"
#include "worker/se.h"
#include "worker/worker.h"

struct se {
        double time;            /* the next activationTime */
        size_t n_part;
        size_t *part;           /* input Clocks (variable indices), in activation order */
        bool *marked;           /* by partition: its Clock ticks at this instant */
        size_t n_out;
        uint32_t *out_vrs;      /* output Clocks */
        bool *out_on;           /* reported ticking by fmi3GetClock in Clock Update Mode */
        unsigned locks;         /* lockPreemption not yet unlocked, in this partition */
        bool fault;
        char why[CALL_MSG_MAX + 1];
};

static struct worker *se_worker;        /* the instance the lock callbacks belong to */

int se_open(struct worker *w)
{
        const struct md *md = w->md;
        struct se *s = calloc(1, sizeof(*s));
        size_t n = fmu_se_partitions(md, NULL, 0);

        if (!s)
                return -ENOMEM;
        w->se = s;
        s->part = calloc(n + 1, sizeof(*s->part));
        s->marked = calloc(n + 1, sizeof(*s->marked));
        s->out_vrs = calloc(md->n_vars + 1, sizeof(*s->out_vrs));
        s->out_on = calloc(md->n_vars + 1, sizeof(*s->out_on));
        if (!s->part || !s->marked || !s->out_vrs || !s->out_on)
                return -ENOMEM;
        s->n_part = fmu_se_partitions(md, s->part, n);
        for (size_t i = 0; i < md->n_vars; i++)
                if (md->vars[i].type == MD_CLOCK && md->vars[i].causality == MD_CAUSALITY_OUTPUT)
                        s->out_vrs[s->n_out++] = md->vars[i].vr;
        se_worker = w;
        return 0;
}

void se_close(struct worker *w)
{
        struct se *s = w->se;

        if (!s)
                return;
        free(s->part);
        free(s->marked);
        free(s->out_vrs);
        free(s->out_on);
        free(s);
        w->se = NULL;
        se_worker = NULL;
}

static void fault(struct se *s, const char *fmt, const char *name)
{
        if (s->fault)
                return;         /* the first one says why */
        s->fault = true;
        snprintf(s->why, sizeof(s->why), fmt, name);
}

/* The clocked partition running now, for messages. */
static const char *running;

static void lock_preemption(void)
{
        if (se_worker && se_worker->se)
                se_worker->se->locks++;
}

static void unlock_preemption(void)
{
        struct se *s = se_worker ? se_worker->se : NULL;

        if (!s)
                return;
        if (s->locks == 0)
                fault(s, "fmi3ActivateModelPartition(%s): the FMU called unlockPreemption "
                      "without lockPreemption (FMI 3.0 section 5.1.2)", running ? running : "-");
        else
                s->locks--;
}

/* Clock Update Mode (section 5.2.2): which output Clocks tick now. */
static void clock_update(fmi3InstanceEnvironment env)
{
        struct worker *w = worker_of(env);
        struct se *s = w ? w->se : NULL;

        if (!s || !w->inst)
                return;
        for (size_t i = 0; i < s->n_out; i++) {
                fmi3Clock on = fmi3ClockInactive;
                int st = status_norm(w, w->lib->f3.fmi3GetClock(w->inst, &s->out_vrs[i], 1, &on));

                if (st > fmi3Warning) {
                        fault(s, "fmi3GetClock in Clock Update Mode (clockUpdate of %s) failed "
                              "(FMI 3.0 section 5.2.2)", running ? running : "-");
                        return;
                }
                if (on)
                        s->out_on[i] = true;
        }
}

fmi3Instance se_instantiate(struct worker *w, const char *name, const char *resources,
                            bool visible, bool logging_on)
{
        return w->lib->f3.fmi3InstantiateScheduledExecution(name, w->md->instantiation_token,
                                                            resources, visible, logging_on, w,
                                                            log_fmi3, clock_update,
                                                            lock_preemption, unlock_preemption);
}

void se_set_time(struct worker *w, double t)
{
        if (w->se)
                w->se->time = t;
}

void se_reset(struct worker *w)
{
        struct se *s = w->se;

        memset(s->marked, 0, s->n_part * sizeof(*s->marked));
        memset(s->out_on, 0, s->n_out * sizeof(*s->out_on));
        s->locks = 0;
        s->fault = false;
}

int se_set_clocks(struct worker *w, const uint32_t *vrs, size_t n, const bool *v)
{
        struct se *s = w->se;

        for (size_t i = 0; i < n; i++)
                for (size_t k = 0; k < s->n_part; k++)
                        if (w->md->vars[s->part[k]].vr == vrs[i])
                                s->marked[k] = v[i];
        return fmi3OK;
}

int se_activate(struct worker *w)
{
        struct se *s = w->se;
        int worst = fmi3OK;

        for (size_t k = 0; k < s->n_part; k++) {
                const struct md_variable *v = &w->md->vars[s->part[k]];
                int st;

                if (!s->marked[k])
                        continue;
                s->marked[k] = false;
                s->locks = 0;
                running = v->name;
                st = status_norm(w, w->lib->f3.fmi3ActivateModelPartition(w->inst, v->vr, s->time));
                running = NULL;
                if (st <= fmi3Warning && s->locks > 0)
                        fault(s, "fmi3ActivateModelPartition(%s): the FMU returned with "
                              "lockPreemption not unlocked (FMI 3.0 section 5.1.2)", v->name);
                if (s->fault && st < fmi3Error) {
                        snprintf(w->last_error, sizeof(w->last_error), "%s", s->why);
                        s->fault = false;
                        st = fmi3Error;
                }
                worst = st > worst ? st : worst;
                if (worst > fmi3Warning) {
                        /* The instant failed: what was left of it does not run later. */
                        memset(s->marked, 0, s->n_part * sizeof(*s->marked));
                        break;
                }
        }
        return worst;
}

int se_get_clocks(struct worker *w, const uint32_t *vrs, size_t n, bool *v)
{
        struct se *s = w->se;
        int st = se_activate(w);

        if (st > fmi3Warning)
                return st;
        for (size_t i = 0; i < n; i++) {
                v[i] = false;
                for (size_t k = 0; k < s->n_out; k++)
                        if (s->out_vrs[k] == vrs[i])
                                v[i] = s->out_on[k];
        }
        return st;
}

int se_update_discrete(struct worker *w, struct call_discrete *d)
{
        struct se *s = w->se;
        int st = se_activate(w);

        memset(s->out_on, 0, s->n_out * sizeof(*s->out_on));
        *d = (struct call_discrete){ 0 };
        return st;
}
