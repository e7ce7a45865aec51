/*
 * pace: how closely a paced run keeps its deadlines, against the
 * machine's own limit in the same run, with and without the real-time
 * options, on an idle machine and beside cpu-bound processes.
 *
 *   master: the coupled mass-spring-damper example (configs/examples/msd)
 *           at warp 1, steps of 1 ms (1 kHz) and 0.1 ms (10 kHz), for -t
 *           seconds each, as the master measures it (master_stats): how
 *           late it woke after each deadline it waited for ("wake",
 *           master_stats.wakeup: a point done late waits for nothing),
 *           every point's completion after its deadline ("done",
 *           master_stats.lateness), and the drift, how late the last point
 *           was done.
 *   bare:   a loop of clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) to
 *           the same deadlines, doing nothing else: each wake-up's lateness
 *           ("wake", the column to compare with the master's).
 *
 * Each rate runs four ways: plain or real time (SCHED_FIFO for the
 * measuring thread and the workers, the cpu set -c, timer slack,
 * /dev/cpu_dma_latency, mlock of this process and the workers:
 * pace_util.h), and idle or beside PACE_HOGS cpu-bound processes the
 * bench starts before and stops after the measurement. Both loops run
 * each way, one after the other, into the same histograms
 * (engine/master/master_lateness.h). A cell is the median over -r runs.
 *
 *   pace [-t SECONDS] [-r RUNS] [-s SPIN_US] [-P PRIORITY] [-c CPUS] [-p SCENARIO] [--quick]
 *
 * --quick: 0.5 s, one run, for a smoke test of the program. Results are
 * in docs/BENCHMARKS.md ("Pacing").
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pace_util.h"
#include "session_util.h"

static double arg_seconds = 10.0;
static unsigned arg_runs = 3;
static double arg_spin_us;
static struct pace_rt arg_rt = { .priority = 80 };

static const char *usage =
        "usage: pace [-t SECONDS] [-r RUNS] [-s SPIN_US] [-P PRIORITY] [-c CPUS] [-p SCENARIO] "
        "[--quick]\n";

/* Median of every field over n runs. */
static void median(struct pace_cell *runs, unsigned n, struct pace_cell *ret)
{
        double v[BENCH_MAX_RUNS];

#define MEDIAN(f) do { \
                for (unsigned i = 0; i < n; i++) \
                        v[i] = runs[i].f; \
                ret->f = bench_median(v, n); \
        } while (0)
        MEDIAN(points);
        MEDIAN(waits);
        MEDIAN(wake.p50_us);
        MEDIAN(wake.p99_us);
        MEDIAN(wake.p999_us);
        MEDIAN(wake.max_us);
        MEDIAN(done.p50_us);
        MEDIAN(done.p99_us);
        MEDIAN(done.p999_us);
        MEDIAN(done.max_us);
        MEDIAN(drift_us);
        MEDIAN(overruns);
#undef MEDIAN
        ret->refused = false;
        for (unsigned i = 0; i < n; i++)
                ret->refused |= runs[i].refused;
}

/* The wake-up columns, then the completion's ("-" for the bare loop: it only wakes). */
static void row(double hz, const char *options, const char *load, bool bare,
                const struct pace_cell *c)
{
        printf("%6.0f Hz  %-8s %-5s %-7s %8.0f %8.0f", hz, options, load, bare ? "bare" : "master",
               c->points, c->waits);
        /* A master that was late at every point never waited: no wake-up to show. */
        if (c->waits > 0)
                printf(" %8.0f %8.0f %8.0f %8.0f", c->wake.p50_us, c->wake.p99_us,
                       c->wake.p999_us, c->wake.max_us);
        else
                printf(" %8s %8s %8s %8s", "-", "-", "-", "-");
        if (bare)
                printf(" %8s %8s %8s %8s", "-", "-", "-", "-");
        else
                printf(" %8.0f %8.0f %8.0f %8.0f", c->done.p50_us, c->done.p99_us,
                       c->done.p999_us, c->done.max_us);
        printf(" %10.0f %8.0f%s\n", c->drift_us, c->overruns,
               c->refused ? "  (refused: see above)" : "");
}

