/*
 * rig_rtt: a rig port's round trip through a session's master
 * (shm/rig.h, engine/master/master_rig.c), next to the worker channel's
 * round trip of one step (bench/worker_rtt.c's "step" row), in the same run.
 *
 * The session: one LinearOde test FMU (y_i = x + u_i) with rig input
 * lin.u0 and rig outputs lin.y0, lin.y1, so y0 - y1 of a point is the u0
 * its step applied: every round trip is checked to be the write's own.
 * The master runs on its own thread; the rig runs on this one, attached
 * with rig_attach(dup(master_rig_fd(m))). Rows:
 *
 *   paced    master_run() at warp 1, h = 1 ms (1 kHz). The rig reads point
 *            p, writes u0 for p; the master takes it at p's deadline,
 *            steps and publishes p + 1. "write" is the rig's write to its
 *            read of p + 1, so it holds the wait for the deadline (about
 *            h less the rig's reaction); "deadline" is p's deadline (the
 *            pace's base taken just before master_run(), a little early:
 *            a slight over-estimate) to that read: the rig's round trip
 *            proper, the figure to compare with the worker's step; of it,
 *            "> master" is how late the master woke after the deadlines
 *            (master_stats.wakeup, whole µs, every point, all writes). A
 *            write whose point came out without it (it missed the
 *            deadline: a loaded machine) is counted as late, not timed.
 *   unpaced  warp 0: a free-running master never waits for its rig, so
 *            here the master thread steps one point (master_step(m, 1))
 *            as soon as the rig has written for it (an atomic the rig sets
 *            after rig_write(), which the thread polls with sched_yield()):
 *            "write" is the rig's write to its read of the outputs of the
 *            step that applied it, hand-over included, and then its three
 *            phases: "> master", the write to the master thread seeing it;
 *            "point", that thread's master_step() (the take, the worker's
 *            step, the publish and the point's bookkeeping); "> rig", from
 *            master_step()'s return to the rig's read (below 0 when the rig
 *            read before the call was back). The rig shares the worker's cpu.
 *   unpaced-m  the same with the rig on the master thread's cpu, the
 *            worker alone on its own, as in the worker row.
 *   worker   one inst_do_step() of LinearOde (set u0..u9, doStep, get
 *            y0..y9) through fmud-worker: worker_rtt's "step" row.
 *   hand-over  two threads on one cpu (the worker's) taking turns, each
 *            waiting for its turn with sched_yield() as the rig's and the
 *            worker's waits do: one turn, half a round trip. With three
 *            parties (rig, master thread, worker) on two cpus, two of them
 *            share one, and a round trip hands that cpu over twice: the
 *            "floor" line is the worker's step plus two hand-overs, what
 *            an unpaced round trip costs here at best.
 *
 * Pinned cpus (-P: not): the master thread (or the baseline's caller) on
 * the first allowed cpu, the worker on the second, the rig on the second
 * (paced, unpaced) or the first (unpaced-m).
 *
 * DESIGN: as worker_rtt, every run starts a fresh session and a fresh
 * worker, and the runs of the rows are interleaved (run 1 of every row,
 * then run 2, ...), so that a change of the machine's load hits every row
 * alike; a cell is the median over runs of each run's median and 99th
 * percentile, and the ratio is a row's median over the worker's.
 *
 *   rig_rtt [-n POINTS] [-r RUNS] [-P] [--quick]
 *
 * --quick: 500 points, one run, for a smoke test of the program. Results
 * are in docs/BENCHMARKS.md ("Rig port").
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/instance/instance.h"
#include "session_util.h"
#include "shm/rig.h"

#define H               1e-3
#define NCH             10      /* LinearOde's channels: u at vr 10.., y at vr 20.. */
#define MAX_POINTS      500000u
#define WARMUP          50u     /* points or steps before the timed ones */

enum mode { MODE_PACED, MODE_UNPACED, MODE_UNPACED_M, MODE_WORKER, MODE_HANDOVER, MODE_END };

static const char *const mode_names[MODE_END] = { "paced", "unpaced", "unpaced-m", "worker",
                                                  "hand-over" };

/* Unpaced: the round trip's phases (see the file header). */
enum phase { PH_SEEN, PH_POINT, PH_WAKE, PH_END };

static const char *const phase_names[PH_END] = { "> master", "point", "> rig" };

