/*
 * cli: what fmuctl's daemon subcommands share: the connection options
 * (--endpoint, --server-key, --key, --json and their environment
 * variables), error lines and exit codes, session arguments, and JSON
 * output of the daemon's results.
 *
 * DESIGN: a subcommand puts CLI_CONN_OPTIONS in its getopt_long table and
 * hands every option it does not know to cli_option(); it then calls
 * cli_open() and, on any failure, returns cli_fail()'s exit code. Errors
 * are one line on stderr, "fmuctl: cannot <what>: <why>", then indented
 * detail lines (a refused scenario's diagnostics).
 */
#ifndef FMUD_CLIENT_CLI_H
#define FMUD_CLIENT_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include "fmud.h"

enum { CLI_O_ENDPOINT = 1000, CLI_O_SERVER_KEY, CLI_O_KEY, CLI_O_JSON, CLI_O_HELP };

#define CLI_CONN_OPTIONS                                                        \
        { "endpoint", required_argument, NULL, CLI_O_ENDPOINT },                \
        { "server-key", required_argument, NULL, CLI_O_SERVER_KEY },            \
        { "key", required_argument, NULL, CLI_O_KEY },                          \
        { "json", no_argument, NULL, CLI_O_JSON },                              \
        { "help", no_argument, NULL, CLI_O_HELP }

/* The help lines of CLI_CONN_OPTIONS. */
#define CLI_CONN_HELP                                                                   \
        "  --endpoint E          the daemon's control endpoint (default: $FMUD_ENDPOINT,\n" \
        "                        else the local daemon's ipc socket)\n"                 \
        "  --server-key FILE     the daemon's public key, for tcp with CURVE\n"        \
        "                        ($FMUD_SERVER_KEY)\n"                                  \
        "  --key FILE            this client's secret key (fmuctl keygen; $FMUD_KEY)\n" \
        "  --json                print the result as JSON\n"

struct cli {
        const char *cmd;                /* "status", for messages */
        const char *endpoint;
        const char *server_key_file, *key_file;
        bool json, help;
        int timeout_ms;                 /* 0: libfmud's default */
        struct fmud *c;
};

/* Handle a CLI_CONN_OPTIONS option; false when opt is none of them. */
bool cli_option(struct cli *a, int opt, const char *arg);
/* The endpoint to use: --endpoint, $FMUD_ENDPOINT, else the default (into buf). NULL: too long. */
const char *cli_endpoint(const struct cli *a, char *buf, size_t len);
/* Connect (a->c). Returns 0, or an exit code after printing why. */
int cli_open(struct cli *a);
void cli_close(struct cli *a);

