/*
 * run: one scenario from its file to a results file, start to finish:
 * load it (scenario.h), bring it to life (session.h), run it to the stop
 * time (master.h) while every sample row goes to a CSV file (recorder.h).
 * This is what `fmuctl run` does without a daemon.
 *
 * Ownership: struct run_report's strings and arrays are the caller's after
 * run_scenario() and freed with run_report_fini().
 *
 * Threads: run_scenario() runs the master on the calling thread, which
 * also formats the rows. A recording thread fed rows by the master was
 * tried (bench/session_csv) and was slower on 2 cpus, 1.57x to 1.82x the
 * in-process importer's time against 1.15x: three busy threads do not fit
 * on two cpus, and the master's round trips slowed more than the
 * formatting they were relieved of.
 */
#ifndef FMUD_ENGINE_RUN_H
#define FMUD_ENGINE_RUN_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "engine/master/master.h"
#include "engine/record/mat4.h"
#include "engine/record/recorder.h"
#include "engine/scenario/scenario.h"
#include "engine/master/session.h"

/* Called about every percent of simulated time (and at the end). */
typedef void run_progress_fn(void *ctx, double time, double start, double stop, double rtf);

struct run_opts {
        const char *scenario;                   /* .ssp, .ssd, folder or .fmu */
        const char *out;                        /* results CSV, or .mat (mat4_wanted(): MAT v4,
                                                   converted from a CSV of the rows at the end,
                                                   String and Binary columns left out with a
                                                   warning in diags); NULL: none */
        int out_fd;                             /* > 0: results to a duplicate of this descriptor
                                                   (still the caller's); out names it in messages */
        const char *input;                      /* input CSV (input_csv.h); NULL: none */
        const char *cache_dir;                  /* where FMUs are unpacked (required) */
        const char *worker_path;                /* fmud-worker (required) */
        const struct scenario_overrides *overrides;     /* NULL: none */
        size_t n_allowed_dirs;                  /* absolute FMU sources allowed below these */
        const char *const *allowed_dirs;
        run_progress_fn *progress;
        void *progress_ctx;
        session_log_fn *log;                    /* FMU log messages; NULL: dropped */
        void *log_ctx;
        bool strict;                            /* FMU warnings refuse the scenario too */
        enum fmu_interface iface;               /* which interface to host (fmi/fmu.h) */
        enum fmu_integrator integrator;         /* how a Model Exchange FMU is integrated */
        bool need_columns;                      /* a .mat out whose every column is text (none
                                                   left to write) refuses the scenario (-ENODATA,
                                                   RUN_PHASE_LOAD) before it starts; no column at
                                                   all gives the time column alone */
        bool fsync;                             /* fsync the results file at the end */
        const volatile sig_atomic_t *stop;      /* non-zero (a signal): the run stops at the next
                                                   point, its rows kept, as a stop request would */
        const atomic_bool *abandon;             /* true (a signal): besides, a call in flight
                                                   is not waited for, its worker killed
                                                   (inst_opts.cancel) */
        unsigned flush_ms;                      /* rec_options' flush_ms; 0: the default */
        char *const *envp;                      /* the workers' environment; NULL: empty */
        struct sandbox_opts sandbox;            /* every worker's sandbox; zero: off */
};

struct run_inst_report {
        char *name;
        char *fmu;                              /* the model name */
        uint32_t multirate;
        bool tolerance_defined;                 /* the relative tolerance given at initialization */
        double tolerance;
        uint64_t steps;
        double step_us_mean, step_us_max;       /* round trip per doStep */
};

enum run_phase {
        RUN_PHASE_LOAD,         /* the scenario was refused (see the diags) */
        RUN_PHASE_START,        /* workers, instantiation, initialization */
        RUN_PHASE_RECORD,       /* the results file */
        RUN_PHASE_RUN,          /* a coupled step faulted */
        RUN_PHASE_DONE,
};

struct run_report {
        enum run_phase phase;
        char *message;                          /* what went wrong; NULL on success */
        char *name;                             /* the scenario's */
        enum master_state state;
        double start, stop, step;
        double time;                            /* simulated time reached */
        uint64_t points, extra_points, events;
        uint64_t chained, moves;                /* master_stats' */
        double wall_s, rtf;
        size_t n_insts;
        struct run_inst_report *insts;
        size_t n_columns;
        const char *backend;                    /* the recorder's; NULL without output */
        struct rec_stats rec;
};

/*
 * Run the scenario. Every problem loading it goes to diags. Returns 0 when
 * the run reached the stop time (or an instance ended it with
 * terminateSimulation) and the results were written; otherwise -errno with
 * report->phase and report->message saying where and why. A failed write
 * of the results file ends the run at the next point (RUN_PHASE_RECORD,
 * the errno, the file and its last row in the message; report->rec says
 * what the file holds). The report is
 * filled as far as the run got, also on failure; free it with
 * run_report_fini().
 */
int run_scenario(const struct run_opts *opts, struct diag_list *diags, struct run_report *report);

/*
 * Whom the sandboxed workers of a root process run as by default (the
 * user fmud, else nobody; instance.h sandbox_user()): 0 and its ids, or
 * -ENOENT. For a caller that must know what those workers can reach.
 */
int run_sandbox_user(uid_t *ret_uid, gid_t *ret_gid);

void run_report_fini(struct run_report *report);

/*
 * A .mat file's columns (mat4.h): each column's description, unit,
 * whether it is a parameter, and whether it is text (String or Binary:
 * left out, a .mat file holds numbers only). calloc'ed, sc->n_columns
 * entries whose strings are sc's; NULL when out of memory.
 */
struct mat4_var *run_mat4_meta(const struct scenario *sc);

/* How many columns a .mat file leaves out as text; their names in buf (mat4_list_add()). */
size_t run_mat4_left_out(const struct scenario *sc, char *buf, size_t size);
/* The warning that n columns (names) are left out of the .mat file (NULL: not named). */
void run_mat4_note(char *buf, size_t size, const char *file, size_t n, const char *names);

#endif