struct cell {
        double med[BENCH_MAX_RUNS], p99[BENCH_MAX_RUNS];        /* µs, write -> read */
        double dmed[BENCH_MAX_RUNS], dp99[BENCH_MAX_RUNS];      /* µs, deadline -> read */
        double late[BENCH_MAX_RUNS];                            /* paced: writes not timed */
        double phmed[PH_END][BENCH_MAX_RUNS], php99[PH_END][BENCH_MAX_RUNS];
        double wkmed[BENCH_MAX_RUNS], wkp99[BENCH_MAX_RUNS];    /* paced: the master's wake-up */
};

static unsigned arg_points = 20000;
static unsigned arg_runs = 5;
static bool arg_pin = true;
static int cpu_a = -1, cpu_b = -1;
static char fmu_path[512];

/* What the master thread needs and the rig tells it. */
struct shared {
        struct master *m;
        bool paced;
        uint64_t n;                     /* points to step */
        _Atomic uint64_t written;       /* unpaced: points the rig has written for, + 1 */
        _Atomic uint64_t base_ns;       /* paced: just before master_run() */
        uint64_t *seen_ns, *done_ns;    /* unpaced, per point: the write seen, master_step() back */
        int result;
};

static uint64_t now_ns(void)
{
        return rig_now_ns();
}

static void pin(pthread_t t, int c)
{
        cpu_set_t set;

        if (!arg_pin)
                return;
        CPU_ZERO(&set);
        CPU_SET(c, &set);
        if (pthread_setaffinity_np(t, sizeof(set), &set) != 0)
                bench_die("pthread_setaffinity_np", -EINVAL);
}

static int cmp_dbl(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return x < y ? -1 : x > y;
}

/* Sort t (ns) and store its median and p99 in µs. */
static void summary(double *t, size_t n, double *ret_med, double *ret_p99)
{
        qsort(t, n, sizeof(*t), cmp_dbl);
        *ret_med = t[n / 2] / 1e3;
        *ret_p99 = t[n * 99 / 100] / 1e3;
}

/* ---- The session ------------------------------------------------------------- */

static void session_start(struct bench_sys *x, bool paced, uint64_t points)
{
        /* The worker inherits this thread's cpu. */
        pin(pthread_self(), cpu_b);
        bench_rig_sys_start(x, fmu_path, H, (double)(points + 10) * H, paced ? 1.0 : 0.0,
                            FMUD_WORKER);
}

static void *master_thread(void *arg)
{
        struct shared *sh = arg;

        if (sh->paced) {
                atomic_store(&sh->base_ns, now_ns());
                sh->result = master_run(sh->m);
                return NULL;
        }
        for (uint64_t p = 0; p < sh->n; p++) {
                /* Yielding: the rig may share this cpu (the unpaced-m row). */
                while (atomic_load_explicit(&sh->written, memory_order_acquire) <= p)
                        (void) sched_yield();
                sh->seen_ns[p] = now_ns();
                sh->result = master_step(sh->m, 1);
                sh->done_ns[p] = now_ns();
                if (sh->result != MASTER_RUNNING)
                        return NULL;
        }
        sh->result = MASTER_FINISHED;
        return NULL;
}

/* The newest point, after waiting for one. */
static uint64_t next_point(struct rig *r, double *out)
{
        uint64_t point, skipped;
        double t;
        int e;

        for (;;) {
                e = rig_wait(r, NULL);
                if (e < 0)
                        bench_die("rig_wait", e);
                e = rig_read(r, &point, &t, out, &skipped);
                if (e == 0)
                        break;
                if (e != -EAGAIN)
                        bench_die("rig_read", e);
        }
        (void) skipped;         /* paced: a point skipped shows as one not p + 1 */
        return point;
}

static void start(struct shared *sh, pthread_t *th)
{
        if (pthread_create(th, NULL, master_thread, sh) != 0)
                bench_die("pthread_create", -EAGAIN);
        pin(*th, cpu_a);
}

/*
 * Unpaced run k's phases, each timed point's: the rig's write to the master
 * thread seeing it, that thread's master_step() (take, step, publish, the
 * point's bookkeeping), its return to the rig's read of the outputs (less
 * than 0 when the rig read them before master_step() was back). t: scratch.
 */
static void phases(struct cell *c, unsigned k, const struct shared *sh, const uint64_t *w0,
                   const uint64_t *r1, double *t)
{
        for (int ph = 0; ph < PH_END; ph++) {
                for (uint64_t p = WARMUP; p < WARMUP + arg_points; p++) {
                        const uint64_t *from = ph == PH_SEEN ? w0 : ph == PH_POINT ? sh->seen_ns :
                                               sh->done_ns;
                        const uint64_t *to = ph == PH_SEEN ? sh->seen_ns : ph == PH_POINT ?
                                             sh->done_ns : r1;

                        t[p - WARMUP] = (double)to[p] - (double)from[p];
                }
                summary(t, arg_points, &c->phmed[ph][k], &c->php99[ph][k]);
        }
}