/* Print "fmuctl: cannot <fmt...>: <why>" (why from libfmud for r) and return the exit code. */
int cli_fail(struct cli *a, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The exit code for a libfmud result. */
int cli_exit_code(const struct cli *a, int r);
/* A usage error: "fmuctl CMD: <msg>" and a hint; returns FMUCTL_EXIT_USAGE. */
int cli_usage_error(const struct cli *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* SESSION or SESSION@GENERATION. Returns 0, or FMUCTL_EXIT_USAGE after printing why. */
int cli_target(const struct cli *a, const char *s, struct proto_target *ret);
/* A finite number; 0 or FMUCTL_EXIT_USAGE after printing why. */
int cli_number(const struct cli *a, const char *opt, const char *s, double *ret);
/* A whole number; 0 or FMUCTL_EXIT_USAGE after printing why. */
int cli_count(const struct cli *a, const char *opt, const char *s, uint64_t *ret);

/* ---- Load options (fmuctl load, fmuctl run) ---- */

enum {
        CLI_O_OUT = 1100, CLI_O_T0, CLI_O_T1, CLI_O_STEP, CLI_O_START, CLI_O_MULTI, CLI_O_REC,
        CLI_O_DEC, CLI_O_BUDGET, CLI_O_WARP, CLI_O_GS, CLI_O_SANDBOX, CLI_O_INPUT, CLI_O_TOL,
        CLI_O_STRICT, CLI_O_ROLLBACK, CLI_O_TRANSIENT,
};

#define CLI_LOAD_OPTIONS                                                        \
        { "out", required_argument, NULL, CLI_O_OUT },                          \
        { "start-time", required_argument, NULL, CLI_O_T0 },                    \
        { "stop-time", required_argument, NULL, CLI_O_T1 },                     \
        { "stop", required_argument, NULL, CLI_O_T1 },                          \
        { "step", required_argument, NULL, CLI_O_STEP },                        \
        { "start", required_argument, NULL, CLI_O_START },                      \
        { "set", required_argument, NULL, CLI_O_START },                        \
        { "multirate", required_argument, NULL, CLI_O_MULTI },                  \
        { "record", required_argument, NULL, CLI_O_REC },                       \
        { "decimation", required_argument, NULL, CLI_O_DEC },                   \
        { "budget", required_argument, NULL, CLI_O_BUDGET },                    \
        { "warp", required_argument, NULL, CLI_O_WARP },                        \
        { "tolerance", required_argument, NULL, CLI_O_TOL },                    \
        { "gauss-seidel", no_argument, NULL, CLI_O_GS },                        \
        { "sandbox", required_argument, NULL, CLI_O_SANDBOX },                  \
        { "input", required_argument, NULL, CLI_O_INPUT },                      \
        { "strict", no_argument, NULL, CLI_O_STRICT },                          \
        { "rollback-on-fault", no_argument, NULL, CLI_O_ROLLBACK },              \
        { "transient", no_argument, NULL, CLI_O_TRANSIENT }

#define CLI_LOAD_HELP                                                                   \
        "  --input FILE.csv      drive unconnected inputs from FILE.csv (header\n"     \
        "                        time,<input>...; see docs/fmuctl.md)\n"             \
        "  --start-time T        override the start time\n"                             \
        "  --stop-time T         override the stop time (also --stop T)\n"              \
        "  --step H              override the base communication step\n"                \
        "  --start NAME=VALUE    a start value or parameter (instance.variable in\n"    \
        "                        a system, the bare name for one FMU); repeatable;\n"   \
        "                        also --set NAME=VALUE\n"                               \
        "  --multirate INST=M    step INST every M-th point; repeatable\n"              \
        "  --record NAME         record this variable (instead of the scenario's\n"     \
        "                        choice); repeatable\n"                                 \
        "  --decimation K        record every K-th point\n"                             \
        "  --budget S            wall-clock seconds allowed per coupled step; inf:\n"   \
        "                        none\n"                                                \
        "  --warp W              run at W times real time (0: as fast as possible)\n"   \
        "  --tolerance TOL       relative tolerance for every FMU, 0 < TOL < 1\n"       \
        "                        (default: each FMU's DefaultExperiment tolerance)\n" \
        "  --gauss-seidel        Gauss-Seidel order instead of Jacobi\n"                \
        "  --sandbox MODE        this session's sandbox: strict, basic or off (no weaker\n" \
        "                        than the daemon's)\n"                                \
        "  --strict              refuse FMUs with warnings too (see fmuctl inspect)\n"  \
        "  --rollback-on-fault   save every FMU state before each step, so that a fault\n" \
        "                        holds every instance at the last good point\n"        \
        "  --transient           unload the session when this connection goes quiet\n" \
        "                        (fmuctl run always does)\n"

#define CLI_MAX_ASSIGN 256

struct cli_load {
        struct proto_load l;            /* strings point into argv or the fields below */
        struct proto_assign starts[CLI_MAX_ASSIGN], multirate[CLI_MAX_ASSIGN];
        struct proto_str record[CLI_MAX_ASSIGN];
        const char *out;                /* as given */
        const char *input;              /* --input as given; NULL: none */
        char *path_abs, *out_abs, *input_abs;
};

/* Handle a CLI_LOAD_OPTIONS option: 1 done, 0 not one of them, FMUCTL_EXIT_USAGE (printed). */
int cli_load_option(const struct cli *a, struct cli_load *l, int opt, char *arg);
/* Make path (and --out, --input, when given) absolute into l->l. 0, or an exit code after printing why. */
int cli_load_paths(const struct cli *a, struct cli_load *l, const char *path);
void cli_load_fini(struct cli_load *l);
/* An absolute form of path (which need not exist; its directory must). Caller frees. */
char *cli_abspath(const char *path);

/* JSON: print obj (pretty) to stdout and drop it. */
void cli_json_print(struct json_object *obj);
struct json_object *cli_json_str(struct proto_str s);
/* A number, exactly and briefly; inf and nan as strings. */
struct json_object *cli_json_double(double d);
struct json_object *cli_json_value(const struct pv *v);
struct json_object *cli_json_progress(const struct proto_progress *p);
struct json_object *cli_json_session_status(const struct proto_session_status *s);
struct json_object *cli_json_daemon_status(const struct proto_daemon_status *s);

/* The daemon's warnings about the FMUs of the last load, "warning: ..." on stderr. */
void cli_print_load_warnings(const struct cli *a);
/* Untrusted text to f: printable ASCII as is, anything else as '?'. */
void cli_put_clean(FILE *f, const char *s, size_t len);
/* Text: "session 3: running, t = 0.5, 12 points" (+ the message). */
void cli_print_progress(uint64_t session, const struct proto_progress *p);

#endif
