/*
 * session_record: what recording 100 variables costs the master.
 *
 * The scenario: 10 LinearOde instances (test FMU, x' = -k x, k = 0.001,
 * ten feedthrough outputs) in a ring (a_i.x -> a_{i+1}.u0), Jacobi,
 * h = 1 ms, and 10 recorded variables per instance (x, der_x, y0..y7):
 * 100 Float64 columns besides time. Two variants of the same run through
 * run_scenario() (engine/run/run.h, as `fmuctl run --local`):
 *   off: no output file: the master builds each row and its sink drops it;
 *   on:  every row to a CSV file on disk through the recorder (io_uring).
 * Both run P points as fast as possible. Runs alternate (off, on, then on,
 * off, ...) so a change of load hits both alike. The figures: the master's
 * stepping time per point (master_get_stats()), the slowdown on / off
 * (median of the runs' ratios) and, with recording on, the rows
 * (samples) and values written per second.
 *
 * Results and the command: docs/BENCHMARKS.md.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/run/run.h"
#include "session_util.h"

#define H               1e-3
#define N_INST          10
#define VARS_PER_INST   10
#define LINEAR_ODE      FMUD_TEST_FMU_DIR "/LinearOde.fmu"

static unsigned arg_runs = 7;
static unsigned long arg_points = 20000;
static const char *arg_dir = "/tmp";

static const char *const vars[VARS_PER_INST] = {
        "x", "der_x", "y0", "y1", "y2", "y3", "y4", "y5", "y6", "y7",
};

static double cpu_s(clockid_t id)
{
        struct timespec t;

        clock_gettime(id, &t);
        return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/*
 * The master's seconds per point; *ret_bytes: the file's size (0 without
 * one); ret_cpu[0], [1]: CPU seconds per point of this thread (the
 * master's, set-up included) and of this process (the recorder's io_uring
 * workers included; the FMU workers are other processes).
 */
static double run_one(const char *ssd, const char *out, uint64_t *ret_bytes, double *ret_cpu)
{
        double c_thr = cpu_s(CLOCK_THREAD_CPUTIME_ID), c_proc = cpu_s(CLOCK_PROCESS_CPUTIME_ID);
        struct run_opts o = { 0 };
        struct run_report rep;
        struct diag_list diags;
        char cache[64];
        double s;
        int r;

        bench_mkdtemp(cache, sizeof(cache));
        o = (struct run_opts){ .scenario = ssd, .out = out, .cache_dir = cache,
                               .worker_path = FMUD_WORKER };
        diag_list_init(&diags, 0);
        r = run_scenario(&o, &diags, &rep);
        if (r < 0) {
                fprintf(stderr, "%s\n", rep.message ? rep.message : "");
                bench_die("run_scenario", r);
        }
        if (rep.points != arg_points || rep.n_columns != N_INST * VARS_PER_INST ||
            (out && (rep.rec.rows != arg_points + 1 || rep.rec.dropped)))
                bench_die("wrong number of points, columns or rows", EIO);
        s = rep.wall_s / (double)rep.points;
        ret_cpu[0] = (cpu_s(CLOCK_THREAD_CPUTIME_ID) - c_thr) / (double)rep.points;
        ret_cpu[1] = (cpu_s(CLOCK_PROCESS_CPUTIME_ID) - c_proc) / (double)rep.points;
        *ret_bytes = rep.rec.bytes;
        run_report_fini(&rep);
        diag_list_fini(&diags);
        bench_rmrf(cache);
        return s;
}

