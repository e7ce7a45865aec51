/*
 * session_parallel: two compute-heavy instances stepped by fmud's master
 * (one worker process each, in parallel) against the same two FMUs
 * stepped one after the other in this process.
 *
 * The system: two instances of the Scripted test FMU (tests/ssp/master),
 * each burning about U µs of CPU per step (its 'spin' parameter,
 * calibrated in this process first), coupled both ways (a.x -> b.u,
 * b.x -> a.u), Jacobi, h = 1 ms. Three variants, run by run in turn:
 *   sequential: the FMU dlopen'ed here, per point for each instance
 *               fmi3SetFloat64(u), fmi3DoStep, fmi3GetFloat64(x), one
 *               after the other: the in-process importer's loop.
 *   threads:    the same two instances, each stepped by its own thread of
 *               this process, one barrier per point: what two cpus give
 *               to two FMUs with no process boundary at all (reference).
 *   fmud:       scenario_load(), session_new(), master_new(), then
 *               master_step(P) as fast as possible.
 * Each run times P points after P/10 + 10 points of warm-up; a cell is the
 * median over the runs of the mean time per point, the speed-ups are the
 * medians of each run's ratio. Two more variants time a whole run of P
 * points as a user starts one, start-up included:
 *   sequential, whole: unpack the FMU, dlopen it, instantiate both, the
 *               P points, free: what an in-process importer's run costs;
 *   fmuctl run: `fmuctl run --private` on the same system with stop time
 *               P h, from exec to exit: a private daemon's start-up,
 *               load (the FMU unpacked once into a cache of the
 *               benchmark's, warm after a first untimed run), two
 *               sandboxed workers, the P points, the CSV of both outputs
 *               at every point, unload and the daemon's exit. The fmud row also shows what the workers
 * measured inside the FMU's doStep (its service time) against the round
 * trip the master saw, so a missed target can be told apart: slower FMU
 * work (a busy cpu) against transport.
 *
 * Results and the command: docs/BENCHMARKS.md.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "session_util.h"

#define H               1e-3
#define SCRIPTED        FMUD_MASTER_FMU_DIR "/Scripted.fmu"

static unsigned arg_runs = 7;
static unsigned arg_points = 2000;
static double arg_us = 50.0;

struct loop {
        const struct fmi3_api *f;
        fmi3Instance in[2];
        uint32_t vu, vx;
        double x[2][2];                 /* [k % 2][instance]: outputs at point k */
        unsigned first, total;          /* threads: points first..total - 1 */
        pthread_barrier_t bar;
};

static void step_one(struct loop *lp, unsigned i, unsigned k)
{
        double t = (double)k * H, u = lp->x[k % 2][1 - i];
        fmi3Boolean ev, term, early;
        fmi3Float64 last;

        lp->f->fmi3SetFloat64(lp->in[i], &lp->vu, 1, &u, 1);
        if (lp->f->fmi3DoStep(lp->in[i], t, (double)(k + 1) * H - t, true, &ev, &term, &early,
                              &last) > fmi3Warning)
                bench_die("fmi3DoStep", EIO);
        lp->f->fmi3GetFloat64(lp->in[i], &lp->vx, 1, &lp->x[(k + 1) % 2][i], 1);
}

static void loop_open(struct loop *lp, struct bench_lib *l, unsigned n, const char *spin)
{
        *lp = (struct loop){ .f = &l->lib->f3, .vu = bench_vr(l, "u"), .vx = bench_vr(l, "x") };
        for (unsigned i = 0; i < n; i++)
                lp->in[i] = bench_instantiate(l, i ? "b" : "a", "spin", spin, 1e9);
}

static void loop_close(struct loop *lp, unsigned n)
{
        for (unsigned i = 0; i < n; i++)
                lp->f->fmi3FreeInstance(lp->in[i]);
}

