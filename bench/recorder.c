/*
 * recorder: what writing a session's results as CSV costs, per way of
 * writing it, measured in the same run.
 *
 * For each shape (rows x columns, the time column included) every run makes
 * each method write the same rows to a file in DIR (default: a new directory
 * under /tmp), and removes the file afterwards:
 *   fprintf  fprintf(",%.16g") per value to a FILE*: an in-process importer
 *            (the Reference-FMUs' fmusim writes its CSV this way)
 *   sync     recorder, formatter + write(2) on the calling thread
 *   thread   recorder, formatter + a write(2) writer thread
 *   uring    recorder, formatter + io_uring
 * The methods run in a rotating order, so that no method always runs first
 * or last. Per method the table gives the median over runs of: wall time
 * per row (open to close: everything handed to the kernel, no fsync for
 * anyone), rows per second, the per-run ratio of wall time to fprintf's
 * wall time in the same run, the caller's time per row inside the record
 * calls (what the master pays), and two measures that other load on the
 * machine does not inflate: the caller's CPU time inside the record calls
 * (CLOCK_THREAD_CPUTIME_ID) and the whole process's CPU time from open to
 * close (getrusage: writer thread and io_uring workers included).
 * -r METHOD makes METHOD the ratio's reference instead of fprintf (for
 * tuning: -m thread,uring -r thread); without it in -m, the ratio is "nan".
 * -L adds one run per method that times every call (p50, p99, p99.9, max).
 * -F measures the formatter alone against snprintf, in ns per value.
 *
 * DESIGN: the values are smooth full-precision signals from a precomputed
 * table (the simulation's cost is not measured), the time is k * h as the
 * master computes it. Results: docs/BENCHMARKS.md.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "engine/record/numfmt.h"
#include "engine/record/recorder.h"

#define TABLE_ROWS      1024
#define STEP            1e-3
#define MAX_LIST        8

enum method { M_FPRINTF, M_SYNC, M_THREAD, M_URING, M_COUNT };
static const char *const method_names[M_COUNT] = { "fprintf", "sync", "thread", "uring" };
static const enum rec_backend method_backend[M_COUNT] = {
        REC_BACKEND_AUTO, REC_BACKEND_SYNC, REC_BACKEND_THREAD, REC_BACKEND_URING,
};

struct shape {
        unsigned long rows;
        unsigned cols;                  /* time included */
};

struct sample {
        double wall, master;            /* seconds: open to close, inside the record calls */
        double master_cpu, cpu;         /* seconds: the caller's CPU time in the record calls,
                                           the process's (all threads) from open to close */
};

static const char *arg_dir;
static unsigned arg_runs = 5;
static size_t arg_sizes[MAX_LIST] = { REC_BUFFER_SIZE_DEFAULT };
static unsigned arg_nsizes = 1;
static unsigned arg_depths[MAX_LIST] = { REC_BUFFERS_DEFAULT };
static unsigned arg_ndepths = 1;
static struct shape arg_shapes[MAX_LIST] = { { 1000000, 11 }, { 100000, 100 } };
static unsigned arg_nshapes = 2;
static bool arg_methods[M_COUNT] = { true, true, true, true };
static enum method arg_ref = M_FPRINTF;    /* the ratio column's reference */
static bool arg_latency, arg_formatter;

static union rec_value *table;          /* TABLE_ROWS x (cols - 1) */
static struct rec_column *columns;

