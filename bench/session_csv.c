/*
 * session_csv: a long run of one FMU recorded to CSV, through fmud
 * against an in-process importer writing the same file.
 *
 * The run: the LinearOde test FMU (x' = -k x, ten feedthrough outputs),
 * k = 0.001 (so that every value stays a full 17-digit number over the
 * run), h = 1 ms, P points (default 1,000,000) after the start, every
 * output recorded (x, der_x, y0..y9: 12 columns and time).
 *   fmud:       run_scenario() (engine/run/run.h), what `fmuctl run --local`
 *               does: load the .fmu (unpack it into a fresh cache), start
 *               its worker, run the master to the stop time as fast as
 *               possible, every row to the recorder (io_uring).
 *   in-process: the FMU unpacked into a fresh cache and dlopen'ed here;
 *               per point fmi3DoStep, fmi3GetFloat64 of the 12 outputs,
 *               the row formatted with numfmt_f64() (the recorder's own
 *               shortest round-trip text) and written with fwrite() to a
 *               stdio stream with a 256 KiB buffer (the recorder's buffer
 *               size).
 *   fmusim-style: the same importer, but each value written with
 *               fprintf(",%.16g"), as the Reference-FMUs' fmusim writes
 *               Float64 results (16 digits: not always the same double
 *               when read back, so this file is not compared).
 * Each variant is timed from start to finish (unpacking, loading, the run,
 * and closing the file); the fmud row also shows the master's stepping
 * time alone. The files go to a directory on disk (-d; default /tmp) and
 * are removed after each run; the first run checks that both files are
 * byte for byte the same. Runs alternate between the variants.
 *
 * Results and the command: docs/BENCHMARKS.md.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/record/numfmt.h"
#include "engine/run/run.h"
#include "session_util.h"

#define H               1e-3
#define K               "0.001"
#define LINEAR_ODE      FMUD_TEST_FMU_DIR "/LinearOde.fmu"
#define NCOLS           12
#define STDIO_BUF       (256u * 1024)

static unsigned arg_runs = 5;
static unsigned long arg_points = 1000000;
static const char *arg_dir = "/tmp";
static const char *arg_only;            /* "fmud" or "local": one variant alone, for profiling */

static const char *const columns[NCOLS] = {
        "x", "der_x", "y0", "y1", "y2", "y3", "y4", "y5", "y6", "y7", "y8", "y9",
};

/* fmud: seconds from start to finish; *ret_master: the master's stepping time. */
static double run_fmud(const char *out, double *ret_master)
{
        struct scenario_assign start = { "k", K };
        struct scenario_overrides ov = {
                .has_start = true, .has_stop = true, .has_step = true, .start = 0,
                .stop = H * (double)arg_points, .step = H, .n_starts = 1, .starts = &start,
        };
        struct run_opts o = { 0 };
        struct run_report rep;
        struct diag_list diags;
        char cache[64];
        double t0;
        int r;

        bench_mkdtemp(cache, sizeof(cache));
        o = (struct run_opts){ .scenario = LINEAR_ODE, .out = out, .cache_dir = cache,
                               .worker_path = FMUD_WORKER, .overrides = &ov };
        diag_list_init(&diags, 0);
        t0 = bench_now();
        r = run_scenario(&o, &diags, &rep);
        t0 = bench_now() - t0;
        if (r < 0) {
                fprintf(stderr, "%s\n", rep.message ? rep.message : "");
                bench_die("run_scenario", r);
        }
        if (rep.points != arg_points || rep.rec.rows != arg_points + 1 || rep.rec.dropped)
                bench_die("fmud's run: wrong number of points or rows", EIO);
        *ret_master = rep.wall_s;
        run_report_fini(&rep);
        diag_list_fini(&diags);
        bench_rmrf(cache);
        return t0;
}

/* fmusim's way: one fprintf() per value, 16 significant digits. */
static void put_row_printf(FILE *f, double t, const double *v)
{
        if (fprintf(f, "%.16g", t) < 0)
                bench_die("fprintf", errno);
        for (unsigned i = 0; i < NCOLS; i++)
                if (fprintf(f, ",%.16g", v[i]) < 0)
                        bench_die("fprintf", errno);
        if (fputc('\n', f) == EOF)
                bench_die("fputc", errno);
}