/* Sequential, in process: seconds per point. */
static double run_seq(struct bench_lib *l, const char *spin, unsigned n, unsigned points)
{
        unsigned warm = points / 10 + 10;
        struct loop lp;
        double t0 = 0;

        loop_open(&lp, l, n, spin);
        for (unsigned k = 0; k < warm + points; k++) {
                if (k == warm)
                        t0 = bench_now();
                for (unsigned i = 0; i < n; i++)
                        step_one(&lp, i, k);
        }
        t0 = bench_now() - t0;
        loop_close(&lp, n);
        return t0 / points;
}

struct thr {
        struct loop *lp;
        unsigned i;
};

static void *thread_main(void *arg)
{
        struct thr *t = arg;

        for (unsigned k = t->lp->first; k < t->lp->total; k++) {
                step_one(t->lp, t->i, k);
                pthread_barrier_wait(&t->lp->bar);
        }
        return NULL;
}

/* Two threads, one instance each, a barrier per point: seconds per point. */
static double run_threads(struct bench_lib *l, const char *spin, unsigned points)
{
        unsigned warm = points / 10 + 10;
        struct thr th[2];
        pthread_t tid;
        struct loop lp;
        double t0;

        loop_open(&lp, l, 2, spin);
        /* Warm up sequentially; the timed part runs on two threads. */
        for (unsigned k = 0; k < warm; k++)
                for (unsigned i = 0; i < 2; i++)
                        step_one(&lp, i, k);
        lp.first = warm;
        lp.total = warm + points;
        if (pthread_barrier_init(&lp.bar, NULL, 2))
                bench_die("pthread_barrier_init", EIO);
        th[0] = (struct thr){ &lp, 0 };
        th[1] = (struct thr){ &lp, 1 };
        t0 = bench_now();
        if (pthread_create(&tid, NULL, thread_main, &th[1]))
                bench_die("pthread_create", EIO);
        thread_main(&th[0]);
        pthread_join(tid, NULL);
        t0 = bench_now() - t0;
        pthread_barrier_destroy(&lp.bar);
        loop_close(&lp, 2);
        return t0 / points;
}

/* The master: seconds per point; *ret_service: µs inside doStep per step, *ret_rtt: per round trip. */
static double run_fmud(const char *spin, unsigned points, double *ret_service, double *ret_rtt)
{
        static const struct bench_comp comps[] = { { "a", SCRIPTED }, { "b", SCRIPTED } };
        unsigned warm = points / 10 + 10;
        struct bench_ssd d = {
                .n = 2, .comps = comps, .ring_out = "x", .ring_in = "u", .param = "spin",
                .param_type = "Integer", .param_value = spin, .step = H,
                .stop = H * (double)(warm + points + 10),
        };
        struct master_stats st0, st1;
        uint64_t steps = 0, svc = 0, tot = 0;
        char dir[64], path[512];
        struct bench_sys x;
        double t0;

        bench_mkdtemp(dir, sizeof(dir));
        bench_ssd_write(dir, &d, path, sizeof(path));
        bench_sys_start(&x, path, FMUD_WORKER);
        if (master_step(x.m, warm) != MASTER_RUNNING)
                bench_die(master_message(x.m), EIO);
        master_get_stats(x.m, &st0);
        for (size_t i = 0; i < st0.n_insts; i++) {
                steps -= st0.insts[i].steps;
                svc -= st0.insts[i].ns_service;
                tot -= st0.insts[i].ns_total;
        }
        t0 = bench_now();
        if (master_step(x.m, points) != MASTER_RUNNING)
                bench_die(master_message(x.m), EIO);
        t0 = bench_now() - t0;
        master_get_stats(x.m, &st1);
        for (size_t i = 0; i < st1.n_insts; i++) {
                steps += st1.insts[i].steps;
                svc += st1.insts[i].ns_service;
                tot += st1.insts[i].ns_total;
        }
        *ret_service = steps ? (double)svc / (double)steps / 1e3 : 0;
        *ret_rtt = steps ? (double)tot / (double)steps / 1e3 : 0;
        bench_sys_close(&x);
        bench_rmrf(dir);
        return t0 / points;
}

