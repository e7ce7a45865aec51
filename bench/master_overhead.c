/*
 * master_overhead: what the master costs per communication point, against
 * a sequential in-process loop over the same FMUs in the same run.
 *
 * The system: N LinearOde instances in a ring (a_i.x -> a_{i+1}.u0; for
 * N = 1 a_0 feeds itself), Jacobi, one recorded column, no sink. Per point
 * each instance sets one input, steps and gets its routed outputs.
 *   master:     scenario_load(), session_new(), master_new(), then
 *               master_step(m, P): one worker process per instance.
 *   in-process: the same FMU binary dlopen'ed (fmi/loader.h), N instances
 *               in this process, per point and per instance
 *               fmi3SetFloat64(u0), fmi3DoStep, fmi3GetFloat64(x).
 *   inst. API:  the floor under the master: the same ring driven with
 *               inst_post_step()/inst_wait_step() directly (what a point
 *               costs in IPC and in the worker, without the master).
 * Each run starts fresh (new workers, new instances) and times P points
 * after a warm-up; the runs of the three variants alternate, so that a
 * change of the machine's load hits them alike. The table shows the
 * median over the runs of the mean time per point, for each, and the
 * master's difference to the in-process loop.
 *
 * The row 'alone' is one LinearOde with no connection at all (x recorded,
 * nothing set): the master chains its next steps behind the current one
 * (engine/master/master_chain.c); in process, per point fmi3DoStep and
 * fmi3GetFloat64(x). The inst. API column is the ring of one above.
 *
 * A second part does the same with N = 2 compute-heavy instances: the
 * Scripted test FMU (tests/ssp/master) busy for about 50 µs per step
 * (its 'spin' parameter, calibrated in-process first), where the master's
 * parallel workers should beat the sequential loop.
 *
 * Results are in docs/BENCHMARKS.md.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "session_util.h"

#define MAX_N           64
#define H               1e-3

static unsigned arg_runs = 7;
static unsigned arg_points = 2000;
static unsigned arg_ns[16] = { 1, 2, 4, 8, 16, 64 };
static unsigned arg_n_ns = 6;
static double arg_heavy_us = 50.0;
static enum wait_strategy arg_wait = WAIT_ADAPTIVE;
/* The system has no connections (the 'alone' row): set by main() around that row. */
static bool sys_alone;

struct sys {
        char dir[64], cache[64];
        struct scenario *sc;
        struct session *s;
        struct master *m;
};

/*
 * Load a ring of n instances of fmu (its input and output connectors
 * named), each with the Integer parameter param = value when param is
 * not NULL.
 */
