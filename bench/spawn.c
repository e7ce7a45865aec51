/*
 * spawn: what a worker sandbox costs at start-up and at rest.
 *
 * For each mode (off, basic, strict) of worker/sandbox.h:
 *   start   inst_new() + instantiate + Initialization Mode on the LinearOde
 *           test FMU (FMI 3.0): fork+exec, the sandbox layers, dlopen,
 *           HELLO, three round trips; the median over runs, and the 10th
 *           and 90th percentiles
 *   free    inst_free(): FREE, exit, reap, scratch directory removed
 *   rate    instances started per second, K started back to back
 *   memory  per idle instance (the K above, after initialization): the
 *           worker's VmRSS from /proc/PID/status, split into RssAnon,
 *           RssFile and RssShmem (the channel pages it touched), and the
 *           channel's nominal size (two rings and the side buffer, a memfd
 *           whose untouched pages cost nothing)
 *
 *     spawn [-n RUNS] [-k INSTANCES]
 *
 * DESIGN: the runs of the three modes are interleaved (run 1 of each
 * mode, then run 2, ...), so a change of the machine's load hits every
 * mode alike. Results are in docs/BENCHMARKS.md.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/instance/instance.h"

#ifndef FMUD_WORKER_PATH
#define FMUD_WORKER_PATH        "fmud-worker"
#endif
#ifndef FMUD_LINEAR_ODE_DIR
#define FMUD_LINEAR_ODE_DIR     "LinearOde"
#endif

#define MODES           3
#define MAX_RUNS        1000
#define MAX_K           200
#define RING_BYTES      (2u * 1024u * 64u)      /* the default rings: 1024 slots of 64 bytes each way */

struct mem {
        uint64_t rss, anon, file, shmem;        /* kB */
};

static uint64_t now_ns(void)
{
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

        return x < y ? -1 : x > y;
}

static uint64_t pct(uint64_t *v, size_t n, unsigned p)
{
        qsort(v, n, sizeof(*v), cmp_u64);
        return v[(n - 1) * p / 100];
}

static int start(enum sandbox_mode mode, struct inst **ret)
{
        struct inst_instantiate a = { 0 };
        struct inst_experiment x = { 0 };
        struct inst_opts o;
        char *why = NULL;
        int r;

        inst_opts_default(&o);
        o.worker_path = FMUD_WORKER_PATH;
        o.fmu_dir = FMUD_LINEAR_ODE_DIR;
        o.name = "LinearOde";
        o.sandbox.mode = mode;
        r = inst_new(&o, ret, &why);
        if (r < 0) {
                fprintf(stderr, "inst_new(%s): %s: %s\n", sandbox_mode_name(mode), strerror(-r),
                        why ? why : "");
                free(why);
                return r;
        }
        if (inst_instantiate(*ret, &a) != INST_OK ||
            inst_enter_initialization_mode(*ret, &x) != INST_OK ||
            inst_exit_initialization_mode(*ret) != INST_OK) {
                fprintf(stderr, "%s: %s\n", sandbox_mode_name(mode), inst_message(*ret));
                (void) inst_free(*ret);
                return -EIO;
        }
        return 0;
}

static void mem_of(pid_t pid, struct mem *m)
{
        char path[64], line[256];
        FILE *f;

        *m = (struct mem){ 0 };
        snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
        f = fopen(path, "re");
        if (!f)
                return;
        while (fgets(line, sizeof(line), f)) {
                (void) sscanf(line, "VmRSS: %" SCNu64, &m->rss);
                (void) sscanf(line, "RssAnon: %" SCNu64, &m->anon);
                (void) sscanf(line, "RssFile: %" SCNu64, &m->file);
                (void) sscanf(line, "RssShmem: %" SCNu64, &m->shmem);
        }
        fclose(f);
}

int main(int argc, char *argv[])
{
        static uint64_t t_start[MODES][MAX_RUNS], t_free[MODES][MAX_RUNS];
        static struct inst *many[MAX_K];
        static uint64_t rss[MAX_K], anon[MAX_K], file[MAX_K], shmem[MAX_K];
        unsigned runs = 40, k = 20;
        int c;

        while ((c = getopt(argc, argv, "n:k:")) != -1) {
                if (c == 'n')
                        runs = (unsigned)strtoul(optarg, NULL, 10);
                else if (c == 'k')
                        k = (unsigned)strtoul(optarg, NULL, 10);
                else
                        return 64;
        }
        if (runs < 1 || runs > MAX_RUNS || k < 1 || k > MAX_K) {
                fprintf(stderr, "usage: spawn [-n 1..%d] [-k 1..%d]\n", MAX_RUNS, MAX_K);
                return 64;
        }
        for (unsigned i = 0; i < runs; i++)
                for (int m = 0; m < MODES; m++) {
                        struct inst *in;
                        uint64_t t0 = now_ns(), t1;

                        if (start((enum sandbox_mode)m, &in) < 0)
                                return 1;
                        t1 = now_ns();
                        (void) inst_free(in);
                        t_start[m][i] = t1 - t0;
                        t_free[m][i] = now_ns() - t1;
                }
        printf("runs %u, %u instances for rate and memory; channel %.1f MiB nominal\n\n", runs, k,
               (double)(RING_BYTES + INST_SIDE_DEFAULT) / (1 << 20));
        printf("| mode | start median (p10-p90) | free median | started/s (%u back to back) | "
               "VmRSS | RssAnon | RssFile | RssShmem |\n", k);
        printf("|---|---|---|---|---|---|---|---|\n");
        for (int m = 0; m < MODES; m++) {
                uint64_t t0, total;

                t0 = now_ns();
                for (unsigned i = 0; i < k; i++)
                        if (start((enum sandbox_mode)m, &many[i]) < 0)
                                return 1;
                total = now_ns() - t0;
                for (unsigned i = 0; i < k; i++) {
                        struct mem mm;

                        mem_of(inst_pid(many[i]), &mm);
                        rss[i] = mm.rss;
                        anon[i] = mm.anon;
                        file[i] = mm.file;
                        shmem[i] = mm.shmem;
                }
                for (unsigned i = 0; i < k; i++)
                        (void) inst_free(many[i]);
                printf("| %s | %.2f ms (%.2f-%.2f) | %.2f ms | %.0f | %" PRIu64 " kB | %" PRIu64
                       " kB | %" PRIu64 " kB | %" PRIu64 " kB |\n",
                       sandbox_mode_name((enum sandbox_mode)m),
                       pct(t_start[m], runs, 50) / 1e6, pct(t_start[m], runs, 10) / 1e6,
                       pct(t_start[m], runs, 90) / 1e6, pct(t_free[m], runs, 50) / 1e6,
                       k / (total / 1e9), pct(rss, k, 50), pct(anon, k, 50), pct(file, k, 50),
                       pct(shmem, k, 50));
        }
        return 0;
}
