/*
 * session_util: what the session benchmarks (session_parallel.c,
 * session_csv.c, session_record.c) share, master_overhead.c its first
 * half: clocks and medians, the
 * machine and its load, temporary scenarios written as a
 * SystemStructure.ssd beside copies of the test FMUs, and an FMU
 * dlopen'ed into the benchmark for the in-process baselines.
 *
 * DESIGN: every benchmark compares fmud against a baseline measured in the
 * same invocation, run by run in turn, so that a change of the machine's
 * load hits both alike; a table cell is the median over the runs. Nothing
 * here is timed itself. Errors end the program (die()): a benchmark that
 * cannot set up has nothing to report.
 *
 * Threads: one (the benchmark's); the FMUs' own instances are not shared.
 */
#ifndef FMUD_BENCH_SESSION_UTIL_H
#define FMUD_BENCH_SESSION_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/master/master.h"
#include "engine/scenario/scenario.h"
#include "engine/master/session.h"
#include "fmi/fmu.h"
#include "fmi/loader.h"

#define BENCH_MAX_RUNS  31

double bench_now(void);
/* Sorts v. */
double bench_median(double *v, unsigned n);
void bench_die(const char *what, int r) __attribute__((noreturn));
/* "machine: ..., N online cpus, Linux ..." and the load average, to stdout. */
void bench_machine(void);
/* The 1-minute load average, or -1. */
double bench_load(void);
/* A fresh directory from template ("/tmp/fmud-bench-XXXXXX"), into ret (>= 64 bytes). */
void bench_mkdtemp(char *ret, size_t size);
/* rm -rf dir (best effort). */
void bench_rmrf(const char *dir);
/* Copy the file from to the file to. */
void bench_copy(const char *from, const char *to);

/* One instance of a temporary scenario. */
struct bench_comp {
        const char *name;
        const char *fmu;                /* an .fmu path, copied beside the .ssd */
};

/* A temporary scenario: n components, ring connections, parameters, columns. */
struct bench_ssd {
        size_t n;
        const struct bench_comp *comps;
        const char *ring_out, *ring_in; /* comp[i].out -> comp[i+1].in; NULL: none */
        const char *param;              /* set on every component; NULL: none */
        const char *param_type;         /* "Real" or "Integer" */
        const char *param_value;
        size_t n_record;                /* "comp.var" names; 0: the default (every output) */
        const char *const *record;
        double step, stop;
};

/*
 * Write dir/SystemStructure.ssd (and dir/resources/<comp>.fmu) for d.
 * Returns the .ssd path in ret (>= 512 bytes).
 */
void bench_ssd_write(const char *dir, const struct bench_ssd *d, char *ret, size_t size);

/* A loaded scenario with its workers and master (no sink). */
struct bench_sys {
        char cache[64];
        struct scenario *sc;
        struct session *s;
        struct master *m;
};

/* scenario_load(path), session_new(), master_new(). */
void bench_sys_start(struct bench_sys *x, const char *path, const char *worker);
/*
 * LinearOde at fmu_path as instance "lin", with rig ports: input lin.u0,
 * outputs lin.y0 and lin.y1 (the rig benches' session), step h, [0, stop].
 */
void bench_rig_sys_start(struct bench_sys *x, const char *fmu_path, double h, double stop,
                         double warp, const char *worker);
void bench_sys_close(struct bench_sys *x);

/* An FMU unpacked into its own cache and dlopen'ed into this process. */
struct bench_lib {
        char cache[64];
        struct fmu *fmu;
        struct fmu_lib *lib;
};

void bench_lib_open(struct bench_lib *l, const char *fmu_path);
void bench_lib_close(struct bench_lib *l);
/* The value reference of name in l's model description. */
uint32_t bench_vr(const struct bench_lib *l, const char *name);
/*
 * Instantiate, set the parameter (Float64 or Int32 per its type; NULL:
 * none) and run Initialization Mode for [0, stop].
 */
fmi3Instance bench_instantiate(const struct bench_lib *l, const char *name, const char *param,
                               const char *value, double stop);

#endif
