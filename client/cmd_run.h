/*
 * cmd_run: what fmuctl run's files share. cmd_run.c parses the command
 * line and runs in process (--local); cmd_run_daemon.c runs through a
 * daemon; cmd_run_private.c starts a private daemon when none answers.
 */
#ifndef FMUD_CLIENT_CMD_RUN_H
#define FMUD_CLIENT_CMD_RUN_H

#include <stdbool.h>
#include <sys/types.h>

#include "cli.h"
#include "results_fetch.h"

struct run_cmd {
        struct cli cli;
        struct cli_load load;           /* load.out: --out or the default */
        const char *scenario;           /* as given */
        char *out_default;
        bool quiet, local, private_only;
        bool to_stdout;                 /* --out -: the rows on stdout (load.out NULL) */
        FILE *report;                   /* the summary's stream: stderr when the rows take stdout */
        bool ipc;                       /* the daemon is on this machine (an ipc:// endpoint) */
        /*
         * --fetch, a .mat --out, or a daemon on another machine: the daemon
         * records in its state directory and fmuctl fetches the rows as
         * they come (results), writing --out here.
         */
        bool fetch_opt, fetch;
        struct results_fetch fetched;   /* where the rows go (results_fetch.h) */
        int fetch_r;                    /* its first failure; fetch_err says why */
        char fetch_err[1024];
};

struct run_report;

/*
 * --json (cmd_run_json.c): the summary as one object, the same keys both
 * ways. run_json_local() and run_json_daemon() make it (the daemon's
 * without "results", which run_json_results() adds once the file is
 * complete); run_json_finish() adds "exitCode", prints and frees it.
 */
struct json_object *run_json_local(const struct run_report *rep, const char *scenario,
                                   const char *out);
struct json_object *run_json_daemon(const struct proto_session_status *s, const char *scenario,
                                    double wall_s);
void run_json_results(struct json_object *js, const char *out, uint64_t rows, size_t cols,
                      const char *backend, size_t backend_len, uint64_t dropped);
void run_json_finish(struct json_object *js, int code);

/* The progress bar on stderr (a terminal): left_s < 0 when unknown. */
void run_progress_bar(double t, double start, double stop, double rtf, double left_s);

/* Run through a daemon (the endpoint's, or a private one). Returns the exit code. */
int run_daemon(struct run_cmd *a);

/* A daemon started for one run, listening in its own temporary directory. */
struct private_daemon {
        pid_t pid;
        char *dir;                      /* removed by private_daemon_stop() */
        char endpoint[256];
        char log[300];                  /* its stderr */
};

/*
 * Start fmud ($FMUD_DAEMON, else next to fmuctl, else ../daemon/fmud) on
 * ipc sockets in a new temporary directory, allowed to read below each of
 * allow[] and to write results below output (NULL: none), and wait until
 * it says it serves. Returns 0 or an exit code
 * after printing why.
 */
int private_daemon_start(struct private_daemon *d, const char *const *allow, size_t n_allow,
                         const char *output);
/* SIGTERM, wait (SIGKILL after a grace period), remove the directory. */
void private_daemon_stop(struct private_daemon *d);
/* Print the last lines of its log to stderr (after a failure). */
void private_daemon_tail(const struct private_daemon *d);

#endif