/*
 * Run k of the paced or unpaced row. Paced, a write whose point came out
 * without it (it missed the deadline) or a point skipped is counted as
 * late and not timed.
 */
static void run_rig(struct cell *c, unsigned k, bool paced, int rig_cpu)
{
        uint64_t total = WARMUP + arg_points, p;
        double *tw = calloc(arg_points, sizeof(*tw)), *td = calloc(arg_points, sizeof(*td));
        uint64_t *w0 = calloc(total, sizeof(*w0)), *r1 = calloc(total, sizeof(*r1));
        struct shared sh = { .paced = paced, .n = total, .seen_ns = calloc(total, sizeof(uint64_t)),
                             .done_ns = calloc(total, sizeof(uint64_t)) };
        struct bench_sys x = { 0 };
        double out[2];
        pthread_t th;
        struct rig *r;
        size_t n = 0;
        int fd, e;

        if (!tw || !td || !w0 || !r1 || !sh.seen_ns || !sh.done_ns)
                bench_die("calloc", -ENOMEM);
        session_start(&x, paced, total);
        sh.m = x.m;
        fd = dup(master_rig_fd(x.m));
        if (fd < 0)
                bench_die("dup", -errno);
        e = rig_attach(fd, &r);
        if (e < 0)
                bench_die("rig_attach", e);
        /* The worker is started on cpu_b: the rig goes where the row says. */
        pin(pthread_self(), rig_cpu);
        /* Point 0 is published by master_new(); paced, the master starts after its write. */
        p = next_point(r, out);
        if (p != 0)
                bench_die("the first point is not 0", -EPROTO);
        if (!paced)
                start(&sh, &th);
        for (; p < total; p++) {
                double u = (double)(p % 1000) + 1;
                uint64_t t0, t1, q;

                t0 = now_ns();
                e = rig_write(r, p, &u);
                if (e < 0)
                        bench_die("rig_write", e);
                atomic_store_explicit(&sh.written, p + 1, memory_order_release);
                if (paced && p == 0)
                        start(&sh, &th);
                q = next_point(r, out);
                t1 = now_ns();
                w0[p] = t0;
                r1[p] = t1;
                if (q != p + 1 || fabs(out[0] - out[1] - u) > 1e-9) {
                        /* Paced: the write missed its deadline (counted); unpaced: a fault. */
                        if (!paced)
                                bench_die("a point without its own write", -EPROTO);
                        c->late[k]++;
                        p = q - 1;
                        continue;
                }
                if (p >= WARMUP && n < arg_points) {
                        tw[n] = (double)(t1 - t0);
                        /* Point p's deadline: the pace's base plus p steps at warp 1. */
                        td[n++] = (double)(t1 - atomic_load(&sh.base_ns)) - (double)p * H * 1e9;
                }
        }
        pthread_join(th, NULL);
        if (sh.result != MASTER_FINISHED && sh.result != MASTER_RUNNING)
                bench_die(master_message(x.m), sh.result < 0 ? sh.result : -EIO);
        if (paced) {
                struct master_stats ms;

                master_get_stats(x.m, &ms);
                c->wkmed[k] = (double)ms.wakeup.p50_us;
                c->wkp99[k] = (double)ms.wakeup.p99_us;
        }
        rig_close(r);
        bench_sys_close(&x);
        if (!n)
                bench_die("no write made its deadline", -ETIME);
        summary(tw, n, &c->med[k], &c->p99[k]);
        summary(td, n, &c->dmed[k], &c->dp99[k]);
        if (!paced)
                phases(c, k, &sh, w0, r1, tw);
        free(tw);
        free(td);
        free(w0);
        free(r1);
        free(sh.seen_ns);
        free(sh.done_ns);
}

/* ---- The baseline: one step through fmud-worker ------------------------------------ */

static void check(struct inst *inst, int r, const char *what)
{
        if (r != INST_OK) {
                fprintf(stderr, "rig_rtt: %s\n", inst_message(inst));
                bench_die(what, r < 0 ? r : -EIO);
        }
}

