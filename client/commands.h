/*
 * fmuctl subcommands: one file per subcommand, each an entry point taking
 * the arguments after its name (argv[0] is the subcommand's name).
 *
 * Exit codes are the same for every subcommand (documented in README.md):
 */
#ifndef FMUD_CLIENT_COMMANDS_H
#define FMUD_CLIENT_COMMANDS_H

enum fmuctl_exit {
        FMUCTL_EXIT_OK = 0,
        FMUCTL_EXIT_INVALID = 1,        /* the input was read and is wrong (invalid FMU, ...) */
        FMUCTL_EXIT_USAGE = 2,          /* bad command line */
        FMUCTL_EXIT_SYSTEM = 3,         /* a file could not be read, out of memory, ... */
};

typedef int fmuctl_cmd_fn(int argc, char **argv);

fmuctl_cmd_fn cmd_inspect;
fmuctl_cmd_fn cmd_run;

#endif
