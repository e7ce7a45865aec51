/*
 * worker_rtt: the cost of one FMI call through fmud-worker (engine/instance/instance.h),
 * next to the same call made in-process on the same FMU, in the same run.
 *
 * Two calls on the LinearOde test FMU (FMI 3.0):
 *   empty  inst_get() of zero Float64 values, the cheapest request there is:
 *          no value either way, yet it crosses the channel both ways, passes
 *          the worker's state machine and reaches the FMU (fmi3GetFloat64
 *          with nValueReferences = 0). In-process: that fmi3GetFloat64 call.
 *   step   one inst_do_step() (set u0..u9, doStep, get y0..y9: one round
 *          trip). In-process: fmi3SetFloat64 + fmi3DoStep + fmi3GetFloat64.
 * With one worker every call is timed alone; the master and the worker are
 * pinned to a cpu each (-P: not pinned). With N workers one round is
 * inst_post_step() to all, then inst_wait_step() on all, with the master
 * and every worker sharing two cpus; in-process it is the N steps in turn.
 * Step n starts at t = n * h, computed from the integer n.
 *
 * DESIGN: every run starts fresh workers and a fresh in-process instance,
 * and the runs of all rows are interleaved (run 1 of every row, then run
 * 2, ...), so that a change of the machine's load hits every row alike. A
 * row shows the median over runs of each run's median and 99th percentile.
 * The strategy is the master's (struct inst_opts.wait); fmud-worker always
 * waits with WAIT_ADAPTIVE. Context switches per call (master and workers:
 * getrusage, /proc/<pid>/status) show how the waits went: voluntary ones
 * are futex sleeps, involuntary ones mostly sched_yield() hand-offs.
 * Results are in docs/BENCHMARKS.md.
 */
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "engine/instance/instance.h"
#include "fmi/fmu.h"
#include "fmi/loader.h"

#ifndef FMUD_WORKER_PATH
#define FMUD_WORKER_PATH        "fmud-worker"
#endif
#ifndef FMUD_LINEAR_ODE_FMU
#define FMUD_LINEAR_ODE_FMU     "LinearOde.fmu"
#endif

#define NCH             10      /* LinearOde's channels: u at vr 10.., y at vr 20.. */
#define H               1e-3
/* x = exp(-t) turns subnormal (and slow) near t = 700 s: stay far below. */
#define MAX_STEPS       500000u
#define MAX_WORKERS     16
#define MAX_COUNTS      8
#define MAX_RUNS        64
#define MAX_ROWS        (MAX_COUNTS * 2 * (1 + WAIT_STRATEGY_COUNT))

enum op { OP_EMPTY, OP_STEP };

/* One FMU instance, through a worker (inst) or in-process (c). */
struct unit {
        struct inst *inst;
        fmi3Instance c;
        uint64_t n;                     /* the next step */
        uint32_t vr_u[NCH], vr_y[NCH];
        double u[NCH], y[NCH];
        struct inst_in in;
        struct inst_out out;
        struct inst_step step;
};

struct row {
        unsigned workers;
        enum op op;
        int strategy;                   /* -1: in-process */
        double med[MAX_RUNS], p99[MAX_RUNS], vcsw[MAX_RUNS], ivcsw[MAX_RUNS];
        size_t calls;
};

static const char *arg_worker = FMUD_WORKER_PATH;
static const char *arg_fmu = FMUD_LINEAR_ODE_FMU;
static unsigned arg_runs = 5;
static unsigned arg_calls = 100000;
static unsigned arg_rounds = 20000;
static double arg_cap_s = 2.0;
static bool arg_pin = true;
static bool arg_ops[2] = { true, true };
static int arg_workers[MAX_COUNTS] = { 1, 4, 8 };
static unsigned arg_nworkers = 3;
static enum wait_strategy arg_strategies[WAIT_STRATEGY_COUNT] = {
        WAIT_ADAPTIVE, WAIT_SPIN, WAIT_SPIN_FUTEX, WAIT_FUTEX,
};
static unsigned arg_nstrategies = WAIT_STRATEGY_COUNT;