static void put_row(FILE *f, double t, const double *v)
{
        char row[NUMFMT_F64_MAX * (NCOLS + 1) + NCOLS + 2], *p = row;

        p += numfmt_f64(p, t);
        for (unsigned i = 0; i < NCOLS; i++) {
                *p++ = ',';
                p += numfmt_f64(p, v[i]);
        }
        *p++ = '\n';
        if (fwrite(row, 1, (size_t)(p - row), f) != (size_t)(p - row))
                bench_die("fwrite", errno);
}

/* The in-process importer (fprintf: fmusim's formatting): seconds from start to finish. */
static double run_local(const char *out, bool fprintf_style)
{
        void (*put)(FILE *, double, const double *) = fprintf_style ? put_row_printf : put_row;
        double t0 = bench_now(), v[NCOLS], stop = H * (double)arg_points;
        const struct fmi3_api *f;
        fmi3Boolean ev, term, early;
        uint32_t vrs[NCOLS];
        struct bench_lib l;
        fmi3Float64 last;
        fmi3Instance in;
        FILE *csv;

        bench_lib_open(&l, LINEAR_ODE);
        f = &l.lib->f3;
        for (unsigned i = 0; i < NCOLS; i++)
                vrs[i] = bench_vr(&l, columns[i]);
        in = bench_instantiate(&l, "LinearOde", "k", K, stop);
        csv = fopen(out, "w");
        if (!csv || setvbuf(csv, NULL, _IOFBF, STDIO_BUF))
                bench_die(out, errno);
        fputs("time", csv);
        for (unsigned i = 0; i < NCOLS; i++)
                fprintf(csv, ",%s", columns[i]);
        fputc('\n', csv);
        f->fmi3GetFloat64(in, vrs, NCOLS, v, NCOLS);
        put(csv, 0, v);
        for (unsigned long n = 0; n < arg_points; n++) {
                /* Time from the integer n, the last point exactly the stop time, as the master. */
                double t = (double)n * H, next = n + 1 == arg_points ? stop : (double)(n + 1) * H;

                if (f->fmi3DoStep(in, t, next - t, true, &ev, &term, &early, &last) > fmi3Warning ||
                    f->fmi3GetFloat64(in, vrs, NCOLS, v, NCOLS) > fmi3Warning)
                        bench_die("fmi3DoStep", EIO);
                put(csv, next, v);
        }
        if (fclose(csv))
                bench_die(out, errno);
        f->fmi3FreeInstance(in);
        bench_lib_close(&l);
        return bench_now() - t0;
}

/* 0 when the files are the same, else the 1-based line of the first difference. */
static unsigned long compare(const char *a, const char *b)
{
        FILE *fa = fopen(a, "r"), *fb = fopen(b, "r");
        static char ba[65536], bb[65536];
        unsigned long line = 1;
        size_t na, nb;

        if (!fa || !fb)
                bench_die(a, errno);
        do {
                na = fread(ba, 1, sizeof(ba), fa);
                nb = fread(bb, 1, sizeof(bb), fb);
                for (size_t i = 0; i < na && i < nb; i++) {
                        if (ba[i] != bb[i])
                                goto out;
                        line += ba[i] == '\n';
                }
        } while (na == nb && na > 0);
out:
        fclose(fa);
        fclose(fb);
        return na == nb && na == 0 ? 0 : line;
}

