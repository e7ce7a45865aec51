/*
 * cli: what fmuctl's daemon subcommands share: the connection options
 * (--endpoint, --server-key, --key, --json and their environment
 * variables), error lines and exit codes, session arguments, and JSON
 * output of the daemon's results.
 *
 * DESIGN: a subcommand declares its options in a table (struct cli_opt,
 * one line each) and a struct cli_cmd; it loops on cli_getopt(), which
 * takes the shared options itself, then calls cli_open() and, on any
 * failure, returns cli_fail()'s exit code. Help is made from the tables
 * (cli_help()). Errors are one line on stderr, "fmuctl: cannot <what>:
 * <why>", then indented detail lines (a refused scenario's diagnostics).
 */
#ifndef FMUD_CLIENT_CLI_H
#define FMUD_CLIENT_CLI_H

#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <json-c/json.h>

#include "fmud.h"

enum { CLI_O_ENDPOINT = 1000, CLI_O_SERVER_KEY, CLI_O_KEY, CLI_O_JSON, CLI_O_HELP };

/* One option, stated once for the parser and the help. */
struct cli_opt {
        const char *name;       /* "until": --until */
        int id;                 /* what cli_getopt() returns; a letter also makes -LETTER */
        const char *arg;        /* the value's name in the help ("T"); NULL: a flag */
        const char *help;       /* '\n' between lines; NULL: an alias, not in the help */
};

/* The shared options a command takes (-h and --help: every command). */
enum { CLI_SHARED_CONN = 1, CLI_SHARED_JSON = 2, CLI_SHARED_ALL = 3 };

/* A subcommand: its usage, help and option tables. */
struct cli_cmd {
        const char *name;
        const char *usage;              /* after "fmuctl NAME "; '\n' between forms */
        const char *about;              /* the paragraphs after the usage */
        const struct cli_opt *opts[3];  /* its own tables, each ending with { 0 }; NULL-ended */
        unsigned shared;                /* CLI_SHARED_* */
        const char *footer;             /* after the options; NULL: none */
};

#define CLI_MAX_OPTS 64

struct cli {
        const struct cli_cmd *def;
        const char *cmd;                /* "status", for messages (default: def->name) */
        const char *endpoint;
        const char *server_key_file, *key_file;
        bool json, help;
        int timeout_ms;                 /* 0: libfmud's default */
        struct fmud *c;
        /* cli_getopt()'s tables, made from def at its first call. */
        bool built;
        struct option longs[CLI_MAX_OPTS + 1];
        char shorts[2 * CLI_MAX_OPTS + 3];
};

/*
 * The next option of argv (argv[0]: the command's name) for a->def: its id,
 * with its value in optarg; 0 after the last one (the operands are
 * argv[optind...]); -1 after printing a usage error. The shared options
 * are taken into a (a->help, a->json, ...) and not returned.
 */
int cli_getopt(struct cli *a, int argc, char **argv);
/* The help of a->def to f; returns FMUCTL_EXIT_OK. */
int cli_help(const struct cli *a, FILE *f);
/* The help lines of the shared options in CLI_SHARED_* (and --help). */
void cli_help_options(FILE *f, unsigned shared);
/* The shared option named name[0..len) ("endpoint"; "h" for -h), or NULL. */
const struct cli_opt *cli_shared_option(const char *name, size_t len);

/*
 * The endpoint to use: --endpoint, $FMUD_ENDPOINT, else the default
 * (into buf; for a user other than root, the system daemon's after the
 * user's own: fmud_client_endpoint()). NULL: too long.
 */
const char *cli_endpoint(const struct cli *a, char *buf, size_t len);
/*
 * Whether this user may not connect to the ipc endpoint ep's socket file
 * (false for tcp); then msg says "permission denied: PATH (ask to be
 * added to group G)", G the group of the directory or socket in the way.
 */
bool cli_ipc_denied(const char *ep, char *msg, size_t len);
/* Connect (a->c). Returns 0, or an exit code after printing why. */
int cli_open(struct cli *a);

/* Whether a session in state s has ended (finished, faulted, stopped). */
bool cli_ended(enum proto_state s);
/* Seconds from *t (CLOCK_MONOTONIC) to now. */
double cli_since(const struct timespec *t);

/*
 * A following command's loop (cli_follow.c): on_msg gets each
 * fmud_next() result r with its message (valid when r is 0) and returns
 * 0 to go on, else the value cli_follow() returns.
 */
struct cli_follow {
        int wait_ms;                    /* fmud_next()'s wait */
        int (*on_msg)(void *ctx, int r, const struct fmud_msg *m);
        void *ctx;
        const volatile sig_atomic_t *stop;      /* set: Ctrl-C */
        enum proto_state state;         /* the end: set when cli_follow() returns 1 */
        double time;
};
/*
 * Follow session t until it ends (1, f->state and f->time set, from its
 * event or its status, asked about once a second since PUB is lossy),
 * *f->stop or an interrupted wait (0), on_msg's value, or a failure
 * (libfmud's return, e.g. FMUD_E_REFUSED when the session is gone).
 */
int cli_follow(struct cli *a, const struct proto_target *t, struct cli_follow *f);
void cli_close(struct cli *a);