static char cache_dir[] = "/tmp/worker_rtt.XXXXXX";
static bool cache_made;
static struct fmu *fmu;
static struct fmu_lib *lib;
static int cpu_a = -1, cpu_b = -1;     /* the first two allowed cpus */

static uint64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void die(int err, const char *what, const char *detail)
{
        fprintf(stderr, "worker_rtt: %s: %s%s%s\n", what, strerror(err < 0 ? -err : err),
                detail && *detail ? ": " : "", detail ? detail : "");
        exit(1);
}

/* ---- The unpacked FMU, removed at exit ------------------------------------ */

/*
 * nftw callback. Pre-order, it makes each directory writable (the cache
 * seals them read-only) and removes the files; in post-order (FTW_DEPTH)
 * it removes the directories, empty by then.
 */
static int tidy(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void) st;
        (void) ftw;
        if (flag == FTW_D)
                (void) chmod(path, 0700);
        else
                (void) remove(path);
        return 0;
}

static void cleanup(void)
{
        fmu_lib_close(lib);
        fmu_free(fmu);
        if (cache_made) {
                (void) nftw(cache_dir, tidy, 16, FTW_PHYS);
                (void) nftw(cache_dir, tidy, 16, FTW_PHYS | FTW_DEPTH);
        }
}

static void unpack(void)
{
        struct diag_list diags;
        struct fmu_opts o;
        int r;

        if (!mkdtemp(cache_dir))
                die(errno, "mkdtemp", cache_dir);
        cache_made = true;
        fmu_opts_default(&o);
        o.cache_dir = cache_dir;
        diag_list_init(&diags, 0);
        r = fmu_open(arg_fmu, &o, &diags, &fmu);
        if (r == 0 && (!fmu->unpacked_dir || fmu->md->fmi != MD_FMI3))
                r = -EINVAL;
        if (r == 0)
                r = fmu_lib_open(fmu->unpacked_dir, fmu->md, &diags, &lib);
        if (r < 0)
                die(r, "loading the FMU", diags.n ? diags.v[0].message : arg_fmu);
        diag_list_fini(&diags);
}

/* ---- Instances ------------------------------------------------------------- */

static void logger(fmi3InstanceEnvironment env, fmi3Status s, fmi3String cat, fmi3String msg)
{
        (void) env;
        (void) cat;
        if (s > fmi3Warning)
                fprintf(stderr, "worker_rtt: in-process FMU: %s\n", msg);
}

static void check(const struct unit *u, int r, const char *what)
{
        if (r != INST_OK)
                die(r < 0 ? r : -EIO, what, u->inst ? inst_message(u->inst) : "FMU status");
}

/* Run on cpu c, or on both cpus for c < 0. A worker inherits it across fork and exec. */
static void pin(int c)
{
        cpu_set_t set;

        CPU_ZERO(&set);
        CPU_SET(c >= 0 ? c : cpu_a, &set);
        if (c < 0 && cpu_b >= 0)
                CPU_SET(cpu_b, &set);
        if (sched_setaffinity(0, sizeof(set), &set) < 0)
                die(errno, "sched_setaffinity", NULL);
}

