/*
 * fmuctl: the command-line client of fmud. This file only dispatches to a
 * subcommand; each subcommand lives in its own cmd_*.c.
 */
#include <stdio.h>
#include <string.h>

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
        { "set", cmd_set, "write variables of a session" },
        { "watch", cmd_watch, "follow variables live until the session ends" },
        { "snapshot", cmd_snapshot, "save a session's FMU states; prints the snapshot's id" },
        { "restore", cmd_restore, "return a session to a snapshot" },
        { "inspect", cmd_inspect, "validate an FMU and describe it (no daemon needed)" },
        { "keygen", cmd_keygen, "create a CURVE key pair for tcp access" },
        { "shutdown", cmd_shutdown, "stop every session and the daemon" },
};

static void usage(FILE *f)
{
        fprintf(f, "usage: fmuctl COMMAND [ARGS...]\n\ncommands:\n");
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
        fprintf(f, "\n'fmuctl COMMAND --help' describes one command.\n"
                   "\n"
                   "The daemon's endpoint: --endpoint E, else $FMUD_ENDPOINT, else the local\n"
                   "daemon's ipc socket. For tcp with CURVE: --server-key FILE and --key FILE\n"
                   "($FMUD_SERVER_KEY, $FMUD_KEY). Queries print JSON with --json.\n"
                   "\n"
                   "exit codes:\n"
                   "  0    success\n"
                   "  1    invalid input, or the daemon refused the request\n"
                   "  2    usage error (bad command line)\n"
                   "  3    system error: a file, memory, or no answer from the daemon\n"
                   "  4    the session faulted (an FMU or a worker failed)\n"
                   "  130  interrupted (Ctrl-C)\n");
}

int main(int argc, char **argv)
{
        if (argc < 2) {
                usage(stderr);
                return FMUCTL_EXIT_USAGE;
        }
        if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
                usage(stdout);
                return FMUCTL_EXIT_OK;
        }
        if (!strcmp(argv[1], "--version")) {
                printf("fmuctl %s\n", FMUD_VERSION);
                return FMUCTL_EXIT_OK;
        }
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                if (!strcmp(argv[1], commands[i].name))
                        return commands[i].run(argc - 1, argv + 1);
        fprintf(stderr, "fmuctl: unknown command '%s'\n", argv[1]);
        usage(stderr);
        return FMUCTL_EXIT_USAGE;
}