static void sys_load(struct sys *x, unsigned n, const char *fmu, const char *in,
                     const char *out, const char *param, const char *value, double stop)
{
        size_t cap = 4096 + (size_t)n * 512, len = 0;
        char *ssd = malloc(cap), path[512];
        struct scenario_opts o;
        struct diag_list diags;
        int r;

        *x = (struct sys){ 0 };
        snprintf(x->dir, sizeof(x->dir), "/tmp/fmud-bench-XXXXXX");
        snprintf(x->cache, sizeof(x->cache), "/tmp/fmud-bench-cache-XXXXXX");
        if (!ssd || !mkdtemp(x->dir) || !mkdtemp(x->cache))
                bench_die("mkdtemp", errno);
        snprintf(path, sizeof(path), "%s/resources", x->dir);
        mkdir(path, 0755);
        snprintf(path, sizeof(path), "%s/resources/%s.fmu", x->dir, fmu);
        bench_copy(!strcmp(fmu, "Scripted") ? FMUD_MASTER_FMU_DIR "/Scripted.fmu" :
             FMUD_TEST_FMU_DIR "/LinearOde.fmu", path);
        len += (size_t)snprintf(ssd + len, cap - len,
                "<?xml version=\"1.0\"?>\n<ssd:SystemStructureDescription version=\"1.0\" name=\"b\" "
                "xmlns:ssd=\"http://ssp-standard.org/SSP1/SystemStructureDescription\" "
                "xmlns:ssc=\"http://ssp-standard.org/SSP1/SystemStructureCommon\" "
                "xmlns:ssv=\"http://ssp-standard.org/SSP1/SystemStructureParameterValues\" "
                "xmlns:fmud=\"urn:fmud:ssp:settings\"><ssd:System name=\"b\">");
        if (param) {
                len += (size_t)snprintf(ssd + len, cap - len, "<ssd:ParameterBindings>"
                        "<ssd:ParameterBinding><ssd:ParameterValues><ssv:ParameterSet "
                        "version=\"1.0\" name=\"p\"><ssv:Parameters>");
                for (unsigned i = 0; i < n; i++)
                        len += (size_t)snprintf(ssd + len, cap - len, "<ssv:Parameter name=\"a%u.%s\">"
                                "<ssv:Integer value=\"%s\"/></ssv:Parameter>", i, param, value);
                len += (size_t)snprintf(ssd + len, cap - len, "</ssv:Parameters></ssv:ParameterSet>"
                        "</ssd:ParameterValues></ssd:ParameterBinding></ssd:ParameterBindings>");
        }
        len += (size_t)snprintf(ssd + len, cap - len, "<ssd:Elements>");
        for (unsigned i = 0; i < n; i++)
                len += (size_t)snprintf(ssd + len, cap - len, "<ssd:Component name=\"a%u\" "
                                        "source=\"resources/%s.fmu\"/>", i, fmu);
        len += (size_t)snprintf(ssd + len, cap - len, "</ssd:Elements><ssd:Connections>");
        for (unsigned i = 0; i < n && !sys_alone; i++)
                len += (size_t)snprintf(ssd + len, cap - len, "<ssd:Connection startElement=\"a%u\" "
                                        "startConnector=\"%s\" endElement=\"a%u\" endConnector=\"%s\"/>",
                                        i, out, (i + 1) % n, in);
        len += (size_t)snprintf(ssd + len, cap - len, "</ssd:Connections></ssd:System>"
                "<ssd:DefaultExperiment startTime=\"0\" stopTime=\"%.17g\"/><ssd:Annotations>"
                "<ssc:Annotation type=\"org.fmud.settings\"><fmud:Settings version=\"1\" "
                "stepSize=\"%.17g\"><fmud:Record variable=\"a0.%s\"/></fmud:Settings>"
                "</ssc:Annotation></ssd:Annotations></ssd:SystemStructureDescription>\n",
                stop, H, out);
        snprintf(path, sizeof(path), "%s/SystemStructure.ssd", x->dir);
        FILE *f = fopen(path, "w");
        if (!f || fwrite(ssd, 1, len, f) != len || fclose(f))
                bench_die(path, errno);
        free(ssd);
        scenario_opts_default(&o);
        o.cache_dir = x->cache;
        diag_list_init(&diags, 0);
        r = scenario_load(path, &o, NULL, &diags, &x->sc);
        if (r < 0) {
                for (size_t i = 0; i < diags.n; i++) {
                        diag_format(&diags.v[i], path, sizeof(path));
                        fprintf(stderr, "%s\n", path);
                }
                bench_die("scenario_load", r);
        }
        diag_list_fini(&diags);
}

/* Workers, session and master for a loaded system. */
static void sys_start(struct sys *x)
{
        struct session_opts so;
        char *msg = NULL;
        int r;

        session_opts_default(&so);
        so.worker_path = FMUD_WORKER;
        wait_policy_init(&so.wait, arg_wait);
        r = session_new(x->sc, &so, &x->s, &msg);
        if (r < 0) {
                fprintf(stderr, "%s\n", msg ? msg : "");
                bench_die("session_new", r);
        }
        r = master_new(x->s, NULL, &x->m, &msg);
        if (r < 0) {
                fprintf(stderr, "%s\n", msg ? msg : "");
                bench_die("master_new", r);
        }
}

