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
        { "inspect", cmd_inspect, "validate an FMU and describe it (no daemon needed)" },
};

static void usage(FILE *f)
{
        fprintf(f, "usage: fmuctl COMMAND [ARGS...]\n\ncommands:\n");
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
        fprintf(f, "\n'fmuctl COMMAND --help' describes one command.\n"
                   "exit codes: 0 success, 1 invalid input, 2 usage error, 3 system error\n");
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