/* The last online cpu: where the real-time runs go unless -c says otherwise. */
static void default_cpus(void)
{
        long n = sysconf(_SC_NPROCESSORS_ONLN);

        if (!arg_rt.cpus[0])
                snprintf(arg_rt.cpus, sizeof(arg_rt.cpus), "%ld", n > 1 ? n - 1 : 0);
}

static int parse(int argc, char **argv, const char **path)
{
        static const struct option longs[] = { { "quick", no_argument, NULL, 'q' }, { 0 } };
        char msg[160];
        int c;

        while ((c = getopt_long(argc, argv, "t:r:s:P:c:p:", longs, NULL)) != -1) {
                switch (c) {
                case 't': arg_seconds = atof(optarg); break;
                case 'r': arg_runs = (unsigned)atoi(optarg); break;
                case 's': arg_spin_us = atof(optarg); break;
                case 'P': arg_rt.priority = atoi(optarg); break;
                case 'c': snprintf(arg_rt.cpus, sizeof(arg_rt.cpus), "%s", optarg); break;
                case 'p': *path = optarg; break;
                case 'q': arg_seconds = 0.5; arg_runs = 1; break;
                default:
                        fputs(usage, stderr);
                        return -1;
                }
        }
        if (optind != argc || !(arg_seconds > 0) || arg_spin_us < 0 || arg_runs < 1 ||
            arg_runs > BENCH_MAX_RUNS || arg_rt.priority < 1 || arg_rt.priority > RT_PRIORITY_MAX) {
                fprintf(stderr, "pace: -t must be > 0, -s >= 0, -r 1 to %d, -P 1 to %d\n%s",
                        BENCH_MAX_RUNS, RT_PRIORITY_MAX, usage);
                return -1;
        }
        default_cpus();
        if (rt_cpus_check(arg_rt.cpus, msg, sizeof(msg)) < 0) {
                fprintf(stderr, "pace: -c: %s\n", msg);
                return -1;
        }
        return 0;
}

int main(int argc, char **argv)
{
        static const double steps[] = { 1e-3, 1e-4 };
        static struct pace_cell bare[BENCH_MAX_RUNS], master[BENCH_MAX_RUNS];
        const char *path = FMUD_EXAMPLES "/msd.ssp";

        if (parse(argc, argv, &path) < 0)
                return 2;
        bench_machine();
        printf("%g s each at warp 1, spin %g us, median of %u run%s; real time: SCHED_FIFO %d "
               "(workers %d), cpus %s, mlock; %d cpu-bound processes when loaded; %s\n",
               arg_seconds, arg_spin_us, arg_runs, arg_runs == 1 ? "" : "s", arg_rt.priority,
               arg_rt.priority > 1 ? arg_rt.priority - 1 : 1, arg_rt.cpus, PACE_HOGS, path);
        printf("# waits: the deadlines waited for (the master waits only after a point done on "
               "time); wake: how late the loop woke after each, in us; done: how late the master "
               "completed each point\n");
        printf("%9s  %-8s %-5s %-7s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s %10s %8s\n", "rate",
               "options", "load", "loop", "points", "waits", "wake p50", "p99", "p99.9", "max",
               "done p50", "p99", "p99.9", "max", "drift us", "overruns");
        for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
                for (int rt = 0; rt < 2; rt++) {
                        for (int loaded = 0; loaded < 2; loaded++) {
                                struct pace_rt opts = arg_rt;
                                struct pace_job j = {
                                        .h = steps[i], .seconds = arg_seconds,
                                        .spin_us = arg_spin_us, .rt = &opts,
                                };
                                struct pace_cell b, m;

                                opts.on = rt;
                                for (unsigned k = 0; k < arg_runs; k++) {
                                        pid_t hogs[PACE_HOGS] = { 0 };

                                        if (loaded)
                                                pace_hogs_start(hogs);
                                        pace_bare(&j, &bare[k]);
                                        pace_master(path, &j, &master[k]);
                                        pace_hogs_stop(hogs);
                                }
                                median(bare, arg_runs, &b);
                                median(master, arg_runs, &m);
                                row(1.0 / steps[i], rt ? "realtime" : "plain",
                                    loaded ? "busy" : "idle", true, &b);
                                row(1.0 / steps[i], rt ? "realtime" : "plain",
                                    loaded ? "busy" : "idle", false, &m);
                                fflush(stdout);
                        }
                }
        }
        return 0;
}