static void sys_close(struct sys *x)
{
        master_free(x->m);
        session_free(x->s);
        scenario_free(x->sc);
        bench_rmrf(x->dir);
        bench_rmrf(x->cache);
}

/* The master: seconds per point of each run. */
static void run_master(unsigned n, const char *fmu, const char *in, const char *out,
                       const char *param, const char *value, unsigned points, unsigned runs,
                       double *ret)
{
        struct sys x;
        unsigned warm = points / 10 + 10;

        sys_load(&x, n, fmu, in, out, param, value, H * (double)(warm + points * runs + 10));
        sys_start(&x);
        if (master_step(x.m, warm) < 0)
                bench_die(master_message(x.m), EIO);
        for (unsigned r = 0; r < runs; r++) {
                double t0 = bench_now();

                if (master_step(x.m, points) != MASTER_RUNNING)
                        bench_die(master_message(x.m), EIO);
                ret[r] = (bench_now() - t0) / points;
        }
        sys_close(&x);
}

/*
 * The floor under the master: the same ring through the instance API
 * alone (post every DoStep, then wait for each), no routing, no master.
 */
static void run_inst(unsigned n, unsigned points, unsigned runs, double *ret)
{
        unsigned warm = points / 10 + 10, total = warm + points * runs;
        struct inst_in in[MAX_N];
        struct inst_out out[MAX_N];
        struct inst_step st[MAX_N];
        struct inst_step_result res;
        double y[MAX_N] = { 0 }, u[MAX_N];
        static const uint32_t vin = 10, vout = 1;       /* LinearOde u0, x */
        struct session_opts so;
        char *msg = NULL;
        struct sys x;

        sys_load(&x, n, "LinearOde", "u0", "x", NULL, NULL, H * (double)(total + 10));
        session_opts_default(&so);
        so.worker_path = FMUD_WORKER;
        wait_policy_init(&so.wait, arg_wait);
        if (session_new(x.sc, &so, &x.s, &msg) < 0)
                bench_die(msg ? msg : "session_new", EIO);
        for (unsigned i = 0; i < n; i++) {
                in[i] = (struct inst_in){ MD_FLOAT64, &vin, 1, &u[i], NULL, 1 };
                out[i] = (struct inst_out){ MD_FLOAT64, &vout, 1, &y[i], NULL, 1 };
        }
        for (unsigned k = 0, run = 0; k < total; k++) {
                double t0 = bench_now(), t = (double)k * H;

                for (unsigned i = 0; i < n; i++)
                        u[i] = y[(i + n - 1) % n];
                /* As the master does: announce the posts, then post to all. */
                inst_post_batch(n);
                for (unsigned i = 0; i < n; i++) {
                        st[i] = (struct inst_step){ .t = t, .h = (double)(k + 1) * H - t,
                                                    .no_set_prior = true, .inputs = &in[i],
                                                    .n_inputs = 1, .outputs = &out[i],
                                                    .n_outputs = 1 };
                        if (inst_post_step(session_inst(x.s, i), &st[i]) < 0)
                                bench_die("inst_post_step", EIO);
                }
                inst_post_batch_end();
                for (unsigned i = 0; i < n; i++)
                        if (inst_wait_step(session_inst(x.s, i), &res) != INST_OK)
                                bench_die("inst_wait_step", EIO);
                if (k >= warm) {
                        ret[run] += bench_now() - t0;
                        if ((k - warm + 1) % points == 0)
                                ret[run++] /= points;
                }
        }
        sys_close(&x);
}

static void on_log(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category,
                   fmi3String message)
{
        (void) env;
        if (status > fmi3Warning)
                fprintf(stderr, "FMU [%s]: %s\n", category, message);
}

static uint32_t vr_of(const struct md *md, const char *name)
{
        const struct md_variable *v = md_find_name(md, name);

        if (!v)
                bench_die(name, ENOENT);
        return v->vr;
}

