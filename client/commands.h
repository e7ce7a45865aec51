/*
 * fmuctl subcommands: one file per subcommand, each an entry point taking
 * the arguments after its name (argv[0] is the subcommand's name).
 *
 * Exit codes are the same for every subcommand (fmuctl --help and
 * docs/fmuctl.md list them):
 */
#ifndef FMUD_CLIENT_COMMANDS_H
#define FMUD_CLIENT_COMMANDS_H

enum fmuctl_exit {
        FMUCTL_EXIT_OK = 0,
        FMUCTL_EXIT_INVALID = 1,        /* the input was read and is wrong, or the daemon refused */
        FMUCTL_EXIT_USAGE = 2,          /* bad command line */
        FMUCTL_EXIT_SYSTEM = 3,         /* a file, the daemon or memory failed us (transport too) */
        FMUCTL_EXIT_FAULT = 4,          /* the session faulted (an FMU or a worker failed) */
        FMUCTL_EXIT_INTERRUPTED = 130,  /* Ctrl-C */
};

typedef int fmuctl_cmd_fn(int argc, char **argv);

fmuctl_cmd_fn cmd_inspect;
fmuctl_cmd_fn cmd_run;
fmuctl_cmd_fn cmd_load;
fmuctl_cmd_fn cmd_unload;
fmuctl_cmd_fn cmd_list;
fmuctl_cmd_fn cmd_status;
fmuctl_cmd_fn cmd_start;
fmuctl_cmd_fn cmd_pause;
fmuctl_cmd_fn cmd_resume;
fmuctl_cmd_fn cmd_stop;
fmuctl_cmd_fn cmd_warp;
fmuctl_cmd_fn cmd_step;
fmuctl_cmd_fn cmd_get;
fmuctl_cmd_fn cmd_vars;
fmuctl_cmd_fn cmd_set;
fmuctl_cmd_fn cmd_watch;
fmuctl_cmd_fn cmd_logs;
fmuctl_cmd_fn cmd_snapshot;
fmuctl_cmd_fn cmd_restore;
fmuctl_cmd_fn cmd_results;
fmuctl_cmd_fn cmd_keygen;
fmuctl_cmd_fn cmd_plot;
fmuctl_cmd_fn cmd_shutdown;

#endif