int main(int argc, char **argv)
{
        static char names[N_INST * VARS_PER_INST][32];
        const char *record[N_INST * VARS_PER_INST];
        struct bench_comp comps[N_INST];
        char cnames[N_INST][8], dir[64], ssd[512], outdir[512], out[600];
        double off[BENCH_MAX_RUNS], on[BENCH_MAX_RUNS], slow[BENCH_MAX_RUNS], load0;
        double thr_off[BENCH_MAX_RUNS], thr_on[BENCH_MAX_RUNS], proc_off[BENCH_MAX_RUNS];
        double proc_on[BENCH_MAX_RUNS], cpu[2];
        uint64_t bytes = 0, none;
        int c;

        while ((c = getopt(argc, argv, "r:p:d:")) != -1) {
                switch (c) {
                case 'r':
                        arg_runs = (unsigned)atoi(optarg);
                        break;
                case 'p':
                        arg_points = strtoul(optarg, NULL, 10);
                        break;
                case 'd':
                        arg_dir = optarg;
                        break;
                default:
                        fprintf(stderr, "usage: %s [-r runs] [-p points] [-d directory on disk]\n",
                                argv[0]);
                        return 2;
                }
        }
        if (arg_runs < 1 || arg_runs > BENCH_MAX_RUNS || arg_points < 10)
                bench_die("options", EINVAL);
        bench_machine();
        load0 = bench_load();
        for (unsigned i = 0; i < N_INST; i++) {
                snprintf(cnames[i], sizeof(cnames[i]), "a%u", i);
                comps[i] = (struct bench_comp){ cnames[i], LINEAR_ODE };
                for (unsigned j = 0; j < VARS_PER_INST; j++) {
                        snprintf(names[i * VARS_PER_INST + j], sizeof(names[0]), "a%u.%s", i, vars[j]);
                        record[i * VARS_PER_INST + j] = names[i * VARS_PER_INST + j];
                }
        }
        struct bench_ssd d = {
                .n = N_INST, .comps = comps, .ring_out = "x", .ring_in = "u0", .param = "k",
                .param_type = "Real", .param_value = "0.001",
                .n_record = N_INST * VARS_PER_INST, .record = record,
                .step = H, .stop = H * (double)arg_points,
        };

        bench_mkdtemp(dir, sizeof(dir));
        bench_ssd_write(dir, &d, ssd, sizeof(ssd));
        snprintf(outdir, sizeof(outdir), "%s/fmud-bench-rec-XXXXXX", arg_dir);
        if (!mkdtemp(outdir))
                bench_die(outdir, errno);
        snprintf(out, sizeof(out), "%s/results.csv", outdir);
        printf("%u LinearOde instances in a ring, %u recorded Float64 columns, h = 1 ms, "
               "%lu points per run, %u runs alternating, file in %s\n\n", N_INST,
               N_INST * VARS_PER_INST, arg_points, arg_runs, arg_dir);
        for (unsigned r = 0; r < arg_runs; r++) {
                for (unsigned k = 0; k < 2; k++) {
                        if ((k + r) % 2) {
                                on[r] = run_one(ssd, out, &bytes, cpu);
                                thr_on[r] = cpu[0];
                                proc_on[r] = cpu[1];
                        } else {
                                off[r] = run_one(ssd, NULL, &none, cpu);
                                thr_off[r] = cpu[0];
                                proc_off[r] = cpu[1];
                        }
                }
                (void) unlink(out);
                slow[r] = on[r] / off[r] - 1;
                fprintf(stderr, "run %u: off %.2f, on %.2f µs/point (%+.1f%%)\n", r + 1,
                        off[r] * 1e6, on[r] * 1e6, slow[r] * 100);
        }
        (void) rmdir(outdir);
        bench_rmrf(dir);

        double m_off = bench_median(off, arg_runs), m_on = bench_median(on, arg_runs);
        double m_slow = bench_median(slow, arg_runs);

        printf("| recording | µs/point | rows/s | values/s | master thread CPU µs/point | "
               "process CPU µs/point |\n|---|---:|---:|---:|---:|---:|\n");
        printf("| off (no file) | %.2f | | | %.2f | %.2f |\n", m_off * 1e6,
               bench_median(thr_off, arg_runs) * 1e6, bench_median(proc_off, arg_runs) * 1e6);
        printf("| on (CSV on disk, %.1f MB per run) | %.2f | %.0f | %.0f | %.2f | %.2f |\n",
               (double)bytes / 1e6, m_on * 1e6, 1 / m_on, N_INST * VARS_PER_INST / m_on,
               bench_median(thr_on, arg_runs) * 1e6, bench_median(proc_on, arg_runs) * 1e6);
        printf("\nslowdown on / off: %+.1f%% (median of the runs' ratios; min..max %+.1f..%+.1f%%)\n",
               m_slow * 100, slow[0] * 100, slow[arg_runs - 1] * 100);
        printf("load average: %.2f at the start, %.2f at the end\n", load0, bench_load());
        return 0;
}