static double now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double thread_cpu(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* User + system time of every thread of the process, io_uring's workers included. */
static double process_cpu(void)
{
        struct rusage ru;

        getrusage(RUSAGE_SELF, &ru);
        return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
               (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return x < y ? -1 : x > y;
}

static double median(double *v, unsigned n)
{
        qsort(v, n, sizeof *v, cmp_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void setup_shape(const struct shape *sh)
{
        unsigned nv = sh->cols - 1;

        free(table);
        free(columns);
        table = malloc(sizeof *table * TABLE_ROWS * nv);
        columns = malloc(sizeof *columns * nv);
        if (!table || !columns)
                exit(1);
        for (unsigned j = 0; j < nv; j++) {
                static char names[1000][24];

                snprintf(names[j % 1000], sizeof names[0], "plant.y%u", j);
                columns[j] = (struct rec_column){ names[j % 1000], REC_FLOAT64 };
        }
        for (unsigned k = 0; k < TABLE_ROWS; k++)
                for (unsigned j = 0; j < nv; j++)
                        table[k * nv + j].f64 = sin(k * STEP * (j + 1)) * (j + 1) * 3.7 + j;
}

static int cmp_u32(const void *a, const void *b)
{
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

        return x < y ? -1 : x > y;
}

static void print_latency(const char *name, uint32_t *ns, unsigned long n)
{
        qsort(ns, n, sizeof *ns, cmp_u32);
        printf("| %s | %u | %u | %u | %u |\n", name, ns[n / 2], ns[(size_t)(n * 0.99)],
               ns[(size_t)(n * 0.999)], ns[n - 1]);
}

static struct sample run_fprintf(const char *path, const struct shape *sh, uint32_t *lat)
{
        unsigned nv = sh->cols - 1;
        double c0 = process_cpu(), t0 = now(), m0, m1, mc0, mc1;
        FILE *f = fopen(path, "w");

        if (!f) {
                perror(path);
                exit(1);
        }
        fprintf(f, "time");
        for (unsigned j = 0; j < nv; j++)
                fprintf(f, ",%s", columns[j].name);
        fputc('\n', f);
        mc0 = thread_cpu();
        m0 = now();
        for (unsigned long k = 0; k < sh->rows; k++) {
                const union rec_value *row = table + (k % TABLE_ROWS) * nv;
                double l0 = lat ? now() : 0;

                fprintf(f, "%.16g", k * STEP);
                for (unsigned j = 0; j < nv; j++)
                        fprintf(f, ",%.16g", row[j].f64);
                fputc('\n', f);
                if (lat)
                        lat[k] = (uint32_t)((now() - l0) * 1e9);
        }
        m1 = now();
        mc1 = thread_cpu();
        if (fclose(f)) {
                perror("fclose");
                exit(1);
        }
        return (struct sample){ now() - t0, m1 - m0, mc1 - mc0, process_cpu() - c0 };
}

static struct sample run_recorder(const char *path, const struct shape *sh, enum rec_backend b,
                                  size_t size, unsigned depth, uint32_t *lat)
{
        struct rec_options o = { .backend = b, .buffer_size = size, .buffers = depth };
        unsigned nv = sh->cols - 1;
        double c0 = process_cpu(), t0 = now(), m0, m1, mc0, mc1;
        struct rec_stats st;
        struct rec *r;
        int e;

        e = rec_open(path, columns, nv, &o, &r);
        if (e < 0) {
                fprintf(stderr, "rec_open(%s, %s): %s\n", path, rec_backend_name(b), strerror(-e));
                exit(1);
        }
        mc0 = thread_cpu();
        m0 = now();
        for (unsigned long k = 0; k < sh->rows; k++) {
                double l0 = lat ? now() : 0;

                e = rec_sample(r, k * STEP, table + (k % TABLE_ROWS) * nv);
                if (lat)
                        lat[k] = (uint32_t)((now() - l0) * 1e9);
                if (e < 0) {
                        fprintf(stderr, "rec_sample: %s\n", strerror(-e));
                        exit(1);
                }
        }
        m1 = now();
        mc1 = thread_cpu();
        e = rec_close(r, &st);
        if (e < 0 || st.dropped) {
                fprintf(stderr, "rec_close: %s, %llu dropped\n", strerror(-e),
                        (unsigned long long)st.dropped);
                exit(1);
        }
        return (struct sample){ now() - t0, m1 - m0, mc1 - mc0, process_cpu() - c0 };
}

static struct sample run_one(enum method m, const char *path, const struct shape *sh, size_t size,
                             unsigned depth, uint32_t *lat)
{
        struct sample s;

        if (m == M_FPRINTF)
                s = run_fprintf(path, sh, lat);
        else
                s = run_recorder(path, sh, method_backend[m], size, depth, lat);
        (void) unlink(path);
        return s;
}

static void measure(const char *path, const struct shape *sh, size_t size, unsigned depth)
{
        double wall[M_COUNT][64] = { { 0 } }, master[M_COUNT][64] = { { 0 } }, ratio[M_COUNT][64];
        double mcpu[M_COUNT][64] = { { 0 } }, cpu[M_COUNT][64] = { { 0 } };
        unsigned runs = arg_runs > 64 ? 64 : arg_runs;

        printf("\n%lu rows x %u columns, buffer %zu B x %u, %u runs\n\n", sh->rows, sh->cols, size,
               depth, runs);
        for (unsigned i = 0; i < runs; i++) {
                for (unsigned k = 0; k < M_COUNT; k++) {
                        enum method m = (enum method)((i + k) % M_COUNT);
                        struct sample s;

                        if (!arg_methods[m])
                                continue;
                        s = run_one(m, path, sh, size, depth, NULL);
                        wall[m][i] = s.wall;
                        master[m][i] = s.master;
                        mcpu[m][i] = s.master_cpu;
                        cpu[m][i] = s.cpu;
                }
                for (unsigned m = 0; m < M_COUNT; m++)
                        ratio[m][i] = arg_methods[arg_ref] ? wall[m][i] / wall[arg_ref][i] : NAN;
        }
        printf("| method | wall ns/row | rows/s | wall vs %s | wall ns/row min..max | master ns/row "
               "| master CPU ns/row | process CPU ns/row |\n", method_names[arg_ref]);
        printf("|---|---:|---:|---:|---|---:|---:|---:|\n");
        for (unsigned m = 0; m < M_COUNT; m++) {
                double w, lo, hi;

                if (!arg_methods[m])
                        continue;
                w = median(wall[m], runs);
                lo = wall[m][0];
                hi = wall[m][runs - 1];
                printf("| %s | %.0f | %.0f | %.2f | %.0f..%.0f | %.0f | %.0f | %.0f |\n", method_names[m],
                       w / sh->rows * 1e9, sh->rows / w, median(ratio[m], runs), lo / sh->rows * 1e9,
                       hi / sh->rows * 1e9, median(master[m], runs) / sh->rows * 1e9,
                       median(mcpu[m], runs) / sh->rows * 1e9, median(cpu[m], runs) / sh->rows * 1e9);
        }
        if (!arg_latency)
                return;
        printf("\nTime per call (one more run per method, every call timed), ns:\n\n");
        printf("| method | p50 | p99 | p99.9 | max |\n|---|---:|---:|---:|---:|\n");
        for (unsigned m = 0; m < M_COUNT; m++) {
                uint32_t *lat;

                if (!arg_methods[m])
                        continue;
                lat = malloc(sizeof *lat * sh->rows);
                if (!lat)
                        exit(1);
                (void) run_one((enum method)m, path, sh, size, depth, lat);
                print_latency(method_names[m], lat, sh->rows);
                free(lat);
        }
}

/* The formatter alone: ns per value, median of 5, for four kinds of doubles. */
static void measure_formatter(void)
{
        static const char *const kinds[] = {
                "smooth signals (full precision)", "time points k * 1e-3", "integers", "random bit patterns",
        };
        enum { N = 200000 };
        double *v = malloc(sizeof *v * N), t[3][5];
        volatile size_t sink = 0;
        uint64_t s = 88172645463325252u;
        char buf[64];

        if (!v)
                exit(1);
        printf("\nFormatter alone, ns per value (median of 5 passes over %d values):\n\n", N);
        printf("| values | numfmt_f64 | snprintf %%.16g | snprintf %%.17g |\n|---|---:|---:|---:|\n");
        for (unsigned kind = 0; kind < 4; kind++) {
                for (unsigned i = 0; i < N; i++) {
                        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
                        if (kind == 0)
                                v[i] = sin(i * 1e-3 * (1 + i % 7)) * (1 + i % 11) * 3.7;
                        else if (kind == 1)
                                v[i] = i * 1e-3;
                        else if (kind == 2)
                                v[i] = (double)(s % 100000);
                        else
                                memcpy(&v[i], &s, sizeof s);
                        if (!isfinite(v[i]))
                                v[i] = 1.5;
                }
                for (unsigned p = 0; p < 5; p++) {
                        double t0 = now();

                        for (unsigned i = 0; i < N; i++)
                                sink += numfmt_f64(buf, v[i]);
                        t[0][p] = (now() - t0) / N * 1e9;
                        t0 = now();
                        for (unsigned i = 0; i < N; i++)
                                sink += (size_t)snprintf(buf, sizeof buf, "%.16g", v[i]);
                        t[1][p] = (now() - t0) / N * 1e9;
                        t0 = now();
                        for (unsigned i = 0; i < N; i++)
                                sink += (size_t)snprintf(buf, sizeof buf, "%.17g", v[i]);
                        t[2][p] = (now() - t0) / N * 1e9;
                }
                printf("| %s | %.0f | %.0f | %.0f |\n", kinds[kind], median(t[0], 5), median(t[1], 5),
                       median(t[2], 5));
        }
        (void)sink;
        free(v);
}

static unsigned parse_list(const char *s, size_t *out)
{
        unsigned n = 0;
        char *end;

        while (*s && n < MAX_LIST) {
                out[n++] = strtoull(s, &end, 0);
                s = *end == ',' ? end + 1 : end;
                if (end == s && *s)
                        break;
        }
        return n;
}

static void usage(void)
{
        fprintf(stderr, "usage: recorder [-d DIR] [-n RUNS] [-b SIZE,...] [-p DEPTH,...]\n"
                        "                [-s ROWSxCOLS,...] [-m fprintf,sync,thread,uring] [-r METHOD] [-L] [-F]\n");
        exit(2);
}

static void parse_args(int argc, char **argv)
{
        size_t list[MAX_LIST];
        char *s, *end;
        int c;

        while ((c = getopt(argc, argv, "d:n:b:p:s:m:r:LFh")) != -1) {
                switch (c) {
                case 'd': arg_dir = optarg; break;
                case 'n': arg_runs = (unsigned)atoi(optarg); break;
                case 'b': arg_nsizes = parse_list(optarg, arg_sizes); break;
                case 'p':
                        arg_ndepths = parse_list(optarg, list);
                        for (unsigned i = 0; i < arg_ndepths; i++)
                                arg_depths[i] = (unsigned)list[i];
                        break;
                case 's':
                        for (arg_nshapes = 0, s = optarg; *s && arg_nshapes < MAX_LIST; arg_nshapes++) {
                                arg_shapes[arg_nshapes].rows = strtoul(s, &end, 10);
                                if (*end != 'x')
                                        usage();
                                arg_shapes[arg_nshapes].cols = (unsigned)strtoul(end + 1, &end, 10);
                                if (arg_shapes[arg_nshapes].cols < 1)
                                        usage();
                                s = *end == ',' ? end + 1 : end;
                        }
                        break;
                case 'm':
                        for (unsigned m = 0; m < M_COUNT; m++)
                                arg_methods[m] = strstr(optarg, method_names[m]) != NULL;
                        break;
                case 'r':
                        for (unsigned m = 0; m < M_COUNT; m++)
                                if (!strcmp(optarg, method_names[m]))
                                        arg_ref = (enum method)m;
                        break;
                case 'L': arg_latency = true; break;
                case 'F': arg_formatter = true; break;
                default: usage();
                }
        }
        if (arg_runs < 1 || !arg_nsizes || !arg_ndepths)
                usage();
}

static void print_machine(const char *dir)
{
        char line[256], model[256] = "?";
        FILE *f = fopen("/proc/cpuinfo", "r");
        double load[3] = { 0 };
        struct utsname u;

        while (f && fgets(line, sizeof line, f))
                if (!strncmp(line, "model name", 10)) {
                        snprintf(model, sizeof model, "%s", strchr(line, ':') + 2);
                        model[strcspn(model, "\n")] = '\0';
                        break;
                }
        if (f)
                fclose(f);
        uname(&u);
        if (getloadavg(load, 3) < 0)
                load[0] = -1;
        printf("nproc %ld, %s, %s %s, load average %.2f, files in %s\n", sysconf(_SC_NPROCESSORS_ONLN),
               model, u.sysname, u.release, load[0], dir);
}

int main(int argc, char **argv)
{
        char tmpl[] = "/tmp/fmud-bench-recorder-XXXXXX", path[4096];
        const char *dir;

        parse_args(argc, argv);
        dir = arg_dir ? arg_dir : mkdtemp(tmpl);
        if (!dir) {
                perror("mkdtemp");
                return 1;
        }
        snprintf(path, sizeof path, "%s/results.csv", dir);
        print_machine(dir);
        if (arg_formatter)
                measure_formatter();
        for (unsigned s = 0; s < arg_nshapes; s++) {
                setup_shape(&arg_shapes[s]);
                for (unsigned b = 0; b < arg_nsizes; b++)
                        for (unsigned p = 0; p < arg_ndepths; p++)
                                measure(path, &arg_shapes[s], arg_sizes[b], arg_depths[p]);
        }
        if (!arg_dir)
                (void) rmdir(dir);
        return 0;
}
