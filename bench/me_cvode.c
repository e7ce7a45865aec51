/*
 * me_cvode: what hosting a Model Exchange FMU in a worker costs against
 * integrating the same FMU's shared library in this process with the same
 * CVODE settings.
 *
 * For VanDerPol (mu = 1, [0, 20], h = 0.01) and Robertson ([0, 40],
 * h = 0.1), each at its DefaultExperiment tolerance, BDF:
 *   worker      a one-component scenario run by the master (workers, ring
 *               round trips, the worker's CVODE: worker/me.c)
 *   in process  the FMU dlopen'ed here and integrated by the very same
 *               worker/me.c code, step by step, without a worker
 * the median wall time over the runs (initialization and the steps; the
 * worker's start is not counted), and the ratio worker / in process; and
 * per point, the median of the worker's own measure of its integration
 * (me_step(), the service time it reports with each step) beside the
 * in-process loop's whole time a point, so that what the worker adds is
 * split into the integration itself and the hand-off around it.
 *
 *     me_cvode [-n RUNS] [-x SCALE] [-s STEPS]
 *
 * -x multiplies each model's stop time (the step stays): the cost that
 * grows with the points is told from the cost paid once per run. -s
 * multiplies the communication step (the stop time stays): CVODE's work
 * between two points grows, the hand-off per point does not.
 *
 * DESIGN: the house pattern (bench/session_util.h): runs interleaved,
 * worker then in process, so that a change of the machine's load hits
 * both alike; each figure a median. Results are in docs/BENCHMARKS.md.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/instance/instance.h"
#include "session_util.h"
#include "worker/me.h"
#include "worker/worker.h"

#ifndef FMUD_WORKER
#define FMUD_WORKER     "fmud-worker"
#endif
#ifndef FMUD_TEST_FMU_DIR
#define FMUD_TEST_FMU_DIR "tests/fmus"
#endif

struct model {
        const char *name;
        double step, stop;
};

static const struct model models[] = {
        { "VanDerPol", 0.01, 20.0 },
        { "Robertson", 0.1, 40.0 },
};

static void quiet_log(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category,
                      fmi3String message)
{
        (void) env;
        (void) status;
        (void) category;
        (void) message;
}

/* The FMU in this process, integrated by worker/me.c: seconds. */
static double in_process(const struct bench_lib *l, const struct model *mo)
{
        const struct md *md = l->fmu->md;
        const struct md_default_experiment *x = &md->default_experiment;
        struct worker w = { .md = l->fmu->md, .lib = l->lib, .fmi = MD_FMI3 };
        uint64_t n = (uint64_t)llround(mo->stop / mo->step);
        bool term = false, event = false, tol = md->has_default_experiment && x->has_tolerance;
        double t0, t1, end;
        int s;

        if (me_open(&w) < 0)
                bench_die("me_open", -ENOMEM);
        w.inst = l->lib->f3.fmi3InstantiateModelExchange(mo->name, md->instantiation_token, NULL,
                                                          fmi3False, fmi3False, &w, quiet_log);
        if (!w.inst)
                bench_die("fmi3InstantiateModelExchange", -EINVAL);
        t0 = bench_now();
        s = l->lib->f3.fmi3EnterInitializationMode(w.inst, tol, tol ? x->tolerance : 0, 0.0,
                                                   fmi3True, mo->stop);
        me_experiment(&w, tol, tol ? x->tolerance : 0, 0.0, 0.0);
        if (s == fmi3OK)
                s = l->lib->f3.fmi3ExitInitializationMode(w.inst);
        if (s == fmi3OK)
                s = me_start(&w, &term);
        for (uint64_t k = 0; k < n && s <= fmi3Warning && !term; k++)
                s = me_step(&w, (double)k * mo->step, mo->step, false, &term, &event, &end);
        t1 = bench_now();
        if (s > fmi3Warning)
                bench_die(w.last_error, -EIO);
        l->lib->f3.fmi3Terminate(w.inst);
        l->lib->f3.fmi3FreeInstance(w.inst);
        me_close(&w);
        return t1 - t0;
}

/*
 * The same in a worker, run by the master: seconds of the run (the
 * worker's start excluded); *ret_svc the worker's integration, seconds a
 * point.
 */
static double in_worker(const char *ssd, double *ret_svc)
{
        struct bench_sys x;
        uint64_t steps = 0, ns = 0;
        double t0, t1;
        int r;

        bench_sys_start(&x, ssd, FMUD_WORKER);
        t0 = bench_now();
        r = master_run(x.m);
        if (r != MASTER_FINISHED)
                bench_die(master_message(x.m), -EIO);
        t1 = bench_now();
        if (inst_service_stats(session_inst(x.s, 0), &steps, &ns) < 0 || !steps)
                bench_die("inst_service_stats", -EIO);
        *ret_svc = (double)ns * 1e-9 / (double)steps;
        bench_sys_close(&x);
        return t1 - t0;
}

int main(int argc, char *argv[])
{
        unsigned runs = 11, scale = 1, steps = 1;
        int c;

        while ((c = getopt(argc, argv, "n:x:s:")) != -1) {
                if (c == 'n' && (runs = (unsigned)atoi(optarg)) >= 1 && runs <= BENCH_MAX_RUNS)
                        continue;
                if (c == 'x' && (scale = (unsigned)atoi(optarg)) >= 1 && scale <= 1000)
                        continue;
                if (c == 's' && (steps = (unsigned)atoi(optarg)) >= 1 && steps <= 1000)
                        continue;
                fprintf(stderr, "usage: me_cvode [-n RUNS (1-%d)] [-x SCALE (1-1000)] "
                        "[-s STEPS (1-1000)]\n", BENCH_MAX_RUNS);
                return 64;
        }
        bench_machine();
        printf("%-10s %12s %12s %8s %16s %16s\n", "model", "worker ms", "in-proc ms", "ratio",
               "worker integ us", "in-proc pt us");
        for (size_t m = 0; m < sizeof(models) / sizeof(*models); m++) {
                const struct model scaled = { models[m].name, models[m].step * steps,
                                              models[m].stop * scale };
                const struct model *mo = &scaled;
                struct bench_comp comp = { mo->name, NULL };
                char fmu[512], dir[64], ssd[512];
                double tw[BENCH_MAX_RUNS], tp[BENCH_MAX_RUNS], ts[BENCH_MAX_RUNS], mw, mp;
                double points = round(mo->stop / mo->step);
                struct bench_lib l;
                struct bench_ssd d;

                snprintf(fmu, sizeof(fmu), "%s/%s.fmu", FMUD_TEST_FMU_DIR, mo->name);
                comp.fmu = fmu;
                d = (struct bench_ssd){ .n = 1, .comps = &comp, .step = mo->step, .stop = mo->stop };
                bench_mkdtemp(dir, sizeof(dir));
                bench_ssd_write(dir, &d, ssd, sizeof(ssd));
                bench_lib_open(&l, fmu);
                for (unsigned r = 0; r < runs; r++) {
                        tw[r] = in_worker(ssd, &ts[r]);
                        tp[r] = in_process(&l, mo);
                }
                mw = bench_median(tw, runs);
                mp = bench_median(tp, runs);
                printf("%-10s %12.2f %12.2f %8.3f %16.3f %16.3f\n", mo->name, mw * 1e3, mp * 1e3,
                       mw / mp, bench_median(ts, runs) * 1e6, mp / points * 1e6);
                bench_lib_close(&l);
                bench_rmrf(dir);
        }
        return 0;
}