/* Start (strategy >= 0: a worker on cpu 'where') and bring into Step Mode. */
static void unit_open(struct unit *u, int strategy, int where)
{
        *u = (struct unit){ 0 };
        for (int i = 0; i < NCH; i++) {
                u->vr_u[i] = 10 + (uint32_t)i;
                u->vr_y[i] = 20 + (uint32_t)i;
        }
        u->in = (struct inst_in){ MD_FLOAT64, u->vr_u, NCH, u->u, NULL, NCH };
        u->out = (struct inst_out){ MD_FLOAT64, u->vr_y, NCH, u->y, NULL, NCH };
        u->step = (struct inst_step){ .h = H, .no_set_prior = true, .inputs = &u->in,
                                      .n_inputs = 1, .outputs = &u->out, .n_outputs = 1 };
        if (strategy >= 0) {
                struct inst_instantiate ia = { 0 };
                struct inst_opts o;
                char *why = NULL;
                int r;

                inst_opts_default(&o);
                o.worker_path = arg_worker;
                o.fmu_dir = fmu->unpacked_dir;
                o.name = "worker_rtt";
                wait_policy_init(&o.wait, (enum wait_strategy)strategy);
                pin(where);
                r = inst_new(&o, &u->inst, &why);
                if (r < 0)
                        die(r, "inst_new", why);
                check(u, inst_instantiate(u->inst, &ia), "inst_instantiate");
                /* No experiment: no stop time. */
                check(u, inst_enter_initialization_mode(u->inst, NULL), "enter initialization");
                check(u, inst_exit_initialization_mode(u->inst), "exit initialization");
                return;
        }
        u->c = lib->f3.fmi3InstantiateCoSimulation("worker_rtt", fmu->md->instantiation_token,
                                                   NULL, false, false, false, false, NULL, 0,
                                                   NULL, logger, NULL);
        if (!u->c)
                die(-EIO, "fmi3InstantiateCoSimulation", NULL);
        check(u, lib->f3.fmi3EnterInitializationMode(u->c, false, 0, 0, false, 0),
              "fmi3EnterInitializationMode");
        check(u, lib->f3.fmi3ExitInitializationMode(u->c), "fmi3ExitInitializationMode");
}

static void unit_close(struct unit *u)
{
        /* y_i = x + u_i: the outputs of the last step must match its inputs. */
        for (int i = 1; i < NCH && u->n; i++) {
                double d = (u->y[i] - u->u[i]) - (u->y[0] - u->u[0]);

                if (d > 1e-9 || d < -1e-9)
                        die(-EPROTO, "checking the outputs", "y_i - u_i differ");
        }
        if (u->inst && inst_free(u->inst) < 0)
                die(-EIO, "inst_free", NULL);
        if (u->c)
                lib->f3.fmi3FreeInstance(u->c);
}

static void unit_call(struct unit *u, enum op op)
{
        struct inst_step_result res;
        fmi3Boolean ev, term, early;
        fmi3Float64 last;
        double none = 0;

        if (op == OP_EMPTY) {
                check(u, u->inst ? inst_get(u->inst, MD_FLOAT64, u->vr_y, 0, &none, 0) :
                      (int)lib->f3.fmi3GetFloat64(u->c, u->vr_y, 0, &none, 0), "empty get");
                return;
        }
        if (u->inst) {
                check(u, inst_do_step(u->inst, &u->step, &res), "inst_do_step");
        } else {
                check(u, lib->f3.fmi3SetFloat64(u->c, u->vr_u, NCH, u->u, NCH), "fmi3SetFloat64");
                check(u, lib->f3.fmi3DoStep(u->c, u->step.t, H, true, &ev, &term, &early, &last),
                      "fmi3DoStep");
                check(u, lib->f3.fmi3GetFloat64(u->c, u->vr_y, NCH, u->y, NCH), "fmi3GetFloat64");
        }
        u->n++;
}

