/* fmuctl shutdown: ask the daemon to stop every session and exit. */
#include <stdio.h>

#include "cli.h"
#include "commands.h"

static const struct cli_cmd def = {
        .name = "shutdown",
        .usage = "[options]",
        .about = "Asks the daemon to stop every session (results flushed) and exit.",
        .shared = CLI_SHARED_ALL,
};

int cmd_shutdown(int argc, char **argv)
{
        struct cli a = { .def = &def };
        int c, code;

        if (cli_getopt(&a, argc, argv) != 0)
                return FMUCTL_EXIT_USAGE;
        if (a.help)
                return cli_help(&a, stdout);
        if (optind != argc)
                return cli_usage_error(&a, "no arguments expected");
        code = cli_open(&a);
        if (code)
                return code;
        c = fmud_shutdown(a.c);
        if (c < 0)
                code = cli_fail(&a, c, "shut the daemon down");
        else if (a.json)
                cli_json_print(json_object_new_object());
        cli_close(&a);
        return code;
}