/* Sequential, in process, a whole run from the FMU archive: seconds. */
static double run_seq_whole(const char *spin, unsigned points)
{
        struct bench_lib l;
        struct loop lp;
        double t0 = bench_now();

        bench_lib_open(&l, SCRIPTED);
        loop_open(&lp, &l, 2, spin);
        for (unsigned k = 0; k < points; k++)
                for (unsigned i = 0; i < 2; i++)
                        step_one(&lp, i, k);
        loop_close(&lp, 2);
        bench_lib_close(&l);
        return bench_now() - t0;
}

/* fmuctl run --private on the system of dir (written once): seconds from exec to exit. */
static double run_cli(const char *dir, const char *ssd, const char *cache)
{
        char out[600], env_cache[600];
        char *const argv[] = { "fmuctl", "run", (char *)ssd, "--private", "--out", out, "-q",
                               "--force", NULL };
        /* This build's daemon and worker, whatever is installed. */
        char *const envp[] = { env_cache, "FMUD_DAEMON=" FMUD_DAEMON_PATH,
                               "FMUD_WORKER=" FMUD_WORKER, "PATH=/usr/bin:/bin", NULL };
        int status, e;
        double t0;
        pid_t pid;

        snprintf(out, sizeof(out), "%s/out.csv", dir);
        snprintf(env_cache, sizeof(env_cache), "FMUD_CACHE_DIR=%s", cache);
        t0 = bench_now();
        e = posix_spawn(&pid, FMUD_FMUCTL, NULL, NULL, argv, envp);
        if (e)
                bench_die("posix_spawn fmuctl", e);
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
                bench_die("fmuctl run", EIO);
        return bench_now() - t0;
}

/* Spin iterations for arg_us of CPU per step, measured on one instance here. */
static unsigned calibrate(struct bench_lib *l)
{
        double t[BENCH_MAX_RUNS];
        const unsigned spin = 20000;
        char value[32];

        snprintf(value, sizeof(value), "%u", spin);
        for (unsigned r = 0; r < arg_runs; r++)
                t[r] = run_seq(l, value, 1, 200);
        return (unsigned)(arg_us * 1e-6 / (bench_median(t, arg_runs) / spin));
}