/* One call (n = 1), or one round: post to all, then wait for all (in-process: in turn). */
static void one(struct unit *v, unsigned n, enum op op)
{
        struct inst_step_result res;
        unsigned posts = 0;

        /* As the master does: announce the posts, then post to all. */
        for (unsigned i = 0; n > 1 && i < n; i++)
                posts += v[i].inst != NULL;
        inst_post_batch(posts);
        for (unsigned i = 0; i < n; i++) {
                for (int j = 0; j < NCH; j++)
                        v[i].u[j] = (double)j + (double)v[i].n * 1e-3;
                v[i].step.t = (double)v[i].n * H;
                if (n == 1 || !v[i].inst)
                        unit_call(&v[i], op);
                else
                        check(&v[i], inst_post_step(v[i].inst, &v[i].step), "inst_post_step");
        }
        inst_post_batch_end();
        for (unsigned i = 0; i < n; i++)
                if (n > 1 && v[i].inst) {
                        check(&v[i], inst_wait_step(v[i].inst, &res), "inst_wait_step");
                        v[i].n++;
                }
}

/* ---- Measuring --------------------------------------------------------------- */

/* The first line of 'path' starting with 'key', without the key, ": " and newline; or "?". */
static void proc_line(const char *path, const char *key, char *buf, size_t size)
{
        char line[256];
        FILE *f = fopen(path, "r");

        snprintf(buf, size, "?");
        while (f && fgets(line, sizeof(line), f))
                if (strncmp(line, key, strlen(key)) == 0) {
                        const char *p = line + strlen(key);

                        snprintf(buf, size, "%s", p + strspn(p, ": \t"));
                        buf[strcspn(buf, "\n")] = 0;
                        break;
                }
        if (f)
                fclose(f);
}

/* Voluntary and involuntary context switches of this process and of the workers. */
static void csw(const struct unit *v, unsigned n, long *ret_v, long *ret_iv)
{
        struct rusage ru;
        char path[64], buf[64];

        getrusage(RUSAGE_SELF, &ru);
        *ret_v = ru.ru_nvcsw;
        *ret_iv = ru.ru_nivcsw;
        for (unsigned i = 0; i < n; i++) {
                if (!v[i].inst)
                        continue;
                snprintf(path, sizeof(path), "/proc/%d/status", (int)inst_pid(v[i].inst));
                proc_line(path, "voluntary_ctxt_switches", buf, sizeof(buf));
                *ret_v += atol(buf);
                proc_line(path, "nonvoluntary_ctxt_switches", buf, sizeof(buf));
                *ret_iv += atol(buf);
        }
}

static int cmp_dbl(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return x < y ? -1 : x > y;
}

static double med_of(double *x, unsigned n)
{
        qsort(x, n, sizeof(*x), cmp_dbl);
        return x[n / 2];
}

/* Run k of a row: fresh units, warm-up, then time every call or round. */
static void run_row(struct row *rw, unsigned k)
{
        unsigned n = rw->workers, max = n == 1 ? arg_calls : arg_rounds;
        int master = n == 1 && arg_pin ? cpu_a : -1, worker = n == 1 && arg_pin ? cpu_b : -1;
        uint64_t start, cap = (uint64_t)(arg_cap_s * 1e9);
        double *t = calloc(max, sizeof(*t));
        struct unit v[MAX_WORKERS];
        long v0, iv0, v1, iv1;
        size_t done = 0;

        if (!t)
                die(-ENOMEM, "calloc", NULL);
        for (unsigned i = 0; i < n; i++)
                unit_open(&v[i], rw->strategy, worker);
        pin(master);
        /* Warm-up: a tenth of the calls, at most a tenth of the time cap. */
        start = now_ns();
        for (unsigned i = 0; i < max / 10 && now_ns() - start < cap / 10; i++)
                one(v, n, rw->op);
        csw(v, n, &v0, &iv0);
        start = now_ns();
        while (done < max && now_ns() - start < cap) {
                uint64_t t0 = now_ns();

                one(v, n, rw->op);
                t[done++] = (double)(now_ns() - t0);
        }
        csw(v, n, &v1, &iv1);
        for (unsigned i = 0; i < n; i++)
                unit_close(&v[i]);
        qsort(t, done, sizeof(*t), cmp_dbl);
        rw->med[k] = t[done / 2] / 1e3;
        rw->p99[k] = t[done * 99 / 100] / 1e3;
        rw->vcsw[k] = (double)(v1 - v0) / (double)done;
        rw->ivcsw[k] = (double)(iv1 - iv0) / (double)done;
        rw->calls += done;
        free(t);
}