/* Print "fmuctl: cannot <fmt...>: <why>" (why from libfmud for r) and return the exit code. */
int cli_fail(struct cli *a, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The exit code for a libfmud result. */
int cli_exit_code(const struct cli *a, int r);
/* A usage error: "fmuctl CMD: <msg>" and a hint; returns FMUCTL_EXIT_USAGE. */
int cli_usage_error(const struct cli *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* SESSION or SESSION@GENERATION. Returns 0, or FMUCTL_EXIT_USAGE after printing why. */
int cli_target(const struct cli *a, const char *s, struct proto_target *ret);
/*
 * The one operand argv[optind], a SESSION as cli_target() reads it, then
 * connect (cli_open()). Returns 0, or an exit code after printing why.
 */
int cli_open_session(struct cli *a, int argc, char **argv, struct proto_target *ret);
/* A finite number; 0 or FMUCTL_EXIT_USAGE after printing why. */
int cli_number(const struct cli *a, const char *opt, const char *s, double *ret);
/* A whole number; 0 or FMUCTL_EXIT_USAGE after printing why. */
int cli_count(const struct cli *a, const char *opt, const char *s, uint64_t *ret);

/* ---- Load options (fmuctl load, fmuctl run) ---- */

enum {
        CLI_O_OUT = 1100, CLI_O_T0, CLI_O_T1, CLI_O_STEP, CLI_O_START, CLI_O_MULTI, CLI_O_REC,
        CLI_O_DEC, CLI_O_BUDGET, CLI_O_WARP, CLI_O_GS, CLI_O_SANDBOX, CLI_O_INPUT, CLI_O_TOL,
        CLI_O_STRICT, CLI_O_ROLLBACK, CLI_O_TRANSIENT, CLI_O_FORCE,
        CLI_O_RT_PRIO, CLI_O_RT_WPRIO, CLI_O_RT_CPUS, CLI_O_RT_WCPUS, CLI_O_RT_BEST, CLI_O_RT_MLOCK,
        CLI_O_OVERRUN, CLI_O_OVERRUN_MARGIN, CLI_O_SPIN,
        CLI_O_RIG_IN, CLI_O_RIG_OUT, CLI_O_RIG_POLICY, CLI_O_RIG_TIMEOUT,
        CLI_O_UPLOAD, CLI_O_NO_UPLOAD, CLI_O_IFACE, CLI_O_INTEGRATOR,
};

/* The options of a load but --out, whose help differs between load and run. */
extern const struct cli_opt cli_load_opts[];

#define CLI_MAX_ASSIGN 256
#define CLI_MAX_FILES 256               /* an .ssd's files uploaded with it */

/* When a load sends its files (cli_upload.c): auto, --upload, --no-upload. */
enum { CLI_UPLOAD_AUTO, CLI_UPLOAD_FORCE, CLI_UPLOAD_NEVER };

struct cli_load {
        struct proto_load l;            /* strings point into argv or the fields below */
        struct proto_assign starts[CLI_MAX_ASSIGN], multirate[CLI_MAX_ASSIGN];
        struct proto_str record[CLI_MAX_ASSIGN];
        struct proto_str rig_in[CLI_MAX_ASSIGN], rig_out[CLI_MAX_ASSIGN];
        const char *out;                /* as given */
        const char *input;              /* --input as given; NULL: none */
        char *path_abs, *out_abs, *input_abs;
        int upload;                     /* CLI_UPLOAD_* */
        char content_sha[FMUD_SHA256_HEX + 1], input_sha[FMUD_SHA256_HEX + 1];
        struct proto_assign files[CLI_MAX_FILES];       /* an .ssd's, once uploaded */
        char *file_names[CLI_MAX_FILES];
        char file_shas[CLI_MAX_FILES][FMUD_SHA256_HEX + 1];
};

/* A cli_load_opts or --out (CLI_O_OUT) option: 1 done, 0 not one of them, FMUCTL_EXIT_USAGE (printed). */
int cli_load_option(const struct cli *a, struct cli_load *l, int opt, char *arg);
/* Make path (and --out, --input, when given) absolute into l->l. 0, or an exit code after printing why. */
int cli_load_paths(const struct cli *a, struct cli_load *l, const char *path);
void cli_load_fini(struct cli_load *l);
/*
 * fmud_load() of l on a->c, uploading its files first or after a refusal
 * when the daemon cannot open them (cli_upload.c). fmud_load()'s return;
 * -EINVAL with *ret_code an exit code after printing why when an upload
 * failed (otherwise *ret_code 0).
 */
int cli_load_send(struct cli *a, struct cli_load *l, uint64_t *ret_session,
                  uint64_t *ret_generation, int *ret_code);
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
/* An FMU's message, as --local prints them: "INSTANCE: level [category]: message" (cleaned). */
void cli_print_log(FILE *f, const struct proto_log *l);
/*
 * Whether run prints a message as it comes: a status other than OK, or a
 * line the FMU printed (the worker's categories "stdout" and "stderr").
 */
bool cli_log_shown(int status, const char *category, size_t len);
/* Text: "session 3: running, t = 0.5, 12 points" (+ the message). */
void cli_print_progress(uint64_t session, const struct proto_progress *p);

#endif
