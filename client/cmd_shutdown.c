/* fmuctl shutdown: ask the daemon to stop every session and exit. */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "commands.h"

int cmd_shutdown(int argc, char **argv)
{
        static const struct option opts[] = { CLI_CONN_OPTIONS, { 0 } };
        struct cli a = { .cmd = "shutdown" };
        int c, code;

        optind = 1;
        while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1)
                if (!cli_option(&a, c, optarg))
                        return cli_usage_error(&a, "unknown option");
        if (a.help) {
                printf("usage: fmuctl shutdown [options]\n\n"
                       "Asks the daemon to stop every session (results flushed) and exit.\n\n"
                       CLI_CONN_HELP);
                return FMUCTL_EXIT_OK;
        }
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