/* ---- Output ---------------------------------------------------------------- */

static void print_load(const char *when)
{
        char buf[128];

        proc_line("/proc/loadavg", "", buf, sizeof(buf));
        printf("# loadavg %s: %s\n", when, buf);
}

static void print_machine(void)
{
        char model[128];
        struct utsname u;

        proc_line("/proc/cpuinfo", "model name", model, sizeof(model));
        uname(&u);
        printf("# cpus online: %u, cpu: %s, kernel: %s\n", wait_ncpu(), model, u.release);
        printf("# fmu: %s, worker: %s\n", arg_fmu, arg_worker);
        if (arg_pin)
                printf("# 1 worker: master on cpu %d, worker on cpu %d; ", cpu_a, cpu_b);
        else
                printf("# 1 worker: not pinned; ");
        printf("N workers: master and workers on cpus %d,%d\n", cpu_a, cpu_b);
        printf("# %u runs per row; median over runs of each run's median / p99, in µs per call "
               "(1 worker) or per round (N); +: worker minus in-process\n", arg_runs);
        printf("# the strategy is the master's; fmud-worker waits with adaptive\n");
}

/* The base row (in-process, same workers and call) is printed first: its arrays are sorted. */
static void print_row(struct row *rw, const struct row *base)
{
        unsigned n = arg_runs;
        double med = med_of(rw->med, n), p99 = med_of(rw->p99, n);

        printf("%-7u %-5s %-10s %-10s %9.2f %9.2f", rw->workers,
               rw->op == OP_EMPTY ? "empty" : "step", rw->strategy < 0 ? "in-process" : "worker",
               rw->strategy < 0 ? "-" : wait_strategy_name((enum wait_strategy)rw->strategy),
               med, p99);
        if (base != rw)
                printf(" %9.2f %9.2f", med - base->med[n / 2], p99 - base->p99[n / 2]);
        else
                printf(" %9s %9s", "", "");
        printf(" %8.2f..%-8.2f %6.3f %6.3f %8zu\n", rw->med[0], rw->med[n - 1],
               med_of(rw->vcsw, n), med_of(rw->ivcsw, n), rw->calls / n);
}

/* ---- Command line ------------------------------------------------------------- */

static void usage(void)
{
        fprintf(stderr,
                "usage: worker_rtt [-W worker] [-F fmu] [-n runs] [-c calls] [-r rounds] [-t seconds]\n"
                "                  [-w workers,...] [-s strategy,...] [-o call,...] [-P]\n"
                "  -W  the fmud-worker binary (default %s)\n"
                "  -F  the LinearOde test FMU (default %s)\n"
                "  -n  runs per row (default 5)\n"
                "  -c  timed calls per run with 1 worker (default 100000, at most 500000)\n"
                "  -r  timed rounds per run with N workers (default 20000, at most 500000)\n"
                "  -t  cap on one run's timed part in seconds (default 2)\n"
                "  -w  worker counts (default 1,4,8)\n"
                "  -s  the master's strategies: adaptive, spin, spin-futex, futex (default all)\n"
                "  -o  calls with 1 worker: empty, step (default both; N workers: step)\n"
                "  -P  with 1 worker, do not pin the master and the worker to one cpu each\n",
                FMUD_WORKER_PATH, FMUD_LINEAR_ODE_FMU);
        exit(2);
}