static void run_worker(struct cell *c, unsigned k, const struct bench_lib *l)
{
        uint32_t vr_u[NCH], vr_y[NCH];
        double u[NCH], y[NCH], *t = calloc(arg_points, sizeof(*t));
        struct inst_in in = { MD_FLOAT64, vr_u, NCH, u, NULL, NCH };
        struct inst_out out = { MD_FLOAT64, vr_y, NCH, y, NULL, NCH };
        struct inst_step step = { .h = H, .no_set_prior = true, .inputs = &in, .n_inputs = 1,
                                  .outputs = &out, .n_outputs = 1 };
        struct inst_instantiate ia = { 0 };
        struct inst_step_result res;
        struct inst_opts o;
        struct inst *inst;
        char *why = NULL;
        int r;

        if (!t)
                bench_die("calloc", -ENOMEM);
        for (int i = 0; i < NCH; i++) {
                vr_u[i] = 10 + (uint32_t)i;
                vr_y[i] = 20 + (uint32_t)i;
        }
        inst_opts_default(&o);
        o.worker_path = FMUD_WORKER;
        o.fmu_dir = l->fmu->unpacked_dir;
        o.name = "rig_rtt";
        pin(pthread_self(), cpu_b);
        r = inst_new(&o, &inst, &why);
        if (r < 0)
                bench_die(why ? why : "inst_new", r);
        pin(pthread_self(), cpu_a);
        check(inst, inst_instantiate(inst, &ia), "inst_instantiate");
        check(inst, inst_enter_initialization_mode(inst, NULL), "enter initialization");
        check(inst, inst_exit_initialization_mode(inst), "exit initialization");
        for (uint64_t n = 0; n < WARMUP + arg_points; n++) {
                uint64_t t0;

                for (int i = 0; i < NCH; i++)
                        u[i] = (double)i + (double)n * 1e-3;
                step.t = (double)n * H;
                t0 = now_ns();
                check(inst, inst_do_step(inst, &step, &res), "inst_do_step");
                if (n >= WARMUP)
                        t[n - WARMUP] = (double)(now_ns() - t0);
        }
        if (inst_free(inst) < 0)
                bench_die("inst_free", -EIO);
        summary(t, arg_points, &c->med[k], &c->p99[k]);
        c->dmed[k] = c->med[k];
        c->dp99[k] = c->p99[k];
        free(t);
}

/* ---- Two threads on one cpu ------------------------------------------------------- */

static _Atomic uint64_t turn;           /* odd: the other thread's turn */

static void *turn_taker(void *arg)
{
        uint64_t n = *(const uint64_t *)arg;

        for (uint64_t i = 0; i < n; i++) {
                while (atomic_load_explicit(&turn, memory_order_acquire) != 2 * i + 1)
                        (void) sched_yield();
                atomic_store_explicit(&turn, 2 * i + 2, memory_order_release);
        }
        return NULL;
}

/* Run k of the hand-over row: one turn is half of each timed round trip. */
static void run_handover(struct cell *c, unsigned k)
{
        uint64_t n = WARMUP + arg_points;
        double *t = calloc(arg_points, sizeof(*t));
        pthread_t th;

        if (!t)
                bench_die("calloc", -ENOMEM);
        atomic_store(&turn, 0);
        pin(pthread_self(), cpu_b);
        if (pthread_create(&th, NULL, turn_taker, &n) != 0)
                bench_die("pthread_create", -EAGAIN);
        pin(th, cpu_b);
        for (uint64_t i = 0; i < n; i++) {
                uint64_t t0 = now_ns();

                atomic_store_explicit(&turn, 2 * i + 1, memory_order_release);
                while (atomic_load_explicit(&turn, memory_order_acquire) != 2 * i + 2)
                        (void) sched_yield();
                if (i >= WARMUP)
                        t[i - WARMUP] = (double)(now_ns() - t0) / 2.0;
        }
        pthread_join(th, NULL);
        pin(pthread_self(), cpu_a);
        summary(t, arg_points, &c->med[k], &c->p99[k]);
        free(t);
}

/* ---- Command line and output --------------------------------------------------------- */

static void usage(void)
{
        fprintf(stderr, "usage: rig_rtt [-n POINTS] [-r RUNS] [-P] [--quick]\n"
                "  -n  timed points (steps) per run and row (default 20000, at most %u)\n"
                "  -r  runs per row (default 5, at most %d)\n"
                "  -P  do not pin the threads and the worker to cpus\n"
                "  --quick  500 points, 1 run\n", MAX_POINTS, BENCH_MAX_RUNS);
        exit(2);
}

