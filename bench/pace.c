/*
 * pace: how closely a paced run keeps its deadlines, against the
 * machine's own limit in the same run.
 *
 *   master: the coupled mass-spring-damper example (configs/examples/msd)
 *           at warp 1, steps of 1 ms (1 kHz) and 0.1 ms (10 kHz), for -t
 *           seconds each: every point's lateness (its completion after its
 *           deadline) as the master measures it (master_stats.lateness).
 *   bare:   a loop of clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) to
 *           the same deadlines, doing nothing else: each wake-up's lateness.
 * Both into the same histograms (engine/master/master_lateness.h): p50,
 * p99, p99.9 and max in µs. -s US spins the last US µs before each
 * deadline, in both. Results are in docs/BENCHMARKS.md.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/master/master_lateness.h"
#include "engine/master/master_pace.h"
#include "session_util.h"

static double arg_seconds = 3.0;
static double arg_spin_us;

static void bare(double h, struct lat_summary *ret)
{
        static struct lat_hist hist;
        uint64_t step = (uint64_t)(h * 1e9), t0 = pace_now_ns(), n = (uint64_t)(arg_seconds / h);

        memset(&hist, 0, sizeof(hist));
        for (uint64_t k = 1; k <= n; k++) {
                uint64_t due = t0 + k * step, now;

                (void) pace_sleep(due, UINT64_MAX, (uint64_t)(arg_spin_us * 1e3), NULL, NULL);
                now = pace_now_ns();
                lat_hist_add(&hist, (now - due) / 1000u);
        }
        lat_hist_summary(&hist, ret);
}

static void master(const char *path, double h, struct lat_summary *ret, uint64_t *overruns)
{
        struct scenario_overrides ov = {
                .has_step = true, .step = h, .has_start = true, .start = 0,
                .has_stop = true, .stop = arg_seconds, .has_warp = true, .warp = 1.0,
                .has_spin = arg_spin_us > 0, .spin_us = arg_spin_us,
        };
        struct scenario_opts o;
        struct session_opts so;
        struct diag_list diags;
        struct master_stats ms;
        struct bench_sys x = { 0 };
        char *msg = NULL;
        int r;

        bench_mkdtemp(x.cache, sizeof(x.cache));
        scenario_opts_default(&o);
        o.cache_dir = x.cache;
        diag_list_init(&diags, 0);
        r = scenario_load(path, &o, &ov, &diags, &x.sc);
        diag_list_fini(&diags);
        if (r < 0)
                bench_die("scenario_load", r);
        session_opts_default(&so);
        so.worker_path = FMUD_WORKER;
        r = session_new(x.sc, &so, &x.s, &msg);
        if (r < 0)
                bench_die(msg ? msg : "session_new", r);
        r = master_new(x.s, NULL, &x.m, &msg);
        if (r < 0)
                bench_die(msg ? msg : "master_new", r);
        r = master_run(x.m);
        if (r != MASTER_FINISHED)
                bench_die(master_message(x.m), r < 0 ? r : -EIO);
        master_get_stats(x.m, &ms);
        *ret = ms.lateness;
        *overruns = ms.overruns;
        bench_sys_close(&x);
}

static void row(const char *what, double hz, const struct lat_summary *s)
{
        printf("%-8s %7.0f Hz %9llu points  p50 %6llu us  p99 %6llu us  p99.9 %6llu us  "
               "max %7llu us\n", what, hz, (unsigned long long)s->count,
               (unsigned long long)s->p50_us, (unsigned long long)s->p99_us,
               (unsigned long long)s->p999_us, (unsigned long long)s->max_us);
}

int main(int argc, char **argv)
{
        static const double steps[] = { 1e-3, 1e-4 };
        const char *path = FMUD_EXAMPLES "/msd.ssp";
        int c;

        while ((c = getopt(argc, argv, "t:s:p:")) != -1) {
                switch (c) {
                case 't': arg_seconds = atof(optarg); break;
                case 's': arg_spin_us = atof(optarg); break;
                case 'p': path = optarg; break;
                default:
                        fprintf(stderr, "usage: pace [-t SECONDS] [-s SPIN_US] [-p SCENARIO]\n");
                        return 2;
                }
        }
        if (!(arg_seconds > 0) || arg_spin_us < 0) {
                fprintf(stderr, "pace: -t must be > 0 and -s >= 0\n");
                return 2;
        }
        bench_machine();
        printf("%g s each at warp 1, spin %g us; %s\n", arg_seconds, arg_spin_us, path);
        for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
                struct lat_summary m, b;
                uint64_t overruns;

                bare(steps[i], &b);
                master(path, steps[i], &m, &overruns);
                row("bare", 1.0 / steps[i], &b);
                row("master", 1.0 / steps[i], &m);
        }
        return 0;
}