int main(int argc, char **argv)
{
        double seq[BENCH_MAX_RUNS], thr[BENCH_MAX_RUNS], fm[BENCH_MAX_RUNS];
        double sp_f[BENCH_MAX_RUNS], sp_t[BENCH_MAX_RUNS], svc[BENCH_MAX_RUNS], rtt[BENCH_MAX_RUNS];
        double sw[BENCH_MAX_RUNS], cl[BENCH_MAX_RUNS], sp_c[BENCH_MAX_RUNS];
        static const struct bench_comp comps[] = { { "a", SCRIPTED }, { "b", SCRIPTED } };
        char cli_dir[64], cache[64], ssd[512];
        struct bench_lib l;
        char spin[32];
        double load0;
        int c;

        while ((c = getopt(argc, argv, "r:p:u:")) != -1) {
                switch (c) {
                case 'r':
                        arg_runs = (unsigned)atoi(optarg);
                        break;
                case 'p':
                        arg_points = (unsigned)atoi(optarg);
                        break;
                case 'u':
                        arg_us = atof(optarg);
                        break;
                default:
                        fprintf(stderr, "usage: %s [-r runs] [-p points] [-u µs of work per step]\n",
                                argv[0]);
                        return 2;
                }
        }
        if (arg_runs < 1 || arg_runs > BENCH_MAX_RUNS || arg_points < 10 || arg_us <= 0)
                bench_die("options", EINVAL);
        bench_machine();
        load0 = bench_load();
        bench_lib_open(&l, SCRIPTED);
        snprintf(spin, sizeof(spin), "%u", calibrate(&l));
        printf("Scripted spin = %s iterations: about %.0f µs of CPU per step (calibrated here)\n",
               spin, arg_us);
        printf("runs: %u of %u points each, interleaved\n\n", arg_runs, arg_points);
        bench_mkdtemp(cli_dir, sizeof(cli_dir));
        bench_mkdtemp(cache, sizeof(cache));
        /* A root daemon's workers (another user) must reach it, as a user's own cache. */
        if (chmod(cache, 0755) < 0)
                bench_die("chmod", errno);
        bench_ssd_write(cli_dir, &(struct bench_ssd){
                .n = 2, .comps = comps, .ring_out = "x", .ring_in = "u", .param = "spin",
                .param_type = "Integer", .param_value = spin, .step = H,
                .stop = H * (double)arg_points }, ssd, sizeof(ssd));
        (void)run_cli(cli_dir, ssd, cache);     /* the cache is warm from here on */
        for (unsigned r = 0; r < arg_runs; r++) {
                seq[r] = run_seq(&l, spin, 2, arg_points);
                thr[r] = run_threads(&l, spin, arg_points);
                fm[r] = run_fmud(spin, arg_points, &svc[r], &rtt[r]);
                sw[r] = run_seq_whole(spin, arg_points);
                cl[r] = run_cli(cli_dir, ssd, cache);
                sp_f[r] = seq[r] / fm[r];
                sp_t[r] = seq[r] / thr[r];
                sp_c[r] = sw[r] / cl[r];
                fprintf(stderr, "run %u: sequential %.2f, threads %.2f, fmud %.2f µs/point; "
                        "whole runs: sequential %.1f, fmuctl run %.1f ms\n", r + 1, seq[r] * 1e6,
                        thr[r] * 1e6, fm[r] * 1e6, sw[r] * 1e3, cl[r] * 1e3);
        }
        bench_rmrf(cli_dir);
        bench_rmrf(cache);
        bench_lib_close(&l);
        /* bench_median() sorts: after it, [0] and [runs - 1] are the extremes. */
        double m_seq = bench_median(seq, arg_runs), m_thr = bench_median(thr, arg_runs);
        double m_fm = bench_median(fm, arg_runs), m_spt = bench_median(sp_t, arg_runs);
        double m_spf = bench_median(sp_f, arg_runs);

        printf("| variant | µs/point | speed-up over sequential | run speed-ups min..max |\n");
        printf("|---|---:|---:|---|\n");
        printf("| sequential, in process | %.2f | 1.00x | |\n", m_seq * 1e6);
        printf("| 2 threads, in process (reference) | %.2f | %.2fx | %.2f..%.2f |\n",
               m_thr * 1e6, m_spt, sp_t[0], sp_t[arg_runs - 1]);
        printf("| fmud: master + 2 workers | %.2f | %.2fx | %.2f..%.2f |\n", m_fm * 1e6, m_spf,
               sp_f[0], sp_f[arg_runs - 1]);
        double m_sw = bench_median(sw, arg_runs), m_cl = bench_median(cl, arg_runs);
        double m_spc = bench_median(sp_c, arg_runs);

        printf("\nWhole runs of %u points, start-up included:\n\n", arg_points);
        printf("| variant | ms | speed-up over sequential | run speed-ups min..max |\n");
        printf("|---|---:|---:|---|\n");
        printf("| sequential, in process: unpack, dlopen, instantiate, points, free | %.1f | "
               "1.00x | |\n", m_sw * 1e3);
        printf("| fmuctl run --private: daemon, load, 2 workers, points, CSV, exit | %.1f | "
               "%.2fx | %.2f..%.2f |\n", m_cl * 1e3, m_spc, sp_c[0], sp_c[arg_runs - 1]);
        printf("\nfmud workers: %.2f µs inside doStep per step, %.2f µs per round trip (medians)\n",
               bench_median(svc, arg_runs), bench_median(rtt, arg_runs));
        printf("load average: %.2f at the start, %.2f at the end\n", load0, bench_load());
        return 0;
}