static void parse_args(int argc, char **argv)
{
        static const struct option longs[] = {
                { "quick", no_argument, NULL, 'q' }, { NULL, 0, NULL, 0 },
        };
        int opt;

        while ((opt = getopt_long(argc, argv, "n:r:Ph", longs, NULL)) != -1) {
                switch (opt) {
                case 'n': arg_points = (unsigned)strtoul(optarg, NULL, 10); break;
                case 'r': arg_runs = (unsigned)strtoul(optarg, NULL, 10); break;
                case 'P': arg_pin = false; break;
                case 'q': arg_points = 500; arg_runs = 1; break;
                default: usage();
                }
        }
        if (optind != argc || !arg_points || arg_points > MAX_POINTS || !arg_runs ||
            arg_runs > BENCH_MAX_RUNS)
                usage();
}

static void choose_cpus(void)
{
        cpu_set_t all;

        if (sched_getaffinity(0, sizeof(all), &all) < 0)
                bench_die("sched_getaffinity", -errno);
        for (int c = 0; c < CPU_SETSIZE && cpu_b < 0; c++)
                if (CPU_ISSET(c, &all))
                        *(cpu_a < 0 ? &cpu_a : &cpu_b) = c;
        if (cpu_b < 0)
                arg_pin = false;
}

int main(int argc, char **argv)
{
        static struct cell cells[MODE_END];
        struct bench_lib l;
        double wmed;

        parse_args(argc, argv);
        choose_cpus();
        snprintf(fmu_path, sizeof(fmu_path), "%s/LinearOde.fmu", FMUD_TEST_FMU_DIR);
        bench_lib_open(&l, fmu_path);
        bench_machine();
        if (arg_pin)
                printf("# master thread on cpu %d, worker and rig on cpu %d\n", cpu_a, cpu_b);
        else
                printf("# not pinned\n");
        printf("# %u runs of %u points per row; median over runs of each run's median / p99, "
               "in µs; ratio: median over the worker's\n", arg_runs, arg_points);
        fflush(stdout);
        for (unsigned k = 0; k < arg_runs; k++) {
                run_worker(&cells[MODE_WORKER], k, &l);
                run_rig(&cells[MODE_PACED], k, true, cpu_b);
                run_rig(&cells[MODE_UNPACED], k, false, cpu_b);
                run_rig(&cells[MODE_UNPACED_M], k, false, cpu_a);
                run_handover(&cells[MODE_HANDOVER], k);
        }
        wmed = bench_median(cells[MODE_WORKER].med, arg_runs);
        printf("%-9s %-9s %9s %9s %7s %6s\n", "mode", "from", "median", "p99", "ratio", "late");
        for (int i = 0; i < MODE_END; i++) {
                struct cell *c = &cells[i];
                double med = bench_median(c->med, arg_runs);

                printf("%-9s %-9s %9.2f %9.2f %7.2f %6.0f\n", mode_names[i],
                       i == MODE_WORKER ? "call" : i == MODE_HANDOVER ? "turn" : "write", med, bench_median(c->p99, arg_runs),
                       med / wmed, bench_median(c->late, arg_runs));
                for (int ph = 0; (i == MODE_UNPACED || i == MODE_UNPACED_M) && ph < PH_END; ph++) {
                        med = bench_median(c->phmed[ph], arg_runs);
                        printf("%-9s %-9s %9.2f %9.2f %7.2f %6s\n", mode_names[i], phase_names[ph],
                               med, bench_median(c->php99[ph], arg_runs), med / wmed, "");
                }
                if (i == MODE_PACED) {
                        med = bench_median(c->dmed, arg_runs);
                        printf("%-9s %-9s %9.2f %9.2f %7.2f %6s\n", mode_names[i], "deadline",
                               med, bench_median(c->dp99, arg_runs), med / wmed, "");
                        med = bench_median(c->wkmed, arg_runs);
                        printf("%-9s %-9s %9.0f %9.0f %7.2f %6s\n", mode_names[i], "> master",
                               med, bench_median(c->wkp99, arg_runs), med / wmed, "");
                }
        }
        if (arg_pin) {
                double floor = wmed + 2.0 * bench_median(cells[MODE_HANDOVER].med, arg_runs);

                printf("%-9s %-9s %9.2f %9s %7.2f %6s\n", "floor", "step+2", floor, "-",
                       floor / wmed, "");
        }
        printf("# load average after: %.2f\n", bench_load());
        bench_lib_close(&l);
        return 0;
}