static void parse_args(int argc, char **argv)
{
        char *tok, *save;
        int opt;

        while ((opt = getopt(argc, argv, "W:F:n:c:r:t:w:s:o:Ph")) != -1) {
                switch (opt) {
                case 'W': arg_worker = optarg; break;
                case 'F': arg_fmu = optarg; break;
                case 'n': arg_runs = (unsigned)strtoul(optarg, NULL, 10); break;
                case 'c': arg_calls = (unsigned)strtoul(optarg, NULL, 10); break;
                case 'r': arg_rounds = (unsigned)strtoul(optarg, NULL, 10); break;
                case 't': arg_cap_s = strtod(optarg, NULL); break;
                case 'P': arg_pin = false; break;
                case 'o':
                        arg_ops[OP_EMPTY] = strstr(optarg, "empty") != NULL;
                        arg_ops[OP_STEP] = strstr(optarg, "step") != NULL;
                        break;
                case 'w':
                        arg_nworkers = 0;
                        tok = strtok_r(optarg, ",", &save);
                        for (; tok; tok = strtok_r(NULL, ",", &save)) {
                                int w = atoi(tok);

                                if (arg_nworkers == MAX_COUNTS || w < 1 || w > MAX_WORKERS)
                                        usage();
                                arg_workers[arg_nworkers++] = w;
                        }
                        break;
                case 's':
                        arg_nstrategies = 0;
                        tok = strtok_r(optarg, ",", &save);
                        for (; tok; tok = strtok_r(NULL, ",", &save)) {
                                enum wait_strategy *s = &arg_strategies[arg_nstrategies];

                                if (arg_nstrategies++ == WAIT_STRATEGY_COUNT ||
                                    wait_strategy_parse(tok, s) < 0)
                                        usage();
                        }
                        break;
                default:
                        usage();
                }
        }
        if (optind != argc || !arg_runs || arg_runs > MAX_RUNS || !arg_calls || !arg_rounds ||
            arg_calls > MAX_STEPS || arg_rounds > MAX_STEPS || !arg_nworkers || !arg_nstrategies ||
            !(arg_cap_s > 0))
                usage();
}

/* The first two allowed cpus: the master's and the worker's, and both. */
static void choose_cpus(void)
{
        cpu_set_t all;

        if (sched_getaffinity(0, sizeof(all), &all) < 0)
                die(errno, "sched_getaffinity", NULL);
        for (int c = 0; c < CPU_SETSIZE && cpu_b < 0; c++)
                if (CPU_ISSET(c, &all))
                        *(cpu_a < 0 ? &cpu_a : &cpu_b) = c;
        if (cpu_b < 0)
                arg_pin = false;        /* one cpu: nothing to choose */
}

int main(int argc, char **argv)
{
        static struct row rows[MAX_ROWS];
        unsigned nrows = 0;

        parse_args(argc, argv);
        choose_cpus();
        atexit(cleanup);
        unpack();
        /* Per worker count and call: the in-process baseline, then each strategy. */
        for (unsigned w = 0; w < arg_nworkers; w++)
                for (int op = arg_workers[w] == 1 ? OP_EMPTY : OP_STEP; op <= OP_STEP; op++)
                        for (int s = -1; arg_ops[op] && s < (int)arg_nstrategies; s++)
                                rows[nrows++] = (struct row){
                                        .workers = (unsigned)arg_workers[w],
                                        .op = (enum op)op,
                                        .strategy = s < 0 ? -1 : (int)arg_strategies[s],
                                };
        print_machine();
        print_load("before");
        fflush(stdout);
        for (unsigned k = 0; k < arg_runs; k++)
                for (unsigned i = 0; i < nrows; i++)
                        run_row(&rows[i], k);
        printf("%-7s %-5s %-10s %-10s %9s %9s %9s %9s %18s %6s %6s %8s\n", "workers", "call",
               "path", "strategy", "median", "p99", "+median", "+p99", "run medians", "vcsw",
               "ivcsw", "calls");
        for (unsigned i = 0, base = 0; i < nrows; i++) {
                if (rows[i].strategy < 0)
                        base = i;
                print_row(&rows[i], &rows[base]);
        }
        print_load("after");
        return 0;
}
