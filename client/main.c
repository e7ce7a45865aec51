/*
 * fmuctl: the command-line client of fmud. This file only dispatches to a
 * subcommand; each subcommand lives in its own cmd_*.c.
 *
 * DESIGN: the shared options (cli_opts.c) may come before the command's
 * name, as with git or systemctl: `fmuctl --endpoint E list`. They are
 * checked here and handed on right after the name, so the command parses
 * them as if given there; what the command does not take it refuses.
 */
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"

#ifndef FMUD_VERSION
#define FMUD_VERSION "unknown"
#endif

static const struct {
        const char *name;
        fmuctl_cmd_fn *run;
        const char *summary;
} commands[] = {
        { "run", cmd_run, "run a scenario or an FMU to its stop time, results to CSV" },
        { "load", cmd_load, "load a scenario into the daemon; prints the session's id" },
        { "start", cmd_start, "start a loaded session" },
        { "pause", cmd_pause, "pause a running session" },
        { "resume", cmd_resume, "resume a paused session" },
        { "stop", cmd_stop, "stop a session for good" },
        { "unload", cmd_unload, "unload a session and end its workers" },
        { "list", cmd_list, "list the daemon's sessions" },
        { "status", cmd_status, "a session's status, or the daemon's" },
        { "warp", cmd_warp, "change a session's speed relative to real time" },
        { "step", cmd_step, "advance a session by N points or to a time" },
        { "get", cmd_get, "read variables of a session" },
        { "vars", cmd_vars, "list a session's variables with their current values" },
        { "set", cmd_set, "write variables of a session" },
        { "watch", cmd_watch, "follow variables live until the session ends" },
        { "logs", cmd_logs, "what a session's FMUs logged; --follow: until it ends" },
        { "snapshot", cmd_snapshot, "save a session's FMU states; prints the snapshot's id" },
        { "restore", cmd_restore, "return a session to a snapshot" },
        { "results", cmd_results, "fetch a session's results file (CSV, or .mat)" },
        { "inspect", cmd_inspect, "validate an FMU and describe it (no daemon needed)" },
        { "plot", cmd_plot, "draw columns of a results file against time (gnuplot)" },
        { "keygen", cmd_keygen, "create a CURVE key pair for tcp access" },
        { "shutdown", cmd_shutdown, "stop every session and the daemon" },
};

static void usage(FILE *f)
{
        fprintf(f, "usage: fmuctl COMMAND [ARGS...]\n\ncommands:\n");
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
        fprintf(f, "\n'fmuctl help COMMAND' (or 'fmuctl COMMAND --help') describes one command.\n"
                   "\n"
                   "options, before or after the COMMAND (inspect and keygen take only --help,\n"
                   "inspect also --json):\n");
        cli_help_options(f, CLI_SHARED_ALL);
        fprintf(f, "\n"
                   "exit codes:\n"
                   "  0    success\n"
                   "  1    invalid input, or the daemon refused the request\n"
                   "  2    usage error (bad command line)\n"
                   "  3    system error: a file, memory, or no answer from the daemon\n"
                   "  4    the session faulted (an FMU or a worker failed)\n"
                   "  130  interrupted (Ctrl-C)\n");
}

static fmuctl_cmd_fn *find(const char *name)
{
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                if (!strcmp(name, commands[i].name))
                        return commands[i].run;
        return NULL;
}

/*
 * The edit distance of a and b, both at most 31 characters (longer: a
 * large number): insertions, deletions, substitutions and swaps of two
 * neighbours ("stauts" is one slip from "status"), each counting one.
 */
static size_t distance(const char *a, const char *b)
{
        size_t la = strlen(a), lb = strlen(b), d[32][32];

        if (la > 31 || lb > 31)
                return SIZE_MAX;
        for (size_t i = 0; i <= la; i++)
                d[i][0] = i;
        for (size_t j = 0; j <= lb; j++)
                d[0][j] = j;
        for (size_t i = 1; i <= la; i++)
                for (size_t j = 1; j <= lb; j++) {
                        size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

                        if (d[i - 1][j] + 1 < best)
                                best = d[i - 1][j] + 1;
                        if (d[i][j - 1] + 1 < best)
                                best = d[i][j - 1] + 1;
                        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                            d[i - 2][j - 2] + 1 < best)
                                best = d[i - 2][j - 2] + 1;
                        d[i][j] = best;
                }
        return d[la][lb];
}