int main(int argc, char **argv)
{
        double fm[BENCH_MAX_RUNS], fm_master[BENCH_MAX_RUNS], loc[BENCH_MAX_RUNS];
        double pf[BENCH_MAX_RUNS], ratio[BENCH_MAX_RUNS], ratio_pf[BENCH_MAX_RUNS], load0, size = 0;
        char dir[512], out_fmud[600], out_local[600];
        int c;

        while ((c = getopt(argc, argv, "r:p:d:o:")) != -1) {
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
                case 'o':
                        arg_only = optarg;
                        break;
                default:
                        fprintf(stderr, "usage: %s [-r runs] [-p points] [-d directory on disk] "
                                "[-o fmud|local|fmusim]\n", argv[0]);
                        return 2;
                }
        }
        if (arg_runs < 1 || arg_runs > BENCH_MAX_RUNS || arg_points < 10)
                bench_die("options", EINVAL);
        bench_machine();
        load0 = bench_load();
        snprintf(dir, sizeof(dir), "%s/fmud-bench-csv-XXXXXX", arg_dir);
        if (!mkdtemp(dir))
                bench_die(dir, errno);
        snprintf(out_fmud, sizeof(out_fmud), "%s/fmud.csv", dir);
        snprintf(out_local, sizeof(out_local), "%s/local.csv", dir);
        printf("LinearOde, k = %s, h = 1 ms, %lu points (%lu rows of 13 columns), %u runs "
               "alternating, files in %s\n\n", K, arg_points, arg_points + 1, arg_runs, arg_dir);
        if (arg_only) {
                double m = 0, t = !strcmp(arg_only, "fmud") ? run_fmud(out_fmud, &m) :
                                  !strcmp(arg_only, "fmusim") ? run_local(out_local, true) :
                                  run_local(out_local, false);

                printf("%s alone: %.3f s\n", arg_only, t);
                (void) unlink(out_fmud);
                (void) unlink(out_local);
                (void) rmdir(dir);
                return 0;
        }
        for (unsigned r = 0; r < arg_runs; r++) {
                /* Alternate which goes first, so neither always follows the other's writeback. */
                if (r % 2) {
                        loc[r] = run_local(out_local, false);
                        fm[r] = run_fmud(out_fmud, &fm_master[r]);
                } else {
                        fm[r] = run_fmud(out_fmud, &fm_master[r]);
                        loc[r] = run_local(out_local, false);
                }
                ratio[r] = fm[r] / loc[r];
                if (r == 0) {
                        unsigned long d = compare(out_fmud, out_local);
                        FILE *f = fopen(out_fmud, "r");

                        if (f && !fseek(f, 0, SEEK_END))
                                size = (double)ftell(f);
                        if (f)
                                fclose(f);
                        if (d)
                                printf("the two files differ from line %lu\n", d);
                        else
                                printf("the two files are identical (%.1f MB)\n", size / 1e6);
                }
                (void) unlink(out_fmud);
                (void) unlink(out_local);
                pf[r] = run_local(out_local, true);
                ratio_pf[r] = fm[r] / pf[r];
                (void) unlink(out_local);
                fprintf(stderr, "run %u: fmud %.3f s (master %.3f s), in-process %.3f s, "
                        "fmusim-style %.3f s\n", r + 1, fm[r], fm_master[r], loc[r], pf[r]);
        }
        (void) rmdir(dir);

        double m_fm = bench_median(fm, arg_runs), m_master = bench_median(fm_master, arg_runs);
        double m_loc = bench_median(loc, arg_runs), m_ratio = bench_median(ratio, arg_runs);
        double m_pf = bench_median(pf, arg_runs), m_ratio_pf = bench_median(ratio_pf, arg_runs);

        printf("| variant | wall s | µs/point | rows/s |\n|---|---:|---:|---:|\n");
        printf("| in-process importer (numfmt + stdio) | %.3f | %.2f | %.0f |\n", m_loc,
               m_loc / (double)arg_points * 1e6, (double)(arg_points + 1) / m_loc);
        printf("| in-process importer, fmusim's fprintf(\",%%.16g\") | %.3f | %.2f | %.0f |\n", m_pf,
               m_pf / (double)arg_points * 1e6, (double)(arg_points + 1) / m_pf);
        printf("| fmud (run.h: worker, master, recorder) | %.3f | %.2f | %.0f |\n", m_fm,
               m_fm / (double)arg_points * 1e6, (double)(arg_points + 1) / m_fm);
        printf("| of which the master's stepping | %.3f | %.2f | |\n", m_master,
               m_master / (double)arg_points * 1e6);
        printf("\nfmud / in-process: %.2fx (median of the runs' ratios; min..max %.2f..%.2f)\n",
               m_ratio, ratio[0], ratio[arg_runs - 1]);
        printf("fmud / fmusim-style: %.2fx (min..max %.2f..%.2f)\n", m_ratio_pf, ratio_pf[0],
               ratio_pf[arg_runs - 1]);
        printf("load average: %.2f at the start, %.2f at the end\n", load0, bench_load());
        return 0;
}