/* The same ring in this process, sequentially: seconds per point of each run. */
static void run_local(unsigned n, const char *fmu, const char *in, const char *out,
                      const char *param, const char *value, unsigned points, unsigned runs,
                      double *ret)
{
        unsigned warm = points / 10 + 10, total = warm + points * runs;
        fmi3Instance inst[MAX_N];
        double y[MAX_N], ynew[MAX_N];
        struct diag_list diags;
        struct fmu_lib *lib;
        const struct md *md;
        uint32_t vin, vout;
        struct sys x;
        int r;

        sys_load(&x, n, fmu, in, out, param, value, H * (double)(total + 10));
        md = x.sc->components[0].fmu->md;
        vin = vr_of(md, in);
        vout = vr_of(md, out);
        diag_list_init(&diags, 0);
        r = fmu_lib_open(x.sc->components[0].fmu->unpacked_dir, md, &diags, &lib);
        if (r < 0)
                bench_die("fmu_lib_open", r);
        diag_list_fini(&diags);
        for (unsigned i = 0; i < n; i++) {
                char name[16];

                snprintf(name, sizeof(name), "a%u", i);
                inst[i] = lib->f3.fmi3InstantiateCoSimulation(name, md->instantiation_token, NULL,
                                                              false, false, false, false, NULL, 0,
                                                              NULL, on_log, NULL);
                if (!inst[i])
                        bench_die("fmi3InstantiateCoSimulation", EIO);
                if (param) {
                        uint32_t pvr = vr_of(md, param);
                        int32_t pv = atoi(value);

                        lib->f3.fmi3SetInt32(inst[i], &pvr, 1, &pv, 1);
                }
                if (lib->f3.fmi3EnterInitializationMode(inst[i], false, 0, 0, true,
                                                        H * (double)(total + 10)) > fmi3Warning ||
                    lib->f3.fmi3ExitInitializationMode(inst[i]) > fmi3Warning ||
                    lib->f3.fmi3GetFloat64(inst[i], &vout, 1, &y[i], 1) > fmi3Warning)
                        bench_die("initialization", EIO);
        }
        for (unsigned k = 0, run = 0; k < total; k++) {
                double t0 = bench_now(), t = (double)k * H;
                fmi3Boolean ev, term, early;
                fmi3Float64 last;

                for (unsigned i = 0; i < n; i++) {
                        if (!sys_alone)
                                lib->f3.fmi3SetFloat64(inst[i], &vin, 1, &y[(i + n - 1) % n], 1);
                        if (lib->f3.fmi3DoStep(inst[i], t, (double)(k + 1) * H - t, true, &ev, &term,
                                               &early, &last) > fmi3Warning)
                                bench_die("fmi3DoStep", EIO);
                        lib->f3.fmi3GetFloat64(inst[i], &vout, 1, &ynew[i], 1);
                }
                memcpy(y, ynew, n * sizeof(*y));
                if (k >= warm) {
                        ret[run] += bench_now() - t0;
                        if ((k - warm + 1) % points == 0)
                                ret[run++] /= points;
                }
        }
        for (unsigned i = 0; i < n; i++)
                lib->f3.fmi3FreeInstance(inst[i]);
        fmu_lib_close(lib);
        sys_close(&x);
}

static void machine(void)
{
        bench_machine();
        printf("runs: %u of %u points each (medians of the per-run means), wait %s\n\n",
               arg_runs, arg_points, wait_strategy_name(arg_wait));
}

static void row(const char *label, unsigned n, double *local, double *floor_, double *mst)
{
        double l = bench_median(local, arg_runs) * 1e6, m = bench_median(mst, arg_runs) * 1e6;
        double f = floor_ ? bench_median(floor_, arg_runs) * 1e6 : NAN;

        printf("| %-9s | %3u | %10.2f | %10.2f | %10.2f | %10.2f | %10.2f | %6.2f |\n", label,
               n, l, f, m, m - l, (m - l) / n, m / l);
        fflush(stdout);
}