/* The command nearest to name, if near enough to be a slip (NULL otherwise). */
static const char *nearest(const char *name)
{
        const char *best = NULL;
        size_t best_d = SIZE_MAX, len = strlen(name);

        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
                size_t d = distance(name, commands[i].name);

                if (d < best_d) {
                        best_d = d;
                        best = commands[i].name;
                }
        }
        /* One slip in short words, two in longer ones; never the whole word. */
        return best_d <= (len > 5 ? 2u : 1u) && best_d < len ? best : NULL;
}

static int main_usage_error(const char *fmt, const char *what)
{
        fprintf(stderr, "fmuctl: ");
        fprintf(stderr, fmt, what);
        fprintf(stderr, "\n(see 'fmuctl --help')\n");
        return FMUCTL_EXIT_USAGE;
}

/*
 * The shared options before the command, from argv[*i] on: their words into
 * pre (*npre), --help/-h into *help. Returns 0 with *i at the command, or an
 * exit code after printing why.
 */
static int leading_options(int argc, char **argv, int *i, char **pre, int *npre, bool *help)
{
        for (; *i < argc && argv[*i][0] == '-'; (*i)++) {
                const char *w = argv[*i], *name = w + (w[1] == '-' ? 2 : 1);
                size_t len = strcspn(name, "=");
                const struct cli_opt *o;

                if (!strcmp(w, "--")) {
                        (*i)++;
                        break;
                }
                o = w[1] == '-' || len == 1 ? cli_shared_option(name, len) : NULL;
                if (!o || (w[1] != '-' && o->id != CLI_O_HELP))
                        return main_usage_error("unknown option '%s'", w);
                if (!o->arg && name[len] == '=')
                        return main_usage_error("option '%s' takes no value", w);
                if (o->id == CLI_O_HELP) {
                        *help = true;
                        continue;
                }
                pre[(*npre)++] = argv[*i];
                if (o->arg && name[len] != '=') {
                        if (*i + 1 >= argc)
                                return main_usage_error("option '%s' needs a value", w);
                        pre[(*npre)++] = argv[++(*i)];
                }
        }
        return 0;
}

int main(int argc, char **argv)
{
        char **args = NULL;
        const char *name;
        fmuctl_cmd_fn *run;
        bool help = false;
        int i = 1, npre = 0, n = 0, code;

        /*
         * A file written over RLIMIT_FSIZE is a write error (EFBIG), said
         * and exited with 3, not the end of fmuctl (and of what it would
         * have cleaned up) by SIGXFSZ.
         */
        signal(SIGXFSZ, SIG_IGN);
        if (argc >= 2 && !strcmp(argv[1], "--version")) {
                printf("fmuctl %s\n", FMUD_VERSION);
                return FMUCTL_EXIT_OK;
        }
        /* Room for the command, the options before it, --help and the rest. */
        args = calloc((size_t)argc + 2, sizeof(*args));
        if (!args) {
                fprintf(stderr, "fmuctl: out of memory\n");
                return FMUCTL_EXIT_SYSTEM;
        }
        code = leading_options(argc, argv, &i, args + 1, &npre, &help);
        if (code)
                goto out;
        if (i == argc || (!strcmp(argv[i], "help") && i + 1 == argc)) {
                usage(i == argc && !help ? stderr : stdout);
                code = i == argc && !help ? FMUCTL_EXIT_USAGE : FMUCTL_EXIT_OK;
                goto out;
        }
        name = argv[i++];
        if (!strcmp(name, "help")) {
                /* fmuctl help COMMAND: that command's --help. */
                if (i + 1 != argc) {
                        code = main_usage_error("%s", "help takes one COMMAND");
                        goto out;
                }
                name = argv[i++];
                help = true;
        }
        run = find(name);
        if (!run) {
                const char *near = nearest(name);

                if (near) {
                        fprintf(stderr, "fmuctl: unknown command '%s'; did you mean '%s'?\n"
                                "(see 'fmuctl --help')\n", name, near);
                        code = FMUCTL_EXIT_USAGE;
                } else {
                        code = main_usage_error("unknown command '%s'", name);
                }
                goto out;
        }
        args[0] = (char *)name;
        n = 1 + npre;
        if (help)
                args[n++] = "--help";
        while (i < argc)
                args[n++] = argv[i++];
        code = run(n, args);
out:
        free(args);
        return code;
}
