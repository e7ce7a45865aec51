/*
 * pace_util: the bare loop, the paced master and the load beside them
 * (pace_util.h).
 */
#include "pace_util.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/instance/instance.h"
#include "engine/master/master_lateness.h"
#include "engine/master/master_pace.h"
#include "session_util.h"

/* The daemon's options for the measuring thread and (workers) its workers. */
static struct rt_opts opts_of(const struct pace_rt *rt, bool workers)
{
        struct rt_opts o = { .master_priority = rt->priority };

        snprintf(o.master_cpus, sizeof(o.master_cpus), "%s", rt->cpus);
        if (workers) {
                o.worker_priority = rt->priority > 1 ? rt->priority - 1 : 1;
                snprintf(o.worker_cpus, sizeof(o.worker_cpus), "%s", rt->cpus);
                o.worker_mlock = true;
        }
        o.best_effort = true;
        return o;
}

static bool refused(const char *what, const struct rt_state *st, int mlock_err)
{
        char msg[256];

        if (rt_refused(st, msg, sizeof(msg)) >= 0) {
                fprintf(stderr, "pace: %s: %s (measured without it)\n", what, msg);
                return true;
        }
        if (mlock_err) {
                fprintf(stderr, "pace: %s: mlock: %s (measured without it)\n", what,
                        strerror(-mlock_err));
                return true;
        }
        return false;
}

/* Take the options for this thread: SCHED_FIFO, the cpu set, timer slack, dma-latency, mlock. */
static int enter(const struct rt_opts *o, struct rt_state *st)
{
        rt_apply_self(o, st);
        return rt_lock_memory();
}

/* Give them back: an ordinary thread on every cpu, default slack, nothing locked. */
static void leave(struct rt_state *st)
{
        struct sched_param sp = { 0 };
        cpu_set_t all;

        (void) pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
        CPU_ZERO(&all);
        for (int c = 0; c < CPU_SETSIZE; c++)
                CPU_SET(c, &all);
        (void) sched_setaffinity(0, sizeof(all), &all);
        (void) prctl(PR_SET_TIMERSLACK, 0UL, 0UL, 0UL, 0UL);
        (void) munlockall();
        rt_release(st);
}

static void pct_of(const struct lat_summary *s, struct pace_pct *ret)
{
        ret->p50_us = (double)s->p50_us;
        ret->p99_us = (double)s->p99_us;
        ret->p999_us = (double)s->p999_us;
        ret->max_us = (double)s->max_us;
}

void pace_bare(const struct pace_job *j, struct pace_cell *ret)
{
        static struct lat_hist hist;
        struct rt_opts o = opts_of(j->rt, false);
        struct rt_state st = { 0 };
        struct lat_summary s;
        uint64_t step = (uint64_t)(j->h * 1e9), n = (uint64_t)(j->seconds / j->h + 0.5), t0;
        uint64_t last = 0;
        int mlock_err = 0;

        memset(&hist, 0, sizeof(hist));
        memset(ret, 0, sizeof(*ret));
        if (j->rt->on) {
                mlock_err = enter(&o, &st);
                ret->refused = refused("bare loop", &st, mlock_err);
        }
        t0 = pace_now_ns();
        for (uint64_t k = 1; k <= n; k++) {
                uint64_t due = t0 + k * step, now;

                (void) pace_sleep(due, UINT64_MAX, (uint64_t)(j->spin_us * 1e3), NULL, NULL);
                now = pace_now_ns();
                last = now - due;
                lat_hist_add(&hist, last / 1000u);
        }
        if (j->rt->on)
                leave(&st);
        lat_hist_summary(&hist, &s);
        ret->points = (double)s.count;
        ret->waits = ret->points;
        pct_of(&s, &ret->wake);
        /* A bare wake-up is all its point does: done when woken. */
        ret->done = ret->wake;
        ret->drift_us = (double)last / 1e3;
}

/* The workers' options, from outside (as the daemon applies them), and their memory locks. */
static int workers(const struct rt_opts *o, struct session *s, struct rt_state *st)
{
        int err = 0;

        for (size_t i = 0; i < session_count(s); i++) {
                struct inst *inst = session_inst(s, i);
                int r = inst_mlock(inst);

                rt_apply_worker(o, inst_pid(inst), st);
                if (r < 0 && !err)
                        err = r;
        }
        return err;
}

void pace_master(const char *path, const struct pace_job *j, struct pace_cell *ret)
{
        struct scenario_overrides ov = {
                .has_step = true, .step = j->h, .has_start = true, .start = 0,
                .has_stop = true, .stop = j->seconds, .has_warp = true, .warp = 1.0,
                .has_spin = j->spin_us > 0, .spin_us = j->spin_us,
        };
        struct rt_opts o = opts_of(j->rt, true);
        struct rt_state st = { 0 };
        struct scenario_opts so;
        struct session_opts sess;
        struct diag_list diags;
        struct master_stats ms;
        struct bench_sys x = { 0 };
        char *msg = NULL;
        int r, mlock_err = 0;

        memset(ret, 0, sizeof(*ret));
        bench_mkdtemp(x.cache, sizeof(x.cache));
        scenario_opts_default(&so);
        so.cache_dir = x.cache;
        diag_list_init(&diags, 0);
        r = scenario_load(path, &so, &ov, &diags, &x.sc);
        diag_list_fini(&diags);
        if (r < 0)
                bench_die("scenario_load", r);
        session_opts_default(&sess);
        sess.worker_path = FMUD_WORKER;
        sess.mlock = j->rt->on;
        r = session_new(x.sc, &sess, &x.s, &msg);
        if (r < 0)
                bench_die(msg ? msg : "session_new", r);
        r = master_new(x.s, NULL, &x.m, &msg);
        if (r < 0)
                bench_die(msg ? msg : "master_new", r);
        if (j->rt->on) {
                static bool said;
                char wait[160];

                mlock_err = enter(&o, &st);
                r = workers(&o, x.s, &st);
                ret->refused = refused("master", &st, mlock_err ? mlock_err : r);
                /* As the daemon does: how the master waits, from what the kernel now says. */
                (void) rt_wait_choose(x.s, wait, sizeof(wait));
                if (!said)
                        printf("# real time, master-wait: %s\n", wait);
                said = true;
        }
        r = master_run(x.m);
        if (j->rt->on)
                leave(&st);
        if (r != MASTER_FINISHED)
                bench_die(master_message(x.m), r < 0 ? r : -EIO);
        master_get_stats(x.m, &ms);
        ret->points = (double)ms.lateness.count;
        ret->waits = (double)ms.wakeup.count;
        pct_of(&ms.wakeup, &ret->wake);
        pct_of(&ms.lateness, &ret->done);
        ret->drift_us = ms.lag_s * 1e6;
        ret->overruns = (double)ms.overruns;
        bench_sys_close(&x);
}

void pace_hogs_start(pid_t hogs[PACE_HOGS])
{
        for (int i = 0; i < PACE_HOGS; i++) {
                hogs[i] = fork();
                if (hogs[i] < 0)
                        bench_die("fork", -errno);
                if (hogs[i] == 0) {
                        volatile unsigned long spin = 0;

                        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                        for (;;)
                                spin++;
                }
        }
}

void pace_hogs_stop(pid_t hogs[PACE_HOGS])
{
        for (int i = 0; i < PACE_HOGS; i++) {
                if (hogs[i] <= 0)
                        continue;
                (void) kill(hogs[i], SIGKILL);
                while (waitpid(hogs[i], NULL, 0) < 0 && errno == EINTR)
                        ;
                hogs[i] = 0;
        }
}