/* Spin iterations for arg_heavy_us of work per step, measured in-process. */
static unsigned calibrate(void)
{
        double t[BENCH_MAX_RUNS] = { 0 };
        unsigned spin = 20000;
        char value[32];

        snprintf(value, sizeof(value), "%u", spin);
        run_local(1, "Scripted", "u", "x", "spin", value, 200, arg_runs, t);
        return (unsigned)(arg_heavy_us * 1e-6 / (bench_median(t, arg_runs) / spin));
}

int main(int argc, char **argv)
{
        double local[BENCH_MAX_RUNS], floor_[BENCH_MAX_RUNS], mst[BENCH_MAX_RUNS];
        char value[32];
        unsigned spin;
        int c;

        while ((c = getopt(argc, argv, "r:p:n:u:w:")) != -1) {
                switch (c) {
                case 'r':
                        arg_runs = (unsigned)atoi(optarg);
                        break;
                case 'p':
                        arg_points = (unsigned)atoi(optarg);
                        break;
                case 'n':
                        arg_n_ns = 0;
                        for (char *t = strtok(optarg, ","); t && arg_n_ns < 16; t = strtok(NULL, ","))
                                arg_ns[arg_n_ns++] = (unsigned)atoi(t);
                        break;
                case 'u':
                        arg_heavy_us = atof(optarg);
                        break;
                case 'w':
                        if (wait_strategy_parse(optarg, &arg_wait) < 0)
                                bench_die(optarg, EINVAL);
                        break;
                default:
                        fprintf(stderr, "usage: %s [-r runs] [-p points] [-n 1,2,4] [-u heavy_us] "
                                "[-w adaptive|spin|spin-futex|futex]\n",
                                argv[0]);
                        return 2;
                }
        }
        if (arg_runs < 1 || arg_runs > BENCH_MAX_RUNS || arg_points < 10)
                bench_die("options", EINVAL);
        machine();
        printf("| system    |   N | in-process | inst. API  | master     | overhead   | per inst.  | ratio  |\n");
        printf("|           |     | µs/point   | µs/point   | µs/point   | µs/point   | µs/point   |        |\n");
        printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (unsigned i = 0; i < arg_n_ns; i++) {
                unsigned n = arg_ns[i];

                if (n < 1 || n > MAX_N)
                        bench_die("N", EINVAL);
                memset(local, 0, sizeof(local));
                memset(floor_, 0, sizeof(floor_));
                /* Run by run, the three in turn: a change of load hits all three alike. */
                for (unsigned r = 0; r < arg_runs; r++) {
                        run_local(n, "LinearOde", "u0", "x", NULL, NULL, arg_points, 1, &local[r]);
                        run_inst(n, arg_points, 1, &floor_[r]);
                        run_master(n, "LinearOde", "u0", "x", NULL, NULL, arg_points, 1, &mst[r]);
                }
                row("LinearOde", n, local, floor_, mst);
                if (n != 1)
                        continue;
                sys_alone = true;
                memset(local, 0, sizeof(local));
                for (unsigned r = 0; r < arg_runs; r++) {
                        run_local(1, "LinearOde", "u0", "x", NULL, NULL, arg_points, 1, &local[r]);
                        run_master(1, "LinearOde", "u0", "x", NULL, NULL, arg_points, 1, &mst[r]);
                }
                sys_alone = false;
                row("alone", 1, local, floor_, mst);
        }
        if (arg_heavy_us <= 0)
                return 0;
        spin = calibrate();
        snprintf(value, sizeof(value), "%u", spin);
        memset(local, 0, sizeof(local));
        for (unsigned r = 0; r < arg_runs; r++) {
                run_local(2, "Scripted", "u", "x", "spin", value, arg_points / 4, 1, &local[r]);
                run_master(2, "Scripted", "u", "x", "spin", value, arg_points / 4, 1, &mst[r]);
        }
        row("Scripted", 2, local, NULL, mst);
        printf("\nScripted: spin = %u iterations, about %.0f µs of work per step\n", spin,
               arg_heavy_us);
        return 0;
}
